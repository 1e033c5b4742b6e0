// onnx_custom_ops.cc: custom-domain nodes. The identities the plugin's ops
// declare (onnx_op_<op>) are registered as ONNX schemas, whose shape
// inference calls the op's shape hook, and each node is checked against its
// op's definition before it becomes a layer of that op.
#include <climits>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include "onnx/onnx_graph.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::onnx_import {
namespace {

using onnx::AttributeProto;

// What the registered schemas' shape inference calls: per identity, the
// definition and plugin of the latest import that declared it.
struct RegisteredOp {
  OnnxOpDefinition definition;
  std::string plugin_path;
};

std::mutex &registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, RegisteredOp> &registered_ops() {
  static std::map<std::string, RegisteredOp> ops;
  return ops;
}

std::string schema_key(const OnnxOpDefinition &d) { return fmt::format("{}::{}@{}", d.domain, d.op_type, d.since_version); }

std::vector<std::string> param_names(const Plugin &plugin, const OnnxOpDefinition &d) {
  std::vector<std::string> names;
  if (const std::optional<ParamTypes> types = plugin.param_types(d.op))
    for (const ParamSlot &slot : *types) names.push_back(slot.name);
  return names;
}

std::string definition_text(const OnnxOpDefinition &d) {
  return fmt::format("definition of op '{}', {}", d.op, d.identity_text());
}

nlohmann::ordered_json attribute_value(const OnnxAttrDefinition &a, const AttributeProto &p, const std::string &label) {
  const std::string where = fmt::format("{}: attribute '{}'", label, a.name);
  switch (a.type) {
    case OnnxAttrType::float_scalar: return p.f();
    case OnnxAttrType::int_scalar:
      if (p.i() < INT32_MIN || p.i() > INT32_MAX)
        throw Error(fmt::format("{} = {} does not fit the parameter's 32-bit int", where, p.i()));
      return p.i();
    case OnnxAttrType::float_list:
    case OnnxAttrType::int_list: {
      const int size = a.type == OnnxAttrType::float_list ? p.floats_size() : p.ints_size();
      if (size < 1 || size > 16)
        throw Error(fmt::format("{} has {} values; a parameter array holds 1 to 16", where, size));
      if (a.type == OnnxAttrType::float_list) return std::vector<float>(p.floats().begin(), p.floats().end());
      return std::vector<int64_t>(p.ints().begin(), p.ints().end());
    }
  }
  return nullptr;
}

// The shape inference of a registered identity: element type from input
// 0; shapes from the op's hook once every input shape is known.
void infer_custom(onnx::InferenceContext &ctx, const std::string &key) {
  RegisteredOp op;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    op = registered_ops().at(key);
  }
  for (std::size_t o = 0; o < ctx.getNumOutputs(); ++o) onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < ctx.getNumInputs(); ++i) {
    if (!onnx::hasInputShape(ctx, i)) return;
    Shape shape;
    for (const auto &dim : ctx.getInputType(i)->tensor_type().shape().dim()) {
      if (!dim.has_dim_value()) return;
      shape.push_back(int(dim.dim_value()));
    }
    shapes.push_back(shape);
  }
  try {
    const Plugin plugin = Plugin::open(op.plugin_path);
    const std::string label = fmt::format("{} node", op.definition.identity_text());
    const nlohmann::ordered_json params = custom_params(op.definition, param_names(plugin, op.definition), label,
                                                        [&](const std::string &name) { return ctx.getAttribute(name); });
    std::vector<std::string> warnings;
    const PackedParams packed = plugin.pack_params(op.definition.op, params, warnings);
    const std::vector<Shape> out = plugin.shape_inference(op.definition.op, packed, shapes, int(ctx.getNumOutputs()));
    for (std::size_t o = 0; o < out.size() && o < ctx.getNumOutputs(); ++o) {
      auto *shape = ctx.getOutputType(o)->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int d : out[o]) shape->add_dim()->set_dim_value(d);
    }
  } catch (const Error &e) {
    fail_shape_inference("op '", op.definition.op, "' shape hook: ", e.what());
  }
}

onnx::OpSchema make_schema(const OnnxOpDefinition &d) {
  onnx::OpSchema schema(d.op_type, __FILE__, __LINE__);
  schema.SetDomain(d.domain).SinceVersion(d.since_version);
  schema.SetDoc(fmt::format("The TPU SDK custom op '{}' ({})", d.op, d.identity_text()));
  for (int i = 0; i < d.num_inputs; ++i) schema.Input(i, fmt::format("input{}", i), "", "T");
  for (int o = 0; o < d.num_outputs; ++o) schema.Output(o, fmt::format("output{}", o), "", "T");
  std::vector<std::string> types;
  for (Dtype t : d.dtypes)
    types.push_back(t == Dtype::fp32 ? "tensor(float)" : t == Dtype::fp16 ? "tensor(float16)" : "tensor(bfloat16)");
  schema.TypeConstraint("T", types, "the element types the op's definition allows");
  for (const OnnxAttrDefinition &a : d.attrs)
    schema.Attr(a.name, fmt::format("parameter slot {}", a.param_slot), AttributeProto::AttributeType(int(a.type)),
                a.required);
  const std::string key = schema_key(d);
  schema.TypeAndShapeInferenceFunction([key](onnx::InferenceContext &ctx) { infer_custom(ctx, key); });
  return schema;
}

// The domain must be known to ONNX before a schema of it registers.
void register_domain(const OnnxOpDefinition &d) {
  auto &ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  const auto map = ranges.Map();
  const auto it = map.find(d.domain);
  if (it == map.end()) {
    ranges.AddDomainToVersion(d.domain, 1, INT_MAX / 2);
    return;
  }
  if (d.since_version < it->second.first || d.since_version > it->second.second)
    throw Error(fmt::format("op '{}' declares {}, but ONNX knows domain '{}' with versions {} to {}", d.op,
                            d.identity_text(), d.domain, it->second.first, it->second.second));
}

}  // namespace

