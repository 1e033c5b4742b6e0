/*
 * tpu_impl_scaleinplace.c: x *= s for fp32, fp16 and bf16 tensors, the
 * sample op that updates its input in place.
 *
 * Local: fp32 multiplies straight into the output; fp16/bf16 are cast
 * exactly to fp32 in the scratch buffer, multiplied there and rounded once
 * to nearest even into the output. Global: the shared tiled pipeline
 * (tpu_impl_common.c), whose output may equal its input, which is how the
 * model builder calls it.
 */
#include "tpu_impl_custom_ops.h"

static void scale_C(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, const dim4 *shape,
                    data_type_t dtype, float s) {
  scalar_t c;
  c.u32 = 0;
  c.f32 = s;
  if (dtype == DT_FP32) {
    tpu_bdc_fp_mul_C(dst_addr, src_addr, c, shape, NULL, NULL, DT_FP32);
    return;
  }
  tpu_bdc_cast(work_addr, src_addr, shape, NULL, NULL, DT_FP32, dtype, RM_HALF_TO_EVEN);
  tpu_bdc_fp_mul_C(work_addr, work_addr, c, shape, NULL, NULL, DT_FP32);
  tpu_bdc_cast(dst_addr, work_addr, shape, NULL, NULL, dtype, DT_FP32, RM_HALF_TO_EVEN);
}

/* The pipeline's per-tile callback; ctx points at s. */
static void scaleinplace_tile(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, const dim4 *shape,
                              data_type_t dtype, const void *ctx) {
  scale_C(dst_addr, src_addr, work_addr, shape, dtype, *(const float *)ctx);
}

void tpu_impl_scaleinplace_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape, float s,
                                  data_type_t dtype) {
  if (!tpu_impl_check_float_dtype("scaleinplace", dtype)) return;
  tpu_impl_eltwise_global(output_addr, input_addr, shape, dtype, dtype == DT_FP32 ? 0 : 4, scaleinplace_tile, &s);
}

void tpu_impl_scaleinplace_local(local_addr_t output_addr, local_addr_t input_addr, local_addr_t buffer_addr,
                                 const int *shape, float s, data_type_t dtype) {
  if (!tpu_impl_check_float_dtype("scaleinplace", dtype)) return;
  const dim4 d = {shape[0], shape[1], shape[2], shape[3]};
  scale_C(output_addr, input_addr, buffer_addr, &d, dtype, s);
}
