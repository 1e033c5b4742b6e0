// linear: y[m, o] = relu?(sum_k x[m, k] W[o, k] + b[o]), x [..., K], W [O, K],
// optional b [O]. The op tester compares with inference_linear (fp32 must be
// bit-exact: the kernel and the plugin follow the same documented sum
// order); the tests here also check the results against a plain double
// reference with an error bound derived from K, independent of that order.
#include <cmath>
#include <cstdint>
#include <vector>

#include "op_test_support.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/library_paths.h"

namespace {

using op_test::expect_pass;
using tpu_runtime::Dtype;
using tpu_runtime::Shape;

const char *kBiasRelu = R"({"has_bias": 1, "do_relu": 1})";
const char *kBias = R"({"has_bias": 1, "do_relu": 0})";
const char *kPlain = R"({"has_bias": 0, "do_relu": 0})";

class Linear : public op_test::OpTest {
 protected:
  // x [M, K] (or any rank with the last dim K), W [O, K], b [O] when has_bias.
  tpu_runtime::OpTester linear(const Shape &x, int O, const char *params, bool has_bias) const {
    tpu_runtime::OpTester t = tester("linear");
    t.input_shape(x).input_shape({O, x.back()});
    if (has_bias) t.input_shape({O});
    t.params(params);
    return t;
  }

  // Every output against sum_k x w + b in double: the fp32 sum of K
  // products differs from it by at most gamma_{K+1} sum |x w| + |b|
  // (gamma_n = n u / (1 - n u), u = 2^-24); fp16/bf16 outputs add one
  // rounding (half an ulp: 2^-11 resp. 2^-8 relative).
  void expect_near_double(const tpu_runtime::OpReport &report, bool has_bias, bool relu) const {
    const std::vector<float> &x = report.inputs[0], &w = report.inputs[1];
    const std::vector<float> &y = report.cases.at(0).values.at(0);
    const int K = report.input_shapes[0].back();
    const int O = report.input_shapes[1][0];
    const std::size_t M = x.size() / std::size_t(K);
    const double u = std::ldexp(1.0, -24), gamma = (K + 1) * u / (1 - (K + 1) * u);
    const double out_u = dtype() == Dtype::fp16 ? std::ldexp(1.0, -11) : dtype() == Dtype::bf16 ? std::ldexp(1.0, -8) : 0;
    for (std::size_t m = 0; m < M; ++m)
      for (int o = 0; o < O; ++o) {
        double sum = 0, magnitude = 0;
        for (int k = 0; k < K; ++k) {
          const double p = double(x[m * K + std::size_t(k)]) * double(w[std::size_t(o) * K + std::size_t(k)]);
          sum += p;
          magnitude += std::fabs(p);
        }
        if (has_bias) {
          sum += report.inputs[2][std::size_t(o)];
          magnitude += std::fabs(report.inputs[2][std::size_t(o)]);
        }
        const double want = relu && !(sum > 0) ? 0 : sum;
        const double bound = gamma * magnitude * (1 + out_u) + out_u * std::fabs(want) + 1e-30;
        const float got = y[m * std::size_t(O) + std::size_t(o)];
        ASSERT_LE(std::fabs(double(got) - want), bound) << "y[" << m << "][" << o << "] = " << got << ", want " << want;
        if (relu) {
          ASSERT_FALSE(std::signbit(got)) << "y[" << m << "][" << o << "] = " << got;
        }
      }
  }
};

// M crosses NPU boundaries (111 rows), K and O are not multiples of any EU
// or NPU count; one tile in K.
TEST_P(Linear, BiasReluOddShapes) {
  const auto report = expect_pass(linear({3, 37, 300}, 70, kBiasRelu, true).keep_outputs().seed(41));
  EXPECT_EQ(report.output_shapes, std::vector<Shape>({{3, 37, 70}}));
  expect_near_double(report, true, true);
}

// K = 3000 is cut into K chunks accumulated with result_add; no bias.
TEST_P(Linear, LongInnerDimensionAccumulates) {
  const auto report = expect_pass(linear({5, 3000}, 100, kPlain, false).keep_outputs().seed(42));
  expect_near_double(report, false, false);
}

// More rows than one M tile and more outputs than one O tile.
TEST_P(Linear, ManyRowsAndOutputs) {
  const auto report = expect_pass(linear({300, 64}, 700, kBias, true).keep_outputs().seed(43));
  expect_near_double(report, true, false);
}

// A single input vector (rank 1): y has shape [O].
TEST_P(Linear, VectorInput) {
  const auto report = expect_pass(linear({129}, 3, kBias, true).seed(44));
  EXPECT_EQ(report.output_shapes, std::vector<Shape>({{3}}));
}

TEST_P(Linear, RejectsWeightOfTheWrongWidth) {
  const std::string message = op_test::expect_error(
      tester("linear").input_shape({4, 16}).input_shape({8, 15}).params(kPlain));
  EXPECT_NE(message.find("linear: W is [8, 15] but x's last dim (in_features) is 16"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Chips, Linear, op_test::chip_dtype_values(), op_test::chip_dtype_name);

// The plugin on a case worked by hand: x [2, 3], W [2, 3], b [2].
TEST(LinearPlugin, ShapeAndValues) {
  const auto paths = tpu_runtime::default_library_paths(op_test::chips_under_test()[0]);
  const auto plugin = tpu_runtime::Plugin::open(paths.plugin);
  const auto params = tpu_runtime::PackedParams::from_json_text(kBiasRelu);
  const std::vector<Shape> shapes = {{2, 3}, {2, 3}, {2}};
  EXPECT_EQ(plugin.shape_inference("linear", params, shapes, 1), std::vector<Shape>({{2, 2}}));
  const float x[6] = {1, 2, 3, -1, 0.5f, 2};
  const float w[6] = {0.5f, -1, 2, 4, 0, -0.25f};
  const float b[2] = {0.25f, -1};
  float y[4] = {};
  plugin.inference("linear", params, shapes, {x, w, b}, {y});
  // row 0: 0.5 - 2 + 6 + 0.25 = 4.75; 4 + 0 - 0.75 - 1 = 2.25
  // row 1: -0.5 - 0.5 + 4 + 0.25 = 3.25; -4 + 0 - 0.5 - 1 = -5.5 -> relu 0
  EXPECT_EQ(y[0], 4.75f);
  EXPECT_EQ(y[1], 2.25f);
  EXPECT_EQ(y[2], 3.25f);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_FALSE(std::signbit(y[3]));
}

}  // namespace
