// host_sgemm.cc: mm_bench's host baseline, OpenBLAS's cblas_sgemm on one
// thread. In its own file because OpenBLAS's headers and tpu_kernel.h both
// define a `bfloat16` type.
#include "bench/host_sgemm.h"

#include <cblas.h>

// OpenBLAS's own call (its cblas.h declares it; the reference cblas.h does not).
extern "C" void openblas_set_num_threads(int num_threads);

namespace bench {

void host_sgemm_single_thread() { openblas_set_num_threads(1); }

void host_sgemm(int n, const float *a, const float *b, float *c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}

}  // namespace bench
