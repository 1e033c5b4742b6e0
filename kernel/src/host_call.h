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

// Host calls that replace or rerun the emulator must not come from a kernel.
inline void check_not_in_kernel(const char *name) {
  if (session::kernel_running())
    fail(ErrorKind::config, "{} cannot be called from inside a running kernel", name);
}

// True between cmodel_batch_begin and cmodel_batch_end (host_api.cc).
bool batch_open();

// The end of a run (a cmodel_run, a batch, a replay): waits for every engine
// (tpu_poll), keeps its statistics for cmodel_last_run_stats, moves the
// trace's clock and the totals on.
void finish_run(Context &context);

}  // namespace cmodel::host
