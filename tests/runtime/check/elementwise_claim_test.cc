// elementwise_claim_test: the op tester and an op's element-wise claim
// (metadata_<op>, tpu_op_metadata.h), on the layer-group fixture set
// (tests/runtime/groups/fixtures, TPU_GROUP_FIXTURES_DIR):
//   - ewdouble (out = x + x) declares element-wise and has no shape, slice
//     or local hook: it passes on both chips, its local slicings included,
//     and the claim case passes;
//   - vsum3_ew sums each row with its neighbours yet claims element-wise:
//     the claim case fails naming the axis, the first differing element and
//     both values, which the test works out by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/op_tester.h"
#include "support/group_fixtures.h"
#include "support/test_support.h"

namespace {

namespace tr = tpu_runtime;

TEST(ElementWiseClaim, AnElementWiseOpWithoutHooksPassesWithItsSlicings) {
  REQUIRE_GROUP_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"})
    for (const tr::Dtype dtype : {tr::Dtype::fp32, tr::Dtype::fp16}) {
      SCOPED_TRACE(fmt::format("{} {}", chip, tr::dtype_name(dtype)));
      const tr::OpReport r = tr::OpTester()
                                 .op("ewdouble")
                                 .input_shape({3, 5, 9, 11})
                                 .dtype(dtype)
                                 .chip(chip)
                                 .libraries(test::group_fixture_libraries(chip))
                                 .exact()
                                 .run();
      EXPECT_TRUE(r.passed) << r.summary();
      EXPECT_EQ(r.output_shapes, (std::vector<tr::Shape>{{3, 5, 9, 11}}));
      EXPECT_TRUE(r.metadata.elementwise && r.metadata.stateless);
      EXPECT_CONTAINS(r.summary(), "metadata: element-wise, stateless, in-place inputs 0");
      const tr::OpCaseResult *claim = r.find("element-wise claim");
      ASSERT_NE(claim, nullptr) << r.summary();
      EXPECT_TRUE(claim->passed) << claim->failure;
      // No local_gen_support_ewdouble: the claim alone lets it run slice by slice.
      int local = 0;
      for (const tr::OpCaseResult &c : r.cases) local += c.name.rfind("local", 0) == 0;
      EXPECT_GE(local, 2) << r.summary();
    }
}

TEST(ElementWiseClaim, AFalseClaimIsCaughtAtTheFirstDifferingElement) {
  REQUIRE_GROUP_FIXTURES();
  // Rows of 2 columns, values chosen so the sums are exact: input[n][c][h][w]
  // = h + 1, so vsum3 gives 1+2 = 3 at h = 0, and (h) + (h+1) + (h+2) inside.
  const tr::Shape shape = {1, 1, 6, 2};
  std::vector<float> x;
  for (int h = 0; h < 6; ++h)
    for (int w = 0; w < 2; ++w) x.push_back(float(h + 1));
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::OpReport r = tr::OpTester()
                               .op("vsum3_ew")
                               .input_shape(shape)
                               .input_values({x})
                               .chip(chip)
                               .libraries(test::group_fixture_libraries(chip))
                               .run();
    EXPECT_FALSE(r.passed);
    const tr::OpCaseResult *claim = r.find("element-wise claim");
    ASSERT_NE(claim, nullptr) << r.summary();
    EXPECT_FALSE(claim->passed);
    // Axes 0 and 1 have extent 1; axis 2 (6 rows) is cut at row 2. On the
    // piece of rows 0..1, row 1 lacks its neighbour row 2 (value 3): it is
    // 1 + 2 = 3 there and 1 + 2 + 3 = 6 on the whole, at index 2 [0,0,1,0].
    EXPECT_CONTAINS(claim->failure, "op 'vsum3_ew' declares itself element-wise (metadata_vsum3_ew), but its "
                                    "reference inference_vsum3_ew on the inputs' elements 0..1 of axis 2 differs from "
                                    "its reference on the whole inputs: output 0 at index 2 [0,0,1,0] is 3 computed "
                                    "on the piece, 6 on the whole");
    // The global runs still agree with the reference: only the claim is false.
    EXPECT_TRUE(r.find("global backend")->passed) << r.summary();
  }
}

TEST(ElementWiseClaim, AnOpWithoutMetadataGetsNoClaimCase) {
  REQUIRE_GROUP_FIXTURES();
  const tr::OpReport r = tr::OpTester()
                             .op("vsum3")
                             .input_shape({1, 2, 6, 4})
                             .libraries(test::group_fixture_libraries("bm1684x"))
                             .global_only()
                             .run();
  EXPECT_TRUE(r.passed) << r.summary();
  EXPECT_FALSE(r.metadata.declared);
  EXPECT_EQ(r.find("element-wise claim"), nullptr);
  EXPECT_CONTAINS(r.summary(), "metadata: none declared");
}

}  // namespace
