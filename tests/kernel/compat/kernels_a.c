/* Kernels in the current vendor style (torch-tpu firmware_core): the vendor
 * companion common.h included first, int-returning kernels, registration
 * with and without ';', a FUNC_TYPE_2 kernel, TPUKERNEL_ERR, printf. Built
 * into one kernel library with kernels_b.c and loaded with dlopen. */
#include "common.h"
#include "tpu_kernel.h"

#include "compat_kernels.h"

/* §5 item 1: int-returning, registered with ';'. */
int add_one_kernel(const void *args) {
  const add_one_args_t *a = (const add_one_args_t *)args;
  tpu_poll_descriptor(); /* torch-tpu's entry in place of tpu_initialize */
  const dim4 shape = {1, 1, 1, a->n};
  const local_addr_t local = 0;
  scalar_t one;
  one.f32 = 1.0f;
  tpu_gdma_cpy_S2L(local, a->in, &shape, NULL, NULL, DT_FP32);
  tpu_bdc_fp_add_C(local, local, one, &shape, NULL, NULL, DT_FP32);
  tpu_gdma_cpy_L2S(a->out, local, &shape, NULL, NULL, DT_FP32);
  return 0;
}
TPUKERNEL_FUNC_REGISTER(add_one_kernel);

/* §5 item 2: void-returning, registered without ';' (the PPL form); §5
 * item 20: tpu_gdma_system_set. */
void fill_kernel(const void *args) {
  const fill_args_t *a = (const fill_args_t *)args;
  scalar_t value;
  value.u32 = a->value;
  tpu_gdma_system_set(a->dst, value, (unsigned)a->count, (data_type_t)a->dtype);
}
TPUKERNEL_FUNC_REGISTER(fill_kernel)

/* §5 item 4: FUNC_TYPE_2 gets the blob and its size; it may write the blob. */
int sized_kernel(void *args, int size) {
  fill_args_t *a = (fill_args_t *)args;
  a->value = (uint32_t)size;
  scalar_t value;
  value.s32 = size;
  tpu_gdma_system_set(a->dst, value, 1, DT_INT32);
  return size;
}
TPUKERNEL_FUNC2_REGISTER(sized_kernel);

/* §5 item 8: TPUKERNEL_ERR stops the kernel; the marker is never written. */
int error_kernel(const void *args) {
  const marker_args_t *a = (const marker_args_t *)args;
  printf("error_kernel: about to fail\n");
  TPUKERNEL_ERR("bad %d\n", 1);
  scalar_t one;
  one.s32 = 1;
  tpu_gdma_system_set(a->marker, one, 1, DT_INT32);
  return 0;
}
TPUKERNEL_FUNC_REGISTER(error_kernel)

/* §5 item 18: FP8 functions compile, and stop the kernel on these chips. */
int fp8_kernel(const void *args) {
  const marker_args_t *a = (const marker_args_t *)args;
  const dim4 shape = {1, 1, 1, 8};
  scalar_t c;
  c.u32 = 0;
  tpu_bdc_fp8_add_C(0, 1024, c, &shape, NULL, NULL, DT_FP8E4M3, DT_FP8E4M3, DT_FP8E4M3, 0);
  scalar_t one;
  one.s32 = 1;
  tpu_gdma_system_set(a->marker, one, 1, DT_INT32);
  return 0;
}
TPUKERNEL_FUNC_REGISTER(fp8_kernel)

/* §5 item 19: single-chip, single-core answers. */
int defaults_kernel(const void *args) {
  const defaults_args_t *a = (const defaults_args_t *)args;
  const int values[7] = {tpu_workitem_num(), tpu_workitem_index(), tpu_group_num(), tpu_group_index(),
                         tpu_chip_num(),     tpu_is_descriptor_mode() ? 1 : 0, tpu_core_num() >= 1};
  for (int i = 0; i < 7; i++) {
    scalar_t v;
    v.s32 = values[i];
    tpu_gdma_system_set(a->out + 4 * (uint64_t)i, v, 1, DT_INT32);
  }
  return 0;
}
TPUKERNEL_FUNC_REGISTER(defaults_kernel);
