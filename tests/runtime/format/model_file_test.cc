// model_file_test: the model file container (runtime/format/include/tpu_runtime/model_file.h,
// docs/model-file.md).
//
// Round trips, a file laid out byte by byte by this test (its own header
// encoder, CRC-32 and zlib stored-block streams, independent of the writer),
// and every rejection path: truncation, bit flips, wrong magic or version,
// out-of-range and overflowing offsets, malformed metadata, damaged sections.
// Each rejection must be a tpu_runtime::Error whose message starts with the
// file name and names the field.
#include "support/temp_dir.h"
#include "tpu_runtime/model_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tpu_runtime::Error;
using tpu_runtime::ModelFile;
using tpu_runtime::ModelFileLayout;
using tpu_runtime::Section;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
const std::string kName = "sample.tpumodel";

// ---- independent encoders --------------------------------------------------

uint32_t crc32(const uint8_t *p, size_t n) {
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
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}
uint32_t crc32(const Bytes &b) { return crc32(b.data(), b.size()); }
uint32_t crc32(const std::string &s) {
  return crc32(reinterpret_cast<const uint8_t *>(s.data()), s.size());
}

// A zlib stream (RFC 1950) of deflate stored blocks (RFC 1951 §3.2.4).
Bytes zlib_stored(const Bytes &data) {
  Bytes out = {0x78, 0x01};
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(data.size() - pos, 65535);
    out.push_back(pos + n == data.size() ? 1 : 0);
    out.push_back(uint8_t(n));
    out.push_back(uint8_t(n >> 8));
    out.push_back(uint8_t(~n));
    out.push_back(uint8_t(~n >> 8));
    out.insert(out.end(), data.begin() + long(pos), data.begin() + long(pos + n));
    pos += n;
  } while (pos < data.size());
  uint32_t a = 1, b = 0;
  for (uint8_t c : data) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  const uint32_t adler = (b << 16) | a;
  for (int i = 3; i >= 0; --i) out.push_back(uint8_t(adler >> (8 * i)));
  return out;
}

// Decodes a zlib stream made only of stored blocks (what level 0 writes).
std::optional<Bytes> unzlib_stored(const uint8_t *p, size_t n) {
  if (n < 6 || p[0] != 0x78 || (p[0] * 256 + p[1]) % 31 != 0) return std::nullopt;
  Bytes out;
  size_t pos = 2;
  for (;;) {
    if (pos + 5 > n || (p[pos] & 6) != 0) return std::nullopt;  // BTYPE must be 00
    const bool final = p[pos] & 1;
    const size_t len = p[pos + 1] | p[pos + 2] << 8;
    if ((len ^ 0xffff) != size_t(p[pos + 3] | p[pos + 4] << 8)) return std::nullopt;
    pos += 5;
    if (pos + len > n) return std::nullopt;
    out.insert(out.end(), p + pos, p + pos + len);
    pos += len;
    if (final) break;
  }
  if (pos + 4 != n) return std::nullopt;
  return out;
}

void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24; }
uint64_t get64(const uint8_t *p) { return get32(p) | uint64_t(get32(p + 4)) << 32; }

// The 64-byte header as docs/model-file.md describes it.
struct RawHeader {
  std::string magic = "TPUSDKMD";
  uint32_t version = 1;
  uint32_t header_size = 64;
  uint64_t metadata_offset = 0, metadata_size = 0;
  uint64_t sections_offset = 0, sections_size = 0;
  uint32_t metadata_crc = 0;
  uint32_t flags = 0, reserved = 0;
  std::optional<uint32_t> header_crc;  // computed when unset

  Bytes encode() const {
    Bytes h(64, 0);
    std::memcpy(h.data(), magic.data(), std::min<size_t>(8, magic.size()));
    put32(&h[8], version);
    put32(&h[12], header_size);
    put64(&h[16], metadata_offset);
    put64(&h[24], metadata_size);
    put64(&h[32], sections_offset);
    put64(&h[40], sections_size);
    put32(&h[48], metadata_crc);
    put32(&h[52], flags);
    put32(&h[56], reserved);
    put32(&h[60], header_crc ? *header_crc : crc32(h.data(), 60));
    return h;
  }
  static RawHeader decode(const Bytes &f) {
    RawHeader r;
    r.magic.assign(f.begin(), f.begin() + 8);
    r.version = get32(&f[8]);
    r.header_size = get32(&f[12]);
    r.metadata_offset = get64(&f[16]);
    r.metadata_size = get64(&f[24]);
    r.sections_offset = get64(&f[32]);
    r.sections_size = get64(&f[40]);
    r.metadata_crc = get32(&f[48]);
    r.flags = get32(&f[52]);
    r.reserved = get32(&f[56]);
    r.header_crc = get32(&f[60]);
    return r;
  }
};

