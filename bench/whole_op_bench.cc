// whole_op_bench: how long the emulator takes, in wall time, per
// microsecond of emulated chip time, for whole ops and models (issue 16).
//
//  - op_check/absadd_2x67x300x301: the largest case of
//    customlayer/op_cases.json (absadd, fp32, bm1684x, global only) through
//    tpu_runtime::OpTester, the library tpu_op_check runs: random inputs,
//    the plugin's reference, the global backend and firmware runs, the
//    comparison. Emulated time: every case's kernel time.
//  - model200/build and model200/run: a net of 200 absadd layers built with
//    tpu_runtime::build_model (layer groups planned and recorded) and run
//    with run_model, as `tpu_model build` and `tpu_model run` do, but in
//    this process. Emulated time: the run's layers.
//
// Each benchmark reports the counters emulated_us and wall_ms_per_emu_us
// (wall milliseconds per emulated microsecond; lower is faster), and a
// summary line per benchmark follows the table. There is no target: the
// numbers are there so that regressions show.
//
// The sample ops' libraries come from TPU_SAMPLE_OPS_LIB_DIR (set by
// bench/CMakeLists.txt, or the environment). Exit status: 0 when every
// benchmark ran and its results were right; 2 when one stopped with an
// error (a library missing, a kernel error, a wrong result). .ci/run relies
// on it.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/npz.h"
#include "tpu_runtime/op_tester.h"

#ifndef TPU_SAMPLE_OPS_LIB_DIR
#define TPU_SAMPLE_OPS_LIB_DIR ""
#endif

