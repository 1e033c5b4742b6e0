// npz_test: .npy / .npz reading and writing (runtime/io/include/tpu_runtime/npz.h).
//
// Besides round trips through write_npz/read_npz, the reader is checked
// against files whose bytes this test lays out itself (the .npy header, the
// zip local headers, central directory and end record, deflate stored
// blocks, CRC-32), independently of minizip's writer.
#include "support/temp_dir.h"
#include "tpu_runtime/npz.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace {

namespace fs = std::filesystem;
using tpu_runtime::Error;
using namespace tpu_runtime::npz;

using Bytes = std::vector<uint8_t>;

// ---- independent byte builders ---------------------------------------------

uint32_t crc32(const Bytes &data) {
  static const auto table = [] {
    std::vector<uint32_t> t(256);
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (uint8_t b : data) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void put16(Bytes &out, uint32_t v) {
  out.push_back(uint8_t(v));
  out.push_back(uint8_t(v >> 8));
}
void put32(Bytes &out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}
void put_text(Bytes &out, const std::string &s) { out.insert(out.end(), s.begin(), s.end()); }

// A raw deflate stream made of stored blocks (legal for zip method 8).
Bytes deflate_stored(const Bytes &data) {
  Bytes out;
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(data.size() - pos, 65535);
    const bool last = pos + n == data.size();
    out.push_back(last ? 1 : 0);  // BFINAL, BTYPE = 00
    put16(out, uint32_t(n));
    put16(out, uint32_t(~n & 0xffff));
    out.insert(out.end(), data.begin() + long(pos), data.begin() + long(pos + n));
    pos += n;
  } while (pos < data.size());
  return out;
}

struct ZipEntry {
  std::string name;
  Bytes data;
  bool deflate = false;
};

// A minimal zip archive (no zip64, DOS date 1980-01-01).
Bytes make_zip(const std::vector<ZipEntry> &entries) {
  Bytes out, directory;
  for (const ZipEntry &e : entries) {
    const Bytes stored = e.deflate ? deflate_stored(e.data) : e.data;
    const uint32_t crc = crc32(e.data);
    const uint32_t local_offset = uint32_t(out.size());
    put32(out, 0x04034b50);
    put16(out, 20);
    put16(out, 0);
    put16(out, e.deflate ? 8 : 0);
    put16(out, 0);       // time
    put16(out, 0x0021);  // date
    put32(out, crc);
    put32(out, uint32_t(stored.size()));
    put32(out, uint32_t(e.data.size()));
    put16(out, uint32_t(e.name.size()));
    put16(out, 0);
    put_text(out, e.name);
    out.insert(out.end(), stored.begin(), stored.end());

    put32(directory, 0x02014b50);
    put16(directory, 20);
    put16(directory, 20);
    put16(directory, 0);
    put16(directory, e.deflate ? 8 : 0);
    put16(directory, 0);
    put16(directory, 0x0021);
    put32(directory, crc);
    put32(directory, uint32_t(stored.size()));
    put32(directory, uint32_t(e.data.size()));
    put16(directory, uint32_t(e.name.size()));
    put16(directory, 0);
    put16(directory, 0);
    put16(directory, 0);
    put16(directory, 0);
    put32(directory, 0);
    put32(directory, local_offset);
    put_text(directory, e.name);
  }
  const uint32_t directory_offset = uint32_t(out.size());
  out.insert(out.end(), directory.begin(), directory.end());
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, uint32_t(entries.size()));
  put16(out, uint32_t(entries.size()));
  put32(out, uint32_t(directory.size()));
  put32(out, directory_offset);
  put16(out, 0);
  return out;
}

