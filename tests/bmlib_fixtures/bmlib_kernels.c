/* bmlib_kernels.c: the kernel module bmlib_test loads with
 * tpu_kernel_load_module_file. Written as a device kernel would be. */
#include <string.h>

#include "bmlib_kernels.h"
#include "tpu_kernel.h"

static int add_kernel(const void *args) {
  const add_args_t *p = (const add_args_t *)args;
  const int32_t *a = (const int32_t *)tpu_global_mem_addr(p->a);
  const int32_t *b = (const int32_t *)tpu_global_mem_addr(p->b);
  int32_t *out = (int32_t *)tpu_global_mem_addr(p->out);
  for (int i = 0; i < p->count; ++i) out[i] = a[i] + b[i];
  return 0;
}
TPUKERNEL_FUNC_REGISTER(add_kernel);

static void detect_kernel(const void *args) {
  const detect_args_t *p = (const detect_args_t *)args;
  scalar_t count;
  count.s32 = p->count;
  tpu_gdma_system_set(p->count_addr, count, 1, DT_INT32);  /* an engine command: shows in the run stats */
  float *out = (float *)tpu_global_mem_addr(p->out_addr);
  for (int i = 0; i < p->count * 7; ++i) out[i] = p->base + (float)i;
}
TPUKERNEL_FUNC_REGISTER(detect_kernel);

static void blob_kernel(void *args, int size) {
  const blob_header_t *h = (const blob_header_t *)args;
  unsigned char *out = (unsigned char *)tpu_global_mem_addr(h->out);
  const int32_t sizes[3] = {size, (int32_t)h->len_a, (int32_t)h->len_b};
  memcpy(out, sizes, sizeof sizes);
  memcpy(out + sizeof sizes, (const unsigned char *)args + sizeof *h, h->len_a + h->len_b);
}
TPUKERNEL_FUNC2_REGISTER(blob_kernel);

static void core_kernel(const void *args) {
  const core_args_t *p = (const core_args_t *)args;
  int32_t *out = (int32_t *)tpu_global_mem_addr(p->out);
  out[p->slot * 2] = tpu_core_index();
  out[p->slot * 2 + 1] = tpu_core_num();
}
TPUKERNEL_FUNC_REGISTER(core_kernel);

static void fault_kernel(const void *args) {
  const fault_args_t *p = (const fault_args_t *)args;
  const dim4 shape = {1, 1, 1, 64};
  /* Local addresses count NPU by NPU: this one lies past the last NPU. */
  tpu_gdma_cpy_S2L((local_addr_t)(LOCAL_MEM_SIZE * NPU_NUM), p->src, &shape, NULL, NULL, DT_INT32);
}
TPUKERNEL_FUNC_REGISTER(fault_kernel);

/* Never ends: the run's time limit (bm_set_sync_timeout) must stop it. */
static volatile int spin_sink;
static void spin_kernel(const void *args) {
  (void)args;
  for (;;) spin_sink = spin_sink + 1;
}
TPUKERNEL_FUNC_REGISTER(spin_kernel);

static int seven_kernel(const void *args) {
  const seven_args_t *p = (const seven_args_t *)args;
  *(int32_t *)tpu_global_mem_addr(p->out) = 7;
  return 7;
}
TPUKERNEL_FUNC_REGISTER(seven_kernel);

/* Static state lives as long as the library stays loaded. */
static int count_kernel_runs;
static void count_kernel(const void *args) {
  const count_args_t *p = (const count_args_t *)args;
  *(int32_t *)tpu_global_mem_addr(p->out) = ++count_kernel_runs;
}
TPUKERNEL_FUNC_REGISTER(count_kernel);

/* Waits for every core of its launch group, then writes 1 to out. */
static void sync_all_kernel(const void *args) {
  const count_args_t *p = (const count_args_t *)args;
  tpu_sync_all();
  *(int32_t *)tpu_global_mem_addr(p->out) = 1;
}
TPUKERNEL_FUNC_REGISTER(sync_all_kernel);
