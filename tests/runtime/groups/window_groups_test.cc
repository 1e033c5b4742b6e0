// window_groups_test: the built-in window layers (builtin.conv2d, maxpool2d,
// avgpool2d, slice along H and W) and a 2-d builtin.matmul in layer groups (layer_groups.cc,
// builtin_kernels.h run_window_local):
//   - property: random chains of convolutions (group 1 and depthwise, with
//     and without bias), pools, slices and relus over random shapes, kernels,
//     strides, dilations and pads, in fp32, fp16 and bf16 on both chips, built
//     with little local memory so that the groups slice H (each slice
//     loading its input rows with the window's halo): the grouped run gives
//     the ungrouped run's bytes, and both stay within the dtype's
//     tolerance of the build's double-precision reference;
//   - conv, relu, maxpool becomes one group whose estimate is below the
//     layers' global times; a conv of 2 groups (neither 1 nor depthwise)
//     stays global, the boundary naming why, and so does a slice of
//     channels;
//   - a 2-d matmul with a weight and bias, then relu, groups along N.
// The numpy side of the same check is tests/python/test_window_groups.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/group_fixtures.h"
#include "support/net_json.h"
#include "support/test_support.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/npz.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

// A weight of uniform values in [-0.5, 0.5), given as fp32 data rounded
// into `dtype` by the builder.
Json weight(const std::string &name, const std::vector<int> &shape, const std::string &dtype, test::Seeded &s) {
  int count = 1;
  for (int d : shape) count *= d;
  std::vector<uint8_t> bytes(std::size_t(count) * 4);
  for (int i = 0; i < count; ++i) {
    const float v = float(s.uniform(0, 1023) - 512) / 1024.0f;
    std::memcpy(&bytes[std::size_t(i) * 4], &v, 4);
  }
  return {{"name", name}, {"shape", shape}, {"dtype", dtype}, {"data", tr::encode_base64(bytes)},
          {"data_dtype", "fp32"}};
}

struct Activation {
  int n, c, h, w;
};

// Extent of a window of `k` taps at dilation `d`.
int extent(int k, int d) { return d * (k - 1) + 1; }

// A slice along H and W of `a`: random starts, ends and steps.
Json random_slice(test::Seeded &s, Activation &a, const std::string &name, const std::string &in,
                  const std::string &out) {
  const int h0 = s.uniform(0, a.h / 3), w0 = s.uniform(0, a.w / 3);
  const int h1 = a.h - s.uniform(0, a.h / 4), w1 = a.w - s.uniform(0, a.w / 4);
  const int sh = s.uniform(1, 3), sw = s.uniform(1, 3);
  const Json params = {{"starts", {0, 0, h0, w0}}, {"ends", {a.n, a.c, h1, w1}}, {"steps", {1, 1, sh, sw}}};
  a.h = (h1 - h0 + sh - 1) / sh, a.w = (w1 - w0 + sw - 1) / sw;
  return test::net_layer(name, "builtin.slice", params, {in}, {out});
}

