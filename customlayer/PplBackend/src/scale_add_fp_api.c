/*
 * scale_add_fp_api.c: the scaleadd op's API, called like any custom op's
 * (the op is registered with register_custom_ppl_op): two inputs a and b of
 * one shape and float dtype, two outputs
 *
 *   output[0] = a * scale
 *   output[1] = a * scale + b
 *
 * Parameter: scale (float). The kernels are PPL (scale_add_fp.pl).
 * type_infer_scaleadd gives dynamic runs both output shapes.
 */
#include "helper.h"
#include "param_parser.h"

void api_scaleadd_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  PARSE_PARAM(scaleadd, p, param);
  int length = 1;
  for (int i = 0; i < input[0].dims; ++i) length *= input[0].shape[i];
  int b_length = 1;
  for (int i = 0; i < input[1].dims; ++i) b_length *= input[1].shape[i];
  if (b_length != length) {
    fprintf(stderr, "scaleadd: input 1 has %d elements, input 0 has %d: they must have one shape\n", b_length, length);
    exit(1);
  }
  scale_add_tiling(output[0].addr, output[1].addr, input[0].addr, input[1].addr, p.scale, length, input[0].dtype);
}

/* Dynamic runs: both outputs have input 0's dtype and shape (the default
 * fills output 0 only). */
void type_infer_scaleadd(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  for (int out = 0; out < 2; ++out) {
    output[out].dtype = input[0].dtype;
    output[out].dims = input[0].dims;
    for (int i = 0; i < MAX_SHAPE_DIMS; ++i) output[out].shape[i] = input[0].shape[i];
    output[out].elem_num = input[0].elem_num;
  }
}