// An .npy v1.0 image: header dict text as given, padded to a multiple of 64.
Bytes make_npy(const std::string &dict, const Bytes &data, int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string text = dict;
  while ((prefix + text.size() + 1) % 64 != 0) text.push_back(' ');
  text.push_back('\n');
  Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  if (major == 1)
    put16(out, uint32_t(text.size()));
  else
    put32(out, uint32_t(text.size()));
  put_text(out, text);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <class T>
Bytes le_bytes(std::initializer_list<T> values) {
  Bytes out;
  for (T v : values) {
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    out.insert(out.end(), raw, raw + sizeof(T));
  }
  return out;
}

using TempDir = test::TempDir;

void write_bytes(const std::string &path, const Bytes &bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  ASSERT_TRUE(f.good());
}

Bytes read_bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Expects `fn` to throw Error whose message contains every fragment.
template <class Fn>
void expect_error(Fn fn, std::initializer_list<std::string> fragments) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown; expected one mentioning '" << *fragments.begin() << "'";
  } catch (const Error &e) {
    const std::string message = e.what();
    for (const std::string &f : fragments)
      EXPECT_NE(message.find(f), std::string::npos)
          << "message \"" << message << "\" does not mention \"" << f << "\"";
  }
}

const std::vector<std::string> kAllDtypes = {"<f2", "<f4", "<f8", "|i1", "<i2", "<i4",
                                             "<i8", "|u1", "<u2", "<u4", "<u8", "|b1"};

// ---- tests -----------------------------------------------------------------

TEST(Npz, DtypeSizes) {
  EXPECT_EQ(dtype_size("<f2"), 2u);
  EXPECT_EQ(dtype_size("<f4"), 4u);
  EXPECT_EQ(dtype_size("|i1"), 1u);
  EXPECT_EQ(dtype_size("<i1"), 1u);  // any byte order for one-byte types
  EXPECT_EQ(dtype_size("<u8"), 8u);
  const auto message_of = [](std::string_view dtype) {
    try {
      dtype_size(dtype);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message_of(">f4"), "dtype '>f4' is big-endian; only little-endian ('<') data is supported");
  EXPECT_EQ(message_of("=f4").rfind("dtype '=f4' has byte order '='", 0), 0u) << message_of("=f4");
  EXPECT_EQ(message_of("<c8").rfind("unsupported dtype '<c8' (supported: ", 0), 0u) << message_of("<c8");
  EXPECT_EQ(message_of("f4").rfind("unsupported dtype 'f4'", 0), 0u) << message_of("f4");
  EXPECT_EQ(dtype_of<float>(), "<f4");
  EXPECT_EQ(dtype_of<int8_t>(), "|i1");
  EXPECT_EQ(dtype_of<uint16_t>(), dtype_bf16);
}

TEST(Npz, RoundTripEveryDtypeAndShape) {
  test::Seeded seeded;
  TempDir dir("npz_test");
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {1}, {7}, {2, 3}, {2, 0, 5},
                                                    {3, 4, 5}, {1, 2, 3, 4, 2}};
  for (Compression compression : {Compression::stored, Compression::deflated}) {
    Arrays arrays;
    for (const std::string &dtype : kAllDtypes) {
      for (size_t s = 0; s < shapes.size(); ++s) {
        Array a;
        a.dtype = dtype;
        a.shape = shapes[s];
        a.data.resize(size_t(a.element_count()) * dtype_size(dtype));
        for (uint8_t &b : a.data) b = uint8_t(seeded.uniform(0, 255));
        if (dtype == "|b1")
          for (uint8_t &b : a.data) b &= 1;
        arrays[dtype.substr(1) + "_shape" + std::to_string(s)] = a;
      }
    }
    const std::string path = dir.file(compression == Compression::stored ? "s.npz" : "d.npz");
    write_npz(path, arrays, compression);
    const Arrays back = read_npz(path);
    ASSERT_EQ(back.size(), arrays.size());
    for (const auto &[name, a] : arrays) {
      SCOPED_TRACE(name);
      ASSERT_TRUE(back.count(name));
      const Array &b = back.at(name);
      EXPECT_EQ(b.dtype, a.dtype);
      EXPECT_EQ(b.shape, a.shape);
      EXPECT_EQ(b.data, a.data);
    }
  }
}

