// elf_structure.h: is this file safe to hand to dlopen?
//
// dlopen trusts the file: it maps what the program headers describe and
// then reads the dynamic section, the string and symbol tables, the hash
// tables, the version tables and the relocations at the addresses the file
// gives, without checking that they lie inside what it mapped. A truncated
// or damaged library (or one crafted to be) therefore crashes the process
// inside dlopen (SIGBUS past the end of the file, SIGSEGV at a wild
// address). shared_object_problem walks the same structures over the bytes
// first, with every offset, address and size bounds-checked, so such a file
// is refused with a message instead.
//
// It does not make a library trustworthy: a well-formed library still runs
// its constructors at dlopen, and they may do anything.
//
// Compiled into both libtpu_runtime (tpu_runtime::check_elf_shared_object)
// and libbmlib (module loading), with hidden symbols.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tpu_elf {

// The ELF e_machine of the host this code runs on.
uint16_t host_machine();

// "x86-64", "AArch64", "RISC-V", ... for an ELF e_machine value; "machine N"
// for one without a name here.
std::string machine_name(uint16_t machine);

// "" when `bytes` are a 64-bit little-endian ELF shared object for
// `machine` whose program headers, segments, dynamic section and the
// tables it points to lie inside the file and its mapped segments;
// otherwise what is wrong, as a sentence without the file's name.
std::string shared_object_problem(std::span<const uint8_t> bytes, uint16_t machine);

}  // namespace tpu_elf
