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
  std::string baseline;  // benchmark name; empty: `target` is an absolute throughput
  double target;         // minimum measured/baseline throughput (or items/s), 0 = report only
};

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run> &runs) override {
    for (const Run &run : runs) {
      if (run.error_occurred) errored_.push_back(run.benchmark_name() + ": " + run.error_message);
      if (run.run_type == Run::RT_Iteration) {
        // Items per second when the benchmark counts items, else bytes.
        auto it = run.counters.find("items_per_second");
        if (it == run.counters.end()) it = run.counters.find("bytes_per_second");
        if (it != run.counters.end()) throughput_[run.benchmark_name()] = it->second.value;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  enum class Outcome { met, missed, incomplete };

  // Prints one line per ratio, then a WARNING line per missed target.
  // incomplete: a benchmark stopped with an
  // error, or a ratio lacks a throughput (its benchmark errored or did not
  // run): said loudly, never skipped. missed: a target was not reached.
  Outcome print(const std::vector<Ratio> &ratios) const {
    bool all_met = true, complete = errored_.empty();
    std::printf("\nthroughput ratios (same run):\n");
    std::vector<std::string> missed;
    for (const Ratio &r : ratios) {
      const bool absolute = r.baseline.empty();
      auto m = throughput_.find(r.measured), b = throughput_.find(r.baseline);
      if (m == throughput_.end() || (!absolute && (b == throughput_.end() || b->second == 0))) {
        std::printf("  %-48s / %-28s = MISSING (no throughput from %s)\n", r.measured.c_str(), r.baseline.c_str(),
                    m == throughput_.end() ? r.measured.c_str() : r.baseline.c_str());
        complete = false;
        continue;
      }
      const double value = absolute ? m->second : m->second / b->second;
      const bool met = r.target == 0 || value >= r.target;
      all_met = all_met && met;
      if (absolute) {
        std::printf("  %-48s   %-28s = %.2f M/s", r.measured.c_str(), "", value / 1e6);
        if (r.target > 0) std::printf("  (target >= %.2f M/s: %s)", r.target / 1e6, met ? "met" : "MISSED");
      } else {
        std::printf("  %-48s / %-28s = %.2f", r.measured.c_str(), r.baseline.c_str(), value);
        if (r.target > 0) std::printf("  (target >= %.2f: %s)", r.target, met ? "met" : "MISSED");
      }
      std::printf("\n");
      if (!met)
        missed.push_back(absolute ? fmt_missed(r.measured, value / 1e6, r.target / 1e6, " M/s")
                                  : fmt_missed(r.measured + " / " + r.baseline, value, r.target, ""));
    }
    for (const std::string &w : missed) std::printf("WARNING: performance target missed: %s\n", w.c_str());
    for (const std::string &e : errored_) std::printf("  ERROR in %s\n", e.c_str());
    if (!complete) return Outcome::incomplete;
    return all_met ? Outcome::met : Outcome::missed;
  }

 private:
  static std::string fmt_missed(const std::string &what, double value, double target, const char *unit) {
    char text[64];
    std::snprintf(text, sizeof text, " = %.2f%s, target >= %.2f%s", value, unit, target, unit);
    return what + text;
  }

  std::map<std::string, double> throughput_;
  std::vector<std::string> errored_;
};

// Runs the registered benchmarks and prints the ratios. Exit status 0 when
// every target is met, 1 when one is missed, 2 when a benchmark errored or
// a ratio could not be computed (a filter that leaves out a benchmark a
// ratio needs counts as that too).
inline int run_with_ratios(int argc, char **argv, const std::vector<Ratio> &ratios) {
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const RatioReporter::Outcome outcome = reporter.print(ratios);
  benchmark::Shutdown();
  switch (outcome) {
    case RatioReporter::Outcome::met: return 0;
    case RatioReporter::Outcome::missed: return 1;
    default: return 2;
  }
}

}  // namespace bench