TEST(Npz, DeflatedIsSmallerForCompressibleData) {
  TempDir dir("npz_test");
  Arrays arrays;
  arrays["zeros"] = Array::from<float>({256, 256}, std::vector<float>(256 * 256, 0.0f));
  write_npz(dir.file("s.npz"), arrays, Compression::stored);
  write_npz(dir.file("d.npz"), arrays, Compression::deflated);
  EXPECT_GT(fs::file_size(dir.file("s.npz")), 256u * 256u * 4u);
  EXPECT_LT(fs::file_size(dir.file("d.npz")), 16u * 1024u);
  EXPECT_EQ(read_npz(dir.file("d.npz")).at("zeros").data, arrays["zeros"].data);
}

TEST(Npz, TypedAccess) {
  Array a = Array::from<int32_t>({2, 2}, std::vector<int32_t>{1, -2, 3, -4});
  EXPECT_EQ(a.dtype, "<i4");
  auto v = a.values<int32_t>();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[1], -2);
  a.values<int32_t>()[3] = 40;
  EXPECT_EQ(a.values<int32_t>()[3], 40);
  expect_error([&] { a.values<float>(); }, {"'<i4'", "'<f4'"});
  expect_error([] { Array::from<float>({3}, std::vector<float>{1, 2}); }, {"8 bytes", "12"});
  Array scalar = Array::from<double>({}, std::vector<double>{2.5});
  EXPECT_EQ(scalar.element_count(), 1);
  EXPECT_EQ(scalar.values<double>()[0], 2.5);
}

TEST(Npz, Bf16IsStoredAsUint16) {
  // bf16 1.0 = 0x3F80, -2.0 = 0xC000: raw bits kept in a "<u2" array.
  TempDir dir("npz_test");
  Arrays arrays;
  arrays["w"] = Array::from<uint16_t>({2}, std::vector<uint16_t>{0x3F80, 0xC000});
  EXPECT_EQ(arrays["w"].dtype, dtype_bf16);
  write_npz(dir.file("bf16.npz"), arrays);
  const Array back = read_npz(dir.file("bf16.npz")).at("w");
  EXPECT_EQ(back.dtype, "<u2");
  EXPECT_EQ(back.values<uint16_t>()[0], 0x3F80);
  EXPECT_EQ(back.values<uint16_t>()[1], 0xC000);
}

TEST(Npz, FormatNpyLayout) {
  Array a = Array::from<float>({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  const Bytes got = format_npy(a);
  const Bytes want = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                              le_bytes<float>({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(got, want);
  EXPECT_EQ((got.size() - 24) % 64, 0u);  // data starts on a 64-byte boundary

  Array v = Array::from<int16_t>({3}, std::vector<int16_t>{1, 2, 3});
  EXPECT_EQ(format_npy(v), make_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }",
                                    le_bytes<int16_t>({1, 2, 3})));
  Array s = Array::from<uint8_t>({}, std::vector<uint8_t>{9});
  EXPECT_EQ(format_npy(s), make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (), }",
                                    Bytes{9}));
}

TEST(Npz, ParseHandBuiltNpyVariants) {
  // Spacing, quotes, key order and a Python 2 'L' suffix as other writers produce them.
  Array a = parse_npy(make_npy("{\"shape\":(2,2L),\"fortran_order\":False,\"descr\":\"<i4\"}",
                               le_bytes<int32_t>({1, 2, 3, 4})),
                      "hand");
  EXPECT_EQ(a.dtype, "<i4");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.values<int32_t>()[3], 4);
  Array b = parse_npy(make_npy("{'descr': '<i1', 'fortran_order': False, 'shape': (1,)}",
                               Bytes{0xff}),
                      "hand");
  EXPECT_EQ(b.dtype, "|i1");  // canonical form
  EXPECT_EQ(b.values<int8_t>()[0], -1);
  Array c = parse_npy(make_npy("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }",
                               le_bytes<uint16_t>({0x3c00}), 2),
                      "hand");  // version 2.0
  EXPECT_EQ(c.dtype, "<f2");
  EXPECT_EQ(c.data, (Bytes{0x00, 0x3c}));
}

