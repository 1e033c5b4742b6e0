// bitwise.h: family K, bitwise AND/OR/XOR, min/max and shifts
// (tpu_bdc_and/or/xor, tpu_bdc_min/max, tpu_bdc_arithmetic_shift,
// tpu_bdc_logical_shift and their _C forms).
//
// AND / OR / XOR act on raw bits, so any 8/16/32-bit dtype is accepted,
// fp32/fp16/bf16 included: masking floats with all-ones / all-zeros masks
// (what kernels do after a compare) is a bitwise operation on their
// encodings. C is the scalar_t slot's low bits of the dtype's width.
//
// MIN / MAX take every dtype: integers compare as their (signed or
// unsigned) values; floats compare as numbers with the IEEE 754-2019
// minimum/maximum rules: a NaN operand makes the result NaN (the NaN is
// returned with its quiet bit set; src0's when both are NaN), and -0 is
// less than +0. Every other result is one of the operands, bit for bit.
//
// ARITHMETIC SHIFT: dst = src * 2^s for a shift s >= 0 (left), or
// src / 2^-s rounded with rounding_mode for s < 0 (right), computed
// exactly from src's value (signed or unsigned) and then saturated to
// dst_dtype. The shift comes from a tensor (shift_dtype a signed 8/16/32-bit
// integer type no wider than src_dtype, as the vendor checker demands; its
// own stride: zero strides broadcast it) or from the signed `char` constant.
//
// LOGICAL SHIFT: src's bits are taken as an unsigned number of src's
// width (int8 -1 is 255); s >= 0 shifts left, s < 0 shifts right with
// rounding_mode applied to that unsigned value (RM_DOWN / RM_TOWARDS_ZERO
// are the plain logical >>). The result is not saturated: dst receives its
// low bits (a logical shift discards what leaves the register).
//
// src and dst of the shifts are 8/16/32-bit integers, any mix; dst may have
// a zero stride only along a dim of size 1. Every shift
// amount is allowed; amounts beyond the value's width give 0, -1 or the
// saturated value as the exact arithmetic says. Costs: one `arith` pass
// per EU of the widest dtype involved.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class Bitwise { and_, or_, xor_ };

// The computations alone, on operands already made and checked (no booking):
void bitwise_on(Bitwise op, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, data_type_t dtype);
void min_max_on(bool is_max, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, data_type_t dtype);

void bitwise(Context &ctx, const char *api, Bitwise op, local_addr_t dst, local_addr_t src0, local_addr_t src1,
             const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride,
             data_type_t dtype);
void bitwise_const(Context &ctx, const char *api, Bitwise op, local_addr_t dst, local_addr_t src, scalar_t C,
                   const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype);

void min_max(Context &ctx, const char *api, bool is_max, local_addr_t dst, local_addr_t src0, local_addr_t src1,
             const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride,
             data_type_t dtype);
void min_max_const(Context &ctx, const char *api, bool is_max, local_addr_t dst, local_addr_t src, scalar_t C,
                   const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype);

enum class ShiftKind { arithmetic, logical };

void shift(Context &ctx, const char *api, ShiftKind kind, local_addr_t dst, local_addr_t src, local_addr_t shift,
           const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, const dim4 *shift_stride,
           data_type_t dst_dtype, data_type_t src_dtype, data_type_t shift_dtype, rounding_mode_t rounding_mode);
void shift_const(Context &ctx, const char *api, ShiftKind kind, local_addr_t dst, local_addr_t src, int C,
                 const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype,
                 data_type_t src_dtype, rounding_mode_t rounding_mode);

}  // namespace cmodel::bdc
