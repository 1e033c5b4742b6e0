/* partial_kernels.c: only the global layer of fx_partial; the registry also
 * names its local layer and scratch sizes, which nobody wrote. */
#include "interface_custom_ops.h"
#include "tpu_kernel.h"
#include "tpu_utils.h"

void api_fx_partial_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  int count = 1;
  for (int i = 0; i < input->dims; ++i) count *= input->shape[i];
  dim4 shape = {1, 1, 1, count};
  tpu_gdma_cpy_S2S(output->addr, input->addr, &shape, NULL, NULL, tpu_type_convert((sg_data_type_t)input->dtype));
}
