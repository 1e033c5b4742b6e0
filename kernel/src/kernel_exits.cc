// kernel_exits.cc: exit(), abort() and assert() called by kernel code.
//
// A kernel that calls exit(0) would end the host tool with status 0 before
// any comparison ran: a failing kernel reported as a success. Kernel
// libraries built by this SDK's CMake functions (TpuCustomLayer.cmake,
// TpuKernelModule.cmake) are linked with --wrap for exit, _exit, _Exit,
// quick_exit, abort and __assert_fail, so their calls land here. During a
// run on the kernel's thread each becomes the run's error, naming what was
// called and from where, and the kernel stops; the process carries on.
// Outside a run they do what they always do.
//
// The same wrappers serve plugin hooks (the plugin library is linked the
// same way) run through cmodel_call_user_code: there the call ends the hook,
// which fails with a message naming it, and faults in the hook are caught
// as in a kernel.
//
// Kernels built some other way call libc directly. For them an exit
// handler, installed with the first run or user-code call, catches an
// exit() during a run or a call: the process then ends with status 70 and
// says why, instead of 0. (abort()
// and failed assertions are caught as SIGABRT: kernel_faults.h.)
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "api_guard.h"
#include "cmodel/call_site.h"
#include "cmodel_host.h"
#include "kernel_faults.h"
#include "session.h"

using namespace cmodel;

namespace {

// The status a process gets when kernel code called exit() during a run
// and nothing could stop it (EX_SOFTWARE).
constexpr int kExitDuringRun = 70;

// The user code cmodel_call_user_code runs on this thread, if any: where to
// jump back to and what it is called.
struct UserCode {
  sigjmp_buf *exit = nullptr;
  const char *what = nullptr;
};
thread_local UserCode t_user_code;

// How run_user_code came back.
constexpr int kReturned = 0, kEnded = 1;
static_assert(faults::kFaultJump != kReturned && faults::kFaultJump != kEnded);

// Free of C++ objects with destructors: the wrappers and the fault handler
// jump back into this frame.
int invoke_user_code(sigjmp_buf &exit, void (*fn)(void *), void *context) {
  if (const int jumped = sigsetjmp(exit, 1); jumped != 0) return jumped;
  fn(context);
  return kReturned;
}

// The status of a call that takes none (abort): exit(-1) is a status of
// its own (the vendor's CPU_ASSERT calls it).
constexpr int kNoStatus = INT_MIN;

// Records the kernel's fatal call ("exit(3)", "exit(-1)", or "abort()" for
// kNoStatus) as the run's error and stops the kernel; returns only outside
// a run. No C++ object may be alive in the callers: the stop jumps.
void record_fatal_call(const char *function, int status, const void *caller) {
  const std::string what =
      status == kNoStatus ? fmt::format("{}()", function) : fmt::format("{}({})", function, status);
  session::ErrorParts parts;
  parts.subject = t_user_code.exit ? fmt::format("{}", t_user_code.what) : std::string("the kernel");
  parts.what = "called " + what;
  parts.site = resolve_call_site(caller);
  session::set_error(fmt::format("{} called {} [{}]; called from {}", parts.subject, what,
                                 error_kind_name(ErrorKind::kernel_fault), parts.site.text),
                     parts);
}

void stop_run(const char *function, int status, const void *caller) {
  if (session::kernel_running_here()) {
    record_fatal_call(function, status, caller);
    api::stop_kernel();
  }
  if (t_user_code.exit) {
    record_fatal_call(function, status, caller);
    siglongjmp(*t_user_code.exit, kEnded);
  }
}

void record_failed_assert(const char *expression, const char *file, unsigned line, const char *function) {
  const std::string who = t_user_code.exit ? fmt::format("{}: ", t_user_code.what) : std::string();
  session::ErrorParts parts;
  parts.subject = t_user_code.exit ? t_user_code.what : "";
  parts.what = fmt::format("assert({}) failed", expression ? expression : "?");
  parts.site.function = function ? function : "?";
  parts.site.file = file ? file : "?";
  parts.site.line = int(line);
  parts.site.text = fmt::format("{} ({}:{})", parts.site.function, base_name(file ? file : "?"), line);
  session::set_error(fmt::format("{}{} in {} [{}]", who, parts.what, parts.site.text,
                                 error_kind_name(ErrorKind::kernel_assert)),
                     parts);
}

void exit_during_run() {
  if (t_user_code.exit) {
    // A host op or hook from a library linked without the wrappers: it
    // cannot be stopped here either (leaving exit() half done would run
    // destroyed objects), but it must not pass for a success.
    std::fprintf(stderr,
                 "tpu-sdk: %s called exit() (its library was not linked with the SDK's exit wrappers, so the call "
                 "could not be stopped); the process ends with status %d, not the status it asked for\n",
                 t_user_code.what, kExitDuringRun);
    std::fflush(stderr);
    _exit(kExitDuringRun);
  }
  if (!session::kernel_running_here()) return;
  std::fprintf(stderr,
               "tpu-sdk: kernel code called exit() during a run (a kernel library not built with the SDK's CMake "
               "functions, so the call could not be stopped); the process ends with status %d, not the status "
               "the kernel asked for\n",
               kExitDuringRun);
  std::fflush(stderr);
  _exit(kExitDuringRun);
}

}  // namespace

