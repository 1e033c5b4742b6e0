// ppl_test_data.cc: the data utilities of PPL __TEST__ programs
// (ppl/ppl_test_host.h; docs/ppl.md "__TEST__ programs"): random values
// written through strides, and buffers read from .npy, .npz and raw binary
// files, converted to the buffer's element type.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cmodel_host.h"
#include "ppl/ppl_test_host.h"
#include "io/stream_bytes.h"
#include "ppl_test_state.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/npz.h"

namespace {

using namespace ppl_test_host;
using tpu_runtime::Dtype;
using tpu_runtime::Error;

// The registered buffer holding bytes [address, address + bytes), and the
// offset of `address` in it; Error when there is none.
std::pair<const buffer *, uint64_t> buffer_holding(uint64_t address, uint64_t bytes, const char *what) {
  const auto &buffers = state().buffers;
  auto it = buffers.upper_bound(address);
  if (it != buffers.begin()) {
    --it;
    const uint64_t offset = address - it->first;
    if (offset + bytes <= it->second.bytes) return {&it->second, offset};
  }
  throw Error(fmt::format("{}: bytes [{:#x}, {:#x}) are not inside one buffer of ppl::malloc / ppl::rand", what,
                          address, address + bytes));
}

// One element of a .npy dtype as a double.
double element_value(const std::string &dtype, const uint8_t *p) {
  const char kind = dtype[1];
  const size_t size = tpu_runtime::npz::dtype_size(dtype);
  if (kind == 'f' && size == 2) {
    float f;
    tpu_runtime::decode_floats(Dtype::fp16, p, 1, &f);
    return f;
  }
  auto read = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  if (kind == 'f') return size == 4 ? read(float{}) : read(double{});
  if (kind == 'b') return read(uint8_t{});
  if (kind == 'i') return size == 1 ? read(int8_t{}) : size == 2 ? read(int16_t{}) : size == 4 ? read(int32_t{}) : read(int64_t{});
  return size == 1 ? read(uint8_t{}) : size == 2 ? read(uint16_t{}) : size == 4 ? read(uint32_t{}) : read(uint64_t{});
}

// `values` in `dtype`'s bytes: floats rounded to nearest even, integers
// truncated toward zero as numpy's astype does; a value outside an integer
// type's range (or NaN) is refused, naming the element.
std::vector<uint8_t> encode(Dtype dtype, const std::vector<double> &values, const std::string &what) {
  const size_t size = tpu_runtime::dtype_size(dtype);
  std::vector<uint8_t> bytes(values.size() * size);
  if (tpu_runtime::dtype_info(dtype).is_float) {
    std::vector<float> floats(values.begin(), values.end());
    tpu_runtime::encode_floats(dtype, floats.data(), floats.size(), bytes.data());
    return bytes;
  }
  const auto [lo, hi] = integer_range(dtype);
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = std::trunc(values[i]);
    if (!(v >= lo && v <= hi))
      throw Error(fmt::format("{}: element {} is {}, outside {}'s range [{}, {}]", what, i, values[i],
                              tpu_runtime::dtype_name(dtype), lo, hi));
    const int64_t integer = static_cast<int64_t>(v);
    std::memcpy(bytes.data() + i * size, &integer, size);  // little-endian: the low bytes
  }
  return bytes;
}

// `path` as given, or when it is relative and missing there, next to the
// .pl file that `where` ("file:line") names.
std::string resolve(const std::string &path, const char *where) {
  namespace fs = std::filesystem;
  if (fs::path(path).is_absolute() || fs::exists(path)) return path;
  const std::string site = where;
  const fs::path beside = fs::path(site.substr(0, site.rfind(':'))).parent_path() / path;
  return fs::exists(beside) ? beside.string() : path;
}

std::vector<uint8_t> file_bytes(const std::string &path, const std::string &what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open '{}'", what, path));
  std::vector<uint8_t> bytes = tpu_runtime::detail::read_stream_bytes(in);
  if (in.bad()) throw Error(fmt::format("{}: cannot read '{}'", what, path));
  return bytes;
}

// The array a read_* call names: mode 1 an .npy file, 2 an array of an
// .npz file (`name`, or its only array when empty), 0 raw `file_dtype`.
tpu_runtime::npz::Array load_array(const std::string &path, int mode, const std::string &raw_dtype,
                                   const std::string &name, const std::string &what) {
  if (mode == 1) return tpu_runtime::npz::parse_npy(file_bytes(path, what), path);
  if (mode == 2) {
    tpu_runtime::npz::Arrays arrays = tpu_runtime::npz::read_npz(path);
    if (name.empty() && arrays.size() == 1) return arrays.begin()->second;
    const auto found = arrays.find(name);
    if (found == arrays.end()) {
      std::string names;
      for (const auto &[key, _] : arrays) names += (names.empty() ? "'" : ", '") + key + "'";
      throw Error(fmt::format("{}: '{}' has no array '{}' (it has {})", what, path, name, names));
    }
    return found->second;
  }
  tpu_runtime::npz::Array a;
  a.dtype = raw_dtype;
  a.data = file_bytes(path, what);
  const size_t size = tpu_runtime::npz::dtype_size(raw_dtype);
  if (a.data.size() % size != 0)
    throw Error(fmt::format("{}: '{}' has {} bytes, not a whole number of {}-byte elements", what, path, a.data.size(),
                            size));
  a.shape = {static_cast<int64_t>(a.data.size() / size)};
  return a;
}

