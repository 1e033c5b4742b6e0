// model_file.cc: the model file container (docs/model-file.md).
#include "tpu_runtime/model_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "io/atomic_file.h"
#include "tpu_runtime/json_limits.h"

namespace tpu_runtime {
namespace {

using nlohmann::json;

// The fuzz build (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, set by
// fuzz/CMakeLists.txt) computes but does not enforce the CRCs, so that the
// fuzzer reaches the metadata and section checks behind them.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool kEnforceCrc = false;
#else
constexpr bool kEnforceCrc = true;
#endif

// Header field offsets (version 1).
constexpr size_t kOffMagic = 0;
constexpr size_t kOffVersion = 8;
constexpr size_t kOffHeaderSize = 12;
constexpr size_t kOffMetadataOffset = 16;
constexpr size_t kOffMetadataSize = 24;
constexpr size_t kOffSectionsOffset = 32;
constexpr size_t kOffSectionsSize = 40;
constexpr size_t kOffMetadataCrc = 48;
constexpr size_t kOffFlags = 52;
constexpr size_t kOffReserved = 56;
constexpr size_t kOffHeaderCrc = 60;
static_assert(kOffHeaderCrc + 4 == kModelFileHeaderSize);

// The bmodel magic 0xFF55AAEE, as it appears on disk (little-endian).
constexpr uint8_t kBmodelMagic[4] = {0xEE, 0xAA, 0x55, 0xFF};

// zlib cannot expand data by more than about 1032:1.
constexpr uint64_t kMaxInflateRatio = 1032;

constexpr size_t kChunk = size_t(1) << 30;  // zlib's counters are 32-bit

uint32_t get_u32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t get_u64(const uint8_t *p) { return uint64_t(get_u32(p)) | uint64_t(get_u32(p + 4)) << 32; }
void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}

uint32_t crc32_of(const uint8_t *p, uint64_t n) {
  uLong crc = crc32_z(0L, Z_NULL, 0);
  while (n > 0) {
    const size_t chunk = size_t(std::min<uint64_t>(n, kChunk));
    crc = crc32_z(crc, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return uint32_t(crc);
}

[[noreturn]] void fail(std::string_view file, std::string_view field, std::string_view problem) {
  throw Error(fmt::format("{}: {}: {}", file, field, problem));
}

std::string printable(std::span<const uint8_t> bytes) {
  std::string out;
  for (uint8_t b : bytes) {
    if (b >= 0x20 && b < 0x7f && b != '\\' && b != '"')
      out.push_back(char(b));
    else
      out += fmt::format("\\x{:02x}", b);
  }
  return out;
}

// ---- writing ---------------------------------------------------------------

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void append(std::span<const uint8_t> bytes) = 0;
  virtual void patch(uint64_t offset, std::span<const uint8_t> bytes) = 0;
};

class VectorSink final : public Sink {
 public:
  explicit VectorSink(std::vector<uint8_t> &out) : out_(out) {}
  void append(std::span<const uint8_t> bytes) override {
    out_.insert(out_.end(), bytes.begin(), bytes.end());
  }
  void patch(uint64_t offset, std::span<const uint8_t> bytes) override {
    std::memcpy(out_.data() + offset, bytes.data(), bytes.size());
  }

 private:
  std::vector<uint8_t> &out_;
};

class FileSink final : public Sink {
 public:
  explicit FileSink(detail::AtomicFile &file) : file_(file) {}
  void append(std::span<const uint8_t> bytes) override { file_.write(bytes); }
  void patch(uint64_t offset, std::span<const uint8_t> bytes) override {
    file_.write_at(offset, bytes);
  }

 private:
  detail::AtomicFile &file_;
};

void check_model(const ModelFile &model, std::string_view where) {
  if (!model.metadata.is_object())
    throw Error(fmt::format("{}: the metadata must be a JSON object, not {}", where,
                            model.metadata.type_name()));
  if (model.metadata.contains("sections"))
    throw Error(fmt::format("{}: the metadata must not hold a \"sections\" key: the writer "
                            "generates it from ModelFile::sections",
                            where));
  std::map<std::string_view, size_t> seen;
  for (size_t i = 0; i < model.sections.size(); ++i) {
    const Section &s = model.sections[i];
    if (s.name.empty()) throw Error(fmt::format("{}: section #{} has an empty name", where, i));
    if (s.kind.empty())
      throw Error(fmt::format("{}: section '{}' has an empty kind", where, s.name));
    if (s.data.size() > kModelFileMaxSectionSize)
      throw Error(fmt::format("{}: section '{}' holds {} bytes, above the {}-byte limit", where,
                              s.name, s.data.size(), kModelFileMaxSectionSize));
    auto [it, fresh] = seen.emplace(s.name, i);
    if (!fresh)
      throw Error(fmt::format("{}: sections #{} and #{} are both named '{}'", where, it->second, i,
                              s.name));
  }
}

// Streams one section through deflate into the sink; returns the compressed size.
uint64_t deflate_into(Sink &sink, const Section &section, int level, std::string_view where,
                      uint32_t &compressed_crc) {
  z_stream zs{};
  if (deflateInit(&zs, level) != Z_OK)
    throw Error(fmt::format("{}: section '{}': cannot start zlib (level {})", where, section.name,
                            level));
  std::unique_ptr<z_stream, int (*)(z_stream *)> guard(&zs, deflateEnd);
  std::vector<uint8_t> buffer(size_t(256) << 10);
  const uint8_t *p = section.data.data();
  uint64_t left = section.data.size();
  uint64_t produced = 0;
  uLong crc = crc32_z(0L, Z_NULL, 0);
  int flush = Z_NO_FLUSH;
  do {
    const size_t chunk = size_t(std::min<uint64_t>(left, kChunk));
    zs.next_in = const_cast<Bytef *>(p);
    zs.avail_in = uInt(chunk);
    p += chunk;
    left -= chunk;
    flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    do {
      zs.next_out = buffer.data();
      zs.avail_out = uInt(buffer.size());
      const int rc = deflate(&zs, flush);
      if (rc == Z_STREAM_ERROR)
        throw Error(fmt::format("{}: section '{}': zlib compression failed", where, section.name));
      const size_t have = buffer.size() - zs.avail_out;
      sink.append({buffer.data(), have});
      crc = crc32_z(crc, buffer.data(), have);
      produced += have;
    } while (zs.avail_out == 0);
  } while (flush != Z_FINISH);
  compressed_crc = uint32_t(crc);
  return produced;
}

void serialize(Sink &sink, const ModelFile &model, int level, std::string_view where) {
  check_model(model, where);
  if (level < 0 || level > 9)
    throw Error(fmt::format("{}: compression level {} is not in 0..9", where, level));
  std::array<uint8_t, kModelFileHeaderSize> header{};
  sink.append(header);

  json entries = json::array();
  uint64_t position = 0;
  for (const Section &s : model.sections) {
    uint32_t compressed_crc = 0;
    const uint64_t compressed = deflate_into(sink, s, level, where, compressed_crc);
    entries.push_back({{"name", s.name},
                       {"kind", s.kind},
                       {"compression", "zlib"},
                       {"offset", position},
                       {"compressed_size", compressed},
                       {"compressed_crc32", compressed_crc},
                       {"size", uint64_t(s.data.size())},
                       {"crc32", crc32_of(s.data.data(), s.data.size())}});
    position += compressed;
  }
  json metadata = model.metadata;
  metadata["sections"] = std::move(entries);
  std::string text;
  try {
    text = metadata.dump(1, ' ', false, json::error_handler_t::strict);
  } catch (const json::exception &e) {
    throw Error(fmt::format("{}: the metadata cannot be written as JSON: {}", where, e.what()));
  }
  text.push_back('\n');
  const auto *meta = reinterpret_cast<const uint8_t *>(text.data());
  sink.append({meta, text.size()});

  std::memcpy(header.data() + kOffMagic, kModelFileMagic, 8);
  put_u32(header.data() + kOffVersion, kModelFileVersion);
  put_u32(header.data() + kOffHeaderSize, uint32_t(kModelFileHeaderSize));
  put_u64(header.data() + kOffMetadataOffset, kModelFileHeaderSize + position);
  put_u64(header.data() + kOffMetadataSize, text.size());
  put_u64(header.data() + kOffSectionsOffset, kModelFileHeaderSize);
  put_u64(header.data() + kOffSectionsSize, position);
  put_u32(header.data() + kOffMetadataCrc, crc32_of(meta, text.size()));
  put_u32(header.data() + kOffFlags, 0);
  put_u32(header.data() + kOffReserved, 0);
  put_u32(header.data() + kOffHeaderCrc, crc32_of(header.data(), kOffHeaderCrc));
  sink.patch(0, header);
}

// ---- reading ---------------------------------------------------------------

struct Region {
  const char *name;  // for messages
  uint64_t offset, size;
};

void check_region(std::string_view file, uint64_t file_size, const Region &r,
                  std::string_view offset_field, std::string_view size_field) {
  if (r.offset < kModelFileHeaderSize)
    fail(file, offset_field,
         fmt::format("{} points into the {}-byte header", r.offset, kModelFileHeaderSize));
  if (r.offset > file_size)
    fail(file, offset_field,
         fmt::format("{} is past the end of the file ({} bytes; truncated?)", r.offset, file_size));
  if (r.size > file_size - r.offset)
    fail(file, size_field,
         fmt::format("the {} ({} bytes at offset {}) runs past the end of the file ({} bytes; "
                     "truncated?)",
                     r.name, r.size, r.offset, file_size));
}

// Header + the non-empty regions must tile the file: no overlap, no gap, no
// trailing bytes.
void check_tiling(std::string_view file, uint64_t file_size, Region a, Region b) {
  std::vector<Region> regions;
  for (const Region &r : {a, b})
    if (r.size > 0) regions.push_back(r);
  std::sort(regions.begin(), regions.end(),
            [](const Region &x, const Region &y) { return x.offset < y.offset; });
  uint64_t cursor = kModelFileHeaderSize;
  const char *previous = "header";
  for (const Region &r : regions) {
    if (r.offset < cursor)
      fail(file, "header",
           fmt::format("the {} (offset {}) overlaps the {} (which ends at {})", r.name, r.offset,
                       previous, cursor));
    if (r.offset > cursor)
      fail(file, "header",
           fmt::format("{} bytes at offset {} belong to no region (before the {})",
                       r.offset - cursor, cursor, r.name));
    cursor = r.offset + r.size;
    previous = r.name;
  }
  if (cursor != file_size)
    fail(file, "header",
         fmt::format("{} unexpected bytes after the end of the {} (offset {}; the file is {} "
                     "bytes)",
                     file_size - cursor, previous, cursor, file_size));
}

void check_depth(std::string_view file, std::span<const uint8_t> text) {
  const std::string_view chars(reinterpret_cast<const char *>(text.data()), text.size());
  if (json_too_deep(chars, kModelFileMaxMetadataDepth))
    fail(file, "metadata", fmt::format("nested deeper than {} levels", kModelFileMaxMetadataDepth));
}

const json &require(std::string_view file, const json &object, const char *key,
                    const std::string &field) {
  auto it = object.find(key);
  if (it == object.end()) fail(file, field, "missing");
  return *it;
}

std::string require_string(std::string_view file, const json &object, const char *key,
                           const std::string &prefix) {
  const std::string field = prefix + "." + key;
  const json &v = require(file, object, key, field);
  if (!v.is_string()) fail(file, field, fmt::format("must be a string, not {}", v.type_name()));
  std::string s = v.get<std::string>();
  if (s.empty()) fail(file, field, "must not be empty");
  return s;
}

uint64_t require_unsigned(std::string_view file, const json &object, const char *key,
                          const std::string &prefix) {
  const std::string field = prefix + "." + key;
  const json &v = require(file, object, key, field);
  if (!v.is_number_unsigned())
    fail(file, field,
         fmt::format("must be a non-negative integer, not {}",
                     v.is_number() ? v.dump() : std::string(v.type_name())));
  return v.get<uint64_t>();
}

uint32_t require_crc(std::string_view file, const json &object, const char *key,
                     const std::string &prefix) {
  const uint64_t v = require_unsigned(file, object, key, prefix);
  if (v > 0xffffffffULL)
    fail(file, prefix + "." + key, fmt::format("{} does not fit in 32 bits", v));
  return uint32_t(v);
}

// The sections must tile the section area: no overlap, no gap, nothing after.
void check_section_tiling(std::string_view file, const ModelFileLayout &layout) {
  std::vector<size_t> order(layout.sections.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return layout.sections[a].offset < layout.sections[b].offset;
  });
  uint64_t cursor = 0;
  std::string previous = "start of the section area";
  for (size_t i : order) {
    const ModelFileLayout::SectionEntry &s = layout.sections[i];
    const std::string field = fmt::format("metadata.sections[{}] ('{}').offset", i, s.name);
    if (s.offset < cursor)
      fail(file, field,
           fmt::format("{} overlaps the {} (which ends at {})", s.offset, previous, cursor));
    if (s.offset > cursor)
      fail(file, field,
           fmt::format("{}: the {} bytes at {} after the {} belong to no section", s.offset,
                       s.offset - cursor, cursor, previous));
    cursor = s.offset + s.compressed_size;
    previous = fmt::format("section '{}'", s.name);
  }
  if (cursor != layout.sections_size)
    fail(file, "metadata.sections",
         fmt::format("the sections end at {} but the section area holds {} bytes: {} bytes "
                     "belong to no section",
                     cursor, layout.sections_size, layout.sections_size - cursor));
}

void inflate_section(std::string_view file, const std::string &field, const uint8_t *in,
                     uint64_t in_size, std::vector<uint8_t> &out) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) fail(file, field, "cannot start zlib (out of memory?)");
  std::unique_ptr<z_stream, int (*)(z_stream *)> guard(&zs, inflateEnd);
  uint8_t dummy = 0;  // zlib refuses a null next_out even with avail_out == 0
  uint8_t *out_ptr = out.empty() ? &dummy : out.data();
  uint64_t out_left = out.size();
  uint64_t in_left = in_size;
  zs.next_out = out_ptr;
  zs.avail_out = 0;
  for (;;) {
    if (zs.avail_in == 0 && in_left > 0) {
      const size_t chunk = size_t(std::min<uint64_t>(in_left, kChunk));
      zs.next_in = const_cast<Bytef *>(in);
      zs.avail_in = uInt(chunk);
      in += chunk;
      in_left -= chunk;
    }
    if (zs.avail_out == 0 && out_left > 0) {
      const size_t chunk = size_t(std::min<uint64_t>(out_left, kChunk));
      zs.next_out = out_ptr;
      zs.avail_out = uInt(chunk);
      out_ptr += chunk;
      out_left -= chunk;
    }
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) break;
    if (rc == Z_OK) continue;
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
      fail(file, field,
           fmt::format("the compressed bytes are not a valid zlib stream ({})",
                       zs.msg ? zs.msg : "needs a preset dictionary"));
    if (rc == Z_MEM_ERROR) fail(file, field, "out of memory while decompressing");
    if (rc == Z_BUF_ERROR) {
      if (zs.avail_out == 0 && out_left == 0)
        fail(file, field,
             fmt::format("decompresses to more than the recorded size ({} bytes)", out.size()));
      if (zs.avail_in == 0 && in_left == 0)
        fail(file, field, "the zlib stream ends early (the compressed bytes are truncated)");
    }
    fail(file, field, fmt::format("zlib error {}", rc));
  }
  const uint64_t produced = out.size() - out_left - zs.avail_out;
  if (produced != out.size())
    fail(file, field,
         fmt::format("decompresses to {} bytes, but the recorded size is {}", produced,
                     out.size()));
  const uint64_t unused = in_left + zs.avail_in;
  if (unused != 0)
    fail(file, field,
         fmt::format("{} of the {} compressed bytes follow the end of the zlib stream", unused,
                     in_size));
}

