// tiu_rules_test.cc: the rules common to every local-memory BDC command
// (TIU-*) of cmodel/vendor_rules.def, shown on tpu_bdc_fp_add and (TIU-6,
// which concerns results that must not collapse) tpu_bdc_greater.
#include "rule_test.h"

namespace {

using rule_test::g;

const dim4 kShape = {1, 4, 2, 8};

local_addr_t on_npu(int npu, uint32_t offset) { return local_addr_t(npu) * uint32_t(g.local_mem) + offset; }

// Every dim lies in [1, 65535].
RULE_TEST(TIU_1) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 4, 0, 8};
    tpu_bdc_fp_add(0, 4096, 8192, &shape, nullptr, nullptr, nullptr, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 4, 1, 8};
    tpu_bdc_fp_add(0, 4096, 8192, &shape, nullptr, nullptr, nullptr, DT_FP32);
  });
}

// An aligned-layout operand (NULL stride) starts at a multiple of
// ALIGN_BYTES: 4100 is a multiple of 4 but not of 64 or 16.
RULE_TEST(TIU_2) {
  expect_refused([](const void *) { tpu_bdc_fp_add(4100, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_fp_add(4160, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_FP32); });
}

// A user-strided operand starts at a multiple of its element size only.
RULE_TEST(TIU_3) {
  expect_refused([](const void *) {
    const dim4 stride = {16, 16, 8, 1};
    tpu_bdc_fp_add(0, 4098, 8192, &kShape, nullptr, &stride, nullptr, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 stride = {16, 16, 8, 1};
    tpu_bdc_fp_add(0, 4100, 8192, &kShape, nullptr, &stride, nullptr, DT_FP32);
  });
}

// An element-wise source starts on the result's NPU.
RULE_TEST(TIU_4) {
  expect_refused([](const void *) {
    tpu_bdc_fp_add(0, 4096, on_npu(1, 8192), &kShape, nullptr, nullptr, nullptr, DT_FP32);
  });
  expect_legal([](const void *) {
    tpu_bdc_fp_add(0, 4096, on_npu(0, 8192), &kShape, nullptr, nullptr, nullptr, DT_FP32);
  });
}

// Every stride lies in [0, 2^18) elements; negative strides are refused
// too. The h stride is checked even where h = 1 (only an n stride with
// n = 1 and a c stride of channels all in the first row of NPUs go
// unchecked, as the conv checker does).
RULE_TEST(TIU_5) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 4, 1, 8};
    const dim4 stride = {16, 16, 1 << 18, 1};
    tpu_bdc_fp_add(0, 4096, 8192, &shape, &stride, nullptr, nullptr, DT_FP32);
  });
  expect_refused([](const void *) {
    const dim4 shape = {1, 4, 1, 8};
    const dim4 stride = {16, 16, 8, -1};
    tpu_bdc_fp_add(0, 4096, 8192 + 64, &shape, nullptr, &stride, nullptr, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 4, 1, 8};
    const dim4 stride = {16, 16, (1 << 18) - 1, 1};
    tpu_bdc_fp_add(0, 4096, 8192, &shape, &stride, nullptr, nullptr, DT_FP32);
  });
}

// A compare may not write several elements to one place: a zero result
// stride needs a dim of size 1.
RULE_TEST(TIU_6) {
  expect_refused([](const void *) {
    const dim4 stride = {16, 16, 8, 0};
    scalar_t one{};
    one.f32 = 1.0f;
    tpu_bdc_greater(0, 4096, 8192, one, &kShape, &stride, nullptr, nullptr, DT_FP32, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 stride = {16, 16, 8, 1};
    scalar_t one{};
    one.f32 = 1.0f;
    tpu_bdc_greater(0, 4096, 8192, one, &kShape, &stride, nullptr, nullptr, DT_FP32, DT_FP32);
  });
}

}  // namespace
