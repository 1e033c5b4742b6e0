/*
 * backend_custom_param.h: the parameter structs of the sample custom ops.
 *
 * One struct per op, named <op>_param_t. Its fields are the op's parameters
 * in the order the frontend passes them (TpuLang `params` dict order); each
 * parameter occupies one custom_param_t element of the packed array, after
 * the reserved element 0. param_parser.h fills these structs.
 *
 * Shared by the kernels, the backend/firmware interface and the host
 * plugin, so it must stay plain C11 without tpu-kernel calls.
 */
#ifndef CUSTOMLAYER_BACKEND_CUSTOM_PARAM_H
#define CUSTOMLAYER_BACKEND_CUSTOM_PARAM_H

#ifdef __cplusplus
extern "C" {
#endif

/* absadd: out = |x| + b */
typedef struct {
  float b;
} absadd_param_t;

/* ceiladd: out = ceil(x) + b */
typedef struct {
  float b;
} ceiladd_param_t;

/* scaleinplace: x *= s, in place (output 0 is input 0's memory) */
typedef struct {
  float s;
} scaleinplace_param_t;

/* scaleadd (a PPL op, customlayer/PplBackend): out0 = a * scale, out1 = a * scale + b */
typedef struct {
  float scale;
} scaleadd_param_t;

/* hardsigmoid (a PPL op with a local entry, customlayer/PplBackend):
 * out = min(max(x * alpha + beta, 0), 1) */
typedef struct {
  float alpha;
  float beta;
} hardsigmoid_param_t;

/* swapchannel: out[:, c] = in[:, order[c]] for c = 0, 1, 2 (one int[3] parameter) */
typedef struct {
  int order[3];
} swapchannel_param_t;

/* crop: out[..., i, j] = in[..., hoffset + i, woffset + j],
 * 0 <= i < hnew, 0 <= j < wnew (four int parameters, in this order) */
typedef struct {
  int hoffset;
  int woffset;
  int hnew;
  int wnew;
} crop_param_t;

/* linear: y[m, o] = sum_k x[m, k] * W[o, k] (+ b[o]) (relu), a fully
 * connected layer with the weight in PyTorch's [out_features, in_features]
 * layout. x, W and b are input tensors (0, 1 and, with has_bias, 2);
 * has_bias and do_relu are int parameters (0 or 1), in this order. */
typedef struct {
  int has_bias;
  int do_relu;
} linear_param_t;

/* leakyrelu: y = x > 0 ? x : alpha * x (one float parameter) */
typedef struct {
  float alpha;
} leakyrelu_param_t;

/* leakyrelu_grad: dx = x > 0 ? dy : alpha * dy, inputs dy and x; the
 * forward op's parameters (register_custom_grad passes them as they are) */
typedef leakyrelu_param_t leakyrelu_grad_param_t;

/* linear_grad: inputs dy, x, W, [b,] y (the output gradient, the forward
 * inputs, the forward output); outputs dx, dW and, with has_bias, db; the
 * forward op's parameters. */
typedef linear_param_t linear_grad_param_t;

#ifdef __cplusplus
}
#endif

#endif /* CUSTOMLAYER_BACKEND_CUSTOM_PARAM_H */
