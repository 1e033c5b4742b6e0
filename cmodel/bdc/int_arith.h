// int_arith.h: integer element-wise arithmetic (family N: tpu_bdc_int_add,
// _sub, _mul, _square with _C / C_sub / pcs forms, int_min_C / int_max_C),
// plus the integer pipeline family K's shifts share (int_map, rounding
// shifts).
//
// Semantics of every tpu_bdc_int_* command, element by element:
//  1. each source is read as its own dtype (8/16/32-bit, signed or
//     unsigned; the constant C as C_dtype, from the low bytes of the
//     scalar_t) and widened without loss;
//  2. the operation is exact: src0 + src1, src0 - src1 (C - src for C_sub),
//     src0 * src1 or src * src never overflow (computed in 64 or 128 bits);
//  3. the exact result is divided by 2^shift and rounded with
//     rounding_mode (all seven modes; RM_DOWN is the plain arithmetic >>);
//  4. with `saturation` the result is clamped to dst_dtype's range,
//     otherwise its low bits are stored (two's-complement wrap).
// Any mix of dtypes is accepted. shift must be in [0, 127] (the `char`
// parameter is a right-shift amount; a negative one is rejected rather than
// guessed to mean a left shift); shifting past the result's width gives 0,
// or -1 / +1 where the rounding mode rounds away from 0.
//
// pcs forms: the shift comes from a per-channel tensor at shift_addr of
// shape [1, C, 1, 1], dtype DT_INT8, the aligned layout's strides at any
// address (the vendor checker's AR-8 asks no alignment of it), starting
// on dst's NPU; channel c of every batch uses shift[c], which must lie in
// [0, 127] like the scalar shift.
//
// int_min_C / int_max_C: min(src, C) or max(src, C) in `dtype` (C read as
// dtype), then divided by 2^shift and rounded (shift in [0, 127]); the
// result always fits dtype.
//
// Costs: add, sub, mul, min, max book one `arith` pass, square one `mac`
// pass, per EU of the widest operand dtype (the ALU runs at that width).
#pragma once

#include <cstdint>

#include <algorithm>
#include <type_traits>

#include "bdc.h"
#include "cmodel/numeric/float_convert.h"
#include "elementwise.h"

