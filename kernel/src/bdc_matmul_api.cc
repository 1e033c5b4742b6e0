// bdc_matmul_api.cc: tpu-kernel family G, the float M2 matrix multiply
// (tpu_bdc_fp_mm and its transposed, constant-operand and _with_bias forms,
// with the current header's arguments) and the M1 (columns per channel)
// family (tpu_bdc_fp32_mm, int_mm, int_pcs_mm, int8_mm with their _L_trans
// and _L_const forms), over cmodel/bdc/matmul (see matmul.h for the
// layouts, numerics and checks).
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

// ---- M1 family (columns per channel) ----------------------------------------------------

namespace {

using bdc::M1Kind;
using bdc::M1Layout;
using bdc::M1Matmul;

M1Matmul m1(M1Kind kind, M1Layout layout, local_addr_t left, local_addr_t right, int left_rows, int left_cols,
            int right_cols, int left_cpc, int right_cpc) {
  M1Matmul mm;
  mm.kind = kind;
  mm.layout = layout;
  mm.left = left;
  mm.right = right;
  mm.left_rows = left_rows;
  mm.left_cols = left_cols;
  mm.right_cols = right_cols;
  mm.left_cpc = left_cpc;
  mm.right_cpc = right_cpc;
  return mm;
}

void run_m1(const char *api, local_addr_t output_addr, const M1Matmul &mm) {
  bdc::m1_matmul(api::context(), api, output_addr, mm);
}

M1Matmul fp32(M1Matmul mm, local_addr_t bias_addr, bool has_bias, bool result_add) {
  mm.left_dtype = mm.right_dtype = mm.output_dtype = mm.bias_dtype = DT_FP32;
  mm.bias = bias_addr;
  mm.has_bias = has_bias;
  mm.result_add = result_add;
  return mm;
}

M1Matmul int_shift(M1Matmul mm, data_type_t left_dtype, data_type_t right_dtype, rounding_mode_t mode) {
  mm.left_dtype = left_dtype;
  mm.right_dtype = right_dtype;
  mm.rounding_mode = mode;
  return mm;
}

M1Matmul int8(M1Matmul mm, local_addr_t bias_addr, data_type_t output_dtype, data_type_t left_dtype,
              data_type_t right_dtype, data_type_t bias_dtype, unsigned char lshift, unsigned char rshift,
              bool has_bias, bool result_add, bool result_relu) {
  mm.bias = bias_addr;
  mm.output_dtype = output_dtype;
  mm.left_dtype = left_dtype;
  mm.right_dtype = right_dtype;
  mm.bias_dtype = bias_dtype;
  mm.lshift = lshift;
  mm.rshift = rshift;
  mm.has_bias = has_bias;
  mm.result_add = result_add;
  mm.relu = result_relu;
  return mm;
}

M1Matmul with_C(M1Matmul mm, scalar_t C) {
  mm.C = C;
  mm.left_dtype_name = "C_dtype";
  return mm;
}

}  // namespace

void tpu_bdc_fp32_mm(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr, local_addr_t bias_addr,
                     int left_rows, int left_cols, int right_cols, int left_cols_per_channel,
                     int right_cols_per_channel, bool has_bias, bool result_add) {
  run_m1(__func__, output_addr,
         fp32(m1(M1Kind::fp32, M1Layout::plain, left_addr, right_addr, left_rows, left_cols, right_cols,
                 left_cols_per_channel, right_cols_per_channel),
              bias_addr, has_bias, result_add));
}

void tpu_bdc_fp32_mm_L_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                             local_addr_t bias_addr, int left_rows, int left_cols, int right_cols,
                             int left_cols_per_channel, int right_cols_per_channel, bool has_bias, bool result_add) {
  run_m1(__func__, output_addr,
         fp32(m1(M1Kind::fp32, M1Layout::left_trans, left_addr, right_addr, left_rows, left_cols, right_cols,
                 left_cols_per_channel, right_cols_per_channel),
              bias_addr, has_bias, result_add));
}

void tpu_bdc_fp32_mm_L_const(local_addr_t output_addr, local_addr_t right_addr, local_addr_t bias_addr, float C,
                             int left_rows, int left_cols, int right_cols, int right_cols_per_channel, bool has_bias,
                             bool result_add) {
  M1Matmul mm = fp32(m1(M1Kind::fp32, M1Layout::left_const, 0, right_addr, left_rows, left_cols, right_cols, 1,
                        right_cols_per_channel),
                     bias_addr, has_bias, result_add);
  mm.C.f32 = C;
  run_m1(__func__, output_addr, mm);
}

void tpu_bdc_int_mm(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr, int left_rows,
                    int left_cols, int right_cols, int left_cols_per_channel, int right_cols_per_channel,
                    data_type_t left_dtype, data_type_t right_dtype, char shift, rounding_mode_t rounding_mode) {
  M1Matmul mm = int_shift(m1(M1Kind::int_mm, M1Layout::plain, left_addr, right_addr, left_rows, left_cols, right_cols,
                             left_cols_per_channel, right_cols_per_channel),
                          left_dtype, right_dtype, rounding_mode);
  mm.shift = static_cast<signed char>(shift);
  run_m1(__func__, output_addr, mm);
}

void tpu_bdc_int_mm_L_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr, int left_rows,
                            int left_cols, int right_cols, int left_cols_per_channel, int right_cols_per_channel,
                            data_type_t left_dtype, data_type_t right_dtype, char shift,
                            rounding_mode_t rounding_mode) {
  M1Matmul mm = int_shift(m1(M1Kind::int_mm, M1Layout::left_trans, left_addr, right_addr, left_rows, left_cols,
                             right_cols, left_cols_per_channel, right_cols_per_channel),
                          left_dtype, right_dtype, rounding_mode);
  mm.shift = static_cast<signed char>(shift);
  run_m1(__func__, output_addr, mm);
}

