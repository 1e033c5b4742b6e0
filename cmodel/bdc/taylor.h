// taylor.h: per-lane polynomials and table lookups (family Q2:
// tpu_bdc_fp_taylor, tpu_bdc_table_lookup).
//
// Both read a per-lane table: a [1, NPU_NUM, 1, len] tensor in the aligned
// layout, i.e. `len` values at the same offset of every NPU (what
// tpu_bdc_load_fp32_* and tpu_bdc_npu_bcast_from_static write). Its address
// names NPU 0 for table_lookup, dst's start NPU for fp_taylor (the vendor
// checker's rule; the same when dst starts on NPU 0).
// Channel c of dst, which lives on NPU (start + c) % NPU_NUM, reads the
// copy in its own NPU: table channel (start + c) % NPU_NUM, which is the
// spec's "coeff(0, c % NPU_NUM, 0, i)" when dst starts on NPU 0. The NPUs'
// copies need not be equal (a kernel may give each lane its own table).
//
// fp_taylor: dst = sum_{i < num} coeff[i] src^i, fp32 / fp16 / bf16 (coeff
// in the same dtype). Evaluated by Horner's rule in fp32,
//   acc = coeff[num - 1]; acc = acc * x + coeff[i] for i = num - 2 .. 0,
// the product and the sum each rounded to fp32 (not fused), the result
// rounded to nearest-even into fp16 / bf16. num >= 2.
//
// table_lookup: dst = table[src], bit for bit; src UINT8 or UINT16 with every
// value in [0, len); table and dst in dst_dtype (any 8/16/32-bit dtype);
// h x w <= 65535 (spec §6).
//
// dst, src aligned, same start NPU; dst may be src (in place) for
// fp_taylor; dst must not overlap the table (it would overwrite it); src
// may. Cost: fp_taylor the `taylor` factor x num / 8 (the class stands for
// 8 coefficients) per EU pass; table_lookup the `lookup` factor.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

void fp_taylor(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, local_addr_t coeff,
               const dim4 &shape, int num, data_type_t dtype);

void table_lookup(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, local_addr_t table,
                  const dim4 &shape, int len, data_type_t dst_dtype, data_type_t src_dtype);

}  // namespace cmodel::bdc
