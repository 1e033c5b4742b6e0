/*
 * backend_custom_param.h: one parameter struct per op, filled from the
 * custom_param_t array by param_parser.h.
 */
#ifndef SCALESHIFT_BACKEND_CUSTOM_PARAM_H
#define SCALESHIFT_BACKEND_CUSTOM_PARAM_H

/* y = x * scale + shift, element-wise. */
typedef struct {
  float scale;
  float shift;
} scaleshift_param_t;

#endif /* SCALESHIFT_BACKEND_CUSTOM_PARAM_H */
