/*
 * cmodel_demo: runs a small kernel on every emulated chip and prints what
 * it cost. The kernel is plain vendor-style C: it tiles a global fp32
 * tensor through local memory and back with GDMA copies, double-buffered
 * inside parallel regions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel_host.h"
#include "tpu_kernel.h"

typedef struct {
  global_addr_t input, output;
  int n, c, h, w;
} demo_param_t;

static void demo_copy_kernel(const void *arg) {
  const demo_param_t *p = (const demo_param_t *)arg;
  const dim4 shape = {1, p->c, p->h, p->w};
  const local_addr_t buffers[2] = {0, (local_addr_t)(LOCAL_MEM_SIZE / 2)};
  const unsigned long long bytes_per_batch = (unsigned long long)p->c * p->h * p->w * sizeof(float);
  for (int n = 0; n < p->n; ++n) {
    const local_addr_t buffer = buffers[n % 2];
    tpu_parallel_start();
    tpu_gdma_cpy_S2L(buffer, p->input + n * bytes_per_batch, &shape, NULL, NULL, DT_FP32);
    tpu_parallel_end();
    tpu_gdma_cpy_L2S(p->output + n * bytes_per_batch, buffer, &shape, NULL, NULL, DT_FP32);
  }
}

static int run_on(const char *chip) {
  demo_param_t p = {0, 0, 4, 96, 16, 32};
  const size_t count = (size_t)p.n * p.c * p.h * p.w;
  float *host_in = malloc(count * sizeof(float));
  float *host_out = malloc(count * sizeof(float));
  int status = -1;
  if (!host_in || !host_out) goto done;
  for (size_t i = 0; i < count; ++i) host_in[i] = (float)i * 0.5f;

  if (cmodel_open(chip) != 0) goto done;
  p.input = cmodel_global_alloc(count * sizeof(float));
  p.output = cmodel_global_alloc(count * sizeof(float));
  if (!p.input || !p.output || cmodel_global_write(p.input, host_in, count * sizeof(float)) != 0) goto done;
  if (cmodel_run(demo_copy_kernel, &p) != 0) goto done;
  if (cmodel_global_read(host_out, p.output, count * sizeof(float)) != 0) goto done;
  if (memcmp(host_in, host_out, count * sizeof(float)) != 0) {
    fprintf(stderr, "%s: the copied tensor differs from the input\n", chip);
    goto done;
  }
  printf("%s: copied [%d, %d, %d, %d] fp32 through local memory: %s\n", chip, p.n, p.c, p.h, p.w,
         cmodel_last_run_stats());
  status = 0;
done:
  if (status != 0 && cmodel_last_error()[0]) fprintf(stderr, "%s: %s\n", chip, cmodel_last_error());
  cmodel_close();
  free(host_in);
  free(host_out);
  return status;
}

int main(void) {
  int failures = 0;
  failures += run_on("bm1684x") != 0;
  failures += run_on("bm1688") != 0;
  return failures == 0 ? 0 : 1;
}
