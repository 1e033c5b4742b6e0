// host_call.h: the error convention of every cmodel_host.h function.
//
// A host call runs its body; an error thrown anywhere inside becomes -1 (or
// 0 for addresses, decided by the caller) plus a message in
// cmodel_last_error() that starts with the function's name, and a success
// clears the message.
#pragma once

#include <exception>

#include <fmt/format.h>

#include "cmodel/context.h"
#include "cmodel/error.h"
#include "session.h"

namespace cmodel::host {

template <typename Body>
int host_call(const char *name, Body &&body) {
  const std::lock_guard<std::recursive_mutex> lock(session::emulator_mutex());
  try {
    body();
    session::last_error().clear();
    return 0;
  } catch (const Error &e) {
    session::last_error() = fmt::format("{}: {} [{}]", name, e.what(), error_kind_name(e.kind()));
  } catch (const std::exception &e) {
    session::last_error() = fmt::format("{}: {}", name, e.what());
  }
  return -1;
}

// The open emulator; an error naming `name` if there is none.
inline Context &open_context(const char *name) {
  if (Context *c = current_context()) return *c;
  fail(ErrorKind::config, "no emulator is open; call {}() after cmodel_open(\"bm1684x\") or cmodel_open(\"bm1688\")",
       name);
}

// Host calls must not come from a kernel: they replace, rerun or
// reconfigure the emulator, or set state (an owner, options, a local
// watch, registrations, allocations) that would outlive the kernel's run.
// Only the queries (cmodel_chip, cmodel_last_error, cmodel_recording, the
// statistics and the registered kernels) answer a kernel.
inline void check_not_in_kernel(const char *name) {
  if (session::kernel_running())
    fail(ErrorKind::config,
         "{} cannot be called from inside a running kernel: it is a host function (cmodel_host.h); a kernel "
         "uses the tpu_* API",
         name);
}

// host_call for a host-only function: refused while a kernel runs, with
// the message naming `name` (a check inside the body's lambda would name
// "operator()").
template <typename Body>
int host_only_call(const char *name, Body &&body) {
  return host_call(name, [&] {
    check_not_in_kernel(name);
    body();
  });
}

// For host-only functions that return nothing: true (the refusal left in
// cmodel_last_error()) when a kernel is running.
inline bool refused_in_kernel(const char *name) {
  return host_call(name, [&] { check_not_in_kernel(name); }) != 0;
}

// True between cmodel_batch_begin and cmodel_batch_end (host_api.cc).
bool batch_open();

// The end of a run (a cmodel_run, a batch, a replay): waits for every engine
// (tpu_poll), keeps its statistics for cmodel_last_run_stats, moves the
// trace's clock and the totals on.
void finish_run(Context &context);

}  // namespace cmodel::host
