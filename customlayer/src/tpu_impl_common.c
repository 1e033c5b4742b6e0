/*
 * tpu_impl_common.c: code the sample kernels share.
 *
 * tpu_impl_eltwise_global: the tiled, double-buffered global pipeline of
 * the element-wise ops (absadd, ceiladd). tpu_impl_copy_S2S: a strided
 * system-to-system copy of any extent (swapchannel, crop).
 */
#include "tpu_impl_custom_ops.h"

/* Largest extent of one dimension of a GDMA or BDC command. */
#define TPU_IMPL_MAX_DIM 65535

bool tpu_impl_check_float_dtype(const char *op, data_type_t dtype) {
  const bool ok = dtype == DT_FP32 || dtype == DT_FP16 || dtype == DT_BFP16;
  TPUKERNEL_ASSERT_INFO(ok, "%s supports fp32, fp16 and bf16 tensors only; got data_type_t %d", op, (int)dtype);
  return ok;
}

int tpu_impl_unary_add_C_work_bytes(data_type_t dtype) { return dtype == DT_FP32 ? 0 : 4; }

void tpu_impl_unary_add_C(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, const dim4 *shape,
                          data_type_t dtype, tpu_impl_bdc_unary_t unary, float b) {
  scalar_t c;
  c.u32 = 0;
  c.f32 = b;
  if (dtype == DT_FP32) {
    unary(work_addr, src_addr, shape, NULL, NULL, DT_FP32);
    tpu_bdc_fp_add_C(dst_addr, work_addr, c, shape, NULL, NULL, DT_FP32);
    return;
  }
  /* fp16/bf16 -> fp32 is exact; abs/ceil of the fp32 value are exact too,
   * so only the add and the final cast round. */
  tpu_bdc_cast(work_addr, src_addr, shape, NULL, NULL, DT_FP32, dtype, RM_HALF_TO_EVEN);
  unary(work_addr, work_addr, shape, NULL, NULL, DT_FP32);
  tpu_bdc_fp_add_C(work_addr, work_addr, c, shape, NULL, NULL, DT_FP32);
  tpu_bdc_cast(dst_addr, work_addr, shape, NULL, NULL, dtype, DT_FP32, RM_HALF_TO_EVEN);
}

int tpu_impl_local_start_npu(const local_tensor_spec_t *spec) {
  const uint64_t local_total = (uint64_t)NPU_NUM * (uint64_t)LOCAL_MEM_SIZE;
  return spec->addr < local_total ? tpu_npu_index((local_addr_t)spec->addr) : 0;
}

local_addr_t tpu_impl_local_buffer(const local_tensor_spec_t *input, const void *param) {
  const uint32_t local_mem = (uint32_t)LOCAL_MEM_SIZE;
  const uint32_t offset = (uint32_t)get_local_buffer_addr(param) % local_mem;
  return (local_addr_t)((uint32_t)tpu_impl_local_start_npu(input) * local_mem + offset);
}

