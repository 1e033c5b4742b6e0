#include "timeline.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "run_totals.h"

namespace cmodel {

const char *engine_name(Engine e) {
  switch (e) {
    case Engine::gdma: return "gdma";
    case Engine::bdc: return "bdc";
    case Engine::sdma: return "sdma";
    case Engine::hau: return "hau";
  }
  return "?";
}

void Timeline::reset() {
  in_parallel_ = false;
  cores_streaming_ = false;
  now_ns_ = 0;
  free_ns_ = {};
  engines_ = {};
  for (auto &open : open_) open.clear();
  concurrent_ns_ = 0;
}

// The HAU has no published clock: it is taken to run at the GDMA's.
double Timeline::clock_mhz(Engine e) const { return e == Engine::bdc ? chip_.tiu_mhz : chip_.gdma_mhz; }

double Timeline::gdma_cycles(Direction dir, uint64_t bytes) const {
  const double *bandwidth = cores_streaming_ ? chip_.gdma_shared_bytes_per_s : chip_.gdma_bytes_per_s;
  const double bytes_per_cycle = bandwidth[int(dir)] / (chip_.gdma_mhz * 1e6);
  return std::ceil(double(bytes) / bytes_per_cycle) + chip_.gdma_latency_cycles;
}

Interval Timeline::issue(Engine engine, double cycles) {
  const int e = int(engine);
  const double duration = cycles * 1e3 / clock_mhz(engine);
  // Outside a region the command waits for everything before it; inside,
  // only for earlier commands of its own engine.
  const double start = in_parallel_ ? std::max(now_ns_, free_ns_[e]) : now_ns_;
  const double end = start + duration;
  free_ns_[e] = end;
  if (!in_parallel_) now_ns_ = end;
  engines_[e].cycles += cycles;
  engines_[e].busy_ns += duration;
  engines_[e].commands += 1;
  add_concurrency(engine, {start, end});
  return {start, end};
}

void Timeline::add_concurrency(Engine engine, Interval time) {
  if (engine != Engine::gdma && engine != Engine::bdc) return;
  const int mine = engine == Engine::gdma ? 0 : 1;
  for (const Interval &other : open_[1 - mine]) {
    if (other.start_ns >= time.end_ns) break;  // sorted: the rest start later still
    concurrent_ns_ += std::max(0.0, std::min(other.end_ns, time.end_ns) - std::max(other.start_ns, time.start_ns));
  }
  open_[mine].push_back(time);
  forget_ended();
}

// A later command of an engine starts when that engine is free again (or
// later): an interval of the other engine that ends by then can meet none.
void Timeline::forget_ended() {
  const double gdma_free = free_ns_[int(Engine::gdma)], bdc_free = free_ns_[int(Engine::bdc)];
  while (!open_[0].empty() && open_[0].front().end_ns <= bdc_free) open_[0].pop_front();
  while (!open_[1].empty() && open_[1].front().end_ns <= gdma_free) open_[1].pop_front();
}

void Timeline::parallel_start() {
  sync();
  in_parallel_ = true;
}

void Timeline::parallel_end() {
  in_parallel_ = false;
  sync();
}

void Timeline::sync() {
  for (double t : free_ns_) now_ns_ = std::max(now_ns_, t);
  free_ns_.fill(now_ns_);
  forget_ended();
}

void Timeline::wait_until(double ns) {
  sync();
  now_ns_ = std::max(now_ns_, ns);
  free_ns_.fill(now_ns_);
}

void RunStats::count_other(const char *api) {
  // A run uses a few dozen API functions at most: a linear search is cheap.
  for (size_t i = 0; i < counts_.size(); ++i)
    if (counts_[i].first == api) {
      last_ = i;
      ++counts_[i].second;
      return;
    }
  last_ = counts_.size();
  counts_.emplace_back(api, 1);
}

void RunStats::add(const RunStats &other) {
  for (int d = 0; d < direction_count; ++d) gdma_bytes[d] += other.gdma_bytes[d];
  for (int e = 0; e < 2; ++e)
    for (int d = 0; d < direction_count; ++d) {
      Transfers &t = transfers[e][d];
      t.bytes += other.transfers[e][d].bytes;
      t.busy_ns += other.transfers[e][d].busy_ns;
      t.commands += other.transfers[e][d].commands;
    }
  bdc_bank_conflicts += other.bdc_bank_conflicts;
  for (const auto &[api, n] : other.counts_) {
    count(api);  // finds or adds the entry, then the rest of the count
    counts_[last_].second += n - 1;
  }
}

std::map<std::string, uint64_t> RunStats::commands() const {
  // Two copies of one name (the same __func__ text at two addresses) add up.
  std::map<std::string, uint64_t> by_name;
  for (const auto &[name, count] : counts_) by_name[name] += count;
  return by_name;
}

namespace {
// Picosecond resolution is plenty and keeps the report readable.
double rounded_us(double us) { return std::round(us * 1e6) / 1e6; }
}  // namespace

namespace {

// Per DMA engine and direction: what its commands moved, how long they
// took, how many there were (the profile summary's bandwidths).
nlohmann::ordered_json transfers_json(const RunStats &stats) {
  nlohmann::ordered_json out;
  for (Engine e : {Engine::gdma, Engine::sdma})
    for (Direction d : {Direction::S2L, Direction::L2S, Direction::S2S, Direction::L2L}) {
      const Transfers &t = stats.transfers[e == Engine::sdma ? 1 : 0][int(d)];
      out[engine_name(e)][direction_name(d)] = {
          {"bytes", t.bytes}, {"busy_us", rounded_us(t.busy_ns / 1e3)}, {"commands", t.commands}};
    }
  return out;
}

// The report of stats_json and totals_json.
std::string report_json(const ChipSpec &chip, double total_ns, double concurrent_ns,
                        const std::array<EngineStats, engine_count> &engines, const RunStats &stats,
                        const std::vector<std::string> &warnings) {
  nlohmann::ordered_json report;
  report["chip"] = chip.name;
  const double total_us = total_ns / 1e3;
  report["total_us"] = rounded_us(total_us);
  double busy_us = 0;
  for (Engine e : {Engine::gdma, Engine::bdc, Engine::sdma, Engine::hau}) {
    const EngineStats &s = engines[int(e)];
    report["engines"][engine_name(e)] = {
        {"cycles", s.cycles}, {"busy_us", rounded_us(s.busy_ns / 1e3)}, {"commands", s.commands}};
    busy_us += s.busy_ns / 1e3;
  }
  // Time during which more than one engine was busy.
  report["overlap_us"] = rounded_us(std::max(0.0, busy_us - total_us));
  for (Direction d : {Direction::S2L, Direction::L2S, Direction::S2S, Direction::L2L})
    report["bytes"][direction_name(d)] = stats.gdma_bytes[int(d)];
  report["commands"] = nlohmann::ordered_json::object();
  for (const auto &[name, count] : stats.commands()) report["commands"][name] = count;
  report["warnings"] = warnings;
  report["gdma_bdc_concurrent_us"] = rounded_us(concurrent_ns / 1e3);
  report["transfers"] = transfers_json(stats);
  report["bdc_bank_conflicts"] = stats.bdc_bank_conflicts;
  return report.dump();
}

}  // namespace

std::string stats_json(const ChipSpec &chip, const Timeline &timeline, const RunStats &stats,
                       const std::vector<std::string> &warnings) {
  std::array<EngineStats, engine_count> engines;
  for (int e = 0; e < engine_count; ++e) engines[e] = timeline.stats(Engine(e));
  return report_json(chip, timeline.now_ns(), timeline.concurrent_ns(), engines, stats, warnings);
}

void RunTotals::add(const Timeline &timeline, const RunStats &run, const std::vector<std::string> &run_warnings) {
  total_ns += timeline.now_ns();
  concurrent_ns += timeline.concurrent_ns();
  for (int e = 0; e < engine_count; ++e) {
    const EngineStats &s = timeline.stats(Engine(e));
    engines[e].cycles += s.cycles;
    engines[e].busy_ns += s.busy_ns;
    engines[e].commands += s.commands;
  }
  stats.add(run);
  warnings.insert(warnings.end(), run_warnings.begin(), run_warnings.end());
}

void RunTotals::add(const RunTotals &other) {
  total_ns += other.total_ns;
  concurrent_ns += other.concurrent_ns;
  for (int e = 0; e < engine_count; ++e) {
    engines[e].cycles += other.engines[e].cycles;
    engines[e].busy_ns += other.engines[e].busy_ns;
    engines[e].commands += other.engines[e].commands;
  }
  stats.add(other.stats);
  warnings.insert(warnings.end(), other.warnings.begin(), other.warnings.end());
}

void RunTotals::add_core(const Timeline &timeline, const RunStats &run, const std::vector<std::string> &run_warnings) {
  const double slowest = std::max(total_ns, timeline.now_ns());
  add(timeline, run, run_warnings);
  total_ns = slowest;
}

std::string cores_json(const ChipSpec &chip, const RunTotals &combined, const std::vector<double> &core_ns) {
  nlohmann::ordered_json report = nlohmann::ordered_json::parse(totals_json(chip, combined));
  report["cores"] = nlohmann::ordered_json::array();
  for (size_t k = 0; k < core_ns.size(); ++k)
    report["cores"].push_back({{"core", k}, {"total_us", rounded_us(core_ns[k] / 1e3)}});
  return report.dump();
}

RunTotals &run_totals() {
  static RunTotals totals;
  return totals;
}

std::string totals_json(const ChipSpec &chip, const RunTotals &totals) {
  return report_json(chip, totals.total_ns, totals.concurrent_ns, totals.engines, totals.stats, totals.warnings);
}

}  // namespace cmodel
