// elementwise_groups_test: element-wise ops (metadata_<op>, tpu_op_metadata.h)
// in models and layer groups, on the layer-group fixture set
// (tests/runtime/groups/fixtures, TPU_GROUP_FIXTURES_DIR):
//   - ewdouble (out = x + x) has only inference_ and metadata_ hooks; a chain
//     of it and absadd builds, joins one layer group sliced along N and H,
//     and its outputs equal the plugin reference bit for bit on both chips,
//     grouped and ungrouped;
//   - vsum3_ew claims element-wise but reads its neighbour rows: the group's
//     slice check refuses the build, naming the layer and the op;
//   - the model file keeps each layer's metadata, tpu_model info shows it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
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

tr::BuildOptions options_for(const std::string &chip, bool groups) {
  return test::group_build_options(chip, groups, 11);
}

Json chain(const std::string &middle_op, const std::string &dtype) {
  const auto layer = [](const std::string &op, Json params, const std::string &in, const std::string &out) {
    return Json{{"op", op}, {"params", std::move(params)}, {"inputs", {in}}, {"outputs", {out}}};
  };
  return {{"name", "ew"},
          {"inputs", {{{"name", "x"}, {"shape", {2, 3, 40, 24}}, {"dtype", dtype}}}},
          {"layers",
           {layer("ewdouble", Json::object(), "x", "a"), layer(middle_op, Json::object(), "a", "b"),
            layer("absadd", {{"b", 0.5}}, "b", "y")}},
          {"outputs", {"y"}}};
}

TEST(ElementWiseGroups, AnOpWithoutShapeOrSliceHooksJoinsAGroupAndMatchesItsReference) {
  REQUIRE_GROUP_FIXTURES();
  const tr::NetDescription net = tr::parse_net(chain("ewdouble", "fp32"), "ew.json");
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult grouped = tr::build_model(net, options_for(chip, true), "ew.json");
    const tr::ModelDescription &d = grouped.description;
    ASSERT_EQ(d.groups.size(), 1u) << d.layer_groups.dump();
    EXPECT_EQ(d.groups[0].first, 0);
    EXPECT_EQ(d.groups[0].last, 2);
    EXPECT_GT(d.groups[0].h_slices, 1);
    EXPECT_EQ(d.layers[0].metadata.elementwise, true);
    // The reference is the plugins' inference_ hooks on the host; the
    // emulated runs must give the same bits, grouped or not.
    const auto &expected = grouped.reference_outputs.at("y").data;
    EXPECT_EQ(tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y").data, expected);
    const tr::BuildResult global = tr::build_model(net, options_for(chip, false), "ew.json");
    EXPECT_TRUE(global.description.groups.empty());
    EXPECT_EQ(tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data, expected);
  }
}

TEST(ElementWiseGroups, Fp16GroupedRunsEqualGlobalRuns) {
  REQUIRE_GROUP_FIXTURES();
  const tr::NetDescription net = tr::parse_net(chain("ewdouble", "fp16"), "ew16.json");
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult grouped = tr::build_model(net, options_for(chip, true), "ew16.json");
    ASSERT_EQ(grouped.description.groups.size(), 1u);
    const tr::BuildResult global = tr::build_model(net, options_for(chip, false), "ew16.json");
    EXPECT_EQ(tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y").data,
              tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data);
  }
}

TEST(ElementWiseGroups, AFalseClaimIsCaughtByTheGroupSliceCheck) {
  REQUIRE_GROUP_FIXTURES();
  const tr::NetDescription net = tr::parse_net(chain("vsum3_ew", "fp32"), "bad.json");
  try {
    tr::build_model(net, options_for("bm1684x", true), "bad.json");
    ADD_FAILURE() << "the build accepted vsum3_ew's identity slices";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "slice check failed");
    EXPECT_CONTAINS(e.what(), "(op vsum3_ew)");
  }
}

TEST(ElementWiseGroups, TheModelKeepsEachLayersMetadataAndInfoShowsIt) {
  REQUIRE_GROUP_FIXTURES();
  const tr::NetDescription net = tr::parse_net(chain("vsum3", "fp32"), "info.json");
  const tr::BuildResult built = tr::build_model(net, options_for("bm1688", false), "info.json");
  const nlohmann::json &layers = built.model.metadata["layers"];
  EXPECT_EQ(layers[0]["metadata"], nlohmann::json::parse(R"({"inplace_inputs":0,"elementwise":true,"stateless":true,)"
                                                         R"("input_layouts":[],"multi_core":false})"));
  EXPECT_FALSE(layers[1].contains("metadata"));  // vsum3 declares none
  // Through a file, as tpu_model info reads it.
  const std::string path = (std::filesystem::temp_directory_path() / "elementwise_groups_test.tpumodel").string();
  tr::write_model_file(path, built.model);
  tr::ModelFileLayout layout;
  const tr::ModelFile read = tr::read_model_file(path, &layout);
  std::filesystem::remove(path);
  const std::string info = tr::model_info_text(read, layout, path);
  EXPECT_CONTAINS(info, "metadata: element-wise, stateless, in-place inputs 0");
  const std::size_t vsum3_row = info.find("vsum3");
  ASSERT_NE(vsum3_row, std::string::npos);
  EXPECT_EQ(info.find("metadata:", vsum3_row), info.find("metadata:", info.find("absadd", vsum3_row)));
  // A damaged record is refused on reading, naming where.
  tr::ModelFile damaged = built.model;
  damaged.metadata["layers"][0]["metadata"]["inplace_inputs"] = 2;
  try {
    tr::describe_model(damaged, "damaged.tpumodel");
    ADD_FAILURE() << "a record with 2 in-place inputs of 1 was accepted";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "damaged.tpumodel: metadata.layers[0].metadata: op 'ewdouble' metadata: "
                              "num_inplace_inputs is 2, but the layer has only 1 input");
  }
}

}  // namespace
