/*
 * fixture_kernels.c: the kernels of the "good" fixture set. Each op is a
 * GDMA copy, so the loader tests can check data and what reached the op
 * (element 0, sec_info) without depending on any BDC arithmetic.
 *
 * The fx_seen_* variables let the tests see what a call received.
 */
#include <stdint.h>

#include "interface_custom_ops.h"
#include "tpu_kernel.h"
#include "tpu_utils.h"

int64_t fx_seen_global_bfsz_slot0 = -1; /* element 0 as fx_scratch's bfsz saw it */
uint64_t fx_seen_scratch_addr = 1;      /* element 0 as api_fx_scratch_global saw it */
int64_t fx_seen_local_bfsz_slot0 = -1;  /* element 0 as fx_local's bfsz saw it */
int fx_seen_local_buffer = -1;          /* get_local_buffer_addr in api_fx_local_local */

static int elements(const tensor_spec_t *t) {
  int count = 1;
  for (int i = 0; i < t->dims; ++i) count *= t->shape[i];
  return count;
}

/* The whole tensor as one row: fine for the small tensors of the tests. */
static void copy_global(global_addr_t dst, global_addr_t src, const tensor_spec_t *t) {
  dim4 shape = {1, 1, 1, elements(t)};
  tpu_gdma_cpy_S2S(dst, src, &shape, NULL, NULL, tpu_type_convert((sg_data_type_t)t->dtype));
}

/* n x c x h x w of a local slice: n and h from sec_info, c and w full. */
static dim4 slice_shape(const local_sec_info_t *sec_info, const tensor_spec_t *t) {
  dim4 shape = {sec_info->n_slice, t->shape[1], sec_info->h_slice, t->shape[3]};
  return shape;
}

/* ---- fx_copy ------------------------------------------------------------- */
void api_fx_copy_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  copy_global(output->addr, input->addr, input);
}

void api_fx_copy_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                       local_tensor_spec_t *output, const void *param) {
  (void)param;
  dim4 shape = slice_shape(sec_info, input);
  tpu_gdma_cpy_L2L((local_addr_t)output->addr, (local_addr_t)input->addr, &shape, NULL, NULL,
                   tpu_type_convert((sg_data_type_t)input->dtype));
}

/* Not the default: also fills elem_num, which the default copies. */
void type_infer_fx_copy(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  output->dtype = input->dtype;
  output->dims = input->dims;
  for (int i = 0; i < MAX_SHAPE_DIMS; ++i) output->shape[i] = i < input->dims ? input->shape[i] : 0;
  output->elem_num = elements(input);
}

/* Not the default: takes the output rows from sec_info. */
void slice_infer_fx_copy(const local_sec_info_t *sec_info, const local_tensor_spec_t *input, tensor_slice_t *output,
                         const void *param) {
  (void)input;
  (void)param;
  output->h_idx = sec_info->out_h_idx;
  output->h_slice = sec_info->out_h_slice;
}

/* ---- fx_plain ------------------------------------------------------------ */
void api_fx_plain_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  copy_global(output->addr, input->addr, input);
}

/* ---- fx_scratch: params {bytes: int, fail: int} --------------------------- */
int64_t api_fx_scratch_global_bfsz(const global_tensor_spec_t *input, global_tensor_spec_t *output,
                                   const void *param) {
  (void)input;
  (void)output;
  fx_seen_global_bfsz_slot0 = get_global_buffer_addr(param);
  return ((const custom_param_t *)get_real_param_ptr(param))[0].int_t;
}

void api_fx_scratch_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  const int64_t scratch = get_global_buffer_addr(param);
  const custom_param_t *user = (const custom_param_t *)get_real_param_ptr(param);
  const int bytes = user[0].int_t;
  const int fail = user[1].int_t;
  fx_seen_scratch_addr = (uint64_t)scratch;
  if (bytes > 0) {
    TPUKERNEL_ASSERT_INFO(scratch != 0, "fx_scratch asked for %d bytes but got no buffer", bytes);
    copy_global((global_addr_t)scratch, input->addr, input);
    copy_global(output->addr, (global_addr_t)scratch, input);
  } else {
    copy_global(output->addr, input->addr, input);
  }
  if (fail) copy_global(output->addr + ((uint64_t)1 << 44), input->addr, input);
}

