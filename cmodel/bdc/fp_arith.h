// fp_arith.h: float element-wise arithmetic (family M: add, sub, mul, |a-b|
// and their _C / C_ forms, square, fp32 multiply-accumulate). The pattern
// other families follow. Division lives in fp_divide.h.
//
// Numerics: operands are widened to fp32 (exact), the operation is one
// IEEE fp32 operation rounded to nearest-even, and fp16/bf16 destinations
// get that result rounded to nearest-even once more. For add, sub, mul and
// square of fp16/bf16 inputs this double rounding never differs from
// rounding the exact result directly (fp32 has 24 >= 2 x 11 + 2 significant
// bits), so every result here is the correctly rounded one. Subnormals are
// kept (no flush to zero); NaN results are whatever the host's IEEE
// arithmetic gives (a NaN input comes out quiet).
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

// diff_abs is |src0 - src1| (tpu_bdc_fp_diff_abs): the difference rounded
// to fp32, then its sign cleared, so it equals rounding |src0 - src1|.
enum class FpBinary { add, sub, mul, diff_abs };

// dst = src0 OP src1 (fp32, fp16, bf16; computed in fp32).
// The arithmetic alone, on operands already made and checked (no booking):
void fp_binary_on(FpBinary op, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, data_type_t dtype);
void fp_binary(Context &ctx, const char *api, FpBinary op, local_addr_t dst, local_addr_t src0, local_addr_t src1,
               const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride,
               data_type_t dtype);

// dst = src OP C, or C OP src when `constant_first` (C_sub).
void fp_binary_const(Context &ctx, const char *api, FpBinary op, bool constant_first, local_addr_t dst,
                     local_addr_t src, scalar_t C, const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride,
                     data_type_t dtype);

// dst = src * src (tpu_bdc_fp_square).
void fp_square(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
               const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype);

// dst = dst + src0 * src1, fp32 only (tpu_bdc_fp32_mac). Not fused: the
// product is rounded to fp32, then the sum is rounded (two roundings, as
// fp32_mul followed by fp32_add would give). dst is read and written
// through dst_stride.
void fp32_mac(Context &ctx, const char *api, local_addr_t dst, local_addr_t src0, local_addr_t src1,
              const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride);

// dst = dst + src * C (tpu_bdc_fp32_mac_C), rounded like fp32_mac.
void fp32_mac_const(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, float C, const dim4 &shape,
                    const dim4 *dst_stride, const dim4 *src_stride);

}  // namespace cmodel::bdc
