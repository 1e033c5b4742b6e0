// matmul_rules_test.cc: the matrix-multiply rules (MM-*, MM2-*) of
// cmodel/vendor_rules.def.
//
// Every product is Y[2 x 4] = L[2 x 4] R[4 x 4] with its operands at fixed
// offsets of NPU 0 (L, R, Y, then the vectors), all aligned.
#include "rule_test.h"

namespace {

using rule_test::g;

constexpr uint32_t L = 0x0000, R = 0x1000, Y = 0x2000, B = 0x3000, Q = 0x4000;

// NPU `npu`'s local memory at `offset`.
local_addr_t at(int npu, uint32_t offset) { return uint32_t(npu) * uint32_t(g.local_mem) + offset; }

// ---- MM: the M1 layout, 4 columns per channel --------------------------------------------

void fp32_mm(local_addr_t output, local_addr_t left, local_addr_t right, local_addr_t bias, int left_cpc) {
  tpu_bdc_fp32_mm(output, left, right, bias, 2, 4, 4, left_cpc, 4, true, false);
}

void int_mm(data_type_t left_dtype, rounding_mode_t mode) {
  tpu_bdc_int_mm(at(0, Y), at(0, L), at(0, R), 2, 4, 4, 4, 4, left_dtype, DT_INT32, 0, mode);
}

// Left (unless constant), right and result start at ALIGN_BYTES.
RULE_TEST(MM_1) {
  expect_refused([](const void *) { fp32_mm(at(0, Y), at(0, L + 4), at(0, R), at(0, B), 4); });
  expect_refused([](const void *) { fp32_mm(at(0, Y + 4), at(0, L), at(0, R), at(0, B), 4); });
  expect_legal([](const void *) { fp32_mm(at(0, Y), at(0, L), at(0, R), at(0, B), 4); });
}

// The bias starts on the result's NPU, at ALIGN_BYTES.
RULE_TEST(MM_2) {
  expect_refused([](const void *) { fp32_mm(at(0, Y), at(0, L), at(0, R), at(1, B), 4); });
  expect_refused([](const void *) { fp32_mm(at(0, Y), at(0, L), at(0, R), at(0, B + 4), 4); });
  expect_legal([](const void *) { fp32_mm(at(0, Y), at(0, L), at(0, R), at(0, B), 4); });
}

// The right starts on the result's NPU; the left may start anywhere.
RULE_TEST(MM_3) {
  expect_refused([](const void *) { fp32_mm(at(0, Y), at(0, L), at(1, R), at(0, B), 4); });
  expect_legal([](const void *) { fp32_mm(at(0, Y), at(2, L), at(0, R), at(0, B), 4); });
}

// Sizes and columns per channel fit the 16-bit fields, and are at least 1.
RULE_TEST(MM_4) {
  expect_refused([](const void *) { fp32_mm(at(0, Y), at(0, L), at(0, R), at(0, B), 0); });
  expect_legal([](const void *) { fp32_mm(at(0, Y), at(0, L), at(0, R), at(0, B), 4); });
}

// A fixed-point product takes integer operands.
RULE_TEST(MM_5) {
  expect_refused([](const void *) { int_mm(DT_FP32, RM_HALF_UP); });
  expect_legal([](const void *) { int_mm(DT_INT32, RM_HALF_UP); });
}

RULE_TEST(MM_6) {
  expect_refused([](const void *) { int_mm(DT_INT32, rounding_mode_t(7)); });
  expect_legal([](const void *) { int_mm(DT_INT32, RM_HALF_DOWN); });
}

// ---- MM2: the float forms -----------------------------------------------------------------

void fp_mm(local_addr_t output, local_addr_t left, local_addr_t right, int left_rows, data_type_t output_dtype,
           data_type_t dtype) {
  tpu_bdc_fp_mm(output, left, right, left_rows, 4, 4, output_dtype, dtype, false);
}

void fp_mm_with_bias(local_addr_t bias) {
  var_context_t data{};
  data.addr = bias;
  tpu_bdc_fp_mm_with_bias(at(0, Y), at(0, L), at(0, R), 2, 4, 4, DT_FP32, DT_FP32, DT_FP32, false, false, data, false);
}

// Left and right start on NPU 0 at ALIGN_BYTES.
RULE_TEST(MM2_1) {
  expect_refused([](const void *) { fp_mm(at(0, Y), at(1, L), at(0, R), 2, DT_FP32, DT_FP32); });
  expect_refused([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R + 4), 2, DT_FP32, DT_FP32); });
  expect_legal([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP32, DT_FP32); });
}

RULE_TEST(MM2_2) {
  expect_refused([](const void *) { fp_mm(at(1, Y), at(0, L), at(0, R), 2, DT_FP32, DT_FP32); });
  expect_refused([](const void *) { fp_mm(at(0, Y + 4), at(0, L), at(0, R), 2, DT_FP32, DT_FP32); });
  expect_legal([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP32, DT_FP32); });
}

