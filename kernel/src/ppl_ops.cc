// ppl_ops.cc: the PPL operations over the tpu-kernel API. Each checks what
// PPL itself requires (shapes, broadcasting), records its operands' use in
// the plan pass, and in the execution pass issues the tpu-kernel command
// with the .pl line as the call site, so the cmodel's checks report there.
#include <limits>

#include <fmt/format.h>

#include "ppl_state.h"
#include "tpu_kernel.h"

namespace ppl::rt {
namespace {

::data_type_t kernel_dtype(ppl::data_type_t d) {
  switch (d) {
    case ppl::DT_FP32: return ::DT_FP32;
    case ppl::DT_FP16: return ::DT_FP16;
    case ppl::DT_BF16: return ::DT_BFP16;
    case ppl::DT_INT32: return ::DT_INT32;
    case ppl::DT_UINT32: return ::DT_UINT32;
    case ppl::DT_INT16: return ::DT_INT16;
    case ppl::DT_UINT16: return ::DT_UINT16;
    case ppl::DT_INT8: return ::DT_INT8;
    case ppl::DT_UINT8: return ::DT_UINT8;
    default: return ::DT_FP32;  // the headers admit no other element type
  }
}

::dim4 kernel_dim4(const ppl::dim4 &d) { return ::dim4{d.n, d.c, d.h, d.w}; }

std::string text(const ppl::dim4 &d) { return fmt::format("[{}, {}, {}, {}]", d.n, d.c, d.h, d.w); }

bool same(const ppl::dim4 &a, const ppl::dim4 &b) { return a.n == b.n && a.c == b.c && a.h == b.h && a.w == b.w; }

bool is_float(ppl::data_type_t d) { return d == ppl::DT_FP32 || d == ppl::DT_FP16 || d == ppl::DT_BF16; }

// `value` as a scalar of `d` (16-bit floats rounded half to even).
scalar_t scalar_of(double value, ppl::data_type_t d) {
  scalar_t s{};
  if (is_float(d)) {
    s.f32 = static_cast<float>(value);
    return d == ppl::DT_FP32 ? s : tpu_cast(s, kernel_dtype(d), ::DT_FP32, ::RM_HALF_TO_EVEN);
  }
  // Clamped into int32 first (the cast below saturates into the type).
  const double lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  s.s32 = value != value ? 0 : static_cast<int32_t>(value < lo ? lo : value > hi ? hi : value);
  return tpu_cast(s, kernel_dtype(d), ::DT_INT32, ::RM_HALF_TO_EVEN);
}

void require_local(const char *name, const char *role, const desc &d, const site &where) {
  if (d.mode != LOCAL) refuse(name, where, fmt::format("{} must be a local tensor", role));
}

void require_same_shape(const char *name, const desc &a, const desc &b, const site &where) {
  if (!same(a.shape, b.shape))
    refuse(name, where, fmt::format("shapes differ: {} and {}", text(a.shape), text(b.shape)));
}

// `src` read with the shape of `dst`: an extent 1 in N, H or W becomes a
// zero stride (spec §2.6). An extent 1 in C is copied from its lane to the
// others first (lane_broadcast), then read with a zero C stride: PPL does
// the same in place, which is safe only for a tensor that owns all lanes
// of its bytes (a one-channel allocation from lane 0).
struct operand {
  desc d;
  bool lane_broadcast = false;
  dim4 source_shape;  // before broadcasting
};

operand broadcast_to(const char *name, const desc &src, const desc &dst, const char *role, const site &where) {
  operand o{src, false, src.shape};
  const int *from[4] = {&src.shape.n, &src.shape.c, &src.shape.h, &src.shape.w};
  const int *to[4] = {&dst.shape.n, &dst.shape.c, &dst.shape.h, &dst.shape.w};
  int *stride[4] = {&o.d.stride.n, &o.d.stride.c, &o.d.stride.h, &o.d.stride.w};
  for (int i = 0; i < 4; ++i) {
    if (*from[i] == *to[i]) continue;
    if (*from[i] != 1)
      refuse(name, where,
             fmt::format("{} of shape {} does not broadcast to {}", role, text(src.shape), text(dst.shape)));
    if (i == 1 && (src.instance < 0 || src.block.c != 1 || src.lane != 0 ||
                   !same(src.stride, local_strides(src.shape, TPU_ALIGN, src.element_size, 0))))
      refuse(name, where,
             fmt::format("{} of shape {} broadcasts over C to {}, which needs a tensor made with one channel "
                         "(its block's C is {}), in the aligned layout, starting on lane 0 (it starts on lane {})",
                         role, text(src.shape), text(dst.shape), src.block.c, src.lane));
    o.lane_broadcast = o.lane_broadcast || i == 1;
    *stride[i] = 0;
  }
  o.d.shape = dst.shape;
  return o;
}

// Copies lane 0 of a one-channel operand to the lanes `channels` reaches.
void lane_broadcast(const operand &o, int channels) {
  const int lanes = ppl::lane_num(), reached = channels < lanes ? channels : lanes;
  if (!o.lane_broadcast || reached < 2) return;
  // The source's elements land at the same offsets in lanes 1 to reached - 1.
  const ::dim4 shape{o.source_shape.n, reached - 1, o.source_shape.h, o.source_shape.w};
  const uint32_t from = local_address(o.d), lane_bytes = current().lane_bytes;
  tpu_bdc_npu_bcast(from + lane_bytes, from, &shape, kernel_dtype(o.d.dtype));
}

// Commands without stride arguments read the aligned layout.
void require_aligned(const char *name, const char *role, const desc &d, const site &where) {
  const dim4 aligned = local_strides(d.shape, TPU_ALIGN, d.element_size, d.lane);
  if (!same(d.stride, aligned))
    refuse(name, where, fmt::format("{} must have the aligned layout's strides {}, not {}", role, text(aligned),
                                    text(d.stride)));
}

// PPL's shift is a left shift in [-32, 31]; tpu-kernel's integer
// arithmetic shifts right only, so a left shift is refused.
void check_shift(const char *name, const int_mode &mode, const site &where) {
  if (mode.shift < -32 || mode.shift > 31) refuse(name, where, fmt::format("shift {} is outside [-32, 31]", mode.shift));
  if (mode.shift > 0)
    refuse(name, where, fmt::format("shift {} shifts left, which is not implemented yet (right shifts, 0 to -32, are)",
                                    mode.shift));
}

bool plan_only(std::initializer_list<std::pair<const desc *, engine>> operands) {
  state &st = current();
  for (const auto &[d, kind] : operands) use(*d, kind);
  ++st.operations;
  return st.mode != pass::execute;
}

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
    case binary::div: return tpu_bdc_fp_div_C(o, x, c, &shape, &ds, &as, t);
    case binary::max: return tpu_bdc_max_C(o, x, c, &shape, &ds, &as, t);
    case binary::min: return tpu_bdc_min_C(o, x, c, &shape, &ds, &as, t);
  }
}

}  // namespace

