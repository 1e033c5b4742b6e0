// kernel_faults.cc: catching the host faults of kernel code (kernel_faults.h).
//
// The handler only reads plain data prepared before the handlers are
// installed and calls async-signal-safe functions; describing the fault
// (debug information, formatting) waits until the jump has landed.
#include "kernel_faults.h"

#include <link.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "cmodel/call_site.h"
#include "cmodel/error.h"

namespace cmodel::faults {
namespace {

constexpr std::array<int, 3> kSignals = {SIGFPE, SIGSEGV, SIGBUS};

// A fault this close to the stack pointer is taken for a stack overflow:
// the instruction that ran into the guard page pushes or stores just below it.
constexpr std::uintptr_t kStackOverflowReach = 64 * 1024;

// Executable segments of the SDK's own libraries: a fault there is not the
// kernel's. A fixed array, as the handler must not allocate.
struct CodeRange {
  std::uintptr_t begin = 0, end = 0;
};
constexpr std::size_t kMaxOwnRanges = 32;

// Everything the handler reads, set up before the handlers go in.
struct TrapState {
  sigjmp_buf *exit = nullptr;
  pid_t kernel_thread = 0;
  std::array<CodeRange, kMaxOwnRanges> own_code{};
  std::size_t own_code_count = 0;
  std::array<struct sigaction, kSignals.size()> previous_actions{};
  stack_t previous_stack{};
  bool stack_replaced = false;
  Fault fault;
  volatile sig_atomic_t armed = 0;
};
TrapState g_trap;

// The handler runs here, so a fault caused by a stack overflow can still be
// handled. A sanitizer's handler, which the fault may be passed on to, runs
// here too: hence more than the handler itself needs.
alignas(16) char g_signal_stack[256 * 1024];

bool is_sdk_library_name(const char *path) {
  const std::string name = base_name(path);
  return name.starts_with("libcmodel.so") || name.starts_with("libtpu_runtime.so");
}

bool module_holds(const dl_phdr_info *info, std::uintptr_t address) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &segment = info->dlpi_phdr[i];
    const std::uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && address >= begin && address < begin + segment.p_memsz) return true;
  }
  return false;
}

// dl_iterate_phdr callback: notes the executable segments of the SDK's
// libraries, found by name and, whatever this library is called, by
// holding this very function.
int note_own_code(dl_phdr_info *info, std::size_t, void *) {
  const auto self = reinterpret_cast<std::uintptr_t>(&note_own_code);
  if (!is_sdk_library_name(info->dlpi_name) && !module_holds(info, self)) return 0;
  for (int i = 0; i < info->dlpi_phnum && g_trap.own_code_count < kMaxOwnRanges; ++i) {
    const ElfW(Phdr) &segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X)) continue;
    const std::uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    g_trap.own_code[g_trap.own_code_count++] = {begin, begin + segment.p_memsz};
  }
  return 0;
}

// Recomputed for each run: the runtime library may have been loaded since.
void record_own_code() {
  g_trap.own_code_count = 0;
  dl_iterate_phdr(note_own_code, nullptr);
}

bool in_own_code(std::uintptr_t pc) {
  for (std::size_t i = 0; i < g_trap.own_code_count; ++i)
    if (pc >= g_trap.own_code[i].begin && pc < g_trap.own_code[i].end) return true;
  return false;
}

