// bdc_quant_test: requantisation and dequantisation (tpu_bdc_int_requant,
// int_pc_requant, int_dequant, fp32_requant, fp32_dequant) against an
// independent host model written from the tier-3 spec §1.4 / §1.5 (the
// rounding table R(x, k, mode) by floor division and remainder, the signed
// shift, saturation), compared bit for bit over the whole local memory:
// random dtypes, shapes, start NPUs, multipliers, shifts of both signs,
// offsets and every rounding mode (but half up / half down in the fp32
// forms), on both chips; no 32-bit requantised results or dequantised
// sources. Then the checks.
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

enum class Form { int_requant, int_pc_requant, int_dequant, fp32_requant, fp32_dequant };

constexpr rounding_mode_t kModes[] = {RM_HALF_TO_EVEN, RM_HALF_AWAY_FROM_ZERO, RM_TOWARDS_ZERO, RM_DOWN,
                                      RM_UP,           RM_HALF_UP,             RM_HALF_DOWN};
const std::vector<data_type_t> kInts = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};
// Requantised results and dequantised sources (RQ-1, RQ-4, DQ-1, DQ-3).
const std::vector<data_type_t> kNarrowInts = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16};

// q + δ of the spec's table, for r / 2h past q = floor(x / 2h) (r in [0, 2h)).
int64_t round_by_table(int64_t q, bool negative, bool inexact, int compare_to_half, rounding_mode_t mode) {
  bool up = false;
  switch (mode) {
    case RM_HALF_TO_EVEN: up = compare_to_half > 0 || (compare_to_half == 0 && (q & 1)); break;
    case RM_HALF_AWAY_FROM_ZERO: up = compare_to_half > 0 || (compare_to_half == 0 && !negative); break;
    case RM_TOWARDS_ZERO: up = negative && inexact; break;
    case RM_DOWN: up = false; break;
    case RM_UP: up = inexact; break;
    case RM_HALF_UP: up = compare_to_half >= 0 && inexact; break;
    default: up = compare_to_half > 0; break;  // RM_HALF_DOWN
  }
  return q + (up ? 1 : 0);
}

// R(x, k, mode) for k >= 1 (k > 63 as 63).
__int128 shift_right(__int128 x, int k, rounding_mode_t mode) {
  k = std::min(k, 63);
  const __int128 unit = static_cast<__int128>(1) << k;
  __int128 q = x / unit;
  if (x % unit != 0 && x < 0) q -= 1;  // floor
  const __int128 r = x - q * unit, h = unit / 2;
  return round_by_table(int64_t(q), x < 0, r != 0, r > h ? 1 : r == h ? 0 : -1, mode);
}

// S(x, σ, mode).
__int128 signed_shift(__int128 x, int sigma, rounding_mode_t mode) {
  return sigma >= 0 ? x * (static_cast<__int128>(1) << sigma) : shift_right(x, -sigma, mode);
}

// A float rounded to an integral value with `mode`, saturated.
int64_t float_to_int(float y, rounding_mode_t mode, data_type_t t) {
  const double d = y, q = std::floor(d), r = d - q;
  const int64_t v = round_by_table(int64_t(q), d < 0, r != 0, r > 0.5 ? 1 : r == 0.5 ? 0 : -1, mode);
  return std::clamp(v, int_min(t), int_max(t));
}

struct Case {
  Form form;
  data_type_t dst_dtype, src_dtype;
  rounding_mode_t mode, src_mode;
  int multiplier, shift;
  int64_t offset;
  float scale, foffset;
  dim4 shape;
  Tensor dst, src, quant;
};

