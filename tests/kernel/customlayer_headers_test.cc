// customlayer_headers_test: the custom-layer glue headers against the
// vendor reference (tpu-kernel-api-current.md §4.7, §4.8; compatibility
// tests 13 and 14): the sg_round_mode_t numbering and what a compiler-
// written round mode does in a cast, the api_common.h helper types and
// PARSE_PARAM, and the api_utils.h shape folding and slice helpers.
//
// Every expected value is written out from the reference's rule, never
// computed with the code under test. The C half (customlayer_headers_c.c)
// checks the signatures by compiling and holds the C custom layer run here.
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "api_common.h"
#include "api_utils.h"
#include "cmodel_host.h"
#include "common_def.h"
#include "tpu_kernel.h"
#include "tpu_utils.h"

extern "C" {
// customlayer_headers_c.c
struct hdr_round_call_t {
  const void *param;
  global_addr_t input;
  global_addr_t output;
  int count;
  float values[16];
  int32_t scalar_out[16];
};
void hdr_round_kernel(const void *args);
int hdr_convert_round_mode(int sg_mode);
int hdr_convert_round_mode_8_implicitly(void);
int hdr_parse_without_semicolon(const void *param);
float hdr_parse_with_semicolon(const void *param);
void hdr_parse_example(dim4 *nchw, dim5 *normal, dim5 *group3d);
}

namespace {

// ---- §4.7 item 48: sg_round_mode_t ------------------------------------------

TEST(SgRoundMode, NumberingIsTheCompilers) {
  EXPECT_EQ(SG_ROUND_INF, 0);
  EXPECT_EQ(SG_ROUND_UP, 1);
  EXPECT_EQ(SG_ROUND_DOWN, 2);
  EXPECT_EQ(SG_ROUND_EVEN, 3);
  EXPECT_EQ(SG_ROUND_ODD, 4);
  EXPECT_EQ(SG_ROUND_ZERO, 5);
  EXPECT_EQ(SG_TRIM_ZERO, 6);
  EXPECT_EQ(SG_TRIM_INF, 7);
  EXPECT_EQ(SG_TRIM_UP, 8);
  EXPECT_EQ(SG_TRIM_DOWN, 9);
}

TEST(SgRoundMode, ConvertMapsByName) {
  EXPECT_EQ(tpu_round_mode_convert(sg_round_mode_t(8)), RM_UP);
  EXPECT_EQ(tpu_round_mode_convert(sg_round_mode_t(9)), RM_DOWN);
  EXPECT_EQ(hdr_convert_round_mode_8_implicitly(), RM_UP);  // tpu_round_mode_convert(8) in C
  EXPECT_EQ(hdr_convert_round_mode(8), RM_UP);
  EXPECT_EQ(hdr_convert_round_mode(9), RM_DOWN);
  EXPECT_EQ(hdr_convert_round_mode(0), RM_HALF_AWAY_FROM_ZERO);
  EXPECT_EQ(hdr_convert_round_mode(1), RM_HALF_UP);
  EXPECT_EQ(hdr_convert_round_mode(2), RM_HALF_DOWN);
  EXPECT_EQ(hdr_convert_round_mode(3), RM_HALF_TO_EVEN);
  EXPECT_EQ(hdr_convert_round_mode(6), RM_TOWARDS_ZERO);
}

// The parameter array a custom layer gets: element 0 reserved, then the
// user's parameters (round mode, an unused scale).
std::vector<custom_param_t> round_params(int sg_mode) {
  std::vector<custom_param_t> params(3);
  std::memset(params.data(), 0, params.size() * sizeof(custom_param_t));
  params[1].int_t = sg_mode;
  params[2].float_t = 0.5f;
  return params;
}

class RoundModeLayer : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }

  // Runs the C layer on kInputs with the given sg round mode; the results
  // of the tensor cast and of the scalar cast.
  struct Results {
    std::vector<int32_t> tensor, scalar;
  };
  Results run(int sg_mode) {
    const std::vector<custom_param_t> params = round_params(sg_mode);
    hdr_round_call_t call{};
    call.param = params.data();
    call.count = int(std::size(kInputs));
    std::memcpy(call.values, kInputs, sizeof kInputs);
    call.input = cmodel_global_alloc(sizeof kInputs);
    call.output = cmodel_global_alloc(sizeof kInputs);
    EXPECT_EQ(cmodel_global_write(call.input, kInputs, sizeof kInputs), 0);
    Results r;
    EXPECT_EQ(cmodel_run(hdr_round_kernel, &call), 0) << cmodel_last_error();
    r.tensor.resize(std::size(kInputs));
    EXPECT_EQ(cmodel_global_read(r.tensor.data(), call.output, sizeof kInputs), 0);
    r.scalar.assign(call.scalar_out, call.scalar_out + std::size(kInputs));
    cmodel_global_free(call.input);
    cmodel_global_free(call.output);
    return r;
  }

  static constexpr float kInputs[] = {1.4f, -1.6f, 1.5f, -1.5f, 2.5f, -2.5f, 0.0f, -0.3f};
};