// Replaces the header of `file` (recomputing its CRC unless given).
Bytes with_header(Bytes file, RawHeader h) {
  const Bytes encoded = h.encode();
  std::copy(encoded.begin(), encoded.end(), file.begin());
  return file;
}

// A sections list entry.
json entry(const std::string &name, const std::string &kind, uint64_t offset,
           const Bytes &compressed, const Bytes &data) {
  return {{"name", name},
          {"kind", kind},
          {"compression", "zlib"},
          {"offset", offset},
          {"compressed_size", compressed.size()},
          {"compressed_crc32", crc32(compressed)},
          {"size", data.size()},
          {"crc32", crc32(data)}};
}

// A complete file: header, metadata right after it, then the section area
// (the opposite order from the writer's).
Bytes assemble(const std::string &metadata, const Bytes &area) {
  RawHeader h;
  h.metadata_offset = 64;
  h.metadata_size = metadata.size();
  h.sections_offset = 64 + metadata.size();
  h.sections_size = area.size();
  h.metadata_crc = crc32(metadata);
  Bytes file = h.encode();
  file.insert(file.end(), metadata.begin(), metadata.end());
  file.insert(file.end(), area.begin(), area.end());
  return file;
}

// A file with one section whose entry is `e` (edited freely by the test) and
// whose area is `area`.
Bytes one_section_file(const json &e, const Bytes &area) {
  json meta = {{"chip", "bm1688"}, {"sections", json::array({e})}};
  return assemble(meta.dump(), area);
}

// ---- helpers ------------------------------------------------------------------

using TempDir = test::TempDir;

Bytes read_bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string &path, const Bytes &bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  ASSERT_TRUE(f.good());
}

// Parsing `bytes` must throw an Error starting with the file name and
// mentioning every fragment. Returns the message.
std::string expect_rejected(const Bytes &bytes, std::initializer_list<std::string> fragments,
                            const std::string &name = kName) {
  try {
    tpu_runtime::parse_model_file(bytes, name);
  } catch (const Error &e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(name + ": ", 0), 0u) << "message does not start with the file name: "
                                                 << message;
    for (const std::string &f : fragments)
      EXPECT_NE(message.find(f), std::string::npos)
          << "message \"" << message << "\" does not mention \"" << f << "\"";
    return message;
  } catch (const std::exception &e) {
    ADD_FAILURE() << "not a tpu_runtime::Error: " << e.what();
    return {};
  }
  ADD_FAILURE() << "accepted; expected an error mentioning '" << *fragments.begin() << "'";
  return {};
}

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

Bytes random_bytes(test::Seeded &s, size_t n) {
  Bytes b(n);
  for (uint8_t &x : b) x = uint8_t(s.rng()());
  return b;
}

ModelFile sample_model(test::Seeded &s) {
  ModelFile m;
  m.metadata = {{"chip", "bm1684x"},
                {"name", "absadd \xc3\xa9t\xc3\xa9"},  // UTF-8
                {"tensors", json::array({{{"name", "in0"}, {"shape", {1, 3, 16, 16}}}})},
                {"params", {{"scale", 0.5}, {"flags", {1, 2, 3}}}}};
  m.sections.push_back({"kernel_module", "kernel_module", random_bytes(s, 70000)});
  Bytes commands(300000);
  for (size_t i = 0; i < commands.size(); ++i) commands[i] = uint8_t((i * 7) ^ (i >> 9));
  m.sections.push_back({"layer0.commands", "commands", commands});
  m.sections.push_back({"empty", "coefficients", {}});
  m.sections.push_back({"coefficients", "coefficients", random_bytes(s, 4096)});
  return m;
}

void expect_same(const ModelFile &a, const ModelFile &b) {
  EXPECT_EQ(a.metadata, b.metadata);
  ASSERT_EQ(a.sections.size(), b.sections.size());
  for (size_t i = 0; i < a.sections.size(); ++i) {
    EXPECT_EQ(a.sections[i].name, b.sections[i].name);
    EXPECT_EQ(a.sections[i].kind, b.sections[i].kind);
    EXPECT_TRUE(a.sections[i].data == b.sections[i].data) << a.sections[i].name;
  }
}

