// kernel_faults.cc: catching the host faults of kernel code (kernel_faults.h).
//
// The handler only reads plain data prepared before the handlers are
// installed and calls async-signal-safe functions; describing the fault
// (debug information, formatting) waits until the jump has landed.
#include "kernel_faults.h"

#include <link.h>
#include <sys/syscall.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <time.h>

#include <array>
#include <cstdlib>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "cmodel/call_site.h"
#include "cmodel/error.h"

namespace cmodel::faults {
namespace {

constexpr std::array<int, 5> kSignals = {SIGFPE, SIGSEGV, SIGBUS, SIGILL, SIGABRT};

// The run's timer signal: a real-time signal nothing else in the SDK uses.
int timer_signal() { return SIGRTMIN + 3; }

// How soon the timer looks again after it fired inside an API call.
constexpr long kRecheckNanoseconds = 2'000'000;

double initial_timeout() {
  const char *text = std::getenv("TPU_SDK_RUN_TIMEOUT");
  if (!text || !*text) return 600;
  char *end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end || !(seconds >= 0)) {
    std::fprintf(stderr, "tpu-sdk: TPU_SDK_RUN_TIMEOUT=\"%s\" is not a number of seconds >= 0; using 600\n", text);
    return 600;
  }
  return seconds;
}
double g_timeout_seconds = initial_timeout();

// A fault this close to the stack pointer is taken for a stack overflow:
// the instruction that ran into the guard page pushes or stores just below it.
constexpr std::uintptr_t kStackOverflowReach = 64 * 1024;

// Executable segments of the SDK's own libraries: a fault there is not the
// kernel's. A fixed array, as the handler must not allocate.
struct CodeRange {
  std::uintptr_t begin = 0, end = 0;
};
constexpr std::size_t kMaxOwnRanges = 32;
constexpr std::size_t kMaxSystemRanges = 128;

// Everything the handler reads, set up before the handlers go in.
struct TrapState {
  sigjmp_buf *exit = nullptr;
  pid_t kernel_thread = 0;
  std::array<CodeRange, kMaxOwnRanges> own_code{};
  std::size_t own_code_count = 0;
  // Executable segments of the system's libraries (libc, libstdc++, the
  // loader, libdw, ...): the time limit never jumps out of them, which could
  // leave a lock of theirs held (malloc's, the loader's).
  std::array<CodeRange, kMaxSystemRanges> system_code{};
  std::size_t system_code_count = 0;
  std::array<struct sigaction, kSignals.size()> previous_actions{};
  struct sigaction previous_timer_action {};
  timer_t timer{};
  bool timer_made = false;
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
// A library of the system: installed under /lib or /usr/lib, or the vDSO.
bool is_system_library_name(const char *path) {
  const std::string_view name = path ? path : "";
  for (std::string_view prefix : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "linux-vdso", "linux-gate"})
    if (name.starts_with(prefix)) return true;
  return false;
}

int note_system_code(dl_phdr_info *info) {
  if (!is_system_library_name(info->dlpi_name)) return 0;
  for (int i = 0; i < info->dlpi_phnum && g_trap.system_code_count < kMaxSystemRanges; ++i) {
    const ElfW(Phdr) &segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X)) continue;
    const std::uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    g_trap.system_code[g_trap.system_code_count++] = {begin, begin + segment.p_memsz};
  }
  return 0;
}

int note_own_code(dl_phdr_info *info, std::size_t, void *) {
  const auto self = reinterpret_cast<std::uintptr_t>(&note_own_code);
  if (!is_sdk_library_name(info->dlpi_name) && !module_holds(info, self)) return note_system_code(info);
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
  g_trap.system_code_count = 0;
  dl_iterate_phdr(note_own_code, nullptr);
}

bool in_own_code(std::uintptr_t pc) {
  for (std::size_t i = 0; i < g_trap.own_code_count; ++i)
    if (pc >= g_trap.own_code[i].begin && pc < g_trap.own_code[i].end) return true;
  return false;
}

bool in_system_code(std::uintptr_t pc) {
  for (std::size_t i = 0; i < g_trap.system_code_count; ++i)
    if (pc >= g_trap.system_code[i].begin && pc < g_trap.system_code[i].end) return true;
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
  const bool own_code = fault.pc == 0 || in_own_code(fault.pc);
  // abort() raises SIGABRT from libc, whoever called it.
  const bool kernels = signal == SIGABRT || !own_code || g_api_depth > 0;
  fault.in_api = signal != SIGABRT && own_code && g_api_depth > 0;
  if (g_trap.armed && gettid() == g_trap.kernel_thread && kernels) {
    g_trap.armed = 0;
    g_trap.fault = fault;
    siglongjmp(*g_trap.exit, kFaultJump);
  }
  pass_on(signal, info);
}

void arm_timer(time_t seconds, long nanoseconds) {
  itimerspec when{};
  when.it_value.tv_sec = seconds;
  when.it_value.tv_nsec = nanoseconds;
  timer_settime(g_trap.timer, 0, &when, nullptr);
}

// The time limit passed. In kernel code the kernel stops here; inside an
// API call (the SDK's code, maybe holding its state half-changed) the
// call's guard stops it, and inside a system library (maybe holding
// malloc's lock) nothing is done: the timer looks again shortly, in case
// the kernel never calls the API again.
void on_timer(int signal, siginfo_t *, void *ucontext) {
  if (!g_trap.armed) return;
  if (gettid() != g_trap.kernel_thread) {
    // A multi-core run: the timer fired on the thread that set up the trap
    // while another thread runs the core whose turn it is.
    syscall(SYS_tgkill, getpid(), g_trap.kernel_thread, signal);
    return;
  }
  Fault fault;
  read_machine_context(ucontext, fault);
  if (g_api_depth > 0 || fault.pc == 0 || in_own_code(fault.pc) || in_system_code(fault.pc)) {
    g_timeout_pending = 1;
    arm_timer(0, kRecheckNanoseconds);
    return;
  }
  g_trap.armed = 0;
  fault.timed_out = true;
  g_trap.fault = fault;
  siglongjmp(*g_trap.exit, kFaultJump);
}

