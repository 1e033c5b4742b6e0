// numeric_fast_exp_test.cc: exp_before_float_rounding (cmodel/numeric/
// fast_exp.h) rounds like std::exp. The reference is std::exp in double,
// rounded by the host itself: a conversion to float in each of the four
// IEEE rounding modes, and to odd (written here: truncate, then set the
// last bit when anything was dropped), the first step of the emulator's
// narrowing to fp16 / bf16.
//
// Inputs: every 251st fp32 encoding (about 17 million, all signs, zeros,
// subnormals, both ends of exp's finite range, infinities and NaNs), a
// dense run around the ends of the range, and special values; through the
// scalar function and the bulk one with each implementation the host can
// run. An exhaustive run over all 2^32 encodings was made once when the
// function was written (no difference).
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel/numeric/bulk_convert.h"
#include "cmodel/numeric/fast_exp.h"
#include "support/isa_scope.h"

namespace {

using namespace cmodel::numeric;

constexpr int kMaxReported = 10;
constexpr int64_t kMaxUlps = 16;

// Round to odd at fp32 precision: truncated (the nearest float, stepped
// back toward zero when it lies beyond y), the last bit set when inexact.
uint32_t round_to_odd_bits(double y) {
  float truncated = float(y);
  if (std::fabs(double(truncated)) > std::fabs(y)) truncated = std::nextafterf(truncated, 0.0f);
  uint32_t b = std::bit_cast<uint32_t>(truncated);
  if (std::isfinite(y) && double(truncated) != y) b |= 1;
  return b;
}

// NaNs compare as "any NaN" (the payload is std::exp's business).
bool same_float(uint32_t a, uint32_t b) {
  return a == b || (std::isnan(std::bit_cast<float>(a)) && std::isnan(std::bit_cast<float>(b)));
}

// Compares fast[i] with std::exp(x[i]) under every rounding; returns the
// number of mismatches and reports the first few.
int64_t compare(const std::vector<float> &x, const std::vector<double> &fast, const std::string &what) {
  std::vector<double> exact(x.size());
  for (size_t i = 0; i < x.size(); ++i) exact[i] = std::exp(double(x[i]));
  int64_t bad = 0;
  auto report = [&](size_t i, const char *rounding, uint32_t got, uint32_t want) {
    if (++bad <= kMaxReported)
      ADD_FAILURE() << what << ": exp(" << x[i] << " = 0x" << std::hex << std::bit_cast<uint32_t>(x[i]) << ") rounded "
                    << rounding << ": got 0x" << got << ", std::exp gives 0x" << want << std::dec;
  };
  const struct {
    int mode;
    const char *name;
  } modes[] = {{FE_TONEAREST, "to nearest"}, {FE_TOWARDZERO, "toward zero"}, {FE_UPWARD, "up"}, {FE_DOWNWARD, "down"}};
  // The argument for the roundings above (fast_exp.h): a value that is not
  // std::exp's own is within a few units in the last place of it, far
  // inside the function's margin of 512. Checked directly, so an error too
  // small to flip a sampled rounding still shows.
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(exact[i]) || fast[i] == exact[i]) continue;
    const int64_t fast_bits = std::bit_cast<int64_t>(fast[i]), exact_bits = std::bit_cast<int64_t>(exact[i]);
    const int64_t ulps = fast_bits > exact_bits ? fast_bits - exact_bits : exact_bits - fast_bits;
    if (ulps > kMaxUlps && ++bad <= kMaxReported)
      ADD_FAILURE() << what << ": exp(" << x[i] << ") = " << fast[i] << " is " << ulps
                    << " units in the last place from std::exp's " << exact[i];
  }
  const int previous = std::fegetround();
  for (const auto &m : modes) {
    std::fesetround(m.mode);
    for (size_t i = 0; i < x.size(); ++i) {
      // Volatile: the conversions must happen in the mode just set (the
      // compiler assumes one mode throughout without -frounding-math).
      const volatile double fast_value = fast[i], exact_value = exact[i];
      const volatile float got = float(fast_value), want = float(exact_value);
      const uint32_t got_bits = std::bit_cast<uint32_t>(float(got)), want_bits = std::bit_cast<uint32_t>(float(want));
      if (!same_float(got_bits, want_bits)) report(i, m.name, got_bits, want_bits);
    }
  }
  std::fesetround(previous);
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t got = round_to_odd_bits(fast[i]), want = round_to_odd_bits(exact[i]);
    if (!same_float(got, want)) report(i, "to odd", got, want);
  }
  return bad;
}

