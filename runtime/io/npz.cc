// npz.cc: .npy parsing/formatting and .npz archives through minizip + zlib.
#include "tpu_runtime/npz.h"

#include <sys/stat.h>
#include <unzip.h>
#include <zip.h>
#include <zlib.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>

#include "io/atomic_file.h"
#include "tpu_runtime/dtype.h"

namespace tpu_runtime::npz {
namespace {

constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kMaxHeaderLength = size_t(1) << 20;  // far above any real header

[[noreturn]] void fail(std::string_view where, std::string_view problem) {
  throw Error(fmt::format("{}: {}", where, problem));
}

struct DtypeInfo {
  char kind;
  size_t size;
};
constexpr DtypeInfo kDtypes[] = {{'f', 2}, {'f', 4}, {'f', 8}, {'i', 1}, {'i', 2}, {'i', 4},
                                 {'i', 8}, {'u', 1}, {'u', 2}, {'u', 4}, {'u', 8}, {'b', 1}};
constexpr std::string_view kSupported =
    "<f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1 <U<n>";

// Canonical form of a descr, or a description of why it is refused.
struct Canonical {
  std::string dtype;
  size_t size = 0;
  std::string problem;
};

// Text arrays: "<U<n>" (numpy's str arrays), n UTF-32 code points per
// element; '|' and '=' are taken as numpy takes them for text, '>' refused.
constexpr size_t kMaxTextLength = size_t(1) << 20;

Canonical canonical_text(std::string_view descr) {
  Canonical c;
  const std::string_view digits = descr.substr(2);
  size_t length = 0;
  const bool number = !digits.empty() && digits.size() <= 7 &&
                      std::all_of(digits.begin(), digits.end(), [](char d) { return d >= '0' && d <= '9'; });
  if (number) length = size_t(std::stoul(std::string(digits)));
  if (!number || length == 0 || length > kMaxTextLength) {
    c.problem = fmt::format("unsupported dtype '{}': a text dtype holds 1 to {} characters per element", descr,
                            kMaxTextLength);
  } else if (descr[0] == '>') {
    c.problem = fmt::format("dtype '{}' is big-endian; only little-endian ('<') data is supported", descr);
  } else {
    c.dtype = fmt::format("<U{}", length);
    c.size = 4 * length;
  }
  return c;
}

Canonical canonicalize(std::string_view descr) {
  Canonical c;
  if (descr.size() >= 3 && descr[1] == 'U' && std::string_view("<>|=").find(descr[0]) != std::string_view::npos)
    return canonical_text(descr);
  if (descr.size() < 3 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos) {
    c.problem = fmt::format("unsupported dtype '{}' (supported: {})", descr, kSupported);
    return c;
  }
  const char order = descr[0];
  const char kind = descr[1];
  const std::string_view digits = descr.substr(2);
  size_t size = 0;
  if (digits.size() == 1 && digits[0] >= '1' && digits[0] <= '9') size = size_t(digits[0] - '0');
  const DtypeInfo *found = nullptr;
  for (const DtypeInfo &d : kDtypes)
    if (d.kind == kind && d.size == size) found = &d;
  if (!found) {
    c.problem = fmt::format("unsupported dtype '{}' (supported: {})", descr, kSupported);
    return c;
  }
  if (size == 1) {
    c.dtype = fmt::format("|{}1", kind);
  } else if (order == '<') {
    c.dtype = std::string(descr);
  } else if (order == '>') {
    c.problem = fmt::format("dtype '{}' is big-endian; only little-endian ('<') data is supported",
                            descr);
    return c;
  } else {
    c.problem = fmt::format(
        "dtype '{}' has byte order '{}', which does not say the byte order of a {}-byte type; "
        "expected '<'",
        descr, order, size);
    return c;
  }
  c.size = size;
  return c;
}

bool multiply_overflows(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_mul_overflow(a, b, out);
}

// Element count and byte size of a shape; nullopt-free: throws with `where`.
uint64_t data_bytes(const std::vector<int64_t> &shape, size_t item, std::string_view where) {
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(where, fmt::format("negative dimension {} in shape", d));
    if (multiply_overflows(count, uint64_t(d), &count))
      fail(where, "the shape's element count overflows 64 bits");
  }
  uint64_t bytes = 0;
  if (multiply_overflows(count, item, &bytes) || bytes > uint64_t(std::numeric_limits<int64_t>::max()))
    fail(where, "the shape's byte size overflows");
  return bytes;
}

std::string shape_text(const std::vector<int64_t> &shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// ---- the header dictionary: a small subset of Python literal syntax --------

class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view where) : s_(text), where_(where) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    expect('{', "the header does not start with '{'");
    for (;;) {
      skip_space();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = string_literal("a key");
      skip_space();
      expect(':', fmt::format("expected ':' after key '{}'", key));
      skip_space();
      if (key == "descr") {
        if (have_descr) bad("key 'descr' appears twice");
        have_descr = true;
        if (peek() == '[')
          bad("structured dtypes (a list 'descr') are not supported");
        const std::string descr = string_literal("the 'descr' value");
        Canonical c = canonicalize(descr);
        if (!c.problem.empty()) fail(where_, c.problem);
        h.dtype = c.dtype;
      } else if (key == "fortran_order") {
        if (have_order) bad("key 'fortran_order' appears twice");
        have_order = true;
        if (word("False")) {
        } else if (word("True")) {
          fail(where_, "fortran_order True (column-major data) is not supported; save the array "
                       "in C order (numpy.ascontiguousarray)");
        } else {
          bad("'fortran_order' must be True or False");
        }
      } else if (key == "shape") {
        if (have_shape) bad("key 'shape' appears twice");
        have_shape = true;
        h.shape = shape_tuple();
      } else {
        bad(fmt::format("unexpected key '{}' (expected descr, fortran_order, shape)", key));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        bad("expected ',' or '}' between entries");
      }
    }
    skip_space();
    if (pos_ != s_.size()) bad("unexpected text after the closing '}'");
    if (!have_descr) bad("the header has no 'descr'");
    if (!have_order) bad("the header has no 'fortran_order'");
    if (!have_shape) bad("the header has no 'shape'");
    return h;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  [[noreturn]] void bad(std::string_view problem) const {
    fail(where_, fmt::format("malformed .npy header: {} (at column {})", problem, pos_));
  }
  void expect(char c, std::string_view problem) {
    if (peek() != c) bad(problem);
    ++pos_;
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r'))
      ++pos_;
  }
  bool word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    const size_t end = pos_ + w.size();
    if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_'))
      return false;
    pos_ = end;
    return true;
  }
  std::string string_literal(std::string_view what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad(fmt::format("expected a quoted string for {}", what));
    ++pos_;
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') bad("escape sequences are not supported in header strings");
      if (s_[pos_] == '\n') bad("unterminated string");
      ++pos_;
    }
    if (pos_ >= s_.size()) bad("unterminated string");
    std::string value(s_.substr(start, pos_ - start));
    ++pos_;
    return value;
  }
  std::vector<int64_t> shape_tuple() {
    expect('(', "'shape' must be a tuple such as (), (4,) or (2, 3)");
    std::vector<int64_t> dims;
    bool trailing_comma = false;
    for (;;) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        break;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        bad("'shape' entries must be non-negative integers");
      uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (uint64_t(std::numeric_limits<int64_t>::max()) - 9) / 10)
          bad("a 'shape' entry is too large");
        v = v * 10 + uint64_t(peek() - '0');
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long suffix
      dims.push_back(int64_t(v));
      skip_space();
      trailing_comma = false;
      if (peek() == ',') {
        ++pos_;
        trailing_comma = true;
      } else if (peek() != ')') {
        bad("expected ',' or ')' in 'shape'");
      }
    }
    if (dims.size() == 1 && !trailing_comma)
      bad("'shape' (n) is not a tuple; a one-dimensional shape is written (n,)");
    return dims;
  }

  std::string_view s_;
  std::string_view where_;
  size_t pos_ = 0;
};

