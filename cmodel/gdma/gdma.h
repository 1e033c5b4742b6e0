// gdma.h: the GDMA engine: tensor moves between system memory (DDR, L2
// SRAM) and local memory.
//
// Each function checks its command (shape limits, the GDMA w-stride limit,
// dtype, every operand inside valid memory), moves the data, and books the
// transfer on the GDMA timeline. `api` is the tpu_* name counted in the
// run statistics. Families: copy.cc (plain, general, broadcast, flat),
// transpose.cc (nc, cw, reverse), matrix.cc (matrix and vector layouts),
// fill.cc (constants), system.cc (flat fills and
// broadcasts, reducing copies into L2 SRAM, mask select and nonzero).
#pragma once

#include <cstdint>

#include "cmodel/context.h"
#include "cmodel/tensor.h"

namespace cmodel::gdma {

// One end of a transfer as the kernel named it; a null stride means the
// default layout (aligned local, continuous system).
struct Endpoint {
  Space space;
  uint64_t addr;
  const dim4 *stride = nullptr;
};
inline Endpoint local(local_addr_t addr, const dim4 *stride = nullptr) { return {Space::local, addr, stride}; }
inline Endpoint system(uint64_t addr, const dim4 *stride = nullptr) { return {Space::system, addr, stride}; }

// dst(n,c,h,w) = src(n,c,h,w).
void copy(Context &ctx, const char *api, Endpoint dst, Endpoint src, const dim4 &shape, data_type_t dtype);
// Same element count, element order row-major over n, c, h, w.
void general_copy(Context &ctx, const char *api, Endpoint dst, Endpoint src, const dim4 &dst_shape,
                  const dim4 &src_shape, data_type_t dtype);
// dst(n,c,h,w) = src(n,0,h,w): a one-channel source repeated over shape.c channels.
void channel_broadcast(Context &ctx, const char *api, Endpoint dst, Endpoint src, const dim4 &shape,
                       data_type_t dtype);
// A flat copy of `count` elements between system addresses.
void flat_copy(Context &ctx, const char *api, uint64_t dst, uint64_t src, uint64_t count, data_type_t dtype);

// dst(n,c,h,w) = src(c,n,h,w); src has shape (C, N, H, W).
void nc_transpose(Context &ctx, const char *api, Endpoint dst, Endpoint src, const dim4 &dst_shape,
                  data_type_t dtype);
// dst(n,c,h,w) = src(n,w,h,c); src has shape (N, W, H, C).
void cw_transpose(Context &ctx, const char *api, Endpoint dst, Endpoint src, const dim4 &dst_shape,
                  data_type_t dtype);
// dst = src with the order along `axis` (0..3 = n, c, h, w) reversed.
void reverse(Context &ctx, const char *api, Endpoint dst, Endpoint src, const dim4 &shape, int axis,
             data_type_t dtype);

// A row-major system matrix [rows, cols] (row_stride elements apart) and a
// local matrix in layout (rows, DIV_UP(cols, cols_per_channel), 1,
// cols_per_channel). `to_local` picks the direction.
struct MatrixMove {
  local_addr_t local_addr;
  uint64_t system_addr;
  int rows, cols, cols_per_channel, row_stride;
  bool to_local;
  // The local matrix holds the transpose of the system one: the system
  // matrix is [cols, rows] and the local one [rows, cols].
  bool transpose = false;
};
void matrix(Context &ctx, const char *api, const MatrixMove &move, data_type_t dtype);

// Every element of dst = the low dtype bits of `value`.
void fill(Context &ctx, const char *api, Endpoint dst, uint32_t value, const dim4 &shape, data_type_t dtype);

// ---- flat system commands and reductions (system.cc) -------------------------
// `count` elements at system address dst = the low dtype bits of `value`.
void flat_fill(Context &ctx, const char *api, uint64_t dst, uint32_t value, uint64_t count, data_type_t dtype);
// `channels` consecutive copies of the `count` elements at src, from dst on.
void flat_broadcast(Context &ctx, const char *api, uint64_t dst, uint64_t src, uint64_t count, int channels,
                    data_type_t dtype);

// Where the source of a reducing copy into L2 SRAM must be (the API name
// says it: L1 = local memory, S = DDR, L2 = L2 SRAM).
enum class ReduceSource { local, ddr, l2 };
// dst(n,c,h,w) = op(dst, src) in L2 SRAM: psum_op is an all_reduce_psum_t
// (WO writes src, WR combines with what dst holds), opcode an
// all_reduce_opcode_t (NOP writes src; MUL, MAX, MIN, ADD combine).
struct ReduceOp {
  int psum_op, opcode;
};
void reduce_copy(Context &ctx, const char *api, Endpoint dst, Endpoint src, ReduceSource from, const dim4 &shape,
                 data_type_t dtype, ReduceOp op);

// Writes, densely and in n, c, h, w order, the src elements whose mask
// element is non-zero to system address dst; returns their count.
uint32_t mask_select(Context &ctx, const char *api, uint64_t dst, Endpoint src, Endpoint mask, const dim4 &shape,
                     data_type_t data_dtype, data_type_t mask_dtype);
// Writes the flat (n, c, h, w row-major) indices + base_idx of the non-zero
// src elements as uint32 to system address dst; returns their count.
uint32_t nonzero(Context &ctx, const char *api, uint64_t dst, Endpoint src, const dim4 &shape, data_type_t dtype,
                 uint32_t base_idx);

// ---- row gather and scatter along H (gather.cc) --------------------------------
// The index tensor holds uint32 row numbers, one per output row (gather,
// shape (N, C, H, 1)) or per source row (scatter, (N, C, param_h, 1)); a
// stride of 0 shares it.
// A row number r stands for row r - start_pos.
struct RowIndex {
  Endpoint index;
  uint32_t start_pos = 0;
};
// dst(n,c,h,w) = param(n,c,index(n,c,h) - start_pos,w) for shape (N, C, H, W);
// param has param_h rows; a row outside [0, param_h) is filled with the
// dtype's low bits of `fill`.
void h_gather(Context &ctx, const char *api, Endpoint dst, Endpoint param, const RowIndex &index, const dim4 &shape,
              int param_h, uint32_t fill, data_type_t dtype);
// dst(n,c,index(n,c,h) - start_pos,w) = param(n,c,h,w) for h < param_h:
// as in the vendor's API, `shape` (N, C, H, W) is the destination's and
// param holds param_h rows, each with its row number in the index
// (N, C, param_h, 1). Rows outside [0, H) are skipped; of two source rows
// aimed at one destination row the later (larger h) wins. With `add`, the
// row is added to what dst holds (the dtype's arithmetic: floats rounded
// once, integers wrapping).
void h_scatter(Context &ctx, const char *api, Endpoint dst, Endpoint param, const RowIndex &index, const dim4 &shape,
               int param_h, bool add, data_type_t dtype);

// While alive, the DMA commands above are booked on the SDMA engine (which
// moves system memory only and allows a smaller w-stride).
class OnSdma {
 public:
  explicit OnSdma(Context &ctx) : ctx_(ctx), saved_(ctx.dma_engine) { ctx.dma_engine = Engine::sdma; }
  ~OnSdma() { ctx_.dma_engine = saved_; }
  OnSdma(const OnSdma &) = delete;
  OnSdma &operator=(const OnSdma &) = delete;

 private:
  Context &ctx_;
  Engine saved_;
};

}  // namespace cmodel::gdma
