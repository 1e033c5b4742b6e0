// cmp_sfu_lin_rules_test.cc: the fused compare-select (CMP-*, and the
// tpu-kernel doc rules DOC-CMP-*), special-function (SFU-*) and fused
// linear (LIN-*) rules of cmodel/vendor_rules.def.
#include "rule_test.h"

namespace {

using rule_test::g;

const dim4 kShape = {1, 4, 2, 8};

local_addr_t on_npu(int npu, uint32_t offset) { return local_addr_t(npu) * uint32_t(g.local_mem) + offset; }

variable_t tensor(local_addr_t addr) {
  variable_t v{};
  v.type = TENSOR;
  v.context.addr = addr;
  return v;
}

variable_t scalar(float value) {
  variable_t v{};
  v.type = SCALAR;
  v.context.scalar.f32 = value;
  return v;
}

// dst = src0 > src1 ? src2 : 0, the operands at the given addresses.
void greater_select(local_addr_t dst, local_addr_t src0, local_addr_t src2, data_type_t cmp_dtype,
                    data_type_t dst_dtype) {
  const variable_t a = tensor(src0), b = scalar(0), x = tensor(src2), y = scalar(0);
  tpu_bdc_greater_select(dst, &a, &b, &x, &y, &kShape, cmp_dtype, dst_dtype);
}

// ---- CMP ----------------------------------------------------------------------------------

// The compared operands (aligned layout) start at a multiple of ALIGN_BYTES.
RULE_TEST(CMP_2) {
  expect_refused([](const void *) { greater_select(0, 4096 + 4, 8192, DT_FP32, DT_FP32); });
  expect_legal([](const void *) { greater_select(0, 4096, 8192, DT_FP32, DT_FP32); });
}

// So do the selected values and the result.
RULE_TEST(CMP_3) {
  expect_refused([](const void *) { greater_select(4, 4096, 8192, DT_FP32, DT_FP32); });
  expect_refused([](const void *) { greater_select(0, 4096, 8192 + 4, DT_FP32, DT_FP32); });
  expect_legal([](const void *) { greater_select(0, 4096, 8192, DT_FP32, DT_FP32); });
}

// And the second result of maximum_greater_select.
void maximum_select(local_addr_t dst1) {
  const variable_t a = tensor(4096), b = tensor(8192), x = scalar(1), y = scalar(0);
  tpu_bdc_maximum_greater_select(0, dst1, &a, &b, &x, &y, &kShape, DT_FP32, DT_FP32);
}
RULE_TEST(CMP_4) {
  expect_refused([](const void *) { maximum_select(12288 + 4); });
  expect_legal([](const void *) { maximum_select(12288); });
}

// No 4-bit precision.
RULE_TEST(CMP_5) {
  expect_refused([](const void *) { greater_select(0, 4096, 8192, DT_INT4, DT_FP32); });
  expect_legal([](const void *) { greater_select(0, 4096, 8192, DT_INT8, DT_FP32); });
}

// tpu-kernel doc: the operands start on the result's NPU.
RULE_TEST(DOC_CMP_1) {
  expect_refused([](const void *) { greater_select(0, 4096, on_npu(1, 8192), DT_FP32, DT_FP32); });
  expect_legal([](const void *) { greater_select(0, 4096, on_npu(0, 8192), DT_FP32, DT_FP32); });
}

// tpu-kernel doc: the compared operands are no wider than the selected ones.
RULE_TEST(DOC_CMP_2) {
  expect_refused([](const void *) { greater_select(0, 4096, 8192, DT_FP32, DT_FP16); });
  expect_legal([](const void *) { greater_select(0, 4096, 8192, DT_FP32, DT_FP32); });
}

// ---- SFU ----------------------------------------------------------------------------------

// rsqrt's source starts on the result's NPU.
RULE_TEST(SFU_1) {
  expect_refused([](const void *) { tpu_bdc_fp_rsqrt(0, on_npu(1, 4096), &kShape, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_fp_rsqrt(0, on_npu(0, 4096), &kShape, DT_FP32); });
}

// A polynomial of dst, src on NPU 1 with `num` coefficients at `coeff`.
void taylor(local_addr_t coeff, int num) {
  tpu_bdc_fp_taylor(on_npu(1, 0), on_npu(1, 4096), coeff, &kShape, num, DT_FP32);
}

// The coefficient table's address names the result's NPU (here NPU 1; the
// tpu-kernel doc's NPU 0 is right only for results starting there).
RULE_TEST(SFU_3) {
  expect_refused([](const void *) { taylor(on_npu(0, 32768), 4); });
  expect_legal([](const void *) { taylor(on_npu(1, 32768), 4); });
}

// The table starts at a multiple of ALIGN_BYTES.
RULE_TEST(SFU_4) {
  expect_refused([](const void *) { taylor(on_npu(1, 32768 + 4), 4); });
  expect_legal([](const void *) { taylor(on_npu(1, 32768), 4); });
}

// At least 2 coefficients.
RULE_TEST(SFU_5) {
  expect_refused([](const void *) { taylor(on_npu(1, 32768), 1); });
  expect_legal([](const void *) { taylor(on_npu(1, 32768), 2); });
}

// The exponent part of an fp32 is an INT32.
RULE_TEST(SFU_6) {
  expect_refused([](const void *) { tpu_bdc_fp_exponent_part(0, 4096, &kShape, DT_INT16, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_fp_exponent_part(0, 4096, &kShape, DT_INT32, DT_FP32); });
}

// rsqrt takes 1 to 4 Newton-Raphson steps.
RULE_TEST(SFU_7) {
  expect_refused([](const void *) { tpu_bdc_fp_tunable_rsqrt(0, 4096, &kShape, DT_FP32, 5); });
  expect_legal([](const void *) { tpu_bdc_fp_tunable_rsqrt(0, 4096, &kShape, DT_FP32, 4); });
}

// ---- LIN ----------------------------------------------------------------------------------

// src and dst are aligned-layout tensors.
RULE_TEST(LIN_1) {
  expect_refused([](const void *) { tpu_bdc_fp_bias(0, 4096 + 4, 8192, &kShape, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_fp_bias(0, 4096, 8192, &kShape, DT_FP32); });
}

// src starts on dst's NPU.
RULE_TEST(LIN_2) {
  expect_refused([](const void *) { tpu_bdc_fp_bias(0, on_npu(1, 4096), 8192, &kShape, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_fp_bias(0, on_npu(0, 4096), 8192, &kShape, DT_FP32); });
}

// The bias starts on dst's NPU at a multiple of its element size (ALIGN_BYTES
// is not needed).
RULE_TEST(LIN_3) {
  expect_refused([](const void *) { tpu_bdc_fp_bias(0, 4096, on_npu(1, 8192), &kShape, DT_FP32); });
  expect_refused([](const void *) { tpu_bdc_fp_bias(0, 4096, 8192 + 2, &kShape, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_fp_bias(0, 4096, 8192 + 4, &kShape, DT_FP32); });
}

// So does the bias of scale_bias.
RULE_TEST(LIN_4) {
  expect_refused([](const void *) { tpu_bdc_fp_scale_bias(0, 4096, 8192, on_npu(1, 12288), &kShape, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_fp_scale_bias(0, 4096, 8192, on_npu(0, 12288), &kShape, DT_FP32); });
}

// Float precisions only.
RULE_TEST(LIN_6) {
  expect_refused([](const void *) { tpu_bdc_fp_bias(0, 4096, 8192, &kShape, DT_INT16); });
  expect_legal([](const void *) { tpu_bdc_fp_bias(0, 4096, 8192, &kShape, DT_FP16); });
}

}  // namespace
