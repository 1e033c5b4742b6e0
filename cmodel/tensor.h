// tensor.h: a checked view of one 4-D operand in local or system memory.
//
// Local layout (spec §3): channel c of a tensor starting on NPU s lives on
// NPU (s + c) % NPU_NUM, in row (s + c) / NPU_NUM of that NPU; strides are
// in elements and stride.c is the pitch between rows inside one NPU.
// System tensors use plain element strides from their base address.
//
// Making a TensorRef checks the shape and that the whole footprint lies in
// valid memory, once; after that element pointers are computed without
// further checks, which keeps inner loops fast.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "cmodel/include/cmodel_machine_types.h"
#include "error.h"
#include "memory.h"

namespace cmodel {

enum class Space { local, system };

struct TensorRef {
  Space space;
  data_type_t dtype;
  int esize;           // bytes per element
  dim4 shape;
  dim4 stride{};       // elements
  uint64_t addr = 0;   // as the kernel passed it
  int start_npu = 0;   // local only
  uint8_t *origin = nullptr;  // system: element 0; local: byte `offset` of NPU 0
  int npu_num = 1;
  uint64_t npu_bytes = 0;   // LOCAL_MEM_SIZE
  uint64_t host_pitch = 0;  // host bytes from one NPU's memory to the next (Memory::npu_pitch)
  int npu_shift = -1;  // log2(npu_num) when npu_num is a power of two, else -1
  const char *role = nullptr;  // "dst", "src0", ...: how reports name the operand

  bool is_local() const { return space == Space::local; }
  int64_t elements() const { return int64_t(shape.n) * shape.c * shape.h * shape.w; }

  // Host pointer of element (n, c, 0, 0).
  // Inlined even into the large family functions: it runs once per
  // channel of every operand, which for short rows is a large part of a
  // command's cost.
  [[gnu::always_inline]] uint8_t *channel(int n, int c) const {
    if (space == Space::system) return origin + esize * (int64_t(n) * stride.n + int64_t(c) * stride.c);
    const int lane = start_npu + c;
    // Both chips have a power-of-two NPU count: a shift and a mask instead
    // of two divisions, which cost more than a short row's arithmetic.
    const int npu = npu_shift >= 0 ? lane & (npu_num - 1) : lane % npu_num;
    const int row = npu_shift >= 0 ? lane >> npu_shift : lane / npu_num;
    return origin + uint64_t(npu) * host_pitch + esize * (int64_t(n) * stride.n + int64_t(row) * stride.c);
  }
  uint8_t *row(int n, int c, int h) const { return channel(n, c) + esize * int64_t(h) * stride.h; }
  uint8_t *at(int n, int c, int h, int w) const { return row(n, c, h) + esize * int64_t(w) * stride.w; }
  // The h x w plane of each channel is one run of bytes.
  bool plane_contiguous() const { return stride.w == 1 && (shape.h == 1 || stride.h == shape.w); }
};

// a and b put every element at the same bytes (same memory, start, element
// size and strides; the shapes are the caller's business).
inline bool same_layout(const TensorRef &a, const TensorRef &b) {
  return a.space == b.space && a.origin == b.origin && a.start_npu == b.start_npu && a.esize == b.esize &&
         a.stride.n == b.stride.n && a.stride.c == b.stride.c && a.stride.h == b.stride.h &&
         a.stride.w == b.stride.w;
}

// Host pointers of a tensor's channels (n, c, 0, 0) for c = 0, 1, ... of
// one n, stepping from one channel to the next with an add instead of
// channel()'s multiplications: loops over many short rows (64 channels of
// 16 elements) spend more on finding each row than on its elements.
class ChannelCursor {
 public:
  ChannelCursor(const TensorRef &t, int n) {
    if (!t.is_local()) {  // channels are stride.c elements apart
      p_ = t.channel(n, 0);
      step_ = int64_t(t.esize) * t.stride.c;
      return;
    }
    // Channel c sits on NPU (start_npu + c) % npu_num, in row
    // (start_npu + c) / npu_num: NPU after NPU, then the next row on NPU 0.
    npu_ = t.start_npu % t.npu_num;
    npus_ = t.npu_num;
    step_ = int64_t(t.host_pitch);
    row_bytes_ = int64_t(t.esize) * t.stride.c;
    p_ = t.channel(n, 0);
    row_start_ = p_ - npu_ * step_;
  }
  uint8_t *get() const { return p_; }
  void next() {
    p_ += step_;
    if (++npu_ == npus_) {
      npu_ = 0;
      row_start_ += row_bytes_;
      p_ = row_start_;
    }
  }

 private:
  uint8_t *p_ = nullptr;
  uint8_t *row_start_ = nullptr;  // NPU 0's byte of the current row (local)
  int64_t step_ = 0;              // bytes to the next channel (same row)
  int64_t row_bytes_ = 0;
  int npu_ = 0;
  int npus_ = std::numeric_limits<int>::max();  // system tensors never wrap
};

// Default strides (spec §3.3), in elements.
dim4 aligned_stride(const ChipSpec &chip, int start_npu, const dim4 &shape, data_type_t dtype);
dim4 compact_stride(const ChipSpec &chip, int start_npu, const dim4 &shape);
dim4 line_aligned_stride(const ChipSpec &chip, int start_npu, const dim4 &shape, data_type_t dtype);
dim4 continuous_stride(const dim4 &shape);
int eu_num(const ChipSpec &chip, data_type_t dtype);

// `role` ("dst", "src", ...) prefixes every error. A null stride means the
// aligned layout (local) or the continuous layout (system).
TensorRef local_tensor(Memory &memory, const char *role, local_addr_t addr, const dim4 &shape,
                       const dim4 *stride, data_type_t dtype);
TensorRef system_tensor(Memory &memory, const char *role, uint64_t addr, const dim4 &shape,
                        const dim4 *stride, data_type_t dtype);

// Throws unless every dim is in [1, limit]; the error names `rule`, the
// engine's rule for it (TIU-1 for a BDC operand), when there is one.
void check_shape(const char *role, const dim4 &shape, int limit, std::optional<Rule> rule = std::nullopt);
// Throws unless a count that becomes a dim (a length, a row count) is in
// [1, 65535]: "<what> = <value>; it must be in [1, 65535]".
void check_dim(const char *what, int value);

std::string describe(const dim4 &d);

// The same for a command whose own fields bound each dim (`max_dims`), such
// as the GDMA row gather, whose h count is a 32-bit field: every dim in
// [1, max_dims.<dim>].
TensorRef local_tensor(Memory &memory, const char *role, local_addr_t addr, const dim4 &shape,
                       const dim4 *stride, data_type_t dtype, const dim4 &max_dims);
TensorRef system_tensor(Memory &memory, const char *role, uint64_t addr, const dim4 &shape,
                        const dim4 *stride, data_type_t dtype, const dim4 &max_dims);

}  // namespace cmodel
