// gradient_check_test: the gradient checker (tpu_runtime/gradient_check.h)
// and the precision triage (tpu_runtime/triage.h), on the faulty-gradient
// fixture set (tests/runtime/check/fixtures, TPU_GRAD_FIXTURES_DIR), which
// holds the sample ops too:
//   - the sample gradients (leakyrelu_grad, linear_grad) pass on both chips
//     and every dtype, on shapes that cross their tile edges;
//   - each deliberately wrong gradient (a sign error, a missing term, a wrong
//     tile edge) fails the finite-difference comparison of the input it
//     breaks, named with an element where the two values differ as the
//     fault predicts (worked out by hand below);
//   - triage calls rounding what rounding explains and nothing else.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/temp_dir.h"
#include "support/test_support.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/gradient_check.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/triage.h"

#ifndef TPU_GRAD_FIXTURES_DIR
#define TPU_GRAD_FIXTURES_DIR ""
#endif

namespace {

namespace tr = tpu_runtime;

tr::LibraryPaths fixture_libraries(const std::string &chip) {
  const std::string dir = TPU_GRAD_FIXTURES_DIR;
  return {dir + "/libplugin_custom.so", dir + "/libbackend_custom.so", dir + "/" + tr::firmware_file_name(chip)};
}

#define REQUIRE_FIXTURES()                                                          \
  do {                                                                              \
    if (!std::filesystem::exists(TPU_GRAD_FIXTURES_DIR "/libplugin_custom.so"))     \
      GTEST_SKIP() << "no gradient fixtures at '" TPU_GRAD_FIXTURES_DIR "'";        \
  } while (0)

const char *kAlpha = R"({"alpha": 0.1})";
const char *kBiasRelu = R"({"has_bias": 1, "do_relu": 1})";

tr::GradientChecker checker(const std::string &op, const std::string &chip, tr::Dtype dtype) {
  tr::GradientChecker c;
  c.op(op).chip(chip).dtype(dtype).libraries(fixture_libraries(chip)).seed(11);
  return c;
}

// x [2, 35, 150] (M = 70), W [70, 150], b [70]: M and O cross the gradient's
// NPU_NUM-row tiles on bm1688 (32 NPUs) and bm1684x (64), K its 128 columns.
tr::GradientChecker linear_checker(const std::string &op, const std::string &chip, tr::Dtype dtype) {
  tr::GradientChecker c = checker(op, chip, dtype);
  c.input_shape({2, 35, 150}).input_shape({70, 150}).input_shape({70}).params(kBiasRelu).input_range(-1, 1);
  return c;
}

class SampleGradients : public ::testing::TestWithParam<std::tuple<std::string, tr::Dtype>> {};

TEST_P(SampleGradients, LeakyreluPasses) {
  REQUIRE_FIXTURES();
  const auto &[chip, dtype] = GetParam();
  // 3 x 1001 elements: whole rows on every NPU, then a partial tail.
  const tr::GradReport r = checker("leakyrelu", chip, dtype).input_shape({3, 1001}).params(kAlpha).run();
  EXPECT_TRUE(r.passed) << r.summary();
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(r.declaration.grad_op, "leakyrelu_grad");
  EXPECT_FALSE(r.declaration.receives_outputs);
  EXPECT_LE(r.inputs[0].worst_ratio, r.tolerance);
  EXPECT_EQ(r.tolerance, tr::gradient_tolerance_for(dtype));
  EXPECT_CONTAINS(r.summary(), fmt::format("tolerance tau = {}", r.tolerance));
  EXPECT_CONTAINS(r.summary(), "seed 11");
}

TEST_P(SampleGradients, LinearPasses) {
  REQUIRE_FIXTURES();
  const auto &[chip, dtype] = GetParam();
  const tr::GradReport r = linear_checker("linear", chip, dtype).run();
  EXPECT_TRUE(r.passed) << r.summary();
  ASSERT_EQ(r.inputs.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.inputs[std::size_t(i)].input, i);
  EXPECT_TRUE(r.declaration.receives_inputs && r.declaration.receives_outputs);
}

INSTANTIATE_TEST_SUITE_P(Chips, SampleGradients,
                         ::testing::Combine(::testing::Values("bm1684x", "bm1688"),
                                            ::testing::Values(tr::Dtype::fp32, tr::Dtype::fp16, tr::Dtype::bf16)),
                         [](const auto &info) {
                           return std::get<0>(info.param) + "_" + tr::dtype_name(std::get<1>(info.param));
                         });

// The slope for x <= 0 is -alpha: at the worst element x <= 0, the gradient
// op gives -alpha v while the finite differences give alpha v.
TEST(FaultyGradients, SignErrorIsCaught) {
  REQUIRE_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    const tr::GradReport r = checker("lr_sign", chip, tr::Dtype::fp32).input_shape({4, 300}).params(kAlpha).run();
    EXPECT_FALSE(r.passed) << r.summary();
    ASSERT_EQ(r.inputs.size(), 1u);
    const tr::GradInputResult &in = r.inputs[0];
    EXPECT_FALSE(in.passed) << r.summary();
    ASSERT_GE(in.element, 0) << r.summary();
    EXPECT_NEAR(in.gradient, -in.finite_difference, 1e-3 * std::fabs(in.finite_difference)) << r.summary();
    EXPECT_CONTAINS(r.summary(), "input 0: FAIL");
    EXPECT_CONTAINS(r.summary(), fmt::format("worst element {} {}", in.element, in.coordinates));
  }
}

