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

#include "bdc.h"

namespace cmodel::bdc {

void cast(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
          const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype,
          rounding_mode_t mode);

void fp_round(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
              const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, rounding_mode_t mode);

}  // namespace cmodel::bdc