/* ---- element-wise global pipeline ----------------------------------------
 *
 * Tiling. The tensor is a flat run of `count` elements (element-wise ops do
 * not care about its shape). It is cut into tiles of three kinds, in order:
 *
 *   full tiles   (1, NPU_NUM, 1, per_lane)  as many as fit;
 *   one row tile (1, NPU_NUM, 1, rest)      the remainder that still fills
 *                                           every lane (rest < per_lane);
 *   one tail     (1, tail, 1, 1)            the last tail < NPU_NUM elements.
 *
 * In global memory a tile (1, c, 1, w) is contiguous (continuous stride:
 * channel k holds elements [k*w, (k+1)*w) of the tile); in local memory
 * channel k goes to NPU k, so every lane gets an equal share and BDC works
 * on all NPUs at once. per_lane is at most what one buffer holds per NPU and
 * at most 65535 (the GDMA/BDC limit of one dimension), a multiple of the EU
 * count; a tensor too small to give four full tiles gets smaller tiles (but
 * not below 1 KiB per lane) so that loads, computation and stores overlap.
 *
 * Buffers. Three equal, bank-aligned tile buffers (buffer k at offset
 * k * buf_bytes of NPU 0) and, when the computation needs one
 * (work_elem_bytes > 0, e.g. an fp32 copy of an fp16 tile), one work buffer
 * after them, sized for a tile of work_elem_bytes-byte elements. Tile i
 * lives in buffer i % 3 for its whole life: loaded there, computed in place
 * (through the work buffer), stored from there.
 *
 * Pipeline. Step s (s = 0 .. tiles + 1) is one tpu_parallel_start/end
 * region holding
 *   GDMA: load  tile s      into buffer s % 3        (if s < tiles)
 *   BDC:  compute tile s-1  in   buffer (s - 1) % 3  (if 1 <= s <= tiles)
 *   GDMA: store tile s-2    from buffer (s - 2) % 3  (if s >= 2)
 *
 * Why it is race-free. Inside one region GDMA and BDC are not ordered, so
 * the only requirement is that BDC touches no byte a GDMA command of the
 * same region writes, and GDMA writes nothing BDC touches. In step s, BDC
 * reads and writes only buffer (s-1) % 3 and the work buffer; GDMA writes
 * only buffer s % 3 (the load) and reads only buffer (s-2) % 3 (the store),
 * and never touches the work buffer. These are disjoint byte ranges in
 * every NPU. Within one engine
 * commands run in order, and tpu_parallel_end waits for both engines, so a
 * tile's load (step i), computation (step i+1) and store (step i+2) happen
 * in order, and a buffer is reused (by tile i+3's load in step i+3) only
 * after the region that stored it ended.
 */

#define TPU_IMPL_PIPELINE_BUFFERS 3
#define TPU_IMPL_MIN_TILES 4
#define TPU_IMPL_MIN_LANE_BYTES 1024

typedef struct {
  uint64_t count;      /* elements of the tensor */
  int lanes;           /* NPU_NUM */
  int per_lane;        /* w of a full tile */
  uint64_t full_tiles; /* number of (1, lanes, 1, per_lane) tiles */
  int rest;            /* w of the row tile, 0 if none */
  int tail;            /* c of the tail tile, 0 if none */
  uint64_t tiles;      /* all tiles */
} tile_plan_t;

typedef struct {
  uint64_t offset; /* first element */
  dim4 shape;      /* (1, c, 1, w) */
} tile_t;

static tile_plan_t plan_tiles(uint64_t count, int lanes, int capacity, int eu, int min_len) {
  tile_plan_t p;
  p.count = count;
  p.lanes = lanes;
  const uint64_t lane_total = count / (uint64_t)lanes;
  uint64_t per_lane = (uint64_t)capacity;
  if (lane_total < (uint64_t)capacity * TPU_IMPL_MIN_TILES) {
    /* Small tensor: aim at TPU_IMPL_MIN_TILES tiles so the engines overlap. */
    per_lane = lane_total == 0 ? 0 : ALIGN(DIV_UP(lane_total, TPU_IMPL_MIN_TILES), (uint64_t)eu);
    per_lane = MAX(per_lane, (uint64_t)min_len);
    per_lane = MIN(per_lane, (uint64_t)capacity);
  }
  p.per_lane = (int)per_lane;
  const uint64_t full_elems = (uint64_t)lanes * per_lane;
  p.full_tiles = count / full_elems;
  const uint64_t left = count - p.full_tiles * full_elems;
  p.rest = (int)(left / (uint64_t)lanes);
  p.tail = (int)(left - (uint64_t)p.rest * (uint64_t)lanes);
  p.tiles = p.full_tiles + (p.rest > 0) + (p.tail > 0);
  return p;
}

