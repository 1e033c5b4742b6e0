// pipeline_model_test: AutoPipe on models (tpu_runtime/pipeline.h)
//   - a model's layers as planner figures: liveness and boundary bytes of a
//     hand-checked net;
//   - the plan stored in the model file, read back, printed by info;
//     models without one still read, and are refused by run_pipeline;
//   - refusals: a batch the micro-batches do not divide, a stage memory too
//     small, a micro-batch count other than the model's;
//   - property: random chains of sample and built-in layers, both chips,
//     pipelined over micro-batches with stage k on core k of one emulated
//     multi-core run (more stages than the chip's cores: emulated cores),
//     give the unpipelined run's outputs bit for bit, and every stage of a
//     micro-batch starts after the stage before it ended;
//   - the emulated run interleaves the stages; a dynamic layer, or a
//     micro-batch model whose tensors share bytes, falls back to the
//     computed schedule and says so;
//   - tpu_model build --pipeline / info / run.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/net_json.h"
#include "support/sample_ops.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "tpu_runtime/digest.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/pipeline.h"

#ifndef TPU_MODEL_TOOL
#define TPU_MODEL_TOOL ""
#endif

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

// A weight of `count` fp32 values (x - 0.5) / 4 for x uniform in [0, 1).
Json weight(const std::string &name, const std::vector<int> &shape, test::Seeded &s) {
  int count = 1;
  for (int d : shape) count *= d;
  std::vector<uint8_t> bytes(std::size_t(count) * 4);
  for (int i = 0; i < count; ++i) {
    const float v = float(s.uniform(0, 1000) - 500) / 4000.0f;
    std::memcpy(&bytes[std::size_t(i) * 4], &v, 4);
  }
  return {{"name", name}, {"shape", shape}, {"dtype", "fp32"}, {"data", tr::encode_base64(bytes)}};
}

tr::BuildOptions options_for(const std::string &chip, bool groups) {
  tr::BuildOptions o;
  o.chip = chip;
  o.libraries = test::sample_ops_libraries(chip);
  o.reference = true;
  o.layer_groups = groups;
  return o;
}

// x -> relu -> r; (r, x) -> add -> s; s -> conv2d(w) -> t. x is 2x4x8x8 fp32.
Json three_layer_net(test::Seeded &s) {
  return {{"name", "three"},
          {"inputs", {{{"name", "x"}, {"shape", {2, 4, 8, 8}}, {"dtype", "fp32"}}}},
          {"weights", {weight("w", {4, 4, 3, 3}, s)}},
          {"layers",
           {test::net_layer("r", "builtin.relu", Json::object(), {"x"}, {"r"}),
            test::net_layer("s", "builtin.add", Json::object(), {"r", "x"}, {"s"}),
            test::net_layer("t", "builtin.conv2d", {{"pads", {1, 1, 1, 1}}}, {"s", "w"}, {"t"})}},
          {"outputs", {"t"}}};
}

TEST(PipelineModel, LayersAsPlannerFigures) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  const tr::BuildResult built =
      tr::build_model(tr::parse_net(three_layer_net(s), "three.json"), options_for("bm1684x", false), "three.json");
  const std::vector<tr::PipelineLayer> layers = tr::pipeline_layers(built.model, built.description);
  ASSERT_EQ(layers.size(), 3u);
  constexpr uint64_t kTensor = 2 * 4 * 8 * 8 * 4;  // every activation: 2048 bytes
  // Live: x and r at r; x, r and s at s; s and t at t.
  EXPECT_EQ(layers[0].live_bytes, 2 * kTensor);
  EXPECT_EQ(layers[1].live_bytes, 3 * kTensor);
  EXPECT_EQ(layers[2].live_bytes, 2 * kTensor);
  // Crossing a cut after r: x (read again by s) and r; after s: s.
  EXPECT_EQ(layers[0].cut_bytes, 2 * kTensor);
  EXPECT_EQ(layers[1].cut_bytes, kTensor);
  EXPECT_EQ(layers[2].cut_bytes, 0u);
  EXPECT_EQ(layers[0].weight_bytes, 0u);
  EXPECT_EQ(layers[2].weight_bytes, 4u * 4 * 3 * 3 * 4);
  for (const tr::PipelineLayer &l : layers) {
    EXPECT_GT(l.time_us, 0) << l.name;
    EXPECT_TRUE(l.cut_after) << l.name;
  }
}

