// layer_groups_test: layer groups in models (runtime/groups/layer_groups.h,
// tpu_runtime/group_planner.h).
//
//   - the planner alone: boundaries and their reasons, slicing under a
//     memory limit, a 200-layer chain;
//   - the property test: random chains of the sample ops and the vsum3
//     fixture op (a one-row halo on each side), random shapes, parameters,
//     dtypes, local-memory limits and static/dynamic layers on both chips:
//     the grouped model's outputs equal the all-global model's (built with
//     --no-groups) bit for bit;
//   - the slice check: vsum3_bad's backward_h_ declares no halo, and the
//     build stops naming the layer, the op, the hook, the slice and the rows;
//   - tpu_model info explains the plan;
//   - the emulator's local-memory watch (cmodel_watch_local) on its own.
//
// The libraries come from tests/runtime/groups/fixtures (the sample ops rebuilt with
// vsum3 and vsum3_bad): TPU_GROUP_FIXTURES_DIR, a compile definition or an
// environment variable. Without it the model tests are skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "support/test_support.h"
#include "tpu_kernel.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/group_planner.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"

#ifndef TPU_GROUP_FIXTURES_DIR
#define TPU_GROUP_FIXTURES_DIR ""
#endif

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

// ---- the planner alone ---------------------------------------------------------

tr::PlannerLayer local_layer(const std::string &op, int n, int h, double row_bytes) {
  tr::PlannerLayer l;
  l.op = op;
  l.n = n;
  l.h = h;
  l.in_row_bytes = l.out_row_bytes = row_bytes;
  l.in_bytes = l.out_bytes = row_bytes * n * h * 64;
  l.bdc_us = 1.0;
  l.global_us = 1.0 + 2 * l.in_bytes / 1e4;  // compute plus load and store
  return l;
}

TEST(GroupPlanner, GroupsLocalChainsAndExplainsEveryBoundary) {
  std::vector<tr::PlannerLayer> layers;
  for (int i = 0; i < 3; ++i) layers.push_back(local_layer("absadd", 2, 16, 64));
  layers.push_back(local_layer("swapchannel", 2, 16, 64));
  layers.back().not_groupable = "op swapchannel has no local version";
  for (int i = 0; i < 2; ++i) layers.push_back(local_layer("ceiladd", 2, 16, 64));
  layers.push_back(local_layer("absadd", 2, 16, 64));
  layers.back().chain_break = "tensor 't5' is also used by another layer";
  layers.push_back(local_layer("absadd", 2, 16, 64));

  const tr::GroupPlan plan = tr::GroupPlanner(layers, {}).plan();
  ASSERT_EQ(plan.groups.size(), 4u);
  EXPECT_EQ(plan.groups[0].first, 0);
  EXPECT_EQ(plan.groups[0].last, 2);
  EXPECT_FALSE(plan.groups[1].grouped());
  EXPECT_EQ(plan.groups[2].first, 4);
  EXPECT_EQ(plan.groups[2].last, 5);
  EXPECT_EQ(plan.groups[3].first, 6);
  EXPECT_EQ(plan.groups[3].last, 7);
  ASSERT_EQ(plan.boundaries.size(), 3u);
  EXPECT_EQ(plan.boundaries[0].after, 2);
  EXPECT_EQ(plan.boundaries[0].reason, "op swapchannel has no local version");
  EXPECT_EQ(plan.boundaries[1].reason, "op swapchannel has no local version");
  EXPECT_EQ(plan.boundaries[2].reason, "tensor 't5' is also used by another layer");
  EXPECT_LT(plan.planned_us, plan.global_us);
}

TEST(GroupPlanner, SlicesToFitLocalMemoryAndSaysWhenItCannot) {
  tr::PlannerFigures figures;
  figures.local_mem_bytes = 16 * 1024;
  // 2 x 64 rows x 256 bytes per row per NPU: far more than 16 KiB unsliced.
  std::vector<tr::PlannerLayer> layers(3, local_layer("vsum3", 2, 64, 256));
  for (auto &l : layers) l.halo = 2;
  const tr::SpanEstimate e = tr::GroupPlanner(layers, figures).estimate(0, 2);
  ASSERT_TRUE(e.feasible) << e.why;
  EXPECT_EQ(e.n_slices, 2);
  EXPECT_GT(e.h_slices, 1);
  EXPECT_LE(e.local_bytes, figures.local_mem_bytes);

  for (auto &l : layers) l.split_h = false;
  layers[1].op = "stubborn";
  const tr::SpanEstimate refused = tr::GroupPlanner(layers, figures).estimate(0, 2);
  EXPECT_FALSE(refused.feasible);
  EXPECT_NE(refused.why.find("allow_data_split_vsum3 refuses to split H"), std::string::npos) << refused.why;

  const tr::GroupPlan plan = tr::GroupPlanner(layers, figures).plan();
  ASSERT_EQ(plan.groups.size(), 3u);  // every layer global
  for (const tr::PlanBoundary &b : plan.boundaries)
    EXPECT_EQ(b.reason.rfind("memory: ", 0), 0u) << b.reason;
}

