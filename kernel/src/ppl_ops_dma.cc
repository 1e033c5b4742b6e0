// ppl_ops_dma.cc: ppl::dma (and ppl::sdma, on the GDMA): copies between
// global and local memory, fills, transposes and channel broadcasts
// (spec §3.4-3.5).
#include <limits>

#include "ppl_ops_common.h"

namespace ppl::rt {

void dma_copy(const char *name, const desc &dst_in, const desc &src, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &src}}, where), where);
  require_same_shape(name, dst, src, where);
  if ((dst.mode == LOCAL) == (src.mode == LOCAL))
    refuse(name, where, "one side must be a local tensor, the other a global one");
  submit(where, {{&dst, dma_engine}, {&src, dma_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    if (dst.mode == LOCAL)
      tpu_gdma_cpy_S2L(local_address(dst), src.address, &shape, &ds, &ss, kernel_dtype(dst.dtype));
    else
      tpu_gdma_cpy_L2S(dst.address, local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
  });
}


void dma_fill(const char *name, const desc &dst, double value, const site &where) {
  check_known(name, "dst", dst, where);
  submit(where, {{&dst, dma_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride);
    const scalar_t c = scalar_of(value, dst.dtype);
    if (dst.mode == LOCAL)
      tpu_gdma_set_C_local(local_address(dst), c, &shape, &ds, kernel_dtype(dst.dtype));
    else
      tpu_gdma_set_C_system(dst.address, c, &shape, &ds, kernel_dtype(dst.dtype));
  });
}


void dma_move(const char *name, const desc &dst_in, const desc &src, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &src}}, where), where);
  require_same_shape(name, dst, src, where);
  if ((dst.mode == LOCAL) != (src.mode == LOCAL))
    refuse(name, where, "dma::move copies local to local or global to global; use load or store between them");
  submit(where, {{&dst, dma_engine}, {&src, dma_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    if (dst.mode == LOCAL)
      tpu_gdma_cpy_L2L(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
    else
      tpu_gdma_cpy_S2S(dst.address, src.address, &shape, &ds, &ss, kernel_dtype(dst.dtype));
  });
}


void dma_transpose(const char *name, transpose mode, const desc &dst_in, const desc &src, const site &where) {
  check_known(name, "src", src, where);
  const dim4 expected = mode == transpose::nc ? dim4{src.shape.c, src.shape.n, src.shape.h, src.shape.w}
                                              : dim4{src.shape.n, src.shape.w, src.shape.h, src.shape.c};
  const desc dst = written(name, dst_in, expected, where);
  if (!same(dst.shape, expected))
    refuse(name, where, fmt::format("dst of shape {} must be {} ({} swapped in src {})", text(dst.shape),
                                    text(expected), mode == transpose::nc ? "N and C" : "C and W", text(src.shape)));
  submit(where, {{&dst, dma_engine}, {&src, dma_engine}}, [=] {
    // tpu-kernel takes the destination's shape.
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    const ::data_type_t t = kernel_dtype(dst.dtype);
    const bool to_local = dst.mode == LOCAL, from_local = src.mode == LOCAL;
    const uint64_t o = to_local ? local_address(dst) : dst.address, i = from_local ? local_address(src) : src.address;
    if (mode == transpose::nc) {
      if (to_local && from_local) return tpu_gdma_cpy_nc_trans_L2L(uint32_t(o), uint32_t(i), &shape, &ds, &ss, t);
      if (to_local) return tpu_gdma_cpy_nc_trans_S2L(uint32_t(o), i, &shape, &ds, &ss, t);
      if (from_local) return tpu_gdma_cpy_nc_trans_L2S(o, uint32_t(i), &shape, &ds, &ss, t);
      return tpu_gdma_cpy_nc_trans_S2S(o, i, &shape, &ds, &ss, t);
    }
    if (to_local && from_local) return tpu_gdma_cpy_cw_trans_L2L(uint32_t(o), uint32_t(i), &shape, &ds, &ss, t);
    if (to_local) return tpu_gdma_cpy_cw_trans_S2L(uint32_t(o), i, &shape, &ds, &ss, t);
    if (from_local) return tpu_gdma_cpy_cw_trans_L2S(o, uint32_t(i), &shape, &ds, &ss, t);
    return tpu_gdma_cpy_cw_trans_S2S(o, i, &shape, &ds, &ss, t);
  });
}

void dma_channel_broadcast(const char *name, const desc &dst, const desc &src, int num, const site &where) {
  check_channel_broadcast(name, dst, src, num, where);
  submit(where, {{&dst, dma_engine}, {&src, dma_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    if (src.mode == LOCAL)
      tpu_gdma_channel_bcast_L2L(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
    else
      tpu_gdma_channel_bcast_S2L(local_address(dst), src.address, &shape, &ds, &ss, kernel_dtype(dst.dtype));
  });
}

void dma_load_compact(const char *name, const desc &dst, const desc &src, const site &where) {
  require_local(name, "dst", dst, where);
  require_same_shape(name, dst, src, where);
  if (src.mode == LOCAL) refuse(name, where, "src must be a global or L2 tensor");
  if (!same(src.stride, continuous_strides(src.shape)))
    refuse(name, where, fmt::format("src must be continuous (strides {}, not {})", text(continuous_strides(src.shape)),
                                    text(src.stride)));
  const dim4 compact = local_strides(dst.shape, TPU_COMPACT, dst.element_size, dst.lane);
  if (!same(dst.stride, compact))
    refuse(name, where, fmt::format("dst must have the compact layout's strides {}, not {}", text(compact),
                                    text(dst.stride)));
  submit(where, {{&dst, dma_engine}, {&src, dma_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape);
    tpu_gdma_compact_S2L(local_address(dst), src.address, &shape, kernel_dtype(dst.dtype));
  });
}

void dma_reduce(const char *name, const desc &dst, const desc &src, all_reduce_psum_t psum, all_reduce_opcode_t op,
                const site &where) {
  require_same_shape(name, dst, src, where);
  if (dst.mode != L2) refuse(name, where, "dst must be an L2 tensor (the reducing copies write L2 SRAM)");
  if (op > ALL_REDUCE_ADD)
    refuse(name, where, fmt::format("reduction opcode {} is not one of NOP, MUL, MAX, MIN, ADD (the GDMA's)",
                                    static_cast<int>(op)));
  if (psum != ALL_REDUCE_PSUM_WO && psum != ALL_REDUCE_PSUM_WR)
    refuse(name, where, fmt::format("psum mode {} is neither ALL_REDUCE_PSUM_WO nor _WR", static_cast<int>(psum)));
  submit(where, {{&dst, dma_engine}, {&src, dma_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    const ::data_type_t t = kernel_dtype(dst.dtype);
    if (src.mode == LOCAL)
      tpu_gdma_cpy_reduce_L12L2(dst.address, local_address(src), &shape, &ds, &ss, t, psum, op);
    else if (src.mode == L2)
      tpu_gdma_cpy_reduce_L22L2(dst.address, src.address, &shape, &ds, &ss, t, psum, op);
    else
      tpu_gdma_cpy_reduce_S2L2(dst.address, src.address, &shape, &ds, &ss, t, psum, op);
  });
}

namespace {

// The operands of a row gather or scatter: every one local or system
// (global or L2), with its strides.
struct row_operands {
  uint64_t dst, param, index;
  ::dim4 dst_stride, param_stride, index_stride;
};

uint64_t address_of(const desc &d) { return d.mode == LOCAL ? local_address(d) : d.address; }

row_operands row_operands_of(const desc &dst, const desc &param, const desc &index) {
  return {address_of(dst),          address_of(param),          address_of(index),
          kernel_dim4(dst.stride), kernel_dim4(param.stride), kernel_dim4(index.stride)};
}

void check_row_index(const char *name, const desc &index, const dim4 &expected, const site &where) {
  if (index.dtype != ppl::DT_UINT32) refuse(name, where, "index must be a uint32 tensor");
  if (!same(index.shape, expected))
    refuse(name, where, fmt::format("index of shape {} must be {}", text(index.shape), text(expected)));
}

}  // namespace

void dma_gather_h(const char *name, const desc &dst, const desc &param, const desc &index, double fill, int start_pos,
                  const site &where) {
  const dim4 s = dst.shape;
  if (param.shape.n != s.n || param.shape.c != s.c || param.shape.w != s.w || param.dtype != dst.dtype)
    refuse(name, where, fmt::format("param of shape {} must have dst's ({}) N, C, W and type", text(param.shape),
                                    text(s)));
  check_row_index(name, index, dim4{s.n, s.c, s.h, 1}, where);
  const bool system = dst.mode != LOCAL && param.mode != LOCAL;
  if (start_pos < 0 || (start_pos != 0 && !system))
    refuse(name, where, fmt::format("index_start_pos {} needs global dst and param (and is not negative)", start_pos));
  submit(where, {{&dst, dma_engine}, {&param, dma_engine}, {&index, dma_engine}}, [=] {
    const row_operands o = row_operands_of(dst, param, index);
    const ::dim4 shape = kernel_dim4(s);
    const bool local_index = index.mode == LOCAL;
    const scalar_t c = scalar_of(fill, dst.dtype);
    const ::data_type_t t = kernel_dtype(dst.dtype);
    const int h = param.shape.h;
    if (system)
      return tpu_gdma_h_gather_S2S_ext(o.dst, o.param, o.index, local_index, c, &shape, h, uint32_t(start_pos),
                                       &o.dst_stride, &o.param_stride, &o.index_stride, t);
    if (dst.mode == LOCAL && param.mode == LOCAL)
      return tpu_gdma_h_gather_L2L(uint32_t(o.dst), uint32_t(o.param), o.index, local_index, c, &shape, h,
                                   &o.dst_stride, &o.param_stride, &o.index_stride, t);
    if (dst.mode == LOCAL)
      return tpu_gdma_h_gather_S2L(uint32_t(o.dst), o.param, o.index, local_index, c, &shape, h, &o.dst_stride,
                                   &o.param_stride, &o.index_stride, t);
    tpu_gdma_h_gather_L2S(o.dst, uint32_t(o.param), o.index, local_index, c, &shape, h, &o.dst_stride,
                          &o.param_stride, &o.index_stride, t);
  });
}

void dma_scatter_h(const char *name, const desc &dst, const desc &param, const desc &index, int start_pos, bool add,
                   const site &where) {
  const dim4 s = dst.shape, p = param.shape;
  if (p.n != s.n || p.c != s.c || p.w != s.w || param.dtype != dst.dtype)
    refuse(name, where, fmt::format("param of shape {} must have dst's ({}) N, C, W and type", text(p), text(s)));
  check_row_index(name, index, dim4{p.n, p.c, p.h, 1}, where);
  const bool system = dst.mode != LOCAL && param.mode != LOCAL;
  if (start_pos < 0 || ((start_pos != 0 || add) && !system))
    refuse(name, where, fmt::format("start_pos {} or inplace_add needs global dst and param", start_pos));
  submit(where, {{&dst, dma_engine}, {&param, dma_engine}, {&index, dma_engine}}, [=] {
    const row_operands o = row_operands_of(dst, param, index);
    const ::dim4 shape = kernel_dim4(s);
    const bool local_index = index.mode == LOCAL;
    const ::data_type_t t = kernel_dtype(dst.dtype);
    if (system)
      return tpu_gdma_h_scatter_S2S_ext(o.dst, o.param, o.index, local_index, &shape, p.h, uint32_t(start_pos), add,
                                        &o.dst_stride, &o.param_stride, &o.index_stride, t);
    if (dst.mode == LOCAL && param.mode == LOCAL)
      return tpu_gdma_h_scatter_L2L(uint32_t(o.dst), uint32_t(o.param), o.index, local_index, &shape, p.h,
                                    &o.dst_stride, &o.param_stride, &o.index_stride, t);
    if (dst.mode == LOCAL)
      return tpu_gdma_h_scatter_S2L(uint32_t(o.dst), o.param, o.index, local_index, &shape, p.h, &o.dst_stride,
                                    &o.param_stride, &o.index_stride, t);
    tpu_gdma_h_scatter_L2S(o.dst, uint32_t(o.param), o.index, local_index, &shape, p.h, &o.dst_stride,
                           &o.param_stride, &o.index_stride, t);
  });
}

unsigned dma_nonzero(const char *name, const desc &dst, const desc &src, unsigned base, const site &where) {
  if (dst.mode == LOCAL || dst.dtype != ppl::DT_UINT32) refuse(name, where, "dst must be a global uint32 tensor");
  const uint64_t elements = uint64_t(src.shape.n) * src.shape.c * src.shape.h * src.shape.w;
  const uint64_t room = uint64_t(dst.shape.n) * dst.shape.c * dst.shape.h * dst.shape.w;
  if (room < elements)
    refuse(name, where, fmt::format("dst holds {} indices, fewer than src's {} elements", room, elements));
  state &st = current();
  // The count steers the kernel: the command runs at once, never queued.
  if (st.mode == pass::plan) end_loop(st);
  unsigned count = static_cast<unsigned>(elements);
  submit(where, {{&dst, dma_engine}, {&src, dma_engine}}, [&] {
    const ::dim4 shape = kernel_dim4(src.shape);
    if (src.mode == LOCAL)
      tpu_gdma_nonzero_L2S(dst.address, local_address(src), &shape, kernel_dtype(src.dtype), base);
    else
      tpu_gdma_nonzero_S2S(dst.address, src.address, &shape, kernel_dtype(src.dtype), base);
    count = tpu_gdma_get_filter_num();
  });
  return count;
}

}  // namespace ppl::rt
