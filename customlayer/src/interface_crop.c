/*
 * interface_crop.c: the crop op's API (global only) and its dynamic-mode
 * type inference.
 *
 * Parameters: hoffset, woffset, hnew, wnew (int). The last two dims of the
 * input (rank >= 2) are cropped to rows [hoffset, hoffset + hnew) and
 * columns [woffset, woffset + wnew); every leading dim is kept (folded
 * into one batch dim for the kernel). The output has the input's dtype.
 */
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"
#include "tpu_utils.h"

void api_crop_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(crop, p, param);
  const int dims = input->dims;
  TPUKERNEL_ASSERT_INFO(dims >= 2 && dims <= MAX_SHAPE_DIMS,
                        "crop works on the last two dims and needs an input of rank 2..%d; the input has rank %d",
                        MAX_SHAPE_DIMS, dims);
  if (dims < 2 || dims > MAX_SHAPE_DIMS) return;
  int64_t outer = 1;
  for (int i = 0; i < dims - 2; ++i) outer *= input->shape[i];
  tpu_impl_crop_global(output->addr, input->addr, outer, input->shape[dims - 2], input->shape[dims - 1], p.hoffset,
                       p.woffset, p.hnew, p.wnew, tpu_type_convert((sg_data_type_t)input->dtype));
}

/* Dynamic mode: output 0 gets the input's dtype and rank, the input's
 * shape with the last two dims replaced by hnew and wnew, and its element
 * count. A window that does not fit the input stops the kernel; outside a
 * run (where the assert returns) a non-positive hnew/wnew becomes 1 so the
 * output shape stays valid. */
void type_infer_crop(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(crop, p, param);
  const int dims = input->dims;
  TPUKERNEL_ASSERT_INFO(dims >= 2 && dims <= MAX_SHAPE_DIMS,
                        "crop works on the last two dims and needs an input of rank 2..%d; the input has rank %d",
                        MAX_SHAPE_DIMS, dims);
  output->dtype = input->dtype;
  output->dims = dims;
  for (int i = 0; i < MAX_SHAPE_DIMS; ++i) output->shape[i] = input->shape[i];
  if (dims >= 2 && dims <= MAX_SHAPE_DIMS) {
    const int h = input->shape[dims - 2], w = input->shape[dims - 1];
    const bool valid = p.hoffset >= 0 && p.woffset >= 0 && p.hnew >= 1 && p.wnew >= 1 &&
                       (int64_t)p.hoffset + p.hnew <= h && (int64_t)p.woffset + p.wnew <= w;
    TPUKERNEL_ASSERT_INFO(valid,
                          "crop: window (hoffset %d, woffset %d, hnew %d, wnew %d) is not inside the input's last "
                          "two dims %d x %d (offsets >= 0, sizes >= 1)",
                          p.hoffset, p.woffset, p.hnew, p.wnew, h, w);
    output->shape[dims - 2] = p.hnew >= 1 ? p.hnew : 1;
    output->shape[dims - 1] = p.wnew >= 1 ? p.wnew : 1;
  }
  int64_t elems = 1;
  for (int i = 0; i < output->dims && i < MAX_SHAPE_DIMS; ++i) elems *= output->shape[i];
  output->elem_num = (int)elems;
}
