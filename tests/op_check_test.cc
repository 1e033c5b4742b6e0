// op_check_test: the vendor criterion of compare.h, output dtypes of the op
// tester (out_dtypes) and tpu_op_check's table, on the fixture ops of
// tests/custom_fixtures/good (TPU_TEST_FIXTURES_DIR): fx_cast converts its
// input to the output's dtype, fx_fault divides by zero in kernel code.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "support/temp_dir.h"
#include "tpu_runtime/compare.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/op_tester.h"

namespace {

using namespace tpu_runtime;

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

const std::string kFixtures = TPU_TEST_FIXTURES_DIR;
const std::string kGood = kFixtures + "/good";

// ---- vendor_compare, with the figures worked out by hand ------------------

TEST(VendorCompare, CosineAndEuclideanOfSmallVectors) {
  // a.e = 1 + 4 + 12 = 17, |a|^2 = 14, |e|^2 = 21: cosine 17 / sqrt(294);
  // |a - e| = 1, |(a + e) / 2| = sqrt(4 + 16 + 49) / 2: euclid 1 - 2 / sqrt(69).
  const std::vector<float> actual = {1, 2, 3}, expected = {1, 2, 4};
  const VendorComparison strict = vendor_compare(actual, expected, Dtype::fp32, {0.99, 0.99});
  EXPECT_NEAR(strict.cosine, 17 / std::sqrt(294.0), 1e-12);
  EXPECT_NEAR(strict.euclidean, 1 - 1 / (std::sqrt(69.0) / 2 + 1e-7), 1e-12);
  EXPECT_EQ(strict.verdict, VendorVerdict::not_similar);  // euclid 0.759 is not above 0.99
  EXPECT_EQ(vendor_compare(actual, expected, Dtype::fp32, {0.99, 0.75}).verdict, VendorVerdict::similar);
  // The bounds are strict: a figure equal to its bound fails.
  EXPECT_EQ(vendor_compare(actual, expected, Dtype::fp32, {strict.cosine, 0.5}).verdict, VendorVerdict::not_similar);
}

TEST(VendorCompare, EqualThenCloseThenSimilar) {
  EXPECT_EQ(vendor_compare(std::vector<float>{0, 0}, std::vector<float>{0, 0}, Dtype::fp32, {}).verdict,
            VendorVerdict::equal);
  // allclose at rtol 1e-3: |a - e| <= 1e-8 + 1e-3 |e|.
  EXPECT_EQ(vendor_compare(std::vector<float>{1.0009f, 2}, std::vector<float>{1, 2}, Dtype::fp32, {}).verdict,
            VendorVerdict::close);
  const VendorComparison off = vendor_compare(std::vector<float>{1.002f, 2}, std::vector<float>{1, 2}, Dtype::fp32, {});
  EXPECT_EQ(off.verdict, VendorVerdict::similar);
  EXPECT_GT(off.cosine, 0.99);
}

TEST(VendorCompare, AllZeroAgainstValuesHasCosineZero) {
  const VendorComparison c = vendor_compare(std::vector<float>{0, 0}, std::vector<float>{1, 1}, Dtype::fp32, {});
  EXPECT_EQ(c.cosine, 0);
  EXPECT_EQ(c.verdict, VendorVerdict::not_similar);
}

// NaN counts as 0 and infinity as 10000 in the similarity figures.
TEST(VendorCompare, NanAndInfinityAreReplacedForTheSimilarity) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const VendorComparison c =
      vendor_compare(std::vector<float>{nan, inf, 1}, std::vector<float>{0, 10000, 1}, Dtype::fp32, {});
  EXPECT_EQ(c.verdict, VendorVerdict::similar);
  EXPECT_NEAR(c.cosine, 1, 1e-12);
  EXPECT_NEAR(c.euclidean, 1, 1e-9);
  // NaN against NaN is close (not equal: NaN equals nothing).
  EXPECT_EQ(vendor_compare(std::vector<float>{nan, 1}, std::vector<float>{nan, 1}, Dtype::fp32, {}).verdict,
            VendorVerdict::close);
}

TEST(VendorCompare, IntegerOutputsMustBeEqual) {
  // The reference rounds to the integer type first (2.4 -> 2).
  EXPECT_EQ(vendor_compare(std::vector<float>{1, 2}, std::vector<float>{1, 2.4f}, Dtype::int8, {}).verdict,
            VendorVerdict::equal);
  const VendorComparison c = vendor_compare(std::vector<float>{1, 2}, std::vector<float>{1, 3}, Dtype::int8, {0, 0});
  EXPECT_EQ(c.verdict, VendorVerdict::not_equal);
  EXPECT_FALSE(verdict_passes(c.verdict));
}