// lin_norelu_grad never masks dy by relu's derivative: where y = 0 it still
// passes dy through, so every partial is wrong; bf16 shows it too.
TEST(FaultyGradients, MissingTermIsCaught) {
  REQUIRE_FIXTURES();
  for (const tr::Dtype dtype : {tr::Dtype::fp32, tr::Dtype::bf16}) {
    const tr::GradReport r = linear_checker("lin_norelu", "bm1688", dtype).run();
    EXPECT_FALSE(r.passed) << r.summary();
    ASSERT_EQ(r.inputs.size(), 3u);
    for (const tr::GradInputResult &in : r.inputs) EXPECT_FALSE(in.passed) << "input " << in.input << "\n" << r.summary();
  }
}

// lr_edge_grad reads x one element early in the last, partial tile (the
// count % NPU_NUM elements at the end): the worst element lies there, and
// there the gradient op took the other branch, so the two values are v and
// alpha v (their ratio alpha or 1 / alpha).
TEST(FaultyGradients, WrongTileEdgeIsCaught) {
  REQUIRE_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"})
    for (const tr::Dtype dtype : {tr::Dtype::fp32, tr::Dtype::bf16}) {
      SCOPED_TRACE(fmt::format("{} {}", chip, tr::dtype_name(dtype)));
      const int npus = chip == "bm1684x" ? 64 : 32;
      const int count = 40 * npus + npus - 5;  // a tail of npus - 5 elements
      const tr::GradReport r = checker("lr_edge", chip, dtype).input_shape({count}).params(kAlpha).run();
      EXPECT_FALSE(r.passed) << r.summary();
      const tr::GradInputResult &in = r.inputs.at(0);
      EXPECT_FALSE(in.passed) << r.summary();
      EXPECT_GE(in.element, count - (npus - 5)) << r.summary();
      const double ratio = in.gradient / in.finite_difference;
      EXPECT_TRUE(std::fabs(ratio - 0.1) < 0.02 || std::fabs(ratio - 10) < 2) << ratio << "\n" << r.summary();
    }
}

// SEPARATE: mulxy_grad runs once per input with input_grad_index; both
// partials pass. NON_DIFFERENTIABLE 1: mulnd's report has input 0 only.
TEST(GradientChecker, SeparateAndNonDifferentiableForms) {
  REQUIRE_FIXTURES();
  for (const tr::Dtype dtype : {tr::Dtype::fp32, tr::Dtype::fp16}) {
    const tr::GradReport sep = checker("mulxy", "bm1688", dtype).input_shape({5, 77}).input_shape({5, 77}).run();
    EXPECT_TRUE(sep.passed) << sep.summary();
    EXPECT_TRUE(sep.declaration.separate);
    ASSERT_EQ(sep.inputs.size(), 2u);
    EXPECT_EQ(sep.inputs[1].input, 1);
    const tr::GradReport nd = checker("mulnd", "bm1684x", dtype).input_shape({5, 77}).input_shape({5, 77}).run();
    EXPECT_TRUE(nd.passed) << nd.summary();
    EXPECT_EQ(nd.declaration.non_differentiable, std::vector<int>{1});
    ASSERT_EQ(nd.inputs.size(), 1u);
    EXPECT_EQ(nd.inputs[0].input, 0);
  }
}

