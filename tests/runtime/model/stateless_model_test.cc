// stateless_model_test: metadata_<op>'s is_stateless in models, on the
// layer-group fixture set (tests/runtime/groups/fixtures):
//   - identical stateless layers are computed once: the model has fewer
//     layers, net outputs keep their names, tpu_model info lists the merged
//     layers, and the runs equal the plugin reference bit for bit on both
//     chips, with and without layer groups;
//   - a stateful op's global scratch buffer persists across the runs of one
//     ModelSession (counter: 1, 2, 3) and starts again in a new one;
//     identical stateful layers are never merged.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/op_tester.h"
#include "support/net_json.h"
#include "support/group_fixtures.h"
#include "support/test_support.h"

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

tr::BuildOptions options_for(const std::string &chip, bool groups) {
  return test::group_build_options(chip, groups, 9);
}

// abs1 and abs2 are identical, so then are ceil1 and ceil2 (on a1 and a2);
// abs3 differs in b. a2 is a net output, a1 is not.
Json twins() {
  return {{"name", "twins"},
          {"inputs", {{{"name", "x"}, {"shape", {2, 3, 40, 24}}, {"dtype", "fp32"}}}},
          {"layers",
           {test::net_layer("abs1", "absadd", {{"b", 0.5}}, {"x"}, {"a1"}),
            test::net_layer("abs2", "absadd", {{"b", 0.5}}, {"x"}, {"a2"}),
            test::net_layer("abs3", "absadd", {{"b", 0.25}}, {"x"}, {"a3"}),
            test::net_layer("ceil1", "ceiladd", {{"b", 1.0}}, {"a1"}, {"c1"}),
            test::net_layer("ceil2", "ceiladd", {{"b", 1.0}}, {"a2"}, {"c2"}),
            test::net_layer("sum", "builtin.add", Json::object(), {"c1", "c2"}, {"s"}),
            test::net_layer("sum3", "builtin.add", Json::object(), {"s", "a3"}, {"t"})}},
          {"outputs", {"t", "a2"}}};
}

std::string info_of(const tr::ModelFile &model) {
  const std::string path = (std::filesystem::temp_directory_path() / "stateless_model_test.tpumodel").string();
  tr::write_model_file(path, model);
  tr::ModelFileLayout layout;
  const tr::ModelFile read = tr::read_model_file(path, &layout);
  std::filesystem::remove(path);
  return tr::model_info_text(read, layout, path);
}

TEST(StatelessModels, IdenticalStatelessLayersAreComputedOnce) {
  REQUIRE_GROUP_FIXTURES();
  const tr::NetDescription net = tr::parse_net(twins(), "twins.json");
  for (const bool groups : {false, true})
    for (const std::string chip : {"bm1684x", "bm1688"}) {
      SCOPED_TRACE(chip + (groups ? " grouped" : " global"));
      const tr::BuildResult built = tr::build_model(net, options_for(chip, groups), "twins.json");
      const tr::ModelDescription &d = built.description;
      std::vector<std::string> names;
      for (const tr::ModelLayer &l : d.layers) names.push_back(l.name);
      EXPECT_EQ(names, (std::vector<std::string>{"abs1", "abs3", "ceil1", "sum", "sum3"}));
      // abs1 now writes the net output a2; sum reads ceil1's output twice.
      EXPECT_EQ(d.tensors[d.layers[0].outputs[0]].name, "a2");
      EXPECT_EQ(d.tensors[d.layers[3].inputs[0]].name, "c1");
      EXPECT_EQ(d.tensors[d.layers[3].inputs[1]].name, "c1");
      ASSERT_EQ(d.merged_layers.size(), 2u);
      EXPECT_EQ(d.merged_layers[0].layer, "abs2");
      EXPECT_EQ(d.merged_layers[0].into, "abs1");
      EXPECT_EQ(d.merged_layers[1].layer, "ceil2");
      EXPECT_EQ(d.merged_layers[1].into, "ceil1");
      // The reference runs every layer of the net as written, on the host.
      const tr::RunResult run = tr::run_model(built.model, built.reference_inputs, "twins");
      EXPECT_EQ(run.outputs.at("t").data, built.reference_outputs.at("t").data);
      EXPECT_EQ(run.outputs.at("a2").data, built.reference_outputs.at("a2").data);
      // Hand-checked: t = 2 (ceil(|x| + 0.5) + 1) + |x| + 0.25, a2 = |x| + 0.5.
      const auto x = built.reference_inputs.at("x").values<float>();
      const auto t = built.reference_outputs.at("t").values<float>();
      for (std::size_t i = 0; i < x.size(); i += 101) {
        const float c = std::ceil(std::fabs(x[i]) + 0.5f) + 1.0f;
        EXPECT_EQ(t[i], (c + c) + (std::fabs(x[i]) + 0.25f)) << i;
      }
    }
}

TEST(StatelessModels, InfoListsTheMergedLayers) {
  REQUIRE_GROUP_FIXTURES();
  const tr::BuildResult built = tr::build_model(tr::parse_net(twins(), "twins.json"), options_for("bm1688", false),
                                                "twins.json");
  const std::string info = info_of(built.model);
  EXPECT_CONTAINS(info, "merged layers (identical and stateless: computed once)");
  EXPECT_CONTAINS(info, "'abs2' (absadd) computed by 'abs1': a2\n");
  EXPECT_CONTAINS(info, "'ceil2' (ceiladd) computed by 'ceil1': c2 is c1\n");
}

