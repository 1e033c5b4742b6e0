// input_layout_test: metadata_<op>'s input_layouts in models, on the
// layer-group fixture set (tests/runtime/groups/fixtures):
//   - align4k's kernel stops unless its input is 4096-byte aligned; its
//     metadata asks for that and the memory plan honours it, on both chips;
//     align4k_plain (the same kernel, no metadata) fails the build;
//   - pad32 asks for its input's innermost dimension padded to 32 elements:
//     accepted when the extent is a multiple already, refused by name
//     otherwise (the SDK does not pad tensors yet).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/net.h"
#include "support/test_support.h"

#ifndef TPU_GROUP_FIXTURES_DIR
#define TPU_GROUP_FIXTURES_DIR ""
#endif

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

#define REQUIRE_LAYOUT_FIXTURES()                                                  \
  do {                                                                             \
    if (!std::filesystem::exists(TPU_GROUP_FIXTURES_DIR "/libplugin_custom.so"))   \
      GTEST_SKIP() << "no layer-group fixtures at '" TPU_GROUP_FIXTURES_DIR "'";   \
  } while (0)

tr::BuildOptions options_for(const std::string &chip) {
  const std::string dir = TPU_GROUP_FIXTURES_DIR;
  tr::BuildOptions o;
  o.chip = chip;
  o.libraries = {dir + "/libplugin_custom.so", dir + "/libbackend_custom.so", dir + "/" + tr::firmware_file_name(chip)};
  o.reference = true;
  o.seed = 3;
  return o;
}

// x -> absadd -> a -> <op> -> y; x, a and y are 512 bytes each, so without
// a layout of its own a lies 512 bytes after x.
tr::NetDescription chain(const std::string &op, int innermost = 128) {
  const Json net = {
      {"name", "layout"},
      {"inputs", {{{"name", "x"}, {"shape", {1, 1, 512 / (4 * innermost), innermost}}, {"dtype", "fp32"}}}},
      {"layers",
       {{{"name", "abs"}, {"op", "absadd"}, {"params", {{"b", 0.5}}}, {"inputs", {"x"}}, {"outputs", {"a"}}},
        {{"name", "use"}, {"op", op}, {"params", Json::object()}, {"inputs", {"a"}}, {"outputs", {"y"}}}}},
      {"outputs", {"y"}}};
  return tr::parse_net(net, "layout.json");
}

TEST(InputLayouts, TheRequestedAlignmentIsHonoured) {
  REQUIRE_LAYOUT_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult built = tr::build_model(chain("align4k"), options_for(chip), "layout.json");
    const tr::ModelDescription &d = built.description;
    EXPECT_EQ((d.memory_base + d.find_tensor("a")->offset) % 4096, 0u);
    const tr::RunResult run = tr::run_model(built.model, built.reference_inputs, "layout");
    EXPECT_EQ(run.outputs.at("y").data, built.reference_outputs.at("y").data);
  }
}

TEST(InputLayouts, WithoutTheMetadataTheKernelStops) {
  REQUIRE_LAYOUT_FIXTURES();
  try {
    tr::build_model(chain("align4k_plain"), options_for("bm1684x"), "layout.json");
    ADD_FAILURE() << "align4k_plain found its input 4096-byte aligned without asking";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "layer 1 ('use', op align4k_plain)");
    EXPECT_CONTAINS(e.what(), "is not 4096-byte aligned");
  }
}

TEST(InputLayouts, PaddingIsRefusedUnlessTheExtentIsAMultipleAlready) {
  REQUIRE_LAYOUT_FIXTURES();
  const tr::BuildResult built = tr::build_model(chain("pad32", 64), options_for("bm1688"), "layout.json");
  EXPECT_EQ(tr::run_model(built.model, built.reference_inputs, "pad").outputs.at("y").data,
            built.reference_outputs.at("y").data);
  try {
    tr::build_model(chain("pad32", 16), options_for("bm1688"), "layout.json");
    ADD_FAILURE() << "pad32 was given an innermost extent of 16 unpadded";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "layer 1 ('use', op pad32): op 'pad32' asks for input 0 ('a', [1,1,8,16]) with its "
                              "innermost dimension padded to a multiple of 32 elements (metadata_pad32 "
                              "input_layouts), but this SDK does not pad tensors yet and 16 is not a multiple of 32");
  }
}

}  // namespace
