// mover.h: the inner loops shared by the GDMA families (and later the BDC
// copies): moving runs of elements between host pointers.
#pragma once

#include <cstdint>
#include <cstring>

#include "cmodel/context.h"
#include "cmodel/error.h"
#include "cmodel/tensor.h"
#include "gdma.h"

namespace cmodel::gdma {

template <typename T>
inline void move_strided(uint8_t *dst, int64_t dst_step, const uint8_t *src, int64_t src_step, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(dst + i * dst_step * int64_t(sizeof(T)), src + i * src_step * int64_t(sizeof(T)), sizeof(T));
}

// Moves `count` elements; steps are in elements. Contiguous runs become
// one memmove (memmove because in-place L2L/S2S moves may overlap).
inline void move_run(uint8_t *dst, int64_t dst_step, const uint8_t *src, int64_t src_step, int64_t count,
                     int esize) {
  if (dst_step == 1 && src_step == 1) {
    std::memmove(dst, src, size_t(count) * esize);
    return;
  }
  switch (esize) {
    case 1: move_strided<uint8_t>(dst, dst_step, src, src_step, count); break;
    case 2: move_strided<uint16_t>(dst, dst_step, src, src_step, count); break;
    default: move_strided<uint32_t>(dst, dst_step, src, src_step, count); break;
  }
}

// For every row (n, c, h) of dst: src_row(n, c, h) gives the source element
// of dst (n, c, h, 0); following elements are src_step elements apart.
template <typename SrcRow>
void move_rows(const TensorRef &dst, SrcRow &&src_row, int64_t src_step) {
  const dim4 &s = dst.shape;
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h) move_run(dst.row(n, c, h), dst.stride.w, src_row(n, c, h), src_step, s.w, dst.esize);
}

// The rule of the engine running the command: the SDMA runs the GDMA's
// implementations (OnSdma) under rules of its own.
inline Rule engine_rule(const Context &ctx, Rule gdma, Rule sdma) {
  return ctx.dma_engine == Engine::sdma ? sdma : gdma;
}

// The dims a command allows its operands, and the rule that sets them.
struct DimLimits {
  dim4 max;
  Rule rule;
};

// Builds one operand of a GDMA (or SDMA) command: every dim in [1, 65535]
// (DMA-1 / SDMA-1) unless `limits` says otherwise, not in static memory
// (DMA-3 / SDMA-3), and the engine's limit on the w-stride (DOC-GDMA-1,
// SDMA-2).
TensorRef operand(Context &ctx, const char *role, const Endpoint &end, const dim4 &shape, data_type_t dtype);
TensorRef operand(Context &ctx, const char *role, const Endpoint &end, const dim4 &shape, data_type_t dtype,
                  const DimLimits &limits);

// A DMA cannot reach static memory: an operand starting there is a memory
// fault naming DMA-3 (SDMA-3 on the SDMA).
void check_not_static(const Context &ctx, const char *role, uint64_t addr);

// A local operand in the aligned layout starts at a multiple of
// ALIGN_BYTES (the mask select and nonzero sources, DMA-12 / DMA-13).
void check_local_aligned(const Context &ctx, const char *role, const TensorRef &t, Rule rule);

// The direction of a transfer between two spaces.
Direction direction(Space dst, Space src);

// Books one GDMA command of `bytes` moved bytes; its local operands (dst
// written, src read; either may be null or a system tensor) are checked
// for races with the BDC.
void book(Context &ctx, const char *api, Direction dir, uint64_t bytes, const TensorRef *dst,
          const TensorRef *src);
// The common case: dst and src of one transfer, in their direction.
inline void book(Context &ctx, const char *api, const TensorRef &dst, const TensorRef &src) {
  book(ctx, api, direction(dst.space, src.space), uint64_t(dst.elements()) * dst.esize, &dst, &src);
}

}  // namespace cmodel::gdma