// ---- round trips ---------------------------------------------------------------

TEST(ModelFile, RoundTripInMemoryAndOnDisk) {
  test::Seeded seeded;
  TempDir dir("model_file_test");
  const ModelFile model = sample_model(seeded);
  const Bytes image = tpu_runtime::serialize_model_file(model);
  ModelFileLayout layout;
  expect_same(tpu_runtime::parse_model_file(image, "image", &layout), model);
  EXPECT_EQ(layout.format_version, 1u);
  EXPECT_EQ(layout.file_size, image.size());
  ASSERT_EQ(layout.sections.size(), 4u);
  EXPECT_EQ(layout.sections[1].size, 300000u);
  EXPECT_LT(layout.sections[1].compressed_size, 300000u);

  const std::string path = dir.file("m.tpumodel");
  tpu_runtime::write_model_file(path, model);
  EXPECT_TRUE(read_bytes(path) == image);  // deterministic, same bytes as in memory
  const ModelFile back = tpu_runtime::read_model_file(path);
  expect_same(back, model);
  EXPECT_FALSE(back.metadata.contains("sections"));
  ASSERT_NE(back.find_section("coefficients"), nullptr);
  EXPECT_EQ(back.find_section("coefficients")->kind, "coefficients");
  EXPECT_EQ(back.find_section("absent"), nullptr);

  // Reading and writing again gives the same file.
  tpu_runtime::write_model_file(dir.file("again.tpumodel"), back);
  EXPECT_TRUE(read_bytes(dir.file("again.tpumodel")) == image);
}

TEST(ModelFile, EmptyModelAndEveryCompressionLevel) {
  ModelFile empty;
  expect_same(tpu_runtime::parse_model_file(tpu_runtime::serialize_model_file(empty), "e"), empty);
  test::Seeded seeded;
  const ModelFile model = sample_model(seeded);
  for (int level = 0; level <= 9; ++level) {
    SCOPED_TRACE(level);
    expect_same(tpu_runtime::parse_model_file(tpu_runtime::serialize_model_file(model, level), "l"),
                model);
  }
  expect_error([&] { tpu_runtime::serialize_model_file(model, 10); }, {"level 10"});
}

TEST(ModelFile, LargeSection) {
  Bytes big(24u << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t((i * 2654435761u) >> 13);
  ModelFile m;
  m.sections.push_back({"coefficients", "coefficients", big});
  const ModelFile back = tpu_runtime::parse_model_file(tpu_runtime::serialize_model_file(m, 1), "big");
  ASSERT_EQ(back.sections.size(), 1u);
  EXPECT_TRUE(back.sections[0].data == big);
}

// The writer's bytes, decoded with this test's own decoders (level 0 makes
// stored blocks, which the test can decode without zlib).
TEST(ModelFile, WrittenLayoutMatchesTheDocumentation) {
  test::Seeded seeded;
  const ModelFile model = sample_model(seeded);
  const Bytes f = tpu_runtime::serialize_model_file(model, 0);
  const RawHeader h = RawHeader::decode(f);
  EXPECT_EQ(h.magic, "TPUSDKMD");
  EXPECT_EQ(h.version, 1u);
  EXPECT_EQ(h.header_size, 64u);
  EXPECT_EQ(h.flags, 0u);
  EXPECT_EQ(h.reserved, 0u);
  EXPECT_EQ(*h.header_crc, crc32(f.data(), 60));
  EXPECT_EQ(h.sections_offset, 64u);  // writer order: header, sections, metadata
  EXPECT_EQ(h.metadata_offset, 64 + h.sections_size);
  EXPECT_EQ(h.metadata_offset + h.metadata_size, f.size());
  EXPECT_EQ(h.metadata_crc, crc32(&f[h.metadata_offset], h.metadata_size));

  const json meta = json::parse(f.begin() + long(h.metadata_offset), f.end());
  EXPECT_EQ(meta.at("chip"), "bm1684x");
  const json &list = meta.at("sections");
  ASSERT_EQ(list.size(), model.sections.size());
  uint64_t cursor = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const json &e = list[i];
    SCOPED_TRACE(e.dump());
    EXPECT_EQ(e.at("name"), model.sections[i].name);
    EXPECT_EQ(e.at("kind"), model.sections[i].kind);
    EXPECT_EQ(e.at("compression"), "zlib");
    const uint64_t offset = e.at("offset"), csize = e.at("compressed_size");
    EXPECT_EQ(offset, cursor);  // packed back to back
    cursor += csize;
    const uint8_t *p = &f[h.sections_offset + offset];
    EXPECT_EQ(e.at("compressed_crc32").get<uint32_t>(), crc32(p, csize));
    const auto data = unzlib_stored(p, csize);
    ASSERT_TRUE(data.has_value());
    EXPECT_TRUE(*data == model.sections[i].data);
    EXPECT_EQ(e.at("size").get<uint64_t>(), data->size());
    EXPECT_EQ(e.at("crc32").get<uint32_t>(), crc32(*data));
  }
  EXPECT_EQ(cursor, h.sections_size);
}

