// custom_layer_api.cc: the SDK side of tpu_custom_abi.h.
#include "tpu_custom_abi.h"

#include <fmt/format.h>

#include "session.h"

int tpu_custom_unknown_op(const char *entry, const char *name, const char *registered) {
  const char *listed = registered && *registered ? registered : "none";
  cmodel::session::last_error() =
      fmt::format("{}: no custom op named '{}' (registered: {})", entry ? entry : "?", name ? name : "(null)", listed);
  return -1;
}
