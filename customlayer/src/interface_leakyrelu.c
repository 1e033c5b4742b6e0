/*
 * interface_leakyrelu.c: the leakyrelu op and its gradient op (global only).
 *
 *   leakyrelu       input x; output y = x > 0 ? x : alpha * x
 *   leakyrelu_grad  inputs dy, x (register_custom_grad(leakyrelu
 *                   leakyrelu_grad NO_FORWARD_OUTPUTS): the output gradient,
 *                   then the forward input); output dx = x > 0 ? dy : alpha * dy
 *
 * Parameter: alpha (float), the same for both. Outputs have the first
 * input's shape and dtype (fp32, fp16, bf16); dy and x must agree.
 */
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"
#include "tpu_utils.h"

void api_leakyrelu_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(leakyrelu, p, param);
  dim4 folded;
  parse_NCHW(input->shape, input->dims, &folded);
  const int shape[4] = {folded.n, folded.c, folded.h, folded.w};
  tpu_impl_leakyrelu_global(output->addr, input->addr, shape, p.alpha, tpu_type_convert((sg_data_type_t)input->dtype));
}

static uint64_t leakyrelu_count(const global_tensor_spec_t *spec) {
  uint64_t count = 1;
  for (int i = 0; i < spec->dims && i < MAX_SHAPE_DIMS; ++i) count *= (uint64_t)(spec->shape[i] > 0 ? spec->shape[i] : 0);
  return count;
}

void api_leakyrelu_grad_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(leakyrelu_grad, p, param);
  const global_tensor_spec_t *dy = &input[0], *x = &input[1];
  const uint64_t count = leakyrelu_count(dy);
  const bool same = count == leakyrelu_count(x) && dy->dtype == x->dtype;
  TPUKERNEL_ASSERT_INFO(same, "leakyrelu_grad: dy (%llu elements, SG dtype %d) and x (%llu elements, SG dtype %d) "
                        "must have the same size and dtype",
                        (unsigned long long)count, (int)dy->dtype, (unsigned long long)leakyrelu_count(x),
                        (int)x->dtype);
  if (!same) return;
  tpu_impl_leakyrelu_grad_global(output->addr, dy->addr, x->addr, count, p.alpha,
                                 tpu_type_convert((sg_data_type_t)dy->dtype));
}