std::string info_of(const tr::ModelFile &model, const test::TempDir &dir) {
  const std::string path = dir.file("m.tpumodel");
  tr::write_model_file(path, model);
  return tr::pipeline_info_text(tr::read_model_file(path), path);
}

TEST(PipelineModel, StoresThePlanAndPrintsIt) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  test::TempDir dir;
  const tr::NetDescription net = tr::parse_net(three_layer_net(s), "three.json");
  const tr::BuildOptions options = options_for("bm1688", false);
  tr::BuildResult built = tr::build_model(net, options, "three.json");
  EXPECT_EQ(info_of(built.model, dir), "");  // not pipelined: nothing printed, still readable
  EXPECT_FALSE(tr::stored_pipeline(built.model, "m"));
  try {
    tr::run_pipeline(built.model, built.reference_inputs, "m");
    ADD_FAILURE() << "ran an unpipelined model as a pipeline";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(std::string(e.what()), "m: the model is not pipelined (tpu_model build --pipeline K plans one)");
  }
  tr::add_pipeline(built, net, options, {2, 2, std::nullopt}, "three.json");
  const std::string info = info_of(built.model, dir);
  EXPECT_CONTAINS(info, "pipeline      2 stages, 2 micro-batches (planned on the micro-batch model");
  EXPECT_CONTAINS(info, "global memory (cores of one chip): 1.00 us + 1 us per 12000 bytes");
  EXPECT_CONTAINS(info, "at most 4.00 GiB per stage (chip default)");
  EXPECT_CONTAINS(info, "bottleneck  stage ");
  EXPECT_CONTAINS(info, "boundaries\n    after layer ");
  EXPECT_CONTAINS(info, "to stage ");
  const std::optional<tr::StoredPipeline> stored = tr::stored_pipeline(built.model, "m");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->micro_batches, 2);
  ASSERT_EQ(stored->plan.stages.size(), 2u);
  EXPECT_EQ(stored->plan.stages[1].last, 2);
  // The stored figures are the plan's: the micro-batch model's halves of the
  // boundary bytes (a batch of 1 instead of 2).
  const tr::PipelineStage &s0 = stored->plan.stages[0];
  EXPECT_EQ(s0.bytes_out, s0.last == 0 ? 2u * 1024 : 1024u);
  EXPECT_DOUBLE_EQ(s0.transfer_out_us, 1.0 + double(s0.bytes_out) / 12000);
  EXPECT_NE(built.model.find_section(tr::kMicroBatchModelSection), nullptr);

  // A damaged plan is refused with the key named, never used.
  const auto refusal = [&](const std::function<void(tr::ModelFile &)> &damage) {
    tr::ModelFile copy = built.model;
    damage(copy);
    try {
      tr::stored_pipeline(copy, "m");
    } catch (const tr::Error &e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_CONTAINS(refusal([](tr::ModelFile &m) { m.metadata["pipeline"]["boundaries"][0]["after"] = 99; }),
                  "m: pipeline.boundaries[0].after: 99 is not the last layer of stage 0");
  EXPECT_CONTAINS(refusal([](tr::ModelFile &m) { m.metadata["pipeline"]["stages"][1]["last"] = 5; }),
                  "m: pipeline.stages: end at layer 5, but the model has 3 layers");
  EXPECT_CONTAINS(refusal([](tr::ModelFile &m) { m.metadata["pipeline"]["stages"][0]["compute_us"] = "fast"; }),
                  "m: pipeline.stages[0].compute_us: must be a number >= 0");
  EXPECT_CONTAINS(refusal([](tr::ModelFile &m) { m.sections.pop_back(); }),
                  "m: pipeline.micro_batch_model: the section 'pipeline.micro_batch_model' is missing");
}

std::string build_refusal(const Json &net, const tr::PipelineOptions &p) {
  try {
    const tr::NetDescription parsed = tr::parse_net(net, "net.json");
    const tr::BuildOptions options = options_for("bm1684x", false);
    tr::BuildResult built = tr::build_model(parsed, options, "net.json");
    tr::add_pipeline(built, parsed, options, p, "net.json");
  } catch (const tr::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "no refusal";
  return "";
}

TEST(PipelineModel, Refusals) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  Json net = three_layer_net(s);
  net["inputs"][0]["shape"] = {3, 4, 8, 8};
  const std::string batch = build_refusal(net, {2, 2, std::nullopt});
  EXPECT_CONTAINS(batch, "net.json: input 'x' has batch 3 (axis 0 of ");
  EXPECT_CONTAINS(batch, "which 2 micro-batches do not divide");
  // Layer s alone needs x, r and s (3 x 3072 bytes) live: 9216 > 9000.
  EXPECT_CONTAINS(build_refusal(net, {2, 1, uint64_t(9000)}),
                  "pipeline: layer 1 's' alone needs 9.0 KiB (0 B of weights + 9.0 KiB of live activations), above "
                  "the stage memory limit of 8.8 KiB (9000 bytes)");
  EXPECT_CONTAINS(build_refusal(net, {4, 1, std::nullopt}), "4 stages for 3 layers");
  // An output that puts another axis first: [4,3,4,5] reshaped to [3,80].
  const Json reshaped = {
      {"name", "reshaped"},
      {"inputs", {{{"name", "x"}, {"shape", {4, 3, 4, 5}}, {"dtype", "fp32"}}}},
      {"layers", {test::net_layer("r", "builtin.reshape", {{"shape", {3, -1}}}, {"x"}, {"y"}),
                  test::net_layer("a", "builtin.relu", Json::object(), {"y"}, {"z"})}},
      {"outputs", {"z"}}};
  EXPECT_CONTAINS(build_refusal(reshaped, {2, 2, std::nullopt}),
                  "net.json: output 'z' is [3,80] for the whole batch but [3,40] for a micro-batch (1/2 of it): it "
                  "does not keep the batch along axis 0, so micro-batches cannot be joined");

  const tr::NetDescription parsed = tr::parse_net(three_layer_net(s), "three.json");
  const tr::BuildOptions options = options_for("bm1684x", false);
  tr::BuildResult built = tr::build_model(parsed, options, "three.json");
  tr::add_pipeline(built, parsed, options, {2, 2, std::nullopt}, "three.json");
  try {
    tr::run_pipeline(built.model, built.reference_inputs, "m", 4);
    ADD_FAILURE() << "ran 4 micro-batches of a model built for 2";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(std::string(e.what()), "m: --micro-batches 4: the model was built for 2 micro-batches");
    EXPECT_CONTAINS(std::string(e.what()), "tpu_model build --pipeline 2 --micro-batches 4");
  }
  // A kernel module put into the model after the build by kernel_update (the
  // net has built-in layers only, so the build embedded none): the
  // micro-batch model does not carry it.
  test::TempDir dir;
  const std::string path = dir.file("m.tpumodel");
  tr::write_model_file(path, built.model);
  tr::update_kernel_module(path, options.libraries.firmware);
  const tr::ModelFile updated = tr::read_model_file(path);
  try {
    tr::run_pipeline(updated, built.reference_inputs, "m");
    ADD_FAILURE() << "ran a micro-batch model with another kernel module";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(std::string(e.what()), "m: the micro-batch model's kernel module or host libraries are not the "
                                           "model's");
  }
}

// A random chain over x (batch 4): sample ops, element-wise built-ins with
// an earlier tensor, and 3x3 convolutions keeping the shape.
Json random_chain(test::Seeded &s) {
  const int c = s.uniform(1, 4), h = s.uniform(3, 40), w = s.uniform(3, 64);
  Json net = {{"name", "chain"},
              {"inputs", {{{"name", "x"}, {"shape", {4, c, h, w}}, {"dtype", "fp32"}}}},
              {"weights", Json::array()},
              {"layers", Json::array()}};
  std::vector<std::string> tensors = {"x"};
  const int count = s.uniform(3, 7);
  for (int i = 0; i < count; ++i) {
    const std::string out = fmt::format("t{}", i), name = fmt::format("l{}", i);
    const std::string &last = tensors.back();
    const std::string &earlier = tensors[std::size_t(s.uniform(0, int(tensors.size()) - 1))];
    switch (s.uniform(0, 5)) {
      case 0:
        net["layers"].push_back(test::net_layer(name, "absadd", {{"b", 0.25 * s.uniform(0, 4)}}, {last}, {out}));
        break;
      case 1:
        net["layers"].push_back(test::net_layer(name, "ceiladd", {{"b", 0.5}}, {last}, {out}));
        break;
      case 2:
        net["layers"].push_back(test::net_layer(name, "builtin.relu", Json::object(), {last}, {out}));
        break;
      case 3:
        net["layers"].push_back(test::net_layer(name, "builtin.add", Json::object(), {last, earlier}, {out}));
        break;
      case 4:
        net["layers"].push_back(test::net_layer(name, "builtin.mul", Json::object(), {last, earlier}, {out}));
        break;
      default:
        net["weights"].push_back(weight("w" + out, {c, c, 3, 3}, s));
        net["layers"].push_back(
            test::net_layer(name, "builtin.conv2d", {{"pads", {1, 1, 1, 1}}}, {last, "w" + out}, {out}));
    }
    tensors.push_back(out);
  }
  net["outputs"] = {tensors.back()};
  return net;
}

// Slot of stage k of micro-batch m in an emulated run's schedule.
const tr::PipelineSlot &slot(const tr::PipelineRunResult &run, int m, int k) {
  for (const tr::PipelineSlot &s : run.schedule)
    if (s.micro_batch == m && s.stage == k) return s;
  throw tr::Error(fmt::format("no slot for micro-batch {} stage {}", m, k));
}

// The hand-offs' order on the cores' clocks: stage k of micro-batch m starts
// after stage k - 1 of m ended (it waited for its message), and a stage
// takes its micro-batches in order.
void expect_hand_offs_in_order(const tr::PipelineRunResult &run, int stages) {
  for (int m = 0; m < run.micro_batches; ++m)
    for (int k = 0; k < stages; ++k) {
      const tr::PipelineSlot &s = slot(run, m, k);
      EXPECT_LE(s.start_us, s.end_us) << m << ", " << k;
      // The run's time is its slowest core's, as the run statistics give it (to the ns).
      EXPECT_LE(s.end_us, run.pipelined_us + 1e-3) << m << ", " << k;
      if (k > 0) {
        EXPECT_GE(s.start_us, slot(run, m, k - 1).end_us) << m << ", " << k;
      }
      if (m > 0) {
        EXPECT_GE(s.start_us, slot(run, m - 1, k).end_us) << m << ", " << k;
      }
    }
}

TEST(PipelineModel, PipelinedRunsEqualTheUnpipelinedRunBitForBit) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  int grouped_boundaries = 0, groups = 0;  // boundaries after a layer of a group; groups planned
  for (const std::string chip : {"bm1684x", "bm1688"})
    for (int round = 0; round < test::rounds(8); ++round) {
      const Json text = random_chain(s);
      SCOPED_TRACE(chip + " " + text["layers"].dump());
      const tr::NetDescription net = tr::parse_net(text, "chain.json");
      const tr::BuildOptions options = options_for(chip, s.uniform(0, 1) == 1);
      tr::BuildResult built = tr::build_model(net, options, "chain.json");
      const int micro_batches = s.uniform(0, 1) ? 2 : 4;
      int stages = std::min(s.uniform(1, 3), int(built.description.layers.size()));
      try {
        tr::add_pipeline(built, net, options, {stages, micro_batches, std::nullopt}, "chain.json");
      } catch (const tr::Error &e) {  // layer groups left fewer units than stages
        EXPECT_CONTAINS(std::string(e.what()), "units a stage boundary may fall between");
        stages = 1;
        tr::add_pipeline(built, net, options, {stages, micro_batches, std::nullopt}, "chain.json");
      }
      // No boundary splits a layer group of the model the stages run.
      const tr::ModelFile micro =
          tr::parse_model_file(built.model.find_section(tr::kMicroBatchModelSection)->data, "micro");
      const tr::ModelDescription md = tr::describe_model(micro, "micro");
      groups += int(md.groups.size());
      const std::optional<tr::StoredPipeline> stored = tr::stored_pipeline(built.model, "chain");
      ASSERT_TRUE(stored);
      for (const tr::PipelineStage &st : stored->plan.stages) {
        const std::size_t last = std::size_t(st.last);
        if (last + 1 < md.layers.size() && md.layers[last].group >= 0) {
          EXPECT_NE(md.layers[last].group, md.layers[last + 1].group) << "a boundary after layer " << last;
          ++grouped_boundaries;
        }
      }
      const tr::PipelineRunResult run = tr::run_pipeline(built.model, built.reference_inputs, "chain");
      // The reference: the model run on the whole batch, here.
      const tr::RunResult whole = tr::run_model(built.model, built.reference_inputs, "chain whole");
      ASSERT_EQ(run.outputs.size(), whole.outputs.size());
      for (const auto &[name, a] : whole.outputs) {
        ASSERT_TRUE(run.outputs.count(name)) << name;
        EXPECT_EQ(run.outputs.at(name).shape, a.shape) << name;
        EXPECT_TRUE(run.outputs.at(name).data == a.data) << name << " differs";
      }
      EXPECT_TRUE(run.outputs_identical) << run.difference;
      EXPECT_TRUE(run.emulated) << run.not_emulated;
      expect_hand_offs_in_order(run, stages);
      EXPECT_EQ(run.micro_batches, micro_batches);
      EXPECT_EQ(run.schedule.size(), std::size_t(micro_batches * stages));
      EXPECT_EQ(run.samples, 4);
    }
  std::printf("%d layer groups; %d stage boundaries fell after a layer of one\n", groups, grouped_boundaries);
}

