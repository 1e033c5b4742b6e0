// bdc_matmul_api.cc: tpu-kernel family G, the float M2 matrix multiply
// (tpu_bdc_fp_mm and its transposed, constant-operand and _with_bias forms,
// with the current header's arguments), over cmodel/bdc/matmul (see
// matmul.h for the layouts, numerics and checks).
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/bdc/matmul.h"
#include "cmodel/context.h"

namespace cmodel::impl {

namespace {

using bdc::FpMatmul;
using bdc::MmLayout;
using bdc::MmOperand;

MmOperand tensor(local_addr_t addr) { return {false, addr, {}}; }
MmOperand constant(scalar_t C) { return {true, 0, C}; }

// What every variant passes: the layout, the three size arguments, the
// operands and dtypes (the operand dtype under the name the API gives it).
FpMatmul product(MmLayout layout, int left_rows, int left_cols, int right_size, MmOperand left, MmOperand right,
                 data_type_t output_dtype, data_type_t operand_dtype, const char *operand_dtype_name,
                 bool result_add) {
  FpMatmul mm;
  mm.layout = layout;
  mm.left_rows = left_rows;
  mm.left_cols = left_cols;
  mm.right_size = right_size;
  mm.right_size_name = layout == MmLayout::plain ? "right_cols" : "right_rows";
  mm.left = left;
  mm.right = right;
  mm.output_dtype = output_dtype;
  mm.operand_dtype = operand_dtype;
  mm.operand_dtype_name = operand_dtype_name;
  mm.result_add = result_add;
  return mm;
}

// The _with_bias arguments: bias_data holds the constant's bits or the
// bias tensor's address.
FpMatmul with_bias(FpMatmul mm, data_type_t bias_dtype, bool bias_is_const, var_context_t bias_data, bool do_relu) {
  mm.bias.present = true;
  mm.bias.is_const = bias_is_const;
  mm.bias.dtype = bias_dtype;
  if (bias_is_const)
    mm.bias.value = bias_data.scalar;
  else
    mm.bias.addr = bias_data.addr;
  mm.do_relu = do_relu;
  return mm;
}

void run(const char *api, local_addr_t output_addr, const FpMatmul &mm) {
  bdc::fp_matmul(api::context(), api, output_addr, mm);
}

}  // namespace

// ---- without bias ---------------------------------------------------------------

void tpu_bdc_fp_mm(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr, int left_rows,
                   int left_cols, int right_cols, data_type_t output_dtype, data_type_t left_right_dtype,
                   bool result_add) {
  run(__func__, output_addr,
      product(MmLayout::plain, left_rows, left_cols, right_cols, tensor(left_addr), tensor(right_addr), output_dtype,
              left_right_dtype, "left_right_dtype", result_add));
}

void tpu_bdc_fp_mm_R_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr, int left_rows,
                           int left_cols, int right_rows, data_type_t output_dtype, data_type_t left_right_dtype) {
  run(__func__, output_addr,
      product(MmLayout::right_trans, left_rows, left_cols, right_rows, tensor(left_addr), tensor(right_addr),
              output_dtype, left_right_dtype, "left_right_dtype", false));
}

void tpu_bdc_fp_mm_all_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr, int left_rows,
                             int left_cols, int right_rows, data_type_t output_dtype, data_type_t left_right_dtype,
                             bool result_add) {
  run(__func__, output_addr,
      product(MmLayout::all_trans, left_rows, left_cols, right_rows, tensor(left_addr), tensor(right_addr),
              output_dtype, left_right_dtype, "left_right_dtype", result_add));
}

void tpu_bdc_fp_mm_L_const(local_addr_t output_addr, local_addr_t right_addr, scalar_t C, int left_rows, int left_cols,
                           int right_cols, data_type_t output_dtype, data_type_t right_C_dtype, bool result_add) {
  run(__func__, output_addr,
      product(MmLayout::plain, left_rows, left_cols, right_cols, constant(C), tensor(right_addr), output_dtype,
              right_C_dtype, "right_C_dtype", result_add));
}

void tpu_bdc_fp_mm_R_const(local_addr_t output_addr, local_addr_t left_addr, scalar_t C, int left_rows, int left_cols,
                           int right_cols, data_type_t output_dtype, data_type_t left_C_dtype, bool result_add) {
  run(__func__, output_addr,
      product(MmLayout::plain, left_rows, left_cols, right_cols, tensor(left_addr), constant(C), output_dtype,
              left_C_dtype, "left_C_dtype", result_add));
}

void tpu_bdc_fp_mm_L_const_R_trans(local_addr_t output_addr, local_addr_t right_addr, scalar_t C, int left_rows,
                                   int left_cols, int right_rows, data_type_t output_dtype, data_type_t right_C_dtype) {
  run(__func__, output_addr,
      product(MmLayout::right_trans, left_rows, left_cols, right_rows, constant(C), tensor(right_addr), output_dtype,
              right_C_dtype, "right_C_dtype", false));
}

void tpu_bdc_fp_mm_L_const_all_trans(local_addr_t output_addr, local_addr_t right_addr, scalar_t C, int left_rows,
                                     int left_cols, int right_rows, data_type_t output_dtype,
                                     data_type_t right_C_dtype, bool result_add) {
  run(__func__, output_addr,
      product(MmLayout::all_trans, left_rows, left_cols, right_rows, constant(C), tensor(right_addr), output_dtype,
              right_C_dtype, "right_C_dtype", result_add));
}

void tpu_bdc_fp_mm_R_const_all_trans(local_addr_t output_addr, local_addr_t left_addr, scalar_t C, int left_rows,
                                     int left_cols, int right_rows, data_type_t output_dtype, data_type_t left_C_dtype,
                                     bool result_add) {
  run(__func__, output_addr,
      product(MmLayout::all_trans, left_rows, left_cols, right_rows, tensor(left_addr), constant(C), output_dtype,
              left_C_dtype, "left_C_dtype", result_add));
}

