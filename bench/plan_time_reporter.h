// plan_time_reporter.h: a Google Benchmark reporter for the planners'
// benchmarks (group_planner_bench, pipeline_bench): it keeps the time per
// iteration of one named benchmark, a plan's time, and whether any
// benchmark errored; plan_time_verdict() prints it against the target.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace bench {

class PlanTimeReporter : public benchmark::ConsoleReporter {
 public:
  explicit PlanTimeReporter(std::string benchmark) : benchmark_(std::move(benchmark)) {}
  void ReportRuns(const std::vector<Run> &runs) override {
    for (const Run &run : runs) {
      if (run.error_occurred) errored = true;
      if (run.run_type == Run::RT_Iteration && run.benchmark_name() == benchmark_ && run.iterations > 0)
        seconds_per_plan = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  bool errored = false;
  double seconds_per_plan = -1;

 private:
  std::string benchmark_;
};

// Prints the plan time against `target_seconds` ("what" follows "per
// plan"); the exit status: 0 met, 1 missed, 2 the benchmark errored or did
// not run (as bench/ratio_reporter.h).
inline int plan_time_verdict(const PlanTimeReporter &reporter, double target_seconds, const char *what = "") {
  if (reporter.errored || reporter.seconds_per_plan < 0) {
    std::printf("plan time: MISSING (the benchmark errored or did not run)\n");
    return 2;
  }
  const bool met = reporter.seconds_per_plan < target_seconds;
  std::printf("plan time: %.2f ms per plan%s (target < %.0f ms: %s)\n", reporter.seconds_per_plan * 1e3, what,
              target_seconds * 1e3, met ? "met" : "MISSED");
  return met ? 0 : 1;
}

}  // namespace bench