// x -> counter -> n1, x -> counter -> n2: identical, but stateful.
Json counters() {
  return {{"name", "counters"},
          {"inputs", {{{"name", "x"}, {"shape", {4}}, {"dtype", "fp32"}}}},
          {"layers",
           {test::net_layer("count1", "counter", Json::object(), {"x"}, {"n1"}),
            test::net_layer("count2", "counter", Json::object(), {"x"}, {"n2"})}},
          {"outputs", {"n1", "n2"}}};
}

float value_of(const tr::RunResult &r, const std::string &name) { return r.outputs.at(name).values<float>()[0]; }

TEST(StatefulModels, AScratchBufferPersistsAcrossTheRunsOfASession) {
  REQUIRE_GROUP_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult built = tr::build_model(tr::parse_net(counters(), "c.json"), options_for(chip, false), "c.json");
    // Never merged: each counter keeps its own count.
    EXPECT_EQ(built.description.layers.size(), 2u);
    EXPECT_TRUE(built.description.merged_layers.empty());
    EXPECT_EQ(built.reference_outputs.at("n1").values<float>()[0], 1.0f);
    {
      tr::ModelSession session(built.model, "c.tpumodel");
      for (float run = 1; run <= 3; ++run) {
        const tr::RunResult r = session.run(built.reference_inputs);
        EXPECT_EQ(value_of(r, "n1"), run);
        EXPECT_EQ(value_of(r, "n2"), run);
      }
    }
    tr::ModelSession fresh(built.model, "c.tpumodel");
    EXPECT_EQ(value_of(fresh.run(built.reference_inputs), "n1"), 1.0f);
  }
  // run_model is one run of a fresh session.
  const tr::BuildResult built =
      tr::build_model(tr::parse_net(counters(), "c.json"), options_for("bm1688", false), "c.json");
  EXPECT_EQ(value_of(tr::run_model(built.model, built.reference_inputs, "c"), "n2"), 1.0f);
  EXPECT_EQ(value_of(tr::run_model(built.model, built.reference_inputs, "c"), "n2"), 1.0f);
}

// A stateful op's scratch starts zeroed in the op tester, as in a model
// session's first run: counter reads it without an uninitialised-read error
// and gives its first count.
TEST(StatefulModels, TheOpTesterZeroesAStatefulOpsScratch) {
  REQUIRE_GROUP_FIXTURES();
  tr::OpTester t;
  t.op("counter").chip("bm1684x").input_shape({4}).global_only();
  const tr::LibraryPaths libraries = test::group_fixture_libraries("bm1684x");
  t.libraries({libraries.plugin, libraries.backend, libraries.firmware});
  const tr::OpReport report = t.run();
  const tr::OpCaseResult *global = report.find("global backend");
  ASSERT_NE(global, nullptr) << report.summary();
  EXPECT_TRUE(global->passed) << global->failure;
  EXPECT_EQ(report.find("stateless claim"), nullptr) << "a stateful op is not held to the stateless claim";
}

// The op tester runs a stateless op twice on the same inputs and scratch:
// counterlie (counter's kernels, claiming stateless) gives 1 then 2.
TEST(StatefulModels, TheOpTesterCatchesAFalseStatelessClaim) {
  REQUIRE_GROUP_FIXTURES();
  const std::string dir = TPU_GROUP_FIXTURES_DIR;
  tr::OpTester t;
  t.op("counterlie").chip("bm1684x").input_shape({4}).global_only();
  t.libraries({dir + "/libplugin_custom.so", dir + "/libbackend_custom.so", dir + "/" + tr::firmware_file_name("bm1684x")});
  // The global cases give counter a scratch buffer nobody wrote, which it
  // reads: an uninitialised read that would stop them before the claim case
  // (which zeroes its scratch) runs.
  ASSERT_EQ(cmodel_set_option("uninitialized_reads", "off"), 0);
  tr::OpReport report;
  try {
    report = t.run();
  } catch (...) {
    cmodel_set_option("uninitialized_reads", "error");
    throw;
  }
  cmodel_set_option("uninitialized_reads", "error");
  const tr::OpCaseResult *claim = report.find("stateless claim");
  ASSERT_NE(claim, nullptr) << report.summary();
  EXPECT_FALSE(claim->passed);
  // 1.0f is 00 00 80 3f, 2.0f 00 00 00 40: byte 2 differs first.
  EXPECT_CONTAINS(claim->failure, "op 'counterlie' declares itself stateless (metadata_counterlie), but a second run on "
                                  "the same inputs and scratch gave output 0 other bytes: first at byte 2 (0x80, then "
                                  "0x00)");
  // A stateless op that is one passes it.
  tr::OpTester absadd;
  absadd.op("absadd").chip("bm1684x").input_shape({2, 3, 4, 5}).params(R"({"b": 0.5})").global_only();
  absadd.libraries({dir + "/libplugin_custom.so", dir + "/libbackend_custom.so",
                    dir + "/" + tr::firmware_file_name("bm1684x")});
  const tr::OpReport good = absadd.run();
  ASSERT_NE(good.find("stateless claim"), nullptr) << good.summary();
  EXPECT_TRUE(good.find("stateless claim")->passed) << good.find("stateless claim")->failure;
}

}  // namespace
