// half_lanes.h: element-wise float commands touching fp16 / bf16 over
// contiguous runs, converting, computing and converting back 8 lanes at a
// time in registers (F16C + AVX2, chosen at run time).
//
// The block path of elementwise.h converts a whole block of each operand to
// fp32 in scratch arrays, applies the op, then converts the block back: three
// trips through memory per element. Here each group of 8 elements is widened
// in registers (vcvtph2ps, or a shift for bf16), the op runs on the 8 fp32
// lanes and the results are narrowed straight into dst (vcvtps2ph, or
// integer rounding for bf16), so a run is read and written once.
//
// Bits: every lane goes through exactly the per-element reference
// DstType::store(op(SrcType::load(x)...)) (the dtype types of
// numeric/dtypes.h):
//  - a group of 8 holding a NaN in any source takes the reference per
//    element: vcvtph2ps quiets signalling NaNs (fp16_to_fp32 keeps them);
//  - otherwise widening is exact in both;
//  - the op is the same scalar callable, applied lane by lane (the compiler
//    turns the 8-lane loop into vector instructions with IEEE fp32 semantics
//    identical to the scalar ones);
//  - vcvtps2ph in nearest-even mode equals fp32_to_fp16(RM_HALF_TO_EVEN),
//    NaN payload rule included, and the bf16 narrowing is the integer
//    rounding of numeric/bulk_convert.cc, both checked exhaustively by
//    tests/cmodel/numeric_bulk_convert_test.cc and again through this path by
//    tests/cmodel/bdc/bdc_half_lanes_test.cc.
// One thing no path fixes: an op on two NaNs returns one of them, and which
// depends on the operand order the compiler emitted for that loop (x86
// returns the first; a + b may be emitted either way round), so the
// per-element loop itself may give a's payload in one instantiation and
// b's in another. fp_arith.h leaves NaN results to the host's arithmetic.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "cmodel/numeric/bulk_convert.h"
#include "cmodel/numeric/dtypes.h"
#include "cmodel/numeric/float_convert.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TPU_HALF_LANES_X86 1
#else
#define TPU_HALF_LANES_X86 0
#endif

namespace cmodel::bdc {

// Whether the lane path runs on this host (and has not been switched off by
// numeric::set_bulk_convert_isa, which tests use to force the portable path).
inline bool half_lanes_available() {
  return TPU_HALF_LANES_X86 && numeric::bulk_convert_isa() == numeric::BulkIsa::f16c_avx2;
}

#if TPU_HALF_LANES_X86
#define TPU_HALF_LANES_TARGET __attribute__((target("avx2,f16c")))
// The lane helpers: always inlined (left to itself the compiler may call
// them, passing vectors through memory).
#define TPU_HALF_LANES_HELPER __attribute__((target("avx2,f16c"), always_inline)) inline

namespace lanes {

// 8 values of a float dtype's storage widened to fp32; sets `reference`
// when the group holds a NaN, which takes the per-element path (see above).
template <typename D>
TPU_HALF_LANES_HELPER __m256 load8(const typename D::Storage *p, bool &reference) {
  using S = typename D::Storage;
  if constexpr (std::is_same_v<S, float>) {
    const __m256 v = _mm256_loadu_ps(p);
    reference |= _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0;
    return v;
  } else {
    constexpr int16_t inf = int16_t(D::Format::inf_bits);
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    const __m128i magnitude = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
    const __m128i nan = _mm_cmpgt_epi16(magnitude, _mm_set1_epi16(inf));
    reference |= !_mm_testz_si128(nan, nan);
    if constexpr (std::is_same_v<D, numeric::Fp16>)
      return _mm256_cvtph_ps(h);
    else  // bf16: the upper half of an fp32
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}

// fp32 -> bf16 nearest-even, 8 lanes, each result in the low half of its
// 32-bit lane: numeric::fp32_to_bf16's bits by integer rounding (a NaN
// keeps its top payload bits, quieted). The increment goes onto the whole
// encoding: below the NaNs the magnitude plus 0x8000 stays under 2^31, so it
// never carries into the sign, and a carry into the exponent is the
// rounding up to the next binade or to infinity.
TPU_HALF_LANES_HELPER __m256i round8_bf16(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i top = _mm256_srli_epi32(bits, 16);
  const __m256i odd = _mm256_and_si256(top, _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd)), 16);
  const __m256i nan = _mm256_or_si256(top, _mm256_set1_epi32(numeric::Bf16Format::quiet_bit));
  const __m256i magnitude = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
  const __m256i is_nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
  return _mm256_blendv_epi8(rounded, nan, is_nan);
}

TPU_HALF_LANES_HELPER __m128i narrow8_bf16(__m256 v) {
  const __m256i packed = _mm256_packus_epi32(round8_bf16(v), _mm256_setzero_si256());
  // packus works per 128-bit half: lanes 0-3 sit in the low quadword of each.
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, _MM_SHUFFLE(3, 1, 2, 0)));
}

