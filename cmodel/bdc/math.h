// math.h: square roots, reciprocals and the fp32 transcendental functions
// (family Q1: rsqrt, sqrt, reciprocal and their tunable forms, exp, expm1,
// log, log1p, logx; family M: fp32 pow, pow_C, C_pow; family R: sigmoid,
// silu, tanh, erf, erfc, gelu, gelu_fast, softplus, softsign, elu, swish,
// mish, sinh, cosh, selu, log_sigmoid; family Q1 again: sin, cos, tan,
// cot, arcsin, arccos, arcsinh, arccosh, arctanh, compensate_reciprocal).
// docs/bdc-math.md has the per-function table.
//
// Accuracy. The hardware evaluates these with its SFU and Sophgo's
// undisclosed Taylor tables, so its last bits cannot be reproduced. The
// emulator instead evaluates each function in double with <cmath> (formulas
// chosen to avoid cancellation, e.g. gelu = x erfc(-x/sqrt2)/2) and rounds
// once to the destination: fp32 results are within 0.5 ulp of the exact
// value plus a few double ulps (so at most 1 ulp, and in practice the
// correctly rounded value). sqrt and reciprocal always are correctly
// rounded: one IEEE double operation rounded once more to fp32, which
// cannot go wrong as 53 >= 2 x 24 + 2. fp16 / bf16 results (fp_rsqrt, fp_sqrt, fp_reciprocal) go through
// fp32 rounded to odd, then to nearest-even, which equals one rounding of
// the double value. Compare hardware results with the tolerance "2 ulp of
// the correctly rounded result or 1e-6 relative, whichever is looser".
//
// Special values. Each function returns the value or the limit of the
// mathematical function (C99 Annex F where <cmath> defines it): NaN in ->
// NaN out (quiet); log, log1p, sqrt, rsqrt of values below their domain
// give NaN; log(+-0) = -inf, log1p(-1) = -inf, rsqrt(+0) = +inf,
// rsqrt(-0) = -inf, reciprocal(+-0) = +-inf; results that overflow fp32 are
// +-inf and results below the smallest subnormal are +-0 (subnormal results
// are kept, never flushed). Limits at infinities: sigmoid(-inf) = 0,
// silu / swish / gelu / gelu_fast / mish(-inf) = -0, softsign(+-inf) = +-1,
// elu(-inf) = -alpha. pow, pow_C and C_pow follow C99 pow (pow(x, 0) = 1,
// pow(-8, 1/3) = NaN, pow(-2, 3) = -8, pow(0, -1) = inf); the hardware's
// exp(y log x) lowering may instead give NaN for every negative base.
//
// num_iter (tunable forms): the Newton-Raphson refinements of the SFU seed.
// Every num_iter >= 1 gives the same result here (the emulator does not
// know the seed's accuracy, so it does not degrade it); num_iter only
// scales the cost, (num_iter + 1) / (default_sfu_iterations + 1) of the
// sfu class (seed + 3 steps). num_iter 0 (the bare seed) is rejected as
// unsupported, negative counts and counts above 4 as illegal (the vendor
// checker's bound, SFU-7 / AR-6). The non-tunable calls stand for
// default_sfu_iterations steps.
//
// Operands. rsqrt and sqrt take no strides: aligned layout. reciprocal
// takes free strides (zero source strides included; a zero dst stride only
// along a dim of size 1, as for a division). dst, src and the work buffers
// start on the same NPU; dst may overlap src (the result is as if all of
// src were read first). fp32 functions take fp32 only.
//
// Work buffers (same shape as dst, fp32, aligned). The hardware uses them
// as scratch, so a work buffer overlapping dst, a source, another work
// buffer or a table corrupts the result: rejected. dst overlapping a table
// would destroy the table: rejected. After the command every work buffer
// holds intermediate values of the table-based algorithm (documented per
// function in math.cc and docs/bdc-math.md; e.g. exp leaves the integer
// part n and the reduced argument r of x = n + r), never what the kernel
// left there, so a kernel that relies on them being preserved fails.
//
// Tables. Each table operand must start on NPU 0 (aligned) and hold, in
// every NPU, exactly what its loader wrote (tables.h); the error names the
// loader to call.
#pragma once