TEST(Npz, ReadHandBuiltArchive) {
  TempDir dir("npz_test");
  const Bytes f32 = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                             le_bytes<float>({1.5f, -2.0f, 0.25f, 8.0f}));
  const Bytes u16 = make_npy("{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }",
                             le_bytes<uint16_t>({1, 65535, 0x3F80}));
  const Bytes i8 = make_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (), }",
                            Bytes{0x80});
  const Bytes big = make_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (40000,), }",
                             Bytes(80000, 0x5a));  // several deflate stored blocks
  write_bytes(dir.file("hand.npz"), make_zip({{"input.npy", f32, false},
                                              {"bf16_weights.npy", u16, true},
                                              {"s.npy", i8, false},
                                              {"big.npy", big, true}}));
  const Arrays arrays = read_npz(dir.file("hand.npz"));
  ASSERT_EQ(arrays.size(), 4u);
  EXPECT_EQ(arrays.at("input").shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(arrays.at("input").values<float>()[1], -2.0f);
  EXPECT_EQ(arrays.at("bf16_weights").values<uint16_t>()[2], 0x3F80);
  EXPECT_TRUE(arrays.at("s").shape.empty());
  EXPECT_EQ(arrays.at("s").values<int8_t>()[0], -128);
  EXPECT_EQ(arrays.at("big").data, Bytes(80000, 0x5a));
}

TEST(Npz, WrittenArchiveHasTheExpectedEntries) {
  // The central directory at the end of the file lists "<name>.npy" entries.
  TempDir dir("npz_test");
  Arrays arrays;
  arrays["b"] = Array::from<uint8_t>({1}, std::vector<uint8_t>{1});
  arrays["a"] = Array::from<uint8_t>({1}, std::vector<uint8_t>{2});
  write_npz(dir.file("x.npz"), arrays);
  const Bytes bytes = read_bytes(dir.file("x.npz"));
  const std::string text(bytes.begin(), bytes.end());
  ASSERT_GE(bytes.size(), 22u);
  EXPECT_EQ(text.substr(0, 4), std::string("PK\x03\x04", 4));
  EXPECT_EQ(text.substr(bytes.size() - 22, 4), std::string("PK\x05\x06", 4));
  EXPECT_NE(text.find("a.npy"), std::string::npos);
  EXPECT_NE(text.find("b.npy"), std::string::npos);
  EXPECT_LT(text.find("a.npy"), text.find("b.npy"));  // name order
  EXPECT_EQ(dir.entries(), 1u);                         // no temporary file left
}

TEST(Npz, EmptyArchive) {
  TempDir dir("npz_test");
  write_npz(dir.file("empty.npz"), {});
  EXPECT_TRUE(read_npz(dir.file("empty.npz")).empty());
  write_bytes(dir.file("hand_empty.npz"), make_zip({}));
  EXPECT_TRUE(read_npz(dir.file("hand_empty.npz")).empty());
}

TEST(Npz, LongHeaderUsesVersion2) {
  TempDir dir("npz_test");
  Array a;
  a.dtype = "|u1";
  a.shape.assign(23000, 1);  // the shape text alone exceeds 65535 bytes
  a.data = {42};
  const Bytes image = format_npy(a);
  EXPECT_EQ(image[6], 2);
  EXPECT_EQ(image.size() % 64, 1u);
  EXPECT_EQ(parse_npy(image, "long").shape.size(), 23000u);
  write_npz(dir.file("long.npz"), {{"x", a}});
  EXPECT_EQ(read_npz(dir.file("long.npz")).at("x").data, Bytes{42});
}

// ---- rejections: .npy ---------------------------------------------------------

const Bytes kFour = le_bytes<float>({1, 2, 3, 4});

std::string dict(const std::string &descr, const std::string &shape,
                 const std::string &order = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
}

// ---- text arrays ("<U<n>") --------------------------------------------------