// 16 bf16 values widened to fp32 without crossing 128-bit halves: `low`
// (8 aligned floats) gets elements 0-3 and 8-11, `high` 4-7 and 12-15 (a bf16 is the upper
// half of its fp32); pack16_bf16 undoes the order. Sets `reference` when
// the group holds a NaN.
TPU_HALF_LANES_HELPER void widen16_bf16(const uint16_t *p, float *low, float *high, bool &reference) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
  const __m256i nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(0x7f80));
  reference |= !_mm256_testz_si256(nan, nan);
  _mm256_store_ps(low, _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), h)));
  _mm256_store_ps(high, _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), h)));
}
TPU_HALF_LANES_HELPER void pack16_bf16(uint16_t *p, __m256 low, __m256 high) {
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), _mm256_packus_epi32(round8_bf16(low), round8_bf16(high)));
}

template <typename D>
TPU_HALF_LANES_HELPER void store8(typename D::Storage *p, __m256 v) {
  using S = typename D::Storage;
  if constexpr (std::is_same_v<S, float>)
    _mm256_storeu_ps(p, v);
  else if constexpr (std::is_same_v<D, numeric::Fp16>)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  else
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), narrow8_bf16(v));
}

// out[k] = op(lanes[0][k], lanes[1][k], ...) for the 8 lanes.
template <typename Op, size_t N, size_t... I>
TPU_HALF_LANES_HELPER void apply8(Op &op, const float (&lanes)[N][8], float *out, std::index_sequence<I...>) {
  for (int k = 0; k < 8; ++k) out[k] = op(lanes[I][k]...);
}

}  // namespace lanes

// dst[i] = DstType::store(op(SrcType::load(src[i])...)) for i < count,
// every operand contiguous. The caller has checked that reading 8 lanes of
// each source before writing them keeps the per-element order's result.
template <typename DstType, typename... SrcType, typename Op>
TPU_HALF_LANES_HELPER void half_lanes_run(int64_t count, typename DstType::Storage *d, Op &op,
                                          const typename SrcType::Storage *...s) {
  auto reference = [&](int64_t i) { d[i] = DstType::store(op(SrcType::load(s[i])...)); };
  constexpr size_t sources = sizeof...(SrcType);
  int64_t i = 0;
  if constexpr ((std::is_same_v<DstType, numeric::Bf16> && ... && std::is_same_v<SrcType, numeric::Bf16>)) {
    // All bf16: 16 lanes a step, in the shuffled order widen16_bf16 gives
    // (the op is element-wise, so the order does not matter in between).
    for (; i + 16 <= count; i += 16) {
      bool per_element = false;
      alignas(32) float in_low[sources][8], in_high[sources][8];
      size_t k = 0;
      ((lanes::widen16_bf16(s + i, in_low[k], in_high[k], per_element), ++k), ...);  // left to right
      if (per_element) {
        for (int64_t j = i; j < i + 16; ++j) reference(j);
        continue;
      }
      alignas(32) float out_low[8], out_high[8];
      lanes::apply8(op, in_low, out_low, std::make_index_sequence<sources>{});
      lanes::apply8(op, in_high, out_high, std::make_index_sequence<sources>{});
      lanes::pack16_bf16(d + i, _mm256_load_ps(out_low), _mm256_load_ps(out_high));
    }
  }
  for (; i + 8 <= count; i += 8) {
    bool per_element = false;
    alignas(32) float in[sources][8];
    size_t k = 0;
    (_mm256_store_ps(in[k++], lanes::load8<SrcType>(s + i, per_element)), ...);  // left to right
    if (per_element) {
      for (int64_t j = i; j < i + 8; ++j) reference(j);
      continue;
    }
    alignas(32) float out[8];
    lanes::apply8(op, in, out, std::make_index_sequence<sources>{});
    lanes::store8<DstType>(d + i, _mm256_load_ps(out));
  }
  for (; i < count; ++i) reference(i);
}

template <typename DstType, typename... SrcType, typename Op>
TPU_HALF_LANES_TARGET void map_half_lanes(int64_t count, typename DstType::Storage *d, Op &op,
                                          const typename SrcType::Storage *...s) {
  half_lanes_run<DstType, SrcType...>(count, d, op, s...);
}

// map_half_lanes over `runs` runs of `count` elements each, run r at
// d[r] and s[r]...: one call for many short runs (64 channels of 16
// elements), so the per-call set-up is paid once.
template <typename DstType, typename... SrcType, typename Op>
TPU_HALF_LANES_TARGET void map_half_lanes_runs(int64_t count, int runs, typename DstType::Storage *const *d, Op &op,
                                               const typename SrcType::Storage *const *...s) {
  for (int r = 0; r < runs; ++r) half_lanes_run<DstType, SrcType...>(count, d[r], op, s[r]...);
}

#undef TPU_HALF_LANES_TARGET
#undef TPU_HALF_LANES_HELPER
#endif

}  // namespace cmodel::bdc