// One row of N = 1 does not fit: only W slices can make the span fit, and
// only where every layer lets W be split.
TEST(GroupPlanner, SplitsWWhenNAndHCannotMakeASpanFit) {
  tr::PlannerFigures figures;
  figures.local_mem_bytes = 8 * 1024;
  std::vector<tr::PlannerLayer> layers(3, local_layer("hsum3", 1, 1, 16000));  // 4000 fp32 columns
  for (auto &l : layers) {
    l.w = 4000;
    l.split_w = true;
    l.halo_w = 2;
  }
  const tr::SpanEstimate e = tr::GroupPlanner(layers, figures).estimate(0, 2);
  ASSERT_TRUE(e.feasible) << e.why;
  EXPECT_EQ(e.n_slices, 1);
  EXPECT_EQ(e.h_slices, 1);
  EXPECT_GT(e.w_slices, 4);  // 6 buffers of 16000 bytes in 8 KiB
  EXPECT_LE(e.local_bytes, figures.local_mem_bytes);
  const tr::GroupPlan plan = tr::GroupPlanner(layers, figures).plan();
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].w_slices, e.w_slices);

  layers[1].split_w = false;
  const tr::SpanEstimate refused = tr::GroupPlanner(layers, figures).estimate(0, 2);
  EXPECT_FALSE(refused.feasible);
  EXPECT_NE(refused.why.find("W cannot be split"), std::string::npos) << refused.why;
}

// Side inputs in the estimate, figures derived by hand: two layers of N = 4,
// H = 1, rows of 1000 bytes per NPU (in_bytes 256000), the second with a side
// input. Local memory for 7000 bytes: input, output (two buffers each) and
// the intermediate take 5000 per n, so one n per slice (4 slices).
TEST(GroupPlanner, SideInputsCountInLocalMemoryAndLoadTime) {
  tr::PlannerFigures figures;
  figures.local_mem_bytes = 7000;
  std::vector<tr::PlannerLayer> layers(2, local_layer("ewdouble", 4, 1, 1000));
  tr::PlannerSide side;
  side.row_bytes = 1000;
  side.bytes = 256000;
  layers[1].sides = {side};
  // Loaded per slice: two buffers (7000 bytes in all); per slice the load
  // is 64000 input + 64000 side bytes = 12.8 us, the store 6.4 us, the
  // compute 0.25 x 2 us + 4 x 0.05 us = 0.7 us; the pipeline of 4 slices
  // L + L + 2 (L + S) + S + S = 12.8 + 12.8 + 38.4 + 6.4 + 6.4 = 76.8 us.
  const tr::SpanEstimate per_slice = tr::GroupPlanner(layers, figures).estimate(0, 1);
  ASSERT_TRUE(per_slice.feasible) << per_slice.why;
  EXPECT_EQ(per_slice.n_slices, 4);
  EXPECT_DOUBLE_EQ(per_slice.local_bytes, 7000);
  EXPECT_NEAR(per_slice.time_us, 76.8, 1e-9);
  // Broadcast over N ([1, C, H, W]: 64000 bytes): one buffer, loaded once
  // before the pipeline (6.4 us), whose loads are the input's alone:
  // 6.4 + 6.4 + 6.4 + 2 x 12.8 + 6.4 + 6.4 = 57.6 us.
  layers[1].sides[0].broadcast = tr::PlannerSide::kBroadcastN;
  layers[1].sides[0].bytes = 64000;
  const tr::SpanEstimate once = tr::GroupPlanner(layers, figures).estimate(0, 1);
  ASSERT_TRUE(once.feasible) << once.why;
  EXPECT_EQ(once.n_slices, 4);
  EXPECT_DOUBLE_EQ(once.local_bytes, 6000);
  EXPECT_NEAR(once.time_us, 57.6, 1e-9);
  // One byte short for the per-slice side's two buffers: no slicing fits.
  layers[1].sides[0].broadcast = 0;
  figures.local_mem_bytes = 6999;
  EXPECT_FALSE(tr::GroupPlanner(layers, figures).estimate(0, 1).feasible);
}