TEST(ModelFile, ReadsAFileBuiltByHand) {
  // Metadata before the section area, sections not in offset order.
  const Bytes a = {'a', 'b', 'c'}, b(100000, 0x11);
  const Bytes za = zlib_stored(a), zb = zlib_stored(b);
  Bytes area = zb;
  area.insert(area.end(), za.begin(), za.end());
  const json meta = {{"chip", "bm1688"},
                     {"extra", {{"k", true}}},
                     {"sections", json::array({entry("a", "kernel_module", zb.size(), za, a),
                                               entry("b", "commands", 0, zb, b)})}};
  ModelFileLayout layout;
  const ModelFile m = tpu_runtime::parse_model_file(assemble(meta.dump(), area), "hand", &layout);
  EXPECT_EQ(m.metadata, (json{{"chip", "bm1688"}, {"extra", {{"k", true}}}}));
  ASSERT_EQ(m.sections.size(), 2u);
  EXPECT_EQ(m.sections[0].name, "a");
  EXPECT_EQ(m.sections[0].kind, "kernel_module");
  EXPECT_EQ(m.sections[0].data, a);
  EXPECT_EQ(m.sections[1].data, b);
  EXPECT_EQ(layout.metadata_offset, 64u);
  EXPECT_EQ(layout.sections[0].offset, zb.size());
}

// ---- atomic writing --------------------------------------------------------------

TEST(ModelFile, WriteReplacesAtomicallyAndKeepsTheMode) {
  test::Seeded seeded;
  TempDir dir("model_file_test");
  const std::string path = dir.file("m.tpumodel");
  ModelFile first = sample_model(seeded);
  tpu_runtime::write_model_file(path, first);
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ModelFile second = first;
  second.find_section("kernel_module")->data = random_bytes(seeded, 1000);
  tpu_runtime::write_model_file(path, second);
  expect_same(tpu_runtime::read_model_file(path), second);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(dir.names(), std::vector<std::string>{"m.tpumodel"});  // no temporary file left

  // A refused model leaves the file as it was, and no temporary file.
  ModelFile bad = second;
  bad.metadata["sections"] = 1;
  expect_error([&] { tpu_runtime::write_model_file(path, bad); }, {path, "\"sections\""});
  ModelFile duplicate = second;
  duplicate.sections.push_back(duplicate.sections[0]);
  expect_error([&] { tpu_runtime::write_model_file(path, duplicate); },
               {path, "both named 'kernel_module'"});
  ModelFile bad_utf8 = second;
  bad_utf8.metadata["note"] = std::string("\xff\xfe");
  expect_error([&] { tpu_runtime::write_model_file(path, bad_utf8); }, {path, "UTF-8"});
  expect_same(tpu_runtime::read_model_file(path), second);
  EXPECT_EQ(dir.names(), std::vector<std::string>{"m.tpumodel"});

  expect_error([&] { tpu_runtime::write_model_file(dir.file("missing/m.tpumodel"), first); },
               {"missing/m.tpumodel", "temporary file"});
  expect_error([&] { tpu_runtime::write_model_file(dir.file(""), first); }, {"ends with a '/'"});
}

TEST(ModelFile, WriterRejectsInvalidModels) {
  ModelFile m;
  m.metadata = json::array();
  expect_error([&] { tpu_runtime::serialize_model_file(m); }, {"JSON object", "array"});
  m.metadata = json::object();
  m.sections.push_back({"", "commands", {}});
  expect_error([&] { tpu_runtime::serialize_model_file(m); }, {"section #0", "empty name"});
  m.sections[0] = {"x", "", {}};
  expect_error([&] { tpu_runtime::serialize_model_file(m); }, {"'x'", "empty kind"});
}

