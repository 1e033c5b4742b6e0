// topk_test.cc: the sample AP op top-k (customlayer/ap_src), run through
// the runtime (run_host_op on libcustomapop.so) and through the plugin's
// compile-time side (infer_ap_output_shapes, ap_reference), against a
// reference written here: a stable sort of (value, index) pairs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "runtime/host/host_test_support.h"
#include "support/test_support.h"

namespace {

using namespace host_test;
using namespace tpu_runtime;

std::shared_ptr<HostOpLibrary> sample() {
  static std::shared_ptr<HostOpLibrary> lib = HostOpLibrary::open(SAMPLE_AP_LIBRARY, HostOpKind::vendor_ap);
  return lib;
}

std::vector<std::uint8_t> topk_params(int axis, int k) {
  return pack_ap_params(nlohmann::json::array({{{"axis", axis}}, {{"K", k}}}));
}

struct Expected {
  std::vector<float> values;
  std::vector<std::int32_t> indices;
};

// Descending, NaN first, equal values (and NaNs) in index order: a stable
// sort by a key that puts NaN above everything.
Expected reference(const std::vector<float> &x, const Shape &shape, int axis, int k) {
  int outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < int(shape.size()); ++d) inner *= shape[d];
  const int n = shape[axis];
  Expected e;
  e.values.resize(std::size_t(outer) * k * inner);
  e.indices.resize(e.values.size());
  for (int o = 0; o < outer; ++o)
    for (int i = 0; i < inner; ++i) {
      std::vector<std::pair<float, int>> column;
      for (int j = 0; j < n; ++j) column.push_back({x[(std::size_t(o) * n + j) * inner + i], j});
      std::stable_sort(column.begin(), column.end(), [](const auto &a, const auto &b) {
        const bool an = std::isnan(a.first), bn = std::isnan(b.first);
        if (an != bn) return an;
        return !an && a.first > b.first;
      });
      for (int j = 0; j < k; ++j) {
        const std::size_t at = (std::size_t(o) * k + j) * inner + i;
        e.values[at] = column[std::size_t(j)].first;
        e.indices[at] = column[std::size_t(j)].second;
      }
    }
  return e;
}

Shape with_dim(Shape shape, int axis, int value) {
  shape[std::size_t(axis)] = value;
  return shape;
}

void expect_same_floats(const std::vector<float> &got, const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
    else
      EXPECT_EQ(got[i], want[i]) << "element " << i;
  }
}

HostOpRun run_topk(const std::vector<float> &x, const Shape &shape, int axis, int k, int outputs = 2) {
  const int index = axis < 0 ? int(shape.size()) + axis : axis;
  std::vector<HostTensor> specs = {spec(Dtype::fp32, with_dim(shape, index, k))};
  if (outputs == 2) specs.push_back(spec(Dtype::int32, with_dim(shape, index, k)));
  return run_host_op(*sample(), "ap.topk", topk_params(axis, k), {floats(shape, x)}, specs, "layer topk_test");
}

TEST(TopK, MatchesTheReferenceOverShapesAxesAndK) {
  test::Seeded seeded;
  struct Case {
    Shape shape;
    int axis, k;
  };
  const std::vector<Case> cases = {{{1, 1000}, 1, 10},  {{1, 1000}, -1, 200}, {{4, 7, 5}, 1, 3}, {{4, 7, 5}, 0, 4},
                                   {{4, 7, 5}, 2, 5},   {{3, 9}, 0, 1},       {{2, 3, 4, 6}, 3, 6}, {{16}, 0, 16}};
  for (const Case &c : cases) {
    SCOPED_TRACE(::testing::Message() << "axis " << c.axis << " k " << c.k);
    std::size_t count = 1;
    for (int d : c.shape) count *= std::size_t(d);
    std::vector<float> x(count);
    // Few distinct values, so ties are common.
    for (float &v : x) v = float(seeded.uniform(-20, 20)) / 4;
    const int axis = c.axis < 0 ? int(c.shape.size()) + c.axis : c.axis;
    const Expected want = reference(x, c.shape, axis, c.k);
    const HostOpRun run = run_topk(x, c.shape, c.axis, c.k);
    ASSERT_EQ(run.outputs.size(), 2u);
    EXPECT_EQ(run.outputs[0].shape, with_dim(c.shape, axis, c.k));
    EXPECT_EQ(run.outputs[1].dtype, Dtype::int32);
    expect_same_floats(values_of<float>(run.outputs[0]), want.values);
    EXPECT_EQ(values_of<std::int32_t>(run.outputs[1]), want.indices);
    EXPECT_GT(run.host_seconds, 0);
  }
}

TEST(TopK, OneOutputGivesTheValues) {
  const std::vector<float> x = {3, 1, 4, 1, 5, 9, 2, 6};
  const HostOpRun run = run_topk(x, {8}, 0, 3, 1);
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(values_of<float>(run.outputs[0]), (std::vector<float>{9, 6, 5}));
}

TEST(TopK, TiesGoToTheLowerIndex) {
  const std::vector<float> x = {2, 7, 7, 1, 7, 2};
  const HostOpRun run = run_topk(x, {6}, 0, 4);
  EXPECT_EQ(values_of<float>(run.outputs[0]), (std::vector<float>{7, 7, 7, 2}));
  EXPECT_EQ(values_of<std::int32_t>(run.outputs[1]), (std::vector<std::int32_t>{1, 2, 4, 0}));
}