// The DP's bound is asserted generously here; bench/group_planner_bench
// measures it.
TEST(GroupPlanner, PlansTwoHundredLayersQuickly) {
  std::vector<tr::PlannerLayer> layers;
  for (int i = 0; i < 200; ++i) {
    layers.push_back(local_layer(i % 2 ? "absadd" : "vsum3", 4, 128, 512));
    layers.back().halo = i % 2 ? 0 : 2;
    if (i % 37 == 36) layers.back().not_groupable = "op crop has no local version";
  }
  tr::PlannerFigures figures;
  figures.local_mem_bytes = 128 * 1024;
  const auto start = std::chrono::steady_clock::now();
  const tr::GroupPlan plan = tr::GroupPlanner(layers, figures).plan();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  int covered = 0;
  for (const tr::PlannedGroup &g : plan.groups) covered += g.last - g.first + 1;
  EXPECT_EQ(covered, 200);
  EXPECT_EQ(plan.boundaries.size() + 1, plan.groups.size());
  EXPECT_LT(plan.planned_us, plan.global_us);
}

// ---- the emulator's local-memory watch ------------------------------------------

// One 1 x 1 x 1 x 16 fp32 copy from local offset src to dst, run as a
// kernel; cmodel_run's status.
int copy_row_status(std::uint32_t dst, std::uint32_t src) {
  struct Args {
    std::uint32_t dst, src;
  } args{dst, src};
  const auto kernel = [](const void *p) {
    const auto *a = static_cast<const Args *>(p);
    const dim4 shape = {1, 1, 1, 16};
    tpu_bdc_cpy(a->dst, a->src, &shape, nullptr, nullptr, DT_FP32);
  };
  return cmodel_run(kernel, &args);
}

void copy_row(std::uint32_t dst, std::uint32_t src) { ASSERT_EQ(copy_row_status(dst, src), 0) << cmodel_last_error(); }

TEST(LocalWatch, StopsTheFirstCommandOutsideTheRangesAndSaysWhere) {
  ASSERT_EQ(cmodel_open("bm1684x"), 0);
  (void)tpu_local_mem_addr(0, 0);  // the rows copied count as written (a host pointer): the watch is tested here
  const int64_t reads[] = {0, 1024}, writes[] = {1024, 2048};
  ASSERT_EQ(cmodel_watch_local(reads, 1, writes, 1), 0);
  copy_row(1024, 0);  // inside both
  EXPECT_EQ(cmodel_local_watch_violation(nullptr, nullptr, nullptr), 0);

  EXPECT_NE(copy_row_status(1024, 4096), 0);  // reads outside
  EXPECT_NE(std::string(cmodel_last_error()).find("the slice check: this command reads local bytes [0x1000, 0x1040)"),
            std::string::npos)
      << cmodel_last_error();
  int64_t lo = 0, hi = 0;
  int write = -1;
  ASSERT_EQ(cmodel_local_watch_violation(&lo, &hi, &write), 1);
  EXPECT_EQ(lo, 4096);
  EXPECT_EQ(hi, 4096 + 64);
  EXPECT_EQ(write, 0);

  ASSERT_EQ(cmodel_watch_local(reads, 1, writes, 1), 0);  // re-arming forgets the violation
  EXPECT_EQ(cmodel_local_watch_violation(nullptr, nullptr, nullptr), 0);
  EXPECT_NE(copy_row_status(0, 512), 0);  // writes outside
  ASSERT_EQ(cmodel_local_watch_violation(&lo, &hi, &write), 1);
  EXPECT_EQ(write, 1);
  EXPECT_EQ(lo, 0);

  cmodel_unwatch_local();
  copy_row(8192, 4096);  // disarmed: anything goes
  EXPECT_EQ(cmodel_watch_local(nullptr, 1, writes, 1), -1);  // a null array with a count
  cmodel_close();
}

// ---- models ----------------------------------------------------------------------

std::string fixtures_dir() {
  if (const char *env = std::getenv("TPU_GROUP_FIXTURES_DIR"); env && *env) return env;
  return TPU_GROUP_FIXTURES_DIR;
}

