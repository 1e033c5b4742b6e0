// custom_layer_api.cc: the SDK side of tpu_custom_abi.h.
#include "tpu_custom_abi.h"

#include <fmt/format.h>

#include "api_guard.h"
#include "session.h"

int tpu_custom_unknown_op(const char *entry, const char *name, const char *registered) {
  const char *listed = registered && *registered ? registered : "none";
  cmodel::session::last_error() =
      fmt::format("{}: no custom op named '{}' (registered: {})", entry ? entry : "?", name ? name : "(null)", listed);
  return -1;
}

int tpu_custom_missing_function(const char *function, const char *registration) {
  cmodel::session::last_error() = fmt::format(
      "{} is registered ({} in register_ops.cmake) but no source of the op defines it; define it, or remove "
      "the registration and rebuild",
      function ? function : "?", registration ? registration : "?");
  cmodel::api::stop_kernel();
  return -1;
}
