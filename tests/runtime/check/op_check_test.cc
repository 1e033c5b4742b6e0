// op_check_test: the vendor criterion of compare.h, output dtypes of the op
// tester (out_dtypes) and tpu_op_check's table, on the fixture ops of
// tests/runtime/loader/fixtures/good (TPU_TEST_FIXTURES_DIR): fx_cast converts its
// input to the output's dtype, fx_fault divides by zero in kernel code.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <fstream>
#include <random>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "tpu_runtime/compare.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/op_tester.h"

namespace {

using namespace tpu_runtime;

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

// NaN counts as 0 and infinity as 10000 in the vendor's similarity figures,
// but a NaN or infinity where the reference holds a number (or the reverse)
// fails before any figure: NaN-as-0 would pass it.
TEST(VendorCompare, NanOrInfinityAgainstANumberFails) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const VendorComparison c =
      vendor_compare(std::vector<float>{nan, inf, 1}, std::vector<float>{0, 10000, 1}, Dtype::fp32, {});
  EXPECT_EQ(c.verdict, VendorVerdict::not_similar);
  EXPECT_EQ(c.nonfinite_mismatches, 2u);
  EXPECT_EQ(c.first_nonfinite, 0);
  // The reverse: the reference is NaN where the output has a number.
  const VendorComparison r = vendor_compare(std::vector<float>{1, 2}, std::vector<float>{1, nan}, Dtype::fp32, {0, -1});
  EXPECT_EQ(r.verdict, VendorVerdict::not_similar);
  EXPECT_EQ(r.first_nonfinite, 1);
  // NaN against NaN is close (not equal: NaN equals nothing); the same
  // infinity on both sides is equal.
  EXPECT_EQ(vendor_compare(std::vector<float>{nan, 1}, std::vector<float>{nan, 1}, Dtype::fp32, {}).verdict,
            VendorVerdict::close);
  EXPECT_EQ(vendor_compare(std::vector<float>{inf, 1}, std::vector<float>{inf, 1}, Dtype::fp32, {}).verdict,
            VendorVerdict::equal);
}

// Our criterion: an all-NaN output has no pair left for the similarity sums
// (cosine stays 1); it must fail whatever the tolerance, even one without an
// ulp bound.
TEST(Compare, AllNanOutputFailsEveryTolerance) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> expected = {0.5f, -1, 2, 3}, actual(4, nan);
  const Similarity s = compare(actual, expected, Dtype::fp32);
  EXPECT_EQ(s.nonfinite_mismatches, 4u);
  EXPECT_EQ(s.first_nonfinite, 0);
  std::string why;
  EXPECT_FALSE(within(s, {0.99, 0.90, std::numeric_limits<double>::infinity()}, &why));
  EXPECT_CONTAINS(why, "4 elements are NaN or infinite where the reference is not");
  const Similarity reverse = compare(expected, actual, Dtype::fp32);
  EXPECT_FALSE(within(reverse, {0, -1, std::numeric_limits<double>::infinity()}, &why));
  // A tolerance that sets only the figures keeps the dtype's ulp bound.
  const Tolerance t = resolved_tolerance({0.9, 0.9, std::numeric_limits<double>::quiet_NaN()}, Dtype::bf16);
  EXPECT_EQ(t.max_ulp, default_tolerance(Dtype::bf16).max_ulp);
}

