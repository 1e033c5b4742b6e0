// inplace_model_test: ops that update an input in place (metadata_<op>'s
// num_inplace_inputs, tpu_op_metadata.h) in models, on the layer-group
// fixture set (tests/runtime/groups/fixtures, TPU_GROUP_FIXTURES_DIR):
//   - the sample scaleinplace takes its input's memory: the plan is smaller
//     by the tensor's size than with scalecopy (the same kernels, no claim),
//     tpu_model info says so, and the runs match the plugin reference bit
//     for bit on both chips, with and without layer groups;
//   - a later reader of the updated tensor is moved before the update; what
//     cannot be ordered, or would lose values, is refused by name;
//   - clobber writes its input without declaring it: the build (static) and
//     the run (dynamic) name the layer, the input and the first changed byte,
//     and so does the op tester.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

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
  return test::group_build_options(chip, groups, 5);
}

constexpr uint64_t kTensorBytes = 2 * 3 * 40 * 24 * 4;  // x, a and y below: fp32 [2, 3, 40, 24]

// x -> absadd -> a -> <scale_op> (a *= -1.5) -> y
Json scale_chain(const std::string &scale_op) {
  return {{"name", "inplace"},
          {"inputs", {{{"name", "x"}, {"shape", {2, 3, 40, 24}}, {"dtype", "fp32"}}}},
          {"layers",
           {test::net_layer("abs", "absadd", {{"b", 0.5}}, {"x"}, {"a"}),
            test::net_layer("scale", scale_op, {{"s", -1.5}}, {"a"}, {"y"})}},
          {"outputs", {"y"}}};
}

std::string info_of(const tr::ModelFile &model) {
  const std::string path = (std::filesystem::temp_directory_path() / "inplace_model_test.tpumodel").string();
  tr::write_model_file(path, model);
  tr::ModelFileLayout layout;
  const tr::ModelFile read = tr::read_model_file(path, &layout);
  std::filesystem::remove(path);
  return tr::model_info_text(read, layout, path);
}

std::string build_error(const Json &net, const std::string &chip = "bm1684x") {
  try {
    tr::build_model(tr::parse_net(net, "net.json"), options_for(chip, false), "net.json");
  } catch (const tr::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "the build accepted the net";
  return "";
}

TEST(InPlaceModels, TheClaimSavesTheTensorAndInfoShowsIt) {
  REQUIRE_GROUP_FIXTURES();
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult inplace =
        tr::build_model(tr::parse_net(scale_chain("scaleinplace"), "a.json"), options_for(chip, false), "a.json");
    const tr::BuildResult copy =
        tr::build_model(tr::parse_net(scale_chain("scalecopy"), "b.json"), options_for(chip, false), "b.json");
    // x lives for the whole run; a and y overlap at the scale layer, unless
    // y is a (kTensorBytes is a multiple of the plan's 512-byte alignment).
    EXPECT_EQ(copy.description.memory_size, 3 * kTensorBytes);
    EXPECT_EQ(inplace.description.memory_size, 2 * kTensorBytes);
    EXPECT_EQ(inplace.description.memory_in_place_saved, kTensorBytes);
    EXPECT_EQ(inplace.description.find_tensor("y")->offset, inplace.description.find_tensor("a")->offset);
    const std::string info = info_of(inplace.model);
    EXPECT_CONTAINS(info, fmt::format("{} bytes saved by in-place updates", kTensorBytes));
    EXPECT_CONTAINS(info, "'y' shares the memory of 'a' (updated in place)");
    EXPECT_CONTAINS(info, "in-place inputs 1");
    EXPECT_EQ(info_of(copy.model).find("saved by in-place"), std::string::npos);
    // Both compute (|x| + 0.5) * -1.5 as the plugins' references do.
    const auto &expected = inplace.reference_outputs.at("y").data;
    EXPECT_EQ(tr::run_model(inplace.model, inplace.reference_inputs, "inplace").outputs.at("y").data, expected);
    EXPECT_EQ(tr::run_model(copy.model, inplace.reference_inputs, "copy").outputs.at("y").data, expected);
  }
}

