// bdc_quant_mm_api.cc: tpu-kernel family G, the integer M2 matrix multiply
// (tpu_bdc_int8_zp_mm*, tpu_bdc_int8_pc_zp_mm*, tpu_bdc_quant_mm), over
// cmodel/bdc/matmul (see matmul.h: IntMatmul for the layouts, numerics and
// checks). Each function decodes its arguments into one IntMatmul; the
// choices where the public sources stop (tier-3 spec §2.2, §7) are made
// here and documented in docs/bdc.md.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include <cstring>

#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/bdc/matmul.h"
#include "cmodel/context.h"

namespace cmodel::impl {

namespace {

using bdc::IntMatmul;
using bdc::MmOperand;

MmOperand tensor(local_addr_t addr) { return {false, addr, {}}; }
MmOperand constant(scalar_t C) { return {true, 0, C}; }

// The zp families' layouts and how their size arguments map to M, K, N
// (tier-3 §2.2): every form has M = left_rows, K = left_cols and N = the
// third size; all_trans stores the left [K x M] = [left_cols x left_rows]
// (unlike tpu_bdc_fp_mm_all_trans, §7.1).
enum class ZpLayout { plain, right_trans, all_trans };

// What every zp-family function passes. `right_zp_dtype` (or C_zp_dtype)
// is the right operand's dtype and gives its signedness (§2.2, proposed:
// the vendor wrapper takes the left's). The product is INT32.
IntMatmul zp_product(ZpLayout layout, int left_rows, int left_cols, int right_size, MmOperand left, MmOperand right,
                     data_type_t left_dtype, const char *left_dtype_name, data_type_t right_dtype,
                     const char *right_dtype_name, bool result_add) {
  IntMatmul mm;
  mm.M = left_rows;
  mm.K = left_cols;
  mm.N = right_size;
  mm.M_name = "left_rows";
  mm.K_name = "left_cols";
  mm.N_name = layout == ZpLayout::plain ? "right_cols" : "right_rows";
  mm.left_trans = layout == ZpLayout::all_trans;
  mm.right_trans = layout != ZpLayout::plain;
  mm.left = left;
  mm.right = right;
  mm.left_dtype = left_dtype;
  mm.left_dtype_name = left_dtype_name;
  mm.right_dtype = right_dtype;
  mm.right_dtype_name = right_dtype_name;
  mm.output_dtype = DT_INT32;
  mm.result_add = result_add;
  return mm;
}

// A scalar zero point: the vendor wrapper passes zp_val as an INT16
// constant (§2.2), so its low 16 bits, signed.
IntMatmul with_scalar_zp(IntMatmul mm, scalar_t zp_val) {
  mm.zero_point = {true, constant(zp_val), DT_INT16, "zp_val"};
  return mm;
}

// A per-column zero-point tensor: INT16 on bm1688 (the vendor asserts it);
// on bm1684x 8-bit in the right operand's dtype, as its decoder shows
// (§2.2, §7.7).
IntMatmul with_tensor_zp(IntMatmul mm, local_addr_t zp_addr) {
  const bool bm1688 = std::strcmp(api::context().chip.name, "bm1688") == 0;
  mm.zero_point = {true, tensor(zp_addr), bm1688 ? DT_INT16 : mm.right_dtype, "zp"};
  return mm;
}

void run(const char *api, local_addr_t output_addr, const IntMatmul &mm) {
  bdc::int_matmul(api::context(), api, output_addr, mm);
}

}  // namespace

// ---- scalar zero point ---------------------------------------------------------------

void tpu_bdc_int8_zp_mm(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr, scalar_t zp_val,
                        int left_rows, int left_cols, int right_cols, data_type_t left_dtype,
                        data_type_t right_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_scalar_zp(zp_product(ZpLayout::plain, left_rows, left_cols, right_cols, tensor(left_addr),
                                tensor(right_addr), left_dtype, "left_dtype", right_zp_dtype, "right_zp_dtype",
                                result_add),
                     zp_val));
}

void tpu_bdc_int8_zp_mm_R_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                                scalar_t zp_val, int left_rows, int left_cols, int right_rows, data_type_t left_dtype,
                                data_type_t right_zp_dtype) {
  run(__func__, output_addr,
      with_scalar_zp(zp_product(ZpLayout::right_trans, left_rows, left_cols, right_rows, tensor(left_addr),
                                tensor(right_addr), left_dtype, "left_dtype", right_zp_dtype, "right_zp_dtype", false),
                     zp_val));
}