// The bias tensor starts on NPU 0 at ALIGN_BYTES (untransposed left).
RULE_TEST(MM2_3) {
  expect_refused([](const void *) { fp_mm_with_bias(at(1, B)); });
  expect_refused([](const void *) { fp_mm_with_bias(at(0, B + 4)); });
  expect_legal([](const void *) { fp_mm_with_bias(at(0, B)); });
}

RULE_TEST(MM2_5) {
  expect_refused([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP32, DT_INT8); });
  expect_legal([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP32, DT_FP32); });
}

// FP32 operands give an FP32 result.
RULE_TEST(MM2_6) {
  expect_refused([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP16, DT_FP32); });
  expect_legal([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP32, DT_FP32); });
}

// FP16 operands give FP16 or FP32.
RULE_TEST(MM2_7) {
  expect_refused([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_BFP16, DT_FP16); });
  expect_legal([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP16, DT_FP16); });
}

// BF16 operands give BF16 or FP32.
RULE_TEST(MM2_8) {
  expect_refused([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP16, DT_BFP16); });
  expect_legal([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP32, DT_BFP16); });
}

RULE_TEST(MM2_11) {
  expect_refused([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 0, DT_FP32, DT_FP32); });
  expect_legal([](const void *) { fp_mm(at(0, Y), at(0, L), at(0, R), 2, DT_FP32, DT_FP32); });
}

// ---- MM2: the fixed-point forms -------------------------------------------------------------

// tpu_bdc_quant_mm of INT8 tensors into INT32, with an optional bias tensor
// and requant.
void quant_mm(bool left_trans, bool right_trans, optional_info_t *bias, requant_int_info_t *requant) {
  optional_info_t left = OPTIONAL_ADDR(DT_INT8, at(0, L)), right = OPTIONAL_ADDR(DT_INT8, at(0, R));
  tpu_bdc_quant_mm(at(0, Y), DT_INT32, &left, &right, 2, 4, 4, left_trans, right_trans, false, false, nullptr, bias,
                   requant);
}

void quant_mm_bias(local_addr_t bias_addr) {
  optional_info_t bias = OPTIONAL_ADDR(DT_INT32, bias_addr);
  quant_mm(false, false, &bias, nullptr);
}

void quant_mm_requant(bool per_channel, local_addr_t addr, rounding_mode_t mode) {
  requant_int_info_t requant{per_channel, false, mode, addr, 1, 0, 0};
  quant_mm(false, false, nullptr, &requant);
}

void int8_zp_mm(data_type_t left_dtype) {
  tpu_bdc_int8_zp_mm(at(0, Y), at(0, L), at(0, R), scalar_t{}, 2, 4, 4, left_dtype, DT_INT8, false);
}

// The zero-point tensor: INT16 on bm1688, INT8 on bm1684x, aligned.
void int8_pc_zp_mm(local_addr_t zp) {
  tpu_bdc_int8_pc_zp_mm(at(0, Y), at(0, L), at(0, R), zp, 2, 4, 4, DT_INT8, DT_INT8, false);
}

// A transposed left needs a transposed right (no TN mode).
RULE_TEST(MM2_4) {
  expect_refused([](const void *) { quant_mm(true, false, nullptr, nullptr); });
  expect_legal([](const void *) { quant_mm(true, true, nullptr, nullptr); });
}

RULE_TEST(MM2_12) {
  expect_refused([](const void *) { int8_zp_mm(DT_INT16); });
  expect_legal([](const void *) { int8_zp_mm(DT_INT8); });
}

RULE_TEST(MM2_13) {
  expect_refused([](const void *) { quant_mm_bias(at(1, B)); });
  expect_refused([](const void *) { quant_mm_bias(at(0, B + 4)); });
  expect_legal([](const void *) { quant_mm_bias(at(0, B)); });
}

RULE_TEST(MM2_14) {
  expect_refused([](const void *) { int8_pc_zp_mm(at(1, B)); });
  expect_refused([](const void *) { int8_pc_zp_mm(at(0, B + 4)); });
  expect_legal([](const void *) { int8_pc_zp_mm(at(0, B)); });
}

RULE_TEST(MM2_15) {
  expect_refused([](const void *) { quant_mm_requant(true, at(1, Q), RM_HALF_UP); });
  expect_refused([](const void *) { quant_mm_requant(true, at(0, Q + 8), RM_HALF_UP); });
  expect_legal([](const void *) { quant_mm_requant(true, at(0, Q), RM_HALF_UP); });
}

RULE_TEST(MM2_16) {
  expect_refused([](const void *) { quant_mm_requant(false, 0, rounding_mode_t(7)); });
  expect_legal([](const void *) { quant_mm_requant(false, 0, RM_HALF_DOWN); });
}

}  // namespace
