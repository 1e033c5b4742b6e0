// library_paths.h: where the custom-layer libraries are looked for.
//
// Always explicit paths, never a search through LD_LIBRARY_PATH and never a
// shared symlink: two processes using different chips or op sets cannot
// disturb each other.
#pragma once

#include <string>
#include <string_view>

namespace tpu_runtime {

struct LibraryPaths {
  std::string plugin;    // libplugin_custom.so
  std::string backend;   // libbackend_custom.so
  std::string firmware;  // libcmodel_custom_<chip>.so
};

// The defaults for `chip` ("bm1684x" or "bm1688"):
//   plugin, backend  $TPUC_ROOT/lib/lib{plugin,backend}_custom.so
//   firmware         $TPUKERNEL_CUSTOM_FIRMWARE_PATH when set: a file is used
//                    as is, a directory must hold libcmodel_custom_<chip>.so;
//                    otherwise $TPUC_ROOT/lib/libcmodel_custom_<chip>.so.
// A path that needs TPUC_ROOT while it is unset (or empty) is left empty;
// Plugin/Backend/Firmware::open("") then throw an Error saying that
// TPUC_ROOT is not set and no path was given. So a caller that passes its
// own paths never needs the environment. Throws Error for an unknown chip.
LibraryPaths default_library_paths(std::string_view chip);

// "libcmodel_custom_<chip>.so"
std::string firmware_file_name(std::string_view chip);

}  // namespace tpu_runtime
