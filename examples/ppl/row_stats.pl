// row_stats.pl: the sum and the maximum of every row of a [rows, W] matrix
// (two outputs), rows on the channels, in blocks of BR rows; the sum is
// also produced in fp16 from fp16 input, through an fp32 cast.
#include "ppl.h"
using namespace ppl;

__KERNEL__ void row_stats_f32(fp32 *sums, fp32 *maxima, fp32 *x, int rows, int W, const int BR) {
  gtensor<fp32> g_x({1, rows, 1, W}, GLOBAL, x);
  gtensor<fp32> g_sums({1, rows, 1, 1}, GLOBAL, sums);
  gtensor<fp32> g_maxima({1, rows, 1, 1}, GLOBAL, maxima);
  for (int r = 0; r < rows; r += BR) {
    const int rr = min(BR, rows - r);
    dim4 real = {1, rr, 1, W};
    dim4 one = {1, rr, 1, 1};
    auto in = make_tensor<fp32>({1, BR, 1, W}, real);
    dma::load(in, g_x.sub_view(real, {0, r, 0, 0}));
    auto sum = make_tensor<fp32>({1, BR, 1, 1}, one);
    tiu::reduce(sum, in, ALL_REDUCE_SUM);
    auto largest = make_tensor<fp32>({1, BR, 1, 1}, one);
    tiu::reduce(largest, in, ALL_REDUCE_MAX);
    dma::store(g_sums.sub_view(one, {0, r, 0, 0}), sum);
    dma::store(g_maxima.sub_view(one, {0, r, 0, 0}), largest);
  }
}

// The fp16 rows summed in fp32, the result rounded back to fp16.
__KERNEL__ void row_sum_f16(fp16 *sums, fp16 *x, int rows, int W) {
  dim4 real = {1, rows, 1, W};
  dim4 one = {1, rows, 1, 1};
  gtensor<fp16> g_x(real, GLOBAL, x);
  gtensor<fp16> g_sums(one, GLOBAL, sums);
  auto in = make_tensor<fp16>(real, real);
  dma::load(in, g_x);
  auto wide = make_tensor<fp32>(real, real);
  tiu::cast(wide, in);
  auto sum = make_tensor<fp32>(one, one);
  tiu::reduce(sum, wide, ALL_REDUCE_SUM);
  auto narrow = make_tensor<fp16>(one, one);
  tiu::cast(narrow, sum);
  dma::store(g_sums, narrow);
}
