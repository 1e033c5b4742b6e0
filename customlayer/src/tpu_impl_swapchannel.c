/*
 * tpu_impl_swapchannel.c: out[:, c] = in[:, order[c]] for c = 0, 1, 2.
 *
 * Pure data movement in system memory: one strided GDMA S2S copy per output
 * channel, covering every n at once (the n stride skips the other two
 * channels). Any dtype GDMA moves works.
 */
#include "tpu_impl_custom_ops.h"

void tpu_impl_swapchannel_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape,
                                 const int *order, data_type_t dtype) {
  TPUKERNEL_ASSERT_INFO(shape[1] == 3, "swapchannel needs exactly 3 channels (dim 1); the input has %d", shape[1]);
  if (shape[1] != 3) return;
  for (int c = 0; c < 3; ++c) {
    const bool valid = order[c] >= 0 && order[c] < 3;
    TPUKERNEL_ASSERT_INFO(valid,
                          "swapchannel: order[%d] = %d, but every order value must be 0, 1 or 2 (order = [%d, %d, %d])",
                          c, order[c], order[0], order[1], order[2]);
    if (!valid) return;
  }
  const int64_t n = shape[0];
  const int64_t plane = (int64_t)shape[2] * shape[3]; /* elements of one channel of one batch */
  const int64_t dsize = tpu_data_type_size(dtype);
  /* Each channel of every batch as (n, 1, h, w); batch stride 3 planes on both sides. */
  const int64_t copy_shape[4] = {n, 1, shape[2], shape[3]};
  const int64_t stride[4] = {3 * plane, plane, shape[3], 1};
  for (int c = 0; c < 3; ++c) {
    tpu_impl_copy_S2S(output_addr + (uint64_t)(c * plane * dsize), input_addr + (uint64_t)(order[c] * plane * dsize),
                      copy_shape, stride, stride, dtype);
  }
}