#include <initializer_list>

#include "bdc.h"
#include "tables.h"

namespace cmodel::bdc {

// ---- rsqrt, sqrt, reciprocal (fp32, fp16, bf16) ---------------------------------------

enum class Sfu { rsqrt, sqrt, reciprocal };

// Newton-Raphson steps the non-tunable calls stand for.
inline constexpr int default_sfu_iterations = 3;

// dst = op(src). Null strides mean the aligned layout.
void fp_sfu(Context &ctx, const char *api, Sfu op, local_addr_t dst, local_addr_t src, const dim4 &shape,
            const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int num_iter);

// ---- fp32 transcendental functions ----------------------------------------------------

enum class Math {
  exp, expm1, log, log1p, logx,                        // Q1
  sigmoid, silu, tanh, erf, erfc, gelu, gelu_fast,     // R
  softplus, softsign, elu, swish, mish, sinh, cosh,    // R
  pow_C, C_pow,                                        // M (pow itself: fp32_pow)
  selu, log_sigmoid,                                   // R
  sin, cos, tan, cot, arcsin, arccos,                  // Q1, trigonometric
  arcsinh, arccosh, arctanh,                           // Q1, inverse hyperbolic
  exp_for_neg_arg, gelu_fast2,                         // dtype-generic only
};

// A work buffer: `role` names it in messages ("work0", "work").
struct WorkBuffer {
  const char *role;
  local_addr_t addr;
};
// A table operand: `param` is the kernel's parameter ("exp_coeff_addr").
struct TableBuffer {
  const char *param;
  local_addr_t addr;
  Table table;
};

// dst = op(src) on fp32 aligned tensors. `param` is the function's scalar:
// logx's base, softplus's and swish's beta, elu's alpha, pow_C's exponent,
// C_pow's base; unused otherwise.
void fp32_math(Context &ctx, const char *api, Math op, float param, local_addr_t dst, local_addr_t src,
               std::initializer_list<WorkBuffer> work, std::initializer_list<TableBuffer> tables,
               const dim4 &shape);

// dst = 1 / src (tpu_bdc_fp32_compensate_reciprocal and its tunable form):
// dst aligned, src with free strides (null: aligned), fp32. The result is
// the correctly rounded reciprocal for every num_iter >= 1 and num_comp >= 0
// (they only scale the cost). Work buffers afterwards: work0 the reciprocal
// r, work1 the residual 1 - src * r, work2 the correction r * residual.
void fp32_compensate_reciprocal(Context &ctx, const char *api, local_addr_t dst, local_addr_t src,
                                std::initializer_list<WorkBuffer> work, const dim4 &shape, const dim4 *src_stride,
                                int num_iter, int num_comp);

// dst = src0 ^ src1 (tpu_bdc_fp32_pow).
void fp32_pow(Context &ctx, const char *api, local_addr_t dst, local_addr_t src0, local_addr_t src1,
              std::initializer_list<WorkBuffer> work, std::initializer_list<TableBuffer> tables,
              const dim4 &shape);

// ---- dtype-generic transcendental functions (tpu_bdc_fp_exp & co.) --------------------

// A table operand of a dtype-generic function: `param` names it, `func` is
// the table it needs (any dtype's table of that function is identified and
// judged by require_fp_table, tables.h).
struct FpTableBuffer {
  const char *param;
  local_addr_t addr;
  TableFunc func;
};

// dst = op(src) on aligned tensors of `dtype` (FP32, FP16, BF16; FP8 /
// FP20 / TF32 unsupported, anything else illegal): evaluated in double as
// fp32_math and rounded once into dtype. Work buffers: dst's shape and
// dtype, aligned, left holding the intermediates of fp32_math rounded into
// dtype. The same overlap rules as fp32_math (dst may be src).
void fp_math(Context &ctx, const char *api, Math op, float param, data_type_t dtype, local_addr_t dst,
             local_addr_t src, std::initializer_list<WorkBuffer> work, std::initializer_list<FpTableBuffer> tables,
             const dim4 &shape);

}  // namespace cmodel::bdc
