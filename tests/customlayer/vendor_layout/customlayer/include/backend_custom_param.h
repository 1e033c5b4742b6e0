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

/* scaleadd: the SDK's sample PPL op, which vendor_layout_check.sh adds to
 * this project (PplBackend/, plugin/plugin_scaleadd.c). */
typedef struct {
  float scale;
} scaleadd_param_t;

#endif