uint64_t read_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A bool array may hold only 0 and 1 (any other byte read as a C++ bool is
// undefined behaviour).
void check_bool_data(std::string_view dtype, std::span<const uint8_t> data,
                     std::string_view where) {
  if (dtype != "|b1") return;
  for (size_t i = 0; i < data.size(); ++i)
    if (data[i] > 1)
      fail(where, fmt::format("bool element {} holds the byte {}, not 0 or 1", i, data[i]));
}

// Validates an Array to be written; returns its canonical dtype.
std::string check_for_writing(const Array &a, std::string_view where) {
  Canonical c = canonicalize(a.dtype);
  if (!c.problem.empty()) fail(where, c.problem);
  const uint64_t want = data_bytes(a.shape, c.size, where);
  if (a.data.size() != want)
    fail(where, fmt::format("holds {} bytes of data but shape {} of {} needs {}", a.data.size(),
                            shape_text(a.shape), c.dtype, want));
  check_bool_data(c.dtype, a.data, where);
  return c.dtype;
}

std::string header_text(std::string_view dtype, const std::vector<int64_t> &shape,
                        size_t prefix) {
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", dtype,
                  shape_text(shape));
  // Pad with spaces so that the data starts on a 64-byte boundary; end with '\n'.
  const size_t unpadded = prefix + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  return dict;
}

