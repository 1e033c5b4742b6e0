// ppl_ops_common.cc: the checks, type mapping and broadcasting the PPL
// operation families share, and the tensor model's strides and windows
// (spec §2.6).
#include <limits>

#include "ppl_ops_common.h"

namespace ppl::rt {

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

std::string text(const ppl::dim4 &d) { return fmt::format("[{}, {}, {}, {}]", d.n, d.c, d.h, d.w); }

bool same(const ppl::dim4 &a, const ppl::dim4 &b) { return a.n == b.n && a.c == b.c && a.h == b.h && a.w == b.w; }

bool is_float(ppl::data_type_t d) { return d == ppl::DT_FP32 || d == ppl::DT_FP16 || d == ppl::DT_BF16; }

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
  check_known(name, role, d, where);
  if (d.mode != LOCAL) refuse(name, where, fmt::format("{} must be a local tensor", role));
}

void require_same_shape(const char *name, const desc &a, const desc &b, const site &where) {
  check_known(name, "dst", a, where);
  check_known(name, "src", b, where);
  if (!same(a.shape, b.shape))
    refuse(name, where, fmt::format("shapes differ: {} and {}", text(a.shape), text(b.shape)));
}

operand broadcast_to(const char *name, const desc &src, const desc &dst, const char *role, const site &where) {
  check_known(name, "dst", dst, where);
  check_known(name, role, src, where);
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

void lane_broadcast(const operand &o, int channels) {
  const int lanes = ppl::lane_num(), reached = channels < lanes ? channels : lanes;
  if (!o.lane_broadcast || reached < 2) return;
  // The source's elements land at the same offsets in lanes 1 to reached - 1.
  const ::dim4 shape{o.source_shape.n, reached - 1, o.source_shape.h, o.source_shape.w};
  const uint32_t from = local_address(o.d), lane_bytes = current().lane_bytes;
  tpu_bdc_npu_bcast(from + lane_bytes, from, &shape, kernel_dtype(o.d.dtype));
}

void require_aligned(const char *name, const char *role, const desc &d, const site &where) {
  check_known(name, role, d, where);
  const dim4 aligned = local_strides(d.shape, TPU_ALIGN, d.element_size, d.lane);
  if (!same(d.stride, aligned))
    refuse(name, where, fmt::format("{} must have the aligned layout's strides {}, not {}", role, text(aligned),
                                    text(d.stride)));
}

void check_shift(const char *name, const int_mode &mode, const site &where) {
  if (mode.shift < -32 || mode.shift > 31) refuse(name, where, fmt::format("shift {} is outside [-32, 31]", mode.shift));
}

namespace {

bool widened(const int_mode &mode) { return mode.shift > 0 && mode.saturation; }

void shift_left_in_place(const desc &dst, int shift) {
  if (shift <= 0) return;
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride);
  const uint32_t o = local_address(dst);
  // A logical shift wraps (an arithmetic one saturates); to the left both
  // move the same bits. Its operands are read as unsigned.
  ::data_type_t t = ::DT_UINT32;
  if (dst.element_size == 2) t = ::DT_UINT16;
  if (dst.element_size == 1) t = ::DT_UINT8;
  tpu_bdc_logical_shift_C(o, o, static_cast<char>(shift), &shape, &ds, &ds, t, t, ::RM_HALF_UP);
}

bool is_unsigned(ppl::data_type_t d) { return d == ppl::DT_UINT8 || d == ppl::DT_UINT16 || d == ppl::DT_UINT32; }

}  // namespace

desc shift_target(const char *name, const desc &dst, const int_mode &mode, const site &where) {
  if (!widened(mode)) return dst;
  if (!mode.work) refuse(name, where, "a saturating left shift needs its work tensor (made by the PPL header)");
  const desc &w = *mode.work;
  require_local(name, "work", w, where);
  const ppl::data_type_t wide = is_unsigned(dst.dtype) ? ppl::DT_UINT32 : ppl::DT_INT32;
  if (!same(w.shape, dst.shape) || w.dtype != wide)
    refuse(name, where, fmt::format("the work tensor {} is not a 32-bit tensor of dst's shape {}", text(w.shape),
                                    text(dst.shape)));
  return w;
}

