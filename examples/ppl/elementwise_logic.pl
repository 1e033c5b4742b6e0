// elementwise_logic.pl: comparisons, selections, rounding, absolute values,
// multiply-accumulate (fp32) and the bit operations and shifts (int32) over
// [1, C, 1, W] tensors, one result per output so the test checks each.
#include "ppl.h"
using namespace ppl;

// greater: 1 where x > y; selected: x > y ? x : y; negatives: x < 0 ? x : 0;
// equal: 5 where x == 0.5; floored, rounded (half to even), magnitude;
// accumulated = y + x * x + 2 * x.
__KERNEL__ void float_logic(fp32 *greater, fp32 *selected, fp32 *negatives, fp32 *equal, fp32 *floored,
                            fp32 *rounded, fp32 *magnitude, fp32 *accumulated, fp32 *x, fp32 *y, int C, int W) {
  dim4 shape = {1, C, 1, W};
  auto a = make_tensor<fp32>(shape, shape);
  auto b = make_tensor<fp32>(shape, shape);
  dma::load(a, gtensor<fp32>(shape, GLOBAL, x));
  dma::load(b, gtensor<fp32>(shape, GLOBAL, y));
  auto r = make_tensor<fp32>(shape, shape);
  tiu::gt(r, a, b, 1.0);
  dma::store(gtensor<fp32>(shape, GLOBAL, greater), r);
  tiu::gt_select(r, a, b, a, b);
  dma::store(gtensor<fp32>(shape, GLOBAL, selected), r);
  tiu::lt_select(r, a, 0.0f, a, 0.0f);
  dma::store(gtensor<fp32>(shape, GLOBAL, negatives), r);
  tiu::eq(r, a, 0.5f, 5.0);
  dma::store(gtensor<fp32>(shape, GLOBAL, equal), r);
  tiu::floor(r, a);
  dma::store(gtensor<fp32>(shape, GLOBAL, floored), r);
  tiu::round(r, a);
  dma::store(gtensor<fp32>(shape, GLOBAL, rounded), r);
  tiu::abs(r, a);
  dma::store(gtensor<fp32>(shape, GLOBAL, magnitude), r);
  tiu::move(r, b);
  tiu::fmac(r, a, a);
  tiu::fmac(r, a, 2.0f);
  dma::store(gtensor<fp32>(shape, GLOBAL, accumulated), r);
}

// anded = p & q, ored = p | 0xF0, xored = p ^ q, left = p << 3,
// right = p >> 2 (arithmetic, rounding down), logical = p >>> 4 (as
// unsigned), by_tensor = p shifted by the int8 amounts in `amounts`.
__KERNEL__ void int_logic(int32 *anded, int32 *ored, int32 *xored, int32 *left, int32 *right, int32 *logical,
                          int32 *by_tensor, int32 *p, int32 *q, int8 *amounts, int C, int W) {
  dim4 shape = {1, C, 1, W};
  auto a = make_tensor<int32>(shape, shape);
  auto b = make_tensor<int32>(shape, shape);
  auto s = make_tensor<int8>(shape, shape);
  dma::load(a, gtensor<int32>(shape, GLOBAL, p));
  dma::load(b, gtensor<int32>(shape, GLOBAL, q));
  dma::load(s, gtensor<int8>(shape, GLOBAL, amounts));
  auto r = make_tensor<int32>(shape, shape);
  tiu::bitwise_and(r, a, b);
  dma::store(gtensor<int32>(shape, GLOBAL, anded), r);
  tiu::bitwise_or(r, a, 0xF0);
  dma::store(gtensor<int32>(shape, GLOBAL, ored), r);
  tiu::bitwise_xor(r, a, b);
  dma::store(gtensor<int32>(shape, GLOBAL, xored), r);
  tiu::shift(r, a, 3, RM_DOWN);
  dma::store(gtensor<int32>(shape, GLOBAL, left), r);
  tiu::shift(r, a, -2, RM_DOWN);
  dma::store(gtensor<int32>(shape, GLOBAL, right), r);
  auto u = make_tensor<uint32>(shape, shape);
  tiu::logical_shift(u, a.view<uint32>(), -4, RM_DOWN);
  dma::store(gtensor<uint32>(shape, GLOBAL, reinterpret_cast<uint32 *>(logical)), u);
  tiu::shift(r, a, s, RM_DOWN);
  dma::store(gtensor<int32>(shape, GLOBAL, by_tensor), r);
}

// Integer arithmetic shifted left (no saturation: wrapping in dst's type):
// sums = (p + q) << 2 in int8, products = (p * 5) << 3 in int32.
__KERNEL__ void int_shifted(int8 *sums, int32 *products, int8 *p, int8 *q, int C, int W) {
  dim4 shape = {1, C, 1, W};
  auto a = make_tensor<int8>(shape, shape);
  auto b = make_tensor<int8>(shape, shape);
  dma::load(a, gtensor<int8>(shape, GLOBAL, p));
  dma::load(b, gtensor<int8>(shape, GLOBAL, q));
  auto s = make_tensor<int8>(shape, shape);
  tiu::add(s, a, b, 2);
  dma::store(gtensor<int8>(shape, GLOBAL, sums), s);
  auto m = make_tensor<int32>(shape, shape);
  tiu::mul(m, a, 5, 3);
  dma::store(gtensor<int32>(shape, GLOBAL, products), m);
}

// Integer arithmetic shifted left with saturation (the exact value
// clamped to dst's type): sums = sat8((p + q) << shift) from int16,
// differences = satU8((p - q) << shift), products = sat32((x * y) << shift)
// from int32 (products past 32 bits too), scaled = sat16((p * -3) << shift).
__KERNEL__ void int_saturating_shifts(int8 *sums, uint8 *differences, int32 *products, int16 *scaled, int16 *p,
                                      int16 *q, int32 *x, int32 *y, int C, int W, int shift) {
  dim4 shape = {1, C, 1, W};
  auto a = make_tensor<int16>(shape, shape);
  auto b = make_tensor<int16>(shape, shape);
  auto u = make_tensor<int32>(shape, shape);
  auto v = make_tensor<int32>(shape, shape);
  dma::load(a, gtensor<int16>(shape, GLOBAL, p));
  dma::load(b, gtensor<int16>(shape, GLOBAL, q));
  dma::load(u, gtensor<int32>(shape, GLOBAL, x));
  dma::load(v, gtensor<int32>(shape, GLOBAL, y));
  tensor<int8> s;
  tiu::add(s, a, b, shift, RM_HALF_UP, true);
  dma::store(gtensor<int8>(shape, GLOBAL, sums), s);
  tensor<uint8> d;
  tiu::sub(d, a, b, shift, RM_HALF_UP, true);
  dma::store(gtensor<uint8>(shape, GLOBAL, differences), d);
  tensor<int32> m;
  tiu::mul(m, u, v, shift, RM_HALF_UP, true);
  dma::store(gtensor<int32>(shape, GLOBAL, products), m);
  tensor<int16> k;
  tiu::mul(k, a, -3, shift, RM_HALF_UP, true);
  dma::store(gtensor<int16>(shape, GLOBAL, scaled), k);
}
