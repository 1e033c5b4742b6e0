#include "hazard.h"

#include <algorithm>
#include <bit>
#include <cstdio>

#include "dtype.h"
#include "error.h"
#include "memory.h"
#include "shadow.h"
#include "local_watch.h"

namespace cmodel {
namespace {

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
  // The slice check first: a layer group's kernel reading rows its hook did
  // not declare reads bytes nobody loaded, and the slice check says why.
  if (t.is_local() && local_watch().armed) check_local_watch(t, write);
  if (write) {
    pending_marks_.push_back(t);  // marked at commit(), after the reads
  } else if (uninitialized != UninitializedReads::off && !recording) {
    Unwritten first;
    if (!tensor_written(memory_, t, &first)) [[unlikely]] {
      const std::string what = fmt::format("{} {} {} at {} {:#x}", t.role ? t.role : "operand", describe(t.shape),
                                           dtype_name(t.dtype), t.is_local() ? "local" : "system", t.addr);
      std::string where;
      if (first.local)
        where = fmt::format("byte {:#x} of NPU {} (local address {:#x})", first.offset, first.npu,
                            uint64_t(first.npu) * t.npu_bytes + first.offset);
      else
        where = fmt::format("byte {:#x}", first.offset);
      report_unwritten(t.is_local(), what, where);
      mark_tensor(memory_, t);  // a warning: once per byte
    }
  }
  if (!t.is_local()) {
    if (cores) [[unlikely]]
      note_cross_core(t.role ? t.role : "operand", system_ranges(t), write,
                      reducing.active && t.addr == reducing.addr ? reducing.op : -1);
    return;
  }
  if (!timeline_.in_parallel()) return;  // commit() would drop it unused
  pending_.push_back({Engine::gdma, {}, footprint(t), write, {}, 0});
}

void HazardTracker::note_system(const char *role, uint64_t addr, uint64_t bytes, bool write) {
  if (bytes == 0) return;
  if (cores) [[unlikely]]
    note_cross_core(role, {{addr, addr + bytes}}, write, -1);
  if (write) {
    pending_system_marks_.emplace_back(addr, bytes);
    return;
  }
  if (uninitialized == UninitializedReads::off || recording) return;
  const int64_t first = memory_.first_unwritten_system(addr, bytes);
  if (first < 0) [[likely]] return;
  report_unwritten(false, fmt::format("{} [{:#x}, {:#x}) ({})", role, addr, addr + bytes, Bytes{bytes}),
                   fmt::format("byte {:#x}", first));
  memory_.mark_system(addr, bytes);
}

void HazardTracker::note_cross_core(const char *role, std::vector<std::pair<uint64_t, uint64_t>> ranges, bool write,
                                    int reduce_op) {
  CoreAccess access;
  access.core = core;
  access.write = write || reduce_op >= 0;
  access.reduce_op = reduce_op;
  access.call = current_call();
  access.what = ranges.empty() ? std::string(role)
                               : fmt::format("{} [{:#x}, {:#x})", role, ranges.front().first, ranges.back().second);
  access.ranges = std::move(ranges);
  const std::string what = access.what;
  const CoreAccess *other = cores->access(std::move(access));
  if (!other) return;
  auto verb = [](bool writes, int op) { return op >= 0 ? "reduces into" : writes ? "writes" : "reads"; };
  const CallInfo &call = current_call();
  const std::string message = fmt::format(
      "cross-core race: core {}'s {} (called from {}) {} {}, while core {}'s {} (called from {}) {} {}, and no "
      "synchronisation orders the two (tpu_sync_all, a core barrier, or a message the one core sends after its "
      "access and the other waits for before its own): the cores run at the same time on the device, so the "
      "bytes depend on timing",
      core, call.api ? call.api : "?", describe_call(call), verb(write, reduce_op), what, other->core,
      other->call.api ? other->call.api : "?", describe_call(other->call), verb(other->write, other->reduce_op),
      other->what);
  if (!as_warnings) throw Error(ErrorKind::core_sync, message, nullptr, "cross-core race");
  std::fprintf(stderr, "warning: %s\n", message.c_str());
  warnings.push_back(message);
}

void HazardTracker::report_unwritten(bool local, const std::string &what, const std::string &where) {
  const std::string message = fmt::format(
      "{} is read, but {} was never written; no command, host write or host pointer wrote it since {}; "
      "the option uninitialized_reads = warning or off, or TPU_SDK_UNINITIALIZED_READS, lowers the check",
      what, where,
      local ? "local memory was poisoned (cmodel_open, cmodel_local_poison)"
                                                 : "its buffer was allocated");
  if (uninitialized == UninitializedReads::error) fail(ErrorKind::uninitialized_read, "{}", message);
  const CallInfo &call = current_call();
  const std::string text =
      fmt::format("{}: {} [{}]; called from {}", call.api ? call.api : "?", message,
                  error_kind_name(ErrorKind::uninitialized_read), describe_call(call));
  std::fprintf(stderr, "warning: %s\n", text.c_str());
  warnings.push_back(text);
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

void HazardTracker::commit(Engine engine, Interval time, bool in_parallel, const CallInfo &call) {
  // The command's reads were checked when noted: now what it wrote counts.
  if (!pending_marks_.empty()) {
    for (const TensorRef &t : pending_marks_) mark_tensor(memory_, t);
    pending_marks_.clear();
  }
  if (!pending_system_marks_.empty()) [[unlikely]] {
    for (const auto &[addr, bytes] : pending_system_marks_) memory_.mark_system(addr, bytes);
    pending_system_marks_.clear();
  }
  if (!in_parallel) {
    pending_.clear();
    return;
  }
  ++commands_;
  const bool bdc = engine == Engine::bdc;
  for (Access &mine : pending_) {
    mine.engine = engine;
    mine.time = time;
    mine.call = call;
    mine.command = commands_;
  }
  // Every earlier command of the region counts, whenever the timeline has
  // it run: only BDC against DMA races (each engine runs its own commands in
  // order). One report per pair of commands, however many operands overlap.
  const Bound &others_all = bdc ? dma_all_ : bdc_all_, &others_writes = bdc ? dma_writes_ : bdc_writes_;
  bool may_meet = false;
  for (const Access &mine : pending_) may_meet = may_meet || (mine.write ? others_all : others_writes).meets(mine.where);
  uint64_t reported = 0;
  if (may_meet)
    for (const Access &other : region_)
      for (const Access &mine : pending_)
        if (other.command != reported && (other.engine == Engine::bdc) != bdc && (mine.write || other.write) &&
            overlap(mine.where, other.where)) {
          report(other, mine);
          reported = other.command;
          break;
        }
  for (const Access &mine : pending_) {
    (bdc ? bdc_all_ : dma_all_).add(mine.where);
    if (mine.write) (bdc ? bdc_writes_ : dma_writes_).add(mine.where);
  }
  region_.insert(region_.end(), pending_.begin(), pending_.end());
  pending_.clear();
}

void HazardTracker::clear() {
  pending_.clear();
  region_.clear();
  pending_marks_.clear();
  pending_system_marks_.clear();
  bdc_all_ = bdc_writes_ = dma_all_ = dma_writes_ = Bound{};
}

void HazardTracker::report(const Access &earlier, const Access &later) {
  auto what = [](const Access &a) {
    return fmt::format("{} ({}, called from {}) {} {} during [{:.3f}, {:.3f}) us", a.call.api ? a.call.api : "?",
                       engine_name(a.engine), describe_call(a.call), a.write ? "writes" : "reads",
                       describe(a.where), a.time.start_ns / 1e3, a.time.end_ns / 1e3);
  };
  const std::string message = fmt::format(
      "race inside a parallel region: {}, while {}; GDMA and BDC are not ordered between tpu_parallel_start and "
      "tpu_parallel_end: whatever the estimated times, the hardware may run these two commands in either order or "
      "side by side, so use separate buffers (double buffering) or end the region first",
      what(later), what(earlier));
  if (!as_warnings) throw Error(ErrorKind::illegal_command, message, nullptr, "race inside a parallel region");
  std::fprintf(stderr, "warning: %s\n", message.c_str());
  warnings.push_back(message);
}

}  // namespace cmodel
