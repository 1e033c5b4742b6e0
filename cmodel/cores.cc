#include "cores.h"

#include <algorithm>

#include <fmt/format.h>

#include "error.h"

namespace cmodel {

namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

void sort_and_merge(Ranges &ranges) {
  std::sort(ranges.begin(), ranges.end());
  size_t kept = 0;
  for (const auto &r : ranges) {
    if (kept > 0 && r.first <= ranges[kept - 1].second) {
      ranges[kept - 1].second = std::max(ranges[kept - 1].second, r.second);
      continue;
    }
    ranges[kept++] = r;
  }
  ranges.resize(kept);
}

// [lo, hi) of the bytes any element of `t` may touch.
std::pair<uint64_t, uint64_t> bound_of(const TensorRef &t) {
  int64_t lo = 0, hi = 0;
  const int64_t counts[] = {t.shape.n, t.shape.c, t.shape.h, t.shape.w};
  const int64_t strides[] = {t.stride.n, t.stride.c, t.stride.h, t.stride.w};
  for (int i = 0; i < 4; ++i) {
    lo += std::min<int64_t>(0, (counts[i] - 1) * strides[i]);
    hi += std::max<int64_t>(0, (counts[i] - 1) * strides[i]);
  }
  return {uint64_t(int64_t(t.addr) + lo * t.esize), uint64_t(int64_t(t.addr) + (hi + 1) * t.esize)};
}

}  // namespace

Ranges system_ranges(const TensorRef &t, size_t max_ranges) {
  if (t.elements() <= 0) return {};
  const bool dense_rows = t.shape.w == 1 || t.stride.w == 1 || t.stride.w == -1;
  const uint64_t rows = uint64_t(t.shape.n) * uint64_t(t.shape.c) * uint64_t(t.shape.h);
  const uint64_t pieces = dense_rows ? rows : rows * uint64_t(t.shape.w);
  if (pieces > max_ranges) return {bound_of(t)};
  Ranges ranges;
  ranges.reserve(size_t(pieces));
  const int64_t row_bytes = int64_t(t.shape.w) * t.esize;
  for (int n = 0; n < t.shape.n; ++n)
    for (int c = 0; c < t.shape.c; ++c)
      for (int h = 0; h < t.shape.h; ++h) {
        const int64_t row = int64_t(t.addr) + t.esize * (int64_t(n) * t.stride.n + int64_t(c) * t.stride.c +
                                                         int64_t(h) * t.stride.h);
        if (dense_rows) {
          const int64_t first = t.stride.w < 0 ? row - row_bytes + t.esize : row;
          ranges.emplace_back(uint64_t(first), uint64_t(first + row_bytes));
          continue;
        }
        for (int w = 0; w < t.shape.w; ++w) {
          const int64_t at = row + int64_t(w) * t.stride.w * t.esize;
          ranges.emplace_back(uint64_t(at), uint64_t(at + t.esize));
        }
      }
  sort_and_merge(ranges);
  return ranges;
}

bool ranges_meet(const Ranges &a, const Ranges &b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].second <= b[j].first) ++i;
    else if (b[j].second <= a[i].first) ++j;
    else return true;
  }
  return false;
}

CoreSync::CoreSync(int cores) : slots_(message_slots) {
  clocks_.assign(size_t(cores), VectorClock(size_t(cores), 0));
  for (int k = 0; k < cores; ++k) clocks_[size_t(k)][size_t(k)] = 1;
  for (Slot &s : slots_) s.clock.assign(size_t(cores), 0);
}

void CoreSync::join(VectorClock &into, const VectorClock &from) const {
  for (size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], from[i]);
}

CoreSync::Barrier &CoreSync::barrier(int key, int participants) {
  for (auto &[k, b] : barriers_)
    if (k == key) return b;
  Barrier b;
  b.participants = participants;
  b.joined.assign(clocks_.size(), 0);
  b.released = b.joined;
  barriers_.emplace_back(key, std::move(b));
  return barriers_.back().second;
}

