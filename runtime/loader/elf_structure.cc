// elf_structure.cc: the checks of elf_structure.h.
//
// What is walked is what glibc's dlopen reads before it runs any code of
// the library: the program headers (_dl_map_object_from_fd), the segments
// it maps, the notes it parses (GNU properties), the dynamic section
// (elf_get_dynamic_info), the strings it names (DT_NEEDED, DT_SONAME,
// DT_RUNPATH), the symbol hash tables (_dl_setup_hash), the version tables
// (_dl_check_map_versions), the symbols and version indices relocations
// refer to, and where relocations write (_dl_relocate_object). Each must lie
// inside the file (for what is read from the file) or inside a PT_LOAD
// segment (for what is read or written in memory once mapped).
#include "elf_structure.h"

#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

namespace tpu_elf {
namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#elif defined(__riscv) && __riscv_xlen == 64
constexpr uint16_t kHostMachine = EM_RISCV;
#elif defined(__loongarch64)
constexpr uint16_t kHostMachine = 258;  // EM_LOONGARCH
#else
#error "unknown host machine: add its ELF e_machine value"
#endif

// Tags of newer binutils/glibc that older <elf.h> may lack.
constexpr int64_t kDtRelrSz = 35, kDtRelr = 36, kDtRelrEnt = 37;
constexpr uint32_t kPtGnuProperty = 0x6474e553;

// Bounds of what is walked: far beyond any real kernel library, small
// enough that a crafted count cannot make the check itself run for long.
constexpr uint64_t kMaxSpan = uint64_t(4) << 30;      // bytes from the lowest to the highest mapped address
constexpr uint64_t kMaxVersionEntries = 1 << 16;      // DT_VERNEEDNUM, DT_VERDEFNUM, aux entries each

struct Problem {
  std::string what;
};

template <typename... Args>
[[noreturn]] void problem(Args &&...parts) {
  std::string text;
  (text.append(std::string_view(parts)), ...);
  throw Problem{std::move(text)};
}

std::string num(uint64_t v) { return std::to_string(v); }
std::string hex(uint64_t v) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "%#llx", static_cast<unsigned long long>(v));
  return buffer;
}

// [offset, offset + count * item) inside [0, size).
bool inside(uint64_t size, uint64_t offset, uint64_t count, uint64_t item) {
  return offset <= size && (item == 0 || count <= (size - offset) / item);
}

