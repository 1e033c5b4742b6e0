// group_planner_bench: the layer-group planner (tpu_runtime/group_planner.h)
// on a 200-layer chain, against the bound: a plan in well under a
// second. The target here is 100 ms per plan. Also prints the plan's
// estimated time as a ratio of the all-global time, and for the grouped
// sample net (examples/nets/layer_groups.json, built with the sample ops on
// both chips) the estimate and the emulated run, grouped against
// --no-groups (informational: no target).
//
// Exit status: 0 the target is met, 1 missed, 2 a benchmark errored or did
// not run (as bench/ratio_reporter.h).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/plan_time_reporter.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/group_planner.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/net.h"

namespace {

namespace tr = tpu_runtime;

constexpr double kTargetSeconds = 0.1;

// A chain like a real net's: elementwise ops, a 3-row window op every other
// layer, a layer without a local version every 37, rows of 512 bytes per
// NPU, 128 KiB of local memory.
std::vector<tr::PlannerLayer> chain(int count) {
  std::vector<tr::PlannerLayer> layers;
  for (int i = 0; i < count; ++i) {
    tr::PlannerLayer l;
    l.op = i % 2 ? "absadd" : "vsum3";
    l.n = 4;
    l.h = 128;
    l.halo = i % 2 ? 0 : 2;
    l.in_row_bytes = l.out_row_bytes = 512;
    l.in_plane_pad = l.out_plane_pad = 64;
    l.scratch_row_bytes = i % 2 ? 512 : 0;
    l.in_bytes = l.out_bytes = 512.0 * 64 * 4 * 128;
    l.bdc_us = 20;
    l.global_us = 20 + 2 * l.in_bytes / 1e4;
    if (i % 37 == 36) l.not_groupable = "op crop has no local version";
    layers.push_back(l);
  }
  return layers;
}

tr::PlannerFigures figures() {
  tr::PlannerFigures f;
  f.local_mem_bytes = 128 * 1024;
  return f;
}

void BM_plan_200_layers(benchmark::State &state) {
  const tr::GroupPlanner planner(chain(200), figures());
  for (auto _ : state) {
    tr::GroupPlan plan = planner.plan();
    benchmark::DoNotOptimize(plan);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_plan_200_layers)->Unit(benchmark::kMillisecond);

// The emulated time of a run: the sum over its layers.
double run_us(const tr::BuildResult &built, const tr::npz::Arrays &inputs) {
  double us = 0;
  for (const tr::LayerStats &s : tr::run_model(built.model, inputs, "bench").layers) us += s.total_us;
  return us;
}

// Builds the sample net grouped and all-global on `chip` and prints both
// ratios; false (with the error printed) when anything fails.
bool report_sample_net(const std::string &chip) {
#ifndef TPU_SDK_SAMPLE_LIB_DIR
  std::printf("sample net on %s: not measured (the SDK was built without the sample ops)\n", chip.c_str());
  return true;
#else
  try {
    const std::string path = std::string(TPU_SDK_SOURCE_DIR) + "/examples/nets/layer_groups.json";
    const std::string dir = TPU_SDK_SAMPLE_LIB_DIR;
    tr::BuildOptions options;
    options.chip = chip;
    options.libraries = {dir + "/libplugin_custom.so", dir + "/libbackend_custom.so",
                         dir + "/" + tr::firmware_file_name(chip)};
    options.reference = true;
    const tr::NetDescription net = tr::read_net(path);
    const tr::BuildResult grouped = tr::build_model(net, options, path);
    options.layer_groups = false;
    const tr::BuildResult global = tr::build_model(net, options, path);
    const double planned = grouped.description.layer_groups.at("planned_us").get<double>();
    const double all_global = grouped.description.layer_groups.at("global_us").get<double>();
    const double grouped_run = run_us(grouped, grouped.reference_inputs);
    const double global_run = run_us(global, grouped.reference_inputs);
    std::printf("sample net on %s (%zu group(s)): estimated %.2f us against %.2f us all-global (ratio %.3f); "
                "emulated run %.2f us against %.2f us with --no-groups (ratio %.3f)\n",
                chip.c_str(), grouped.description.groups.size(), planned, all_global, planned / all_global,
                grouped_run, global_run, grouped_run / global_run);
    return true;
  } catch (const tr::Error &e) {
    std::printf("sample net on %s: ERROR %s\n", chip.c_str(), e.what());
    return false;
  }
#endif
}

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  bench::PlanTimeReporter reporter("BM_plan_200_layers");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  const tr::GroupPlan plan = tr::GroupPlanner(chain(200), figures()).plan();
  int grouped = 0;
  for (const tr::PlannedGroup &g : plan.groups) grouped += g.grouped();
  std::printf("\n200-layer chain: %d groups, estimated %.1f us against %.1f us all-global (ratio %.3f)\n", grouped,
              plan.planned_us, plan.global_us, plan.global_us > 0 ? plan.planned_us / plan.global_us : 0.0);
  bool samples_ok = true;
  for (const char *chip : {"bm1684x", "bm1688"}) samples_ok = report_sample_net(chip) && samples_ok;
  if (!samples_ok) return 2;
  return bench::plan_time_verdict(reporter, kTargetSeconds);
}