// A random chain of window layers (convs, pools, slices) and relus from x
// [n, c, h, w]; counts the window layers.
Json random_cnn(test::Seeded &s, const std::string &dtype, int &windows) {
  Activation a{s.uniform(1, 2), s.uniform(1, 8), s.uniform(24, 64), s.uniform(8, 24)};
  Json net = {{"name", "cnn"},
              {"inputs", {{{"name", "x"}, {"shape", {a.n, a.c, a.h, a.w}}, {"dtype", dtype}}}},
              {"weights", Json::array()},
              {"layers", Json::array()}};
  std::string last = "x";
  const int count = s.uniform(3, 5);
  windows = 0;
  for (int i = 0; i < count; ++i) {
    const std::string out = fmt::format("t{}", i), name = fmt::format("l{}", i);
    const int kind = s.uniform(0, 5);  // conv, depthwise, max, avg, relu, slice
    if (kind == 5 && a.h >= 8) {
      ++windows;
      net["layers"].push_back(random_slice(s, a, name, last, out));
      last = out;
      continue;
    }
    // Mostly stride 1, so that the tensors stay tall enough to slice.
    const int kh = s.uniform(1, 4), kw = s.uniform(1, 3), sh = std::max(1, s.uniform(-2, 3)), sw = s.uniform(1, 2);
    const int dh = kind < 2 ? s.uniform(1, 2) : 1;
    // A max pool's pads stay below its window; every pad within 0..2.
    const int limit_h = std::min(2, extent(kh, dh) - 1), limit_w = std::min(2, kw - 1);
    const std::vector<int> pads = {s.uniform(0, limit_h), s.uniform(0, limit_w), s.uniform(0, limit_h),
                                   s.uniform(0, limit_w)};
    const int oh = (a.h + pads[0] + pads[2] - extent(kh, dh)) / sh + 1, ow = (a.w + pads[1] + pads[3] - kw) / sw + 1;
    if (kind >= 4 || oh < 2 || ow < 1 || a.h + pads[0] + pads[2] < extent(kh, dh) || a.w + pads[1] + pads[3] < kw) {
      net["layers"].push_back(test::net_layer(name, "builtin.relu", Json::object(), {last}, {out}));
      last = out;
      continue;
    }
    ++windows;
    if (kind < 2) {
      const int oc = kind == 0 ? s.uniform(1, 12) : a.c;
      Json inputs = {last, "w" + out};
      net["weights"].push_back(weight("w" + out, {oc, kind == 0 ? a.c : 1, kh, kw}, dtype, s));
      if (s.uniform(0, 1)) {
        net["weights"].push_back(weight("b" + out, {oc}, dtype, s));
        inputs.push_back("b" + out);
      }
      Json params = {{"stride", {sh, sw}}, {"dilation", {dh, 1}}, {"pads", pads}};
      if (kind == 1) params["group"] = a.c;
      net["layers"].push_back(test::net_layer(name, "builtin.conv2d", params, inputs, {out}));
      a.c = oc;
    } else {
      const Json params = {{"kernel", {kh, kw}}, {"stride", {sh, sw}}, {"pads", pads}};
      net["layers"].push_back(
          test::net_layer(name, kind == 2 ? "builtin.maxpool2d" : "builtin.avgpool2d", params, {last}, {out}));
    }
    a.h = oh, a.w = ow;
    last = out;
  }
  net["outputs"] = {last};
  return net;
}

tr::BuildOptions options_for(const std::string &chip, bool groups, uint32_t local_memory, uint64_t seed) {
  tr::BuildOptions o = test::group_build_options(chip, groups, seed);
  o.group_local_memory = local_memory;
  return o;
}

// The layers a group holds whose op is `op` (or, with "", that are window
// layers: not relus).
int count_grouped(const tr::ModelDescription &d, const std::string &op = "") {
  int count = 0;
  for (const tr::ModelGroup &g : d.groups)
    for (int k = g.first; k <= g.last; ++k)
      count += op.empty() ? d.layers[std::size_t(k)].op != "builtin.relu" : d.layers[std::size_t(k)].op == op;
  return count;
}

// A model output (fp32, fp16, or bf16 as "<u2") or reference (fp32) as floats.
std::vector<float> floats_of(const tr::npz::Array &a) {
  std::vector<float> out;
  if (a.dtype == "<f2" || a.dtype == "<u2")
    for (std::size_t i = 0; i + 1 < a.data.size(); i += 2) {
      const uint16_t bits = uint16_t(a.data[i] | a.data[i + 1] << 8);
      out.push_back(a.dtype == "<f2" ? tr::fp16_to_float(bits) : tr::bf16_to_float(bits));
    }
  else
    for (float v : a.values<float>()) out.push_back(v);
  return out;
}

// Within the dtype's tolerance of the double-precision reference: a few
// ulps of the result and of the accumulated terms (inputs and weights are
// within 4, so each term within 2, at most 12 x 4 x 3 of them).
void expect_near_reference(const std::vector<float> &got, const std::vector<float> &want, const std::string &dtype) {
  ASSERT_EQ(got.size(), want.size());
  const double ulp = std::ldexp(1.0, dtype == "fp32" ? -23 : dtype == "fp16" ? -10 : -7);
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 3; ++i)
    if (!(std::abs(double(got[i]) - double(want[i])) <= 4 * ulp * (std::abs(double(want[i])) + 64))) {
      ADD_FAILURE() << "element " << i << ": " << got[i] << " against the reference " << want[i];
      ++bad;
    }
}