template <class T>
T read_at(const uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

const char *dynamic_tag_name(int64_t tag) {
  switch (tag) {
    case DT_PLTGOT: return "DT_PLTGOT";
    case DT_HASH: return "DT_HASH";
    case DT_STRTAB: return "DT_STRTAB";
    case DT_SYMTAB: return "DT_SYMTAB";
    case DT_RELA: return "DT_RELA";
    case DT_REL: return "DT_REL";
    case DT_JMPREL: return "DT_JMPREL";
    case DT_INIT: return "DT_INIT";
    case DT_FINI: return "DT_FINI";
    case DT_INIT_ARRAY: return "DT_INIT_ARRAY";
    case DT_FINI_ARRAY: return "DT_FINI_ARRAY";
    case DT_PREINIT_ARRAY: return "DT_PREINIT_ARRAY";
    case DT_GNU_HASH: return "DT_GNU_HASH";
    case DT_VERSYM: return "DT_VERSYM";
    case DT_VERDEF: return "DT_VERDEF";
    case DT_VERNEED: return "DT_VERNEED";
    case DT_NEEDED: return "DT_NEEDED";
    case DT_SONAME: return "DT_SONAME";
    case DT_RPATH: return "DT_RPATH";
    case DT_RUNPATH: return "DT_RUNPATH";
    case kDtRelr: return "DT_RELR";
    default: return "a dynamic entry";
  }
}

// The file and the PT_LOAD segments it maps.
class Image {
 public:
  explicit Image(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  std::span<const uint8_t> bytes() const { return bytes_; }
  std::vector<Elf64_Phdr> &loads() { return loads_; }

  // Inside the memory of one PT_LOAD segment (mapped, file-backed or zero-filled).
  bool mapped(uint64_t address, uint64_t size) const {
    for (const Elf64_Phdr &l : loads_)
      if (address >= l.p_vaddr && size <= l.p_memsz && address - l.p_vaddr <= l.p_memsz - size) return true;
    return false;
  }

  // The file bytes behind [address, address + size) when that lies in the
  // file-backed part of one PT_LOAD segment; null otherwise.
  const uint8_t *file_data(uint64_t address, uint64_t size) const {
    for (const Elf64_Phdr &l : loads_)
      if (address >= l.p_vaddr && size <= l.p_filesz && address - l.p_vaddr <= l.p_filesz - size)
        return bytes_.data() + l.p_offset + (address - l.p_vaddr);
    return nullptr;
  }

  // As file_data, or a problem naming `what`.
  const uint8_t *require(uint64_t address, uint64_t size, std::string_view what) const {
    if (const uint8_t *p = file_data(address, size)) return p;
    problem("damaged ELF file: ", what, " ([", hex(address), ", +", num(size),
            ")) is not inside the file-backed part of a loaded segment");
  }

  // The bytes from `address` to the end of the file-backed part of its segment.
  uint64_t file_bytes_from(uint64_t address) const {
    for (const Elf64_Phdr &l : loads_)
      if (address >= l.p_vaddr && address - l.p_vaddr <= l.p_filesz) return l.p_filesz - (address - l.p_vaddr);
    return 0;
  }

 private:
  std::span<const uint8_t> bytes_;
  std::vector<Elf64_Phdr> loads_;
};

void check_header(std::span<const uint8_t> bytes, uint16_t machine, Elf64_Ehdr &header) {
  if (bytes.size() >= 4 &&
      (bytes[EI_MAG0] != ELFMAG0 || bytes[EI_MAG1] != ELFMAG1 || bytes[EI_MAG2] != ELFMAG2 || bytes[EI_MAG3] != ELFMAG3)) {
    char start[64];
    std::snprintf(start, sizeof start, "%02x %02x %02x %02x", bytes[0], bytes[1], bytes[2], bytes[3]);
    problem("not an ELF file (it starts with ", start, ", not 7f 45 4c 46)");
  }
  if (bytes.size() < sizeof(Elf64_Ehdr)) problem("not an ELF shared object: only ", num(bytes.size()), " bytes");
  if (bytes[EI_CLASS] != ELFCLASS64)
    problem("a ", bytes[EI_CLASS] == ELFCLASS32 ? "32-bit" : "class-" + num(bytes[EI_CLASS]),
            " ELF file; this host loads only 64-bit libraries");
  if (bytes[EI_DATA] != ELFDATA2LSB)
    problem("a ", bytes[EI_DATA] == ELFDATA2MSB ? "big-endian" : "unknown-byte-order",
            " ELF file; this host is little-endian");
  std::memcpy(&header, bytes.data(), sizeof header);
  if (header.e_machine != machine)
    problem("built for ", machine_name(header.e_machine), " (e_machine ", num(header.e_machine), "), but this host is ",
            machine_name(machine), " (e_machine ", num(machine),
            "); a kernel module for the emulator is a library for the host running it");
  if (header.e_type != ET_DYN)
    problem("not a shared object: ELF type ", num(header.e_type), " (",
            header.e_type == ET_EXEC  ? "an executable"
            : header.e_type == ET_REL ? "an object file"
                                      : "not ET_DYN",
            "); a kernel module is a .so (ET_DYN)");
}

// Program headers: the table, each segment's file range, the PT_LOAD
// layout, and the segments glibc reads through the mapping.
std::vector<Elf64_Phdr> check_program_headers(Image &image, const Elf64_Ehdr &header) {
  const uint64_t size = image.bytes().size();
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 || header.e_phnum == PN_XNUM ||
      !inside(size, header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr)))
    problem("damaged or truncated ELF file: the program header table (", num(header.e_phnum), " entries of ",
            num(header.e_phentsize), " bytes at offset ", num(header.e_phoff), ") is not inside the file (",
            num(size), " bytes)");
  if (header.e_shoff != 0 && !inside(size, header.e_shoff, header.e_shnum, header.e_shentsize))
    problem("truncated ELF file: the section header table ends past the end of the file (", num(size), " bytes)");
  std::vector<Elf64_Phdr> headers(header.e_phnum);
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr &ph = headers[i];
    std::memcpy(&ph, image.bytes().data() + header.e_phoff + uint64_t(i) * sizeof ph, sizeof ph);
    if (ph.p_type != PT_NULL && !inside(size, ph.p_offset, ph.p_filesz, 1))
      problem("truncated ELF file: segment ", num(i), " ([", num(ph.p_offset), ", ", num(ph.p_offset), " + ",
              num(ph.p_filesz), ")) ends past the end of the file (", num(size), " bytes)");
    if (ph.p_type != PT_LOAD) continue;
    const std::string which = "segment " + num(i) + " (PT_LOAD)";
    if (ph.p_filesz > ph.p_memsz)
      problem("damaged ELF file: ", which, " has more bytes in the file (", num(ph.p_filesz), ") than in memory (",
              num(ph.p_memsz), ")");
    if (ph.p_align > 1 && ((ph.p_align & (ph.p_align - 1)) != 0 || (ph.p_vaddr - ph.p_offset) % ph.p_align != 0))
      problem("damaged ELF file: ", which, " alignment ", num(ph.p_align),
              " is not a power of two dividing its address minus its offset");
    if (ph.p_vaddr > UINT64_MAX - ph.p_memsz)
      problem("damaged ELF file: ", which, " at ", hex(ph.p_vaddr), " of ", num(ph.p_memsz),
              " bytes wraps around the address space");
    std::vector<Elf64_Phdr> &loads = image.loads();
    if (!loads.empty()) {
      const Elf64_Phdr &previous = loads.back();
      if (ph.p_vaddr < previous.p_vaddr + previous.p_memsz)
        problem("damaged ELF file: ", which, " at ", hex(ph.p_vaddr),
                " overlaps or precedes the PT_LOAD segment before it (which ends at ",
                hex(previous.p_vaddr + previous.p_memsz), "); loaded segments are in ascending address order");
      if (ph.p_vaddr + ph.p_memsz - loads.front().p_vaddr > kMaxSpan)
        problem("damaged ELF file: the loaded segments span more than ", num(kMaxSpan >> 30), " GiB");
    } else if (ph.p_memsz > kMaxSpan) {
      problem("damaged ELF file: the loaded segments span more than ", num(kMaxSpan >> 30), " GiB");
    }
    loads.push_back(ph);
  }
  if (image.loads().empty()) problem("not a loadable library: no PT_LOAD segment");
  // Read through the mapping by glibc: the TLS image, the notes (GNU
  // properties) and the dynamic section.
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const Elf64_Phdr &ph = headers[i];
    const char *kind = ph.p_type == PT_TLS          ? "PT_TLS"
                       : ph.p_type == PT_NOTE       ? "PT_NOTE"
                       : ph.p_type == kPtGnuProperty ? "PT_GNU_PROPERTY"
                       : ph.p_type == PT_DYNAMIC    ? "PT_DYNAMIC"
                                                     : nullptr;
    if (!kind || ph.p_filesz == 0) continue;
    if (ph.p_filesz > ph.p_memsz)
      problem("damaged ELF file: segment ", num(i), " (", kind, ") has more bytes in the file than in memory");
    if (!image.file_data(ph.p_vaddr, ph.p_filesz))
      problem("damaged ELF file: segment ", num(i), " (", kind, ") at ", hex(ph.p_vaddr), " (", num(ph.p_filesz),
              " bytes) is not inside the file-backed part of a loaded segment");
  }
  return headers;
}

