// bdc_vector_cross_test: the vector-cross commands (tpu_bdc_vc_*,
// fp_vc_*, fp32_vc_div, int_vc_*) against an independent host model:
// dst[i][j] = src0[i] OP src1[j] with src0 / src1 in vector layout and dst
// in matrix layout (src1_len_per_channel columns per channel), compared bit
// for bit over the whole local memory (so the padding columns of a last
// partial channel must keep their bytes). Random lengths, columns per
// channel, start NPUs and dtypes on both chips; then the checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "support/local_model.h"
#include "support/run_body.h"
#include "support/test_support.h"

namespace {

using namespace local_model;

enum class Op { and_, or_, xor_, min, max, greater, less, equal, greater_equal, less_equal, not_equal, fp_add, fp_sub,
                fp_mul, fp32_div, int_add, int_sub, int_mul };
constexpr int kOps = int(Op::int_mul) + 1;

struct Case {
  Op op;
  int len0, len1, per0, per1;
  data_type_t dst_dtype, src0_dtype, src1_dtype;
  bool saturation = false;
  scalar_t true_val{};
  Tensor dst, src0, src1;
};

void call(const Case &k) {
  const local_addr_t d = k.dst.addr, a = k.src0.addr, b = k.src1.addr;
  const int l0 = k.len0, l1 = k.len1, p0 = k.per0, p1 = k.per1;
  const data_type_t t = k.src0_dtype;
  switch (k.op) {
    case Op::and_: return tpu_bdc_vc_and(d, a, b, l0, l1, p0, p1, t);
    case Op::or_: return tpu_bdc_vc_or(d, a, b, l0, l1, p0, p1, t);
    case Op::xor_: return tpu_bdc_vc_xor(d, a, b, l0, l1, p0, p1, t);
    case Op::min: return tpu_bdc_vc_min(d, a, b, l0, l1, p0, p1, t);
    case Op::max: return tpu_bdc_vc_max(d, a, b, l0, l1, p0, p1, t);
    case Op::greater: return tpu_bdc_vc_greater(d, a, b, k.true_val, l0, l1, p0, p1, k.dst_dtype, t);
    case Op::less: return tpu_bdc_vc_less(d, a, b, k.true_val, l0, l1, p0, p1, k.dst_dtype, t);
    case Op::equal: return tpu_bdc_vc_equal(d, a, b, k.true_val, l0, l1, p0, p1, k.dst_dtype, t);
    case Op::greater_equal: return tpu_bdc_vc_greater_equal(d, a, b, k.true_val, l0, l1, p0, p1, k.dst_dtype, t);
    case Op::less_equal: return tpu_bdc_vc_less_equal(d, a, b, k.true_val, l0, l1, p0, p1, k.dst_dtype, t);
    case Op::not_equal: return tpu_bdc_vc_not_equal(d, a, b, k.true_val, l0, l1, p0, p1, k.dst_dtype, t);
    case Op::fp_add: return tpu_bdc_fp_vc_add(d, a, b, l0, l1, p0, p1, t);
    case Op::fp_sub: return tpu_bdc_fp_vc_sub(d, a, b, l0, l1, p0, p1, t);
    case Op::fp_mul: return tpu_bdc_fp_vc_mul(d, a, b, l0, l1, p0, p1, t);
    case Op::fp32_div: return tpu_bdc_fp32_vc_div(d, a, b, l0, l1, p0, p1);
    case Op::int_add:
      return tpu_bdc_int_vc_add(d, a, b, l0, l1, p0, p1, k.dst_dtype, t, k.src1_dtype, k.saturation);
    case Op::int_sub:
      return tpu_bdc_int_vc_sub(d, a, b, l0, l1, p0, p1, k.dst_dtype, t, k.src1_dtype, k.saturation);
    case Op::int_mul:
      return tpu_bdc_int_vc_mul(d, a, b, l0, l1, p0, p1, k.dst_dtype, t, k.src1_dtype, k.saturation);
  }
}

bool is_compare(Op op) { return op >= Op::greater && op <= Op::not_equal; }
bool is_fp(Op op) { return op >= Op::fp_add && op <= Op::fp32_div; }
bool is_int(Op op) { return op >= Op::int_add; }

const std::vector<data_type_t> kInts = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};
const std::vector<data_type_t> kFloats = {DT_FP32, DT_FP16, DT_BFP16};

bool is_float(data_type_t t) { return t == DT_FP32 || t == DT_FP16 || t == DT_BFP16; }