// x [4, 2, 8, 16] through six element-wise layers, two stages over four
// micro-batches on bm1688's two cores.
Json six_layer_chain() {
  Json layers = Json::array();
  std::string last = "x";
  for (int i = 0; i < 6; ++i) {
    const std::string out = fmt::format("t{}", i);
    layers.push_back(i % 2 ? test::net_layer(fmt::format("l{}", i), "builtin.relu", Json::object(), {last}, {out})
                           : test::net_layer(fmt::format("l{}", i), "absadd", {{"b", 0.25}}, {last}, {out}));
    last = out;
  }
  return {{"name", "six"},
          {"inputs", {{{"name", "x"}, {"shape", {4, 2, 8, 16}}, {"dtype", "fp32"}}}},
          {"layers", layers},
          {"outputs", {last}}};
}

tr::BuildResult pipelined(const Json &net, const std::string &chip, int stages, int micro_batches) {
  const tr::NetDescription parsed = tr::parse_net(net, "net.json");
  const tr::BuildOptions options = options_for(chip, false);
  tr::BuildResult built = tr::build_model(parsed, options, "net.json");
  tr::add_pipeline(built, parsed, options, {stages, micro_batches, std::nullopt}, "net.json");
  return built;
}

void expect_whole_run_outputs(const tr::BuildResult &built, const tr::PipelineRunResult &run) {
  const tr::RunResult whole = tr::run_model(built.model, built.reference_inputs, "whole");
  for (const auto &[name, a] : whole.outputs) {
    ASSERT_TRUE(run.outputs.count(name)) << name;
    EXPECT_EQ(run.outputs.at(name).shape, a.shape) << name;
    EXPECT_TRUE(run.outputs.at(name).data == a.data) << name << " differs";
  }
}

