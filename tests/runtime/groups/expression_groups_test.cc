// expression_groups_test: a builtin.expression layer of one input joins a
// layer group as a local layer (runtime/expression/, docs/expressions.md):
// between two custom ops with local versions (ewdouble, absadd; the
// layer-group fixtures) the three layers make one group, sliced along H in
// little local memory, whose run equals the ungrouped model's bit for bit
// on both chips and in every float dtype, under the group's slice check.
// Expressions of several inputs group too: their other inputs (net inputs,
// weights, earlier tensors; broadcast or not) are side inputs loaded by the
// group, and random chains of them equal the ungrouped run bit for bit;
// x*x + y*z then absadd is one group, estimated and run faster; what cannot
// be sliced like the group stays out with a reason.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "support/group_fixtures.h"
#include "support/test_support.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;
using tr::Shape;

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

// A second input from outside the group (here the net input, which the
// group's first layer reads too) is a side input: loaded per slice.
TEST(ExpressionGroups, ATwoInputExpressionJoinsAGroupWithItsSideInput) {
  REQUIRE_GROUP_FIXTURES();
  Json net = chain("fp32", "v * v");
  net["layers"][1] = layer("builtin.expression", {{"formula", "v * w"}}, {"a", "x"}, "b");
  const tr::NetDescription parsed = tr::parse_net(net, "g2.json");
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult grouped = tr::build_model(parsed, options_for(chip, true), "g2.json");
    const tr::ModelDescription &d = grouped.description;
    ASSERT_EQ(d.groups.size(), 1u) << d.layer_groups.dump();
    EXPECT_EQ(d.groups[0].first, 0);
    EXPECT_EQ(d.groups[0].last, 2);
    EXPECT_GT(d.groups[0].h_slices, 1);
    const nlohmann::json sides = d.layer_groups["groups"][0]["side_inputs"];
    ASSERT_EQ(sides.size(), 1u) << d.layer_groups.dump();
    EXPECT_EQ(sides[0]["tensor"], "x");
    EXPECT_EQ(sides[0]["loaded"], "per slice");
    const tr::BuildResult global = tr::build_model(parsed, options_for(chip, false), "g2.json");
    EXPECT_EQ(tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y").data,
              tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data);
  }
}

// On both chips: `net` builds into one group of its layers 0..last, whose
// run equals the ungrouped build's bit for bit.
void expect_one_group_as_global(const tr::NetDescription &net, int last) {
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult grouped = tr::build_model(net, options_for(chip, true), "g.json");
    const tr::ModelDescription &d = grouped.description;
    ASSERT_EQ(d.groups.size(), 1u) << d.layer_groups.dump();
    EXPECT_EQ(d.groups[0].first, 0);
    EXPECT_EQ(d.groups[0].last, last);
    const tr::BuildResult global = tr::build_model(net, options_for(chip, false), "g.json");
    EXPECT_EQ(tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y").data,
              tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data);
  }
}

// builtin.add / sub / mul / relu (TpuLang's built-ins) join groups as
// their expression form: ewdouble, x0 + 0.75, 1.5 - x0, x0 * x (the net
// input as a side input), relu, absadd make one group whose run equals the
// ungrouped one (each layer's global kernel) bit for bit.
TEST(ExpressionGroups, ElementwiseBuiltinLayersJoinAGroupAsExpressions) {
  REQUIRE_GROUP_FIXTURES();
  for (const std::string dtype : {"fp32", "fp16", "bf16"}) {
    Json net = chain(dtype, "v");
    net["layers"] = {layer("ewdouble", Json::object(), {"x"}, "a"),
                     layer("builtin.add", {{"scalar", 0.75}}, {"a"}, "b"),
                     layer("builtin.sub", {{"scalar", 1.5}, {"scalar_first", 1}}, {"b"}, "c"),
                     layer("builtin.mul", Json::object(), {"c", "x"}, "d"),
                     layer("builtin.relu", Json::object(), {"d"}, "e"),
                     layer("absadd", {{"b", 0.5}}, {"e"}, "y")};
    SCOPED_TRACE(dtype);
    expect_one_group_as_global(tr::parse_net(net, "g3.json"), 5);
  }
}

