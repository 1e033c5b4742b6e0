// profile_summary.cc: the vendor's profile figures from the emulator's
// statistics (profile_summary.h).
#include "tpu_runtime/profile_summary.h"

#include <fmt/format.h>

#include <array>
#include <string>

namespace tpu_runtime {
namespace {

using Json = nlohmann::json;

double number(const Json &j, const char *key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

std::uint64_t count(const Json &j, const char *key) {
  return j.is_object() && j.contains(key) && j[key].is_number_unsigned() ? j[key].get<std::uint64_t>() : 0;
}

std::string text(const Json &j, const char *key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

const Json &member(const Json &j, const char *key) {
  static const Json none = Json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : none;
}

// "transfers": {"gdma": {"S2L": {"bytes", "busy_us", "commands"}, ...}}.
std::map<std::string, TransferFigures> transfers_of(const Json &engine) {
  std::map<std::string, TransferFigures> out;
  for (const auto &[direction, t] : engine.items()) {
    const TransferFigures f{count(t, "bytes"), number(t, "busy_us"), count(t, "commands")};
    if (f.commands > 0) out[direction] = f;
  }
  return out;
}

void add(std::map<std::string, TransferFigures> &to, const std::map<std::string, TransferFigures> &from) {
  for (const auto &[direction, f] : from) {
    TransferFigures &t = to[direction];
    t.bytes += f.bytes;
    t.busy_us += f.busy_us;
    t.commands += f.commands;
  }
}

double ratio(double part, double whole) { return whole > 0 ? part / whole : 0; }

// Bytes per microsecond are 1e6 bytes per second: / 1e3 gives GB/s.
double gbps(std::uint64_t bytes, double us) { return us > 0 ? double(bytes) / us / 1e3 : 0; }

// The directions in a fixed order, those with commands only.
std::vector<DirectionSummary> directions_of(const ProfileFigures &f) {
  std::vector<DirectionSummary> out;
  const std::array<std::pair<const char *, const std::map<std::string, TransferFigures> *>, 2> engines = {
      {{"GDMA", &f.gdma}, {"SDMA", &f.sdma}}};
  for (const auto &[engine, transfers] : engines)
    for (const char *direction : {"S2L", "L2S", "S2S", "L2L"}) {
      const auto it = transfers->find(direction);
      if (it == transfers->end() || it->second.commands == 0) continue;
      const TransferFigures &t = it->second;
      out.push_back({engine, direction, t.bytes, t.commands, t.busy_us, gbps(t.bytes, t.busy_us),
                     gbps(t.bytes, f.total_us)});
    }
  return out;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string bytes_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t(1) << 20)) return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20));
  if (bytes >= (std::uint64_t(1) << 10)) return fmt::format("{:.1f} KiB", double(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

}  // namespace

ProfileFigures &ProfileFigures::operator+=(const ProfileFigures &o) {
  total_us += o.total_us;
  tiu_busy_us += o.tiu_busy_us;
  gdma_busy_us += o.gdma_busy_us;
  sdma_busy_us += o.sdma_busy_us;
  hau_busy_us += o.hau_busy_us;
  tiu_commands += o.tiu_commands;
  gdma_commands += o.gdma_commands;
  sdma_commands += o.sdma_commands;
  hau_commands += o.hau_commands;
  concurrent_us += o.concurrent_us;
  bank_conflicts += o.bank_conflicts;
  add(gdma, o.gdma);
  add(sdma, o.sdma);
  return *this;
}

ProfileFigures profile_figures(std::string_view stats_json) {
  ProfileFigures f;
  const Json stats = Json::parse(stats_json, nullptr, false);
  if (stats.is_discarded() || !stats.is_object()) return f;
  f.total_us = number(stats, "total_us");
  const Json &engines = member(stats, "engines");
  f.tiu_busy_us = number(member(engines, "bdc"), "busy_us");
  f.gdma_busy_us = number(member(engines, "gdma"), "busy_us");
  f.sdma_busy_us = number(member(engines, "sdma"), "busy_us");
  f.hau_busy_us = number(member(engines, "hau"), "busy_us");
  f.tiu_commands = count(member(engines, "bdc"), "commands");
  f.gdma_commands = count(member(engines, "gdma"), "commands");
  f.sdma_commands = count(member(engines, "sdma"), "commands");
  f.hau_commands = count(member(engines, "hau"), "commands");
  f.concurrent_us = number(stats, "gdma_bdc_concurrent_us");
  f.bank_conflicts = count(stats, "bdc_bank_conflicts");
  f.gdma = transfers_of(member(member(stats, "transfers"), "gdma"));
  f.sdma = transfers_of(member(member(stats, "transfers"), "sdma"));
  return f;
}

ProfileSummary summarize_profile(const ProfileFigures &f) {
  ProfileSummary s;
  s.total_us = f.total_us;
  s.tiu_busy_us = f.tiu_busy_us;
  s.gdma_busy_us = f.gdma_busy_us;
  s.concurrent_us = f.concurrent_us;
  s.tiu_ratio = ratio(f.tiu_busy_us, f.total_us);
  s.gdma_ratio = ratio(f.gdma_busy_us, f.total_us);
  s.parallelism = ratio(f.tiu_busy_us + f.gdma_busy_us, f.total_us);
  s.concurrency = ratio(f.concurrent_us, f.total_us);
  s.tiu_commands = f.tiu_commands;
  s.gdma_commands = f.gdma_commands;
  s.sdma_commands = f.sdma_commands;
  s.hau_commands = f.hau_commands;
  s.directions = directions_of(f);
  s.bank_conflicts = f.bank_conflicts;
  s.bank_conflict_ratio = ratio(double(f.bank_conflicts), double(f.tiu_commands));
  return s;
}

nlohmann::ordered_json profile_summary_json(const ProfileSummary &s) {
  nlohmann::ordered_json j;
  j["total_us"] = s.total_us;
  j["tiu"] = {{"busy_us", s.tiu_busy_us}, {"ratio", s.tiu_ratio}, {"commands", s.tiu_commands}};
  j["gdma"] = {{"busy_us", s.gdma_busy_us}, {"ratio", s.gdma_ratio}, {"commands", s.gdma_commands}};
  j["sdma_commands"] = s.sdma_commands;
  j["hau_commands"] = s.hau_commands;
  j["parallelism"] = s.parallelism;
  j["concurrency"] = s.concurrency;
  j["concurrent_us"] = s.concurrent_us;
  j["directions"] = nlohmann::ordered_json::array();
  for (const DirectionSummary &d : s.directions)
    j["directions"].push_back({{"engine", d.engine},
                               {"direction", d.direction},
                               {"bytes", d.bytes},
                               {"commands", d.commands},
                               {"busy_us", d.busy_us},
                               {"busy_gbps", d.busy_gbps},
                               {"average_gbps", d.average_gbps}});
  j["bank_conflicts"] = {{"commands", s.bank_conflicts}, {"ratio", s.bank_conflict_ratio}};
  return j;
}

ProfileSummary profile_summary_from_json(const nlohmann::json &j) {
  ProfileSummary s;
  s.total_us = number(j, "total_us");
  s.tiu_busy_us = number(member(j, "tiu"), "busy_us");
  s.tiu_ratio = number(member(j, "tiu"), "ratio");
  s.tiu_commands = count(member(j, "tiu"), "commands");
  s.gdma_busy_us = number(member(j, "gdma"), "busy_us");
  s.gdma_ratio = number(member(j, "gdma"), "ratio");
  s.gdma_commands = count(member(j, "gdma"), "commands");
  s.sdma_commands = count(j, "sdma_commands");
  s.hau_commands = count(j, "hau_commands");
  s.parallelism = number(j, "parallelism");
  s.concurrency = number(j, "concurrency");
  s.concurrent_us = number(j, "concurrent_us");
  if (j.is_object() && j.contains("directions") && j["directions"].is_array())
    for (const Json &d : j["directions"])
      if (d.is_object())
        s.directions.push_back({text(d, "engine"), text(d, "direction"), count(d, "bytes"),
                                count(d, "commands"), number(d, "busy_us"), number(d, "busy_gbps"),
                                number(d, "average_gbps")});
  s.bank_conflicts = count(member(j, "bank_conflicts"), "commands");
  s.bank_conflict_ratio = number(member(j, "bank_conflicts"), "ratio");
  return s;
}

std::string profile_summary_line(const ProfileSummary &s) {
  return fmt::format("TIU {}  GDMA {}  parallelism {}  concurrency {}  bank conflicts {}/{}", percent(s.tiu_ratio),
                     percent(s.gdma_ratio), percent(s.parallelism), percent(s.concurrency), s.bank_conflicts,
                     s.tiu_commands);
}

std::vector<std::string> profile_direction_lines(const ProfileSummary &s) {
  std::vector<std::string> lines;
  for (const DirectionSummary &d : s.directions)
    lines.push_back(fmt::format("{} {} {} in {} command{}, {:.3f} us busy: {:.1f} GB/s busy, {:.1f} GB/s over the run",
                                d.engine, d.direction, bytes_text(d.bytes), d.commands, d.commands == 1 ? "" : "s",
                                d.busy_us, d.busy_gbps, d.average_gbps));
  return lines;
}

}  // namespace tpu_runtime
