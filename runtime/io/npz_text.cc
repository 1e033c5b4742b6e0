// npz_text.cc: text arrays ("<U<n>", npz.h), numpy's fixed-width UTF-32
// strings, to and from UTF-8.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tpu_runtime/npz.h"

namespace tpu_runtime::npz {
namespace {

bool is_scalar_value(uint32_t code) { return code <= 0x10FFFF && (code < 0xD800 || code > 0xDFFF); }

void append_utf8(std::string &out, uint32_t code) {
  if (code < 0x80) {
    out += char(code);
  } else if (code < 0x800) {
    out += char(0xC0 | (code >> 6));
    out += char(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += char(0xE0 | (code >> 12));
    out += char(0x80 | ((code >> 6) & 0x3F));
    out += char(0x80 | (code & 0x3F));
  } else {
    out += char(0xF0 | (code >> 18));
    out += char(0x80 | ((code >> 12) & 0x3F));
    out += char(0x80 | ((code >> 6) & 0x3F));
    out += char(0x80 | (code & 0x3F));
  }
}

// The code points of UTF-8 text; nothing when the bytes are not UTF-8
// (overlong forms, surrogates and truncated sequences included).
std::optional<std::vector<uint32_t>> code_points(std::string_view text) {
  std::vector<uint32_t> codes;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = uint8_t(text[i]);
    const int extra = lead < 0x80 ? 0 : (lead >> 5) == 6 ? 1 : (lead >> 4) == 14 ? 2 : (lead >> 3) == 30 ? 3 : -1;
    if (extra < 0 || text.size() - i <= std::size_t(extra)) return std::nullopt;
    uint32_t code = extra == 0 ? lead : lead & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      const auto next = uint8_t(text[i + std::size_t(k)]);
      if ((next >> 6) != 2) return std::nullopt;
      code = (code << 6) | (next & 0x3F);
    }
    static constexpr uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[extra] || !is_scalar_value(code)) return std::nullopt;
    codes.push_back(code);
    i += std::size_t(extra) + 1;
  }
  return codes;
}

}  // namespace

bool is_text_dtype(std::string_view dtype) { return dtype.size() >= 3 && dtype[0] == '<' && dtype[1] == 'U'; }

std::vector<std::string> text_values(const Array &array, std::string_view where) {
  if (!is_text_dtype(array.dtype))
    throw Error(fmt::format("{}: an array of dtype '{}' is not text (<U<n>)", where, array.dtype));
  const std::size_t width = dtype_size(array.dtype) / 4, count = std::size_t(array.element_count());
  if (array.data.size() != count * width * 4)
    throw Error(fmt::format("{}: {} text elements of {} characters need {} bytes, the array holds {}", where, count,
                            width, count * width * 4, array.data.size()));
  std::vector<std::string> values(count);
  for (std::size_t e = 0; e < count; ++e) {
    const uint8_t *p = array.data.data() + e * width * 4;
    std::size_t length = width;
    auto code_at = [&](std::size_t k) {
      return uint32_t(p[4 * k]) | uint32_t(p[4 * k + 1]) << 8 | uint32_t(p[4 * k + 2]) << 16 |
             uint32_t(p[4 * k + 3]) << 24;
    };
    while (length > 0 && code_at(length - 1) == 0) --length;
    for (std::size_t k = 0; k < length; ++k) {
      const uint32_t code = code_at(k);
      if (!is_scalar_value(code))
        throw Error(fmt::format("{}: element {} holds U+{:X} at character {}, which is not a Unicode character",
                                where, e, code, k));
      append_utf8(values[e], code);
    }
  }
  return values;
}

Array text_array(std::vector<int64_t> shape, const std::vector<std::string> &values, std::string_view where) {
  Array a;
  a.shape = std::move(shape);
  if (uint64_t(a.element_count()) != values.size())
    throw Error(fmt::format("{}: {} text values for a shape of {} elements", where, values.size(), a.element_count()));
  std::vector<std::vector<uint32_t>> codes;
  std::size_t width = 1;
  for (std::size_t e = 0; e < values.size(); ++e) {
    std::optional<std::vector<uint32_t>> c = code_points(values[e]);
    if (!c) throw Error(fmt::format("{}: element {} is not UTF-8 text", where, e));
    width = std::max(width, c->size());
    codes.push_back(std::move(*c));
  }
  a.dtype = fmt::format("<U{}", width);
  a.data.assign(values.size() * width * 4, 0);
  for (std::size_t e = 0; e < codes.size(); ++e)
    for (std::size_t k = 0; k < codes[e].size(); ++k)
      for (int b = 0; b < 4; ++b) a.data[(e * width + k) * 4 + std::size_t(b)] = uint8_t(codes[e][k] >> (8 * b));
  return a;
}

}  // namespace tpu_runtime::npz
