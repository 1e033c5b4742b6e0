// ppl_ops_arith.cc: the PPL element-wise arithmetic (spec §3.8): float
// and integer binary operations with broadcasting, fill, and (below) the
// comparisons, selections, bit operations and shifts. Each checks what PPL
// requires, then submits its tpu-kernel command (ppl_pipeline.cc), whose
// call site is the .pl line.
#include <limits>

#include "ppl_ops_common.h"

namespace ppl::rt {
namespace {

void issue_binary(binary op, const desc &dst, const desc &a, const desc &b) {
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), as = kernel_dim4(a.stride),
               bs = kernel_dim4(b.stride);
  const uint32_t o = local_address(dst), x = local_address(a), y = local_address(b);
  const ::data_type_t t = kernel_dtype(dst.dtype);
  switch (op) {
    case binary::add: return tpu_bdc_fp_add(o, x, y, &shape, &ds, &as, &bs, t);
    case binary::sub: return tpu_bdc_fp_sub(o, x, y, &shape, &ds, &as, &bs, t);
    case binary::mul: return tpu_bdc_fp_mul(o, x, y, &shape, &ds, &as, &bs, t);
    case binary::div: return tpu_bdc_fp_div(o, x, y, &shape, &ds, &as, &bs, t);
    case binary::max: return tpu_bdc_max(o, x, y, &shape, &ds, &as, &bs, t);
    case binary::min: return tpu_bdc_min(o, x, y, &shape, &ds, &as, &bs, t);
  }
}

void issue_binary_scalar(binary op, const desc &dst, const desc &a, scalar_t c, bool scalar_first) {
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), as = kernel_dim4(a.stride);
  const uint32_t o = local_address(dst), x = local_address(a);
  const ::data_type_t t = kernel_dtype(dst.dtype);
  switch (op) {
    case binary::add: return tpu_bdc_fp_add_C(o, x, c, &shape, &ds, &as, t);
    case binary::sub:
      return scalar_first ? tpu_bdc_fp_C_sub(o, x, c, &shape, &ds, &as, t) : tpu_bdc_fp_sub_C(o, x, c, &shape, &ds, &as, t);
    case binary::mul: return tpu_bdc_fp_mul_C(o, x, c, &shape, &ds, &as, t);
    case binary::div:
      return scalar_first ? tpu_bdc_fp_C_div(o, x, c, &shape, &ds, &as, t) : tpu_bdc_fp_div_C(o, x, c, &shape, &ds, &as, t);
    case binary::max: return tpu_bdc_max_C(o, x, c, &shape, &ds, &as, t);
    case binary::min: return tpu_bdc_min_C(o, x, c, &shape, &ds, &as, t);
  }
}

}  // namespace

void tiu_binary(const char *name, binary op, const desc &dst_in, const desc &a, const desc &b, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src0", &a}, {"src1", &b}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src0", a, where);
  require_local(name, "src1", b, where);
  const operand x = broadcast_to(name, a, dst, "src0", where), y = broadcast_to(name, b, dst, "src1", where);
  submit(where, {{&dst, tiu_engine}, {&a, tiu_engine}, {&b, tiu_engine}}, [=] {
    lane_broadcast(x, dst.shape.c);
    lane_broadcast(y, dst.shape.c);
    issue_binary(op, dst, x.d, y.d);
  });
}

void tiu_binary_scalar(const char *name, binary op, const desc &dst_in, const desc &a, double c, bool scalar_first,
                       const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &a}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src", a, where);
  const operand x = broadcast_to(name, a, dst, "src", where);
  submit(where, {{&dst, tiu_engine}, {&a, tiu_engine}}, [=] {
    lane_broadcast(x, dst.shape.c);
    issue_binary_scalar(op, dst, x.d, scalar_of(c, dst.dtype), scalar_first);
  });
}


