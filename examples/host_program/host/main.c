/* main.c: a device program as it is written for a Sophgo TPU: open the
 * device, load the kernel module, copy the inputs in, launch, copy the
 * result out. Built against the SDK it runs on the emulator unchanged.
 *
 *   saxpy [module file] [n]     (default: libsaxpy_kernels.so beside the
 *                                program, 100000 elements)
 * TPU_SDK_CHIP=bm1688 runs it on the bm1688 instead of the bm1684x. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmlib_runtime.h"
#include "saxpy_args.h"

static int fail(const char *what, bm_status_t status) {
  fprintf(stderr, "saxpy: %s failed with status %d\n", what, (int)status);
  return 1;
}

/* The module next to the program, when no path is given. */
static void default_module(const char *program, char *path, size_t size) {
  const char *slash = strrchr(program, '/');
  const int dir_len = slash ? (int)(slash - program + 1) : 0;
  snprintf(path, size, "%.*slibsaxpy_kernels.so", dir_len, program);
}

static int run(bm_handle_t handle, const char *module_file, int n) {
  tpu_kernel_module_t module = tpu_kernel_load_module_file(handle, module_file);
  if (!module) return fail("tpu_kernel_load_module_file", BM_ERR_FAILURE);
  tpu_kernel_function_t saxpy = tpu_kernel_get_function(handle, module, "saxpy_kernel");
  if (saxpy < 0) return fail("tpu_kernel_get_function", BM_ERR_FAILURE);

  float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
  float *result = malloc(sizeof(float) * (size_t)n);
  const float a = 2.5f;
  for (int i = 0; i < n; ++i) {
    x[i] = (float)(i % 1000) * 0.5f;
    y[i] = 1.0f - (float)(i % 17);
  }
  bm_device_mem_t x_mem, y_mem;
  int status = 1;
  if (bm_malloc_device_byte(handle, &x_mem, sizeof(float) * (unsigned)n) != BM_SUCCESS) goto out;
  if (bm_malloc_device_byte(handle, &y_mem, sizeof(float) * (unsigned)n) != BM_SUCCESS) goto free_x;
  bm_status_t ret = bm_memcpy_s2d(handle, x_mem, x);
  if (ret == BM_SUCCESS) ret = bm_memcpy_s2d(handle, y_mem, y);
  if (ret != BM_SUCCESS) {
    fail("bm_memcpy_s2d", ret);
    goto free_y;
  }
  saxpy_args_t args = {bm_mem_get_device_addr(x_mem), bm_mem_get_device_addr(y_mem), a, n};
  ret = tpu_kernel_launch(handle, saxpy, &args, sizeof args);
  if (ret == BM_SUCCESS) ret = bm_thread_sync(handle);
  if (ret != BM_SUCCESS) {
    fail("tpu_kernel_launch", ret);
    goto free_y;
  }
  ret = bm_memcpy_d2s(handle, result, y_mem);
  if (ret != BM_SUCCESS) {
    fail("bm_memcpy_d2s", ret);
    goto free_y;
  }
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    if (fabsf(result[i] - (a * x[i] + y[i])) > 1e-4f * (1.0f + fabsf(a * x[i] + y[i]))) ++wrong;
  printf("saxpy: %d elements, %d wrong\n", n, wrong);
  status = wrong != 0;
free_y:
  bm_free_device(handle, y_mem);
free_x:
  bm_free_device(handle, x_mem);
out:
  free(x);
  free(y);
  free(result);
  tpu_kernel_unload_module(handle, module);
  return status;
}

int main(int argc, char **argv) {
  char module_file[4096];
  if (argc > 1)
    snprintf(module_file, sizeof module_file, "%s", argv[1]);
  else
    default_module(argv[0], module_file, sizeof module_file);
  const int n = argc > 2 ? atoi(argv[2]) : 100000;

  bm_handle_t handle;
  bm_status_t ret = bm_dev_request(&handle, 0);
  if (ret != BM_SUCCESS) return fail("bm_dev_request", ret);
  unsigned int chipid = 0;
  bm_get_chipid(handle, &chipid);
  printf("saxpy: device 0, chip id 0x%x\n", chipid);
  const int status = run(handle, module_file, n);
  bm_dev_free(handle);
  return status;
}
