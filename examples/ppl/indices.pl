// indices.pl: integer pooling of int8 data, a scatter along W by a uint16
// index, and dma::nonzero, whose count the kernel then uses.
#include "ppl.h"
using namespace ppl;

// x [1, C, H, W] int8: maxima [1, C, H - 1, W - 1] of each 2 x 2 window;
// averages (int16) = (sum of each 2 x 2 window * 3) >> 2, rounded half up.
__KERNEL__ void int_pools(int8 *maxima, int16 *averages, int8 *x, int C, int H, int W) {
  dim4 in_shape = {1, C, H, W};
  dim4 out_shape = {1, C, H - 1, W - 1};
  auto a = make_tensor<int8>(in_shape, in_shape);
  dma::load(a, gtensor<int8>(in_shape, GLOBAL, x));
  dim2 kernel = {2, 2}, unit = {1, 1};
  padding_t none = {0, 0, 0, 0};
  auto m = make_tensor<int8>(out_shape, out_shape);
  tiu::pool_max(m, a, &kernel, &none, &unit, &unit);
  dma::store(gtensor<int8>(out_shape, GLOBAL, maxima), m);
  auto s = make_tensor<int16>(out_shape, out_shape);
  tiu::pool_avg(s, a, &kernel, &none, &unit, &unit, 3, 2);
  dma::store(gtensor<int16>(out_shape, GLOBAL, averages), s);
}

// The same pools in the handle form (pool::param), for the same bytes.
__KERNEL__ void int_pools_handles(int8 *maxima, int16 *averages, int8 *x, int C, int H, int W) {
  dim4 in_shape = {1, C, H, W};
  dim4 out_shape = {1, C, H - 1, W - 1};
  auto a = make_tensor<int8>(in_shape, in_shape);
  dma::load(a, gtensor<int8>(in_shape, GLOBAL, x));
  int kernel = pool::param::kernel(2, 2, 1, 1);
  int none = pool::param::padding(0, 0, 0, 0, 0);
  auto m = make_tensor<int8>(out_shape, out_shape);
  tiu::pool_max(m, a, kernel, none, pool::param::insert());
  dma::store(gtensor<int8>(out_shape, GLOBAL, maxima), m);
  auto s = make_tensor<int16>(out_shape, out_shape);
  tiu::pool_avg(s, a, kernel, none, 3, 2);
  dma::store(gtensor<int16>(out_shape, GLOBAL, averages), s);
}

// out [1, C, 1, OW] = -1 except out(c, index(c, w)) = param(c, w) for
// param, index [1, C, 1, W].
__KERNEL__ void scatter_columns(fp32 *out, fp32 *param, uint16 *index, int C, int W, int OW) {
  dim4 p_shape = {1, C, 1, W};
  dim4 o_shape = {1, C, 1, OW};
  auto p = make_tensor<fp32>(p_shape, p_shape);
  auto i = make_tensor<uint16>(p_shape, p_shape);
  dma::load(p, gtensor<fp32>(p_shape, GLOBAL, param));
  dma::load(i, gtensor<uint16>(p_shape, GLOBAL, index));
  auto o = make_tensor<fp32>(o_shape, o_shape);
  tiu::fill(o, -1.0);
  tiu::scatter_w(o, p, i);
  dma::store(gtensor<fp32>(o_shape, GLOBAL, out), o);
}

// indices = the flat positions of x's non-zero values (plus 100); count[0]
// = their number, stored by the kernel from the returned count; the first
// `count` indices are then copied to `first`.
__KERNEL__ void find_nonzero(uint32 *indices, int32 *count, uint32 *first, fp32 *x, int N) {
  dim4 shape = {1, 1, 1, N};
  auto a = make_tensor<fp32>(shape, shape);
  dma::load(a, gtensor<fp32>(shape, GLOBAL, x));
  gtensor<uint32> g_indices(shape, GLOBAL, indices);
  const unsigned found = dma::nonzero(g_indices, a, 100);
  dim4 one = {1, 1, 1, 1};
  dma::fill(gtensor<int32>(one, GLOBAL, count), static_cast<double>(found));
  if (found > 0) {
    dim4 head = {1, 1, 1, static_cast<int>(found)};
    dma::move(gtensor<uint32>(head, GLOBAL, first), g_indices.sub_view(head, {0, 0, 0, 0}));
  }
}