uint32_t mask_of(data_type_t t) { return esize(t) == 4 ? 0xffffffffu : (1u << (8 * esize(t))) - 1; }

// The model of one element: src0 element bits a, src1 element bits b.
uint32_t model(const Case &k, uint32_t a, uint32_t b) {
  const data_type_t t = k.src0_dtype;
  switch (k.op) {
    case Op::and_: return a & b;
    case Op::or_: return a | b;
    case Op::xor_: return a ^ b;
    case Op::min: case Op::max: {
      const bool a_wins = is_float(t) ? (float_of(t, a) < float_of(t, b)) == (k.op == Op::min)
                                      : (int_value(t, a) < int_value(t, b)) == (k.op == Op::min);
      return a_wins ? a : b;
    }
    default: break;
  }
  if (is_compare(k.op)) {
    const double x = is_float(t) ? float_of(t, a) : double(int_value(t, a));
    const double y = is_float(t) ? float_of(t, b) : double(int_value(t, b));
    bool r = false;
    switch (k.op) {
      case Op::greater: r = x > y; break;
      case Op::less: r = x < y; break;
      case Op::equal: r = x == y; break;
      case Op::greater_equal: r = x >= y; break;
      case Op::less_equal: r = x <= y; break;
      default: r = x != y; break;
    }
    return r ? k.true_val.u32 & mask_of(k.dst_dtype) : 0;
  }
  if (is_fp(k.op)) {
    const float x = float_of(t, a), y = float_of(t, b);
    const float r = k.op == Op::fp_add ? x + y : k.op == Op::fp_sub ? x - y : k.op == Op::fp_mul ? x * y : x / y;
    return bits_of(t, r);
  }
  // 128 bits: a product of two 32-bit values may not fit in 64.
  const __int128 x = int_value(t, a), y = int_value(k.src1_dtype, b);
  const __int128 r = k.op == Op::int_add ? x + y : k.op == Op::int_sub ? x - y : x * y;
  if (k.saturation)
    return uint32_t(int64_t(std::clamp<__int128>(r, int_min(k.dst_dtype), int_max(k.dst_dtype)))) & mask_of(k.dst_dtype);
  return uint32_t(r) & mask_of(k.dst_dtype);
}

class BdcVectorCross : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }

  // Random bits for an element of t: ordinary finite values for floats
  // (NaN payloads are the element-wise families' business).
  uint32_t random_element(test::Seeded &seeded, data_type_t t) {
    if (is_float(t)) return bits_of(t, float(seeded.uniform(-400, 400)) / 16.0f + 0.03125f);
    return uint32_t(seeded.rng()()) & mask_of(t);
  }

  Case random_case(test::Seeded &seeded) {
    Case k{};
    k.op = Op(seeded.uniform(0, kOps - 1));
    k.len0 = seeded.uniform(1, 12), k.len1 = seeded.uniform(1, 40);
    k.per0 = seeded.uniform(1, 8), k.per1 = seeded.uniform(1, 16);
    auto pick = [&](const std::vector<data_type_t> &from) { return from[size_t(seeded.uniform(0, int(from.size()) - 1))]; };
    std::vector<data_type_t> all = kInts;
    all.insert(all.end(), kFloats.begin(), kFloats.end());
    if (k.op <= Op::xor_) k.src0_dtype = pick(kInts);
    else if (k.op == Op::fp32_div) k.src0_dtype = DT_FP32;
    else if (is_fp(k.op)) k.src0_dtype = pick(kFloats);
    else if (is_int(k.op)) k.src0_dtype = pick(kInts);
    else k.src0_dtype = pick(all);
    k.src1_dtype = is_int(k.op) ? pick(kInts) : k.src0_dtype;
    k.dst_dtype = is_compare(k.op) ? pick(all) : is_int(k.op) ? pick(kInts) : k.src0_dtype;
    k.saturation = seeded.uniform(0, 1);
    k.true_val.u32 = uint32_t(seeded.rng()());
    const int start = seeded.uniform(0, chip.npu - 1);
    const uint32_t third = chip.lmem / 3 / 64 * 64;
    k.src0 = aligned(chip, start, 0, {1, (k.len0 + k.per0 - 1) / k.per0, 1, k.per0}, k.src0_dtype);
    k.src1 = aligned(chip, start, third, {1, (k.len1 + k.per1 - 1) / k.per1, 1, k.per1}, k.src1_dtype);
    k.dst = aligned(chip, start, 2 * third, {k.len0, (k.len1 + k.per1 - 1) / k.per1, 1, k.per1}, k.dst_dtype);
    for (const Tensor *t : {&k.src0, &k.src1, &k.dst})
      for_each_index(t->shape, [&](int n, int c, int h, int w) {
        set_bits(chip, *t, n, c, h, w, random_element(seeded, t->dtype));
      });
    return k;
  }

  uint32_t vector_bits(const Tensor &v, int per, int k) const { return get_bits(chip, v, 0, k / per, 0, k % per); }

  std::vector<uint8_t> expected_image(const Case &k) const {
    std::vector<uint8_t> expected = snapshot(chip);
    for (int i = 0; i < k.len0; ++i)
      for (int j = 0; j < k.len1; ++j)
        put(expected, chip, k.dst, i, j / k.per1, 0, j % k.per1,
            model(k, vector_bits(k.src0, k.per0, i), vector_bits(k.src1, k.per1, j)));
    return expected;
  }

  Chip chip;
};

