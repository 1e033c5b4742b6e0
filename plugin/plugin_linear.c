/*
 * plugin_linear.c: host hooks of the linear op,
 * y[m, o] = relu?(sum_k x[m, k] * W[o, k] + b[o]).
 *
 * Inputs x [..., K], W [O, K] and, with has_bias, b [O]; the output is x's
 * shape with the last dim O. shape_inference_linear gives that shape,
 * inference_linear the reference on float32 buffers.
 *
 * The reference follows the sum order the cmodel documents for
 * tpu_bdc_fp_mm* (docs/bdc.md): k ascending from +0, each product and each
 * sum rounded to fp32, the bias added last, then relu. It computes each
 * step in double and rounds it to float: a product of two floats is exact
 * in double and a sum of two floats rounded to double then to float is the
 * float sum rounded once (53 >= 2 * 24 + 2), so the result is the fp32
 * result bit for bit, whether or not the compiler would fuse a float
 * multiply-add. An fp32 run must therefore match exactly; fp16/bf16 runs
 * are this fp32 value rounded once.
 *
 * Invalid input (W not [O, K] for x's K, a bias of the wrong size, missing
 * parameters) is reported on stderr and the output filled with NaN.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api_common.h"
#include "param_parser.h"
#include "tpu_op_metadata.h"

typedef struct {
  size_t M;
  int K, O;
} linear_dims_t;

static bool linear_check(const void *param, int param_size, const int (*shapes)[MAX_SHAPE_DIMS], const int *dims,
                         linear_param_t *p, linear_dims_t *d) {
  d->M = 1;
  d->K = d->O = 1;
  if (param_size < (int)(3 * sizeof(custom_param_t))) {
    fprintf(stderr, "linear: expects 2 parameters (has_bias, do_relu) after the reserved element, but param_size is %d bytes\n",
            param_size);
    return false;
  }
  *p = linear_parse_param(get_real_param_ptr(param));
  if (dims[0] < 1 || dims[0] > MAX_SHAPE_DIMS || dims[1] != 2) {
    fprintf(stderr, "linear: x must have rank 1..%d and W rank 2 ([out_features, in_features]); got %d and %d\n",
            MAX_SHAPE_DIMS, dims[0], dims[1]);
    return false;
  }
  d->K = shapes[0][dims[0] - 1];
  for (int i = 0; i < dims[0] - 1; ++i) d->M *= (size_t)shapes[0][i];
  d->O = shapes[1][0];
  if (shapes[1][1] != d->K) {
    fprintf(stderr, "linear: W is [%d, %d] but x's last dim (in_features) is %d\n", shapes[1][0], shapes[1][1], d->K);
    return false;
  }
  if ((p->has_bias != 0 && p->has_bias != 1) || (p->do_relu != 0 && p->do_relu != 1)) {
    fprintf(stderr, "linear: has_bias and do_relu must be 0 or 1; got %d and %d\n", p->has_bias, p->do_relu);
    return false;
  }
  if (p->has_bias) {
    int64_t count = 1;
    for (int i = 0; i < dims[2] && i < MAX_SHAPE_DIMS; ++i) count *= shapes[2][i];
    if (count != d->O) {
      fprintf(stderr, "linear: b has %lld values but W has %d rows (out_features)\n", (long long)count, d->O);
      return false;
    }
  }
  return true;
}

void shape_inference_linear(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                            const int *input_dims, int (*output_shapes)[MAX_SHAPE_DIMS], int *output_dims) {
  linear_param_t p;
  linear_dims_t d;
  const bool valid = linear_check(param, param_size, input_shapes, input_dims, &p, &d);
  const int rank = input_dims[0] < 1 ? 1 : input_dims[0] > MAX_SHAPE_DIMS ? MAX_SHAPE_DIMS : input_dims[0];
  for (int i = 0; i < MAX_SHAPE_DIMS; ++i) output_shapes[0][i] = i < rank ? input_shapes[0][i] : 0;
  if (valid) output_shapes[0][rank - 1] = d.O;
  output_dims[0] = rank;
}

void inference_linear(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS], const int *input_dims,
                      const float **inputs, float **outputs) {
  linear_param_t p;
  linear_dims_t d;
  if (!linear_check(param, param_size, input_shapes, input_dims, &p, &d)) {
    /* The output shape_inference_linear reported: x's shape. */
    size_t count = 1;
    for (int i = 0; i < input_dims[0] && i < MAX_SHAPE_DIMS; ++i) count *= (size_t)input_shapes[0][i];
    for (size_t i = 0; i < count; ++i) outputs[0][i] = NAN;
    return;
  }
  const float *x = inputs[0], *w = inputs[1], *b = p.has_bias ? inputs[2] : NULL;
  for (size_t m = 0; m < d.M; ++m)
    for (int o = 0; o < d.O; ++o) {
      float acc = 0.0f;
      for (int k = 0; k < d.K; ++k) {
        const float product = (float)((double)x[m * (size_t)d.K + (size_t)k] * (double)w[(size_t)o * (size_t)d.K + (size_t)k]);
        acc = (float)((double)acc + (double)product);
      }
      if (b) acc = (float)((double)acc + (double)b[o]);
      if (p.do_relu) acc = acc > 0.0f ? acc : 0.0f;
      outputs[0][m * (size_t)d.O + (size_t)o] = acc;
    }
}

/* The parameters, by name and kind: the SDK packs the JSON / TpuLang
 * parameters in this order and converts or refuses a value of the wrong kind
 * (a float for an int is refused unless it is a whole number). */
const char *param_types_linear(void) { return "has_bias:int, do_relu:int"; }

/* The global kernel splits the output rows across the cores of a
 * multi-core launch (tpu_impl_linear.c): each output element is the same
 * sum on any number of cores, so the op declares itself multi-core; the op
 * tester checks that 1 and N cores give the same bytes, and a model runs
 * its layers on every core (docs/custom-layer-build.md, "Op metadata"). */
void metadata_linear(void *param, int param_size, int num_inputs, tpu_op_metadata_t *metadata) {
  (void)param;
  (void)param_size;
  (void)num_inputs;
  metadata->is_multi_core = true;
}