namespace {

namespace tr = tpu_runtime;
using Clock = std::chrono::steady_clock;

std::string lib_dir() {
  if (const char *v = std::getenv("TPU_SAMPLE_OPS_LIB_DIR"); v && *v) return v;
  return TPU_SAMPLE_OPS_LIB_DIR;
}

tr::LibraryPaths sample_libraries(const std::string &chip) {
  const std::string d = lib_dir();
  return {d + "/libplugin_custom.so", d + "/libbackend_custom.so", d + "/" + tr::firmware_file_name(chip)};
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Wall time and emulated time of every iteration, as counters. The
// benchmarks time themselves (UseManualTime): setup between iterations
// stays out.
void report(benchmark::State &state, double wall_s, double emulated_us) {
  state.counters["emulated_us"] = benchmark::Counter(emulated_us, benchmark::Counter::kAvgIterations);
  if (emulated_us > 0)
    state.counters["wall_ms_per_emu_us"] = benchmark::Counter(wall_s * 1e3 / emulated_us);
}

// ---- the largest op_cases.json case through the op tester --------------------

void BM_op_check_absadd(benchmark::State &state) {
  if (lib_dir().empty()) return state.SkipWithError("TPU_SAMPLE_OPS_LIB_DIR is not set");
  double wall = 0, emulated = 0;
  for (auto _ : state) {
    tr::OpTester tester;
    tester.op("absadd").chip("bm1684x").dtype(tr::Dtype::fp32).params(R"({"b": -0.5})");
    tester.input_shape({2, 67, 300, 301}).libraries(sample_libraries("bm1684x")).global_only();
    const Clock::time_point start = Clock::now();
    tr::OpReport result;
    try {
      result = tester.run();
    } catch (const tr::Error &e) {
      return state.SkipWithError(e.what());
    }
    const double seconds = seconds_since(start);
    state.SetIterationTime(seconds);
    if (!result.passed) return state.SkipWithError(("absadd failed its check: " + result.summary()).c_str());
    wall += seconds;
    for (const tr::OpCaseResult &c : result.cases) emulated += c.total_us;
  }
  report(state, wall, emulated);
}

// ---- a 200-layer model ----------------------------------------------------------

constexpr int kLayers = 200;
constexpr float kB = 0.25f;  // absadd's b: y = |x| + b, layer after layer
const tr::Shape kModelShape = {1, 64, 32, 32};

nlohmann::ordered_json absadd_chain() {
  using Json = nlohmann::ordered_json;
  Json net = {{"name", "absadd200"},
              {"inputs", Json::array({{{"name", "x"}, {"shape", kModelShape}, {"dtype", "fp32"}}})},
              {"layers", Json::array()},
              {"outputs", {"y"}}};
  for (int i = 0; i < kLayers; ++i) {
    const std::string in = i == 0 ? "x" : fmt::format("t{}", i - 1);
    const std::string out = i == kLayers - 1 ? "y" : fmt::format("t{}", i);
    net["layers"].push_back({{"op", "absadd"}, {"params", {{"b", kB}}}, {"inputs", {in}}, {"outputs", {out}}});
  }
  return net;
}

tr::npz::Array model_input() {
  std::vector<float> x(size_t(kModelShape[0] * kModelShape[1] * kModelShape[2] * kModelShape[3]));
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> uniform(-4, 4);
  for (float &v : x) v = uniform(rng);
  return tr::npz::Array::from<float>({kModelShape.begin(), kModelShape.end()}, x);
}

tr::BuildOptions model_options() {
  tr::BuildOptions o;
  o.chip = "bm1684x";
  o.libraries = sample_libraries("bm1684x");
  return o;
}

// The first layer makes every value |x| + b >= b > 0, so each later one
// adds b: y = |x| + 200 b, up to fp32 rounding of 200 additions.
std::string wrong_output(const tr::npz::Array &x, const tr::npz::Array &y) {
  const auto in = x.values<float>();
  const auto out = y.values<float>();
  if (in.size() != out.size()) return fmt::format("output has {} elements, input {}", out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const double want = std::fabs(double(in[i])) + kLayers * double(kB);
    if (!(std::fabs(out[i] - want) <= 1e-4 * want))
      return fmt::format("element {}: {} after {} absadd layers, expected about {}", i, out[i], kLayers, want);
  }
  return "";
}

void BM_model200_build(benchmark::State &state) {
  if (lib_dir().empty()) return state.SkipWithError("TPU_SAMPLE_OPS_LIB_DIR is not set");
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    try {
      const tr::BuildResult built = tr::build_model(tr::parse_net(absadd_chain(), "absadd200"), model_options());
      benchmark::DoNotOptimize(built.model);
    } catch (const tr::Error &e) {
      return state.SkipWithError(e.what());
    }
    state.SetIterationTime(seconds_since(start));
  }
}

void BM_model200_run(benchmark::State &state) {
  if (lib_dir().empty()) return state.SkipWithError("TPU_SAMPLE_OPS_LIB_DIR is not set");
  tr::npz::Arrays inputs{{"x", model_input()}};
  std::optional<tr::BuildResult> built;
  try {
    built = tr::build_model(tr::parse_net(absadd_chain(), "absadd200"), model_options());
  } catch (const tr::Error &e) {
    return state.SkipWithError(e.what());
  }
  double wall = 0, emulated = 0;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    tr::RunResult ran;
    try {
      ran = tr::run_model(built->model, inputs, "absadd200");
    } catch (const tr::Error &e) {
      return state.SkipWithError(e.what());
    }
    const double seconds = seconds_since(start);
    state.SetIterationTime(seconds);
    if (const std::string why = wrong_output(inputs.at("x"), ran.outputs.at("y")); !why.empty())
      return state.SkipWithError(why.c_str());
    wall += seconds;
    for (const tr::LayerStats &l : ran.layers) emulated += l.total_us;
  }
  report(state, wall, emulated);
}

// Whole ops take seconds: a few iterations, timed by hand, in milliseconds.
BENCHMARK(BM_op_check_absadd)->Name("op_check/absadd_2x67x300x301")->UseManualTime()->Iterations(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_model200_build)->Name("model200/build")->UseManualTime()->Iterations(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_model200_run)->Name("model200/run")->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);

// Prints the table, then "wall ms / emulated us" per benchmark, and
// remembers whether any benchmark stopped with an error.
class Reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run> &runs) override {
    for (const Run &run : runs) {
      if (run.error_occurred) errors_.push_back(run.benchmark_name() + ": " + run.error_message);
      if (auto it = run.counters.find("wall_ms_per_emu_us"); it != run.counters.end())
        ratios_[run.run_name.function_name] = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  bool summarise() const {
    std::printf("\nwall time per emulated time:\n");
    for (const auto &[name, value] : ratios_) std::printf("  %-40s %10.3f wall ms / emulated us\n", name.c_str(), value);
    for (const std::string &e : errors_) std::printf("  ERROR in %s\n", e.c_str());
    return errors_.empty();
  }

 private:
  std::map<std::string, double> ratios_;
  std::vector<std::string> errors_;
};

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  Reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const bool ok = reporter.summarise();
  benchmark::Shutdown();
  return ok ? 0 : 2;
}
