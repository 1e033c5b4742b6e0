// quant.cc: requantisation and dequantisation (quant.h).
#include "quant.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cmodel/numeric/float_convert.h"
#include "family_rules.h"
#include "int_arith.h"

namespace cmodel::bdc {
namespace {

constexpr std::initializer_list<data_type_t> kInts = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};
// The requantised results and the dequantised sources: no 32-bit integers
// (RQ-1, RQ-4, DQ-1, DQ-3).
constexpr std::initializer_list<data_type_t> kNarrowInts = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16};

void require_dtype_as(Rule rule, const char *role, data_type_t dtype, std::initializer_list<data_type_t> allowed) {
  under_rule(rule, [&] { require_dtype(role, dtype, allowed); });
}

// The fp32 forms' conversions between integers and floats cannot round
// half up or half down (RQ-2, DQ-2).
void require_fp32_form_rounding(Rule rule, const char *role, rounding_mode_t mode) {
  require_rounding_mode(mode);
  if (mode == RM_HALF_UP || mode == RM_HALF_DOWN)
    fail(rule,
         "{} {} ({}) is not allowed here; the fp32 requant / dequant conversions round with RM_HALF_TO_EVEN, "
         "RM_HALF_AWAY_FROM_ZERO, RM_TOWARDS_ZERO, RM_DOWN or RM_UP",
         role, mode == RM_HALF_UP ? "RM_HALF_UP" : "RM_HALF_DOWN", int(mode));
}

void store_int(data_type_t dtype, uint8_t *p, int64_t v) { store_ints(dtype, p, 1, 1, &v); }

// dst may overlap src: every command here reads each element just before
// writing its own result, in element order.
struct Pair {
  TensorRef dst, src;
};

Pair operands(Context &ctx, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape, data_type_t dst_dtype,
              data_type_t src_dtype) {
  require_aligned_start(ctx, Rule::RQ_3, "dst", dst_addr);
  require_aligned_start(ctx, Rule::RQ_3, "src", src_addr);
  Pair p{operand(ctx, "dst", dst_addr, shape, nullptr, dst_dtype), operand(ctx, "src", src_addr, shape, nullptr, src_dtype)};
  require_same_start_npu(Rule::RQ_3, p.dst, "dst", p.src, "src");
  return p;
}

// The per-channel [1, C, 1, 3] INT32 parameters: the aligned layout's
// strides, but the vendor checker wants the start only at a multiple of 8
// bytes (RQ-3), and no command field needs more.
TensorRef quant_operand(Context &ctx, local_addr_t addr, int channels) {
  if (addr % 8 != 0)
    fail(Rule::RQ_3, "quant local address {:#x} is not a multiple of 8 bytes", addr);
  const dim4 shape = {1, channels, 1, 3};
  const dim4 stride = aligned_stride(ctx.chip, int(addr / ctx.chip.local_mem_bytes), shape, DT_INT32);
  return operand(ctx, "quant", addr, shape, &stride, DT_INT32);
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
  *quant = quant_operand(ctx, q.per_channel, dst.shape.c);
  require_same_start_npu(Rule::RQ_3, dst, "dst", *quant, "quant");
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
  // Requantising narrows to 8 or 16 bits (RQ-4); dequantising widens from
  // them (DQ-3).
  const Rule rule = q.dequant ? Rule::DQ_3 : Rule::RQ_4;
  require_dtype_as(rule, "dst_dtype", dst_dtype, q.dequant ? kInts : kNarrowInts);
  require_dtype_as(rule, "src_dtype", src_dtype, q.dequant ? kNarrowInts : kInts);
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
  require_dtype_as(Rule::RQ_1, "dst_dtype", dst_dtype, kNarrowInts);
  require_dtype_as(Rule::RQ_1, "src_dtype", src_dtype, kInts);
  require_fp32_form_rounding(Rule::RQ_2, "dst_rounding_mode", dst_mode);
  require_fp32_form_rounding(Rule::RQ_2, "src_rounding_mode", src_mode);
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
  require_dtype_as(Rule::DQ_1, "src_dtype", src_dtype, kNarrowInts);
  require_fp32_form_rounding(Rule::DQ_2, "rounding_mode", mode);
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