// A per-thread timer for the run's time limit, if it has one.
void start_timer() {
  g_timeout_pending = 0;
  const double limit = g_timeout_seconds;
  if (!(limit > 0)) return;
  struct sigaction action {};
  action.sa_sigaction = on_timer;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(timer_signal(), &action, &g_trap.previous_timer_action);
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = timer_signal();
  event._sigev_un._tid = g_trap.kernel_thread;
  g_trap.timer_made = timer_create(CLOCK_MONOTONIC, &event, &g_trap.timer) == 0;
  if (!g_trap.timer_made) return;
  const double whole = limit > 1e9 ? 1e9 : limit;
  arm_timer(time_t(whole), long((whole - double(time_t(whole))) * 1e9));
}

void stop_timer() {
  if (!g_trap.timer_made) return;
  timer_delete(g_trap.timer);
  g_trap.timer_made = false;
  sigaction(timer_signal(), &g_trap.previous_timer_action, nullptr);
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
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
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

Trap::Trap(sigjmp_buf &exit, bool time_limit) {
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
  g_api_depth = 0;
  g_trap.armed = 1;
  if (time_limit) start_timer();
}

Trap::~Trap() {
  g_trap.armed = 0;
  stop_timer();
  g_timeout_pending = 0;
  for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &g_trap.previous_actions[i], nullptr);
  restore_signal_stack();
}

const Fault &last_fault() { return g_trap.fault; }

void adopt_kernel_thread(sigjmp_buf &exit) {
  g_trap.exit = &exit;
  g_trap.kernel_thread = gettid();
}

ThreadSignalStack::ThreadSignalStack() : stack_(new char[sizeof g_signal_stack]) {
  stack_t stack{};
  stack.ss_sp = stack_.get();
  stack.ss_size = sizeof g_signal_stack;
  replaced_ = sigaltstack(&stack, &previous_) == 0;
}

ThreadSignalStack::~ThreadSignalStack() {
  if (!replaced_) return;
  previous_.ss_flags &= SS_DISABLE;
  sigaltstack(&previous_, nullptr);
}

volatile sig_atomic_t g_timeout_pending = 0;
int g_api_depth = 0;

double run_timeout_seconds() { return g_timeout_seconds; }
void set_run_timeout_seconds(double seconds) { g_timeout_seconds = seconds; }

namespace {

Report timeout_report(const Fault &fault, const std::string &api, const CallSite &call, const char *whose) {
  const CallSite where = resolve_call_site(reinterpret_cast<const void *>(fault.pc + 1));
  const std::string last_call =
      api == "?" ? std::string() : fmt::format("; its last API call was {}, called from {}", api, call.text);
  const std::string raise = "raise the limit with TPU_SDK_RUN_TIMEOUT, cmodel_set_option(\"run_timeout\", ...) or "
                            "the tools' --timeout";
  Report r;
  r.line = fmt::format("the {} ran past the run's time limit of {} s and was stopped [{}]; it was in {}{} ({})", whose,
                       g_timeout_seconds, error_kind_name(ErrorKind::timeout), where.text, last_call, raise);
  r.parts = {fmt::format("the {}", whose), error_kind_name(ErrorKind::timeout),
             fmt::format("it ran past the run's time limit of {} s and was stopped{}; {}", g_timeout_seconds,
                         last_call, raise),
             where};
  return r;
}

Report abort_report(const char *whose) {
  Report r;
  r.line = fmt::format("SIGABRT: abort() was called by the {} or by code it called (a failed assert(), "
                       "std::terminate) [{}]",
                       whose, error_kind_name(ErrorKind::kernel_fault));
  r.parts = {"SIGABRT", error_kind_name(ErrorKind::kernel_fault),
             fmt::format("abort() was called by the {} or by code it called (a failed assert(), std::terminate)",
                         whose),
             {}};
  return r;
}

}  // namespace

Report describe(const Fault &fault, const std::string &api, const CallSite &call, const char *whose) {
  if (fault.timed_out) return timeout_report(fault, api, call, whose);
  if (fault.signal == SIGABRT) return abort_report(whose);
  const std::string signal = fmt::format("{} ({})", signal_name(fault.signal), code_meaning(fault.signal, fault.code));
  const std::string address = fault.signal != SIGFPE && fault.code > 0 ? fmt::format(" at address {:#x}", fault.address)
                                                                         : std::string();
  const char *kind = error_kind_name(ErrorKind::kernel_fault);
  Report r;
  if (fault.in_api) {
    r.line = fmt::format("{}: {}{} inside the call: a pointer argument is not valid [{}]; called from {}", api, signal,
                         address, kind, call.text);
    r.parts = {api, kind, fmt::format("{}{} inside the call: a pointer argument is not valid", signal, address), call};
    return r;
  }
  const std::string overflow = looks_like_stack_overflow(fault) ? ": the kernel's stack overflowed" : "";
  // resolve_call_site steps back from a return address; the pc is the
  // faulting instruction itself.
  const CallSite site = resolve_call_site(reinterpret_cast<const void *>(fault.pc + 1));
  r.line = fmt::format("{}{}{} in {} code [{}]; in {}", signal, address, overflow, whose, kind, site.text);
  r.parts = {signal, kind, fmt::format("in {} code{}{}", whose, address, overflow), site};
  return r;
}

}  // namespace cmodel::faults
