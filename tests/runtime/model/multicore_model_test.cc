// multicore_model_test: layers of an op that declares itself multi-core
// (metadata_<op>'s is_multi_core) in models, on the layer-group fixture set
// (tests/runtime/groups/fixtures): such a layer is dynamic ("multi_core"),
// runs through the embedded firmware on every core in force (bm1688's 2,
// or what the option "cores" emulates), gives the one-core outputs bit for
// bit (checked by hand: out = 2 x, exact), and its time is its slowest
// core's: half of one core's for an even split at one core's figures
// (bm1684x emulated), between half and all of it at bm1688's shared
// bandwidth. A multi-core layer whose input is read as a padded copy runs
// on every core too (the copy made first); a layer group keeps a
// multi-core layer out and tpu_model info says why.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"
#include "support/group_fixtures.h"
#include "support/net_json.h"
#include "support/test_support.h"

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

// x [256, 64] -> mc_double -> d -> absadd (static, one core) -> y.
Json doubling_net() {
  return {{"name", "doubling"},
          {"inputs", {{{"name", "x"}, {"shape", {256, 64}}, {"dtype", "fp32"}}}},
          {"layers",
           {test::net_layer("double", "mc_double", Json::object(), {"x"}, {"d"}),
            test::net_layer("abs", "absadd", {{"b", 0.5}}, {"d"}, {"y"})}},
          {"outputs", {"d", "y"}}};
}

// Set while no emulator is open, the option "cores" applies to the next one
// opened (run_model's) and ends with it.
tr::RunResult run_on_cores(const char *cores, const tr::ModelFile &model, const tr::npz::Arrays &inputs,
                           const std::string &name) {
  EXPECT_EQ(cmodel_set_option("cores", cores), 0) << cmodel_last_error();
  return tr::run_model(model, inputs, name);
}

double layer_us(const tr::RunResult &r, const std::string &name) {
  for (const tr::LayerStats &l : r.layers)
    if (l.name == name) return l.total_us;
  ADD_FAILURE() << "no layer " << name;
  return 0;
}

TEST(MultiCoreModels, AMultiCoreLayerRunsOnEveryCoreAndMatchesOneCore) {
  REQUIRE_GROUP_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult built =
        tr::build_model(tr::parse_net(doubling_net(), "d.json"), test::group_build_options(chip, false, 5), "d.json");
    const tr::ModelDescription &d = built.description;
    ASSERT_EQ(d.layers.size(), 2u);
    EXPECT_EQ(d.layers[0].mode, tr::LayerMode::dynamic_mode);
    EXPECT_EQ(d.layers[0].dynamic_reason, "multi_core");
    EXPECT_TRUE(d.layers[0].metadata.multi_core);
    EXPECT_EQ(d.layers[1].mode, tr::LayerMode::static_mode);
    const auto x = built.reference_inputs.at("x").values<float>();
    const tr::RunResult one = run_on_cores("1", built.model, built.reference_inputs, "d.tpumodel");
    const tr::RunResult many = run_on_cores("2", built.model, built.reference_inputs, "d.tpumodel");  // bm1684x: emulated
    EXPECT_EQ(many.outputs.at("d").data, one.outputs.at("d").data);
    EXPECT_EQ(many.outputs.at("y").data, built.reference_outputs.at("y").data);
    const auto doubled = many.outputs.at("d").values<float>();
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(doubled[i], x[i] + x[i]) << i;
    // 256 rows: 4 chunks of 64 rows on one core, 2 on each of two, side by
    // side (the slower core counts, not the sum). bm1684x's emulated cores
    // keep its one-core figures: exactly half the time. bm1688's two cores
    // share the DMA bandwidth (15 GB/s instead of 24 each): faster than
    // one core, but not twice as fast.
    const double t1 = layer_us(one, "double"), t2 = layer_us(many, "double");
    if (chip == "bm1684x") {
      EXPECT_DOUBLE_EQ(t2, t1 / 2);
    } else {
      EXPECT_LT(t2, t1);
      EXPECT_GT(t2, t1 / 2);
    }
  }
}

TEST(MultiCoreModels, InfoShowsWhyTheLayerIsDynamic) {
  REQUIRE_GROUP_FIXTURES();
  const tr::BuildResult built = tr::build_model(tr::parse_net(doubling_net(), "d.json"),
                                                test::group_build_options("bm1688", false, 5), "d.json");
  const std::string path = (std::filesystem::temp_directory_path() / "multicore_model_test.tpumodel").string();
  tr::write_model_file(path, built.model);
  tr::ModelFileLayout layout;
  const tr::ModelFile read = tr::read_model_file(path, &layout);
  std::filesystem::remove(path);
  const std::string info = tr::model_info_text(read, layout, path);
  EXPECT_CONTAINS(info, "dynamic (multi_core)");
  EXPECT_CONTAINS(info, "multi-core");
}

