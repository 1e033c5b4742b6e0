// arrays.cc: tensors as .npy arrays (storage dtypes, shape checks, float
// decoding and encoding) and hex text; see arrays.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

#include "io/arrays.h"
#include "io/number_text.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace detail {

std::string storage_dtype(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32: return "<f4";
    case Dtype::fp16: return "<f2";
    case Dtype::bf16: return std::string(npz::dtype_bf16);
    case Dtype::int8: return "|i1";
    case Dtype::uint8: return "|u1";
    case Dtype::int16: return "<i2";
    case Dtype::uint16: return "<u2";
    case Dtype::int32: return "<i4";
    case Dtype::uint32: return "<u4";
  }
  throw Error("storage_dtype: unknown dtype");
}

int64_t element_count(const Shape &shape) {
  int64_t n = 1;
  for (int d : shape) n *= d;
  return n;
}

std::vector<int64_t> npz_shape(const Shape &shape) { return std::vector<int64_t>(shape.begin(), shape.end()); }

std::string shape_text(const Shape &shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

void check_arrays(const std::vector<TensorDecl> &declared, const npz::Arrays &arrays, std::string_view what) {
  std::vector<std::string> names;
  for (const TensorDecl &t : declared) names.push_back(t.name);
  for (const TensorDecl &t : declared) {
    auto it = arrays.find(t.name);
    if (it == arrays.end()) {
      std::vector<std::string> present;
      for (const auto &[name, array] : arrays) present.push_back(name);
      throw Error(fmt::format("{}: no array '{}' for input '{}' (the file holds: {}; the model's inputs: {})", what,
                              t.name, t.name, present.empty() ? "nothing" : fmt::format("{}", fmt::join(present, ", ")),
                              fmt::join(names, ", ")));
    }
    const npz::Array &a = it->second;
    if (a.shape != npz_shape(t.shape))
      throw Error(fmt::format("{}: array '{}' has shape [{}], but input '{}' is {}", what, t.name,
                              fmt::join(a.shape, ","), t.name, shape_text(t.shape)));
    const std::string want = storage_dtype(t.dtype);
    if (a.dtype != want)
      throw Error(fmt::format("{}: array '{}' has dtype {}, but input '{}' is {}, stored as {}{}{}", what, t.name,
                              a.dtype, t.name, dtype_name(t.dtype), want,
                              t.dtype == Dtype::bf16 ? " (the raw bf16 bits; see docs/model-file.md)" : "",
                              t.text ? ", or text (a <U<n> array of numbers written out)" : ""));
  }
  for (const auto &[name, array] : arrays)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw Error(fmt::format("{}: array '{}' is not an input of the model (inputs: {})", what, name,
                              fmt::join(names, ", ")));
}

namespace {

// `array` of 64-bit integers (Wide) as 32-bit ones (Narrow), each value
// checked.
template <typename Wide, typename Narrow>
npz::Array narrowed_integers(const npz::Array &array, std::string_view descr, std::string_view what) {
  const std::size_t count = array.data.size() / sizeof(Wide);
  npz::Array out{std::string(descr), array.shape, std::vector<uint8_t>(count * sizeof(Narrow))};
  for (std::size_t i = 0; i < count; ++i) {
    Wide v;
    std::memcpy(&v, array.data.data() + i * sizeof v, sizeof v);
    if (v < Wide(std::numeric_limits<Narrow>::min()) || v > Wide(std::numeric_limits<Narrow>::max()))
      throw Error(fmt::format("{}: element {} is {}, which {} cannot hold: the model holds this input as {} on the "
                              "device",
                              what, i, v, descr == "<i4" ? "int32" : "uint32", descr == "<i4" ? "int32" : "uint32"));
    const Narrow narrow = Narrow(v);
    std::memcpy(out.data.data() + i * sizeof narrow, &narrow, sizeof narrow);
  }
  return out;
}

}  // namespace

npz::Arrays narrowed_inputs(const std::vector<TensorDecl> &declared, const npz::Arrays &arrays, std::string_view what) {
  npz::Arrays out = arrays;
  for (const TensorDecl &t : declared) {
    auto it = out.find(t.name);
    if (it == out.end()) continue;
    npz::Array &a = it->second;
    if (t.scalar && a.shape.empty()) a.shape = npz_shape(t.shape);
    if (t.text && npz::is_text_dtype(a.dtype)) {
      a = numbers_of_text(a, t.dtype, fmt::format("{}: array '{}' for text input '{}'", what, t.name, t.name));
      continue;
    }
    const std::string where = fmt::format("{}: array '{}' ({}) for input '{}'", what, t.name,
                                          a.dtype == "<i8" ? "int64" : "uint64", t.name);
    if (t.dtype == Dtype::int32 && a.dtype == "<i8") a = narrowed_integers<int64_t, int32_t>(a, "<i4", where);
    else if (t.dtype == Dtype::uint32 && a.dtype == "<u8") a = narrowed_integers<uint64_t, uint32_t>(a, "<u4", where);
    else if (t.dtype == Dtype::uint8 && a.dtype == "|b1") a.dtype = "|u1";  // numpy's bools are the bytes 0 / 1
  }
  return out;
}

namespace {

// The elements of `array`, whose bytes must be that many of `dtype`.
std::size_t checked_count(const npz::Array &array, Dtype dtype) {
  const std::size_t count = std::size_t(array.element_count());
  if (array.data.size() != count * dtype_size(dtype))
    throw Error(fmt::format("array of {} elements holds {} bytes, not {} of {}", count, array.data.size(),
                            count * dtype_size(dtype), dtype_name(dtype)));
  return count;
}

}  // namespace

std::vector<float> decode_array(const npz::Array &array, Dtype dtype) {
  const std::size_t count = checked_count(array, dtype);
  std::vector<float> values(count);
  decode_floats(dtype, array.data.data(), count, values.data());
  return values;
}

std::vector<double> decode_values(const npz::Array &array, Dtype dtype) {
  const std::size_t count = checked_count(array, dtype);
  std::vector<double> values(count);
  tpu_runtime::decode_values(dtype, array.data.data(), count, values.data());
  return values;
}

npz::Array encode_values(const Shape &shape, Dtype dtype, std::span<const double> values) {
  npz::Array a;
  a.dtype = storage_dtype(dtype);
  a.shape = npz_shape(shape);
  a.data.resize(values.size() * dtype_size(dtype));
  tpu_runtime::encode_values(dtype, values.data(), values.size(), a.data.data());
  return a;
}

npz::Array encode_array(const Shape &shape, Dtype dtype, std::span<const float> values) {
  // Doubles hold the floats exactly, and encode_values stores them as encode_floats does.
  const std::vector<double> wide(values.begin(), values.end());
  return encode_values(shape, dtype, wide);
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    text += kDigits[b >> 4];
    text += kDigits[b & 15];
  }
  return text;
}

std::vector<uint8_t> from_hex(std::string_view text, std::string_view where) {
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw Error(fmt::format("{}: '{}' is not a hex digit", where, c));
  };
  if (text.size() % 2) throw Error(fmt::format("{}: odd number of hex digits ({})", where, text.size()));
  std::vector<uint8_t> bytes(text.size() / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(digit(text[2 * i]) << 4 | digit(text[2 * i + 1]));
  return bytes;
}

}  // namespace detail
}  // namespace tpu_runtime
