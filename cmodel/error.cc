#include "error.h"

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

}  // namespace cmodel
