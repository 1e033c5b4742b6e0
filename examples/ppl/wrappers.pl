// wrappers.pl: the functions of ppl_wrapper_func.h over rows of [1, C, 1, W]
// fp32 values: quick_pooling (maximum and mean of each row), flog,
// sigmoid_fp32, pow_f32 (tensor ^ scalar, scalar ^ tensor, tensor ^
// tensor), farcsin, arange_broadcast, and a 3 x 1 min pooling.
#include "ppl.h"
#include "ppl_wrapper_func.h"
using namespace ppl;

__KERNEL__ void row_pooling(fp32 *row_max, fp32 *row_mean, fp32 *x, int C, int W, const int BW) {
  dim4 block = {1, C, 1, BW};
  dim4 real = {1, C, 1, W};
  dim4 rows = {1, C, 1, 1};
  auto a = make_tensor<fp32>(block, real);
  dma::load(a, gtensor<fp32>(real, GLOBAL, x));
  auto m = make_tensor<fp32>(rows, rows);
  quick_pooling(m, a, &block, &real, -1e30f, 0);
  dma::store(gtensor<fp32>(rows, GLOBAL, row_max), m);
  quick_pooling(m, a, &block, &real, 0.0f, 1, 1.0f / W);
  dma::store(gtensor<fp32>(rows, GLOBAL, row_mean), m);
}

// logs = ln x, sigmoids = sigmoid(y), squares = x^2, powers = 2^y,
// general = x^y, arcsines = arcsin(z).
__KERNEL__ void functions(fp32 *logs, fp32 *sigmoids, fp32 *squares, fp32 *powers, fp32 *general, fp32 *arcsines,
                          fp32 *x, fp32 *y, fp32 *z, int C, int W) {
  dim4 shape = {1, C, 1, W};
  auto a = make_tensor<fp32>(shape, shape);
  auto b = make_tensor<fp32>(shape, shape);
  auto c = make_tensor<fp32>(shape, shape);
  dma::load(a, gtensor<fp32>(shape, GLOBAL, x));
  dma::load(b, gtensor<fp32>(shape, GLOBAL, y));
  dma::load(c, gtensor<fp32>(shape, GLOBAL, z));
  auto r = make_tensor<fp32>(shape, shape);
  flog(r, a, &shape, &shape);
  dma::store(gtensor<fp32>(shape, GLOBAL, logs), r);
  sigmoid_fp32(r, b, &shape, &shape);
  dma::store(gtensor<fp32>(shape, GLOBAL, sigmoids), r);
  pow_f32(r, a, 2.0f, &shape, &shape);
  dma::store(gtensor<fp32>(shape, GLOBAL, squares), r);
  pow_f32(r, 2.0f, b, &shape, &shape);
  dma::store(gtensor<fp32>(shape, GLOBAL, powers), r);
  pow_f32(r, a, b, &shape, &shape);
  dma::store(gtensor<fp32>(shape, GLOBAL, general), r);
  farcsin(r, c, &shape, &shape);
  dma::store(gtensor<fp32>(shape, GLOBAL, arcsines), r);
}

// sequence [1, C, 1, N] = start + i * step in every channel.
__KERNEL__ void sequence(int32 *out, int C, int start, int step, const int N) {
  dim4 shape = {1, C, 1, N};
  auto t = make_tensor<int32>(shape, shape);
  arange_broadcast(t, C, start, step, N);
  dma::store(gtensor<int32>(shape, GLOBAL, out), t);
}

// out [1, C, H - 2, W] = minimum of each 3 x 1 window of x [1, C, H, W].
__KERNEL__ void min_pool(fp32 *out, fp32 *x, int C, int H, int W) {
  dim4 in_shape = {1, C, H, W};
  dim4 out_shape = {1, C, H - 2, W};
  auto a = make_tensor<fp32>(in_shape, in_shape);
  dma::load(a, gtensor<fp32>(in_shape, GLOBAL, x));
  auto o = make_tensor<fp32>(out_shape, out_shape);
  dim2 kernel = {3, 1}, unit = {1, 1};
  padding_t none = {0, 0, 0, 0};
  tiu::fpool_min(o, a, &kernel, &none, &unit, &unit);
  dma::store(gtensor<fp32>(out_shape, GLOBAL, out), o);
}

// The same minimum in the handle form (pool::param).
__KERNEL__ void min_pool_handles(fp32 *out, fp32 *x, int C, int H, int W) {
  dim4 in_shape = {1, C, H, W};
  dim4 out_shape = {1, C, H - 2, W};
  auto a = make_tensor<fp32>(in_shape, in_shape);
  dma::load(a, gtensor<fp32>(in_shape, GLOBAL, x));
  auto o = make_tensor<fp32>(out_shape, out_shape);
  tiu::fpool_min(o, a, pool::param::kernel(3, 1, 1, 1), pool::param::padding(0, 0, 0, 0, 0));
  dma::store(gtensor<fp32>(out_shape, GLOBAL, out), o);
}
