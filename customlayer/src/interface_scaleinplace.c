/*
 * interface_scaleinplace.c: the scaleinplace op's API (x *= s, in place).
 *
 *   api_scaleinplace_global      whole tensor in global memory; the model
 *                                builder passes output->addr == input->addr
 *   api_scaleinplace_local       one layer-group slice in local memory
 *   api_scaleinplace_local_bfsz  local scratch bytes per NPU for a slice
 *                                (the slice as fp32)
 *
 * Parameters: s (float). The output has the input's dtype and shape.
 */
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"
#include "tpu_utils.h"

void api_scaleinplace_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(scaleinplace, p, param);
  dim4 folded;
  parse_NCHW(input->shape, input->dims, &folded);
  const int shape[4] = {folded.n, folded.c, folded.h, folded.w};
  tpu_impl_scaleinplace_global(output->addr, input->addr, shape, p.s, tpu_type_convert((sg_data_type_t)input->dtype));
}

void api_scaleinplace_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                            local_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(scaleinplace, p, param);
  int shape[4];
  parse_input_slice_shape(sec_info, input, shape);
  tpu_impl_scaleinplace_local((local_addr_t)output->addr, (local_addr_t)input->addr,
                              tpu_impl_local_buffer(input, param), shape, p.s,
                              tpu_type_convert((sg_data_type_t)input->dtype));
}

int api_scaleinplace_local_bfsz(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                                local_tensor_spec_t *output, const void *param) {
  (void)output;
  (void)param;
  int shape[4];
  parse_input_slice_shape(sec_info, input, shape);
  const dim4 s = {shape[0], shape[1], shape[2], shape[3]};
  return tpu_get_local_size(&s, DT_FP32, tpu_impl_local_start_npu(input), true);
}
