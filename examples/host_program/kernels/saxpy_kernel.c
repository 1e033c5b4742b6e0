/* saxpy_kernel.c: y = a * x + y on the TPU, as a device kernel module.
 *
 * Tiles of NPU_NUM x TILE_W floats go to local memory (one row per NPU),
 * the BDC multiplies and adds, the result goes back; a tail shorter than a
 * tile runs as one row on one NPU. */
#include "saxpy_args.h"
#include "tpu_kernel.h"

#define TILE_W 1024

/* One tile of `shape` at element `offset`. */
static void saxpy_tile(const saxpy_args_t *p, int offset, const dim4 *shape) {
  const local_addr_t x_local = 0;
  const local_addr_t y_local = TILE_W * sizeof(float) * 2; /* past x, with room to spare */
  const uint64_t byte_offset = (uint64_t)offset * sizeof(float);
  scalar_t a;
  a.f32 = p->a;
  tpu_gdma_cpy_S2L(x_local, p->x_addr + byte_offset, shape, NULL, NULL, DT_FP32);
  tpu_gdma_cpy_S2L(y_local, p->y_addr + byte_offset, shape, NULL, NULL, DT_FP32);
  tpu_bdc_fp_mul_C(x_local, x_local, a, shape, NULL, NULL, DT_FP32);
  tpu_bdc_fp_add(y_local, y_local, x_local, shape, NULL, NULL, NULL, DT_FP32);
  tpu_gdma_cpy_L2S(p->y_addr + byte_offset, y_local, shape, NULL, NULL, DT_FP32);
}

static int saxpy_kernel(const void *args) {
  const saxpy_args_t *p = (const saxpy_args_t *)args;
  const int tile = NPU_NUM * TILE_W;
  int done = 0;
  for (; done + tile <= p->n; done += tile) {
    const dim4 full = {1, NPU_NUM, 1, TILE_W};
    saxpy_tile(p, done, &full);
  }
  while (done < p->n) {
    const int w = p->n - done < TILE_W ? p->n - done : TILE_W;
    const dim4 row = {1, 1, 1, w};
    saxpy_tile(p, done, &row);
    done += w;
  }
  tpu_poll();
  return 0;
}
TPUKERNEL_FUNC_REGISTER(saxpy_kernel);