dim4 continuous_strides(const dim4 &s) { return dim4{s.c * s.h * s.w, s.h * s.w, s.w, 1}; }

dim4 local_strides(const dim4 &s, align_mode_t align, int element_size, int lane) {
  const int eu = ppl::eu_bytes() / element_size, lanes = ppl::lane_num();
  if (align == CONTINUOUS) return continuous_strides(s);
  int h = s.w, c = s.h * s.w;
  if (align == TPU_ALIGN) c = (c + eu - 1) / eu * eu;
  if (align == TPU_ROW_ALIGN) {
    h = (s.w + eu - 1) / eu * eu;
    c = s.h * h;
  }
  return dim4{c * ((lane + s.c + lanes - 1) / lanes), c, h, 1};
}

desc sub_view(const desc &d, const dim4 &shape, const dim4 &offset, const site &where) {
  const int ends[4] = {offset.n + shape.n, offset.c + shape.c, offset.h + shape.h, offset.w + shape.w};
  const int extents[4] = {d.shape.n, d.shape.c, d.shape.h, d.shape.w};
  const int starts[4] = {offset.n, offset.c, offset.h, offset.w};
  for (int i = 0; i < 4; ++i)
    if (starts[i] < 0 || ends[i] > extents[i])
      refuse("sub_view", where,
             fmt::format("window {} at offset {} leaves the tensor of shape {}", text(shape), text(offset),
                         text(d.shape)));
  desc v = d;
  v.shape = shape;
  const int64_t size = d.element_size;
  if (d.mode != LOCAL) {
    v.address += static_cast<uint64_t>((int64_t(offset.n) * d.stride.n + int64_t(offset.c) * d.stride.c +
                                        int64_t(offset.h) * d.stride.h + int64_t(offset.w) * d.stride.w) * size);
    return v;
  }
  // An offset in C moves the start lane, and the row once past the last lane.
  const int lanes = ppl::lane_num(), first = d.lane + offset.c;
  v.lane = first % lanes;
  v.address += static_cast<uint64_t>((int64_t(offset.n) * d.stride.n + int64_t(first / lanes) * d.stride.c +
                                      int64_t(offset.h) * d.stride.h + int64_t(offset.w) * d.stride.w) * size);
  return v;
}

