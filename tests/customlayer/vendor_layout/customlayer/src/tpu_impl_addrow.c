/* tpu_impl_addrow.c: out = x + b. fp16 and bf16 are widened to fp32 in a
 * buffer, added there and rounded once on the way back. */
#include "tpu_impl_custom_ops.h"

static void addrow_compute(local_addr_t dst, local_addr_t src, local_addr_t buffer, const dim4 *shape, float b,
                           data_type_t dtype) {
  scalar_t c;
  c.f32 = b;
  if (dtype == DT_FP32) {
    tpu_bdc_fp_add_C(dst, src, c, shape, NULL, NULL, DT_FP32);
    return;
  }
  tpu_bdc_cast(buffer, src, shape, NULL, NULL, DT_FP32, dtype, RM_HALF_TO_EVEN);
  tpu_bdc_fp_add_C(buffer, buffer, c, shape, NULL, NULL, DT_FP32);
  tpu_bdc_cast(dst, buffer, shape, NULL, NULL, dtype, DT_FP32, RM_HALF_TO_EVEN);
}

void tpu_impl_addrow_global(global_addr_t output_addr, global_addr_t input_addr, const dim4 *shape, float b,
                            data_type_t dtype) {
  const local_addr_t data = 0;
  const local_addr_t buffer = LOCAL_MEM_SIZE / 2;
  tpu_gdma_cpy_S2L(data, input_addr, shape, NULL, NULL, dtype);
  addrow_compute(data, data, buffer, shape, b, dtype);
  tpu_gdma_cpy_L2S(output_addr, data, shape, NULL, NULL, dtype);
}

void tpu_impl_addrow_local(local_addr_t output_addr, local_addr_t input_addr, local_addr_t buffer_addr,
                           const dim4 *shape, float b, data_type_t dtype) {
  addrow_compute(output_addr, input_addr, buffer_addr, shape, b, dtype);
}
