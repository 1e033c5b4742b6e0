// kernel_faults.h: SIGFPE, SIGSEGV, SIGBUS, SIGILL and SIGABRT raised by
// kernel code, bad pointers handed to API functions, and the run's time
// limit.
//
// A vendor kernel that divides by zero or writes through a wild pointer
// would kill the whole host process without a word. While a kernel runs,
// these signals are caught; when the faulting instruction is kernel code
// (not the emulator's or the runtime's own), the handler jumps back to the
// run boundary, which turns the fault into the run's error:
//
//   SIGFPE (integer divide by zero) in kernel code [kernel fault];
//   in my_kernel (kernel.c:42)
//
// A fault in the SDK's own code while it serves an API call of the kernel
// is taken for a bad pointer argument (a dim4* of 0x10) and named so:
//
//   SIGSEGV (address not mapped) at address 0x10 inside tpu_bdc_fp_add: a
//   pointer argument is not valid [kernel fault]; called from kernel.c:42
//
// Any other fault in the SDK's own code is the SDK's bug: it keeps the
// behaviour the process had before (the default action, or a sanitizer's
// report), as does any fault while no kernel runs. SIGABRT (abort(), a
// failed assert() in code built without our wrappers, std::terminate) on
// the kernel's thread is always the kernel's: abort raises it from libc.
//
// The time limit: a kernel still running after run_timeout_seconds() (600 s
// unless TPU_SDK_RUN_TIMEOUT or cmodel_set_option("run_timeout", ...) says
// otherwise; 0 = none) is stopped. A timer signal lands on the kernel's
// thread; when it interrupts kernel code the handler jumps out at once,
// when it interrupts an API call the call's guard stops the kernel at the
// next API call (timeout_pending()).
#pragma once

#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <memory>
#include <string>

#include "session.h"

namespace cmodel::faults {

// What the handler saw; signal 0 when no fault ended the run.
struct Fault {
  int signal = 0;
  int code = 0;                 // siginfo's si_code
  std::uintptr_t pc = 0;        // the faulting instruction
  std::uintptr_t address = 0;   // si_addr: the address accessed (SIGSEGV, SIGBUS)
  std::uintptr_t stack_pointer = 0;
  bool in_api = false;          // in the SDK's code, serving an API call
  bool timed_out = false;       // the run's time limit, not a signal of the kernel's
};

// Catches the three signals on the calling thread for the lifetime of the
// object and restores the previous handlers and signal stack afterwards.
// A caught fault jumps to `exit` with siglongjmp(exit, kFaultJump).
class Trap {
 public:
  // `time_limit`: whether the run's time limit applies (kernels; not the
  // plugin hooks cmodel_call_user_code runs).
  explicit Trap(sigjmp_buf &exit, bool time_limit = true);
  ~Trap();
  Trap(const Trap &) = delete;
  Trap &operator=(const Trap &) = delete;
};

// A multi-core run (kernel/src/multicore.cc): the core whose turn it is
// runs on the calling thread; faults there jump to `exit`, and the time
// limit (its timer aimed at the thread that set up the Trap) is passed on
// to this thread.
void adopt_kernel_thread(sigjmp_buf &exit);

// The calling thread's own signal stack while the object lives (each core
// thread of a multi-core run needs one: a stack overflow must still be
// reported).
class ThreadSignalStack {
 public:
  ThreadSignalStack();
  ~ThreadSignalStack();
  ThreadSignalStack(const ThreadSignalStack &) = delete;
  ThreadSignalStack &operator=(const ThreadSignalStack &) = delete;

 private:
  std::unique_ptr<char[]> stack_;
  stack_t previous_{};
  bool replaced_ = false;
};

// The value a caught fault passes to siglongjmp.
constexpr int kFaultJump = 2;

// The time limit of a run in seconds (0: none).
double run_timeout_seconds();
void set_run_timeout_seconds(double seconds);

// Set by the timer when it fired inside an API call; the call's guard
// stops the kernel (api_guard.h).
extern volatile sig_atomic_t g_timeout_pending __attribute__((visibility("hidden")));
// How deep the kernel's thread is in API calls (0: in kernel code).
extern int g_api_depth __attribute__((visibility("hidden")));

// The fault behind the last kFaultJump.
const Fault &last_fault();

// A fault as the run's error: the one-line message ("SIGFPE (integer divide
// by zero) in kernel code [kernel fault]; in my_kernel (kernel.c:42)") and
// the parts of its readable form (session.h).
struct Report {
  std::string line;
  session::ErrorParts parts;
};

// Reads debug information: not for a handler. `call` is the site of the
// API call a fault with in_api interrupted ("tpu_bdc_fp_add ... called
// from kernel.c:42"). `whose` names the code that faulted ("kernel",
// "plugin hook").
Report describe(const Fault &fault, const std::string &api, const CallSite &call, const char *whose = "kernel");

}  // namespace cmodel::faults