TEST(ModelFile, ReadFileErrors) {
  TempDir dir("model_file_test");
  expect_error([&] { tpu_runtime::read_model_file(dir.file("absent")); }, {"absent", "cannot open"});
  fs::create_directory(dir.file("d"));
  expect_error([&] { tpu_runtime::read_model_file(dir.file("d")); }, {"not a regular file"});
  write_bytes(dir.file("empty"), {});
  expect_error([&] { tpu_runtime::read_model_file(dir.file("empty")); },
               {dir.file("empty") + ": header", "empty"});
}

// ---- truncation and bit flips ------------------------------------------------------

TEST(ModelFileReject, TruncationAtEveryHeaderBoundary) {
  test::Seeded seeded;
  const Bytes f = tpu_runtime::serialize_model_file(sample_model(seeded));
  for (size_t cut : {0, 1, 3, 4, 7, 8, 12, 16, 24, 32, 40, 48, 52, 56, 60, 63}) {
    SCOPED_TRACE(cut);
    const Bytes t(f.begin(), f.begin() + long(cut));
    if (cut == 0)
      expect_rejected(t, {"empty"});
    else if (cut < 8)
      expect_rejected(t, {"truncated"});
    else
      expect_rejected(t, {"header", "truncated", "64-byte header"});
  }
}

TEST(ModelFileReject, TruncationAtRandomPointsAndRegionEdges) {
  test::Seeded seeded;
  const Bytes f = tpu_runtime::serialize_model_file(sample_model(seeded));
  const RawHeader h = RawHeader::decode(f);
  std::vector<size_t> cuts = {64, 65, size_t(h.metadata_offset), size_t(h.metadata_offset) + 1,
                              f.size() - 1};
  for (int i = 0; i < 300; ++i) cuts.push_back(size_t(seeded.uniform(64, int(f.size()) - 1)));
  for (size_t cut : cuts) {
    SCOPED_TRACE(cut);
    expect_rejected(Bytes(f.begin(), f.begin() + long(cut)), {"header.", "truncated?"});
  }
}

TEST(ModelFileReject, AppendedBytes) {
  test::Seeded seeded;
  Bytes f = tpu_runtime::serialize_model_file(sample_model(seeded));
  f.push_back(0);
  expect_rejected(f, {"header", "1 unexpected bytes after the end of the metadata"});
}

TEST(ModelFileReject, BitFlipsInTheHeader) {
  test::Seeded seeded;
  const Bytes f = tpu_runtime::serialize_model_file(sample_model(seeded));
  for (size_t byte = 0; byte < 64; ++byte) {
    SCOPED_TRACE(byte);
    Bytes g = f;
    g[byte] ^= uint8_t(1u << seeded.uniform(0, 7));
    if (byte < 8)
      expect_rejected(g, {"header.magic"});
    else
      expect_rejected(g, {"header."});  // version, header size or header CRC
  }
}

TEST(ModelFileReject, BitFlipsInTheMetadata) {
  test::Seeded seeded;
  const Bytes f = tpu_runtime::serialize_model_file(sample_model(seeded));
  const RawHeader h = RawHeader::decode(f);
  for (uint64_t i = 0; i < h.metadata_size; ++i) {
    Bytes g = f;
    g[h.metadata_offset + i] ^= uint8_t(1u << seeded.uniform(0, 7));
    expect_rejected(g, {"header.metadata_crc32", "mismatch", "metadata is damaged"});
  }
}

TEST(ModelFileReject, BitFlipsInEachSection) {
  test::Seeded seeded;
  const ModelFile model = sample_model(seeded);
  const Bytes f = tpu_runtime::serialize_model_file(model);
  ModelFileLayout layout;
  tpu_runtime::parse_model_file(f, "ok", &layout);
  for (const auto &s : layout.sections) {
    SCOPED_TRACE(s.name);
    for (int k = 0; k < 40; ++k) {
      Bytes g = f;
      const uint64_t at = layout.sections_offset + s.offset +
                          uint64_t(seeded.uniform(0, int(s.compressed_size) - 1));
      g[at] ^= uint8_t(1u << seeded.uniform(0, 7));
      expect_rejected(g, {"section '" + s.name + "'", "compressed_crc32 mismatch", "damaged"});
    }
  }
}

