// select.h: compare-select (family F): tpu_bdc_greater_select,
// less_select, equal_select, maximum_greater_select, minimum_less_select.
//
//   dst = src0 OP src1 ? src2 : src3                       (OP: >, <, ==)
//   dst0 = max(src0, src1); dst1 = src0 > src1 ? src2 : src3
//   dst0 = min(src0, src1); dst1 = src0 < src1 ? src2 : src3
//
// Operands (variable_t):
// - TENSOR: the local address of a tensor of dst's shape in the aligned
//   layout (these functions take no strides; dst is aligned too).
// - VECTOR: the local address of a [1, c, 1, 1] aligned tensor holding one
//   value per NPU lane. Spec §6.6 says a VECTOR contributes
//   src(0, c % NPU_NUM, 0, 0) to channel c of dst. This SDK reads that as
//   the hardware does it, with all strides zero: channel c of dst (on lane
//   (s + c) % NPU_NUM, s the common start NPU) takes the element at the
//   vector's address offset in that same lane, i.e. row 0 of the lane.
//   When s = 0 that is exactly vector channel c % NPU_NUM; when s > 0 the
//   lanes below s read row 0 at the vector's offset, which lies outside the
//   [1, c, 1, 1] tensor (its channels there sit in row 1). The operand is
//   still validated as the [1, c, 1, 1] aligned tensor the spec describes
//   (address aligned, start NPU = dst's, footprint inside local memory).
// - SCALAR: context.scalar, in the operand's dtype.
// src0/src1 have the compare dtype (src0_src1_dtype, or dst0_dtype for
// the max/min forms), src2/src3 the dtype of dst (dst1).
//
// Semantics decisions:
// - Comparisons are exact: fp16/bf16 widen to fp32 losslessly, integers
//   compare by value. Floats follow IEEE 754: a NaN operand makes >, < and
//   == false (so src3 is chosen); +0 == -0.
// - Selected values are copied bit for bit (src2/src3 share dst's dtype).
// - max/min: dst0 is the operand the comparison picked, bit for bit:
//   max = src0 > src1 ? src0 : src1, min = src0 < src1 ? src0 : src1. So
//   dst0 and dst1 always agree on which source won (the argmax/argmin
//   use); a NaN src0 or a tie (including +0 vs -0) yields src1.
// - Each element's inputs are read before its outputs are written, so
//   dst may alias a TENSOR source laid out the same way (a running
//   argmax: dst0 = src0, dst1 = src2).
//
// Checks: dtypes are fp32/fp16/bf16/(u)int8/(u)int16/(u)int32; the compare
// dtype may not be wider than dst's (dst1's); every TENSOR/VECTOR operand
// and dst1 start on dst's (dst0's) NPU; variable_t.type must be TENSOR,
// SCALAR or VECTOR; addresses are EU-aligned and footprints in memory.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class SelectOp { greater, less, equal };

enum class VarKind { tensor = 0, scalar = 1, vector = 2 };

// A variable_t as the API received it; `type` is kept as the raw int so
// invalid values can be reported.
struct Variable {
  int type;
  local_addr_t addr;  // TENSOR, VECTOR
  scalar_t scalar;    // SCALAR
};

// dst = src0 OP src1 ? src2 : src3.
void select(Context &ctx, const char *api, SelectOp op, local_addr_t dst, const Variable &src0, const Variable &src1,
            const Variable &src2, const Variable &src3, const dim4 &shape, data_type_t src0_src1_dtype,
            data_type_t dst_dtype);

// dst0 = max (op greater) or min (op less) of src0, src1;
// dst1 = src0 OP src1 ? src2 : src3.
void extremum_select(Context &ctx, const char *api, SelectOp op, local_addr_t dst0, local_addr_t dst1,
                     const Variable &src0, const Variable &src1, const Variable &src2, const Variable &src3,
                     const dim4 &shape, data_type_t dst0_dtype, data_type_t dst1_dtype);

}  // namespace cmodel::bdc
