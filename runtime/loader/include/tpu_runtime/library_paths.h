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
  // The vendor AP ops' run-time library (libcustomcpuop.so, from the
  // customlayer's ap_src/); opened only by a net with ap.<name> layers.
  std::string host_ap = {};
};

// The defaults for `chip` ("bm1684x" or "bm1688"):
//   plugin, backend  $TPUC_ROOT/lib/lib{plugin,backend}_custom.so
//   host_ap          ap_library_in($TPUC_ROOT/lib)
//   firmware         $TPUKERNEL_CUSTOM_FIRMWARE_PATH when set: a file is used
//                    as is (the vendor's flow names one file there), a
//                    directory must hold libcmodel_custom_<chip>.so or the
//                    vendor's libcmodel_custom_<1684x|1688>.so;
//                    otherwise the same two names in $TPUC_ROOT/lib.
// The firmware's recorded chip is checked when it is opened, whatever its
// file name says.
// A path that needs TPUC_ROOT while it is unset (or empty) is left empty;
// Plugin/Backend/Firmware::open("") then throw an Error saying that
// TPUC_ROOT is not set and no path was given. So a caller that passes its
// own paths never needs the environment. Throws Error for an unknown chip.
LibraryPaths default_library_paths(std::string_view chip);

// The AP ops' run-time library in `dir`: libcustomcpuop.so (the vendor's
// name, which rebuild_custom_apop_x86 installs), or libcustomapop.so (the
// build's own name) when only that one is there.
std::string ap_library_in(const std::string &dir);

// "libcmodel_custom_<chip>.so"
std::string firmware_file_name(std::string_view chip);
// The vendor's name of the same file: "libcmodel_custom_1684x.so",
// "libcmodel_custom_1688.so".
std::string vendor_firmware_file_name(std::string_view chip);

}  // namespace tpu_runtime
