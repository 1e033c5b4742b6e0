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

// In a directory: our name, else the vendor's (a directory filled by the
// vendor's flow), else our name again so the error names what was expected.
std::string firmware_in(const std::filesystem::path &dir, std::string_view chip) {
  std::error_code error;
  const std::filesystem::path ours = dir / firmware_file_name(chip);
  if (std::filesystem::exists(ours, error)) return ours.string();
  const std::filesystem::path vendors = dir / vendor_firmware_file_name(chip);
  if (std::filesystem::exists(vendors, error)) return vendors.string();
  return ours.string();
}

}  // namespace

std::string firmware_file_name(std::string_view chip) {
  return fmt::format("libcmodel_custom_{}.so", require_chip(chip));
}

std::string vendor_firmware_file_name(std::string_view chip) {
  // The vendor drops the "bm" of the chip name: libcmodel_custom_1684x.so.
  return fmt::format("libcmodel_custom_{}.so", require_chip(chip).substr(2));
}

std::string ap_library_in(const std::string &dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path vendor = fs::path(dir) / "libcustomcpuop.so", built = fs::path(dir) / "libcustomapop.so";
  if (!fs::exists(vendor, error) && fs::exists(built, error)) return built.string();
  return vendor.string();
}

LibraryPaths default_library_paths(std::string_view chip) {
  namespace fs = std::filesystem;
  require_chip(chip);  // also when no variable is set
  LibraryPaths paths;
  const std::string root = env("TPUC_ROOT");
  const fs::path lib = fs::path(root) / "lib";
  if (const std::string firmware = env("TPUKERNEL_CUSTOM_FIRMWARE_PATH"); !firmware.empty()) {
    const fs::path given(firmware);
    std::error_code error;
    paths.firmware = fs::is_directory(given, error) ? firmware_in(given, chip) : given.string();
  } else if (!root.empty()) {
    paths.firmware = firmware_in(lib, chip);
  }
  if (!root.empty()) {
    paths.plugin = (lib / "libplugin_custom.so").string();
    paths.backend = (lib / "libbackend_custom.so").string();
    paths.host_ap = ap_library_in(lib.string());
  }
  return paths;
}

}  // namespace tpu_runtime
