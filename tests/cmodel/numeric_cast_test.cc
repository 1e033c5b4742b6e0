// numeric_cast_test.cc: fp32/fp16/bf16/integer conversions and the tpu_*_cast API.
//
// Expected values never come from the code under test. Float results are
// checked against a reference that lists every finite value of the narrow
// format (decoded with ldexp into double, where they are exact), finds the
// two neighbours of the input by search and picks one by exact comparison
// with their midpoint. Integer results come from integer arithmetic on the
// float's bits or from hand-written tables.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel/dtype.h"
#include "cmodel/error.h"
#include "cmodel/numeric/float_convert.h"
#include "cmodel_host.h"
#include "support/test_support.h"
#include "tpu_kernel.h"

namespace {

using namespace cmodel::numeric;
using cmodel::dtype_name;
using test::hex;

constexpr rounding_mode_t kModes[] = {RM_HALF_TO_EVEN, RM_HALF_AWAY_FROM_ZERO, RM_TOWARDS_ZERO, RM_DOWN,
                                      RM_UP,           RM_HALF_UP,             RM_HALF_DOWN};
constexpr int kMaxReported = 20;  // mismatches printed per test before giving up
// Invalid values must stay inside the enums' value range (0..7 for
// rounding_mode_t, 0..63 for data_type_t): outside it, merely holding the
// value is undefined behaviour in C++ and UBSan stops the test.
constexpr rounding_mode_t kBadMode = rounding_mode_t(7);

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float float_of(uint32_t u) { return std::bit_cast<float>(u); }

// ---- reference for binary formats -----------------------------------------

// A narrow IEEE binary format with every non-negative encoding decoded.
struct RefFormat {
  const char *name;
  int exp_bits, man_bits;
  uint32_t inf_bits, sign_bit;
  // value[p] for p in [0, inf_bits]: the exact value of encoding p. For p ==
  // inf_bits the same formula gives 2^(emax+1), the value the next encoding
  // would have with an unbounded exponent: the overflow candidate.
  std::vector<double> value;

  RefFormat(const char *n, int e, int m) : name(n), exp_bits(e), man_bits(m) {
    inf_bits = ((1u << e) - 1) << m;
    sign_bit = 1u << (e + m);
    const int bias = (1 << (e - 1)) - 1;
    for (uint32_t p = 0; p <= inf_bits; ++p) value.push_back(decode_magnitude(p, bias));
  }

  double decode_magnitude(uint32_t p, int bias) const {
    const uint32_t exp = p >> man_bits, frac = p & ((1u << man_bits) - 1);
    if (exp == 0) return std::ldexp(double(frac), 1 - bias - man_bits);
    return std::ldexp(double(frac + (1u << man_bits)), int(exp) - bias - man_bits);
  }

  // Correctly rounded encoding of finite x.
  uint32_t round(double x, rounding_mode_t mode) const {
    const bool neg = std::signbit(x);
    const uint32_t sign = neg ? sign_bit : 0;
    const double d = std::fabs(x);
    // lo: largest finite encoding <= d.
    const auto finite_end = value.begin() + inf_bits;
    const uint32_t lo = uint32_t(std::upper_bound(value.begin(), finite_end, d) - value.begin()) - 1;
    if (value[lo] == d) return sign | lo;
    const uint32_t hi = lo + 1;  // hi == inf_bits: the result overflowed
    const double mid = (value[lo] + value[hi]) / 2;  // exact: few significant bits
    // Decide on the signed value: which neighbour is toward +inf?
    const uint32_t toward_pos_inf = neg ? lo : hi, toward_neg_inf = neg ? hi : lo;
    uint32_t r;
    switch (mode) {
      case RM_TOWARDS_ZERO: r = lo; break;
      case RM_DOWN: r = toward_neg_inf; break;
      case RM_UP: r = toward_pos_inf; break;
      default:
        if (d < mid) r = lo;
        else if (d > mid) r = hi;
        else if (mode == RM_HALF_TO_EVEN) r = (lo % 2 == 0) ? lo : hi;
        else if (mode == RM_HALF_AWAY_FROM_ZERO) r = hi;
        else if (mode == RM_HALF_UP) r = toward_pos_inf;
        else r = toward_neg_inf;  // RM_HALF_DOWN
    }
    return sign | r;  // r == inf_bits encodes infinity
  }
};

const RefFormat &ref_fp16() {
  static const RefFormat f("fp16", 5, 10);
  return f;
}
const RefFormat &ref_bf16() {
  static const RefFormat f("bf16", 8, 7);
  return f;
}

// Checks fp32 -> format for finite x in every mode; counts mismatches.
void check_narrow(const RefFormat &ref, float x, int &failures) {
  for (rounding_mode_t mode : kModes) {
    const uint32_t want = ref.round(double(x), mode);
    const uint32_t got = ref.exp_bits == 5 ? fp32_to_fp16(x, mode) : fp32_to_bf16(x, mode);
    if (got != want && ++failures <= kMaxReported)
      ADD_FAILURE() << "fp32 " << hex(bits_of(x)) << " (" << x << ") -> " << ref.name << " "
                    << rounding_mode_name(mode) << ": got " << hex(got) << ", want " << hex(want);
  }
}

// Every value next to the finite values of `ref`: each value, the midpoint
// to the next one (the ties), and the fp32 neighbours of both; both signs.
void check_all_neighbours(const RefFormat &ref) {
  int failures = 0;
  for (uint32_t p = 0; p < ref.inf_bits && failures <= kMaxReported; ++p) {
    const double v = ref.value[p], mid = (v + ref.value[p + 1]) / 2;
    ASSERT_EQ(double(float(v)), v);
    ASSERT_EQ(double(float(mid)), mid) << "midpoint above " << ref.name << " " << hex(p);
    for (float base : {float(v), float(mid)}) {
      for (float x : {base, std::nextafter(base, -INFINITY), std::nextafter(base, INFINITY)}) {
        check_narrow(ref, x, failures);
        check_narrow(ref, -x, failures);
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

// ---- fp16 / bf16 -> fp32 ---------------------------------------------------

TEST(FloatConvert, Fp16ToFp32AllEncodings) {
  const RefFormat &ref = ref_fp16();
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float got = fp16_to_fp32(uint16_t(h));
    const uint32_t got_bits = bits_of(got);
    const bool neg = (h & 0x8000) != 0;
    const uint32_t mag = h & 0x7fff;
    ASSERT_EQ(got_bits >> 31, uint32_t(neg)) << hex(h);
    if (mag < ref.inf_bits) {
      ASSERT_EQ(double(got), neg ? -ref.value[mag] : ref.value[mag]) << hex(h);
    } else if (mag == ref.inf_bits) {
      ASSERT_TRUE(std::isinf(got)) << hex(h);
    } else {
      // NaN: payload moved to the top of the fp32 fraction, class unchanged.
      ASSERT_EQ(got_bits & 0x7fffffff, 0x7f800000u | ((h & 0x3ffu) << 13)) << hex(h);
    }
  }
}

TEST(FloatConvert, Bf16ToFp32AllEncodings) {
  const RefFormat &ref = ref_bf16();
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float got = bf16_to_fp32(uint16_t(b));
    const uint32_t mag = b & 0x7fff;
    const bool neg = (b & 0x8000) != 0;
    if (mag < ref.inf_bits) {
      ASSERT_EQ(double(got), neg ? -ref.value[mag] : ref.value[mag]) << hex(b);
    }
    // Every encoding, NaNs included: bf16 is by definition the top half of fp32.
    ASSERT_EQ(bits_of(got), b << 16) << hex(b);
  }
}

TEST(FloatConvert, WidenThenNarrowIsIdentityInEveryMode) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0) continue;  // NaNs: see NaN tests
    for (rounding_mode_t mode : kModes) {
      ASSERT_EQ(fp32_to_fp16(fp16_to_fp32(uint16_t(h)), mode), h) << hex(h) << " " << rounding_mode_name(mode);
      ASSERT_EQ(fp32_to_bf16(bf16_to_fp32(uint16_t(h)), mode), h) << hex(h) << " " << rounding_mode_name(mode);
    }
  }
}

