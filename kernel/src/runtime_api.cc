// runtime_api.cc: tpu-kernel family A (runtime, chip queries, memory
// pointers) and B (synchronisation) for a single emulated core.
#include <cstdio>
#include <map>
#include <string>

#include "api_guard.h"
#include "api_impl.h"
#include "record.h"
#include "cmodel/context.h"
#include "core_state.h"
#include "multicore.h"
#include "cmodel/dtype.h"
#include "cmodel/tensor.h"
#include "common.h"
#include "tpu_kernel.h"

using namespace cmodel;

namespace {

const ChipSpec &chip() { return api::context().chip; }

CMD_ID_NODE *id_node(const char *role, void *node) {
  if (!node) fail(ErrorKind::illegal_command, "{} is a null pointer", role);
  return static_cast<CMD_ID_NODE *>(node);
}

// Command ids are counts of commands per engine since the run began, offset
// by what the caller last loaded with tpu_set_id_node.
struct CommandIds {
  unsigned bdc_base = 0, gdma_base = 0;
};
CommandIds g_ids;

void save_ids(CMD_ID_NODE *node) {
  const Timeline &t = api::context().timeline;
  node->bd_cmd_id = g_ids.bdc_base + unsigned(t.stats(Engine::bdc).commands);
  node->gdma_cmd_id = g_ids.gdma_base + unsigned(t.stats(Engine::gdma).commands);
  node->in_parallel_state = t.in_parallel();
}

void load_ids(const CMD_ID_NODE *node) {
  const Timeline &t = api::context().timeline;
  g_ids.bdc_base = node->bd_cmd_id - unsigned(t.stats(Engine::bdc).commands);
  g_ids.gdma_base = node->gdma_cmd_id - unsigned(t.stats(Engine::gdma).commands);
}

}  // namespace

extern "C" {

// ---- command-id glue (tpu-mlir backend) -----------------------------------
void tpu_set_id_node(void *node) {
  return api::run(__func__, TPU_CALLER(), [&] { load_ids(id_node("node", node)); });
}
void tpu_get_id_node(void *node) {
  return api::run(__func__, TPU_CALLER(), [&] { save_ids(id_node("node", node)); });
}
// The GDMA node is optional: compiler glue passes NULL when it keeps a
// single node for both engines.
void tpu_set_parallel_id_node(void *bd_node, void *gdma_node) {
  (void)gdma_node;
  return api::run(__func__, TPU_CALLER(), [&] { load_ids(id_node("bd_node", bd_node)); });
}
void tpu_get_parallel_id_node(void *bd_node, void *gdma_node) {
  return api::run(__func__, TPU_CALLER(), [&] {
    save_ids(id_node("bd_node", bd_node));
    if (gdma_node) save_ids(static_cast<CMD_ID_NODE *>(gdma_node));
  });
}
// Id nodes are always consistent here: there is nothing to check.
void tpu_enable_check_id_node(void) {}
void tpu_disable_check_id_node(void) {}

// ---- kernel life cycle ----------------------------------------------------
void tpu_initialize(void) {
  return api::run(__func__, TPU_CALLER(), TPU_ARGS(tpu_initialize), [&] {
    Context &ctx = api::context();
    if (ctx.timeline.in_parallel()) ctx.parallel_end();
    g_ids = {};
  });
}

void tpu_poll(void) {
  return api::run(__func__, TPU_CALLER(), TPU_ARGS(tpu_poll), [&] { api::context().timeline.sync(); });
}

void tpu_hau_poll(void) {
  return api::run(__func__, TPU_CALLER(), TPU_ARGS(tpu_hau_poll), [&] { api::context().timeline.sync(); });
}

void tpu_parallel_start(void) {
  return api::run(__func__, TPU_CALLER(), TPU_ARGS(tpu_parallel_start), [&] {
    Context &ctx = api::context();
    if (ctx.timeline.in_parallel())
      fail(ErrorKind::illegal_command, "a parallel region is already open; close it with tpu_parallel_end() first");
    ctx.parallel_start();
  });
}

void tpu_parallel_end(void) {
  return api::run(__func__, TPU_CALLER(), TPU_ARGS(tpu_parallel_end), [&] {
    Context &ctx = api::context();
    if (!ctx.timeline.in_parallel())
      fail(ErrorKind::illegal_command, "no parallel region is open (tpu_parallel_start() was not called)");
    ctx.parallel_end();
  });
}

bool tpu_is_parallel_state(void) {
  return api::run(__func__, TPU_CALLER(), [&] { return api::context().timeline.in_parallel(); });
}

// ---- chip queries ---------------------------------------------------------
int tpu_npu_num(void) {
  return api::run(__func__, TPU_CALLER(), [&] { return chip().npu_num; });
}
int tpu_bank_num(void) {
  return api::run(__func__, TPU_CALLER(), [&] { return chip().local_mem_banks; });
}
int tpu_eu_num(data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(), [&] {
    if (!dtype_is_known(dtype)) fail(ErrorKind::illegal_command, "dtype {} is not a data type", int(dtype));
    return eu_num(chip(), dtype);
  });
}
int tpu_local_mem_size_per_npu(void) {
  return api::run(__func__, TPU_CALLER(), [&] { return int(chip().local_mem_bytes); });
}
int tpu_l2_sram_size(void) {
  return api::run(__func__, TPU_CALLER(), [&] { return int(chip().l2_sram_bytes); });
}
unsigned long long tpu_l2_sram_get_start_addr(void) {
  return api::run(__func__, TPU_CALLER(), [&] { return chip().l2_sram_start; });
}
unsigned long long tpu_global_mem_get_start_addr(void) {
  return api::run(__func__, TPU_CALLER(), [&] { return chip().global_mem_start; });
}
unsigned long long tpu_local_mem_get_start_addr(void) {
  return api::run(__func__, TPU_CALLER(), [&] { return (unsigned long long)chip().local_mem_bus_start; });
}
int tpu_gdma_shape_limit(int dim) {
  return api::run(__func__, TPU_CALLER(), [&] {
    if (dim < TENSOR_N_DIM || dim > TENSOR_W_DIM)
      fail(ErrorKind::illegal_command, "dim = {}; expected TENSOR_N_DIM..TENSOR_W_DIM (0..3)", dim);
    return chip().gdma_shape_limit;
  });
}
int tpu_gdma_move_max_wstride_byte_len(void) {
  return api::run(__func__, TPU_CALLER(), [&] { return chip().gdma_max_wstride_bytes; });
}

