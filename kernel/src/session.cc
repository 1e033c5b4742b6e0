// session.cc: the run boundary and error reporting of every API call.
#include "session.h"

#include <unistd.h>

#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api_guard.h"
#include "cmodel/call_site.h"
#include "cmodel/source_site.h"
#include "kernel_faults.h"
#include "cmodel/bdc/tables.h"
#include "cmodel/context.h"

namespace cmodel {
namespace {

// The cores of the open chip: [0] always, more once a multi-core run asks
// (core_context); `g_current` is the core whose turn it is.
std::vector<std::unique_ptr<Context>> g_cores;
Context *g_current = nullptr;
// sigsetjmp/siglongjmp: a jump out of a fault handler must also unblock
// the signal it was handling. Per thread: each core of a multi-core run
// has its own run boundary.
thread_local sigjmp_buf g_kernel_exit;

// How invoke_with_exit came back: the kernel returned, stop_kernel() jumped
// (the message is already recorded) or a fault handler did.
constexpr int kFinished = 0, kStopped = 1;
static_assert(faults::kFaultJump != kFinished && faults::kFaultJump != kStopped);

// Kept free of C++ objects with destructors: stop_kernel() and the fault
// handler jump back into this frame, which must not skip any.
int invoke_with_exit(void (*kernel)(const void *), const void *arg) {
  if (const int jumped = sigsetjmp(g_kernel_exit, 1); jumped != 0) return jumped;
  kernel(arg);
  return kFinished;
}

int run_trapping_faults(void (*kernel)(const void *), const void *arg) {
  session::watch_exits_during_runs();
  // A fault or time-out names the kernel's last API call: not one of an
  // earlier run's (the replay fields of the call stay).
  current_call().api = nullptr;
  current_call().caller = nullptr;
  source_site() = SourceSite{};
  const faults::Trap trap(g_kernel_exit);
  session::g_kernel_pthread = pthread_self();
  session::g_kernel_running = true;
  const int how = invoke_with_exit(kernel, arg);
  session::g_kernel_running = false;
  return how;
}

}  // namespace

Context *current_context() { return g_current; }
void set_current_context(std::unique_ptr<Context> context) {
  g_current = nullptr;
  g_cores.clear();  // releases the old memories before the caller reserves new ones
  if (!context) return;
  g_cores.push_back(std::move(context));
  g_current = g_cores.front().get();
}

Context &core_context(int core) {
  Context &first = *g_cores.front();
  while (int(g_cores.size()) <= core) {
    auto next = std::make_unique<Context>(first.chip, first.memory.shared());
    next->core_index = int(g_cores.size());
    next->hazards.as_warnings = first.hazards.as_warnings;
    next->hazards.uninitialized = first.hazards.uninitialized;
    bdc::install_static_tables(next->memory);
    g_cores.push_back(std::move(next));
  }
  return *g_cores[size_t(core)];
}

int core_contexts() { return int(g_cores.size()); }

void select_core(int core) { g_current = g_cores[size_t(core)].get(); }

namespace session {

// Per thread: a thread's failure is not overwritten by another thread's
// success before it reads it.
std::string &last_error() {
  thread_local std::string message;
  return message;
}

std::recursive_mutex &emulator_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

bool g_kernel_running = false;
pthread_t g_kernel_pthread{};

bool kernel_running() { return g_kernel_running; }

bool &local_entry() {
  static bool on = false;
  return on;
}

namespace {

// How a kernel came back, a fault recorded as the run's error; true if it
// finished. Described outside the handler: reading debug information is no
// work for a signal handler.
bool finished(int how) {
  if (how == faults::kFaultJump) {
    const CallInfo &call = current_call();
    faults::Report report = faults::describe(faults::last_fault(), call.api ? call.api : "?", resolve_call(call));
    set_error(std::move(report.line), report.parts);
  }
  return how == kFinished;
}

}  // namespace

bool run_kernel(void (*kernel)(const void *), const void *arg) { return finished(run_trapping_faults(kernel, arg)); }

bool run_core_kernel(void (*kernel)(const void *), const void *arg) {
  current_call().api = nullptr;
  current_call().caller = nullptr;
  return finished(invoke_with_exit(kernel, arg));
}

sigjmp_buf &kernel_exit() { return g_kernel_exit; }

}  // namespace session

namespace api {

Context &context() {
  if (Context *c = current_context()) return *c;
  fail(ErrorKind::config, "no emulator is open; call cmodel_open(\"bm1684x\") or cmodel_open(\"bm1688\") first");
}

void report_error(const char *api, const void *caller, ErrorKind kind, const char *message, const char *rule,
                  const char *title) {
  CallInfo call = current_call();  // keeps a replay's position in its stream
  call.api = api;
  call.caller = caller;
  session::ErrorParts parts;
  parts.subject = api;
  // "illegal command [DMA-14]": our class, then the vendor rule's id; or
  // the error's own title, with the class.
  parts.what = rule ? fmt::format("{} [{}]", error_kind_name(kind), rule) : error_kind_name(kind);
  if (title) parts.what = fmt::format("{} ({})", title, parts.what);
  parts.details = message;
  parts.site = resolve_call(call);
  session::set_error(fmt::format("{}: {} [{}]{}; called from {}", api, message, error_kind_name(kind),
                                 rule ? fmt::format(" [{}]", rule) : std::string(), parts.site.text),
                     parts);
}

void refuse_foreign_thread(const char *api) {
  fail(ErrorKind::config,
       "{} was called from a thread other than the one running the kernel: a kernel runs on one thread, and the "
       "emulator serves one thread at a time (docs/cmodel.md, \"Threads\")",
       api);
}

void timed_out() {
  faults::g_timeout_pending = 0;
  fail(ErrorKind::timeout,
       "the kernel ran past the run's time limit of {} s and was stopped at this call (raise the limit with "
       "TPU_SDK_RUN_TIMEOUT, cmodel_set_option(\"run_timeout\", ...) or the tools' --timeout)",
       faults::run_timeout_seconds());
}

void stop_kernel() {
  if (session::kernel_running_here()) siglongjmp(g_kernel_exit, kStopped);
}

void not_implemented(const char *api, const void *caller) {
  report_error(api, caller, ErrorKind::unsupported,
               fmt::format("{} is not implemented in this SDK", api).c_str());
  stop_kernel();
}

}  // namespace api
}  // namespace cmodel

