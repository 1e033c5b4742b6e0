/*
 * plugin_hardsigmoid.c: host hooks of the hardsigmoid op,
 * out = min(max(x * alpha + beta, 0), 1), the sample PPL op with a local
 * entry (customlayer/PplBackend/src/hard_sigmoid_fp.pl). The default shape
 * inference (output 0 = input 0's shape) applies; local_gen_support lets
 * the compiler put the op into layer groups (api_hardsigmoid_local).
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "api_common.h"
#include "param_parser.h"
#include "tpu_op_metadata.h"

void inference_hardsigmoid(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                           const int *input_dims, const float **inputs, float **outputs) {
  size_t count = 1;
  for (int i = 0; i < input_dims[0] && i < MAX_SHAPE_DIMS; ++i)
    count *= input_shapes[0][i] > 0 ? (size_t)input_shapes[0][i] : 0;
  if (param_size < (int)(3 * sizeof(custom_param_t))) {
    fprintf(stderr,
            "hardsigmoid: expects 2 parameters (alpha, beta) after the reserved element, but param_size is %d bytes\n",
            param_size);
    for (size_t i = 0; i < count; ++i) outputs[0][i] = NAN;
    return;
  }
  PARSE_PARAM(hardsigmoid, p, param);
  for (size_t i = 0; i < count; ++i) {
    /* The kernel's order: a product, a sum, then the clamps, each in fp32. */
    const float scaled = inputs[0][i] * p.alpha;
    const float shifted = scaled + p.beta;
    outputs[0][i] = fminf(fmaxf(shifted, 0.0f), 1.0f);
  }
}

bool local_gen_support_hardsigmoid(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}

const char *param_types_hardsigmoid(void) { return "alpha:float, beta:float"; }

/* Element by element and stateless (docs/custom-layer-build.md, "Op
 * metadata"). */
void metadata_hardsigmoid(void *param, int param_size, int num_inputs, tpu_op_metadata_t *metadata) {
  (void)param;
  (void)param_size;
  (void)num_inputs;
  metadata->is_elementwise = true;
  metadata->is_stateless = true;
}
