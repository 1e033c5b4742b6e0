// bdc_pool_fast_test: the fast path of fp max / min pooling (order keys,
// separable rows then columns; cmodel/bdc/pool.cc) leaves exactly the local
// memory the general per-tap path leaves, which stays the reference (its
// own correctness against the spec is bdc_pool_test's and
// bdc_pool_extra_test's job).
//
// Random geometries (kernels, strides, dilations, paddings, the common 2x2 /
// stride 2 window often), fp32 / fp16 / bf16, max and min, both chips, any
// start NPU, output overlapping the input; inputs with zeros of both signs,
// subnormals and infinities, pad values of every kind (a NaN pad and NaN
// inputs make the fast path hand the plane back to the general one). Each
// case runs with the fast path off, then on with each implementation the
// host has (portable, AVX2), from the same starting memory.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cmodel/bdc/pool.h"
#include "cmodel/numeric/bulk_convert.h"
#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;
using cmodel::numeric::BulkIsa;

struct Call {
  bool is_max;
  data_type_t dtype;
  local_addr_t out, in;
  dim4 shape;
  dim2 kernel, stride, dilation;
  padding_t pad;
  scalar_t pad_val;
};

void pool_kernel(const void *arg) {
  const auto &k = *static_cast<const Call *>(arg);
  if (k.is_max)
    tpu_bdc_fp_max_pool2d(k.out, k.in, &k.shape, &k.kernel, &k.pad, &k.stride, &k.dilation, k.dtype, k.pad_val);
  else
    tpu_bdc_fp_min_pool2d(k.out, k.in, &k.shape, &k.kernel, &k.pad, &k.stride, &k.dilation, k.dtype, k.pad_val);
}

int out_extent(int in, int lo, int hi, int kernel, int stride, int dilation) {
  const int padded = in + lo + hi, span = dilation * (kernel - 1) + 1;
  return padded >= span ? (padded - span) / stride + 1 : 0;
}

std::string describe_call(const Call &k) {
  return std::string(k.is_max ? "max" : "min") + " " + dtype_label(k.dtype) + " input " + describe(k.shape) +
         " kernel " + std::to_string(k.kernel.h) + "x" + std::to_string(k.kernel.w) + " stride " +
         std::to_string(k.stride.h) + "x" + std::to_string(k.stride.w) + " dilation " + std::to_string(k.dilation.h) +
         "x" + std::to_string(k.dilation.w) + " pad " + std::to_string(k.pad.top) + "," + std::to_string(k.pad.bottom) +
         "," + std::to_string(k.pad.left) + "," + std::to_string(k.pad.right) + " pad_val " + test::hex(k.pad_val.u32);
}

// Encodings the order-key comparison must get right.
uint32_t special_bits(test::Seeded &s, data_type_t t) {
  const bool wide = t == DT_FP32;
  const uint32_t sign = wide ? 0x80000000u : 0x8000u;
  const uint32_t inf = t == DT_FP32 ? 0x7f800000u : t == DT_FP16 ? 0x7c00u : 0x7f80u;
  const uint32_t s_bit = s.uniform(0, 1) ? sign : 0;
  switch (s.uniform(0, 3)) {
    case 0: return s_bit;                                       // +-0
    case 1: return s_bit | inf;                                 // +-inf
    case 2: return s_bit | uint32_t(s.uniform(1, 3));           // tiny subnormals
    default: return s_bit | (inf - uint32_t(s.uniform(1, 3)));  // near the largest finite
  }
}

uint32_t nan_bits(test::Seeded &s, data_type_t t) {
  const uint32_t inf = t == DT_FP32 ? 0x7f800000u : t == DT_FP16 ? 0x7c00u : 0x7f80u;
  const uint32_t sign = s.uniform(0, 1) ? (t == DT_FP32 ? 0x80000000u : 0x8000u) : 0;
  return sign | inf | uint32_t(s.uniform(1, 5));  // signalling (and quiet when the quiet bit is hit)
}

class BdcPoolFast : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  void TearDown() override {
    cmodel::bdc::set_fp_pool_fast_path(true);
    cmodel::numeric::set_bulk_convert_isa(best);
    ChipTest::TearDown();
  }
  Chip chip;
  const BulkIsa best = cmodel::numeric::bulk_convert_isa();
};

