// engine_control_api.cc: the runtime functions of families A (engine
// control and status, descriptor mode, base addresses), B (work items,
// cores, barriers, message ids), W (multi-chip topology) and Z (bandwidth
// monitor) on one emulated core of one chip.
//
// What this emulator is, in the terms of these functions: every command
// runs to completion when it is issued, so engines are never busy and ids
// never overflow; one kernel runs on one core (bm1688 has two, the emulator
// runs one) of one chip, as one work item of one group; there is no
// descriptor queue. Barriers wait for every engine, as tpu_sync_all does.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include <cstdio>

#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/context.h"
#include "cmodel/gdma/gdma.h"
#include "core_state.h"
#include "multicore.h"

namespace cmodel::impl {

namespace {

Context &ctx() { return api::context(); }
void wait_for_engines() { ctx().timeline.sync(); }

// The message ids reserved for the four kinds of synchronisation sit at the
// start of the current base; tpu_next_msg_id hands out those after them.
enum ReservedMsgId { local_msg_id, global_msg_id, ccl_msg_id, schedule_msg_id, reserved_msg_ids };

// One command of a few cycles on `engine` that moves nothing (tpu_nop).
void issue_nop(const char *api, Engine engine) {
  Context &c = ctx();
  c.count(api);
  c.issue(engine, engine == Engine::bdc ? c.chip.bdc_issue_cycles : c.chip.gdma_latency_cycles, api, 0);
}

// The tag of a tagged global address (bit 39 set, tag in bits 36..38), or
// -1 for a plain (physical) address.
constexpr uint64_t tagged_bit = uint64_t(1) << 39;
constexpr int tag_shift = 36;
int address_tag(uint64_t addr) { return addr & tagged_bit ? int((addr >> tag_shift) & 7) : -1; }

}  // namespace

// ---- family A: engine control and status ------------------------------------------
// There is no descriptor queue: the commands issued so far are finished
// once the engines are waited for, as tpu_poll does.
void tpu_poll_descriptor(void) { wait_for_engines(); }

void tpu_poll_empty(void) {
  if (ctx().timeline.in_parallel())
    fail(ErrorKind::illegal_command, "a parallel region is open; close it with tpu_parallel_end() first");
  wait_for_engines();
}

unsigned long long tpu_static_mem_get_start_addr(void) { return ctx().chip.static_mem_start; }

void tpu_nop(void) {
  issue_nop(__func__, Engine::bdc);
  issue_nop(__func__, Engine::gdma);
  issue_nop(__func__, Engine::sdma);
}

bool tpu_is_descriptor_mode(void) { return false; }

void tpu_run_commands(const tpu_engine_command_info_t *commands, u32 engine_num) {
  (void)commands, (void)engine_num;
  fail(ErrorKind::unsupported,
       "this emulator has no descriptor mode (tpu_is_descriptor_mode() is false): precompiled command buffers "
       "cannot run; issue the commands through the API");
}

// The engines tpu_run_commands could address: BDC, GDMA and SDMA (the HAU
// takes no command buffers here).
u32 tpu_engine_num(void) { return 3; }

void tpu_sr_setup(void) {}
void tpu_bdc_end(void) {}

void tpu_debug_cmd(u64 *p_cmd, int length, int command_type) {
  (void)p_cmd, (void)length, (void)command_type;
  fail(ErrorKind::unsupported, "this emulator has no raw engine commands to inspect (command_type {})",
       command_type);
}

int tpu_bdc_busy(void) { return 0; }
int tpu_gdma_busy(void) { return 0; }
int tpu_sdma_busy(void) { return 0; }
int tpu_hau_sort_busy(void) { return 0; }
int tpu_gdma_cmd_overflow(void) { return 0; }
int tpu_sdma_cmd_overflow(void) { return 0; }
int tpu_hau_sort_cmd_overflow(void) { return 0; }

void tpu_enable_pmu(void) {}
void tpu_disable_pmu(void) {}

// ---- family A: base-address registers ---------------------------------------------
void tpu_reset_base_addr(void) {
  KernelState &k = ctx().kernel;
  k.base_addr = {};
  k.base_addr_set = {};
}

void tpu_set_base_addr(const int *base_idx, const u64 *base_addr, int num) {
  if (num < 0) fail(ErrorKind::illegal_command, "num = {}; must not be negative", num);
  if (num > 0) {
    api::deref("base_idx", base_idx);
    api::deref("base_addr", base_addr);
  }
  KernelState &k = ctx().kernel;
  for (int i = 0; i < num; ++i) {
    if (base_idx[i] < 0 || base_idx[i] >= KernelState::base_addr_registers)
      fail(ErrorKind::illegal_command, "base_idx[{}] = {}; registers are 0 .. {}", i, base_idx[i],
           KernelState::base_addr_registers - 1);
    k.base_addr[size_t(base_idx[i])] = base_addr[i];
    k.base_addr_set[size_t(base_idx[i])] = true;
  }
}

// Plain addresses are physical already; a tagged one maps to the base
// register of its tag plus its low 36 bits.
system_addr_t tpu_global_mem_real_addr(system_addr_t addr) {
  const int tag = address_tag(addr);
  if (tag < 0) return addr;
  const KernelState &k = ctx().kernel;
  if (!k.base_addr_set[size_t(tag)])
    fail(ErrorKind::illegal_command,
         "{:#x} is a tagged global address (tag {}), but base-address register {} was not set with "
         "tpu_set_base_addr()",
         addr, tag, tag);
  return k.base_addr[size_t(tag)] + (addr & ((uint64_t(1) << tag_shift) - 1));
}

// ---- family B: work partitioning and cores ----------------------------------------
// The cores of a launch are the work items of one group (torch-tpu's tile
// index group_index * workitem_num + workitem_index is then the core index).
int tpu_workitem_num(void) { return host::launch().group; }
int tpu_workitem_index(void) { return host::launch().index; }
int tpu_group_num(void) { return 1; }
int tpu_group_index(void) { return 0; }
int tpu_is_last_workitem(void) { return host::launch().index == host::launch().group - 1; }
int tpu_start_physical_core_id(void) { return multicore::active() ? 0 : host::core_state().index; }
int tpu_physical_core_id(void) { return host::launch().index; }
int tpu_physical_core_num(void) { return ctx().chip.core_num; }
int tpu_tpuv7_env(void) { return 0; }

void tpu_core_context_setup(int core_idx, int core_num, int core_msg_id) {
  // The kernel may only restate the core it was launched on (cmodel_set_core).
  const host::CoreState core = host::launch();
  if (core_num != core.group || core_idx != core.index)
    fail(ErrorKind::unsupported,
         "core_idx = {}, core_num = {}; this kernel runs on core {} of a launch group of {} on the emulator",
         core_idx, core_num, core.index, core.group);
  ctx().kernel.base_msg_id = core_msg_id;
}

// ---- family B: barriers ----------------------------------------------------------
void tpu_sync_start(void) { ctx().kernel.sync_state = true; }
void tpu_sync_end(void) { ctx().kernel.sync_state = false; }
bool tpu_is_sync_state(void) { return ctx().kernel.sync_state; }

void tpu_sync_all_with_msg_id(int msg_id) {
  if (msg_id < 0) fail(ErrorKind::illegal_command, "msg_id = {}; message ids are not negative", msg_id);
  host::all_core_barrier(__func__);
}
void tpu_sync_all_bdc(void) { host::all_core_barrier(__func__); }
void tpu_sync_all_gdma(void) { host::all_core_barrier(__func__); }
void tpu_sync_all_sdma(void) { host::all_core_barrier(__func__); }
void tpu_sync_all_hau(void) { host::all_core_barrier(__func__); }
void tpu_sync_core_innner(void) { wait_for_engines(); }
void tpu_sync_core_with_external_engine(void) { wait_for_engines(); }

// Returns 0: the barrier was passed. In a multi-core run it waits for
// `core_num` cores at `msg_id`; alone, only a barrier of one core passes.
int tpu_core_barrier(int msg_id, int core_num) {
  if (multicore::active()) {
    multicore::barrier(__func__, msg_id, core_num);
    return 0;
  }
  if (core_num != 1 || host::core_state().group != 1)
    fail(ErrorKind::unsupported,
         "core_num = {}; this kernel runs alone on core {} of a launch group of {} (cmodel_run_cores runs the cores "
         "of a group together)",
         core_num, host::core_state().index, host::core_state().group);
  wait_for_engines();
  return 0;
}

void tpu_sync_finish(void) {
  KernelState &k = ctx().kernel;
  k.base_msg_id = 0;
  k.next_msg_id = 0;
  k.sync_state = false;
}

// ---- family B: message ids --------------------------------------------------------
int tpu_next_msg_id(void) {
  KernelState &k = ctx().kernel;
  return k.base_msg_id + reserved_msg_ids + k.next_msg_id++;
}
int tpu_get_base_msg_id(void) { return ctx().kernel.base_msg_id; }
void tpu_set_base_msg_id(int base_msg_id) {
  if (base_msg_id < 0) fail(ErrorKind::illegal_command, "base_msg_id = {}; must not be negative", base_msg_id);
  ctx().kernel.base_msg_id = base_msg_id;
}
int tpu_get_local_msg_id(void) { return ctx().kernel.base_msg_id + local_msg_id; }
int tpu_get_global_msg_id(void) { return ctx().kernel.base_msg_id + global_msg_id; }
int tpu_get_ccl_msg_id(void) { return ctx().kernel.base_msg_id + ccl_msg_id; }
int tpu_get_schedule_msg_id(void) { return ctx().kernel.base_msg_id + schedule_msg_id; }

// ---- family W: one chip ----------------------------------------------------------
namespace {
int g_chip_map[] = {0};          // rank 0 is chip 0
int g_no_cdma_ports[] = {-1};    // one slot, unused

[[noreturn]] void needs_chips(const char *what) {
  fail(ErrorKind::unsupported, "{} needs several chips; this emulator is one chip (tpu_chip_num() is 1)", what);
}
}  // namespace

int tpu_chip_id(void) { return 0; }
int tpu_chip_num(void) { return 1; }
int tpu_rank(void) { return 0; }
int *tpu_chip_map(void) { return g_chip_map; }
int tpu_use_ring(void) { return 0; }
bool tpu_is_cdma_busy(void) { return false; }
int tpu_cdma_get_used_port_num(void) { return 0; }
int *tpu_cdma_get_used_ports(void) { return g_no_cdma_ports; }

// No CDMA port is in use, so there is nothing to set up, wait for or nop.
void tpu_cdma_initialize(void) {}
void tpu_cdma_poll(void) {}
void tpu_cdma_all_port_nop(void) {}

void tpu_sccl_init(int chip_num, int rank, int *chip_map, int use_ring) {
  (void)use_ring;
  if (chip_num != 1 || rank != 0 || (chip_map && chip_map[0] != 0))
    fail(ErrorKind::unsupported, "chip_num = {}, rank = {}{}; this emulator is one chip (1 chip, rank 0 on chip 0)",
         chip_num, rank, chip_map ? fmt::format(", chip_map[0] = {}", chip_map[0]) : std::string());
}

void tpu_cdma_send(int dst_chipid, int src_chipid, system_addr_t src_addr, int src_n, int src_c, int src_h,
                   int src_w, int src_n_stride, int src_c_stride, int src_h_stride, int opcode, data_type_t dtype) {
  (void)dst_chipid, (void)src_chipid, (void)src_addr, (void)src_n, (void)src_c, (void)src_h, (void)src_w,
      (void)src_n_stride, (void)src_c_stride, (void)src_h_stride, (void)opcode, (void)dtype;
  needs_chips("a chip-to-chip send");
}
void tpu_cdma_recv(int src_chipid, int dst_chipid, system_addr_t dst_addr, int dst_n, int dst_c, int dst_h,
                   int dst_w, int dst_n_stride, int dst_c_stride, int dst_h_stride, system_addr_t input_addr,
                   int opcode, data_type_t dtype) {
  (void)src_chipid, (void)dst_chipid, (void)dst_addr, (void)dst_n, (void)dst_c, (void)dst_h, (void)dst_w,
      (void)dst_n_stride, (void)dst_c_stride, (void)dst_h_stride, (void)input_addr, (void)opcode, (void)dtype;
  needs_chips("a chip-to-chip receive");
}

// ---- family Z: bandwidth monitor ----------------------------------------------------
// The emulator has no bandwidth counters; its figures are in the run
// statistics (cmodel_last_run_stats: bytes per direction, busy time).
void read_bw_registers(bw_info_t *info) { api::deref("info", info) = bw_info_t{}; }
void show_bw_info(double freq) {
  std::printf("bandwidth monitor (%g MHz): no counters in the emulator; see cmodel_last_run_stats()\n", freq);
}
void enable_bw_perf(void) {}
void disable_bw_perf(double freq) { (void)freq; }

}  // namespace cmodel::impl
