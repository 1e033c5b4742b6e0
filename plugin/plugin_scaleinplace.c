/*
 * plugin_scaleinplace.c: host hooks of the scaleinplace op (x *= s), the
 * sample op that updates its input in place.
 *
 * Its metadata (docs/custom-layer-build.md, "Op metadata") says so: the
 * model builder gives its output the memory of its input instead of a
 * buffer of its own, and runs it after every other layer that reads that
 * input. It is element-wise (no shape or slicing hooks needed) and
 * stateless.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <math.h>

#include "api_common.h"
#include "param_parser.h"
#include "tpu_op_metadata.h"

void inference_scaleinplace(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                            const int *input_dims, const float **inputs, float **outputs) {
  size_t count = 1;
  for (int i = 0; i < input_dims[0] && i < MAX_SHAPE_DIMS; ++i)
    count *= input_shapes[0][i] > 0 ? (size_t)input_shapes[0][i] : 0;
  if (param_size < (int)(2 * sizeof(custom_param_t))) {
    fprintf(stderr, "scaleinplace: expects 1 parameter (s) after the reserved element, but param_size is %d bytes\n",
            param_size);
    for (size_t i = 0; i < count; ++i) outputs[0][i] = NAN;
    return;
  }
  PARSE_PARAM(scaleinplace, p, param);
  for (size_t i = 0; i < count; ++i) outputs[0][i] = inputs[0][i] * p.s;
}

bool local_gen_support_scaleinplace(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}

const char *param_types_scaleinplace(void) { return "s:float"; }

/* Input 0 is updated in place: output 0 is input 0's memory. */
void metadata_scaleinplace(void *param, int param_size, int num_inputs, tpu_op_metadata_t *metadata) {
  (void)param;
  (void)param_size;
  (void)num_inputs;
  metadata->num_inplace_inputs = 1;
  metadata->is_elementwise = true;
  metadata->is_stateless = true;
}