// §5 item 13: a compiler-written mode 8 is TRIM_UP, i.e. ceil.
TEST_P(RoundModeLayer, Mode8IsCeil) {
  const Results r = run(8);
  EXPECT_EQ(r.tensor[0], 2);   // 1.4
  EXPECT_EQ(r.tensor[1], -1);  // -1.6
  EXPECT_EQ(r.scalar[0], 2);
  EXPECT_EQ(r.scalar[1], -1);
  const std::vector<int32_t> ceil = {2, -1, 2, -1, 3, -2, 0, 0};
  EXPECT_EQ(r.tensor, ceil);
  EXPECT_EQ(r.scalar, ceil);
}

TEST_P(RoundModeLayer, Mode9IsFloor) {
  const Results r = run(9);
  const std::vector<int32_t> floor = {1, -2, 1, -2, 2, -3, 0, -1};
  EXPECT_EQ(r.tensor, floor);
  EXPECT_EQ(r.scalar, floor);
}

// The other modes with a tpu-kernel equivalent, from their names
// (inputs 1.4, -1.6, 1.5, -1.5, 2.5, -2.5, 0, -0.3).
TEST_P(RoundModeLayer, ModesWithATpuKernelEquivalent) {
  const struct {
    int mode;
    std::vector<int32_t> expected;
  } cases[] = {
      {SG_ROUND_INF, {1, -2, 2, -2, 3, -3, 0, 0}},   // ties away from zero
      {SG_ROUND_UP, {1, -2, 2, -1, 3, -2, 0, 0}},    // ties toward +inf
      {SG_ROUND_DOWN, {1, -2, 1, -2, 2, -3, 0, 0}},  // ties toward -inf
      {SG_ROUND_EVEN, {1, -2, 2, -2, 2, -2, 0, 0}},  // ties to even
      {SG_TRIM_ZERO, {1, -1, 1, -1, 2, -2, 0, 0}},   // truncate
  };
  for (const auto &c : cases) {
    SCOPED_TRACE("sg round mode " + std::to_string(c.mode));
    const Results r = run(c.mode);
    EXPECT_EQ(r.tensor, c.expected);
    EXPECT_EQ(r.scalar, c.expected);
  }
}

// ROUND_ODD, ROUND_ZERO and TRIM_INF have no tpu-kernel rounding mode: the
// conversion stops the layer and names the value.
TEST_P(RoundModeLayer, ModesWithoutEquivalentStopTheLayer) {
  for (int mode : {SG_ROUND_ODD, SG_ROUND_ZERO, SG_TRIM_INF}) {
    const std::vector<custom_param_t> params = round_params(mode);
    hdr_round_call_t call{};
    call.param = params.data();
    call.count = 1;
    EXPECT_NE(cmodel_run(hdr_round_kernel, &call), 0);
    const std::string m = cmodel_last_error();
    EXPECT_NE(m.find("sg_round_mode_t " + std::to_string(mode) + " has no tpu-kernel rounding mode"),
              std::string::npos)
        << m;
  }
}

