// ppl_state.h: the PPL runtime's state for the kernel call in progress
// (the plan pass, then the execution pass), shared by ppl_memory.cc and
// ppl_ops.cc. Not part of any public header.
#pragma once

#include <cstdint>
#include <map>
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
  uint32_t bytes = 0;       // per lane, aligned
  bool pipelined = false;   // created after enable_pipeline()
  unsigned engines = 0;     // engine kinds that used it
  int live = 0;             // instances alive now
  // Program-order live ranges (operation counts) of its instances.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  uint32_t address = 0;     // the per-lane byte offset assigned
};

struct instance {
  int slot = -1;
  int handles = 0;
};

struct state {
  pass mode = pass::idle;
  uint64_t operations = 0;
  bool pipeline = false;
  int lanes = 0;
  int eu_bytes = 0;
  uint32_t lane_bytes = 0;
  std::vector<slot> slots;
  std::map<std::tuple<std::string, int, int, int>, int> slot_of;
  std::vector<instance> instances;
};

state &current();

// Per-lane bytes of a block in a layout (spec §1.4 item 2), unaligned.
uint64_t block_bytes(const dim4 &block, align_mode_t align, int element_size);

// Records that an operation of engine kind `kind` uses `d` (plan pass).
void use(const desc &d, engine kind);
// The tpu-kernel local address of `d` (execution pass).
uint32_t local_address(const desc &d);

// A misuse of PPL at `where`: recorded as the last error, then the plan
// pass is left by an exception, the execution pass by stopping the kernel.
[[noreturn]] void refuse(const char *name, const site &where, const std::string &message);

// Makes `where` the call site of the commands issued while it lives.
class call_site_scope {
 public:
  explicit call_site_scope(const site &where);
  ~call_site_scope();
  call_site_scope(const call_site_scope &) = delete;
  call_site_scope &operator=(const call_site_scope &) = delete;
};

}  // namespace ppl::rt
