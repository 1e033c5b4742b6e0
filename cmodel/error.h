// error.h: the one exception type every cmodel check throws.
//
// A check deep inside the emulator throws; only the C boundary (api::run,
// the host API) catches, turns the error into a status and keeps the
// message for the caller. Nothing in between checks return codes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace cmodel {

// The rule classes of ARCHITECTURE.md "Errors".
enum class ErrorKind {
  memory_fault,     // an access outside valid or allocated memory
  illegal_command,  // a command the hardware would reject (shape, stride, dtype)
  unsupported,      // valid on hardware but not (yet) emulated by this SDK
  config,           // misuse of the emulator itself (no chip open, bad chip name)
  kernel_assert,    // TPUKERNEL_ASSERT failed inside the kernel
  kernel_fault,     // kernel code raised SIGFPE, SIGSEGV, SIGBUS, SIGILL or SIGABRT, or exited
  timeout,          // the kernel ran past the run's time limit
  uninitialized_read,  // a command read bytes nothing wrote (cmodel/shadow.h)
  core_sync,        // cores of a multi-core run deadlock, miss a peer or race (cmodel/cores.h)
};

const char *error_kind_name(ErrorKind kind);

// The legality rules of vendor_rules.def, one enumerator per rule: a check
// that enforces one names it, so a typo in an id does not compile.
enum class Rule : uint16_t {
#define RULE(token, id, status, api, condition) token,
#include "cmodel/vendor_rules.def"
#undef RULE
};

// "DMA-14" for Rule::DMA_14.
const char *rule_id(Rule rule);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, const char *rule = nullptr, const char *title = nullptr)
      : std::runtime_error(std::move(message)), kind_(kind), rule_(rule), title_(title) {}
  ErrorKind kind() const { return kind_; }
  // The id of the vendor rule the command broke ("DMA-14"), or nullptr when
  // the check is one of our own (memory bounds, configuration, ...).
  const char *rule() const { return rule_; }
  // What the readable form's first line calls the error when its class
  // alone says too little ("race inside a parallel region" for an illegal
  // command); nullptr: the class.
  const char *title() const { return title_; }

 private:
  ErrorKind kind_;
  const char *rule_;
  const char *title_;
};

// fail(kind, "dst stride.w is {} bytes; the GDMA allows at most {}", a, b)
template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> format, Args &&...args) {
  throw Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

// fail(Rule::DMA_14, "...") for a command that breaks a vendor rule: an
// illegal command whose report names the rule's id.
template <typename... Args>
[[noreturn]] void fail(Rule rule, fmt::format_string<Args...> format, Args &&...args) {
  throw Error(ErrorKind::illegal_command, fmt::format(format, std::forward<Args>(args)...), rule_id(rule));
}

// The same for a rule whose breach is reported as another class (a command
// touching static memory is a memory fault, DMA-3).
template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, Rule rule, fmt::format_string<Args...> format, Args &&...args) {
  throw Error(kind, fmt::format(format, std::forward<Args>(args)...), rule_id(rule));
}

// A size in a message: "512 bytes", "65536 bytes (64 KiB)", "5242880 bytes
// (5 MiB)" (fmt::format("{}", Bytes{n})). Bytes are exact; the binary unit
// is what a person compares with a chip's figures. Addresses stay hex.
struct Bytes {
  uint64_t count;
};
std::string format_bytes(uint64_t count);

}  // namespace cmodel

template <>
struct fmt::formatter<cmodel::Bytes> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(cmodel::Bytes bytes, Context &context) const {
    return fmt::formatter<std::string_view>::format(cmodel::format_bytes(bytes.count), context);
  }
};