TEST(WindowGroups, RandomConvAndPoolChainsGroupedEqualUngroupedBitForBit) {
  REQUIRE_GROUP_FIXTURES();
  test::Seeded s;
  int rounds_with_groups = 0, rounds_sliced = 0, rounds = 0, slices = 0;
  for (const std::string chip : {"bm1684x", "bm1688"})
    for (const std::string dtype : {"fp32", "fp16", "bf16"})
      for (int round = 0; round < test::rounds(4); ++round) {
        int windows = 0;
        const Json text = random_cnn(s, dtype, windows);
        SCOPED_TRACE(chip + " " + dtype + ": " + text["layers"].dump());
        const tr::NetDescription net = tr::parse_net(text, "cnn.json");
        const uint32_t local_memory = uint32_t(s.uniform(3, 12)) * 1024;
        const tr::BuildResult grouped = tr::build_model(net, options_for(chip, true, local_memory, 3), "cnn.json");
        const tr::BuildResult global = tr::build_model(net, options_for(chip, false, 0, 3), "cnn.json");
        const std::string y = text["outputs"][0].get<std::string>();
        const tr::npz::Array got = tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at(y);
        const tr::npz::Array want = tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at(y);
        EXPECT_EQ(got.data, want.data);
        expect_near_reference(floats_of(got), floats_of(grouped.reference_outputs.at(y)), dtype);
        ++rounds;
        rounds_with_groups += count_grouped(grouped.description) > 0;
        slices += count_grouped(grouped.description, "builtin.slice");
        for (const tr::ModelGroup &g : grouped.description.groups) rounds_sliced += g.h_slices > 1;
      }
  // Most chains group a window layer, and some of those groups slice H: a
  // property of many rounds, so not asserted on the sanitizer build's few
  // (ConvReluPoolInLittleLocalMemoryIsSlicedAlongH slices H every time).
  if (test::rounds(4) < 4) return;
  EXPECT_GE(rounds_with_groups * 2, rounds);
  EXPECT_GT(rounds_sliced, 0);
  EXPECT_GT(slices, 0);
}

// x [1, 8, 48, 32] -> conv 3x3 pad 1 (16 channels, bias) -> relu -> maxpool
// 2x2 stride 2 -> y [1, 16, 24, 16].
Json conv_relu_pool(test::Seeded &s, const Json &conv_params, int weight_ic) {
  return {{"name", "crp"},
          {"inputs", {{{"name", "x"}, {"shape", {1, 8, 48, 32}}, {"dtype", "fp32"}}}},
          {"weights", {weight("w", {16, weight_ic, 3, 3}, "fp32", s), weight("b", {16}, "fp32", s)}},
          {"layers",
           {test::net_layer("conv", "builtin.conv2d", conv_params, {"x", "w", "b"}, {"c"}),
            test::net_layer("relu", "builtin.relu", Json::object(), {"c"}, {"r"}),
            test::net_layer("pool", "builtin.maxpool2d", {{"kernel", {2, 2}}, {"stride", {2, 2}}}, {"r"}, {"y"})}},
          {"outputs", {"y"}}};
}

TEST(WindowGroups, ConvReluPoolIsOneGroupEstimatedFasterThanItsLayers) {
  REQUIRE_GROUP_FIXTURES();
  test::Seeded s;
  const tr::NetDescription net = tr::parse_net(conv_relu_pool(s, {{"pads", {1, 1, 1, 1}}}, 8), "crp.json");
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    // All of local memory: the planner slices only where overlap pays.
    const tr::BuildResult grouped = tr::build_model(net, options_for(chip, true, 0, 4), "crp.json");
    const tr::ModelDescription &d = grouped.description;
    ASSERT_EQ(d.groups.size(), 1u) << d.layer_groups.dump();
    EXPECT_EQ(d.groups[0].first, 0);
    EXPECT_EQ(d.groups[0].last, 2);
    EXPECT_LT(d.layer_groups.at("planned_us").get<double>(), d.layer_groups.at("global_us").get<double>());
    const tr::BuildResult global = tr::build_model(net, options_for(chip, false, 0, 4), "crp.json");
    const tr::RunResult run = tr::run_model(grouped.model, grouped.reference_inputs, "grouped");
    const tr::RunResult unrun = tr::run_model(global.model, grouped.reference_inputs, "global");
    EXPECT_EQ(run.outputs.at("y").data, unrun.outputs.at("y").data);
    expect_near_reference(floats_of(run.outputs.at("y")), floats_of(grouped.reference_outputs.at("y")), "fp32");
    // The run: the group replayed on its first layer, faster than the three layers.
    double grouped_us = 0, global_us = 0;
    for (const tr::LayerStats &l : run.layers) grouped_us += l.total_us;
    for (const tr::LayerStats &l : unrun.layers) global_us += l.total_us;
    EXPECT_LT(grouped_us, global_us);
  }
}

