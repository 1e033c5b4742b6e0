#include "hazard.h"

#include <algorithm>
#include <bit>
#include <cstdio>

#include "error.h"
#include "local_watch.h"

namespace cmodel {
namespace {

bool overlap(const Interval &a, const Interval &b) { return a.start_ns < b.end_ns && b.start_ns < a.end_ns; }

bool overlap(const LocalFootprint &a, const LocalFootprint &b) {
  return (a.npu_mask & b.npu_mask) != 0 && a.lo < b.hi && b.lo < a.hi;
}

std::string describe(const LocalFootprint &f) {
  const int first = std::countr_zero(f.npu_mask), last = 63 - std::countl_zero(f.npu_mask);
  return fmt::format("bytes [{:#x}, {:#x}) of NPU {}..{}", f.lo, f.hi, first, last);
}

}  // namespace

LocalFootprint footprint(const TensorRef &t) {
  // Byte range relative to each NPU's start, over every row the tensor uses.
  int64_t lo = 0, hi = 0;
  const int rows = (t.start_npu + t.shape.c - 1) / t.npu_num + 1;
  const int64_t extents[4][2] = {
      {t.shape.n, t.stride.n}, {rows, t.stride.c}, {t.shape.h, t.stride.h}, {t.shape.w, t.stride.w}};
  for (const auto &[count, stride] : extents) {
    lo += std::min<int64_t>(0, (count - 1) * stride);
    hi += std::max<int64_t>(0, (count - 1) * stride);
  }
  const int64_t offset = int64_t(t.addr % t.npu_bytes);
  // NPUs start_npu, start_npu + 1, ... for `lanes` channels, wrapping
  // after the last NPU: one or two runs of bits, set without a loop (every
  // command computes the footprints of all its operands).
  const int lanes = std::min(t.shape.c, t.npu_num);
  const int end = t.start_npu + lanes;
  auto ones = [](int k) { return k >= 64 ? ~uint64_t(0) : (uint64_t(1) << k) - 1; };
  const uint64_t mask = end <= t.npu_num ? ones(lanes) << t.start_npu
                                         : ones(t.npu_num - t.start_npu) << t.start_npu | ones(end - t.npu_num);
  return {mask, offset + lo * t.esize, offset + (hi + 1) * t.esize};
}

void HazardTracker::note(const TensorRef &t, bool write) {
  if (!t.is_local()) return;
  if (local_watch().armed) check_local_watch(t, write);
  if (!timeline_.in_parallel()) return;  // commit() would drop it unused
  pending_.push_back({Engine::gdma, {}, footprint(t), write, {}, 0});
}

LocalWatch &local_watch() {
  static LocalWatch watch;
  return watch;
}

void check_local_watch(const TensorRef &t, bool write) {
  LocalWatch &watch = local_watch();
  const auto &allowed = write ? watch.writes : watch.reads;
  // One (n, channel row) at a time: the h x w part of a row is one range.
  int64_t hw_lo = 0, hw_hi = 0;
  for (const auto &[count, stride] : {std::pair<int64_t, int64_t>{t.shape.h, t.stride.h}, {t.shape.w, t.stride.w}}) {
    hw_lo += std::min<int64_t>(0, (count - 1) * stride);
    hw_hi += std::max<int64_t>(0, (count - 1) * stride);
  }
  const int rows = (t.start_npu + t.shape.c - 1) / t.npu_num + 1;
  const int64_t offset = int64_t(t.addr % t.npu_bytes);
  for (int n = 0; n < t.shape.n; ++n)
    for (int r = 0; r < rows; ++r) {
      const int64_t base = offset + (int64_t(n) * t.stride.n + int64_t(r) * t.stride.c) * t.esize;
      const int64_t lo = base + hw_lo * t.esize, hi = base + (hw_hi + 1) * t.esize;
      bool inside = false;
      for (const auto &[begin, end] : allowed) inside = inside || (begin <= lo && hi <= end);
      if (inside) continue;
      watch.violation = {true, write, lo, hi};
      fail(ErrorKind::memory_fault,
           "the slice check: this command {} local bytes [{:#x}, {:#x}) of each NPU, outside what the running "
           "local layer declared",
           write ? "writes" : "reads", lo, hi);
    }
}

void HazardTracker::commit(Engine engine, Interval time, bool in_parallel, const CallInfo &call,
                           double engines_idle_ns) {
  if (!in_parallel) {
    pending_.clear();
    return;
  }
  // Accesses that ended before every engine's current command began can no
  // longer meet a new command.
  std::erase_if(region_, [&](const Access &a) { return a.time.end_ns <= engines_idle_ns; });
  ++commands_;
  for (Access &mine : pending_) {
    mine.engine = engine;
    mine.time = time;
    mine.call = call;
    mine.command = commands_;
  }
  // One report per pair of commands, however many operands overlap.
  uint64_t reported = 0;
  for (const Access &other : region_)
    for (const Access &mine : pending_)
      if (other.command != reported && other.engine != engine && (mine.write || other.write) &&
          overlap(mine.time, other.time) && overlap(mine.where, other.where)) {
        report(other, mine);
        reported = other.command;
        break;
      }
  region_.insert(region_.end(), pending_.begin(), pending_.end());
  pending_.clear();
}

void HazardTracker::clear() {
  pending_.clear();
  region_.clear();
}

void HazardTracker::report(const Access &earlier, const Access &later) {
  auto what = [](const Access &a) {
    return fmt::format("{} ({}, called from {}) {} {} during [{:.3f}, {:.3f}) us", a.call.api ? a.call.api : "?",
                       engine_name(a.engine), describe_call(a.call), a.write ? "writes" : "reads",
                       describe(a.where), a.time.start_ns / 1e3, a.time.end_ns / 1e3);
  };
  const std::string message = fmt::format(
      "race inside a parallel region: {}, while {}; GDMA and BDC are not ordered between tpu_parallel_start and "
      "tpu_parallel_end, so use separate buffers (double buffering) or end the region first",
      what(later), what(earlier));
  if (!as_warnings) fail(ErrorKind::illegal_command, "{}", message);
  std::fprintf(stderr, "warning: %s\n", message.c_str());
  warnings.push_back(message);
}

}  // namespace cmodel