void tpu_bdc_int8_zp_mm_all_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                                  scalar_t zp_val, int left_rows, int left_cols, int right_rows,
                                  data_type_t left_dtype, data_type_t right_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_scalar_zp(zp_product(ZpLayout::all_trans, left_rows, left_cols, right_rows, tensor(left_addr),
                                tensor(right_addr), left_dtype, "left_dtype", right_zp_dtype, "right_zp_dtype",
                                result_add),
                     zp_val));
}

void tpu_bdc_int8_zp_mm_L_const(local_addr_t output_addr, local_addr_t right_addr, scalar_t C, scalar_t zp_val,
                                int left_rows, int left_cols, int right_cols, data_type_t C_dtype,
                                data_type_t right_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_scalar_zp(zp_product(ZpLayout::plain, left_rows, left_cols, right_cols, constant(C), tensor(right_addr),
                                C_dtype, "C_dtype", right_zp_dtype, "right_zp_dtype", result_add),
                     zp_val));
}

void tpu_bdc_int8_zp_mm_R_const(local_addr_t output_addr, local_addr_t left_addr, scalar_t C, scalar_t zp_val,
                                int left_rows, int left_cols, int right_cols, data_type_t left_dtype,
                                data_type_t C_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_scalar_zp(zp_product(ZpLayout::plain, left_rows, left_cols, right_cols, tensor(left_addr), constant(C),
                                left_dtype, "left_dtype", C_zp_dtype, "C_zp_dtype", result_add),
                     zp_val));
}

void tpu_bdc_int8_zp_mm_L_const_R_trans(local_addr_t output_addr, local_addr_t right_addr, scalar_t C,
                                        scalar_t zp_val, int left_rows, int left_cols, int right_rows,
                                        data_type_t C_dtype, data_type_t right_zp_dtype) {
  run(__func__, output_addr,
      with_scalar_zp(zp_product(ZpLayout::right_trans, left_rows, left_cols, right_rows, constant(C),
                                tensor(right_addr), C_dtype, "C_dtype", right_zp_dtype, "right_zp_dtype", false),
                     zp_val));
}

void tpu_bdc_int8_zp_mm_L_const_all_trans(local_addr_t output_addr, local_addr_t right_addr, scalar_t C,
                                          scalar_t zp_val, int left_rows, int left_cols, int right_rows,
                                          data_type_t C_dtype, data_type_t right_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_scalar_zp(zp_product(ZpLayout::all_trans, left_rows, left_cols, right_rows, constant(C),
                                tensor(right_addr), C_dtype, "C_dtype", right_zp_dtype, "right_zp_dtype", result_add),
                     zp_val));
}

void tpu_bdc_int8_zp_mm_R_const_all_trans(local_addr_t output_addr, local_addr_t left_addr, scalar_t C,
                                          scalar_t zp_val, int left_rows, int left_cols, int right_rows,
                                          data_type_t left_dtype, data_type_t C_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_scalar_zp(zp_product(ZpLayout::all_trans, left_rows, left_cols, right_rows, tensor(left_addr), constant(C),
                                left_dtype, "left_dtype", C_zp_dtype, "C_zp_dtype", result_add),
                     zp_val));
}

// ---- per-column zero point -------------------------------------------------------------

void tpu_bdc_int8_pc_zp_mm(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                           local_addr_t zp_addr, int left_rows, int left_cols, int right_cols, data_type_t left_dtype,
                           data_type_t right_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_tensor_zp(zp_product(ZpLayout::plain, left_rows, left_cols, right_cols, tensor(left_addr),
                                tensor(right_addr), left_dtype, "left_dtype", right_zp_dtype, "right_zp_dtype",
                                result_add),
                     zp_addr));
}

void tpu_bdc_int8_pc_zp_mm_R_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                                   local_addr_t zp_addr, int left_rows, int left_cols, int right_rows,
                                   data_type_t left_dtype, data_type_t right_zp_dtype) {
  run(__func__, output_addr,
      with_tensor_zp(zp_product(ZpLayout::right_trans, left_rows, left_cols, right_rows, tensor(left_addr),
                                tensor(right_addr), left_dtype, "left_dtype", right_zp_dtype, "right_zp_dtype", false),
                     zp_addr));
}

void tpu_bdc_int8_pc_zp_mm_all_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                                     local_addr_t zp_addr, int left_rows, int left_cols, int right_rows,
                                     data_type_t left_dtype, data_type_t right_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_tensor_zp(zp_product(ZpLayout::all_trans, left_rows, left_cols, right_rows, tensor(left_addr),
                                tensor(right_addr), left_dtype, "left_dtype", right_zp_dtype, "right_zp_dtype",
                                result_add),
                     zp_addr));
}

