/*
 * fixture_plugin.c: host hooks of the "good" fixture set.
 *
 *   fx_copy   every hook, backward h under the documented name backwardh_,
 *             backward w under the compiler's name backward_w_;
 *             params {add: float, forbid_axis: int}
 *   fx_plain  none: every hook takes its default
 *   fx_pair   shape inference for two outputs (plugin only)
 *   fx_both   backward_h_ and backwardh_ both defined (plugin only)
 *   fx_cast   the reference of a dtype conversion: the values themselves
 *   fx_fault  the same reference (its kernel faults); its shape inference
 *             dies as params {how: int} says: 1 exit(0), 2 abort(),
 *             3 a failed assert(), 4 a write through a wild pointer, 5 _exit(3)
 *   fx_short  the input's first half, zeros after it (its kernel writes the
 *             first half only)
 *
 * Every fx_copy hook records element 0 and param_size in fx_seen_*.
 */
#undef NDEBUG /* the assert below must stay */
#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>

#include "api_common.h"

int64_t fx_seen_slot0 = -1;
int fx_seen_param_size = -1;
int fx_seen_prefill_idx = 0, fx_seen_prefill_slice = 0;

static void record(const void *param, int param_size) {
  fx_seen_slot0 = get_global_buffer_addr(param);
  fx_seen_param_size = param_size;
}

static int elements(const int *shape, int dims) {
  int count = 1;
  for (int i = 0; i < dims; ++i) count *= shape[i];
  return count;
}

/* ---- fx_copy ------------------------------------------------------------- */
void inference_fx_copy(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                       const int *input_dims, const float **inputs, float **outputs) {
  record(param, param_size);
  const float add = ((const custom_param_t *)get_real_param_ptr(param))[0].float_t;
  const int count = elements(input_shapes[0], input_dims[0]);
  for (int i = 0; i < count; ++i) outputs[0][i] = inputs[0][i] + add;
}

/* Output 0 has input 0's dims in reverse order (not the default). */
void shape_inference_fx_copy(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                             const int *input_dims, int (*output_shapes)[MAX_SHAPE_DIMS], int *output_dims) {
  record(param, param_size);
  output_dims[0] = input_dims[0];
  for (int i = 0; i < input_dims[0]; ++i) output_shapes[0][i] = input_shapes[0][input_dims[0] - 1 - i];
}

bool force_dynamic_run_fx_copy(void *param, int param_size) {
  record(param, param_size);
  return true;
}

bool local_gen_support_fx_copy(void *param, int param_size) {
  record(param, param_size);
  return true;
}

bool allow_data_split_fx_copy(void *param, int param_size, int axis, group_type_t group_type) {
  record(param, param_size);
  return axis != ((const custom_param_t *)get_real_param_ptr(param))[1].int_t && group_type == GROUP_NORMAL;
}

/* One row of halo on each side; refuses empty slices. */
bool backwardh_fx_copy(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice) {
  record(param, param_size);
  fx_seen_prefill_idx = *in_idx;
  fx_seen_prefill_slice = *in_slice;
  if (out_slice <= 0) return false;
  *in_idx = out_idx - 1;
  *in_slice = out_slice + 2;
  return true;
}

/* Stride 2 along w; refuses slices wider than 100. */
bool backward_w_fx_copy(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice) {
  record(param, param_size);
  if (out_slice > 100) return false;
  *in_idx = out_idx * 2;
  *in_slice = out_slice * 2;
  return true;
}

/* ---- fx_pair ------------------------------------------------------------- */
/* Output 0 = input 0's shape, output 1 = {element count of input 0}. */
void shape_inference_fx_pair(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                             const int *input_dims, int (*output_shapes)[MAX_SHAPE_DIMS], int *output_dims) {
  (void)param;
  (void)param_size;
  output_dims[0] = input_dims[0];
  memcpy(output_shapes[0], input_shapes[0], sizeof(int) * (size_t)input_dims[0]);
  output_dims[1] = 1;
  output_shapes[1][0] = elements(input_shapes[0], input_dims[0]);
}

/* ---- fx_both: the compiler's spelling wins --------------------------------- */
bool backward_h_fx_both(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice) {
  (void)param;
  (void)param_size;
  *in_idx = out_idx + 100;
  *in_slice = out_slice;
  return true;
}

bool backwardh_fx_both(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice) {
  (void)param;
  (void)param_size;
  *in_idx = out_idx + 200;
  *in_slice = out_slice;
  return true;
}

/* ---- fx_cast ------------------------------------------------------------- */
void inference_fx_cast(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                       const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  const int count = elements(input_shapes[0], input_dims[0]);
  for (int i = 0; i < count; ++i) outputs[0][i] = inputs[0][i];
}

/* ---- fx_fault: a reference, so the op tester gets as far as the kernel ---- */
void inference_fx_fault(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                        const int *input_dims, const float **inputs, float **outputs) {
  inference_fx_cast(param, param_size, input_shapes, input_dims, inputs, outputs);
}

/* A hook that ends the process in each of the ways a careless plugin can;
 * the SDK must turn each into a failed hook call. */
int fx_dying_hook_line = 0;
void shape_inference_fx_fault(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                              const int *input_dims, int (*output_shapes)[MAX_SHAPE_DIMS], int *output_dims) {
  const custom_param_t *p = (const custom_param_t *)param;
  const int how = param_size >= 2 * (int)sizeof(custom_param_t) ? p[1].int_t : 0;
  volatile int *wild = (volatile int *)(uintptr_t)0x10;
  fx_dying_hook_line = __LINE__ + 2;
  switch (how) {
    case 1: exit(0);
    case 2: abort();
    case 3: assert(how == 0); break;
    case 4: *wild = 1; break;
    case 5: _exit(3);
    default: break;
  }
  memcpy(output_shapes[0], input_shapes[0], sizeof(output_shapes[0]));
  output_dims[0] = input_dims[0];
}

/* ---- fx_short: the input's first half, then zeros ------------------------- */
void inference_fx_short(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                        const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  const int count = elements(input_shapes[0], input_dims[0]);
  const int written = count - count / 2;
  for (int i = 0; i < count; ++i) outputs[0][i] = i < written ? inputs[0][i] : 0.0f;
}
