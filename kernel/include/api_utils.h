/*
 * api_utils.h: turning a shape from a tensor_spec_t (and, for local layers,
 * the current local_sec_info_t) into the 4-D or 5-D shape a kernel works
 * on. Signatures and folding rule are the vendor's (public since 2024-01):
 *
 *   get_is_true3d(group_type, dims)   a GROUP_3D layer with a rank > 4 tensor
 *   parse_NCDHW(group_type, shape, dims, &dim5)
 *   parse_NCHW(shape, dims, &dim4)
 *   parse_{input,output}_slice_shape_with_d(sec_info, spec, int[5])
 *   parse_{input,output}_slice_shape(sec_info, spec, int[4])
 *
 * Folding rule, with true3d = get_is_true3d(group_type, dims):
 *   n = shape[0] (rank > 0), c = shape[1] (rank > 1), otherwise 1;
 *   d = shape[2] if true3d, else 1;
 *   h = shape[3] if true3d, else shape[2] if rank > 2, else 1;
 *   w = the product of the dims after h (1 if there are none).
 * So outside a 3D group a rank-5 tensor (2, 3, 4, 5, 6) is (2, 3, 1, 4, 30),
 * in a 3D group (2, 3, 4, 5, 6); ranks below 4 are padded with 1s. The
 * 4-D forms fold depth into n: (n * d, c, h, w), as
 * tpu_local_shape_5d_to_4d does (computed here, so the helpers also work on
 * the host, outside a kernel run).
 *
 * The slice helpers take each dimension whose full extent (by the rule
 * above, for sec_info->group_type) is not 1 from sec_info: n from n_slice
 * (outputs: out_n_slice), c from c_slice (whether or not is_c_split is
 * set), d from d_slice, h from h_slice (out_h_slice), w from w_slice
 * (out_w_slice). A full extent of 1 stays 1.
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_API_UTILS_H
#define TPU_SDK_API_UTILS_H

#include <api_common.h>
#include <tpu_kernel.h>

/* True for a GROUP_3D layer group and a tensor of rank above 4: only then
 * does the tensor keep a depth dimension. */
static inline bool get_is_true3d(int group_type, int dims) {
  return group_type == GROUP_3D && dims > 4;
}

static inline void parse_NCDHW(int group_type, const int *shape, int dims, dim5 *out_shape) {
  const bool true3d = get_is_true3d(group_type, dims);
  out_shape->n = dims > 0 ? shape[0] : 1;
  out_shape->c = dims > 1 ? shape[1] : 1;
  out_shape->d = true3d ? shape[2] : 1;
  out_shape->h = true3d ? shape[3] : (dims > 2 ? shape[2] : 1);
  out_shape->w = 1;
  for (int i = true3d ? 4 : 3; i < dims; ++i) out_shape->w *= shape[i];
}

static inline void parse_NCHW(const int *shape, int dims, dim4 *out_shape) {
  dim5 full;
  parse_NCDHW(GROUP_NORMAL, shape, dims, &full);
  out_shape->n = full.n * full.d;
  out_shape->c = full.c;
  out_shape->h = full.h;
  out_shape->w = full.w;
}

/* Not part of the vendor API: the shared body of the four slice helpers.
 * `n_slice`, `h_slice`, `w_slice` are the input or output extents. */
static inline void tpu_sdk_slice_shape_with_d(const local_sec_info_t *sec_info, const local_tensor_spec_t *spec,
                                              int n_slice, int h_slice, int w_slice, int slice_shape[5]) {
  dim5 full;
  parse_NCDHW(sec_info->group_type, spec->shape, spec->dims, &full);
  slice_shape[0] = full.n == 1 ? 1 : n_slice;
  slice_shape[1] = full.c == 1 ? 1 : sec_info->c_slice;
  slice_shape[2] = full.d == 1 ? 1 : sec_info->d_slice;
  slice_shape[3] = full.h == 1 ? 1 : h_slice;
  slice_shape[4] = full.w == 1 ? 1 : w_slice;
}

/* Not part of the vendor API: (n, c, d, h, w) -> (n * d, c, h, w). */
static inline void tpu_sdk_fold_slice_depth(const int with_d[5], int slice_shape[4]) {
  slice_shape[0] = with_d[0] * with_d[2];
  slice_shape[1] = with_d[1];
  slice_shape[2] = with_d[3];
  slice_shape[3] = with_d[4];
}

/* This step's input slice as (n, c, d, h, w). */
static inline void parse_input_slice_shape_with_d(const local_sec_info_t *sec_info, const local_tensor_spec_t *spec,
                                                  int slice_shape[5]) {
  tpu_sdk_slice_shape_with_d(sec_info, spec, sec_info->n_slice, sec_info->h_slice, sec_info->w_slice, slice_shape);
}

/* This step's output slice as (n, c, d, h, w). */
static inline void parse_output_slice_shape_with_d(const local_sec_info_t *sec_info, const local_tensor_spec_t *spec,
                                                   int slice_shape[5]) {
  tpu_sdk_slice_shape_with_d(sec_info, spec, sec_info->out_n_slice, sec_info->out_h_slice, sec_info->out_w_slice,
                             slice_shape);
}

/* This step's input slice as it lies in local memory, (n * d, c, h, w). */
static inline void parse_input_slice_shape(const local_sec_info_t *sec_info, const local_tensor_spec_t *spec,
                                           int slice_shape[4]) {
  int with_d[5];
  parse_input_slice_shape_with_d(sec_info, spec, with_d);
  tpu_sdk_fold_slice_depth(with_d, slice_shape);
}

/* This step's output slice as it lies in local memory, (n * d, c, h, w). */
static inline void parse_output_slice_shape(const local_sec_info_t *sec_info, const local_tensor_spec_t *spec,
                                            int slice_shape[4]) {
  int with_d[5];
  parse_output_slice_shape_with_d(sec_info, spec, with_d);
  tpu_sdk_fold_slice_depth(with_d, slice_shape);
}

#endif /* TPU_SDK_API_UTILS_H */
