// params.cc: JSON object -> custom_param_t array (see params.h).
//
// Each refusal names the parameter (its key) and what is wrong with it, so a
// mistyped value is reported instead of silently shifting the parameters
// that follow it (the vendor converters drop or truncate such values).
#include "tpu_runtime/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>

#include "tpu_runtime/error.h"
#include "tpu_runtime/json_limits.h"

namespace tpu_runtime {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kMaxArrayElements = sizeof(custom_param_t::int_arr_t) / sizeof(int);
static_assert(kMaxArrayElements == 16);
static_assert(sizeof(custom_param_t) == 64);

constexpr const char *kAllowed = "a parameter is a number, a bool or a flat array of 1 to 16 numbers";

[[noreturn]] void refuse(std::string_view key, std::string_view what) {
  throw Error(fmt::format("parameter '{}': {}", key, what));
}

// The value a message is about: "7" for a scalar, "element 3 = 7" in an array.
template <typename T>
std::string subject(int index, const T &value) {
  return index < 0 ? fmt::format("{}", value) : fmt::format("element {} = {}", index, value);
}

// What a JSON value that is not a number is, for the messages.
std::string describe(const Json &value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::string: {
      std::string text = value.get_ref<const std::string &>();
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      return fmt::format("a string (\"{}\")", text);
    }
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::binary: return "binary data";
    case Json::value_t::boolean: return "a bool";
    case Json::value_t::discarded: return "a discarded value";
    default: return "a number";
  }
}

// An integer (or bool) as an int32; `index` < 0 for a scalar parameter.
int to_int32(std::string_view key, int index, const Json &value) {
  if (value.is_boolean()) return value.get<bool>() ? 1 : 0;
  if (value.is_number_unsigned()) {
    const std::uint64_t v = value.get<std::uint64_t>();
    if (v > std::uint64_t(std::numeric_limits<std::int32_t>::max()))
      refuse(key, fmt::format("{} does not fit a 32-bit int", subject(index, v)));
    return int(v);
  }
  const std::int64_t v = value.get<std::int64_t>();
  if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
    refuse(key, fmt::format("{} does not fit a 32-bit int", subject(index, v)));
  return int(v);
}

// A floating-point number as a float: finite, within float range, and not a
// nonzero value that would become 0.
float to_float(std::string_view key, int index, const Json &value) {
  const double v = value.get<double>();
  if (!std::isfinite(v)) refuse(key, fmt::format("{} is not a finite number", subject(index, v)));
  if (std::fabs(v) > double(FLT_MAX))
    refuse(key, fmt::format("{} is out of float range (magnitude at most {})", subject(index, v), FLT_MAX));
  const float f = float(v);
  if (v != 0 && f == 0)
    refuse(key, fmt::format("{} is nonzero but becomes 0 as a float (magnitude at least {})", subject(index, v),
                            FLT_TRUE_MIN));
  return f;
}

// Integers and bools are numbers of the int kind; floats of the float kind.
bool is_integral(const Json &value) { return value.is_boolean() || value.is_number_integer(); }

custom_param_t pack_array(std::string_view key, const Json &array) {
  custom_param_t element;
  std::memset(&element, 0, sizeof element);
  if (array.empty()) refuse(key, fmt::format("an empty array; arrays need 1 to {} elements", kMaxArrayElements));
  if (array.size() > kMaxArrayElements)
    refuse(key, fmt::format("an array of {} elements; custom_param_t holds at most {}", array.size(),
                            kMaxArrayElements));
  bool any_float = false;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const Json &item = array[i];
    if (item.is_array()) refuse(key, fmt::format("element {} is an array; arrays must be flat", i));
    if (!item.is_number() && !item.is_boolean())
      refuse(key, fmt::format("element {} is {}; {}", i, describe(item), kAllowed));
    any_float = any_float || item.is_number_float();
  }
  for (std::size_t i = 0; i < array.size(); ++i) {
    const Json &item = array[i];
    if (!any_float) {
      element.int_arr_t[i] = to_int32(key, int(i), item);
    } else if (is_integral(item)) {
      // Integers in a float array still have to be ints; they become floats.
      element.float_arr_t[i] = float(to_int32(key, int(i), item));
    } else {
      element.float_arr_t[i] = to_float(key, int(i), item);
    }
  }
  return element;
}

