// json_limits.cc: check_json_depth (tpu_runtime/json_limits.h).
#include "tpu_runtime/json_limits.h"

#include <fmt/format.h>

#include "tpu_runtime/error.h"

namespace tpu_runtime {

std::optional<JsonPosition> json_too_deep(std::string_view text, int max) {
  int depth = 0;
  bool in_string = false, escaped = false;
  JsonPosition at;
  for (char c : text) {
    ++at.column;
    if (c == '\n') {
      ++at.line;
      at.column = 0;
    }
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max) return at;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

void check_json_depth(std::string_view text, std::string_view where, int max) {
  if (const std::optional<JsonPosition> at = json_too_deep(text, max))
    throw Error(fmt::format("{}: JSON nested deeper than {} levels (line {}, column {}); the SDK reads at most {} "
                            "levels of arrays and objects",
                            where, max, at->line, at->column, max));
}

}  // namespace tpu_runtime