void tpu_bdc_int_mm_L_const(local_addr_t output_addr, local_addr_t right_addr, scalar_t C, int left_rows,
                            int left_cols, int right_cols, int right_cols_per_channel, data_type_t C_dtype,
                            data_type_t right_dtype, char shift, rounding_mode_t rounding_mode) {
  M1Matmul mm = with_C(int_shift(m1(M1Kind::int_mm, M1Layout::left_const, 0, right_addr, left_rows, left_cols,
                                    right_cols, 1, right_cols_per_channel),
                                 C_dtype, right_dtype, rounding_mode),
                       C);
  mm.shift = static_cast<signed char>(shift);
  run_m1(__func__, output_addr, mm);
}

void tpu_bdc_int_pcs_mm(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                        local_addr_t shift_addr, int left_rows, int left_cols, int right_cols,
                        int left_cols_per_channel, int right_cols_per_channel, data_type_t left_dtype,
                        data_type_t right_dtype, rounding_mode_t rounding_mode) {
  M1Matmul mm = int_shift(m1(M1Kind::int_pcs, M1Layout::plain, left_addr, right_addr, left_rows, left_cols,
                             right_cols, left_cols_per_channel, right_cols_per_channel),
                          left_dtype, right_dtype, rounding_mode);
  mm.bias = shift_addr;
  run_m1(__func__, output_addr, mm);
}

void tpu_bdc_int_pcs_mm_L_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                                local_addr_t shift_addr, int left_rows, int left_cols, int right_cols,
                                int left_cols_per_channel, int right_cols_per_channel, data_type_t left_dtype,
                                data_type_t right_dtype, rounding_mode_t rounding_mode) {
  M1Matmul mm = int_shift(m1(M1Kind::int_pcs, M1Layout::left_trans, left_addr, right_addr, left_rows, left_cols,
                             right_cols, left_cols_per_channel, right_cols_per_channel),
                          left_dtype, right_dtype, rounding_mode);
  mm.bias = shift_addr;
  run_m1(__func__, output_addr, mm);
}

void tpu_bdc_int_pcs_mm_L_const(local_addr_t output_addr, local_addr_t right_addr, local_addr_t shift_addr,
                                scalar_t C, int left_rows, int left_cols, int right_cols, int right_cols_per_channel,
                                data_type_t C_dtype, data_type_t right_dtype, rounding_mode_t rounding_mode) {
  M1Matmul mm = with_C(int_shift(m1(M1Kind::int_pcs, M1Layout::left_const, 0, right_addr, left_rows, left_cols,
                                    right_cols, 1, right_cols_per_channel),
                                 C_dtype, right_dtype, rounding_mode),
                       C);
  mm.bias = shift_addr;
  run_m1(__func__, output_addr, mm);
}

void tpu_bdc_int8_mm(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr, local_addr_t bias_addr,
                     int left_rows, int left_cols, int right_cols, int left_cols_per_channel,
                     int right_cols_per_channel, data_type_t output_dtype, data_type_t left_dtype,
                     data_type_t right_dtype, data_type_t bias_dtype, unsigned char lshift, unsigned char rshift,
                     bool has_bias, bool result_add, bool result_relu) {
  run_m1(__func__, output_addr,
         int8(m1(M1Kind::int8, M1Layout::plain, left_addr, right_addr, left_rows, left_cols, right_cols,
                 left_cols_per_channel, right_cols_per_channel),
              bias_addr, output_dtype, left_dtype, right_dtype, bias_dtype, lshift, rshift, has_bias, result_add,
              result_relu));
}

void tpu_bdc_int8_mm_L_trans(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                             local_addr_t bias_addr, int left_rows, int left_cols, int right_cols,
                             int left_cols_per_channel, int right_cols_per_channel, data_type_t output_dtype,
                             data_type_t left_dtype, data_type_t right_dtype, data_type_t bias_dtype,
                             unsigned char lshift, unsigned char rshift, bool has_bias, bool result_add,
                             bool result_relu) {
  run_m1(__func__, output_addr,
         int8(m1(M1Kind::int8, M1Layout::left_trans, left_addr, right_addr, left_rows, left_cols, right_cols,
                 left_cols_per_channel, right_cols_per_channel),
              bias_addr, output_dtype, left_dtype, right_dtype, bias_dtype, lshift, rshift, has_bias, result_add,
              result_relu));
}

void tpu_bdc_int8_mm_L_const(local_addr_t output_addr, local_addr_t right_addr, local_addr_t bias_addr, scalar_t C,
                             int left_rows, int left_cols, int right_cols, int right_cols_per_channel,
                             data_type_t output_dtype, data_type_t C_dtype, data_type_t right_dtype,
                             data_type_t bias_dtype, unsigned char lshift, unsigned char rshift, bool has_bias,
                             bool result_add, bool result_relu) {
  run_m1(__func__, output_addr,
         with_C(int8(m1(M1Kind::int8, M1Layout::left_const, 0, right_addr, left_rows, left_cols, right_cols, 1,
                        right_cols_per_channel),
                     bias_addr, output_dtype, C_dtype, right_dtype, bias_dtype, lshift, rshift, has_bias, result_add,
                     result_relu),
                C));
}

}  // namespace cmodel::impl