// The magic (a bmodel is named as such) and a whole header.
void check_magic(std::span<const uint8_t> bytes, std::string_view file) {
  const uint64_t file_size = bytes.size();
  const uint8_t *h = bytes.data();
  if (file_size == 0) fail(file, "header", "the file is empty");
  if (file_size >= 4 && std::memcmp(h, kBmodelMagic, 4) == 0)
    fail(file, "header.magic",
         "this is a Sophgo bmodel (magic 0xFF55AAEE), not a TPU SDK model file");
  const size_t magic_seen = size_t(std::min<uint64_t>(file_size, 8));
  if (std::memcmp(h, kModelFileMagic, magic_seen) != 0)
    fail(file, "header.magic",
         fmt::format("not a TPU SDK model file (expected \"{}\", found \"{}\")", kModelFileMagic,
                     printable(bytes.first(magic_seen))));
  if (file_size < kModelFileHeaderSize)
    fail(file, "header",
         fmt::format("truncated: the file is {} bytes, shorter than the {}-byte header",
                     file_size, kModelFileHeaderSize));
}

// What the header says: the format version, where the metadata and the
// section area are.
struct Header {
  uint32_t version;
  Region metadata, area;
};

// The header, checked: its fixed fields and CRC, then the two regions
// tiling the file after it.
Header read_header(std::span<const uint8_t> bytes, std::string_view file) {
  check_magic(bytes, file);
  const uint64_t file_size = bytes.size();
  const uint8_t *h = bytes.data();
  const uint32_t version = get_u32(h + kOffVersion);
  if (version == 0) fail(file, "header.format_version", "0 is not a valid version");
  if (version > kModelFileVersion)
    fail(file, "header.format_version",
         fmt::format("{} is newer than this SDK reads (version {}); use a newer SDK", version,
                     kModelFileVersion));
  const uint32_t header_size = get_u32(h + kOffHeaderSize);
  if (header_size != kModelFileHeaderSize)
    fail(file, "header.header_size",
         fmt::format("{}, but format version {} has a {}-byte header", header_size, version,
                     kModelFileHeaderSize));
  const uint32_t header_crc = crc32_of(h, kOffHeaderCrc);
  if (kEnforceCrc && header_crc != get_u32(h + kOffHeaderCrc))
    fail(file, "header.header_crc32",
         fmt::format("mismatch (stored {:#010x}, computed {:#010x}): the header is damaged",
                     get_u32(h + kOffHeaderCrc), header_crc));
  if (const uint32_t flags = get_u32(h + kOffFlags); flags != 0)
    fail(file, "header.flags", fmt::format("{:#x}: no flags are defined in version 1", flags));
  if (get_u32(h + kOffReserved) != 0) fail(file, "header.reserved", "must be 0");

  const Region metadata{"metadata", get_u64(h + kOffMetadataOffset),
                        get_u64(h + kOffMetadataSize)};
  const Region area{"section area", get_u64(h + kOffSectionsOffset),
                    get_u64(h + kOffSectionsSize)};
  check_region(file, file_size, metadata, "header.metadata_offset", "header.metadata_size");
  check_region(file, file_size, area, "header.sections_offset", "header.sections_size");
  if (metadata.size == 0) fail(file, "header.metadata_size", "0: the metadata cannot be empty");
  if (metadata.size > kModelFileMaxMetadataSize)
    fail(file, "header.metadata_size",
         fmt::format("{} bytes, above the {}-byte limit", metadata.size,
                     kModelFileMaxMetadataSize));
  check_tiling(file, file_size, metadata, area);
  return {version, metadata, area};
}

