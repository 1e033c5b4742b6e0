/*
 * ppl_test_host.h: the host side of PPL __TEST__ programs (docs/ppl.md,
 * "__TEST__ programs"), in C so that a .pl translation unit can include it
 * (it must not see tpu_kernel.h or the C++ library's <cstdlib>).
 * Implemented in libtpu_runtime (runtime/check/ppl_test_runner.cc), which
 * a test program links.
 *
 * A program built by tpu_ppl_test (cmake/TpuPpl.cmake) opens the emulator
 * for the chip given as its first argument, runs the .pl file's __TEST__
 * functions, and, around each kernel call, writes the kernel's pointer
 * arguments to <data dir>/<stem>_input.npz before the call and to
 * <stem>_tar.npz after it (keys "0", "1", ...: the pointer's index among
 * the pointer parameters, as the vendor's runner names them; a second call
 * writes <stem>_1_input.npz, ...). A buffer the test did not allocate with
 * ppl::malloc / ppl::rand is not written (it has no known shape).
 */
#ifndef PPL_TEST_HOST_H
#define PPL_TEST_HOST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A zero-filled global buffer of shape n, c, h, w (continuous) of PPL
 * element type `ppl_dtype` (ppl.h's DT_* numbering) and `element_size`
 * bytes per element, remembered for the dumps. `where` ("file:line") names
 * the call in errors. 0 (after saying why on stderr) when it cannot be had. */
uint64_t ppl_test_alloc(int ppl_dtype, int element_size, const int shape[4], const char *where);

/* Fills the n*c*h*w elements from `address` with uniform values in [lo, hi)
 * (integers: lo to hi - 1), converted to the element type; a fixed seed, so
 * every run sees the same data. 0 on success. */
int ppl_test_fill_random(uint64_t address, int ppl_dtype, const int shape[4], double lo, double hi,
                         const char *where);

/* Around a kernel call: the dumps, and the call's failure (a return code
 * other than 0, with cmodel_last_error) counted against the running test.
 * ppl_test_after_call returns `status`. */
void ppl_test_before_call(const char *kernel, const uint64_t *pointers, int count);
int ppl_test_after_call(const char *kernel, int status, const uint64_t *pointers, int count);

typedef int (*ppl_test_function)(void);

/* The program: `argv[1]` the chip (bm1684x or bm1688; default bm1684x),
 * `argv[2]` the data directory (default "data"). Runs every test; a test
 * fails when it returns non-zero or a kernel it called failed. 0 when all
 * passed. */
int ppl_test_main(int argc, char **argv, const char *stem, const char *const *names, const ppl_test_function *tests,
                  int count);

#ifdef __cplusplus
}
#endif

#endif