tr::LibraryPaths libs(const std::string &chip) {
  const std::string dir = fixtures_dir();
  return {dir + "/libplugin_custom.so", dir + "/libbackend_custom.so", dir + "/" + tr::firmware_file_name(chip)};
}

#define REQUIRE_FIXTURES()                                                                  \
  do {                                                                                      \
    if (fixtures_dir().empty() || !std::filesystem::exists(fixtures_dir()))                 \
      GTEST_SKIP() << "TPU_GROUP_FIXTURES_DIR is not set or missing: " << fixtures_dir(); \
  } while (0)

struct Built {
  tr::BuildResult grouped, global;
};

// Builds `net` twice, with and without groups, from the same generated inputs.
Built build_both(const Json &net, const std::string &chip, uint32_t local_memory, uint64_t seed) {
  const tr::NetDescription d = tr::parse_net(net, "test.json");
  tr::BuildOptions options;
  options.chip = chip;
  options.libraries = libs(chip);
  options.reference = true;  // generates the inputs both runs use
  options.seed = seed;
  options.group_local_memory = local_memory;
  Built b{tr::build_model(d, options, "test.json"), {}};
  options.layer_groups = false;
  options.reference = false;
  b.global = tr::build_model(d, options, "test.json");
  return b;
}

Json layer(const std::string &op, Json params, const std::string &in, const std::string &out, bool dynamic = false) {
  Json l = {{"op", op}, {"params", std::move(params)}, {"inputs", {in}}, {"outputs", {out}}};
  if (dynamic) l["dynamic"] = true;
  return l;
}

// Random chains: the property test of the issue.
TEST(LayerGroupModels, GroupedRunsEqualGlobalRunsBitForBit) {
  REQUIRE_FIXTURES();
  test::Seeded seeded;
  int groups = 0, h_sliced = 0, n_sliced = 0, w_sliced = 0, halo_groups = 0, dynamic_groups = 0;
  const char *dtypes[] = {"fp32", "fp32", "fp16", "bf16"};
  const uint32_t memories[] = {0, 2048, 4096, 8192, 16384, 32768};
  for (int iteration = 0; iteration < 40; ++iteration) {
    const std::string chip = iteration % 2 ? "bm1688" : "bm1684x";
    const std::string dtype = dtypes[seeded.uniform(0, 3)];
    const bool three = seeded.uniform(0, 2) == 0;
    // Every fourth chain has one wide row: only W slices can cut it.
    const bool wide = iteration % 4 == 3;
    int n = seeded.uniform(1, 4), c = three ? 3 : seeded.uniform(1, 70), h = wide ? 1 : seeded.uniform(2, 48),
        w = wide ? seeded.uniform(200, 1200) : seeded.uniform(1, 32);
    Json net = {{"name", "chain"},
                {"inputs", {{{"name", "x"}, {"shape", {n, c, h, w}}, {"dtype", dtype}}}},
                {"layers", Json::array()}};
    std::string current = "x";
    const int length = seeded.uniform(2, 7);
    // A third of the chains are dynamic (groups through the firmware's local
    // entry); elsewhere a layer is dynamic now and then.
    const bool all_dynamic = seeded.uniform(0, 2) == 0;
    for (int i = 0; i < length; ++i) {
      const std::string next = i + 1 == length ? "y" : fmt::format("t{}", i);
      const bool dynamic = all_dynamic || seeded.uniform(0, 9) == 0;
      const float b = float(seeded.uniform(-8, 8)) / 4;
      switch (seeded.uniform(three ? 0 : 1, 6)) {
        case 0: {
          std::vector<int> order = {0, 1, 2};
          std::shuffle(order.begin(), order.end(), seeded.rng());
          net["layers"].push_back(layer("swapchannel", {{"order", order}}, current, next, dynamic));
          break;
        }
        case 1:
          if (h > 1 && w > 1) {
            const int hnew = seeded.uniform(1, h), wnew = seeded.uniform(1, w);
            const int hoff = seeded.uniform(0, h - hnew), woff = seeded.uniform(0, w - wnew);
            net["layers"].push_back(layer("crop", {{"hoffset", hoff}, {"woffset", woff}, {"hnew", hnew}, {"wnew", wnew}},
                                          current, next, dynamic));
            h = hnew;
            w = wnew;
            break;
          }
          [[fallthrough]];
        case 2:
          net["layers"].push_back(layer("absadd", {{"b", b}}, current, next, dynamic));
          break;
        case 3:
          net["layers"].push_back(layer("ceiladd", {{"b", b}}, current, next, dynamic));
          break;
        case 4:
          net["layers"].push_back(layer("vsum3", Json::object(), current, next, dynamic));
          break;
        default:
          net["layers"].push_back(layer("hsum3", Json::object(), current, next, dynamic));
          break;
      }
      current = next;
    }
    net["outputs"] = {"y"};
    const uint32_t memory = memories[seeded.uniform(0, 5)];
    SCOPED_TRACE(fmt::format("iteration {}: {} {} local memory {}: {}", iteration, chip, dtype, memory, net.dump()));

    Built b;
    try {
      b = build_both(net, chip, memory, seeded.seed() + uint64_t(iteration));
    } catch (const tr::Error &e) {
      FAIL() << e.what();
    }
    const tr::npz::Arrays &inputs = b.grouped.reference_inputs;
    const tr::RunResult grouped = tr::run_model(b.grouped.model, inputs, "grouped");
    const tr::RunResult global = tr::run_model(b.global.model, inputs, "global");
    ASSERT_EQ(grouped.outputs.at("y").data, global.outputs.at("y").data) << "grouped and global outputs differ";
    EXPECT_TRUE(b.global.description.groups.empty());
    for (const tr::ModelGroup &g : b.grouped.description.groups) {
      ++groups;
      dynamic_groups += g.dynamic;
      h_sliced += g.h_slices > 1;
      n_sliced += g.n_slices > 1;
      w_sliced += g.w_slices > 1;
      for (int k = g.first; k <= g.last; ++k) halo_groups += b.grouped.description.layers[std::size_t(k)].op == "vsum3";
    }
  }
  // Over the iterations, groups formed and were sliced both ways.
  EXPECT_GT(groups, 0);
  EXPECT_GT(h_sliced, 0);
  EXPECT_GT(n_sliced, 0);
  EXPECT_GT(halo_groups, 0);
  EXPECT_GT(w_sliced, 0);
  std::printf("property test: %d groups, %d split along N, %d along H, %d along W\n", groups, n_sliced, h_sliced,
              w_sliced);
  EXPECT_GT(dynamic_groups, 0);
  EXPECT_GT(groups, dynamic_groups);
}