// The metadata's JSON object, its CRC and depth checked first.
json parse_metadata(std::span<const uint8_t> bytes, const Region &metadata, std::string_view file) {
  const std::span<const uint8_t> text = bytes.subspan(size_t(metadata.offset),
                                                      size_t(metadata.size));
  const uint32_t metadata_crc = crc32_of(text.data(), text.size());
  if (kEnforceCrc && metadata_crc != get_u32(bytes.data() + kOffMetadataCrc))
    fail(file, "header.metadata_crc32",
         fmt::format("mismatch (stored {:#010x}, computed {:#010x}): the metadata is damaged",
                     get_u32(bytes.data() + kOffMetadataCrc), metadata_crc));
  check_depth(file, text);
  json meta;
  try {
    meta = json::parse(text.begin(), text.end());
  } catch (const json::exception &e) {  // parse_error, and out_of_range for a number like 1e999
    fail(file, "metadata", fmt::format("invalid JSON: {}", e.what()));
  }
  if (!meta.is_object())
    fail(file, "metadata", fmt::format("must be a JSON object, not {}", meta.type_name()));
  return meta;
}

const json &section_list(std::string_view file, const json &meta) {
  auto sections_it = meta.find("sections");
  if (sections_it == meta.end()) fail(file, "metadata.sections", "missing");
  if (!sections_it->is_array())
    fail(file, "metadata.sections",
         fmt::format("must be an array, not {}", sections_it->type_name()));
  return *sections_it;
}

