// matmul.pl: out[M, N] = left[M, K] x right[K, N] in fp32 with fmm2, the
// rows of each matrix on the lanes (one tile: M, K <= the lanes' rows).
#include "ppl.h"
using namespace ppl;

__KERNEL__ void matmul_f32(fp32 *out, fp32 *left, fp32 *right, int M, int K, int N) {
  dim4 l_shape = {1, M, 1, K};
  dim4 r_shape = {1, K, 1, N};
  dim4 o_shape = {1, M, 1, N};
  gtensor<fp32> g_left(l_shape, GLOBAL, left);
  gtensor<fp32> g_right(r_shape, GLOBAL, right);
  gtensor<fp32> g_out(o_shape, GLOBAL, out);
  auto l = make_tensor<fp32>(l_shape, l_shape);
  auto r = make_tensor<fp32>(r_shape, r_shape);
  auto o = make_tensor<fp32>(o_shape, o_shape);
  dma::load(l, g_left);
  dma::load(r, g_right);
  tiu::fmm2(o, l, r);
  dma::store(g_out, o);
}
