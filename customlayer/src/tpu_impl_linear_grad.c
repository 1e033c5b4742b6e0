/*
 * tpu_impl_linear_grad.c: the gradient of linear (y = relu?(x W^T + b)):
 *
 *   dz = do_relu ? (y > 0 ? dy : 0) : dy        M x O  (y: the forward output)
 *   dx = dz W                                   M x K
 *   dW = dz^T x                                 O x K
 *   db = sum over m of dz                       O      (with has_bias)
 *
 * on the BDC's matrix unit, tiled as the forward: matrices are stored one
 * row per channel, a tile is the aligned tensor (1, rows, 1, cols).
 *
 *   dx tile [m0.., k0..]  = sum over o chunks of fp_mm(dz[m0.., o0..], W[o0.., k0..])
 *   dW tile [o0.., k0..]  = sum over m chunks of fp_mm(dz^T[o0.., m0..], x[m0.., k0..])
 *   db tile [o0..]        = sum over m chunks of fp_mm_R_const(dz^T[o0.., m0..], 1)
 *
 * dz^T tiles come in transposed by the GDMA (tpu_gdma_cpy_cw_trans_S2L);
 * the relu mask is applied to each dz tile after loading it
 * (tpu_bdc_greater_select against the same tile of y). The first chunk
 * writes the fp32 accumulator, the next ones add to it (result_add), so
 * each element is the cmodel's documented sum: the reduction index
 * ascending, one fp32 rounding per product and per sum, whatever the
 * tiling; fp16/bf16 results are rounded once from fp32 (tpu_bdc_cast).
 * Tiles: NPU_NUM rows of M and O, 128 columns of K (so small shapes already
 * cross every tile edge); loads, products and stores run in order.
 */
#include "tpu_impl_custom_ops.h"

#define LG_ALIGN 512

typedef struct {
  int rows, cols;  /* the tile sizes: rows of M and O, columns of K */
  local_addr_t dz, dy, y, right, acc, out, db_acc, db_out;
  uint32_t bytes;
} lg_tiles_t;

static uint32_t lg_matrix_bytes(int rows, int cols, data_type_t dtype) {
  const dim4 shape = {1, rows, 1, cols};
  return (uint32_t)tpu_get_local_size(&shape, dtype, 0, true);
}

static local_addr_t lg_place(uint32_t *at, uint32_t bytes) {
  const local_addr_t addr = *at;
  *at = (*at + bytes + LG_ALIGN - 1) / LG_ALIGN * LG_ALIGN;
  return addr;
}

static lg_tiles_t lg_layout(data_type_t dtype) {
  lg_tiles_t t;
  t.rows = NPU_NUM;
  t.cols = 128;
  uint32_t at = 0;
  const int r = t.rows, c = t.cols;
  t.dz = lg_place(&at, lg_matrix_bytes(r, r, dtype));
  t.dy = lg_place(&at, lg_matrix_bytes(r, r, dtype));
  t.y = lg_place(&at, lg_matrix_bytes(r, r, dtype));
  t.right = lg_place(&at, lg_matrix_bytes(r, c, dtype));
  t.acc = lg_place(&at, lg_matrix_bytes(r, c, DT_FP32));
  t.out = lg_place(&at, lg_matrix_bytes(r, c, dtype));
  t.db_acc = lg_place(&at, lg_matrix_bytes(r, 1, DT_FP32));
  t.db_out = lg_place(&at, lg_matrix_bytes(r, 1, dtype));
  t.bytes = at;
  return t;
}

static int lg_min(int64_t a, int64_t b) { return (int)(a < b ? a : b); }

/* Rows [r0, r0 + rows) and columns [c0, c0 + cols) of the row-major matrix
 * at `addr` with `width` columns, into local (1, rows, 1, cols); transposed:
 * into local (1, cols, 1, rows). */
static void lg_load(local_addr_t dst, global_addr_t addr, int64_t r0, int c0, int rows, int cols, int width,
                    bool transposed, data_type_t dtype) {
  const global_addr_t from = addr + ((global_addr_t)r0 * (global_addr_t)width + (global_addr_t)c0) * tpu_data_type_size(dtype);
  const dim4 src_stride = {rows * width, width, cols, 1};
  if (transposed) {
    const dim4 shape = {1, cols, 1, rows};
    tpu_gdma_cpy_cw_trans_S2L(dst, from, &shape, NULL, &src_stride, dtype);
  } else {
    const dim4 shape = {1, rows, 1, cols};
    tpu_gdma_cpy_S2L(dst, from, &shape, NULL, &src_stride, dtype);
  }
}

static void lg_store(global_addr_t addr, local_addr_t src, int64_t r0, int c0, int rows, int cols, int width,
                     data_type_t dtype) {
  const dim4 shape = {1, rows, 1, cols}, stride = {rows * width, width, cols, 1};
  tpu_gdma_cpy_L2S(addr + ((global_addr_t)r0 * (global_addr_t)width + (global_addr_t)c0) * tpu_data_type_size(dtype),
                   src, &shape, &stride, NULL, dtype);
}

typedef struct {
  global_addr_t dy, y;
  int64_t M;
  int O;
  bool do_relu;
  data_type_t dtype;
} lg_dz_t;