// x [256, 20] -> mc_double_pad32 (reads x as rows of 32 elements) -> d.
TEST(MultiCoreModels, APaddedMultiCoreLayerRunsOnEveryCore) {
  REQUIRE_GROUP_FIXTURES();
  const Json net = {{"name", "padded"},
                    {"inputs", {{{"name", "x"}, {"shape", {256, 20}}, {"dtype", "fp32"}}}},
                    {"layers", {test::net_layer("double", "mc_double_pad32", Json::object(), {"x"}, {"d"})}},
                    {"outputs", {"d"}}};
  const tr::BuildResult built =
      tr::build_model(tr::parse_net(net, "p.json"), test::group_build_options("bm1688", false, 7), "p.json");
  const tr::ModelLayer &l = built.description.layers[0];
  EXPECT_EQ(l.mode, tr::LayerMode::dynamic_mode);
  EXPECT_EQ(l.dynamic_reason, "multi_core");
  ASSERT_EQ(l.padded_inputs.size(), 1u);
  EXPECT_EQ(l.padded_inputs[0].pitch, 32);
  const auto x = built.reference_inputs.at("x").values<float>();
  const tr::RunResult one = run_on_cores("1", built.model, built.reference_inputs, "p.tpumodel");
  // The option ended with the emulator of that run: this one has bm1688's two cores.
  const tr::RunResult two = tr::run_model(built.model, built.reference_inputs, "p.tpumodel");
  EXPECT_EQ(two.outputs.at("d").data, one.outputs.at("d").data);
  const auto doubled = two.outputs.at("d").values<float>();
  ASSERT_EQ(doubled.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(doubled[i], x[i] + x[i]) << i;
  // Split over two cores at the shared bandwidth: faster than one core.
  EXPECT_LT(layer_us(two, "double"), layer_us(one, "double"));
}

// x [2, 8, 16, 16] -> ewdouble -> ewdouble -> mc_ewdouble: layers a group
// could hold, but the multi-core one stays global (a group runs on one
// core), and info says why.
TEST(MultiCoreModels, ALayerGroupKeepsAMultiCoreLayerGlobal) {
  REQUIRE_GROUP_FIXTURES();
  const Json net = {{"name", "grouped"},
                    {"inputs", {{{"name", "x"}, {"shape", {2, 8, 16, 16}}, {"dtype", "fp32"}}}},
                    {"layers",
                     {test::net_layer("a", "ewdouble", Json::object(), {"x"}, {"p"}),
                      test::net_layer("b", "ewdouble", Json::object(), {"p"}, {"q"}),
                      test::net_layer("c", "mc_ewdouble", Json::object(), {"q"}, {"y"})}},
                    {"outputs", {"y"}}};
  const tr::BuildResult built =
      tr::build_model(tr::parse_net(net, "g.json"), test::group_build_options("bm1688", true, 9), "g.json");
  const tr::ModelDescription &d = built.description;
  ASSERT_EQ(d.layers.size(), 3u);
  EXPECT_GE(d.layers[0].group, 0);  // a and b: one group
  EXPECT_EQ(d.layers[1].group, d.layers[0].group);
  EXPECT_EQ(d.layers[2].group, -1);
  EXPECT_EQ(d.layers[2].dynamic_reason, "multi_core");
  const std::string path = (std::filesystem::temp_directory_path() / "multicore_group_test.tpumodel").string();
  tr::write_model_file(path, built.model);
  tr::ModelFileLayout layout;
  const tr::ModelFile read = tr::read_model_file(path, &layout);
  std::filesystem::remove(path);
  EXPECT_CONTAINS(tr::model_info_text(read, layout, path),
                  "layer 'c' (op mc_ewdouble) is multi-core: kept global, where it runs on every core; a layer group "
                  "runs on one core");
  // 8 x the input, exactly (doubling is exact in fp32 here).
  const tr::RunResult run = tr::run_model(built.model, built.reference_inputs, "g.tpumodel");
  const auto x = built.reference_inputs.at("x").values<float>();
  const auto y = run.outputs.at("y").values<float>();
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] * 8) << i;
}

// A dynamic layer whose output is empty (a 0 dim) issues nothing, as a
// static one records nothing: mc_double's kernel, called on [2, 0], would
// issue copies of rows of 0 elements, which the emulator refuses ("every
// dim must be in [1, 65535]"). Its padded copy (mc_double_pad32) is not
// made either. The reference skips the layer too (the plugin's inference
// would get null buffers).
TEST(MultiCoreModels, ADynamicLayerWithAnEmptyOutputIssuesNothing) {
  REQUIRE_GROUP_FIXTURES();
  for (const std::string op : {"mc_double", "mc_double_pad32"})
    for (const std::string chip : {"bm1684x", "bm1688"}) {
      SCOPED_TRACE(op + " on " + chip);
      const Json net = {{"name", "empty"},
                        {"inputs", {{{"name", "x"}, {"shape", {2, 0}}, {"dtype", "fp32"}}}},
                        {"layers", {test::net_layer("double", op, Json::object(), {"x"}, {"d"})}},
                        {"outputs", {"d"}}};
      const tr::BuildResult built =
          tr::build_model(tr::parse_net(net, "e.json"), test::group_build_options(chip, false, 3), "e.json");
      ASSERT_EQ(built.description.layers[0].mode, tr::LayerMode::dynamic_mode);
      const tr::RunResult r = tr::run_model(built.model, built.reference_inputs, "e.tpumodel");
      EXPECT_EQ(r.outputs.at("d").shape, (std::vector<int64_t>{2, 0}));
      EXPECT_EQ(built.reference_outputs.at("d").shape, (std::vector<int64_t>{2, 0}));
      ASSERT_EQ(r.layers.size(), 1u);
      EXPECT_EQ(r.layers[0].total_us, 0.0);
      const nlohmann::json stats = nlohmann::json::parse(r.layers[0].stats_json);
      EXPECT_TRUE(stats.value("commands", nlohmann::json::object()).empty()) << r.layers[0].stats_json;
    }
}

}  // namespace
