// sg_bc_rules_test.cc: the gather / scatter rules (SG-*, SGL-*) and the
// transpose and lane-broadcast rules (BC-*, TR-*) of cmodel/vendor_rules.def.
//
// Every index is 0 (the gathers zero theirs first: local memory starts
// with garbage), in range for every gather and scatter below.
#include "rule_test.h"

namespace {

using rule_test::g;

// Byte `offset` of NPU `npu`.
local_addr_t at(int npu, uint32_t offset) { return uint32_t(npu) * uint32_t(g.local_mem) + offset; }

// Index zeros for a gather.
void zeros(local_addr_t addr, const dim4 &shape, data_type_t dtype) {
  const scalar_t zero{};
  tpu_bdc_set_C(addr, zero, &shape, nullptr, dtype);
}

// A W gather of 2 channels x 4 from an 8-wide param: output at NPU 0 offset
// 0, param and index where the test puts them.
const dim4 kRows = {1, 2, 1, 4};

// ---- SG: the plain W forms -----------------------------------------------------------

RULE_TEST(SG_1) {
  expect_refused([](const void *) {
    zeros(at(0, 8192), kRows, DT_UINT16);
    tpu_bdc_w_gather(at(0, 0), at(1, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_UINT16);
  });
  expect_legal([](const void *) {
    zeros(at(0, 8192), kRows, DT_UINT16);
    tpu_bdc_w_gather(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_UINT16);
  });
  // The alignment part, on the scatter.
  expect_refused(
      [](const void *) { tpu_bdc_w_scatter(at(0, 4), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_UINT16); });
  expect_legal(
      [](const void *) { tpu_bdc_w_scatter(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_UINT16); });
}

RULE_TEST(SG_2) {
  expect_refused([](const void *) {
    zeros(at(0, 8192), kRows, DT_UINT32);
    tpu_bdc_w_gather(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_UINT32);
  });
  expect_legal([](const void *) {
    zeros(at(0, 8192), kRows, DT_UINT16);
    tpu_bdc_w_gather(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_UINT16);
  });
}

RULE_TEST(SG_3) {
  expect_refused(
      [](const void *) { tpu_bdc_w_scatter(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 0, DT_FP32, DT_UINT8); });
  expect_legal(
      [](const void *) { tpu_bdc_w_scatter(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_UINT8); });
}

// ---- SG: the batch-broadcast and 4-bank W forms --------------------------------------

RULE_TEST(SG_6) {
  expect_refused([](const void *) {
    zeros(at(1, 8192), kRows, DT_UINT16);
    tpu_bdc_batch_bcast_w_gather(at(0, 0), at(0, 4096), at(1, 8192), &kRows, 8, DT_FP32, DT_UINT16, false);
  });
  expect_legal([](const void *) {
    zeros(at(0, 8192), kRows, DT_UINT16);
    tpu_bdc_batch_bcast_w_gather(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_UINT16, false);
  });
}

RULE_TEST(SG_7) {
  expect_refused([](const void *) {
    zeros(at(0, 8192), kRows, DT_INT32);
    tpu_bdc_4bank_w_gather(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_INT32, false);
  });
  expect_legal([](const void *) {
    zeros(at(0, 8192), kRows, DT_INT16);
    tpu_bdc_4bank_w_gather(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_INT16, false);
  });
}

RULE_TEST(SG_8) {
  expect_refused([](const void *) {
    tpu_bdc_batch_bcast_w_scatter(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 65536, DT_FP32, DT_UINT16, true);
  });
  expect_legal([](const void *) {
    tpu_bdc_batch_bcast_w_scatter(at(0, 0), at(0, 4096), at(0, 8192), &kRows, 8, DT_FP32, DT_UINT16, true);
  });
}

// ---- SGL: the H forms (gather / scatter line) ----------------------------------------

// 2 channels x 3 rows of 4 gathered from 5 rows.
const dim4 kLines = {1, 2, 3, 4};

RULE_TEST(SGL_1) {
  expect_refused([](const void *) {
    zeros(at(0, 8192), {1, 2, 3, 1}, DT_UINT16);
    tpu_bdc_batch_bcast_h_gather(at(0, 0), at(0, 4096 + 4), at(0, 8192), &kLines, 5, DT_FP32, DT_UINT16, false);
  });
  expect_legal([](const void *) {
    zeros(at(0, 8192), {1, 2, 3, 1}, DT_UINT16);
    tpu_bdc_batch_bcast_h_gather(at(0, 0), at(0, 4096), at(0, 8192), &kLines, 5, DT_FP32, DT_UINT16, false);
  });
}

RULE_TEST(SGL_2) {
  expect_refused([](const void *) {
    tpu_bdc_batch_bcast_h_scatter(at(0, 0), at(0, 4096), at(0, 8192), &kLines, 5, DT_FP32, DT_UINT32, false);
  });
  expect_legal([](const void *) {
    tpu_bdc_batch_bcast_h_scatter(at(0, 0), at(0, 4096), at(0, 8192), &kLines, 5, DT_FP32, DT_UINT8, false);
  });
}

RULE_TEST(SGL_3) {
  expect_refused([](const void *) {
    zeros(at(0, 8192), {1, 2, 3, 1}, DT_UINT16);
    tpu_bdc_batch_bcast_h_gather(at(0, 0), at(0, 4096), at(0, 8192), &kLines, 0, DT_FP32, DT_UINT16, false);
  });
  expect_legal([](const void *) {
    zeros(at(0, 8192), {1, 2, 3, 1}, DT_UINT16);
    tpu_bdc_batch_bcast_h_gather(at(0, 0), at(0, 4096), at(0, 8192), &kLines, 5, DT_FP32, DT_UINT16, false);
  });
}

}  // namespace