// ---- header fields ----------------------------------------------------------------------

class HeaderFields : public ::testing::Test {
 protected:
  void SetUp() override {
    test::Seeded seeded;
    file = tpu_runtime::serialize_model_file(sample_model(seeded));
    header = RawHeader::decode(file);
    header.header_crc.reset();
  }
  Bytes file;
  RawHeader header;
};

TEST_F(HeaderFields, WrongMagic) {
  RawHeader h = header;
  h.magic = "TPUSDKMX";
  expect_rejected(with_header(file, h), {"header.magic", "not a TPU SDK model file", "TPUSDKMX"});
  Bytes bmodel = file;
  const uint8_t sophgo[] = {0xEE, 0xAA, 0x55, 0xFF};
  std::copy(std::begin(sophgo), std::end(sophgo), bmodel.begin());
  expect_rejected(bmodel, {"header.magic", "Sophgo bmodel"});
  expect_rejected(Bytes{'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0}, {"header.magic", "PK\\x03\\x04"});
}

TEST_F(HeaderFields, Versions) {
  RawHeader h = header;
  h.version = 2;
  expect_rejected(with_header(file, h), {"header.format_version", "2 is newer", "version 1"});
  h.version = 0xffffffff;
  expect_rejected(with_header(file, h), {"header.format_version", "newer"});
  h.version = 0;
  expect_rejected(with_header(file, h), {"header.format_version", "0 is not a valid version"});
  // The version is checked before the header CRC: a future header layout
  // gets the version message, not a CRC mismatch.
  h.version = 7;
  h.header_crc = 0;
  expect_rejected(with_header(file, h), {"header.format_version", "7 is newer"});
}

TEST_F(HeaderFields, HeaderSizeFlagsReservedCrc) {
  RawHeader h = header;
  h.header_size = 128;
  expect_rejected(with_header(file, h), {"header.header_size", "128"});
  h = header;
  h.flags = 4;
  expect_rejected(with_header(file, h), {"header.flags", "0x4"});
  h = header;
  h.reserved = 1;
  expect_rejected(with_header(file, h), {"header.reserved"});
  h = header;
  h.header_crc = 0x12345678;
  expect_rejected(with_header(file, h), {"header.header_crc32", "stored 0x12345678"});
}

TEST_F(HeaderFields, OffsetsOutOfRangeOrOverflowing) {
  const uint64_t size = file.size();
  struct Case {
    void (*edit)(RawHeader &, uint64_t);
    const char *field;
    const char *fragment;
  };
  const Case cases[] = {
      {[](RawHeader &h, uint64_t) { h.metadata_offset = 10; }, "header.metadata_offset",
       "points into the 64-byte header"},
      {[](RawHeader &h, uint64_t) { h.sections_offset = 0; }, "header.sections_offset",
       "points into the 64-byte header"},
      {[](RawHeader &h, uint64_t s) { h.metadata_offset = s + 1; }, "header.metadata_offset",
       "past the end of the file"},
      {[](RawHeader &h, uint64_t) { h.metadata_offset = kMax64 - 3; }, "header.metadata_offset",
       "past the end of the file"},
      {[](RawHeader &h, uint64_t) { h.metadata_size = kMax64; }, "header.metadata_size",
       "runs past the end"},
      {[](RawHeader &h, uint64_t) { h.sections_size = kMax64 - 63; }, "header.sections_size",
       "runs past the end"},
      {[](RawHeader &h, uint64_t) { h.sections_offset = kMax64; }, "header.sections_offset",
       "past the end"},
      {[](RawHeader &h, uint64_t) { h.metadata_size = 0; }, "header.metadata_size",
       "cannot be empty"},
      {[](RawHeader &h, uint64_t) { h.metadata_offset -= 1; }, "header", "overlaps"},
      {[](RawHeader &h, uint64_t) { h.sections_offset += 1; h.sections_size -= 1; }, "header",
       "belong to no region"},
      {[](RawHeader &h, uint64_t) { h.sections_size -= 1; }, "header", "belong to no region"},
      {[](RawHeader &h, uint64_t) { h.metadata_size -= 1; }, "header", "unexpected bytes after"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.fragment);
    RawHeader h = header;
    c.edit(h, size);
    expect_rejected(with_header(file, h), {c.field, c.fragment});
  }
}

TEST(ModelFileReject, HugeMetadataSize) {
  RawHeader h;
  h.metadata_offset = 64;
  h.metadata_size = (64u << 20) + 1;
  h.sections_offset = 64;
  Bytes f = h.encode();
  f.resize(64 + h.metadata_size, ' ');
  expect_rejected(f, {"header.metadata_size", "limit"});
}

// ---- metadata ----------------------------------------------------------------------------

TEST(ModelFileReject, MalformedMetadata) {
  const struct {
    std::string text;
    std::vector<std::string> fragments;
  } cases[] = {
      {"{\"sections\": [}", {"metadata", "invalid JSON", "parse error"}},
      {"{\"sections\": []", {"metadata", "invalid JSON"}},
      {"{\"sections\": []} trailing", {"metadata", "invalid JSON"}},
      {"{\"s\": \"\xff\"}", {"metadata", "invalid JSON"}},  // not UTF-8
      {"{\"sections\": [], \"big\": 1e3085}", {"metadata", "invalid JSON", "1e3085"}},
      {"[]", {"metadata", "must be a JSON object, not array"}},
      {"42", {"metadata", "must be a JSON object, not number"}},
      {"{}", {"metadata.sections", "missing"}},
      {"{\"sections\": {}}", {"metadata.sections", "must be an array, not object"}},
      {"{\"sections\": [1]}", {"metadata.sections[0]", "must be an object, not number"}},
      {std::string(100, '[') + std::string(100, ']'), {"metadata", "nested deeper than 64"}},
      {"{\"sections\": [], \"a\": \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
       "[[[[[[[[[[[[[[\"}",
       {}},  // brackets inside a string are not nesting
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.text);
    const Bytes f = assemble(c.text, {});
    if (c.fragments.empty()) {
      EXPECT_NO_THROW(tpu_runtime::parse_model_file(f, kName));
      continue;
    }
    try {
      tpu_runtime::parse_model_file(f, kName);
      ADD_FAILURE() << "accepted";
    } catch (const Error &e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(kName + ": ", 0), 0u) << message;
      for (const std::string &frag : c.fragments)
        EXPECT_NE(message.find(frag), std::string::npos) << message << " / " << frag;
    }
  }
}

