// linear.h: per-channel float linear operations (family H: tpu_bdc_fp_bias,
// fp_scale, fp_scale_bias, fp_scale_bias_C, fp_add_bias_sqr,
// fp_sub_bias_sqr, fp_add_C_sqr, fp_sub_C_sqr).
//
// Operands. None of these commands takes strides: dst and src are [n, c, h,
// w] in the aligned layout. A per-channel operand (bias, scale) is a
// [1, c, 1, 1] tensor of the same dtype in the aligned layout's strides
// starting on dst's NPU, so the value of channel c, bias(0, c, 0, 0), sits
// in channel c's lane (row (start + c) / NPU_NUM of its NPU, at that row's
// aligned offset); its address need only be a multiple of the element size
// (the vendor checker's LIN-3 / LIN-4). dst, src and the per-channel operands start on the same NPU;
// dst may be src (in place). dtypes fp32, fp16, bf16; the _C forms take
// scalar_t constants encoded in dtype.
//
// Numerics. Operands are widened to fp32 and every operation is one IEEE
// fp32 operation rounded to nearest-even; the result is rounded to
// nearest-even once more into fp16 / bf16. Two-step forms round after each
// step (not fused):
//   bias         dst = src + b
//   scale        dst = src * s
//   scale_bias   dst = (src * s) + b      (the product rounded to fp32 first)
//   add_bias_sqr dst = (src + b)^2        (the sum rounded to fp32 first)
//   sub_bias_sqr dst = (src - b)^2
// bias and scale are therefore correctly rounded (as fp_add / fp_mul).
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class Linear { bias, scale, scale_bias, add_sqr, sub_sqr };

// Per-channel operands from local memory. `first` is the bias (bias,
// add_sqr, sub_sqr) or the scale (scale, scale_bias); `second` the bias of
// scale_bias (ignored otherwise).
void fp_linear(Context &ctx, const char *api, Linear op, local_addr_t dst, local_addr_t src, local_addr_t first,
               local_addr_t second, const dim4 &shape, data_type_t dtype);

// The same with constants (scale_bias_C: first = scale, second = bias;
// add_C_sqr / sub_C_sqr: first = C).
void fp_linear_const(Context &ctx, const char *api, Linear op, local_addr_t dst, local_addr_t src, scalar_t first,
                     scalar_t second, const dim4 &shape, data_type_t dtype);

}  // namespace cmodel::bdc
