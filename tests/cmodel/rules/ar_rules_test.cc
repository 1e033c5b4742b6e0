// ar_rules_test.cc: the arithmetic rules (AR-*) of cmodel/vendor_rules.def.
#include "rule_test.h"

namespace {

using rule_test::g;

const dim4 kShape = {1, 4, 2, 8};

local_addr_t on_npu(int npu, uint32_t offset) { return local_addr_t(npu) * uint32_t(g.local_mem) + offset; }

// An integer add has integer operands and result.
RULE_TEST(AR_4) {
  expect_refused([](const void *) {
    tpu_bdc_int_add(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT32, DT_INT32, DT_FP32, 0,
                    RM_HALF_TO_EVEN, false);
  });
  expect_legal([](const void *) {
    tpu_bdc_int_add(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT32, DT_INT32, DT_INT32, 0,
                    RM_HALF_TO_EVEN, false);
  });
}

// A division is float only.
RULE_TEST(AR_5) {
  expect_refused([](const void *) { tpu_bdc_fp_div(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT32); });
  expect_legal([](const void *) { tpu_bdc_fp_div(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_FP32); });
}

// A division takes at most 4 Newton-Raphson steps; so does a reciprocal,
// which is a division on these chips.
RULE_TEST(AR_6) {
  expect_refused([](const void *) {
    tpu_bdc_fp_tunable_div(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_FP32, 5);
  });
  expect_refused([](const void *) { tpu_bdc_fp32_tunable_reciprocal(0, 4096, &kShape, nullptr, nullptr, 5); });
  expect_legal([](const void *) {
    tpu_bdc_fp_tunable_div(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_FP32, 4);
  });
  expect_legal([](const void *) { tpu_bdc_fp32_tunable_reciprocal(0, 4096, &kShape, nullptr, nullptr, 4); });
}

// The per-channel shift tensor starts on the result's NPU (zero shifts:
// the values must be in [0, 127]).
void pcs_add(int shift_npu) {
  const dim4 channels = {1, kShape.c, 1, 1};
  const local_addr_t shift = on_npu(shift_npu, 12288);
  tpu_bdc_set_C(shift, scalar_t{}, &channels, nullptr, DT_INT8);
  tpu_bdc_int_pcs_add(0, 4096, 8192, shift, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8,
                      RM_HALF_TO_EVEN, true);
}
RULE_TEST(AR_8) {
  expect_refused([](const void *) { pcs_add(1); });
  expect_legal([](const void *) { pcs_add(0); });
}

// A compare takes no 4-bit operand.
RULE_TEST(AR_11) {
  expect_refused([](const void *) {
    tpu_bdc_greater(0, 4096, 8192, scalar_t{}, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT4);
  });
  expect_legal([](const void *) {
    tpu_bdc_greater(0, 4096, 8192, scalar_t{}, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8);
  });
}

// A shift tensor holds signed amounts.
RULE_TEST(AR_12) {
  expect_refused([](const void *) {
    tpu_bdc_arithmetic_shift(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT16, DT_INT16, DT_UINT8,
                             RM_HALF_TO_EVEN);
  });
  expect_legal([](const void *) {
    tpu_bdc_arithmetic_shift(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT16, DT_INT16, DT_INT8,
                             RM_HALF_TO_EVEN);
  });
}

// The shift amounts are no wider than the values shifted.
RULE_TEST(AR_13) {
  expect_refused([](const void *) {
    tpu_bdc_logical_shift(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT16,
                          RM_HALF_TO_EVEN);
  });
  expect_legal([](const void *) {
    tpu_bdc_logical_shift(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8,
                          RM_HALF_TO_EVEN);
  });
}

// An in-place cast may not widen.
RULE_TEST(AR_14) {
  expect_refused([](const void *) { tpu_bdc_cast(4096, 4096, &kShape, nullptr, nullptr, DT_FP32, DT_FP16, RM_HALF_TO_EVEN); });
  expect_legal([](const void *) { tpu_bdc_cast(0, 4096, &kShape, nullptr, nullptr, DT_FP32, DT_FP16, RM_HALF_TO_EVEN); });
}

// NOT needs an integer precision.
RULE_TEST(AR_15) {
  expect_refused([](const void *) { tpu_bdc_not(0, 4096, &kShape, nullptr, nullptr, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_not(0, 4096, &kShape, nullptr, nullptr, DT_INT32); });
}

}  // namespace
