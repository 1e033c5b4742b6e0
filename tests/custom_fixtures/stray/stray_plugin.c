/* stray_plugin.c: fx_stray's reference (a copy) and its layer-group hook. */
#include <stdbool.h>
#include <string.h>

#include "api_common.h"

void inference_fx_stray(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                        const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  int count = 1;
  for (int i = 0; i < input_dims[0]; ++i) count *= input_shapes[0][i];
  memcpy(outputs[0], inputs[0], sizeof(float) * (size_t)count);
}

bool local_gen_support_fx_stray(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}
