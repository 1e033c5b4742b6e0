// expression_bench: a fused builtin.expression layer against the unfused
// chain of one layer per operation (issue 31), on both chips, fp32, a
// [8, 128, 1024] tensor per input:
//
//  - "seed": x*x + y*z (the Graphcore seed's example); the chain is
//    builtin.mul, builtin.mul, builtin.add;
//  - "long": sigmoid(x) * y + relu(z - x) * 0.5 - tanh(y); the chain is
//    eight layers (sigmoid and tanh as single-operation expressions, the
//    only built-in layers for them).
//
// Each benchmark runs the model once per iteration (wall time, manual) and
// reports the counters chip_us (the emulator's estimated chip time of the
// layers) and gdma_mb (bytes the GDMA moved). After the table: per formula
// and chip, unfused / fused estimated time and GDMA bytes, with the target
// >= 2x less estimated time for the seed formula.
//
// Exit status: 0 when every target is met, 1 when one is missed, 2 when a
// benchmark stopped with an error (.ci/run relies on it).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
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

#ifndef TPU_SAMPLE_OPS_LIB_DIR
#define TPU_SAMPLE_OPS_LIB_DIR ""
#endif

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

const std::vector<int> kShape = {8, 128, 1024};

std::string lib_dir() {
  if (const char *v = std::getenv("TPU_SAMPLE_OPS_LIB_DIR"); v && *v) return v;
  return TPU_SAMPLE_OPS_LIB_DIR;
}

Json layer(const std::string &op, const std::vector<std::string> &in, const std::string &out, Json params = Json::object()) {
  return {{"op", op}, {"params", params}, {"inputs", in}, {"outputs", {out}}};
}

Json expr(const std::string &formula, const std::vector<std::string> &in, const std::string &out) {
  return layer("builtin.expression", in, out, {{"formula", formula}});
}

Json layers_of(const std::string &formula, bool fused) {
  if (formula == "seed") {
    if (fused) return Json::array({expr("x*x + y*z", {"x", "y", "z"}, "out")});
    return Json::array({layer("builtin.mul", {"x", "x"}, "xx"), layer("builtin.mul", {"y", "z"}, "yz"),
                        layer("builtin.add", {"xx", "yz"}, "out")});
  }
  if (fused) return Json::array({expr("sigmoid(x) * y + relu(z - x) * 0.5 - tanh(y)", {"x", "y", "z"}, "out")});
  return Json::array({expr("sigmoid(x)", {"x"}, "s"), layer("builtin.mul", {"s", "y"}, "sy"),
                      layer("builtin.sub", {"z", "x"}, "d"), layer("builtin.relu", {"d"}, "r"),
                      layer("builtin.mul", {"r"}, "h", {{"scalar", 0.5}}), layer("builtin.add", {"sy", "h"}, "a"),
                      expr("tanh(y)", {"y"}, "t"), layer("builtin.sub", {"a", "t"}, "out")});
}

struct Built {
  tr::ModelFile model;
  tr::npz::Arrays inputs;
};

Built build(const std::string &chip, const std::string &formula, bool fused) {
  Json net = {{"name", formula}, {"inputs", Json::array()}, {"layers", layers_of(formula, fused)}, {"outputs", {"out"}}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2, 2);
  tr::BuildOptions o;
  o.chip = chip;
  const std::string d = lib_dir();
  o.libraries = {d + "/libplugin_custom.so", d + "/libbackend_custom.so", d + "/" + tr::firmware_file_name(chip)};
  o.layer_groups = false;
  Built b;
  for (const char *name : {"x", "y", "z"}) {
    net["inputs"].push_back({{"name", name}, {"shape", kShape}, {"dtype", "fp32"}});
    std::vector<float> v(std::size_t(kShape[0]) * kShape[1] * kShape[2]);
    for (float &x : v) x = u(rng);
    b.inputs[name] = tr::npz::Array::from<float>({kShape[0], kShape[1], kShape[2]}, v);
  }
  o.reference_inputs = b.inputs;
  b.model = tr::build_model(tr::parse_net(net, "bench.json"), o, "bench.json").model;
  return b;
}

