/*
 * gf_kernels.c: kernels of the layer-group fixture ops (register_ops.cmake).
 *
 * vsum3 sums each row with its neighbours above and below (rows outside the
 * tensor count as 0). The local version computes output rows
 * [out_h_idx, out_h_idx + out_h_slice) from the input rows
 * [h_idx, h_idx + h_slice) it was given; the global version loads the whole
 * tensor and runs the same row loop, so both give the same bits.
 */
#include "interface_custom_ops.h"
#include "tpu_kernel.h"
#include "tpu_utils.h"

/* Output rows [out_h_idx, +out_h_slice) from input rows [h_idx, +h_slice)
 * of a tensor of `height` rows; both slices n x c x rows x w, aligned. */
static void gf_vsum3_rows(local_addr_t out, local_addr_t in, int n, int c, int w, int height, int h_idx, int h_slice,
                          int out_h_idx, int out_h_slice, data_type_t dt) {
  const dim4 in_shape = {n, c, h_slice, w}, out_shape = {n, c, out_h_slice, w}, row = {n, c, 1, w};
  dim4 in_stride, out_stride;
  tpu_aligned_stride(&in_stride, 0, &in_shape, dt);
  tpu_aligned_stride(&out_stride, 0, &out_shape, dt);
  const int row_bytes = w * tpu_data_type_size(dt);
  for (int r = 0; r < out_h_slice; ++r) {
    const int o = out_h_idx + r;
    const local_addr_t dst = out + (local_addr_t)(r * row_bytes);
    tpu_bdc_cpy(dst, in + (local_addr_t)((o - h_idx) * row_bytes), &row, &out_stride, &in_stride, dt);
    for (int d = -1; d <= 1; d += 2) {
      const int i = o + d;
      if (i < 0 || i >= height) continue;
      tpu_bdc_fp_add(dst, dst, in + (local_addr_t)((i - h_idx) * row_bytes), &row, &out_stride, &out_stride,
                     &in_stride, dt);
    }
  }
}

static void gf_vsum3_global(const global_tensor_spec_t *input, global_tensor_spec_t *output) {
  dim4 s;
  parse_NCHW(input->shape, input->dims, &s);
  const data_type_t dt = tpu_type_convert((sg_data_type_t)input->dtype);
  const local_addr_t out = (local_addr_t)tpu_get_local_size(&s, dt, 0, true);
  tpu_gdma_cpy_S2L(0, input->addr, &s, NULL, NULL, dt);
  gf_vsum3_rows(out, 0, s.n, s.c, s.w, s.h, 0, s.h, 0, s.h, dt);
  tpu_gdma_cpy_L2S(output->addr, out, &s, NULL, NULL, dt);
}

static void gf_vsum3_local(const local_sec_info_t *sec, const local_tensor_spec_t *input,
                           local_tensor_spec_t *output) {
  dim4 s;
  parse_NCHW(input->shape, input->dims, &s);
  /* The slice's columns: a group may split W too (vsum3 keeps every column). */
  gf_vsum3_rows((local_addr_t)output->addr, (local_addr_t)input->addr, sec->n_slice, s.c, sec->w_slice, s.h, sec->h_idx,
                sec->h_slice, sec->out_h_idx, sec->out_h_slice, tpu_type_convert((sg_data_type_t)input->dtype));
}

void api_vsum3_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  gf_vsum3_global(input, output);
}

void api_vsum3_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input, local_tensor_spec_t *output,
                     const void *param) {
  (void)param;
  gf_vsum3_local(sec_info, input, output);
}

void api_vsum3_bad_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  gf_vsum3_global(input, output);
}

void api_vsum3_bad_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                         local_tensor_spec_t *output, const void *param) {
  (void)param;
  gf_vsum3_local(sec_info, input, output);
}

void api_vsum3_par_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  gf_vsum3_global(input, output);
}

/* A kernel may bracket its own commands with a parallel region; inside a
 * double-buffered group stage that is a nested region. */
void api_vsum3_par_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                         local_tensor_spec_t *output, const void *param) {
  (void)param;
  tpu_parallel_start();
  gf_vsum3_local(sec_info, input, output);
  tpu_parallel_end();
}

/* hsum3: output columns [out_w_idx, +out_w_slice) from input columns
 * [w_idx, +w_slice) of a tensor `width` columns wide, every row of the
 * slice (rows are not changed); both slices n x c x rows x cols, aligned. */
static void gf_hsum3_cols(local_addr_t out, local_addr_t in, int n, int c, int rows, int width, int w_idx, int w_slice,
                          int out_w_idx, int out_w_slice, data_type_t dt) {
  const dim4 in_shape = {n, c, rows, w_slice}, out_shape = {n, c, rows, out_w_slice};
  dim4 in_stride, out_stride;
  tpu_aligned_stride(&in_stride, 0, &in_shape, dt);
  tpu_aligned_stride(&out_stride, 0, &out_shape, dt);
  const int size = tpu_data_type_size(dt), end = out_w_idx + out_w_slice;
  tpu_bdc_cpy(out, in + (local_addr_t)((out_w_idx - w_idx) * size), &out_shape, &out_stride, &in_stride, dt);
  for (int d = -1; d <= 1; d += 2) {
    /* Output columns o whose neighbour o + d lies inside the tensor. */
    const int first = d < 0 ? (out_w_idx > 1 ? out_w_idx : 1) : out_w_idx;
    const int last = d > 0 ? (end < width - 1 ? end : width - 1) : end;
    if (last <= first) continue;
    const dim4 part = {n, c, rows, last - first};
    const local_addr_t dst = out + (local_addr_t)((first - out_w_idx) * size);
    tpu_bdc_fp_add(dst, dst, in + (local_addr_t)((first + d - w_idx) * size), &part, &out_stride, &out_stride,
                   &in_stride, dt);
  }
}

static void gf_hsum3_global(const global_tensor_spec_t *input, global_tensor_spec_t *output) {
  dim4 s;
  parse_NCHW(input->shape, input->dims, &s);
  const data_type_t dt = tpu_type_convert((sg_data_type_t)input->dtype);
  const local_addr_t out = (local_addr_t)tpu_get_local_size(&s, dt, 0, true);
  tpu_gdma_cpy_S2L(0, input->addr, &s, NULL, NULL, dt);
  gf_hsum3_cols(out, 0, s.n, s.c, s.h, s.w, 0, s.w, 0, s.w, dt);
  tpu_gdma_cpy_L2S(output->addr, out, &s, NULL, NULL, dt);
}

static void gf_hsum3_local(const local_sec_info_t *sec, const local_tensor_spec_t *input,
                           local_tensor_spec_t *output) {
  dim4 s;
  parse_NCHW(input->shape, input->dims, &s);
  gf_hsum3_cols((local_addr_t)output->addr, (local_addr_t)input->addr, sec->n_slice, s.c, sec->out_h_slice, s.w,
                sec->w_idx, sec->w_slice, sec->out_w_idx, sec->out_w_slice,
                tpu_type_convert((sg_data_type_t)input->dtype));
}

void api_hsum3_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  gf_hsum3_global(input, output);
}

void api_hsum3_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input, local_tensor_spec_t *output,
                     const void *param) {
  (void)param;
  gf_hsum3_local(sec_info, input, output);
}

void api_hsum3_bad_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  gf_hsum3_global(input, output);
}

void api_hsum3_bad_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                         local_tensor_spec_t *output, const void *param) {
  (void)param;
  gf_hsum3_local(sec_info, input, output);
}
