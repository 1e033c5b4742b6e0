// multicore_claim_test: the op tester and an op's multi-core claim
// (metadata_<op>'s is_multi_core, tpu_op_metadata.h), on the layer-group
// fixture set (tests/runtime/groups/fixtures):
//   - mc_double (out = x + x, rows split across the cores) and the sample
//     linear keep the claim: 1 and N cores give the same bytes, on bm1688's
//     2 cores and on 2 cores emulated for bm1684x (the option "cores" is put
//     back afterwards); the case's time is its slowest core's;
//   - mc_double_gap drops the last R mod n rows on n cores: the case fails
//     at the first row never written, which the test works out by hand;
//   - mc_double_race writes every row from every core: the case fails with
//     the emulator's cross-core race.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/op_tester.h"
#include "support/group_fixtures.h"
#include "support/test_support.h"

namespace {

namespace tr = tpu_runtime;

tr::OpReport test_op(const std::string &op, const std::string &chip, const tr::Shape &shape,
                     std::vector<std::vector<float>> values = {}) {
  tr::OpTester t;
  t.op(op).input_shape(shape).chip(chip).libraries(test::group_fixture_libraries(chip)).exact();
  if (!values.empty()) t.input_values(std::move(values));
  return t.run();
}

TEST(MultiCoreClaim, AnHonestRowSplitPassesOnOneAndSeveralCores) {
  REQUIRE_GROUP_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    // 100 rows: more than one NPU_NUM chunk per core on either chip.
    const tr::OpReport r = test_op("mc_double", chip, {4, 25, 6});
    EXPECT_TRUE(r.passed) << r.summary();
    EXPECT_TRUE(r.metadata.multi_core);
    EXPECT_CONTAINS(r.summary(), "metadata: not element-wise, stateful, in-place inputs 0, multi-core");
    const tr::OpCaseResult *claim = r.find("multi-core claim");
    ASSERT_NE(claim, nullptr) << r.summary();
    EXPECT_TRUE(claim->passed) << claim->failure;
    // The case's figures are the 2-core run's: its time is the slower core's.
    const nlohmann::json stats = nlohmann::json::parse(claim->stats_json);
    ASSERT_EQ(stats["cores"].size(), 2u) << claim->stats_json;
    EXPECT_DOUBLE_EQ(claim->total_us, std::max(stats["cores"][0]["total_us"].get<double>(),
                                               stats["cores"][1]["total_us"].get<double>()));
  }
  // bm1684x's two cores were emulated for the case only.
  ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_core_count(), 1);
  EXPECT_EQ(cmodel_cores_option(), 0);
  cmodel_close();
}

TEST(MultiCoreClaim, AnOptionSetForTheNextEmulatorIsUsedAndEndsWithIt) {
  REQUIRE_GROUP_FIXTURES();
  // No emulator is open: the option is for the op tester's, which it outlives no longer.
  ASSERT_EQ(cmodel_set_option("cores", "3"), 0) << cmodel_last_error();
  const tr::OpReport r = test_op("mc_double", "bm1684x", {7, 5});
  EXPECT_EQ(cmodel_cores_option(), 0);
  const tr::OpCaseResult *claim = r.find("multi-core claim");
  ASSERT_NE(claim, nullptr) << r.summary();
  EXPECT_TRUE(claim->passed) << claim->failure;
  EXPECT_EQ(nlohmann::json::parse(claim->stats_json)["cores"].size(), 3u);
}

TEST(MultiCoreClaim, ARowSplitThatDropsRowsIsCaughtAtTheFirstMissingElement) {
  REQUIRE_GROUP_FIXTURES();
  // 7 rows of 2: on 2 cores each takes 7 / 2 = 3 rows, so row 6 (elements
  // 12 and 13) is never written; on one core all 7 are. x[i] = i + 1, so
  // the one-core value at element 12 is 2 * 13 = 26.
  std::vector<float> x(14);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(i + 1);
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::OpReport r = test_op("mc_double_gap", chip, {7, 2}, {x});
    EXPECT_FALSE(r.passed);
    const tr::OpCaseResult *one_core = r.find("global backend");
    ASSERT_NE(one_core, nullptr);
    EXPECT_TRUE(one_core->passed) << one_core->failure;
    const tr::OpCaseResult *claim = r.find("multi-core claim");
    ASSERT_NE(claim, nullptr) << r.summary();
    EXPECT_FALSE(claim->passed);
    EXPECT_CONTAINS(claim->failure,
                    "op 'mc_double_gap' declares itself multi-core (metadata_mc_double_gap), but on 2 cores output 0 "
                    "differs from the one-core run in 2 of 14 elements; the first at index 12 [6,0]: 26 on 1 core, "
                    "never written (still the 0xFF poison) on 2 cores");
    EXPECT_CONTAINS(r.summary(), "multi-core claim");
  }
}

TEST(MultiCoreClaim, ARaceBetweenTheCoresIsCaught) {
  REQUIRE_GROUP_FIXTURES();
  const tr::OpReport r = test_op("mc_double_race", "bm1688", {3, 4});
  EXPECT_FALSE(r.passed);
  const tr::OpCaseResult *claim = r.find("multi-core claim");
  ASSERT_NE(claim, nullptr) << r.summary();
  EXPECT_FALSE(claim->passed);
  EXPECT_CONTAINS(claim->failure, "op 'mc_double_race' declares itself multi-core (metadata_mc_double_race), but its "
                                  "run on 2 cores failed: ");
  EXPECT_CONTAINS(claim->failure, "cross-core race");
  EXPECT_CONTAINS(claim->failure, "gf_mc_double_rows");
}

TEST(MultiCoreClaim, TheSampleLinearDeclaresItselfAndKeepsTheClaim) {
  REQUIRE_GROUP_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::OpReport r = tr::OpTester()
                               .op("linear")
                               .input_shape({37, 20})
                               .input_shape({9, 20})
                               .params(R"({"has_bias": 0, "do_relu": 0})")
                               .chip(chip)
                               .libraries(test::group_fixture_libraries(chip))
                               .exact()
                               .run();
    EXPECT_TRUE(r.passed) << r.summary();
    EXPECT_TRUE(r.metadata.multi_core);
    const tr::OpCaseResult *claim = r.find("multi-core claim");
    ASSERT_NE(claim, nullptr) << r.summary();
    EXPECT_TRUE(claim->passed) << claim->failure;
  }
}

}  // namespace