// A model output's default bounds the error against the output's peak:
// sums computed in two orders (the run and its reference) differ by a few
// ulps of their terms, so a correct element near 0 may be thousands of its
// own ulps off and must pass; one element off by a thousandth of the peak
// must fail, naming it.
TEST(Compare, ModelOutputsBoundTheErrorAgainstThePeak) {
  test::Seeded s;
  constexpr int kCount = 2000, kTerms = 300;
  std::vector<float> forward(kCount), backward(kCount);
  for (int i = 0; i < kCount; ++i) {
    std::vector<float> terms(kTerms);
    double exact = 0;
    for (float &t : terms) {
      t = std::uniform_real_distribution<float>(-1, 1)(s.rng());
      exact += t;
    }
    terms.back() = float(double(terms.back()) - exact);  // the exact sum is near 0: cancellation
    float f = 0, b = 0;
    for (int k = 0; k < kTerms; ++k) f += terms[std::size_t(k)];
    for (int k = kTerms; k-- > 0;) b += terms[std::size_t(k)];
    forward[std::size_t(i)] = f + float(i % 7);  // most elements away from 0, a seventh near it
    backward[std::size_t(i)] = b + float(i % 7);
  }
  const Similarity sim = compare(forward, backward, Dtype::fp32);
  ASSERT_GT(sim.max_ulp, 1000) << "the two orders should differ by many ulps near 0";
  std::string why;
  EXPECT_FALSE(within(sim, default_tolerance(Dtype::fp32), &why));  // the op tester's bound: per element
  EXPECT_TRUE(within(sim, model_output_tolerance(Dtype::fp32), &why)) << why;
  std::vector<float> wrong = forward;
  wrong[17] += 6 * 1e-3f;  // the peak is 6
  const Similarity bad = compare(wrong, backward, Dtype::fp32);
  EXPECT_GT(bad.cosine, model_output_tolerance(Dtype::fp32).min_cosine);  // the similarity figures miss it
  EXPECT_FALSE(within(bad, model_output_tolerance(Dtype::fp32), &why));
  EXPECT_CONTAINS(why, "(index 17)");
  EXPECT_CONTAINS(why, "of the reference's peak |value| 6");
  // --tolerance alone keeps the peak bound; --max-ulp (a ulp bound) replaces it.
  const Tolerance figures = resolved_model_tolerance({0.9, 0.9, std::numeric_limits<double>::quiet_NaN()}, Dtype::fp16);
  EXPECT_EQ(figures.max_peak_error, 0x1p-8);
  EXPECT_TRUE(std::isinf(figures.max_ulp));
  EXPECT_TRUE(std::isinf(resolved_model_tolerance({0.9, 0.9, 3}, Dtype::fp16).max_peak_error));
  EXPECT_EQ(model_output_tolerance(Dtype::int32).max_ulp, default_tolerance(Dtype::int32).max_ulp);
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

// ---- outputs the kernel never wrote ---------------------------------------------

// fx_short writes the first half of its output; its reference is 0 in the
// second half. The vendor's comparison counts the poison NaN as 0 there and
// would call the output equal in all but name: every path must report the
// unwritten elements (how many, the first index) and fail.
TEST(Unwritten, EveryCriterionOfTheOpTesterFailsNamingCountAndFirstIndex) {
  for (const Criterion criterion : {Criterion::vendor, Criterion::ulp}) {
    OpTester t;
    t.op("fx_short").input_shape({2, 3, 6}).dtype(Dtype::fp32).criterion(criterion).libraries(good_libraries());
    const OpReport report = t.run();
    EXPECT_FALSE(report.passed) << report.summary();
    ASSERT_EQ(report.cases.size(), 2u);
    for (const OpCaseResult &c : report.cases) {
      EXPECT_FALSE(c.passed) << c.name;
      EXPECT_CONTAINS(c.failure, "output 0: 18 of 36 elements were never written");
      EXPECT_CONTAINS(c.failure, "the first at index 18 [1,0,0], where the reference is 0");
    }
  }
  // fp16 outputs too (2-byte poison).
  OpTester t;
  t.op("fx_short").input_shape({5}).dtype(Dtype::fp16).criterion(Criterion::vendor).libraries(good_libraries());
  const OpReport report = t.run();
  EXPECT_FALSE(report.passed) << report.summary();
  EXPECT_CONTAINS(report.cases[0].failure, "2 of 5 elements were never written");
}

TEST(Unwritten, FindUnwrittenTellsPoisonFromComputedNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::uint8_t> stored(4 * 4, 0xFF);
  const float computed_nan = nan, one = 1.0f;
  std::memcpy(stored.data(), &one, 4);            // written
  std::memcpy(stored.data() + 4, &computed_nan, 4);  // a NaN the kernel wrote
  const std::vector<float> reference = {1.0f, 0.0f, 0.0f, nan};  // element 3: reference NaN, cannot tell
  const Unwritten u = find_unwritten(stored, Dtype::fp32, reference);
  EXPECT_EQ(u.count, 1u);
  EXPECT_EQ(u.first, 2);
  // Integer outputs: 0xFF bytes are -1, a value like any other where the reference says so.
  const std::vector<std::uint8_t> bytes = {0xFF, 0xFF, 0x01};
  const Unwritten i8 = find_unwritten(bytes, Dtype::int8, std::vector<float>{-1.0f, 5.0f, 1.0f});
  EXPECT_EQ(i8.count, 1u);
  EXPECT_EQ(i8.first, 1);
}

// The model path: tpu_model run's comparison with the reference.
TEST(Unwritten, ModelOutputComparisonNamesThem) {
  const NetDescription net = parse_net(nlohmann::ordered_json::parse(R"({
    "inputs": [{"name": "x", "shape": [4, 4], "dtype": "fp32"}],
    "layers": [{"op": "fx_short", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})"),
                                       "short.json");
  BuildOptions options;
  options.chip = "bm1684x";
  options.libraries = good_libraries();
  options.reference = true;
  const BuildResult built = build_model(net, options, "short.json");
  const RunResult run = run_model(built.model, built.reference_inputs, "short");
  const auto comparisons = compare_outputs(built.description, run.outputs, built.reference_outputs, std::nullopt);
  ASSERT_EQ(comparisons.size(), 1u);
  EXPECT_FALSE(comparisons[0].passed);
  EXPECT_CONTAINS(comparisons[0].why, "8 of 16 elements were never written");
  EXPECT_CONTAINS(comparisons[0].why, "the first at index 8");
}

// ---- unknown ops: a misspelt name ---------------------------------------------------

TEST(UnknownOp, MisspeltNameGetsADidYouMean) {
  OpTester t;
  t.op("fx_shrot").input_shape({4}).libraries(good_libraries());
  try {
    t.run();
    FAIL() << "an unknown op ran";
  } catch (const Error &e) {
    EXPECT_CONTAINS(e.what(), "unknown op 'fx_shrot'");
    EXPECT_CONTAINS(e.what(), "did you mean 'fx_short'?");
  }
  // Case and two edits away: both suggested names are listed.
  EXPECT_EQ(unknown_op_hint("FX_COPY", {"fx_copy", "fx_cast"}), "; did you mean 'fx_copy'?");
  EXPECT_EQ(unknown_op_hint("fx_cas", {"fx_copy", "fx_cast", "fx_case"}), "; did you mean 'fx_cast' or 'fx_case'?");
  EXPECT_EQ(unknown_op_hint("nosuchop", {"absadd", "crop"}), "");
  EXPECT_EQ(unknown_op_hint("ab", {"cd"}), "");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
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
    EXPECT_CONTAINS(std::string(e.what()), ": uninitialized read at ");
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

using ToolRun = test::CommandRun;

ToolRun op_check(const std::string &cases, const std::string &extra = "") {
  const std::string command =
      std::string(TPU_OP_CHECK) + " --chip bm1684x --lib-dir " + kGood + " --cases " + cases + " " + extra;
  return test::run_command(command);
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
  EXPECT_CONTAINS(run.output, "SIGFPE (integer divide by zero): kernel fault at ");
  EXPECT_CONTAINS(run.output, "fixture_kernels.c:");
  EXPECT_CONTAINS(run.output, "(api_fx_fault_global)\n");
  EXPECT_CONTAINS(run.output, "ERROR");
  const std::size_t cast_row = run.output.find("\nfx_cast ");
  ASSERT_NE(cast_row, std::string::npos) << run.output;
  const std::string row = run.output.substr(cast_row + 1, run.output.find('\n', cast_row + 1) - cast_row - 1);
  EXPECT_CONTAINS(row, "fp32>fp16");
  EXPECT_CONTAINS(row, "vendor close");
  EXPECT_CONTAINS(row, "2/2");
  EXPECT_CONTAINS(row, "pass");
}

// An error a person reads: a short first line saying what failed and where
// (the kernel's file:line), the details under it; the same error in later
// rows (every dtype of a faulty kernel) is shown once and folded after
// that, and the end of the run counts the repeats.
TEST(OpCheckTool, RepeatedErrorsAreFoldedUnderAShortFirstLine) {
  test::TempDir dir;
  const std::string cases = write_cases(dir, R"({"cases": [
    {"op": "fx_fault", "shapes": [[8]], "dtypes": ["fp32", "fp16", "bf16"], "global_only": true}]})");
  // The fixtures' sources as the op project: the kernel's file is named
  // relative to it, not by its absolute path.
  const std::string project = std::string(TPU_SDK_SOURCE_DIR) + "/tests/runtime/loader/fixtures";
  ASSERT_EQ(setenv("CUSTOM_LAYER_PATH", project.c_str(), 1), 0);
  const ToolRun run = op_check(cases);
  unsetenv("CUSTOM_LAYER_PATH");
  EXPECT_EQ(run.status, 1) << run.output;
  const std::size_t first = run.output.find("\n    SIGFPE");
  ASSERT_NE(first, std::string::npos) << run.output;
  const std::string line = run.output.substr(first + 5, run.output.find('\n', first + 1) - first - 5);
  EXPECT_LT(line.size(), 160u) << line;
  EXPECT_CONTAINS(line, "fixture_kernels.c:");
  EXPECT_EQ(line.find(project), std::string::npos) << line;
  EXPECT_CONTAINS(run.output, "\n      in kernel code\n");  // the details, indented under it
  EXPECT_EQ(run.output.find("\n    SIGFPE", first + 1), std::string::npos) << "shown once:\n" << run.output;
  EXPECT_CONTAINS(run.output, "    same error as fx_fault bm1684x [8] fp32 (case 0) above\n");
  EXPECT_CONTAINS(run.output, line + ": same error on 2 more cases (shown under fx_fault bm1684x [8] fp32 (case 0))");
}

// A case larger than the emulated device (a [65536, 65536] fp32 input is
// 16 GiB; the chips have 4 GiB) died of an uncaught std::bad_alloc, or ran
// for minutes, with no case named. It is a failed row naming the case; the
// next case still runs. A cases file nested past 256 levels is refused
// before it is parsed into values that copy and dump recursively.
TEST(OpCheckTool, HugeCaseIsAFailedRowNamingItAndDeepNestingIsRefused) {
  test::TempDir dir;
  const std::string cases = write_cases(dir, R"({"cases": [
    {"op": "fx_cast", "shapes": [[65536, 65536]], "dtypes": ["fp32"], "params": {"to": 1}, "out_dtypes": ["fp16"]},
    {"op": "fx_cast", "shapes": [[24576, 65536]], "dtypes": ["fp32"], "params": {"to": 1}, "out_dtypes": ["fp16"]},
    {"op": "fx_cast", "shapes": [[2, 3, 5]], "dtypes": ["fp32"], "params": {"to": 1}, "out_dtypes": ["fp16"],
     "criterion": "vendor"}]})");
  const ToolRun run = op_check(cases);
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_CONTAINS(run.output, "    OpTester(fx_cast): input 0 shape [65536,65536] has more than 2^31 - 1 elements\n"
                              "      case 0 of the cases file");
  EXPECT_CONTAINS(run.output, "    OpTester(fx_cast): input 0 shape [24576,65536] (fp32) is 6442450944 bytes, more "
                              "than the 4 GiB of global memory\n      case 1 of the cases file");
  EXPECT_CONTAINS(run.output, "2/2");  // case 2 ran

  std::string deep = R"({"cases": [{"op": "fx_cast", "shapes": [[8]], "params": {"to": )";
  deep += std::string(100000, '[') + std::string(100000, ']') + "}}]}";
  const ToolRun nested = op_check(write_cases(dir, deep));
  EXPECT_EQ(nested.status, 2) << nested.output;
  EXPECT_CONTAINS(nested.output, "cases.json: JSON nested deeper than 256 levels (line 1");
}

