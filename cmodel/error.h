// error.h: the one exception type every cmodel check throws.
//
// A check deep inside the emulator throws; only the C boundary (api::run,
// the host API) catches, turns the error into a status and keeps the
// message for the caller. Nothing in between checks return codes.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace cmodel {

// The rule classes of ARCHITECTURE.md "Errors".
enum class ErrorKind {
  memory_fault,     // an access outside valid or allocated memory
  illegal_command,  // a command the hardware would reject (shape, stride, dtype)
  unsupported,      // valid on hardware but not (yet) emulated by this SDK
  config,           // misuse of the emulator itself (no chip open, bad chip name)
  kernel_assert,    // TPUKERNEL_ASSERT failed inside the kernel
  kernel_fault,     // kernel code raised SIGFPE, SIGSEGV or SIGBUS
};

const char *error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message)
      : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// fail(kind, "dst stride.w is {} bytes; the GDMA allows at most {}", a, b)
template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> format, Args &&...args) {
  throw Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cmodel
