/*
 * plugin_crop.c: host hooks of the crop op.
 *
 * out[..., i, j] = in[..., hoffset + i, woffset + j] for i < hnew, j < wnew:
 * the last two dims are cropped, the leading ones kept. shape_inference_crop
 * gives the output shape, inference_crop the reference on float32 buffers.
 *
 * The hooks return nothing, so invalid input (rank < 2, a negative offset,
 * hnew or wnew below 1, a window past the edge, missing parameters) is
 * reported on stderr. shape_inference_crop then still gives a valid shape
 * (the input's for rank < 2; hnew and wnew raised to at least 1) and
 * inference_crop fills that output with NaN, so any comparison fails.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api_common.h"
#include "param_parser.h"

/* Checks the parameters against the input; prints why they are invalid. */
static bool crop_check(const void *param, int param_size, const int *shape, int dims, crop_param_t *p) {
  if (param_size < (int)(5 * sizeof(custom_param_t))) {
    fprintf(stderr,
            "crop: expects 4 parameters (hoffset, woffset, hnew, wnew) after the reserved element, but "
            "param_size is %d bytes\n",
            param_size);
    memset(p, 0, sizeof(*p));
    return false;
  }
  *p = crop_parse_param(get_real_param_ptr(param));
  if (dims < 2 || dims > MAX_SHAPE_DIMS) {
    fprintf(stderr, "crop: works on the last two dims and needs an input of rank 2..%d; the input has rank %d\n",
            MAX_SHAPE_DIMS, dims);
    return false;
  }
  const int h = shape[dims - 2], w = shape[dims - 1];
  if (p->hoffset < 0 || p->woffset < 0 || p->hnew < 1 || p->wnew < 1 || (int64_t)p->hoffset + p->hnew > h ||
      (int64_t)p->woffset + p->wnew > w) {
    fprintf(stderr,
            "crop: window (hoffset %d, woffset %d, hnew %d, wnew %d) is not inside the input's last two dims "
            "%d x %d (offsets >= 0, sizes >= 1)\n",
            p->hoffset, p->woffset, p->hnew, p->wnew, h, w);
    return false;
  }
  return true;
}

/* The output shape: the input's, last two dims hnew and wnew (at least 1);
 * the input's own shape when the rank is unusable. */
static int crop_output_shape(const crop_param_t *p, const int *shape, int dims, int out[MAX_SHAPE_DIMS]) {
  memset(out, 0, MAX_SHAPE_DIMS * sizeof(int));
  const int rank = dims < 0 ? 0 : dims > MAX_SHAPE_DIMS ? MAX_SHAPE_DIMS : dims;
  for (int i = 0; i < rank; ++i) out[i] = shape[i];
  if (rank >= 2) {
    out[rank - 2] = p->hnew >= 1 ? p->hnew : 1;
    out[rank - 1] = p->wnew >= 1 ? p->wnew : 1;
  }
  return rank;
}

void shape_inference_crop(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS], const int *input_dims,
                          int (*output_shapes)[MAX_SHAPE_DIMS], int *output_dims) {
  crop_param_t p;
  crop_check(param, param_size, input_shapes[0], input_dims[0], &p);
  output_dims[0] = crop_output_shape(&p, input_shapes[0], input_dims[0], output_shapes[0]);
}

void inference_crop(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS], const int *input_dims,
                    const float **inputs, float **outputs) {
  const int *shape = input_shapes[0];
  const int dims = input_dims[0];
  crop_param_t p;
  const bool valid = crop_check(param, param_size, shape, dims, &p);
  if (!valid) {
    /* Fill exactly the output shape_inference_crop reported. */
    int out_shape[MAX_SHAPE_DIMS];
    const int rank = crop_output_shape(&p, shape, dims, out_shape);
    size_t count = 1;
    for (int i = 0; i < rank; ++i) count *= out_shape[i] > 0 ? (size_t)out_shape[i] : 0;
    for (size_t i = 0; i < count; ++i) outputs[0][i] = NAN;
    return;
  }
  size_t outer = 1;
  for (int i = 0; i < dims - 2; ++i) outer *= (size_t)shape[i];
  const size_t h = (size_t)shape[dims - 2], w = (size_t)shape[dims - 1];
  const size_t hnew = (size_t)p.hnew, wnew = (size_t)p.wnew;
  for (size_t b = 0; b < outer; ++b)
    for (size_t i = 0; i < hnew; ++i)
      memcpy(outputs[0] + (b * hnew + i) * wnew, inputs[0] + (b * h + (size_t)p.hoffset + i) * w + (size_t)p.woffset,
             wnew * sizeof(float));
}

/* The parameters, by name and kind: the SDK packs the JSON / TpuLang
 * parameters in this order and converts or refuses a value of the wrong kind
 * (a float for an int is refused unless it is a whole number). */
const char *param_types_crop(void) { return "hoffset:int, woffset:int, hnew:int, wnew:int"; }
