// matmul.h: the float matrix multiply of the M2 family (family G:
// tpu_bdc_fp_mm and its _R_trans, _all_trans, _L_const, _R_const and
// _with_bias forms; shared spec tpu-kernel-tier3.md §2.2).
//
// Layout M2 (one matrix row per channel). A stored r x c matrix is the
// aligned local tensor (1, r, 1, c) starting on NPU 0: row i on NPU
// i % NPU_NUM, at element offset (i / NPU_NUM) * ALIGN(c, EU_NUM) + j.
// The product Y[M x N] = Lg[M x K] * Rg[K x N] reads its operands as
//
//   layout     M    K    N    left stored   right stored
//   plain      Lr   Lc   Rc   [M x K]       [K x N]
//   right_trans Lr  Lc   Rr   [M x K]       [N x K]
//   all_trans  Lc   Lr   Rr   [K x M]       [N x K]
//
// (Lr, Lc = left_rows, left_cols; Rc / Rr = the third size argument). A
// constant operand is C, in the operand dtype, everywhere.
//
// Numerics (§1.6): for every output element, in fp32,
//   acc = result_add ? old output (read in the output dtype) : +0
//   for k = 0 .. K-1:  acc = fl32(acc + fl32(Lg[m][k] * Rg[k][n]))
//   acc = fl32(acc + bias[n])            with a bias
//   acc = acc > 0 ? acc : +0             with relu (-0 and NaN give +0)
//   Y   = acc rounded to nearest-even into the output dtype, once.
// Every operand and the old output are read before the output is written:
// an output overlapping an input gives the result as if all inputs were
// read first, and the run gets a warning (the hardware streams the output
// while it reads, so its result would differ).
//
// Bias: a constant (the bits of the kernel's var_context_t: fp32 for an
// FP32 bias, the low 16 bits for FP16 / BF16) or a local vector b[N] in
// bias_dtype: for the plain and right_trans layouts the aligned tensor
// (1, NPU_NUM, 1, N) on NPU 0 (every lane its own copy, as
// tpu_bdc_npu_bcast writes it; row m reads the copy on lane m % NPU_NUM,
// so only lanes 0 .. min(M, NPU_NUM) - 1 are read); for all_trans the
// compact tensor (1, N, 1, 1) on NPU 0 (b[n] on lane n % NPU_NUM at element
// n / NPU_NUM), at an offset that is a multiple of 4 bytes.
//
// dtypes: operands FP32, FP16 or BF16; output FP32 or the operand dtype;
// bias FP32 or the operand dtype. Checks: M, K, N (the arguments that give
// them) in [1, 65535]; every tensor starts on NPU 0 and is aligned (offset
// a multiple of EU bytes) unless stated above; every tensor fits in local
// memory. Cost: ceil(M N K / peak) + issue latency, peak = NPU_NUM x
// eu_num(FP32) MACs per cycle for FP32 operands and NPU_NUM x P(t) x 4 for
// FP16 / BF16 (P = tpu_get_ic_parallel).
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class MmLayout { plain, right_trans, all_trans };

// A matrix operand: the local tensor at `addr`, or `value` everywhere.
struct MmOperand {
  bool is_const = false;
  local_addr_t addr = 0;
  scalar_t value{};
};

struct MmBias {
  bool present = false;
  bool is_const = false;
  local_addr_t addr = 0;  // the vector, when not constant
  scalar_t value{};       // the constant's bits
  data_type_t dtype = DT_FP32;
};

struct FpMatmul {
  MmLayout layout = MmLayout::plain;
  // The kernel's size arguments, with their names for messages.
  int left_rows = 0, left_cols = 0, right_size = 0;
  const char *right_size_name = "right_cols";  // or "right_rows"
  MmOperand left, right;
  data_type_t output_dtype = DT_FP32, operand_dtype = DT_FP32;
  const char *operand_dtype_name = "left_right_dtype";  // as the API names it
  bool result_add = false;
  bool do_relu = false;
  MmBias bias;
};

void fp_matmul(Context &ctx, const char *api, local_addr_t output, const FpMatmul &mm);