// "ab", "\u00e9\u20ac" and U+1F600 as numpy lays out a '<U2' array: UTF-32LE
// code points, each element zero-padded to two characters.
const Bytes kTextData = le_bytes<uint32_t>({'a', 'b', 0xE9, 0x20AC, 0x1F600, 0});

TEST(NpzText, ReadsNumpysLayoutAsUtf8) {
  const Array a = parse_npy(make_npy(dict("<U2", "(3,)"), kTextData), "t");
  EXPECT_EQ(a.dtype, "<U2");
  EXPECT_TRUE(is_text_dtype(a.dtype));
  EXPECT_FALSE(is_text_dtype("<f4"));
  EXPECT_EQ(text_values(a, "t"), (std::vector<std::string>{"ab", "\xC3\xA9\xE2\x82\xAC", "\xF0\x9F\x98\x80"}));
  EXPECT_EQ(parse_npy(make_npy(dict("|U2", "(3,)"), kTextData), "t").dtype, "<U2");  // numpy also writes '|'
}

TEST(NpzText, WritesTheSameBytesAndRoundTrips) {
  const Array a = text_array({3}, {"ab", "\xC3\xA9\xE2\x82\xAC", "\xF0\x9F\x98\x80"}, "t");
  EXPECT_EQ(a.dtype, "<U2");
  EXPECT_EQ(a.data, kTextData);
  TempDir dir("npz_text");
  const std::string path = (dir.path() / "t.npz").string();
  write_npz(path, {{"s", a}, {"empty", text_array({2, 0}, {}, "e")}});
  const Arrays back = read_npz(path);
  EXPECT_EQ(text_values(back.at("s"), "s"), text_values(a, "a"));
  EXPECT_EQ(back.at("empty").dtype, "<U1");
  EXPECT_EQ(back.at("empty").shape, (std::vector<int64_t>{2, 0}));
}

TEST(NpzText, RefusesWhatIsNotText) {
  expect_error([&] { text_values(parse_npy(make_npy(dict("<U1", "(1,)"), le_bytes<uint32_t>({0xD800})), "t"), "t"); },
               {"t:", "element 0", "U+D800"});
  expect_error([&] { text_values(parse_npy(make_npy(dict("<U1", "(1,)"), le_bytes<uint32_t>({0x110000})), "t"), "t"); },
               {"U+110000"});
  expect_error([&] { text_array({2}, {"ok", "\xC3"}, "w"); }, {"w:", "element 1", "not UTF-8"});
  expect_error([&] { text_array({2}, {"ok", "\xC0\xAF"}, "w"); }, {"element 1", "not UTF-8"});  // overlong '/'
  expect_error([&] { text_array({2}, {"ok", "\xED\xA0\x80"}, "w"); }, {"element 1", "not UTF-8"});  // a surrogate
  expect_error([&] { text_array({3}, {"a"}, "w"); }, {"w:", "1 text values", "3 elements"});
  expect_error([&] { text_values(Array::from<float>({1}, std::vector<float>{1.0f}), "f"); }, {"f:", "not text"});
  expect_error([&] { parse_npy(make_npy(dict(">U2", "(3,)"), kTextData), "t"); }, {"big-endian"});
}

TEST(NpyReject, BadMagic) {
  Bytes bytes = make_npy(dict("<f4", "(4,)"), kFour);
  bytes[1] = 'X';
  expect_error([&] { parse_npy(bytes, "f.npz: array 'a'"); }, {"f.npz: array 'a'", "bad magic"});
  expect_error([&] { parse_npy(Bytes{1, 2, 3}, "w"); }, {"w:", "truncated"});
}

TEST(NpyReject, UnsupportedVersion) {
  Bytes bytes = make_npy(dict("<f4", "(4,)"), kFour);
  bytes[6] = 4;
  expect_error([&] { parse_npy(bytes, "w"); }, {"version 4.0"});
}

