// session.h: process-wide state of the C boundary (last error, run status).
#pragma once

#include <string>

namespace cmodel::session {

// The last failure's full message; cleared by host calls that succeed.
std::string &last_error();
// True while a kernel runs inside cmodel_run.
bool kernel_running();
// True while a kernel runs and this is its thread.
bool kernel_running_here();
// Installs (once) the exit handler that catches an exit() kernel code
// makes during a run without going through the SDK's wrappers
// (kernel_exits.cc).
void watch_exits_during_runs();
// Runs kernel(arg) with a way back for stop_kernel() and for the faults of
// kernel code (kernel_faults.h); false if it was stopped.
bool run_kernel(void (*kernel)(const void *), const void *arg);

}  // namespace cmodel::session