// ---- host pointers into device memory -------------------------------------
void *tpu_global_mem_addr(global_addr_t addr) {
  return api::run(__func__, TPU_CALLER(), [&] {
    Memory &m = api::context().memory;
    if (m.is_l2(addr)) fail(ErrorKind::memory_fault, "{:#x} is an L2 SRAM address; use tpu_l2_sram_addr()", addr);
    void *p = m.system(addr, 0);
    m.mark_system_region(addr);  // what is written through it is no command: all counts as written
    return p;
  });
}
void *tpu_l2_sram_addr(l2_sram_addr_t addr) {
  return api::run(__func__, TPU_CALLER(), [&] {
    Memory &m = api::context().memory;
    if (!m.is_l2(addr)) fail(ErrorKind::memory_fault, "{:#x} is not an L2 SRAM address", addr);
    void *p = m.system(addr, 0);
    m.mark_system_region(addr);
    return p;
  });
}
namespace {
// A host pointer to byte `offset` of an NPU, valid to the end of that NPU:
// what is written through it is no command, so all of that counts as
// written (docs/cmodel.md "Uninitialised reads").
void *local_pointer(int npu, int64_t offset) {
  Memory &m = api::context().memory;
  void *p = m.local(npu, offset, 0);
  m.local_shadow().mark(uint64_t(1) << npu, offset, int64_t(m.chip().local_mem_bytes));
  return p;
}
}  // namespace

void *tpu_local_mem_addr(int start_idx, local_addr_t addr) {
  return api::run(__func__, TPU_CALLER(), [&] { return local_pointer(start_idx, int64_t(addr)); });
}
void *tpu_local_mem_addr_unified(local_addr_t addr) {
  return api::run(__func__, TPU_CALLER(), [&] {
    const ChipSpec &c = chip();
    return local_pointer(int(addr / c.local_mem_bytes), int64_t(addr % c.local_mem_bytes));
  });
}