// ---- with bias (and relu) -----------------------------------------------------------

void tpu_bdc_fp_mm_with_bias(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr, int left_rows,
                             int left_cols, int right_cols, data_type_t output_dtype, data_type_t left_right_dtype,
                             data_type_t bias_dtype, bool result_add, bool bias_is_const, var_context_t bias_data,
                             bool do_relu) {
  run(__func__, output_addr,
      with_bias(product(MmLayout::plain, left_rows, left_cols, right_cols, tensor(left_addr), tensor(right_addr),
                        output_dtype, left_right_dtype, "left_right_dtype", result_add),
                bias_dtype, bias_is_const, bias_data, do_relu));
}

void tpu_bdc_fp_mm_R_trans_with_bias(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                                     int left_rows, int left_cols, int right_rows, data_type_t output_dtype,
                                     data_type_t left_right_dtype, data_type_t bias_dtype, bool add_result,
                                     bool bias_is_const, var_context_t bias_data, bool do_relu) {
  run(__func__, output_addr,
      with_bias(product(MmLayout::right_trans, left_rows, left_cols, right_rows, tensor(left_addr), tensor(right_addr),
                        output_dtype, left_right_dtype, "left_right_dtype", add_result),
                bias_dtype, bias_is_const, bias_data, do_relu));
}

void tpu_bdc_fp_mm_all_trans_with_bias(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                                       int left_rows, int left_cols, int right_rows, data_type_t output_dtype,
                                       data_type_t left_right_dtype, data_type_t bias_dtype, bool result_add,
                                       bool bias_is_const, var_context_t bias_data, bool do_relu) {
  run(__func__, output_addr,
      with_bias(product(MmLayout::all_trans, left_rows, left_cols, right_rows, tensor(left_addr), tensor(right_addr),
                        output_dtype, left_right_dtype, "left_right_dtype", result_add),
                bias_dtype, bias_is_const, bias_data, do_relu));
}

void tpu_bdc_fp_mm_L_const_with_bias(local_addr_t output_addr, local_addr_t right_addr, scalar_t C, int left_rows,
                                     int left_cols, int right_cols, data_type_t output_dtype,
                                     data_type_t right_C_dtype, data_type_t bias_dtype, bool result_add,
                                     bool bias_is_const, var_context_t bias_data, bool do_relu) {
  run(__func__, output_addr,
      with_bias(product(MmLayout::plain, left_rows, left_cols, right_cols, constant(C), tensor(right_addr),
                        output_dtype, right_C_dtype, "right_C_dtype", result_add),
                bias_dtype, bias_is_const, bias_data, do_relu));
}

void tpu_bdc_fp_mm_R_const_with_bias(local_addr_t output_addr, local_addr_t left_addr, scalar_t C, int left_rows,
                                     int left_cols, int right_cols, data_type_t output_dtype,
                                     data_type_t left_C_dtype, data_type_t bias_dtype, bool result_add,
                                     bool bias_is_const, var_context_t bias_data, bool do_relu) {
  run(__func__, output_addr,
      with_bias(product(MmLayout::plain, left_rows, left_cols, right_cols, tensor(left_addr), constant(C),
                        output_dtype, left_C_dtype, "left_C_dtype", result_add),
                bias_dtype, bias_is_const, bias_data, do_relu));
}

// The vendor's newer-generation wrapper drops result_add here; the tier-3
// spec (§2.2, §7.9) honours it, as the argument list promises.
void tpu_bdc_fp_mm_L_const_R_trans_with_bias(local_addr_t output_addr, local_addr_t right_addr, scalar_t C,
                                             int left_rows, int left_cols, int right_rows, data_type_t output_dtype,
                                             data_type_t right_C_dtype, data_type_t bias_dtype, bool result_add,
                                             bool bias_is_const, var_context_t bias_data, bool do_relu) {
  run(__func__, output_addr,
      with_bias(product(MmLayout::right_trans, left_rows, left_cols, right_rows, constant(C), tensor(right_addr),
                        output_dtype, right_C_dtype, "right_C_dtype", result_add),
                bias_dtype, bias_is_const, bias_data, do_relu));
}

void tpu_bdc_fp_mm_L_const_all_trans_with_bias(local_addr_t output_addr, local_addr_t right_addr, scalar_t C,
                                               int left_rows, int left_cols, int right_rows, data_type_t output_dtype,
                                               data_type_t right_C_dtype, data_type_t bias_dtype, bool result_add,
                                               bool bias_is_const, var_context_t bias_data, bool do_relu) {
  run(__func__, output_addr,
      with_bias(product(MmLayout::all_trans, left_rows, left_cols, right_rows, constant(C), tensor(right_addr),
                        output_dtype, right_C_dtype, "right_C_dtype", result_add),
                bias_dtype, bias_is_const, bias_data, do_relu));
}

void tpu_bdc_fp_mm_R_const_all_trans_with_bias(local_addr_t output_addr, local_addr_t left_addr, scalar_t C,
                                               int left_rows, int left_cols, int right_rows, data_type_t output_dtype,
                                               data_type_t left_C_dtype, data_type_t bias_dtype, bool result_add,
                                               bool bias_is_const, var_context_t bias_data, bool do_relu) {
  run(__func__, output_addr,
      with_bias(product(MmLayout::all_trans, left_rows, left_cols, right_rows, tensor(left_addr), constant(C),
                        output_dtype, left_C_dtype, "left_C_dtype", result_add),
                bias_dtype, bias_is_const, bias_data, do_relu));
}

}  // namespace cmodel::impl
