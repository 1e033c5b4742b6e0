// fp_arith.h: float element-wise arithmetic (family M: add, sub, mul and
// their _C / C_ forms). The pattern other families follow.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class FpBinary { add, sub, mul };

// dst = src0 OP src1 (fp32, fp16, bf16; computed in fp32).
void fp_binary(Context &ctx, const char *api, FpBinary op, local_addr_t dst, local_addr_t src0, local_addr_t src1,
               const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride,
               data_type_t dtype);

// dst = src OP C, or C OP src when `constant_first` (C_sub).
void fp_binary_const(Context &ctx, const char *api, FpBinary op, bool constant_first, local_addr_t dst,
                     local_addr_t src, scalar_t C, const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride,
                     data_type_t dtype);

}  // namespace cmodel::bdc
