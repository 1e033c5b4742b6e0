// onnx_import.cc: an ONNX model as a net description (onnx_import.h): read,
// checked by ONNX's checker, shapes inferred, then each node converted in
// graph order (onnx_standard_ops.cc, onnx_custom_ops.cc).
#include "tpu_runtime/onnx_import.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "onnx/onnx_graph.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/net.h"

namespace tpu_runtime {
namespace {

using onnx_import::ConstTensor;
using onnx_import::ImportState;
using onnx_import::TensorInfo;

bool is_standard_domain(const std::string &domain) { return domain.empty() || domain == "ai.onnx"; }

onnx::ModelProto parse_model(std::string_view bytes, std::string_view where) {
  onnx::ModelProto model;
  if (bytes.size() > std::size_t(INT_MAX) || !model.ParseFromArray(bytes.data(), int(bytes.size())))
    throw Error(fmt::format("{}: not an ONNX model (the bytes do not parse as an onnx.ModelProto)", where));
  return model;
}

// Registers the plugin's identities when the model uses a custom domain.
void load_custom_ops(const onnx::ModelProto &model, const OnnxImportOptions &options, ImportState &state) {
  bool custom = false;
  for (const onnx::NodeProto &node : model.graph().node()) custom |= !is_standard_domain(node.domain());
  if (!custom) return;
  state.custom_ops = onnx_custom_ops(options.libraries);
  state.plugin_path = options.libraries.plugin;
  onnx_import::register_custom_schemas(state.custom_ops, state.plugin_path);
}

// Custom nodes against their definitions before ONNX's checker, so that a
// mismatch is reported as such (naming the definition) rather than as a
// schema violation.
void check_custom_nodes(const onnx::ModelProto &model, ImportState &state) {
  for (const auto &opset : model.opset_import())
    state.opsets[is_standard_domain(opset.domain()) ? std::string() : opset.domain()] = int(opset.version());
  for (int index = 0; index < model.graph().node_size(); ++index) {
    onnx_import::Node node(model.graph().node(index), index, state);
    if (!is_standard_domain(node.proto().domain())) onnx_import::check_custom_node(node);
  }
}

// The shapes the caller gives for graph inputs (OnnxImportOptions::input_shapes)
// written into the model's input types, before the checker and inference.
void fix_input_shapes(onnx::ModelProto &model, const OnnxImportOptions &options, const std::string &where) {
  std::vector<std::string> names;
  for (const auto &v : model.graph().input()) names.push_back(v.name());
  for (const auto &[name, dims] : options.input_shapes) {
    auto *inputs = model.mutable_graph()->mutable_input();
    const auto it = std::find_if(inputs->begin(), inputs->end(), [&](const auto &v) { return v.name() == name; });
    const std::string what = fmt::format("{}: input shape [{}] for '{}'", where, fmt::join(dims, ", "), name);
    if (it == inputs->end())
      throw Error(fmt::format("{}: the graph has no input '{}' (its inputs: {})", what, name, fmt::join(names, ", ")));
    auto *shape = it->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != int(dims.size()))
      throw Error(fmt::format("{}: the input has {} dims, not {}", what, shape->dim_size(), dims.size()));
    for (int d = 0; d < shape->dim_size(); ++d) {
      auto *dim = shape->mutable_dim(d);
      if (dims[std::size_t(d)] < 0) throw Error(fmt::format("{}: dim {} is negative", what, d));
      if (dim->has_dim_value() && dim->dim_value() != dims[std::size_t(d)])
        throw Error(fmt::format("{}: dim {} is fixed to {} by the model", what, d, dim->dim_value()));
      dim->set_dim_value(dims[std::size_t(d)]);  // replaces a dim_param
    }
  }
}

// Strides and dilations of standard nodes are positive: ONNX 1.12's
// shape inference of convolutions and pools divides by them (a 0 stops
// the process), so they are checked before it runs.
void check_window_steps(const onnx::ModelProto &model, ImportState &state) {
  for (int index = 0; index < model.graph().node_size(); ++index) {
    const onnx::NodeProto &proto = model.graph().node(index);
    if (!is_standard_domain(proto.domain())) continue;
    for (const onnx::AttributeProto &a : proto.attribute())
      if ((a.name() == "strides" || a.name() == "dilations") &&
          std::any_of(a.ints().begin(), a.ints().end(), [](int64_t v) { return v < 1; }))
        onnx_import::Node(proto, index, state)
            .fail(fmt::format("attribute '{}' is [{}]; each value must be at least 1", a.name(), fmt::join(a.ints(), ", ")));
  }
}

void check_model(const onnx::ModelProto &model, const std::string &where) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    throw Error(fmt::format("{}: the ONNX checker refuses the model: {}", where, e.what()));
  }
}

