/*
 * tpu_impl_linear.c: y = x W^T (+ b) (relu) for fp32, fp16 and bf16, the
 * compute-bound sample op.
 *
 * The product runs on the BDC's matrix unit (tpu_bdc_fp_mm_R_trans_with_bias)
 * tile by tile. In local memory every matrix is stored one row per channel
 * (row i on NPU i % NPU_NUM, all starting on NPU 0), so a tile is the
 * aligned tensor (1, rows, 1, cols):
 *
 *   left   x[m0 .. m0+mt, k0 .. k0+kt]         (1, mt, 1, kt)  dtype
 *   right  W[o0 .. o0+ot, k0 .. k0+kt]         (1, ot, 1, kt)  dtype  (R_trans:
 *                                                              W rows as stored)
 *   acc    y tile, summed over the K chunks    (1, mt, 1, ot)  fp32
 *   out    acc rounded once into dtype         (1, mt, 1, ot)  dtype  (not for fp32)
 *   bias   b[o0 .. o0+ot] on every NPU         (1, NPU_NUM, 1, ot), loaded to
 *          NPU 0 (bias_row) and copied to the others with tpu_bdc_npu_bcast
 *
 * For each (m0, o0) tile the K chunks run in order, the first writing acc,
 * the next ones adding to it (result_add); the last chunk adds the bias and
 * applies relu. Earlier chunks and bias-less layers pass a constant +0 bias:
 * the accumulator starts at +0, and a round-to-nearest sum is -0 only when
 * both addends are -0, so it is never -0 and adding +0 changes no bit. The
 * sum is thus the cmodel's single-command order (k ascending, one fp32
 * rounding per product and per sum, bias last, relu) whatever the tiling;
 * fp16/bf16 results are rounded once from fp32 by tpu_bdc_cast.
 *
 * On several cores (tpu_core_num() > 1) each core takes a contiguous share
 * of the output rows; the sample needs no synchronisation between them.
 *
 * Tiles start at mt = 4 NPU rows, ot = 512, kt = 2048 (kt first, so a
 * layer with K <= 2048 needs no accumulation) and are halved until the
 * buffers fit one NPU's local memory. Loads, products and stores run in
 * order, without double buffering: the op shows the matrix unit's cost, not
 * a pipeline.
 */
#include "tpu_impl_custom_ops.h"

/* Local buffers start on this boundary (a multiple of every chip's EU bytes). */
#define LINEAR_LOCAL_ALIGN 512

typedef struct {
  int mt, ot, kt;
  local_addr_t left, right, acc, out, bias_row, bias_all;
  uint32_t bytes; /* per NPU, the end of the last buffer */
} linear_tiles_t;

static uint32_t linear_matrix_bytes(int rows, int cols, data_type_t dtype) {
  const dim4 shape = {1, rows, 1, cols};
  return (uint32_t)tpu_get_local_size(&shape, dtype, 0, true);
}

static uint32_t linear_align(uint32_t offset) {
  return (offset + LINEAR_LOCAL_ALIGN - 1) / LINEAR_LOCAL_ALIGN * LINEAR_LOCAL_ALIGN;
}

/* Lays out the buffers of one tile size; t->bytes is where they end. */
static void linear_layout(linear_tiles_t *t, data_type_t dtype, bool has_bias) {
  uint32_t at = 0;
  t->left = at;
  at = linear_align(at + linear_matrix_bytes(t->mt, t->kt, dtype));
  t->right = at;
  at = linear_align(at + linear_matrix_bytes(t->ot, t->kt, dtype));
  t->acc = at;
  at = linear_align(at + linear_matrix_bytes(t->mt, t->ot, DT_FP32));
  t->out = t->acc;
  if (dtype != DT_FP32) {
    t->out = at;
    at = linear_align(at + linear_matrix_bytes(t->mt, t->ot, dtype));
  }
  t->bias_row = t->bias_all = at;
  if (has_bias) {
    t->bias_row = at;
    at = linear_align(at + linear_matrix_bytes(1, t->ot, dtype));
    t->bias_all = at;
    at = linear_align(at + linear_matrix_bytes(NPU_NUM, t->ot, dtype));
  }
  t->bytes = at;
}

static int linear_min(int64_t a, int64_t b) { return (int)(a < b ? a : b); }

/* The largest tiles (from the starting sizes, halving kt, then ot, then mt)
 * whose buffers fit local memory. */
