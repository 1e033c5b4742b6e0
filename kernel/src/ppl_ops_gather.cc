// ppl_ops_gather.cc: the PPL gathers and scatters inside local memory
// (spec §3.8): along W (gather_w, scatter_w), along H (gather_h, scatter_h)
// and by (h, w) pairs (gather_hw, scatter_hw), each one tpu-kernel command
// (docs/bdc.md, "Gather and scatter inside local memory"; docs/ppl.md,
// "Gathers and scatters").
#include "ppl_ops_common.h"

namespace ppl::rt {
namespace {

// The index of gather_hw: lane 0, aligned, 16-bit [n, 1, 1, 2w] or 32-bit
// [n, 1, 1, w] (the same bytes: pairs of 16-bit values).
void check_pair_index(const char *name, const desc &index, const dim4 &dst, const site &where) {
  require_local(name, "index", index, where);
  require_aligned(name, "index", index, where);
  if (index.lane != 0)
    refuse(name, where, fmt::format("index starts on lane {}; the (h, w) pairs are one vector on lane 0, shared "
                                    "by every channel", index.lane));
  const bool wide = index.element_size == 4 && !is_float(index.dtype);
  const dim4 expected{dst.n, 1, 1, wide ? dst.w : 2 * dst.w};
  if ((!wide && index.element_size != 2) || is_float(index.dtype) || !same(index.shape, expected))
    refuse(name, where, fmt::format("index ({}{}-bit, shape {}) must be a 16-bit integer tensor [{}, 1, 1, {}] "
                                    "(h, w, h, w, ...) or a 32-bit one [{}, 1, 1, {}] (h low, w high)",
                                    is_float(index.dtype) ? "float, " : "", 8 * index.element_size,
                                    text(index.shape), dst.n, 2 * dst.w, dst.n, dst.w));
}


// Every operand local and aligned, from one lane (the commands read the
// index from the output's lane), param of dst's type, an 8- or 16-bit
// integer index (the commands take no 32-bit index).
void check_lane_gather(const char *name, const desc &dst, const desc &param, const desc &index, const site &where) {
  for (const auto &[role, d] : {std::pair{"dst", &dst}, std::pair{"param", &param}, std::pair{"index", &index}}) {
    require_local(name, role, *d, where);
    require_aligned(name, role, *d, where);
  }
  if (param.dtype != dst.dtype) refuse(name, where, "param and dst must be of one type");
  if (is_float(index.dtype) || index.element_size > 2)
    refuse(name, where, fmt::format("index must be an 8- or 16-bit integer tensor, not {}-bit{} (the command takes "
                                    "no 32-bit index)", 8 * index.element_size, is_float(index.dtype) ? " float" : ""));
  if (param.lane != dst.lane || index.lane != dst.lane)
    refuse(name, where, fmt::format("dst, param and index start on lanes {}, {} and {}; they must start on one lane",
                                    dst.lane, param.lane, index.lane));
}

// param's shape for a dst-shaped operation: its C is 1 when repeated.
void check_param(const char *name, const desc &param, const dim4 &expected, bool repeated, const site &where) {
  const dim4 want{expected.n, repeated ? 1 : expected.c, expected.h, expected.w};
  if (!same(param.shape, want))
    refuse(name, where, fmt::format("param of shape {} must be {}{}", text(param.shape), text(want),
                                    repeated ? " (param_repeated: one channel, present in every lane)" : ""));
}

void check_index_shape(const char *name, const desc &index, const dim4 &expected, const site &where) {
  if (!same(index.shape, expected))
    refuse(name, where, fmt::format("index of shape {} must be {}", text(index.shape), text(expected)));
}

}  // namespace

void tiu_gather(const char *name, gather_axis axis, const desc &dst_in, const desc &param, const desc &index,
                const gather_fill &fill, bool repeated, const site &where) {
  check_known(name, "index", index, where);
  check_known(name, "param", param, where);
  const dim4 i = index.shape;
  // W: dst is the index's shape; H: the index's rows of param's W.
  const desc dst = written(name, dst_in, axis == gather_axis::w ? i : dim4{i.n, i.c, i.h, param.shape.w}, where);
  check_lane_gather(name, dst, param, index, where);
  const dim4 d = dst.shape;
  if (axis == gather_axis::w) {
    check_index_shape(name, index, d, where);
    check_param(name, param, dim4{d.n, d.c, d.h, param.shape.w}, repeated, where);
  } else {
    check_index_shape(name, index, dim4{d.n, d.c, d.h, 1}, where);
    check_param(name, param, dim4{d.n, d.c, param.shape.h, d.w}, repeated, where);
  }
  submit(where, {{&dst, tiu_engine}, {&param, tiu_engine}, {&index, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape);
    const uint32_t o = local_address(dst), p = local_address(param), x = local_address(index);
    const ::data_type_t t = kernel_dtype(dst.dtype), ti = kernel_dtype(index.dtype);
    const scalar_t c = scalar_of(fill.value, dst.dtype);
    const int pw = param.shape.w, ph = param.shape.h;
    if (axis == gather_axis::h && fill.exception)
      return tpu_bdc_batch_bcast_h_gather_exception(o, p, x, c, &shape, ph, t, ti, repeated, fill.fill_const);
    if (axis == gather_axis::h) return tpu_bdc_batch_bcast_h_gather(o, p, x, &shape, ph, t, ti, repeated);
    if (repeated && fill.exception)
      return tpu_bdc_batch_bcast_w_gather_exception(o, p, x, c, &shape, pw, t, ti, true, fill.fill_const);
    if (repeated) return tpu_bdc_batch_bcast_w_gather(o, p, x, &shape, pw, t, ti, true);
    if (fill.exception) return tpu_bdc_w_gather_exception(o, p, x, c, &shape, pw, t, ti, fill.fill_const);
    tpu_bdc_w_gather(o, p, x, &shape, pw, t, ti);
  });
}

void tiu_scatter_h(const char *name, const desc &dst, const desc &param, const desc &index, bool repeated,
                   const site &where) {
  check_lane_gather(name, dst, param, index, where);
  const dim4 d = dst.shape, p = param.shape;
  check_param(name, param, dim4{d.n, d.c, p.h, d.w}, repeated, where);
  check_index_shape(name, index, dim4{d.n, d.c, p.h, 1}, where);
  submit(where, {{&dst, tiu_engine}, {&param, tiu_engine}, {&index, tiu_engine}}, [=] {
    const ::dim4 shape{d.n, d.c, p.h, d.w};
    tpu_bdc_batch_bcast_h_scatter(local_address(dst), local_address(param), local_address(index), &shape, d.h,
                                  kernel_dtype(dst.dtype), kernel_dtype(index.dtype), repeated);
  });
}

void tiu_scatter_w(const char *name, const desc &dst, const desc &param, const desc &index, bool repeated,
                   const site &where) {
  for (const auto &[role, d] : {std::pair{"dst", &dst}, std::pair{"param", &param}, std::pair{"index", &index}}) {
    require_local(name, role, *d, where);
    require_aligned(name, role, *d, where);
  }
  const dim4 p = param.shape, expected_dst{p.n, repeated ? dst.shape.c : p.c, p.h, dst.shape.w};
  if (!same(dst.shape, expected_dst) || (repeated && p.c != 1))
    refuse(name, where, fmt::format("dst of shape {} must be param's ({}) with its own W{}", text(dst.shape), text(p),
                                    repeated ? ", param one channel" : ""));
  if (!same(index.shape, dim4{p.n, dst.shape.c, p.h, p.w}))
    refuse(name, where, fmt::format("index of shape {} must be [{}, {}, {}, {}]", text(index.shape), p.n,
                                    dst.shape.c, p.h, p.w));
  if (index.dtype != ppl::DT_UINT16 && index.dtype != ppl::DT_INT16 && index.dtype != ppl::DT_UINT8 &&
      index.dtype != ppl::DT_INT8)
    refuse(name, where, "index must be a 16- or 8-bit integer tensor (the scatter command takes no 32-bit index)");
  if (param.dtype != dst.dtype) refuse(name, where, "param and dst must be of one type");
  submit(where, {{&dst, tiu_engine}, {&param, tiu_engine}, {&index, tiu_engine}}, [=] {
    const ::dim4 shape{p.n, dst.shape.c, p.h, p.w};
    if (repeated)
      tpu_bdc_batch_bcast_w_scatter(local_address(dst), local_address(param), local_address(index), &shape,
                                    dst.shape.w, kernel_dtype(dst.dtype), kernel_dtype(index.dtype), true);
    else
      tpu_bdc_w_scatter(local_address(dst), local_address(param), local_address(index), &shape, dst.shape.w,
                        kernel_dtype(dst.dtype), kernel_dtype(index.dtype));
  });
}

void tiu_gather_hw(const char *name, const desc &dst, const desc &param, const desc &index, const gather_fill &fill,
                   const site &where) {
  for (const auto &[role, d] : {std::pair{"dst", &dst}, std::pair{"param", &param}}) {
    require_local(name, role, *d, where);
    require_aligned(name, role, *d, where);
  }
  if (dst.shape.h != 1 || dst.shape.n != param.shape.n || dst.shape.c != param.shape.c)
    refuse(name, where, fmt::format("dst of shape {} must be [{}, {}, 1, W]: param's N and C, one row", text(dst.shape),
                                    param.shape.n, param.shape.c));
  if (dst.dtype != param.dtype) refuse(name, where, "param and dst must be of one type");
  if (dst.lane != param.lane)
    refuse(name, where, fmt::format("dst starts on lane {} but param on lane {}; they must start on one lane",
                                    dst.lane, param.lane));
  check_pair_index(name, index, dst.shape, where);
  submit(where, {{&dst, tiu_engine}, {&param, tiu_engine}, {&index, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape);
    const ::data_type_t t = kernel_dtype(dst.dtype);
    if (fill.exception)
      tpu_bdc_hw_gather_exception(local_address(dst), local_address(param), local_address(index),
                                  scalar_of(fill.value, dst.dtype), &shape, param.shape.h, param.shape.w, t,
                                  fill.fill_const);
    else
      tpu_bdc_hw_gather(local_address(dst), local_address(param), local_address(index), &shape, param.shape.h,
                        param.shape.w, t);
  });
}

void tiu_scatter_hw(const char *name, const desc &dst, const desc &param, const desc &index, const site &where) {
  for (const auto &[role, d] : {std::pair{"dst", &dst}, std::pair{"param", &param}}) {
    require_local(name, role, *d, where);
    require_aligned(name, role, *d, where);
  }
  const dim4 p = param.shape;
  if (p.h != 1 || p.n != dst.shape.n || p.c != dst.shape.c)
    refuse(name, where, fmt::format("param of shape {} must be [{}, {}, 1, W]: dst's N and C, one row", text(p),
                                    dst.shape.n, dst.shape.c));
  if (dst.dtype != param.dtype) refuse(name, where, "param and dst must be of one type");
  if (dst.lane != param.lane)
    refuse(name, where, fmt::format("dst starts on lane {} but param on lane {}; they must start on one lane",
                                    dst.lane, param.lane));
  check_pair_index(name, index, p, where);
  submit(where, {{&dst, tiu_engine}, {&param, tiu_engine}, {&index, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(p);
    tpu_bdc_hw_scatter(local_address(dst), local_address(param), local_address(index), &shape, dst.shape.h,
                       dst.shape.w, kernel_dtype(dst.dtype));
  });
}

}  // namespace ppl::rt
