// profile_summary.h: the figures of the vendor's profile reports (PerfAI)
// for runs on the emulator: how busy each engine was, how much they
// overlapped, what the DMA moved and how fast, how many TIU commands had a
// local-memory bank conflict.
//
// The emulator's statistics (cmodel_last_run_stats, cmodel_total_stats)
// hold the raw figures; profile_figures() reads them, ProfileFigures adds
// them up over runs (a model's layers, a local slicing's steps), and
// summarize_profile() computes every ratio and bandwidth, here and nowhere
// else. docs/layer-groups.md "Profile summary" defines each figure.
//
// The TIU is the vendor's name of the BDC (the vector/matrix engine).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpu_runtime {

// What one DMA engine's commands moved in one direction.
struct TransferFigures {
  std::uint64_t bytes = 0;
  double busy_us = 0;  // the commands' durations, summed
  std::uint64_t commands = 0;
};

// The emulator's figures of one or more runs; every field adds up.
struct ProfileFigures {
  double total_us = 0;  // the runs' times, end to end
  double tiu_busy_us = 0, gdma_busy_us = 0, sdma_busy_us = 0, hau_busy_us = 0;
  std::uint64_t tiu_commands = 0, gdma_commands = 0, sdma_commands = 0, hau_commands = 0;
  // Time during which the TIU and the GDMA were both busy: the intersection
  // of their commands' intervals, which the emulator's timeline keeps.
  double concurrent_us = 0;
  std::uint64_t bank_conflicts = 0;  // TIU commands with a bank conflict
  // By direction ("S2L", "L2S", "S2S", "L2L"), directions with commands only.
  std::map<std::string, TransferFigures> gdma, sdma;

  ProfileFigures &operator+=(const ProfileFigures &other);
};

// The figures of a statistics JSON (cmodel_last_run_stats() or
// cmodel_total_stats()). A field it lacks counts as 0, so "{}" gives an
// empty profile.
ProfileFigures profile_figures(std::string_view stats_json);

// One DMA engine in one direction.
struct DirectionSummary {
  std::string engine;     // "GDMA" or "SDMA"
  std::string direction;  // "S2L", "L2S", "S2S", "L2L"
  std::uint64_t bytes = 0, commands = 0;
  double busy_us = 0;
  double busy_gbps = 0;     // bytes / busy_us: the bandwidth while it moved (GB/s, 1e9 bytes/s)
  double average_gbps = 0;  // bytes / total_us: its share of the whole time
};

// The summary of ProfileFigures. Ratios are fractions of total_us (0 when
// nothing ran); parallelism runs from 0 to 2.
struct ProfileSummary {
  double total_us = 0;
  double tiu_busy_us = 0, gdma_busy_us = 0, concurrent_us = 0;
  double tiu_ratio = 0;    // TIU busy / total
  double gdma_ratio = 0;   // GDMA busy / total
  double parallelism = 0;  // (TIU busy + GDMA busy) / total
  double concurrency = 0;  // TIU and GDMA both busy / total
  std::uint64_t tiu_commands = 0, gdma_commands = 0, sdma_commands = 0, hau_commands = 0;
  std::vector<DirectionSummary> directions;  // GDMA then SDMA, S2L, L2S, S2S, L2L; those with commands
  std::uint64_t bank_conflicts = 0;
  double bank_conflict_ratio = 0;  // bank_conflicts / tiu_commands
};

ProfileSummary summarize_profile(const ProfileFigures &figures);

// {"total_us", "tiu": {"busy_us", "ratio", "commands"}, "gdma": {...},
//  "sdma_commands", "hau_commands", "parallelism", "concurrency",
//  "concurrent_us", "directions": [{"engine", "direction", "bytes",
//  "commands", "busy_us", "busy_gbps", "average_gbps"}],
//  "bank_conflicts": {"commands", "ratio"}}
nlohmann::ordered_json profile_summary_json(const ProfileSummary &summary);
// The summary back from that JSON (a model's metadata keeps it); a field it
// lacks is 0.
ProfileSummary profile_summary_from_json(const nlohmann::json &j);

// "TIU 41.2%  GDMA 58.8%  parallelism 100.0%  concurrency 0.0%  bank conflicts 0/2"
std::string profile_summary_line(const ProfileSummary &summary);
// "GDMA S2L 96.0 KiB in 2.100 us: 46.8 GB/s busy, 19.5 GB/s over the run", one per direction.
std::vector<std::string> profile_direction_lines(const ProfileSummary &summary);

}  // namespace tpu_runtime