/* ---- fx_local ------------------------------------------------------------ */
void api_fx_local_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  copy_global(output->addr, input->addr, input);
}

int api_fx_local_local_bfsz(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                            local_tensor_spec_t *output, const void *param) {
  (void)output;
  fx_seen_local_bfsz_slot0 = get_global_buffer_addr(param);
  return sec_info->h_slice * input->shape[3] * 4;
}

/* input -> buffer -> output, so the buffer offset must be right. */
void api_fx_local_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input,
                        local_tensor_spec_t *output, const void *param) {
  const int buffer = get_local_buffer_addr(param);
  const data_type_t dtype = tpu_type_convert((sg_data_type_t)input->dtype);
  dim4 shape = slice_shape(sec_info, input);
  fx_seen_local_buffer = buffer;
  tpu_gdma_cpy_L2L((local_addr_t)buffer, (local_addr_t)input->addr, &shape, NULL, NULL, dtype);
  tpu_gdma_cpy_L2L((local_addr_t)output->addr, (local_addr_t)buffer, &shape, NULL, NULL, dtype);
}

/* ---- fx_fail: writes far outside global memory ---------------------------- */
void api_fx_fail_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  copy_global(output->addr + ((uint64_t)1 << 44), input->addr, input);
}

/* ---- fx_fault: an integer division by zero in kernel code ----------------- */
/* The SIGFPE is the point: UBSan must not report the division first. */
int fx_fault_line = __LINE__ + 5;
__attribute__((no_sanitize("undefined"))) void api_fx_fault_global(const global_tensor_spec_t *input,
                                                                    global_tensor_spec_t *output, const void *param) {
  (void)param;
  volatile int zero = 0;
  output->dims = input->dims / zero;
}

/* ---- fx_cast: input 0 converted to the output's dtype --------------------- */
/* Through local memory: load, tpu_bdc_cast, store. The tensor must fit in
 * one row of NPU 0 (the tests' tensors are small). */
void api_fx_cast_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  const data_type_t from = tpu_type_convert((sg_data_type_t)input->dtype);
  const data_type_t to = tpu_type_convert((sg_data_type_t)output->dtype);
  const local_addr_t loaded = 0, converted = 0x8000;
  dim4 shape = {1, 1, 1, elements(input)};
  tpu_gdma_cpy_S2L(loaded, input->addr, &shape, NULL, NULL, from);
  tpu_bdc_cast(converted, loaded, &shape, NULL, NULL, to, from, RM_HALF_TO_EVEN);
  tpu_gdma_cpy_L2S(output->addr, converted, &shape, NULL, NULL, to);
}

/* The output dtype is the SG dtype of parameter "to". */
void type_infer_fx_cast(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  output->dtype = ((const custom_param_t *)get_real_param_ptr(param))[0].int_t;
  output->dims = input->dims;
  for (int i = 0; i < MAX_SHAPE_DIMS; ++i) output->shape[i] = i < input->dims ? input->shape[i] : 0;
  output->elem_num = elements(input);
}

/* ---- fx_short: forgets the second half of its output ----------------------
 * Its reference is 0 there, which the vendor's comparison (NaN counts as 0)
 * cannot tell from the runtime's NaN poison: the unwritten-element check
 * must catch it. */
void api_fx_short_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  const int count = elements(input);
  const int written = count - count / 2;
  dim4 shape = {1, 1, 1, written};
  tpu_gdma_cpy_S2S(output->addr, input->addr, &shape, NULL, NULL, tpu_type_convert((sg_data_type_t)input->dtype));
}