// ---- fp32 -> fp16 / bf16 ---------------------------------------------------

TEST(FloatConvert, Fp32ToFp16NeighboursAndTiesOfEveryValue) { check_all_neighbours(ref_fp16()); }

TEST(FloatConvert, Fp32ToBf16NeighboursAndTiesOfEveryValue) { check_all_neighbours(ref_bf16()); }

TEST(FloatConvert, Fp32BoundariesAgainstReference) {
  const std::vector<float> xs = {
      0.0f, FLT_TRUE_MIN, 2 * FLT_TRUE_MIN, FLT_MIN, std::nextafter(FLT_MIN, 0.0f), FLT_MAX, 1.0f,
      // fp16: min subnormal 2^-24, its half, max subnormal, min normal, max, overflow tie
      0x1p-24f, 0x1p-25f, 0x1p-26f, 0x3p-26f, 0x1.8p-24f, 0x1.4p-24f, 0x3ffp-24f, 0x7fep-25f, 0x7ffp-25f,
      0x1p-14f, 65504.0f, 65519.0f, 65520.0f, 65521.0f, 65535.0f, 65536.0f, 1e6f, 1e30f,
      // bf16: min subnormal 2^-133 and its half, max, overflow tie
      0x1p-133f, 0x1p-134f, 0x3p-135f, 0x1p-126f, 0x1.fep127f, 0x1.ffp127f, 0x1.fe8p127f,
  };
  int failures = 0;
  for (float x : xs) {
    for (float y : {x, std::nextafter(x, 0.0f), std::nextafter(x, INFINITY)}) {
      if (std::isinf(y)) continue;
      check_narrow(ref_fp16(), y, failures);
      check_narrow(ref_fp16(), -y, failures);
      check_narrow(ref_bf16(), y, failures);
      check_narrow(ref_bf16(), -y, failures);
    }
  }
  EXPECT_EQ(failures, 0);
}

// Hand-computed results, as a check on the reference itself.
TEST(FloatConvert, Fp32ToFp16HandPickedCases) {
  EXPECT_EQ(fp32_to_fp16(1.0f, RM_HALF_TO_EVEN), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-0.0f, RM_UP), 0x8000);
  EXPECT_EQ(fp32_to_fp16(0.0f, RM_DOWN), 0x0000);
  // 1 + 2^-11 is the tie between 0x3c00 and 0x3c01.
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f, RM_HALF_TO_EVEN), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f, RM_HALF_AWAY_FROM_ZERO), 0x3c01);
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f, RM_HALF_UP), 0x3c01);
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f, RM_HALF_DOWN), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-1.0f - 0x1p-11f, RM_HALF_UP), 0xbc00);
  EXPECT_EQ(fp32_to_fp16(-1.0f - 0x1p-11f, RM_HALF_DOWN), 0xbc01);
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * 0x1p-11f, RM_HALF_TO_EVEN), 0x3c02);  // tie, odd below
  // Underflow: 2^-25 is half the smallest subnormal.
  EXPECT_EQ(fp32_to_fp16(0x1p-25f, RM_HALF_TO_EVEN), 0x0000);
  EXPECT_EQ(fp32_to_fp16(0x1p-25f, RM_HALF_AWAY_FROM_ZERO), 0x0001);
  EXPECT_EQ(fp32_to_fp16(-0x1p-25f, RM_HALF_TO_EVEN), 0x8000);
  EXPECT_EQ(fp32_to_fp16(-0x1p-25f, RM_DOWN), 0x8001);
  EXPECT_EQ(fp32_to_fp16(-0x1p-25f, RM_UP), 0x8000);
  EXPECT_EQ(fp32_to_fp16(FLT_TRUE_MIN, RM_UP), 0x0001);
  EXPECT_EQ(fp32_to_fp16(FLT_TRUE_MIN, RM_HALF_AWAY_FROM_ZERO), 0x0000);
  EXPECT_EQ(fp32_to_fp16(0x1.8p-24f, RM_HALF_TO_EVEN), 0x0002);
  EXPECT_EQ(fp32_to_fp16(0x3ffp-24f, RM_HALF_TO_EVEN), 0x03ff);  // largest subnormal
  EXPECT_EQ(fp32_to_fp16(0x7ffp-25f, RM_HALF_TO_EVEN), 0x0400);  // rounds up into the normals
  // Overflow: 65520 is the tie between 65504 (0x7bff, odd) and 2^16.
  EXPECT_EQ(fp32_to_fp16(65519.0f, RM_HALF_TO_EVEN), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f, RM_HALF_TO_EVEN), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(65520.0f, RM_HALF_DOWN), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(-65520.0f, RM_HALF_UP), 0xfbff);
  EXPECT_EQ(fp32_to_fp16(-65520.0f, RM_HALF_DOWN), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(1e9f, RM_TOWARDS_ZERO), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(-1e9f, RM_TOWARDS_ZERO), 0xfbff);
  EXPECT_EQ(fp32_to_fp16(1e9f, RM_DOWN), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(-1e9f, RM_DOWN), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(1e9f, RM_UP), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-1e9f, RM_UP), 0xfbff);
  EXPECT_EQ(fp32_to_fp16(65505.0f, RM_UP), 0x7c00);
}

