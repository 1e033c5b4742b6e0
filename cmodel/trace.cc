#include "trace.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace cmodel {
namespace {

// Lane ids: spans from 1 in order of their lanes' first use, engines after
// them, so a viewer lists layers above the engines they ran on.
constexpr int first_engine_tid = 100, tids_per_core = 10;
int engine_tid(Engine e, int core = 0) { return first_engine_tid + tids_per_core * core + int(e); }

const char *lane_title(Engine e) {
  switch (e) {
    case Engine::gdma: return "GDMA";
    case Engine::bdc: return "BDC";
    case Engine::sdma: return "SDMA";
    case Engine::hau: return "HAU";
  }
  return "?";
}

bool moves_bytes(Engine e) { return e == Engine::gdma || e == Engine::sdma; }

std::string quoted(const std::string &text) { return nlohmann::json(text).dump(); }

void lane_metadata(std::string &out, int tid, const std::string &title, int sort_index) {
  fmt::format_to(std::back_inserter(out),
                 "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":{},\"args\":{{\"name\":{}}}}},\n"
                 "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":{},\"args\":{{\"sort_index\":{}}}}},\n",
                 tid, quoted(title), tid, sort_index);
}

}  // namespace

void Trace::begin_span(std::string lane, std::string name) {
  open_.push_back(spans_.size());
  spans_.push_back({std::move(lane), std::move(name), clock_ns_, -1});  // -1: still open
}

bool Trace::end_span() {
  if (open_.empty()) return false;
  spans_[open_.back()].end_ns = clock_ns_;
  open_.pop_back();
  return true;
}

std::string Trace::chrome_json(const char *chip) const {
  std::array<bool, engine_count> used{};
  std::array<double, engine_count> busy_ns{};
  std::array<uint64_t, engine_count> count{};
  int cores = 1;
  for (const TraceCommand &c : commands_) cores = std::max(cores, c.core + 1);
  std::vector<std::array<bool, engine_count>> core_used(static_cast<size_t>(cores));
  for (const TraceCommand &c : commands_) {
    used[int(c.engine)] = true;
    core_used[size_t(c.core)][size_t(c.engine)] = true;
    busy_ns[int(c.engine)] += c.end_ns - c.start_ns;
    ++count[int(c.engine)];
  }
  std::map<std::string, int> span_tids;
  std::vector<std::string> span_lanes;
  for (const TraceSpan &s : spans_)
    if (span_tids.emplace(s.lane, int(span_lanes.size()) + 1).second) span_lanes.push_back(s.lane);

  std::string out = "{\"traceEvents\":[\n";
  fmt::format_to(std::back_inserter(out),
                 "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{{\"name\":{}}}}},\n",
                 quoted(fmt::format("{} (emulated)", chip)));
  for (std::size_t i = 0; i < span_lanes.size(); ++i) lane_metadata(out, int(i) + 1, span_lanes[i], int(i));
  // GDMA, BDC and SDMA always have a lane (an empty one says the engine
  // was idle); the HAU only when it ran something.
  for (int core = 0; core < cores; ++core)
    for (Engine e : {Engine::gdma, Engine::bdc, Engine::sdma, Engine::hau})
      if (e != Engine::hau || core_used[size_t(core)][size_t(e)])
        lane_metadata(out, engine_tid(e, core),
                      cores == 1 ? std::string(lane_title(e)) : fmt::format("core {} {}", core, lane_title(e)),
                      engine_tid(e, core));
  for (const TraceSpan &s : spans_) {
    const double end_ns = s.end_ns < 0 ? clock_ns_ : s.end_ns;
    fmt::format_to(std::back_inserter(out),
                   "{{\"ph\":\"X\",\"name\":{},\"cat\":{},\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{}}},\n", quoted(s.name),
                   quoted(s.lane), span_tids.at(s.lane), s.start_ns / 1e3, (end_ns - s.start_ns) / 1e3);
  }
  for (const TraceCommand &c : commands_)
    fmt::format_to(std::back_inserter(out),
                   "{{\"ph\":\"X\",\"name\":\"{}\",\"cat\":\"{}\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},"
                   "\"args\":{{\"{}\":{}}}}},\n",
                   c.api, lane_title(c.engine), engine_tid(c.engine, c.core), c.start_ns / 1e3,
                   (c.end_ns - c.start_ns) / 1e3,
                   moves_bytes(c.engine) ? "bytes" : "elements", c.amount);
  out.resize(out.size() - 2);  // the last event's ",\n" (there is always the process name)
  // Totals, for readers that want them without summing (viewers ignore it).
  nlohmann::ordered_json totals;
  totals["chip"] = chip;
  totals["clock_us"] = clock_ns_ / 1e3;
  for (Engine e : {Engine::gdma, Engine::bdc, Engine::sdma, Engine::hau})
    totals["engines"][engine_name(e)] = {{"busy_us", busy_ns[int(e)] / 1e3}, {"commands", count[int(e)]}};
  fmt::format_to(std::back_inserter(out), "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{}}}\n", totals.dump());
  return out;
}

}  // namespace cmodel
