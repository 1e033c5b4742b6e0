// bmodel_elf.cc: the device-module checks of bmodel_elf.h. The file is read
// as bytes with explicit bounds checks (never mapped or loaded: it is for
// another machine).
#include "bmodel/bmodel_elf.h"

#include <elf.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "loader/elf_check.h"
#include "tpu_runtime/bmodel.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::bmodel {
namespace {

std::string upper(std::string s) {
  for (char &c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// [offset, offset + count * item) lies inside a file of `size` bytes.
bool inside(uint64_t size, uint64_t offset, uint64_t count, uint64_t item) {
  return offset <= size && (item == 0 || count <= (size - offset) / item);
}

template <class T>
T read_at(std::span<const uint8_t> bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

Elf64_Ehdr check_header(std::span<const uint8_t> bytes, const std::string &where, uint16_t machine,
                        const std::string &chip) {
  if (bytes.size() < 4 || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    throw Error(fmt::format("{}: not an ELF file: it does not start with 7f 45 4c 46 (rule K5)", where));
  if (bytes.size() < sizeof(Elf64_Ehdr))
    throw Error(fmt::format("{}: truncated ELF file: {} bytes, shorter than the 64-byte ELF64 header (rule K5)", where,
                            bytes.size()));
  if (bytes[EI_CLASS] != ELFCLASS64)
    throw Error(fmt::format("{}: EI_CLASS {} ({}); a device kernel module is a 64-bit ELF (rule K5)", where,
                            bytes[EI_CLASS], bytes[EI_CLASS] == ELFCLASS32 ? "32-bit" : "unknown class"));
  if (bytes[EI_DATA] != ELFDATA2LSB)
    throw Error(fmt::format("{}: EI_DATA {} (not little-endian); a device kernel module is little-endian (rule K5)",
                            where, bytes[EI_DATA]));
  if (bytes[EI_VERSION] != EV_CURRENT)
    throw Error(fmt::format("{}: EI_VERSION {}, not 1 (rule K5)", where, bytes[EI_VERSION]));
  const auto h = read_at<Elf64_Ehdr>(bytes, 0);
  if (h.e_type != ET_DYN)
    throw Error(fmt::format("{}: e_type {}, not 3 (ET_DYN): a kernel module is a shared object (rule K5)", where,
                            h.e_type));
  if (h.e_machine != machine)
    throw Error(fmt::format("{}: built for {} (e_machine {}), but a {} model loads {} modules (e_machine {}) (rule K5)",
                            where, machine_name(h.e_machine), h.e_machine, chip, machine_name(machine), machine));
  const uint64_t size = bytes.size();
  if (h.e_shoff == 0 || h.e_shnum == 0 || h.e_shentsize != sizeof(Elf64_Shdr) ||
      !inside(size, h.e_shoff, h.e_shnum, sizeof(Elf64_Shdr)))
    throw Error(fmt::format("{}: the section header table ({} entries of {} bytes at offset {}) is missing or not "
                            "inside the file ({} bytes): truncated or damaged (rule K5)",
                            where, h.e_shnum, h.e_shentsize, h.e_shoff, size));
  if (h.e_phnum > 0 && (h.e_phentsize != sizeof(Elf64_Phdr) || !inside(size, h.e_phoff, h.e_phnum, sizeof(Elf64_Phdr))))
    throw Error(fmt::format("{}: the program header table is not inside the file ({} bytes): truncated (rule K5)",
                            where, size));
  for (uint16_t i = 0; i < h.e_phnum; ++i) {
    const auto ph = read_at<Elf64_Phdr>(bytes, h.e_phoff + uint64_t(i) * sizeof(Elf64_Phdr));
    if (ph.p_type != PT_NULL && !inside(size, ph.p_offset, ph.p_filesz, 1))
      throw Error(fmt::format("{}: segment {} [{}, +{}) ends past the end of the file ({} bytes): truncated (rule K5)",
                              where, i, ph.p_offset, ph.p_filesz, size));
  }
  return h;
}

Elf64_Shdr section(std::span<const uint8_t> bytes, const Elf64_Ehdr &h, uint32_t index) {
  return read_at<Elf64_Shdr>(bytes, h.e_shoff + uint64_t(index) * sizeof(Elf64_Shdr));
}

// Names of the symbols the dynamic symbol table defines.
std::set<std::string> defined_dynamic_symbols(std::span<const uint8_t> bytes, const Elf64_Ehdr &h,
                                              const std::string &where) {
  const uint64_t size = bytes.size();
  for (uint32_t i = 0; i < h.e_shnum; ++i) {
    const Elf64_Shdr s = section(bytes, h, i);
    if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL && !inside(size, s.sh_offset, s.sh_size, 1))
      throw Error(fmt::format("{}: section {} [{}, +{}) ends past the end of the file ({} bytes): truncated (rule K5)",
                              where, i, s.sh_offset, s.sh_size, size));
  }
  for (uint32_t i = 0; i < h.e_shnum; ++i) {
    const Elf64_Shdr sym = section(bytes, h, i);
    if (sym.sh_type != SHT_DYNSYM) continue;
    if (sym.sh_entsize != sizeof(Elf64_Sym) || sym.sh_link >= h.e_shnum)
      throw Error(fmt::format("{}: damaged dynamic symbol table (section {}) (rule K6)", where, i));
    const Elf64_Shdr str = section(bytes, h, sym.sh_link);
    if (str.sh_type != SHT_STRTAB)
      throw Error(fmt::format("{}: the dynamic symbol table's string table (section {}) is not a string table (rule "
                              "K6)",
                              where, sym.sh_link));
    std::set<std::string> names;
    for (uint64_t k = 0; k < sym.sh_size / sizeof(Elf64_Sym); ++k) {
      const auto s = read_at<Elf64_Sym>(bytes, sym.sh_offset + k * sizeof(Elf64_Sym));
      if (s.st_shndx == SHN_UNDEF || s.st_name >= str.sh_size) continue;
      const char *begin = reinterpret_cast<const char *>(bytes.data() + str.sh_offset + s.st_name);
      names.insert(std::string(begin, strnlen(begin, size_t(str.sh_size - s.st_name))));
    }
    return names;
  }
  throw Error(fmt::format("{}: no dynamic symbol table (SHT_DYNSYM): the runtime finds the module's entries by name "
                          "(rule K6)",
                          where));
}

}  // namespace

uint16_t module_machine_for_chip(const std::string &chip) {
  const std::string c = upper(chip);
  if (c == "BM1684X" || c == "BM1686") return EM_AARCH64;
  if (c == "BM1688" || c == "CV186X") return EM_RISCV;
  return 0;
}

std::string machine_name(uint16_t machine) { return elf_machine_name(machine); }

DeviceModuleCheck check_device_module(std::span<const uint8_t> bytes, const std::string &where, uint16_t machine,
                                      const std::string &chip) {
  const Elf64_Ehdr h = check_header(bytes, where, machine, chip);
  const std::set<std::string> names = defined_dynamic_symbols(bytes, h, where);
  DeviceModuleCheck result;
  std::vector<std::string> missing;
  for (const char *entry : kRequiredEntries) {
    if (names.count(entry)) result.present.push_back(entry);
    else missing.push_back(entry);
  }
  if (!missing.empty())
    throw Error(fmt::format("{}: does not define {} in its dynamic symbol table; the runtime resolves {} on every load "
                            "(rule K6)",
                            where, fmt::join(missing, ", "), fmt::join(kRequiredEntries, " and ")));
  for (const char *entry : kOptionalEntries) (names.count(entry) ? result.present : result.absent).push_back(entry);
  return result;
}

std::string check_cpuop_module(std::span<const uint8_t> bytes, const std::string &where) {
  uint16_t machine = EM_X86_64;
  if (bytes.size() >= sizeof(Elf64_Ehdr) && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0 &&
      bytes[EI_CLASS] == ELFCLASS64 && bytes[EI_DATA] == ELFDATA2LSB) {
    machine = read_at<Elf64_Ehdr>(bytes, 0).e_machine;
    if (machine != EM_X86_64 && machine != EM_AARCH64)
      throw Error(fmt::format("{}: built for {} (e_machine {}); a CPU-op library runs on the host CPU that drives the "
                              "chip, x86-64 or AArch64 (rule K5)",
                              where, machine_name(machine), machine));
  }
  const Elf64_Ehdr h = check_header(bytes, where, machine, "host-CPU");
  const std::set<std::string> names = defined_dynamic_symbols(bytes, h, where);
  std::vector<std::string> missing;
  for (const char *entry : {"bmcpu_init", "bmcpu_uninit", "customcpu_process"})
    if (!names.count(entry)) missing.push_back(entry);
  if (!missing.empty())
    throw Error(fmt::format("{}: does not define {} in its dynamic symbol table; the runtime requires bmcpu_init, "
                            "bmcpu_uninit and customcpu_process when it loads a model's CPU-op library, and exits "
                            "without them (rule K6)",
                            where, fmt::join(missing, ", ")));
  return machine_name(machine);
}

}  // namespace tpu_runtime::bmodel