INSTANTIATE_TEST_SUITE_P(Chips, RoundModeLayer, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

// ---- §4.7 items 51-54: api_common.h -----------------------------------------

TEST(ApiCommon, HelperTypesAreTheVendors) {
  static_assert(std::is_same_v<decltype(get_real_param_ptr(nullptr)), void *>);
  static_assert(std::is_same_v<decltype(get_global_buffer_addr(nullptr)), int64_t>);
  static_assert(std::is_same_v<struct local_tensor_spec, tensor_spec_t>);
  static_assert(std::is_same_v<struct local_sec_info, local_sec_info_t>);
  static_assert(std::is_same_v<local_tensor_spec_t, tensor_spec_t>);
}

TEST(ApiCommon, RealParamPtrIsElementOne) {
  custom_param_t params[3] = {};
  EXPECT_EQ(get_real_param_ptr(params), static_cast<void *>(&params[1]));
}

TEST(ApiCommon, GlobalBufferAddrReadsTheFirstEightBytesSigned) {
  custom_param_t params[2] = {};
  const int64_t address = 0x123456789abc;
  std::memcpy(&params[0], &address, sizeof address);
  EXPECT_EQ(get_global_buffer_addr(params), int64_t{0x123456789abc});
  const int64_t minus_one = -1;
  std::memcpy(&params[0], &minus_one, sizeof minus_one);
  EXPECT_EQ(get_global_buffer_addr(params), -1);
}

TEST(ApiCommon, ParseParamWithAndWithoutSemicolon) {
  const std::vector<custom_param_t> params = round_params(8);
  EXPECT_EQ(hdr_parse_without_semicolon(params.data()), 8);
  EXPECT_EQ(hdr_parse_with_semicolon(params.data()), 0.5f);
}

// ---- §4.8: api_utils.h ---------------------------------------------------------

void expect_dim4(const dim4 &d, int n, int c, int h, int w) {
  EXPECT_EQ(d.n, n);
  EXPECT_EQ(d.c, c);
  EXPECT_EQ(d.h, h);
  EXPECT_EQ(d.w, w);
}

void expect_dim5(const dim5 &d, int n, int c, int dd, int h, int w) {
  EXPECT_EQ(d.n, n);
  EXPECT_EQ(d.c, c);
  EXPECT_EQ(d.d, dd);
  EXPECT_EQ(d.h, h);
  EXPECT_EQ(d.w, w);
}

TEST(ApiUtils, ReferenceExampleFromC) {
  dim4 nchw{};
  dim5 normal{}, group3d{};
  hdr_parse_example(&nchw, &normal, &group3d);
  expect_dim4(nchw, 2, 3, 4, 30);
  expect_dim5(normal, 2, 3, 1, 4, 30);
  expect_dim5(group3d, 2, 3, 4, 5, 6);
}

TEST(ApiUtils, Rank5) {
  const int shape[] = {2, 3, 4, 5, 6};
  dim4 d4{};
  dim5 d5{};
  parse_NCHW(shape, 5, &d4);
  expect_dim4(d4, 2, 3, 4, 30);
  parse_NCDHW(GROUP_NORMAL, shape, 5, &d5);
  expect_dim5(d5, 2, 3, 1, 4, 30);
  parse_NCDHW(GROUP_3D, shape, 5, &d5);
  expect_dim5(d5, 2, 3, 4, 5, 6);
}

TEST(ApiUtils, RanksBelowFourPadWithOnes) {
  const int shape[] = {7, 8, 9};
  for (int group : {GROUP_NORMAL, GROUP_3D}) {
    SCOPED_TRACE("group type " + std::to_string(group));
    dim5 d5{};
    parse_NCDHW(group, shape, 0, &d5);
    expect_dim5(d5, 1, 1, 1, 1, 1);
    parse_NCDHW(group, shape, 1, &d5);
    expect_dim5(d5, 7, 1, 1, 1, 1);
    parse_NCDHW(group, shape, 2, &d5);
    expect_dim5(d5, 7, 8, 1, 1, 1);
    parse_NCDHW(group, shape, 3, &d5);
    expect_dim5(d5, 7, 8, 1, 9, 1);
  }
  dim4 d4{};
  parse_NCHW(shape, 0, &d4);
  expect_dim4(d4, 1, 1, 1, 1);
  parse_NCHW(shape, 1, &d4);
  expect_dim4(d4, 7, 1, 1, 1);
  parse_NCHW(shape, 2, &d4);
  expect_dim4(d4, 7, 8, 1, 1);
  parse_NCHW(shape, 3, &d4);
  expect_dim4(d4, 7, 8, 9, 1);
}

TEST(ApiUtils, Rank4AndAbove) {
  const int shape[] = {2, 3, 4, 5, 6, 7, 1, 2};
  dim4 d4{};
  dim5 d5{};
  parse_NCHW(shape, 4, &d4);
  expect_dim4(d4, 2, 3, 4, 5);
  // A rank-4 tensor has no depth even in a 3D group.
  parse_NCDHW(GROUP_3D, shape, 4, &d5);
  expect_dim5(d5, 2, 3, 1, 4, 5);
  parse_NCHW(shape, 8, &d4);
  expect_dim4(d4, 2, 3, 4, 5 * 6 * 7 * 1 * 2);
  parse_NCDHW(GROUP_NORMAL, shape, 8, &d5);
  expect_dim5(d5, 2, 3, 1, 4, 5 * 6 * 7 * 1 * 2);
  parse_NCDHW(GROUP_3D, shape, 8, &d5);
  expect_dim5(d5, 2, 3, 4, 5, 6 * 7 * 1 * 2);
}

TEST(ApiUtils, IsTrue3d) {
  EXPECT_FALSE(get_is_true3d(GROUP_NORMAL, 5));
  EXPECT_FALSE(get_is_true3d(GROUP_3D, 4));
  EXPECT_TRUE(get_is_true3d(GROUP_3D, 5));
  EXPECT_TRUE(get_is_true3d(GROUP_3D, 8));
}

tensor_spec_t spec_of(std::initializer_list<int> shape) {
  tensor_spec_t spec{};
  spec.dtype = SG_DTYPE_FP32;
  for (int v : shape) spec.shape[spec.dims++] = v;
  return spec;
}

// Distinct slice extents, so each can be told apart; C is not split.
local_sec_info_t slice_info(int group_type) {
  local_sec_info_t sec{};
  sec.group_type = group_type;
  sec.n_slice = 11;
  sec.out_n_slice = 12;
  sec.d_slice = 13;
  sec.h_slice = 14;
  sec.out_h_slice = 15;
  sec.w_slice = 16;
  sec.out_w_slice = 17;
  sec.is_c_split = 0;
  sec.c_slice = 18;
  return sec;
}

TEST(ApiUtils, SliceHelpersTakeCSliceWhenCIsNotSplit) {
  const local_sec_info_t sec = slice_info(GROUP_NORMAL);
  const tensor_spec_t spec = spec_of({2, 3, 4, 5});
  int in5[5] = {}, out5[5] = {}, in4[4] = {}, out4[4] = {};
  parse_input_slice_shape_with_d(&sec, &spec, in5);
  parse_output_slice_shape_with_d(&sec, &spec, out5);
  parse_input_slice_shape(&sec, &spec, in4);
  parse_output_slice_shape(&sec, &spec, out4);
  EXPECT_EQ(std::vector<int>(in5, in5 + 5), (std::vector<int>{11, 18, 1, 14, 16}));
  EXPECT_EQ(std::vector<int>(out5, out5 + 5), (std::vector<int>{12, 18, 1, 15, 17}));
  EXPECT_EQ(std::vector<int>(in4, in4 + 4), (std::vector<int>{11, 18, 14, 16}));
  EXPECT_EQ(std::vector<int>(out4, out4 + 4), (std::vector<int>{12, 18, 15, 17}));
}

TEST(ApiUtils, SliceHelpersKeepFullExtentsOfOne) {
  const local_sec_info_t sec = slice_info(GROUP_NORMAL);
  const tensor_spec_t spec = spec_of({1, 1, 4, 1});
  int in4[4] = {}, out4[4] = {};
  parse_input_slice_shape(&sec, &spec, in4);
  parse_output_slice_shape(&sec, &spec, out4);
  EXPECT_EQ(std::vector<int>(in4, in4 + 4), (std::vector<int>{1, 1, 14, 1}));
  EXPECT_EQ(std::vector<int>(out4, out4 + 4), (std::vector<int>{1, 1, 15, 1}));
}

TEST(ApiUtils, SliceHelpersRank5) {
  const tensor_spec_t spec = spec_of({2, 3, 4, 5, 6});
  int with_d[5] = {}, folded[4] = {};
  // Outside a 3D group depth is 1 (the dims after C are h = 4, w = 5 * 6).
  const local_sec_info_t normal = slice_info(GROUP_NORMAL);
  parse_input_slice_shape_with_d(&normal, &spec, with_d);
  EXPECT_EQ(std::vector<int>(with_d, with_d + 5), (std::vector<int>{11, 18, 1, 14, 16}));
  parse_input_slice_shape(&normal, &spec, folded);
  EXPECT_EQ(std::vector<int>(folded, folded + 4), (std::vector<int>{11, 18, 14, 16}));
  // In a 3D group depth takes d_slice and folds into n.
  const local_sec_info_t group3d = slice_info(GROUP_3D);
  parse_input_slice_shape_with_d(&group3d, &spec, with_d);
  EXPECT_EQ(std::vector<int>(with_d, with_d + 5), (std::vector<int>{11, 18, 13, 14, 16}));
  parse_output_slice_shape_with_d(&group3d, &spec, with_d);
  EXPECT_EQ(std::vector<int>(with_d, with_d + 5), (std::vector<int>{12, 18, 13, 15, 17}));
  parse_input_slice_shape(&group3d, &spec, folded);
  EXPECT_EQ(std::vector<int>(folded, folded + 4), (std::vector<int>{11 * 13, 18, 14, 16}));
  parse_output_slice_shape(&group3d, &spec, folded);
  EXPECT_EQ(std::vector<int>(folded, folded + 4), (std::vector<int>{12 * 13, 18, 15, 17}));
}

}  // namespace
