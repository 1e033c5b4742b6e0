// op_metadata_test.cc: the optional plugin hook metadata_<op>
// (tpu_op_metadata.h, Plugin::metadata, tpu_runtime/op_metadata.h) on the
// layer-group fixture set (tests/runtime/groups/fixtures, TPU_GROUP_FIXTURES_DIR):
// what a hook declares, the defaults without one, each malformed answer
// refused by op, field and value, the stored form and the shown line, and
// what an element-wise claim changes in the plugin's other hooks.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/op_metadata.h"
#include "tpu_runtime/params.h"
#include "support/test_support.h"

#ifndef TPU_GROUP_FIXTURES_DIR
#define TPU_GROUP_FIXTURES_DIR ""
#endif

namespace {

namespace tr = tpu_runtime;

class OpMetadata : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = std::string(TPU_GROUP_FIXTURES_DIR) + "/libplugin_custom.so";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no layer-group fixtures at " << path;
    plugin_ = tr::Plugin::open(path);
  }
  // The Error message of metadata(op) for a layer of `num_inputs` inputs.
  std::string refusal(const std::string &op, int num_inputs) {
    try {
      plugin_.metadata(op, tr::PackedParams::from_json_text("{}"), num_inputs);
    } catch (const tr::Error &e) {
      return e.what();
    }
    ADD_FAILURE() << "metadata_" << op << " was accepted";
    return "";
  }
  tr::Plugin plugin_;
  const tr::PackedParams none_ = tr::PackedParams::from_json_text("{}");
};

TEST_F(OpMetadata, ReadsWhatTheHookDeclaresAndDefaultsWithoutIt) {
  const tr::OpMetadata full = plugin_.metadata("md_full", none_, 2);
  EXPECT_TRUE(full.declared);
  EXPECT_EQ(full.inplace_inputs, 1);
  EXPECT_FALSE(full.elementwise);
  EXPECT_TRUE(full.stateless);
  ASSERT_EQ(full.input_layouts.size(), 1u);
  EXPECT_EQ(full.input_layouts[0].input, 1);
  EXPECT_EQ(full.input_layouts[0].alignment, 64);
  EXPECT_EQ(full.input_layouts[0].innermost_multiple, 32);

  // A hook that sets nothing: declared, every field at its default (stateful).
  const tr::OpMetadata empty = plugin_.metadata("md_empty", none_, 1);
  EXPECT_TRUE(empty.declared);
  EXPECT_EQ(empty.inplace_inputs, 0);
  EXPECT_FALSE(empty.elementwise);
  EXPECT_FALSE(empty.stateless);
  EXPECT_TRUE(empty.input_layouts.empty());

  // No hook at all: today's behaviour.
  const tr::OpMetadata absent = plugin_.metadata("vsum3", none_, 1);
  EXPECT_FALSE(absent.declared);
  EXPECT_FALSE(absent.elementwise || absent.stateless || absent.inplace_inputs);
  EXPECT_EQ(tr::metadata_text(absent), "none declared (no metadata hook: the defaults apply)");

  // The answer may depend on the parameters.
  EXPECT_EQ(plugin_.metadata("md_by_param", tr::PackedParams::from_json_text(R"({"inplace": 1})"), 1).inplace_inputs, 1);
  EXPECT_EQ(plugin_.metadata("md_by_param", tr::PackedParams::from_json_text(R"({"inplace": 0})"), 1).inplace_inputs, 0);
}

TEST_F(OpMetadata, TheSampleOpsAreElementWiseAndStateless) {
  for (const char *op : {"absadd", "ceiladd"}) {
    const tr::OpMetadata m = plugin_.metadata(op, tr::PackedParams::from_json_text(R"({"b": 1.0})"), 1);
    EXPECT_TRUE(m.declared && m.elementwise && m.stateless) << op;
    EXPECT_EQ(m.inplace_inputs, 0) << op;
    EXPECT_EQ(tr::metadata_text(m), "element-wise, stateless, in-place inputs 0") << op;
  }
}

TEST_F(OpMetadata, RefusesAMalformedAnswerNamingTheOpTheFieldAndTheValue) {
  struct Case {
    const char *op;
    int num_inputs;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"md_too_many_inplace", 2, {"metadata_md_too_many_inplace", "op 'md_too_many_inplace' metadata",
                                  "num_inplace_inputs is 3, but the layer has only 2 inputs"}},
      {"md_layout_index", 2, {"op 'md_layout_index' metadata", "input_layouts[0].input is 2, not an input of the "
                                                               "layer (0..1)"}},
      {"md_layout_twice", 1, {"op 'md_layout_twice'", "input_layouts[1].input is 0, which an earlier entry"}},
      {"md_alignment", 1, {"op 'md_alignment'", "input_layouts[0].alignment is 48", "power of two"}},
      {"md_innermost", 1, {"op 'md_innermost'", "input_layouts[0].innermost_multiple is -4"}},
      {"md_layout_count", 1, {"op 'md_layout_count'", "num_input_layouts is 9; it must be 0 to 8"}},
      // Valid for two inputs, not for one.
      {"md_full", 1, {"op 'md_full'", "input_layouts[0].input is 1, not an input of the layer (0..0)"}},
  };
  for (const Case &c : cases) {
    const std::string m = refusal(c.op, c.num_inputs);
    for (const std::string &part : c.parts) EXPECT_CONTAINS(m, part);
  }
}

