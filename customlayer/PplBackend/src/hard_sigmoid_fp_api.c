/*
 * hard_sigmoid_fp_api.c: the hardsigmoid op's API, a PPL op with a local
 * entry (register_custom_ppl_op and register_custom_ppl_local_op): one
 * float input, one output of its shape and dtype,
 *
 *   out = min(max(x * alpha + beta, 0), 1)
 *
 * Parameters: alpha, beta (floats). The kernels are PPL (hard_sigmoid_fp.pl).
 *
 *   api_hardsigmoid_global      the whole tensor in global memory
 *   api_hardsigmoid_local       one layer-group slice in local memory
 *   api_hardsigmoid_local_bfsz  the fp32 work buffer of a 16-bit slice
 */
#include "helper.h"
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"

void api_hardsigmoid_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(hardsigmoid, p, param);
  int length = 1;
  for (int i = 0; i < input[0].dims; ++i) length *= input[0].shape[i];
  hard_sigmoid_tiling(output[0].addr, input[0].addr, p.alpha, p.beta, length, input[0].dtype);
}

void api_hardsigmoid_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                           local_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(hardsigmoid, p, param);
  int shape[4];
  parse_input_slice_shape(sec_info, input, shape);
  const unsigned lane_bytes = (unsigned)LOCAL_MEM_SIZE;
  const int lane = tpu_impl_local_start_npu(input);
  const int work = (int)(tpu_impl_local_buffer(input, param) % lane_bytes);
  hard_sigmoid_local_slice((int)(output->addr % lane_bytes), (int)(input->addr % lane_bytes), work, lane, p.alpha,
                           p.beta, shape, input->dtype);
}

/* fp32 slices are computed in the output; 16-bit ones through an fp32 copy. */
int api_hardsigmoid_local_bfsz(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                               local_tensor_spec_t *output, const void *param) {
  (void)output;
  (void)param;
  if (input->dtype == SG_DTYPE_FP32) return 0;
  int shape[4];
  parse_input_slice_shape(sec_info, input, shape);
  const dim4 s = {shape[0], shape[1], shape[2], shape[3]};
  return tpu_get_local_size(&s, DT_FP32, tpu_impl_local_start_npu(input), true);
}
