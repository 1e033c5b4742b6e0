// layouts.pl: data movement between layouts: N/C transposes through the
// GDMA on the way in and out, a C/W transpose inside local memory, a row
// broadcast over channels, a compact load, a copy between lanes, and a
// matrix product with the right operand transposed (fmm2_nt).
#include "ppl.h"
using namespace ppl;

// x [N, C, 1, W] -> out [C, N, 1, W] through local memory: loaded N/C
// transposed, stored back with a second N/C transpose into [N, C, 1, W]
// order of `back`.
__KERNEL__ void transpose_nc(fp32 *out, fp32 *back, fp32 *x, int N, int C, int W) {
  dim4 shape = {N, C, 1, W};
  dim4 swapped = {C, N, 1, W};
  auto t = make_tensor<fp32>(swapped, swapped);
  dma::load_transpose_nc(t, gtensor<fp32>(shape, GLOBAL, x));
  dma::store(gtensor<fp32>(swapped, GLOBAL, out), t);
  dma::store_transpose_nc(gtensor<fp32>(shape, GLOBAL, back), t);
}

// x [1, C, 1, W] -> out [1, W, 1, C] by tiu::transpose_cw (C > W) or
// transpose_wc (W > C).
__KERNEL__ void transpose_cw(fp32 *out, fp32 *x, int C, int W) {
  dim4 shape = {1, C, 1, W};
  dim4 swapped = {1, W, 1, C};
  auto a = make_tensor<fp32>(shape, shape);
  dma::load(a, gtensor<fp32>(shape, GLOBAL, x));
  auto t = make_tensor<fp32>(swapped, swapped);
  if (C > W)
    tiu::transpose_cw(t, a);
  else
    tiu::transpose_wc(t, a);
  dma::store(gtensor<fp32>(swapped, GLOBAL, out), t);
}

// row [1, 1, 1, W] on `C` channels by dma::load_broadcast, then the same
// from local memory by dma::broadcast into rows 1..: out [2, C, 1, W].
// x [1, C, H, W] loaded compact and stored as it is: copy.
__KERNEL__ void broadcasts(fp32 *out, fp32 *copy, fp32 *row, fp32 *x, int C, int H, int W) {
  dim4 one = {1, 1, 1, W};
  dim4 many = {1, C, 1, W};
  auto b = make_tensor<fp32>(many, many);
  dma::load_broadcast(b, gtensor<fp32>(one, GLOBAL, row));
  dma::store(gtensor<fp32>(many, GLOBAL, out), b);
  auto r = make_tensor<fp32>(one, one);
  dma::load(r, gtensor<fp32>(one, GLOBAL, row));
  auto b2 = make_tensor<fp32>(many, many);
  dma::broadcast(b2, r);
  dma::store(gtensor<fp32>(many, GLOBAL, out + C * W), b2);
  dim4 shape = {1, C, H, W};
  auto c = make_tensor<fp32>(shape, shape, TPU_COMPACT);
  dma::load_compact(c, gtensor<fp32>(shape, GLOBAL, x));
  dma::store(gtensor<fp32>(shape, GLOBAL, copy), c);
}

// out [1, M, 1, N] = left [1, M, 1, K] x right^T with right [1, N, 1, K]
// (fp16 inputs, fp32 result).
__KERNEL__ void matmul_nt(fp32 *out, fp16 *left, fp16 *right, int M, int K, int N) {
  dim4 ls = {1, M, 1, K}, rs = {1, N, 1, K}, os = {1, M, 1, N};
  auto l = make_tensor<fp16>(ls, ls);
  auto r = make_tensor<fp16>(rs, rs);
  auto o = make_tensor<fp32>(os, os);
  dma::load(l, gtensor<fp16>(ls, GLOBAL, left));
  dma::load(r, gtensor<fp16>(rs, GLOBAL, right));
  tiu::fmm2_nt(o, l, r);
  dma::store(gtensor<fp32>(os, GLOBAL, out), o);
}

// x [1, 2, 1, W]: channel 0 moved to lane 1 of `moved` (move_cross_lane),
// out [1, 2, 1, W] = (moved's channel 1, x's channel 1).
__KERNEL__ void cross_lane(fp32 *out, fp32 *x, int W) {
  dim4 shape = {1, 2, 1, W};
  dim4 one = {1, 1, 1, W};
  auto a = make_tensor<fp32>(shape, shape);
  dma::load(a, gtensor<fp32>(shape, GLOBAL, x));
  auto moved = make_tensor<fp32>(shape, shape);
  tiu::zero(moved);
  tiu::move_cross_lane(moved.sub_view(one, {0, 1, 0, 0}), a.sub_view(one, {0, 0, 0, 0}));
  dma::store(gtensor<fp32>(one, GLOBAL, out), moved.sub_view(one, {0, 1, 0, 0}));
  dma::store(gtensor<fp32>(one, GLOBAL, out + W), a.sub_view(one, {0, 1, 0, 0}));
}

// Rows picked along H: gathered [1, C, H, W] row h of channel c = row
// index(c, h) of table [1, C, R, W], or -1 where that is past R (global to
// local, global index). scattered [1, C, R, W], zeroed first, gets the
// gathered rows back at their row numbers (local to global, local index;
// of two rows aimed at one place the later wins).
__KERNEL__ void gather_scatter_rows(fp32 *gathered, fp32 *scattered, fp32 *table, uint32 *index, int C, int R,
                                    int H, int W) {
  dim4 table_shape = {1, C, R, W};
  dim4 rows = {1, C, H, W};
  dim4 index_shape = {1, C, H, 1};
  gtensor<uint32> g_index(index_shape, GLOBAL, index);
  auto g = make_tensor<fp32>(rows, rows);
  dma::gather_h(g, gtensor<fp32>(table_shape, GLOBAL, table), g_index, -1.0);
  dma::store(gtensor<fp32>(rows, GLOBAL, gathered), g);
  gtensor<fp32> g_scattered(table_shape, GLOBAL, scattered);
  dma::zero(g_scattered);
  auto i = make_tensor<uint32>(index_shape, index_shape);
  dma::load(i, g_index);
  dma::scatter_h(g_scattered, g, i);
}
