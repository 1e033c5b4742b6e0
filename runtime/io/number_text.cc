// number_text.cc: see number_text.h.
#include "io/number_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "io/arrays.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

// The value as `dtype` holds it, for round-trip checks.
float held(float value, Dtype dtype) {
  if (dtype == Dtype::fp32) return value;
  uint16_t bits = 0;
  float back = 0;
  encode_floats(dtype, &value, 1, &bits);
  decode_floats(dtype, &bits, 1, &back);
  return back;
}

// The fewest significant digits that read back to `value` in `dtype`, as
// scientific text ("3.9187793e-02").
std::string shortest_scientific(float value, Dtype dtype) {
  char buffer[64];
  for (int precision = 0;; ++precision) {
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific,
                                         precision);
    if (ec != std::errc()) throw Error("cannot format a number");  // 64 bytes hold any float
    float back = 0;
    std::from_chars(buffer, end, back);
    if (held(back, dtype) == value || precision >= 8)  // 9 digits tell every fp32 apart
      return std::string(buffer, end);
  }
}

// numpy's layout of shortest scientific digits: positional, with ".0" on a
// whole number, or d[.ddd]e+XX when `scientific`.
std::string numpy_layout(const std::string &scientific_text, bool scientific) {
  const std::size_t e = scientific_text.find('e');
  const bool negative = scientific_text[0] == '-';
  std::string digits = scientific_text.substr(negative ? 1 : 0, e - (negative ? 1 : 0));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(scientific_text.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (scientific) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    return out + fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  if (exponent < 0) return out + "0." + std::string(std::size_t(-exponent - 1), '0') + digits;
  const std::size_t point = std::size_t(exponent) + 1;
  if (digits.size() <= point) return out + digits + std::string(point - digits.size(), '0') + ".0";
  return out + digits.substr(0, point) + "." + digits.substr(point);
}

std::string element_text(const uint8_t *bytes, Dtype dtype) {
  if (!dtype_info(dtype).is_float) {  // doubles hold every value of the integer types
    double value = 0;
    decode_values(dtype, bytes, 1, &value);
    return fmt::format("{}", int64_t(value));
  }
  float value = 0;
  decode_floats(dtype, bytes, 1, &value);
  return float_text(value, dtype);
}

std::string_view trimmed(std::string_view text) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// A double as the float nearest it rounded to odd (an inexact result keeps
// its last bit set): rounding that float again to fp16 or bf16 (nearest
// even) then gives the double's own nearest, with no double rounding.
float rounded_to_odd(double wide) {
  if (std::isnan(wide)) return std::nanf("");
  if (std::fabs(wide) > double(FLT_MAX)) return wide < 0 ? -INFINITY : INFINITY;
  float narrow = float(wide);
  if (double(narrow) == wide) return narrow;
  if (std::fabs(double(narrow)) > std::fabs(wide)) narrow = std::nextafter(narrow, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &narrow, sizeof bits);
  bits |= 1;
  std::memcpy(&narrow, &bits, sizeof bits);
  return narrow;
}

// The text's number in `dtype` (as a float holding it: fp32 correctly
// rounded, fp16 / bf16 rounded to odd for the encoder's final rounding).
std::optional<float> parse_float(std::string_view text, Dtype dtype) {
  text = trimmed(text);
  const bool negative = !text.empty() && text.front() == '-';
  if (!text.empty() && (text.front() == '+' || negative)) text.remove_prefix(1);
  if (equals_ignoring_case(text, "nan")) return std::nanf("");
  if (equals_ignoring_case(text, "inf") || equals_ignoring_case(text, "infinity"))
    return negative ? -INFINITY : INFINITY;
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '.'))
    return std::nullopt;  // no second sign, no "nan(...)" forms
  const char *first = text.data(), *last = text.data() + text.size();
  // from_chars leaves the value alone beyond the range: strtod then gives
  // infinity or the subnormal, as numpy reads it.
  auto out_of_range = [&] { return std::strtod(std::string(text).c_str(), nullptr); };
  float value = 0;
  if (dtype == Dtype::fp32) {
    const auto [end, ec] = std::from_chars(first, last, value);
    if (end != last || (ec != std::errc() && ec != std::errc::result_out_of_range)) return std::nullopt;
    if (ec == std::errc::result_out_of_range) {
      const double wide = out_of_range();
      value = std::fabs(wide) > double(FLT_MAX) ? INFINITY : float(wide);
    }
  } else {
    double wide = 0;
    const auto [end, ec] = std::from_chars(first, last, wide);
    if (end != last || (ec != std::errc() && ec != std::errc::result_out_of_range)) return std::nullopt;
    value = rounded_to_odd(ec == std::errc::result_out_of_range ? out_of_range() : wide);
  }
  return negative ? -value : value;
}

std::optional<int64_t> parse_integer(std::string_view text) {
  text = trimmed(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string float_text(float value, Dtype dtype) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // numpy's choice, made on the value itself (in double): positional from 1e-4 up to 1e16.
  const double magnitude = std::fabs(double(value));
  const bool scientific = magnitude != 0 && (magnitude < 1e-4 || magnitude >= 1e16);
  return numpy_layout(shortest_scientific(value, dtype), scientific);
}

npz::Array text_of_numbers(const npz::Array &array, Dtype dtype, std::string_view where) {
  const std::size_t count = std::size_t(array.element_count()), size = dtype_size(dtype);
  if (array.data.size() != count * size)
    throw Error(fmt::format("{}: {} elements of {} need {} bytes, the array holds {}", where, count, dtype_name(dtype),
                            count * size, array.data.size()));
  std::vector<std::string> texts(count);
  for (std::size_t i = 0; i < count; ++i) texts[i] = element_text(array.data.data() + i * size, dtype);
  return npz::text_array(array.shape, texts, where);
}

npz::Array numbers_of_text(const npz::Array &array, Dtype dtype, std::string_view where) {
  const std::vector<std::string> texts = npz::text_values(array, where);
  npz::Array out;
  out.dtype = storage_dtype(dtype);
  out.shape = array.shape;
  out.data.resize(texts.size() * dtype_size(dtype));
  const bool is_float = dtype_info(dtype).is_float;
  const auto [low, high] = is_float ? std::pair<double, double>{0, 0} : integer_range(dtype);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    auto refuse = [&](std::string_view expected) {
      throw Error(fmt::format("{}: element {} is '{}', which is not {}", where, i, texts[i], expected));
    };
    if (is_float) {
      const std::optional<float> v = parse_float(texts[i], dtype);
      if (!v) refuse("a number");
      encode_floats(dtype, &*v, 1, out.data.data() + i * dtype_size(dtype));
    } else {
      const std::optional<int64_t> v = parse_integer(texts[i]);
      if (!v || double(*v) < low || double(*v) > high)
        refuse(fmt::format("an integer {} holds ([{}, {}])", dtype_name(dtype), int64_t(low), int64_t(high)));
      const double exact = double(*v);  // within the dtype's range: exact
      encode_values(dtype, &exact, 1, out.data.data() + i * dtype_size(dtype));
    }
  }
  return out;
}

}  // namespace tpu_runtime::detail