Json halo_net(const std::string &middle, bool dynamic = false) {
  return {{"name", "halo"},
          {"inputs", {{{"name", "x"}, {"shape", {1, 2, 96, 64}}, {"dtype", "fp32"}}}},
          {"layers",
           {layer("absadd", {{"b", 0.5}}, "x", "t0", dynamic), layer(middle, Json::object(), "t0", "t1", dynamic),
            layer("absadd", {{"b", -1.0}}, "t1", "y", dynamic)}},
          {"outputs", {"y"}}};
}

TEST(LayerGroupModels, SliceCheckCatchesABackwardHookThatDeclaresTooFewRows) {
  REQUIRE_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    for (const bool dynamic : {false, true}) {
      SCOPED_TRACE(fmt::format("{} {}", chip, dynamic ? "dynamic" : "static"));
      // Sliced along H: vsum3_bad reads one row above and below what it declared.
      try {
        build_both(halo_net("vsum3_bad", dynamic), chip, 16384, 1);
        ADD_FAILURE() << chip << ": the build accepted vsum3_bad's slices";
      } catch (const tr::Error &e) {
        const std::string m = e.what();
        for (const char *part : {"slice check failed", "layer 'vsum3_bad_1' (op vsum3_bad)", "slice ",
                                 "backward_h_vsum3_bad declared rows", "reads input 't0' rows"})
          EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
      }
      // The same chain with the correct hook groups, slices and matches.
      const Built good = build_both(halo_net("vsum3", dynamic), chip, 16384, 1);
      ASSERT_EQ(good.grouped.description.groups.size(), 1u);
      EXPECT_EQ(good.grouped.description.groups[0].dynamic, dynamic);
      EXPECT_GT(good.grouped.description.groups[0].h_slices, 1);
      const tr::npz::Arrays &inputs = good.grouped.reference_inputs;
      EXPECT_EQ(tr::run_model(good.grouped.model, inputs, "grouped").outputs.at("y").data,
                tr::run_model(good.global.model, inputs, "global").outputs.at("y").data);
      if (!dynamic) continue;
      // A dynamic group is checked at run time too: declare one row fewer
      // for vsum3 in slice 1 (h_idx + 1, h_slice - 1 and the input slice to
      // match), and its kernel reads above what it declared.
      tr::ModelFile tampered = good.grouped.model;
      auto &entry = tampered.metadata["layer_groups"]["groups"][0]["schedule"]["slices"][1][1];
      entry[0][5] = entry[0][5].get<int>() + 1;
      entry[0][6] = entry[0][6].get<int>() - 1;
      entry[1][3] = entry[1][3].get<int>() + 1;
      entry[1][4] = entry[1][4].get<int>() - 1;
      try {
        tr::run_model(tampered, inputs, "tampered");
        ADD_FAILURE() << "the run accepted a slice that reads undeclared rows";
      } catch (const tr::Error &e) {
        const std::string m = e.what();
        for (const char *part :
             {"slice check failed", "layer 'vsum3_1' (op vsum3), slice 1", "backward_h_vsum3 declared rows"})
          EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
      }
    }
  }
}