void tpu_bdc_int8_pc_zp_mm_L_const(local_addr_t output_addr, local_addr_t right_addr, local_addr_t zp_addr,
                                   scalar_t C, int left_rows, int left_cols, int right_cols, data_type_t C_dtype,
                                   data_type_t right_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_tensor_zp(zp_product(ZpLayout::plain, left_rows, left_cols, right_cols, constant(C), tensor(right_addr),
                                C_dtype, "C_dtype", right_zp_dtype, "right_zp_dtype", result_add),
                     zp_addr));
}

// The vendor wrapper sets both transposes here; the name says neither
// (§7.9: not reproduced).
void tpu_bdc_int8_pc_zp_mm_R_const(local_addr_t output_addr, local_addr_t left_addr, local_addr_t zp_addr,
                                   scalar_t C, int left_rows, int left_cols, int right_cols, data_type_t left_dtype,
                                   data_type_t C_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_tensor_zp(zp_product(ZpLayout::plain, left_rows, left_cols, right_cols, tensor(left_addr), constant(C),
                                left_dtype, "left_dtype", C_zp_dtype, "C_zp_dtype", result_add),
                     zp_addr));
}

void tpu_bdc_int8_pc_zp_mm_L_const_R_trans(local_addr_t output_addr, local_addr_t right_addr, local_addr_t zp_addr,
                                           scalar_t C, int left_rows, int left_cols, int right_rows,
                                           data_type_t C_dtype, data_type_t right_zp_dtype) {
  run(__func__, output_addr,
      with_tensor_zp(zp_product(ZpLayout::right_trans, left_rows, left_cols, right_rows, constant(C),
                                tensor(right_addr), C_dtype, "C_dtype", right_zp_dtype, "right_zp_dtype", false),
                     zp_addr));
}

void tpu_bdc_int8_pc_zp_mm_L_const_all_trans(local_addr_t output_addr, local_addr_t right_addr, local_addr_t zp_addr,
                                             scalar_t C, int left_rows, int left_cols, int right_rows,
                                             data_type_t C_dtype, data_type_t right_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_tensor_zp(zp_product(ZpLayout::all_trans, left_rows, left_cols, right_rows, constant(C),
                                tensor(right_addr), C_dtype, "C_dtype", right_zp_dtype, "right_zp_dtype", result_add),
                     zp_addr));
}

void tpu_bdc_int8_pc_zp_mm_R_const_all_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t zp_addr,
                                             scalar_t C, int left_rows, int left_cols, int right_rows,
                                             data_type_t left_dtype, data_type_t C_zp_dtype, bool result_add) {
  run(__func__, output_addr,
      with_tensor_zp(zp_product(ZpLayout::all_trans, left_rows, left_cols, right_rows, tensor(left_addr), constant(C),
                                left_dtype, "left_dtype", C_zp_dtype, "C_zp_dtype", result_add),
                     zp_addr));
}

// ---- quant_mm ------------------------------------------------------------------------

namespace {

MmOperand optional_operand(const optional_info_t &o) { return o.is_const ? constant(o.value) : tensor(o.addr); }

}  // namespace

// Sizes given directly (M = output_rows, K = inner_cols, N = output_cols);
// left, right, rzp and bias each a tensor or a constant in its own dtype;
// NULL rzp, bias or requant: none (tier-3 §2.2).
void tpu_bdc_quant_mm(local_addr_t output_addr, data_type_t output_dtype, optional_info_t *left,
                      optional_info_t *right, int output_rows, int inner_cols, int output_cols, bool left_trans,
                      bool right_trans, bool result_add, bool do_relu, optional_info_t *rzp, optional_info_t *bias,
                      requant_int_info_t *requant) {
  const optional_info_t &l = api::deref("left", left), &r = api::deref("right", right);
  IntMatmul mm;
  mm.M = output_rows;
  mm.K = inner_cols;
  mm.N = output_cols;
  mm.left_trans = left_trans;
  mm.right_trans = right_trans;
  mm.left = optional_operand(l);
  mm.right = optional_operand(r);
  mm.left_dtype = l.dtype;
  mm.left_dtype_name = "left->dtype";
  mm.right_dtype = r.dtype;
  mm.right_dtype_name = "right->dtype";
  mm.output_dtype = output_dtype;
  mm.result_add = result_add;
  mm.relu = do_relu;
  if (rzp) mm.zero_point = {true, optional_operand(*rzp), rzp->dtype, "rzp"};
  if (bias) mm.bias = {true, optional_operand(*bias), bias->dtype, "bias"};
  if (requant)
    mm.requant = {true, requant->is_perchannel, requant->addr, requant->multiplier, requant->shift, requant->yzp,
                  requant->round_mode, requant->do_sym_saturate};
  run(__func__, output_addr, mm);
}

}  // namespace cmodel::impl