static tile_t get_tile(const tile_plan_t *p, uint64_t index) {
  tile_t t;
  t.shape.n = 1;
  t.shape.h = 1;
  const uint64_t full_elems = (uint64_t)p->lanes * (uint64_t)p->per_lane;
  if (index < p->full_tiles) {
    t.offset = index * full_elems;
    t.shape.c = p->lanes;
    t.shape.w = p->per_lane;
    return t;
  }
  t.offset = p->full_tiles * full_elems;
  if (p->rest > 0 && index == p->full_tiles) {
    t.shape.c = p->lanes;
    t.shape.w = p->rest;
    return t;
  }
  t.offset += (uint64_t)p->rest * (uint64_t)p->lanes;
  t.shape.c = p->tail;
  t.shape.w = 1;
  return t;
}

void tpu_impl_eltwise_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape, data_type_t dtype,
                             int work_elem_bytes, tpu_impl_tile_compute_t compute, const void *ctx) {
  uint64_t count = 1;
  for (int i = 0; i < 4; ++i) {
    TPUKERNEL_ASSERT_INFO(shape[i] >= 0, "tensor shape (%d, %d, %d, %d) has a negative dimension", shape[0], shape[1],
                          shape[2], shape[3]);
    if (shape[i] < 0) return;
    count *= (uint64_t)shape[i];
  }
  if (count == 0) return;

  const int dsize = tpu_data_type_size(dtype);
  const int eu = tpu_eu_num(dtype);
  const int lanes = NPU_NUM;
  const int local_mem = LOCAL_MEM_SIZE;
  const int bank = BANK_SIZE;
  const int eu_bytes = eu * dsize; /* the chip's EU width in bytes */
  /* Per NPU: three tile buffers of buf_bytes and a work buffer of
   * buf_bytes / dsize * work_elem_bytes. Bank-aligned tile buffers when
   * they are at least a bank, else EU-aligned ones. */
  const int64_t share = (int64_t)local_mem * dsize / (TPU_IMPL_PIPELINE_BUFFERS * dsize + work_elem_bytes);
  int buf_bytes = (int)ALIGN_DOWN(share, (int64_t)bank);
  if (buf_bytes == 0) buf_bytes = (int)ALIGN_DOWN(share, (int64_t)eu_bytes);
  const int work_bytes = buf_bytes / dsize * work_elem_bytes;
  const int capacity = MIN(buf_bytes / dsize, ALIGN_DOWN(TPU_IMPL_MAX_DIM, eu));
  const bool fits = buf_bytes > 0 && capacity >= eu && work_elem_bytes >= 0 &&
                    (int64_t)TPU_IMPL_PIPELINE_BUFFERS * buf_bytes + work_bytes <= local_mem;
  TPUKERNEL_ASSERT_INFO(fits,
                        "element-wise pipeline: %d tile buffers of %d bytes and a %d-byte work buffer do not fit "
                        "%d bytes of local memory per NPU",
                        TPU_IMPL_PIPELINE_BUFFERS, buf_bytes, work_bytes, local_mem);
  if (!fits) return;

  const int min_len = MIN(capacity, ALIGN(DIV_UP(TPU_IMPL_MIN_LANE_BYTES, dsize), eu));
  const tile_plan_t plan = plan_tiles(count, lanes, capacity, eu, min_len);
  /* A tile (aligned layout, one channel row per NPU) fits its buffer, and
   * the same tile with work_elem_bytes-byte elements fits the work buffer. */
  const int work_eu = work_elem_bytes > 0 ? MAX(1, eu_bytes / work_elem_bytes) : 1;
  TPUKERNEL_ASSERT_INFO(
      ALIGN(plan.per_lane, eu) * dsize <= buf_bytes && ALIGN(plan.per_lane, work_eu) * work_elem_bytes <= work_bytes,
      "element-wise pipeline: a tile of %d elements per NPU overflows its %d-byte buffer or the "
      "%d-byte work buffer",
      plan.per_lane, buf_bytes, work_bytes);
  const local_addr_t work_addr = (local_addr_t)(TPU_IMPL_PIPELINE_BUFFERS * buf_bytes);

  for (uint64_t step = 0; step < plan.tiles + 2; ++step) {
    tpu_parallel_start();
    if (step < plan.tiles) {
      const tile_t t = get_tile(&plan, step);
      const local_addr_t buf = (local_addr_t)((step % TPU_IMPL_PIPELINE_BUFFERS) * (uint64_t)buf_bytes);
      tpu_gdma_cpy_S2L(buf, input_addr + t.offset * (uint64_t)dsize, &t.shape, NULL, NULL, dtype);
    }
    if (step >= 1 && step - 1 < plan.tiles) {
      const tile_t t = get_tile(&plan, step - 1);
      const local_addr_t buf = (local_addr_t)(((step - 1) % TPU_IMPL_PIPELINE_BUFFERS) * (uint64_t)buf_bytes);
      compute(buf, buf, work_elem_bytes > 0 ? work_addr : buf, &t.shape, dtype, ctx);
    }
    if (step >= 2) {
      const tile_t t = get_tile(&plan, step - 2);
      const local_addr_t buf = (local_addr_t)(((step - 2) % TPU_IMPL_PIPELINE_BUFFERS) * (uint64_t)buf_bytes);
      tpu_gdma_cpy_L2S(output_addr + t.offset * (uint64_t)dsize, buf, &t.shape, NULL, NULL, dtype);
    }
    tpu_parallel_end();
  }
}