void finish_left_shift(const desc &dst, const desc &target, const int_mode &mode) {
  if (!widened(mode)) return shift_left_in_place(dst, mode.shift);
  const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ws = kernel_dim4(target.stride);
  tpu_bdc_arithmetic_shift_C(local_address(dst), local_address(target), static_cast<char>(mode.shift), &shape, &ds,
                             &ws, kernel_dtype(dst.dtype), kernel_dtype(target.dtype), ::RM_HALF_UP);
}

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

desc permuted(const desc &d, const int order[4], const site &where) {
  const int extents[4] = {d.shape.n, d.shape.c, d.shape.h, d.shape.w};
  const int strides[4] = {d.stride.n, d.stride.c, d.stride.h, d.stride.w};
  bool seen[4] = {false, false, false, false};
  for (int i = 0; i < 4; ++i) {
    if (order[i] < 0 || order[i] > 3 || seen[order[i]])
      refuse("make_gtensor_permute", where,
             fmt::format("order {{{}, {}, {}, {}}} is not a permutation of 0, 1, 2, 3", order[0], order[1], order[2],
                         order[3]));
    seen[order[i]] = true;
  }
  desc p = d;
  p.shape = dim4{extents[order[0]], extents[order[1]], extents[order[2]], extents[order[3]]};
  p.stride = dim4{strides[order[0]], strides[order[1]], strides[order[2]], strides[order[3]]};
  p.block = p.shape;
  return p;
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


void require_lane0_aligned(const char *name, std::initializer_list<std::pair<const char *, const desc *>> operands,
                           const site &where) {
  for (const auto &[role, d] : operands) {
    require_local(name, role, *d, where);
    require_aligned(name, role, *d, where);
    if (d->lane != 0) refuse(name, where, fmt::format("{} must start on lane 0, not {}", role, d->lane));
  }
}

dim2 window_output(const char *name, const dim4 &shape, const pool_window &window, const site &where) {
  const dim2 k = window.kernel, st = window.stride, dl = window.dilation;
  const padding_t p = window.padding;
  if (k.h < 1 || k.w < 1 || st.h < 1 || st.w < 1 || dl.h < 1 || dl.w < 1)
    refuse(name, where, "kernel, stride and dilation must be at least 1");
  if (p.top < 0 || p.bottom < 0 || p.left < 0 || p.right < 0) refuse(name, where, "padding must not be negative");
  const int span_h = (k.h - 1) * dl.h + 1, span_w = (k.w - 1) * dl.w + 1;
  const int padded_h = shape.h + p.top + p.bottom, padded_w = shape.w + p.left + p.right;
  if (span_h > padded_h || span_w > padded_w)
    refuse(name, where, fmt::format("the window spans {} x {} (kernel x dilation) but the padded input is {} x {}",
                                    span_h, span_w, padded_h, padded_w));
  return dim2{(padded_h - span_h) / st.h + 1, (padded_w - span_w) / st.w + 1};
}

int check_channel_broadcast(const char *name, const desc &dst, const desc &src, int num, const site &where) {
  require_local(name, "dst", dst, where);
  const int count = num > 0 ? num : dst.shape.c;
  if (src.shape.c != 1 || !same(dst.shape, dim4{src.shape.n, count, src.shape.h, src.shape.w}))
    refuse(name, where, fmt::format("src of shape {} must have one channel and dst of shape {} its shape with {} "
                                    "channels", text(src.shape), text(dst.shape), count));
  if (dst.lane + count > ppl::lane_num())
    refuse(name, where, fmt::format("{} channels from lane {} pass the last lane ({} lanes)", count, dst.lane,
                                    ppl::lane_num()));
  return count;
}

}  // namespace ppl::rt
