// sample_ops.h: the sample op libraries built in the tree (libplugin_custom,
// libbackend_custom, libcmodel_custom_<chip>), for tests that build nets of
// sample ops. $TPU_SAMPLE_OPS_LIB_DIR overrides the directory the build
// gives (TPU_SAMPLE_OPS_LIB_DIR, tests/CMakeLists.txt).
#pragma once

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "tpu_runtime/library_paths.h"

#ifndef TPU_SAMPLE_OPS_LIB_DIR
#define TPU_SAMPLE_OPS_LIB_DIR ""
#endif

namespace test {

inline std::string sample_ops_lib_dir() {
  if (const char *v = std::getenv("TPU_SAMPLE_OPS_LIB_DIR"); v && *v) return v;
  return TPU_SAMPLE_OPS_LIB_DIR;
}

inline tpu_runtime::LibraryPaths sample_ops_libraries(const std::string &chip) {
  const std::string d = sample_ops_lib_dir();
  return {d + "/libplugin_custom.so", d + "/libbackend_custom.so", d + "/" + tpu_runtime::firmware_file_name(chip)};
}

}  // namespace test

// Skips a test when the tree was built without the sample ops.
#define REQUIRE_SAMPLE_OPS() \
  if (test::sample_ops_lib_dir().empty()) GTEST_SKIP() << "TPU_SAMPLE_OPS_LIB_DIR is not set"
