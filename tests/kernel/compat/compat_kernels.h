/* Argument blobs shared by the compatibility kernels and their host. */
#ifndef COMPAT_KERNELS_H
#define COMPAT_KERNELS_H

#include <stdint.h>

/* out[i] = in[i] + 1 for n fp32 values (add_one_kernel). */
typedef struct {
  uint64_t in, out;
  int n;
} add_one_args_t;

/* count elements of dtype at dst set to the 32-bit pattern value
 * (fill_kernel); also the FUNC_TYPE_2 kernel's blob, which writes the size
 * it was given instead. */
typedef struct {
  uint64_t dst;
  uint32_t value;
  int count;
  int dtype;
} fill_args_t;

/* A kernel that writes one marker after a call that must stop it. */
typedef struct {
  uint64_t marker;
} marker_args_t;

/* The single-chip queries, written as int32 to out[0..6]. */
typedef struct {
  uint64_t out;
} defaults_args_t;

/* dst[i] = exp(src[i]) (or another table-driven function, per op) for n
 * values of dtype, in tiles, in place in local memory. */
typedef struct {
  uint64_t src, dst;
  int n;
  int dtype;
  int op; /* 0 exp, 1 log, 2 expm1, 3 erf, 4 erfc */
} math_args_t;

/* out = left (rows x inner) * right (inner x cols), fp32 row-major. */
typedef struct {
  uint64_t left, right, out;
  int rows, inner, cols;
} mm_args_t;

/* Prints a small fp32 tensor with tpu_print_local_mem_data. */
typedef struct {
  uint64_t src;
} print_args_t;

/* gather_kernel: out[c][w] = table[c][index[c][w]], fp32 table (1, c, 1,
 * table_w), uint32 index and output (1, c, 1, n). */
typedef struct {
  uint64_t table, index, out;
  int c, table_w, n;
} gather_args_t;

#endif