uint64_t CoreSync::arrive(int core, int key, int participants, double ns) {
  Barrier &b = barrier(key, participants);
  if (!b.waiting.empty() && b.participants != participants)
    fail(ErrorKind::core_sync, "this barrier is for {} cores, but the cores already waiting at it expect {}",
         participants, b.participants);
  b.participants = participants;
  const uint64_t generation = b.generation;
  b.waiting.push_back(core);
  join(b.joined, clocks_[size_t(core)]);
  b.latest_ns = std::max(b.latest_ns, ns);
  if (int(b.waiting.size()) == b.participants) {
    b.released = b.joined;
    b.released_ns = b.latest_ns;
    b.joined.assign(clocks_.size(), 0);
    b.latest_ns = 0;
    b.waiting.clear();
    ++b.generation;
  }
  return generation;
}

bool CoreSync::barrier_passed(int key, uint64_t generation, double *release_ns) const {
  for (const auto &[k, b] : barriers_)
    if (k == key && b.generation > generation) {
      *release_ns = b.released_ns;
      return true;
    }
  return false;
}

int CoreSync::arrived(int key) const {
  for (const auto &[k, b] : barriers_)
    if (k == key) return int(b.waiting.size());
  return 0;
}

void CoreSync::pass_barrier(int core, int key) {
  for (const auto &[k, b] : barriers_)
    if (k == key) join(clocks_[size_t(core)], b.released);
  tick(core);
}

bool CoreSync::send(int core, int msg_id, int wait_count, double ns, const CallInfo &call, std::string *error) {
  Slot &s = slot(msg_id);
  if (s.sends > 0 && s.expected_waits != wait_count) {
    *error = fmt::format("message {} (slot {}) was sent before, from {}, for {} wait(s); this send says {}", msg_id,
                         unsigned(msg_id) % message_slots, describe_call(s.first_send), s.expected_waits, wait_count);
    return false;
  }
  if (s.sends == 0) s.first_send = call;
  ++s.sends;
  s.expected_waits = wait_count;
  s.latest_ns = std::max(s.latest_ns, ns);
  join(s.clock, clocks_[size_t(core)]);
  tick(core);
  return true;
}

bool CoreSync::can_pass_wait(int msg_id, int send_count) const { return slot(msg_id).sends >= send_count; }

double CoreSync::pass_wait(int core, int msg_id) {
  Slot &s = slot(msg_id);
  join(clocks_[size_t(core)], s.clock);
  tick(core);
  const double sent_ns = s.latest_ns;
  if (++s.waits >= s.expected_waits) {
    VectorClock keep(clocks_.size(), 0);
    s = Slot{};
    s.clock = std::move(keep);
  }
  return sent_ns;
}

std::vector<std::string> CoreSync::unconsumed() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot &s = slots_[i];
    if (s.sends == 0) continue;
    out.push_back(fmt::format("message slot {} was sent {} time(s) (first from {}) for {} wait(s), and {} came", i,
                              s.sends, describe_call(s.first_send), s.expected_waits, s.waits));
  }
  return out;
}

bool CoreSync::ordered_before_all(const CoreAccess &a) const {
  for (size_t k = 0; k < clocks_.size(); ++k)
    if (int(k) != a.core && clocks_[k][size_t(a.core)] < a.stamp) return false;
  return true;
}

void CoreSync::forget_ordered() {
  std::erase_if(accesses_, [this](const CoreAccess &a) { return ordered_before_all(a); });
  prune_at_ = std::max<size_t>(256, accesses_.size() * 2);
}

const CoreAccess *CoreSync::access(CoreAccess a) {
  if (a.ranges.empty()) return nullptr;
  a.stamp = clocks_[size_t(a.core)][size_t(a.core)];
  a.lo = a.ranges.front().first;
  a.hi = a.ranges.back().second;
  const VectorClock &now = clocks_[size_t(a.core)];
  for (const CoreAccess &b : accesses_) {
    if (b.core == a.core || b.stamp <= now[size_t(b.core)]) continue;  // same core, or ordered before
    if (!a.write && !b.write) continue;
    if (a.reduce_op >= 0 && a.reduce_op == b.reduce_op) continue;  // reductions of one kind combine in any order
    if (a.lo < b.hi && b.lo < a.hi && ranges_meet(a.ranges, b.ranges)) return &b;
  }
  if (accesses_.size() >= prune_at_) forget_ordered();
  accesses_.push_back(std::move(a));
  return nullptr;
}

}  // namespace cmodel
