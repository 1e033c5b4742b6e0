// hazard.h: what each command's operands mean beyond the command itself:
// races between engines inside a parallel region, and reads of bytes never
// written (the shadow of shadow.h).
//
// Inside tpu_parallel_start/end the hardware does not order GDMA (or SDMA)
// against BDC commands: a BDC command and a DMA command of one region that
// touch the same local bytes, one of them writing, give results that depend
// on timing. That is a race whatever the estimated timeline says (the
// hardware's timing differs from the estimate, and may run them in either
// order). The tracker keeps the local footprints of the region's commands
// and reports such a pair with both call sites: an error by default, a
// warning on request.
//
// Every operand read is checked against the shadow (each byte written since
// local memory was poisoned, or since its global buffer was allocated), and
// every operand written is marked there once the command's reads were
// checked: an uninitialised read is an error of its own class, or a warning,
// or not checked (option uninitialized_reads).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "call_site.h"
#include "cores.h"
#include "memory.h"
#include "tensor.h"
#include "timeline.h"

namespace cmodel {

// Bytes [lo, hi) of every NPU in the mask.
struct LocalFootprint {
  uint64_t npu_mask;
  int64_t lo, hi;
};
LocalFootprint footprint(const TensorRef &local);

enum class UninitializedReads { error, warning, off };

class HazardTracker {
 public:
  // `timeline` tells whether a parallel region is open: outside one the
  // engines are ordered and the notes would only be dropped at commit().
  HazardTracker(const Timeline &timeline, Memory &memory) : timeline_(timeline), memory_(memory) {}

  // Notes an operand (local or system) of the command being issued: a
  // read is checked against the shadow now, a write marked at commit().
  void note(const TensorRef &t, bool write);
  // The same for a flat range of system memory (flat copies and fills,
  // the HAU), `role` naming it in a report.
  void note_system(const char *role, uint64_t addr, uint64_t bytes, bool write);
  // The pending command runs on `engine` during `time`: marks what it
  // wrote, checks it against the region's other commands, then keeps it.
  // Outside a region the pending notes are dropped (commands are ordered
  // there).
  void commit(Engine engine, Interval time, bool in_parallel, const CallInfo &call);
  // A region ended (or a run began): nothing can race across it.
  void clear();

  bool as_warnings = false;
  UninitializedReads uninitialized = UninitializedReads::error;
  // A recording is open (cmodel_record_begin): reads are not checked, the
  // replay checks them; writes are still marked.
  bool recording = false;
  std::vector<std::string> warnings;
  // A multi-core run: every system operand goes to the run's CoreSync as an
  // access of core `core`, checked there for cross-core races. Null: one core.
  CoreSync *cores = nullptr;
  int core = 0;
  // A reducing copy (ALL_REDUCE_PSUM_WR) notes its destination: the writes
  // of such copies with one opcode combine in any order and race with no
  // other reducing copy of that opcode.
  struct Reducing {
    bool active = false;
    uint64_t addr = 0;
    int op = -1;
  } reducing;

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
  // Hands a system operand to `cores` and reports a race it finds.
  void note_cross_core(const char *role, std::vector<std::pair<uint64_t, uint64_t>> ranges, bool write, int reduce_op);
  void report_unwritten(bool local, const std::string &what, const std::string &where);

  // The union of a set of accesses' footprints: a quick "cannot overlap".
  struct Bound {
    uint64_t npu_mask = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    void add(const LocalFootprint &f) {
      npu_mask |= f.npu_mask;
      lo = std::min(lo, f.lo);
      hi = std::max(hi, f.hi);
    }
    bool meets(const LocalFootprint &f) const { return (npu_mask & f.npu_mask) != 0 && lo < f.hi && f.lo < hi; }
  };

  const Timeline &timeline_;
  Memory &memory_;
  uint64_t commands_ = 0;
  std::vector<Access> pending_;
  std::vector<Access> region_;
  // Of the region's accesses: all and the writes, of the BDC and of the DMA engines.
  Bound bdc_all_, bdc_writes_, dma_all_, dma_writes_;
  // What the pending command writes, marked at commit() (after its reads
  // were checked: an in-place command reads before it writes).
  std::vector<TensorRef> pending_marks_;
  std::vector<std::pair<uint64_t, uint64_t>> pending_system_marks_;
};

}  // namespace cmodel
