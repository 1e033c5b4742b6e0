// vector_cross.h: the vector-cross ("outer") commands (tpu_bdc_vc_*,
// tpu_bdc_fp_vc_*, tpu_bdc_fp32_vc_div, tpu_bdc_int_vc_*):
//   dst[i][j] = src0[i] OP src1[j],  i < src0_len, j < src1_len.
//
// Layouts (spec §3, "matrix" and "vector" layouts, aligned, all three
// starting on one NPU):
//   src0: vector [1, DIV_UP(src0_len, src0_len_per_channel), 1, src0_len_per_channel]
//   src1: vector [1, DIV_UP(src1_len, src1_len_per_channel), 1, src1_len_per_channel]
//   dst:  matrix of src0_len rows and src1_len columns, src1_len_per_channel
//         columns per channel: [src0_len, DIV_UP(src1_len, ...), 1, src1_len_per_channel]
// Column j of dst lies in the lane of src1[j]; src0[i] is broadcast to
// every lane. Only the src1_len valid columns are written (the padding of
// a last, partial channel keeps its bytes).
//
// OP is the element-wise command's own arithmetic (fp_arith.h,
// fp_divide.h, bitwise.h, compare.h, int_arith.h), so every rule about
// rounding, NaNs, saturation and dtypes is the same as there. dst must not
// overlap a source (the hardware streams dst while it reads them).
#pragma once

#include <functional>

#include "bdc.h"

namespace cmodel::bdc {

struct VectorCross {
  local_addr_t dst, src0, src1;
  int src0_len, src1_len, src0_len_per_channel, src1_len_per_channel;
  data_type_t dst_dtype, src0_dtype, src1_dtype;
};

// Computes dst (a host tensor of the whole matrix shape) from the two
// broadcast sources, with the element-wise command's arithmetic.
using CrossOp = std::function<void(const TensorRef &dst, const TensorRef &src0, const TensorRef &src1)>;

void vector_cross(Context &ctx, const char *api, const VectorCross &v, const CrossOp &op, BdcCost cost,
                  double factor = 1);

}  // namespace cmodel::bdc
