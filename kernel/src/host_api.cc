// host_api.cc: cmodel_host.h, the host side of the emulator.
//
// Each function turns errors into -1 (or 0 for addresses) plus a message in
// cmodel_last_error(); a success clears the message.
#include "cmodel_host.h"
#include "tpu_kernel.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "cmodel/bdc/tables.h"
#include "cmodel/context.h"
#include "cmodel/error.h"
#include "record.h"
#include "host_call.h"
#include "session.h"

using namespace cmodel;
using cmodel::host::check_not_in_kernel;
using cmodel::host::host_call;
using cmodel::host::open_context;

namespace {

// Options outlive the emulator they were set on: cmodel_open applies them.
struct Options {
  bool hazards_as_warnings = false;
};
Options &options() {
  static Options o = [] {
    Options initial;
    const char *env = std::getenv("TPU_SDK_HAZARDS");
    initial.hazards_as_warnings = env && std::string_view(env) == "warning";
    return initial;
  }();
  return o;
}

void apply_options(Context &c) { c.hazards.as_warnings = options().hazards_as_warnings; }

}  // namespace

extern "C" {

int cmodel_open(const char *chip) {
  return host_call(__func__, [&] {
    check_not_in_kernel(__func__);
    const ChipSpec *spec = chip ? find_chip(chip) : nullptr;
    if (!spec) fail(ErrorKind::config, "unknown chip \"{}\"; choose \"bm1684x\" or \"bm1688\"", chip ? chip : "(null)");
    set_current_context(nullptr);  // release the old memories before reserving new ones
    set_current_context(std::make_unique<Context>(*spec));
    bdc::install_static_tables(current_context()->memory);
    apply_options(*current_context());
  });
}

void cmodel_close(void) {
  if (!session::kernel_running()) set_current_context(nullptr);
}

const char *cmodel_chip(void) {
  const Context *c = current_context();
  return c ? c->chip.name : "";
}

uint64_t cmodel_global_alloc(uint64_t bytes) {
  uint64_t addr = 0;
  host_call(__func__, [&] {
    addr = open_context(__func__).memory.global().allocate(bytes);
    if (!addr)
      fail(ErrorKind::memory_fault, "cannot allocate {} bytes of global memory ({} bytes are in use)", bytes,
           current_context()->memory.global().bytes_allocated());
  });
  return addr;
}

void cmodel_global_free(uint64_t addr) {
  host_call(__func__, [&] {
    if (!open_context(__func__).memory.global().release(addr))
      fail(ErrorKind::memory_fault, "{:#x} is not the start of an allocated global buffer", addr);
  });
}

int cmodel_global_write(uint64_t addr, const void *src, uint64_t bytes) {
  return host_call(__func__, [&] {
    uint8_t *dst = open_context(__func__).memory.system(addr, bytes);
    if (bytes && !src) fail(ErrorKind::config, "source pointer is null");
    if (bytes) std::memcpy(dst, src, bytes);
  });
}

int cmodel_global_read(void *dst, uint64_t addr, uint64_t bytes) {
  return host_call(__func__, [&] {
    const uint8_t *src = open_context(__func__).memory.system(addr, bytes);
    if (bytes && !dst) fail(ErrorKind::config, "destination pointer is null");
    if (bytes) std::memcpy(dst, src, bytes);
  });
}

int cmodel_run(void (*kernel)(const void *), const void *arg) {
  Context *context = nullptr;
  const int status = host_call(__func__, [&] {
    check_not_in_kernel(__func__);
    context = &open_context(__func__);
    if (!kernel) fail(ErrorKind::config, "kernel function pointer is null");
    context->begin_run();
    tpu_initialize();  // command ids count from 0 again, as the firmware does per run
  });
  if (status != 0) return status;
  // The kernel's own errors are recorded by the API call that found them.
  record::run_started(*context);
  const bool finished = session::run_kernel(kernel, arg);
  context->timeline.sync();  // tpu_poll: wait for every engine
  context->stats_report =
      stats_json(context->chip, context->timeline, context->stats, context->hazards.warnings);
  const bool recorded = record::run_finished(*context, finished);
  if (!finished || !recorded) return -1;
  session::last_error().clear();
  return 0;
}

int cmodel_set_option(const char *name, const char *value) {
  return host_call(__func__, [&] {
    const std::string_view key = name ? name : "", val = value ? value : "";
    if (key != "hazards")
      fail(ErrorKind::config, "unknown option \"{}\"; the options are: hazards", key);
    if (val != "error" && val != "warning")
      fail(ErrorKind::config, "option hazards = \"{}\"; expected \"error\" or \"warning\"", val);
    options().hazards_as_warnings = val == "warning";
    if (Context *c = current_context()) apply_options(*c);
  });
}

const char *cmodel_last_error(void) { return session::last_error().c_str(); }

const char *cmodel_last_run_stats(void) {
  const Context *c = current_context();
  return c && !c->stats_report.empty() ? c->stats_report.c_str() : "{}";
}

}  // extern "C"
