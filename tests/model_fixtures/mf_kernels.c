/*
 * mf_kernels.c: kernels of the tpu_model_test fixture ops (see
 * register_ops.cmake). Every op is a GDMA copy of whole tensors, so the
 * model tests check the plumbing (scratch buffer, several inputs and
 * outputs, dynamic shape inference) and not arithmetic. Tensors are copied
 * as one row: fine for the small tensors of the tests.
 */
#include <stdint.h>
#include <string.h>

#include "interface_custom_ops.h"
#include "tpu_kernel.h"
#include "tpu_utils.h"

static int mf_elements(const tensor_spec_t *t) {
  int count = 1;
  for (int i = 0; i < t->dims; ++i) count *= t->shape[i];
  return count;
}

static void mf_copy(global_addr_t dst, global_addr_t src, const tensor_spec_t *t) {
  dim4 shape = {1, 1, 1, mf_elements(t)};
  tpu_gdma_cpy_S2S(dst, src, &shape, NULL, NULL, tpu_type_convert((sg_data_type_t)t->dtype));
}

/* ---- mf_scratch: input -> scratch -> output ---------------------------- */
int64_t api_mf_scratch_global_bfsz(const global_tensor_spec_t *input, global_tensor_spec_t *output,
                                   const void *param) {
  (void)output;
  (void)param;
  return (int64_t)mf_elements(input) * tpu_data_type_size(tpu_type_convert((sg_data_type_t)input->dtype));
}

void api_mf_scratch_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  const global_addr_t scratch = (global_addr_t)get_global_buffer_addr(param);
  TPUKERNEL_ASSERT_INFO(scratch != 0, "mf_scratch: no global scratch buffer in element 0");
  if (scratch == 0) return;
  mf_copy(scratch, input->addr, input);
  mf_copy(output->addr, scratch, input);
}

/* ---- mf_forced ------------------------------------------------------------ */
void api_mf_forced_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  mf_copy(output->addr, input->addr, input);
}

/* ---- mf_pick: output = input 1 ---------------------------------------------- */
void api_mf_pick_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  mf_copy(output->addr, input[1].addr, &input[1]);
}

/* ---- mf_split: output 0 = output 1 = input ----------------------------------- */
void api_mf_split_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  mf_copy(output[0].addr, input->addr, input);
  mf_copy(output[1].addr, input->addr, input);
}

/* The default type inference only fills output 0. */
void type_infer_mf_split(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  for (int o = 0; o < 2; ++o) {
    output[o].dtype = input->dtype;
    output[o].dims = input->dims;
    for (int i = 0; i < MAX_SHAPE_DIMS; ++i) output[o].shape[i] = input->shape[i];
    output[o].elem_num = mf_elements(input);
  }
}

/* ---- mf_hostcopy: output = input, copied by the host CPU --------------------
 * tpu_global_mem_addr gives the kernel a host pointer into global memory; a
 * copy through it issues no engine command, so it cannot be recorded into a
 * static layer's command stream. The firmware runs it fine. */
void api_mf_hostcopy_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {
  (void)param;
  const size_t bytes =
      (size_t)mf_elements(input) * tpu_data_type_size(tpu_type_convert((sg_data_type_t)input->dtype));
  memcpy(tpu_global_mem_addr(output->addr), tpu_global_mem_addr(input->addr), bytes);
}