// Stage 0 takes micro-batch m + 1 while stage 1 still works on m: on the
// cores' clocks, stage 0's slot of m + 1 starts before stage 1's of m
// ends. The micro-batch model keeps every tensor apart, which is what lets
// them run at once.
TEST(PipelineModel, StagesRunOnTheirCoresAtOnce) {
  REQUIRE_SAMPLE_OPS();
  const tr::BuildResult built = pipelined(six_layer_chain(), "bm1688", 2, 4);
  const tr::ModelFile micro =
      tr::parse_model_file(built.model.find_section(tr::kMicroBatchModelSection)->data, "micro");
  EXPECT_EQ(micro.metadata["memory"].value("buffers_apart", false), true);
  EXPECT_FALSE(built.model.metadata["memory"].contains("buffers_apart"));  // the model itself reuses bytes
  const tr::PipelineRunResult run = tr::run_pipeline(built.model, built.reference_inputs, "six");
  ASSERT_TRUE(run.emulated) << run.not_emulated;
  EXPECT_TRUE(run.outputs_identical) << run.difference;
  expect_whole_run_outputs(built, run);
  ASSERT_EQ(run.schedule.size(), 8u);
  expect_hand_offs_in_order(run, 2);
  for (int m = 0; m + 1 < 4; ++m)
    EXPECT_LT(slot(run, m + 1, 0).start_us, slot(run, m, 1).end_us) << "micro-batch " << m;
  const tr::PipelinePlan plan = tr::stored_pipeline(built.model, "six")->plan;
  const std::string text = tr::pipeline_run_text(run, plan);
  EXPECT_CONTAINS(text, "pipeline: 2 stages, 4 micro-batches, emulated: stage k on core k of one 2-core run");
  EXPECT_CONTAINS(text, "(the emulated run: its slowest core)");
  EXPECT_CONTAINS(text, "steady state      a micro-batch every ");
  EXPECT_EQ(text.find("one device"), std::string::npos);
}

