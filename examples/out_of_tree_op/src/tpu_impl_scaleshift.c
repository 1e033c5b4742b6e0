/*
 * tpu_impl_scaleshift.c: y = x * scale + shift on the TPU, for a tensor of
 * any size.
 *
 * The tensor is treated as a flat array and cut into tiles of
 * [1, NPU_NUM, 1, w] elements (one row of w per NPU, w up to
 * LOCAL_MEM_SIZE / 8); the last tiles are [1, NPU_NUM, 1, w'] and
 * [1, r, 1, 1] with r < NPU_NUM. A contiguous chunk of global memory maps
 * onto such a tile with the default (continuous) system stride.
 *
 * The arithmetic is done in fp32 whatever the dtype: fp16 and bf16 tiles
 * are cast to fp32, scaled and shifted, and cast back, so the result is the
 * fp32 result rounded once (rounding after the multiply and again after the
 * add would lose everything when x * scale and shift nearly cancel).
 *
 * Two tile buffers form a pipeline: in step i the GDMA engine stores tile
 * i - 2 and then loads tile i into buffer i % 2, while the BDC engine
 * computes tile i - 1 in the other buffer (and in the fp32 work area, which
 * only the BDC touches). Inside one parallel region the two engines
 * therefore never touch the same bytes, and the GDMA commands on buffer
 * i % 2 run in the order they were issued.
 *
 * Local memory per NPU, in quarters Q = LOCAL_MEM_SIZE / 4:
 *   fp32         buffer 0 at 0, buffer 1 at 2Q (2Q each)
 *   fp16, bf16   buffer 0 at 0, buffer 1 at Q (Q each), fp32 work area at 2Q (2Q)
 */
#include "tpu_impl_custom_ops.h"

typedef struct {
  long long offset; /* first element */
  int c, w;         /* tile shape [1, c, 1, w] */
} tile_t;

/* The next tile starting at `offset`, or c == 0 once the tensor is done. */
static tile_t next_tile(long long offset, long long count, int w_max) {
  tile_t tile = {offset, 0, 0};
  const long long left = count - offset;
  if (left <= 0) return tile;
  if (left >= NPU_NUM) {
    tile.c = NPU_NUM;
    tile.w = left / NPU_NUM < w_max ? (int)(left / NPU_NUM) : w_max;
  } else {
    tile.c = (int)left;
    tile.w = 1;
  }
  return tile;
}

/* dst = src * scale + shift on one tile, rounded once into dtype. */
static void compute_tile(local_addr_t tile_addr, local_addr_t work_addr, const dim4 *shape,
                         float scale, float shift, data_type_t dtype) {
  const scalar_t scale_c = {.f32 = scale};
  const scalar_t shift_c = {.f32 = shift};
  if (dtype == DT_FP32) {
    tpu_bdc_fp_mul_C(tile_addr, tile_addr, scale_c, shape, NULL, NULL, DT_FP32);
    tpu_bdc_fp_add_C(tile_addr, tile_addr, shift_c, shape, NULL, NULL, DT_FP32);
    return;
  }
  tpu_bdc_cast(work_addr, tile_addr, shape, NULL, NULL, DT_FP32, dtype, RM_HALF_TO_EVEN);
  tpu_bdc_fp_mul_C(work_addr, work_addr, scale_c, shape, NULL, NULL, DT_FP32);
  tpu_bdc_fp_add_C(work_addr, work_addr, shift_c, shape, NULL, NULL, DT_FP32);
  tpu_bdc_cast(tile_addr, work_addr, shape, NULL, NULL, dtype, DT_FP32, RM_HALF_TO_EVEN);
}

void tpu_impl_scaleshift_global(global_addr_t output_addr, global_addr_t input_addr,
                                const int *shape, int dims, float scale, float shift,
                                data_type_t dtype) {
  TPUKERNEL_ASSERT_INFO(dtype == DT_FP32 || dtype == DT_FP16 || dtype == DT_BFP16,
                        "scaleshift: dtype %d is not fp32, fp16 or bf16", (int)dtype);
  long long count = 1;
  for (int i = 0; i < dims; ++i) count *= shape[i];
  if (count == 0) return;

  const int type_size = tpu_data_type_size(dtype);
  const local_addr_t quarter = (local_addr_t)(LOCAL_MEM_SIZE / 4);
  /* A row of w fp32 elements fills 2Q bytes at most (a 16-bit one Q);
   * LOCAL_MEM_SIZE / 8 is a multiple of every EU count and below 65535. */
  const int w_max = LOCAL_MEM_SIZE / 8;
  const local_addr_t buffers[2] = {0, dtype == DT_FP32 ? 2 * quarter : quarter};
  const local_addr_t work = 2 * quarter;
  tile_t in_buffer[2] = {{0, 0, 0}, {0, 0, 0}};
  long long loaded = 0; /* elements handed to the loads so far */

  for (int step = 0;; ++step) {
    const int b = step % 2;
    const tile_t to_store = in_buffer[b];        /* loaded in step - 2, computed in step - 1 */
    const tile_t to_compute = in_buffer[1 - b];  /* loaded in step - 1 */
    const tile_t to_load = next_tile(loaded, count, w_max);
    if (to_store.c == 0 && to_compute.c == 0 && to_load.c == 0) break;

    tpu_parallel_start();
    if (to_store.c) {
      const dim4 tile_shape = {1, to_store.c, 1, to_store.w};
      tpu_gdma_cpy_L2S(output_addr + (global_addr_t)(to_store.offset * type_size), buffers[b],
                       &tile_shape, NULL, NULL, dtype);
    }
    if (to_load.c) {
      const dim4 tile_shape = {1, to_load.c, 1, to_load.w};
      tpu_gdma_cpy_S2L(buffers[b], input_addr + (global_addr_t)(to_load.offset * type_size),
                       &tile_shape, NULL, NULL, dtype);
      loaded += (long long)to_load.c * to_load.w;
    }
    if (to_compute.c) {
      const dim4 tile_shape = {1, to_compute.c, 1, to_compute.w};
      compute_tile(buffers[1 - b], work, &tile_shape, scale, shift, dtype);
    }
    tpu_parallel_end();

    /* Buffer b now holds the tile just loaded; the other one the tile just
     * computed, which step + 1 stores. */
    in_buffer[b] = to_load;
  }
}
