/* tpu_impl_scaleclip.c: out = min(max(x * scale, lo), hi) in fp32. */
#include "tpu_impl_custom_ops.h"

void tpu_impl_scaleclip_global(global_addr_t output_addr, global_addr_t input_addr, const dim4 *shape,
                               float scale, float lo, float hi) {
  scalar_t c;
  tpu_gdma_cpy_S2L(0, input_addr, shape, NULL, NULL, DT_FP32);
  c.f32 = scale;
  tpu_bdc_fp_mul_C(0, 0, c, shape, NULL, NULL, DT_FP32);
  c.f32 = lo;
  tpu_bdc_max_C(0, 0, c, shape, NULL, NULL, DT_FP32);
  c.f32 = hi;
  tpu_bdc_min_C(0, 0, c, shape, NULL, NULL, DT_FP32);
  tpu_gdma_cpy_L2S(output_addr, 0, shape, NULL, NULL, DT_FP32);
}
