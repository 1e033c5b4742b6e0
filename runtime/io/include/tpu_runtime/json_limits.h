// json_limits.h: how deep a JSON document the SDK reads may nest.
//
// nlohmann::json parses iteratively, but copying, comparing, dumping and
// walking a value recurse once per level: a net, a parameter object or a
// cases file nested 100,000 deep would overflow the stack long after it
// parsed. Every JSON text the SDK reads from a file or a caller is checked
// with check_json_depth before it is parsed.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace tpu_runtime {

// Deeper than any net, parameter object, cases file or model metadata the
// SDK writes or documents (they nest a handful of levels).
inline constexpr int kMaxJsonDepth = 256;

// Where the arrays and objects of `text` (strings excluded) first nest
// deeper than `max`, or nothing.
struct JsonPosition {
  std::size_t line = 1, column = 0;
};
std::optional<JsonPosition> json_too_deep(std::string_view text, int max);

// Error "<where>: JSON nested deeper than <max> levels (line L, column C)"
// when the arrays and objects of `text` (strings excluded) nest deeper than
// `max`. Nothing else is checked: the parser reports malformed text.
void check_json_depth(std::string_view text, std::string_view where, int max = kMaxJsonDepth);

}  // namespace tpu_runtime