// metadata.sections[i], inside the section area; `names` holds the names of
// the entries before it.
ModelFileLayout::SectionEntry read_section_entry(std::string_view file, const json &entry, size_t i,
                                                 const Region &area,
                                                 std::map<std::string, size_t> &names) {
  std::string prefix = fmt::format("metadata.sections[{}]", i);
  if (!entry.is_object())
    fail(file, prefix, fmt::format("must be an object, not {}", entry.type_name()));
  ModelFileLayout::SectionEntry s;
  s.name = require_string(file, entry, "name", prefix);
  auto [it, fresh] = names.emplace(s.name, i);
  if (!fresh)
    fail(file, prefix + ".name",
         fmt::format("'{}' is also the name of sections[{}]", s.name, it->second));
  prefix = fmt::format("metadata.sections[{}] ('{}')", i, s.name);
  s.kind = require_string(file, entry, "kind", prefix);
  const std::string compression = require_string(file, entry, "compression", prefix);
  if (compression != "zlib")
    fail(file, prefix + ".compression",
         fmt::format("'{}' is not supported (version 1 knows only 'zlib')", compression));
  s.offset = require_unsigned(file, entry, "offset", prefix);
  s.compressed_size = require_unsigned(file, entry, "compressed_size", prefix);
  s.compressed_crc32 = require_crc(file, entry, "compressed_crc32", prefix);
  s.size = require_unsigned(file, entry, "size", prefix);
  s.crc32 = require_crc(file, entry, "crc32", prefix);
  if (s.offset > area.size)
    fail(file, prefix + ".offset",
         fmt::format("{} is past the end of the section area ({} bytes)", s.offset, area.size));
  if (s.compressed_size > area.size - s.offset)
    fail(file, prefix + ".compressed_size",
         fmt::format("{} bytes at offset {} run past the end of the section area ({} bytes)",
                     s.compressed_size, s.offset, area.size));
  if (s.size > kModelFileMaxSectionSize)
    fail(file, prefix + ".size",
         fmt::format("{} bytes, above the {}-byte limit", s.size, kModelFileMaxSectionSize));
  if (s.size > s.compressed_size * kMaxInflateRatio + 64)
    fail(file, prefix + ".size",
         fmt::format("{} bytes cannot come from {} zlib-compressed bytes", s.size,
                     s.compressed_size));
  return s;
}