// The dynamic section's entries, read where the loader reads them: at the
// segment's address in the mapped image.
std::vector<Elf64_Dyn> dynamic_entries(const Image &image, const std::vector<Elf64_Phdr> &headers) {
  const Elf64_Phdr *dynamic = nullptr;
  for (const Elf64_Phdr &ph : headers) {
    if (ph.p_type != PT_DYNAMIC) continue;
    if (dynamic) problem("damaged ELF file: more than one PT_DYNAMIC segment");
    dynamic = &ph;
  }
  if (!dynamic) problem("not a shared library: no dynamic segment");
  const uint64_t count = dynamic->p_filesz / sizeof(Elf64_Dyn);
  const uint8_t *data = image.require(dynamic->p_vaddr, count * sizeof(Elf64_Dyn), "the dynamic section");
  std::vector<Elf64_Dyn> entries;
  for (uint64_t i = 0; i < count; ++i) {
    const auto entry = read_at<Elf64_Dyn>(data + i * sizeof(Elf64_Dyn));
    if (entry.d_tag == DT_NULL) return entries;
    entries.push_back(entry);
  }
  problem("damaged ELF file: the dynamic section (", num(count), " entries) has no DT_NULL entry to end it");
}

struct Dynamic {
  // value of each tag seen (the last one; the loader keeps one per tag)
  std::vector<std::pair<int64_t, uint64_t>> values;
  bool has(int64_t tag) const {
    for (const auto &[t, v] : values)
      if (t == tag) return true;
    return false;
  }
  uint64_t get(int64_t tag) const {
    uint64_t value = 0;
    for (const auto &[t, v] : values)
      if (t == tag) value = v;
    return value;
  }
};

