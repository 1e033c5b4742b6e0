// fp_divide.h: float division (family M: tpu_bdc_fp32_div, tpu_bdc_fp_div
// and their _C / C_div / tunable forms).
//
// Accuracy. The hardware divides with a reciprocal seed refined by
// `num_iter` Newton-Raphson steps and a final multiply; its algorithm and
// seed are not public, so the emulator cannot reproduce its last bits.
// Instead every division here returns the correctly rounded quotient:
// one IEEE fp32 division (round to nearest-even), then, for fp16/bf16, a
// second round to nearest-even. That second rounding never changes the
// result of a division (24 >= 2 x 11 + 2 significant bits), so fp16 and
// bf16 quotients are correctly rounded too. The hardware's quotient is
// expected within a couple of ulp of this once its refinement has
// converged (the default of the non-tunable calls); compare hardware
// results with a tolerance of 2 ulp (or 1e-6 relative for fp32).
//
// num_iter (tunable forms): every num_iter >= 1 gives the same correctly
// rounded quotient; the emulator does not degrade accuracy for few
// iterations, because it does not know the hardware's seed accuracy.
// num_iter only scales the cost: (num_iter + 2) / 5 of the `divide` cost
// class, which counts seed + 3 steps + multiply (the non-tunable calls use
// 3 steps). num_iter < 1 is rejected: 0 would return the bare seed, whose
// value the emulator cannot model, and negative counts are meaningless;
// so is num_iter > 4, which the vendor checker refuses (AR-6).
//
// Special values follow IEEE 754: x / 0 = +-inf (x != 0), 0 / 0 and
// inf / inf are NaN, x / inf = +-0, subnormals are kept.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

// Newton-Raphson steps the non-tunable division calls stand for.
inline constexpr int default_div_iterations = 3;
// The most a division takes (the checker's bound on the DIV iteration
// field, AR-6).
inline constexpr int max_div_iterations = 4;

// dst = src0 / src1 (fp32, fp16, bf16).
// The division alone, on operands already made and checked (no booking):
void fp_div_on(const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, data_type_t dtype);
void fp_div(Context &ctx, const char *api, local_addr_t dst, local_addr_t src0, local_addr_t src1, const dim4 &shape,
            const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dtype,
            int num_iter);

// dst = src / C, or C / src when `constant_first` (C_div). C holds the
// value encoded in dtype (the scalar_t member of dtype).
void fp_div_const(Context &ctx, const char *api, bool constant_first, local_addr_t dst, local_addr_t src, scalar_t C,
                  const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype,
                  int num_iter);

}  // namespace cmodel::bdc
