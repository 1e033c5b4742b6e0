// api_guard.h: the C boundary between a kernel and the cmodel.
//
// Every exported tpu_* function is written as
//
//   extern "C" void tpu_foo(int x) {
//     return api::run(__func__, TPU_CALLER(), [&, name = __func__] { ... });
//   }
//
// or, when it issues or orders engine work, with its arguments for the
// command-stream recorder (TPU_ARGS is in record.h):
//
//   extern "C" void tpu_foo(int x) {
//     return api::run(__func__, TPU_CALLER(), TPU_ARGS(tpu_foo, x), [&, name = __func__] { ... });
//   }
//
// (inside the lambda __func__ would be "operator()", hence the capture when
// the body needs the API name, e.g. to count the command under it).
// The body may throw cmodel::Error anywhere. run() records the error with
// the API name and the kernel's call site, then stops the kernel: inside
// cmodel_run it jumps back to the run boundary, so the faulty kernel never
// executes another command; outside a run (a host program calling the API
// directly) the call returns a zero value and the error stays readable via
// cmodel_last_error().
#pragma once

#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>

#include "cmodel/call_site.h"
#include "cmodel/error.h"
#include "kernel_faults.h"
#include "session.h"
#include "tpu_defs.h"

// Address inside the kernel that called the current API function. Must be
// expanded in the exported function itself, not in a helper it calls.
#define TPU_CALLER() __builtin_return_address(0)

namespace cmodel {
class Context;
}

// The recorder's side of api::run (record.h, which the files using TPU_ARGS
// include; this header stays free of tpu_kernel.h for not_implemented.cc).
namespace cmodel::record {
extern bool g_active __attribute__((visibility("hidden")));
[[gnu::cold]] void note_call(const char *api);
template <typename F>
struct Args;
template <typename F>
[[gnu::noinline, gnu::cold]] void append(const char *api, const Args<F> &args);
}  // namespace cmodel::record

namespace cmodel::api {

// The emulator the kernel runs on; throws a config error if none is open.
Context &context();

// Records a failure of `api` called from `caller` (message without prefix;
// `rule` is the id of the vendor rule it broke, or nullptr; `title`, if
// any, names the error in the readable form, cmodel/error.h).
void report_error(const char *api, const void *caller, ErrorKind kind, const char *message,
                  const char *rule = nullptr, const char *title = nullptr);

// Jumps back to the active run boundary; returns if there is none.
void stop_kernel();

// Failing an unimplemented API function: "<name> is not implemented in this SDK".
void not_implemented(const char *api, const void *caller);

// *p, or an illegal-command error naming the null pointer parameter.
template <typename T>
T &deref(const char *role, T *p) {
  if (!p) fail(ErrorKind::illegal_command, "{} is a null pointer", role);
  return *p;
}

// The shape parameter every command takes.
inline const dim4 &shape_of(const dim4 *shape) { return deref("shape", shape); }

// Counts the API calls the kernel's thread is inside (kernel_faults.h).
class ApiDepth {
 public:
  ApiDepth() { ++faults::g_api_depth; }
  ~ApiDepth() { release(); }
  ApiDepth(const ApiDepth &) = delete;
  ApiDepth &operator=(const ApiDepth &) = delete;
  // Leaves the count early (the jump out of a stopped kernel skips the
  // destructor; the run's start resets the count anyway).
  void release() {
    if (held_) --faults::g_api_depth;
    held_ = false;
  }

 private:
  bool held_ = true;
};

// Throws the time-limit error (the timer fired inside an earlier call).
[[noreturn, gnu::cold]] void timed_out();
// Throws the error of an API call from a thread that is not the running
// kernel's (a thread the kernel started).
[[noreturn, gnu::cold]] void refuse_foreign_thread(const char *api);

// The common part of both run() forms. `note` runs only while a recording
// is active: that test is the recorder's whole cost on the fast path.
template <typename Note, typename Body>
auto guarded_call(const char *api, const void *caller, bool kernel_thread, Note &&note, Body &&body)
    -> decltype(body()) {
  using Result = decltype(body());
  CallInfo &call = current_call();
  call.api = api;  // member-wise: the replay fields cmodel_replay sets stay
  call.caller = caller;
  // The try block must be left before stop_kernel(): jumping out of a catch
  // handler would skip the runtime's end-of-catch bookkeeping.
  // Tells the fault handler and the time limit that the thread is in the
  // SDK's code serving this call, reporting included (kernel_faults.h).
  ApiDepth depth;
  try {
    // Stops a kernel whose time limit passed inside an earlier API call.
    if (__builtin_expect(faults::g_timeout_pending, 0)) timed_out();
    if (__builtin_expect(!kernel_thread && session::kernel_running(), 0)) refuse_foreign_thread(api);
    if (__builtin_expect(record::g_active, false)) note();
    return body();
  } catch (const session::CoreStopped &) {
    // Another core of a multi-core run failed: its error is the run's.
  } catch (const Error &e) {
    report_error(api, caller, e.kind(), e.what(), e.rule(), e.title());
  } catch (const std::exception &e) {
    report_error(api, caller, ErrorKind::unsupported, e.what());
  }
  depth.release();  // before the jump stop_kernel() makes
  stop_kernel();
  if constexpr (!std::is_void_v<Result>) return Result{};
}

// A kernel's call runs as it is. A call from any other thread while a
// kernel runs (a thread the kernel started, or another host thread) is
// refused: waiting for the run's lock could deadlock a kernel that waits for
// its thread. Otherwise (a host program calling the API directly) the call
// takes the emulator's lock (session.h).
template <typename Note, typename Body>
auto guarded(const char *api, const void *caller, Note &&note, Body &&body) -> decltype(body()) {
  if (__builtin_expect(session::kernel_running_here(), 1)) return guarded_call(api, caller, true, note, body);
  std::unique_lock<std::recursive_mutex> lock(session::emulator_mutex(), std::defer_lock);
  while (!lock.try_lock()) {
    if (session::kernel_running()) return guarded_call(api, caller, false, note, body);  // refused inside
    std::this_thread::yield();
  }
  return guarded_call(api, caller, false, note, body);
}

// A call that records nothing itself (queries; see record.h).
template <typename Body>
auto run(const char *api, const void *caller, Body &&body) -> decltype(body()) {
  return guarded(api, caller, [api] { record::note_call(api); }, body);
}

// A call that issues or orders engine work: `args` go to the recorder.
template <typename F, typename Body>
auto run(const char *api, const void *caller, const record::Args<F> &args, Body &&body) -> decltype(body()) {
  return guarded(api, caller, [&] { record::append(api, args); }, body);
}

}  // namespace cmodel::api