// A NUL-terminated name at `offset` in the string table.
void check_string(uint64_t offset, uint64_t strsz, std::string_view what) {
  if (offset >= strsz)
    problem("damaged ELF file: ", what, " is at offset ", num(offset), " of a string table of ", num(strsz), " bytes");
}

// A table of `size` bytes the loader reads at the address of `tag`.
const uint8_t *table(const Image &image, const Dynamic &d, int64_t tag, uint64_t size) {
  return image.require(d.get(tag), size, std::string("the table of ") + dynamic_tag_name(tag));
}

// The number of symbols the hash tables reach (every one the loader may
// look at during a lookup), or 0 when there is no hash table.
uint64_t hashed_symbols(const Image &image, const Dynamic &d) {
  uint64_t symbols = 0;
  if (d.has(DT_HASH)) {
    const uint8_t *h = table(image, d, DT_HASH, 8);
    const uint32_t nbucket = read_at<uint32_t>(h), nchain = read_at<uint32_t>(h + 4);
    const uint8_t *words = table(image, d, DT_HASH, 8 + 4 * (uint64_t(nbucket) + nchain));
    for (uint64_t i = 0; i < uint64_t(nbucket) + nchain; ++i)
      if (read_at<uint32_t>(words + 8 + 4 * i) >= nchain && nchain > 0)
        problem("damaged ELF file: DT_HASH entry ", num(i), " names symbol ", num(read_at<uint32_t>(words + 8 + 4 * i)),
                " of ", num(nchain));
    symbols = nchain;
  }
  if (d.has(DT_GNU_HASH)) {
    const uint64_t base = d.get(DT_GNU_HASH);
    const uint8_t *h = table(image, d, DT_GNU_HASH, 16);
    const uint32_t nbuckets = read_at<uint32_t>(h), symoffset = read_at<uint32_t>(h + 4),
                   bloom_words = read_at<uint32_t>(h + 8);
    if (nbuckets == 0 || bloom_words == 0 || (bloom_words & (bloom_words - 1)) != 0)
      problem("damaged ELF file: DT_GNU_HASH has ", num(nbuckets), " buckets and ", num(bloom_words),
              " bloom words (at least one bucket; a power of two of words)");
    const uint64_t buckets_at = base + 16 + uint64_t(bloom_words) * 8;
    const uint8_t *buckets = image.require(buckets_at, uint64_t(nbuckets) * 4, "the DT_GNU_HASH buckets");
    const uint64_t chains_at = buckets_at + uint64_t(nbuckets) * 4;
    const uint64_t chain_room = image.file_bytes_from(chains_at) / 4;
    uint64_t highest = symoffset;  // one past the highest symbol index reached
    std::vector<bool> walked(chain_room);  // buckets may share a chain's tail: each entry is read once
    for (uint32_t b = 0; b < nbuckets; ++b) {
      const uint32_t first = read_at<uint32_t>(buckets + 4 * uint64_t(b));
      if (first == 0) continue;
      if (first < symoffset)
        problem("damaged ELF file: DT_GNU_HASH bucket ", num(b), " starts at symbol ", num(first),
                ", below the first hashed symbol ", num(symoffset));
      for (uint64_t i = first;; ++i) {
        if (i - symoffset >= chain_room)
          problem("damaged ELF file: a DT_GNU_HASH chain runs past the end of its segment");
        if (walked[i - symoffset]) break;
        walked[i - symoffset] = true;
        highest = std::max(highest, i + 1);
        if (read_at<uint32_t>(image.file_data(chains_at + 4 * (i - symoffset), 4)) & 1) break;
      }
    }
    symbols = std::max(symbols, highest);
  }
  return symbols;
}

