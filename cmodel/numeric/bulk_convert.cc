// bulk_convert.cc: the run-at-a-time conversions of bulk_convert.h, a
// portable implementation and an F16C + AVX2 one chosen at run time.
//
// Both must give exactly the bits of float_convert.h's per-element
// functions; tests/cmodel/numeric_bulk_convert_test.cc checks every fp16 and bf16
// input (and a dense sample of fp32 ones) in every rounding mode, for both.
#include "cmodel/numeric/bulk_convert.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "cmodel/numeric/float_convert.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TPU_BULK_HAVE_X86 1
#else
#define TPU_BULK_HAVE_X86 0
#endif

namespace cmodel::numeric {
namespace {

// ---- portable pieces (also inlined into the AVX2 functions) ------------------

// fp16 -> fp32 without branches, so the loop vectorises: shift exponent and
// fraction into place and rebias; an inf/NaN takes the fp32 all-ones
// exponent with its payload unchanged (a signalling NaN stays signalling,
// as fp16_to_fp32 keeps it); a subnormal is renormalised by an exact fp32
// subtraction (2^-14 * (1 + f) - 2^-14 = f * 2^-14, representable).
[[gnu::always_inline]] inline float widen_fp16(uint16_t h) {
  constexpr uint32_t exp_mask = 0x7c00u << 13;  // the fp16 exponent, shifted into place
  const uint32_t shifted = uint32_t(h & 0x7fff) << 13;
  const uint32_t exp = shifted & exp_mask;
  const uint32_t rebiased = shifted + ((127 - 15) << 23);
  const uint32_t special = rebiased + ((128 - 16) << 23);  // exponent field -> 0xff
  const float subnormal = std::bit_cast<float>(rebiased + (1u << 23)) - std::bit_cast<float>(113u << 23);
  const uint32_t magnitude = exp == exp_mask ? special : exp == 0 ? std::bit_cast<uint32_t>(subnormal) : rebiased;
  return std::bit_cast<float>(magnitude | (uint32_t(h & 0x8000) << 16));
}

// fp32 -> bf16 by integer rounding: bf16 is the top half of an fp32 with
// the same exponent range, so rounding is adding an increment to the
// magnitude and keeping its top 16 bits; a carry moves into the exponent as
// it should (up to infinity on overflow, which the modes that add nothing
// for that sign never reach: exactly IEEE's max-finite cases). The
// increment is round_up_magnitude() in integer form: rem = low 16 bits,
// half = 0x8000. NaN keeps its top payload bits and is quieted, as
// narrow_fp32_bits does.
template <rounding_mode_t Mode>
[[gnu::always_inline]] inline uint16_t narrow_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t magnitude = bits & 0x7fffffffu;
  const bool negative = (bits >> 31) != 0;
  uint32_t increment = 0;
  if constexpr (Mode == RM_HALF_TO_EVEN) increment = 0x7fffu + ((magnitude >> 16) & 1);
  if constexpr (Mode == RM_HALF_AWAY_FROM_ZERO) increment = 0x8000u;
  if constexpr (Mode == RM_DOWN) increment = negative ? 0xffffu : 0;
  if constexpr (Mode == RM_UP) increment = negative ? 0 : 0xffffu;
  if constexpr (Mode == RM_HALF_UP) increment = negative ? 0x7fffu : 0x8000u;
  if constexpr (Mode == RM_HALF_DOWN) increment = negative ? 0x8000u : 0x7fffu;
  const uint32_t rounded = ((bits & 0x80000000u) | ((magnitude + increment) & 0x7fff0000u)) >> 16;
  const uint32_t nan = (bits >> 16) | Bf16Format::quiet_bit;
  return uint16_t(magnitude > 0x7f800000u ? nan : rounded);
}

[[gnu::always_inline]] inline void widen_fp16_loop(const uint16_t *src, int64_t step, float *out, int64_t n) {
  if (step == 1)
    for (int64_t i = 0; i < n; ++i) out[i] = widen_fp16(src[i]);
  else
    for (int64_t i = 0; i < n; ++i) out[i] = widen_fp16(src[i * step]);
}

[[gnu::always_inline]] inline void widen_bf16_loop(const uint16_t *src, int64_t step, float *out, int64_t n) {
  if (step == 1)
    for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_fp32(src[i]);
  else
    for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_fp32(src[i * step]);
}

template <rounding_mode_t Mode>
[[gnu::always_inline]] inline void narrow_bf16_loop(const float *in, uint16_t *dst, int64_t step, int64_t n) {
  if (step == 1)
    for (int64_t i = 0; i < n; ++i) dst[i] = narrow_bf16<Mode>(in[i]);
  else
    for (int64_t i = 0; i < n; ++i) dst[i * step] = narrow_bf16<Mode>(in[i]);
}


// fp32 -> fp16 element by element: the reference itself.
void narrow_fp16_each(const float *in, uint16_t *dst, int64_t step, int64_t n, rounding_mode_t mode) {
  for (int64_t i = 0; i < n; ++i) dst[i * step] = fp32_to_fp16(in[i], mode);
}

void widen_fp16_portable(const uint16_t *src, int64_t step, float *out, int64_t n) {
  widen_fp16_loop(src, step, out, n);
}
void widen_bf16_portable(const uint16_t *src, int64_t step, float *out, int64_t n) {
  widen_bf16_loop(src, step, out, n);
}
void narrow_bf16_portable(const float *in, uint16_t *dst, int64_t step, int64_t n, rounding_mode_t mode) {
  with_rounding(mode, [&](auto m) { narrow_bf16_loop<decltype(m)::value>(in, dst, step, n); });
}

// ---- F16C + AVX2 -----------------------------------------------------------------

#if TPU_BULK_HAVE_X86
#define TPU_BULK_AVX2 __attribute__((target("avx2,f16c")))

// 8 fp16 through vcvtph2ps, which is exact but quiets signalling NaNs:
// when a lane holds an inf or NaN (rare), those lanes take the pure
// re-encoding instead.
TPU_BULK_AVX2 inline __m256 widen8_fp16(__m128i h) {
  const __m256 converted = _mm256_cvtph_ps(h);
  const __m128i exp_mask = _mm_set1_epi16(0x7c00);
  const __m128i special16 = _mm_cmpeq_epi16(_mm_and_si128(h, exp_mask), exp_mask);
  if (_mm_testz_si128(special16, special16)) return converted;
  const __m256i h32 = _mm256_cvtepu16_epi32(h);
  const __m256i reencoded = _mm256_or_si256(
      _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(h32, _mm256_set1_epi32(0x8000)), 16),
                      _mm256_slli_epi32(_mm256_and_si256(h32, _mm256_set1_epi32(0x7fff)), 13)),
      _mm256_set1_epi32(0x7f800000));
  const __m256i special = _mm256_cvtepi16_epi32(special16);
  return _mm256_blendv_ps(converted, _mm256_castsi256_ps(reencoded), _mm256_castsi256_ps(special));
}