// The faulting instruction and stack pointer; pc 0 on an architecture this
// file does not know, which leaves every fault to the previous handler.
void read_machine_context(const void *ucontext, Fault &fault) {
  const auto *context = static_cast<const ucontext_t *>(ucontext);
#if defined(__x86_64__)
  fault.pc = std::uintptr_t(context->uc_mcontext.gregs[REG_RIP]);
  fault.stack_pointer = std::uintptr_t(context->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  fault.pc = std::uintptr_t(context->uc_mcontext.pc);
  fault.stack_pointer = std::uintptr_t(context->uc_mcontext.sp);
#else
  (void)context;
#endif
}

std::size_t signal_slot(int signal) {
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    if (kSignals[i] == signal) return i;
  return 0;
}

// Not the kernel's fault (or no kernel runs): the previous handler takes
// it. An instruction that faulted faults again when the handler returns,
// now under the previous action; a signal sent by kill or raise is sent
// again (it stays pending until the handler returns).
void pass_on(int signal, const siginfo_t *info) {
  sigaction(signal, &g_trap.previous_actions[signal_slot(signal)], nullptr);
  if (info->si_code <= 0) raise(signal);
}

void on_fault(int signal, siginfo_t *info, void *ucontext) {
  Fault fault;
  fault.signal = signal;
  fault.code = info->si_code;
  fault.address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  read_machine_context(ucontext, fault);
  const bool kernel_code = fault.pc != 0 && !in_own_code(fault.pc);
  if (g_trap.armed && gettid() == g_trap.kernel_thread && kernel_code) {
    g_trap.armed = 0;
    g_trap.fault = fault;
    siglongjmp(*g_trap.exit, kFaultJump);
  }
  pass_on(signal, info);
}

void use_own_signal_stack() {
  stack_t stack{};
  stack.ss_sp = g_signal_stack;
  stack.ss_size = sizeof g_signal_stack;
  // Fails when the caller itself runs on a signal stack; the handler then
  // shares that stack, which is all that is lost.
  g_trap.stack_replaced = sigaltstack(&stack, &g_trap.previous_stack) == 0;
}

void restore_signal_stack() {
  if (!g_trap.stack_replaced) return;
  stack_t previous = g_trap.previous_stack;
  // sigaltstack reports SS_ONSTACK but accepts only 0 or SS_DISABLE back.
  previous.ss_flags &= SS_DISABLE;
  sigaltstack(&previous, nullptr);
}

const char *signal_name(int signal) {
  switch (signal) {
    case SIGFPE: return "SIGFPE";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
  }
  return "signal";
}

const char *code_meaning(int signal, int code) {
  if (code <= 0) return "sent by kill or raise";
  if (signal == SIGFPE) switch (code) {
      case FPE_INTDIV: return "integer divide by zero";
      case FPE_INTOVF: return "integer overflow";
      case FPE_FLTDIV: return "floating-point divide by zero";
      case FPE_FLTOVF: return "floating-point overflow";
      case FPE_FLTUND: return "floating-point underflow";
      case FPE_FLTRES: return "floating-point inexact result";
      case FPE_FLTINV: return "invalid floating-point operation";
      case FPE_FLTSUB: return "subscript out of range";
    }
  if (signal == SIGSEGV) switch (code) {
      case SEGV_MAPERR: return "address not mapped";
      case SEGV_ACCERR: return "access not permitted";
    }
  if (signal == SIGBUS) switch (code) {
      case BUS_ADRALN: return "misaligned address";
      case BUS_ADRERR: return "no memory behind the address, e.g. a file mapping past the end of the file";
      case BUS_OBJERR: return "hardware error";
    }
  return "unknown cause";
}

bool looks_like_stack_overflow(const Fault &fault) {
  if (fault.signal != SIGSEGV || fault.code <= 0) return false;
  const std::uintptr_t distance = fault.address > fault.stack_pointer ? fault.address - fault.stack_pointer
                                                                      : fault.stack_pointer - fault.address;
  return distance <= kStackOverflowReach;
}

}  // namespace

Trap::Trap(sigjmp_buf &exit) {
  g_trap.exit = &exit;
  g_trap.kernel_thread = gettid();
  g_trap.fault = Fault{};
  record_own_code();
  use_own_signal_stack();
  struct sigaction action {};
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &action, &g_trap.previous_actions[i]);
  g_trap.armed = 1;
}

Trap::~Trap() {
  g_trap.armed = 0;
  for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &g_trap.previous_actions[i], nullptr);
  restore_signal_stack();
}

const Fault &last_fault() { return g_trap.fault; }

std::string describe(const Fault &fault) {
  std::string what = fmt::format("{} ({})", signal_name(fault.signal), code_meaning(fault.signal, fault.code));
  if (fault.signal != SIGFPE && fault.code > 0) what += fmt::format(" at address {:#x}", fault.address);
  if (looks_like_stack_overflow(fault)) what += ": the kernel's stack overflowed";
  // describe_call_site steps back from a return address; the pc is the
  // faulting instruction itself.
  const void *site = reinterpret_cast<const void *>(fault.pc + 1);
  return fmt::format("{} in kernel code [{}]; in {}", what, error_kind_name(ErrorKind::kernel_fault),
                     describe_call_site(site));
}

}  // namespace cmodel::faults
