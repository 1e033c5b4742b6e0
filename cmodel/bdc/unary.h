// unary.h: BDC unary element-wise operations and the simple activations
// (family Q1: abs, neg, not, sign; family R: relu, prelu, hsigmoid,
// hswish, isfinite; family Q2: exponent_part).
//
// Semantics, where the public documentation is silent:
//  - Floats (fp32, fp16, bf16). abs and neg only clear or flip the sign bit
//    (IEEE 754 non-arithmetic operations): exact, a NaN keeps its payload
//    and stays signalling if it was; neg(+0) = -0. relu, sign and prelu
//    return a NaN source as the same NaN made quiet. relu(x) = x > 0 ? x :
//    +0, so relu(-0) = +0. sign gives +1 / -1 for positive / negative
//    values (infinities included) and +0 for both zeros. prelu(x) = x > 0 ?
//    x : alpha * x, the product computed in fp32 and rounded to nearest-even
//    into fp16 / bf16 (exact for fp16 / bf16 operands; prelu(-0) = -0 *
//    alpha). A NaN alpha gives alpha's NaN made quiet for x <= 0; -inf * 0
//    gives the positive quiet NaN with an empty payload (whatever the host
//    CPU's default NaN is, so results do not depend on the host).
//  - Signed integers. abs and neg saturate: abs(INT_MIN) = neg(INT_MIN) =
//    INT_MAX (a wrapped result would be the one negative "absolute value").
//    prelu saturates alpha * x to the dtype. sign gives -1, 0, 1.
//  - Unsigned integers. abs and relu are the identity, sign gives 0 or 1,
//    prelu is the identity (no element is negative); neg is rejected (it has
//    no unsigned meaning: the kernel wants a signed dtype).
//  - not: bitwise complement, integer dtypes only (signed or not).
// relu, abs, neg, not take free strides; sign and prelu take none (aligned
// layout). dst and src must start on the same NPU. Operands may overlap:
// the result is as if all of src were read before dst was written.
//
// Hard activations and isfinite (tpu_bdc_fp_hsigmoid, _hswish, _isfinite):
// fp32, fp16, bf16; dst, src and work0 aligned, of dtype and dst's shape,
// on the same NPU; dst may be src (in place); work0 must overlap neither
// (the command uses it as scratch). Results are the exact values rounded
// once to nearest-even into dtype (evaluated in double with error-free
// sums rounded to odd, so never rounded twice):
//  - hsigmoid(x) = clamp(alpha x + beta, 0, 1): +0 when alpha x + beta <= 0
//    (-0 included), 1 when >= 1. A NaN x gives x made quiet; otherwise a
//    NaN alpha (then beta) gives that parameter's NaN, quiet, in dtype;
//    0 x inf and inf - inf give the positive quiet NaN with an empty
//    payload (alpha = 0 with x = +-inf is NaN, as the lowering computes it).
//    work0 afterwards: alpha x + beta rounded into dtype (unclamped).
//  - hswish(x) = x relu6(x + 3) / 6: x for x >= 3 (+inf included), -0 for
//    x <= -3 (-inf included: the limit, as x * 0 gives), x (+-0) for +-0,
//    x/2 + x^2/6 in between; a NaN comes back quiet. work0 afterwards:
//    relu6(x + 3) = clamp(x + 3, 0, 6) rounded into dtype (NaN for NaN).
//  - isfinite(x) = 1 (FP_ONE of dtype) for finite x (zeros and subnormals
//    included), +0 for +-inf and NaN. work0 afterwards: x's exponent field
//    alone (sign and fraction cleared: +0, a power of two, or +inf).
// Cost (arith passes, estimates of the lowering): hsigmoid 2 (multiply-add,
// clamp), hswish 4 (add, clamp, multiply, scale by 1/6), isfinite 2 (mask,
// compare).
//
// exponent_part (tpu_bdc_fp_exponent_part): dst = the biased exponent field
// of src minus the bias, for every value: e with |x| = 1.f x 2^e for normal
// x; -bias (-127 for fp32 / bf16, -15 for fp16) for zeros and subnormals
// (their field is 0); bias + 1 (128 / 16) for infinities and NaN (field all
// ones). The sign is ignored. src fp32, fp16 or bf16; dst the signed
// integer as wide as src (INT32 for fp32, INT16 for fp16 / bf16), the only
// integer results the vendor checker allows (the source's own float type,
// which it allows too, is not emulated). Aligned layouts, same start NPU;
// dst may overlap src. Cost: one arith pass.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class Unary { abs, neg, bit_not, sign, relu };

// dst = op(src); null strides mean the aligned layout.
void unary(Context &ctx, const char *api, Unary op, local_addr_t dst, local_addr_t src, const dim4 &shape,
           const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype);

// dst = src > 0 ? src : alpha * src, aligned layouts; alpha is the scalar_t
// member of dtype.
void prelu(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, scalar_t alpha, const dim4 &shape,
           data_type_t dtype);

enum class HardActivation { hsigmoid, hswish, isfinite };

// dst = op(src), work0 scratch, aligned layouts; alpha and beta are
// hsigmoid's (unused otherwise).
void fp_hard_activation(Context &ctx, const char *api, HardActivation op, local_addr_t dst, local_addr_t src,
                        local_addr_t work0, const dim4 &shape, float alpha, float beta, data_type_t dtype);

// dst (an integer dtype) = the unbiased exponent field of src (a float
// dtype), aligned layouts.
void fp_exponent_part(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
                      data_type_t dst_dtype, data_type_t src_dtype);

}  // namespace cmodel::bdc