// Layers a core's run cannot hold: the stages run one after another, the
// schedule is computed, and the report says so first.
TEST(PipelineModel, ADynamicLayerOrSharedBytesFallBackToTheComputedSchedule) {
  REQUIRE_SAMPLE_OPS();
  Json net = six_layer_chain();
  net["layers"][2]["dynamic"] = true;
  const tr::BuildResult dynamic = pipelined(net, "bm1688", 2, 2);
  const tr::PipelineRunResult run = tr::run_pipeline(dynamic.model, dynamic.reference_inputs, "dyn");
  EXPECT_FALSE(run.emulated);
  EXPECT_CONTAINS(run.not_emulated, "layer 2 'l2' is dynamic");
  EXPECT_TRUE(run.outputs_identical) << run.difference;
  expect_whole_run_outputs(dynamic, run);
  const std::string text = tr::pipeline_run_text(run, tr::stored_pipeline(dynamic.model, "dyn")->plan);
  EXPECT_CONTAINS(text, "NOT emulated (layer 2 'l2' is dynamic");
  EXPECT_CONTAINS(text, "the times below are computed from their measured times");
  EXPECT_CONTAINS(text, "(computed)");

  // A micro-batch model built before pipelined runs were emulated reuses
  // bytes between tensors: refused for the cores, run the old way.
  tr::BuildResult old = pipelined(six_layer_chain(), "bm1688", 2, 2);
  tr::Section *section = old.model.find_section(tr::kMicroBatchModelSection);
  tr::ModelFile micro = tr::parse_model_file(section->data, "micro");
  micro.metadata["memory"].erase("buffers_apart");
  section->data = tr::serialize_model_file(micro);
  const tr::PipelineRunResult shared = tr::run_pipeline(old.model, old.reference_inputs, "old");
  EXPECT_FALSE(shared.emulated);
  EXPECT_CONTAINS(shared.not_emulated, "shares bytes between tensors");
  EXPECT_TRUE(shared.outputs_identical) << shared.difference;
}

