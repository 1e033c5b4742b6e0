/*
 * plugin_scaleadd.c: host hooks of the scaleadd op (two inputs a and b,
 * two outputs a * scale and a * scale + b), the sample op whose kernels are
 * PPL (customlayer/PplBackend). A multi-output op needs shape_inference_:
 * the default gives only output 0 a shape.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "api_common.h"
#include "param_parser.h"

static size_t element_count(const int *shape, int dims) {
  size_t count = 1;
  for (int i = 0; i < dims && i < MAX_SHAPE_DIMS; ++i) count *= shape[i] > 0 ? (size_t)shape[i] : 0;
  return count;
}

void inference_scaleadd(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                        const int *input_dims, const float **inputs, float **outputs) {
  const size_t count = element_count(input_shapes[0], input_dims[0]);
  const size_t b_count = element_count(input_shapes[1], input_dims[1]);
  if (param_size < (int)(2 * sizeof(custom_param_t)) || b_count != count) {
    if (b_count != count)
      fprintf(stderr, "scaleadd: input 1 has %zu elements, input 0 has %zu: they must have one shape\n", b_count,
              count);
    else
      fprintf(stderr, "scaleadd: expects 1 parameter (scale) after the reserved element, but param_size is %d bytes\n",
              param_size);
    for (size_t i = 0; i < count; ++i) outputs[0][i] = outputs[1][i] = NAN;
    return;
  }
  PARSE_PARAM(scaleadd, p, param);
  for (size_t i = 0; i < count; ++i) {
    outputs[0][i] = inputs[0][i] * p.scale;
    outputs[1][i] = inputs[0][i] * p.scale + inputs[1][i];
  }
}

void shape_inference_scaleadd(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                              const int *input_dims, int (*output_shapes)[MAX_SHAPE_DIMS], int *output_dims) {
  (void)param;
  (void)param_size;
  for (int out = 0; out < 2; ++out) {
    output_dims[out] = input_dims[0];
    for (int i = 0; i < input_dims[0] && i < MAX_SHAPE_DIMS; ++i) output_shapes[out][i] = input_shapes[0][i];
  }
}

const char *param_types_scaleadd(void) { return "scale:float"; }