std::vector<uint8_t> header_bytes(std::string_view dtype, const std::vector<int64_t> &shape) {
  std::string text = header_text(dtype, shape, 10);
  int major = 1;
  size_t prefix = 10;
  if (text.size() > 0xffff) {
    major = 2;
    prefix = 12;
    text = header_text(dtype, shape, 12);
  }
  std::vector<uint8_t> out(prefix + text.size());
  std::memcpy(out.data(), kMagic, 6);
  out[6] = uint8_t(major);
  out[7] = 0;
  const uint64_t len = text.size();
  for (size_t i = 0; i + 8 < prefix; ++i) out[8 + i] = uint8_t(len >> (8 * i));
  std::memcpy(out.data() + prefix, text.data(), text.size());
  return out;
}

}  // namespace

size_t dtype_size(std::string_view dtype) {
  Canonical c = canonicalize(dtype);
  if (!c.problem.empty()) throw Error(c.problem);
  return c.size;
}

int64_t Array::element_count() const {
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(fmt::format("array shape {} has a negative dimension", shape_text(shape)));
    if (multiply_overflows(count, uint64_t(d), &count) ||
        count > uint64_t(std::numeric_limits<int64_t>::max()))
      throw Error(fmt::format("array shape {} has too many elements", shape_text(shape)));
  }
  return int64_t(count);
}

void Array::check_view(std::string_view want_dtype, size_t item) const {
  if (dtype != want_dtype)
    throw Error(fmt::format("array of dtype '{}' read as '{}'", dtype, want_dtype));
  const uint64_t want = uint64_t(element_count()) * item;
  if (data.size() != want)
    throw Error(fmt::format("array of shape {} and dtype '{}' holds {} bytes, expected {}",
                            shape_text(shape), dtype, data.size(), want));
}

NpyHeader parse_npy_header(std::span<const uint8_t> bytes, std::string_view where) {
  if (bytes.size() < 8)
    fail(where, fmt::format("truncated: {} bytes, shorter than an .npy preamble", bytes.size()));
  if (std::memcmp(bytes.data(), kMagic, 6) != 0)
    fail(where, "bad magic: not an .npy array (expected \\x93NUMPY)");
  const int major = bytes[6], minor = bytes[7];
  size_t prefix = 0;
  if (major == 1 && minor == 0) {
    prefix = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    prefix = 12;
  } else {
    fail(where, fmt::format(".npy format version {}.{} is not supported (1.0, 2.0 and 3.0 are)",
                            major, minor));
  }
  if (bytes.size() < prefix)
    fail(where, fmt::format("truncated: {} bytes, shorter than the .npy {}.0 preamble ({})",
                            bytes.size(), major, prefix));
  const uint64_t length = read_le(bytes.data() + 8, int(prefix - 8));
  if (length > kMaxHeaderLength)
    fail(where, fmt::format("the .npy header claims {} bytes, which is absurd", length));
  if (bytes.size() - prefix < length)
    fail(where, fmt::format("truncated: the .npy header needs {} bytes, only {} present",
                            length, bytes.size() - prefix));
  std::string_view text(reinterpret_cast<const char *>(bytes.data() + prefix), size_t(length));
  if (major < 3) {
    for (char ch : text)
      if (static_cast<unsigned char>(ch) >= 0x80 || ch == '\0')
        fail(where, "malformed .npy header: a byte that is not printable ASCII");
  } else if (text.find('\0') != std::string_view::npos) {
    fail(where, "malformed .npy header: a NUL byte");
  }
  NpyHeader h = HeaderParser(text, where).parse();
  h.header_size = prefix + size_t(length);
  h.data_size = data_bytes(h.shape, dtype_size(h.dtype), where);
  return h;
}

