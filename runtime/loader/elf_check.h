// elf_check.h: what must hold before a file is handed to dlopen.
//
// dlopen maps whatever the program headers describe: a truncated or
// damaged library is mapped past its end and crashes the process (SIGBUS)
// the first time the loader touches it. Every library the runtime opens is
// read and checked here first, so such a file is an Error, not a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tpu_runtime {

// The whole file; Error when it is missing, a directory or unreadable.
std::vector<uint8_t> read_file(const std::string &path);

// A 64-bit little-endian ELF shared object for this host whose program
// headers, segments, dynamic section and the tables the loader reads lie
// inside the file and its loaded segments (runtime/loader/elf_structure.h);
// Error naming `where` and the problem otherwise. (Also declared in
// tpu_runtime/model.h.)
void check_elf_shared_object(std::span<const uint8_t> bytes, std::string_view where);

// "x86-64", "AArch64", "RISC-V", ... for an ELF e_machine value;
// "machine N" for one without a name here.
std::string elf_machine_name(uint16_t machine);

}  // namespace tpu_runtime
