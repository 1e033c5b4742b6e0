// shadow.h: which bytes of memory hold something written (uninitialised
// reads, docs/cmodel.md "Uninitialised reads").
//
// Local memory has a shadow bit per byte, kept per 64-byte line of each
// NPU, with a summary per line of the NPUs on which the whole line is
// written: a command whose operands lie in fully written lines is checked
// with one AND per line, and marking them written again costs the same.
// Global memory has a shadow per allocated buffer (a bit per byte, made
// only once part of the buffer is written, dropped once all of it is), and
// L2 SRAM one as a whole. Local memory starts unwritten when the emulator
// opens and again on cmodel_local_poison; a buffer when it is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cmodel {

struct TensorRef;

// Written bytes of local memory: npu_num NPUs of npu_bytes each.
class LocalShadow {
 public:
  LocalShadow(int npu_num, uint64_t npu_bytes);
  // Every byte unwritten.
  void reset();
  // Bytes [lo, hi) of every NPU in the mask are written.
  void mark(uint64_t npu_mask, int64_t lo, int64_t hi);
  // Whether bytes [lo, hi) of every NPU in the mask are written; when not,
  // the first unwritten byte (lowest offset, then lowest NPU).
  bool written(uint64_t npu_mask, int64_t lo, int64_t hi, int *npu = nullptr, int64_t *offset = nullptr) const;
  // The bounding box [lo, hi) lies in lines fully written on every NPU of
  // the mask: the quick answer for a whole operand.
  bool lines_full(uint64_t npu_mask, int64_t lo, int64_t hi) const {
    for (int64_t l = lo >> line_shift, last = (hi - 1) >> line_shift; l <= last; ++l)
      if ((full_[size_t(l)] & npu_mask) != npu_mask) return false;
    return true;
  }
  uint64_t npu_bytes() const { return npu_bytes_; }

 private:
  static constexpr int line_shift = 6;  // 64-byte lines: one uint64_t of bits each
  void mark_lines(uint64_t npu_mask, int64_t lo, int64_t hi);
  // A host pointer into local memory (tpu_local_mem_addr) marks everything
  // from its byte to the end of the NPU, once per element a test or kernel
  // writes through it: only the part below what earlier such marks covered
  // is walked.
  void mark_to_end(uint64_t npu_mask, int64_t lo);
  int npu_num_;
  uint64_t npu_bytes_;
  std::vector<uint64_t> full_;  // per line: the NPUs on which it is fully written
  std::vector<uint64_t> bits_;  // per line, per NPU: its written bytes (lines not full)
  std::vector<int64_t> written_to_end_;  // per NPU: bytes [it, npu_bytes) marked by mark_to_end
};

// Written bytes of one region of system memory (a global buffer, L2 SRAM).
class RangeShadow {
 public:
  explicit RangeShadow(uint64_t bytes = 0) : bytes_(bytes) {}
  void mark(uint64_t offset, uint64_t bytes);
  void mark_all() {
    bits_.clear();
    bits_.shrink_to_fit();
    written_ = bytes_;
  }
  void reset() {
    bits_.clear();
    written_ = 0;
  }
  // Bytes [offset, offset + bytes) unwritten again (cmodel_global_poison).
  void unmark(uint64_t offset, uint64_t bytes);
  // The offset of the first unwritten byte of [offset, offset + bytes), or
  // -1 when all are written.
  int64_t first_unwritten(uint64_t offset, uint64_t bytes) const;
  bool full() const { return written_ == bytes_; }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_;
  uint64_t written_ = 0;        // bytes written so far
  std::vector<uint64_t> bits_;  // one bit per byte; empty when none or all are written
};

// Where a read found its first unwritten byte.
struct Unwritten {
  bool local = false;
  int npu = 0;          // local
  uint64_t offset = 0;  // local: inside the NPU; system: the address
};

class Memory;
// Whether every byte tensor t covers is written (its runs of bytes, not
// its bounding box: gaps between rows are not read); if not, where the
// first unwritten byte is.
bool tensor_written(Memory &memory, const TensorRef &t, Unwritten *first);
// Marks every byte tensor t covers as written.
void mark_tensor(Memory &memory, const TensorRef &t);

}  // namespace cmodel
