/*
 * param_parser.h: <op>_parse_param() for every sample op.
 *
 * Each parser receives the parameter array already past the reserved
 * element 0 (PARSE_PARAM in api_common.h passes get_real_param_ptr(param)),
 * so the op's first parameter is element 0 here.
 *
 *   PARSE_PARAM(absadd, p, param);   // absadd_param_t p = absadd_parse_param(param + 1 element)
 *
 * Used by the kernels and by the host plugin; no tpu-kernel calls.
 */
#ifndef CUSTOMLAYER_PARAM_PARSER_H
#define CUSTOMLAYER_PARAM_PARSER_H

#include "api_common.h"
#include "backend_custom_param.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline absadd_param_t absadd_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  absadd_param_t out;
  out.b = p[0].float_t;
  return out;
}

static inline ceiladd_param_t ceiladd_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  ceiladd_param_t out;
  out.b = p[0].float_t;
  return out;
}

static inline scaleinplace_param_t scaleinplace_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  scaleinplace_param_t out;
  out.s = p[0].float_t;
  return out;
}

static inline scaleadd_param_t scaleadd_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  scaleadd_param_t out;
  out.scale = p[0].float_t;
  return out;
}

static inline hardsigmoid_param_t hardsigmoid_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  hardsigmoid_param_t out;
  out.alpha = p[0].float_t;
  out.beta = p[1].float_t;
  return out;
}

static inline swapchannel_param_t swapchannel_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  swapchannel_param_t out;
  for (int i = 0; i < 3; ++i) out.order[i] = p[0].int_arr_t[i];
  return out;
}

static inline crop_param_t crop_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  crop_param_t out;
  out.hoffset = p[0].int_t;
  out.woffset = p[1].int_t;
  out.hnew = p[2].int_t;
  out.wnew = p[3].int_t;
  return out;
}

static inline linear_param_t linear_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  linear_param_t out;
  out.has_bias = p[0].int_t;
  out.do_relu = p[1].int_t;
  return out;
}

static inline leakyrelu_param_t leakyrelu_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  leakyrelu_param_t out;
  out.alpha = p[0].float_t;
  return out;
}

static inline leakyrelu_grad_param_t leakyrelu_grad_parse_param(const void *param) {
  return leakyrelu_parse_param(param);
}

static inline linear_grad_param_t linear_grad_parse_param(const void *param) { return linear_parse_param(param); }

#ifdef __cplusplus
}
#endif

#endif /* CUSTOMLAYER_PARAM_PARSER_H */
