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

// Every dim of a tensor move is a 16-bit field.
RULE_TEST(DMA_1) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 1, 1, 65536};
    tpu_gdma_cpy_S2S(g.b, g.a, &shape, nullptr, nullptr, DT_INT8);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 1, 1, 65535};
    tpu_gdma_cpy_S2S(g.b, g.a, &shape, nullptr, nullptr, DT_INT8);
  });
}

RULE_TEST(DMA_2) {
  expect_refused([](const void *) {
    const dim4 dst_shape = {1, 1, 2, 8}, src_shape = {1, 4, 1, 8};
    tpu_gdma_general_cpy_L2S(g.a, 0, &dst_shape, &src_shape, nullptr, nullptr, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 dst_shape = {1, 1, 2, 8}, src_shape = {1, 2, 1, 8};
    tpu_gdma_general_cpy_L2S(g.a, 0, &dst_shape, &src_shape, nullptr, nullptr, DT_FP32);
  });
}

// tpu_static_mem_get_start_addr() is where static memory starts; the GDMA
// cannot reach it.
RULE_TEST(DMA_3) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 1, 1, 8};
    tpu_gdma_cpy_S2S(tpu_static_mem_get_start_addr(), g.a, &shape, nullptr, nullptr, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 1, 1, 8};
    tpu_gdma_cpy_S2S(g.b, g.a, &shape, nullptr, nullptr, DT_FP32);
  });
}

// cols = 65536 would fit as 64 channels of 1024, but the column count is a
// 16-bit field.
RULE_TEST(DMA_7) {
  expect_refused([](const void *) { tpu_gdma_matrix_S2L(0, g.a, 1, 65536, 1024, 65536, DT_INT8); });
  expect_legal([](const void *) { tpu_gdma_matrix_S2L(0, g.a, 1, 65535, 1024, 65535, DT_INT8); });
}

RULE_TEST(DMA_10) {
  expect_refused([](const void *) { tpu_gdma_system_cpy(g.b, g.a, 0, DT_FP32); });
  expect_legal([](const void *) { tpu_gdma_system_cpy(g.b, g.a, 1, DT_FP32); });
}

// A local mask-select source in the aligned layout starts at ALIGN_BYTES.
RULE_TEST(DMA_12) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_mask_select_L2S(g.b, 4, 65536, 1, &shape, DT_INT32, DT_INT32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_mask_select_L2S(g.b, 0, 65536, 1, &shape, DT_INT32, DT_INT32);
  });
}

RULE_TEST(DMA_13) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_nonzero_L2S(g.b, 4, &shape, DT_INT32, 0);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_nonzero_L2S(g.b, 0, &shape, DT_INT32, 0);
  });
}

// A gather's C is a 16-bit field (its h is 32-bit: gdma_gather_test has a
// param of more than 65535 rows).
RULE_TEST(DMA_15) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 65536, 1, 1};
    tpu_gdma_h_gather_S2S(g.a, g.b, g.c, false, scalar_t{}, &shape, 1, nullptr, nullptr, nullptr, DT_INT8);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 65535, 1, 1};
    tpu_gdma_h_gather_S2S(g.a, g.b, g.c, false, scalar_t{}, &shape, 1, nullptr, nullptr, nullptr, DT_INT8);
  });
}

// With user strides on the output and the param, the index is read with
// an h-stride of 1.
RULE_TEST(DMA_16) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 2, 4, 8}, data_stride = {64, 32, 8, 1}, index_stride = {8, 8, 2, 1};
    tpu_gdma_h_gather_S2S(g.a, g.b, g.c, false, scalar_t{}, &shape, 4, &data_stride, &data_stride, &index_stride,
                          DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 4, 8}, data_stride = {64, 32, 8, 1}, index_stride = {8, 8, 1, 1};
    tpu_gdma_h_gather_S2S(g.a, g.b, g.c, false, scalar_t{}, &shape, 4, &data_stride, &data_stride, &index_stride,
                          DT_FP32);
  });
}

RULE_TEST(DMA_17) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 1, 1, 65536};
    tpu_gdma_h_scatter_S2S(g.a, g.b, g.c, false, &shape, 1, nullptr, nullptr, nullptr, DT_INT8);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 1, 1, 65535};
    tpu_gdma_h_scatter_S2S(g.a, g.b, g.c, false, &shape, 1, nullptr, nullptr, nullptr, DT_INT8);
  });
}

// From local memory the GDMA reverses along C only.
RULE_TEST(DMA_21) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 4, 2, 8};
    tpu_gdma_reverse_L2S(g.a, 0, &shape, nullptr, nullptr, 2, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 4, 2, 8};
    tpu_gdma_reverse_L2S(g.a, 0, &shape, nullptr, nullptr, 1, DT_FP32);
  });
}

RULE_TEST(DMA_24) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_cpy_reduce_S2L2(tpu_l2_sram_get_start_addr(), g.a, &shape, nullptr, nullptr, DT_INT32,
                             ALL_REDUCE_PSUM_WR, ALL_REDUCE_MUL);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_cpy_reduce_S2L2(tpu_l2_sram_get_start_addr(), g.a, &shape, nullptr, nullptr, DT_INT32,
                             ALL_REDUCE_PSUM_WR, ALL_REDUCE_ADD);
  });
}

// A reducing copy writes L2 SRAM, not global memory.
RULE_TEST(DMA_25) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_cpy_reduce_S2L2(g.b, g.a, &shape, nullptr, nullptr, DT_FP32, ALL_REDUCE_PSUM_WR, ALL_REDUCE_ADD);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 2, 2, 8};
    tpu_gdma_cpy_reduce_S2L2(tpu_l2_sram_get_start_addr(), g.a, &shape, nullptr, nullptr, DT_FP32,
                             ALL_REDUCE_PSUM_WR, ALL_REDUCE_ADD);
  });
}

// The tpu-kernel doc's GDMA w-stride limit: 128 bytes.
RULE_TEST(DOC_GDMA_1) {
  expect_refused([](const void *) {
    const dim4 shape = {1, 1, 1, 8}, stride = {256, 256, 256, 33};
    tpu_gdma_cpy_S2S(g.b, g.a, &shape, nullptr, &stride, DT_FP32);
  });
  expect_legal([](const void *) {
    const dim4 shape = {1, 1, 1, 8}, stride = {256, 256, 256, 32};
    tpu_gdma_cpy_S2S(g.b, g.a, &shape, nullptr, &stride, DT_FP32);
  });
}

}  // namespace
