// deconv_depthwise.pl: a depthwise convolution (tiu::fdw_conv) and a
// transposed convolution (tiu::fdeconv), fp32, tested by
// tests/ppl/ppl_deconv_depthwise_test.cc against the definitions. Their
// outputs are declared without a shape: the window gives it, and the store
// reads it back with getShape().
#include "ppl.h"
using namespace ppl;

// A convolution's input [xs] and, compact, its weight [ws] and bias [bs],
// loaded from global memory.
struct conv_inputs {
  tensor<fp32> src, weight, bias;
};
conv_inputs load_conv_inputs(fp32 *x, fp32 *w, fp32 *b, const dim4 &xs, const dim4 &ws, const dim4 &bs) {
  conv_inputs in{make_tensor<fp32>(xs, xs),
                 make_tensor<fp32>(ws, ws, TPU_COMPACT),
                 make_tensor<fp32>(bs, bs, TPU_COMPACT)};
  dma::load(in.src, gtensor<fp32>(xs, GLOBAL, x));
  dma::load_compact(in.weight, gtensor<fp32>(ws, GLOBAL, w));
  dma::load_compact(in.bias, gtensor<fp32>(bs, GLOBAL, b));
  return in;
}

// out = depthwise conv of x [N, C, H, W] with w [C, k, k] (+ b [C]),
// stride, padding (all four sides) and dilation; `handles`: the window
// from conv::param handles instead of pointers.
__KERNEL__ void depthwise_f32(fp32 *out, fp32 *x, fp32 *w, fp32 *b, int N, int C, int H, int W, int k, int stride,
                              int pad, int dilation, int use_bias, int handles) {
  const conv_inputs in = load_conv_inputs(x, w, b, {N, C, H, W}, {1, C, k, k}, {1, C, 1, 1});
  const auto &src = in.src, &weight = in.weight, &bias = in.bias;
  tensor<fp32> result;
  dim2 kernel = {k, k}, strides = {stride, stride}, dilations = {dilation, dilation};
  padding_t padding = {pad, pad, pad, pad};
  if (handles) {
    const int kh = conv::param::kernel(k, k, stride, stride), ph = conv::param::padding(0, pad, pad, pad, pad),
              ih = conv::param::insert(0, dilation, dilation);
    if (use_bias)
      tiu::fdw_conv(result, src, weight, bias, kh, ph, ih);
    else
      tiu::fdw_conv(result, src, weight, kh, ph, ih);
  } else if (use_bias) {
    tiu::fdw_conv(result, src, weight, bias, &kernel, &strides, &dilations, &padding);
  } else {
    tiu::fdw_conv(result, src, weight, &kernel, &strides, &dilations, &padding);
  }
  dim4 os = result.getShape();
  dma::store(gtensor<fp32>(os, GLOBAL, out), result);
}

// out = transposed conv of x [N, IC, H, W] with w [OC, IC, k, k] (the
// forward convolution's weight, NIC layout of fp32: that array) + b [OC]
// when use_bias: stride, padding (up = left = pad, down = right = pad_end)
// and dilation of the transposed convolution.
__KERNEL__ void deconv_f32(fp32 *out, fp32 *x, fp32 *w, fp32 *b, int N, int IC, int H, int W, int OC, int k,
                           int stride, int pad, int pad_end, int dilation, int use_bias) {
  const conv_inputs in = load_conv_inputs(x, w, b, {N, IC, H, W}, {1, OC, IC * k * k, 1}, {1, OC, 1, 1});
  const auto &src = in.src, &weight = in.weight, &bias = in.bias;
  const int kernel = deconv::param::kernel(k, k, stride, stride),
            padding = deconv::param::padding(0, pad, pad_end, pad, pad_end),
            insert = deconv::param::insert(0, dilation, dilation);
  tensor<fp32> result;
  if (use_bias)
    tiu::fdeconv(result, src, weight, bias, OC, kernel, padding, insert, DT_FP32);
  else
    tiu::fdeconv(result, src, weight, OC, kernel, padding, insert, DT_FP32);
  dim4 os = result.getShape();
  dma::store(gtensor<fp32>(os, GLOBAL, out), result);
}

// out = convolution (stride 1) of x [N, IC, H, W] with `ins` zeros inserted
// between its elements in H and W, padded by `pad` on every side, with w
// [OC, IC, k, k] read rotated by 180 degrees (fconv's handle form with
// rotate and an insert handle), dilation `dilation`, no bias.
__KERNEL__ void fconv_inserted_f32(fp32 *out, fp32 *x, fp32 *w, int N, int IC, int H, int W, int OC, int k, int ins,
                                   int pad, int dilation) {
  dim4 xs = {N, IC, H, W}, ws = {1, OC, IC * k * k, 1};
  auto src = make_tensor<fp32>(xs, xs);
  dma::load(src, gtensor<fp32>(xs, GLOBAL, x));
  auto weight = make_tensor<fp32>(ws, ws, TPU_COMPACT);
  dma::load_compact(weight, gtensor<fp32>(ws, GLOBAL, w));
  const int kernel = conv::param::kernel(k, k, 1, 1, false, true),
            padding = conv::param::padding(0, pad, pad, pad, pad),
            insert = conv::param::insert(0, dilation, dilation, ins, ins);
  tensor<fp32> result;
  tiu::fconv(result, src, weight, OC, kernel, padding, insert, DT_FP32);
  dim4 os = result.getShape();
  dma::store(gtensor<fp32>(os, GLOBAL, out), result);
}

// Misuses, each refused at its line.
__KERNEL__ void conv_family_misuse(fp32 *out, int which) {
  dim4 s = {1, 4, 4, 4}, ws = {1, 4, 3, 3}, wide = {1, 4, 1, 9};
  auto x = make_tensor<fp32>(s, s);
  tiu::fill(x, 1.0f);
  auto w = make_tensor<fp32>(ws, ws, TPU_COMPACT);
  auto w_flat = make_tensor<fp32>(wide, wide, TPU_COMPACT);
  auto r = make_tensor<fp32>(s, s);
  dim2 k = {3, 3}, one = {1, 1};
  padding_t p = {1, 1, 1, 1};
  if (which == 0) tiu::fdw_conv(r, x, w_flat, &k, &one, &one, &p);  // misuse: weight shape
  if (which == 1) tiu::fdeconv(r, x, w, 4, deconv::param::kernel(3, 3, 2, 2), deconv::param::padding(0, 3, 3, 3, 3), deconv::param::insert(), DT_FP32);  // misuse: deconv padding
  if (which == 2) tiu::fdeconv(r, x, w, 4, deconv::param::kernel(3, 3, 1, 1, false, false), deconv::param::padding(0, 1, 1, 1, 1), deconv::param::insert(), DT_FP32);  // misuse: rotate
  if (which == 3) tiu::fconv(r, x, w, 4, conv::param::kernel(3, 3, 1, 1), conv::param::padding(0, 1, 1, 1, 1), conv::param::insert(0, 1, 1, 1, 1), DT_FP32);  // misuse: unrotated insertion
  if (which == 4) tiu::fill(r, 0.0f);
  dma::store(gtensor<fp32>(s, GLOBAL, out), x);
}
