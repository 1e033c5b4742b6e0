/*
 * plugin_leakyrelu.c: host hooks of leakyrelu (y = x > 0 ? x : alpha * x)
 * and of its gradient op leakyrelu_grad (dx = x > 0 ? dy : alpha * dy,
 * inputs dy and x; register_custom_grad in register_ops.cmake).
 *
 * The references compute alpha * v in float (exact in double, rounded once),
 * which is what the kernels compute in fp32 before rounding into the dtype.
 * Both ops are element-wise and stateless; the default shape inference
 * (output 0 = input 0's shape) applies.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "api_common.h"
#include "param_parser.h"
#include "tpu_onnx_op.h"
#include "tpu_op_metadata.h"

static size_t leakyrelu_elements(const int *shape, int dims) {
  size_t count = 1;
  for (int i = 0; i < dims && i < MAX_SHAPE_DIMS; ++i) count *= shape[i] > 0 ? (size_t)shape[i] : 0;
  return count;
}

/* alpha, or false (and a message) when the parameter is missing. */
static bool leakyrelu_alpha(const char *op, void *param, int param_size, float *alpha) {
  if (param_size < (int)(2 * sizeof(custom_param_t))) {
    fprintf(stderr, "%s: expects 1 parameter (alpha) after the reserved element, but param_size is %d bytes\n", op,
            param_size);
    return false;
  }
  *alpha = leakyrelu_parse_param(get_real_param_ptr(param)).alpha;
  return true;
}

void inference_leakyrelu(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS], const int *input_dims,
                         const float **inputs, float **outputs) {
  const size_t count = leakyrelu_elements(input_shapes[0], input_dims[0]);
  float alpha;
  if (!leakyrelu_alpha("leakyrelu", param, param_size, &alpha)) {
    for (size_t i = 0; i < count; ++i) outputs[0][i] = NAN;
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const float x = inputs[0][i];
    outputs[0][i] = x > 0.0f ? x : (float)((double)alpha * (double)x);
  }
}

void inference_leakyrelu_grad(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                              const int *input_dims, const float **inputs, float **outputs) {
  const size_t count = leakyrelu_elements(input_shapes[0], input_dims[0]);
  float alpha;
  if (!leakyrelu_alpha("leakyrelu_grad", param, param_size, &alpha) ||
      count != leakyrelu_elements(input_shapes[1], input_dims[1])) {
    if (param_size >= (int)(2 * sizeof(custom_param_t)))
      fprintf(stderr, "leakyrelu_grad: dy and x must have the same number of elements\n");
    for (size_t i = 0; i < count; ++i) outputs[0][i] = NAN;
    return;
  }
  const float *dy = inputs[0], *x = inputs[1];
  for (size_t i = 0; i < count; ++i) outputs[0][i] = x[i] > 0.0f ? dy[i] : (float)((double)alpha * (double)dy[i]);
}

const char *param_types_leakyrelu(void) { return "alpha:float"; }
const char *param_types_leakyrelu_grad(void) { return "alpha:float"; }

/* Both are element-wise (each output element depends on the inputs at its
 * index only) and stateless. */
void metadata_leakyrelu(void *param, int param_size, int num_inputs, tpu_op_metadata_t *metadata) {
  (void)param;
  (void)param_size;
  (void)num_inputs;
  metadata->is_elementwise = true;
  metadata->is_stateless = true;
}

void metadata_leakyrelu_grad(void *param, int param_size, int num_inputs, tpu_op_metadata_t *metadata) {
  metadata_leakyrelu(param, param_size, num_inputs, metadata);
}

/* The ONNX identity (docs/onnx.md), PopART's custom-op example: a node
 * com.acme::LeakyRelu (opset 1 of the domain and later), one float input,
 * one output, attribute alpha (default 0.01, as ONNX's own LeakyRelu)
 * which is the op's parameter alpha. */
const tpu_onnx_op_t *onnx_op_leakyrelu(void) {
  static const tpu_onnx_op_t op = {
      .domain = "com.acme",
      .op_type = "LeakyRelu",
      .since_version = 1,
      .until_version = 0,
      .num_inputs = 1,
      .num_outputs = 1,
      .dtypes = TPU_ONNX_FP32 | TPU_ONNX_FP16 | TPU_ONNX_BF16,
      .num_attrs = 1,
      .attrs = {{.name = "alpha", .type = TPU_ONNX_ATTR_FLOAT, .param_slot = 1, .required = false,
                 .default_value = 0.01}},
  };
  return &op;
}