void infer_shapes(onnx::ModelProto &model, const std::string &where) {
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true, /*strict=*/1, false));
  } catch (const std::exception &e) {
    throw Error(fmt::format("{}: ONNX shape inference fails: {}", where, e.what()));
  }
}

void record_info(const onnx::ValueInfoProto &value, ImportState &state) {
  if (!value.type().has_tensor_type()) return;
  const auto &tensor = value.type().tensor_type();
  TensorInfo info;
  info.elem_type = tensor.elem_type();
  info.known = tensor.has_shape();
  for (const auto &dim : tensor.shape().dim()) {
    info.known = info.known && dim.has_dim_value() && dim.dim_value() >= 0;  // 0: an empty tensor
    info.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  }
  // A rank-0 tensor is held as one element; a graph input or output keeps rank 0 at the net's boundary.
  if (info.known && info.dims.empty()) {
    info.dims = {1};
    state.scalars.insert(value.name());
  }
  state.infos[value.name()] = info;
  state.tensor_names.insert(value.name());
}

}  // namespace

void onnx_import::read_graph_facts(const onnx::ModelProto &model, ImportState &state, std::size_t max_values) {
  const onnx::GraphProto &g = model.graph();
  for (const auto &v : g.input()) record_info(v, state);
  for (const auto &v : g.value_info()) record_info(v, state);
  for (const auto &v : g.output()) record_info(v, state);
  for (const onnx::TensorProto &t : g.initializer()) {
    state.tensor_names.insert(t.name());
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    double count = 1;
    for (int64_t d : dims) count *= double(d);
    if (!state.infos.count(t.name())) state.infos[t.name()] = TensorInfo{t.data_type(), dims, true};
    if (count > double(max_values)) continue;  // its shape only
    state.constants[t.name()] = onnx_import::read_tensor(t, fmt::format("{}: initializer '{}'", state.where, t.name()));
  }
}

namespace {

nlohmann::ordered_json net_inputs(const onnx::GraphProto &g, ImportState &state) {
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const auto &v : g.input()) {
    if (state.constants.count(v.name())) continue;  // an initializer listed as an input (IR < 4): a constant
    const TensorInfo &info = state.infos.at(v.name());
    const bool text = info.elem_type == onnx::TensorProto::STRING;  // onnx_casts.cc
    const std::optional<Dtype> dtype =
        text ? onnx_import::string_input_dtype(g, v.name(), state) : onnx_import::device_dtype(info.elem_type);
    const std::string what = fmt::format("{}: graph input '{}'", state.where, v.name());
    if (!dtype)
      throw Error(fmt::format("{} is {}; supported element types: {}", what,
                              onnx_import::elem_type_name(info.elem_type), onnx_import::device_types_text()));
    if (!info.known)
      throw Error(fmt::format("{} has the shape [{}]: every dim must be a fixed size (export with fixed "
                              "shapes, e.g. no dynamic_axes, or give the shape: --input-shape, input_shapes)",
                              what, fmt::join(info.dims, ", ")));
    if (info.dims.empty() || info.dims.size() > 8)
      throw Error(fmt::format("{} has {} dims; a net input has 1 to 8", what, info.dims.size()));
    inputs.push_back({{"name", v.name()}, {"shape", info.dims}, {"dtype", dtype_name(*dtype)}});
    if (text) inputs.back()["text"] = true;
    if (state.scalars.count(v.name())) inputs.back()["scalar"] = true;
    state.held[v.name()] = *dtype;
  }
  return inputs;
}

// Constant node: its value joins the constants (a layer reading it as data
// makes it a weight).
void read_constant_node(onnx_import::Node &node) {
  ImportState &state = node.state();
  node.require_outputs(1);
  const ConstTensor c = onnx_import::constant_node_value(node);
  state.constants[node.output(0)] = c;
  state.infos[node.output(0)] = TensorInfo{c.elem_type, c.dims, true};
}