TEST(NpyReject, UnsupportedDtypes) {
  for (const char *descr : {"<c8", "<U0", "<U", "<Ux", "|O", "<M8", "<f16", "<f3", "xyz", ""}) {
    SCOPED_TRACE(descr);
    expect_error([&] { parse_npy(make_npy(dict(descr, "(4,)"), kFour), "w"); },
                 {"w:", "unsupported dtype"});
  }
  expect_error(
      [&] {
        parse_npy(make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }",
                           kFour),
                  "w");
      },
      {"structured"});
}

TEST(NpyReject, BigEndian) {
  expect_error([&] { parse_npy(make_npy(dict(">f4", "(4,)"), kFour), "w"); }, {"big-endian"});
  expect_error([&] { parse_npy(make_npy(dict("|f4", "(4,)"), kFour), "w"); }, {"byte order"});
}

TEST(NpyReject, BoolBytesOtherThanZeroOrOne) {
  expect_error([&] { parse_npy(make_npy(dict("|b1", "(3,)"), Bytes{0, 1, 2}), "w"); },
               {"w:", "bool element 2", "byte 2"});
  Array a;
  a.dtype = "|b1";
  a.shape = {1};
  a.data = {0xff};
  expect_error([&] { format_npy(a); }, {"bool element 0"});
}

TEST(NpyReject, FortranOrder) {
  expect_error([&] { parse_npy(make_npy(dict("<f4", "(2, 2)", "True"), kFour), "w"); },
               {"fortran_order True"});
}

TEST(NpyReject, SizeMismatchAndTruncation) {
  expect_error([&] { parse_npy(make_npy(dict("<f4", "(5,)"), kFour), "w"); },
               {"truncated", "20 bytes", "16"});
  expect_error([&] { parse_npy(make_npy(dict("<f4", "(3,)"), kFour), "w"); },
               {"size mismatch", "4 bytes after"});
  Bytes bytes = make_npy(dict("<f4", "(4,)"), kFour);
  bytes.resize(40);  // inside the header
  expect_error([&] { parse_npy(bytes, "w"); }, {"truncated", "header"});
}

TEST(NpyReject, MalformedHeaders) {
  const struct {
    std::string dict;
    std::string fragment;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': False}", "no 'shape'"},
      {"{'descr': '<f4', 'shape': (4,)}", "no 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (4,)}", "no 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1}", "unexpected key 'extra'"},
      {dict("<f4", "(4)"), "not a tuple"},
      {dict("<f4", "(-4,)"), "non-negative"},
      {dict("<f4", "[4]"), "must be a tuple"},
      {dict("<f4", "(4,)", "maybe"), "True or False"},
      {"['descr', '<f4']", "does not start with '{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } junk", "after the closing"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (4,), }", "expected ',' or '}'"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (4,), }", "expected ':'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", "twice"},
      {dict("<f4", "(99999999999999999999,)"), "too large"},
      {dict("<f4", "(4294967296, 4294967296)"), "overflow"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.dict);
    expect_error([&] { parse_npy(make_npy(c.dict, kFour), "f.npz: array 'x'"); },
                 {"f.npz: array 'x'", c.fragment});
  }
}

// ---- rejections: .npz ---------------------------------------------------------

TEST(NpzReject, MissingFileAndNotAZip) {
  TempDir dir("npz_test");
  expect_error([&] { read_npz(dir.file("absent.npz")); }, {"absent.npz", "cannot open"});
  write_bytes(dir.file("text.npz"), Bytes{'h', 'e', 'l', 'l', 'o'});
  expect_error([&] { read_npz(dir.file("text.npz")); }, {"text.npz", "not a zip"});
  Bytes zip = make_zip({{"a.npy", make_npy(dict("<f4", "(4,)"), kFour), false}});
  zip.resize(zip.size() - 10);  // the end record is cut
  write_bytes(dir.file("cut.npz"), zip);
  expect_error([&] { read_npz(dir.file("cut.npz")); }, {"cut.npz", "truncated"});
}

