// params.h: an op's parameters, from JSON to the custom_param_t array.
//
// A JSON object becomes one custom_param_t per key, in the order the keys
// are written, after the reserved element 0 (which stays zero here; the
// runtime puts the scratch-buffer address there when it calls the op):
//
//   integer (or bool)         int_t          must fit a 32-bit int
//   floating-point number     float_t        must be finite and fit a float
//   array of integers         int_arr_t      1..16 elements
//   array with any float      float_arr_t    1..16 elements
//
// Everything else (strings, null, nested arrays or objects, empty or longer
// arrays, a value that does not fit) is refused with an Error naming the
// parameter, so a typo never shifts the parameters that follow it.
//
// Declared types. An op may declare its parameters in its plugin with
//
//   const char *param_types_<op>(void) { return "b:float, order:int[]"; }
//
// (kinds: int, float, int[], float[]). Then the JSON keys must be exactly
// the declared names (a missing or unknown key is refused, naming the op and
// the key), the elements follow the declaration's order whatever the JSON's,
// and values are matched to their slot: an integer for a float slot becomes
// that float, with a warning (the kernel would otherwise read the integer's
// bits as a float: 1 as 1.4e-45); a float for an int slot is refused unless
// it is a whole number, which becomes the int with a warning; a bool counts
// as an int. Ops without the hook keep the rule of the table above, and
// each integer they are given is named in a warning (their parser might read
// a float there).
//
// Behind the last element the array is followed by kZeroGuardElements
// zeroed elements that param_size (size_bytes()) does not count: an op's
// parser that reads a parameter the net or the test did not give sees 0,
// the same on every run, instead of reading past the end of the array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api_common.h"

namespace tpu_runtime {

enum class ParamKind { int_scalar, float_scalar, int_array, float_array };
struct ParamSlot {
  std::string name;
  ParamKind kind;
};
using ParamTypes = std::vector<ParamSlot>;

// "b:float, order:int[]" -> slots; throws Error naming `where` on a bad
// declaration (an unknown kind, a name given twice, an empty name).
ParamTypes parse_param_types(std::string_view declaration, std::string_view where);

class PackedParams {
 public:
  PackedParams() : PackedParams(std::vector<custom_param_t>(1)) {}  // only the reserved element

  // Throws Error for anything the table above refuses.
  static PackedParams from_json(const nlohmann::ordered_json &params);
  // `text` is a JSON object ("{}" or "" for no parameters).
  static PackedParams from_json_text(const std::string &text);
  // By declared types (above); conversions are reported in `warnings`, each
  // naming `op` and the parameter.
  static PackedParams from_json(const nlohmann::ordered_json &params, const ParamTypes &types, std::string_view op,
                                std::vector<std::string> &warnings);
  // The array as stored (e.g. in a model file): a whole number, at least
  // one, of custom_param_t elements, at most kMaxPackedElements. Element 0
  // is kept as it is. Throws Error naming `where` otherwise.
  static PackedParams from_bytes(std::span<const uint8_t> bytes, std::string_view where);
  static constexpr std::size_t kMaxPackedElements = 4096;

  // The array the hooks and api functions receive; element 0 is reserved.
  const custom_param_t *data() const { return elements_.data(); }
  custom_param_t *data() { return elements_.data(); }
  // Bytes of the whole array (the vendor's param_size).
  int size_bytes() const { return int(count() * sizeof(custom_param_t)); }
  // The array's bytes, as from_bytes() takes them back.
  std::span<const uint8_t> bytes() const {
    return {reinterpret_cast<const uint8_t *>(elements_.data()), count() * sizeof(custom_param_t)};
  }
  std::size_t count() const { return elements_.size() - kZeroGuardElements; }

  // Element 0 as a global layer reads it (int64 address) / a local one (int).
  void set_global_buffer(unsigned long long address);
  void set_local_buffer(int local_offset);
  void clear_reserved();

 private:
  static constexpr std::size_t kZeroGuardElements = 16;

  // Takes the elements (element 0 first) and appends the zero guard.
  explicit PackedParams(std::vector<custom_param_t> elements);

  std::vector<custom_param_t> elements_;  // count() elements, then the zero guard
};

}  // namespace tpu_runtime