// Version needs and definitions: linked lists the loader follows by offsets.
void check_versions(const Image &image, const Dynamic &d, uint64_t strsz) {
  if (d.has(DT_VERNEED)) {
    const uint64_t count = d.get(DT_VERNEEDNUM);
    if (count > kMaxVersionEntries) problem("damaged ELF file: DT_VERNEEDNUM is ", num(count));
    uint64_t at = d.get(DT_VERNEED);
    for (uint64_t i = 0; i < count; ++i) {
      const auto need = read_at<Elf64_Verneed>(image.require(at, sizeof(Elf64_Verneed), "a version need"));
      check_string(need.vn_file, strsz, "a version need's file name");
      uint64_t aux = at + need.vn_aux;
      for (uint32_t k = 0; k < need.vn_cnt && k < kMaxVersionEntries; ++k) {
        const auto a = read_at<Elf64_Vernaux>(image.require(aux, sizeof(Elf64_Vernaux), "a version need entry"));
        check_string(a.vna_name, strsz, "a version name");
        if (a.vna_next == 0) break;
        aux += a.vna_next;
      }
      if (need.vn_next == 0) break;
      at += need.vn_next;
    }
  }
  if (d.has(DT_VERDEF)) {
    const uint64_t count = d.get(DT_VERDEFNUM);
    if (count > kMaxVersionEntries) problem("damaged ELF file: DT_VERDEFNUM is ", num(count));
    uint64_t at = d.get(DT_VERDEF);
    for (uint64_t i = 0; i < count; ++i) {
      const auto def = read_at<Elf64_Verdef>(image.require(at, sizeof(Elf64_Verdef), "a version definition"));
      uint64_t aux = at + def.vd_aux;
      for (uint32_t k = 0; k < def.vd_cnt && k < kMaxVersionEntries; ++k) {
        const auto a = read_at<Elf64_Verdaux>(image.require(aux, sizeof(Elf64_Verdaux), "a version definition entry"));
        check_string(a.vda_name, strsz, "a version name");
        if (a.vda_next == 0) break;
        aux += a.vda_next;
      }
      if (def.vd_next == 0) break;
      at += def.vd_next;
    }
  }
}

