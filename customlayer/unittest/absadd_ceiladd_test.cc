// absadd (out = |x| + b) and ceiladd (out = ceil(x) + b): the same tiled,
// double-buffered global kernel and local kernel around a different
// element-wise step, so one suite covers both.
#include <cmath>

#include "op_test_support.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/library_paths.h"

namespace {

using op_test::expect_pass;
using tpu_runtime::Shape;

struct ElementwiseOp {
  const char *name;
  float (*reference)(float x, float b);
};

const ElementwiseOp kOps[] = {
    {"absadd", [](float x, float b) { return std::fabs(x) + b; }},
    {"ceiladd", [](float x, float b) { return std::ceil(x) + b; }},
};

// GoogleTest prints parameters on failure: the op's name, not its bytes.
void PrintTo(const ElementwiseOp &op, std::ostream *os) { *os << op.name; }

using Param = std::tuple<ElementwiseOp, std::string, tpu_runtime::Dtype>;

class ElementwiseOpTest : public ::testing::TestWithParam<Param> {
 protected:
  const char *op() const { return std::get<0>(GetParam()).name; }
  tpu_runtime::OpTester tester() const {
    tpu_runtime::OpTester t;
    t.op(op()).chip(std::get<1>(GetParam())).dtype(std::get<2>(GetParam()));
    if (std::get<2>(GetParam()) == tpu_runtime::Dtype::fp32) t.exact();
    return t;
  }
};

TEST_P(ElementwiseOpTest, SmallShape) {
  const auto report = expect_pass(tester().input_shape({2, 3, 4, 5}).params(R"({"b": 1.2})").seed(11));
  EXPECT_GT(report.cases.size(), 2u) << op() << " supports local layers: local slicings expected\n"
                                     << report.summary();
  // metadata_<op> declares it element-wise: the op tester checks the claim.
  const auto *claim = report.find("element-wise claim");
  ASSERT_NE(claim, nullptr) << report.summary();
  EXPECT_TRUE(claim->passed) << claim->failure;
}

// Channels not a multiple of NPU_NUM, h*w not a multiple of the EU count.
TEST_P(ElementwiseOpTest, OddShape) {
  expect_pass(tester().input_shape({3, 67, 7, 13}).params(R"({"b": -0.75})").seed(12));
}

TEST_P(ElementwiseOpTest, OtherRanks) {
  expect_pass(tester().input_shape({1001}).params(R"({"b": 2.5})").seed(13));
  expect_pass(tester().input_shape({2, 3, 5, 7, 11}).params(R"({"b": 0.5})").seed(14));
}

// Several times the whole local memory of either chip.
TEST_P(ElementwiseOpTest, LargerThanLocalMemory) {
  const auto report = expect_pass(tester().input_shape({1, 16, 1024, 1100}).params(R"({"b": 3})").seed(15).global_only());
  const auto bytes = 16u * 1024 * 1100 * tpu_runtime::dtype_size(std::get<2>(GetParam()));
  EXPECT_GE(report.cases[0].gdma_bytes, 2 * bytes) << "every element read and written once at least";
}

std::vector<Param> params() {
  std::vector<Param> values;
  for (const ElementwiseOp &op : kOps)
    for (const std::string &chip : op_test::chips_under_test())
      for (tpu_runtime::Dtype dtype : op_test::float_dtypes()) values.emplace_back(op, chip, dtype);
  return values;
}

INSTANTIATE_TEST_SUITE_P(Ops, ElementwiseOpTest, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param> &info) {
                           return std::string(std::get<0>(info.param).name) + "_" + std::get<1>(info.param) + "_" +
                                  tpu_runtime::dtype_name(std::get<2>(info.param));
                         });

// The plugins' references themselves, against values computed here.
TEST(ElementwisePlugins, InferenceMatchesTheDefinition) {
  const auto paths = tpu_runtime::default_library_paths(op_test::chips_under_test()[0]);
  const auto plugin = tpu_runtime::Plugin::open(paths.plugin);
  const auto params = tpu_runtime::PackedParams::from_json_text(R"({"b": 1.5})");
  const float in[6] = {-2.0f, -0.25f, 0.0f, 0.5f, 3.0f, -7.5f};
  for (const ElementwiseOp &op : kOps) {
    float out[6] = {};
    plugin.inference(op.name, params, {Shape{1, 2, 3}}, {in}, {out});
    for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], op.reference(in[i], 1.5f)) << op.name << " " << i;
    EXPECT_TRUE(plugin.local_gen_support(op.name, params)) << op.name;
  }
}

// What the plugins declare (metadata_<op>): element-wise and stateless, no
// input updated in place, no input layout of their own.
TEST(ElementwisePlugins, DeclareElementWiseAndStateless) {
  const auto paths = tpu_runtime::default_library_paths(op_test::chips_under_test()[0]);
  const auto plugin = tpu_runtime::Plugin::open(paths.plugin);
  const auto params = tpu_runtime::PackedParams::from_json_text(R"({"b": 1.5})");
  for (const ElementwiseOp &op : kOps) {
    const tpu_runtime::OpMetadata m = plugin.metadata(op.name, params, 1);
    EXPECT_TRUE(m.declared) << op.name;
    EXPECT_TRUE(m.elementwise) << op.name;
    EXPECT_TRUE(m.stateless) << op.name;
    EXPECT_EQ(m.inplace_inputs, 0) << op.name;
    EXPECT_TRUE(m.input_layouts.empty()) << op.name;
  }
}

}  // namespace