// Text inputs and outputs (the ONNX importer's string tensors): both ways of
// running the stages take the input as text and give the output as text, the
// text of the values the unpipelined run computes.
TEST(PipelineModel, TextInputsAndOutputsCrossTheBoundaryOnce) {
  REQUIRE_SAMPLE_OPS();
  for (const bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "stages one after another" : "stages on their cores");
    Json net = six_layer_chain();
    net["inputs"][0]["text"] = true;
    net["text_outputs"] = {"t5"};
    if (dynamic) net["layers"][2]["dynamic"] = true;
    const tr::BuildResult built = pipelined(net, "bm1688", 2, 2);
    // The reference inputs written out with 9 significant digits, which read back to the same fp32 values.
    const tr::npz::Array &x = built.reference_inputs.at("x");
    std::vector<std::string> texts;
    for (float v : x.values<float>()) texts.push_back(fmt::format("{:.9g}", v));
    const tr::npz::Arrays as_text = {{"x", tr::npz::text_array(x.shape, texts, "x")}};
    const tr::PipelineRunResult run = tr::run_pipeline(built.model, as_text, "text");
    EXPECT_EQ(run.emulated, !dynamic) << run.not_emulated;
    EXPECT_TRUE(run.outputs_identical) << run.difference;
    const tr::RunResult whole = tr::run_model(built.model, built.reference_inputs, "whole");
    ASSERT_TRUE(tr::npz::is_text_dtype(run.outputs.at("t5").dtype)) << run.outputs.at("t5").dtype;
    EXPECT_EQ(run.outputs.at("t5").shape, whole.outputs.at("t5").shape);
    EXPECT_EQ(tr::npz::text_values(run.outputs.at("t5"), "run"), tr::npz::text_values(whole.outputs.at("t5"), "whole"));
  }
}

