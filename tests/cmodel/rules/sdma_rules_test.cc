// sdma_rules_test.cc: the SDMA rules (SDMA-*) of cmodel/vendor_rules.def.
#include <initializer_list>

#include "rule_test.h"

namespace {

using rule_test::g;

RULE_TEST(SDMA_1) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 1, 1, 65536};
    tpu_sdma_cpy_S2S(g.b, g.a, &shape, nullptr, nullptr, DT_INT8);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 1, 1, 65535};
    tpu_sdma_cpy_S2S(g.b, g.a, &shape, nullptr, nullptr, DT_INT8);
  });
}

// The SDMA needs a non-zero w-stride (and at most 64 bytes).
RULE_TEST(SDMA_2) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 1, 2, 8}, stride = {16, 16, 8, 0};
    tpu_sdma_cpy_S2S(g.b, g.a, &shape, nullptr, &stride, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 1, 2, 8}, stride = {16, 16, 8, 1};
    tpu_sdma_cpy_S2S(g.b, g.a, &shape, nullptr, &stride, DT_FP32);
  });
  expect_refused([](const void *) {
    const dim4 shape = {1, 1, 1, 8}, stride = {256, 256, 256, 17};
    tpu_sdma_cpy_S2S(g.b, g.a, &shape, nullptr, &stride, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 1, 1, 8}, stride = {256, 256, 256, 16};
    tpu_sdma_cpy_S2S(g.b, g.a, &shape, nullptr, &stride, DT_FP32);
  });
}

RULE_TEST(SDMA_3) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 1, 1, 8};
    tpu_sdma_cpy_S2S(g.b, tpu_static_mem_get_start_addr(), &shape, nullptr, nullptr, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 1, 1, 8};
    tpu_sdma_cpy_S2S(g.b, g.a, &shape, nullptr, nullptr, DT_FP32);
  });
}

RULE_TEST(SDMA_5) {
  expect_refused([](const void *) { tpu_sdma_system_set(g.a, scalar_t{}, 0, DT_FP32); });
  expect_legal([](const void *) { tpu_sdma_system_set(g.a, scalar_t{}, 1, DT_FP32); });
}

// The SDMA has no reverse (nor cw-transpose, mask select, nonzero): the
// nearest legal command is the GDMA's.
RULE_TEST(SDMA_6) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_sdma_reverse_S2S(g.b, g.a, &shape, nullptr, nullptr, 1, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_reverse_S2S(g.b, g.a, &shape, nullptr, nullptr, 1, DT_FP32);
  });
  for (rule_test::Kernel refused : std::initializer_list<rule_test::Kernel>{
           [](const void *) {
             const dim4 shape = {1, 2, 2, 8};
             tpu_sdma_cpy_cw_trans_S2S(g.b, g.a, &shape, nullptr, nullptr, DT_FP32);
           },
           [](const void *) {
             const dim4 shape = {1, 2, 2, 8};
             tpu_sdma_mask_select_S2S(g.b, g.a, g.c, &shape, DT_FP32, DT_INT32);
           },
           [](const void *) {
             const dim4 shape = {1, 2, 2, 8};
             tpu_vsdma_nonzero_S2S(g.b, g.a, &shape, DT_FP32, 0, 0);
           }})
    expect_refused(refused);
}

RULE_TEST(SDMA_7) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 2, 4, 8}, data_stride = {64, 32, 8, 1}, index_stride = {8, 8, 2, 1};
    tpu_sdma_h_gather_S2S(g.a, g.b, g.c, scalar_t{}, &shape, 4, &data_stride, &data_stride, &index_stride, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 4, 8}, data_stride = {64, 32, 8, 1}, index_stride = {8, 8, 1, 1};
    tpu_sdma_h_gather_S2S(g.a, g.b, g.c, scalar_t{}, &shape, 4, &data_stride, &data_stride, &index_stride, DT_FP32);
  });
}

RULE_TEST(SDMA_8) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 2, 4, 8}, data_stride = {64, 32, 8, 1}, index_stride = {8, 8, 2, 1};
    tpu_vsdma_h_scatter_S2S(g.a, g.b, g.c, &shape, 4, &data_stride, &data_stride, &index_stride, DT_FP32, 0);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 4, 8}, data_stride = {64, 32, 8, 1}, index_stride = {8, 8, 1, 1};
    tpu_vsdma_h_scatter_S2S(g.a, g.b, g.c, &shape, 4, &data_stride, &data_stride, &index_stride, DT_FP32, 0);
  });
}

RULE_TEST(SDMA_10) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_sdma_cpy_reduce_S2L2(tpu_l2_sram_get_start_addr(), g.a, &shape, nullptr, nullptr, DT_UINT32,
                             ALL_REDUCE_PSUM_WR, ALL_REDUCE_MUL);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_sdma_cpy_reduce_S2L2(tpu_l2_sram_get_start_addr(), g.a, &shape, nullptr, nullptr, DT_UINT32,
                             ALL_REDUCE_PSUM_WR, ALL_REDUCE_MAX);
  });
}

}  // namespace
