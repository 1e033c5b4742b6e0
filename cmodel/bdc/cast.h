// cast.h: BDC dtype conversion and rounding (family P).
//
// tpu_bdc_cast converts between any two of INT8, UINT8, INT16, UINT16,
// INT32, UINT32, FP16, BF16 and FP32, bit-exactly, with any rounding_mode_t:
//   int   -> int  : saturating (the mode is not used);
//   float -> int  : rounded to an integral value with the mode, then
//                   saturated; NaN -> 0, +-inf saturate;
//   int   -> float: rounded once with the mode (never through fp32 first);
//   float -> float: widening is exact (a NaN keeps its payload), narrowing
//                   rounds once with the mode; overflow gives inf or the
//                   largest finite value as IEEE 754 prescribes for the mode;
//                   a narrowed NaN keeps the top bits of its payload and
//                   becomes quiet;
//   same dtype    : the bits unchanged.
// The numerics are cmodel/numeric/float_convert.h, shared with the scalar
// tpu_cast family, so a tensor cast and a scalar cast always agree.
// dst and src have their own element sizes and strides and must start on
// the same NPU; dst may have a zero stride only along a dim of size 1. An
// invalid mode is rejected even for int -> int.
//
// tpu_bdc_fp_round / fp_floor / fp_ceil round a float tensor (fp32, fp16,
// bf16) to integral values in the same dtype (IEEE roundToIntegral): a zero
// result keeps the sign of the source (-0.3 -> -0), infinities are
// unchanged, a NaN comes back quiet with its payload kept.
//
// Operands may overlap: the result is as if all of src were read before
// dst was written. An in-place cast (dst and src at one address) may not
// widen, though (fp16 to fp32 at one address): the vendor checker refuses it.
#pragma once

#include <bit>
#include <type_traits>

#include "bdc.h"
#include "cmodel/numeric/float_convert.h"

namespace cmodel::bdc {

void cast(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
          const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype,
          rounding_mode_t mode);

void fp_round(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
              const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, rounding_mode_t mode);

// ---- typed dtypes, shared with unary.cc ---------------------------------------
// (In their own namespace so that no other family's helpers of the same name
// can clash with them.)
namespace typed {

// A dtype as a type, to instantiate one loop per dtype (or per pair).
template <data_type_t T>
struct Dt {
  static constexpr data_type_t value = T;
  static constexpr bool is_float = T == DT_FP32 || T == DT_FP16 || T == DT_BFP16;
  // Floats are handled as their bits: moving a float through a register
  // must not be able to touch a NaN.
  using Storage = std::conditional_t<
      T == DT_INT8, int8_t,
      std::conditional_t<
          T == DT_UINT8, uint8_t,
          std::conditional_t<
              T == DT_INT16, int16_t,
              std::conditional_t<T == DT_INT32, int32_t,
                                 std::conditional_t<T == DT_UINT32 || T == DT_FP32, uint32_t, uint16_t>>>>>;
};

template <typename F>
decltype(auto) with_dtype(data_type_t t, F &&f) {
  switch (t) {
    case DT_INT8: return f(Dt<DT_INT8>{});
    case DT_UINT8: return f(Dt<DT_UINT8>{});
    case DT_INT16: return f(Dt<DT_INT16>{});
    case DT_UINT16: return f(Dt<DT_UINT16>{});
    case DT_INT32: return f(Dt<DT_INT32>{});
    case DT_UINT32: return f(Dt<DT_UINT32>{});
    case DT_FP16: return f(Dt<DT_FP16>{});
    case DT_BFP16: return f(Dt<DT_BFP16>{});
    default: return f(Dt<DT_FP32>{});  // callers checked the dtype
  }
}

template <typename F>
decltype(auto) with_float_dtype(data_type_t t, F &&f) {
  switch (t) {
    case DT_FP16: return f(Dt<DT_FP16>{});
    case DT_BFP16: return f(Dt<DT_BFP16>{});
    default: return f(Dt<DT_FP32>{});  // callers checked the dtype
  }
}

// Exact: every fp16 / bf16 value is an fp32 value.
template <data_type_t T>
inline float to_fp32(typename Dt<T>::Storage bits) {
  if constexpr (T == DT_FP32) return std::bit_cast<float>(bits);
  else if constexpr (T == DT_FP16) return numeric::fp16_to_fp32(bits);
  else return numeric::bf16_to_fp32(bits);
}

// fp32 -> T rounded with `mode` (exact when the value fits).
template <data_type_t T>
inline typename Dt<T>::Storage from_fp32(float f, rounding_mode_t mode) {
  if constexpr (T == DT_FP32) return std::bit_cast<uint32_t>(f);
  else if constexpr (T == DT_FP16) return numeric::fp32_to_fp16(f, mode);
  else return numeric::fp32_to_bf16(f, mode);
}

// The encoding facts of a float dtype (sign bit, quiet bit, ...).
template <data_type_t T>
using FloatFormatOf = std::conditional_t<T == DT_FP32, numeric::Fp32Format,
                                         std::conditional_t<T == DT_FP16, numeric::Fp16Format, numeric::Bf16Format>>;

template <data_type_t T>
constexpr typename Dt<T>::Storage quiet_bit() {
  return typename Dt<T>::Storage(FloatFormatOf<T>::quiet_bit);
}

}  // namespace typed
}  // namespace cmodel::bdc
