/*
 * A kernel project outside the SDK tree: compiled against <prefix>/include
 * and linked to <prefix>/lib/libcmodel.so only. It runs a good kernel, then
 * one that writes past the end of local memory, and checks that the error
 * names the call and the rule while the process carries on.
 */
#include <stdio.h>
#include <string.h>

#include "cmodel_host.h"
#include "tpu_kernel.h"

typedef struct {
  global_addr_t input, output;
  int channels;
} copy_param_t;

static void scale_copy_kernel(const void *arg) {
  const copy_param_t *p = (const copy_param_t *)arg;
  const dim4 shape = {1, p->channels, 2, 8};
  TPUKERNEL_ASSERT(p->channels > 0);
  tpu_gdma_cpy_S2L(4 * BANK_SIZE, p->input, &shape, NULL, NULL, DT_FP32);
  tpu_gdma_cpy_L2S(p->output, 4 * BANK_SIZE, &shape, NULL, NULL, DT_FP32);
}

static void overflowing_kernel(const void *arg) {
  const copy_param_t *p = (const copy_param_t *)arg;
  const dim4 shape = {1, p->channels, 2, 8};
  /* 64 bytes per NPU starting 32 bytes before the end of local memory. */
  tpu_gdma_cpy_S2L(LOCAL_MEM_SIZE - 32, p->input, &shape, NULL, NULL, DT_FP32);
}

static int expect(int ok, const char *what) {
  if (!ok) fprintf(stderr, "FAILED: %s (last error: %s)\n", what, cmodel_last_error());
  return ok ? 0 : 1;
}

static int check_chip(const char *chip) {
  int failures = 0;
  float in[64 * 16], out[64 * 16];
  copy_param_t p = {0, 0, 64};
  for (int i = 0; i < 64 * 16; ++i) in[i] = (float)i - 100.0f;
  failures += expect(cmodel_open(chip) == 0, "open");
  p.input = cmodel_global_alloc(sizeof in);
  p.output = cmodel_global_alloc(sizeof out);
  failures += expect(cmodel_global_write(p.input, in, sizeof in) == 0, "write input");

  failures += expect(cmodel_run(scale_copy_kernel, &p) == 0, "good kernel runs");
  failures += expect(cmodel_global_read(out, p.output, sizeof out) == 0, "read output");
  failures += expect(memcmp(in, out, sizeof in) == 0, "output equals input");

  failures += expect(cmodel_run(overflowing_kernel, &p) != 0, "overflowing kernel is stopped");
  const char *message = cmodel_last_error();
  printf("%s: %s\n", chip, message);
  failures += expect(strstr(message, "tpu_gdma_cpy_S2L") != NULL, "message names the call");
  failures += expect(strstr(message, "no wrap into the next") != NULL, "message names the rule");
  /* Every NPU's 64 bytes run past its end; NPU 0 is the first. */
  failures += expect(strstr(message, "the first being NPU 0") != NULL, "message names the first NPU");
  failures += expect(strstr(message, "overflowing_kernel") != NULL, "message names the kernel");
  failures += expect(strstr(message, "standalone_kernel.c:") != NULL, "message names the file and line");

  failures += expect(cmodel_run(scale_copy_kernel, &p) == 0, "the process carries on");
  cmodel_close();
  return failures;
}

int main(void) {
  const int failures = check_chip("bm1684x") + check_chip("bm1688");
  printf(failures ? "standalone kernel: %d failure(s)\n" : "standalone kernel: all checks passed\n", failures);
  return failures ? 1 : 0;
}
