// session.h: process-wide state of the C boundary (last error, run status).
#pragma once

#include <pthread.h>

#include <csetjmp>
#include <mutex>
#include <string>

#include "cmodel/call_site.h"

namespace cmodel::session {

// The last failure's full message, per thread; cleared by host calls that
// succeed.
std::string &last_error();

// An error in the parts of its readable form (cmodel_last_error_readable):
//
//   tpu_bdc_max: illegal command [TR-2] at customlayer/src/op.c:10 (op_tile)
//     dst starts on NPU 3 but src0 on NPU 0
//     the operands of this command must start on the same NPU (...)
//
// a short first line (what failed, where), then the details one clause a
// line. The one-line form of cmodel_last_error() stays as it was: programs
// and tests match it.
struct ErrorParts {
  std::string subject;  // what failed: "tpu_bdc_max", "plugin hook inference_op", "" (none)
  std::string what;     // how: "illegal command [TR-2]", "called exit(3)", "TPUKERNEL_ASSERT(n > 0) failed"
  std::string details;  // the rest, its clauses separated by "; "
  CallSite site;        // where; an empty text: nowhere to name
  // false: the details are the kernel's own text (a TPUKERNEL_ASSERT_INFO
  // message), shown as written, on one line.
  bool split_details = true;
};

// Records the last error in both forms: `line` as last_error(), `parts` for
// readable_error().
void set_error(std::string line, const ErrorParts &parts);

// The readable form of the last error: made from the parts set_error got,
// or, for a message recorded without them, from last_error() itself (its
// first clause, then the others a line each).
std::string readable_error();
// The emulator is one per process. Every cmodel_* host call holds this lock
// (cmodel_run for the whole run), as does an API call a host program makes
// outside a run, so threads take turns; a kernel's API calls run on the
// thread that runs it, which holds the lock already.
std::recursive_mutex &emulator_mutex();
// True while a kernel runs inside cmodel_run.
bool kernel_running();
// cmodel_set_local_entry: the kernels run are an op's local entry, whose PPL
// kernels may make no automatic local tensor (ppl_memory.cc). One flag for
// every core: the cores of a run take turns on one emulator.
bool &local_entry();
extern bool g_kernel_running __attribute__((visibility("hidden")));
extern pthread_t g_kernel_pthread __attribute__((visibility("hidden")));
// True while a kernel runs and this is its thread (pthread_self is a
// register read: this sits on every API call's path).
inline bool kernel_running_here() { return g_kernel_running && pthread_equal(pthread_self(), g_kernel_pthread); }
// Installs (once) the exit handler that catches an exit() kernel code
// makes during a run without going through the SDK's wrappers
// (kernel_exits.cc).
void watch_exits_during_runs();
// Runs kernel(arg) with a way back for stop_kernel() and for the faults of
// kernel code (kernel_faults.h); false if it was stopped.
bool run_kernel(void (*kernel)(const void *), const void *arg);
// The same on a core thread of a multi-core run (multicore.cc): the thread
// that started the run holds the trap, and g_kernel_running is set.
bool run_core_kernel(void (*kernel)(const void *), const void *arg);
// This thread's way back to its run boundary (faults::adopt_kernel_thread).
sigjmp_buf &kernel_exit();

// Thrown inside an API call of a core of a multi-core run that must stop
// because another core failed: the run's error is that core's, so the
// call records nothing (api_guard.h).
struct CoreStopped {};

// The last error in its two forms, to carry it from a core's thread to the
// thread that started the run.
struct ErrorTexts {
  std::string line, readable;
};
ErrorTexts error_texts();
void set_error_texts(const ErrorTexts &texts);

}  // namespace cmodel::session
