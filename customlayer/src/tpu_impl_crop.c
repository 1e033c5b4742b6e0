/*
 * tpu_impl_crop.c: out[..., i, j] = in[..., hoffset + i, woffset + j].
 *
 * Pure data movement in system memory: one strided GDMA S2S copy reads the
 * hnew x wnew window of every matrix with the source's full strides (row
 * stride w, matrix stride h * w) and writes it densely. Any dtype GDMA
 * moves works.
 */
#include "tpu_impl_custom_ops.h"

void tpu_impl_crop_global(global_addr_t output_addr, global_addr_t input_addr, int64_t outer, int h, int w, int hoffset,
                          int woffset, int hnew, int wnew, data_type_t dtype) {
  const bool valid = hoffset >= 0 && woffset >= 0 && hnew >= 1 && wnew >= 1 && (int64_t)hoffset + hnew <= h &&
                     (int64_t)woffset + wnew <= w;
  TPUKERNEL_ASSERT_INFO(valid,
                        "crop: window rows [%d, %d) x columns [%d, %d) (hoffset %d, woffset %d, hnew %d, wnew %d) "
                        "is not inside the input's last two dims %d x %d (offsets >= 0, sizes >= 1)",
                        hoffset, (int)MIN((int64_t)hoffset + hnew, INT32_MAX), woffset,
                        (int)MIN((int64_t)woffset + wnew, INT32_MAX), hoffset, woffset, hnew, wnew, h, w);
  if (!valid || outer <= 0) return;
  const int64_t dsize = tpu_data_type_size(dtype);
  const int64_t copy_shape[4] = {outer, 1, hnew, wnew};
  const int64_t src_stride[4] = {(int64_t)h * w, (int64_t)h * w, w, 1};
  const int64_t dst_stride[4] = {(int64_t)hnew * wnew, (int64_t)hnew * wnew, wnew, 1};
  const uint64_t src_offset = (uint64_t)(((int64_t)hoffset * w + woffset) * dsize);
  tpu_impl_copy_S2S(output_addr, input_addr + src_offset, copy_shape, dst_stride, src_stride, dtype);
}