// One relocation table: where each entry writes, and the symbol it names.
void check_relocations(const Image &image, const Dynamic &d, int64_t tag, uint64_t size, uint64_t entry_size,
                       uint64_t symbols, uint64_t symbol_room) {
  if (size % entry_size != 0)
    problem("damaged ELF file: the ", dynamic_tag_name(tag), " table is ", num(size), " bytes, not a multiple of ",
            num(entry_size));
  const uint8_t *rel = table(image, d, tag, size);
  for (uint64_t i = 0; i < size / entry_size; ++i) {
    const uint64_t offset = read_at<uint64_t>(rel + i * entry_size);
    const uint64_t info = read_at<uint64_t>(rel + i * entry_size + 8);
    if (ELF64_R_TYPE(info) == 0) continue;  // R_*_NONE
    if (!image.mapped(offset, 4))
      problem("damaged ELF file: relocation ", num(i), " of ", dynamic_tag_name(tag), " writes at ", hex(offset),
              ", outside every loaded segment");
    const uint64_t symbol = ELF64_R_SYM(info);
    if (symbol != 0 && symbol >= symbol_room)
      problem("damaged ELF file: relocation ", num(i), " of ", dynamic_tag_name(tag), " names symbol ", num(symbol),
              symbols ? " of " + num(symbols) : std::string(", past the end of the symbol table"));
  }
}

void check_relr(const Image &image, const Dynamic &d) {
  const uint64_t size = d.get(kDtRelrSz);
  if (size % 8 != 0) problem("damaged ELF file: the DT_RELR table is ", num(size), " bytes, not a multiple of 8");
  const uint8_t *relr = table(image, d, kDtRelr, size);
  uint64_t base = 0;
  for (uint64_t i = 0; i < size / 8; ++i) {
    const uint64_t entry = read_at<uint64_t>(relr + 8 * i);
    if ((entry & 1) == 0) {
      if (!image.mapped(entry, 8))
        problem("damaged ELF file: DT_RELR entry ", num(i), " writes at ", hex(entry), ", outside every loaded segment");
      base = entry + 8;
      continue;
    }
    for (uint64_t bit = 1; bit < 64; ++bit)
      if ((entry >> bit) & 1)
        if (!image.mapped(base + (bit - 1) * 8, 8))
          problem("damaged ELF file: DT_RELR entry ", num(i), " writes at ", hex(base + (bit - 1) * 8),
                  ", outside every loaded segment");
    base += 63 * 8;
  }
}

