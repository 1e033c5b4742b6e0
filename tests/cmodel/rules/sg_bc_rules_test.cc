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

// The (h, w) pair forms: index [N, 1, 1, 2W] UINT16 on NPU 0 (hw_gather.h).
RULE_TEST(SG_5) {
  expect_refused([](const void *) {
    zeros(at(1, 8192), {1, 1, 1, 8}, DT_UINT16);
    tpu_bdc_hw_gather(at(1, 0), at(1, 4096), at(1, 8192), &kRows, 2, 8, DT_FP32);
  });
  expect_legal([](const void *) {
    zeros(at(0, 8192), {1, 1, 1, 8}, DT_UINT16);
    tpu_bdc_hw_gather(at(1, 0), at(1, 4096), at(0, 8192), &kRows, 2, 8, DT_FP32);
  });
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

// ---- BC: lane broadcast, lane copy, static broadcast and distribute -----------------

// The lane broadcast writes C channels from dst's NPU upwards, one per NPU.
RULE_TEST(BC_1) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 3, 2, 8};
    tpu_bdc_npu_bcast(at(g.npu_num - 2, 0), at(0, 4096), &shape, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_bdc_npu_bcast(at(g.npu_num - 2, 0), at(0, 4096), &shape, DT_FP32);
  });
}

// No lane copy in place.
const dim4 kLanes = {1, 3, 2, 8};

RULE_TEST(BC_2) {
  expect_refused([](const void *) { tpu_bdc_cpy_cross_npu(at(1, 4096), at(1, 4096), &kLanes, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_cpy_cross_npu(at(0, 8192), at(1, 4096), &kLanes, DT_FP32); });
}

// The static source at a multiple of ALIGN_BYTES (4 bytes past one is
// element-aligned on both chips); 1024 holds the exp coefficients.
RULE_TEST(BC_3) {
  expect_refused([](const void *) { tpu_bdc_npu_bcast_from_static(at(0, 0), 1024 + 4, g.npu_num, 8, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_npu_bcast_from_static(at(0, 0), 1024, g.npu_num, 8, DT_FP32); });
  // npu(dst) + C <= NPU_NUM.
  expect_refused([](const void *) { tpu_bdc_npu_bcast_from_static(at(2, 0), 1024, g.npu_num - 1, 8, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_npu_bcast_from_static(at(1, 0), 1024, g.npu_num - 1, 8, DT_FP32); });
}

// The distribute writes from NPU 0, element-aligned only (the compact
// layout), from an ALIGN_BYTES-aligned static source.
RULE_TEST(BC_4) {
  expect_refused([](const void *) { tpu_bdc_npu_distribute_from_static(at(1, 4), 1024, 10, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_npu_distribute_from_static(at(0, 4), 1024, 10, DT_FP32); });
  expect_refused([](const void *) { tpu_bdc_npu_distribute_from_static(at(0, 4), 1024 + 4, 10, DT_FP32); });
}

// ---- TR: the C <-> W transposes ------------------------------------------------------

// dst [1, 4, 1, 8] from src [1, 8, 1, 4].
const dim4 kTransposed = {1, 4, 1, 8};

RULE_TEST(TR_1) {
  expect_refused([](const void *) { tpu_bdc_cw_trans(at(0, 4), at(0, 4096), &kTransposed, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_cw_trans(at(0, 0), at(0, 4096), &kTransposed, DT_FP32); });
}

// cw_trans reads its source from NPU 0, wc_trans writes its result from
// NPU 0; the other operand may start anywhere.
RULE_TEST(TR_2) {
  expect_refused([](const void *) { tpu_bdc_cw_trans(at(0, 0), at(1, 4096), &kTransposed, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_cw_trans(at(1, 0), at(0, 4096), &kTransposed, DT_FP32); });
  expect_refused([](const void *) { tpu_bdc_wc_trans(at(1, 0), at(0, 4096), &kTransposed, DT_FP32); });
  expect_legal([](const void *) { tpu_bdc_wc_trans(at(0, 0), at(1, 4096), &kTransposed, DT_FP32); });
}

RULE_TEST(TR_3) {
  expect_refused([](const void *) { tpu_bdc_wc_trans(at(0, 4096), at(0, 4096), &kTransposed, DT_FP16); });
  expect_legal([](const void *) { tpu_bdc_wc_trans(at(0, 0), at(0, 4096), &kTransposed, DT_FP16); });
}

}  // namespace