// Stage k of micro-batch m starts when stage k - 1 of m and stage k of m - 1
// are done: two stages of 3 and 5 us over three micro-batches end at
// 3, 8 | 6, 13 | 9, 18.
TEST(PipelineModel, ScheduleOverlapsNeighbouringMicroBatches) {
  const std::vector<tr::PipelineSlot> slots = tr::pipeline_schedule({{3, 5}, {3, 5}, {3, 5}});
  std::vector<double> ends;
  for (const tr::PipelineSlot &s : slots) ends.push_back(s.end_us);
  EXPECT_EQ(ends, (std::vector<double>{3, 8, 6, 13, 9, 18}));
  EXPECT_EQ(slots[3].start_us, 8);  // stage 1 of micro-batch 1 waits for stage 1 of micro-batch 0
}

// The run's report: 4 samples in 2 micro-batches, stages of 3 and 5 us.
TEST(PipelineModel, RunTextFigures) {
  tr::PipelineRunResult run;
  run.samples = 4;
  run.micro_batches = 2;
  run.stage_us = {{3, 5}, {3, 5}};
  run.schedule = tr::pipeline_schedule(run.stage_us);
  run.pipelined_us = 13;  // 3 + 5 + 5
  run.one_device_us = 12;
  run.unpipelined_us = 10;
  run.outputs_identical = true;
  run.not_emulated = "layer 1 'h' runs on the host";
  tr::PipelinePlan plan;
  plan.stages.resize(2);
  const std::string text = tr::pipeline_run_text(run, plan);
  EXPECT_CONTAINS(text, "pipeline: 2 stages, 2 micro-batches, NOT emulated (layer 1 'h' runs on the host)");
  EXPECT_CONTAINS(text, "pipelined         13.00 us for 4 samples: 307692.3 samples/s");  // 4e6 / 13
  // 2 samples every 5 us.
  EXPECT_CONTAINS(text, "steady state      a micro-batch every 5.00 us (stage 1, the slowest): 400000.0 samples/s");
  EXPECT_CONTAINS(text, "one device        12.00 us");
  EXPECT_CONTAINS(text, "333333.3 samples/s, speed-up 0.92x");  // 12 / 13
  EXPECT_CONTAINS(text, "unpipelined run   10.00 us (the whole batch at once, one stage): 400000.0 samples/s, "
                        "speed-up 0.77x");
  EXPECT_CONTAINS(text, "outputs: identical to the unpipelined run, bit for bit");
  run.outputs_identical = false;
  run.difference = "output 'y' differs from the unpipelined run at byte 8";
  EXPECT_CONTAINS(tr::pipeline_run_text(run, plan),
                  "outputs: DIFFER from the unpipelined run: output 'y' differs from the unpipelined run at byte 8");
  // Emulated: the last stage let micro-batch 0 go at 8 us and 1 at 11 us,
  // so one micro-batch of 2 samples every 3 us.
  run.emulated = true;
  run.not_emulated.clear();
  run.schedule = {{0, 0, 0, 3}, {1, 0, 3, 8}, {0, 1, 3, 6}, {1, 1, 8, 11}};
  run.pipelined_us = 11;
  const std::string emulated = tr::pipeline_run_text(run, plan);
  EXPECT_CONTAINS(emulated, "pipeline: 2 stages, 2 micro-batches, emulated: stage k on core k of one 2-core run");
  EXPECT_CONTAINS(emulated, "pipelined         11.00 us for 4 samples: 363636.4 samples/s (the emulated run");
  EXPECT_CONTAINS(emulated,
                  "steady state      a micro-batch every 3.00 us (the last two leaving stage 1): 666666.7 samples/s");
  EXPECT_EQ(emulated.find("one device"), std::string::npos);
}