static linear_tiles_t linear_choose_tiles(int64_t M, int K, int O, data_type_t dtype, bool has_bias) {
  linear_tiles_t t;
  t.mt = linear_min(M, 4 * NPU_NUM);
  t.ot = linear_min(O, 512);
  t.kt = linear_min(K, 2048);
  for (;;) {
    linear_layout(&t, dtype, has_bias);
    if (t.bytes <= (uint32_t)LOCAL_MEM_SIZE) return t;
    if (t.kt > 256) t.kt = (t.kt + 1) / 2;
    else if (t.ot > NPU_NUM) t.ot = (t.ot + 1) / 2;
    else if (t.mt > NPU_NUM) t.mt = (t.mt + 1) / 2;
    else if (t.kt > 1) t.kt = (t.kt + 1) / 2;
    else if (t.ot > 1) t.ot = (t.ot + 1) / 2;
    else if (t.mt > 1) t.mt = (t.mt + 1) / 2;
    else return t; /* one element of each: always fits */
  }
}

void tpu_impl_linear_global(global_addr_t y_addr, global_addr_t x_addr, global_addr_t w_addr, global_addr_t bias_addr,
                            int64_t M, int K, int O, bool has_bias, bool do_relu, data_type_t dtype) {
  if (!tpu_impl_check_float_dtype("linear", dtype)) return;
  const bool valid = M >= 1 && K >= 1 && O >= 1;
  TPUKERNEL_ASSERT_INFO(valid, "linear: M %lld, in_features %d and out_features %d must all be at least 1",
                        (long long)M, K, O);
  if (!valid) return;
  const linear_tiles_t t = linear_choose_tiles(M, K, O, dtype, has_bias);
  const int size = tpu_data_type_size(dtype);
  var_context_t zero_bias;
  zero_bias.scalar.u32 = 0;

  /* Several cores (a multi-core launch): core k computes the output rows
   * [k M / n, (k + 1) M / n). Every output element is one sum in the same
   * order whatever the rows around it, so the cores' outputs are those of
   * one core, bit for bit, and no two cores write the same bytes. */
  const int cores = tpu_core_num(), core = tpu_core_index();
  const int64_t row_begin = M * core / cores, row_end = M * (core + 1) / cores;
  for (int64_t m0 = row_begin; m0 < row_end; m0 += t.mt) {
    const int mt = linear_min(t.mt, row_end - m0);
    for (int o0 = 0; o0 < O; o0 += t.ot) {
      const int ot = linear_min(t.ot, O - o0);
      if (has_bias) {
        const dim4 row = {1, 1, 1, ot}, all = {1, NPU_NUM, 1, ot};
        tpu_gdma_cpy_S2L(t.bias_row, bias_addr + (global_addr_t)o0 * size, &row, NULL, NULL, dtype);
        tpu_bdc_npu_bcast(t.bias_all, t.bias_row, &all, dtype);
      }
      for (int k0 = 0; k0 < K; k0 += t.kt) {
        const int kt = linear_min(t.kt, K - k0);
        const bool last = k0 + kt == K;
        const dim4 left_shape = {1, mt, 1, kt}, left_stride = {mt * K, K, kt, 1};
        const dim4 right_shape = {1, ot, 1, kt}, right_stride = {ot * K, K, kt, 1};
        tpu_gdma_cpy_S2L(t.left, x_addr + ((global_addr_t)m0 * K + (global_addr_t)k0) * size, &left_shape, NULL,
                         &left_stride, dtype);
        tpu_gdma_cpy_S2L(t.right, w_addr + ((global_addr_t)o0 * K + (global_addr_t)k0) * size, &right_shape, NULL,
                         &right_stride, dtype);
        var_context_t bias = zero_bias;
        bias.addr = t.bias_all;
        const bool real_bias = last && has_bias;
        tpu_bdc_fp_mm_R_trans_with_bias(t.acc, t.left, t.right, mt, kt, ot, DT_FP32, dtype,
                                        real_bias ? dtype : DT_FP32, /*add_result=*/k0 > 0,
                                        /*bias_is_const=*/!real_bias, real_bias ? bias : zero_bias,
                                        last && do_relu);
      }
      const dim4 y_shape = {1, mt, 1, ot}, y_stride = {mt * O, O, ot, 1};
      if (dtype != DT_FP32) tpu_bdc_cast(t.out, t.acc, &y_shape, NULL, NULL, dtype, DT_FP32, RM_HALF_TO_EVEN);
      tpu_gdma_cpy_L2S(y_addr + ((global_addr_t)m0 * O + (global_addr_t)o0) * size, t.out, &y_shape, &y_stride, NULL,
                       dtype);
    }
  }
}