TEST(WindowGroups, ConvReluPoolInLittleLocalMemoryIsSlicedAlongH) {
  REQUIRE_GROUP_FIXTURES();
  test::Seeded s;
  const tr::NetDescription net = tr::parse_net(conv_relu_pool(s, {{"pads", {1, 1, 1, 1}}}, 8), "crp.json");
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    // 8 KiB a lane: less than the input's 6 KiB plus the conv's 6 KiB, so the group slices H with halos.
    const tr::BuildResult grouped = tr::build_model(net, options_for(chip, true, 8 * 1024, 4), "crp.json");
    ASSERT_EQ(grouped.description.groups.size(), 1u) << grouped.description.layer_groups.dump();
    EXPECT_GT(grouped.description.groups[0].h_slices, 1);
    const tr::BuildResult global = tr::build_model(net, options_for(chip, false, 0, 4), "crp.json");
    const tr::npz::Array got = tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y");
    EXPECT_EQ(got.data, tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data);
    expect_near_reference(floats_of(got), floats_of(grouped.reference_outputs.at("y")), "fp32");
  }
}

TEST(WindowGroups, AConvOfTwoGroupsStaysGlobalSayingWhy) {
  REQUIRE_GROUP_FIXTURES();
  test::Seeded s;
  const Json params = {{"pads", {1, 1, 1, 1}}, {"group", 2}};
  const tr::NetDescription net = tr::parse_net(conv_relu_pool(s, params, 4), "g2.json");
  const tr::BuildResult built = tr::build_model(net, options_for("bm1684x", true, 0, 4), "g2.json");
  const Json boundaries = built.description.layer_groups.at("boundaries");
  ASSERT_FALSE(boundaries.empty());
  EXPECT_EQ(boundaries[0].at("after"), 0);
  EXPECT_EQ(boundaries[0].at("reason").get<std::string>(),
            "builtin.conv2d with group 2 of 8 input channels has a local version for group 1 and depthwise only (a "
            "group's channels would start off NPU 0)");
}

TEST(WindowGroups, ASliceAlongChannelsStaysGlobalSayingWhy) {
  REQUIRE_GROUP_FIXTURES();
  const Json text = {
      {"name", "sc"},
      {"inputs", {{{"name", "x"}, {"shape", {1, 8, 48, 32}}, {"dtype", "fp32"}}}},
      {"layers",
       {test::net_layer("relu", "builtin.relu", Json::object(), {"x"}, {"r"}),
        test::net_layer("slice", "builtin.slice",
                        {{"starts", {0, 2, 0, 0}}, {"ends", {1, 8, 48, 32}}, {"steps", {1, 1, 2, 1}}}, {"r"}, {"y"})}},
      {"outputs", {"y"}}};
  const tr::BuildResult built =
      tr::build_model(tr::parse_net(text, "sc.json"), options_for("bm1684x", true, 0, 4), "sc.json");
  const Json boundaries = built.description.layer_groups.at("boundaries");
  ASSERT_EQ(boundaries.size(), 1u);
  EXPECT_EQ(boundaries[0].at("reason").get<std::string>(),
            "builtin.slice along dim 1 of [1,8,48,32] has no local version: a group keeps N and C whole (it slices "
            "along the last two of the 4-d view)");
}

// y = relu(a [M, K] x w [K, N] + b): the matmul's rows are the group's N.
TEST(WindowGroups, A2dMatmulWithAWeightGroupsAlongItsRows) {
  REQUIRE_GROUP_FIXTURES();
  test::Seeded s;
  for (const bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "b transposed" : "b as [K, N]");
    const std::vector<int> w_shape = transposed ? std::vector<int>{40, 96} : std::vector<int>{96, 40};
    const Json text = {
        {"name", "mm"},
        {"inputs", {{{"name", "a"}, {"shape", {300, 96}}, {"dtype", "fp32"}}}},
        {"weights", {weight("w", w_shape, "fp32", s), weight("b", {40}, "fp32", s)}},
        {"layers",
         {test::net_layer("mm", "builtin.matmul", {{"transpose_b", int(transposed)}}, {"a", "w", "b"}, {"m"}),
          test::net_layer("relu", "builtin.relu", Json::object(), {"m"}, {"y"})}},
        {"outputs", {"y"}}};
    const tr::NetDescription net = tr::parse_net(text, "mm.json");
    for (const std::string chip : {"bm1684x", "bm1688"}) {
      SCOPED_TRACE(chip);
      const tr::BuildResult grouped = tr::build_model(net, options_for(chip, true, 0, 4), "mm.json");
      ASSERT_EQ(grouped.description.groups.size(), 1u) << grouped.description.layer_groups.dump();
      EXPECT_GT(grouped.description.groups[0].n_slices, 1);
      const tr::BuildResult global = tr::build_model(net, options_for(chip, false, 0, 4), "mm.json");
      const tr::npz::Array got = tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y");
      EXPECT_EQ(got.data, tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data);
      expect_near_reference(floats_of(got), floats_of(grouped.reference_outputs.at("y")), "fp32");
    }
  }
}

}  // namespace