void check_dynamic(const Image &image, const std::vector<Elf64_Phdr> &headers) {
  Dynamic d;
  for (const Elf64_Dyn &e : dynamic_entries(image, headers)) d.values.emplace_back(e.d_tag, e.d_un.d_val);

  // Code and data addresses: inside the mapped image.
  for (int64_t tag : {DT_PLTGOT, DT_INIT, DT_FINI})
    if (d.has(tag) && d.get(tag) != 0 && !image.mapped(d.get(tag), 1))
      problem("damaged ELF file: ", dynamic_tag_name(tag), " (", hex(d.get(tag)), ") is outside every loaded segment");
  for (auto [tag, size_tag] : {std::pair{DT_INIT_ARRAY, DT_INIT_ARRAYSZ}, std::pair{DT_FINI_ARRAY, DT_FINI_ARRAYSZ},
                               std::pair{DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ}})
    if (d.has(tag)) table(image, d, tag, d.get(size_tag));

  // The string table and the names the loader reads from it.
  uint64_t strsz = 0;
  if (d.has(DT_STRTAB)) {
    strsz = d.get(DT_STRSZ);
    if (strsz == 0) problem("damaged ELF file: DT_STRTAB without a DT_STRSZ");
    const uint8_t *strings = table(image, d, DT_STRTAB, strsz);
    if (strings[strsz - 1] != 0) problem("damaged ELF file: the string table does not end with a NUL");
  }
  for (int64_t tag : {DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH})
    for (const auto &[t, v] : d.values)
      if (t == tag) check_string(v, strsz, dynamic_tag_name(tag));

  // Symbols: those the hash tables reach, and those relocations name.
  if (d.has(DT_SYMENT) && d.get(DT_SYMENT) != sizeof(Elf64_Sym))
    problem("damaged ELF file: DT_SYMENT is ", num(d.get(DT_SYMENT)), ", not ", num(sizeof(Elf64_Sym)));
  const uint64_t symbols = hashed_symbols(image, d);
  uint64_t symbol_room = 0;  // symbols readable from the file
  if (d.has(DT_SYMTAB)) {
    if (!d.has(DT_STRTAB)) problem("damaged ELF file: DT_SYMTAB without a DT_STRTAB");
    symbol_room = image.file_bytes_from(d.get(DT_SYMTAB)) / sizeof(Elf64_Sym);
    if (symbols > symbol_room)
      problem("damaged ELF file: the hash table reaches symbol ", num(symbols - 1), " but the symbol table holds ",
              num(symbol_room));
    if (symbols) symbol_room = symbols;
    const uint8_t *syms = table(image, d, DT_SYMTAB, symbol_room * sizeof(Elf64_Sym));
    for (uint64_t i = 0; i < symbols; ++i)
      check_string(read_at<Elf64_Sym>(syms + i * sizeof(Elf64_Sym)).st_name, strsz,
                   "the name of symbol " + num(i));
    if (d.has(DT_VERSYM)) table(image, d, DT_VERSYM, symbol_room * 2);
  }
  check_versions(image, d, strsz);

  if (d.has(DT_RELAENT) && d.get(DT_RELAENT) != sizeof(Elf64_Rela))
    problem("damaged ELF file: DT_RELAENT is ", num(d.get(DT_RELAENT)), ", not ", num(sizeof(Elf64_Rela)));
  if (d.has(DT_RELA)) check_relocations(image, d, DT_RELA, d.get(DT_RELASZ), sizeof(Elf64_Rela), symbols, symbol_room);
  if (d.has(DT_REL)) check_relocations(image, d, DT_REL, d.get(DT_RELSZ), sizeof(Elf64_Rel), symbols, symbol_room);
  if (d.has(DT_JMPREL)) {
    const uint64_t kind = d.get(DT_PLTREL);
    if (kind != DT_RELA && kind != DT_REL)
      problem("damaged ELF file: DT_PLTREL is ", num(kind), ", neither DT_RELA (7) nor DT_REL (17)");
    check_relocations(image, d, DT_JMPREL, d.get(DT_PLTRELSZ), kind == DT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel),
                      symbols, symbol_room);
  }
  if (d.has(kDtRelr)) {
    if (d.has(kDtRelrEnt) && d.get(kDtRelrEnt) != 8)
      problem("damaged ELF file: DT_RELRENT is ", num(d.get(kDtRelrEnt)), ", not 8");
    check_relr(image, d);
  }
}

}  // namespace

uint16_t host_machine() { return kHostMachine; }

std::string machine_name(uint16_t machine) {
  switch (machine) {
    case EM_386: return "i386";
    case EM_ARM: return "32-bit ARM";
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_RISCV: return "RISC-V";
    case 258: return "LoongArch";
    default: return "machine " + std::to_string(machine);
  }
}

std::string shared_object_problem(std::span<const uint8_t> bytes, uint16_t machine) {
  try {
    Elf64_Ehdr header;
    check_header(bytes, machine, header);
    Image image(bytes);
    const std::vector<Elf64_Phdr> headers = check_program_headers(image, header);
    check_dynamic(image, headers);
    return "";
  } catch (const Problem &p) {
    return p.what;
  }
}

}  // namespace tpu_elf
