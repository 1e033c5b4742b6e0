// unary.h: BDC unary element-wise operations and the simple activations
// (family Q1: abs, neg, not, sign; family R: relu, prelu).
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

}  // namespace cmodel::bdc
