// onnx_op_test.cc: the ONNX identity and definition an op declares through
// the optional plugin hook onnx_op_<op> (tpu_onnx_op.h, Plugin::onnx_op,
// tpu_runtime/onnx_op.h): the samples' declarations as read from the
// plugin, and every malformed definition refused naming the field and the
// value (check_onnx_op_definition).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "support/sample_ops.h"
#include "support/test_support.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/onnx_op.h"
#include "tpu_runtime/params.h"

namespace {

namespace tr = tpu_runtime;

tr::OnnxOpDefinition valid_definition() {
  tr::OnnxOpDefinition d;
  d.op = "myop";
  d.domain = "com.example";
  d.op_type = "MyOp";
  d.dtypes = {tr::Dtype::fp32};
  d.attrs = {{"scale", tr::OnnxAttrType::float_scalar, 1, false, 1.0}, {"axes", tr::OnnxAttrType::int_list, 2, true, 0}};
  return d;
}

// The Error message of checking `d` (with `types` as the op's param_types).
std::string refusal(const tr::OnnxOpDefinition &d, const std::optional<tr::ParamTypes> &types = std::nullopt) {
  try {
    tr::check_onnx_op_definition(d, types, "onnx_op_myop");
  } catch (const tr::Error &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(OnnxOpDefinition, AValidDefinitionPasses) {
  EXPECT_EQ(refusal(valid_definition()), "(accepted)");
  EXPECT_EQ(refusal(valid_definition(), tr::parse_param_types("scale:float, axes:int[]", "test")), "(accepted)");
  EXPECT_EQ(valid_definition().identity_text(), "com.example::MyOp (opset 1 and later)");
}

TEST(OnnxOpDefinition, DomainMustBeACustomOne) {
  for (const std::string domain : {"", "ai.onnx"}) {
    tr::OnnxOpDefinition d = valid_definition();
    d.domain = domain;
    EXPECT_EQ(refusal(d), "onnx_op_myop: domain is '" + domain +
                              "': a custom op needs a domain of its own (ONNX's standard ops are in '' / 'ai.onnx'), "
                              "e.g. 'com.acme'");
  }
}

TEST(OnnxOpDefinition, VersionRangeAndCounts) {
  tr::OnnxOpDefinition d = valid_definition();
  d.since_version = 3;
  d.until_version = 2;
  EXPECT_EQ(refusal(d), "onnx_op_myop: until_version is 2, below since_version 3 (0 means no upper bound)");
  d = valid_definition();
  d.since_version = 0;
  EXPECT_EQ(refusal(d), "onnx_op_myop: since_version is 0; it must be at least 1");
  d = valid_definition();
  d.num_outputs = 0;
  EXPECT_EQ(refusal(d), "onnx_op_myop: num_outputs is 0; it must be 1 to 16");
  d = valid_definition();
  d.dtypes.clear();
  EXPECT_EQ(refusal(d), "onnx_op_myop: dtypes is 0; set TPU_ONNX_FP32, TPU_ONNX_FP16 and/or TPU_ONNX_BF16");
  d = valid_definition();
  d.op_type.clear();
  EXPECT_EQ(refusal(d), "onnx_op_myop: op_type is empty");
}

TEST(OnnxOpDefinition, AttributesNameTheirProblem) {
  tr::OnnxOpDefinition d = valid_definition();
  d.attrs[1].name = "scale";
  EXPECT_EQ(refusal(d), "onnx_op_myop: attribute 'scale' is declared twice");
  d = valid_definition();
  d.attrs[1].param_slot = 3;
  EXPECT_EQ(refusal(d), "onnx_op_myop: attribute 'axes': the param slots of the attributes must be 1..2, each used "
                        "once (slot 2 is missing or given twice)");
  d = valid_definition();
  d.attrs[1].required = false;
  EXPECT_EQ(refusal(d), "onnx_op_myop: attribute 'axes': a list attribute (ints) has no default: it must be required");
  d = valid_definition();
  d.attrs[0].name.clear();
  EXPECT_EQ(refusal(d), "onnx_op_myop: attribute 0 has no name");
}

TEST(OnnxOpDefinition, AttributesAgreeWithDeclaredParamTypes) {
  EXPECT_EQ(refusal(valid_definition(), tr::parse_param_types("scale:int, axes:int[]", "test")),
            "onnx_op_myop: attribute 'scale' is float, but param_types declares slot 1 ('scale') as another kind");
  EXPECT_EQ(refusal(valid_definition(), tr::parse_param_types("scale:float, axes:int[], extra:int", "test")),
            "onnx_op_myop: 2 attributes, but param_types declares 3 parameters: every parameter needs an attribute");
  EXPECT_EQ(refusal(valid_definition(), tr::parse_param_types("scale:float", "test")),
            "onnx_op_myop: attribute 'axes': param slot 2, but param_types declares 1 parameters");
}

TEST(OnnxOpDefinition, SampleOpsDeclareTheirIdentities) {
  REQUIRE_SAMPLE_OPS();
  const tr::Plugin plugin = tr::Plugin::open(test::sample_ops_libraries("bm1684x").plugin);
  const std::optional<tr::OnnxOpDefinition> absadd = plugin.onnx_op("absadd");
  ASSERT_TRUE(absadd);
  EXPECT_EQ(absadd->op, "absadd");
  EXPECT_EQ(absadd->identity_text(), "tpu.sdk::AbsAdd (opset 1 and later)");
  EXPECT_EQ(absadd->num_inputs, 1);
  EXPECT_EQ(absadd->num_outputs, 1);
  EXPECT_EQ(absadd->dtypes, (std::vector<tr::Dtype>{tr::Dtype::fp32, tr::Dtype::fp16, tr::Dtype::bf16}));
  ASSERT_EQ(absadd->attrs.size(), 1u);
  EXPECT_EQ(absadd->attrs[0].name, "b");
  EXPECT_EQ(absadd->attrs[0].type, tr::OnnxAttrType::float_scalar);
  EXPECT_EQ(absadd->attrs[0].param_slot, 1);
  EXPECT_FALSE(absadd->attrs[0].required);

  const std::optional<tr::OnnxOpDefinition> leaky = plugin.onnx_op("leakyrelu");
  ASSERT_TRUE(leaky);
  EXPECT_EQ(leaky->identity_text(), "com.acme::LeakyRelu (opset 1 and later)");
  ASSERT_EQ(leaky->attrs.size(), 1u);
  EXPECT_EQ(leaky->attrs[0].name, "alpha");
  EXPECT_DOUBLE_EQ(leaky->attrs[0].default_value, 0.01);  // ONNX's own LeakyRelu default

  EXPECT_FALSE(plugin.onnx_op("crop"));  // no hook: no identity, nothing else changes
}

#ifndef TPU_TEST_FIXTURES_DIR
#define TPU_TEST_FIXTURES_DIR ""
#endif

// The fixture plugin's malformed declarations (fixtures/good/fixture_plugin.c).
std::string hook_refusal(const std::string &op) {
  const tr::Plugin plugin = tr::Plugin::open(fmt::format("{}/good/libplugin_custom.so", TPU_TEST_FIXTURES_DIR));
  try {
    plugin.onnx_op(op);
  } catch (const tr::Error &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(OnnxOpDefinition, MalformedHookAnswersAreRefused) {
  EXPECT_CONTAINS(hook_refusal("fx_scratch"), "onnx_op_fx_scratch: dtypes is 0x10: unknown bits");
  EXPECT_CONTAINS(hook_refusal("fx_local"),
                  "onnx_op_fx_local: attribute 0 has type 3; known: TPU_ONNX_ATTR_FLOAT, _INT, _FLOATS, _INTS");
  EXPECT_CONTAINS(hook_refusal("fx_fail"), "onnx_op_fx_fail returned a null pointer");
  EXPECT_CONTAINS(hook_refusal("fx_fault"),
                  "onnx_op_fx_fault: attribute 'how': a list attribute (ints) has no default: it must be required");
  EXPECT_EQ(hook_refusal("fx_cast"), "(accepted)");  // no hook
}

}  // namespace
