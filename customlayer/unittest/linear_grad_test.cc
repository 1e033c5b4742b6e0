// linear_grad: dx = dz W, dW = dz^T x, db = sum_m dz with dz = dy masked
// where y = 0 (do_relu). The op tester compares with inference_linear_grad
// (fp32 bit-exact: kernel and plugin follow the matrix unit's documented sum
// order); here every partial is also checked against plain double sums with
// an error bound derived from the reduction length, independent of that
// order, on shapes that cross the kernel's M, O and K tiles.
#include <cmath>
#include <vector>

#include "op_test_support.h"

namespace {

using op_test::expect_pass;
using tpu_runtime::Dtype;
using tpu_runtime::Shape;

class LinearGrad : public op_test::OpTest {
 protected:
  // |got - sum| <= gamma_{n+1} sum|terms| (fp32 accumulation of n products)
  // plus half an ulp of the dtype of the result.
  void expect_sum(float got, double sum, double magnitude, int n, const char *what, std::size_t at) const {
    const double u = std::ldexp(1.0, -24), gamma = (n + 1) * u / (1 - (n + 1) * u);
    const double out_u = dtype() == Dtype::fp16 ? std::ldexp(1.0, -11) : dtype() == Dtype::bf16 ? std::ldexp(1.0, -8) : 0;
    const double bound = gamma * magnitude * (1 + out_u) + out_u * std::fabs(sum) + 1e-30;
    ASSERT_LE(std::fabs(double(got) - sum), bound) << what << "[" << at << "] = " << got << ", want " << sum;
  }

  void check(const tpu_runtime::OpReport &r, bool has_bias, bool relu) const {
    const std::vector<float> &dy = r.inputs[0], &x = r.inputs[1], &w = r.inputs[2], &y = r.inputs[has_bias ? 4 : 3];
    const auto &out = r.cases.at(0).values;
    const int K = r.input_shapes[1].back(), O = r.input_shapes[2][0];
    const std::size_t M = x.size() / std::size_t(K);
    const auto dz = [&](std::size_t m, int o) {
      const std::size_t at = m * std::size_t(O) + std::size_t(o);
      return relu && !(y[at] > 0) ? 0.0 : double(dy[at]);
    };
    for (std::size_t m = 0; m < M; ++m)
      for (int k = 0; k < K; ++k) {
        double sum = 0, magnitude = 0;
        for (int o = 0; o < O; ++o) {
          sum += dz(m, o) * w[std::size_t(o) * K + std::size_t(k)];
          magnitude += std::fabs(dz(m, o) * w[std::size_t(o) * K + std::size_t(k)]);
        }
        expect_sum(out[0][m * K + std::size_t(k)], sum, magnitude, O, "dx", m * K + std::size_t(k));
      }
    for (int o = 0; o < O; ++o) {
      double bias_sum = 0, bias_magnitude = 0;
      for (int k = 0; k < K; ++k) {
        double sum = 0, magnitude = 0;
        for (std::size_t m = 0; m < M; ++m) {
          sum += dz(m, o) * x[m * K + std::size_t(k)];
          magnitude += std::fabs(dz(m, o) * x[m * K + std::size_t(k)]);
        }
        expect_sum(out[1][std::size_t(o) * K + std::size_t(k)], sum, magnitude, int(M), "dW", std::size_t(o) * K + std::size_t(k));
      }
      for (std::size_t m = 0; m < M; ++m) {
        bias_sum += dz(m, o);
        bias_magnitude += std::fabs(dz(m, o));
      }
      if (has_bias) expect_sum(out[2][std::size_t(o)], bias_sum, bias_magnitude, int(M), "db", std::size_t(o));
    }
  }
};

// M = 70, O = 70, K = 150: more than one tile of each (NPU_NUM rows, 128 columns).
TEST_P(LinearGrad, BiasReluCrossesEveryTile) {
  tpu_runtime::OpTester t = tester("linear_grad");
  t.input_shape({2, 35, 70}).input_shape({2, 35, 150}).input_shape({70, 150}).input_shape({70}).input_shape({2, 35, 70});
  const auto r = expect_pass(t.params(R"({"has_bias": 1, "do_relu": 1})").num_outputs(3).keep_outputs().seed(21));
  EXPECT_EQ(r.output_shapes, (std::vector<Shape>{{2, 35, 150}, {70, 150}, {70}}));
  check(r, true, true);
}

TEST_P(LinearGrad, PlainTwoOutputs) {
  tpu_runtime::OpTester t = tester("linear_grad");
  t.input_shape({45, 33}).input_shape({45, 129}).input_shape({33, 129}).input_shape({45, 33});
  const auto r = expect_pass(t.params(R"({"has_bias": 0, "do_relu": 0})").num_outputs(2).keep_outputs().seed(22));
  EXPECT_EQ(r.output_shapes, (std::vector<Shape>{{45, 129}, {33, 129}}));
  check(r, false, false);
}

TEST_P(LinearGrad, RejectsAWeightOfTheWrongWidth) {
  tpu_runtime::OpTester t = tester("linear_grad");
  t.input_shape({4, 8}).input_shape({4, 16}).input_shape({8, 15}).input_shape({4, 8});
  const std::string message = op_test::expect_error(t.params(R"({"has_bias": 0, "do_relu": 0})").num_outputs(2));
  EXPECT_NE(message.find("linear_grad: W must be [out_features, x's last dim]"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Chips, LinearGrad, op_test::chip_dtype_values(), op_test::chip_dtype_name);

}  // namespace
