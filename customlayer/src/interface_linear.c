/*
 * interface_linear.c: the linear op's API (global only) and its dynamic-mode
 * type inference.
 *
 * Inputs: x [..., K] (the leading dims are the rows, M = their product),
 * W [O, K] (PyTorch's nn.Linear weight layout), and with has_bias a third
 * input b holding O values. Parameters: has_bias, do_relu (int, 0 or 1).
 * Output: x's shape with the last dim replaced by O, x's dtype. All three
 * inputs must have the same dtype (fp32, fp16 or bf16).
 */
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"
#include "tpu_utils.h"

/* Checks the inputs' shapes and dtypes; gives M, K and O. Stops the kernel
 * with a message when they do not fit (and returns false where the assert
 * returns). */
static bool linear_shapes(const global_tensor_spec_t *input, const linear_param_t *p, int64_t *M, int *K, int *O) {
  const global_tensor_spec_t *x = &input[0], *w = &input[1];
  const bool ranks = x->dims >= 1 && x->dims <= MAX_SHAPE_DIMS && w->dims == 2;
  TPUKERNEL_ASSERT_INFO(ranks, "linear: x must have rank 1..%d and W rank 2 ([out_features, in_features]); got %d and %d",
                        MAX_SHAPE_DIMS, x->dims, w->dims);
  if (!ranks) return false;
  *K = x->shape[x->dims - 1];
  *O = w->shape[0];
  *M = 1;
  for (int i = 0; i < x->dims - 1; ++i) *M *= x->shape[i];
  const bool inner = w->shape[1] == *K;
  TPUKERNEL_ASSERT_INFO(inner, "linear: W is [%d, %d] but x's last dim (in_features) is %d; W must be [out_features, %d]",
                        w->shape[0], w->shape[1], *K, *K);
  if (!inner) return false;
  const bool same_dtype = w->dtype == x->dtype && (!p->has_bias || input[2].dtype == x->dtype);
  TPUKERNEL_ASSERT_INFO(same_dtype, "linear: x, W%s must have the same dtype; got SG dtypes %d, %d%s%d", p->has_bias ? " and b" : "",
                        (int)x->dtype, (int)w->dtype, p->has_bias ? ", " : "", p->has_bias ? (int)input[2].dtype : 0);
  if (!same_dtype) return false;
  if (p->has_bias) {
    int64_t count = 1;
    for (int i = 0; i < input[2].dims && i < MAX_SHAPE_DIMS; ++i) count *= input[2].shape[i];
    TPUKERNEL_ASSERT_INFO(count == *O, "linear: b has %lld values but W has %d rows (out_features)", (long long)count, *O);
    if (count != *O) return false;
  }
  const bool flags = (p->has_bias == 0 || p->has_bias == 1) && (p->do_relu == 0 || p->do_relu == 1);
  TPUKERNEL_ASSERT_INFO(flags, "linear: has_bias and do_relu must be 0 or 1; got %d and %d", p->has_bias, p->do_relu);
  return flags;
}

void api_linear_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(linear, p, param);
  int64_t M;
  int K, O;
  if (!linear_shapes(input, &p, &M, &K, &O)) return;
  tpu_impl_linear_global(output->addr, input[0].addr, input[1].addr, p.has_bias ? input[2].addr : 0, M, K, O,
                         p.has_bias != 0, p.do_relu != 0, tpu_type_convert((sg_data_type_t)input[0].dtype));
}

/* Dynamic mode: output 0 is x's shape with the last dim O, x's dtype. */
void type_infer_linear(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(linear, p, param);
  int64_t M;
  int K, O;
  const bool valid = linear_shapes(input, &p, &M, &K, &O);
  output->dtype = input[0].dtype;
  output->dims = input[0].dims;
  for (int i = 0; i < MAX_SHAPE_DIMS; ++i) output->shape[i] = input[0].shape[i];
  if (valid) output->shape[output->dims - 1] = O;
  int64_t elems = 1;
  for (int i = 0; i < output->dims && i < MAX_SHAPE_DIMS; ++i) elems *= output->shape[i];
  output->elem_num = (int)elems;
}