// `tpu_model info` of a built model, through a file as the tool reads it.
std::string info_of(const tr::ModelFile &model) {
  // One file per test: ctest runs the tests side by side.
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string path = (std::filesystem::temp_directory_path() / (name + ".tpumodel")).string();
  tr::write_model_file(path, model);
  tr::ModelFileLayout layout;
  const tr::ModelFile read = tr::read_model_file(path, &layout);
  std::filesystem::remove(path);
  return tr::model_info_text(read, layout, path);
}

// A group of several slices keeps two buffers for its input and output, and
// its stream (or, dynamic, its run) loads and stores neighbouring slices on
// the GDMA while the BDC computes: the emulator's engines overlap.
TEST(LayerGroupModels, DoubleBufferedGroupsOverlapTheGdmaWithTheBdc) {
  REQUIRE_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    for (const bool dynamic : {false, true}) {
      SCOPED_TRACE(fmt::format("{} {}", chip, dynamic ? "dynamic" : "static"));
      const Built b = build_both(halo_net("vsum3", dynamic), chip, 16384, 1);
      const tr::ModelDescription &d = b.grouped.description;
      ASSERT_EQ(d.groups.size(), 1u);
      EXPECT_GT(d.groups[0].n_slices * d.groups[0].h_slices, 2);
      EXPECT_EQ(d.layer_groups["groups"][0].value("pipelined", false), true);
      const tr::npz::Arrays &inputs = b.grouped.reference_inputs;
      tr::RunOptions profiled;
      profiled.profile = true;
      const tr::RunResult grouped = tr::run_model(b.grouped.model, inputs, "grouped", profiled);
      EXPECT_EQ(grouped.outputs.at("y").data, tr::run_model(b.global.model, inputs, "global").outputs.at("y").data);
      // The profile shows it: some GDMA command runs while a BDC command does.
      std::vector<std::pair<double, double>> gdma_events, bdc_events;
      const Json trace = Json::parse(grouped.trace_json);
      std::map<int, std::string> lanes;
      for (const Json &e : trace["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name") lanes[e["tid"].get<int>()] = e["args"]["name"];
      for (const Json &e : trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const std::string lane = lanes[e["tid"].get<int>()];
        const std::pair<double, double> span{e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()};
        if (lane == "GDMA") gdma_events.push_back(span);
        if (lane == "BDC") bdc_events.push_back(span);
      }
      int overlapping = 0;
      for (const auto &g : gdma_events)
        for (const auto &c : bdc_events) overlapping += g.first < c.second && c.first < g.second;
      EXPECT_GT(overlapping, 0) << "no GDMA command of the group's profile overlaps a BDC command";
      EXPECT_GT(gdma_events.size(), 4u);
      EXPECT_GT(bdc_events.size(), 4u);
      // The group's statistics are on its first layer.
      const Json stats = Json::parse(grouped.layers[0].stats_json);
      const double gdma = stats["engines"]["gdma"]["busy_us"], bdc = stats["engines"]["bdc"]["busy_us"];
      const double total = stats["total_us"], overlap = stats["overlap_us"];
      EXPECT_NEAR(grouped.layers[0].total_us, total, 1e-6);
      EXPECT_GT(overlap, 0.25 * std::min(gdma, bdc)) << stats.dump();
      EXPECT_NEAR(total, gdma + bdc - overlap, 1e-3) << stats.dump();
      const std::string info = info_of(b.grouped.model);
      EXPECT_NE(info.find("double-buffered"), std::string::npos) << info;
    }
  }
}

