/* bmlib_kernels.h: the argument blobs of the kernel module bmlib_test
 * loads (bmlib_kernels.c), shared by the kernels and the host test. Packed
 * and sized to a multiple of 4 bytes by hand, as device programs do. */
#ifndef BMLIB_TEST_KERNELS_H
#define BMLIB_TEST_KERNELS_H

#include <stdint.h>

#pragma pack(push, 1)

/* add_kernel: out[i] = a[i] + b[i] for count int32 values. */
typedef struct {
  uint64_t a, b, out;
  int32_t count;
} add_args_t;

/* detect_kernel: writes count to count_addr, then count x 7 floats
 * (base + i) to out_addr, like a detector's post-process output. */
typedef struct {
  uint64_t count_addr, out_addr;
  int32_t count;
  float base;
} detect_args_t;

/* blob_kernel (FUNC_TYPE_2): this header, then len_a bytes, then len_b
 * bytes; writes [size][len_a][len_b] as int32 and both buffers to out. */
typedef struct {
  uint64_t out;
  uint32_t len_a, len_b;
} blob_header_t;

/* core_kernel: writes tpu_core_index() and tpu_core_num() to out[slot*2]. */
typedef struct {
  uint64_t out;
  int32_t slot;
} core_args_t;

/* fault_kernel: a GDMA into local memory past its end. */
typedef struct {
  uint64_t src;
} fault_args_t;

/* seven_kernel: writes 7 to out and returns 7. */
typedef struct {
  uint64_t out;
} seven_args_t;

/* count_kernel: writes how often it ran since its library was loaded. */
typedef struct {
  uint64_t out;
} count_args_t;

#pragma pack(pop)

#endif