void dma_copy(const char *name, const desc &dst, const desc &src, const site &where) {
  require_same_shape(name, dst, src, where);
  if (dst.mode == L2 || src.mode == L2) refuse(name, where, "L2 tensors are not modelled on bm1684x/bm1688");
  if ((dst.mode == LOCAL) == (src.mode == LOCAL))
    refuse(name, where, "one side must be a local tensor, the other a global one");
  if (plan_only({{&dst, dma_engine}, {&src, dma_engine}})) return;
  call_site_scope scope(where);
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
  if (dst.mode == LOCAL)
    tpu_gdma_cpy_S2L(local_address(dst), src.address, &shape, &ds, &ss, kernel_dtype(dst.dtype));
  else
    tpu_gdma_cpy_L2S(dst.address, local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
}

void tiu_binary(const char *name, binary op, const desc &dst, const desc &a, const desc &b, const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src0", a, where);
  require_local(name, "src1", b, where);
  const operand x = broadcast_to(name, a, dst, "src0", where), y = broadcast_to(name, b, dst, "src1", where);
  if (plan_only({{&dst, tiu_engine}, {&a, tiu_engine}, {&b, tiu_engine}})) return;
  call_site_scope scope(where);
  lane_broadcast(x, dst.shape.c);
  lane_broadcast(y, dst.shape.c);
  issue_binary(op, dst, x.d, y.d);
}

void tiu_binary_scalar(const char *name, binary op, const desc &dst, const desc &a, double c, bool scalar_first,
                       const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", a, where);
  const operand x = broadcast_to(name, a, dst, "src", where);
  if (plan_only({{&dst, tiu_engine}, {&a, tiu_engine}})) return;
  call_site_scope scope(where);
  lane_broadcast(x, dst.shape.c);
  issue_binary_scalar(op, dst, x.d, scalar_of(c, dst.dtype), scalar_first);
}

void tiu_fill(const char *name, const desc &dst, double value, const site &where) {
  require_local(name, "dst", dst, where);
  if (plan_only({{&dst, tiu_engine}})) return;
  call_site_scope scope(where);
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride);
  tpu_bdc_set_C(local_address(dst), scalar_of(value, dst.dtype), &shape, &ds, kernel_dtype(dst.dtype));
}

void tiu_move(const char *name, const desc &dst, const desc &src, const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  if (plan_only({{&dst, tiu_engine}, {&src, tiu_engine}})) return;
  call_site_scope scope(where);
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
  tpu_bdc_cpy(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
}

void tiu_cast(const char *name, const desc &dst, const desc &src, rounding_mode_t mode, const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  if ((dst.dtype == ppl::DT_FP16 && src.dtype == ppl::DT_BF16) ||
      (dst.dtype == ppl::DT_BF16 && src.dtype == ppl::DT_FP16))
    refuse(name, where, "fp16 <-> bf16 is not a direct cast in PPL: go through fp32");
  if (plan_only({{&dst, tiu_engine}, {&src, tiu_engine}})) return;
  call_site_scope scope(where);
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
  tpu_bdc_cast(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype),
               kernel_dtype(src.dtype), static_cast<::rounding_mode_t>(mode));
}