// ---- M1 family (columns per channel; tier-3 spec §2.1) ----------------------------
//
// Layout M1. A r x c matrix with w columns per channel is the aligned local
// tensor (r, ceil(c / w), 1, w): element (i, j) is (n = i, c = j / w, h = 0,
// w = j % w). Rows share lanes, column chunks spread over the lanes; the
// left may start on any NPU, the right, the output and the bias / shift
// vector (M1 1 x Rc with the right's w) start on the output's NPU.
//
//   variant   left stored      right stored   output          Y
//   plain     Lr x Lc (lw)     Lc x Rc (rw)   Lr x Rc (rw)    L R
//   L_trans   Lr x Lc (lw)     Lr x Rc (rw)   Lc x Rc (rw)    L^T R
//   L_const   C everywhere     Lc x Rc (rw)   Lr x Rc (rw)    C sum_k R[k][j]
//
// Kinds (what the caller computes from the exact integer sum acc):
//  - fp32:    the §1.6 float accumulation of the M2 family (result_add,
//             bias b[j], no relu), FP32 only;
//  - int_mm:  32-bit operands: Y = sat(S(acc, -shift)) (shift > 0 right,
//             rounded with `rounding_mode`; < 0 left); 8/16-bit: Y = sat(acc);
//             Y INT32, UINT32 when both operands are unsigned;
//  - int_pcs: as int_mm with the shift of column j read from an INT8 M1
//             vector (only for 32-bit operands);
//  - int8:    acc + b[j] + Y_old, times 2^lshift, rounded right by rshift
//             (RM_HALF_UP), relu, saturated into the output: width of
//             output_dtype, signedness by the sign rule (relu -> unsigned,
//             else signed when the left, the right or the bias is signed).
enum class M1Kind { fp32, int_mm, int_pcs, int8 };
enum class M1Layout { plain, left_trans, left_const };

struct M1Matmul {
  M1Kind kind = M1Kind::fp32;
  M1Layout layout = M1Layout::plain;
  int left_rows = 0, left_cols = 0, right_cols = 0, left_cpc = 1, right_cpc = 1;
  local_addr_t left = 0, right = 0;
  scalar_t C{};  // left_const: the constant, in left_dtype
  data_type_t left_dtype = DT_FP32, right_dtype = DT_FP32, output_dtype = DT_FP32;
  const char *left_dtype_name = "left_dtype";  // "C_dtype" for L_const
  bool has_bias = false;
  local_addr_t bias = 0;  // also the shift vector of int_pcs
  data_type_t bias_dtype = DT_INT32;
  int shift = 0;  // int_mm
  int lshift = 0, rshift = 0;  // int8
  rounding_mode_t rounding_mode = RM_HALF_UP;
  bool result_add = false, relu = false;
};

void m1_matmul(Context &ctx, const char *api, local_addr_t output, const M1Matmul &mm);


// ---- integer M2 family (tier-3 spec §2.2): tpu_bdc_int8_zp_mm*,
// tpu_bdc_int8_pc_zp_mm*, tpu_bdc_quant_mm --------------------------------------
//
// The M2 layout of the float family, with the product's sizes given
// directly: Y[M x N] = Lg[M x K] (Rg[K x N] - z[N]); the left is stored
// [K x M] when left_trans, the right [N x K] when right_trans (a transposed
// left needs a transposed right: the other combination does not exist).
// Operands INT8 / UINT8 (a constant: its value in its dtype everywhere).
//
//   acc = sum_k Lg[m][k] (Rg[k][n] - z[n])  + bias[n]  + old output (result_add)
//   Y   = requant ? sat_sym(max(S(acc m, σ, mode), 0 if relu) + zp)
//                 : sat(relu ? max(acc, 0) : acc)
//
// exactly in integers (S as tier-3 §1.4; sat into the output dtype, sym:
// signed lower bound -max). Per-column vectors (zero point z, bias,
// per-channel requant of 2 INT32 words: m; σ in bits 0-7, zp in bits
// 16-31) are, for an untransposed left, NPU-replicated: the aligned
// (1, min(M, NPU_NUM), 1, N x words) on NPU 0, row m reading the copy on
// NPU m % NPU_NUM; for a transposed left one compact (1, N, 1, words) on
// NPU 0 (column n on NPU n % NPU_NUM), at an offset that is a multiple of
// the vector's bytes per column (z 2, bias 4, requant 8). Checks: M, K, N
// in [1, 65535]; dtypes; rounding mode 0..6; σ in [-128, 127] and zp in
// [-32768, 32767]; every tensor on NPU 0, matrices aligned. Cost: as the
// float family with 8-bit operands (peak NPU_NUM x P(INT8) x 4).
struct IntMmVector {
  bool present = false;
  MmOperand value;  // a constant or the tensor at value.addr
  data_type_t dtype = DT_INT32;
  const char *name = "";  // for messages
};

struct IntMmRequant {
  bool present = false, per_channel = false;
  local_addr_t addr = 0;                          // per_channel
  int multiplier = 1, shift = 0, zero_point = 0;  // shift: σ, negative = right
  rounding_mode_t mode = RM_HALF_UP;
  bool sym = false;
};

struct IntMatmul {
  int M = 0, K = 0, N = 0;
  const char *M_name = "output_rows", *K_name = "inner_cols", *N_name = "output_cols";
  bool left_trans = false, right_trans = false;
  MmOperand left, right;
  data_type_t left_dtype = DT_INT8, right_dtype = DT_INT8, output_dtype = DT_INT32;
  const char *left_dtype_name = "left_dtype", *right_dtype_name = "right_dtype";
  IntMmVector zero_point, bias;
  IntMmRequant requant;
  bool result_add = false, relu = false;
};

void int_matmul(Context &ctx, const char *api, local_addr_t output, const IntMatmul &mm);

}  // namespace cmodel::bdc
