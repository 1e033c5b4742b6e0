// hazard.h: races between engines inside a parallel region.
//
// Inside tpu_parallel_start/end the hardware does not order GDMA against
// BDC commands. A BDC command that touches local memory which a GDMA
// command running at the same time writes (or the reverse: a GDMA command
// overwriting what a running BDC command reads or writes) gives results
// that depend on timing. The tracker keeps the local footprints of the
// region's commands with their time on the timeline and reports such a
// pair with both call sites: an error by default, a warning on request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "call_site.h"
#include "tensor.h"
#include "timeline.h"

namespace cmodel {

// Bytes [lo, hi) of every NPU in the mask.
struct LocalFootprint {
  uint64_t npu_mask;
  int64_t lo, hi;
};
LocalFootprint footprint(const TensorRef &local);

// The slice check of layer groups: while armed, every local operand a
// command reads (writes) must lie, row by row (each n and each channel row
// of each NPU), inside one of the allowed byte ranges, which hold for every
// NPU. The first access outside them fails the command and is kept in
// `violation`.
struct LocalWatch {
  bool armed = false;
  std::vector<std::pair<int64_t, int64_t>> reads, writes;  // [begin, end) in each NPU
  struct Violation {
    bool found = false, write = false;
    int64_t lo = 0, hi = 0;  // the offending bytes of one row, in each NPU
  } violation;
};

class HazardTracker {
 public:
  // Notes a local operand of the command being issued.
  void note(const TensorRef &t, bool write);
  // The pending command runs on `engine` during `time`: checks it against
  // the region's other commands, then keeps it. Outside a region the
  // pending notes are dropped (commands are ordered there).
  void commit(Engine engine, Interval time, bool in_parallel, const CallInfo &call, double engines_idle_ns);
  // A region ended (or a run began): nothing can race across it.
  void clear();

  bool as_warnings = false;
  std::vector<std::string> warnings;
  // Not cleared by clear(): set and reset by the host between runs.
  LocalWatch watch;

 private:
  struct Access {
    Engine engine;
    Interval time;
    LocalFootprint where;
    bool write;
    CallInfo call;
    uint64_t command;  // sequence number: one command has several accesses
  };
  void report(const Access &earlier, const Access &later);
  void check_watch(const TensorRef &t, bool write);

  uint64_t commands_ = 0;
  std::vector<Access> pending_;
  std::vector<Access> region_;
};

}  // namespace cmodel
