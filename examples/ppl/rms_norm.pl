// rms_norm.pl: every row of a [rows, W] fp32 matrix divided by its root
// mean square: y = x / sqrt(mean(x^2) + eps). Rows on the channels, in
// blocks of BR rows, the loop pipelined; the per-row factor broadcasts
// over W.
#include "ppl.h"
using namespace ppl;

__KERNEL__ void rms_norm_f32(fp32 *out, fp32 *x, int rows, int W, float eps, const int BR) {
  dim4 shape = {1, rows, 1, W};
  gtensor<fp32> g_x(shape, GLOBAL, x);
  gtensor<fp32> g_out(shape, GLOBAL, out);
  for (int r = 0; r < rows; r += BR) {
    enable_pipeline();
    const int rr = min(BR, rows - r);
    dim4 real = {1, rr, 1, W};
    dim4 one = {1, rr, 1, 1};
    auto in = make_tensor<fp32>({1, BR, 1, W}, real);
    dma::load(in, g_x.sub_view(real, {0, r, 0, 0}));
    auto squares = make_tensor<fp32>({1, BR, 1, W}, real);
    tiu::fmul(squares, in, in);
    auto sum = make_tensor<fp32>({1, BR, 1, 1}, one);
    tiu::reduce(sum, squares, ALL_REDUCE_SUM);
    auto mean = make_tensor<fp32>({1, BR, 1, 1}, one);
    tiu::fmul(mean, sum, 1.0f / W);
    tiu::fadd(mean, mean, eps);
    auto factor = make_tensor<fp32>({1, BR, 1, 1}, one);
    tiu::frsqrt(factor, mean, 4);
    auto result = make_tensor<fp32>({1, BR, 1, W}, real);
    tiu::fmul(result, in, factor);
    dma::store(g_out.sub_view(real, {0, r, 0, 0}), result);
  }
}
