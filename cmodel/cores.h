// cores.h: what the cores of one multi-core run share besides memory: the
// state of their synchronisation (barriers, the 128 engine message slots)
// and the order it puts between them, which the cross-core race check uses.
//
// Nothing here blocks or knows threads: the run's scheduler
// (kernel/src/multicore.cc) asks whether a core may pass a wait and hands
// the turn to another core when it may not. The order between cores is a
// vector clock per core: a send hands the sender's clock to its message
// slot, a passed wait joins it into the waiter's, a barrier joins all
// participants'. An access of core j stamped s is ordered before core k's
// present when clock[k][j] >= s; two accesses to the same global or L2
// bytes by different cores, unordered, at least one writing, race.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "call_site.h"
#include "tensor.h"

namespace cmodel {

using VectorClock = std::vector<uint64_t>;

// One access of a core to system memory (global or L2) between two points
// of synchronisation.
struct CoreAccess {
  int core = 0;
  uint64_t stamp = 0;   // the core's own clock entry at the access
  bool write = false;
  int reduce_op = -1;   // a reducing copy's opcode (ALL_REDUCE_*): such writes combine, in any order
  std::string what;     // "dst [0x100000000, 0x100000400)"
  CallInfo call;
  uint64_t lo = 0, hi = 0;  // the bound of `ranges`
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // sorted, disjoint [lo, hi) byte ranges
};

// The byte ranges a system tensor covers, sorted and merged. A tensor of
// more rows than `max_ranges` is taken as its bound (conservative: it may
// report bytes it skips).
std::vector<std::pair<uint64_t, uint64_t>> system_ranges(const TensorRef &t, size_t max_ranges = 1 << 16);

class CoreSync {
 public:
  static constexpr int message_slots = 128;

  explicit CoreSync(int cores);
  int cores() const { return int(clocks_.size()); }

  // ---- barriers: tpu_sync_all* (all cores), tpu_core_barrier (some) ----
  // Core `core` arrives at the barrier `key` of `participants` cores at
  // time `ns` of its timeline; returns the generation it waits for.
  uint64_t arrive(int core, int key, int participants, double ns);
  // The barrier `key` completed generation `generation`: the waiter may
  // pass; *release_ns is when (the last arrival's time).
  bool barrier_passed(int key, uint64_t generation, double *release_ns) const;
  // Cores that arrived at `key` and wait (for a deadlock report).
  int arrived(int key) const;
  // Core `core` passes barrier `key`: joins the clocks the barrier joined.
  void pass_barrier(int core, int key);

  // ---- engine messages (slot = msg_id % 128) ----
  // A send that `wait_count` waits will consume; false (with *error) when
  // it contradicts the slot's earlier sends.
  bool send(int core, int msg_id, int wait_count, double ns, const CallInfo &call, std::string *error);
  bool can_pass_wait(int msg_id, int send_count) const;
  int sends(int msg_id) const { return slot(msg_id).sends; }
  // Core `core` passes a wait for `send_count` sends; the slot is free
  // again once its expected waits have passed. Returns when the last send
  // it waited for was issued.
  double pass_wait(int core, int msg_id);
  // Messages sent but not consumed by all their waits, for the end of a
  // run: "message 5 (sent by k.c:12) expected 2 waits, 1 came".
  std::vector<std::string> unconsumed() const;

  // ---- cross-core races ----
  // Records an access, or returns the earlier access of another core it
  // races with (null: none).
  const CoreAccess *access(CoreAccess a);
  const VectorClock &clock(int core) const { return clocks_[size_t(core)]; }

 private:
  struct Barrier {
    int participants = 0;
    std::vector<int> waiting;  // cores arrived in this generation
    uint64_t generation = 0;
    double latest_ns = 0, released_ns = 0;
    VectorClock joined, released;  // being joined / of the last completed generation
  };
  struct Slot {
    int sends = 0, waits = 0, expected_waits = 0;
    double latest_ns = 0;
    VectorClock clock;
    CallInfo first_send;
  };
  Barrier &barrier(int key, int participants);
  Slot &slot(int msg_id) { return slots_[size_t(unsigned(msg_id) % message_slots)]; }
  const Slot &slot(int msg_id) const { return slots_[size_t(unsigned(msg_id) % message_slots)]; }
  void join(VectorClock &into, const VectorClock &from) const;
  void tick(int core) { ++clocks_[size_t(core)][size_t(core)]; }
  bool ordered_before_all(const CoreAccess &a) const;
  void forget_ordered();

  std::vector<VectorClock> clocks_;
  std::vector<std::pair<int, Barrier>> barriers_;  // by key; few
  std::vector<Slot> slots_;
  std::vector<CoreAccess> accesses_;
  size_t prune_at_ = 256;
};

// Whether two sorted, disjoint range lists share a byte.
bool ranges_meet(const std::vector<std::pair<uint64_t, uint64_t>> &a,
                 const std::vector<std::pair<uint64_t, uint64_t>> &b);

}  // namespace cmodel
