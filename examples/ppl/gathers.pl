// gathers.pl: gathers and scatters inside local memory (tests/ppl/
// ppl_gathers_test.cc): along W and H by 16-bit indices, plain, filled,
// clamped and with a repeated param; back along H; and to (h, w) pairs.
// Every float tensor is [1, C, rows, columns] of fp32 in global memory.
#include "ppl.h"
using namespace ppl;

// out [1, C, H, W] = param [1, C, H, PW] gathered along W by index [1, C, H, W].
// mode 0: plain; 1: outside indices give -7; 2: they read the nearest column.
// out's tensor is declared without a shape: the gather gives it index's.
__KERNEL__ void gather_w_rows(fp32 *out, fp32 *param, int16 *index, int C, int H, int PW, int W, int mode) {
  dim4 ps = {1, C, H, PW}, is = {1, C, H, W};
  auto p = make_tensor<fp32>(ps, ps);
  auto i = make_tensor<int16>(is, is);
  dma::load(p, gtensor<fp32>(ps, GLOBAL, param));
  dma::load(i, gtensor<int16>(is, GLOBAL, index));
  tensor<fp32> r;
  if (mode == 0) tiu::gather_w(r, p, i);
  if (mode == 1) tiu::gather_w(r, p, i, -7.0f);
  if (mode == 2) tiu::gather_w(r, p, i, 0, false, false);
  dma::store(gtensor<fp32>(is, GLOBAL, out), r);
}

// out [1, C, H, W] = param rows picked by index [1, C, H, 1] (uint16).
// mode 0: plain, param [1, C, PH, W]; 1: outside rows give -7; 2: param is
// one channel [1, 1, PH, W], loaded into every lane and gathered as
// param_repeated.
__KERNEL__ void gather_h_rows(fp32 *out, fp32 *param, uint16 *index, int C, int PH, int H, int W, int mode) {
  dim4 ps = {1, mode == 2 ? 1 : C, PH, W}, is = {1, C, H, 1}, os = {1, C, H, W};
  auto i = make_tensor<uint16>(is, is);
  dma::load(i, gtensor<uint16>(is, GLOBAL, index));
  auto r = make_tensor<fp32>(os, os);
  if (mode == 2) {
    dim4 every = {1, min(C, LANE_NUM), PH, W};  // a copy in every lane
    auto copies = make_tensor<fp32>(every, every);
    dma::load_broadcast(copies, gtensor<fp32>(ps, GLOBAL, param));
    tiu::gather_h(r, copies.view(ps), i, true);
  } else {
    auto p = make_tensor<fp32>(ps, ps);
    dma::load(p, gtensor<fp32>(ps, GLOBAL, param));
    if (mode == 0) tiu::gather_h(r, p, i);
    if (mode == 1) tiu::gather_h(r, p, i, false, -7.0f);
  }
  dma::store(gtensor<fp32>(os, GLOBAL, out), r);
}

// out [1, C, OH, W] = -1, then param [1, C, H, W]'s rows written to the
// rows index [1, C, H, 1] names (outside ones skipped).
__KERNEL__ void scatter_h_rows(fp32 *out, fp32 *param, uint16 *index, int C, int H, int OH, int W) {
  dim4 ps = {1, C, H, W}, is = {1, C, H, 1}, os = {1, C, OH, W};
  auto p = make_tensor<fp32>(ps, ps);
  auto i = make_tensor<uint16>(is, is);
  dma::load(p, gtensor<fp32>(ps, GLOBAL, param));
  dma::load(i, gtensor<uint16>(is, GLOBAL, index));
  auto r = make_tensor<fp32>(os, os);
  tiu::fill(r, -1.0f);
  tiu::scatter_h(r, p, i);
  dma::store(gtensor<fp32>(os, GLOBAL, out), r);
}

// out [1, C, OH, OW] = -1, then param [1, C, 1, W] written at the (h, w)
// pairs of pairs [1, 1, 1, 2W] (outside ones skipped).
__KERNEL__ void scatter_hw_pairs(fp32 *out, fp32 *param, uint16 *pairs, int C, int W, int OH, int OW) {
  dim4 ps = {1, C, 1, W}, is = {1, 1, 1, 2 * W}, os = {1, C, OH, OW};
  auto p = make_tensor<fp32>(ps, ps);
  auto i = make_tensor<uint16>(is, is);
  dma::load(p, gtensor<fp32>(ps, GLOBAL, param));
  dma::load(i, gtensor<uint16>(is, GLOBAL, pairs));
  auto r = make_tensor<fp32>(os, os);
  tiu::fill(r, -1.0f);
  tiu::scatter_hw(r, p, i);
  dma::store(gtensor<fp32>(os, GLOBAL, out), r);
}

// Misuses, each refused at its line: a 32-bit index, a param of another
// width, a scatter_h index of the wrong shape.
__KERNEL__ void gather_misuse(fp32 *out, int which) {
  dim4 s = {1, 4, 2, 8}, rows = {1, 4, 2, 1};
  auto p = make_tensor<fp32>(s, s);
  tiu::fill(p, 1.0f);
  auto wide = make_tensor<int32>(s, s);
  tiu::fill(wide, 0);
  auto i = make_tensor<uint16>(rows, rows);
  tiu::fill(i, 0);
  auto r = make_tensor<fp32>(s, s);
  if (which == 0) tiu::gather_w(r, p, wide);  // misuse: 32-bit index
  if (which == 1) tiu::gather_h(r, p.view({1, 4, 1, 16}), i);  // misuse: param
  if (which == 2) tiu::scatter_h(r, p, i.view({1, 4, 1, 2}));  // misuse: scatter index
  if (which == 3) tiu::fill(r, 0.0f);
  dma::store(gtensor<fp32>(s, GLOBAL, out), p);
}
