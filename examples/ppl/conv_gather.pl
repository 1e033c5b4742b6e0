// conv_gather.pl: the last two operations of the spec's build order.
// tiu::fconv (float convolution, docs/ppl.md "fconv"): fp32 with a bias,
// fp16 into an fp32 accumulator (result_add), and a constant kernel.
// tiu::gather_hw (docs/ppl.md "gather_hw"): elements picked from each
// channel's H x W plane by (h, w) pairs, plain, with a fill value, and with
// 32-bit indices.
#include "ppl.h"
using namespace ppl;

// out [N, OC, OH, OW] = conv(x [N, IC, H, W], weight) + bias; weight is the
// host's [OC, IC, K, K] (fp32: one input channel per step), bias [OC].
__KERNEL__ void conv_bias_f32(fp32 *out, fp32 *x, fp32 *weight, fp32 *bias, int N, int IC, int H, int W, int OC,
                              int K, int S, int P) {
  dim4 in_shape = {N, IC, H, W};
  dim4 out_shape = {N, OC, (H + 2 * P - K) / S + 1, (W + 2 * P - K) / S + 1};
  dim4 weight_shape = {1, OC, IC * K * K, 1};
  dim4 bias_shape = {1, OC, 1, 1};
  auto in = make_tensor<fp32>(in_shape, in_shape);
  auto w = make_tensor<fp32>(weight_shape, weight_shape, TPU_COMPACT);
  auto b = make_tensor<fp32>(bias_shape, bias_shape, TPU_COMPACT);
  auto o = make_tensor<fp32>(out_shape, out_shape);
  dma::load(in, gtensor<fp32>(in_shape, GLOBAL, x));
  dma::load_compact(w, gtensor<fp32>(weight_shape, GLOBAL, weight));
  dma::load_compact(b, gtensor<fp32>(bias_shape, GLOBAL, bias));
  dim2 kernel = {K, K};
  dim2 stride = {S, S};
  dim2 dilation = {1, 1};
  padding_t pad = {P, P, P, P};
  tiu::fconv(o, in, w, b, OC, &kernel, &stride, &dilation, &pad);
  dma::store(gtensor<fp32>(out_shape, GLOBAL, out), o);
}

// The same convolution in the handle form (conv::param's kernel, padding
// and insert handles, the output type given as out_dtype).
__KERNEL__ void conv_bias_f32_handles(fp32 *out, fp32 *x, fp32 *weight, fp32 *bias, int N, int IC, int H, int W,
                                      int OC, int K, int S, int P) {
  dim4 in_shape = {N, IC, H, W};
  dim4 out_shape = {N, OC, (H + 2 * P - K) / S + 1, (W + 2 * P - K) / S + 1};
  dim4 weight_shape = {1, OC, IC * K * K, 1};
  dim4 bias_shape = {1, OC, 1, 1};
  auto in = make_tensor<fp32>(in_shape, in_shape);
  auto w = make_tensor<fp32>(weight_shape, weight_shape, TPU_COMPACT);
  auto b = make_tensor<fp32>(bias_shape, bias_shape, TPU_COMPACT);
  auto o = make_tensor<fp32>(out_shape, out_shape);
  dma::load(in, gtensor<fp32>(in_shape, GLOBAL, x));
  dma::load_compact(w, gtensor<fp32>(weight_shape, GLOBAL, weight));
  dma::load_compact(b, gtensor<fp32>(bias_shape, GLOBAL, bias));
  tiu::fconv(o, in, w, b, OC, conv::param::kernel(K, K, S, S), conv::param::padding(0, P, P, P, P),
             conv::param::insert(0, 1, 1), DT_FP32);
  dma::store(gtensor<fp32>(out_shape, GLOBAL, out), o);
}

