// elf_check.cc: the checks of elf_check.h.
#include "elf_check.h"

#include <elf.h>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tpu_runtime/error.h"

namespace tpu_runtime {
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

}  // namespace

std::vector<uint8_t> read_file(const std::string &path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) throw Error(fmt::format("{}: no such file", path));
  if (std::filesystem::is_directory(status)) throw Error(fmt::format("{}: is a directory, not a library", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open", path));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(fmt::format("{}: read error", path));
  return bytes;
}


void check_elf_shared_object(std::span<const uint8_t> bytes, std::string_view where) {
  if (bytes.size() >= 4 &&
      (bytes[EI_MAG0] != ELFMAG0 || bytes[EI_MAG1] != ELFMAG1 || bytes[EI_MAG2] != ELFMAG2 || bytes[EI_MAG3] != ELFMAG3))
    throw Error(fmt::format("{}: not an ELF file (it starts with {:02x} {:02x} {:02x} {:02x}, not 7f 45 4c 46)", where,
                            bytes[0], bytes[1], bytes[2], bytes[3]));
  if (bytes.size() < sizeof(Elf64_Ehdr))
    throw Error(fmt::format("{}: not an ELF shared object: only {} bytes", where, bytes.size()));
  if (bytes[EI_CLASS] != ELFCLASS64)
    throw Error(fmt::format("{}: a {} ELF file; this host loads only 64-bit libraries", where,
                            bytes[EI_CLASS] == ELFCLASS32 ? "32-bit" : fmt::format("class-{}", bytes[EI_CLASS])));
  if (bytes[EI_DATA] != ELFDATA2LSB)
    throw Error(fmt::format("{}: a {} ELF file; this host is little-endian", where,
                            bytes[EI_DATA] == ELFDATA2MSB ? "big-endian" : "unknown-byte-order"));
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (header.e_machine != kHostMachine)
    throw Error(fmt::format("{}: built for {} (e_machine {}), but this host is {} (e_machine {}); a kernel module "
                            "for the emulator is a library for the host running it",
                            where, elf_machine_name(header.e_machine), header.e_machine, elf_machine_name(kHostMachine),
                            kHostMachine));
  if (header.e_type != ET_DYN)
    throw Error(fmt::format("{}: not a shared object: ELF type {} ({}); a kernel module is a .so (ET_DYN)", where,
                            header.e_type,
                            header.e_type == ET_EXEC  ? "an executable"
                            : header.e_type == ET_REL ? "an object file"
                                                      : "not ET_DYN"));
  // The loader maps the segments the program headers describe: a file cut
  // short would be mapped past its end and crash the process (SIGBUS) when
  // touched, so every table and segment must lie inside the file.
  const uint64_t size = bytes.size();
  auto inside = [&](uint64_t offset, uint64_t count, uint64_t item) {
    return offset <= size && (item == 0 || count <= (size - offset) / item);
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 ||
      !inside(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr)))
    throw Error(fmt::format("{}: damaged or truncated ELF file: the program header table ({} entries at offset {}) "
                            "is not inside the file ({} bytes)",
                            where, header.e_phnum, header.e_phoff, size));
  if (header.e_shoff != 0 && !inside(header.e_shoff, header.e_shnum, header.e_shentsize))
    throw Error(fmt::format("{}: truncated ELF file: the section header table ends past the end of the file ({} "
                            "bytes)",
                            where, size));
  bool dynamic = false;
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, bytes.data() + header.e_phoff + uint64_t(i) * sizeof ph, sizeof ph);
    dynamic = dynamic || ph.p_type == PT_DYNAMIC;
    if (ph.p_type != PT_NULL && !inside(ph.p_offset, ph.p_filesz, 1))
      throw Error(fmt::format("{}: truncated ELF file: segment {} ([{}, {} + {})) ends past the end of the file ({} "
                              "bytes)",
                              where, i, ph.p_offset, ph.p_offset, ph.p_filesz, size));
  }
  if (!dynamic) throw Error(fmt::format("{}: not a shared library: no dynamic segment", where));
}

std::string elf_machine_name(uint16_t machine) {
  switch (machine) {
    case EM_386: return "i386";
    case EM_ARM: return "32-bit ARM";
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_RISCV: return "RISC-V";
    case 258: return "LoongArch";
    default: return fmt::format("machine {}", machine);
  }
}

}  // namespace tpu_runtime
