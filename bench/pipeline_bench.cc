// pipeline_bench: the AutoPipe planner (tpu_runtime/pipeline.h) on 1,000
// layers into 8 stages, against the goal of a plan in under 100 ms;
// and the balance of its plans on the sample nets (examples/nets/*.json,
// built with the sample ops, every layer global so that any cut is allowed)
// against a naive split into equal layer counts: the slowest stage of each,
// printed as the ratio naive / planned (>= 1; informational, no target).
//
// Exit status: 0 the target is met, 1 missed, 2 a benchmark errored or did
// not run, or a sample net failed (as bench/ratio_reporter.h).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/plan_time_reporter.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/pipeline.h"

namespace {

namespace tr = tpu_runtime;

constexpr double kTargetSeconds = 0.1;

// A net-like chain: times of 5..60 us in an irregular pattern, every tenth
// layer with weights, activations of 64 KiB..1 MiB, a layer group of three
// every 25 layers (no cut inside).
std::vector<tr::PipelineLayer> chain(int count) {
  std::vector<tr::PipelineLayer> layers(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    tr::PipelineLayer &l = layers[std::size_t(i)];
    l.name = "layer" + std::to_string(i);
    l.time_us = 5 + (i * 37 % 56);
    l.weight_bytes = i % 10 == 0 ? uint64_t(1) << 20 : 0;
    l.live_bytes = (uint64_t(64) << 10) * uint64_t(1 + i * 7 % 16);
    l.cut_bytes = l.live_bytes / 2;
    l.cut_after = i % 25 > 2;
  }
  return layers;
}

const tr::PipelineLink kLink = tr::default_pipeline_link("bm1688");

void BM_plan_1000_layers_8_stages(benchmark::State &state) {
  const std::vector<tr::PipelineLayer> layers = chain(1000);
  for (auto _ : state) {
    tr::PipelinePlan plan = tr::plan_pipeline(layers, 8, uint64_t(1) << 30, kLink);
    benchmark::DoNotOptimize(plan);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_plan_1000_layers_8_stages)->Unit(benchmark::kMillisecond);

double slowest(const std::vector<tr::PipelineStage> &stages) {
  double s = 0;
  for (const tr::PipelineStage &st : stages) s = std::max(s, st.time_us);
  return s;
}

// The planned and the naive slowest stage of one net on one chip; false
// (with the error printed) when anything fails.
bool report_sample_net(const std::string &name, const std::string &chip) {
#ifndef TPU_SAMPLE_OPS_LIB_DIR
  std::printf("%s on %s: not measured (the SDK was built without the sample ops)\n", name.c_str(), chip.c_str());
  return true;
#else
  try {
    const std::string path = std::string(TPU_SDK_SOURCE_DIR) + "/examples/nets/" + name;
    const std::string dir = TPU_SAMPLE_OPS_LIB_DIR;
    tr::BuildOptions options;
    options.chip = chip;
    options.libraries = {dir + "/libplugin_custom.so", dir + "/libbackend_custom.so",
                         dir + "/" + tr::firmware_file_name(chip)};
    options.layer_groups = false;
    const tr::BuildResult built = tr::build_model(tr::read_net(path), options, path);
    const std::vector<tr::PipelineLayer> layers = tr::pipeline_layers(built.model, built.description);
    const tr::PipelineLink link = tr::default_pipeline_link(chip);
    for (int stages = 2; stages <= std::min<int>(3, int(layers.size())); ++stages) {
      const tr::PipelinePlan plan =
          tr::plan_pipeline(layers, stages, tr::default_stage_memory(chip, stages), link);
      const double naive = slowest(tr::evaluate_split(layers, tr::equal_layer_split(layers.size(), stages), link));
      std::printf("%s on %s, %d stages: slowest stage %.2f us planned, %.2f us equal layer counts (ratio naive / "
                  "planned %.3f)\n",
                  name.c_str(), chip.c_str(), stages, plan.slowest_us, naive, naive / plan.slowest_us);
    }
    return true;
  } catch (const tr::Error &e) {
    std::printf("%s on %s: ERROR %s\n", name.c_str(), chip.c_str(), e.what());
    return false;
  }
#endif
}

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  bench::PlanTimeReporter reporter("BM_plan_1000_layers_8_stages");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  const std::vector<tr::PipelineLayer> layers = chain(1000);
  const tr::PipelinePlan plan = tr::plan_pipeline(layers, 8, uint64_t(1) << 30, kLink);
  const double naive = slowest(tr::evaluate_split(layers, tr::equal_layer_split(layers.size(), 8), kLink));
  std::printf("\n1000-layer chain, 8 stages: slowest stage %.1f us planned, %.1f us equal layer counts (ratio naive "
              "/ planned %.3f)\n",
              plan.slowest_us, naive, naive / plan.slowest_us);
  bool samples_ok = true;
  for (const char *net : {"sample_ops.json", "layer_groups.json"})
    for (const char *chip : {"bm1684x", "bm1688"}) samples_ok = report_sample_net(net, chip) && samples_ok;
  if (!samples_ok) return 2;
  return bench::plan_time_verdict(reporter, kTargetSeconds, " of 1000 layers into 8 stages");
}
