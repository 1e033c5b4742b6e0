// gdma_rules_test.cc: the GDMA rules (DMA-*) of cmodel/vendor_rules.def.
#include "rule_test.h"

namespace {

using rule_test::g;

// A channel broadcast fills C channels from the destination's start NPU
// upwards, without wrapping round to NPU 0.
RULE_TEST(DMA_14) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 3, 2, 8};
    tpu_gdma_channel_bcast_S2L(uint32_t(g.npu_num - 2) * uint32_t(g.local_mem), g.a, &shape, nullptr, nullptr,
                               DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_channel_bcast_S2L(uint32_t(g.npu_num - 2) * uint32_t(g.local_mem), g.a, &shape, nullptr, nullptr,
                               DT_FP32);
  });
}

}  // namespace
