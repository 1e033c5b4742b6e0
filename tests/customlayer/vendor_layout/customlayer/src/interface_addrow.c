/* interface_addrow.c: the addrow op's API: global, local and the local
 * buffer size. Parameters: b (float). */
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"
#include "tpu_utils.h"

static int start_npu(const local_tensor_spec_t *spec) {
  const uint64_t local_total = (uint64_t)NPU_NUM * (uint64_t)LOCAL_MEM_SIZE;
  return spec->addr < local_total ? tpu_npu_index((local_addr_t)spec->addr) : 0;
}

void api_addrow_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(addrow, p, param);
  dim4 shape;
  parse_NCHW(input->shape, input->dims, &shape);
  tpu_impl_addrow_global(output->addr, input->addr, &shape, p.b, tpu_type_convert((sg_data_type_t)input->dtype));
}

void api_addrow_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                      local_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(addrow, p, param);
  int slice[4];
  parse_input_slice_shape(sec_info, input, slice);
  const dim4 shape = {slice[0], slice[1], slice[2], slice[3]};
  /* The buffer starts on the input's NPU, as element-wise operands must. */
  const local_addr_t buffer =
      (local_addr_t)(start_npu(input) * LOCAL_MEM_SIZE + get_local_buffer_addr(param) % LOCAL_MEM_SIZE);
  tpu_impl_addrow_local((local_addr_t)output->addr, (local_addr_t)input->addr, buffer, &shape, p.b,
                        tpu_type_convert((sg_data_type_t)input->dtype));
}

int api_addrow_local_bfsz(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                          local_tensor_spec_t *output, const void *param) {
  int slice[4];
  parse_input_slice_shape(sec_info, input, slice);
  const dim4 shape = {slice[0], slice[1], slice[2], slice[3]};
  return tpu_get_local_size(&shape, DT_FP32, start_npu(input), true);
}
