/* interface_scaleclip.c: the scaleclip op's API (global only).
 * Parameters: scale, lo, hi (float).
 *
 * Written as many vendor kernels are, for rank-4 inputs only: planes of
 * h * w elements. A rank-1 input has no h and w (zero in the spec), and the
 * division below then faults on the host: the SDK must turn that into an
 * error naming this function and line, not a dead process. */
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"

void api_scaleclip_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(scaleclip, p, param);
  int count = 1;
  for (int i = 0; i < input->dims; ++i) count *= input->shape[i];
  const int plane = input->shape[2] * input->shape[3];
  const int planes = count / plane;
  const dim4 shape = {1, planes, 1, plane};
  tpu_impl_scaleclip_global(output->addr, input->addr, &shape, p.scale, p.lo, p.hi);
}
