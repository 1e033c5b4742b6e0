// expression_groups_test: a builtin.expression layer of one input joins a
// layer group as a local layer (runtime/expression/, docs/expressions.md):
// between two custom ops with local versions (ewdouble, absadd; the
// layer-group fixtures) the three layers make one group, sliced along H in
// little local memory, whose run equals the ungrouped model's bit for bit
// on both chips and in every float dtype, under the group's slice check.
// A two-input expression stays out, and the boundary says why.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/group_fixtures.h"
#include "support/test_support.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/net.h"

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

tr::BuildOptions options_for(const std::string &chip, bool groups) {
  return test::group_build_options(chip, groups, 5);
}

Json layer(const std::string &op, Json params, const std::vector<std::string> &in, const std::string &out) {
  return Json{{"op", op}, {"params", std::move(params)}, {"inputs", in}, {"outputs", {out}}};
}

Json chain(const std::string &dtype, const std::string &formula, Json shape = {2, 5, 40, 24}) {
  return {{"name", "exprgroup"},
          {"inputs", {{{"name", "x"}, {"shape", shape}, {"dtype", dtype}}}},
          {"layers",
           {layer("ewdouble", Json::object(), {"x"}, "a"),
            layer("builtin.expression", {{"formula", formula}}, {"a"}, "b"),
            layer("absadd", {{"b", 0.5}}, {"b"}, "y")}},
          {"outputs", {"y"}}};
}

TEST(ExpressionGroups, ASingleInputExpressionJoinsAGroupAndMatchesTheGlobalRun) {
  REQUIRE_GROUP_FIXTURES();
  // Light enough on the BDC that the planner finds the group cheaper than
  // the cut (it weighs the GDMA saved against the slices' cost).
  const char *formula = "where(v > 1, v * 0.5, relu(v) - v) * v";
  for (const std::string dtype : {"fp32", "fp16", "bf16"})
    for (const std::string chip : {"bm1684x", "bm1688"}) {
      SCOPED_TRACE(chip + " " + dtype);
      const tr::NetDescription net = tr::parse_net(chain(dtype, formula), "g.json");
      const tr::BuildResult grouped = tr::build_model(net, options_for(chip, true), "g.json");
      const tr::ModelDescription &d = grouped.description;
      ASSERT_EQ(d.groups.size(), 1u) << d.layer_groups.dump();
      EXPECT_EQ(d.groups[0].first, 0);
      EXPECT_EQ(d.groups[0].last, 2);
      EXPECT_GT(d.groups[0].h_slices, 1);
      const tr::BuildResult global = tr::build_model(net, options_for(chip, false), "g.json");
      EXPECT_TRUE(global.description.groups.empty());
      EXPECT_EQ(tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y").data,
                tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data);
    }
}

// The functions' coefficient tables and work buffers live in the step's
// scratch, under the slice check.
TEST(ExpressionGroups, FunctionsRunInAGroup) {
  REQUIRE_GROUP_FIXTURES();
  const char *formula = "sigmoid(v) * v + log(abs(v) + 1) - exp(v * 0.25) * tanh(v) / sqrt(v * v + 1)";
  for (const std::string dtype : {"fp32", "bf16"})
    for (const std::string chip : {"bm1684x", "bm1688"}) {
      SCOPED_TRACE(chip + " " + dtype);
      const tr::NetDescription net = tr::parse_net(chain(dtype, formula, {2, 8, 40, 32}), "f.json");
      tr::BuildOptions grouped_options = options_for(chip, true), global_options = options_for(chip, false);
      grouped_options.group_local_memory = global_options.group_local_memory = 0;
      const tr::BuildResult grouped = tr::build_model(net, grouped_options, "f.json");
      ASSERT_EQ(grouped.description.groups.size(), 1u) << grouped.description.layer_groups.dump();
      EXPECT_EQ(grouped.description.groups[0].last - grouped.description.groups[0].first, 2);
      const tr::BuildResult global = tr::build_model(net, global_options, "f.json");
      EXPECT_EQ(tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y").data,
                tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data);
    }
}

TEST(ExpressionGroups, ATwoInputExpressionStaysOutAndTheBoundarySaysWhy) {
  REQUIRE_GROUP_FIXTURES();
  Json net = chain("fp32", "v * v");
  net["layers"][1] = layer("builtin.expression", {{"formula", "v * w"}}, {"a", "x"}, "b");
  const tr::BuildResult built = tr::build_model(tr::parse_net(net, "g2.json"), options_for("bm1684x", true), "g2.json");
  for (const tr::ModelGroup &g : built.description.groups) EXPECT_TRUE(g.first > 1 || g.last < 1);
  EXPECT_CONTAINS(built.description.layer_groups.dump(),
                  "(builtin.expression) has 2 inputs; groups hold single-input layers");
}

}  // namespace
