// leakyrelu (y = x > 0 ? x : alpha x) and its gradient op leakyrelu_grad
// (dx = x > 0 ? dy : alpha dy). The op tester compares each with its plugin
// reference (fp32 bit-exact); the tests here also check the outputs against
// the formula in double with the one rounding the dtype allows, and the
// declaration the registry makes (register_custom_grad).
#include <cmath>
#include <vector>

#include "op_test_support.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/library_paths.h"

namespace {

using op_test::expect_pass;
using tpu_runtime::Dtype;
using tpu_runtime::Shape;

class Leakyrelu : public op_test::OpTest {
 protected:
  // |got - want| within half an ulp of the dtype (relative 2^-11, 2^-8), 0 for fp32.
  void expect_close(float got, double want, std::size_t i) const {
    const double u = dtype() == Dtype::fp16 ? std::ldexp(1.0, -11) : dtype() == Dtype::bf16 ? std::ldexp(1.0, -8) : 0;
    const double fp32_rounding = std::ldexp(std::fabs(want), -24);
    ASSERT_LE(std::fabs(double(got) - want), u * std::fabs(want) + fp32_rounding) << "element " << i;
  }
};

// 3 x 1001: rows over every NPU, then a tail of fewer than NPU_NUM elements.
TEST_P(Leakyrelu, ForwardMatchesTheFormula) {
  const auto report = expect_pass(tester("leakyrelu").input_shape({3, 1001}).params(R"({"alpha": 0.1})").keep_outputs().seed(5));
  const std::vector<float> &x = report.inputs[0], &y = report.cases.at(0).values.at(0);
  for (std::size_t i = 0; i < x.size(); ++i) expect_close(y[i], x[i] > 0 ? double(x[i]) : 0.1f * double(x[i]), i);
}

TEST_P(Leakyrelu, GradientMatchesTheFormula) {
  const auto report = expect_pass(tester("leakyrelu_grad")
                                      .input_shape({7, 333})
                                      .input_shape({7, 333})
                                      .params(R"({"alpha": 0.25})")
                                      .keep_outputs()
                                      .seed(6));
  const std::vector<float> &dy = report.inputs[0], &x = report.inputs[1], &dx = report.cases.at(0).values.at(0);
  for (std::size_t i = 0; i < x.size(); ++i) expect_close(dx[i], x[i] > 0 ? double(dy[i]) : 0.25 * double(dy[i]), i);
}

// x = 0 takes the alpha slope, as PyTorch's leaky_relu backward does.
TEST_P(Leakyrelu, GradientAtZeroIsAlpha) {
  const auto report = expect_pass(tester("leakyrelu_grad")
                                      .input_shape({3})
                                      .input_shape({3})
                                      .params(R"({"alpha": 0.5})")
                                      .input_values({{2, 2, 2}, {0, -0.0f, 1}})
                                      .keep_outputs());
  EXPECT_EQ(report.cases.at(0).values.at(0), (std::vector<float>{1, 1, 2}));
}

INSTANTIATE_TEST_SUITE_P(Chips, Leakyrelu, op_test::chip_dtype_values(), op_test::chip_dtype_name);

TEST(LeakyreluDeclaration, TheRegistryDeclaresBothGradients) {
  const auto paths = tpu_runtime::default_library_paths(op_test::chips_under_test()[0]);
  const auto backend = tpu_runtime::Backend::open(paths.backend);
  const auto leaky = backend.gradient_of("leakyrelu");
  ASSERT_TRUE(leaky.has_value());
  EXPECT_EQ(leaky->grad_op, "leakyrelu_grad");
  EXPECT_FALSE(leaky->separate);
  EXPECT_TRUE(leaky->receives_inputs);
  EXPECT_FALSE(leaky->receives_outputs);  // NO_FORWARD_OUTPUTS
  const auto linear = backend.gradient_of("linear");
  ASSERT_TRUE(linear.has_value());
  EXPECT_EQ(linear->grad_op, "linear_grad");
  EXPECT_TRUE(linear->receives_inputs && linear->receives_outputs);
  EXPECT_FALSE(backend.gradient_of("absadd").has_value());
}

}  // namespace