void BM_expression(benchmark::State &state, std::string chip, std::string formula, bool fused) {
  if (lib_dir().empty()) return state.SkipWithError("TPU_SAMPLE_OPS_LIB_DIR is not set");
  Built b;
  try {
    b = build(chip, formula, fused);
  } catch (const tr::Error &e) {
    return state.SkipWithError(e.what());
  }
  double chip_us = 0, gdma = 0;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    tr::RunResult r;
    try {
      r = tr::run_model(b.model, b.inputs, "bench");
    } catch (const tr::Error &e) {
      return state.SkipWithError(e.what());
    }
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    chip_us = gdma = 0;
    for (const tr::LayerStats &l : r.layers) {
      chip_us += l.total_us;
      gdma += double(l.gdma_bytes);
    }
  }
  state.counters["chip_us"] = chip_us;
  state.counters["gdma_mb"] = gdma / 1e6;
  state.counters["layers"] = fused ? 1 : double(layers_of(formula, false).size());
}

class Reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run> &runs) override {
    for (const Run &run : runs) {
      if (run.error_occurred) errors_.push_back(run.benchmark_name() + ": " + run.error_message);
      else if (run.run_type == Run::RT_Iteration)
        figures_[run.run_name.function_name] = {run.counters.at("chip_us").value, run.counters.at("gdma_mb").value,
                                                run.GetAdjustedRealTime()};
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // 0 all targets met, 1 one missed, 2 an error or missing figures.
  int summarise() const {
    int status = errors_.empty() ? 0 : 2;
    std::printf("\nunfused chain / fused layer (same run):\n");
    for (const char *chip : {"bm1684x", "bm1688"})
      for (const char *formula : {"seed", "long"}) {
        const std::string f = fmt::format("{}/{}/fused", formula, chip), u = fmt::format("{}/{}/unfused", formula, chip);
        if (!figures_.count(f) || !figures_.count(u)) {
          std::printf("  %s on %s: MISSING\n", formula, chip);
          status = 2;
          continue;
        }
        const Figures &a = figures_.at(f), &b = figures_.at(u);
        const double time = b.chip_us / a.chip_us, bytes = b.gdma_mb / a.gdma_mb;
        const bool target = std::string(formula) == "seed", met = !target || time >= 2.0;
        std::printf("  %-5s %-8s estimated %9.1f / %9.1f us = %.2fx%s, GDMA %7.1f / %7.1f MB = %.2fx, emulator "
                    "wall %.0f / %.0f ms\n",
                    formula, chip, b.chip_us, a.chip_us, time, target ? (met ? " (target >= 2x: met)" : " (target >= 2x: MISSED)") : "",
                    b.gdma_mb, a.gdma_mb, bytes, b.wall_ms, a.wall_ms);
        if (!met) {
          std::printf("WARNING: performance target missed: %s on %s is %.2fx, target >= 2x\n", formula, chip, time);
          if (status == 0) status = 1;
        }
      }
    for (const std::string &e : errors_) std::printf("  ERROR in %s\n", e.c_str());
    return status;
  }

 private:
  struct Figures {
    double chip_us = 0, gdma_mb = 0, wall_ms = 0;
  };
  std::map<std::string, Figures> figures_;
  std::vector<std::string> errors_;
};

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  for (const char *chip : {"bm1684x", "bm1688"})
    for (const char *formula : {"seed", "long"})
      for (bool fused : {true, false})
        benchmark::RegisterBenchmark(fmt::format("{}/{}/{}", formula, chip, fused ? "fused" : "unfused").c_str(),
                                     BM_expression, std::string(chip), std::string(formula), fused)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
  Reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const int status = reporter.summarise();
  benchmark::Shutdown();
  return status;
}
