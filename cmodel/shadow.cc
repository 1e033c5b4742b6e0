#include "shadow.h"

#include <algorithm>
#include <bit>

#include "hazard.h"
#include "memory.h"
#include "tensor.h"

namespace cmodel {
namespace {

// Bits [a, b) of a word, 0 <= a < b <= 64.
uint64_t bits_between(int a, int b) {
  const uint64_t below_b = b >= 64 ? ~uint64_t(0) : (uint64_t(1) << b) - 1;
  return below_b & ~((uint64_t(1) << a) - 1);
}

// The bits of byte range [lo, hi) that fall into the 64-byte word starting
// at byte `base`.
uint64_t bits_in_word(int64_t base, int64_t lo, int64_t hi) {
  return bits_between(int(std::max(lo, base) - base), int(std::min(hi, base + 64) - base));
}

uint64_t ones(int k) { return k >= 64 ? ~uint64_t(0) : (uint64_t(1) << k) - 1; }

// Collects runs of bytes and hands them on merged: the planes of a
// continuous tensor follow each other, and one call then covers them all.
template <typename F>
class Runs {
 public:
  explicit Runs(F &f) : f_(f) {}
  // false once f asked to stop
  bool add(uint64_t mask, int64_t lo, int64_t hi) {
    if (mask == mask_ && lo == hi_ && hi_ > lo_) {
      hi_ = hi;
      return true;
    }
    const bool go_on = flush();
    mask_ = mask;
    lo_ = lo;
    hi_ = hi;
    return go_on;
  }
  bool flush() {
    const bool go_on = hi_ <= lo_ || f_(mask_, lo_, hi_);
    lo_ = hi_ = 0;
    return go_on;
  }