void convert_nodes(const onnx::GraphProto &g, ImportState &state) {
  for (int index = 0; index < g.node_size(); ++index) {
    onnx_import::Node node(g.node(index), index, state);
    for (int i = 0; i < node.num_inputs(); ++i)
      if (node.has_input(i) && state.text_tensors.count(node.input(i)))
        node.fail(fmt::format("input {} ('{}') is the string result of a Cast; a string tensor a node makes can only "
                              "be a graph output",
                              i, node.input(i)));
    const bool standard = is_standard_domain(node.proto().domain());
    if (standard && node.op_type() == "Constant") {
      read_constant_node(node);
      continue;
    }
    if (!standard)
      onnx_import::convert_custom_node(node);
    else if (!onnx_import::convert_standard_node(node))
      node.fail(fmt::format("op {} is not supported; the importer supports: {}", node.op_type(),
                            fmt::join(onnx_import::standard_ops(), ", ")));
    else
      onnx_import::emit_int64_checks(node);
    node.check_attributes_used();
  }
}

// A graph output the model gives in another type than the ONNX graph says.
void warn_about_output_type(const std::string &name, ImportState &state) {
  const int type = state.infos.at(name).elem_type;
  const Dtype held = state.held.at(name);
  if (type == onnx::TensorProto::BOOL)
    state.warnings.push_back(fmt::format("graph output '{}' is bool: the model gives it as 0 / 1 in {}", name,
                                         dtype_name(held)));
  else if (type == onnx::TensorProto::INT64 || type == onnx::TensorProto::DOUBLE)
    state.warnings.push_back(fmt::format("graph output '{}' is {}: the model gives it as {}", name,
                                         onnx_import::elem_type_name(type), dtype_name(held)));
}

// A graph output that is a constant no layer reads (a Constant node's
// value, an initializer): a copy of a weight holding it, `<name>/value`
// (a weight itself cannot be a net output). False when that cannot be.
bool emit_constant_output(const std::string &name, ImportState &state) {
  const auto c = state.constants.find(name);
  if (c == state.constants.end() || state.weight_names.count(name)) return false;
  const std::optional<Dtype> dtype = onnx_import::device_dtype(c->second.elem_type);
  if (!dtype) return false;
  // A rank-0 constant is held as one element, a scalar output of the net.
  const std::vector<int64_t> dims = c->second.dims.empty() ? std::vector<int64_t>{1} : c->second.dims;
  if (c->second.dims.empty()) state.scalars.insert(name);
  std::string weight = name + "/value";
  while (state.tensor_names.count(weight)) weight += "_";
  const std::string where = fmt::format("{}: constant graph output '{}'", state.where, name);
  state.weights.push_back({{"name", weight},
                           {"shape", dims},
                           {"dtype", dtype_name(*dtype)},
                           {"data", encode_base64(onnx_import::device_bytes(c->second, *dtype, where))},
                           {"data_dtype", dtype_info(*dtype).is_float ? "fp32" : dtype_name(*dtype)}});
  std::string layer = name + "/copy";
  while (state.layer_names.count(layer)) layer += "_";
  state.layer_names.insert(layer);
  state.layers.push_back({{"name", layer}, {"op", "builtin.reshape"}, {"params", {{"shape", dims}}},
                          {"inputs", {weight}}, {"outputs", {name}}});
  state.held[name] = *dtype;
  return true;
}

std::vector<std::string> net_outputs(const onnx::GraphProto &g, ImportState &state) {
  std::vector<std::string> outputs;
  for (const auto &v : g.output()) {
    if (emit_constant_output(v.name(), state)) {
      warn_about_output_type(v.name(), state);
      outputs.push_back(v.name());
      continue;
    }
    const bool from_layer = std::any_of(state.layers.begin(), state.layers.end(), [&](const auto &layer) {
      const auto &outs = layer.at("outputs");
      return std::find(outs.begin(), outs.end(), v.name()) != outs.end();
    });
    if (!from_layer)
      throw Error(fmt::format("{}: graph output '{}' is {}: a net output must be computed by a layer", state.where,
                              v.name(), state.constants.count(v.name()) ? "a constant" : "a graph input"));
    warn_about_output_type(v.name(), state);
    outputs.push_back(v.name());
  }
  return outputs;
}

}  // namespace

