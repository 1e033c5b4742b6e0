/*
 * tpu_impl_ceiladd.c: out = ceil(x) + b for fp32, fp16 and bf16 tensors.
 *
 * Local: tpu_impl_unary_add_C with tpu_bdc_fp_ceil: fp32 ceil into the
 * scratch buffer, then add b into the output; fp16/bf16 go through fp32 in
 * the scratch buffer and are rounded once at the end (b is not rounded to the
 * dtype first). Global: the shared tiled pipeline (tpu_impl_common.c) runs
 * the same computation on every tile, in place in the tile's buffer.
 */
#include "tpu_impl_custom_ops.h"

/* The pipeline's per-tile callback; ctx points at b. */
static void ceiladd_tile(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, const dim4 *shape,
                         data_type_t dtype, const void *ctx) {
  tpu_impl_unary_add_C(dst_addr, src_addr, work_addr, shape, dtype, tpu_bdc_fp_ceil, *(const float *)ctx);
}

void tpu_impl_ceiladd_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape, float b,
                             data_type_t dtype) {
  if (!tpu_impl_check_float_dtype("ceiladd", dtype)) return;
  tpu_impl_eltwise_global(output_addr, input_addr, shape, dtype, tpu_impl_unary_add_C_work_bytes(dtype), ceiladd_tile,
                          &b);
}

void tpu_impl_ceiladd_local(local_addr_t output_addr, local_addr_t input_addr, local_addr_t buffer_addr,
                            const int *shape, float b, data_type_t dtype) {
  if (!tpu_impl_check_float_dtype("ceiladd", dtype)) return;
  const dim4 s = {shape[0], shape[1], shape[2], shape[3]};
  tpu_impl_unary_add_C(output_addr, input_addr, buffer_addr, &s, dtype, tpu_bdc_fp_ceil, b);
}