// --criterion overrides the cases' criterion.
// --timeout sets the run time limit; a value that is not a number of
// seconds is refused before anything runs.
TEST(OpCheckTool, TimeoutFlag) {
  test::TempDir dir;
  const std::string cases = write_cases(dir, R"({"cases": [
    {"op": "fx_cast", "shapes": [[2, 3, 5]], "dtypes": ["fp32"], "params": {"to": 1}, "out_dtypes": ["fp16"],
     "criterion": "vendor"}]})");
  const ToolRun bad = op_check(cases, "--timeout soon");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_CONTAINS(bad.output, "--timeout: cmodel_set_option: option run_timeout = \"soon\"");
  const ToolRun good = op_check(cases, "--timeout 30 --allow-unchecked");
  EXPECT_EQ(good.status, 0) << good.output;
  EXPECT_CONTAINS(good.output, "pass");
}

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

// A case of a misspelt op gets a suggestion.
TEST(OpCheckTool, UnknownOpsAreExplained) {
  test::TempDir dir;
  const ToolRun run = op_check(write_cases(dir, R"({"cases": [{"op": "fx_cpoy", "shapes": [[4]]}]})"),
                               "--allow-unchecked");
  EXPECT_NE(run.status, 0) << run.output;
  EXPECT_CONTAINS(run.output, "did you mean 'fx_copy'?");
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
