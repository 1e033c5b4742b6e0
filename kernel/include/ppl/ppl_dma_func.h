// ppl_dma_func.h: ppl::dma, the GDMA operations (spec §3.4), and ppl::sdma
// (run on the GDMA: these chips have no SDMA engine); part of ppl.h.
#pragma once

namespace ppl {
namespace dma {

template <typename T>
void load(const tensor<T> &dst, const gtensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::dma_copy("ppl::dma::load", dst.describe(), src.describe(), where);
}
template <typename T>
void store(const gtensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::dma_copy("ppl::dma::store", dst.describe(), src.describe(), where);
}
// Local to local or global to global.
template <typename Tensor>
void move(const Tensor &dst, const Tensor &src, const rt::site &where = rt::site::current()) {
  rt::dma_move("ppl::dma::move", dst.describe(), src.describe(), where);
}
// Local or global: the constant converted to the tensor's type.
template <typename Tensor>
void fill(const Tensor &dst, double value, const rt::site &where = rt::site::current()) {
  rt::dma_fill("ppl::dma::fill", dst.describe(), value, where);
}
template <typename Tensor>
void zero(const Tensor &dst, const rt::site &where = rt::site::current()) {
  rt::dma_fill("ppl::dma::zero", dst.describe(), 0.0, where);
}

// Transposes by the GDMA: NC swaps N and C, CW swaps C and W; between
// global and local memory or within either.
template <typename T>
void load_transpose_nc(const tensor<T> &dst, const gtensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::dma::load_transpose_nc", rt::transpose::nc, dst.describe(), src.describe(), where);
}
template <typename T>
void store_transpose_nc(const gtensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::dma::store_transpose_nc", rt::transpose::nc, dst.describe(), src.describe(), where);
}
template <typename T>
void load_transpose_cw(const tensor<T> &dst, const gtensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::dma::load_transpose_cw", rt::transpose::cw, dst.describe(), src.describe(), where);
}
template <typename T>
void store_transpose_cw(const gtensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::dma::store_transpose_cw", rt::transpose::cw, dst.describe(), src.describe(), where);
}
template <typename Dst, typename Src>
void load_transpose(const Dst &dst, const Src &src, transpose_mode_t mode, const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::dma::load_transpose", mode == NC_TRANS ? rt::transpose::nc : rt::transpose::cw,
                    dst.describe(), src.describe(), where);
}
template <typename Dst, typename Src>
void store_transpose(const Dst &dst, const Src &src, transpose_mode_t mode,
                     const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::dma::store_transpose", mode == NC_TRANS ? rt::transpose::nc : rt::transpose::cw,
                    dst.describe(), src.describe(), where);
}
// Within global memory or within local memory.
template <typename Tensor>
void transpose_cw(const Tensor &dst, const Tensor &src, const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::dma::transpose_cw", rt::transpose::cw, dst.describe(), src.describe(), where);
}
template <typename Tensor>
void transpose_nc(const Tensor &dst, const Tensor &src, const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::dma::transpose_nc", rt::transpose::nc, dst.describe(), src.describe(), where);
}
template <typename Tensor>
void transpose(const Tensor &dst, const Tensor &src, transpose_mode_t mode, const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::dma::transpose", mode == NC_TRANS ? rt::transpose::nc : rt::transpose::cw, dst.describe(),
                    src.describe(), where);
}
// src [n, 1, h, w] replicated over `num` (or dst's C) channels of dst.
template <typename T>
void load_broadcast(const tensor<T> &dst, const gtensor<T> &src, int num = 0,
                    const rt::site &where = rt::site::current()) {
  rt::dma_channel_broadcast("ppl::dma::load_broadcast", dst.describe(), src.describe(), num, where);
}
template <typename T>
void broadcast(const tensor<T> &dst, const tensor<T> &src, int num = 0, const rt::site &where = rt::site::current()) {
  rt::dma_channel_broadcast("ppl::dma::broadcast", dst.describe(), src.describe(), num, where);
}
// A continuous global tensor into a compact local one.
template <typename T>
void load_compact(const tensor<T> &dst, const gtensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::dma_load_compact("ppl::dma::load_compact", dst.describe(), src.describe(), where);
}
// L2 dst combined with src by `op` (ALL_REDUCE_PSUM_WR) or overwritten
// (ALL_REDUCE_PSUM_WO); src local, global or L2. Cores' reductions into one
// L2 tensor combine in any order.
template <typename Src, typename T>
void reduce(const gtensor<T> &dst, const Src &src, all_reduce_psum_t psum, all_reduce_opcode_t op, float = 0,
            const rt::site &where = rt::site::current()) {
  rt::dma_reduce("ppl::dma::reduce", dst.describe(), src.describe(), psum, op, where);
}
// Rows gathered along H by a uint32 index [n, c, h, 1]; C where the row
// number (less index_start_pos) is outside param. dst, param and index each
// local or global.
template <typename Dst, typename Param, typename Index>
void gather_h(const Dst &dst, const Param &param, const Index &index, double C, int index_start_pos = 0,
              const rt::site &where = rt::site::current()) {
  rt::dma_gather_h("ppl::dma::gather_h", dst.describe(), param.describe(), index.describe(), C, index_start_pos,
                   where);
}
// Rows scattered along H: param row h goes to dst row index(h) - start_pos
// (added to it when inplace_add; start_pos and inplace_add need global dst
// and param).
template <typename Dst, typename Param, typename Index>
void scatter_h(const Dst &dst, const Param &param, const Index &index, int start_pos = 0, int inplace_add = 0,
               const rt::site &where = rt::site::current()) {
  rt::dma_scatter_h("ppl::dma::scatter_h", dst.describe(), param.describe(), index.describe(), start_pos,
                    inplace_add != 0, where);
}
// The flat indices (+ base_idx) of src's non-zero elements, as uint32, into
// dst; returns their count (the command runs at once: the kernel may act on
// the count).
template <typename Src>
unsigned nonzero(const gtensor<uint32> &dst, const Src &src, int base_idx = 0,
                 const rt::site &where = rt::site::current()) {
  return rt::dma_nonzero("ppl::dma::nonzero", dst.describe(), src.describe(), static_cast<unsigned>(base_idx), where);
}
inline void send_msg(int id, int wait_count, const rt::site &where = rt::site::current()) {
  rt::send_message(rt::message_engine::dma, id, wait_count, where);
}
inline void wait_msg(int id, int send_count, const rt::site &where = rt::site::current()) {
  rt::wait_message(rt::message_engine::dma, id, send_count, where);
}

}  // namespace dma

