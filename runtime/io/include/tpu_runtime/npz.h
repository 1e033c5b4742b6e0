// npz.h: NumPy .npy / .npz files in memory (read and write).
//
// An .npz file is a zip archive of .npy arrays, one entry "<name>.npy" per
// array (what numpy.savez / numpy.savez_compressed write). read_npz() and
// write_npz() go through minizip and zlib; parse_npy() / format_npy() handle
// one .npy image in memory.
//
// Supported element types (the .npy "descr", stored canonically in
// Array::dtype):
//   "<f2" float16   "<f4" float32   "<f8" float64
//   "|i1" int8      "<i2" int16     "<i4" int32     "<i8" int64
//   "|u1" uint8     "<u2" uint16    "<u4" uint32    "<u8" uint64
//   "|b1" bool
//   "<U<n>" text, n UTF-32 characters per element (see text_values below)
// On reading, one-byte types may carry any byte-order mark ('<', '>', '=',
// '|'; numpy writes '|'); multi-byte types must be little-endian ('<').
// Big-endian data, structured dtypes and fortran_order True are rejected, and
// so is a bool array holding a byte other than 0 or 1.
// .npy format versions 1.0, 2.0 and 3.0 are read; 1.0 is written (2.0 when
// the header would not fit in 1.0's 16-bit length).
//
// bfloat16: NumPy has no bf16 dtype, so a bf16 tensor is stored as "<u2"
// holding the raw bf16 bits (the high 16 bits of the float32). The .npz file
// cannot say whether a "<u2" array is uint16 or bf16: the consumer decides
// from its own description of the tensor (the model's tensor dtype). A
// reader expecting bf16 accepts "<u2" (and "<f2" is NOT reinterpreted); a
// writer of a bf16 tensor writes "<u2" (dtype_bf16 below).
//
// Errors throw tpu_runtime::Error naming the file, the array and the problem.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tpu_runtime/error.h"

namespace tpu_runtime::npz {

// The dtype a bf16 tensor is stored as (see above).
inline constexpr std::string_view dtype_bf16 = "<u2";

// Bytes per element of a canonical or accepted dtype string; throws Error for
// an unsupported one.
size_t dtype_size(std::string_view dtype);

// The canonical dtype string of a C++ element type.
template <class T>
constexpr std::string_view dtype_of() {
  if constexpr (std::is_same_v<T, float>) return "<f4";
  else if constexpr (std::is_same_v<T, double>) return "<f8";
  else if constexpr (std::is_same_v<T, int8_t>) return "|i1";
  else if constexpr (std::is_same_v<T, int16_t>) return "<i2";
  else if constexpr (std::is_same_v<T, int32_t>) return "<i4";
  else if constexpr (std::is_same_v<T, int64_t>) return "<i8";
  else if constexpr (std::is_same_v<T, uint8_t>) return "|u1";
  else if constexpr (std::is_same_v<T, uint16_t>) return "<u2";
  else if constexpr (std::is_same_v<T, uint32_t>) return "<u4";
  else if constexpr (std::is_same_v<T, uint64_t>) return "<u8";
  else if constexpr (std::is_same_v<T, bool>) return "|b1";
  else static_assert(!sizeof(T), "no .npy dtype for this type (float16/bf16: use uint16_t)");
}

struct Array {
  std::string dtype;           // canonical descr, e.g. "<f4" (see the list above)
  std::vector<int64_t> shape;  // C order; {} is a scalar (one element)
  std::vector<uint8_t> data;   // element_count() * dtype_size(dtype) bytes, little-endian

  // Product of the dimensions (1 for a scalar); throws Error on overflow or
  // a negative dimension.
  int64_t element_count() const;

  // The elements as T; throws Error unless dtype is dtype_of<T>() and the
  // byte count matches the shape.
  template <class T>
  std::span<const T> values() const {
    check_view(dtype_of<T>(), sizeof(T));
    return {reinterpret_cast<const T *>(data.data()), data.size() / sizeof(T)};
  }
  template <class T>
  std::span<T> values() {
    check_view(dtype_of<T>(), sizeof(T));
    return {reinterpret_cast<T *>(data.data()), data.size() / sizeof(T)};
  }

  // An array of the given shape and values (dtype from T).
  template <class T>
  static Array from(std::vector<int64_t> shape, std::span<const T> values) {
    Array a;
    a.dtype = std::string(dtype_of<T>());
    a.shape = std::move(shape);
    a.data.resize(values.size_bytes());
    if (!values.empty()) std::memcpy(a.data.data(), values.data(), values.size_bytes());
    a.check_view(a.dtype, sizeof(T));
    return a;
  }
  template <class T>
  static Array from(std::vector<int64_t> shape, const std::vector<T> &values) {
    return from<T>(std::move(shape), std::span<const T>(values));
  }

 private:
  void check_view(std::string_view want_dtype, size_t item) const;
};

// Text arrays, "<U<n>" (what numpy makes of str data): n UTF-32LE code
// points per element, zero-padded at the end. numpy drops trailing NULs
// when it reads an element, and so do these functions.
bool is_text_dtype(std::string_view dtype);
// The elements of a text array as UTF-8. Throws Error naming `where` and
// the element for a code point that is not a Unicode scalar value.
std::vector<std::string> text_values(const Array &array, std::string_view where);
// A text array of `shape` holding `values` (UTF-8), as wide as its longest
// element (at least 1). Throws Error naming `where` and the element for
// bytes that are not UTF-8, or a count that does not match the shape.
Array text_array(std::vector<int64_t> shape, const std::vector<std::string> &values, std::string_view where);

// Arrays keyed by name (the entry name without ".npy"), sorted by name.
using Arrays = std::map<std::string, Array>;

enum class Compression { stored, deflated };

// Reads every array of an .npz file. Throws Error for an unreadable file, a
// zip error, a CRC mismatch, an entry not named *.npy, a duplicate name, or
// any .npy problem.
Arrays read_npz(const std::string &path);

// Writes an .npz file (entries "<name>.npy", in name order). The file is
// written to a temporary file and renamed over `path`. Throws Error for an
// invalid array (unknown dtype, data size not matching the shape, empty
// name) or an I/O error.
void write_npz(const std::string &path, const Arrays &arrays,
               Compression compression = Compression::stored);

// One .npy image in memory. `where` names it in error messages (for example
// "x.npz: array 'in0'").
Array parse_npy(std::span<const uint8_t> bytes, std::string_view where);
std::vector<uint8_t> format_npy(const Array &array);

// The header of an .npy image: what parse_npy() checks before the data.
struct NpyHeader {
  std::string dtype;  // canonical
  std::vector<int64_t> shape;
  size_t header_size = 0;  // bytes before the data (magic, version, length, dict)
  uint64_t data_size = 0;  // bytes of data the header announces
};
// Parses the header at the start of `bytes` (which may hold only a prefix of
// the image, as long as the whole header is there).
NpyHeader parse_npy_header(std::span<const uint8_t> bytes, std::string_view where);

}  // namespace tpu_runtime::npz
