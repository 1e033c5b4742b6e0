/*
 * interface_scaleshift.c: the API layer the generated code calls
 * (api_<op>_global for every registered op). It turns tensor specs and the
 * parameter array into the kernel's arguments.
 */
#include "interface_custom_ops.h"
#include "param_parser.h"
#include "tpu_impl_custom_ops.h"

void api_scaleshift_global(const global_tensor_spec_t *input, global_tensor_spec_t *output,
                           const void *param) {
  PARSE_PARAM(scaleshift, p, param);
  tpu_impl_scaleshift_global(output->addr, input->addr, input->shape, input->dims, p.scale,
                             p.shift, tpu_type_convert((sg_data_type_t)input->dtype));
}

/* No type_infer_scaleshift: the generated default (output 0 takes input 0's
 * dtype and shape) is what an element-wise op needs. */