void call(const Case &k) {
  scalar_t offset{};
  offset.s32 = int32_t(k.offset);
  const dim4 *s = &k.shape;
  switch (k.form) {
    case Form::int_requant:
      return tpu_bdc_int_requant(k.dst.addr, k.src.addr, s, k.multiplier, char(k.shift), offset, k.dst_dtype,
                                 k.src_dtype, k.mode);
    case Form::int_pc_requant:
      return tpu_bdc_int_pc_requant(k.dst.addr, k.src.addr, k.quant.addr, s, k.dst_dtype, k.src_dtype, k.mode);
    case Form::int_dequant:
      return tpu_bdc_int_dequant(k.dst.addr, k.src.addr, s, offset, k.multiplier, char(k.shift), k.dst_dtype,
                                 k.src_dtype, k.mode);
    case Form::fp32_requant:
      return tpu_bdc_fp32_requant(k.dst.addr, k.src.addr, s, k.scale, k.foffset, k.dst_dtype, k.src_dtype, k.mode,
                                  k.src_mode);
    case Form::fp32_dequant:
      return tpu_bdc_fp32_dequant(k.dst.addr, k.src.addr, s, offset, k.scale, k.src_dtype, k.mode);
  }
}

class BdcQuant : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }

  Case random_case(test::Seeded &seeded) {
    auto &rng = seeded.rng();
    Case k{};
    k.form = Form(seeded.uniform(0, 4));
    const bool dequant = k.form == Form::int_dequant || k.form == Form::fp32_dequant;
    const std::vector<data_type_t> &srcs = dequant ? kNarrowInts : kInts, &dsts = dequant ? kInts : kNarrowInts;
    k.src_dtype = srcs[size_t(seeded.uniform(0, int(srcs.size()) - 1))];
    k.dst_dtype = k.form == Form::fp32_dequant ? DT_FP32 : dsts[size_t(seeded.uniform(0, int(dsts.size()) - 1))];
    // The fp32 forms round neither half up nor half down (RQ-2, DQ-2).
    const int modes = k.form == Form::fp32_requant || k.form == Form::fp32_dequant ? 5 : 7;
    k.mode = kModes[seeded.uniform(0, modes - 1)];
    k.src_mode = kModes[seeded.uniform(0, modes - 1)];
    k.multiplier = seeded.uniform(0, 1) ? seeded.uniform(-300, 300) : int(int32_t(rng()));
    k.shift = seeded.uniform(-40, 12);
    const data_type_t offset_dtype = k.form == Form::int_requant ? k.dst_dtype : k.src_dtype;
    k.offset = std::clamp<int64_t>(seeded.uniform(-200, 200), int_min(offset_dtype), int_max(offset_dtype));
    k.scale = float(seeded.uniform(-1000, 1000)) / 128.0f;
    k.foffset = float(seeded.uniform(-1000, 1000)) / 64.0f;
    k.shape = {seeded.uniform(1, 2), seeded.uniform(1, chip.npu + 3), seeded.uniform(1, 3), seeded.uniform(1, 17)};
    const int start = seeded.uniform(0, chip.npu - 1);
    const uint32_t third = chip.lmem / 3 / 64 * 64;
    k.src = aligned(chip, start, 0, k.shape, k.src_dtype);
    k.dst = aligned(chip, start, third, k.shape, k.dst_dtype);
    k.quant = aligned(chip, start, 2 * third, {1, k.shape.c, 1, 3}, DT_INT32);
    // Sources: any value, except that fp32 forms keep int32 within 2^24
    // (the int -> fp32 rounding is numeric_cast_test's subject).
    const bool fp = k.form == Form::fp32_requant || k.form == Form::fp32_dequant;
    for_each_index(k.shape, [&](int n, int c, int h, int w) {
      uint32_t bits = uint32_t(rng());
      if (fp && esize(k.src_dtype) == 4) bits = k.src_dtype == DT_INT32 ? uint32_t(int32_t(bits) >> 8) : bits >> 8;
      set_bits(chip, k.src, n, c, h, w, bits);
      set_bits(chip, k.dst, n, c, h, w, uint32_t(rng()));
    });
    for (int c = 0; c < k.shape.c; ++c) {
      set<int32_t>(chip, k.quant, 0, c, 0, 0, seeded.uniform(0, 1) ? seeded.uniform(-300, 300) : int32_t(rng()));
      set<int32_t>(chip, k.quant, 0, c, 0, 1, seeded.uniform(-40, 12));
      set<int32_t>(chip, k.quant, 0, c, 0, 2, seeded.uniform(-200, 200));
    }
    return k;
  }

  uint32_t model(const Case &k, int n, int c, int h, int w) const {
    const int64_t x = int_value(k.src_dtype, get_bits(chip, k.src, n, c, h, w));
    const uint32_t mask = esize(k.dst_dtype) == 4 ? 0xffffffffu : (1u << (8 * esize(k.dst_dtype))) - 1;
    auto saturate = [&](__int128 v) {
      return uint32_t(int64_t(std::clamp<__int128>(v, int_min(k.dst_dtype), int_max(k.dst_dtype)))) & mask;
    };
    switch (k.form) {
      case Form::int_requant:
        return saturate(signed_shift(static_cast<__int128>(x) * k.multiplier, k.shift, k.mode) + k.offset);
      case Form::int_pc_requant: {
        const int64_t m = get<int32_t>(chip, k.quant, 0, c, 0, 0), s = get<int32_t>(chip, k.quant, 0, c, 0, 1),
                      z = get<int32_t>(chip, k.quant, 0, c, 0, 2);
        return saturate(signed_shift(static_cast<__int128>(x) * m, int(s), k.mode) + z);
      }
      case Form::int_dequant:
        return saturate(signed_shift(static_cast<__int128>(x - k.offset) * k.multiplier, k.shift, k.mode));
      case Form::fp32_requant: {
        const float scaled = float(x) * k.scale;
        const float y = scaled + k.foffset;
        return uint32_t(float_to_int(y, k.mode, k.dst_dtype)) & mask;
      }
      case Form::fp32_dequant: {
        const float y = float(x - k.offset) * k.scale;
        uint32_t b;
        std::memcpy(&b, &y, sizeof b);
        return b;
      }
    }
    return 0;
  }

  Chip chip;
};

