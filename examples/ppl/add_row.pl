// add_row.pl: out = x + row over a [1, C, 1, W] fp32 tensor, the row
// [1, 1, 1, W] broadcast over the channels (PPL copies it to every lane
// first), and C larger than the lanes.
#include "ppl.h"
using namespace ppl;

__KERNEL__ void add_row_f32(fp32 *out, fp32 *x, fp32 *row, int C, int W) {
  dim4 shape = {1, C, 1, W};
  dim4 one_row = {1, 1, 1, W};
  gtensor<fp32> g_x(shape, GLOBAL, x);
  gtensor<fp32> g_row(one_row, GLOBAL, row);
  gtensor<fp32> g_out(shape, GLOBAL, out);
  auto a = make_tensor<fp32>(shape, shape);
  auto r = make_tensor<fp32>(one_row, one_row);
  auto sum = make_tensor<fp32>(shape, shape);
  dma::load(a, g_x);
  dma::load(r, g_row);
  tiu::fadd(sum, a, r);
  dma::store(g_out, sum);
}
