/*
 * plugin_scaleshift.c: host hooks of scaleshift (libplugin_custom.so).
 *
 * inference_<op> is the reference: fp32 host buffers whatever the model's
 * dtype. The other hooks keep their defaults: output shape = input shape,
 * global layer only, no forced dynamic run.
 */
#include <stddef.h>

#include "api_common.h"
#include "param_parser.h"

void inference_scaleshift(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                          const int *input_dims, const float **inputs, float **outputs) {
  (void)param_size;
  PARSE_PARAM(scaleshift, p, param);
  size_t count = 1;
  for (int i = 0; i < input_dims[0]; ++i) count *= (size_t)input_shapes[0][i];
  for (size_t i = 0; i < count; ++i) outputs[0][i] = inputs[0][i] * p.scale + p.shift;
}