namespace {

// Whose code faulted, from what the caller named the call: its words
// before the last ("plugin hook inference_absadd" -> "plugin hook", "host
// op ap.topk" -> "host op").
std::string whose_code(const char *what) {
  const std::string text = what;
  const std::size_t space = text.rfind(' ');
  return space == std::string::npos || space == 0 ? std::string("user") : text.substr(0, space);
}

// The message of a hook stopped by a fault, once the handlers are gone.
void describe_user_fault(const char *what) {
  const std::string whose = whose_code(what);
  faults::Report report = faults::describe(faults::last_fault(), "", CallSite{}, whose.c_str());
  report.parts.subject = report.parts.subject.empty() ? what : fmt::format("{}: {}", what, report.parts.subject);
  session::set_error(fmt::format("{}: {}", what, report.line), report.parts);
}

int run_user_code(const char *what, void (*fn)(void *), void *context) {
  sigjmp_buf exit;
  session::watch_exits_during_runs();
  const UserCode outer = t_user_code;
  t_user_code = {&exit, what};
  int how = kReturned;
  {
    // With the run's time limit: a host op or hook that never returns is
    // stopped like a kernel that never does.
    const faults::Trap trap(exit, true);
    how = invoke_user_code(exit, fn, context);
  }
  t_user_code = outer;
  if (how == faults::kFaultJump) describe_user_fault(what);
  return how == kReturned ? 0 : -1;
}

}  // namespace

extern "C" int cmodel_call_user_code(const char *what, void (*fn)(void *), void *context) {
  if (!fn) return 0;
  if (session::kernel_running()) {  // the fault trap serves the kernel now
    fn(context);
    return 0;
  }
  return run_user_code(what ? what : "user code", fn, context);
}

namespace cmodel::session {

void watch_exits_during_runs() {
  static const bool installed = std::atexit(exit_during_run) == 0;
  (void)installed;
}

}  // namespace cmodel::session

extern "C" {

[[noreturn]] void __wrap_exit(int status) {
  stop_run("exit", status, __builtin_return_address(0));
  std::exit(status);
}

[[noreturn]] void __wrap__exit(int status) {
  stop_run("_exit", status, __builtin_return_address(0));
  _exit(status);
}

[[noreturn]] void __wrap__Exit(int status) {
  stop_run("_Exit", status, __builtin_return_address(0));
  std::_Exit(status);
}

[[noreturn]] void __wrap_quick_exit(int status) {
  stop_run("quick_exit", status, __builtin_return_address(0));
  std::quick_exit(status);
}

[[noreturn]] void __wrap_abort(void) {
  stop_run("abort", kNoStatus, __builtin_return_address(0));
  std::abort();
}

[[noreturn]] void __wrap___assert_fail(const char *expression, const char *file, unsigned int line,
                                       const char *function) {
  if (session::kernel_running_here()) {
    record_failed_assert(expression, file, line, function);
    api::stop_kernel();
  }
  if (t_user_code.exit) {
    record_failed_assert(expression, file, line, function);
    siglongjmp(*t_user_code.exit, kEnded);
  }
  std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file ? file : "?", line, function ? function : "?",
               expression ? expression : "?");
  std::abort();
}

}  // extern "C"
