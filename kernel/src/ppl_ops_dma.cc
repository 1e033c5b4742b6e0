// ppl_ops_dma.cc: ppl::dma (and ppl::sdma, on the GDMA): copies between
// global and local memory, fills, transposes and channel broadcasts
// (spec §3.4-3.5).
#include <limits>

#include "ppl_ops_common.h"

namespace ppl::rt {

void dma_copy(const char *name, const desc &dst, const desc &src, const site &where) {
  require_same_shape(name, dst, src, where);
  if (dst.mode == L2 || src.mode == L2) refuse(name, where, "L2 tensors are not modelled on bm1684x/bm1688");
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
  if (dst.mode == L2) refuse(name, where, "L2 tensors are not modelled on bm1684x/bm1688");
  submit(where, {{&dst, dma_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride);
    const scalar_t c = scalar_of(value, dst.dtype);
    if (dst.mode == LOCAL)
      tpu_gdma_set_C_local(local_address(dst), c, &shape, &ds, kernel_dtype(dst.dtype));
    else
      tpu_gdma_set_C_system(dst.address, c, &shape, &ds, kernel_dtype(dst.dtype));
  });
}


void dma_move(const char *name, const desc &dst, const desc &src, const site &where) {
  require_same_shape(name, dst, src, where);
  if ((dst.mode == LOCAL) != (src.mode == LOCAL))
    refuse(name, where, "dma::move copies local to local or global to global; use load or store between them");
  if (dst.mode == L2 || src.mode == L2) refuse(name, where, "L2 tensors are not modelled on bm1684x/bm1688");
  submit(where, {{&dst, dma_engine}, {&src, dma_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    if (dst.mode == LOCAL)
      tpu_gdma_cpy_L2L(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
    else
      tpu_gdma_cpy_S2S(dst.address, src.address, &shape, &ds, &ss, kernel_dtype(dst.dtype));
  });
}


void dma_transpose(const char *name, transpose mode, const desc &dst, const desc &src, const site &where) {
  const dim4 expected = mode == transpose::nc ? dim4{src.shape.c, src.shape.n, src.shape.h, src.shape.w}
                                              : dim4{src.shape.n, src.shape.w, src.shape.h, src.shape.c};
  if (!same(dst.shape, expected))
    refuse(name, where, fmt::format("dst of shape {} must be {} ({} swapped in src {})", text(dst.shape),
                                    text(expected), mode == transpose::nc ? "N and C" : "C and W", text(src.shape)));
  if (dst.mode == L2 || src.mode == L2) refuse(name, where, "L2 tensors are not modelled on bm1684x/bm1688");
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
  require_local(name, "dst", dst, where);
  if (src.mode == L2) refuse(name, where, "L2 tensors are not modelled on bm1684x/bm1688");
  const int count = num > 0 ? num : dst.shape.c;
  if (src.shape.c != 1 || !same(dst.shape, dim4{src.shape.n, count, src.shape.h, src.shape.w}))
    refuse(name, where, fmt::format("src of shape {} must have one channel and dst of shape {} its shape with {} "
                                    "channels", text(src.shape), text(dst.shape), count));
  if (dst.lane + count > ppl::lane_num())
    refuse(name, where, fmt::format("{} channels from lane {} pass the last lane ({} lanes)", count, dst.lane,
                                    ppl::lane_num()));
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
  if (src.mode != GLOBAL) refuse(name, where, "src must be a global tensor");
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

}  // namespace ppl::rt
