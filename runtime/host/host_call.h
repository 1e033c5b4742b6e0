// host_call.h (private): running host-op code with its faults caught.
//
// The call goes through the emulator's user-code trap
// (cmodel_call_user_code, kernel/src/kernel_exits.cc and kernel_faults.cc):
// signals raised by the library's code, abort() and a failed assert(), and
// exit() from a library linked with the SDK's exit wrappers, end the call,
// not the process. A C++ exception is caught here, before it could unwind
// into the emulator's C frames.
#pragma once

#include <chrono>
#include <exception>
#include <string>
#include <type_traits>

namespace tpu_runtime::host {

// "std::invalid_argument: k = 12 is larger than n = 10" for the exception
// being handled.
std::string current_exception_text();

// The emulator's last error without a leading "<what>: ", which the
// messages of this room say themselves.
std::string last_user_code_error(const std::string &what);

// Runs fn() as code of a host library named `what` ("host op ap.topk").
// Returns "" when it returned, else what happened ("threw ...", "SIGSEGV
// ... in host op code; in fn (file.cpp:12)", "called exit(-1) ...").
// `seconds` receives the time fn() itself took (steady clock) when it returned.
// A fault leaves fn's frames by siglongjmp: fn must keep every object with a
// destructor outside itself (its captures refer to them).
template <typename Fn>
std::string call_host_code(const std::string &what, Fn &fn, double *seconds = nullptr);

namespace detail {
int call_user_code(const char *what, void (*thunk)(void *), void *context);
}

template <typename Fn>
std::string call_host_code(const std::string &what, Fn &fn, double *seconds) {
  struct Context {
    Fn *fn;
    std::string *exception;
    double *seconds;
  };
  std::string exception;
  Context context{&fn, &exception, seconds};
  auto thunk = [](void *p) {
    Context *c = static_cast<Context *>(p);
    try {
      const auto start = std::chrono::steady_clock::now();
      (*c->fn)();
      if (c->seconds)
        *c->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } catch (...) {
      *c->exception = "threw " + current_exception_text();
    }
  };
  if (detail::call_user_code(what.c_str(), thunk, &context) != 0) return last_user_code_error(what);
  return exception;
}

}  // namespace tpu_runtime::host