ConstTensor onnx_import::constant_node_value(onnx_import::Node &node) {
  const std::string &where = node.state().where;
  ConstTensor c;
  if (const onnx::AttributeProto *a = node.attr("value")) {
    c = onnx_import::read_tensor(a->t(), fmt::format("{}: {}: attribute 'value'", where, node.label()));
  } else if (const onnx::AttributeProto *f = node.attr("value_float")) {
    c = {onnx::TensorProto::FLOAT, {}, {f->f()}};
  } else if (const onnx::AttributeProto *fs = node.attr("value_floats")) {
    c = {onnx::TensorProto::FLOAT, {fs->floats_size()}, {fs->floats().begin(), fs->floats().end()}};
  } else if (const onnx::AttributeProto *i = node.attr("value_int")) {
    c = {onnx::TensorProto::INT64, {}, {double(i->i())}};
  } else if (const onnx::AttributeProto *is = node.attr("value_ints")) {
    c = {onnx::TensorProto::INT64, {is->ints_size()}, {is->ints().begin(), is->ints().end()}};
  }
  node.check_attributes_used();  // sparse_value, value_string(s): refused
  return c;
}

bool onnx_import_available() { return true; }

std::vector<std::string> onnx_supported_ops() { return onnx_import::standard_ops(); }

bool is_onnx_path(std::string_view path) {
  if (path.size() < 5) return false;
  std::string tail(path.substr(path.size() - 5));
  for (char &c : tail) c = char(std::tolower(static_cast<unsigned char>(c)));
  return tail == ".onnx";
}

std::vector<OnnxOpDefinition> onnx_custom_ops(const LibraryPaths &libraries) {
  const Backend backend = Backend::open(libraries.backend);
  const Plugin plugin = Plugin::open(libraries.plugin);
  std::vector<OnnxOpDefinition> ops;
  for (const std::string &op : backend.registered_ops()) {
    std::optional<OnnxOpDefinition> d = plugin.onnx_op(op);
    if (!d) continue;
    for (const OnnxOpDefinition &other : ops)
      if (other.domain == d->domain && other.op_type == d->op_type &&
          (d->serves_version(other.since_version) || other.serves_version(d->since_version)))
        throw Error(fmt::format("{}: ops '{}' and '{}' both declare {}::{} for overlapping opset versions ({} and {})",
                                plugin.path(), other.op, op, d->domain, d->op_type, other.identity_text(),
                                d->identity_text()));
    ops.push_back(std::move(*d));
  }
  return ops;
}

OnnxImport import_onnx_bytes(std::string_view bytes, std::string_view where, std::string_view name,
                             const OnnxImportOptions &options) {
  onnx::ModelProto model = parse_model(bytes, where);
  ImportState state;
  state.where = std::string(where);
  fix_input_shapes(model, options, state.where);
  load_custom_ops(model, options, state);
  check_custom_nodes(model, state);
  check_window_steps(model, state);
  check_model(model, state.where);
  infer_shapes(model, state.where);
  onnx_import::fold_shape_computations(model, state.where,
                                       [&](onnx::ModelProto &m) { infer_shapes(m, state.where); });
  onnx_import::read_graph_facts(model, state);
  const onnx::GraphProto &g = model.graph();
  nlohmann::ordered_json net = {{"name", name}, {"inputs", net_inputs(g, state)}};
  convert_nodes(g, state);
  const std::vector<std::string> outputs = net_outputs(g, state);  // may add a weight and its copy
  if (!state.weights.empty()) net["weights"] = state.weights;
  net["layers"] = state.layers;
  net["outputs"] = outputs;
  std::vector<std::string> text_outputs;
  for (const std::string &output : outputs)
    if (state.text_tensors.count(output)) text_outputs.push_back(output);
  if (!text_outputs.empty()) net["text_outputs"] = text_outputs;
  std::vector<std::string> scalar_outputs;
  for (const std::string &output : outputs)
    if (state.scalars.count(output)) scalar_outputs.push_back(output);
  if (!scalar_outputs.empty()) net["scalar_outputs"] = scalar_outputs;
  if (state.layers.empty()) throw Error(fmt::format("{}: the graph has no node that computes anything", where));
  OnnxImport result;
  result.net = parse_net(net, where, name);
  result.net_json = std::move(net);
  result.warnings = std::move(state.warnings);
  return result;
}

OnnxImport import_onnx(const std::string &path, const OnnxImportOptions &options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the ONNX model", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return import_onnx_bytes(bytes.str(), path, std::filesystem::path(path).stem().string(), options);
}

}  // namespace tpu_runtime