TEST_P(BdcPoolFast, FastPathLeavesWhatTheGeneralPathLeaves) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t dtypes[] = {DT_FP32, DT_FP16, DT_BFP16};
  int ran = 0, plain_two_by_two = 0;
  for (int iter = 0; iter < test::rounds(300); ++iter) {
    Call k{};
    k.is_max = iter % 2 == 0;
    k.dtype = dtypes[seeded.uniform(0, 2)];
    k.shape = {seeded.uniform(1, 2), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 12),
               seeded.uniform(1, 70)};
    const bool two_by_two = seeded.uniform(0, 2) == 0;
    if (two_by_two) {
      k.kernel = {2, 2}, k.stride = {2, 2}, k.dilation = {1, 1};
    } else {
      k.kernel = {seeded.uniform(1, 4), seeded.uniform(1, 5)};
      k.stride = {seeded.uniform(1, 3), seeded.uniform(1, 3)};
      k.dilation = {seeded.uniform(0, 3) ? 1 : 2, seeded.uniform(0, 3) ? 1 : 3};
    }
    k.pad = {seeded.uniform(0, 3), seeded.uniform(0, 3), seeded.uniform(0, 3), seeded.uniform(0, 3)};
    // Half of the 2x2 windows without padding: the one-pass 2x2 path.
    if (two_by_two && iter % 4 < 2) k.pad = {0, 0, 0, 0};
    if (two_by_two && iter % 4 == 0) k.dtype = DT_FP32;  // max, fp32: its own vector path
    plain_two_by_two += two_by_two && k.pad.top == 0 && k.pad.left == 0 && k.pad.bottom == 0 && k.pad.right == 0;
    const int pad_kind = seeded.uniform(0, 9);
    k.pad_val.u32 = pad_kind == 0   ? nan_bits(seeded, k.dtype)
                    : pad_kind <= 3 ? special_bits(seeded, k.dtype)
                                    : random_float_bits(rng, k.dtype);
    const int oh = out_extent(k.shape.h, k.pad.top, k.pad.bottom, k.kernel.h, k.stride.h, k.dilation.h);
    const int ow = out_extent(k.shape.w, k.pad.left, k.pad.right, k.kernel.w, k.stride.w, k.dilation.w);
    if (oh < 1 || ow < 1) continue;
    const dim4 out_shape = {k.shape.n, k.shape.c, oh, ow};
    const int npu = seeded.uniform(0, chip.npu - 1);
    const bool overlap = seeded.uniform(0, 3) == 0;
    const uint32_t half = chip.lmem / 2 / 64 * 64;
    if (aligned_bytes(chip, npu, k.shape, k.dtype) > half || aligned_bytes(chip, npu, out_shape, k.dtype) > half)
      continue;
    const Tensor in = aligned(chip, npu, 0, k.shape, k.dtype);
    const Tensor out = aligned(chip, npu, overlap ? 0 : half, out_shape, k.dtype);
    k.in = in.addr;
    k.out = out.addr;
    const bool with_nans = seeded.uniform(0, 4) == 0;
    for_each_index(k.shape, [&](int n, int c, int h, int w) {
      const int kind = seeded.uniform(0, 99);
      const uint32_t v = with_nans && kind == 0 ? nan_bits(seeded, k.dtype)
                         : kind < 15            ? special_bits(seeded, k.dtype)
                                                : random_float_bits(rng, k.dtype);
      set_bits(chip, in, n, c, h, w, v);
    });
    const std::vector<uint8_t> start = snapshot(chip);
    auto context = [&] {
      return describe_call(k) + " NPU " + std::to_string(npu) + (overlap ? " overlapping" : "") +
             (with_nans ? " with NaNs" : "") + " iteration " + std::to_string(iter);
    };

    cmodel::bdc::set_fp_pool_fast_path(false);
    ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << context() << ": " << cmodel_last_error();
    const std::vector<uint8_t> general = snapshot(chip);
    cmodel::bdc::set_fp_pool_fast_path(true);
    for (BulkIsa isa : {BulkIsa::portable, BulkIsa::f16c_avx2}) {
      if (isa == BulkIsa::f16c_avx2 && best != BulkIsa::f16c_avx2) continue;
      cmodel::numeric::set_bulk_convert_isa(isa);
      local_image::write(start);
      ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << context() << ": " << cmodel_last_error();
      expect_local_memory(chip, general, [&] { return context() + " " + cmodel::numeric::bulk_isa_name(isa); });
    }
    cmodel::numeric::set_bulk_convert_isa(best);
    ++ran;
  }
  EXPECT_GT(ran, test::rounds(300) * 2 / 3);  // at least two thirds of the rounds ran
  EXPECT_GT(plain_two_by_two, test::rounds(300) / 15);
}

// The output differs from the input: the comparison above is not vacuous
// (the general path wrote something the fast one had to reproduce).
TEST_P(BdcPoolFast, TheBenchWindowWritesTheWindowMaxima) {
  Call k{};
  k.is_max = true;
  k.dtype = DT_FP16;
  k.shape = {1, 2, 2, 4};
  k.kernel = k.stride = {2, 2};
  k.dilation = {1, 1};
  const Tensor in = aligned(chip, 0, 0, k.shape, k.dtype);
  const Tensor out = aligned(chip, 0, chip.lmem / 2, {1, 2, 1, 2}, k.dtype);
  k.in = in.addr, k.out = out.addr;
  // Channel 0: -0 and +0 (max is +0), -1 and -2 (max -1).
  const uint32_t c0[2][4] = {{0x8000, 0x0000, 0xbc00, 0xc000}, {0x8000, 0x8000, 0xc000, 0xc000}};
  for_each_index(k.shape, [&](int n, int c, int h, int w) { set_bits(chip, in, n, c, h, w, c == 0 ? c0[h][w] : 0x3c00); });
  ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get_bits(chip, out, 0, 0, 0, 0), 0x0000u);
  EXPECT_EQ(get_bits(chip, out, 0, 0, 0, 1), 0xbc00u);
  EXPECT_EQ(get_bits(chip, out, 0, 1, 0, 0), 0x3c00u);
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcPoolFast, ::testing::Values("bm1684x", "bm1688"),
                         [](const testing::TestParamInfo<const char *> &info) { return std::string(info.param); });

}  // namespace
