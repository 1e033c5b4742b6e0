// library_paths.cc: default locations of the custom-layer libraries.
#include "tpu_runtime/library_paths.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace {

std::string require_chip(std::string_view chip) {
  if (chip != "bm1684x" && chip != "bm1688")
    throw Error(fmt::format("unknown chip '{}': expected bm1684x or bm1688", chip));
  return std::string(chip);
}

// $NAME, or "" when unset.
std::string env(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::string firmware_file_name(std::string_view chip) {
  return fmt::format("libcmodel_custom_{}.so", require_chip(chip));
}

LibraryPaths default_library_paths(std::string_view chip) {
  namespace fs = std::filesystem;
  LibraryPaths paths;
  const std::string firmware_name = firmware_file_name(chip);
  const std::string root = env("TPUC_ROOT");
  const fs::path lib = fs::path(root) / "lib";
  if (const std::string firmware = env("TPUKERNEL_CUSTOM_FIRMWARE_PATH"); !firmware.empty()) {
    const fs::path given(firmware);
    std::error_code error;
    paths.firmware = fs::is_directory(given, error) ? (given / firmware_name).string() : given.string();
  } else if (!root.empty()) {
    paths.firmware = (lib / firmware_name).string();
  }
  if (!root.empty()) {
    paths.plugin = (lib / "libplugin_custom.so").string();
    paths.backend = (lib / "libbackend_custom.so").string();
  }
  return paths;
}

}  // namespace tpu_runtime
