/* param_parser.h: one parser per op, written as vendor projects write them:
 * plain static functions, most of them unused in any one source file (the
 * vendor's warning set does not report those). */
#ifndef VENDOR_LAYOUT_PARAM_PARSER_H
#define VENDOR_LAYOUT_PARAM_PARSER_H

#include "api_common.h"
#include "backend_custom_param.h"

static addrow_param_t addrow_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  addrow_param_t out;
  out.b = p[0].float_t;
  return out;
}

static scaleclip_param_t scaleclip_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  scaleclip_param_t out;
  out.scale = p[0].float_t;
  out.lo = p[1].float_t;
  out.hi = p[2].float_t;
  return out;
}

static scaleadd_param_t scaleadd_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  scaleadd_param_t out;
  out.scale = p[0].float_t;
  return out;
}

#endif