// out [N, OC, OH, OW] (fp32) += conv(x (fp16), weight) with a 3 x 3 kernel,
// dilation 2, stride 1, no padding; weight in the NIC layout
// [1, OC, ceil(IC / nic) 9, nic], packed by the host (nic = get_nic<fp16>()).
__KERNEL__ void conv_accumulate_f16(fp32 *out, fp16 *x, fp16 *weight, int N, int IC, int H, int W, int OC) {
  const int nic = get_nic<fp16>();
  dim4 in_shape = {N, IC, H, W};
  dim4 out_shape = {N, OC, H - 4, W - 4};
  dim4 weight_shape = {1, OC, div_up(IC, nic) * 9, nic};
  auto in = make_tensor<fp16>(in_shape, in_shape);
  auto w = make_tensor<fp16>(weight_shape, weight_shape, TPU_COMPACT);
  auto o = make_tensor<fp32>(out_shape, out_shape);
  gtensor<fp32> g_out(out_shape, GLOBAL, out);
  dma::load(in, gtensor<fp16>(in_shape, GLOBAL, x));
  dma::load_compact(w, gtensor<fp16>(weight_shape, GLOBAL, weight));
  dma::load(o, g_out);
  dim2 kernel = {3, 3};
  dim2 stride = {1, 1};
  dim2 dilation = {2, 2};
  padding_t pad = {0, 0, 0, 0};
  tiu::fconv(o, in, w, OC, &kernel, &stride, &dilation, &pad, true);
  dma::store(g_out, o);
}

// out [N, OC, H, W] = conv(x, every weight = `value`), 2 x 2 kernel,
// padding 1 at the bottom and right only.
__KERNEL__ void conv_constant_f32(fp32 *out, fp32 *x, float value, int N, int IC, int H, int W, int OC) {
  dim4 in_shape = {N, IC, H, W};
  dim4 out_shape = {N, OC, H, W};
  auto in = make_tensor<fp32>(in_shape, in_shape);
  auto o = make_tensor<fp32>(out_shape, out_shape);
  dma::load(in, gtensor<fp32>(in_shape, GLOBAL, x));
  dim2 kernel = {2, 2};
  dim2 one = {1, 1};
  padding_t pad = {0, 1, 0, 1};
  tiu::fconv(o, in, value, OC, &kernel, &one, &one, &pad);
  dma::store(gtensor<fp32>(out_shape, GLOBAL, out), o);
}

// out [N, C, 1, W] = param [N, C, PH, PW] at index's (h, w) pairs
// ([N, 1, 1, 2W] uint16). mode 0: pairs must be inside; 1: outside ones
// give `fill`; 2: outside ones are clamped to the plane.
__KERNEL__ void gather_pairs(fp32 *out, fp32 *param, uint16 *index, int N, int C, int PH, int PW, int W, int mode,
                             float fill) {
  dim4 param_shape = {N, C, PH, PW};
  dim4 out_shape = {N, C, 1, W};
  dim4 index_shape = {N, 1, 1, 2 * W};
  auto p = make_tensor<fp32>(param_shape, param_shape);
  auto i = make_tensor<uint16>(index_shape, index_shape);
  auto o = make_tensor<fp32>(out_shape, out_shape);
  dma::load(p, gtensor<fp32>(param_shape, GLOBAL, param));
  dma::load(i, gtensor<uint16>(index_shape, GLOBAL, index));
  if (mode == 0)
    tiu::gather_hw(o, p, i);
  else
    tiu::gather_hw(o, p, i, fill, mode == 1);
  dma::store(gtensor<fp32>(out_shape, GLOBAL, out), o);
}

// The same with 32-bit indices [N, 1, 1, W] (h in the low half, w in the
// high) and int16 elements.
__KERNEL__ void gather_pairs_wide(int16 *out, int16 *param, uint32 *index, int N, int C, int PH, int PW, int W) {
  dim4 param_shape = {N, C, PH, PW};
  dim4 out_shape = {N, C, 1, W};
  dim4 index_shape = {N, 1, 1, W};
  auto p = make_tensor<int16>(param_shape, param_shape);
  auto i = make_tensor<uint32>(index_shape, index_shape);
  auto o = make_tensor<int16>(out_shape, out_shape);
  dma::load(p, gtensor<int16>(param_shape, GLOBAL, param));
  dma::load(i, gtensor<uint32>(index_shape, GLOBAL, index));
  tiu::gather_hw(o, p, i);
  dma::store(gtensor<int16>(out_shape, GLOBAL, out), o);
}