std::string describe(const Case &k, int iteration) {
  return "op " + std::to_string(int(k.op)) + " lengths " + std::to_string(k.len0) + "/" + std::to_string(k.per0) +
         " x " + std::to_string(k.len1) + "/" + std::to_string(k.per1) + " dtypes dst " + std::to_string(k.dst_dtype) +
         " src0 " + std::to_string(k.src0_dtype) + " src1 " + std::to_string(k.src1_dtype) +
         (k.saturation ? " saturating" : "") + " iteration " + std::to_string(iteration);
}

TEST_P(BdcVectorCross, RandomCommandsMatchTheOuterModel) {
  test::Seeded seeded;
  for (int iteration = 0; iteration < 150; ++iteration) {
    const Case k = random_case(seeded);
    const std::vector<uint8_t> expected = expected_image(k);
    ASSERT_TRUE(test::run_kernel_body([&] { call(k); })) << describe(k, iteration) << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return describe(k, iteration); });
    if (::testing::Test::HasFailure()) break;
  }
}

// A known outer sum: dst[i][j] = i + 10 j, 3 columns per channel over 7
// columns (the last channel holds one valid column).
TEST_P(BdcVectorCross, AKnownOuterSum) {
  const Tensor rows = aligned(chip, 0, 0, {1, 1, 1, 4}, DT_FP32);
  const Tensor cols = aligned(chip, 0, 4096, {1, 3, 1, 3}, DT_FP32);
  const Tensor out = aligned(chip, 0, 8192, {4, 3, 1, 3}, DT_FP32);
  for (int i = 0; i < 4; ++i) set(chip, rows, 0, 0, 0, i, float(i));
  for (int j = 0; j < 7; ++j) set(chip, cols, 0, j / 3, 0, j % 3, float(10 * j));
  ASSERT_TRUE(test::run_kernel_body([&] { tpu_bdc_fp_vc_add(out.addr, rows.addr, cols.addr, 4, 7, 4, 3, DT_FP32); }))
      << cmodel_last_error();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 7; ++j) EXPECT_EQ(get<float>(chip, out, i, j / 3, 0, j % 3), float(i + 10 * j)) << i << " " << j;
}

TEST_P(BdcVectorCross, ChecksNameTheFunctionAndTheValue) {
  EXPECT_FALSE(test::run_kernel_body([] { tpu_bdc_fp_vc_mul(8192, 0, 4096, 0, 4, 1, 4, DT_FP32); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("tpu_bdc_fp_vc_mul: src0_len = 0; it must be in [1, 65535]"),
            std::string::npos)
      << cmodel_last_error();
  EXPECT_FALSE(test::run_kernel_body([] { tpu_bdc_vc_and(8192, 0, 4096, 4, 4, 4, 4, data_type_t(15)); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("tpu_bdc_vc_and"), std::string::npos) << cmodel_last_error();
  EXPECT_FALSE(test::run_kernel_body([] { tpu_bdc_fp32_vc_div(0, 0, 4096, 4, 4, 4, 4); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("writes dst while it still reads"), std::string::npos)
      << cmodel_last_error();
  EXPECT_FALSE(test::run_kernel_body([] { tpu_bdc_int_vc_add(8192, LOCAL_MEM_SIZE, 4096, 4, 4, 4, 4, DT_INT32, DT_INT8, DT_INT8, true); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("NPU"), std::string::npos) << cmodel_last_error();
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcVectorCross, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
