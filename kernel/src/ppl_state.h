// ppl_state.h: the PPL runtime's state for the kernel call in progress
// (the plan pass, then the execution pass), one per core of the launch,
// shared by ppl_memory.cc, ppl_pipeline.cc and ppl_ops_*.cc. Not part of
// any public header.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#define PPL_RUNTIME_SOURCE
#include "ppl/ppl.h"

namespace ppl::rt {

enum class pass { idle, plan, execute };
enum engine : unsigned { dma_engine = 1, tiu_engine = 2 };

// One allocation of PPL: a tensor declaration (its source position) and,
// when a declaration has several instances alive at once (a helper whose
// result outlives the next call), their rank among them.
struct slot {
  std::string file;
  int line = 0;
  int column = 0;
  int rank = 0;
  uint32_t bytes = 0;       // per lane, aligned: one buffer
  bool pipelined = false;   // created after enable_pipeline()
  bool no_pingpong = false; // disable_pingpong()
  unsigned engines = 0;     // engine kinds that used it
  int live = 0;             // instances alive now
  int creations = 0;        // instances made in this pass (alternate buffers)
  // Program-order live ranges (operation counts) of its instances.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  uint32_t address = 0;     // the per-lane byte offset assigned
  // Two buffers, alternating per instance (a pipelined loop's ping-pong).
  bool doubled() const { return pipelined && !no_pingpong && engines == (dma_engine | tiu_engine); }
};

// A tensor declared without a shape: where, and the shape its first write
// gave it (spec §2.6).
struct shape_record {
  std::string file;
  int line = 0;
  bool known = false;
  dim4 shape;
};

struct instance {
  int slot = -1;
  int handles = 0;
  int buffer = 0;  // 0 or 1 for a doubled slot
};

// Where an operation of the plan stands in a pipelined loop: loop -1 for
// an operation outside every pipelined loop.
struct pipeline_place {
  int loop = -1;
  int iteration = 0;
  int stage = 0;
};

// The pipelined loop the plan pass is in (spec §1.5): it starts at an
// enable_pipeline() call, each further call from the same place starts the
// next iteration, and it ends at an operation whose source position no
// earlier iteration had (code after the loop) or at a synchronisation.
struct loop_tracker {
  bool active = false;
  int id = -1;
  std::tuple<std::string, int, int> site;
  int iteration = 0;
  int stage = -1;
  unsigned last_engine = 0;
  uint64_t first_operation = 0;
  std::set<std::tuple<std::string, int, int>> body;
  std::set<int> slots;  // slots created inside: alive for the whole loop
};

// An operation of the execution pass waiting for its pipelined loop's
// schedule.
struct queued_operation {
  pipeline_place place;
  engine kind = tiu_engine;
  site where;
  // Per-lane local byte ranges and global byte ranges it touches; the
  // first operand's are written.
  std::vector<std::tuple<bool, uint64_t, uint64_t, bool>> footprint;  // local?, begin, end, written
  std::function<void()> issue;
};

struct state {
  pass mode = pass::idle;
  uint64_t operations = 0;
  bool pipeline = false;
  bool bank_aware = true;
  int lanes = 0;
  int eu_bytes = 0;
  uint32_t lane_bytes = 0;
  int core = 0;
  int cores = 1;
  int max_cores = 1;  // of this launch: the chip's, or 1 inside a running kernel
  // The L2 SRAM window and the part the kernel's L2 tensors took so far;
  // `l2_short`: the plan pass found it too small.
  uint64_t l2_base = 0;
  uint64_t l2_bytes = 0;
  uint64_t l2_used = 0;
  bool l2_short = false;
  std::vector<slot> slots;
  std::map<std::tuple<std::string, int, int, int>, int> slot_of;
  std::vector<instance> instances;
  // Tensors declared without a shape, in order of declaration (the same in
  // both passes).
  std::vector<shape_record> shapes;
  // The code a refused plan pass returns: -1, or PplShapeInferErr.
  int refusal = -1;
  // Slots used by one TIU operation together (bank placement).
  std::set<std::pair<int, int>> partners;
  // Plan pass: the pipelined loop in progress and every operation's place.
  loop_tracker loop;
  int loops = 0;
  std::vector<pipeline_place> places;
  // Execution pass: the operations of the pipelined loop in progress, and
  // the schedule being issued. A failing command leaves the kernel by a
  // long jump, which destroys nothing: what an issue needs on the heap is
  // kept here, never in a frame it may jump over.
  std::vector<queued_operation> queue;
  std::vector<int> step;
  std::vector<size_t> order;
  std::function<void()> issuing;
};

// The calling core's state (the core whose turn it is runs on its thread).
state &current();

// Per-lane bytes of a block in a layout (spec §1.4 item 2), unaligned.
uint64_t block_bytes(const dim4 &block, align_mode_t align, int element_size);

// Plan pass: `instance`'s allocation holds `block` (the largest of its
// instances' blocks) and its live range starts now.
void size_allocation(int instance, const dim4 &block, align_mode_t align, int element_size);

// Records that an operation of engine kind `kind` uses `d` (plan pass).
void use(const desc &d, engine kind);
// The tpu-kernel local address of `d` (execution pass).
uint32_t local_address(const desc &d);

// An operand of an operation: written or read by its engine.
struct operand_use {
  const desc *d;
  engine kind;
};
// One operation. Plan pass: records its operands (the first is its
// output) and its place in a pipelined loop; `issue` is not called.
// Execution pass: `issue` runs with `where` as the commands' call site,
// at once or, inside a pipelined loop, in the loop's schedule.
void submit(const site &where, std::initializer_list<operand_use> operands, std::function<void()> issue);
// Issues every queued operation (the end of a pipelined loop, a
// synchronisation, the end of the kernel).
void flush_pipeline();
// Plan pass: where a pipelined loop stands at an operation (ppl_pipeline.cc).
pipeline_place place_in_loop(state &st, const site &where, engine kind);
void end_loop(state &st);
void issue_queue(state &st);

// A misuse of PPL at `where`: recorded as the last error, then the plan
// pass is left by an exception, the execution pass by stopping the kernel.
[[noreturn]] void refuse(const char *name, const site &where, const std::string &message);
// The same refusal for a tensor whose shape cannot be inferred: the kernel
// returns PplShapeInferErr (0x1B).
[[noreturn]] void refuse_shape(const char *name, const site &where, const std::string &message);
// Refuses an operand `role` of `name` that has no shape yet: an output
// ("dst") the operation cannot give one (it has no input), an input read
// before any write.
void check_known(const char *name, const char *role, const desc &d, const site &where);
// `dst` written by `name` with the shape `shape` taken from its inputs: a
// tensor declared without a shape gets it now (and, in the plan pass, its
// allocation is sized and its live range starts); any other is returned
// as it is.
desc written(const char *name, const desc &dst, const dim4 &shape, const site &where);
// The shape an element-wise operation's inputs broadcast to (spec §2.6):
// each extent the largest of theirs; the inputs must have shapes.
dim4 broadcast_shape(const char *name, std::initializer_list<std::pair<const char *, const desc *>> inputs,
                     const site &where);

// Makes `where` the call site of the commands issued while it lives.
class call_site_scope {
 public:
  explicit call_site_scope(const site &where);
  ~call_site_scope();
  call_site_scope(const call_site_scope &) = delete;
  call_site_scope &operator=(const call_site_scope &) = delete;
};

}  // namespace ppl::rt