/* ---- strided system-to-system copy --------------------------------------- */

void tpu_impl_copy_S2S(system_addr_t dst_addr, system_addr_t src_addr, const int64_t shape[4],
                       const int64_t dst_stride[4], const int64_t src_stride[4], data_type_t dtype) {
  for (int i = 0; i < 4; ++i) {
    TPUKERNEL_ASSERT_INFO(shape[i] >= 0, "copy shape dimension %d is %lld", i, (long long)shape[i]);
    const bool strides_fit = dst_stride[i] >= INT32_MIN && dst_stride[i] <= INT32_MAX && src_stride[i] >= INT32_MIN &&
                             src_stride[i] <= INT32_MAX;
    TPUKERNEL_ASSERT_INFO(strides_fit,
                          "copy stride of dimension %d (dst %lld, src %lld elements) does not fit a GDMA stride", i,
                          (long long)dst_stride[i], (long long)src_stride[i]);
    if (shape[i] <= 0 || !strides_fit) return;
  }
  const int64_t dsize = tpu_data_type_size(dtype);
  const dim4 dst_s = {(int)dst_stride[0], (int)dst_stride[1], (int)dst_stride[2], (int)dst_stride[3]};
  const dim4 src_s = {(int)src_stride[0], (int)src_stride[1], (int)src_stride[2], (int)src_stride[3]};
  /* Each dimension in pieces of at most TPU_IMPL_MAX_DIM; usually one piece each. */
  for (int64_t n = 0; n < shape[0]; n += TPU_IMPL_MAX_DIM)
    for (int64_t c = 0; c < shape[1]; c += TPU_IMPL_MAX_DIM)
      for (int64_t h = 0; h < shape[2]; h += TPU_IMPL_MAX_DIM)
        for (int64_t w = 0; w < shape[3]; w += TPU_IMPL_MAX_DIM) {
          const dim4 piece = {(int)MIN(shape[0] - n, TPU_IMPL_MAX_DIM), (int)MIN(shape[1] - c, TPU_IMPL_MAX_DIM),
                              (int)MIN(shape[2] - h, TPU_IMPL_MAX_DIM), (int)MIN(shape[3] - w, TPU_IMPL_MAX_DIM)};
          const int64_t dst_off = n * dst_stride[0] + c * dst_stride[1] + h * dst_stride[2] + w * dst_stride[3];
          const int64_t src_off = n * src_stride[0] + c * src_stride[1] + h * src_stride[2] + w * src_stride[3];
          tpu_gdma_cpy_S2S(dst_addr + (uint64_t)(dst_off * dsize), src_addr + (uint64_t)(src_off * dsize), &piece,
                           &dst_s, &src_s, dtype);
        }
}
