/* plugin_scaleclip.c: the host reference of scaleclip. Like the vendor's
 * swapchannel plugin (assert(C == 3)), it checks its parameters with
 * assert, which must fire in a build of the customlayer flow. */
#include <assert.h>

#include "api_common.h"
#include "param_parser.h"

void inference_scaleclip(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                         const int *input_dims, const float **inputs, float **outputs) {
  PARSE_PARAM(scaleclip, p, param);
  assert(p.lo <= p.hi);
  int count = 1;
  for (int i = 0; i < input_dims[0]; ++i) count *= input_shapes[0][i];
  for (int i = 0; i < count; ++i) {
    float v = inputs[0][i] * p.scale;
    v = v < p.lo ? p.lo : v;
    outputs[0][i] = v > p.hi ? p.hi : v;
  }
}
