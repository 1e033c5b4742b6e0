/*
 * plugin_linear_grad.c: host hooks of linear_grad, the gradient op of linear
 * (register_custom_grad(linear linear_grad)).
 *
 * Inputs dy [..., O], x [..., K], W [O, K], (b [O] with has_bias), y [..., O];
 * outputs dx (x's shape), dW (W's shape), (db, b's shape). With
 * dz = do_relu ? (y > 0 ? dy : 0) : dy:
 *   dx[m, k] = sum_o dz[m, o] W[o, k],  dW[o, k] = sum_m dz[m, o] x[m, k],
 *   db[o] = sum_m dz[m, o]
 * each summed in the order the kernel's matrix unit sums (docs/bdc.md):
 * the reduction index ascending from +0, every product and every sum
 * rounded to fp32 (computed in double and rounded to float, which is the
 * fp32 operation rounded once), so fp32 runs must match bit for bit.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api_common.h"
#include "param_parser.h"

typedef struct {
  size_t M;
  int K, O;
  int y_index; /* 3, or 4 with a bias */
} linear_grad_dims_t;

static bool linear_grad_check(const void *param, int param_size, const int (*shapes)[MAX_SHAPE_DIMS], const int *dims,
                              linear_grad_param_t *p, linear_grad_dims_t *d) {
  d->M = 1;
  d->K = d->O = 1;
  d->y_index = 3;
  if (param_size < (int)(3 * sizeof(custom_param_t))) {
    fprintf(stderr, "linear_grad: expects 2 parameters (has_bias, do_relu), but param_size is %d bytes\n", param_size);
    return false;
  }
  *p = linear_grad_parse_param(get_real_param_ptr(param));
  if ((p->has_bias != 0 && p->has_bias != 1) || (p->do_relu != 0 && p->do_relu != 1)) {
    fprintf(stderr, "linear_grad: has_bias and do_relu must be 0 or 1; got %d and %d\n", p->has_bias, p->do_relu);
    return false;
  }
  d->y_index = 3 + p->has_bias;
  if (dims[1] < 1 || dims[1] > MAX_SHAPE_DIMS || dims[2] != 2 || dims[0] != dims[1] || dims[d->y_index] != dims[0]) {
    fprintf(stderr, "linear_grad: dy, x and y must have one rank 1..%d and W rank 2\n", MAX_SHAPE_DIMS);
    return false;
  }
  d->K = shapes[1][dims[1] - 1];
  d->O = shapes[2][0];
  bool fits = shapes[2][1] == d->K && shapes[0][dims[0] - 1] == d->O;
  for (int i = 0; i < dims[1] - 1; ++i) {
    d->M *= (size_t)shapes[1][i];
    fits = fits && shapes[0][i] == shapes[1][i];
  }
  for (int i = 0; i < dims[0]; ++i) fits = fits && shapes[d->y_index][i] == shapes[0][i];
  if (!fits) fprintf(stderr, "linear_grad: W must be [O, K] for x [..., K], dy and y x's shape with the last dim O\n");
  return fits;
}

void shape_inference_linear_grad(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                                 const int *input_dims, int (*output_shapes)[MAX_SHAPE_DIMS], int *output_dims) {
  linear_grad_param_t p;
  linear_grad_dims_t d;
  linear_grad_check(param, param_size, input_shapes, input_dims, &p, &d);
  const int outputs = p.has_bias == 1 ? 3 : 2;
  for (int o = 0; o < outputs; ++o) {
    output_dims[o] = input_dims[1 + o];
    for (int i = 0; i < MAX_SHAPE_DIMS; ++i) output_shapes[o][i] = input_shapes[1 + o][i];
  }
}

static float linear_grad_dz(const float *dy, const float *y, size_t at, bool relu) {
  return relu && !(y[at] > 0.0f) ? 0.0f : dy[at];
}

static float linear_grad_add_product(float acc, float a, float b) {
  const float product = (float)((double)a * (double)b);
  return (float)((double)acc + (double)product);
}

void inference_linear_grad(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                           const int *input_dims, const float **inputs, float **outputs) {
  linear_grad_param_t p = {0, 0};
  linear_grad_dims_t d;
  if (!linear_grad_check(param, param_size, input_shapes, input_dims, &p, &d)) {
    /* NaN in the outputs shape_inference_linear_grad reported: the shapes of x, W (and b). */
    for (int o = 0; o < (p.has_bias == 1 ? 3 : 2); ++o) {
      size_t count = 1;
      for (int i = 0; i < input_dims[1 + o] && i < MAX_SHAPE_DIMS; ++i) count *= (size_t)input_shapes[1 + o][i];
      for (size_t i = 0; i < count; ++i) outputs[o][i] = NAN;
    }
    return;
  }
  const size_t M = d.M, K = (size_t)d.K, O = (size_t)d.O;
  const float *dy = inputs[0], *x = inputs[1], *w = inputs[2], *y = inputs[d.y_index];
  const bool relu = p.do_relu == 1;
  for (size_t m = 0; m < M; ++m)
    for (size_t k = 0; k < K; ++k) {
      float acc = 0.0f;
      for (size_t o = 0; o < O; ++o) acc = linear_grad_add_product(acc, linear_grad_dz(dy, y, m * O + o, relu), w[o * K + k]);
      outputs[0][m * K + k] = acc;
    }
  for (size_t o = 0; o < O; ++o) {
    for (size_t k = 0; k < K; ++k) {
      float acc = 0.0f;
      for (size_t m = 0; m < M; ++m) acc = linear_grad_add_product(acc, linear_grad_dz(dy, y, m * O + o, relu), x[m * K + k]);
      outputs[1][o * K + k] = acc;
    }
    if (p.has_bias != 1) continue;
    float sum = 0.0f;
    for (size_t m = 0; m < M; ++m) sum = linear_grad_add_product(sum, linear_grad_dz(dy, y, m * O + o, relu), 1.0f);
    outputs[2][o] = sum;
  }
}

const char *param_types_linear_grad(void) { return "has_bias:int, do_relu:int"; }