std::string describe(const Case &k, int iteration) {
  return "form " + std::to_string(int(k.form)) + " dst " + std::to_string(k.dst_dtype) + " src " +
         std::to_string(k.src_dtype) + " mode " + std::to_string(k.mode) + " multiplier " +
         std::to_string(k.multiplier) + " shift " + std::to_string(k.shift) + " offset " + std::to_string(k.offset) +
         " iteration " + std::to_string(iteration);
}

TEST_P(BdcQuant, RandomCommandsMatchTheSpecModel) {
  test::Seeded seeded;
  for (int iteration = 0; iteration < 120; ++iteration) {
    const Case k = random_case(seeded);
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(k.shape, [&](int n, int c, int h, int w) { put(expected, chip, k.dst, n, c, h, w, model(k, n, c, h, w)); });
    ASSERT_TRUE(test::run_kernel_body([&] { call(k); })) << describe(k, iteration) << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return describe(k, iteration); });
    if (::testing::Test::HasFailure()) break;
  }
}

// Known values: 1000 · 3 >> 4 (half away from zero) + 5 = 192.5 -> 193, and
// the saturating dequant of an int8 zero point.
TEST_P(BdcQuant, KnownValues) {
  const Tensor src = aligned(chip, 0, 0, {1, 1, 1, 2}, DT_INT32);
  const Tensor dst = aligned(chip, 0, 4096, {1, 1, 1, 2}, DT_INT16);
  set<int32_t>(chip, src, 0, 0, 0, 0, 1000), set<int32_t>(chip, src, 0, 0, 0, 1, -1000);
  const dim4 shape = src.shape;
  scalar_t five{};
  five.s16 = 5;
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_int_requant(dst.addr, src.addr, &shape, 3, char(-4), five, DT_INT16, DT_INT32, RM_HALF_AWAY_FROM_ZERO);
  })) << cmodel_last_error();
  EXPECT_EQ(get<int16_t>(chip, dst, 0, 0, 0, 0), 193);   // 187.5 -> 188, + 5
  EXPECT_EQ(get<int16_t>(chip, dst, 0, 0, 0, 1), -183);  // -187.5 -> -188, + 5
}