void tiu_reduce_w(const char *name, const desc &dst, const desc &src, all_reduce_opcode_t op, const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  const dim4 expected{src.shape.n, src.shape.c, src.shape.h, 1};
  if (!same(dst.shape, expected))
    refuse(name, where, fmt::format("dst of shape {} must be {} to reduce W of {}", text(dst.shape), text(expected),
                                    text(src.shape)));
  if (op != ALL_REDUCE_SUM && op != ALL_REDUCE_ADD && op != ALL_REDUCE_MAX)
    refuse(name, where, fmt::format("reduction {} is not implemented (SUM, ADD and MAX are)", static_cast<int>(op)));
  require_aligned(name, "dst", dst, where);
  require_aligned(name, "src", src, where);
  if (plan_only({{&dst, tiu_engine}, {&src, tiu_engine}})) return;
  call_site_scope scope(where);
  // A pooling window of 1 x W over the aligned tensors.
  const ::dim4 shape = kernel_dim4(src.shape);
  const ::dim2 kernel{1, src.shape.w}, one{1, 1};
  const ::padding_t none{0, 0, 0, 0};
  if (op == ALL_REDUCE_MAX)
    tpu_bdc_fp_max_pool2d(local_address(dst), local_address(src), &shape, &kernel, &none, &one, &one,
                          kernel_dtype(src.dtype), scalar_of(-std::numeric_limits<double>::infinity(), src.dtype));
  else
    tpu_bdc_fp_avg_pool2d(local_address(dst), local_address(src), &shape, &kernel, &none, &one, &one,
                          kernel_dtype(src.dtype), scalar_of(1.0, src.dtype));
}

void tiu_fmm2(const char *name, const desc &dst, const desc &left, const desc &right, bool result_add,
              const site &where) {
  const int m = left.shape.c, k = left.shape.w, n = right.shape.w;
  if (left.shape.n != 1 || left.shape.h != 1 || right.shape.n != 1 || right.shape.h != 1 || right.shape.c != k ||
      !same(dst.shape, dim4{1, m, 1, n}))
    refuse(name, where, fmt::format("fmm2 takes dst [1,M,1,N], left [1,M,1,K], right [1,K,1,N]; got {}, {}, {}",
                                    text(dst.shape), text(left.shape), text(right.shape)));
  for (const auto &[role, d] : {std::pair{"dst", &dst}, std::pair{"left", &left}, std::pair{"right", &right}}) {
    require_aligned(name, role, *d, where);
    if (d->lane != 0) refuse(name, where, fmt::format("{} must start on lane 0, not {}", role, d->lane));
  }
  if (plan_only({{&dst, tiu_engine}, {&left, tiu_engine}, {&right, tiu_engine}})) return;
  call_site_scope scope(where);
  tpu_bdc_fp_mm(local_address(dst), local_address(left), local_address(right), m, k, n, kernel_dtype(dst.dtype),
                kernel_dtype(left.dtype), result_add);
}

void dma_fill(const char *name, const desc &dst, double value, const site &where) {
  if (dst.mode == L2) refuse(name, where, "L2 tensors are not modelled on bm1684x/bm1688");
  if (plan_only({{&dst, dma_engine}})) return;
  call_site_scope scope(where);
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride);
  const scalar_t c = scalar_of(value, dst.dtype);
  if (dst.mode == LOCAL)
    tpu_gdma_set_C_local(local_address(dst), c, &shape, &ds, kernel_dtype(dst.dtype));
  else
    tpu_gdma_set_C_system(dst.address, c, &shape, &ds, kernel_dtype(dst.dtype));
}

void tiu_rsqrt(const char *name, const desc &dst, const desc &src, int iterations, const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  require_aligned(name, "dst", dst, where);
  require_aligned(name, "src", src, where);
  if (iterations < 1 || iterations > 4)
    refuse(name, where, fmt::format("num_iter is {}; PPL allows 1 to 4", iterations));
  if (plan_only({{&dst, tiu_engine}, {&src, tiu_engine}})) return;
  call_site_scope scope(where);
  const ::dim4 shape = kernel_dim4(dst.shape);
  if (dst.dtype == ppl::DT_FP32)
    tpu_bdc_fp32_tunable_rsqrt(local_address(dst), local_address(src), &shape, iterations);
  else
    tpu_bdc_fp_tunable_rsqrt(local_address(dst), local_address(src), &shape, kernel_dtype(dst.dtype), iterations);
}

