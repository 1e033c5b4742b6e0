// group_fixtures.h: the fixture op libraries of tests/runtime/groups/fixtures
// (element-wise, in-place, stateful, layout-hungry ops, ...) that the model,
// group, check and loader tests build their nets from. A test program that
// uses them defines TPU_GROUP_FIXTURES_DIR (tests/CMakeLists.txt).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"

#ifndef TPU_GROUP_FIXTURES_DIR
#define TPU_GROUP_FIXTURES_DIR ""
#endif

// Fails (never skips) a test whose fixtures are missing: the program that
// runs it is built with them, so their absence is a broken build.
#define REQUIRE_GROUP_FIXTURES()                                                  \
  ASSERT_TRUE(std::filesystem::exists(TPU_GROUP_FIXTURES_DIR "/libplugin_custom.so")) \
      << "no layer-group fixtures at '" TPU_GROUP_FIXTURES_DIR "'"

namespace test {

// The plugin, backend and firmware libraries of the fixtures for `chip`.
inline tpu_runtime::LibraryPaths group_fixture_libraries(const std::string &chip) {
  const std::string dir = TPU_GROUP_FIXTURES_DIR;
  return {dir + "/libplugin_custom.so", dir + "/libbackend_custom.so",
          dir + "/" + tpu_runtime::firmware_file_name(chip)};
}

// Build options for a net of fixture ops, checked against the plugin
// references; with `groups`, layer groups in a local memory small enough
// (16 KiB) that a group must be sliced.
inline tpu_runtime::BuildOptions group_build_options(const std::string &chip, bool groups, uint64_t seed) {
  tpu_runtime::BuildOptions o;
  o.chip = chip;
  o.libraries = group_fixture_libraries(chip);
  o.reference = true;
  o.seed = seed;
  o.layer_groups = groups;
  o.group_local_memory = 16384;
  return o;
}

}  // namespace test