TEST(NpzReject, EntryProblems) {
  TempDir dir("npz_test");
  const Bytes good = make_npy(dict("<f4", "(4,)"), kFour);
  write_bytes(dir.file("notnpy.npz"), make_zip({{"readme.txt", Bytes{'x'}, false}}));
  expect_error([&] { read_npz(dir.file("notnpy.npz")); },
               {"notnpy.npz", "'readme.txt'", "not an .npy"});
  write_bytes(dir.file("dup.npz"), make_zip({{"a.npy", good, false}, {"a.npy", good, true}}));
  expect_error([&] { read_npz(dir.file("dup.npz")); }, {"dup.npz", "array 'a'", "twice"});
  Bytes bad = good;
  bad[3] = 'Q';
  write_bytes(dir.file("magic.npz"), make_zip({{"a.npy", good, false}, {"b.npy", bad, false}}));
  expect_error([&] { read_npz(dir.file("magic.npz")); }, {"magic.npz", "array 'b'", "bad magic"});
  write_bytes(dir.file("dtype.npz"),
              make_zip({{"w.npy", make_npy(dict(">i4", "(4,)"), kFour), true}}));
  expect_error([&] { read_npz(dir.file("dtype.npz")); }, {"dtype.npz", "array 'w'", "big-endian"});
  write_bytes(dir.file("size.npz"),
              make_zip({{"w.npy", make_npy(dict("<f4", "(5,)"), kFour), false}}));
  expect_error([&] { read_npz(dir.file("size.npz")); }, {"size.npz", "array 'w'", "size mismatch"});
  Bytes short_header = good;
  short_header.resize(30);
  write_bytes(dir.file("short.npz"), make_zip({{"w.npy", short_header, true}}));
  expect_error([&] { read_npz(dir.file("short.npz")); }, {"short.npz", "array 'w'", "truncated"});
}

TEST(NpzReject, CorruptedData) {
  TempDir dir("npz_test");
  const Bytes good = make_npy(dict("<f4", "(4,)"), kFour);
  Bytes zip = make_zip({{"a.npy", good, false}});
  zip[30 + 5 + good.size() - 1] ^= 0x40;  // last data byte of the stored entry
  write_bytes(dir.file("crc.npz"), zip);
  expect_error([&] { read_npz(dir.file("crc.npz")); }, {"crc.npz", "array 'a'", "CRC"});

  Bytes deflated = make_zip({{"a.npy", good, true}});
  deflated[30 + 5] = 0x07;  // block type 11: invalid
  write_bytes(dir.file("inflate.npz"), deflated);
  expect_error([&] { read_npz(dir.file("inflate.npz")); }, {"inflate.npz", "array 'a'"});
}

// ---- rejections: writing ------------------------------------------------------

TEST(NpzReject, InvalidArraysAreNotWritten) {
  TempDir dir("npz_test");
  const std::string path = dir.file("keep.npz");
  write_npz(path, {{"old", Array::from<uint8_t>({1}, std::vector<uint8_t>{7})}});
  Array wrong_size = Array::from<float>({2}, std::vector<float>{1, 2});
  wrong_size.shape = {3};
  expect_error([&] { write_npz(path, {{"x", wrong_size}}); }, {"keep.npz", "array 'x'", "8 bytes"});
  Array wrong_dtype = Array::from<float>({2}, std::vector<float>{1, 2});
  wrong_dtype.dtype = ">f4";
  expect_error([&] { write_npz(path, {{"y", wrong_dtype}}); }, {"array 'y'", "big-endian"});
  expect_error([&] { write_npz(path, {{"", Array::from<uint8_t>({}, std::vector<uint8_t>{1})}}); },
               {"empty"});
  // The earlier file is intact and no temporary file is left behind.
  EXPECT_EQ(read_npz(path).at("old").data, Bytes{7});
  EXPECT_EQ(dir.entries(), 1u);
  expect_error([&] { write_npz(dir.file("no/such/dir.npz"), {}); }, {"dir.npz"});
}

}  // namespace