void tiu_fill(const char *name, const desc &dst, double value, const site &where) {
  require_local(name, "dst", dst, where);
  submit(where, {{&dst, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride);
    tpu_bdc_set_C(local_address(dst), scalar_of(value, dst.dtype), &shape, &ds, kernel_dtype(dst.dtype));
  });
}


void tiu_int_binary(const char *name, binary op, const desc &dst_in, const desc &a, const desc &b,
                    const int_mode &mode, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src0", &a}, {"src1", &b}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src0", a, where);
  require_local(name, "src1", b, where);
  check_shift(name, mode, where);
  const operand x = broadcast_to(name, a, dst, "src0", where), y = broadcast_to(name, b, dst, "src1", where);
  const desc target = shift_target(name, dst, mode, where);  // a copy: the issue may come later
  submit(where, {{&dst, tiu_engine}, {&a, tiu_engine}, {&b, tiu_engine}, {&target, tiu_engine}}, [=] {
    lane_broadcast(x, dst.shape.c);
    lane_broadcast(y, dst.shape.c);
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(target.stride), as = kernel_dim4(x.d.stride),
                 bs = kernel_dim4(y.d.stride);
    const uint32_t o = local_address(target), p = local_address(x.d), q = local_address(y.d);
    const ::data_type_t t = kernel_dtype(target.dtype), ta = kernel_dtype(a.dtype), tb = kernel_dtype(b.dtype);
    const char shift = static_cast<char>(mode.shift < 0 ? -mode.shift : 0);  // tpu-kernel's shifts right
    const auto rm = static_cast<::rounding_mode_t>(mode.rounding);
    if (op == binary::add) tpu_bdc_int_add(o, p, q, &shape, &ds, &as, &bs, t, ta, tb, shift, rm, mode.saturation);
    if (op == binary::sub) tpu_bdc_int_sub(o, p, q, &shape, &ds, &as, &bs, t, ta, tb, shift, rm, mode.saturation);
    if (op == binary::mul) tpu_bdc_int_mul(o, p, q, &shape, &ds, &as, &bs, t, ta, tb, shift, rm, mode.saturation);
    finish_left_shift(dst, target, mode);
  });
}

void tiu_int_binary_scalar(const char *name, binary op, const desc &dst_in, const desc &a, long long c,
                           bool scalar_first, const int_mode &mode, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &a}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src", a, where);
  check_shift(name, mode, where);
  const operand x = broadcast_to(name, a, dst, "src", where);
  const desc target = shift_target(name, dst, mode, where);  // a copy: the issue may come later
  submit(where, {{&dst, tiu_engine}, {&a, tiu_engine}, {&target, tiu_engine}}, [=] {
    lane_broadcast(x, dst.shape.c);
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(target.stride), as = kernel_dim4(x.d.stride);
    const uint32_t o = local_address(target), p = local_address(x.d);
    const ::data_type_t t = kernel_dtype(target.dtype), ta = kernel_dtype(a.dtype);
    const scalar_t value = scalar_of(static_cast<double>(c), a.dtype);
    const char shift = static_cast<char>(mode.shift < 0 ? -mode.shift : 0);  // tpu-kernel's shifts right
    const auto rm = static_cast<::rounding_mode_t>(mode.rounding);
    if (op == binary::add) tpu_bdc_int_add_C(o, p, value, &shape, &ds, &as, t, ta, ta, shift, rm, mode.saturation);
    if (op == binary::mul) tpu_bdc_int_mul_C(o, p, value, &shape, &ds, &as, t, ta, ta, shift, rm, mode.saturation);
    if (op == binary::sub && scalar_first)
      tpu_bdc_int_C_sub(o, p, value, &shape, &ds, &as, t, ta, ta, shift, rm, mode.saturation);
    if (op == binary::sub && !scalar_first)
      tpu_bdc_int_sub_C(o, p, value, &shape, &ds, &as, t, ta, ta, shift, rm, mode.saturation);
    finish_left_shift(dst, target, mode);
  });
}

}  // namespace ppl::rt