// Whole blocks of 8 straight from memory when contiguous; otherwise (and
// for the last partial block) through a small buffer.
TPU_BULK_AVX2 void widen_fp16_avx2(const uint16_t *src, int64_t step, float *out, int64_t n) {
  int64_t i = 0;
  if (step == 1)
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(out + i, widen8_fp16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i))));
  for (; i < n; i += 8) {
    const int64_t count = std::min<int64_t>(8, n - i);
    alignas(16) uint16_t block[8] = {};
    for (int64_t k = 0; k < count; ++k) block[k] = src[(i + k) * step];
    alignas(32) float wide[8];
    _mm256_store_ps(wide, widen8_fp16(_mm_load_si128(reinterpret_cast<const __m128i *>(block))));
    std::memcpy(out + i, wide, size_t(count) * sizeof(float));
  }
}

// 8 fp32 at a time through vcvtps2ph with the rounding in its immediate
// (0 nearest-even, 1 down, 2 up, 3 toward zero: IEEE's own directed modes,
// overflow to max-finite included). Its NaN result, the payload's top bits
// with the quiet bit set, is narrow_fp32_bits's rule.
template <int Imm>
TPU_BULK_AVX2 void narrow_fp16_f16c(const float *in, uint16_t *dst, int64_t step, int64_t n) {
  int64_t i = 0;
  if (step == 1)
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), Imm));
  for (; i < n; i += 8) {
    const int64_t count = std::min<int64_t>(8, n - i);
    alignas(32) float block[8] = {};
    std::memcpy(block, in + i, size_t(count) * sizeof(float));
    alignas(16) uint16_t narrow[8];
    _mm_store_si128(reinterpret_cast<__m128i *>(narrow), _mm256_cvtps_ph(_mm256_load_ps(block), Imm));
    for (int64_t k = 0; k < count; ++k) dst[(i + k) * step] = narrow[k];
  }
}

