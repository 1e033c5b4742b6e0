// pooling.pl: 2-D pooling of an [N, C, H, W] fp32 tensor in the vendor's
// pointer form: a 2 x 2 average with stride 2 (window sum x 0.25), and a
// 3 x 3 maximum with stride 1 and padding 1 (the padding never wins).
#include "ppl.h"
using namespace ppl;

__KERNEL__ void avg_pool_2x2(fp32 *out, fp32 *x, int N, int C, int H, int W) {
  dim4 in_shape = {N, C, H, W};
  dim4 out_shape = {N, C, (H - 2) / 2 + 1, (W - 2) / 2 + 1};
  gtensor<fp32> g_x(in_shape, GLOBAL, x);
  gtensor<fp32> g_out(out_shape, GLOBAL, out);
  auto in = make_tensor<fp32>(in_shape, in_shape);
  auto pooled = make_tensor<fp32>(out_shape, out_shape);
  dma::load(in, g_x);
  dim2 kernel = {2, 2};
  dim2 stride = {2, 2};
  dim2 dilation = {1, 1};
  padding_t pad = {0, 0, 0, 0};
  tiu::fpool_avg(pooled, in, &kernel, &pad, &stride, &dilation, 0.25f);
  dma::store(g_out, pooled);
}

__KERNEL__ void max_pool_3x3(fp32 *out, fp32 *x, int N, int C, int H, int W) {
  dim4 shape = {N, C, H, W};
  gtensor<fp32> g_x(shape, GLOBAL, x);
  gtensor<fp32> g_out(shape, GLOBAL, out);
  auto in = make_tensor<fp32>(shape, shape);
  auto pooled = make_tensor<fp32>(shape, shape);
  dma::load(in, g_x);
  dim2 kernel = {3, 3};
  dim2 stride = {1, 1};
  dim2 dilation = {1, 1};
  padding_t pad = {1, 1, 1, 1};
  tiu::fpool_max(pooled, in, &kernel, &pad, &stride, &dilation);
  dma::store(g_out, pooled);
}

// The same two pools in the handle form (pool::param's kernel, padding and
// insert handles): the same commands, the same results.
__KERNEL__ void avg_pool_2x2_handles(fp32 *out, fp32 *x, int N, int C, int H, int W) {
  dim4 in_shape = {N, C, H, W};
  dim4 out_shape = {N, C, (H - 2) / 2 + 1, (W - 2) / 2 + 1};
  gtensor<fp32> g_x(in_shape, GLOBAL, x);
  gtensor<fp32> g_out(out_shape, GLOBAL, out);
  auto in = make_tensor<fp32>(in_shape, in_shape);
  auto pooled = make_tensor<fp32>(out_shape, out_shape);
  dma::load(in, g_x);
  int kernel = pool::param::kernel(2, 2, 2, 2);
  int pad = pool::param::padding(0, 0, 0, 0, 0);
  tiu::fpool_avg(pooled, in, kernel, pad, 0.25f);
  dma::store(g_out, pooled);
}

__KERNEL__ void max_pool_3x3_handles(fp32 *out, fp32 *x, int N, int C, int H, int W) {
  dim4 shape = {N, C, H, W};
  gtensor<fp32> g_x(shape, GLOBAL, x);
  gtensor<fp32> g_out(shape, GLOBAL, out);
  auto in = make_tensor<fp32>(shape, shape);
  auto pooled = make_tensor<fp32>(shape, shape);
  dma::load(in, g_x);
  tiu::fpool_max(pooled, in, pool::param::kernel(3, 3, 1, 1), pool::param::padding(0, 1, 1, 1, 1),
                 pool::param::insert(0, 1, 1));
  dma::store(g_out, pooled);
}

// A handle of the wrong kind is refused naming the call's line.
__KERNEL__ void pool_with_swapped_handles(fp32 *out, fp32 *x, int N, int C, int H, int W) {
  dim4 shape = {N, C, H, W};
  gtensor<fp32> g_x(shape, GLOBAL, x);
  gtensor<fp32> g_out(shape, GLOBAL, out);
  auto in = make_tensor<fp32>(shape, shape);
  auto pooled = make_tensor<fp32>(shape, shape);
  dma::load(in, g_x);
  tiu::fpool_max(pooled, in, pool::param::padding(0, 1, 1, 1, 1), pool::param::kernel(3, 3, 1, 1));
  dma::store(g_out, pooled);
}
