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

/* As ppl_test_fill_random, for the elements (n, c, h, w) of `shape` at
 * element (offset + (n, c, h, w)) . stride from `address`; the other
 * elements keep their values. They must lie in one buffer of ppl::malloc /
 * ppl::rand. On failure (said on stderr) the running test fails; -1. */
int ppl_test_fill_random_strided(uint64_t address, int ppl_dtype, const int stride_shape[4], const int stride[4],
                                 const int offset[4], double lo, double hi, const char *where);

/* Loads a file into the buffer from `address` (of ppl::malloc / ppl::rand;
 * its elements from `address` to its end), converted to `ppl_dtype`: mode 0
 * raw elements of `file_dtype`, 1 an .npy file, 2 the array `name` of an
 * .npz file (NULL or "": its only array). The file's element count must be
 * the buffer's. A relative path is tried as given, then next to the .pl
 * file `where` names. On failure (said on stderr) the running test fails;
 * -1. */
int ppl_test_read_file(uint64_t address, int ppl_dtype, const char *path, int mode, int file_dtype, const char *name,
                       const char *where);

/* Around a kernel call: the dumps, and the call's failure (a return code
 * other than 0, with cmodel_last_error) counted against the running test.
 * ppl_test_after_call returns `status`. */
void ppl_test_before_call(const char *kernel, const uint64_t *pointers, int count);
int ppl_test_after_call(const char *kernel, int status, const uint64_t *pointers, int count);

/* __AUTOTUNE__ functions (docs/ppl.md): the scalar arguments of the kernel
 * call about to run, for the function's table (ignored in a __TEST__
 * function); and a pointer argument's address, which for a null pointer of
 * an __AUTOTUNE__ function is a zero-filled scratch buffer of its own
 * (pointer `index`; PPL_AUTOTUNE_SCRATCH_BYTES, default 16 MiB). */
void ppl_test_arguments(const char *const *names, const double *values, int count);
uint64_t ppl_test_pointer(uint64_t address, int index);

typedef int (*ppl_test_function)(void);

/* The program: `argv[1]` the chip (bm1684x or bm1688; default bm1684x),
 * `argv[2]` the data directory (default "data"). Runs every function; a
 * __TEST__ function (autotune[i] 0) fails when it returns non-zero or a
 * kernel it called failed; an __AUTOTUNE__ one (autotune[i] 1) prints the
 * table of its kernel calls (scalar arguments, status, the cost model's
 * estimate) and the fastest, and fails when it returns non-zero or none of
 * its calls succeeded. 0 when all passed. */
int ppl_test_main(int argc, char **argv, const char *stem, const char *const *names, const ppl_test_function *tests,
                  const int *autotune, int count);

#ifdef __cplusplus
}
#endif

#endif
