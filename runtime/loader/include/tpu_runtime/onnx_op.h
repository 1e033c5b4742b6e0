// onnx_op.h: the ONNX identity and definition a custom op declares through
// the optional plugin hook onnx_op_<op> (tpu_onnx_op.h), as the runtime
// holds it: read and checked by Plugin::onnx_op(), used by the ONNX importer
// (runtime/onnx/, docs/onnx.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tpu_runtime/dtype.h"
#include "tpu_runtime/params.h"

namespace tpu_runtime {

enum class OnnxAttrType { float_scalar = 1, int_scalar = 2, float_list = 6, int_list = 7 };

struct OnnxAttrDefinition {
  std::string name;
  OnnxAttrType type = OnnxAttrType::float_scalar;
  int param_slot = 1;  // custom_param_t element, 1-based
  bool required = false;
  double default_value = 0;
};

struct OnnxOpDefinition {
  std::string op;  // the custom op (register_custom_op name)
  std::string domain, op_type;
  int since_version = 1;
  int until_version = 0;  // 0: open
  int num_inputs = 1, num_outputs = 1;
  std::vector<Dtype> dtypes;               // allowed element types of every input and output
  std::vector<OnnxAttrDefinition> attrs;  // in param_slot order

  // "com.acme::LeakyRelu (opset 1 and later)"
  std::string identity_text() const;
  bool serves_version(int version) const {
    return version >= since_version && (until_version == 0 || version <= until_version);
  }
};

// "float", "int", "floats", "ints"
const char *onnx_attr_type_name(OnnxAttrType type);

// Checks a declaration as the hook gave it (converted by the caller): a
// domain other than "" and "ai.onnx", an op type, a version range, counts
// 1..16, known dtypes, attributes with unique names, known types, slots
// 1..num_attrs each used once, defaults only for scalars; when the op
// declares param types, each slot's kind agrees with its attribute. The
// Error starts with `who` and names the field and the value.
void check_onnx_op_definition(const OnnxOpDefinition &d, const std::optional<ParamTypes> &param_types,
                              const std::string &who);

}  // namespace tpu_runtime