// bf16 results 3 ulp away: our default bound (2 ulp) fails them, the vendor
// criterion (0.95, 0.80 for bf16) passes them as similar.
TEST(VendorCompare, ThreeUlpBf16FailsUlpButPassesVendor) {
  std::vector<float> expected, actual;
  for (int i = 0; i < 64; ++i) {
    const float value = 1 + float(i) / 64;  // exact in bf16: 1 + i * 2^-6, ulp 2^-7 in [1, 2)
    expected.push_back(value);
    actual.push_back(value + 3.0f / 128);
  }
  const Similarity s = compare(actual, expected, Dtype::bf16);
  EXPECT_EQ(s.max_ulp, 3);
  std::string why;
  EXPECT_FALSE(within(s, default_tolerance(Dtype::bf16), &why));
  EXPECT_CONTAINS(why, "max error 3 ulp > 2 allowed");
  const VendorComparison v = vendor_compare(actual, expected, Dtype::bf16, default_vendor_tolerance(Dtype::bf16));
  EXPECT_EQ(v.verdict, VendorVerdict::similar);
  EXPECT_TRUE(verdict_passes(v.verdict));
}

TEST(VendorCompare, CriterionNames) {
  EXPECT_EQ(parse_criterion("vendor"), Criterion::vendor);
  EXPECT_EQ(parse_criterion("ulp"), Criterion::ulp);
  try {
    parse_criterion("cosine");
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "unknown criterion \"cosine\"; expected \"ulp\" or \"vendor\"");
  }
}

// ---- the op tester's out_dtypes ----------------------------------------------

LibraryPaths good_libraries() {
  return {kGood + "/libplugin_custom.so", kGood + "/libbackend_custom.so", kGood + "/libcmodel_custom_bm1684x.so"};
}

// fx_cast's output dtype is its parameter "to" (an SG dtype: 1 is fp16).
OpTester fp32_to_fp16() {
  OpTester t;
  t.op("fx_cast").input_shape({2, 3, 5}).dtype(Dtype::fp32).params(R"({"to": 1})").libraries(good_libraries());
  return t;
}

TEST(OutDtypes, Fp32InFp16Out) {
  const OpReport report = fp32_to_fp16().out_dtypes({Dtype::fp16}).run();
  EXPECT_TRUE(report.passed) << report.summary();
  EXPECT_EQ(report.output_dtypes, std::vector<Dtype>{Dtype::fp16});
  ASSERT_EQ(report.cases.size(), 2u);  // backend and firmware: fx_cast has no local op
  for (const OpCaseResult &c : report.cases) {
    ASSERT_EQ(c.outputs.size(), 1u);
    EXPECT_EQ(c.outputs[0].max_ulp, 0) << c.name;  // fp16 ulps: the reference rounded to fp16
    EXPECT_GT(c.outputs[0].max_abs, 0) << c.name;   // ... which fp32 values are not
  }
  EXPECT_CONTAINS(report.summary(), "fx_cast on bm1684x fp32 inputs [2,3,5], fp16 outputs seed 1, ulp criterion: PASS");
}

// Without out_dtypes the output is fp32, which the op's own type inference
// contradicts.
TEST(OutDtypes, DefaultIsTheInputDtype) {
  const OpReport report = fp32_to_fp16().run();
  EXPECT_EQ(report.output_dtypes, std::vector<Dtype>{Dtype::fp32});
  const OpCaseResult *firmware = report.find("global firmware");
  ASSERT_NE(firmware, nullptr);
  EXPECT_FALSE(firmware->passed);
  EXPECT_EQ(firmware->failure, "tpu_shape_infer_entry gives output 0 SG dtype 1, expected 0 (fp32)");
}

TEST(OutDtypes, OneDtypePerOutput) {
  try {
    fp32_to_fp16().out_dtypes({Dtype::fp16, Dtype::fp16}).run();
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "OpTester(fx_cast): out_dtypes lists 2 dtype(s) for 1 output(s) (num_outputs)");
  }
}

TEST(OpTesterCriterion, VendorCriterionIsReported) {
  const OpReport report = fp32_to_fp16().out_dtypes({Dtype::fp16}).criterion(Criterion::vendor).run();
  EXPECT_TRUE(report.passed) << report.summary();
  EXPECT_EQ(report.criterion, Criterion::vendor);
  for (const OpCaseResult &c : report.cases) {
    ASSERT_EQ(c.vendor_outputs.size(), 1u);
    EXPECT_EQ(c.vendor_outputs[0].verdict, VendorVerdict::close) << c.name;  // fp16 rounding: within rtol 1e-3
  }
  EXPECT_CONTAINS(report.summary(), "vendor criterion: PASS");
  EXPECT_CONTAINS(report.summary(), "vendor close");
}

