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
// Kernels built some other way call libc directly. For them an exit
// handler, installed with the first run, catches an exit() during a run:
// the process then ends with status 70 and says why, instead of 0. (abort()
// and failed assertions are caught as SIGABRT: kernel_faults.h.)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "api_guard.h"
#include "cmodel/call_site.h"
#include "session.h"

using namespace cmodel;

namespace {

// The status a process gets when kernel code called exit() during a run
// and nothing could stop it (EX_SOFTWARE).
constexpr int kExitDuringRun = 70;

// Records the kernel's fatal call ("exit(3)", or "abort()" when status is
// negative) as the run's error and stops the kernel; returns only outside
// a run. No C++ object may be alive in the callers: the stop jumps.
void record_fatal_call(const char *function, int status, const void *caller) {
  const std::string what = status < 0 ? fmt::format("{}()", function) : fmt::format("{}({})", function, status);
  session::last_error() = fmt::format("the kernel called {} [{}]; called from {}", what,
                                      error_kind_name(ErrorKind::kernel_fault), describe_call_site(caller));
}

void stop_run(const char *function, int status, const void *caller) {
  if (!session::kernel_running_here()) return;
  record_fatal_call(function, status, caller);
  api::stop_kernel();
}

void record_failed_assert(const char *expression, const char *file, unsigned line, const char *function) {
  session::last_error() = fmt::format("assert({}) failed in {} ({}:{}) [{}]", expression ? expression : "?",
                                      function ? function : "?", base_name(file ? file : "?"), line,
                                      error_kind_name(ErrorKind::kernel_assert));
}

void exit_during_run() {
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
  stop_run("abort", -1, __builtin_return_address(0));
  std::abort();
}

[[noreturn]] void __wrap___assert_fail(const char *expression, const char *file, unsigned int line,
                                       const char *function) {
  if (session::kernel_running_here()) {
    record_failed_assert(expression, file, line, function);
    api::stop_kernel();
  }
  std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file ? file : "?", line, function ? function : "?",
               expression ? expression : "?");
  std::abort();
}

}  // extern "C"