// The header's regions and the section table, the sections tiling their area.
ModelFileLayout read_layout(std::string_view file, uint64_t file_size, const Header &header,
                            const json &list) {
  ModelFileLayout found;
  found.format_version = header.version;
  found.file_size = file_size;
  found.metadata_offset = header.metadata.offset;
  found.metadata_size = header.metadata.size;
  found.sections_offset = header.area.offset;
  found.sections_size = header.area.size;
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < list.size(); ++i)
    found.sections.push_back(read_section_entry(file, list[i], i, header.area, names));
  check_section_tiling(file, found);
  return found;
}

// A section's bytes from the section area (`area`), inflated, both CRCs
// checked.
Section read_section(std::string_view file, const uint8_t *area,
                     const ModelFileLayout::SectionEntry &e) {
  const std::string field = fmt::format("section '{}'", e.name);
  Section s;
  s.name = e.name;
  s.kind = e.kind;
  const uint8_t *compressed = area + e.offset;
  const uint32_t compressed_crc = crc32_of(compressed, e.compressed_size);
  if (kEnforceCrc && compressed_crc != e.compressed_crc32)
    fail(file, field,
         fmt::format("compressed_crc32 mismatch (recorded {:#010x}, computed {:#010x}): the "
                     "section's bytes in the file are damaged",
                     e.compressed_crc32, compressed_crc));
  s.data.resize(size_t(e.size));
  inflate_section(file, field, compressed, e.compressed_size, s.data);
  const uint32_t crc = crc32_of(s.data.data(), s.data.size());
  if (kEnforceCrc && crc != e.crc32)
    fail(file, field,
         fmt::format("CRC32 mismatch (recorded {:#010x}, computed {:#010x}): the section is "
                     "damaged",
                     e.crc32, crc));
  return s;
}

}  // namespace