TEST(FloatConvert, Fp32ToBf16HandPickedCases) {
  EXPECT_EQ(fp32_to_bf16(1.0f, RM_HALF_TO_EVEN), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(float_of(0x3f808000), RM_HALF_TO_EVEN), 0x3f80);  // tie
  EXPECT_EQ(fp32_to_bf16(float_of(0x3f818000), RM_HALF_TO_EVEN), 0x3f82);  // tie, odd below
  EXPECT_EQ(fp32_to_bf16(float_of(0x3f808000), RM_HALF_AWAY_FROM_ZERO), 0x3f81);
  EXPECT_EQ(fp32_to_bf16(float_of(0x3f808001), RM_HALF_TO_EVEN), 0x3f81);
  EXPECT_EQ(fp32_to_bf16(float_of(0xbf808000), RM_HALF_UP), 0xbf80);
  EXPECT_EQ(fp32_to_bf16(float_of(0xbf808000), RM_HALF_DOWN), 0xbf81);
  EXPECT_EQ(fp32_to_bf16(float_of(0x3f80ffff), RM_TOWARDS_ZERO), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(float_of(0x3f800001), RM_UP), 0x3f81);
  EXPECT_EQ(fp32_to_bf16(float_of(0xbf800001), RM_DOWN), 0xbf81);
  // fp32 subnormals: bf16 keeps the top 7 fraction bits.
  EXPECT_EQ(fp32_to_bf16(FLT_TRUE_MIN, RM_HALF_TO_EVEN), 0x0000);
  EXPECT_EQ(fp32_to_bf16(FLT_TRUE_MIN, RM_UP), 0x0001);
  EXPECT_EQ(fp32_to_bf16(-FLT_TRUE_MIN, RM_DOWN), 0x8001);
  EXPECT_EQ(fp32_to_bf16(float_of(0x00008000), RM_HALF_TO_EVEN), 0x0000);  // tie below 0x0001
  EXPECT_EQ(fp32_to_bf16(float_of(0x00018000), RM_HALF_TO_EVEN), 0x0002);
  EXPECT_EQ(fp32_to_bf16(float_of(0x007fffff), RM_HALF_TO_EVEN), 0x0080);  // into the normals
  // Overflow.
  EXPECT_EQ(fp32_to_bf16(FLT_MAX, RM_HALF_TO_EVEN), 0x7f80);
  EXPECT_EQ(fp32_to_bf16(FLT_MAX, RM_TOWARDS_ZERO), 0x7f7f);
  EXPECT_EQ(fp32_to_bf16(FLT_MAX, RM_DOWN), 0x7f7f);
  EXPECT_EQ(fp32_to_bf16(-FLT_MAX, RM_DOWN), 0xff80);
  EXPECT_EQ(fp32_to_bf16(-FLT_MAX, RM_UP), 0xff7f);
  EXPECT_EQ(fp32_to_bf16(float_of(0x7f7f8000), RM_HALF_TO_EVEN), 0x7f80);  // tie above max (odd)
  EXPECT_EQ(fp32_to_bf16(float_of(0x7f7f8000), RM_HALF_DOWN), 0x7f7f);
  EXPECT_EQ(fp32_to_bf16(float_of(0x7f7f7fff), RM_HALF_AWAY_FROM_ZERO), 0x7f7f);
}

TEST(FloatConvert, InfinityAndNanInEveryMode) {
  for (rounding_mode_t mode : kModes) {
    SCOPED_TRACE(rounding_mode_name(mode));
    EXPECT_EQ(fp32_to_fp16(INFINITY, mode), 0x7c00);
    EXPECT_EQ(fp32_to_fp16(-INFINITY, mode), 0xfc00);
    EXPECT_EQ(fp32_to_bf16(INFINITY, mode), 0x7f80);
    EXPECT_EQ(fp32_to_bf16(-INFINITY, mode), 0xff80);
    // Quiet bit always set; top payload bits kept; sign kept.
    EXPECT_EQ(fp32_to_fp16(float_of(0x7fc00000), mode), 0x7e00);
    EXPECT_EQ(fp32_to_fp16(float_of(0xffc00000), mode), 0xfe00);
    EXPECT_EQ(fp32_to_fp16(float_of(0x7f800001), mode), 0x7e00);  // sNaN, payload below fp16 precision
    EXPECT_EQ(fp32_to_fp16(float_of(0x7fd55555), mode), 0x7eaa);
    EXPECT_EQ(fp32_to_fp16(float_of(0x7f802000), mode), 0x7e01);  // sNaN payload 1 in fp16 units
    EXPECT_EQ(fp32_to_bf16(float_of(0x7fc00000), mode), 0x7fc0);
    EXPECT_EQ(fp32_to_bf16(float_of(0xff800001), mode), 0xffc0);
    EXPECT_EQ(fp32_to_bf16(float_of(0x7fd55555), mode), 0x7fd5);
    EXPECT_EQ(fp32_to_bf16(float_of(0x7f810000), mode), 0x7fc1);
  }
  // Widening keeps the NaN class and payload.
  EXPECT_EQ(bits_of(fp16_to_fp32(0x7c01)), 0x7f802000u);
  EXPECT_EQ(bits_of(fp16_to_fp32(0xfe00)), 0xffc00000u);
}

TEST(FloatConvert, RandomFp32AgainstReference) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  int failures = 0;
  constexpr int kSamples = 2'000'000;
  for (int i = 0; i < kSamples && failures <= kMaxReported; ++i) {
    uint32_t bits = uint32_t(rng());
    if (i % 2) {
      // Half the samples with exponents in and around the fp16 range.
      const uint32_t exp = 127 - 30 + uint32_t(rng() % 50);
      bits = (bits & 0x807fffffu) | (exp << 23);
    }
    const float x = float_of(bits);
    if (std::isnan(x)) {
      for (rounding_mode_t mode : kModes) {
        const uint32_t h = fp32_to_fp16(x, mode), b = fp32_to_bf16(x, mode);
        ASSERT_EQ(h, ((bits >> 16) & 0x8000) | 0x7e00 | ((bits & 0x7fffff) >> 13)) << hex(bits);
        ASSERT_EQ(b, (bits >> 16) | 0x40) << hex(bits);
      }
      continue;
    }
    if (std::isinf(x)) continue;  // covered by InfinityAndNanInEveryMode
    check_narrow(ref_fp16(), x, failures);
    check_narrow(ref_bf16(), x, failures);
  }
  EXPECT_EQ(failures, 0);
}

