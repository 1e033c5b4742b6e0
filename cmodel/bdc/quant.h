// quant.h: requantisation and dequantisation (family J), element-wise over
// aligned tensors on one start NPU, integer dtypes of 8, 16 or 32 bits:
// requantised results and dequantised sources of 8 or 16 bits only, and
// the fp32 forms round neither half up nor half down (the vendor's RQ-1,
// RQ-2, RQ-4, DQ-1..3).
//
// S(x, σ, mode) and sat are those of the tier-3 spec §1.4 / §1.5
// (requant_scale in int_arith.h): σ >= 0 multiplies by 2^σ, σ < 0 is a right
// shift by -σ rounded with `mode`; the `char shift` arguments are σ as given.
//   int_requant:    dst = sat_dst(S(src · multiplier, σ, mode) + offset)
//                   offset: the scalar in dst_dtype
//   int_pc_requant: the same with (multiplier, σ, offset) per channel from a
//                   [1, C, 1, 3] INT32 tensor on dst's NPU, with the aligned
//                   layout's strides but its start a multiple of 8 bytes only
//   int_dequant:    dst = sat_dst(S((src − offset) · multiplier, σ, mode))
//                   offset: the scalar in src_dtype
//   fp32_requant:   dst = to_int_dst(fl32(fl32(to_fp32_src(src) · scale) + offset))
//                   to_fp32_src rounds with src_rounding_mode (exact below
//                   2^24), to_int_dst rounds with dst_rounding_mode and
//                   saturates (NaN -> 0); the two fp32 steps round to nearest
//                   even, not fused
//   fp32_dequant:   dst(FP32) = fl32(to_fp32(src − offset) · scale), the
//                   conversion rounding with rounding_mode (it is exact for
//                   8- and 16-bit sources), the product to nearest even
// Not implemented (stubs): the per-channel forms whose parameter tensor
// layout the spec does not give (fp32_pc_requant, int_pc_dequant,
// fp32_pc_dequant) and f16_group_dequant.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

struct IntQuant {
  bool dequant;              // (src − offset) first, no offset after
  local_addr_t per_channel;  // the [1, C, 1, 3] tensor when `use_tensor`
  bool use_tensor;
  int64_t multiplier;
  int shift;       // σ
  scalar_t offset;
};

void int_quant(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape, const IntQuant &q,
               data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t mode);

void fp32_requant(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape, float scale,
                  float offset, data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t dst_mode,
                  rounding_mode_t src_mode);

void fp32_dequant(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape, scalar_t offset,
                  float scale, data_type_t src_dtype, rounding_mode_t mode);

}  // namespace cmodel::bdc
