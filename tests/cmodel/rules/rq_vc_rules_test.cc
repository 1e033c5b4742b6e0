// rq_vc_rules_test.cc: the requantise / dequantise rules (RQ-*, DQ-*), the
// vector-correlation rules (VC-*) and the tpu-kernel documentation rule
// DOC-VC-1 of cmodel/vendor_rules.def.
#include "rule_test.h"

namespace {

using rule_test::g;

// Byte `offset` of NPU `npu`.
local_addr_t at(int npu, uint32_t offset) { return uint32_t(npu) * uint32_t(g.local_mem) + offset; }

const dim4 kShape = {1, 3, 2, 8};

scalar_t zero() {
  scalar_t z{};
  return z;
}

// ---- RQ / DQ -------------------------------------------------------------------------

// The float-scale requant gives 8- or 16-bit results only.
RULE_TEST(RQ_1) {
  expect_refused([](const void *) {
    tpu_bdc_fp32_requant(at(0, 0), at(0, 4096), &kShape, 0.5f, 1.0f, DT_INT32, DT_INT32, RM_HALF_TO_EVEN,
                         RM_HALF_TO_EVEN);
  });
  expect_legal([](const void *) {
    tpu_bdc_fp32_requant(at(0, 0), at(0, 4096), &kShape, 0.5f, 1.0f, DT_INT16, DT_INT32, RM_HALF_TO_EVEN,
                         RM_HALF_TO_EVEN);
  });
}

// Neither of its two conversions rounds half up or half down.
RULE_TEST(RQ_2) {
  expect_refused([](const void *) {
    tpu_bdc_fp32_requant(at(0, 0), at(0, 4096), &kShape, 0.5f, 1.0f, DT_INT8, DT_INT32, RM_HALF_UP, RM_HALF_TO_EVEN);
  });
  expect_legal([](const void *) {
    tpu_bdc_fp32_requant(at(0, 0), at(0, 4096), &kShape, 0.5f, 1.0f, DT_INT8, DT_INT32, RM_HALF_AWAY_FROM_ZERO,
                         RM_HALF_TO_EVEN);
  });
  expect_refused([](const void *) {
    tpu_bdc_fp32_requant(at(0, 0), at(0, 4096), &kShape, 0.5f, 1.0f, DT_INT8, DT_INT32, RM_DOWN, RM_HALF_DOWN);
  });
  expect_legal([](const void *) {
    tpu_bdc_fp32_requant(at(0, 0), at(0, 4096), &kShape, 0.5f, 1.0f, DT_INT8, DT_INT32, RM_DOWN, RM_TOWARDS_ZERO);
  });
}

// Source and result on one NPU; the per-channel parameters on that NPU at a
// multiple of 8 bytes (not of ALIGN_BYTES).
RULE_TEST(RQ_3) {
  expect_refused([](const void *) {
    tpu_bdc_int_pc_requant(at(0, 0), at(0, 4096), at(0, 8192 + 4), &kShape, DT_INT8, DT_INT32, RM_HALF_UP);
  });
  expect_legal([](const void *) {
    tpu_bdc_int_pc_requant(at(0, 0), at(0, 4096), at(0, 8192 + 8), &kShape, DT_INT8, DT_INT32, RM_HALF_UP);
  });
  expect_refused([](const void *) {
    tpu_bdc_int_pc_requant(at(0, 0), at(0, 4096), at(1, 8192), &kShape, DT_INT8, DT_INT32, RM_HALF_UP);
  });
  expect_refused([](const void *) {
    tpu_bdc_int_requant(at(0, 0), at(1, 4096), &kShape, 3, -2, zero(), DT_INT8, DT_INT32, RM_HALF_UP);
  });
  expect_legal([](const void *) {
    tpu_bdc_int_requant(at(0, 0), at(0, 4096), &kShape, 3, -2, zero(), DT_INT8, DT_INT32, RM_HALF_UP);
  });
  expect_refused([](const void *) {
    tpu_bdc_fp32_dequant(at(0, 4), at(0, 4096), &kShape, zero(), 0.25f, DT_INT8, RM_HALF_TO_EVEN);
  });
  expect_legal([](const void *) {
    tpu_bdc_fp32_dequant(at(0, 0), at(0, 4096), &kShape, zero(), 0.25f, DT_INT8, RM_HALF_TO_EVEN);
  });
}

// The integer-scale requant gives 8- or 16-bit results only.
RULE_TEST(RQ_4) {
  expect_refused([](const void *) {
    tpu_bdc_int_requant(at(0, 0), at(0, 4096), &kShape, 3, -2, zero(), DT_UINT32, DT_INT32, RM_HALF_UP);
  });
  expect_legal([](const void *) {
    tpu_bdc_int_requant(at(0, 0), at(0, 4096), &kShape, 3, -2, zero(), DT_UINT16, DT_INT32, RM_HALF_UP);
  });
}

// The float-scale dequant reads 8- or 16-bit sources only.
RULE_TEST(DQ_1) {
  expect_refused([](const void *) {
    tpu_bdc_fp32_dequant(at(0, 0), at(0, 4096), &kShape, zero(), 0.25f, DT_INT32, RM_HALF_TO_EVEN);
  });
  expect_legal([](const void *) {
    tpu_bdc_fp32_dequant(at(0, 0), at(0, 4096), &kShape, zero(), 0.25f, DT_INT16, RM_HALF_TO_EVEN);
  });
}

RULE_TEST(DQ_2) {
  expect_refused([](const void *) {
    tpu_bdc_fp32_dequant(at(0, 0), at(0, 4096), &kShape, zero(), 0.25f, DT_INT16, RM_HALF_DOWN);
  });
  expect_legal([](const void *) {
    tpu_bdc_fp32_dequant(at(0, 0), at(0, 4096), &kShape, zero(), 0.25f, DT_INT16, RM_HALF_TO_EVEN);
  });
}

// The integer-scale dequant reads 8- or 16-bit sources (into results of 8,
// 16 or 32 bits).
RULE_TEST(DQ_3) {
  expect_refused([](const void *) {
    tpu_bdc_int_dequant(at(0, 0), at(0, 4096), &kShape, zero(), 3, 1, DT_INT32, DT_INT32, RM_HALF_UP);
  });
  expect_legal([](const void *) {
    tpu_bdc_int_dequant(at(0, 0), at(0, 4096), &kShape, zero(), 3, 1, DT_INT32, DT_UINT16, RM_HALF_UP);
  });
}

// ---- VC ------------------------------------------------------------------------------

// dst[i][j] = max(src0[i], src1[j]) for 4 x 8, 4 elements per channel:
// src0 [1, 1, 1, 4], src1 [1, 2, 1, 4], dst [4, 2, 1, 4].
void vc(local_addr_t dst, local_addr_t src0, local_addr_t src1, int src1_len_per_channel = 4) {
  tpu_bdc_vc_max(dst, src0, src1, 4, 8, 4, src1_len_per_channel, DT_FP32);
}

RULE_TEST(VC_1) {
  expect_refused([](const void *) { vc(at(0, 0), at(0, 4096), at(0, 8192 + 4)); });
  expect_legal([](const void *) { vc(at(0, 0), at(0, 4096), at(0, 8192)); });
}

// src1 starts on dst's NPU.
RULE_TEST(VC_2) {
  expect_refused([](const void *) { vc(at(0, 0), at(0, 4096), at(1, 8192)); });
  expect_legal([](const void *) { vc(at(0, 0), at(0, 4096), at(0, 8192)); });
}

RULE_TEST(VC_3) {
  expect_refused([](const void *) { vc(at(0, 0), at(0, 4096), at(0, 8192), 0); });
  expect_legal([](const void *) { vc(at(0, 0), at(0, 4096), at(0, 8192), 4); });
}

// src0 starts on dst's NPU too (the vendor checker leaves it free).
RULE_TEST(DOC_VC_1) {
  expect_refused([](const void *) { vc(at(0, 0), at(1, 4096), at(0, 8192)); });
  expect_legal([](const void *) { vc(at(0, 0), at(0, 4096), at(0, 8192)); });
}

}  // namespace