// ---- out_dtypes in a net ------------------------------------------------------

// x (fp32) -> fx_cast to fp16 -> y (fp16) -> fx_cast to fp32 -> z (fp32),
// the dtypes given by out_dtypes.
TEST(NetOutDtypes, BuildAndRunAnFp32ToFp16Layer) {
  const NetDescription net = parse_net(nlohmann::ordered_json::parse(R"({
    "inputs": [{"name": "x", "shape": [2, 8], "dtype": "fp32"}],
    "layers": [{"op": "fx_cast", "params": {"to": 1}, "inputs": ["x"], "outputs": ["y"], "out_dtypes": ["fp16"],
                "dynamic": true},
               {"op": "fx_cast", "params": {"to": 0}, "inputs": ["y"], "outputs": ["z"], "out_dtypes": ["fp32"]}],
    "outputs": ["z"]})"),
                                       "cast.json");
  BuildOptions options;
  options.chip = "bm1684x";
  options.libraries = good_libraries();
  options.reference = true;
  const BuildResult built = build_model(net, options, "cast.json");
  const auto tensor = [&](const std::string &name) {
    for (const ModelTensor &t : built.description.tensors)
      if (t.name == name) return t;
    throw Error("no tensor " + name);
  };
  EXPECT_EQ(tensor("y").dtype, Dtype::fp16);  // from out_dtypes
  EXPECT_EQ(tensor("y").size, 2u * 8 * 2);
  EXPECT_EQ(tensor("z").dtype, Dtype::fp32);
  const RunResult run = run_model(built.model, built.reference_inputs, "cast");
  const auto comparisons = compare_outputs(built.description, run.outputs, built.reference_outputs, exact_tolerance());
  ASSERT_EQ(comparisons.size(), 1u);
  EXPECT_TRUE(comparisons[0].passed) << comparisons[0].why;
  EXPECT_EQ(comparisons[0].dtype, Dtype::fp32);
}

// ---- the local-memory guard --------------------------------------------------

// fx_stray's local layer copies the whole tensor's height instead of its
// slice's: its global cases pass, and every slicing that splits h fails,
// naming the op, the step and the first byte written outside the step's
// output slice and scratch buffer.
TEST(OpTesterLocalGuard, AKernelWritingPastItsSliceFails) {
  const std::string dir = kFixtures + "/stray";
  const tpu_runtime::LibraryPaths paths{dir + "/libplugin_custom.so", dir + "/libbackend_custom.so",
                                        dir + "/libcmodel_custom_bm1684x.so"};
  const auto tester = [&] {
    return tpu_runtime::OpTester().op("fx_stray").input_shape({2, 4, 8, 8}).chip("bm1684x").libraries(paths).exact();
  };
  // The kernel reads past its input slice too: bytes the step never
  // loaded, which the poisoned local memory reports first, with the place.
  try {
    (void)tester().run();
    ADD_FAILURE() << "the read past the input slice was not reported";
  } catch (const std::exception &e) {
    EXPECT_CONTAINS(std::string(e.what()), "[uninitialized read]");
    EXPECT_CONTAINS(std::string(e.what()), "stray_kernels.c:21");
  }
  // With the read check lowered, the guard catches the write past the output slice.
  ASSERT_EQ(cmodel_set_option("uninitialized_reads", "warning"), 0);
  const tpu_runtime::OpReport report = tester().run();
  ASSERT_EQ(cmodel_set_option("uninitialized_reads", "error"), 0);
  EXPECT_FALSE(report.passed) << report.summary();
  const tpu_runtime::OpCaseResult *global = report.find("global backend");
  ASSERT_NE(global, nullptr) << report.summary();
  EXPECT_TRUE(global->passed) << report.summary();
  int h_split = 0;
  for (const tpu_runtime::OpCaseResult &c : report.cases) {
    if (c.name.rfind("local", 0) != 0 || c.name.find("h=8") != std::string::npos) continue;
    ++h_split;
    EXPECT_FALSE(c.passed) << c.name;
    EXPECT_CONTAINS(c.failure, "op 'fx_stray', step 1 of ");
    EXPECT_CONTAINS(c.failure, "wrote NPU 0 local memory at offset 0x");
    EXPECT_CONTAINS(c.failure, "outside what the step declared");
  }
  EXPECT_GT(h_split, 0) << report.summary();
}

// ---- tpu_op_check --------------------------------------------------------------

struct ToolRun {
  int status = -1;
  std::string output;
};

