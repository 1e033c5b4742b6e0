// quant.cc: requantisation and dequantisation (quant.h).
#include "quant.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cmodel/numeric/float_convert.h"
#include "int_arith.h"

namespace cmodel::bdc {
namespace {

constexpr std::initializer_list<data_type_t> kInts = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};

void store_int(data_type_t dtype, uint8_t *p, int64_t v) { store_ints(dtype, p, 1, 1, &v); }

// dst may overlap src: every command here reads each element just before
// writing its own result, in element order.
struct Pair {
  TensorRef dst, src;
};

Pair operands(Context &ctx, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape, data_type_t dst_dtype,
              data_type_t src_dtype) {
  Pair p{operand(ctx, "dst", dst_addr, shape, nullptr, dst_dtype), operand(ctx, "src", src_addr, shape, nullptr, src_dtype)};
  require_same_npu(p.dst, "dst", p.src, "src");
  return p;
}

struct ChannelScale {
  int64_t multiplier;
  int shift;
  int64_t offset;
};

// Per channel (multiplier, σ, offset) from the [1, C, 1, 3] INT32 tensor, or
// the scalars for every channel. `quant` is set to the tensor read, if any.
std::vector<ChannelScale> channel_scales(Context &ctx, const IntQuant &q, const TensorRef &dst, data_type_t offset_dtype,
                                         TensorRef *quant) {
  std::vector<ChannelScale> out(size_t(dst.shape.c));
  if (!q.use_tensor) {
    std::fill(out.begin(), out.end(), ChannelScale{q.multiplier, q.shift, int_scalar(q.offset, offset_dtype)});
    return out;
  }
  *quant = operand(ctx, "quant", q.per_channel, {1, dst.shape.c, 1, 3}, nullptr, DT_INT32);
  require_same_npu(dst, "dst", *quant, "quant");
  for (int c = 0; c < dst.shape.c; ++c) {
    const int64_t shift = load_int(DT_INT32, quant->at(0, c, 0, 1));
    if (shift < -128 || shift > 127)
      fail(ErrorKind::illegal_command, "quant channel {}: shift {} is outside [-128, 127]", c, shift);
    out[size_t(c)] = {load_int(DT_INT32, quant->at(0, c, 0, 0)), int(shift), load_int(DT_INT32, quant->at(0, c, 0, 2))};
  }
  return out;
}

}  // namespace

void int_quant(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
               const IntQuant &q, data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t mode) {
  require_dtype("dst_dtype", dst_dtype, kInts);
  require_dtype("src_dtype", src_dtype, kInts);
  require_rounding_mode(mode);
  const Pair p = operands(ctx, dst_addr, src_addr, shape, dst_dtype, src_dtype);
  TensorRef quant{};
  const std::vector<ChannelScale> scales =
      channel_scales(ctx, q, p.dst, q.dequant ? src_dtype : dst_dtype, &quant);
  const int64_t lo = int_min_of(dst_dtype), hi = int_max_of(dst_dtype);
  for_each_position(shape, [&](int n, int c, int h, int w) {
    const ChannelScale &s = scales[size_t(c)];
    const int64_t x = load_int(src_dtype, p.src.at(n, c, h, w));
    __int128 v = q.dequant ? requant_scale(x - s.offset, s.multiplier, s.shift, mode)
                           : requant_scale(x, s.multiplier, s.shift, mode) + s.offset;
    v = std::clamp<__int128>(v, lo, hi);
    store_int(dst_dtype, p.dst.at(n, c, h, w), int64_t(v));
  });
  const data_type_t cost_dtype = dtype_bytes(dst_dtype) >= dtype_bytes(src_dtype) ? dst_dtype : src_dtype;
  if (q.use_tensor)
    book(ctx, api, BdcCost::mac, p.dst, cost_dtype, {&p.dst}, {&p.src, &quant});
  else
    book(ctx, api, BdcCost::mac, p.dst, cost_dtype, {&p.dst}, {&p.src});
}

void fp32_requant(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
                  float scale, float offset, data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t dst_mode,
                  rounding_mode_t src_mode) {
  require_dtype("dst_dtype", dst_dtype, kInts);
  require_dtype("src_dtype", src_dtype, kInts);
  require_rounding_mode(dst_mode);
  require_rounding_mode(src_mode);
  const Pair p = operands(ctx, dst_addr, src_addr, shape, dst_dtype, src_dtype);
  const int64_t lo = int_min_of(dst_dtype), hi = int_max_of(dst_dtype);
  for_each_position(shape, [&](int n, int c, int h, int w) {
    const float x = numeric::int_to_fp32(load_int(src_dtype, p.src.at(n, c, h, w)), src_mode);
    const float scaled = x * scale;  // two statements: no fused multiply-add
    const float y = scaled + offset;
    store_int(dst_dtype, p.dst.at(n, c, h, w), numeric::fp_to_int(double(y), dst_mode, lo, hi));
  });
  book(ctx, api, BdcCost::mac, p.dst, DT_FP32, {&p.dst}, {&p.src});
}

void fp32_dequant(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
                  scalar_t offset, float scale, data_type_t src_dtype, rounding_mode_t mode) {
  require_dtype("src_dtype", src_dtype, kInts);
  require_rounding_mode(mode);
  const Pair p = operands(ctx, dst_addr, src_addr, shape, DT_FP32, src_dtype);
  const int64_t zero = int_scalar(offset, src_dtype);
  for_each_position(shape, [&](int n, int c, int h, int w) {
    const float x = numeric::int_to_fp32(load_int(src_dtype, p.src.at(n, c, h, w)) - zero, mode);
    const float y = x * scale;
    std::memcpy(p.dst.at(n, c, h, w), &y, sizeof y);
  });
  book(ctx, api, BdcCost::mac, p.dst, DT_FP32, {&p.dst}, {&p.src});
}

}  // namespace cmodel::bdc
