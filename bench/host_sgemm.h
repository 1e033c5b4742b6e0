// host_sgemm.h: the host GEMM mm_bench compares with (host_sgemm.cc).
#pragma once

namespace bench {

// Makes OpenBLAS use one thread from now on.
void host_sgemm_single_thread();

// c = a b for row-major n x n fp32 matrices.
void host_sgemm(int n, const float *a, const float *b, float *c);

}  // namespace bench