ToolRun op_check(const std::string &cases, const std::string &extra = "") {
  const std::string command =
      std::string(TPU_OP_CHECK) + " --chip bm1684x --lib-dir " + kGood + " --cases " + cases + " " + extra + " 2>&1";
  ToolRun run;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) return run;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string write_cases(const test::TempDir &dir, const std::string &json) {
  const std::string path = dir.file("cases.json");
  std::ofstream(path) << json;
  return path;
}

// The faulting op is a failed row with the fault's message; the next case
// still runs, with its output dtype and criterion in the table.
TEST(OpCheckTool, FaultIsAFailedRowAndTheNextCaseRuns) {
  test::TempDir dir;
  const std::string cases = write_cases(dir, R"({"cases": [
    {"op": "fx_fault", "shapes": [[8]], "dtypes": ["fp32"], "global_only": true},
    {"op": "fx_cast", "shapes": [[2, 3, 5]], "dtypes": ["fp32"], "params": {"to": 1},
     "out_dtypes": ["fp16"], "criterion": "vendor"}]})");
  const ToolRun run = op_check(cases);
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_CONTAINS(run.output, "decided by");
  EXPECT_CONTAINS(run.output, "SIGFPE (integer divide by zero) in kernel code [kernel fault]; in api_fx_fault_global "
                              "(fixture_kernels.c:");
  EXPECT_CONTAINS(run.output, "ERROR");
  const std::size_t cast_row = run.output.find("\nfx_cast ");
  ASSERT_NE(cast_row, std::string::npos) << run.output;
  const std::string row = run.output.substr(cast_row + 1, run.output.find('\n', cast_row + 1) - cast_row - 1);
  EXPECT_CONTAINS(row, "fp32>fp16");
  EXPECT_CONTAINS(row, "vendor close");
  EXPECT_CONTAINS(row, "2/2");
  EXPECT_CONTAINS(row, "pass");
}

// --criterion overrides the cases' criterion.
TEST(OpCheckTool, CriterionFlag) {
  test::TempDir dir;
  const std::string cases = write_cases(dir, R"({"cases": [
    {"op": "fx_cast", "shapes": [[4]], "dtypes": ["fp32"], "params": {"to": 1}, "out_dtypes": ["fp16"],
     "criterion": "vendor"}]})");
  const ToolRun run = op_check(cases, "--criterion ulp --allow-unchecked");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_CONTAINS(run.output, " ulp ");
  EXPECT_EQ(run.output.find("vendor close"), std::string::npos) << run.output;
  EXPECT_EQ(op_check(cases, "--criterion cosine").status, 2);
}

// A registered op without a case was not checked: that fails the run
// (naming the op) unless --allow-unchecked accepts it.
TEST(OpCheckTool, RegisteredOpWithoutACaseFailsTheRun) {
  test::TempDir dir;
  const std::string cases = write_cases(dir, R"({"cases": [
    {"op": "fx_cast", "shapes": [[4]], "dtypes": ["fp32"], "params": {"to": 1}, "out_dtypes": ["fp16"]}]})");
  ToolRun run = op_check(cases);
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_CONTAINS(run.output, "WARNING: op fx_copy is registered but " + cases + " has no case for it");
  EXPECT_CONTAINS(run.output, "Every checked op passed.");
  EXPECT_CONTAINS(run.output, "have no case in " + cases + " and were not checked");
  EXPECT_EQ(run.output.find("All ops passed."), std::string::npos) << run.output;
  run = op_check(cases, "--allow-unchecked");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_CONTAINS(run.output, "WARNING: op fx_copy is registered");
  EXPECT_CONTAINS(run.output, "All ops passed.");
}

TEST(OpCheckTool, BadOutDtypesNameTheCaseAndField) {
  test::TempDir dir;
  ToolRun run = op_check(write_cases(dir, R"({"cases": [
    {"op": "fx_cast", "shapes": [[4]], "out_dtypes": ["fp64"]}]})"));
  EXPECT_EQ(run.status, 2);
  EXPECT_CONTAINS(run.output, "case 0 (op fx_cast): \"out_dtypes\"[0]: unknown dtype 'fp64'");
  run = op_check(write_cases(dir, R"({"cases": [
    {"op": "fx_cast", "shapes": [[4]], "num_outputs": 1, "out_dtypes": ["fp16", "fp16"]}]})"));
  EXPECT_EQ(run.status, 2);
  EXPECT_CONTAINS(run.output,
                  "case 0 (op fx_cast): \"out_dtypes\" lists 2 dtype(s) but the op has 1 output(s) (\"num_outputs\")");
  run = op_check(write_cases(dir, R"({"cases": [{"op": "fx_cast", "shapes": [[4]], "criterion": "close"}]})"));
  EXPECT_EQ(run.status, 2);
  EXPECT_CONTAINS(run.output, "case 0 (op fx_cast): unknown criterion \"close\"");
}

}  // namespace
