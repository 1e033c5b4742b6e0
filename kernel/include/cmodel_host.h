/*
 * cmodel_host.h: the host side of the emulator.
 *
 * A host program (a standalone kernel test, the op tester, the model
 * runtime) opens an emulated chip, puts data in its global memory, runs a
 * kernel on it and reads the results back. Functions returning int give 0
 * on success and -1 on failure; cmodel_last_error() then says what went
 * wrong and where. No call aborts the process.
 */
#ifndef TPU_SDK_CMODEL_HOST_H
#define TPU_SDK_CMODEL_HOST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a fresh emulator of "bm1684x" or "bm1688" (replacing any open one). */
int cmodel_open(const char *chip);
/* Closes the emulator; its memories are gone. Safe to call when none is open. */
void cmodel_close(void);
/* Name of the open chip, or "" when none is open. */
const char *cmodel_chip(void);

/* A device address of `bytes` bytes of global memory (512-byte aligned), 0 on failure. */
uint64_t cmodel_global_alloc(uint64_t bytes);
void cmodel_global_free(uint64_t addr);
/* Copies between host memory and system memory (an allocated global buffer or L2 SRAM). */
int cmodel_global_write(uint64_t addr, const void *src, uint64_t bytes);
int cmodel_global_read(void *dst, uint64_t addr, uint64_t bytes);

/* Runs kernel(arg) the way the firmware does: tpu_initialize, the kernel,
 * tpu_poll. 0 = ok; non-zero = the kernel hit an error and was stopped at
 * its first bad command (see cmodel_last_error). */
int cmodel_run(void (*kernel)(const void *), const void *arg);

/* Emulator options; 0 on success. The only one so far:
 *   "hazards" = "error" (default) | "warning": what a GDMA/BDC race inside a
 *   parallel region does. As warnings they go to stderr and into the run
 *   statistics instead of stopping the kernel.
 * Options apply to the open emulator and to those opened later; the
 * environment variable TPU_SDK_HAZARDS sets the same option at start. */
int cmodel_set_option(const char *name, const char *value);

/* The message of the last failure; "" after a successful call. */
const char *cmodel_last_error(void);
/* JSON statistics of the last run: chip, total_us, per-engine cycles,
 * busy_us and command counts, overlap_us, GDMA bytes per direction,
 * command counts per API function, warnings. */
const char *cmodel_last_run_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_CMODEL_HOST_H */
