/*
 * param_parser.h: <op>_parse_param(p) reads an op's parameters from the
 * custom_param_t array; p already points past the reserved element 0
 * (PARSE_PARAM in api_common.h does that), so the first user parameter is
 * p[0]. Parameters arrive in the order the frontend listed them:
 * {"scale": ..., "shift": ...}.
 */
#ifndef SCALESHIFT_PARAM_PARSER_H
#define SCALESHIFT_PARAM_PARSER_H

#include "api_common.h"
#include "backend_custom_param.h"

static inline scaleshift_param_t scaleshift_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  scaleshift_param_t result;
  result.scale = p[0].float_t;
  result.shift = p[1].float_t;
  return result;
}

#endif /* SCALESHIFT_PARAM_PARSER_H */