Array parse_npy(std::span<const uint8_t> bytes, std::string_view where) {
  NpyHeader h = parse_npy_header(bytes, where);
  const uint64_t present = bytes.size() - h.header_size;
  if (present < h.data_size)
    fail(where, fmt::format("truncated: shape {} of {} needs {} bytes of data, only {} present",
                            shape_text(h.shape), h.dtype, h.data_size, present));
  if (present > h.data_size)
    fail(where, fmt::format("size mismatch: {} bytes after the data of shape {} of {}",
                            present - h.data_size, shape_text(h.shape), h.dtype));
  check_bool_data(h.dtype, bytes.subspan(h.header_size), where);
  Array a;
  a.dtype = std::move(h.dtype);
  a.shape = std::move(h.shape);
  a.data.assign(bytes.begin() + std::ptrdiff_t(h.header_size), bytes.end());
  return a;
}

std::vector<uint8_t> format_npy(const Array &array) {
  const std::string dtype = check_for_writing(array, "array");
  std::vector<uint8_t> out = header_bytes(dtype, array.shape);
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

// ---- .npz ------------------------------------------------------------------

namespace {

struct UnzCloser {
  void operator()(void *f) const { unzClose(f); }
};
using UnzHandle = std::unique_ptr<void, UnzCloser>;

struct ZipCloser {
  void operator()(void *f) const { zipClose(f, nullptr); }
};
using ZipHandle = std::unique_ptr<void, ZipCloser>;

std::string unz_problem(int rc) {
  switch (rc) {
    case UNZ_CRCERROR: return "CRC mismatch (the archive is damaged)";
    case UNZ_BADZIPFILE: return "damaged or truncated zip structure";
    case UNZ_ERRNO: return fmt::format("read error ({})", std::strerror(errno));
    case Z_DATA_ERROR: return "corrupt compressed data";
    case Z_MEM_ERROR: return "out of memory while inflating";
    case Z_BUF_ERROR: return "compressed data ends early";
    default: return fmt::format("zip error {}", rc);
  }
}

// Reads up to n bytes of the current entry; returns how many were read.
uint64_t read_entry(unzFile zf, uint8_t *dst, uint64_t n, std::string_view where) {
  uint64_t done = 0;
  while (done < n) {
    const unsigned chunk = unsigned(std::min<uint64_t>(n - done, uint64_t(1) << 30));
    const int got = unzReadCurrentFile(zf, dst + done, chunk);
    if (got < 0) fail(where, unz_problem(got));
    if (got == 0) break;
    done += uint64_t(got);
  }
  return done;
}

// minizip does not find an end-of-central-directory record at offset 0, so
// it cannot open the archive of an empty .npz (numpy.savez with no arrays, or
// write_npz with none): recognise that one by hand.
bool is_empty_zip(const std::string &path, uint64_t size) {
  if (size < 22 || size > 22 + 0xffff) return false;
  std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  uint8_t end[22];
  if (!f || std::fread(end, 1, sizeof end, f.get()) != sizeof end) return false;
  const uint8_t signature[4] = {'P', 'K', 5, 6};
  if (std::memcmp(end, signature, 4) != 0) return false;
  for (int i = 4; i < 20; ++i)  // disk numbers, entry counts, directory size and offset
    if (end[i] != 0) return false;
  return read_le(end + 20, 2) == size - 22;  // the comment fills the rest
}

}  // namespace

Arrays read_npz(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw Error(fmt::format("{}: is a directory", path));
  UnzHandle zf(unzOpen64(path.c_str()));
  if (!zf && is_empty_zip(path, uint64_t(st.st_size))) return {};
  if (!zf)
    throw Error(fmt::format("{}: not an .npz file: not a zip archive, or a truncated one (no "
                            "readable central directory)",
                            path));
  const uint64_t archive_size = uint64_t(st.st_size);
  Arrays arrays;
  unz_global_info64 global{};
  int rc = unzGetGlobalInfo64(zf.get(), &global);
  if (rc != UNZ_OK) throw Error(fmt::format("{}: {}", path, unz_problem(rc)));
  if (global.number_entry == 0) return arrays;
  rc = unzGoToFirstFile(zf.get());
  for (; rc == UNZ_OK; rc = unzGoToNextFile(zf.get())) {
    unz_file_info64 info{};
    rc = unzGetCurrentFileInfo64(zf.get(), &info, nullptr, 0, nullptr, 0, nullptr, 0);
    if (rc != UNZ_OK) throw Error(fmt::format("{}: {}", path, unz_problem(rc)));
    std::string entry(info.size_filename, '\0');
    rc = unzGetCurrentFileInfo64(zf.get(), &info, entry.data(), uLong(entry.size()), nullptr, 0,
                                 nullptr, 0);
    if (rc != UNZ_OK) throw Error(fmt::format("{}: {}", path, unz_problem(rc)));
    const std::string where = fmt::format("{}: entry '{}'", path, entry);
    if (entry.size() <= 4 || entry.compare(entry.size() - 4, 4, ".npy") != 0 ||
        entry.find('\0') != std::string::npos)
      fail(where, "not an .npy array (an .npz holds only <name>.npy entries)");
    const std::string name = entry.substr(0, entry.size() - 4);
    const std::string array_where = fmt::format("{}: array '{}'", path, name);
    if (arrays.count(name)) fail(array_where, "appears twice in the archive");
    if (info.flag & 1) fail(array_where, "is encrypted");
    if (info.compression_method != 0 && info.compression_method != Z_DEFLATED)
      fail(array_where, fmt::format("compression method {} is not supported (stored or deflate)",
                                    info.compression_method));
    // Bound what we are about to allocate by what the archive can hold.
    if (info.compressed_size > archive_size)
      fail(array_where, fmt::format("claims {} compressed bytes in a {}-byte archive",
                                    info.compressed_size, archive_size));
    const uint64_t max_expansion =
        info.compression_method == 0 ? info.compressed_size : info.compressed_size * 1032 + 1024;
    if (info.uncompressed_size > max_expansion)
      fail(array_where, fmt::format("claims {} bytes, more than {} compressed bytes can hold",
                                    info.uncompressed_size, info.compressed_size));

    rc = unzOpenCurrentFile(zf.get());
    if (rc != UNZ_OK) fail(array_where, unz_problem(rc));
    struct CloseEntry {
      unzFile f;
      bool open = true;
      ~CloseEntry() {
        if (open) unzCloseCurrentFile(f);
      }
    } close_entry{zf.get()};

    // Preamble, then the header, then the data straight into the array.
    std::vector<uint8_t> head(12);
    uint64_t got = read_entry(zf.get(), head.data(), 8, array_where);
    if (got == 8 && std::memcmp(head.data(), kMagic, 6) == 0) {
      const size_t prefix = head[6] >= 2 ? 12 : 10;
      got += read_entry(zf.get(), head.data() + 8, prefix - 8, array_where);
      if (got == prefix) {
        const uint64_t length = read_le(head.data() + 8, int(prefix - 8));
        if (length <= kMaxHeaderLength) {
          head.resize(prefix + length);
          got += read_entry(zf.get(), head.data() + prefix, length, array_where);
        }
      }
    }
    head.resize(got);
    NpyHeader h = parse_npy_header(head, array_where);
    const uint64_t total = h.header_size + h.data_size;
    if (total != info.uncompressed_size)
      fail(array_where,
           fmt::format("size mismatch: the entry holds {} bytes but its header announces {} "
                       "({} header + {} data for shape {} of {})",
                       info.uncompressed_size, total, h.header_size, h.data_size,
                       shape_text(h.shape), h.dtype));
    // No array the SDK can use is larger than the device's global memory;
    // a deflate stream may still claim up to ~1000 times its own size.
    if (h.data_size > kGlobalMemoryBytes)
      fail(array_where, fmt::format("shape {} of {} is {} bytes, more than the {} GiB of the chips' global memory",
                                    shape_text(h.shape), h.dtype, h.data_size, kGlobalMemoryBytes >> 30));
    Array a;
    a.dtype = h.dtype;
    a.shape = h.shape;
    try {
      a.data.resize(size_t(h.data_size));
    } catch (const std::bad_alloc &) {
      fail(array_where, fmt::format("out of host memory for its {} bytes (shape {} of {})", h.data_size,
                                    shape_text(h.shape), h.dtype));
    }
    const uint64_t data_got = read_entry(zf.get(), a.data.data(), h.data_size, array_where);
    if (data_got != h.data_size)
      fail(array_where, fmt::format("truncated: {} of {} data bytes present", data_got,
                                    h.data_size));
    uint8_t extra;
    if (read_entry(zf.get(), &extra, 1, array_where) != 0)
      fail(array_where, "size mismatch: more data than the header announces");
    close_entry.open = false;
    rc = unzCloseCurrentFile(zf.get());
    if (rc != UNZ_OK) fail(array_where, unz_problem(rc));
    check_bool_data(a.dtype, a.data, array_where);
    arrays.emplace(name, std::move(a));
  }
  if (rc != UNZ_END_OF_LIST_OF_FILE) throw Error(fmt::format("{}: {}", path, unz_problem(rc)));
  return arrays;
}

void write_npz(const std::string &path, const Arrays &arrays, Compression compression) {
  std::vector<std::string> dtypes;
  for (const auto &[name, array] : arrays) {
    const std::string where = fmt::format("{}: array '{}'", path, name);
    if (name.empty()) fail(where, "an array name must not be empty");
    if (name.find('\0') != std::string::npos) fail(where, "an array name must not hold NUL");
    dtypes.push_back(check_for_writing(array, where));
  }
  detail::AtomicFile out(path);
  {
    ZipHandle zf(zipOpen64(out.temp_path().c_str(), APPEND_STATUS_CREATE));
    if (!zf) throw Error(fmt::format("{}: cannot create the zip archive {}", path, out.temp_path()));
    size_t index = 0;
    for (const auto &[name, array] : arrays) {
      const std::string where = fmt::format("{}: array '{}'", path, name);
      const std::vector<uint8_t> header = header_bytes(dtypes[index++], array.shape);
      const uint64_t total = header.size() + array.data.size();
      zip_fileinfo zi{};
      zi.tmz_date.tm_year = 1980;
      zi.tmz_date.tm_mday = 1;
      const std::string entry = name + ".npy";
      const bool deflate = compression == Compression::deflated;
      int rc = zipOpenNewFileInZip64(zf.get(), entry.c_str(), &zi, nullptr, 0, nullptr, 0,
                                     nullptr, deflate ? Z_DEFLATED : 0,
                                     deflate ? Z_DEFAULT_COMPRESSION : 0,
                                     total >= 0xffffffffULL ? 1 : 0);
      if (rc != ZIP_OK) fail(where, fmt::format("cannot add the zip entry (error {})", rc));
      auto put = [&](const uint8_t *p, uint64_t n) {
        while (n > 0) {
          const unsigned chunk = unsigned(std::min<uint64_t>(n, uint64_t(1) << 30));
          if (zipWriteInFileInZip(zf.get(), p, chunk) != ZIP_OK)
            fail(where, fmt::format("write failed: {}", std::strerror(errno)));
          p += chunk;
          n -= chunk;
        }
      };
      put(header.data(), header.size());
      put(array.data.data(), array.data.size());
      if (zipCloseFileInZip(zf.get()) != ZIP_OK)
        fail(where, fmt::format("closing the zip entry failed: {}", std::strerror(errno)));
    }
    void *raw = zf.release();
    if (zipClose(raw, nullptr) != ZIP_OK)
      throw Error(fmt::format("{}: writing the zip directory failed: {}", path,
                              std::strerror(errno)));
  }
  out.commit();
}

}  // namespace tpu_runtime::npz