// x -> abs -> a; a -> scale (in place) -> y; a -> ceil -> z. ceil reads a
// after scale in the net: it must run before, or it would see a scaled.
Json late_reader() {
  return {{"name", "late"},
          {"inputs", {{{"name", "x"}, {"shape", {2, 3, 40, 24}}, {"dtype", "fp32"}}}},
          {"layers",
           {test::net_layer("abs", "absadd", {{"b", 1.0}}, {"x"}, {"a"}),
            test::net_layer("scale", "scaleinplace", {{"s", 2.0}}, {"a"}, {"y"}),
            test::net_layer("ceil", "ceiladd", {{"b", 0.25}}, {"a"}, {"z"})}},
          {"outputs", {"y", "z"}}};
}

TEST(InPlaceModels, AReaderOfTheUpdatedTensorRunsBeforeTheUpdate) {
  REQUIRE_GROUP_FIXTURES();
  for (const bool groups : {false, true})
    for (const std::string chip : {"bm1684x", "bm1688"}) {
      SCOPED_TRACE(chip + (groups ? " grouped" : " global"));
      const tr::BuildResult built =
          tr::build_model(tr::parse_net(late_reader(), "late.json"), options_for(chip, groups), "late.json");
      const tr::ModelDescription &d = built.description;
      ASSERT_EQ(d.layers.size(), 3u);
      EXPECT_EQ(d.layers[0].name, "abs");
      EXPECT_EQ(d.layers[1].name, "ceil");
      EXPECT_EQ(d.layers[2].name, "scale");
      bool warned = false;
      for (const std::string &w : built.warnings) warned = warned || w.find("('ceil', op ceiladd) runs as layer 1") != std::string::npos;
      EXPECT_TRUE(warned) << fmt::format("{}", fmt::join(built.warnings, "\n"));
      // Values: z from a before the scale, y = a * 2; against the host
      // reference, which runs the layers in the same order on separate arrays.
      const auto x = built.reference_inputs.at("x").values<float>();
      const auto z = built.reference_outputs.at("z").values<float>();
      const auto y = built.reference_outputs.at("y").values<float>();
      for (std::size_t i = 0; i < x.size(); i += 97) {
        const float a = std::fabs(x[i]) + 1.0f;
        EXPECT_EQ(z[i], std::ceil(a) + 0.25f) << i;
        EXPECT_EQ(y[i], a * 2.0f) << i;
      }
      const tr::RunResult run = tr::run_model(built.model, built.reference_inputs, "late");
      EXPECT_EQ(run.outputs.at("y").data, built.reference_outputs.at("y").data);
      EXPECT_EQ(run.outputs.at("z").data, built.reference_outputs.at("z").data);
    }
}

TEST(InPlaceModels, ACycleIsRefusedByName) {
  REQUIRE_GROUP_FIXTURES();
  Json net = late_reader();
  net["layers"][2] = test::net_layer("sum", "builtin.add", Json::object(), {"a", "y"}, {"z"});
  const std::string e = build_error(net);
  EXPECT_CONTAINS(e, "cannot be ordered so that each in-place update runs after every other reader");
  EXPECT_CONTAINS(e, "'sum' must run before 'scale' ('sum' reads 'a' before 'scale' updates it in place)");
  EXPECT_CONTAINS(e, "'scale' must run before 'sum' ('sum' reads 'y', which 'scale' writes)");
}

