// onnx_op.cc: the ONNX identity a custom op declares (onnx_op_<op>,
// tpu_onnx_op.h): converted from the C declaration and checked.
#include "tpu_runtime/onnx_op.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "tpu_onnx_op.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace {

constexpr int kMaxOnnxOpTensors = 16;

bool is_list(OnnxAttrType type) { return type == OnnxAttrType::float_list || type == OnnxAttrType::int_list; }

ParamKind param_kind_of(OnnxAttrType type) {
  switch (type) {
    case OnnxAttrType::float_scalar: return ParamKind::float_scalar;
    case OnnxAttrType::int_scalar: return ParamKind::int_scalar;
    case OnnxAttrType::float_list: return ParamKind::float_array;
    case OnnxAttrType::int_list: return ParamKind::int_array;
  }
  return ParamKind::float_scalar;
}

void check_identity(const OnnxOpDefinition &d, const std::string &who) {
  if (d.domain.empty() || d.domain == "ai.onnx")
    throw Error(fmt::format("{}: domain is '{}': a custom op needs a domain of its own (ONNX's standard ops are in "
                            "'' / 'ai.onnx'), e.g. 'com.acme'",
                            who, d.domain));
  if (d.op_type.empty()) throw Error(fmt::format("{}: op_type is empty", who));
  if (d.since_version < 1)
    throw Error(fmt::format("{}: since_version is {}; it must be at least 1", who, d.since_version));
  if (d.until_version != 0 && d.until_version < d.since_version)
    throw Error(fmt::format("{}: until_version is {}, below since_version {} (0 means no upper bound)", who,
                            d.until_version, d.since_version));
  for (const auto &[field, value] : {std::pair{"num_inputs", d.num_inputs}, std::pair{"num_outputs", d.num_outputs}})
    if (value < 1 || value > kMaxOnnxOpTensors)
      throw Error(fmt::format("{}: {} is {}; it must be 1 to {}", who, field, value, kMaxOnnxOpTensors));
  if (d.dtypes.empty())
    throw Error(fmt::format("{}: dtypes is 0; set TPU_ONNX_FP32, TPU_ONNX_FP16 and/or TPU_ONNX_BF16", who));
}

void check_attrs(const OnnxOpDefinition &d, const std::optional<ParamTypes> &param_types, const std::string &who) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < d.attrs.size(); ++i) {
    const OnnxAttrDefinition &a = d.attrs[i];
    const std::string where = fmt::format("{}: attribute '{}'", who, a.name);
    if (a.name.empty()) throw Error(fmt::format("{}: attribute {} has no name", who, i));
    if (!names.insert(a.name).second) throw Error(fmt::format("{} is declared twice", where));
    if (a.param_slot != int(i) + 1)
      throw Error(fmt::format("{}: the param slots of the attributes must be 1..{}, each used once (slot {} is "
                              "missing or given twice)",
                              where, d.attrs.size(), i + 1));
    if (is_list(a.type) && !a.required)
      throw Error(fmt::format("{}: a list attribute ({}) has no default: it must be required", where,
                              onnx_attr_type_name(a.type)));
    if (!param_types) continue;
    if (a.param_slot > int(param_types->size()))
      throw Error(fmt::format("{}: param slot {}, but param_types declares {} parameters", where, a.param_slot,
                              param_types->size()));
    const ParamSlot &slot = (*param_types)[a.param_slot - 1];
    if (slot.kind != param_kind_of(a.type))
      throw Error(fmt::format("{} is {}, but param_types declares slot {} ('{}') as another kind", where,
                              onnx_attr_type_name(a.type), a.param_slot, slot.name));
  }
  if (param_types && param_types->size() != d.attrs.size())
    throw Error(fmt::format("{}: {} attributes, but param_types declares {} parameters: every parameter needs an "
                            "attribute",
                            who, d.attrs.size(), param_types->size()));
}

}  // namespace

const char *onnx_attr_type_name(OnnxAttrType type) {
  switch (type) {
    case OnnxAttrType::float_scalar: return "float";
    case OnnxAttrType::int_scalar: return "int";
    case OnnxAttrType::float_list: return "floats";
    case OnnxAttrType::int_list: return "ints";
  }
  return "unknown";
}

std::string OnnxOpDefinition::identity_text() const {
  if (until_version == 0) return fmt::format("{}::{} (opset {} and later)", domain, op_type, since_version);
  return fmt::format("{}::{} (opset {} to {})", domain, op_type, since_version, until_version);
}

void check_onnx_op_definition(const OnnxOpDefinition &d, const std::optional<ParamTypes> &param_types,
                              const std::string &who) {
  check_identity(d, who);
  check_attrs(d, param_types, who);
}

namespace detail {

// The C declaration in the runtime's form; attributes sorted by slot (the
// check then finds gaps and repeats). `who` starts every error.
OnnxOpDefinition convert_onnx_op(const tpu_onnx_op_t &raw, const std::string &op, const std::string &who) {
  OnnxOpDefinition d;
  d.op = op;
  d.domain = raw.domain ? raw.domain : "";
  d.op_type = raw.op_type ? raw.op_type : "";
  d.since_version = raw.since_version;
  d.until_version = raw.until_version;
  d.num_inputs = raw.num_inputs;
  d.num_outputs = raw.num_outputs;
  if (raw.dtypes & ~(TPU_ONNX_FP32 | TPU_ONNX_FP16 | TPU_ONNX_BF16))
    throw Error(fmt::format("{}: dtypes is {:#x}: unknown bits (TPU_ONNX_FP32, _FP16, _BF16 are known)", who,
                            raw.dtypes));
  if (raw.dtypes & TPU_ONNX_FP32) d.dtypes.push_back(Dtype::fp32);
  if (raw.dtypes & TPU_ONNX_FP16) d.dtypes.push_back(Dtype::fp16);
  if (raw.dtypes & TPU_ONNX_BF16) d.dtypes.push_back(Dtype::bf16);
  if (raw.num_attrs < 0 || raw.num_attrs > TPU_ONNX_MAX_ATTRS)
    throw Error(fmt::format("{}: num_attrs is {}; it must be 0 to {}", who, raw.num_attrs, TPU_ONNX_MAX_ATTRS));
  for (int i = 0; i < raw.num_attrs; ++i) {
    const tpu_onnx_attr_t &a = raw.attrs[i];
    const int type = a.type;
    if (type != 1 && type != 2 && type != 6 && type != 7)
      throw Error(fmt::format("{}: attribute {} has type {}; known: TPU_ONNX_ATTR_FLOAT, _INT, _FLOATS, _INTS", who,
                              i, type));
    d.attrs.push_back({a.name ? a.name : "", OnnxAttrType(type), a.param_slot, a.required, a.default_value});
  }
  std::stable_sort(d.attrs.begin(), d.attrs.end(),
                   [](const OnnxAttrDefinition &x, const OnnxAttrDefinition &y) { return x.param_slot < y.param_slot; });
  return d;
}

}  // namespace detail
}  // namespace tpu_runtime