using namespace cmodel;

namespace {

// The full path of `file` as __FILE__ spelled it: a compiler cache may have
// made it relative to a build directory; the debug information at the
// caller's address names the same file in full.
std::string full_path(const char *file, const void *caller) {
  if (!file) return "?";
  if (file[0] == '/') return file;
  const CallSite site = resolve_call_site(caller);
  return !site.file.empty() && base_name(site.file.c_str()) == base_name(file) ? site.file : std::string(file);
}

// Records a kernel's own failure: `what` ("TPUKERNEL_ASSERT(n > 0) failed",
// "TPUKERNEL_ERR") and the kernel's message. In the one-line form the file
// is named as every call site is ("kernel.c:42", describe_call_site), not
// as the compiler spelled __FILE__ (a full path in out-of-tree builds).
void record_kernel_failure(const char *what, const char *message, const char *file, int line, const char *func,
                           const void *caller) {
  session::ErrorParts parts;
  parts.what = what;
  parts.details = message;
  parts.split_details = false;
  parts.site.function = func ? func : "?";
  parts.site.file = full_path(file, caller);
  parts.site.line = line;
  parts.site.text = fmt::format("{} ({}:{})", parts.site.function, base_name(file ? file : "?"), line);
  const std::string headline = *message ? fmt::format("{}: {}", what, message) : std::string(what);
  session::set_error(fmt::format("{} [{}]; in {}", headline, error_kind_name(ErrorKind::kernel_assert),
                                 parts.site.text),
                     parts);
}

// The failure recorded, then the stop. No C++ object may be alive at
// stop_kernel(): the jump skips destructors. The handlers are noreturn (as
// the vendor's are): outside a run (kernel code called directly by a host
// program) there is no kernel to stop, so the message goes to stderr and
// the process aborts, as a failed C assert does.
[[noreturn]] void fail_kernel(const char *what, const char *message, const char *file, int line, const char *func,
                              const void *caller) {
  record_kernel_failure(what, message, file, line, func, caller);
  api::stop_kernel();
  std::fprintf(stderr, "%s (outside a kernel run: aborting)\n", session::last_error().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

extern "C" void tpu_kernel_assert_failed(const char *expr, const char *file, int line, const char *func,
                                         const char *format, ...) {
  char what[300];
  std::snprintf(what, sizeof what, "TPUKERNEL_ASSERT(%s) failed", expr ? expr : "?");
  char message[1024] = "";
  if (format) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
  }
  fail_kernel(what, message, file, line, func, __builtin_return_address(0));
}

// TPUKERNEL_ERR: the vendor logs the message and then fails an assertion;
// here the message becomes the kernel's error and the kernel stops.
extern "C" void tpu_kernel_error(const char *file, int line, const char *func, const char *format, ...) {
  char message[1100] = "";
  if (format) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
  }
  std::size_t length = std::strlen(message);
  while (length > 0 && message[length - 1] == '\n') message[--length] = '\0';
  fail_kernel("TPUKERNEL_ERR", message, file, line, func, __builtin_return_address(0));
}

// Support declarations of the vendor header: a backtrace printer and the
// switch that enables cmodel assertions (always on here).
extern "C" void __print_trace(void) {}
extern "C" int get_atomic_cmodel_assert_enable(void) { return 1; }

// The firmware's log function, for kernels built without USING_CMODEL.
extern "C" void fw_log(char *format, ...) {
  if (!format) return;
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
}

extern "C" void tpu_kernel_log(int level, const char *format, ...) {
  static const char *const prefixes[] = {"[kernel error] ", "[kernel] ", "[kernel debug] "};
  std::fputs(prefixes[level < 0 || level > 2 ? 1 : level], stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
}