nlohmann::ordered_json custom_params(const OnnxOpDefinition &d, const std::vector<std::string> &param_names,
                                     const std::string &label, const AttributeLookup &lookup) {
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < d.attrs.size(); ++i) {
    const OnnxAttrDefinition &a = d.attrs[i];
    const std::string key = i < param_names.size() ? param_names[i] : a.name;
    const AttributeProto *p = lookup(a.name);
    if (!p) {
      if (a.required)
        throw Error(fmt::format("{}: field 'attributes': '{}' ({}) is required by the {}", label, a.name,
                                onnx_attr_type_name(a.type), definition_text(d)));
      params[key] = a.type == OnnxAttrType::int_scalar ? nlohmann::ordered_json(int64_t(a.default_value))
                                                        : nlohmann::ordered_json(a.default_value);
      continue;
    }
    if (int(p->type()) != int(a.type))
      throw Error(fmt::format("{}: field 'attributes': '{}' has type {}, expected {} ({})", label, a.name,
                              AttributeProto::AttributeType_Name(p->type()), onnx_attr_type_name(a.type),
                              definition_text(d)));
    params[key] = attribute_value(a, *p, label);
  }
  return params;
}

void register_custom_schemas(const std::vector<OnnxOpDefinition> &ops, const std::string &plugin_path) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const OnnxOpDefinition &d : ops) {
    const std::string key = schema_key(d);
    auto known = registered_ops().find(key);
    if (known != registered_ops().end()) {  // registered by an earlier import: now served by this plugin
      known->second = RegisteredOp{d, plugin_path};
      continue;
    }
    const onnx::OpSchema *existing = onnx::OpSchemaRegistry::Schema(d.op_type, d.since_version, d.domain);
    if (existing && existing->SinceVersion() == d.since_version)
      throw Error(fmt::format("op '{}' declares {}, which ONNX already defines", d.op, d.identity_text()));
    register_domain(d);
    registered_ops().emplace(key, RegisteredOp{d, plugin_path});
    onnx::RegisterSchema(make_schema(d), 0);
  }
}

const OnnxOpDefinition &check_custom_node(Node &node) {
  ImportState &state = node.state();
  const std::string &domain = node.proto().domain();
  const int version = state.opsets.count(domain) ? state.opsets.at(domain) : 0;
  std::vector<std::string> declared, same_type;
  const OnnxOpDefinition *match = nullptr;
  for (const OnnxOpDefinition &d : state.custom_ops) {
    declared.push_back(d.identity_text());
    if (d.domain != domain || d.op_type != node.op_type()) continue;
    same_type.push_back(fmt::format("op '{}' serves {}", d.op, d.identity_text()));
    if (d.serves_version(version)) match = &d;
  }
  if (!match && same_type.empty())
    node.fail(fmt::format("no custom op declares the ONNX identity {}::{}; the plugin's ops declare: {}", domain,
                          node.op_type(), declared.empty() ? "none" : fmt::format("{}", fmt::join(declared, ", "))));
  if (!match)
    node.fail(fmt::format("field 'opset version': the model imports domain '{}' at version {}, but {}", domain, version,
                          fmt::join(same_type, "; ")));
  const OnnxOpDefinition &d = *match;
  if (node.num_inputs() != d.num_inputs)
    node.fail(fmt::format("field 'inputs': {} inputs, expected {} ({})", node.num_inputs(), d.num_inputs, definition_text(d)));
  if (node.num_outputs() != d.num_outputs)
    node.fail(fmt::format("field 'outputs': {} outputs, expected {} ({})", node.num_outputs(), d.num_outputs,
                          definition_text(d)));
  std::vector<std::string> attr_names;
  for (const OnnxAttrDefinition &a : d.attrs) attr_names.push_back(a.name);
  for (const AttributeProto &a : node.proto().attribute())
    if (std::find(attr_names.begin(), attr_names.end(), a.name()) == attr_names.end())
      node.fail(fmt::format("field 'attributes': '{}' is not in the {} (declared: {})", a.name(), definition_text(d),
                            attr_names.empty() ? "none" : fmt::format("{}", fmt::join(attr_names, ", "))));
  // The attribute types (and required ones) as the parameters will see them.
  custom_params(d, {}, fmt::format("{}: {}", state.where, node.label()),
                [&](const std::string &name) { return node.attr(name); });
  return d;
}

void convert_custom_node(Node &node) {
  ImportState &state = node.state();
  const OnnxOpDefinition &d = check_custom_node(node);
  const Dtype dtype = node.dtype();
  if (std::find(d.dtypes.begin(), d.dtypes.end(), dtype) == d.dtypes.end()) {
    std::vector<std::string> allowed;
    for (Dtype t : d.dtypes) allowed.push_back(dtype_name(t));
    node.fail(fmt::format("field 'dtype': the tensors are {}, expected one of {} ({})", dtype_name(dtype),
                          fmt::join(allowed, ", "), definition_text(d)));
  }
  const Plugin plugin = Plugin::open(state.plugin_path);
  const std::string label = fmt::format("{}: {}", state.where, node.label());
  nlohmann::ordered_json params =
      custom_params(d, param_names(plugin, d), label, [&](const std::string &name) { return node.attr(name); });
  std::vector<std::string> inputs;
  for (int i = 0; i < node.num_inputs(); ++i) inputs.push_back(node.data_input(i));
  node.emit(d.op, std::move(params), inputs, {node.proto().output().begin(), node.proto().output().end()});
}

}  // namespace tpu_runtime::onnx_import
