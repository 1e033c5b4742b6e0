// scaleinplace (x *= s): the sample op that updates its input in place.
// The op tester gives output 0 input 0's memory, as a model's plan does, and
// resets the input before each case; the element-wise claim and the local
// slicings are checked as for absadd.
#include <cstring>

#include "op_test_support.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/library_paths.h"

namespace {

using op_test::expect_pass;
using tpu_runtime::Shape;

class ScaleInPlace : public op_test::OpTest {};

TEST_P(ScaleInPlace, SmallShape) {
  const auto report = expect_pass(tester("scaleinplace").input_shape({2, 3, 4, 5}).params(R"({"s": -1.75})").seed(21));
  // Both global entries, the claim, then local slicings: every case saw the
  // original input, though each one overwrote it.
  EXPECT_GT(report.cases.size(), 3u) << report.summary();
  const auto *claim = report.find("element-wise claim");
  ASSERT_NE(claim, nullptr) << report.summary();
  EXPECT_TRUE(claim->passed) << claim->failure;
}

// Channels not a multiple of NPU_NUM, h*w not a multiple of the EU count.
TEST_P(ScaleInPlace, OddShape) {
  expect_pass(tester("scaleinplace").input_shape({3, 67, 7, 13}).params(R"({"s": 0.3})").seed(22));
}

TEST_P(ScaleInPlace, LargerThanLocalMemory) {
  expect_pass(tester("scaleinplace").input_shape({1, 16, 1024, 600}).params(R"({"s": 3})").seed(23).global_only());
}

INSTANTIATE_TEST_SUITE_P(Chips, ScaleInPlace, op_test::chip_dtype_values(), op_test::chip_dtype_name);

TEST(ScaleInPlacePlugin, InferenceMultipliesAndMetadataDeclaresInPlace) {
  const auto paths = tpu_runtime::default_library_paths(op_test::chips_under_test()[0]);
  const auto plugin = tpu_runtime::Plugin::open(paths.plugin);
  const auto params = tpu_runtime::PackedParams::from_json_text(R"({"s": -2.5})");
  const float in[5] = {-2.0f, -0.25f, 0.0f, 0.5f, 3.0f};
  const float expected[5] = {5.0f, 0.625f, -0.0f, -1.25f, -7.5f};
  float out[5] = {};
  plugin.inference("scaleinplace", params, {Shape{5}}, {in}, {out});
  EXPECT_EQ(std::memcmp(out, expected, sizeof out), 0);
  const tpu_runtime::OpMetadata m = plugin.metadata("scaleinplace", params, 1);
  EXPECT_TRUE(m.declared);
  EXPECT_EQ(m.inplace_inputs, 1);
  EXPECT_TRUE(m.elementwise);
  EXPECT_TRUE(m.stateless);
  EXPECT_TRUE(m.input_layouts.empty());
}

}  // namespace
