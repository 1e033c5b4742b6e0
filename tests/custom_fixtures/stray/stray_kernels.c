/* stray_kernels.c: fx_stray copies its input. Its local layer ignores the
 * slice's height and copies the whole tensor's, as a kernel written without
 * slicing in mind does: it reads and writes past its slices, and only the
 * op tester's local-memory guard can tell (the slice it stores is right). */
#include "interface_custom_ops.h"
#include "tpu_kernel.h"
#include "tpu_utils.h"

void api_fx_stray_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  int count = 1;
  for (int i = 0; i < input->dims; ++i) count *= input->shape[i];
  dim4 shape = {1, 1, 1, count};
  tpu_gdma_cpy_S2S(output->addr, input->addr, &shape, NULL, NULL, tpu_type_convert((sg_data_type_t)input->dtype));
}

void api_fx_stray_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                        local_tensor_spec_t *output, const void *param) {
  (void)param;
  dim4 shape = {sec_info->n_slice, input->shape[1], input->shape[2], input->shape[3]};  /* h: the whole tensor's */
  tpu_bdc_cpy((local_addr_t)output->addr, (local_addr_t)input->addr, &shape, NULL, NULL,
              tpu_type_convert((sg_data_type_t)input->dtype));
}