TEST(FloatConvert, Fp16ToBf16AndBackAllEncodings) {
  int failures = 0;
  for (uint32_t v = 0; v < 0x10000; ++v) {
    const bool neg = (v & 0x8000) != 0;
    for (rounding_mode_t mode : kModes) {
      // fp16 -> bf16
      if ((v & 0x7fff) < ref_fp16().inf_bits) {
        const double x = (neg ? -1 : 1) * ref_fp16().value[v & 0x7fff];
        const uint32_t want = ref_bf16().round(neg && x == 0 ? -0.0 : x, mode);
        const uint32_t got = convert_scalar_bits(v, DT_BFP16, DT_FP16, mode);
        if (got != want && ++failures <= kMaxReported)
          ADD_FAILURE() << "fp16 " << hex(v) << " -> bf16 " << rounding_mode_name(mode) << ": got " << hex(got)
                        << ", want " << hex(want);
      }
      // bf16 -> fp16
      if ((v & 0x7fff) < ref_bf16().inf_bits) {
        const double x = (neg ? -1 : 1) * ref_bf16().value[v & 0x7fff];
        const uint32_t want = ref_fp16().round(neg && x == 0 ? -0.0 : x, mode);
        const uint32_t got = convert_scalar_bits(v, DT_FP16, DT_BFP16, mode);
        if (got != want && ++failures <= kMaxReported)
          ADD_FAILURE() << "bf16 " << hex(v) << " -> fp16 " << rounding_mode_name(mode) << ": got " << hex(got)
                        << ", want " << hex(want);
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(convert_scalar_bits(0x7c00, DT_BFP16, DT_FP16, RM_DOWN), 0x7f80u);
  EXPECT_EQ(convert_scalar_bits(0xff80, DT_FP16, DT_BFP16, RM_TOWARDS_ZERO), 0xfc00u);  // inf stays inf
  EXPECT_EQ(convert_scalar_bits(0x7f7f, DT_FP16, DT_BFP16, RM_TOWARDS_ZERO), 0x7bffu);
  EXPECT_EQ(convert_scalar_bits(0x7e00, DT_BFP16, DT_FP16, RM_HALF_TO_EVEN), 0x7fc0u);  // NaN
}

// ---- rounding to integral values ---------------------------------------------

struct IntegralCase {
  double x;
  double want[7];  // in kModes order
};

void check_integral_cases(const std::vector<IntegralCase> &cases) {
  for (const IntegralCase &c : cases) {
    for (int m = 0; m < 7; ++m) {
      const double got = round_to_integral(c.x, kModes[m]);
      EXPECT_EQ(got, c.want[m]) << c.x << " " << rounding_mode_name(kModes[m]);
      EXPECT_EQ(std::signbit(got), std::signbit(c.want[m])) << c.x << " " << rounding_mode_name(kModes[m]);
    }
  }
}

TEST(RoundToIntegral, Ties) {
  //          EVEN  AWAY  ZERO  DOWN  UP    H_UP  H_DOWN
  check_integral_cases({
      {-2.5, {-2, -3, -2, -3, -2, -2, -3}},
      {-1.5, {-2, -2, -1, -2, -1, -1, -2}},
      {-0.5, {-0.0, -1, -0.0, -1, -0.0, -0.0, -1}},
      {0.5, {0, 1, 0, 0, 1, 1, 0}},
      {1.5, {2, 2, 1, 1, 2, 2, 1}},
      {2.5, {2, 3, 2, 2, 3, 3, 2}},
      {-3.5, {-4, -4, -3, -4, -3, -3, -4}},
      {1e15 + 0.5, {1e15, 1e15 + 1, 1e15, 1e15, 1e15 + 1, 1e15 + 1, 1e15}},
      // 2^52 - 0.5: the last tie a double can hold.
      {0x1p52 - 0.5, {0x1p52, 0x1p52, 0x1p52 - 1, 0x1p52 - 1, 0x1p52, 0x1p52, 0x1p52 - 1}},
  });
}

TEST(RoundToIntegral, NonTies) {
  //          EVEN  AWAY  ZERO  DOWN  UP    H_UP  H_DOWN
  check_integral_cases({
      {-2.7, {-3, -3, -2, -3, -2, -3, -3}},
      {-0.4, {-0.0, -0.0, -0.0, -1, -0.0, -0.0, -0.0}},
      {0.4, {0, 0, 0, 0, 1, 0, 0}},
      {0.6, {1, 1, 0, 0, 1, 1, 1}},
      {2.2, {2, 2, 2, 2, 3, 2, 2}},
      {-1e-300, {-0.0, -0.0, -0.0, -1, -0.0, -0.0, -0.0}},
      // Just below one half: x - floor(x) would round to a tie for the negative one.
      {0.49999999999999994, {0, 0, 0, 0, 1, 0, 0}},
      {-0.49999999999999994, {-0.0, -0.0, -0.0, -1, -0.0, -0.0, -0.0}},
      {0.5000000000000001, {1, 1, 0, 0, 1, 1, 1}},
      {-1.5000000000000002, {-2, -2, -1, -2, -1, -2, -2}},
  });
}

TEST(RoundToIntegral, IntegralHugeAndSpecialValuesUnchanged) {
  for (rounding_mode_t mode : kModes) {
    for (double x : {0.0, -0.0, 3.0, -7.0, 0x1p52, 0x1p52 + 1, -0x1p53, 1e300, -1e300, double(INFINITY),
                     -double(INFINITY)}) {
      const double got = round_to_integral(x, mode);
      EXPECT_EQ(got, x) << x << " " << rounding_mode_name(mode);
      EXPECT_EQ(std::signbit(got), std::signbit(x)) << x << " " << rounding_mode_name(mode);
    }
    EXPECT_TRUE(std::isnan(round_to_integral(double(NAN), mode)));
    EXPECT_TRUE(std::isnan(round_to_integral(NAN, mode)));
  }
  EXPECT_EQ(round_to_integral(8388607.5f, RM_HALF_TO_EVEN), 8388608.0f);
  EXPECT_EQ(round_to_integral(8388607.5f, RM_HALF_DOWN), 8388607.0f);
  EXPECT_EQ(round_to_integral(-8388607.5f, RM_HALF_UP), -8388607.0f);
}

// ---- integer dtypes ----------------------------------------------------------

struct IntType {
  data_type_t dtype;
  int64_t min, max;
  int member_bits;  // bits of the scalar_t member that holds it
};
// Written out by hand, not taken from dtype.h.
constexpr IntType kIntTypes[] = {
    {DT_INT4, -8, 7, 8},         {DT_UINT4, 0, 15, 8},           {DT_INT8, -128, 127, 8},
    {DT_UINT8, 0, 255, 8},       {DT_INT16, -32768, 32767, 16},  {DT_UINT16, 0, 65535, 16},
    {DT_INT32, INT32_MIN, INT32_MAX, 32}, {DT_UINT32, 0, UINT32_MAX, 32},
};

// The slot as a kernel that zeroed it and then wrote the dtype's member holds it.
uint32_t slot_of(int64_t v, data_type_t dtype) {
  scalar_t s;
  std::memset(&s, 0, sizeof s);
  switch (dtype) {
    case DT_INT4: s.s4 = static_cast<signed char>(v); break;
    case DT_UINT4: s.u4 = static_cast<unsigned char>(v); break;
    case DT_INT8: s.s8 = static_cast<signed char>(v); break;
    case DT_UINT8: s.u8 = static_cast<unsigned char>(v); break;
    case DT_INT16: s.s16 = static_cast<short>(v); break;
    case DT_UINT16: s.u16 = static_cast<unsigned short>(v); break;
    case DT_INT32: s.s32 = static_cast<int>(v); break;
    case DT_UINT32: s.u32 = static_cast<unsigned>(v); break;
    default: ADD_FAILURE() << "not an int dtype";
  }
  uint32_t u;
  std::memcpy(&u, &s, sizeof u);
  return u;
}

// Junk outside the value's bits (the low nibble for 4-bit dtypes), which
// convert_scalar_bits must ignore.
uint32_t with_junk(uint32_t slot, const IntType &type) {
  const int value_bits = type.dtype == DT_INT4 || type.dtype == DT_UINT4 ? 4 : type.member_bits;
  if (value_bits == 32) return slot;
  const uint32_t mask = (1u << value_bits) - 1;
  return (slot & mask) | (0xa5c3b7e0u & ~mask);
}

TEST(IntCast, SaturatesForEveryPair) {
  for (const IntType &src : kIntTypes) {
    std::vector<int64_t> values = {src.min, src.min + 1, -1, 0, 1, src.max - 1, src.max};
    for (const IntType &t : kIntTypes)
      for (int64_t v : {t.min - 1, t.min, t.min + 1, t.max - 1, t.max, t.max + 1}) values.push_back(v);
    for (const IntType &dst : kIntTypes) {
      for (int64_t v : values) {
        if (v < src.min || v > src.max) continue;
        const int64_t want = std::clamp(v, dst.min, dst.max);
        const uint32_t in = with_junk(slot_of(v, src.dtype), src);
        for (rounding_mode_t mode : {RM_HALF_TO_EVEN, RM_UP, kBadMode})
          ASSERT_EQ(convert_scalar_bits(in, dst.dtype, src.dtype, mode), slot_of(want, dst.dtype))
              << dtype_name(src.dtype) << " " << v << " -> " << dtype_name(dst.dtype);
      }
    }
  }
}

TEST(IntCast, Int4SlotEncoding) {
  EXPECT_EQ(convert_scalar_bits(0xfd, DT_INT4, DT_INT8, RM_HALF_TO_EVEN), 0xfdu);  // -3 as s4
  EXPECT_EQ(convert_scalar_bits(0x0d, DT_INT8, DT_INT4, RM_HALF_TO_EVEN), 0xfdu);  // nibble 0xd is -3
  EXPECT_EQ(convert_scalar_bits(0x0d, DT_INT32, DT_UINT4, RM_HALF_TO_EVEN), 13u);
  EXPECT_EQ(convert_scalar_bits(0x80, DT_INT4, DT_INT8, RM_HALF_TO_EVEN), 0xf8u);  // -128 -> -8
  EXPECT_EQ(convert_scalar_bits(0xff, DT_UINT4, DT_UINT8, RM_HALF_TO_EVEN), 0x0fu);
}

// Reference fp -> int: integer arithmetic on the float's bits, picking
// floor or ceil of the signed value. Values beyond 2^62 are clamped first.
int64_t ref_round_float(float x, rounding_mode_t mode) {
  const uint32_t bits = bits_of(x);
  const bool neg = bits >> 31;
  const uint32_t exp = (bits >> 23) & 0xff;
  const uint64_t m = exp ? (bits & 0x7fffff) | 0x800000 : bits & 0x7fffff;
  const int e = (exp ? int(exp) : 1) - 150;  // |x| = m * 2^e
  if (e >= 0) {
    if (e > 38) return neg ? -(int64_t(1) << 62) : int64_t(1) << 62;
    return neg ? -int64_t(m << e) : int64_t(m << e);
  }
  const int s = -e;
  const uint64_t q = s >= 63 ? 0 : m >> s;                 // |x| truncated
  const uint64_t r = s >= 63 ? m : m - (q << s);           // remainder in units of 2^-s
  if (r == 0) return neg ? -int64_t(q) : int64_t(q);
  // Compare the fraction r / 2^s with 1/2: sign of 2r - 2^s.
  const int vs_half = s >= 63 ? -1 : (2 * r > (uint64_t(1) << s)) - (2 * r < (uint64_t(1) << s));
  const int64_t floor_v = neg ? -int64_t(q) - 1 : int64_t(q);
  const int64_t ceil_v = floor_v + 1;
  const int64_t toward_zero = neg ? ceil_v : floor_v, away = neg ? floor_v : ceil_v;
  switch (mode) {
    case RM_DOWN: return floor_v;
    case RM_UP: return ceil_v;
    case RM_TOWARDS_ZERO: return toward_zero;
    default: break;
  }
  if (vs_half < 0) return toward_zero;
  if (vs_half > 0) return away;
  switch (mode) {
    case RM_HALF_TO_EVEN: return floor_v % 2 == 0 ? floor_v : ceil_v;
    case RM_HALF_AWAY_FROM_ZERO: return away;
    case RM_HALF_UP: return ceil_v;
    default: return floor_v;  // RM_HALF_DOWN
  }
}

TEST(FpToIntCast, RandomFloatsAgainstIntegerReference) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  int failures = 0;
  for (int i = 0; i < 300'000 && failures <= kMaxReported; ++i) {
    uint32_t bits = uint32_t(rng());
    if (i % 4 != 0) bits = (bits & 0x807fffffu) | ((127 - 3 + uint32_t(rng() % 36)) << 23);  // |x| in [2^-3, 2^33)
    if (i % 4 == 1) bits &= 0xffff0000u;  // representable in bf16
    const float x = float_of(bits);
    const data_type_t src = (i % 4 == 1) ? DT_BFP16 : DT_FP32;
    const uint32_t in = src == DT_BFP16 ? bits >> 16 : bits;
    for (const IntType &dst : kIntTypes) {
      for (rounding_mode_t mode : kModes) {
        const int64_t want = std::isnan(x) ? 0 : std::clamp(ref_round_float(x, mode), dst.min, dst.max);
        const uint32_t got = convert_scalar_bits(in, dst.dtype, src, mode);
        if (got != slot_of(want, dst.dtype) && ++failures <= kMaxReported)
          ADD_FAILURE() << dtype_name(src) << " " << hex(in) << " (" << x << ") -> " << dtype_name(dst.dtype) << " "
                        << rounding_mode_name(mode) << ": got " << hex(got) << ", want " << want;
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(FpToIntCast, HandPickedCases) {
  const auto cvt = [](float x, data_type_t dst, rounding_mode_t mode) {
    return convert_scalar_bits(bits_of(x), dst, DT_FP32, mode);
  };
  EXPECT_EQ(cvt(2.5f, DT_INT8, RM_HALF_TO_EVEN), 2u);
  EXPECT_EQ(cvt(2.5f, DT_INT8, RM_HALF_AWAY_FROM_ZERO), 3u);
  EXPECT_EQ(cvt(-2.5f, DT_INT8, RM_HALF_AWAY_FROM_ZERO), 0xfdu);
  EXPECT_EQ(cvt(-2.5f, DT_INT8, RM_HALF_UP), 0xfeu);
  EXPECT_EQ(cvt(-2.5f, DT_INT16, RM_HALF_DOWN), 0xfffdu);
  EXPECT_EQ(cvt(300.0f, DT_INT8, RM_HALF_TO_EVEN), 0x7fu);
  EXPECT_EQ(cvt(-300.0f, DT_INT8, RM_HALF_TO_EVEN), 0x80u);
  EXPECT_EQ(cvt(127.5f, DT_INT8, RM_HALF_TO_EVEN), 0x7fu);  // 128 saturates
  EXPECT_EQ(cvt(-0.7f, DT_UINT8, RM_DOWN), 0u);              // -1 saturates to 0
  EXPECT_EQ(cvt(-0.7f, DT_UINT8, RM_UP), 0u);
  EXPECT_EQ(cvt(0.2f, DT_UINT8, RM_UP), 1u);
  EXPECT_EQ(cvt(-1e10f, DT_INT32, RM_HALF_TO_EVEN), 0x80000000u);
  EXPECT_EQ(cvt(1e10f, DT_UINT32, RM_HALF_TO_EVEN), 0xffffffffu);
  EXPECT_EQ(cvt(2147483520.0f, DT_INT32, RM_UP), 2147483520u);
  EXPECT_EQ(cvt(2147483648.0f, DT_INT32, RM_DOWN), 0x7fffffffu);
  EXPECT_EQ(cvt(INFINITY, DT_INT16, RM_TOWARDS_ZERO), 0x7fffu);
  EXPECT_EQ(cvt(-INFINITY, DT_UINT16, RM_TOWARDS_ZERO), 0u);
  EXPECT_EQ(cvt(-INFINITY, DT_INT4, RM_TOWARDS_ZERO), 0xf8u);
  EXPECT_EQ(cvt(7.5f, DT_INT4, RM_HALF_DOWN), 7u);
  EXPECT_EQ(cvt(9.0f, DT_UINT4, RM_HALF_DOWN), 9u);
  for (rounding_mode_t mode : kModes) {
    EXPECT_EQ(cvt(NAN, DT_INT32, mode), 0u);
    EXPECT_EQ(cvt(-NAN, DT_INT8, mode), 0u);
    EXPECT_EQ(convert_scalar_bits(0x7e00, DT_INT16, DT_FP16, mode), 0u);
  }
  EXPECT_EQ(convert_scalar_bits(0x3e00, DT_INT8, DT_FP16, RM_HALF_TO_EVEN), 2u);  // fp16 1.5
  EXPECT_EQ(convert_scalar_bits(0xc020, DT_INT8, DT_BFP16, RM_TOWARDS_ZERO), 0xfeu);  // bf16 -2.5
}

TEST(FpToIntCast, InlineHelpers) {
  EXPECT_EQ(saturate<int8_t>(300), 127);
  EXPECT_EQ(saturate<int8_t>(-300), -128);
  EXPECT_EQ(saturate<uint16_t>(-1), 0);
  EXPECT_EQ(saturate<uint32_t>(int64_t(1) << 40), UINT32_MAX);
  EXPECT_EQ(fp_to_int<uint8_t>(-3.5, RM_HALF_AWAY_FROM_ZERO), 0);
  EXPECT_EQ(fp_to_int<uint8_t>(255.5, RM_HALF_DOWN), 255);
  EXPECT_EQ(fp_to_int<int16_t>(-32768.5, RM_HALF_UP), -32768);
  EXPECT_EQ(fp_to_int<int16_t>(-32768.5, RM_HALF_DOWN), -32768);  // -32769 saturates
  EXPECT_EQ(fp_to_int<int32_t>(-2147483648.0, RM_UP), INT32_MIN);
  EXPECT_EQ(fp_to_int<int32_t>(double(NAN), RM_UP), 0);
  EXPECT_EQ(fp_to_int<int32_t>(double(INFINITY), RM_DOWN), INT32_MAX);
  EXPECT_EQ(int_to_fp16(-2049, RM_HALF_AWAY_FROM_ZERO), 0xe801);  // -2050
  EXPECT_EQ(int_to_bf16(257, RM_UP), 0x4381);                       // 258
  EXPECT_EQ(int_to_fp32(16777219, RM_HALF_TO_EVEN), 16777220.0f);
}

// ---- int -> float ------------------------------------------------------------

// Reference int -> fp32 in exact integer arithmetic: the representable
// neighbours lo, lo + ulp of |v| and a choice on the signed value.
uint32_t ref_int_to_fp32(int64_t v, rounding_mode_t mode) {
  const bool neg = v < 0;
  const uint64_t mag = neg ? uint64_t(-v) : uint64_t(v);
  if (mag < (uint64_t(1) << 24)) return bits_of(neg ? -float(mag) : float(mag));  // exact
  int width = 0;
  while ((mag >> width) != 0) ++width;
  const uint64_t ulp = uint64_t(1) << (width - 24);
  const uint64_t lo = mag - mag % ulp, hi = lo + ulp, r = mag - lo;
  uint64_t pick;
  if (r == 0) {
    pick = lo;
  } else {
    const uint64_t toward_pos_inf = neg ? lo : hi, toward_neg_inf = neg ? hi : lo;
    const bool lo_even = ((lo / ulp) % 2) == 0;
    switch (mode) {
      case RM_TOWARDS_ZERO: pick = lo; break;
      case RM_DOWN: pick = toward_neg_inf; break;
      case RM_UP: pick = toward_pos_inf; break;
      default:
        if (2 * r < ulp) pick = lo;
        else if (2 * r > ulp) pick = hi;
        else if (mode == RM_HALF_TO_EVEN) pick = lo_even ? lo : hi;
        else if (mode == RM_HALF_AWAY_FROM_ZERO) pick = hi;
        else if (mode == RM_HALF_UP) pick = toward_pos_inf;
        else pick = toward_neg_inf;
    }
  }
  // pick has at most 24 significant bits (or is a power of two): exact.
  return bits_of(neg ? -float(pick) : float(pick));
}

TEST(IntToFpCast, Int32ToFp32Near2To24Through2To31) {
  std::vector<int64_t> values = {INT32_MIN, INT32_MIN + 1, INT32_MAX, INT32_MAX - 1, 0, 1, -1};
  for (int k = 23; k <= 31; ++k) {
    const int64_t p = int64_t(1) << k;
    for (int64_t d = -600; d <= 600; ++d) {
      if (p + d <= INT32_MAX) values.push_back(p + d);
      if (-p + d >= INT32_MIN) values.push_back(-p + d);
    }
    // Ties and their neighbours in the middle of the binade.
    const int64_t ulp = k >= 24 ? int64_t(1) << (k - 23) : 1;
    for (int64_t base : {p + 12345 * ulp, p + (p / 2) + 7 * ulp})
      for (int64_t d : {-1, 0, 1})
        if (base + ulp / 2 + d <= INT32_MAX) {
          values.push_back(base + ulp / 2 + d);
          values.push_back(-(base + ulp / 2 + d));
        }
  }
  test::Seeded seeded;
  for (int i = 0; i < 200'000; ++i) values.push_back(int32_t(uint32_t(seeded.rng()())));
  int failures = 0;
  for (int64_t v : values) {
    for (rounding_mode_t mode : kModes) {
      const uint32_t want = ref_int_to_fp32(v, mode);
      const uint32_t got = convert_scalar_bits(slot_of(v, DT_INT32), DT_FP32, DT_INT32, mode);
      if (got != want && ++failures <= kMaxReported)
        ADD_FAILURE() << "int32 " << v << " -> fp32 " << rounding_mode_name(mode) << ": got " << hex(got)
                      << ", want " << hex(want);
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(IntToFpCast, Uint32ToFp32NearTop) {
  int failures = 0;
  for (int64_t d = 0; d < 5000; ++d) {
    for (int64_t v : {int64_t(UINT32_MAX) - d, (int64_t(1) << 31) + d, (int64_t(1) << 31) - d}) {
      for (rounding_mode_t mode : kModes) {
        const uint32_t want = ref_int_to_fp32(v, mode);
        const uint32_t got = convert_scalar_bits(uint32_t(v), DT_FP32, DT_UINT32, mode);
        if (got != want && ++failures <= kMaxReported)
          ADD_FAILURE() << "uint32 " << v << " " << rounding_mode_name(mode) << ": got " << hex(got) << ", want "
                        << hex(want);
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(convert_scalar_bits(UINT32_MAX, DT_FP32, DT_UINT32, RM_HALF_TO_EVEN), 0x4f800000u);  // 2^32
  EXPECT_EQ(convert_scalar_bits(UINT32_MAX, DT_FP32, DT_UINT32, RM_TOWARDS_ZERO), 0x4f7fffffu);
  EXPECT_EQ(convert_scalar_bits(uint32_t(INT32_MIN), DT_FP32, DT_INT32, RM_TOWARDS_ZERO), 0xcf000000u);
  EXPECT_EQ(convert_scalar_bits(16777217, DT_FP32, DT_INT32, RM_HALF_TO_EVEN), 0x4b800000u);  // 2^24+1 tie
  EXPECT_EQ(convert_scalar_bits(16777217, DT_FP32, DT_INT32, RM_HALF_AWAY_FROM_ZERO), 0x4b800001u);
  EXPECT_EQ(convert_scalar_bits(uint32_t(-16777217), DT_FP32, DT_INT32, RM_HALF_UP), 0xcb800000u);
  EXPECT_EQ(convert_scalar_bits(uint32_t(-16777217), DT_FP32, DT_INT32, RM_HALF_DOWN), 0xcb800001u);
}

TEST(IntToFpCast, IntToFp16AndBf16RoundOnce) {
  int failures = 0;
  const auto check = [&](int64_t v, data_type_t src) {
    for (rounding_mode_t mode : kModes) {
      for (const RefFormat *ref : {&ref_fp16(), &ref_bf16()}) {
        const data_type_t dst = ref->exp_bits == 5 ? DT_FP16 : DT_BFP16;
        const uint32_t want = ref->round(double(v), mode);  // an int32 is exact in double
        const uint32_t got = convert_scalar_bits(slot_of(v, src), dst, src, mode);
        if (got != want && ++failures <= kMaxReported)
          ADD_FAILURE() << dtype_name(src) << " " << v << " -> " << ref->name << " " << rounding_mode_name(mode)
                        << ": got " << hex(got) << ", want " << hex(want);
      }
    }
  };
  for (int64_t v = -32768; v <= 32767; ++v) check(v, DT_INT16);
  for (int64_t v = 0; v <= 65535; ++v) check(v, DT_UINT16);
  for (int64_t v = -128; v <= 127; ++v) check(v, DT_INT8);
  for (int64_t v = -8; v <= 7; ++v) check(v, DT_INT4);
  test::Seeded seeded;
  for (int i = 0; i < 100'000; ++i) {
    const uint32_t u = uint32_t(seeded.rng()());
    check(int32_t(u), DT_INT32);
    check(u, DT_UINT32);
    check(int32_t(u) >> (u % 31), DT_INT32);  // smaller magnitudes too
  }
  EXPECT_EQ(failures, 0);
  // 2^30 + 2^22 + 1 lies just above a bf16 tie; through fp32 it would first
  // become the tie itself (2^30 + 2^22) and then round to even, 2^30.
  EXPECT_EQ(convert_scalar_bits((1u << 30) + (1u << 22) + 1, DT_BFP16, DT_INT32, RM_HALF_TO_EVEN), 0x4e81u);
  EXPECT_EQ(convert_scalar_bits(65519, DT_FP16, DT_INT32, RM_HALF_TO_EVEN), 0x7bffu);
  EXPECT_EQ(convert_scalar_bits(65520, DT_FP16, DT_INT32, RM_HALF_TO_EVEN), 0x7c00u);
  EXPECT_EQ(convert_scalar_bits(100000, DT_FP16, DT_INT32, RM_TOWARDS_ZERO), 0x7bffu);
  EXPECT_EQ(convert_scalar_bits(uint32_t(-100000), DT_FP16, DT_INT32, RM_DOWN), 0xfc00u);
  EXPECT_EQ(convert_scalar_bits(uint32_t(-100000), DT_FP16, DT_INT32, RM_UP), 0xfbffu);
  EXPECT_EQ(convert_scalar_bits(2049, DT_FP16, DT_INT32, RM_HALF_TO_EVEN), 0x6800u);  // tie 2048 / 2050
  EXPECT_EQ(convert_scalar_bits(2051, DT_FP16, DT_INT32, RM_HALF_TO_EVEN), 0x6802u);
}

// ---- same dtype, bad dtypes and modes -----------------------------------------

TEST(ScalarConvert, SameDtypeKeepsBits) {
  EXPECT_EQ(convert_scalar_bits(0x7f800001u, DT_FP32, DT_FP32, RM_HALF_TO_EVEN), 0x7f800001u);  // sNaN kept
  EXPECT_EQ(convert_scalar_bits(0xabcd7c01u, DT_FP16, DT_FP16, RM_UP), 0x7c01u);
  EXPECT_EQ(convert_scalar_bits(0xabcdff81u, DT_BFP16, DT_BFP16, RM_UP), 0xff81u);
  EXPECT_EQ(convert_scalar_bits(0x1234567fu, DT_INT8, DT_INT8, RM_UP), 0x7fu);
}

void expect_mentions(const std::string &message, const std::vector<std::string> &words) {
  for (const std::string &w : words)
    EXPECT_NE(message.find(w), std::string::npos) << "\"" << w << "\" missing from: " << message;
}

void expect_illegal(uint32_t bits, data_type_t dst, data_type_t src, rounding_mode_t mode,
                    const std::vector<std::string> &words) {
  try {
    convert_scalar_bits(bits, dst, src, mode);
    ADD_FAILURE() << "no error for " << int(dst) << " <- " << int(src) << " mode " << int(mode);
  } catch (const cmodel::Error &e) {
    EXPECT_EQ(e.kind(), cmodel::ErrorKind::illegal_command);
    expect_mentions(e.what(), words);
  }
}

TEST(ScalarConvert, RejectsUnsupportedDtypesAndModes) {
  expect_illegal(0, DT_FP8E5M2, DT_FP32, RM_HALF_TO_EVEN, {"dst_dtype", "15", "DT_FP8E5M2"});
  expect_illegal(0, DT_FP32, DT_TF32, RM_HALF_TO_EVEN, {"src_dtype", "19", "DT_TF32"});
  expect_illegal(0, DT_INT8, data_type_t(2), RM_HALF_TO_EVEN, {"src_dtype", "2"});
  expect_illegal(0, data_type_t(47), DT_INT8, RM_HALF_TO_EVEN, {"DT_FP8E4M3"});
  expect_illegal(0, DT_FP16, DT_FP32, kBadMode, {"rounding mode", "7"});
  expect_illegal(0, DT_INT8, DT_FP32, kBadMode, {"rounding mode", "7"});
  expect_illegal(0, DT_FP32, DT_INT8, kBadMode, {"rounding mode", "7"});
  expect_illegal(0, DT_FP32, data_type_t(63), kBadMode, {"src_dtype", "63"});  // dtype checked first
}

// ---- the exported C functions --------------------------------------------------
// Called outside a kernel run: a failing call returns a zero scalar and
// leaves its message in cmodel_last_error().

scalar_t scalar_bits(uint32_t u) {
  scalar_t s;
  std::memcpy(&s, &u, sizeof s);
  return s;
}
uint32_t bits_of(scalar_t s) {
  uint32_t u;
  std::memcpy(&u, &s, sizeof u);
  return u;
}

TEST(ScalarCastApi, ConvertsValidPairs) {
  scalar_t one_and_half;
  one_and_half.f32 = 1.5f;
  EXPECT_EQ(tpu_fp_cast(one_and_half, DT_FP16, DT_FP32, RM_HALF_TO_EVEN).f16.bits, 0x3e00);
  EXPECT_EQ(tpu_fp_cast(one_and_half, DT_BFP16, DT_FP32, RM_HALF_TO_EVEN).bf16.bits, 0x3fc0);
  scalar_t h;
  h.u32 = 0;
  h.f16.bits = 0x3e00;
  EXPECT_EQ(tpu_fp_cast(h, DT_FP32, DT_FP16, RM_HALF_TO_EVEN).f32, 1.5f);
  EXPECT_EQ(tpu_fp_to_int_cast(one_and_half, DT_INT8, DT_FP32, RM_TOWARDS_ZERO).s8, 1);
  EXPECT_EQ(tpu_fp_to_int_cast(one_and_half, DT_INT8, DT_FP32, RM_HALF_TO_EVEN).s8, 2);
  scalar_t i;
  i.u32 = 0;
  i.s16 = -300;
  EXPECT_EQ(tpu_int_cast(i, DT_INT8, DT_INT16).s8, -128);
  EXPECT_EQ(tpu_int_cast(i, DT_UINT16, DT_INT16).u16, 0);
  EXPECT_EQ(tpu_int_to_fp_cast(i, DT_FP32, DT_INT16, RM_HALF_TO_EVEN).f32, -300.0f);
  EXPECT_EQ(tpu_cast(i, DT_FP16, DT_INT16, RM_HALF_TO_EVEN).f16.bits, 0xdcb0);  // -300
  EXPECT_EQ(tpu_cast(one_and_half, DT_UINT8, DT_FP32, RM_UP).u8, 2);
  EXPECT_EQ(bits_of(tpu_cast(scalar_bits(0xffffff85u), DT_INT32, DT_INT8, RM_HALF_TO_EVEN)), 0xffffff85u);
}

void expect_api_error(scalar_t result, const std::vector<std::string> &words) {
  EXPECT_EQ(bits_of(result), 0u);
  const char *message = cmodel_last_error();
  ASSERT_NE(message, nullptr);
  expect_mentions(message, words);
}

TEST(ScalarCastApi, ChecksDtypeClasses) {
  const scalar_t s = scalar_bits(0x3f800000u);
  expect_api_error(tpu_fp_cast(s, DT_INT8, DT_FP32, RM_HALF_TO_EVEN), {"dst_dtype", "DT_INT8"});
  expect_api_error(tpu_fp_cast(s, DT_FP16, DT_UINT32, RM_HALF_TO_EVEN), {"src_dtype", "DT_UINT32"});
  expect_api_error(tpu_int_cast(s, DT_FP32, DT_INT32), {"dst_dtype", "DT_FP32"});
  expect_api_error(tpu_int_cast(s, DT_INT32, DT_BFP16), {"src_dtype", "DT_BFP16"});
  expect_api_error(tpu_fp_to_int_cast(s, DT_FP16, DT_FP32, RM_HALF_TO_EVEN), {"dst_dtype", "DT_FP16"});
  expect_api_error(tpu_fp_to_int_cast(s, DT_INT8, DT_INT16, RM_HALF_TO_EVEN), {"src_dtype", "DT_INT16"});
  expect_api_error(tpu_int_to_fp_cast(s, DT_UINT8, DT_INT8, RM_HALF_TO_EVEN), {"dst_dtype", "DT_UINT8"});
  expect_api_error(tpu_int_to_fp_cast(s, DT_FP32, DT_FP32, RM_HALF_TO_EVEN), {"src_dtype", "DT_FP32"});
  expect_api_error(tpu_cast(s, DT_FP8E5M2, DT_FP32, RM_HALF_TO_EVEN), {"dst_dtype", "DT_FP8E5M2"});
  expect_api_error(tpu_cast(s, DT_FP16, DT_FP32, kBadMode), {"rounding mode", "7"});
  expect_api_error(tpu_fp_cast(s, DT_FP16, DT_FP32, kBadMode), {"rounding mode", "7"});
  expect_api_error(tpu_fp_to_int_cast(s, DT_INT8, DT_FP32, kBadMode), {"rounding mode", "7"});
}

}  // namespace
