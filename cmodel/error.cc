#include "error.h"

#include <cmath>
#include <iterator>

namespace cmodel {

const char *error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::memory_fault: return "memory fault";
    case ErrorKind::illegal_command: return "illegal command";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::config: return "configuration error";
    case ErrorKind::kernel_assert: return "kernel assertion failed";
    case ErrorKind::kernel_fault: return "kernel fault";
    case ErrorKind::timeout: return "time limit exceeded";
    case ErrorKind::uninitialized_read: return "uninitialized read";
    case ErrorKind::core_sync: return "core synchronisation";
  }
  return "error";
}

const char *rule_id(Rule rule) {
  switch (rule) {
#define RULE(token, id, status, api, condition) \
  case Rule::token: return id;
#include "cmodel/vendor_rules.def"
#undef RULE
  }
  return "?";
}

std::string format_bytes(uint64_t count) {
  static constexpr const char *kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (count < 1024) return fmt::format("{} bytes", count);
  double value = double(count) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  if (value == std::floor(value)) return fmt::format("{} bytes ({} {})", count, uint64_t(value), kUnits[unit]);
  return fmt::format("{} bytes ({:.1f} {})", count, value, kUnits[unit]);
}

}  // namespace cmodel
