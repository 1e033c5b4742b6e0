/*
 * api_utils.h: turning a tensor_spec_t (and, for local layers, the current
 * local_sec_info_t) into the 4-D or 5-D shape a kernel works on.
 *
 * Folding rule (this SDK's; the vendor header is not public): ranks below 4
 * are padded with trailing 1s, (n) -> (n,1,1,1), (n,c) -> (n,c,1,1),
 * (n,c,h) -> (n,c,h,1); ranks above 4 multiply the trailing dims into w.
 * Element-wise kernels see the same elements in the same order either way.
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_API_UTILS_H
#define TPU_SDK_API_UTILS_H

#include "api_common.h"
#include "tpu_kernel.h"

/* A 3D group keeps a depth dimension: a 5-D tensor in a GROUP_3D layer. */
static inline bool get_is_true3d(int group_type, int dims) {
  return group_type == GROUP_3D && dims > 4;
}

static inline void parse_NCHW(const tensor_spec_t *spec, int shape[4]) {
  for (int i = 0; i < 4; ++i) shape[i] = i < spec->dims ? spec->shape[i] : 1;
  for (int i = 4; i < spec->dims; ++i) shape[3] *= spec->shape[i];
}

/* (n, c, d, h, w): rank 5 as is; other ranks fold as parse_NCHW with d = 1. */
static inline void parse_NCDHW(const tensor_spec_t *spec, int shape[5]) {
  if (spec->dims == 5) {
    for (int i = 0; i < 5; ++i) shape[i] = spec->shape[i];
    return;
  }
  int nchw[4];
  parse_NCHW(spec, nchw);
  shape[0] = nchw[0];
  shape[1] = nchw[1];
  shape[2] = 1;
  shape[3] = nchw[2];
  shape[4] = nchw[3];
}

/* Shape of this step's input slice in local memory, (n, c, h, w); a 3D
 * group's depth is folded into n. A dimension the tensor does not split
 * (full extent 1) stays 1. */
static inline void parse_input_slice_shape_with_d(const local_sec_info_t *sec, const tensor_spec_t *spec,
                                                  int shape[5]) {
  int full[5];
  parse_NCDHW(spec, full);
  shape[0] = full[0] == 1 ? 1 : sec->n_slice;
  shape[1] = full[1] == 1 ? 1 : (sec->is_c_split ? sec->c_slice : full[1]);
  shape[2] = full[2] == 1 ? 1 : sec->d_slice;
  shape[3] = full[3] == 1 ? 1 : sec->h_slice;
  shape[4] = full[4] == 1 ? 1 : sec->w_slice;
}

static inline void parse_output_slice_shape_with_d(const local_sec_info_t *sec, const tensor_spec_t *spec,
                                                   int shape[5]) {
  int full[5];
  parse_NCDHW(spec, full);
  shape[0] = full[0] == 1 ? 1 : sec->out_n_slice;
  shape[1] = full[1] == 1 ? 1 : (sec->is_c_split ? sec->c_slice : full[1]);
  shape[2] = full[2] == 1 ? 1 : sec->d_slice;
  shape[3] = full[3] == 1 ? 1 : sec->out_h_slice;
  shape[4] = full[4] == 1 ? 1 : sec->out_w_slice;
}

static inline void fold_slice_depth(const local_sec_info_t *sec, const tensor_spec_t *spec,
                                    const int with_d[5], int shape[4]) {
  bool true3d = get_is_true3d(sec->group_type, spec->dims);
  shape[0] = true3d ? with_d[0] * with_d[2] : with_d[0];
  shape[1] = with_d[1];
  shape[2] = with_d[3];
  shape[3] = with_d[4];
}

static inline void parse_input_slice_shape(const local_sec_info_t *sec, const tensor_spec_t *spec,
                                           int shape[4]) {
  int with_d[5];
  parse_input_slice_shape_with_d(sec, spec, with_d);
  fold_slice_depth(sec, spec, with_d, shape);
}

static inline void parse_output_slice_shape(const local_sec_info_t *sec, const tensor_spec_t *spec,
                                            int shape[4]) {
  int with_d[5];
  parse_output_slice_shape_with_d(sec, spec, with_d);
  fold_slice_depth(sec, spec, with_d, shape);
}

#endif /* TPU_SDK_API_UTILS_H */