// builtin.cast joins a group with a local version of its own: ewdouble in
// one float type, the cast, absadd in the other make one group whose run
// equals the ungrouped one bit for bit (the same nearest-even conversion).
TEST(ExpressionGroups, ACastJoinsAGroupBetweenTwoFloatTypes) {
  REQUIRE_GROUP_FIXTURES();
  for (const auto &[from, to] : std::vector<std::pair<std::string, std::string>>{
           {"fp32", "fp16"}, {"fp16", "fp32"}, {"fp32", "bf16"}}) {
    Json net = chain(from, "v");
    net["layers"] = {layer("ewdouble", Json::object(), {"x"}, "a"), layer("builtin.cast", {{"to", to}}, {"a"}, "b"),
                     layer("absadd", {{"b", 0.5}}, {"b"}, "y")};
    SCOPED_TRACE(from + " to " + to);
    expect_one_group_as_global(tr::parse_net(net, "g4.json"), 2);
  }
}

Json input(const std::string &name, const Shape &shape, const std::string &dtype) {
  return {{"name", name}, {"shape", shape}, {"dtype", dtype}};
}

// Constant values of a weight, as the net's base64 fp32 data.
Json weight(const std::string &name, const Shape &shape, const std::string &dtype, test::Seeded &seeded) {
  std::size_t count = 1;
  for (int d : shape) count *= std::size_t(d);
  std::vector<float> values(count);
  for (float &v : values) v = float(seeded.uniform(-64, 64)) / 16;
  const auto *bytes = reinterpret_cast<const uint8_t *>(values.data());
  return {{"name", name},
          {"shape", shape},
          {"dtype", dtype},
          {"data", tr::encode_base64({bytes, values.size() * sizeof(float)})},
          {"data_dtype", "fp32"}};
}

// A shape that broadcasts to `out`: each dim kept or 1, leading dims dropped now and then.
Shape broadcast_shape(const Shape &out, test::Seeded &seeded) {
  Shape s;
  for (int d : out) s.push_back(seeded.uniform(0, 1) ? d : 1);
  while (s.size() > 1 && s.front() == 1 && seeded.uniform(0, 1)) s.erase(s.begin());
  return s;
}

