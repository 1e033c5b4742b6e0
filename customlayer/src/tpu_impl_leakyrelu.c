/*
 * tpu_impl_leakyrelu.c: y = x > 0 ? x : alpha * x and its gradient
 * dx = x > 0 ? dy : alpha * dy, for fp32, fp16 and bf16 tensors (the
 * leaky ReLU of PopART's custom-op example, here with its gradient op).
 *
 * Forward: the shared element-wise pipeline (tpu_impl_common.c); each tile
 * runs tpu_bdc_prelu in fp32 (fp16/bf16 are widened exactly first and the
 * product alpha * x rounded once into the dtype at the end), so alpha is
 * used as the fp32 value it is, never rounded to fp16 or bf16 first.
 *
 * Gradient: two inputs (dy and x), so its own loop over tiles of
 * (1, NPU_NUM, 1, w) elements, one after another: load dy and x, compute
 * alpha * dy in fp32 and round it once into the dtype, then
 * tpu_bdc_greater_select(x > 0 ? dy : alpha * dy) and store. At x == 0 the
 * slope is alpha, as in PyTorch's leaky_relu backward.
 */
#include "tpu_impl_custom_ops.h"

/* Local buffers start on this boundary (a multiple of every chip's EU bytes). */
#define LEAKYRELU_LOCAL_ALIGN 512

static local_addr_t leakyrelu_align(uint32_t offset) {
  return (offset + LEAKYRELU_LOCAL_ALIGN - 1) / LEAKYRELU_LOCAL_ALIGN * LEAKYRELU_LOCAL_ALIGN;
}

static scalar_t leakyrelu_f32(float value) {
  scalar_t s;
  s.u32 = 0;
  s.f32 = value;
  return s;
}

/* The pipeline's per-tile callback (in place, dst == src); ctx points at
 * alpha, work holds the tile as fp32 for fp16/bf16. */
static void leakyrelu_tile(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, const dim4 *shape,
                           data_type_t dtype, const void *ctx) {
  const scalar_t alpha = leakyrelu_f32(*(const float *)ctx);
  if (dtype == DT_FP32) {
    tpu_bdc_prelu(dst_addr, src_addr, alpha, shape, DT_FP32);
    return;
  }
  tpu_bdc_cast(work_addr, src_addr, shape, NULL, NULL, DT_FP32, dtype, RM_HALF_TO_EVEN);
  tpu_bdc_prelu(work_addr, work_addr, alpha, shape, DT_FP32);
  tpu_bdc_cast(dst_addr, work_addr, shape, NULL, NULL, dtype, DT_FP32, RM_HALF_TO_EVEN);
}

void tpu_impl_leakyrelu_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape, float alpha,
                               data_type_t dtype) {
  if (!tpu_impl_check_float_dtype("leakyrelu", dtype)) return;
  tpu_impl_eltwise_global(output_addr, input_addr, shape, dtype, dtype == DT_FP32 ? 0 : 4, leakyrelu_tile, &alpha);
}

/* The gradient's local buffers, each holding (1, NPU_NUM, 1, w) elements. */
typedef struct {
  int w;
  local_addr_t dy, x, out, scaled, wide; /* wide: alpha * dy in fp32 */
} leakyrelu_grad_buffers_t;

static leakyrelu_grad_buffers_t leakyrelu_grad_buffers(data_type_t dtype) {
  const int size = tpu_data_type_size(dtype);
  leakyrelu_grad_buffers_t b;
  /* Four dtype buffers and one fp32 buffer per NPU, with room for alignment. */
  b.w = (LOCAL_MEM_SIZE - 5 * LEAKYRELU_LOCAL_ALIGN) / (4 * size + 4);
  b.w = b.w / 64 * 64;
  if (b.w > 16384) b.w = 16384;
  const uint32_t bytes = (uint32_t)b.w * (uint32_t)size;
  b.dy = 0;
  b.x = leakyrelu_align(b.dy + bytes);
  b.out = leakyrelu_align(b.x + bytes);
  b.scaled = leakyrelu_align(b.out + bytes);
  b.wide = leakyrelu_align(b.scaled + bytes);
  return b;
}

/* One piece of c x w contiguous elements from `offset`. */
static void leakyrelu_grad_piece(global_addr_t dx_addr, global_addr_t dy_addr, global_addr_t x_addr, uint64_t offset,
                                 int c, int w, float alpha, data_type_t dtype, const leakyrelu_grad_buffers_t *b) {
  const dim4 shape = {1, c, 1, w};
  const uint64_t at = offset * (uint64_t)tpu_data_type_size(dtype);
  tpu_gdma_cpy_S2L(b->dy, dy_addr + at, &shape, NULL, NULL, dtype);
  tpu_gdma_cpy_S2L(b->x, x_addr + at, &shape, NULL, NULL, dtype);
  if (dtype == DT_FP32) {
    tpu_bdc_fp_mul_C(b->scaled, b->dy, leakyrelu_f32(alpha), &shape, NULL, NULL, DT_FP32);
  } else {
    tpu_bdc_cast(b->wide, b->dy, &shape, NULL, NULL, DT_FP32, dtype, RM_HALF_TO_EVEN);
    tpu_bdc_fp_mul_C(b->wide, b->wide, leakyrelu_f32(alpha), &shape, NULL, NULL, DT_FP32);
    tpu_bdc_cast(b->scaled, b->wide, &shape, NULL, NULL, dtype, DT_FP32, RM_HALF_TO_EVEN);
  }
  variable_t x, zero, dy, scaled;
  x.type = TENSOR;
  x.context.addr = b->x;
  zero.type = SCALAR;
  zero.context.scalar.u32 = 0;
  dy.type = TENSOR;
  dy.context.addr = b->dy;
  scaled.type = TENSOR;
  scaled.context.addr = b->scaled;
  tpu_bdc_greater_select(b->out, &x, &zero, &dy, &scaled, &shape, dtype, dtype);
  tpu_gdma_cpy_L2S(dx_addr + at, b->out, &shape, NULL, NULL, dtype);
}

void tpu_impl_leakyrelu_grad_global(global_addr_t dx_addr, global_addr_t dy_addr, global_addr_t x_addr,
                                    uint64_t count, float alpha, data_type_t dtype) {
  if (!tpu_impl_check_float_dtype("leakyrelu_grad", dtype)) return;
  const leakyrelu_grad_buffers_t b = leakyrelu_grad_buffers(dtype);
  const uint64_t full = (uint64_t)NPU_NUM * (uint64_t)b.w;
  for (uint64_t offset = 0; offset < count;) {
    const uint64_t left = count - offset;
    int c = NPU_NUM, w = b.w;
    if (left < full) {
      /* The rest: whole rows over every NPU, then the last few elements one per NPU. */
      w = left >= (uint64_t)NPU_NUM ? (int)(left / (uint64_t)NPU_NUM) : 1;
      c = left >= (uint64_t)NPU_NUM ? NPU_NUM : (int)left;
    }
    leakyrelu_grad_piece(dx_addr, dy_addr, x_addr, offset, c, w, alpha, dtype, &b);
    offset += (uint64_t)c * (uint64_t)w;
  }
}
