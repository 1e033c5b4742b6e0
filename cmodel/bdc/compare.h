// compare.h: element-wise comparison (family L; its vector-cross vc_*
// forms are in vector_cross.h): tpu_bdc_greater / less / equal / greater_equal /
// less_equal / not_equal and their _C forms.
//
// dst = (src0 OP src1) ? true_val : 0.
//
// - The sources share src_dtype, dst has dst_dtype; both may be any of
//   fp32, fp16, bf16, int8/uint8, int16/uint16, int32/uint32, independently
//   (no width rule between them).
// - Values compare exactly: fp16/bf16 widen to fp32 losslessly, integers
//   compare as their mathematical value (signedness from the dtype).
// - Floats follow IEEE 754: a NaN operand makes every comparison false
//   except not_equal, which is true; +0 and -0 are equal.
// - true_val is a scalar_t in dst_dtype; its bit pattern (the low bytes of
//   the union) is stored unchanged, so any pattern (NaN payloads included)
//   comes out as given. The false value is all-zero bits (+0.0 for floats).
// - The _C forms compare src with the scalar C given in src_dtype.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class CompareOp { greater, less, equal, greater_equal, less_equal, not_equal };

// The comparison alone, on operands already made and checked (no booking):
void compare_on(CompareOp op, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, scalar_t true_val,
                data_type_t dst_dtype, data_type_t src_dtype);

// dst = (src0 OP src1) ? true_val : 0.
void compare(Context &ctx, const char *api, CompareOp op, local_addr_t dst, local_addr_t src0, local_addr_t src1,
             scalar_t true_val, const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride,
             const dim4 *src1_stride, data_type_t dst_dtype, data_type_t src_dtype);

// dst = (src OP C) ? true_val : 0.
void compare_const(Context &ctx, const char *api, CompareOp op, local_addr_t dst, local_addr_t src, scalar_t C,
                   scalar_t true_val, const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride,
                   data_type_t dst_dtype, data_type_t src_dtype);

}  // namespace cmodel::bdc
