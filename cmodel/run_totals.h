// run_totals.h: the statistics of several runs added up
// (cmodel_total_stats): a dynamic layer group, for one, is many runs.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "timeline.h"

namespace cmodel {

struct RunTotals {
  double total_ns = 0;  // the runs' times, end to end
  double concurrent_ns = 0;  // GDMA and BDC both busy (Timeline::concurrent_ns)
  std::array<EngineStats, engine_count> engines{};
  RunStats stats;
  std::vector<std::string> warnings;

  // Adds a finished run: its timeline, statistics and warnings.
  void add(const Timeline &timeline, const RunStats &run, const std::vector<std::string> &run_warnings);
  // Adds another total (a multi-core run combined by add_core).
  void add(const RunTotals &other);
  // Adds one core of a multi-core run: its engines, statistics and
  // warnings add up, but the run's time is the slowest core's (the cores
  // run at once; their barriers already made each wait for the others).
  void add_core(const Timeline &timeline, const RunStats &run, const std::vector<std::string> &run_warnings);
};

// The JSON of a multi-core run: totals_json of the combined cores, plus
// "cores": one {"core", "total_us"} per core.
std::string cores_json(const ChipSpec &chip, const RunTotals &combined, const std::vector<double> &core_ns);

// The totals since the emulator was opened or they were last reset.
RunTotals &run_totals();

// The JSON of stats_json (timeline.h) for the added-up runs.
std::string totals_json(const ChipSpec &chip, const RunTotals &totals);

}  // namespace cmodel
