// host_api.cc: cmodel_host.h, the host side of the emulator.
//
// Each function turns errors into -1 (or 0 for addresses) plus a message in
// cmodel_last_error(); a success clears the message.
#include "cmodel_host.h"
#include "tpu_kernel.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "api_guard.h"
#include "cmodel/bdc/tables.h"
#include "cmodel/context.h"
#include "cmodel/error.h"
#include "cmodel/local_watch.h"
#include "cmodel/run_totals.h"
#include "core_state.h"
#include "multicore.h"
#include "record.h"
#include "host_call.h"
#include "kernel_faults.h"
#include "session.h"

using namespace cmodel;
using cmodel::host::host_only_call;
using cmodel::host::refused_in_kernel;
using cmodel::host::finish_run;
using cmodel::host::host_call;
using cmodel::host::open_context;

namespace {

// Options outlive the emulator they were set on: cmodel_open applies them.
struct Options {
  bool hazards_as_warnings = false;
  UninitializedReads uninitialized = UninitializedReads::error;
  // unallocated_copies as cmodel_set_option set it; unset: the environment's,
  // read at each cmodel_open.
  std::optional<bool> unallocated_copies;
};

// Host copies may address global memory outside the buffers (the open
// emulator's setting, fixed at cmodel_open or by cmodel_set_option).
bool &unallocated_copies() {
  static bool allowed = false;
  return allowed;
}

// "error" (default) or "allow"; false for anything else.
bool parse_unallocated_copies(std::string_view text, bool &allow) {
  if (text != "error" && text != "allow") return false;
  allow = text == "allow";
  return true;
}

// The setting for an emulator being opened: the option when set, else
// TPU_SDK_UNALLOCATED_COPIES, else strict.
bool unallocated_copies_at_open(const std::optional<bool> &option) {
  if (option) return *option;
  const char *env = std::getenv("TPU_SDK_UNALLOCATED_COPIES");
  bool allow = false;
  if (env && *env && !parse_unallocated_copies(env, allow))
    fail(ErrorKind::config, "TPU_SDK_UNALLOCATED_COPIES=\"{}\" is not a setting; expected \"error\" or \"allow\"",
         env);
  return allow;
}

// The host pointer for a host copy of [addr, addr + bytes): inside one
// buffer or L2 SRAM, or, with unallocated copies allowed, anywhere inside
// global memory. A strict refusal says how to allow it.
uint8_t *host_copy_span(const char *api, uint64_t addr, uint64_t bytes) {
  Memory &memory = open_context(api).memory;
  GlobalMemory &global = memory.global();
  const bool in_global = !memory.is_l2(addr) && global.contains(addr);
  if (in_global && unallocated_copies()) return global.span_anywhere(addr, bytes);
  try {
    return memory.system(addr, bytes);
  } catch (const Error &e) {
    if (!in_global) throw;
    throw Error(e.kind(),
                fmt::format("{}. A host copy may address global memory outside the buffers, as on a board, with "
                            "TPU_SDK_UNALLOCATED_COPIES=allow or cmodel_set_option(\"unallocated_copies\", "
                            "\"allow\")",
                            e.what()),
                e.rule());
  }
}

// "error", "warning" or "off"; false for anything else.
bool parse_uninitialized(std::string_view text, UninitializedReads &out) {
  if (text == "error") out = UninitializedReads::error;
  else if (text == "warning") out = UninitializedReads::warning;
  else if (text == "off") out = UninitializedReads::off;
  else return false;
  return true;
}

Options &options() {
  static Options o = [] {
    Options initial;
    const char *env = std::getenv("TPU_SDK_HAZARDS");
    initial.hazards_as_warnings = env && std::string_view(env) == "warning";
    // An unknown value keeps the default: the check stays on.
    if (const char *reads = std::getenv("TPU_SDK_UNINITIALIZED_READS")) parse_uninitialized(reads, initial.uninitialized);
    return initial;
  }();
  return o;
}

void apply_options(Context &c) {
  c.hazards.as_warnings = options().hazards_as_warnings;
  c.hazards.uninitialized = options().uninitialized;
}

// To every core the open chip has made so far.
void apply_options_to_cores() {
  if (!current_context()) return;
  for (int k = 0; k < core_contexts(); ++k) apply_options(core_context(k));
}

// cmodel_batch_begin/end: the cmodel_run calls in between form one run.
struct Batch {
  bool open = false;
  bool started = false;  // its first run has begun the run
};
Batch &batch() {
  static Batch b;
  return b;
}

void write_stats_report(Context &context) {
  context.stats_report = stats_json(context.chip, context.timeline, context.stats, context.hazards.warnings);
}

// Who holds the emulator (cmodel_set_owner); empty = nobody.
std::string &owner() {
  static std::string name;
  return name;
}

void check_not_held(const char *api) {
  if (!owner().empty())
    fail(ErrorKind::config, "the emulator is held by {}; {} would pull it from under its device handles", owner(),
         api);
}

}  // namespace

