// context.h: one emulated chip with its memories, timelines and run state.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "call_site.h"
#include "chip_spec.h"
#include "hazard.h"
#include "memory.h"
#include "timeline.h"
#include "trace.h"

namespace cmodel {

// What the runtime functions of the API keep between the calls of one run:
// results data-dependent commands leave for a later query, and the
// bookkeeping of synchronisation and address translation. Reset per run.
struct KernelState {
  static constexpr int base_addr_registers = 8;  // one per 3-bit address tag

  uint32_t gdma_filter_num = 0;  // last GDMA mask_select / nonzero
  uint32_t sdma_filter_num = 0;  // last SDMA one
  std::vector<uint32_t> vsdma_filter_num;  // per virtual SDMA port
  bool sync_state = false;  // between tpu_sync_start and tpu_sync_end
  int base_msg_id = 0;
  int next_msg_id = 0;  // handed out by tpu_next_msg_id, relative to the base
  std::array<uint64_t, base_addr_registers> base_addr{};  // tpu_set_base_addr
  std::array<bool, base_addr_registers> base_addr_set{};
  // The memory checker's ranges (tpu_mem_record_add): start -> (bytes, tag).
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> mem_records;
};

class Context {
 public:
  // `shared`: the global memory and L2 SRAM of the chip's core 0, for the
  // chip's other cores (null: core 0, new ones).
  explicit Context(const ChipSpec &chip, std::shared_ptr<SharedMemory> shared = nullptr)
      : chip(chip), memory(chip, std::move(shared)), timeline(chip), hazards(timeline, memory) {
    reset_kernel_state();
  }

  // Clears the timelines, statistics and hazard records before a run.
  void begin_run() {
    timeline.reset();
    stats.reset();
    hazards.clear();
    hazards.warnings.clear();
    table_warnings.clear();
    hazards.cores = nullptr;  // a multi-core run sets its own after this
    hazards.core = core_index;
    reset_kernel_state();
  }
  void reset_kernel_state() {
    kernel = KernelState{};
    kernel.vsdma_filter_num.assign(size_t(chip.vsdma_port_num), 0);
    dma_engine = Engine::gdma;
  }

  // Books one command of `api` on `engine`, marks what it wrote and checks
  // it for races with the other engine (its operands were noted in
  // `hazards` beforehand, its reads checked there). `amount` is what it moved (bytes, DMA) or computed
  // (elements), for the trace.
  Interval issue(Engine engine, double cycles, const char *api, uint64_t amount) {
    const Interval time = timeline.issue(engine, cycles);
    hazards.commit(engine, time, timeline.in_parallel(), current_call());
    if (trace) [[unlikely]] trace->command(engine, api, time, amount);
    return time;
  }
  void parallel_start() {
    timeline.parallel_start();
    hazards.clear();
  }
  void parallel_end() {
    timeline.parallel_end();
    hazards.clear();
  }
  // After a run's final sync: a trace's clock moves past the run.
  void trace_run_finished() {
    if (trace) trace->run_finished(timeline.now_ns());
  }
  // Counts one command issued through `api`.
  void count(const char *api) { stats.count(api); }

  const ChipSpec &chip;
  int core_index = 0;  // which core of the chip this is
  Memory memory;
  Timeline timeline;
  HazardTracker hazards;
  RunStats stats;
  KernelState kernel;
  // The engine the DMA commands of cmodel/gdma are booked on: the SDMA runs
  // the same command implementations (gdma::OnSdma switches it).
  Engine dma_engine = Engine::gdma;
  std::string stats_report;  // JSON of the last finished run
  // The profile recorder while cmodel_trace_enable(1) holds; null when
  // tracing is off (the per-command cost is then that one test). A paused
  // trace waits in `paused_trace`.
  std::unique_ptr<Trace> trace, paused_trace;
  // Coefficient tables (cmodel/bdc/tables.h): the table (bdc::Table) each
  // loader call last wrote at a local address, and the addresses whose
  // table of another dtype was already warned about in this run.
  std::map<uint32_t, int> loaded_tables;
  std::set<uint32_t> table_warnings;
};

// The emulator opened by cmodel_open() (during a multi-core run: the core
// whose turn it is), or nullptr.
Context *current_context();
// Opens (or with null closes) the chip: `context` is its core 0.
void set_current_context(std::unique_ptr<Context> context);
// Core `core` of the open chip, made on first use (its own local memory,
// engines and timelines; core 0's global memory and L2 SRAM).
Context &core_context(int core);
// How many cores core_context made so far (at least 1 while a chip is open).
int core_contexts();
// current_context() is core `core` from now on (made already).
void select_core(int core);

}  // namespace cmodel