TEST(InPlaceModels, WhatWouldLoseValuesIsRefusedByName) {
  REQUIRE_GROUP_FIXTURES();
  // a is a net output: the update would overwrite it.
  Json output = scale_chain("scaleinplace");
  output["outputs"] = {"a", "y"};
  EXPECT_CONTAINS(build_error(output), "layer 1 ('scale', op scaleinplace): op 'scaleinplace' updates its input 0 "
                                       "('a') in place (metadata_scaleinplace: output 0 takes its memory), but it is "
                                       "a net output");
  // Two layers updating a.
  Json twice = scale_chain("scaleinplace");
  twice["layers"].push_back(test::net_layer("scale2", "scaleinplace", {{"s", 2.0}}, {"a"}, {"y2"}));
  twice["outputs"] = {"y", "y2"};
  EXPECT_CONTAINS(build_error(twice), "layer 1 ('scale', op scaleinplace) updates it in place too");
  // An in-place output of another dtype than its input.
  Json dtype = scale_chain("scaleinplace");
  dtype["layers"][1]["out_dtypes"] = {"fp16"};
  EXPECT_CONTAINS(build_error(dtype), "op 'scaleinplace' updates input 0 ('a') in place (metadata_scaleinplace), but "
                                      "output 0 ('y') is [2,3,40,24] fp16 and the input [2,3,40,24] fp32");
}

TEST(InPlaceModels, AWeightIsRefusedAndANetInputMayBeUpdated) {
  REQUIRE_GROUP_FIXTURES();
  Json weight = {{"name", "w"},
                 {"inputs", {{{"name", "x"}, {"shape", {4}}, {"dtype", "fp32"}}}},
                 {"weights", {{{"name", "w"}, {"shape", {4}}, {"dtype", "fp32"}, {"data", "AAAAAAAAAAAAAAAAAAAAAA=="}}}},
                 {"layers", {test::net_layer("scale", "scaleinplace", {{"s", 2.0}}, {"w"}, {"y"}),
                             test::net_layer("sum", "builtin.add", Json::object(), {"x", "y"}, {"z"})}},
                 {"outputs", {"z"}}};
  EXPECT_CONTAINS(build_error(weight), "('w') in place (metadata_scaleinplace: output 0 takes its memory), but it is "
                                       "a weight");
  // The net input x updated in place: the run copies the caller's arrays in,
  // so two runs on the same arrays give the same result.
  Json input = scale_chain("scaleinplace");
  input["layers"] = {test::net_layer("scale", "scaleinplace", {{"s", -1.5}}, {"x"}, {"y"})};
  const tr::BuildResult built = tr::build_model(tr::parse_net(input, "in.json"), options_for("bm1688", false), "in.json");
  EXPECT_EQ(built.description.memory_size, kTensorBytes);
  const auto first = tr::run_model(built.model, built.reference_inputs, "in").outputs.at("y").data;
  EXPECT_EQ(first, built.reference_outputs.at("y").data);
  EXPECT_EQ(tr::run_model(built.model, built.reference_inputs, "in").outputs.at("y").data, first);
}

// Every claim in one net: ewdouble twice (stateless: merged), a group of
// element-wise layers, then an in-place update of the group's output.
Json all_claims() {
  return {{"name", "all"},
          {"inputs", {{{"name", "x"}, {"shape", {2, 3, 40, 24}}, {"dtype", "fp32"}}}},
          {"layers",
           {test::net_layer("d1", "ewdouble", Json::object(), {"x"}, {"a1"}),
            test::net_layer("d2", "ewdouble", Json::object(), {"x"}, {"a2"}),
            test::net_layer("abs", "absadd", {{"b", 0.5}}, {"a2"}, {"b"}),
            test::net_layer("ceil", "ceiladd", {{"b", 0.25}}, {"b"}, {"c"}),
            test::net_layer("scale", "scaleinplace", {{"s", -0.75}}, {"c"}, {"y"})}},
          {"outputs", {"y"}}};
}

