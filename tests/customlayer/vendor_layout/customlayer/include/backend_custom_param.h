/* backend_custom_param.h: the parameters of this project's ops. */
#ifndef VENDOR_LAYOUT_BACKEND_CUSTOM_PARAM_H
#define VENDOR_LAYOUT_BACKEND_CUSTOM_PARAM_H

typedef struct {
  float b;
} addrow_param_t;

typedef struct {
  float scale;
  float lo;
  float hi;
} scaleclip_param_t;

#endif
