// session.h: process-wide state of the C boundary (last error, run status).
#pragma once

#include <pthread.h>

#include <mutex>
#include <string>

namespace cmodel::session {

// The last failure's full message, per thread; cleared by host calls that
// succeed.
std::string &last_error();
// The emulator is one per process. Every cmodel_* host call holds this lock
// (cmodel_run for the whole run), as does an API call a host program makes
// outside a run, so threads take turns; a kernel's API calls run on the
// thread that runs it, which holds the lock already.
std::recursive_mutex &emulator_mutex();
// True while a kernel runs inside cmodel_run.
bool kernel_running();
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

}  // namespace cmodel::session