TEST(TopK, NanRanksAboveEveryNumber) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {1, nan, inf, -inf, nan, 5};
  const HostOpRun run = run_topk(x, {6}, 0, 4);
  const std::vector<float> values = values_of<float>(run.outputs[0]);
  EXPECT_TRUE(std::isnan(values[0]) && std::isnan(values[1]));
  EXPECT_EQ(values[2], inf);
  EXPECT_EQ(values[3], 5);
  EXPECT_EQ(values_of<std::int32_t>(run.outputs[1]), (std::vector<std::int32_t>{1, 4, 2, 5}));
}

TEST(TopK, KLargerThanNIsRefusedNamingBoth) {
  const std::vector<float> x(20, 1.0f);
  // Forward: the run-time library.
  const std::string run = error_of([&] {
    run_host_op(*sample(), "ap.topk", topk_params(1, 12), {floats({2, 10}, x)}, {spec(Dtype::fp32, {2, 12})},
                "layer big_k");
  });
  EXPECT_CONTAINS(run, "layer big_k: host op 'ap.topk'");
  EXPECT_CONTAINS(run, "libcustomapop.so");
  EXPECT_CONTAINS(run, "std::invalid_argument: topk: k = 12 is larger than n = 10");
  // Shape inference: the plugin.
  const std::string infer =
      error_of([&] { infer_ap_output_shapes(SAMPLE_PLUGIN_LIBRARY, "ap.topk", topk_params(1, 12), {{2, 10}}); });
  EXPECT_CONTAINS(infer, "AP op 'ap.topk'");
  EXPECT_CONTAINS(infer, "shepe_infer failed");
  EXPECT_CONTAINS(infer, "k = 12 is larger than n = 10");
}

TEST(TopK, NegativeAxisOtherThanMinusOneAndAxisPastTheRankAreRefused) {
  const std::vector<float> x(6, 1.0f);
  for (int axis : {-2, 2}) {
    const std::string message = error_of([&] {
      run_host_op(*sample(), "topk", topk_params(axis, 1), {floats({2, 3}, x)}, {spec(Dtype::fp32, {2, 1})},
                  "layer axis");
    });
    EXPECT_CONTAINS(message, "topk: axis " + std::to_string(axis) + " does not fit input 0 of shape [2, 3]");
    EXPECT_CONTAINS(error_of([&] {
                      infer_ap_output_shapes(SAMPLE_PLUGIN_LIBRARY, "ap.topk", topk_params(axis, 1), {{2, 3}});
                    }),
                    "does not fit input 0");
  }
}

TEST(TopK, NegativeKIsRefused) {
  EXPECT_CONTAINS(error_of([&] {
                    infer_ap_output_shapes(SAMPLE_PLUGIN_LIBRARY, "ap.topk", topk_params(0, -1), {{4}});
                  }),
                  "k = -1 is negative");
}

TEST(TopK, ShapeInferenceThroughThePlugin) {
  const std::vector<Shape> shapes =
      infer_ap_output_shapes(SAMPLE_PLUGIN_LIBRARY, "ap.topk", topk_params(1, 10), {{1, 1000}});
  EXPECT_EQ(shapes, (std::vector<Shape>{{1, 10}, {1, 10}}));
  EXPECT_EQ(infer_ap_output_shapes(SAMPLE_PLUGIN_LIBRARY, "ap.topk", topk_params(-1, 2), {{3, 4, 5}}),
            (std::vector<Shape>{{3, 4, 2}, {3, 4, 2}}));
}

TEST(TopK, ReferenceThroughThePluginEqualsTheRunTimeLibrary) {
  test::Seeded seeded;
  std::vector<float> x(3 * 50);
  for (float &v : x) v = float(seeded.uniform(0, 1000)) / 1000;
  const std::vector<HostTensor> ref =
      ap_reference(SAMPLE_PLUGIN_LIBRARY, "ap.topk", topk_params(1, 7), {floats({3, 50}, x)});
  ASSERT_EQ(ref.size(), 2u);
  EXPECT_EQ(ref[0].dtype, Dtype::fp32);
  EXPECT_EQ(ref[1].dtype, Dtype::int32);  // from dtype_infer
  const HostOpRun run = run_topk(x, {3, 50}, 1, 7);
  EXPECT_EQ(ref[0].bytes, run.outputs[0].bytes);
  EXPECT_EQ(ref[1].bytes, run.outputs[1].bytes);
  const Expected want = reference(x, {3, 50}, 1, 7);
  EXPECT_EQ(values_of<float>(ref[0]), want.values);
}

TEST(TopK, AnOpTheTableDoesNotKnowIsRefusedByName) {
  EXPECT_EQ(sample()->ap_op_type("ap.topk"), 10002);
  EXPECT_EQ(sample()->ap_op_type("TOPK"), 10002);
  const std::string message = error_of([&] { sample()->ap_op_type("ap.sort"); });
  EXPECT_CONTAINS(message, "no AP op named 'SORT' in the library's table");
  EXPECT_CONTAINS(error_of([&] { infer_ap_output_shapes(SAMPLE_PLUGIN_LIBRARY, "ap.sort", topk_params(0, 1), {{4}}); }),
                  "createLayerInstance(\"SORT\") knows no such op");
}

TEST(TopK, InputsWhoseBytesDoNotMatchTheirShapeAreRefused) {
  HostTensor x = floats({2, 3}, std::vector<float>(5, 1.0f));
  const std::string message = error_of([&] {
    run_host_op(*sample(), "ap.topk", topk_params(1, 1), {x}, {spec(Dtype::fp32, {2, 1})}, "layer short");
  });
  EXPECT_CONTAINS(message, "layer short: input 0 (fp32 [2, 3]) holds 20 bytes, its shape and dtype need 24");
}

}  // namespace
