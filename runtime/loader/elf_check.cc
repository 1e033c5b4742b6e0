// elf_check.cc: the checks of elf_check.h.
#include "loader/elf_check.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "io/stream_bytes.h"
#include "loader/elf_structure.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {

std::vector<uint8_t> read_file(const std::string &path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) throw Error(fmt::format("{}: no such file", path));
  if (std::filesystem::is_directory(status)) throw Error(fmt::format("{}: is a directory, not a library", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open", path));
  std::vector<uint8_t> bytes = detail::read_stream_bytes(in);
  if (in.bad()) throw Error(fmt::format("{}: read error", path));
  return bytes;
}


void check_elf_shared_object(std::span<const uint8_t> bytes, std::string_view where) {
  const std::string problem = tpu_elf::shared_object_problem(bytes, tpu_elf::host_machine());
  if (!problem.empty()) throw Error(fmt::format("{}: {}", where, problem));
}

std::string elf_machine_name(uint16_t machine) { return tpu_elf::machine_name(machine); }

}  // namespace tpu_runtime
