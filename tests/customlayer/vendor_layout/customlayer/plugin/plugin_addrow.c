/* plugin_addrow.c: the host reference of addrow and its layer-group hook. */
#include <stdbool.h>

#include "api_common.h"
#include "param_parser.h"

void inference_addrow(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                      const int *input_dims, const float **inputs, float **outputs) {
  PARSE_PARAM(addrow, p, param);
  int count = 1;
  for (int i = 0; i < input_dims[0]; ++i) count *= input_shapes[0][i];
  for (int i = 0; i < count; ++i) outputs[0][i] = inputs[0][i] + p.b;
}

bool local_gen_support_addrow(void *param, int param_size) { return true; }