TEST(PipelineModel, TpuModelBuildInfoRun) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  test::TempDir dir;
  const std::string net = dir.file("three.json"), model = dir.file("three.tpumodel");
  {
    std::FILE *f = std::fopen(net.c_str(), "w");
    ASSERT_TRUE(f);
    std::fputs(three_layer_net(s).dump().c_str(), f);
    std::fclose(f);
  }
  const std::string tool = TPU_MODEL_TOOL;
  const test::CommandRun b = test::run_command(test::quoted_command(
      tool, {"build", net, "--chip", "bm1684x", "-o", model, "--lib-dir", test::sample_ops_lib_dir(), "--no-groups",
             "--embed-reference", "--pipeline", "2", "--micro-batches", "2"}));
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_CONTAINS(b.output, "pipeline      2 stages, 2 micro-batches");
  const test::CommandRun info = test::run_command(test::quoted_command(tool, {"info", model}));
  ASSERT_EQ(info.status, 0) << info.output;
  EXPECT_CONTAINS(info.output, "PCIe through the host: 20.00 us + 1 us per 2000 bytes");
  EXPECT_CONTAINS(info.output, "bottleneck  stage");
  const test::CommandRun json = test::run_command(test::quoted_command(tool, {"info", model, "--json"}));
  ASSERT_EQ(json.status, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j.at("pipeline").at("stages").size(), 2u);
  EXPECT_EQ(j.at("pipeline").at("micro_batches"), 2);
  const test::CommandRun run =
      test::run_command(test::quoted_command(tool, {"run", model, "--compare-stored", "--max-ulp", "inf"}));
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_CONTAINS(run.output, "outputs: identical to the unpipelined run, bit for bit");
  EXPECT_CONTAINS(run.output, "pipeline: 2 stages, 2 micro-batches, emulated: stage k on core k of one 2-core run");
  // bm1684x stages are cards: two emulated cores, the PCIe transfer only charged by the plan.
  EXPECT_CONTAINS(run.output, "cards' link       not emulated: the stages ran as cores of one chip sharing its "
                              "memory; the plan charges ");
  EXPECT_CONTAINS(run.output, "us of PCIe transfers per micro-batch over its 1 boundary");
  EXPECT_CONTAINS(run.output, "pipelined ");
  EXPECT_CONTAINS(run.output, "PASS: every output is within tolerance");
  const test::CommandRun wrong =
      test::run_command(test::quoted_command(tool, {"run", model, "--micro-batches", "3"}));
  EXPECT_EQ(wrong.status, 1) << wrong.output;
  EXPECT_CONTAINS(wrong.output, "the model was built for 2 micro-batches");
  const test::CommandRun alone = test::run_command(test::quoted_command(
      tool, {"build", net, "--chip", "bm1684x", "-o", model, "--lib-dir", test::sample_ops_lib_dir(),
             "--micro-batches", "2"}));
  EXPECT_EQ(alone.status, 1) << alone.output;
  EXPECT_CONTAINS(alone.output, "give --pipeline K too");
}

}  // namespace