// The system DMA: bm1684x and bm1688 have none, so these run on the GDMA
// (spec §3.5); `port` is accepted and has no effect.
namespace sdma {

template <typename T>
void move(const gtensor<T> &dst, const gtensor<T> &src, int = -1, const rt::site &where = rt::site::current()) {
  rt::dma_move("ppl::sdma::move", dst.describe(), src.describe(), where);
}
template <typename T>
void fill(const gtensor<T> &dst, double value, int = -1, const rt::site &where = rt::site::current()) {
  rt::dma_fill("ppl::sdma::fill", dst.describe(), value, where);
}
template <typename T>
void zero(const gtensor<T> &dst, int = -1, const rt::site &where = rt::site::current()) {
  rt::dma_fill("ppl::sdma::zero", dst.describe(), 0.0, where);
}
template <typename T>
void transpose_cw(const gtensor<T> &dst, const gtensor<T> &src, int = -1,
                  const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::sdma::transpose_cw", rt::transpose::cw, dst.describe(), src.describe(), where);
}
template <typename T>
void transpose_nc(const gtensor<T> &dst, const gtensor<T> &src, int = -1,
                  const rt::site &where = rt::site::current()) {
  rt::dma_transpose("ppl::sdma::transpose_nc", rt::transpose::nc, dst.describe(), src.describe(), where);
}

template <typename T, typename Index>
void gather_h(const gtensor<T> &dst, const gtensor<T> &param, const Index &index, double C, int = -1,
              const rt::site &where = rt::site::current()) {
  rt::dma_gather_h("ppl::sdma::gather_h", dst.describe(), param.describe(), index.describe(), C, 0, where);
}
template <typename T, typename Index>
void scatter_h(const gtensor<T> &dst, const gtensor<T> &param, const Index &index, int = -1,
               const rt::site &where = rt::site::current()) {
  rt::dma_scatter_h("ppl::sdma::scatter_h", dst.describe(), param.describe(), index.describe(), 0, false, where);
}

}  // namespace sdma

}  // namespace ppl
