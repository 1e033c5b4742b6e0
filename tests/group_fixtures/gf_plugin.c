/*
 * gf_plugin.c: host hooks of the layer-group fixture ops (gf_kernels.c).
 */
#include <stdbool.h>
#include <stddef.h>

#include "api_common.h"

bool backward_h_vsum3(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice);

static void gf_vsum3_inference(const int *shape, int dims, const float *in, float *out) {
  int n = 1, c = 1, h = 1, w = 1;
  if (dims > 0) n = shape[0];
  if (dims > 1) c = shape[1];
  if (dims > 2) h = shape[2];
  for (int i = 3; i < dims; ++i) w *= shape[i];
  for (int p = 0; p < n * c; ++p)
    for (int o = 0; o < h; ++o)
      for (int x = 0; x < w; ++x) {
        const float *plane = in + (size_t)p * h * w;
        float v = plane[o * w + x];
        if (o > 0) v += plane[(o - 1) * w + x];
        if (o + 1 < h) v += plane[(o + 1) * w + x];
        out[(size_t)p * h * w + (size_t)o * w + x] = v;
      }
}

void inference_vsum3(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS], const int *input_dims,
                     const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  gf_vsum3_inference(input_shapes[0], input_dims[0], inputs[0], outputs[0]);
}

void inference_vsum3_bad(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                         const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  gf_vsum3_inference(input_shapes[0], input_dims[0], inputs[0], outputs[0]);
}

void inference_vsum3_par(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                         const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  gf_vsum3_inference(input_shapes[0], input_dims[0], inputs[0], outputs[0]);
}

bool local_gen_support_vsum3_par(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}

bool backward_h_vsum3_par(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice) {
  return backward_h_vsum3(param, param_size, in_idx, in_slice, out_idx, out_slice);
}

bool local_gen_support_vsum3(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}

bool local_gen_support_vsum3_bad(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}

/* Output rows [out_idx, +out_slice) need input rows [out_idx - 1, +out_slice + 2). */
bool backward_h_vsum3(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice) {
  (void)param;
  (void)param_size;
  *in_idx = out_idx - 1;
  *in_slice = out_slice + 2;
  return true;
}

/* Deliberately wrong: declares no halo although the kernel reads one. */
bool backward_h_vsum3_bad(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice) {
  (void)param;
  (void)param_size;
  *in_idx = out_idx;
  *in_slice = out_slice;
  return true;
}

/* hsum3: each element plus its left and right neighbours (0 outside). */
static void gf_hsum3_inference(const int *shape, int dims, const float *in, float *out) {
  int w = dims > 0 ? shape[dims - 1] : 1;
  size_t rows = 1;
  for (int i = 0; i + 1 < dims; ++i) rows *= (size_t)shape[i];
  for (size_t r = 0; r < rows; ++r)
    for (int x = 0; x < w; ++x) {
      const float *row = in + r * (size_t)w;
      float v = row[x];
      if (x > 0) v += row[x - 1];
      if (x + 1 < w) v += row[x + 1];
      out[r * (size_t)w + (size_t)x] = v;
    }
}

void inference_hsum3(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS], const int *input_dims,
                     const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  gf_hsum3_inference(input_shapes[0], input_dims[0], inputs[0], outputs[0]);
}

void inference_hsum3_bad(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                         const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  gf_hsum3_inference(input_shapes[0], input_dims[0], inputs[0], outputs[0]);
}

bool local_gen_support_hsum3(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}

bool local_gen_support_hsum3_bad(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}

/* Output columns [out_idx, +out_slice) need [out_idx - 1, +out_slice + 2).
 * Spelled as the vendor's documentation spells it (backwardw_). */
bool backwardw_hsum3(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice) {
  (void)param;
  (void)param_size;
  *in_idx = out_idx - 1;
  *in_slice = out_slice + 2;
  return true;
}
