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

class HazardTracker {
 public:
  // `timeline` tells whether a parallel region is open: outside one the
  // engines are ordered and the notes would only be dropped at commit().
  explicit HazardTracker(const Timeline &timeline) : timeline_(timeline) {}

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

  const Timeline &timeline_;
  uint64_t commands_ = 0;
  std::vector<Access> pending_;
  std::vector<Access> region_;
};

}  // namespace cmodel
