// json_limits.cc: check_json_depth (tpu_runtime/json_limits.h).
#include "tpu_runtime/json_limits.h"

#include <fmt/format.h>

#include "tpu_runtime/error.h"

namespace tpu_runtime {

void check_json_depth(std::string_view text, std::string_view where, int max) {
  int depth = 0;
  bool in_string = false, escaped = false;
  std::size_t line = 1, column = 0;
  for (char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max)
        throw Error(fmt::format("{}: JSON nested deeper than {} levels (line {}, column {}); the SDK reads at most {} "
                                "levels of arrays and objects",
                                where, max, line, column, max));
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
}

}  // namespace tpu_runtime