TEST_F(OpMetadata, StoredFormRoundTripsAndIsCheckedOnReading) {
  const tr::OpMetadata full = plugin_.metadata("md_full", none_, 2);
  const nlohmann::ordered_json j = tr::metadata_json(full);
  EXPECT_EQ(j.dump(), R"({"inplace_inputs":1,"elementwise":false,"stateless":true,)"
                      R"("input_layouts":[{"input":1,"alignment":64,"innermost_multiple":32}],"multi_core":false})");
  EXPECT_EQ(tr::metadata_from_json(nlohmann::json::parse(j.dump()), "md_full", 2, "here"), full);
  EXPECT_EQ(tr::metadata_text(full), "not element-wise, stateless, in-place inputs 1, input 1 layout: 64-byte "
                                     "aligned and innermost dim padded to a multiple of 32");
  // A damaged record: the reader names where and what.
  nlohmann::json bad = nlohmann::json::parse(j.dump());
  bad["input_layouts"][0]["alignment"] = 3;
  try {
    tr::metadata_from_json(bad, "md_full", 2, "m.tpumodel: metadata.layers[0].metadata");
    ADD_FAILURE() << "a damaged record was accepted";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "m.tpumodel: metadata.layers[0].metadata: op 'md_full' metadata: "
                              "input_layouts[0].alignment is 3");
  }
  bad = nlohmann::json::parse(j.dump());
  bad.erase("stateless");
  EXPECT_THROW(tr::metadata_from_json(bad, "md_full", 2, "here"), tr::Error);
  // A record written before "multi_core" existed reads as one core; a
  // present one must be true or false.
  nlohmann::json older = nlohmann::json::parse(j.dump());
  older.erase("multi_core");
  EXPECT_EQ(tr::metadata_from_json(older, "md_full", 2, "here"), full);
  bad = nlohmann::json::parse(j.dump());
  bad["multi_core"] = 1;
  try {
    tr::metadata_from_json(bad, "md_full", 2, "here");
    ADD_FAILURE() << "multi_core 1 was accepted";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "here: 'multi_core' must be true or false");
  }
}

TEST_F(OpMetadata, AMultiCoreOpSaysSo) {
  const tr::OpMetadata m = plugin_.metadata("mc_double", none_, 1);
  EXPECT_TRUE(m.declared && m.multi_core);
  EXPECT_FALSE(m.elementwise || m.stateless);
  EXPECT_EQ(tr::metadata_text(m), "not element-wise, stateful, in-place inputs 0, multi-core");
  const nlohmann::ordered_json j = tr::metadata_json(m);
  EXPECT_EQ(j["multi_core"], true);
  EXPECT_EQ(tr::metadata_from_json(nlohmann::json::parse(j.dump()), "mc_double", 1, "here"), m);
  // Without the claim the line does not mention cores.
  EXPECT_EQ(tr::metadata_text(plugin_.metadata("md_full", none_, 2)).find("multi-core"), std::string::npos);
}

TEST_F(OpMetadata, AnElementWiseOpNeedsNoShapeOrSliceOrLocalHooks) {
  // ewdouble has none of them: every output gets input 0's shape, its
  // slices are the identity, and it may run in a layer group.
  const std::vector<tr::Shape> two = plugin_.shape_inference("ewdouble", none_, {{2, 3, 5, 7}}, 2);
  EXPECT_EQ(two, (std::vector<tr::Shape>{{2, 3, 5, 7}, {2, 3, 5, 7}}));
  EXPECT_TRUE(plugin_.local_gen_support("ewdouble", none_));
  int idx = 0, slice = 0;
  EXPECT_TRUE(plugin_.backward_h("ewdouble", none_, 3, 2, &idx, &slice));
  EXPECT_EQ(idx, 3);
  EXPECT_EQ(slice, 2);
  // Without the claim the vendor defaults stay: no second output shape, no local version.
  EXPECT_FALSE(plugin_.local_gen_support("md_empty", none_));
  EXPECT_THROW(plugin_.shape_inference("md_empty", none_, {{2, 3}}, 2), tr::Error);
}

TEST_F(OpMetadata, AnElementWiseClaimContradictedByTheOpsOwnHooksIsRefused) {
  try {
    plugin_.shape_inference("ewdouble", none_, {{2, 3, 5, 7}, {2, 3, 5, 1}}, 1);
    ADD_FAILURE() << "inputs of two shapes accepted for an element-wise op";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "op 'ewdouble' declares itself element-wise (metadata_ewdouble), but input 1 has "
                              "the shape [2,3,5,1] and input 0 [2,3,5,7]");
  }
  try {
    plugin_.shape_inference("md_ew_shape", none_, {{2, 3, 5}}, 1);
    ADD_FAILURE() << "a shape hook disagreeing with the claim was accepted";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "op 'md_ew_shape' declares itself element-wise (metadata_md_ew_shape), but "
                              "shape_inference_md_ew_shape gives output 0 the shape [2,3,6], not input 0's [2,3,5]");
  }
  int idx = 0, slice = 0;
  try {
    plugin_.backward_h("md_ew_backward", none_, 4, 2, &idx, &slice);
    ADD_FAILURE() << "a halo declared by an element-wise op was accepted";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "op 'md_ew_backward' declares itself element-wise (metadata_md_ew_backward), but "
                              "backward_h_md_ew_backward maps output slice [4, 6) to input slice [3, 7)");
  }
}

}  // namespace
