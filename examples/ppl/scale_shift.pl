// scale_shift.pl: out = x * scale + shift over an [N, C, H, W] fp32 tensor,
// with scale and shift per channel ([1, C, 1, 1]): the per-channel
// operands broadcast over N, H and W. Channels are tiled by BC, rows by BH;
// the inner loop is pipelined.
#include "ppl.h"
using namespace ppl;

__KERNEL__ void scale_shift_f32(fp32 *out, fp32 *x, fp32 *scale, fp32 *shift, int N, int C, int H, int W,
                                const int BC, const int BH) {
  dim4 shape = {N, C, H, W};
  gtensor<fp32> g_x(shape, GLOBAL, x);
  gtensor<fp32> g_out(shape, GLOBAL, out);
  dim4 channels = {1, C, 1, 1};
  gtensor<fp32> g_scale(channels, GLOBAL, scale);
  gtensor<fp32> g_shift(channels, GLOBAL, shift);
  for (int c = 0; c < C; c += BC) {
    const int rc = min(BC, C - c);
    dim4 param_block = {1, BC, 1, 1};
    dim4 param_real = {1, rc, 1, 1};
    auto s = make_tensor<fp32>(param_block, param_real);
    auto t = make_tensor<fp32>(param_block, param_real);
    dma::load(s, g_scale.sub_view(param_real, {0, c, 0, 0}));
    dma::load(t, g_shift.sub_view(param_real, {0, c, 0, 0}));
    for (int n = 0; n < N; ++n) {
      for (int h = 0; h < H; h += BH) {
        enable_pipeline();
        const int rh = min(BH, H - h);
        dim4 block = {1, BC, BH, W};
        dim4 real = {1, rc, rh, W};
        dim4 at = {n, c, h, 0};
        auto in = make_tensor<fp32>(block, real);
        dma::load(in, g_x.sub_view(real, at));
        auto scaled = make_tensor<fp32>(block, real);
        tiu::fmul(scaled, in, s);
        auto result = make_tensor<fp32>(block, real);
        tiu::fadd(result, scaled, t);
        dma::store(g_out.sub_view(real, at), result);
      }
    }
  }
}