const Section *ModelFile::find_section(std::string_view name) const {
  for (const Section &s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

Section *ModelFile::find_section(std::string_view name) {
  for (Section &s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<uint8_t> serialize_model_file(const ModelFile &model, int compression_level) {
  std::vector<uint8_t> out;
  VectorSink sink(out);
  serialize(sink, model, compression_level, "model file");
  return out;
}

void write_model_file(const std::string &path, const ModelFile &model, int compression_level) {
  check_model(model, path);  // before creating anything
  detail::AtomicFile file(path);
  FileSink sink(file);
  serialize(sink, model, compression_level, path);
  file.commit();
}

ModelFile read_model_file(const std::string &path, ModelFileLayout *layout) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw Error(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw Error(fmt::format("{}: not a regular file", path));
  std::vector<uint8_t> bytes(size_t(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + done, std::min(bytes.size() - done, kChunk),
                              off_t(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: read failed: {}", path, std::strerror(errno)));
    }
    if (n == 0)
      throw Error(fmt::format("{}: the file shrank while being read ({} of {} bytes)", path, done,
                              bytes.size()));
    done += size_t(n);
  }
  return parse_model_file(bytes, path, layout);
}

ModelFile parse_model_file(std::span<const uint8_t> bytes, std::string_view file,
                           ModelFileLayout *layout) {
  const Header header = read_header(bytes, file);
  json meta = parse_metadata(bytes, header.metadata, file);
  ModelFileLayout found = read_layout(file, bytes.size(), header, section_list(file, meta));
  ModelFile model;
  model.sections.reserve(found.sections.size());
  for (const ModelFileLayout::SectionEntry &e : found.sections)
    model.sections.push_back(read_section(file, bytes.data() + header.area.offset, e));
  meta.erase("sections");
  model.metadata = std::move(meta);
  if (layout) *layout = std::move(found);
  return model;
}

}  // namespace tpu_runtime