// A local kernel that opens its own parallel region cannot run inside a
// pipeline stage; the group then runs its slices one after another, says
// why, and still matches the global layers.
TEST(LayerGroupModels, AKernelWithItsOwnParallelRegionRunsItsSlicesInTurn) {
  REQUIRE_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    for (const bool dynamic : {false, true}) {
      SCOPED_TRACE(fmt::format("{} {}", chip, dynamic ? "dynamic" : "static"));
      const Built b = build_both(halo_net("vsum3_par", dynamic), chip, 16384, 1);
      const tr::ModelDescription &d = b.grouped.description;
      ASSERT_EQ(d.groups.size(), 1u);
      EXPECT_GT(d.groups[0].n_slices * d.groups[0].h_slices, 1);
      const Json &entry = d.layer_groups["groups"][0];
      EXPECT_EQ(entry.value("pipelined", true), false);
      EXPECT_NE(entry.value("not_pipelined", std::string()).find("a parallel region is already open"),
                std::string::npos)
          << entry.dump();
      const tr::npz::Arrays &inputs = b.grouped.reference_inputs;
      const tr::RunResult grouped = tr::run_model(b.grouped.model, inputs, "grouped");
      EXPECT_EQ(grouped.outputs.at("y").data, tr::run_model(b.global.model, inputs, "global").outputs.at("y").data);
      const std::string info = info_of(b.grouped.model);
      EXPECT_NE(info.find("double-buffering failed: "), std::string::npos) << info;
    }
  }
}

Json wide_net(const std::string &middle, const std::string &dtype, bool dynamic) {
  return {{"name", "wide"},
          {"inputs", {{{"name", "x"}, {"shape", {1, 3, 1, 3001}}, {"dtype", dtype}}}},
          {"layers",
           {layer("absadd", {{"b", 0.5}}, "x", "t0", dynamic), layer(middle, Json::object(), "t0", "t1", dynamic),
            layer("ceiladd", {{"b", -1.0}}, "t1", "y", dynamic)}},
          {"outputs", {"y"}}};
}

// Rows of one n and one H row too wide for local memory: the group is cut
// along W, hsum3's backwardw_ hook adds the column halo, and the result is
// the global layers' bit for bit.
TEST(LayerGroupModels, WideRowsAreSplitAlongW) {
  REQUIRE_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"})
    for (const std::string dtype : {"fp32", "fp16"})
      for (const bool dynamic : {false, true}) {
        SCOPED_TRACE(fmt::format("{} {} {}", chip, dtype, dynamic ? "dynamic" : "static"));
        const Built b = build_both(wide_net("hsum3", dtype, dynamic), chip, 8192, 7);
        const tr::ModelDescription &d = b.grouped.description;
        ASSERT_EQ(d.groups.size(), 1u);
        EXPECT_EQ(d.groups[0].first, 0);
        EXPECT_EQ(d.groups[0].last, 2);
        EXPECT_GT(d.groups[0].w_slices, 1);
        const tr::npz::Arrays &inputs = b.grouped.reference_inputs;
        EXPECT_EQ(tr::run_model(b.grouped.model, inputs, "grouped").outputs.at("y").data,
                  tr::run_model(b.global.model, inputs, "global").outputs.at("y").data);
        EXPECT_NE(info_of(b.grouped.model).find(fmt::format("x {} w-slices", d.groups[0].w_slices)),
                  std::string::npos);
        if (!dynamic) continue;
        // The local_sec_info_t of hsum3 in slice 1: its input columns start
        // one before its output columns (the halo), and W is split.
        const Json &sec = d.layer_groups["groups"][0]["schedule"]["slices"][1][1][0];
        EXPECT_EQ(sec[9], 1) << sec.dump();                              // is_w_split
        EXPECT_EQ(sec[10].get<int>(), sec[12].get<int>() - 1) << sec.dump();  // w_idx = out_w_idx - 1
        EXPECT_EQ(sec[11].get<int>(), sec[13].get<int>() + 2) << sec.dump();  // w_slice = out_w_slice + 2
      }
}