namespace cmodel::host {
CoreState &core_state() {
  static CoreState state;
  return state;
}

CoreState launch() {
  if (multicore::active()) return {multicore::core_index(), multicore::core_num()};
  return core_state();
}

void all_core_barrier(const char *api) {
  if (multicore::active()) return multicore::sync_all(api);
  const int group = core_state().group;
  // The other cores of the group run at another time: waiting for them
  // would never end on the device's terms.
  if (group > 1)
    fail(ErrorKind::unsupported,
         "{} waits for the other {} core(s) of the launch group, but this run is core {} alone (cmodel_set_core); "
         "run the cores of a group together with cmodel_run_cores",
         api, group - 1, core_state().index);
  cmodel::api::context().timeline.sync();
}
}  // namespace cmodel::host

using cmodel::host::core_state;

bool cmodel::host::batch_open() { return batch().open; }

void cmodel::host::finish_run(Context &context) {
  context.timeline.sync();
  write_stats_report(context);
  context.trace_run_finished();
  run_totals().add(context.timeline, context.stats, context.hazards.warnings);
}

extern "C" {

int cmodel_open(const char *chip) {
  return host_only_call(__func__, [&] {
    check_not_held(__func__);
    const ChipSpec *spec = chip ? find_chip(chip) : nullptr;
    if (!spec) fail(ErrorKind::config, "unknown chip \"{}\"; choose \"bm1684x\" or \"bm1688\"", chip ? chip : "(null)");
    const bool allow_unallocated = unallocated_copies_at_open(options().unallocated_copies);
    if (current_context()) multicore::reset_options();  // the replaced emulator's, as cmodel_close
    set_current_context(nullptr);  // release the old memories before reserving new ones
    set_current_context(std::make_unique<Context>(*spec));
    unallocated_copies() = allow_unallocated;
    bdc::install_static_tables(current_context()->memory);
    apply_options(*current_context());
    core_state() = {};
    local_watch() = LocalWatch{};
    batch() = Batch{};
    run_totals() = RunTotals{};
  });
}

void cmodel_close(void) {
  if (refused_in_kernel(__func__)) return;
  // cmodel_close returns nothing: a refusal only leaves its message.
  if (host_call(__func__, [] { check_not_held("cmodel_close"); }) == 0) {
    set_current_context(nullptr);
    multicore::reset_options();
    session::local_entry() = false;
    local_watch() = LocalWatch{};
    batch() = Batch{};
    run_totals() = RunTotals{};
  }
}

int cmodel_set_core(int core_index, int core_num) {
  return host_only_call(__func__, [&] {
    Context &c = open_context(__func__);
    const int cores = multicore::chip_cores(c.chip.core_num);
    if (core_index < 0 || core_index >= cores)
      fail(ErrorKind::config, "core {} does not exist on {} (cores 0..{})", core_index, c.chip.name, cores - 1);
    if (core_num < 1 || core_num > cores)
      fail(ErrorKind::config, "a launch group of {} cores does not fit {} ({} cores)", core_num, c.chip.name, cores);
    core_state() = {core_index, core_num};
  });
}

int cmodel_set_local_entry(int on) {
  return host_only_call(__func__, [&] { session::local_entry() = on != 0; });
}

int cmodel_set_owner(const char *name) {
  return host_only_call(__func__, [&] {
    if (name && !owner().empty() && owner() != name)
      fail(ErrorKind::config, "the emulator is already held by {}", owner());
    owner() = name ? name : "";
  });
}

const char *cmodel_chip(void) {
  const Context *c = current_context();
  return c ? c->chip.name : "";
}

// cmodel_global_alloc[_aligned] under `function`'s name in its errors.
static uint64_t global_alloc(const char *function, uint64_t bytes, uint64_t alignment) {
  uint64_t addr = 0;
  host_only_call(function, [&] {
    GlobalMemory &global = open_context(function).memory.global();
    if (!std::has_single_bit(alignment))
      fail(ErrorKind::config, "alignment {} of a global buffer is not a power of two", alignment);
    addr = global.allocate(bytes, alignment);
    if (!addr)
      fail(ErrorKind::memory_fault, "cannot allocate {} of global memory ({} are in use)", Bytes{bytes},
           Bytes{global.bytes_allocated()});
  });
  return addr;
}

uint64_t cmodel_global_alloc(uint64_t bytes) { return global_alloc(__func__, bytes, 512); }

uint64_t cmodel_global_alloc_aligned(uint64_t bytes, uint64_t alignment) {
  return global_alloc(__func__, bytes, alignment);
}

uint64_t cmodel_global_size(void) {
  Context *c = current_context();
  return c ? c->memory.global().size() : 0;
}

int cmodel_set_global_mem_size(uint64_t bytes) {
  return host_only_call(__func__, [&] {
    Context *c = current_context();
    if (c) c->memory.global().check_unused();
    set_global_mem_size(bytes, __func__);
    if (c) c->memory.global().resize(global_mem_size(c->chip));
  });
}

void cmodel_global_free(uint64_t addr) {
  host_only_call(__func__, [&] {
    if (!open_context(__func__).memory.global().release(addr))
      fail(ErrorKind::memory_fault, "{:#x} is not the start of an allocated global buffer", addr);
  });
}

int cmodel_global_write(uint64_t addr, const void *src, uint64_t bytes) {
  return host_only_call(__func__, [&] {
    uint8_t *dst = host_copy_span(__func__, addr, bytes);
    if (bytes && !src) fail(ErrorKind::config, "source pointer is null");
    if (bytes) std::memcpy(dst, src, bytes);
    current_context()->memory.mark_system(addr, bytes);
  });
}

int cmodel_global_poison(uint64_t addr, uint64_t bytes) {
  return host_only_call(__func__, [&] {
    Memory &memory = open_context(__func__).memory;
    uint8_t *dst = memory.system(addr, bytes);
    if (bytes) std::memset(dst, Memory::poison_byte, bytes);
    memory.unmark_system(addr, bytes);
  });
}

// Every core's local memory: a multi-core run leaves bytes in each.
int cmodel_local_poison(int fill) {
  return host_only_call(__func__, [&] {
    open_context(__func__);
    for (int k = 0; k < cmodel::core_contexts(); ++k) cmodel::core_context(k).memory.poison_local(fill != 0);
  });
}

namespace {

void copy_local(const char *api, Context &core, void *dst, int npu, uint64_t offset, uint64_t bytes) {
  const uint8_t *src = core.memory.local(npu, int64_t(offset), bytes);
  if (bytes && !dst) fail(ErrorKind::config, "{}: destination pointer is null", api);
  if (bytes) std::memcpy(dst, src, bytes);
}

}  // namespace

int cmodel_local_read(void *dst, int npu, uint64_t offset, uint64_t bytes) {
  return host_call(__func__, [&] { copy_local(__func__, open_context(__func__), dst, npu, offset, bytes); });
}

int cmodel_local_read_core(void *dst, int core, int npu, uint64_t offset, uint64_t bytes) {
  return host_call(__func__, [&] {
    Context &open = open_context(__func__);
    const int cores = multicore::chip_cores(open.chip.core_num);
    if (core < 0 || core >= cores)
      fail(ErrorKind::config, "core {} does not exist on {} (cores 0..{}; the option \"cores\" emulates more)", core,
           open.chip.name, cores - 1);
    copy_local(__func__, cmodel::core_context(core), dst, npu, offset, bytes);
  });
}

int cmodel_global_read(void *dst, uint64_t addr, uint64_t bytes) {
  return host_only_call(__func__, [&] {
    const uint8_t *src = host_copy_span(__func__, addr, bytes);
    if (bytes && !dst) fail(ErrorKind::config, "destination pointer is null");
    if (bytes) std::memcpy(dst, src, bytes);
  });
}

int cmodel_global_copy(uint64_t dst, uint64_t src, uint64_t bytes) {
  return host_only_call(__func__, [&] {
    // Both ranges are checked before a byte moves; memmove: overlap copies
    // as if the source was read first.
    const uint8_t *from = host_copy_span(__func__, src, bytes);
    uint8_t *to = host_copy_span(__func__, dst, bytes);
    if (bytes) std::memmove(to, from, bytes);
    current_context()->memory.mark_system(dst, bytes);
  });
}

int cmodel_global_fill(uint64_t addr, const void *pattern, uint64_t pattern_bytes, uint64_t bytes) {
  return host_only_call(__func__, [&] {
    uint8_t *dst = host_copy_span(__func__, addr, bytes);
    if (!pattern || pattern_bytes == 0)
      fail(ErrorKind::config, "the fill pattern is {} ({} bytes)", pattern ? "empty" : "a null pointer", pattern_bytes);
    if (bytes == 0) return;
    // One pattern, then the filled part doubled until the range is full.
    std::memcpy(dst, pattern, std::min(pattern_bytes, bytes));
    for (uint64_t filled = std::min(pattern_bytes, bytes); filled < bytes; filled *= 2)
      std::memcpy(dst + filled, dst, std::min(filled, bytes - filled));
    current_context()->memory.mark_system(addr, bytes);
  });
}

uint64_t cmodel_global_allocated(void) {
  Context *c = current_context();
  return c ? c->memory.global().bytes_allocated() : 0;
}

int cmodel_run(void (*kernel)(const void *), const void *arg) {
  // The whole run: another thread's host call waits for it (session.h).
  const std::lock_guard<std::recursive_mutex> lock(session::emulator_mutex());
  Context *context = nullptr;
  const bool continuing = batch().open && batch().started;
  const int status = host_only_call(__func__, [&] {
    context = &open_context(__func__);
    if (!kernel) fail(ErrorKind::config, "kernel function pointer is null");
    if (!continuing) {
      context->begin_run();
      tpu_initialize();  // command ids count from 0 again, as the firmware does per run
    }
  });
  if (status != 0) return status;
  batch().started = batch().open;
  // The kernel's own errors are recorded by the API call that found them.
  record::run_started(*context, continuing);
  const bool finished = session::run_kernel(kernel, arg);
  // A batch keeps its engines busy across its runs; cmodel_batch_end waits.
  if (batch().open)
    write_stats_report(*context);
  else
    finish_run(*context);
  const bool recorded = record::run_finished(*context, finished);
  if (!finished || !recorded) return -1;
  session::last_error().clear();
  return 0;
}

int cmodel_batch_begin(void) {
  return host_only_call(__func__, [&] {
    open_context(__func__);
    if (batch().open) fail(ErrorKind::config, "a batch is already open; end it with cmodel_batch_end() first");
    batch() = Batch{true, false};
  });
}

int cmodel_batch_end(void) {
  return host_only_call(__func__, [&] {
    const Batch ended = batch();
    batch() = Batch{};
    if (!ended.open) fail(ErrorKind::config, "no batch is open (cmodel_batch_begin() was not called)");
    Context *context = current_context();
    if (!context || !ended.started) return;  // no run to finish
    if (context->timeline.in_parallel()) context->parallel_end();  // as tpu_initialize does
    finish_run(*context);
  });
}

namespace {

// run_timeout = seconds (a number >= 0; 0 = no limit).
void set_run_timeout(std::string_view text) {
  const std::string value(text);
  char *end = nullptr;
  const double seconds = std::strtod(value.c_str(), &end);
  if (value.empty() || *end || !(seconds >= 0) || seconds > 1e9)
    fail(ErrorKind::config, "option run_timeout = \"{}\"; expected a number of seconds in [0, 1e9] (0: no limit)",
         value);
  faults::set_run_timeout_seconds(seconds);
}

// "error", "allow", or "" (back to TPU_SDK_UNALLOCATED_COPIES, read now
// for the open emulator).
void set_unallocated_copies(std::string_view text) {
  bool allow = false;
  if (!text.empty() && !parse_unallocated_copies(text, allow))
    fail(ErrorKind::config,
         "option unallocated_copies = \"{}\"; expected \"error\", \"allow\" or \"\" (the environment's setting)",
         text);
  std::optional<bool> option;
  if (!text.empty()) option = allow;
  const bool now = unallocated_copies_at_open(option);
  options().unallocated_copies = option;
  if (current_context()) unallocated_copies() = now;
}

}  // namespace

int cmodel_set_option(const char *name, const char *value) {
  return host_only_call(__func__, [&] {
    const std::string_view key = name ? name : "", val = value ? value : "";
    if (key == "run_timeout") return set_run_timeout(val);
    if (key == "cores") return multicore::set_cores_option(std::string(val));
    if (key == "core_schedule") return multicore::set_schedule_option(std::string(val));
    if (key == "unallocated_copies") return set_unallocated_copies(val);
    if (key == "uninitialized_reads") {
      if (!parse_uninitialized(val, options().uninitialized))
        fail(ErrorKind::config, "option uninitialized_reads = \"{}\"; expected \"error\", \"warning\" or \"off\"", val);
      apply_options_to_cores();
      return;
    }
    if (key != "hazards")
      fail(ErrorKind::config,
           "unknown option \"{}\"; the options are: cores, core_schedule, hazards, run_timeout, "
           "unallocated_copies, uninitialized_reads",
           key);
    if (val != "error" && val != "warning")
      fail(ErrorKind::config, "option hazards = \"{}\"; expected \"error\" or \"warning\"", val);
    options().hazards_as_warnings = val == "warning";
    apply_options_to_cores();
  });
}

int cmodel_watch_local(const int64_t *read_ranges, int read_count, const int64_t *write_ranges, int write_count) {
  return host_only_call(__func__, [&] {
    open_context(__func__);
    if (read_count < 0 || write_count < 0 || (read_count && !read_ranges) || (write_count && !write_ranges))
      fail(ErrorKind::config, "cmodel_watch_local: {} read and {} write ranges, with a null array", read_count,
           write_count);
    LocalWatch &watch = local_watch();
    watch = LocalWatch{};
    watch.armed = true;
    for (int i = 0; i < read_count; ++i) watch.reads.emplace_back(read_ranges[2 * i], read_ranges[2 * i + 1]);
    for (int i = 0; i < write_count; ++i) watch.writes.emplace_back(write_ranges[2 * i], write_ranges[2 * i + 1]);
  });
}

void cmodel_unwatch_local(void) {
  if (!refused_in_kernel(__func__)) local_watch().armed = false;
}

int cmodel_local_watch_violation(int64_t *lo, int64_t *hi, int *write) {
  const LocalWatch::Violation &v = local_watch().violation;
  if (!v.found) return 0;
  if (lo) *lo = v.lo;
  if (hi) *hi = v.hi;
  if (write) *write = v.write;
  return 1;
}

const char *cmodel_last_error(void) { return session::last_error().c_str(); }

const char *cmodel_last_error_readable(void) {
  // Per thread, as the message itself; valid until the next call.
  thread_local std::string text;
  text = session::readable_error();
  return text.c_str();
}

const char *cmodel_last_run_stats(void) {
  const Context *c = current_context();
  return c && !c->stats_report.empty() ? c->stats_report.c_str() : "{}";
}

const char *cmodel_total_stats(void) {
  static std::string report;
  const Context *c = current_context();
  if (!c) return "{}";
  report = totals_json(c->chip, run_totals());
  return report.c_str();
}

int cmodel_total_stats_reset(void) {
  return host_only_call(__func__, [&] {
    open_context(__func__);
    run_totals() = RunTotals{};
  });
}

}  // extern "C"