class SectionEntries : public ::testing::Test {
 protected:
  const Bytes data = Bytes(5000, 0x42);
  const Bytes compressed = zlib_stored(data);
  json good = entry("kernel_module", "kernel_module", 0, compressed, data);
  Bytes file_with(const json &e) const { return one_section_file(e, compressed); }
};

TEST_F(SectionEntries, TheGoodOneIsAccepted) {
  const ModelFile m = tpu_runtime::parse_model_file(file_with(good), kName);
  ASSERT_EQ(m.sections.size(), 1u);
  EXPECT_EQ(m.sections[0].data, data);
}

TEST_F(SectionEntries, MissingKeys) {
  for (const char *key :
       {"name", "kind", "compression", "offset", "compressed_size", "compressed_crc32", "size",
        "crc32"}) {
    SCOPED_TRACE(key);
    json e = good;
    e.erase(key);
    expect_rejected(file_with(e), {std::string(".") + key, "missing"});
  }
}

TEST_F(SectionEntries, WrongTypes) {
  const struct {
    const char *key;
    json value;
    const char *fragment;
  } cases[] = {
      {"name", 7, "must be a string, not number"},
      {"name", "", "must not be empty"},
      {"kind", nullptr, "must be a string, not null"},
      {"compression", "lz4", "'lz4' is not supported"},
      {"offset", "0", "must be a non-negative integer, not string"},
      {"offset", -1, "must be a non-negative integer, not -1"},
      {"offset", 0.5, "must be a non-negative integer, not 0.5"},
      {"size", json::array(), "must be a non-negative integer, not array"},
      {"crc32", uint64_t(1) << 32, "does not fit in 32 bits"},
      {"compressed_crc32", kMax64, "does not fit in 32 bits"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.key);
    json e = good;
    e[c.key] = c.value;
    expect_rejected(file_with(e), {std::string("metadata.sections[0]"), c.key, c.fragment});
  }
}

