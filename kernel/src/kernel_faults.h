// kernel_faults.h: SIGFPE, SIGSEGV and SIGBUS raised by kernel code.
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
// A fault in the SDK's own code is the SDK's bug: it keeps the behaviour
// the process had before (the default action, or a sanitizer's report), as
// does any fault while no kernel runs.
#pragma once

#include <csetjmp>
#include <cstdint>
#include <string>

namespace cmodel::faults {

// What the handler saw; signal 0 when no fault ended the run.
struct Fault {
  int signal = 0;
  int code = 0;                 // siginfo's si_code
  std::uintptr_t pc = 0;        // the faulting instruction
  std::uintptr_t address = 0;   // si_addr: the address accessed (SIGSEGV, SIGBUS)
  std::uintptr_t stack_pointer = 0;
};

// Catches the three signals on the calling thread for the lifetime of the
// object and restores the previous handlers and signal stack afterwards.
// A caught fault jumps to `exit` with siglongjmp(exit, kFaultJump).
class Trap {
 public:
  explicit Trap(sigjmp_buf &exit);
  ~Trap();
  Trap(const Trap &) = delete;
  Trap &operator=(const Trap &) = delete;
};

// The value a caught fault passes to siglongjmp.
constexpr int kFaultJump = 2;

// The fault behind the last kFaultJump.
const Fault &last_fault();

// "SIGFPE (integer divide by zero) in kernel code [kernel fault]; in
// my_kernel (kernel.c:42)". Reads debug information: not for a handler.
std::string describe(const Fault &fault);

}  // namespace cmodel::faults
