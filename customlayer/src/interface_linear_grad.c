/*
 * interface_linear_grad.c: linear's gradient op (global only), declared by
 * register_custom_grad(linear linear_grad) and so given, in the seed's
 * order, the output gradient, the forward inputs and the forward output:
 *
 *   inputs   dy [..., O], x [..., K], W [O, K], (b [O] with has_bias), y [..., O]
 *   outputs  dx (x's shape), dW [O, K], (db: b's shape, with has_bias)
 *
 * Parameters: linear's own (has_bias, do_relu). y masks dy where the relu
 * cut the output (y == 0).
 */
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"
#include "tpu_utils.h"

/* Checks the inputs; gives M, K and O. Stops the kernel with a message when
 * they do not fit (and returns false where the assert returns). */
static bool linear_grad_shapes(const global_tensor_spec_t *input, const linear_grad_param_t *p, int64_t *M, int *K,
                               int *O) {
  const bool flags = (p->has_bias == 0 || p->has_bias == 1) && (p->do_relu == 0 || p->do_relu == 1);
  TPUKERNEL_ASSERT_INFO(flags, "linear_grad: has_bias and do_relu must be 0 or 1; got %d and %d", p->has_bias,
                        p->do_relu);
  if (!flags) return false;
  const global_tensor_spec_t *dy = &input[0], *x = &input[1], *w = &input[2], *y = &input[3 + p->has_bias];
  const bool ranks = x->dims >= 1 && x->dims <= MAX_SHAPE_DIMS && w->dims == 2 && dy->dims == x->dims;
  TPUKERNEL_ASSERT_INFO(ranks, "linear_grad: x must have rank 1..%d, W rank 2 and dy x's rank; got %d, %d and %d",
                        MAX_SHAPE_DIMS, x->dims, w->dims, dy->dims);
  if (!ranks) return false;
  *K = x->shape[x->dims - 1];
  *O = w->shape[0];
  *M = 1;
  bool fits = w->shape[1] == *K && dy->shape[dy->dims - 1] == *O && y->dims == dy->dims;
  for (int i = 0; i < x->dims - 1; ++i) {
    *M *= x->shape[i];
    fits = fits && dy->shape[i] == x->shape[i];
  }
  for (int i = 0; i < dy->dims && fits; ++i) fits = y->shape[i] == dy->shape[i];
  TPUKERNEL_ASSERT_INFO(fits, "linear_grad: W must be [out_features, x's last dim], and dy and y x's shape with the "
                        "last dim out_features (%d)", *O);
  if (!fits) return false;
  bool same_dtype = w->dtype == x->dtype && dy->dtype == x->dtype && y->dtype == x->dtype;
  if (p->has_bias) same_dtype = same_dtype && input[3].dtype == x->dtype;
  TPUKERNEL_ASSERT_INFO(same_dtype, "linear_grad: every input must have x's dtype (SG dtype %d)", (int)x->dtype);
  return same_dtype;
}

void api_linear_grad_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(linear_grad, p, param);
  int64_t M;
  int K, O;
  if (!linear_grad_shapes(input, &p, &M, &K, &O)) return;
  tpu_impl_linear_grad_global(output[0].addr, output[1].addr, p.has_bias ? output[2].addr : 0, input[0].addr,
                              input[1].addr, input[2].addr, input[3 + p.has_bias].addr, M, K, O, p.has_bias != 0,
                              p.do_relu != 0, tpu_type_convert((sg_data_type_t)input[0].dtype));
}

static void linear_grad_copy_spec(global_tensor_spec_t *output, const global_tensor_spec_t *like,
                                  const global_tensor_spec_t *dtype_of) {
  output->dtype = dtype_of->dtype;
  output->dims = like->dims;
  int64_t elems = 1;
  for (int i = 0; i < MAX_SHAPE_DIMS; ++i) {
    output->shape[i] = like->shape[i];
    if (i < like->dims) elems *= like->shape[i];
  }
  output->elem_num = (int)elems;
}

/* Dynamic mode: each partial has its forward input's shape, dy's dtype. */
void type_infer_linear_grad(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(linear_grad, p, param);
  for (int i = 0; i < 2 + (p.has_bias == 1); ++i) linear_grad_copy_spec(&output[i], &input[1 + i], &input[0]);
}