custom_param_t pack_value(std::string_view key, const Json &value) {
  custom_param_t element;
  std::memset(&element, 0, sizeof element);
  if (is_integral(value)) {
    element.int_t = to_int32(key, -1, value);
  } else if (value.is_number_float()) {
    element.float_t = to_float(key, -1, value);
  } else if (value.is_array()) {
    element = pack_array(key, value);
  } else {
    refuse(key, fmt::format("{} is not a parameter value; {}", describe(value), kAllowed));
  }
  return element;
}

// Checks the text for what the parsed value no longer shows: keys given
// twice (the parser keeps only one) and integers too long for 64 bits (the
// parser turns them into doubles).
class TextChecker : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &text) override {
    if (text.find_first_of(".eE") == string_t::npos)
      refuse(key_, fmt::format("{} does not fit a 32-bit int", text));
    return true;
  }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override {
    ++depth_;
    return true;
  }
  bool key(string_t &key) override {
    if (depth_ == 1) {
      if (!keys_.insert(key).second) refuse(key, "given twice; every parameter needs its own key");
      key_ = key;
    }
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &) override { return false; }

 private:
  int depth_ = 0;
  std::string key_;
  std::set<std::string> keys_;
};

}  // namespace

namespace {

const char *kind_name(ParamKind kind) {
  switch (kind) {
    case ParamKind::int_scalar: return "int";
    case ParamKind::float_scalar: return "float";
    case ParamKind::int_array: return "int[]";
    case ParamKind::float_array: return "float[]";
  }
  return "?";
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// One value for a slot of `want` kind (int or float), converted where the
// rule allows; `label` names it in messages ("op 'crop' parameter 'h'").
Json typed_value(const std::string &label, bool want_float, const Json &value, std::vector<std::string> &warnings) {
  if (want_float) {
    if (value.is_number_float()) return value;
    if (value.is_number_integer()) {
      warnings.push_back(fmt::format("{}: the integer {} is converted to the float its declaration asks for", label,
                                     value.dump()));
      return Json(value.get<double>());
    }
  } else {
    if (value.is_boolean() || value.is_number_integer()) return value;
    if (value.is_number_float()) {
      const double v = value.get<double>();
      if (std::isfinite(v) && std::trunc(v) == v && std::fabs(v) <= 2147483647.0) {
        warnings.push_back(fmt::format("{}: the float {} is converted to the int its declaration asks for", label,
                                       value.dump()));
        return Json(std::int64_t(v));
      }
      throw Error(fmt::format("{} is declared int, but {} is not a whole number", label, value.dump()));
    }
  }
  throw Error(fmt::format("{} is declared {}, but is {}", label, want_float ? "float" : "int", describe(value)));
}

}  // namespace

ParamTypes parse_param_types(std::string_view declaration, std::string_view where) {
  ParamTypes types;
  std::set<std::string> names;
  std::size_t start = 0;
  while (start <= declaration.size()) {
    const std::size_t comma = std::min(declaration.find(',', start), declaration.size());
    const std::string_view item = trimmed(declaration.substr(start, comma - start));
    start = comma + 1;
    if (item.empty() && types.empty() && comma == declaration.size()) break;  // "" declares no parameters
    const std::size_t colon = item.find(':');
    const std::string name(trimmed(item.substr(0, colon)));
    const std::string_view kind = colon == std::string_view::npos ? std::string_view() : trimmed(item.substr(colon + 1));
    if (name.empty())
      throw Error(fmt::format("{}: parameter declaration \"{}\": an item without a name", where, declaration));
    if (!names.insert(name).second)
      throw Error(fmt::format("{}: parameter declaration \"{}\": '{}' declared twice", where, declaration, name));
    ParamKind k;
    if (kind == "int") k = ParamKind::int_scalar;
    else if (kind == "float") k = ParamKind::float_scalar;
    else if (kind == "int[]") k = ParamKind::int_array;
    else if (kind == "float[]") k = ParamKind::float_array;
    else
      throw Error(fmt::format("{}: parameter '{}' has kind \"{}\"; the kinds are int, float, int[], float[]", where,
                              name, kind));
    types.push_back({name, k});
  }
  return types;
}

PackedParams PackedParams::from_json(const nlohmann::ordered_json &params, const ParamTypes &types,
                                     std::string_view op, std::vector<std::string> &warnings) {
  if (!params.is_object())
    throw Error(fmt::format("op '{}': parameters must be a JSON object of name: value pairs, not {}", op,
                            describe(params)));
  std::string declared;
  for (const ParamSlot &slot : types)
    declared += fmt::format("{}{}: {}", declared.empty() ? "" : ", ", slot.name, kind_name(slot.kind));
  for (auto it = params.begin(); it != params.end(); ++it) {
    const bool known = std::any_of(types.begin(), types.end(), [&](const ParamSlot &s) { return s.name == it.key(); });
    if (!known)
      throw Error(fmt::format("op '{}' has no parameter '{}' (its declared parameters: {})", op, it.key(),
                              declared.empty() ? "none" : declared));
  }
  Json ordered = Json::object();  // in the declaration's order
  for (const ParamSlot &slot : types) {
    const std::string label = fmt::format("op '{}' parameter '{}'", op, slot.name);
    if (!params.contains(slot.name))
      throw Error(fmt::format("{} ({}) is missing (declared: {})", label, kind_name(slot.kind), declared));
    const Json &value = params.at(slot.name);
    const bool want_float = slot.kind == ParamKind::float_scalar || slot.kind == ParamKind::float_array;
    if (slot.kind == ParamKind::int_array || slot.kind == ParamKind::float_array) {
      if (!value.is_array()) throw Error(fmt::format("{} is declared {}, but is {}", label, kind_name(slot.kind),
                                                     describe(value)));
      Json items = Json::array();
      for (std::size_t i = 0; i < value.size(); ++i)
        items.push_back(typed_value(fmt::format("{} element {}", label, i), want_float, value[i], warnings));
      ordered[slot.name] = std::move(items);
    } else {
      if (value.is_array()) throw Error(fmt::format("{} is declared {}, but is an array", label, kind_name(slot.kind)));
      ordered[slot.name] = typed_value(label, want_float, value, warnings);
    }
  }
  return from_json(ordered);
}

PackedParams PackedParams::from_json(const nlohmann::ordered_json &params) {
  if (!params.is_object())
    throw Error(fmt::format("parameters must be a JSON object of name: value pairs, not {}", describe(params)));
  std::vector<custom_param_t> elements(1);
  elements.reserve(1 + params.size() + kZeroGuardElements);
  for (const auto &[key, value] : params.items()) elements.push_back(pack_value(key, value));
  return PackedParams(std::move(elements));
}

PackedParams PackedParams::from_json_text(const std::string &text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return PackedParams();
  check_json_depth(text, "parameters");
  Json parsed;
  try {
    parsed = Json::parse(text);
  } catch (const Json::exception &e) {  // parse_error, or out_of_range for a number like 1e400
    throw Error(fmt::format("parameters are not valid JSON: {}", e.what()));
  }
  if (!parsed.is_object()) return from_json(parsed);  // refuses with the value's kind
  TextChecker checker;
  Json::sax_parse(text, &checker);
  return from_json(parsed);
}

PackedParams::PackedParams(std::vector<custom_param_t> elements)
    : elements_(std::move(elements)) {
  elements_.resize(elements_.size() + kZeroGuardElements);  // value-initialized: all bytes zero
}

PackedParams PackedParams::from_bytes(std::span<const uint8_t> bytes, std::string_view where) {
  if (bytes.empty() || bytes.size() % sizeof(custom_param_t))
    throw Error(fmt::format("{}: {} bytes is not a whole number (>= 1) of {}-byte custom_param_t elements", where,
                            bytes.size(), sizeof(custom_param_t)));
  const std::size_t count = bytes.size() / sizeof(custom_param_t);
  if (count > kMaxPackedElements)
    throw Error(fmt::format("{}: {} parameters is more than this SDK accepts ({})", where, count - 1,
                            kMaxPackedElements - 1));
  std::vector<custom_param_t> elements(count);
  std::memcpy(elements.data(), bytes.data(), bytes.size());
  return PackedParams(std::move(elements));
}

void PackedParams::set_global_buffer(unsigned long long address) {
  static_assert(sizeof(address) == sizeof(std::uint64_t));
  clear_reserved();
  std::memcpy(&elements_[0], &address, sizeof address);
}

void PackedParams::set_local_buffer(int local_offset) {
  clear_reserved();
  elements_[0].int_t = local_offset;
}

void PackedParams::clear_reserved() { std::memset(&elements_[0], 0, sizeof(custom_param_t)); }

}  // namespace tpu_runtime
