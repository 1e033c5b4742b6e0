/*
 * interface_ceiladd.c: the ceiladd op's API for the compiler and the firmware.
 *
 *   api_ceiladd_global      whole tensor in global memory, any size and rank
 *   api_ceiladd_local       one layer-group slice in local memory
 *   api_ceiladd_local_bfsz  local scratch bytes per NPU for such a slice (the
 *                          slice as fp32)
 *
 * Parameters: b (float). The dtype comes from the input spec (fp32, fp16,
 * bf16); the output has the input's dtype and shape.
 */
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"
#include "tpu_utils.h"

void api_ceiladd_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(ceiladd, p, param);
  dim4 folded;
  parse_NCHW(input->shape, input->dims, &folded);
  const int shape[4] = {folded.n, folded.c, folded.h, folded.w};
  tpu_impl_ceiladd_global(output->addr, input->addr, shape, p.b, tpu_type_convert((sg_data_type_t)input->dtype));
}

void api_ceiladd_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input, local_tensor_spec_t *output,
                       const void *param) {
  PARSE_PARAM(ceiladd, p, param);
  int shape[4];
  parse_input_slice_shape(sec_info, input, shape);
  tpu_impl_ceiladd_local((local_addr_t)output->addr, (local_addr_t)input->addr, tpu_impl_local_buffer(input, param),
                         shape, p.b, tpu_type_convert((sg_data_type_t)input->dtype));
}

int api_ceiladd_local_bfsz(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                           local_tensor_spec_t *output, const void *param) {
  (void)output;
  (void)param;
  int shape[4];
  parse_input_slice_shape(sec_info, input, shape);
  const dim4 s = {shape[0], shape[1], shape[2], shape[3]};
  /* The computation runs in fp32 in the scratch (see tpu_impl_unary_add_C). */
  return tpu_get_local_size(&s, DT_FP32, tpu_impl_local_start_npu(input), true);
}