namespace cmodel::bdc {

enum class IntBinary { add, sub, mul };

// Shift, rounding and saturation of one tpu_bdc_int_* command.
struct IntRescale {
  int shift;  // scalar forms; ignored by the pcs forms
  rounding_mode_t rounding_mode;
  bool saturation;
};

// dst = src0 OP src1, saturated or wrapped into dst's dtype (no shift):
// the arithmetic alone, on operands already made (no booking).
void int_binary_on(IntBinary op, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, bool saturation);

// dst = rescale(src0 OP src1).
void int_binary(Context &ctx, const char *api, IntBinary op, local_addr_t dst, local_addr_t src0, local_addr_t src1,
                const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride,
                data_type_t dst_dtype, data_type_t src0_dtype, data_type_t src1_dtype, IntRescale rescale);

// dst = rescale(src OP C), or rescale(C OP src) when `constant_first`.
void int_binary_const(Context &ctx, const char *api, IntBinary op, bool constant_first, local_addr_t dst,
                      local_addr_t src, scalar_t C, const dim4 &shape, const dim4 *dst_stride,
                      const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype, data_type_t C_dtype,
                      IntRescale rescale);

// dst = rescale(src * src).
void int_square(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
                const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype,
                IntRescale rescale);

// pcs forms: as above with the shift of each channel read from shift_addr.
void int_binary_pcs(Context &ctx, const char *api, IntBinary op, local_addr_t dst, local_addr_t src0,
                    local_addr_t src1, local_addr_t shift, const dim4 &shape, const dim4 *dst_stride,
                    const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dst_dtype, data_type_t src0_dtype,
                    data_type_t src1_dtype, rounding_mode_t rounding_mode, bool saturation);
void int_binary_pcs_const(Context &ctx, const char *api, IntBinary op, bool constant_first, local_addr_t dst,
                          local_addr_t src, local_addr_t shift, scalar_t C, const dim4 &shape,
                          const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype,
                          data_type_t src_dtype, data_type_t C_dtype, rounding_mode_t rounding_mode,
                          bool saturation);

// dst = round(min(src, C) / 2^shift), or max when `is_max`.
void int_min_max_const(Context &ctx, const char *api, bool is_max, local_addr_t dst, local_addr_t src, scalar_t C,
                       const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype,
                       int shift, rounding_mode_t rounding_mode);

// ---- shared with family K -------------------------------------------------------

// The 8/16/32-bit integer dtypes.
inline constexpr data_type_t int_dtypes[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};
void require_int_dtype(const char *role, data_type_t dtype);
void require_int_dtype(Rule rule, const char *role, data_type_t dtype);

// Throws unless `mode` is one of the seven rounding_mode_t values.
void require_rounding_mode(rounding_mode_t mode);

// Smallest and largest value of an integer dtype.
int64_t int_min_of(data_type_t dtype);
int64_t int_max_of(data_type_t dtype);

// Calls f(mode constant) so the rounding decision folds into each loop.
using numeric::with_rounding;

// value / 2^right rounded with `mode`, exactly, for any right >= 0.
inline __int128 shift_right_rounded(__int128 value, int right, rounding_mode_t mode) {
  if (right <= 0 || value == 0) return value;
  const bool negative = value < 0;
  const unsigned __int128 mag = negative ? 0 - static_cast<unsigned __int128>(value) : value;
  unsigned __int128 kept;
  uint64_t rem;  // 0: exact, 1: below half a unit, 2: a tie, 3: above half
  if (right >= 128) {
    kept = 0, rem = 1;  // |value| < 2^127 <= half a unit
  } else {
    kept = mag >> right;
    const unsigned __int128 low = mag & ((static_cast<unsigned __int128>(1) << right) - 1);
    const unsigned __int128 half = static_cast<unsigned __int128>(1) << (right - 1);
    rem = low == 0 ? 0 : low < half ? 1 : low == half ? 2 : 3;
  }
  kept += numeric::round_up_magnitude(negative, (kept & 1) != 0, rem, 2, mode);
  return negative ? -static_cast<__int128>(kept) : static_cast<__int128>(kept);
}

// The same for 64-bit values, without 128-bit arithmetic when right < 63.
inline int64_t shift_right_rounded(int64_t value, int right, rounding_mode_t mode) {
  if (right <= 0 || value == 0) return value;
  if (right >= 63) return int64_t(shift_right_rounded(static_cast<__int128>(value), right, mode));
  const bool negative = value < 0;
  const uint64_t mag = negative ? 0 - uint64_t(value) : uint64_t(value);
  uint64_t kept = mag >> right;
  const uint64_t low = mag & ((uint64_t{1} << right) - 1);
  kept += numeric::round_up_magnitude(negative, (kept & 1) != 0, low, uint64_t{1} << (right - 1), mode);
  return negative ? -int64_t(kept) : int64_t(kept);
}

// S(acc m, σ, mode) of the tier-3 spec §1.4 / §1.5, the scaling step of
// every requantisation (conv, depthwise, quantised matmul): σ >= 0
// multiplies by 2^σ, σ < 0 is a rounding right shift by min(-σ, 63).
// Values past 2^100 saturate any output anyway, so left shifts stop there.
inline __int128 requant_scale(int64_t acc, int64_t multiplier, int shift, rounding_mode_t mode) {
  __int128 v = static_cast<__int128>(acc) * multiplier;
  if (shift < 0) return shift_right_rounded(v, std::min(-shift, 63), mode);
  const __int128 cap = static_cast<__int128>(1) << 100;
  for (int k = 0; k < shift && v < cap && v > -cap; ++k) v *= 2;
  return v;
}

void load_ints(data_type_t dtype, const uint8_t *p, int64_t step, int64_t count, int64_t *out);
void store_ints(data_type_t dtype, uint8_t *p, int64_t step, int64_t count, const int64_t *in);

// One element of an integer dtype at p, widened to int64 as load_ints does.
inline int64_t load_int(data_type_t dtype, const uint8_t *p) {
  int64_t v;
  load_ints(dtype, p, 1, 1, &v);
  return v;
}

// A scalar_t's value in an integer dtype (its low bytes).
int64_t int_scalar(scalar_t C, data_type_t dtype);

// Calls compute(count, out, in) over dst and its integer sources, in
// chunks of at most int_chunk elements of one run: in[i][k] is element k
// of the chunk in source i, widened to int64 (unsigned values
// zero-extended), and out[k] is stored into dst truncated to dst's width.
// Loads and stores switch on the dtypes once per chunk, never per element,
// so any mix of dtypes costs a handful of loops. fp32/fp16/bf16 operands
// are read and written as their raw unsigned bits.
inline constexpr int64_t int_chunk = 256;

template <typename Compute, typename... Src>
void int_map(const TensorRef &dst, Compute &&compute, const Src &...src) {
  for_each_run(
      dst,
      [&](int64_t count, Run d, auto... s) {
        int64_t in[sizeof...(Src)][int_chunk];
        int64_t out[int_chunk];
        for (int64_t done = 0; done < count; done += int_chunk) {
          const int64_t k = std::min(int_chunk, count - done);
          int i = 0;
          ((load_ints(src.dtype, s.p + done * s.step * src.esize, s.step, k, in[i++])), ...);
          compute(k, out, static_cast<const int64_t(*)[int_chunk]>(in));
          store_ints(dst.dtype, d.p + done * d.step * dst.esize, d.step, k, out);
        }
      },
      src...);
}

}  // namespace cmodel::bdc
