// ratio_reporter.h: Google Benchmark main that also prints, for each
// benchmark, its throughput as a ratio of a baseline measured in the same
// run, and whether it meets the target.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace bench {

struct Ratio {
  std::string measured;  // benchmark name
  std::string baseline;  // benchmark name
  double target;         // minimum measured/baseline throughput, 0 = report only
};

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run> &runs) override {
    for (const Run &run : runs)
      if (run.run_type == Run::RT_Iteration) {
        // Items per second when the benchmark counts items, else bytes.
        auto it = run.counters.find("items_per_second");
        if (it == run.counters.end()) it = run.counters.find("bytes_per_second");
        if (it != run.counters.end()) throughput_[run.benchmark_name()] = it->second.value;
      }
    ConsoleReporter::ReportRuns(runs);
  }

  // Prints one line per ratio; returns false if a target was missed.
  bool print(const std::vector<Ratio> &ratios) const {
    bool all_met = true;
    std::printf("\nthroughput ratios (same run):\n");
    for (const Ratio &r : ratios) {
      auto m = throughput_.find(r.measured), b = throughput_.find(r.baseline);
      if (m == throughput_.end() || b == throughput_.end() || b->second == 0) continue;
      const double ratio = m->second / b->second;
      const bool met = r.target == 0 || ratio >= r.target;
      all_met = all_met && met;
      std::printf("  %-48s / %-28s = %.2f", r.measured.c_str(), r.baseline.c_str(), ratio);
      if (r.target > 0) std::printf("  (target >= %.2f: %s)", r.target, met ? "met" : "MISSED");
      std::printf("\n");
    }
    return all_met;
  }

 private:
  std::map<std::string, double> throughput_;
};

// Runs the registered benchmarks and prints the ratios; exit status 1 if a
// target was missed.
inline int run_with_ratios(int argc, char **argv, const std::vector<Ratio> &ratios) {
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const bool met = reporter.print(ratios);
  benchmark::Shutdown();
  return met ? 0 : 1;
}

}  // namespace bench
