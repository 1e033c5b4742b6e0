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

std::string tpuc_root_lib(std::string_view what) {
  const char *root = std::getenv("TPUC_ROOT");
  if (!root || !*root)
    throw Error(fmt::format("TPUC_ROOT is not set, so there is no default path for {}; "
                            "source envsetup.sh or pass the path explicitly",
                            what));
  return (std::filesystem::path(root) / "lib").string();
}

}  // namespace

std::string firmware_file_name(std::string_view chip) {
  return fmt::format("libcmodel_custom_{}.so", require_chip(chip));
}

LibraryPaths default_library_paths(std::string_view chip) {
  namespace fs = std::filesystem;
  LibraryPaths paths;
  const std::string firmware_name = firmware_file_name(chip);
  const char *firmware = std::getenv("TPUKERNEL_CUSTOM_FIRMWARE_PATH");
  if (firmware && *firmware) {
    fs::path given(firmware);
    paths.firmware = fs::is_directory(given) ? (given / firmware_name).string() : given.string();
  } else {
    paths.firmware = (fs::path(tpuc_root_lib(firmware_name)) / firmware_name).string();
  }
  const std::string lib = tpuc_root_lib("libplugin_custom.so and libbackend_custom.so");
  paths.plugin = (fs::path(lib) / "libplugin_custom.so").string();
  paths.backend = (fs::path(lib) / "libbackend_custom.so").string();
  return paths;
}

}  // namespace tpu_runtime