std::vector<float> sampled_encodings() {
  std::vector<float> x;
  for (uint64_t b = 0; b <= 0xffffffffu; b += 251) x.push_back(std::bit_cast<float>(uint32_t(b)));
  return x;
}

// Every encoding within 2^16 of the ends of the range where e^x is a
// finite, non-zero fp32 (overflow above 88.72, subnormal results below
// -87.34, zero below -103.97), and of 0 on both sides.
std::vector<float> range_ends() {
  std::vector<float> x;
  for (const float centre : {88.72283935546875f, -87.33654022216797f, -103.97207641601562f, 0.0f, -0.0f}) {
    const uint32_t c = std::bit_cast<uint32_t>(centre);
    for (uint32_t d = 0; d < (1u << 16); ++d) {
      x.push_back(std::bit_cast<float>(c + d));
      if (c >= d) x.push_back(std::bit_cast<float>(c - d));
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (const float v : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(),
                        std::numeric_limits<float>::denorm_min(), 700.0f, -700.0f, 700.5f, -700.5f})
    x.push_back(v);
  return x;
}

TEST(FastExp, ScalarRoundsLikeStdExp) {
  for (const auto &x : {sampled_encodings(), range_ends()}) {
    std::vector<double> fast(x.size());
    for (size_t i = 0; i < x.size(); ++i) fast[i] = exp_before_float_rounding(double(x[i]));
    EXPECT_EQ(compare(x, fast, "scalar"), 0);
  }
}

class FastExpBulk : public testing::TestWithParam<BulkIsa> {};

TEST_P(FastExpBulk, RoundsLikeStdExp) {
  const test::IsaScope scope(GetParam());
  if (bulk_convert_isa() != GetParam()) GTEST_SKIP() << "this host has no AVX2";
  for (const auto &x : {sampled_encodings(), range_ends()}) {
    std::vector<double> fast(x.size());
    exp_before_float_rounding_n(x.data(), fast.data(), int64_t(x.size()));
    EXPECT_EQ(compare(x, fast, bulk_isa_name(GetParam())), 0);
  }
}

// Lengths that leave a partial block of 4, and blocks mixing lanes that
// need std::exp (NaN, out of range) with ordinary ones.
TEST_P(FastExpBulk, PartialBlocksAndMixedLanes) {
  const test::IsaScope scope(GetParam());
  if (bulk_convert_isa() != GetParam()) GTEST_SKIP() << "this host has no AVX2";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> pattern = {0.5f, nan, -1.25f, 1000.0f, 3.0f, -2000.0f, 88.0f, -100.0f, 1e-30f};
  for (size_t n = 0; n <= pattern.size(); ++n) {
    const std::vector<float> x(pattern.begin(), pattern.begin() + long(n));
    std::vector<double> fast(n, -1.0);
    exp_before_float_rounding_n(x.data(), fast.data(), int64_t(n));
    EXPECT_EQ(compare(x, fast, std::string(bulk_isa_name(GetParam())) + ", n = " + std::to_string(n)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, FastExpBulk, testing::Values(BulkIsa::portable, BulkIsa::f16c_avx2),
                         [](const testing::TestParamInfo<BulkIsa> &info) {
                           return std::string(info.param == BulkIsa::portable ? "portable" : "avx2");
                         });

}  // namespace