// hsum3_bad has no backward_w_ hook: its slices get no column halo, and the
// slice check stops the build at the first slice that reads past its columns.
TEST(LayerGroupModels, SliceCheckCatchesAMissingColumnHalo) {
  REQUIRE_FIXTURES();
  for (const bool dynamic : {false, true}) {
    try {
      build_both(wide_net("hsum3_bad", "fp32", dynamic), "bm1684x", 8192, 7);
      ADD_FAILURE() << "the build accepted hsum3_bad's slices";
    } catch (const tr::Error &e) {
      const std::string m = e.what();
      for (const char *part : {"slice check failed", "layer 'hsum3_bad_1' (op hsum3_bad)", "columns",
                               "backward_w_hsum3_bad declared", "reads input 't0'"})
        EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
    }
  }
}

TEST(LayerGroupModels, InfoShowsThePlanAndWhyEachBoundaryIsThere) {
  REQUIRE_FIXTURES();
  const Json net = {{"name", "sample"},
                    {"inputs", {{{"name", "x"}, {"shape", {2, 3, 20, 24}}, {"dtype", "fp32"}}}},
                    {"layers",
                     {layer("absadd", {{"b", 0.75}}, "x", "a"), layer("ceiladd", {{"b", -1.5}}, "a", "b"),
                      layer("swapchannel", {{"order", {2, 0, 1}}}, "b", "s"),
                      layer("crop", {{"hoffset", 3}, {"woffset", 5}, {"hnew", 12}, {"wnew", 16}}, "s", "y")}},
                    {"outputs", {"y"}}};
  const Built b = build_both(net, "bm1684x", 0, 3);
  const tr::ModelDescription &d = b.grouped.description;
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_EQ(d.groups[0].first, 0);
  EXPECT_EQ(d.groups[0].last, 1);
  EXPECT_EQ(d.layers[0].group, 0);
  EXPECT_EQ(d.layers[2].group, -1);
  // The file round-trips and reads back the same plan.
  const std::string path = (std::filesystem::temp_directory_path() / "layer_groups_test.tpumodel").string();
  tr::write_model_file(path, b.grouped.model);
  tr::ModelFileLayout layout;
  const tr::ModelFile read = tr::read_model_file(path, &layout);
  const std::string info = tr::model_info_text(read, layout, path);
  std::filesystem::remove(path);
  for (const char *part : {"layer groups  estimated", "group 0: layers 0..1 ('absadd_0'..'ceiladd_1')",
                           "static (layer group 0)", "after layer 1   op swapchannel has no local version",
                           "after layer 2   op swapchannel has no local version"})
    EXPECT_NE(info.find(part), std::string::npos) << part << " not in:\n" << info;
  EXPECT_EQ(tr::run_model(read, b.grouped.reference_inputs, path).outputs.at("y").data,
            tr::run_model(b.global.model, b.grouped.reference_inputs, "global").outputs.at("y").data);
}

}  // namespace

namespace {

// The example net groups the three local sample ops on both chips, and the
// grouped run matches the all-global one.
TEST(LayerGroupModels, ExampleNetGroupsTheSampleOps) {
  REQUIRE_FIXTURES();
  const std::string path = std::string(TPU_SDK_SOURCE_DIR) + "/examples/nets/layer_groups.json";
  const tr::NetDescription net = tr::read_net(path);
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    tr::BuildOptions options;
    options.chip = chip;
    options.libraries = libs(chip);
    options.reference = true;
    const tr::BuildResult grouped = tr::build_model(net, options, path);
    options.layer_groups = false;
    options.reference = false;
    const tr::BuildResult global = tr::build_model(net, options, path);
    const tr::ModelDescription &d = grouped.description;
    ASSERT_EQ(d.groups.size(), 1u) << chip;
    EXPECT_EQ(d.groups[0].first, 0);
    EXPECT_EQ(d.groups[0].last, 2);
    EXPECT_LT(d.layer_groups.at("planned_us").get<double>(), d.layer_groups.at("global_us").get<double>());
    const tr::RunResult a = tr::run_model(grouped.model, grouped.reference_inputs, "grouped");
    const tr::RunResult b = tr::run_model(global.model, grouped.reference_inputs, "global");
    EXPECT_EQ(a.outputs.at("y").data, b.outputs.at("y").data) << chip;
    double grouped_us = 0, global_us = 0;
    for (const tr::LayerStats &s : a.layers) grouped_us += s.total_us;
    for (const tr::LayerStats &s : b.layers) global_us += s.total_us;
    EXPECT_LT(grouped_us, global_us) << chip << ": the grouped run is not faster on the emulator";
  }
}

}  // namespace
