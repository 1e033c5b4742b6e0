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
};

// The totals since the emulator was opened or they were last reset.
RunTotals &run_totals();

// The JSON of stats_json (timeline.h) for the added-up runs.
std::string totals_json(const ChipSpec &chip, const RunTotals &totals);

}  // namespace cmodel