namespace ppl::rt {
namespace {

// A tensor operand broadcast to dst's shape, or a scalar of `scalar_type`.
struct prepared {
  operand o;
  bool is_tensor = false;
  scalar_t scalar{};
};

prepared prepare(const char *name, tensor_or_scalar v, const desc &dst, ppl::data_type_t scalar_type,
                 const char *role, const site &where) {
  prepared p;
  if (v.d) {
    require_local(name, role, *v.d, where);
    p.o = broadcast_to(name, *v.d, dst, role, where);
    p.is_tensor = true;
  } else {
    p.scalar = scalar_of(v.value, scalar_type);
  }
  return p;
}

// An element-wise operation's operands, ready to issue: dst, a (broadcast
// to dst's shape) and b, a broadcast tensor or a scalar.
struct ready_operands {
  uint32_t dst = 0, a = 0, b = 0;
  ::dim4 shape{}, dst_stride{}, a_stride{}, b_stride{};
  bool b_is_tensor = false;
  scalar_t b_scalar{};
};

// Checks and broadcasts dst, a and b (a scalar b converted to
// `scalar_type`), then submits `issue` with the operands it will need.
void submit_elementwise(const char *name, const site &where, const desc &dst_in, const desc &a, tensor_or_scalar b,
                        ppl::data_type_t scalar_type, std::function<void(const ready_operands &)> issue) {
  const desc dst =
      written(name, dst_in,
              b.d ? broadcast_shape(name, {{"src0", &a}, {"src1", b.d}}, where) : broadcast_shape(name, {{"src0", &a}}, where),
              where);
  require_local(name, "dst", dst, where);
  require_local(name, "src0", a, where);
  const operand x = broadcast_to(name, a, dst, "src0", where);
  const prepared y = prepare(name, b, dst, scalar_type, "src1", where);
  const desc second = y.is_tensor ? y.o.d : dst;
  submit(where, {{&dst, tiu_engine}, {&a, tiu_engine}, {&second, tiu_engine}}, [=, issue = std::move(issue)] {
    lane_broadcast(x, dst.shape.c);
    if (y.is_tensor) lane_broadcast(y.o, dst.shape.c);
    ready_operands o;
    o.dst = local_address(dst);
    o.a = local_address(x.d);
    o.shape = kernel_dim4(dst.shape);
    o.dst_stride = kernel_dim4(dst.stride);
    o.a_stride = kernel_dim4(x.d.stride);
    o.b_is_tensor = y.is_tensor;
    o.b_scalar = y.scalar;
    if (y.is_tensor) {
      o.b = local_address(y.o.d);
      o.b_stride = kernel_dim4(y.o.d.stride);
    }
    issue(o);
  });
}

}  // namespace

void tiu_bitwise(const char *name, bitwise op, const desc &dst, const desc &a, tensor_or_scalar b, const site &where) {
  if (is_float(dst.dtype) || dst.dtype != a.dtype || (b.d && b.d->dtype != dst.dtype))
    refuse(name, where, "the bitwise operations take tensors of one integer type");
  const ::data_type_t t = kernel_dtype(dst.dtype);
  submit_elementwise(name, where, dst, a, b, dst.dtype, [=](const ready_operands &o) {
    if (o.b_is_tensor) {
      if (op == bitwise::and_) tpu_bdc_and(o.dst, o.a, o.b, &o.shape, &o.dst_stride, &o.a_stride, &o.b_stride, t);
      if (op == bitwise::or_) tpu_bdc_or(o.dst, o.a, o.b, &o.shape, &o.dst_stride, &o.a_stride, &o.b_stride, t);
      if (op == bitwise::xor_) tpu_bdc_xor(o.dst, o.a, o.b, &o.shape, &o.dst_stride, &o.a_stride, &o.b_stride, t);
      return;
    }
    if (op == bitwise::and_) tpu_bdc_and_C(o.dst, o.a, o.b_scalar, &o.shape, &o.dst_stride, &o.a_stride, t);
    if (op == bitwise::or_) tpu_bdc_or_C(o.dst, o.a, o.b_scalar, &o.shape, &o.dst_stride, &o.a_stride, t);
    if (op == bitwise::xor_) tpu_bdc_xor_C(o.dst, o.a, o.b_scalar, &o.shape, &o.dst_stride, &o.a_stride, t);
  });
}

void tiu_compare(const char *name, compare op, const desc &dst, const desc &a, tensor_or_scalar b, double true_value,
                 const site &where) {
  if (b.d && b.d->dtype != a.dtype) refuse(name, where, "src0 and src1 must be of one type");
  const ::data_type_t t = kernel_dtype(dst.dtype), ta = kernel_dtype(a.dtype);
  const scalar_t truth = scalar_of(true_value, dst.dtype);
  submit_elementwise(name, where, dst, a, b, a.dtype, [=](const ready_operands &o) {
    const ::dim4 *shape = &o.shape, *ds = &o.dst_stride, *as = &o.a_stride, *bs = &o.b_stride;
    if (o.b_is_tensor) {
      if (op == compare::greater) tpu_bdc_greater(o.dst, o.a, o.b, truth, shape, ds, as, bs, t, ta);
      if (op == compare::less) tpu_bdc_less(o.dst, o.a, o.b, truth, shape, ds, as, bs, t, ta);
      if (op == compare::equal) tpu_bdc_equal(o.dst, o.a, o.b, truth, shape, ds, as, bs, t, ta);
      return;
    }
    if (op == compare::greater) tpu_bdc_greater_C(o.dst, o.a, o.b_scalar, truth, shape, ds, as, t, ta);
    if (op == compare::less) tpu_bdc_less_C(o.dst, o.a, o.b_scalar, truth, shape, ds, as, t, ta);
    if (op == compare::equal) tpu_bdc_equal_C(o.dst, o.a, o.b_scalar, truth, shape, ds, as, t, ta);
  });
}

namespace {

// A select operand: a tensor of dst's shape in the aligned layout (the
// select commands take no strides), or a scalar of `type`.
variable_t select_variable(const char *name, tensor_or_scalar v, const desc &dst, ppl::data_type_t type,
                           const char *role, const site &where) {
  variable_t var{};
  if (!v.d) {
    var.type = SCALAR;
    var.context.scalar = scalar_of(v.value, type);
    return var;
  }
  require_local(name, role, *v.d, where);
  require_same_shape(name, dst, *v.d, where);
  require_aligned(name, role, *v.d, where);
  if (v.d->dtype != type) refuse(name, where, fmt::format("{} is not of the type its place needs", role));
  var.type = TENSOR;
  return var;
}

}  // namespace

void tiu_select(const char *name, compare op, const desc &dst_in, tensor_or_scalar a, tensor_or_scalar b,
                tensor_or_scalar x, tensor_or_scalar y, const site &where) {
  const desc *first = a.d ? a.d : b.d ? b.d : x.d ? x.d : y.d;
  const desc dst = first ? written(name, dst_in, broadcast_shape(name, {{"src", first}}, where), where) : dst_in;
  require_local(name, "dst", dst, where);
  require_aligned(name, "dst", dst, where);
  if (!a.d && !b.d) refuse(name, where, "src0 and src1 cannot both be scalars");
  const ppl::data_type_t compared = a.d ? a.d->dtype : b.d->dtype;
  variable_t v[4] = {select_variable(name, a, dst, compared, "src0", where),
                     select_variable(name, b, dst, compared, "src1", where),
                     select_variable(name, x, dst, dst.dtype, "src2", where),
                     select_variable(name, y, dst, dst.dtype, "src3", where)};
  const desc d0 = a.d ? *a.d : dst, d1 = b.d ? *b.d : dst, d2 = x.d ? *x.d : dst, d3 = y.d ? *y.d : dst;
  submit(where, {{&dst, tiu_engine}, {&d0, tiu_engine}, {&d1, tiu_engine}, {&d2, tiu_engine}, {&d3, tiu_engine}},
         [=]() mutable {
           const desc *operands[4] = {&d0, &d1, &d2, &d3};
           for (int i = 0; i < 4; ++i)
             if (v[i].type == TENSOR) v[i].context.addr = local_address(*operands[i]);
           const ::dim4 shape = kernel_dim4(dst.shape);
           const ::data_type_t tc = kernel_dtype(compared), t = kernel_dtype(dst.dtype);
           const uint32_t o = local_address(dst);
           if (op == compare::greater) tpu_bdc_greater_select(o, &v[0], &v[1], &v[2], &v[3], &shape, tc, t);
           if (op == compare::less) tpu_bdc_less_select(o, &v[0], &v[1], &v[2], &v[3], &shape, tc, t);
           if (op == compare::equal) tpu_bdc_equal_select(o, &v[0], &v[1], &v[2], &v[3], &shape, tc, t);
         });
}

void tiu_abs(const char *name, const desc &dst_in, const desc &src, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &src}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  if (dst.dtype != src.dtype) refuse(name, where, "dst and src must be of one type");
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    tpu_bdc_abs(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
  });
}