void tiu_pool(const char *name, pool kind, const desc &dst, const desc &src, const pool_window &window, double scale,
              const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_aligned(name, "dst", dst, where);
  require_aligned(name, "src", src, where);
  const dim2 k = window.kernel, st = window.stride, dl = window.dilation;
  const padding_t p = window.padding;
  if (k.h < 1 || k.w < 1 || st.h < 1 || st.w < 1 || dl.h < 1 || dl.w < 1)
    refuse(name, where, "kernel, stride and dilation must be at least 1");
  const int oh = (src.shape.h + p.top + p.bottom - ((k.h - 1) * dl.h + 1)) / st.h + 1;
  const int ow = (src.shape.w + p.left + p.right - ((k.w - 1) * dl.w + 1)) / st.w + 1;
  const dim4 expected{src.shape.n, src.shape.c, oh, ow};
  if (!same(dst.shape, expected))
    refuse(name, where, fmt::format("dst of shape {} must be {} for this window over {}", text(dst.shape),
                                    text(expected), text(src.shape)));
  if (plan_only({{&dst, tiu_engine}, {&src, tiu_engine}})) return;
  call_site_scope scope(where);
  const ::dim4 shape = kernel_dim4(src.shape);
  const ::dim2 kk{k.h, k.w}, ss{st.h, st.w}, dd{dl.h, dl.w};
  const ::padding_t pp{p.top, p.bottom, p.left, p.right};
  if (kind == pool::max)
    tpu_bdc_fp_max_pool2d(local_address(dst), local_address(src), &shape, &kk, &pp, &ss, &dd, kernel_dtype(src.dtype),
                          scalar_of(-std::numeric_limits<double>::infinity(), src.dtype));
  else
    tpu_bdc_fp_avg_pool2d(local_address(dst), local_address(src), &shape, &kk, &pp, &ss, &dd, kernel_dtype(src.dtype),
                          scalar_of(scale, src.dtype));
}

void tiu_exp(const char *name, const desc &dst, const desc &src, const desc &work0, const desc &work1,
             const desc &coeff, const site &where) {
  for (const auto &[role, d] : {std::pair{"dst", &dst}, std::pair{"src", &src}, std::pair{"work0", &work0},
                                std::pair{"work1", &work1}, std::pair{"coeff", &coeff}}) {
    require_local(name, role, *d, where);
    require_aligned(name, role, *d, where);
  }
  require_same_shape(name, dst, src, where);
  if (plan_only({{&dst, tiu_engine}, {&src, tiu_engine}, {&work0, tiu_engine}, {&work1, tiu_engine},
                 {&coeff, tiu_engine}}))
    return;
  call_site_scope scope(where);
  const ::dim4 shape = kernel_dim4(dst.shape);
  tpu_bdc_load_fp_exp_coeff(local_address(coeff), kernel_dtype(dst.dtype));
  tpu_bdc_fp_exp(local_address(dst), local_address(src), local_address(work0), local_address(work1),
                 local_address(coeff), &shape, kernel_dtype(dst.dtype));
}

void tiu_lane_broadcast(const char *name, const desc &dst, const desc &src, int lanes, const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  const int count = lanes > 0 ? lanes : dst.shape.c;
  if (src.shape.c != 1 || !same(dst.shape, dim4{src.shape.n, count, src.shape.h, src.shape.w}))
    refuse(name, where, fmt::format("src of shape {} must have one channel and dst of shape {} its shape with {} "
                                    "channels", text(src.shape), text(dst.shape), count));
  if (dst.lane + count > ppl::lane_num())
    refuse(name, where, fmt::format("{} channels from lane {} pass the last lane", count, dst.lane));
  require_aligned(name, "dst", dst, where);
  require_aligned(name, "src", src, where);
  if (plan_only({{&dst, tiu_engine}, {&src, tiu_engine}})) return;
  call_site_scope scope(where);
  const ::dim4 shape{dst.shape.n, count, dst.shape.h, dst.shape.w};
  tpu_bdc_npu_bcast(local_address(dst), local_address(src), &shape, kernel_dtype(dst.dtype));
}

