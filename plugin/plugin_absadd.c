/*
 * plugin_absadd.c: host hooks of the absadd op (out = |x| + b).
 *
 * inference_absadd computes the reference on float32 host buffers (the
 * compiler's interpreter feeds every dtype as fp32); the default shape
 * inference (output 0 = input 0's shape) applies. local_gen_support_absadd
 * lets the compiler put the op into layer groups (api_absadd_local).
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "api_common.h"
#include "param_parser.h"
#include "tpu_onnx_op.h"
#include "tpu_op_metadata.h"

static size_t absadd_elements(const int *shape, int dims) {
  size_t count = 1;
  for (int i = 0; i < dims && i < MAX_SHAPE_DIMS; ++i) count *= shape[i] > 0 ? (size_t)shape[i] : 0;
  return count;
}

void inference_absadd(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS], const int *input_dims,
                      const float **inputs, float **outputs) {
  const size_t count = absadd_elements(input_shapes[0], input_dims[0]);
  if (param_size < (int)(2 * sizeof(custom_param_t))) {
    fprintf(stderr, "absadd: expects 1 parameter (b) after the reserved element, but param_size is %d bytes\n",
            param_size);
    for (size_t i = 0; i < count; ++i) outputs[0][i] = NAN;
    return;
  }
  PARSE_PARAM(absadd, p, param);
  for (size_t i = 0; i < count; ++i) outputs[0][i] = fabsf(inputs[0][i]) + p.b;
}

bool local_gen_support_absadd(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}

/* The parameters, by name and kind: the SDK packs the JSON / TpuLang
 * parameters in this order and converts or refuses a value of the wrong kind
 * (an integer for b becomes the float, not its bits). */
const char *param_types_absadd(void) { return "b:float"; }

/* What the op is, for the model builder (docs/custom-layer-build.md, "Op
 * metadata"): out = |x| + b element by element, so any slicing of the input
 * is the same slicing of the output, and the result depends on the input
 * and b alone, so two layers with the same input and b compute the same. */
void metadata_absadd(void *param, int param_size, int num_inputs, tpu_op_metadata_t *metadata) {
  (void)param;
  (void)param_size;
  (void)num_inputs;
  metadata->is_elementwise = true;
  metadata->is_stateless = true;
}

/* The ONNX identity (docs/onnx.md): a node tpu.sdk::AbsAdd (opset 1 of the
 * domain and later) with one float input, one output and a float attribute
 * b (default 0), which is the op's parameter b. */
const tpu_onnx_op_t *onnx_op_absadd(void) {
  static const tpu_onnx_op_t op = {
      .domain = "tpu.sdk",
      .op_type = "AbsAdd",
      .since_version = 1,
      .until_version = 0,
      .num_inputs = 1,
      .num_outputs = 1,
      .dtypes = TPU_ONNX_FP32 | TPU_ONNX_FP16 | TPU_ONNX_BF16,
      .num_attrs = 1,
      .attrs = {{.name = "b", .type = TPU_ONNX_ATTR_FLOAT, .param_slot = 1, .required = false, .default_value = 0.0}},
  };
  return &op;
}