void tiu_shift(const char *name, bool logical, const desc &dst_in, const desc &src, tensor_or_scalar shift,
               rounding_mode_t rm, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &src}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  if (is_float(dst.dtype) || is_float(src.dtype)) refuse(name, where, "shifts take integer tensors");
  if (!shift.d && (shift.value < -128 || shift.value > 127))
    refuse(name, where, fmt::format("shift {} is not an int8", shift.value));
  const prepared amount = prepare(name, shift, dst, ppl::DT_INT8, "shift", where);
  if (shift.d && is_float(shift.d->dtype)) refuse(name, where, "the shift tensor must be of an integer type");
  const desc third = amount.is_tensor ? amount.o.d : dst;
  const char constant = static_cast<char>(shift.value);
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}, {&third, tiu_engine}}, [=] {
    if (amount.is_tensor) lane_broadcast(amount.o, dst.shape.c);
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    const uint32_t o = local_address(dst), p = local_address(src);
    const ::data_type_t t = kernel_dtype(dst.dtype), ts = kernel_dtype(src.dtype);
    const auto mode = static_cast<::rounding_mode_t>(rm);
    if (amount.is_tensor) {
      const ::dim4 sh = kernel_dim4(amount.o.d.stride);
      const uint32_t q = local_address(amount.o.d);
      const ::data_type_t tq = kernel_dtype(amount.o.d.dtype);
      if (logical)
        tpu_bdc_logical_shift(o, p, q, &shape, &ds, &ss, &sh, t, ts, tq, mode);
      else
        tpu_bdc_arithmetic_shift(o, p, q, &shape, &ds, &ss, &sh, t, ts, tq, mode);
    } else if (logical) {
      tpu_bdc_logical_shift_C(o, p, constant, &shape, &ds, &ss, t, ts, mode);
    } else {
      tpu_bdc_arithmetic_shift_C(o, p, constant, &shape, &ds, &ss, t, ts, mode);
    }
  });
}

void tiu_fmac(const char *name, const desc &dst, const desc &a, tensor_or_scalar b, const site &where) {
  check_known(name, "dst (accumulated into)", dst, where);
  if (dst.dtype != ppl::DT_FP32 || a.dtype != ppl::DT_FP32 || (b.d && b.d->dtype != ppl::DT_FP32))
    refuse(name, where, "fmac takes fp32 tensors");
  const float constant = static_cast<float>(b.value);
  submit_elementwise(name, where, dst, a, b, ppl::DT_FP32, [=](const ready_operands &o) {
    if (o.b_is_tensor)
      tpu_bdc_fp32_mac(o.dst, o.a, o.b, &o.shape, &o.dst_stride, &o.a_stride, &o.b_stride);
    else
      tpu_bdc_fp32_mac_C(o.dst, o.a, constant, &o.shape, &o.dst_stride, &o.a_stride);
  });
}

}  // namespace ppl::rt
