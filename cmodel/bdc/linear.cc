#include "linear.h"

#include "elementwise.h"

namespace cmodel::bdc {
namespace {

// The steps of each operation, one fp32 rounding each (separate statements:
// no contraction into a fused multiply-add, see fp_arith.cc).
inline float scale_then_bias(float x, float s, float b) {
  const float p = x * s;
  return p + b;
}
inline float square_of_sum(float x, float b) {
  const float t = x + b;
  return t * t;
}
inline float square_of_difference(float x, float b) {
  const float t = x - b;
  return t * t;
}

// A [1, c, 1, 1] per-channel operand, checked, and its view with dst's
// shape: every element of channel c reads bias(0, c, 0, 0). `rule`: the
// operand's placement rule (LIN-3 for the scale or bias, LIN-4 for the
// bias of scale_bias).
struct PerChannel {
  TensorRef checked;
  TensorRef view;
};

PerChannel per_channel(Context &ctx, const char *role, local_addr_t addr, const TensorRef &dst, data_type_t dtype,
                       Rule rule) {
  PerChannel p{per_channel_operand(ctx, role, addr, dst.shape.c, dtype, rule), {}};
  require_same_npu(rule, dst, "dst", p.checked, role);
  p.view = p.checked;
  p.view.shape = dst.shape;
  p.view.stride = {0, p.checked.stride.c, 0, 0};
  return p;
}

BdcCost cost_of(Linear op) { return op == Linear::bias || op == Linear::scale ? BdcCost::arith : BdcCost::mac; }

}  // namespace

void fp_linear(Context &ctx, const char *api, Linear op, local_addr_t dst_addr, local_addr_t src_addr,
               local_addr_t first_addr, local_addr_t second_addr, const dim4 &shape, data_type_t dtype) {
  require_float(Rule::LIN_6, "dtype", dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype, Rule::LIN_1);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, dtype, Rule::LIN_1);
  require_same_npu(Rule::LIN_2, dst, "dst", src, "src");
  const bool scales = op == Linear::scale || op == Linear::scale_bias;
  const PerChannel first = per_channel(ctx, scales ? "scale" : "bias", first_addr, dst, dtype, Rule::LIN_3);
  if (op == Linear::scale_bias) {
    const PerChannel bias = per_channel(ctx, "bias", second_addr, dst, dtype, Rule::LIN_4);
    with_float_dtype(dtype, [&]<typename C>(C) {
      map<C, C, C, C>(dst, scale_then_bias, src, first.view, bias.view);
    });
    book(ctx, api, cost_of(op), dst, dtype, {&dst}, {&src, &first.checked, &bias.checked});
    return;
  }
  with_float_dtype(dtype, [&]<typename C>(C) {
    switch (op) {
      case Linear::bias: map<C, C, C>(dst, [](float x, float b) { return x + b; }, src, first.view); break;
      case Linear::scale: map<C, C, C>(dst, [](float x, float s) { return x * s; }, src, first.view); break;
      case Linear::add_sqr: map<C, C, C>(dst, square_of_sum, src, first.view); break;
      case Linear::sub_sqr: map<C, C, C>(dst, square_of_difference, src, first.view); break;
      case Linear::scale_bias: break;
    }
  });
  book(ctx, api, cost_of(op), dst, dtype, {&dst}, {&src, &first.checked});
}

void fp_linear_const(Context &ctx, const char *api, Linear op, local_addr_t dst_addr, local_addr_t src_addr,
                     scalar_t first, scalar_t second, const dim4 &shape, data_type_t dtype) {
  require_float(Rule::LIN_6, "dtype", dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype, Rule::LIN_1);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, dtype, Rule::LIN_1);
  require_same_npu(Rule::LIN_2, dst, "dst", src, "src");
  with_float_dtype(dtype, [&]<typename C>(C) {
    const float a = scalar_value<C>(first), b = scalar_value<C>(second);
    switch (op) {
      case Linear::scale_bias: map<C, C>(dst, [&](float x) { return scale_then_bias(x, a, b); }, src); break;
      case Linear::add_sqr: map<C, C>(dst, [&](float x) { return square_of_sum(x, a); }, src); break;
      case Linear::sub_sqr: map<C, C>(dst, [&](float x) { return square_of_difference(x, a); }, src); break;
      case Linear::bias: map<C, C>(dst, [&](float x) { return x + a; }, src); break;
      case Linear::scale: map<C, C>(dst, [&](float x) { return x * a; }, src); break;
    }
  });
  book(ctx, api, cost_of(op), dst, dtype, {&dst}, {&src});
}

}  // namespace cmodel::bdc