// The .npy dtype of a PPL element type for raw files (bf16: no numpy type).
std::string raw_dtype_of(int ppl_dtype, const std::string &what) {
  const std::optional<Dtype> dtype = host_dtype(ppl_dtype);
  if (!dtype || *dtype == Dtype::bf16)
    throw Error(fmt::format("{}: a raw file of element type {} cannot be read (fp32, fp16, [u]int8/16/32 can)", what,
                            ppl_dtype));
  static const char *const names[] = {"<f4", "<f2", "", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4"};
  return names[static_cast<int>(*dtype)];
}

int failed(const Error &e) {
  std::fprintf(stderr, "%s\n", e.what());
  ++state().failures;
  return -1;
}

}  // namespace

extern "C" {

int ppl_test_fill_random_strided(uint64_t address, int ppl_dtype, const int shape[4], const int stride[4],
                                 const int offset[4], double lo, double hi, const char *where) {
  const std::string what = fmt::format("{}: ppl::rand", where);
  try {
    const std::optional<Dtype> dtype = host_dtype(ppl_dtype);
    if (!dtype) throw Error(fmt::format("{}: element type {} has no host type", what, ppl_dtype));
    if (!(lo < hi)) throw Error(fmt::format("{}: the range [{}, {}) is empty", what, lo, hi));
    int64_t first = 0, last = 0;  // elements from address: the lowest and highest written
    for (int i = 0; i < 4; ++i) {
      if (shape[i] <= 0 || offset[i] < 0 || stride[i] < 0)
        throw Error(fmt::format("{}: shape [{}, {}, {}, {}], stride [{}, {}, {}, {}] and offset [{}, {}, {}, {}] must "
                                "have positive dimensions and no negative strides or offsets",
                                what, shape[0], shape[1], shape[2], shape[3], stride[0], stride[1], stride[2],
                                stride[3], offset[0], offset[1], offset[2], offset[3]));
      first += int64_t(offset[i]) * stride[i];
      last += int64_t(offset[i] + shape[i] - 1) * stride[i];
    }
    const uint64_t size = tpu_runtime::dtype_size(*dtype);
    const uint64_t start = address + uint64_t(first) * size, bytes = uint64_t(last - first + 1) * size;
    buffer_holding(start, bytes, what.c_str());
    std::vector<uint8_t> image(bytes);
    if (cmodel_global_read(image.data(), start, bytes) != 0) throw Error(fmt::format("{}: {}", what, cmodel_last_error()));
    const bool is_float = tpu_runtime::dtype_info(*dtype).is_float;
    std::uniform_real_distribution<double> uniform(lo, hi);
    for (int n = 0; n < shape[0]; ++n)
      for (int c = 0; c < shape[1]; ++c)
        for (int h = 0; h < shape[2]; ++h)
          for (int w = 0; w < shape[3]; ++w) {
            const int64_t at = int64_t(offset[0] + n) * stride[0] + int64_t(offset[1] + c) * stride[1] +
                               int64_t(offset[2] + h) * stride[2] + int64_t(offset[3] + w) * stride[3] - first;
            const double v = uniform(state().random);
            const float value = static_cast<float>(is_float ? v : std::floor(v));
            tpu_runtime::encode_floats(*dtype, &value, 1, image.data() + uint64_t(at) * size);
          }
    if (cmodel_global_write(start, image.data(), bytes) != 0) throw Error(fmt::format("{}: {}", what, cmodel_last_error()));
    return 0;
  } catch (const Error &e) {
    return failed(e);
  }
}

int ppl_test_read_file(uint64_t address, int ppl_dtype, const char *path, int mode, int file_dtype, const char *name,
                       const char *where) {
  static const char *const functions[] = {"ppl::read_bin", "ppl::read_npy", "ppl::read_npz"};
  const std::string what = fmt::format("{}: {}", where, mode >= 0 && mode <= 2 ? functions[mode] : "ppl::read_file");
  try {
    if (mode < 0 || mode > 2) throw Error(fmt::format("{}: mode {} is none of 0 (bin), 1 (npy), 2 (npz)", what, mode));
    const std::optional<Dtype> dtype = host_dtype(ppl_dtype);
    if (!dtype) throw Error(fmt::format("{}: element type {} has no host type", what, ppl_dtype));
    const auto [held, offset] = buffer_holding(address, tpu_runtime::dtype_size(*dtype), what.c_str());
    const std::string file = resolve(path, where);
    const tpu_runtime::npz::Array a =
        load_array(file, mode, mode == 0 ? raw_dtype_of(file_dtype, what) : "", name ? name : "", what);
    const uint64_t count = uint64_t(a.element_count()), room = (held->bytes - offset) / tpu_runtime::dtype_size(*dtype);
    if (count != room)
      throw Error(fmt::format("{}: '{}' holds {} elements but the buffer from {:#x} has {}", what, file, count,
                              address, room));
    // bf16 has no numpy type: its arrays are "<u2" bits (as the dumps write them).
    const bool bf16_bits = *dtype == Dtype::bf16 && a.dtype == tpu_runtime::npz::dtype_bf16;
    if (bf16_bits && cmodel_global_write(address, a.data.data(), a.data.size()) != 0)
      throw Error(fmt::format("{}: {}", what, cmodel_last_error()));
    if (bf16_bits) return 0;
    const size_t size = tpu_runtime::npz::dtype_size(a.dtype);
    std::vector<double> values(count);
    for (uint64_t i = 0; i < count; ++i) values[i] = element_value(a.dtype, a.data.data() + i * size);
    const std::vector<uint8_t> bytes = encode(*dtype, values, fmt::format("{}: '{}'", what, file));
    if (cmodel_global_write(address, bytes.data(), bytes.size()) != 0)
      throw Error(fmt::format("{}: {}", what, cmodel_last_error()));
    return 0;
  } catch (const Error &e) {
    return failed(e);
  }
}

}  // extern "C"
