/* plugin_scaleclip.c: the host reference of scaleclip. */
#include "api_common.h"
#include "param_parser.h"

void inference_scaleclip(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                         const int *input_dims, const float **inputs, float **outputs) {
  PARSE_PARAM(scaleclip, p, param);
  int count = 1;
  for (int i = 0; i < input_dims[0]; ++i) count *= input_shapes[0][i];
  for (int i = 0; i < count; ++i) {
    float v = inputs[0][i] * p.scale;
    v = v < p.lo ? p.lo : v;
    outputs[0][i] = v > p.hi ? p.hi : v;
  }
}