TEST(GradientChecker, AnOpWithoutAGradientIsRefusedByName) {
  REQUIRE_FIXTURES();
  try {
    checker("absadd", "bm1684x", tr::Dtype::fp32).input_shape({8}).params(R"({"b": 1.0})").run();
    FAIL() << "no error";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(std::string(e.what()), "op 'absadd' declares no gradient");
    EXPECT_CONTAINS(std::string(e.what()), "register_custom_grad(absadd <grad_op>)");
    EXPECT_CONTAINS(std::string(e.what()), "leakyrelu, linear, lr_sign");
  }
}

// The kernels compute in fp32 and round once into fp16 / bf16: rounding.
TEST(Triage, SampleGradientsAreRounding) {
  REQUIRE_FIXTURES();
  for (const tr::Dtype dtype : {tr::Dtype::fp16, tr::Dtype::bf16}) {
    const tr::GradReport r = linear_checker("linear", "bm1684x", dtype).triage().run();
    ASSERT_TRUE(r.triage.has_value());
    EXPECT_TRUE(r.triage->rounding) << r.triage->text();
    EXPECT_CONTAINS(r.summary(), "triage: rounding");
  }
}

// By hand: fp16 values near 1 are 2^-10 apart. 1 + 3 * 2^-10 against an fp32
// result of 1 is 3 ulps: algorithmic; 1 + 2^-10 against 1 + 0.6 * 2^-10
// (which rounds to 1 + 2^-10) is 0 ulps: rounding.
TEST(Triage, ClassifiesByUlpsOfTheFp32Result) {
  const float ulp = std::ldexp(1.0f, -10);
  const tr::TriageReport ok = tr::triage_outputs(tr::Dtype::fp16, {{1 + ulp, 2}}, {{1 + 0.6f * ulp, 2}});
  EXPECT_TRUE(ok.rounding) << ok.text();
  const tr::TriageReport bad = tr::triage_outputs(tr::Dtype::fp16, {{1, 2}, {1 + 3 * ulp}}, {{1, 2}, {1}});
  EXPECT_FALSE(bad.rounding);
  ASSERT_EQ(bad.outputs.size(), 2u);
  EXPECT_TRUE(bad.outputs[0].rounding);
  EXPECT_EQ(bad.outputs[1].max_ulp, 3);
  EXPECT_CONTAINS(bad.text(), "algorithmic: output 1 is 3 ulp from the fp32 result at index 0");
  EXPECT_THROW(tr::triage_outputs(tr::Dtype::fp16, {{1}}, {{1, 2}}), tr::Error);
}

#ifdef TPU_OP_CHECK
// tpu_op_check --grad: one row per chip and dtype, the sample passing and
// the sign error failing with exit status 1, its summary naming input 0,
// the worst element and both values; the declaration printed.
TEST(OpCheckGradTool, RowsDeclarationsAndAFailure) {
  REQUIRE_FIXTURES();
  test::TempDir dir;
  const std::string cases = dir.file("cases.json");
  std::ofstream(cases) << R"({"cases": [
    {"op": "leakyrelu", "shapes": [[3, 100]], "params": {"alpha": 0.1}, "dtypes": ["fp32", "bf16"]},
    {"op": "lr_sign", "shapes": [[200]], "params": {"alpha": 0.1}, "dtypes": ["fp32"]},
    {"op": "absadd", "shapes": [[8]], "params": {"b": 1.0}}]})";
  const test::CommandRun run = test::run_command(std::string(TPU_OP_CHECK) + " --grad --triage --seed 5 --chip bm1688 " +
                                                 "--lib-dir " TPU_GRAD_FIXTURES_DIR " --cases " + cases);
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_CONTAINS(run.output, "gradient op");
  EXPECT_CONTAINS(run.output, "leakyrelu_grad");
  EXPECT_CONTAINS(run.output, "triage: rounding: every bf16 output");
  EXPECT_CONTAINS(run.output, "gradient of leakyrelu on bm1688: leakyrelu_grad, all partials at once, receives output "
                              "grads + inputs, non-differentiable: none");
  EXPECT_CONTAINS(run.output, "lr_sign -> lr_sign_grad on bm1688 fp32 [200] seed 5: FAIL");
  EXPECT_CONTAINS(run.output, "input 0: FAIL");
  EXPECT_CONTAINS(run.output, "worst element ");
  EXPECT_CONTAINS(run.output, "Some gradients FAILED");
  EXPECT_EQ(run.output.find("absadd "), std::string::npos) << "absadd declares no gradient: no row\n" << run.output;
}
#endif

}  // namespace