// ---- cores and synchronisation ---------------------------------------------
// A kernel runs on the core cmodel_set_core chose (core 0 of 1 unless a
// device runtime launched it elsewhere), or on each core of a multi-core
// run (cmodel_run_cores, multicore.h). Alone on its core, barriers only wait
// for the engines, and messages between engines of one core need no waiting
// because the emulator executes every command when it is issued; in a
// multi-core run barriers and messages synchronise the cores.
int tpu_core_num(void) { return multicore::active() ? multicore::core_num() : host::core_state().group; }
int tpu_core_index(void) { return multicore::active() ? multicore::core_index() : host::core_state().index; }
void tpu_sync_core(void) {
  return api::run(__func__, TPU_CALLER(), TPU_ARGS(tpu_sync_core), [&] { api::context().timeline.sync(); });
}
void tpu_sync_all(void) {
  return api::run(__func__, TPU_CALLER(), TPU_ARGS(tpu_sync_all),
                  [&, name = __func__] { host::all_core_barrier(name); });
}

// Messages do nothing on one core, but they order engine work on the
// hardware: a recorded stream keeps them.
#define TPU_MSG(NAME, ACTION)                                                                  \
  void NAME(int msg_id, int count) {                                                           \
    return api::run(__func__, TPU_CALLER(), TPU_ARGS(NAME, msg_id, count), [&, name = __func__] { \
      if (multicore::active()) multicore::ACTION(name, msg_id, count);                         \
    });                                                                                        \
  }
// CDMA messages take a port, which on one chip chooses nothing: they use the
// same 128 slots as the other engines' messages (docs/cmodel.md).
#define TPU_CDMA_MSG(NAME, ACTION)                                                                      \
  void NAME(int port, int msg_id, int count) {                                                          \
    return api::run(__func__, TPU_CALLER(), TPU_ARGS(NAME, port, msg_id, count), [&, name = __func__] { \
      if (port < 0) fail(ErrorKind::illegal_command, "port = {}; CDMA ports are not negative", port);  \
      if (multicore::active()) multicore::ACTION(name, msg_id, count);                                  \
    });                                                                                                 \
  }
#define TPU_BASE_MSG_ID(NAME)                                                                  \
  void NAME(int base_msg_id) { return api::run(__func__, TPU_CALLER(), TPU_ARGS(NAME, base_msg_id), [] {}); }
TPU_MSG(tpu_bdc_send_msg, send)
TPU_MSG(tpu_bdc_wait_msg, wait)
TPU_MSG(tpu_gdma_send_msg, send)
TPU_MSG(tpu_gdma_wait_msg, wait)
TPU_MSG(tpu_hau_send_msg, send)
TPU_MSG(tpu_hau_wait_msg, wait)
TPU_MSG(tpu_sdma_send_msg, send)
TPU_MSG(tpu_sdma_wait_msg, wait)
TPU_CDMA_MSG(tpu_cdma_send_msg, send)
TPU_CDMA_MSG(tpu_cdma_wait_msg, wait)
TPU_BASE_MSG_ID(tpu_bdc_set_base_msg_id)
TPU_BASE_MSG_ID(tpu_gdma_set_base_msg_id)
TPU_BASE_MSG_ID(tpu_hau_set_base_msg_id)
TPU_BASE_MSG_ID(tpu_sdma_set_base_msg_id)
TPU_BASE_MSG_ID(tpu_cdma_set_base_msg_id)
#undef TPU_MSG
#undef TPU_CDMA_MSG
#undef TPU_BASE_MSG_ID

}  // extern "C"

// ---- generated boundaries (kernel/api/tpu_kernel.api, tag `wrap`) ------------
namespace cmodel::impl {

// The next command of the engine gets id `id`: later tpu_get_id_node calls
// count on from there.
void tpu_set_gdma_id(int gdma_id) {
  if (gdma_id < 0) fail(ErrorKind::illegal_command, "gdma_id = {}; command ids are not negative", gdma_id);
  g_ids.gdma_base = unsigned(gdma_id) - unsigned(api::context().timeline.stats(Engine::gdma).commands);
}

void tpu_set_bd_id(int bdc_id) {
  if (bdc_id < 0) fail(ErrorKind::illegal_command, "bdc_id = {}; command ids are not negative", bdc_id);
  g_ids.bdc_base = unsigned(bdc_id) - unsigned(api::context().timeline.stats(Engine::bdc).commands);
}

}  // namespace cmodel::impl