 private:
  F &f_;
  uint64_t mask_ = 0;
  int64_t lo_ = 0, hi_ = 0;
};

// The w-run of one row starting at byte `base`: one range for unit or zero
// strides, one per element otherwise.
template <typename R>
bool add_row(R &runs, uint64_t mask, int64_t base, const TensorRef &t) {
  const int64_t e = t.esize, sw = t.stride.w, w = t.shape.w;
  if (sw == 1) return runs.add(mask, base, base + w * e);
  if (sw == -1) return runs.add(mask, base - (w - 1) * e, base + e);
  if (sw == 0 || w == 1) return runs.add(mask, base, base + e);
  for (int64_t i = 0; i < w; ++i)
    if (!runs.add(mask, base + i * sw * e, base + i * sw * e + e)) return false;
  return true;
}

// f(npu_mask, lo, hi) for runs of bytes that together are exactly those of
// tensor t (local: offsets inside each NPU of the mask; system: addresses,
// the mask 1). Stops when f returns false; returns whether it ran through.
template <typename F>
bool for_each_run(const TensorRef &t, F &&f) {
  Runs<F> runs(f);
  const int64_t e = t.esize;
  const bool plane = t.plane_contiguous();
  const int ns = t.stride.n == 0 ? 1 : t.shape.n;
  const int hs = plane || t.stride.h == 0 ? 1 : t.shape.h;
  const int64_t plane_bytes = int64_t(t.shape.h) * t.shape.w * e;
  auto rows_of = [&](uint64_t mask, int64_t base) {
    for (int n = 0; n < ns; ++n)
      for (int h = 0; h < hs; ++h) {
        const int64_t at = base + (int64_t(n) * t.stride.n + int64_t(h) * t.stride.h) * e;
        if (plane ? !runs.add(mask, at, at + plane_bytes) : !add_row(runs, mask, at, t)) return false;
      }
    return true;
  };
  if (t.is_local()) {
    // Row r holds the lanes [r * N, (r + 1) * N) that the channels reach: a
    // run of NPUs at one offset.
    const int N = t.npu_num, lanes_end = t.start_npu + t.shape.c;
    const int rows = t.stride.c == 0 && lanes_end <= N ? 1 : (lanes_end - 1) / N + 1;
    const int64_t offset = int64_t(t.addr % t.npu_bytes);
    for (int r = 0; r < rows; ++r) {
      const int first = std::max(t.start_npu, r * N) - r * N, last = std::min(lanes_end, (r + 1) * N) - r * N;
      if (!rows_of(ones(last - first) << first, offset + int64_t(r) * t.stride.c * e)) return false;
    }
  } else {
    const int cs = t.stride.c == 0 ? 1 : t.shape.c;
    for (int c = 0; c < cs; ++c)
      if (!rows_of(1, int64_t(t.addr) + int64_t(c) * t.stride.c * e)) return false;
  }
  return runs.flush();
}

// The bounding box of a local tensor: bytes [lo, hi) of the NPUs in the
// mask (hazard.h's footprint, whose NPU mask and range this shares).
LocalFootprint bounds(const TensorRef &t) { return footprint(t); }

}  // namespace

// ---- LocalShadow -------------------------------------------------------------

LocalShadow::LocalShadow(int npu_num, uint64_t npu_bytes)
    : npu_num_(npu_num),
      npu_bytes_(npu_bytes),
      full_((npu_bytes + 63) >> line_shift, 0),
      bits_(full_.size() * size_t(npu_num), 0),
      written_to_end_(size_t(npu_num), int64_t(npu_bytes)) {}

void LocalShadow::reset() {
  std::fill(full_.begin(), full_.end(), 0);
  std::fill(bits_.begin(), bits_.end(), 0);
  std::fill(written_to_end_.begin(), written_to_end_.end(), int64_t(npu_bytes_));
}

void LocalShadow::mark(uint64_t npu_mask, int64_t lo, int64_t hi) {
  if (lo >= hi || npu_mask == 0) return;
  if (hi == int64_t(npu_bytes_)) return mark_to_end(npu_mask, lo);
  mark_lines(npu_mask, lo, hi);
}

void LocalShadow::mark_to_end(uint64_t npu_mask, int64_t lo) {
  // Nothing unmarks part of local memory (only reset), so [from, end)
  // stays written once marked.
  for (uint64_t open = npu_mask; open; open &= open - 1) {
    const int npu = std::countr_zero(open);
    int64_t &from = written_to_end_[size_t(npu)];
    if (lo >= from) continue;
    mark_lines(uint64_t(1) << npu, lo, from);
    from = lo;
  }
}

void LocalShadow::mark_lines(uint64_t npu_mask, int64_t lo, int64_t hi) {
  for (int64_t l = lo >> line_shift, last = (hi - 1) >> line_shift; l <= last; ++l) {
    uint64_t open = npu_mask & ~full_[size_t(l)];
    if (open == 0) continue;
    const uint64_t m = bits_in_word(l << line_shift, lo, hi);
    if (m == ~uint64_t(0)) {  // the whole line: the summary says it all
      full_[size_t(l)] |= open;
      continue;
    }
    uint64_t *line = &bits_[size_t(l) * size_t(npu_num_)];
    uint64_t now_full = 0;
    for (; open; open &= open - 1) {
      const int npu = std::countr_zero(open);
      if ((line[npu] |= m) == ~uint64_t(0)) now_full |= uint64_t(1) << npu;
    }
    full_[size_t(l)] |= now_full;
  }
}

bool LocalShadow::written(uint64_t npu_mask, int64_t lo, int64_t hi, int *npu, int64_t *offset) const {
  if (lo >= hi || npu_mask == 0) return true;
  for (int64_t l = lo >> line_shift, last = (hi - 1) >> line_shift; l <= last; ++l) {
    uint64_t open = npu_mask & ~full_[size_t(l)];
    if (open == 0) continue;
    const uint64_t m = bits_in_word(l << line_shift, lo, hi);
    const uint64_t *line = &bits_[size_t(l) * size_t(npu_num_)];
    int first_bit = 64, first_npu = -1;
    for (; open; open &= open - 1) {
      const int p = std::countr_zero(open);
      const uint64_t missing = m & ~line[p];
      if (missing && std::countr_zero(missing) < first_bit) {
        first_bit = std::countr_zero(missing);
        first_npu = p;
      }
    }
    if (first_npu < 0) continue;
    if (npu) *npu = first_npu;
    if (offset) *offset = (l << line_shift) + first_bit;
    return false;
  }
  return true;
}

// ---- RangeShadow -------------------------------------------------------------

void RangeShadow::mark(uint64_t offset, uint64_t bytes) {
  if (bytes == 0 || full()) return;
  if (offset == 0 && bytes >= bytes_) return mark_all();
  if (bits_.empty()) bits_.assign((bytes_ + 63) / 64, 0);
  const uint64_t end = offset + bytes;
  for (uint64_t at = offset; at < end;) {
    const uint64_t word = at >> 6, base = word << 6;
    const uint64_t m = bits_in_word(int64_t(base), int64_t(at), int64_t(end));
    written_ += uint64_t(std::popcount(m & ~bits_[word]));
    bits_[word] |= m;
    at = base + 64;
  }
  if (written_ == bytes_) mark_all();
}

void RangeShadow::unmark(uint64_t offset, uint64_t bytes) {
  if (bytes == 0 || written_ == 0) return;
  if (offset == 0 && bytes >= bytes_) return reset();
  if (bits_.empty()) {  // all written: spell it out before clearing a part
    bits_.assign((bytes_ + 63) / 64, ~uint64_t(0));
    if (bytes_ % 64) bits_.back() = ones(int(bytes_ % 64));
  }
  const uint64_t end = offset + bytes;
  for (uint64_t at = offset; at < end;) {
    const uint64_t word = at >> 6, base = word << 6;
    const uint64_t m = bits_in_word(int64_t(base), int64_t(at), int64_t(end));
    written_ -= uint64_t(std::popcount(m & bits_[word]));
    bits_[word] &= ~m;
    at = base + 64;
  }
  if (written_ == 0) reset();
}

int64_t RangeShadow::first_unwritten(uint64_t offset, uint64_t bytes) const {
  if (bytes == 0 || full()) return -1;
  if (bits_.empty()) return int64_t(offset);  // nothing written yet
  const uint64_t end = offset + bytes;
  for (uint64_t at = offset; at < end;) {
    const uint64_t word = at >> 6, base = word << 6;
    const uint64_t missing = bits_in_word(int64_t(base), int64_t(at), int64_t(end)) & ~bits_[word];
    if (missing) return int64_t(base) + std::countr_zero(missing);
    at = base + 64;
  }
  return -1;
}

// ---- tensors -------------------------------------------------------------------

bool tensor_written(Memory &memory, const TensorRef &t, Unwritten *first) {
  if (t.is_local()) {
    LocalShadow &shadow = memory.local_shadow();
    const LocalFootprint box = bounds(t);
    if (shadow.lines_full(box.npu_mask, box.lo, box.hi)) return true;
    return for_each_run(t, [&](uint64_t mask, int64_t lo, int64_t hi) {
      int npu = 0;
      int64_t offset = 0;
      if (shadow.written(mask, lo, hi, &npu, &offset)) return true;
      *first = {true, npu, uint64_t(offset)};
      return false;
    });
  }
  if (memory.system_fully_written(t.addr)) return true;
  return for_each_run(t, [&](uint64_t, int64_t lo, int64_t hi) {
    const int64_t at = memory.first_unwritten_system(uint64_t(lo), uint64_t(hi - lo));
    if (at < 0) return true;
    *first = {false, 0, uint64_t(at)};
    return false;
  });
}

void mark_tensor(Memory &memory, const TensorRef &t) {
  if (t.is_local()) {
    LocalShadow &shadow = memory.local_shadow();
    const LocalFootprint box = bounds(t);
    if (shadow.lines_full(box.npu_mask, box.lo, box.hi)) return;
    for_each_run(t, [&](uint64_t mask, int64_t lo, int64_t hi) {
      shadow.mark(mask, lo, hi);
      return true;
    });
    return;
  }
  if (memory.system_fully_written(t.addr)) return;
  for_each_run(t, [&](uint64_t, int64_t lo, int64_t hi) {
    memory.mark_system(uint64_t(lo), uint64_t(hi - lo));
    return true;
  });
}

}  // namespace cmodel