/* The dz tile of rows m0.. and columns o0.. (transposed: (1, ot, 1, mt)). */
static void lg_load_dz(const lg_dz_t *d, const lg_tiles_t *t, int64_t m0, int o0, int mt, int ot, bool transposed) {
  if (!d->do_relu) {
    lg_load(t->dz, d->dy, m0, o0, mt, ot, d->O, transposed, d->dtype);
    return;
  }
  lg_load(t->dy, d->dy, m0, o0, mt, ot, d->O, transposed, d->dtype);
  lg_load(t->y, d->y, m0, o0, mt, ot, d->O, transposed, d->dtype);
  const dim4 shape = {1, transposed ? ot : mt, 1, transposed ? mt : ot};
  variable_t y, zero, dz;
  y.type = TENSOR;
  y.context.addr = t->y;
  zero.type = SCALAR;
  zero.context.scalar.u32 = 0;
  dz.type = TENSOR;
  dz.context.addr = t->dy;
  tpu_bdc_greater_select(t->dz, &y, &zero, &dz, &zero, &shape, d->dtype, d->dtype);
}

/* The fp32 accumulator `acc` of rows x cols, rounded into dtype and stored. */
static void lg_finish(global_addr_t addr, local_addr_t acc, local_addr_t out, int64_t r0, int c0, int rows, int cols,
                      int width, data_type_t dtype) {
  const dim4 shape = {1, rows, 1, cols};
  if (dtype != DT_FP32) tpu_bdc_cast(out, acc, &shape, NULL, NULL, dtype, DT_FP32, RM_HALF_TO_EVEN);
  lg_store(addr, dtype == DT_FP32 ? acc : out, r0, c0, rows, cols, width, dtype);
}

static void lg_dx(const lg_dz_t *d, const lg_tiles_t *t, global_addr_t dx, global_addr_t w, int K) {
  for (int64_t m0 = 0; m0 < d->M; m0 += t->rows) {
    const int mt = lg_min(t->rows, d->M - m0);
    for (int k0 = 0; k0 < K; k0 += t->cols) {
      const int kt = lg_min(t->cols, K - k0);
      for (int o0 = 0; o0 < d->O; o0 += t->rows) {
        const int ot = lg_min(t->rows, d->O - o0);
        lg_load_dz(d, t, m0, o0, mt, ot, false);
        lg_load(t->right, w, o0, k0, ot, kt, K, false, d->dtype);
        tpu_bdc_fp_mm(t->acc, t->dz, t->right, mt, ot, kt, DT_FP32, d->dtype, /*result_add=*/o0 > 0);
      }
      lg_finish(dx, t->acc, t->out, m0, k0, mt, kt, K, d->dtype);
    }
  }
}

static void lg_dw_db(const lg_dz_t *d, const lg_tiles_t *t, global_addr_t dw, global_addr_t db, global_addr_t x,
                     int K, bool has_bias) {
  scalar_t one;
  one.u32 = 0;
  one.f32 = 1.0f;
  if (d->dtype != DT_FP32) one = tpu_fp_cast(one, d->dtype, DT_FP32, RM_HALF_TO_EVEN);
  for (int o0 = 0; o0 < d->O; o0 += t->rows) {
    const int ot = lg_min(t->rows, d->O - o0);
    for (int k0 = 0; k0 < K; k0 += t->cols) {
      const int kt = lg_min(t->cols, K - k0);
      const bool with_db = has_bias && k0 == 0;
      for (int64_t m0 = 0; m0 < d->M; m0 += t->rows) {
        const int mt = lg_min(t->rows, d->M - m0);
        lg_load_dz(d, t, m0, o0, mt, ot, true);
        lg_load(t->right, x, m0, k0, mt, kt, K, false, d->dtype);
        tpu_bdc_fp_mm(t->acc, t->dz, t->right, ot, mt, kt, DT_FP32, d->dtype, /*result_add=*/m0 > 0);
        if (with_db) tpu_bdc_fp_mm_R_const(t->db_acc, t->dz, one, ot, mt, 1, DT_FP32, d->dtype, m0 > 0);
      }
      lg_finish(dw, t->acc, t->out, o0, k0, ot, kt, K, d->dtype);
      if (with_db) lg_finish(db, t->db_acc, t->db_out, o0, 0, ot, 1, 1, d->dtype);
    }
  }
}

void tpu_impl_linear_grad_global(global_addr_t dx_addr, global_addr_t dw_addr, global_addr_t db_addr,
                                 global_addr_t dy_addr, global_addr_t x_addr, global_addr_t w_addr,
                                 global_addr_t y_addr, int64_t M, int K, int O, bool has_bias, bool do_relu,
                                 data_type_t dtype) {
  if (!tpu_impl_check_float_dtype("linear_grad", dtype)) return;
  const bool valid = M >= 1 && K >= 1 && O >= 1;
  TPUKERNEL_ASSERT_INFO(valid, "linear_grad: M %lld, in_features %d and out_features %d must all be at least 1",
                        (long long)M, K, O);
  if (!valid) return;
  const lg_tiles_t t = lg_layout(dtype);
  TPUKERNEL_ASSERT_INFO(t.bytes <= (uint32_t)LOCAL_MEM_SIZE, "linear_grad: tiles of %u bytes per NPU exceed %d",
                        t.bytes, LOCAL_MEM_SIZE);
  const lg_dz_t d = {dy_addr, y_addr, M, O, do_relu, dtype};
  lg_dx(&d, &t, dx_addr, w_addr, K);
  lg_dw_db(&d, &t, dw_addr, db_addr, x_addr, K, has_bias);
}