TEST(InPlaceModels, GroupedAndGlobalRunsOfEveryClaimMatchTheReference) {
  REQUIRE_GROUP_FIXTURES();
  const tr::NetDescription net = tr::parse_net(all_claims(), "all.json");
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult grouped = tr::build_model(net, options_for(chip, true), "all.json");
    const tr::ModelDescription &d = grouped.description;
    ASSERT_EQ(d.layers.size(), 4u);  // d2 merged into d1
    ASSERT_EQ(d.groups.size(), 1u) << d.layer_groups.dump();
    EXPECT_EQ(d.groups[0].first, 0);
    EXPECT_EQ(d.groups[0].last, 2);
    EXPECT_LT(d.layers[3].group, 0);  // the in-place layer runs global
    EXPECT_EQ(d.find_tensor("y")->offset, d.find_tensor("c")->offset);
    const auto &expected = grouped.reference_outputs.at("y").data;
    EXPECT_EQ(tr::run_model(grouped.model, grouped.reference_inputs, "grouped").outputs.at("y").data, expected);
    const tr::BuildResult global = tr::build_model(net, options_for(chip, false), "all.json");
    EXPECT_TRUE(global.description.groups.empty());
    EXPECT_EQ(tr::run_model(global.model, grouped.reference_inputs, "global").outputs.at("y").data, expected);
  }
}

Json clobber_net(bool dynamic) {
  Json l = test::net_layer("clob", "clobber", Json::object(), {"x"}, {"y"});
  if (dynamic) l["dynamic"] = true;
  return {{"name", "clobber"},
          {"inputs", {{{"name", "x"}, {"shape", {1, 4, 2, 8}}, {"dtype", "fp32"}}}},
          {"layers", {l}},
          {"outputs", {"y"}}};
}

TEST(InPlaceModels, AnInputWrittenWithoutTheClaimIsNamedAtBuildAndRun) {
  REQUIRE_GROUP_FIXTURES();
  // At build the inputs hold zeros; clobber writes 1.0f (bytes 00 00 80 3f):
  // the first changed byte is byte 2 of element 0.
  EXPECT_CONTAINS(build_error(clobber_net(false)),
                  "layer 0 ('clob', op clobber): input 0 ('x') changed although the op does not declare it in place "
                  "(metadata num_inplace_inputs): first changed byte at offset 2 of 256 (0x00 -> 0x80)");
  // A dynamic layer is caught when the model runs: x = 2.0f (00 00 00 40).
  const tr::BuildResult built =
      tr::build_model(tr::parse_net(clobber_net(true), "c.json"), options_for("bm1684x", false), "c.json");
  tr::npz::Arrays inputs;
  inputs["x"] = tr::npz::Array::from<float>({1, 4, 2, 8}, std::vector<float>(64, 2.0f));
  try {
    tr::run_model(built.model, inputs, "c.tpumodel");
    ADD_FAILURE() << "the run accepted clobber's write";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "c.tpumodel: layer 0 ('clob', op clobber, dynamic): input 0 ('x') changed although the "
                              "op does not declare it in place (metadata num_inplace_inputs): first changed byte at "
                              "offset 2 of 256 (0x00 -> 0x80)");
  }
}

TEST(InPlaceModels, TheOpTesterNamesAnInputWrittenWithoutTheClaim) {
  REQUIRE_GROUP_FIXTURES();
  tr::OpTester t;
  t.op("clobber").chip("bm1688").libraries(test::group_fixture_libraries("bm1688")).input_shape({1, 4, 2, 8}).global_only();
  t.input_values({std::vector<float>(64, 2.0f)});
  const tr::OpReport report = t.run();
  EXPECT_FALSE(report.passed);
  ASSERT_FALSE(report.cases.empty());
  EXPECT_EQ(report.cases[0].name, "global backend");
  EXPECT_CONTAINS(report.cases[0].failure, "op 'clobber': input 0 changed although the op does not declare it in "
                                           "place (metadata num_inplace_inputs): first changed byte at offset 2 of "
                                           "256 (0x00 -> 0x80)");
}

}  // namespace
