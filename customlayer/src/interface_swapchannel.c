/*
 * interface_swapchannel.c: the swapchannel op's API (global only).
 *
 * Parameters: order (int[3]): output channel c is input channel order[c].
 * The input is folded to (n, c, h, w) with parse_NCHW; c (dim 1) must be 3.
 * The output has the input's dtype and shape.
 */
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"
#include "tpu_utils.h"

void api_swapchannel_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(swapchannel, p, param);
  dim4 folded;
  parse_NCHW(input->shape, input->dims, &folded);
  const int shape[4] = {folded.n, folded.c, folded.h, folded.w};
  tpu_impl_swapchannel_global(output->addr, input->addr, shape, p.order,
                              tpu_type_convert((sg_data_type_t)input->dtype));
}
