// input_layout_test: metadata_<op>'s input_layouts in models, on the
// layer-group fixture set (tests/runtime/groups/fixtures):
//   - align4k's kernel stops unless its input is 4096-byte aligned; its
//     metadata asks for that and the memory plan honours it, on both chips;
//     align4k_plain (the same kernel, no metadata) fails the build;
//   - pad32's kernel reads its input's rows 32 elements apart, as its
//     metadata asks: the layer reads a padded copy of its input and matches
//     the reference on both chips; pad32_plain (no metadata) does not; an
//     extent that is a multiple needs no copy; a dynamic layer is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"
#include "support/group_fixtures.h"
#include "support/test_support.h"

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

tr::BuildOptions options_for(const std::string &chip) {
  tr::BuildOptions o;
  o.chip = chip;
  o.libraries = test::group_fixture_libraries(chip);
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
  REQUIRE_GROUP_FIXTURES();
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
  REQUIRE_GROUP_FIXTURES();
  try {
    tr::build_model(chain("align4k_plain"), options_for("bm1684x"), "layout.json");
    ADD_FAILURE() << "align4k_plain found its input 4096-byte aligned without asking";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "layer 1 ('use', op align4k_plain)");
    EXPECT_CONTAINS(e.what(), "is not 4096-byte aligned");
  }
}

// x -> absadd -> a -> <op> -> y, fp32 of `shape`.
tr::NetDescription padded_chain(const std::string &op, const std::vector<int> &shape, bool dynamic = false) {
  Json use = {{"name", "use"}, {"op", op}, {"params", Json::object()}, {"inputs", {"a"}}, {"outputs", {"y"}}};
  if (dynamic) use["dynamic"] = true;
  const Json net = {
      {"name", "pitch"},
      {"inputs", {{{"name", "x"}, {"shape", shape}, {"dtype", "fp32"}}}},
      {"layers",
       {{{"name", "abs"}, {"op", "absadd"}, {"params", {{"b", 0.5}}}, {"inputs", {"x"}}, {"outputs", {"a"}}}, use}},
      {"outputs", {"y"}}};
  return tr::parse_net(net, "pitch.json");
}

std::string info_of(const tr::ModelFile &model) {
  const std::string path = (std::filesystem::temp_directory_path() / "input_layout_test.tpumodel").string();
  tr::write_model_file(path, model);
  tr::ModelFileLayout layout;
  const tr::ModelFile read = tr::read_model_file(path, &layout);
  std::filesystem::remove(path);
  return tr::model_info_text(read, layout, path);
}

// pad32's kernel reads rows 32 elements apart: with its metadata the layer
// reads a padded copy of a (rows of 24 elements padded to 32) and gives x
// back; the model's inputs and outputs stay unpadded.
TEST(InputLayouts, APaddedRowPitchIsMadeForTheKernel) {
  REQUIRE_GROUP_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult built = tr::build_model(padded_chain("pad32", {1, 2, 5, 24}), options_for(chip), "p.json");
    const tr::ModelLayer &use = built.description.layers[1];
    ASSERT_EQ(use.padded_inputs.size(), 1u);
    EXPECT_EQ(use.padded_inputs[0].pitch, 32);
    EXPECT_EQ(use.padded_inputs[0].size, 10u * 32 * 4);
    EXPECT_CONTAINS(info_of(built.model), "input 0 read as a padded copy: rows of 32 elements, 1280 bytes");
    const tr::RunResult run = tr::run_model(built.model, built.reference_inputs, "pitch");
    EXPECT_EQ(run.outputs.at("y").shape, (std::vector<int64_t>{1, 2, 5, 24}));
    EXPECT_EQ(run.outputs.at("y").data, built.reference_outputs.at("y").data);
  }
}

TEST(InputLayouts, WithoutTheMetadataThePitchedKernelReadsTheWrongElements) {
  REQUIRE_GROUP_FIXTURES();
  std::string failure;
  try {
    const tr::BuildResult built = tr::build_model(padded_chain("pad32_plain", {1, 2, 5, 24}), options_for("bm1688"),
                                                  "p.json");
    const tr::RunResult run = tr::run_model(built.model, built.reference_inputs, "pitch");
    if (run.outputs.at("y").data == built.reference_outputs.at("y").data) failure = "the run matched the reference";
  } catch (const tr::Error &) {
    // Reading past its input is also a way to fail.
  }
  EXPECT_EQ(failure, "");
}

TEST(InputLayouts, AnExtentThatIsAMultipleNeedsNoCopyAndADynamicLayerIsRefused) {
  REQUIRE_GROUP_FIXTURES();
  const tr::BuildResult built = tr::build_model(padded_chain("pad32", {1, 2, 2, 64}), options_for("bm1688"), "p.json");
  EXPECT_TRUE(built.description.layers[1].padded_inputs.empty());
  EXPECT_EQ(tr::run_model(built.model, built.reference_inputs, "pitch").outputs.at("y").data,
            built.reference_outputs.at("y").data);
  try {
    tr::build_model(padded_chain("pad32", {1, 2, 5, 24}, true), options_for("bm1688"), "p.json");
    ADD_FAILURE() << "a dynamic layer was given an unpadded input";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "layer 1 ('use', op pad32): op 'pad32' asks for input 0 ('a', [1,2,5,24]) with its "
                              "innermost dimension padded to a multiple of 32 elements (metadata_pad32 "
                              "input_layouts), but the layer is dynamic: padded copies are made for static layers "
                              "only");
  }
}

}  // namespace