TEST_F(SectionEntries, BoundsAndSizes) {
  const uint64_t area = compressed.size();
  struct Case {
    const char *key;
    uint64_t value;
    const char *field;
    const char *fragment;
  };
  const Case cases[] = {
      {"offset", area + 1, ".offset", "past the end of the section area"},
      {"offset", kMax64, ".offset", "past the end of the section area"},
      {"compressed_size", area + 1, ".compressed_size", "run past the end of the section area"},
      {"compressed_size", kMax64, ".compressed_size", "run past the end of the section area"},
      {"size", (uint64_t(16) << 30) + 1, ".size", "limit"},
      {"size", area * 1032 + 65, ".size", "cannot come from"},
      {"compressed_size", area - 1, "metadata.sections", "belong to no section"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.key);
    json e = good;
    e[c.key] = c.value;
    expect_rejected(file_with(e), {c.field, c.fragment});
  }
  // offset at the very end with a huge size must not wrap around.
  json e = good;
  e["offset"] = area;
  e["compressed_size"] = kMax64 - area + 1;
  expect_rejected(file_with(e), {".compressed_size", "run past"});
}

TEST_F(SectionEntries, DuplicateNamesAndOverlaps) {
  json meta = {{"sections", json::array({good, good})}};
  expect_rejected(assemble(meta.dump(), compressed),
                  {"metadata.sections[1].name", "also the name of sections[0]"});
  json other = good;
  other["name"] = "other";
  meta = {{"sections", json::array({good, other})}};
  expect_rejected(assemble(meta.dump(), compressed),
                  {"metadata.sections[1] ('other').offset", "overlaps"});
  // A gap between two sections.
  const Bytes small = {1, 2, 3};
  const Bytes zsmall = zlib_stored(small);
  Bytes area = compressed;
  area.push_back(0xAA);
  area.insert(area.end(), zsmall.begin(), zsmall.end());
  meta = {{"sections",
           json::array({good, entry("small", "commands", compressed.size() + 1, zsmall, small)})}};
  expect_rejected(assemble(meta.dump(), area), {"('small').offset", "belong to no section"});
}

// ---- section contents -----------------------------------------------------------------------

TEST_F(SectionEntries, GarbageCompressedBytes) {
  const Bytes garbage = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x0f};
  json e = entry("kernel_module", "kernel_module", 0, garbage, data);
  expect_rejected(one_section_file(e, garbage),
                  {"section 'kernel_module'", "not a valid zlib stream"});
}

TEST_F(SectionEntries, RecordedSizeDisagrees) {
  json e = good;
  e["size"] = data.size() + 1;
  expect_rejected(file_with(e), {"section 'kernel_module'", "decompresses to 5000 bytes",
                                 "recorded size is 5001"});
  e["size"] = data.size() - 1;
  expect_rejected(file_with(e), {"section 'kernel_module'", "more than the recorded size"});
}

TEST_F(SectionEntries, UncompressedCrcMismatch) {
  json e = good;
  e["crc32"] = crc32(data) ^ 1;
  expect_rejected(file_with(e), {"section 'kernel_module'", "CRC32 mismatch", "damaged"});
}

TEST_F(SectionEntries, TruncatedOrPaddedZlibStream) {
  Bytes cut(compressed.begin(), compressed.end() - 7);
  json e = entry("kernel_module", "kernel_module", 0, cut, data);
  expect_rejected(one_section_file(e, cut), {"section 'kernel_module'", "ends early"});
  Bytes padded = compressed;
  padded.push_back(0);
  padded.push_back(0);
  e = entry("kernel_module", "kernel_module", 0, padded, data);
  expect_rejected(one_section_file(e, padded),
                  {"section 'kernel_module'", "2 of the", "follow the end of the zlib stream"});
}

TEST(ModelFileReject, NothingButErrorsOnRandomMutations) {
  // Random byte edits anywhere: always an Error (never another exception, a
  // crash or a silently different model).
  test::Seeded seeded;
  const ModelFile model = sample_model(seeded);
  const Bytes f = tpu_runtime::serialize_model_file(model);
  for (int i = 0; i < 300; ++i) {
    Bytes g = f;
    const int edits = seeded.uniform(1, 4);
    for (int k = 0; k < edits; ++k)
      g[size_t(seeded.uniform(0, int(g.size()) - 1))] = uint8_t(seeded.uniform(0, 255));
    if (g == f) continue;
    try {
      tpu_runtime::parse_model_file(g, kName);
      ADD_FAILURE() << "a damaged file was accepted";
    } catch (const Error &) {
    }
  }
}

}  // namespace