// Random chains of single-input layers (custom ops with local versions,
// one with a halo) and builtin.expression layers of two or three inputs
// whose side inputs are net inputs, weights or tensors made before: the
// grouped run equals the ungrouped one bit for bit, on both chips in every
// float dtype, in local memories from tight to whole.
TEST(ExpressionGroups, ChainsWithSideInputsRunGroupedAsTheyRunUngrouped) {
  REQUIRE_GROUP_FIXTURES();
  test::Seeded seeded;
  const char *dtypes[] = {"fp32", "fp16", "bf16"};
  const char *formulas[] = {"v * a + b", "max(v, a) - v * 0.5", "where(v > a, v, a * 0.25) + b",
                            "v / (abs(a) + 1)", "v * v + a * b", "min(a, b) * v - a"};
  const uint32_t memories[] = {0, 4096, 8192, 16384};
  int grouped_sides = 0, once = 0, per_slice = 0, w_sliced = 0;
  for (int iteration = 0; iteration < test::rounds(16); ++iteration) {
    const std::string chip = iteration % 2 ? "bm1688" : "bm1684x";
    const std::string dtype = dtypes[iteration % 3];
    // Every fourth chain has one wide row: only W slices can cut it.
    const bool wide = iteration % 4 == 3;
    Shape shape = wide ? Shape{seeded.uniform(2, 4), seeded.uniform(32, 70), 1, seeded.uniform(400, 1200)}
                       : Shape{seeded.uniform(1, 3), seeded.uniform(1, 70), seeded.uniform(1, 40), seeded.uniform(1, 40)};
    if (!wide && iteration % 4 == 1) shape.resize(std::size_t(seeded.uniform(2, 3)));  // fewer dims now and then
    Json net = {{"name", "sides"}, {"inputs", {input("x", shape, dtype)}}, {"weights", Json::array()},
                {"layers", Json::array()}};
    std::vector<std::string> earlier = {"x"};
    std::string current = "x";
    const int length = seeded.uniform(2, 6);
    for (int i = 0; i < length; ++i) {
      const std::string next = i + 1 == length ? "y" : fmt::format("t{}", i);
      const int kind = seeded.uniform(wide ? 1 : 0, 5);
      if (kind < 3) {
        const char *ops[] = {"absadd", "ewdouble", "vsum3"};
        Json params = kind == 0 ? Json{{"b", 0.25 * seeded.uniform(-4, 4)}} : Json::object();
        net["layers"].push_back(layer(ops[kind], params, {current}, next));
      } else {
        const std::string formula = formulas[seeded.uniform(0, 5)];
        std::vector<std::string> ins = {current};
        for (const std::string name : {"a", "b"}) {
          if (formula.find(name) == std::string::npos) continue;
          const std::string side = fmt::format("{}{}", name, i);
          switch (seeded.uniform(0, 2)) {
            case 0: net["inputs"].push_back(input(side, broadcast_shape(shape, seeded), dtype)); break;
            case 1: net["weights"].push_back(weight(side, broadcast_shape(shape, seeded), dtype, seeded)); break;
            default: ins.push_back(earlier[std::size_t(seeded.uniform(0, int(earlier.size()) - 1))]); continue;
          }
          ins.push_back(side);
        }
        const Json names = ins.size() == 3 ? Json{"v", "a", "b"} : Json{"v", "a"};
        net["layers"].push_back(layer("builtin.expression", {{"formula", formula}, {"names", names}}, ins, next));
      }
      earlier.push_back(next);
      current = next;
    }
    net["outputs"] = {"y"};
    SCOPED_TRACE(fmt::format("iteration {}: {} {}: {}", iteration, chip, dtype, net.dump()));
    tr::BuildOptions grouped_options = options_for(chip, true), global_options = options_for(chip, false);
    grouped_options.group_local_memory = wide ? 8192 : memories[seeded.uniform(0, 3)];
    grouped_options.seed = global_options.seed = seeded.seed() + uint64_t(iteration);
    const tr::NetDescription parsed = tr::parse_net(net, "sides.json");
    tr::BuildResult grouped, global;
    try {
      grouped = tr::build_model(parsed, grouped_options, "sides.json");
      global = tr::build_model(parsed, global_options, "sides.json");
    } catch (const tr::Error &e) {
      FAIL() << e.what();
    }
    ASSERT_EQ(tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y").data,
              tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data);
    for (const nlohmann::json &g : grouped.description.layer_groups["groups"])
      for (const nlohmann::json &side : g.value("side_inputs", nlohmann::json::array())) {
        ++grouped_sides;
        w_sliced += g["w_slices"].get<int>() > 1;
        once += side["loaded"] == "once";
        per_slice += side["loaded"] == "per slice";
      }
  }
  std::printf("side inputs in groups: %d (%d loaded once, %d per slice, %d in groups split along W)\n", grouped_sides,
              once, per_slice, w_sliced);
  // Over the full rounds (the sanitizer build runs four) the chains reached
  // every kind of side input.
  if (test::rounds(16) == 16) {
    EXPECT_GT(once, 0);
    EXPECT_GT(per_slice, 0);
    EXPECT_GT(w_sliced, 0);
  }
}