TEST_P(BdcQuant, ChecksNameTheFunctionAndTheValue) {
  const dim4 shape = {1, 2, 1, 4};
  scalar_t zero{};
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_int_requant(4096, 0, &shape, 1, 0, zero, DT_FP32, DT_INT32, RM_DOWN); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("tpu_bdc_int_requant: dst_dtype"), std::string::npos)
      << cmodel_last_error();
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_fp32_dequant(4096, 0, &shape, zero, 1.0f, DT_INT8, rounding_mode_t(42)); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("tpu_bdc_fp32_dequant"), std::string::npos) << cmodel_last_error();
  // A per-channel shift outside int8.
  const Tensor quant = aligned(chip, 0, 8192, {1, 2, 1, 3}, DT_INT32);
  set<int32_t>(chip, quant, 0, 1, 0, 1, 300);
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_int_pc_requant(4096, 0, quant.addr, &shape, DT_INT8, DT_INT32, RM_DOWN); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("quant channel 1: shift 300 is outside [-128, 127]"), std::string::npos)
      << cmodel_last_error();
  // The per-channel tensor at a multiple of 8 bytes (not of ALIGN_BYTES) is
  // accepted, at 4 past one refused.
  set<int32_t>(chip, quant, 0, 1, 0, 1, 0);
  EXPECT_TRUE(test::run_kernel_body([&] { tpu_bdc_int_pc_requant(4096, 0, 8192 + 8, &shape, DT_INT8, DT_INT32, RM_DOWN); }))
      << cmodel_last_error();
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_int_pc_requant(4096, 0, 8192 + 4, &shape, DT_INT8, DT_INT32, RM_DOWN); }));
  EXPECT_NE(std::string(cmodel_last_error())
                .find("tpu_bdc_int_pc_requant: quant local address 0x2004 is not a multiple of 8 bytes [illegal "
                      "command] [RQ-3]"),
            std::string::npos)
      << cmodel_last_error();
  // No 32-bit requantised results or dequantised sources.
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_int_requant(4096, 0, &shape, 1, 0, zero, DT_INT32, DT_INT32, RM_DOWN); }));
  EXPECT_NE(std::string(cmodel_last_error())
                .find("tpu_bdc_int_requant: dst_dtype DT_INT32 is not allowed here; expected one of DT_INT8, DT_UINT8, "
                      "DT_INT16, DT_UINT16 [illegal command] [RQ-4]"),
            std::string::npos)
      << cmodel_last_error();
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_fp32_dequant(4096, 0, &shape, zero, 1.0f, DT_UINT32, RM_DOWN); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("src_dtype DT_UINT32 is not allowed here"), std::string::npos)
      << cmodel_last_error();
  // Nor half-up / half-down rounding in the fp32 forms.
  EXPECT_FALSE(test::run_kernel_body(
      [&] { tpu_bdc_fp32_requant(4096, 0, &shape, 1.0f, 0.0f, DT_INT8, DT_INT32, RM_UP, RM_HALF_UP); }));
  EXPECT_NE(std::string(cmodel_last_error())
                .find("tpu_bdc_fp32_requant: src_rounding_mode RM_HALF_UP (5) is not allowed here; the fp32 requant / "
                      "dequant conversions round with RM_HALF_TO_EVEN, RM_HALF_AWAY_FROM_ZERO, RM_TOWARDS_ZERO, "
                      "RM_DOWN or RM_UP [illegal command] [RQ-2]"),
            std::string::npos)
      << cmodel_last_error();
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcQuant, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
