/* The second file of the compatibility kernel library (§5 item 3: kernels
 * registered in two files of one library). Vendor-style table-driven math
 * (§5 item 17), the current fp_mm form (item 16) and the local-memory debug
 * print (item 20). */
#include "common.h"
#include "macros.h"
#include "print_trace.h"
#include "tpu_kernel.h"

#include "compat_kernels.h"

/* The tiles are (1, c, 1, TILE_W): one row of TILE_W values per NPU. */
#define TILE_W 32

/* §3.0: tables get their own banks outside the data and work buffers, are
 * loaded once before the tile loop, then serve every tile. */
int table_math_kernel(const void *args) {
  const math_args_t *a = (const math_args_t *)args;
  const data_type_t dtype = (data_type_t)a->dtype;
  const int dsize = tpu_data_type_size(dtype);
  const local_addr_t data = 0, work0 = BANK_SIZE, work1 = 2 * BANK_SIZE, work2 = 3 * BANK_SIZE;
  const local_addr_t exp_table = 4 * BANK_SIZE, erf_table = 5 * BANK_SIZE, log_table = 6 * BANK_SIZE;
  TPUKERNEL_ASSERT(tpu_aligned_feature_size(1, sfu_taylor_exp_len(dtype), dtype) <= (u64)BANK_SIZE);
  TPUKERNEL_ASSERT(a->n % TILE_W == 0);

  switch (a->op) {
    case 0: case 2: tpu_bdc_load_fp_exp_coeff(exp_table, dtype); break;
    case 1:
      TPUKERNEL_ASSERT(tpu_aligned_feature_size(1, sfu_taylor_log_len(dtype), dtype) <= (u64)BANK_SIZE);
      tpu_bdc_load_fp_log_coeff(log_table, dtype);
      break;
    case 3:
      tpu_bdc_load_fp_exp_coeff(exp_table, dtype);
      tpu_bdc_load_fp_erf_coeff(erf_table, dtype);
      break;
    case 4: /* one public erfc path loads the erf table with the FP32 loader for every dtype */
      tpu_bdc_load_fp_exp_coeff(exp_table, dtype);
      tpu_bdc_load_fp32_erf_coeff(erf_table);
      break;
    default: TPUKERNEL_ERR("unknown op %d\n", a->op);
  }
  const int per_tile = NPU_NUM * TILE_W;
  for (int done = 0; done < a->n; done += per_tile) {
    const int rows = MIN(per_tile, a->n - done) / TILE_W;
    const dim4 shape = {1, rows, 1, TILE_W};
    const u64 offset = (u64)done * (u64)dsize;
    tpu_gdma_cpy_S2L(data, a->src + offset, &shape, NULL, NULL, dtype);
    switch (a->op) {
      case 0: tpu_bdc_fp_exp(data, data, work0, work1, exp_table, &shape, dtype); break;
      case 1: tpu_bdc_fp_log(data, data, work0, log_table, &shape, dtype); break;
      case 2: tpu_bdc_fp_expm1(data, data, work0, work1, exp_table, &shape, dtype); break;
      case 3: tpu_bdc_fp_erf(data, data, work0, work1, work2, exp_table, erf_table, &shape, dtype); break;
      default: tpu_bdc_fp_erfc(data, data, work0, work1, work2, exp_table, erf_table, &shape, dtype); break;
    }
    tpu_gdma_cpy_L2S(a->dst + offset, data, &shape, NULL, NULL, dtype);
  }
  return 0;
}
TPUKERNEL_FUNC_REGISTER(table_math_kernel)

/* §5 item 16: C's 9-argument fp_mm on (1, rows, 1, cols) operands. */
int matmul_kernel(const void *args) {
  const mm_args_t *a = (const mm_args_t *)args;
  const dim4 left = {1, a->rows, 1, a->inner}, right = {1, a->inner, 1, a->cols}, out = {1, a->rows, 1, a->cols};
  const local_addr_t left_addr = 0, right_addr = 4 * BANK_SIZE, out_addr = 8 * BANK_SIZE;
  tpu_gdma_cpy_S2L(left_addr, a->left, &left, NULL, NULL, DT_FP32);
  tpu_gdma_cpy_S2L(right_addr, a->right, &right, NULL, NULL, DT_FP32);
  tpu_bdc_fp_mm(out_addr, left_addr, right_addr, a->rows, a->inner, a->cols, DT_FP32, DT_FP32, false);
  tpu_gdma_cpy_L2S(a->out, out_addr, &out, NULL, NULL, DT_FP32);
  return 0;
}
TPUKERNEL_FUNC_REGISTER(matmul_kernel);

/* §5 item 16: the current header's tpu_bdc_4bank_w_gather, with its
 * trailing is_param_repeated, gathers along W (16-bit indices: the
 * instruction takes 8- or 16-bit ones). */
int gather_kernel(const void *args) {
  const gather_args_t *a = (const gather_args_t *)args;
  const dim4 table = {1, a->c, 1, a->table_w}, picked = {1, a->c, 1, a->n};
  const local_addr_t table_addr = 0, index_addr = 4 * BANK_SIZE, out_addr = 8 * BANK_SIZE;
  tpu_gdma_cpy_S2L(table_addr, a->table, &table, NULL, NULL, DT_FP32);
  tpu_gdma_cpy_S2L(index_addr, a->index, &picked, NULL, NULL, DT_UINT16);
  tpu_bdc_4bank_w_gather(out_addr, table_addr, index_addr, &picked, a->table_w, DT_FP32, DT_UINT16, false);
  tpu_gdma_cpy_L2S(a->out, out_addr, &picked, NULL, NULL, DT_FP32);
  return 0;
}
TPUKERNEL_FUNC_REGISTER(gather_kernel);

/* §5 item 20: print a (1, 2, 1, 3) tensor in aligned layout. */
int print_kernel(const void *args) {
  const print_args_t *a = (const print_args_t *)args;
  const dim4 shape = {1, 2, 1, 3};
  tpu_gdma_cpy_S2L(0, a->src, &shape, NULL, NULL, DT_FP32);
  tpu_poll();
  tpu_print_local_mem_data(0, 0, &shape, NULL, DT_FP32);
  fflush(stdout);
  return 0;
}
TPUKERNEL_FUNC_REGISTER(print_kernel);

/* The vendor's macros.h: a failed ASSERT_RANGE and hang() stop the kernel
 * with the file and line; the marker is never written. */
static void write_marker(const marker_args_t *a) {
  scalar_t one;
  one.s32 = 1;
  tpu_gdma_system_set(a->marker, one, 1, DT_INT32);
}

int assert_macro_kernel(const void *args) {
  const marker_args_t *a = (const marker_args_t *)args;
  const int lanes = sg_max(ALIGN(5, 4), sg_min(3, 9));
  ASSERT(lanes == 8);
  ASSERT_RANGE(lanes, 0, 7);
  write_marker(a);
  return 0;
}
TPUKERNEL_FUNC_REGISTER(assert_macro_kernel)

int hang_kernel(const void *args) {
  const marker_args_t *a = (const marker_args_t *)args;
  if (a->marker != 0) hang(42);
  write_marker(a);
  return 0;
}
TPUKERNEL_FUNC_REGISTER(hang_kernel)