// The issue's example: x*x + y*z followed by an element-wise op is one
// group (tpu_model info shows it, with its side inputs), estimated faster
// than the two layers run globally, and its run is faster too.
TEST(ExpressionGroups, TheIssuesThreeInputExampleJoinsAGroupAndIsEstimatedFaster) {
  REQUIRE_GROUP_FIXTURES();
  const Shape shape = {2, 32, 64, 64};
  const Json net = {{"name", "xyz"},
                    {"inputs", {input("x", shape, "fp32"), input("y", shape, "fp32"), input("z", shape, "fp32")}},
                    {"layers",
                     {layer("builtin.expression", {{"formula", "x*x + y*z"}}, {"x", "y", "z"}, "e"),
                      layer("absadd", {{"b", 0.5}}, {"e"}, "out")}},
                    {"outputs", {"out"}}};
  const tr::NetDescription parsed = tr::parse_net(net, "xyz.json");
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    tr::BuildOptions grouped_options = options_for(chip, true), global_options = options_for(chip, false);
    grouped_options.group_local_memory = global_options.group_local_memory = 0;
    const tr::BuildResult grouped = tr::build_model(parsed, grouped_options, "xyz.json");
    const tr::ModelDescription &d = grouped.description;
    ASSERT_EQ(d.groups.size(), 1u) << d.layer_groups.dump();
    EXPECT_EQ(d.groups[0].first, 0);
    EXPECT_EQ(d.groups[0].last, 1);
    const double planned = d.layer_groups["planned_us"].get<double>(), global_us = d.layer_groups["global_us"].get<double>();
    EXPECT_LT(planned, global_us);
    EXPECT_DOUBLE_EQ(d.groups[0].estimate_us, planned);

    const std::string path = (std::filesystem::temp_directory_path() / ("xyz_" + chip + ".tpumodel")).string();
    tr::write_model_file(path, grouped.model);
    tr::ModelFileLayout layout;
    const tr::ModelFile read = tr::read_model_file(path, &layout);
    const std::string info = tr::model_info_text(read, layout, path);
    std::filesystem::remove(path);
    for (const char *part : {"group 0: layers 0..1 ('expression_0'..'absadd_1')", "side inputs: 'y' of 'expression_0'",
                             "'z' of 'expression_0'", "static (layer group 0)"})
      EXPECT_NE(info.find(part), std::string::npos) << part << " not in:\n" << info;

    const tr::BuildResult global = tr::build_model(parsed, global_options, "xyz.json");
    const tr::RunResult grouped_run = tr::run_model(read, grouped.reference_inputs, "grouped");
    const tr::RunResult global_run = tr::run_model(global.model, grouped.reference_inputs, "global");
    EXPECT_EQ(grouped_run.outputs.at("out").data, global_run.outputs.at("out").data);
    const auto total = [](const tr::RunResult &r) {
      double us = 0;
      for (const tr::LayerStats &l : r.layers) us += l.total_us;
      return us;
    };
    EXPECT_LT(total(grouped_run), total(global_run));
    std::printf("%s: x*x + y*z then absadd: estimated %.2f us grouped against %.2f us global; run %.2f us against "
                "%.2f us\n",
                chip.c_str(), planned, global_us, total(grouped_run), total(global_run));
  }
}

// What cannot be sliced like the group keeps its layer out, and the plan
// says which layer and which input.
TEST(ExpressionGroups, SideInputsThatCannotBeSlicedKeepTheLayerOutWithAReason) {
  REQUIRE_GROUP_FIXTURES();
  // No input of the output's shape: nothing to slice the layer by.
  const Json outer = {
      {"name", "outer"},
      {"inputs", {input("p", {2, 1, 24, 16}, "fp32"), input("q", {1, 6, 1, 1}, "fp32")}},
      {"layers",
       {layer("absadd", {{"b", 0.5}}, {"p"}, "a"), layer("builtin.expression", {{"formula", "a * q"}}, {"a", "q"}, "b"),
        layer("absadd", {{"b", 0.5}}, {"b"}, "y")}},
      {"outputs", {"y"}}};
  const tr::BuildResult built = tr::build_model(tr::parse_net(outer, "o.json"), options_for("bm1684x", true), "o.json");
  for (const tr::ModelGroup &g : built.description.groups) EXPECT_TRUE(g.first > 1 || g.last < 1);
  EXPECT_CONTAINS(built.description.layer_groups.dump(),
                  "layer 'expression_1' (builtin.expression): no input has the output's shape [2,6,24,16] "
                  "(input 'a' is [2,1,24,16])");
  // The previous layer's output only as a broadcast input: the group would
  // have to hold it as a side input made inside the group.
  const Json inside = {
      {"name", "inside"},
      {"inputs", {input("x", {2, 6, 24, 16}, "fp32"), input("s", {1, 6, 1, 1}, "fp32")}},
      {"layers",
       {layer("absadd", {{"b", 0.5}}, {"s"}, "t"), layer("builtin.expression", {{"formula", "x - t"}}, {"x", "t"}, "b"),
        layer("absadd", {{"b", 0.5}}, {"b"}, "y")}},
      {"outputs", {"y"}}};
  const tr::BuildResult split = tr::build_model(tr::parse_net(inside, "i.json"), options_for("bm1684x", true), "i.json");
  EXPECT_CONTAINS(split.description.layer_groups.dump(),
                  "layer 'expression_1' takes layer 'absadd_0''s output 't' [1,6,1,1] only as a broadcast side "
                  "input");
  const tr::BuildResult global = tr::build_model(tr::parse_net(inside, "i.json"), options_for("bm1684x", false), "i.json");
  EXPECT_EQ(tr::run_model(split.model, split.reference_inputs, "grouped").outputs.at("y").data,
            tr::run_model(global.model, split.reference_inputs, "global").outputs.at("y").data);
}

}  // namespace
