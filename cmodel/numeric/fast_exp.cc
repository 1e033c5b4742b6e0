#include "cmodel/numeric/fast_exp.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "cmodel/numeric/bulk_convert.h"

namespace cmodel::numeric {
namespace {

constexpr int kTableBits = 5;
constexpr int kTableSize = 1 << kTableBits;

// 2^(j/32) for j in [0, 32), worked out in long double and rounded once.
const std::array<double, kTableSize> kPow2Fraction = [] {
  std::array<double, kTableSize> t{};
  for (int j = 0; j < kTableSize; ++j) t[size_t(j)] = double(std::exp2l((long double)j / kTableSize));
  return t;
}();

// x = n ln2/32 + r. ln2/32 in two parts: the first with 37 significant bits,
// so n * kStepHigh is exact for |n| < 2^16 (|x| <= 700 keeps |n| < 32400),
// and x - n * kStepHigh is exact too (Sterbenz: the two are within a factor
// of two once n != 0).
constexpr double kInvStep = 0x1.71547652b82fep+5;  // 32 / ln2
constexpr double kStepHigh = 0x1.62e42fefa0000p-6;
constexpr double kStepLow = 0x1.cf79abc9e3b3ap-45;
constexpr double kRoundShift = 0x1.8p52;  // adding and removing it rounds to an integer
constexpr double kLimit = 700;            // e^x stays a normal double on both sides

// The grid of floats and their midpoints: doubles whose top 1 + 11 + 24
// bits agree lie in one cell (no 25-bit value strictly between them). For
// results below the smallest normal float the float grid is coarser, so a
// cell of this grid still never straddles one of its points.
constexpr int kCellShift = 52 - 24;
constexpr uint64_t kCellMask = (uint64_t(1) << kCellShift) - 1;
// How far, in units of the last place of the result, the result may be from
// std::exp's: this evaluation's error is a few units, std::exp's below one;
// 512 units (a relative 2^-44 at least) leaves a wide margin and sends one
// argument in 2^18 to std::exp.
constexpr uint64_t kMarginUlps = 512;

double approximate_exp(double x) {
  const double n = (x * kInvStep + kRoundShift) - kRoundShift;
  const int64_t k = int64_t(n);
  const double r = (x - n * kStepHigh) - n * kStepLow;  // |r| <= ln2/64 (ln2/32 in directed modes)
  // e^r to degree 6: the first omitted term is below 2^-51 for |r| <= ln2/32.
  const double p =
      1 + r * (1 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720))))));
  const double y = kPow2Fraction[size_t(k & (kTableSize - 1))] * p;  // in [0.98, 2.03]
  // Times 2^(k >> 5) through the exponent field: |k >> 5| < 1020 keeps it normal.
  return std::bit_cast<double>(std::bit_cast<uint64_t>(y) + (uint64_t(k >> kTableBits) << 52));
}

bool inside_one_cell(uint64_t bits) {
  const uint64_t low = bits - kMarginUlps, high = bits + kMarginUlps;
  return (low >> kCellShift) == (high >> kCellShift) && (low & kCellMask) != 0;
}

#if defined(__x86_64__) || defined(__i386__)
// approximate_exp and inside_one_cell on 4 lanes; the lanes that fail (and
// a tail of fewer than 4) are left to the scalar function. Returns how many
// leading elements were done.
#define EXP_AVX2 __attribute__((target("avx2"), always_inline)) inline
EXP_AVX2 __m256d poly4(__m256d r) {
  __m256d p = _mm256_set1_pd(1.0 / 720);
  for (const double c : {1.0 / 120, 1.0 / 24, 1.0 / 6, 1.0 / 2, 1.0, 1.0})
    p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(c));
  return p;
}

__attribute__((target("avx2"))) int64_t exp_n_avx2(const float *x, double *y, int64_t n) {
  const __m256d inv_step = _mm256_set1_pd(kInvStep), shift = _mm256_set1_pd(kRoundShift);
  const __m256d step_high = _mm256_set1_pd(kStepHigh), step_low = _mm256_set1_pd(kStepLow);
  const __m128 limit = _mm_set1_ps(float(kLimit)), magnitude = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  const __m256i shift_bits = _mm256_castpd_si256(shift), margin = _mm256_set1_epi64x(int64_t(kMarginUlps));
  const __m256i zero = _mm256_setzero_si256(), cell_mask = _mm256_set1_epi64x(int64_t(kCellMask));
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 xf = _mm_loadu_ps(x + i);
    const bool in_range = _mm_movemask_ps(_mm_cmple_ps(_mm_and_ps(xf, magnitude), limit)) == 0xf;  // false for NaN
    const __m256d xd = _mm256_cvtps_pd(xf);
    const __m256d t = _mm256_add_pd(_mm256_mul_pd(xd, inv_step), shift);
    const __m256d nd = _mm256_sub_pd(t, shift);
    const __m256i k = _mm256_sub_epi64(_mm256_castpd_si256(t), shift_bits);  // n as an integer
    const __m256d r = _mm256_sub_pd(_mm256_sub_pd(xd, _mm256_mul_pd(nd, step_high)), _mm256_mul_pd(nd, step_low));
    const __m256d table = _mm256_i64gather_pd(kPow2Fraction.data(), _mm256_and_si256(k, _mm256_set1_epi64x(kTableSize - 1)), 8);
    const __m256d scaled = _mm256_mul_pd(table, poly4(r));
    // 2^(k >> 5) added to the exponent field: (k & ~31) << 47 wraps negative k correctly.
    const __m256i exponent = _mm256_slli_epi64(_mm256_andnot_si256(_mm256_set1_epi64x(kTableSize - 1), k), 52 - kTableBits);
    const __m256i bits = _mm256_add_epi64(_mm256_castpd_si256(scaled), exponent);
    const __m256i low = _mm256_sub_epi64(bits, margin), high = _mm256_add_epi64(bits, margin);
    const __m256i same_cell = _mm256_cmpeq_epi64(_mm256_srli_epi64(low, kCellShift), _mm256_srli_epi64(high, kCellShift));
    const __m256i on_point = _mm256_cmpeq_epi64(_mm256_and_si256(low, cell_mask), zero);
    const int good = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_andnot_si256(on_point, same_cell)));
    if (in_range && good == 0xf) {
      _mm256_storeu_pd(y + i, _mm256_castsi256_pd(bits));
      continue;
    }
    for (int64_t j = i; j < i + 4; ++j) y[j] = exp_before_float_rounding(x[j]);
  }
  return i;
}
#undef EXP_AVX2
#endif

}  // namespace

double exp_before_float_rounding(double x) {
  if (!(std::fabs(x) <= kLimit)) return std::exp(x);  // NaN, infinities, far out of fp32 range
  const uint64_t bits = std::bit_cast<uint64_t>(approximate_exp(x));
  return inside_one_cell(bits) ? std::bit_cast<double>(bits) : std::exp(x);
}

void exp_before_float_rounding_n(const float *x, double *y, int64_t n) {
  int64_t i = 0;
#if defined(__x86_64__) || defined(__i386__)
  if (bulk_convert_isa() == BulkIsa::f16c_avx2) i = exp_n_avx2(x, y, n);
#endif
  for (; i < n; ++i) y[i] = exp_before_float_rounding(x[i]);
}

}  // namespace cmodel::numeric