void dma_move(const char *name, const desc &dst, const desc &src, const site &where) {
  require_same_shape(name, dst, src, where);
  if ((dst.mode == LOCAL) != (src.mode == LOCAL))
    refuse(name, where, "dma::move copies local to local or global to global; use load or store between them");
  if (dst.mode == L2 || src.mode == L2) refuse(name, where, "L2 tensors are not modelled on bm1684x/bm1688");
  if (plan_only({{&dst, dma_engine}, {&src, dma_engine}})) return;
  call_site_scope scope(where);
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
  if (dst.mode == LOCAL)
    tpu_gdma_cpy_L2L(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
  else
    tpu_gdma_cpy_S2S(dst.address, src.address, &shape, &ds, &ss, kernel_dtype(dst.dtype));
}

void tiu_int_binary(const char *name, binary op, const desc &dst, const desc &a, const desc &b, const int_mode &mode,
                    const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src0", a, where);
  require_local(name, "src1", b, where);
  check_shift(name, mode, where);
  const operand x = broadcast_to(name, a, dst, "src0", where), y = broadcast_to(name, b, dst, "src1", where);
  if (plan_only({{&dst, tiu_engine}, {&a, tiu_engine}, {&b, tiu_engine}})) return;
  call_site_scope scope(where);
  lane_broadcast(x, dst.shape.c);
  lane_broadcast(y, dst.shape.c);
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), as = kernel_dim4(x.d.stride),
               bs = kernel_dim4(y.d.stride);
  const uint32_t o = local_address(dst), p = local_address(x.d), q = local_address(y.d);
  const ::data_type_t t = kernel_dtype(dst.dtype), ta = kernel_dtype(a.dtype), tb = kernel_dtype(b.dtype);
  const char shift = static_cast<char>(-mode.shift);  // tpu-kernel's shift is a right shift
  const auto rm = static_cast<::rounding_mode_t>(mode.rounding);
  if (op == binary::add) tpu_bdc_int_add(o, p, q, &shape, &ds, &as, &bs, t, ta, tb, shift, rm, mode.saturation);
  if (op == binary::sub) tpu_bdc_int_sub(o, p, q, &shape, &ds, &as, &bs, t, ta, tb, shift, rm, mode.saturation);
  if (op == binary::mul) tpu_bdc_int_mul(o, p, q, &shape, &ds, &as, &bs, t, ta, tb, shift, rm, mode.saturation);
}

void tiu_int_binary_scalar(const char *name, binary op, const desc &dst, const desc &a, long long c,
                           bool scalar_first, const int_mode &mode, const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", a, where);
  check_shift(name, mode, where);
  const operand x = broadcast_to(name, a, dst, "src", where);
  if (plan_only({{&dst, tiu_engine}, {&a, tiu_engine}})) return;
  call_site_scope scope(where);
  lane_broadcast(x, dst.shape.c);
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), as = kernel_dim4(x.d.stride);
  const uint32_t o = local_address(dst), p = local_address(x.d);
  const ::data_type_t t = kernel_dtype(dst.dtype), ta = kernel_dtype(a.dtype);
  const scalar_t value = scalar_of(static_cast<double>(c), a.dtype);
  const char shift = static_cast<char>(-mode.shift);  // tpu-kernel's shift is a right shift
  const auto rm = static_cast<::rounding_mode_t>(mode.rounding);
  if (op == binary::add) tpu_bdc_int_add_C(o, p, value, &shape, &ds, &as, t, ta, ta, shift, rm, mode.saturation);
  if (op == binary::mul) tpu_bdc_int_mul_C(o, p, value, &shape, &ds, &as, t, ta, ta, shift, rm, mode.saturation);
  if (op == binary::sub && scalar_first)
    tpu_bdc_int_C_sub(o, p, value, &shape, &ds, &as, t, ta, ta, shift, rm, mode.saturation);
  if (op == binary::sub && !scalar_first)
    tpu_bdc_int_sub_C(o, p, value, &shape, &ds, &as, t, ta, ta, shift, rm, mode.saturation);
}

}  // namespace ppl::rt