void narrow_fp16_avx2(const float *in, uint16_t *dst, int64_t step, int64_t n, rounding_mode_t mode) {
  switch (mode) {
    case RM_HALF_TO_EVEN: return narrow_fp16_f16c<_MM_FROUND_TO_NEAREST_INT>(in, dst, step, n);
    case RM_DOWN: return narrow_fp16_f16c<_MM_FROUND_TO_NEG_INF>(in, dst, step, n);
    case RM_UP: return narrow_fp16_f16c<_MM_FROUND_TO_POS_INF>(in, dst, step, n);
    case RM_TOWARDS_ZERO: return narrow_fp16_f16c<_MM_FROUND_TO_ZERO>(in, dst, step, n);
    default: return narrow_fp16_each(in, dst, step, n, mode);  // no F16C encoding for this mode
  }
}

// bf16 needs no F16C: the portable loops, vectorised for AVX2.
TPU_BULK_AVX2 void widen_bf16_avx2(const uint16_t *src, int64_t step, float *out, int64_t n) {
  widen_bf16_loop(src, step, out, n);
}
TPU_BULK_AVX2 void narrow_bf16_avx2(const float *in, uint16_t *dst, int64_t step, int64_t n, rounding_mode_t mode) {
  with_rounding(mode, [&](auto m) { narrow_bf16_loop<decltype(m)::value>(in, dst, step, n); });
}

bool host_has_f16c_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}
#else
bool host_has_f16c_avx2() { return false; }
#endif

// ---- dispatch ---------------------------------------------------------------------

struct Implementation {
  void (*widen_fp16)(const uint16_t *, int64_t, float *, int64_t);
  void (*widen_bf16)(const uint16_t *, int64_t, float *, int64_t);
  void (*narrow_fp16)(const float *, uint16_t *, int64_t, int64_t, rounding_mode_t);
  void (*narrow_bf16)(const float *, uint16_t *, int64_t, int64_t, rounding_mode_t);
};

constexpr Implementation portable{widen_fp16_portable, widen_bf16_portable, narrow_fp16_each, narrow_bf16_portable};
#if TPU_BULK_HAVE_X86
constexpr Implementation f16c_avx2{widen_fp16_avx2, widen_bf16_avx2, narrow_fp16_avx2, narrow_bf16_avx2};
#else
constexpr Implementation f16c_avx2 = portable;
#endif

BulkIsa best_isa() { return host_has_f16c_avx2() ? BulkIsa::f16c_avx2 : BulkIsa::portable; }

struct Current {
  BulkIsa isa;
  const Implementation *impl;
};

Current &current() {
  static Current c = [] {
    const BulkIsa isa = best_isa();
    return Current{isa, isa == BulkIsa::f16c_avx2 ? &f16c_avx2 : &portable};
  }();
  return c;
}

}  // namespace

void fp16_to_fp32_n(const uint16_t *src, int64_t step, float *out, int64_t n) {
  current().impl->widen_fp16(src, step, out, n);
}
void bf16_to_fp32_n(const uint16_t *src, int64_t step, float *out, int64_t n) {
  current().impl->widen_bf16(src, step, out, n);
}
void fp32_to_fp16_n(const float *in, uint16_t *dst, int64_t step, int64_t n, rounding_mode_t mode) {
  current().impl->narrow_fp16(in, dst, step, n, mode);
}
void fp32_to_bf16_n(const float *in, uint16_t *dst, int64_t step, int64_t n, rounding_mode_t mode) {
  current().impl->narrow_bf16(in, dst, step, n, mode);
}

BulkIsa bulk_convert_isa() { return current().isa; }

BulkIsa set_bulk_convert_isa(BulkIsa isa) {
  Current &c = current();
  const BulkIsa previous = c.isa;
  if (isa == BulkIsa::f16c_avx2 && best_isa() != BulkIsa::f16c_avx2) isa = BulkIsa::portable;
  c = Current{isa, isa == BulkIsa::f16c_avx2 ? &f16c_avx2 : &portable};
  return previous;
}

const char *bulk_isa_name(BulkIsa isa) { return isa == BulkIsa::f16c_avx2 ? "f16c+avx2" : "portable"; }

}  // namespace cmodel::numeric
