// onnx_node.cc: one ONNX node as the converters see it (onnx_graph.h):
// attributes read with their use tracked, inputs as data or constants,
// layers and weights appended to the import's net.
#include <cctype>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "onnx/onnx_graph.h"
#include "onnx/onnx_lowering.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/net.h"

namespace tpu_runtime::onnx_import {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

const char *attr_type_name(int type) {
  switch (type) {
    case AttributeProto::FLOAT: return "float";
    case AttributeProto::INT: return "int";
    case AttributeProto::STRING: return "string";
    case AttributeProto::TENSOR: return "tensor";
    case AttributeProto::GRAPH: return "graph";
    case AttributeProto::FLOATS: return "floats";
    case AttributeProto::INTS: return "ints";
    case AttributeProto::STRINGS: return "strings";
    default: return "another type";
  }
}

template <typename T>
std::vector<double> widen(const T *data, std::size_t count) {
  return std::vector<double>(data, data + count);
}

// Raw little-endian bytes of `count` elements of the element type.
std::vector<double> raw_values(const std::string &raw, int type, std::size_t count, const std::string &where) {
  auto typed = [&]<typename T>(T) {
    if (raw.size() != count * sizeof(T))
      throw Error(fmt::format("{}: raw_data holds {} bytes, expected {} ({} elements of {})", where, raw.size(),
                              count * sizeof(T), count, elem_type_name(type)));
    std::vector<T> v(count);
    if (count) std::memcpy(v.data(), raw.data(), raw.size());
    return widen(v.data(), count);
  };
  switch (type) {
    case TensorProto::FLOAT: return typed(float{});
    case TensorProto::DOUBLE: return typed(double{});
    case TensorProto::INT8: return typed(int8_t{});
    case TensorProto::UINT8: case TensorProto::BOOL: return typed(uint8_t{});
    case TensorProto::INT16: return typed(int16_t{});
    case TensorProto::UINT16: return typed(uint16_t{});
    case TensorProto::INT32: return typed(int32_t{});
    case TensorProto::UINT32: return typed(uint32_t{});
    case TensorProto::INT64: return typed(int64_t{});
    case TensorProto::UINT64: return typed(uint64_t{});
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: {
      std::vector<double> bits = typed(uint16_t{});
      for (double &b : bits)
        b = type == TensorProto::FLOAT16 ? fp16_to_float(uint16_t(b)) : bf16_to_float(uint16_t(b));
      return bits;
    }
    default: throw Error(fmt::format("{}: element type {} is not supported", where, elem_type_name(type)));
  }
}

// The typed repeated fields (what raw_data replaces).
std::vector<double> field_values(const TensorProto &t, const std::string &where) {
  switch (t.data_type()) {
    case TensorProto::FLOAT: return widen(t.float_data().data(), t.float_data_size());
    case TensorProto::DOUBLE: return widen(t.double_data().data(), t.double_data_size());
    case TensorProto::INT64: return widen(t.int64_data().data(), t.int64_data_size());
    case TensorProto::UINT32: case TensorProto::UINT64: return widen(t.uint64_data().data(), t.uint64_data_size());
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: {
      std::vector<double> v;
      for (int32_t bits : t.int32_data())
        v.push_back(t.data_type() == TensorProto::FLOAT16 ? fp16_to_float(uint16_t(bits)) : bf16_to_float(uint16_t(bits)));
      return v;
    }
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::INT16: case TensorProto::UINT16:
    case TensorProto::INT32: case TensorProto::BOOL:
      return widen(t.int32_data().data(), t.int32_data_size());
    default: throw Error(fmt::format("{}: element type {} is not supported", where, elem_type_name(t.data_type())));
  }
}

std::vector<uint8_t> fp32_bytes(const std::vector<double> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float f = float(values[i]);
    std::memcpy(bytes.data() + i * sizeof(float), &f, sizeof(float));
  }
  return bytes;
}

}  // namespace

std::string elem_type_name(int elem_type) {
  if (elem_type == 0) return "an unknown element type";
  if (!TensorProto::DataType_IsValid(elem_type)) return fmt::format("element type {}", elem_type);
  static const std::map<int, const char *> names = {
      {TensorProto::FLOAT, "float"},   {TensorProto::FLOAT16, "float16"}, {TensorProto::BFLOAT16, "bfloat16"},
      {TensorProto::DOUBLE, "double"}, {TensorProto::BOOL, "bool"},       {TensorProto::STRING, "string"}};
  if (auto it = names.find(elem_type); it != names.end()) return it->second;
  std::string name = TensorProto::DataType_Name(TensorProto::DataType(elem_type));
  for (char &c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::optional<Dtype> float_dtype(int elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT: return Dtype::fp32;
    case TensorProto::FLOAT16: return Dtype::fp16;
    case TensorProto::BFLOAT16: return Dtype::bf16;
    default: return std::nullopt;
  }
}

ConstTensor read_tensor(const TensorProto &t, const std::string &where) {
  if (t.data_location() == TensorProto::EXTERNAL)
    throw Error(fmt::format("{}: the data is stored outside the model file (external data), which the importer "
                            "does not read; save the model with its data inside",
                            where));
  ConstTensor c;
  c.elem_type = t.data_type();
  std::size_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) throw Error(fmt::format("{}: dim {} is negative", where, d));
    c.dims.push_back(d);
    count *= std::size_t(d);
  }
  c.values = t.has_raw_data() ? raw_values(t.raw_data(), c.elem_type, count, where) : field_values(t, where);
  if (c.values.size() != count)
    throw Error(fmt::format("{}: holds {} values, but its shape [{}] has {} elements", where, c.values.size(),
                            fmt::join(c.dims, ", "), count));
  return c;
}

Node::Node(const onnx::NodeProto &node, int index, ImportState &state) : node_(node), index_(index), state_(state) {}

std::string Node::label() const {
  const std::string domain = node_.domain().empty() ? "" : node_.domain() + "::";
  if (node_.name().empty()) return fmt::format("node {} ({}{})", index_, domain, node_.op_type());
  return fmt::format("node '{}' ({}{})", node_.name(), domain, node_.op_type());
}

void Node::fail(std::string_view what) const { throw Error(fmt::format("{}: {}: {}", state_.where, label(), what)); }

const AttributeProto *Node::find_attr(const std::string &name) const {
  for (const AttributeProto &a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool Node::has_attr(const std::string &name) const { return find_attr(name) != nullptr; }

const AttributeProto *Node::attr(const std::string &name) {
  used_attrs_.insert(name);
  return find_attr(name);
}

const AttributeProto *Node::typed_attr(const std::string &name, int type) {
  const AttributeProto *a = attr(name);
  if (a && a->type() != type)
    fail(fmt::format("attribute '{}' is {}, expected {}", name, attr_type_name(a->type()), attr_type_name(type)));
  return a;
}

int64_t Node::attr_int(const std::string &name, std::optional<int64_t> fallback) {
  if (const AttributeProto *a = typed_attr(name, AttributeProto::INT)) return a->i();
  if (!fallback) fail(fmt::format("attribute '{}' is required", name));
  return *fallback;
}

float Node::attr_float(const std::string &name, std::optional<float> fallback) {
  if (const AttributeProto *a = typed_attr(name, AttributeProto::FLOAT)) return a->f();
  if (!fallback) fail(fmt::format("attribute '{}' is required", name));
  return *fallback;
}

std::string Node::attr_string(const std::string &name, std::optional<std::string> fallback) {
  if (const AttributeProto *a = typed_attr(name, AttributeProto::STRING)) return a->s();
  if (!fallback) fail(fmt::format("attribute '{}' is required", name));
  return *fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string &name, std::optional<std::vector<int64_t>> fallback) {
  if (const AttributeProto *a = typed_attr(name, AttributeProto::INTS)) return {a->ints().begin(), a->ints().end()};
  if (!fallback) fail(fmt::format("attribute '{}' is required", name));
  return *fallback;
}

void Node::check_attributes_used() const {
  for (const AttributeProto &a : node_.attribute())
    if (!used_attrs_.count(a.name()))
      fail(fmt::format("attribute '{}' is not supported by the importer (its {} {} cannot be honoured, so the node "
                       "is refused rather than the attribute ignored)",
                       a.name(), op_type(), a.name()));
}

void Node::require_attr_value(const std::string &name, int64_t expected, std::string_view why) {
  const int64_t value = attr_int(name, expected);
  if (value != expected) fail(fmt::format("attribute '{}' = {} is not supported: {}", name, value, why));
}

int Node::num_inputs() const {
  int n = node_.input_size();
  while (n > 0 && node_.input(n - 1).empty()) --n;
  return n;
}

bool Node::has_input(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }

const TensorInfo &Node::info(const std::string &tensor) const {
  auto it = state_.infos.find(tensor);
  if (it == state_.infos.end()) fail(fmt::format("tensor '{}' has no type or shape after shape inference", tensor));
  return it->second;
}

bool Node::is_constant_input(int i) const { return has_input(i) && state_.constants.count(input(i)); }

const ConstTensor &Node::constant_input(int i, std::string_view what) const {
  if (!has_input(i)) fail(fmt::format("input {} ({}) is missing", i, what));
  auto it = state_.constants.find(input(i));
  if (it == state_.constants.end())
    fail(fmt::format("input {} ('{}', {}) must be a constant (an initializer or a Constant node): the importer "
                     "builds static layers, whose {} is fixed at build time",
                     i, input(i), what, what));
  return it->second;
}

std::vector<int64_t> dims_of(const Node &node, const std::string &tensor, std::string_view role) {
  const TensorInfo &t = node.info(tensor);
  if (!t.known) node.fail(fmt::format("{} '{}' has no fixed shape after shape inference", role, tensor));
  return t.dims;
}

std::vector<int64_t> Node::input_dims(int i) const {
  if (!has_input(i)) fail(fmt::format("input {} is missing", i));
  return dims_of(*this, input(i), "input");
}

std::vector<int64_t> Node::output_dims(int i) const { return dims_of(*this, output(i), "output"); }

std::optional<Dtype> Node::held_dtype(const std::string &tensor, std::string_view) const {
  if (const auto it = state_.held.find(tensor); it != state_.held.end()) return it->second;
  if (const auto c = state_.constants.find(tensor); c != state_.constants.end()) return device_dtype(c->second.elem_type);
  return device_dtype(info(tensor).elem_type);
}

Dtype Node::dtype(bool, int own_type_input, int own_type_output) const {
  std::optional<Dtype> shared, first_bool;
  const bool integers = takes_integers(op_type()) || later_op_takes_integers(op_type());
  auto check = [&](const std::string &tensor, std::string_view role) {
    const int type = info(tensor).elem_type;
    const std::optional<Dtype> d = held_dtype(tensor, role);
    if (type == TensorProto::BOOL) {
      if (!first_bool) first_bool = d;
      return;
    }
    if (!d || (!integers && !dtype_info(*d).is_float))
      fail(fmt::format("{} '{}' is {}; supported element types: {}", role, tensor, elem_type_name(type),
                       integers ? device_types_text() : "float, float16, bfloat16, double (as fp32)"));
    if (shared && *shared != *d)
      fail(fmt::format("{} '{}' is {}, but the node's other tensors are {}; one element type per node", role, tensor,
                       dtype_name(*d), dtype_name(*shared)));
    shared = d;
  };
  for (int i = 0; i < num_inputs(); ++i)
    if (i != own_type_input && has_input(i) && !state_.constants.count(input(i))) check(input(i), "input");
  for (int i = 0; i < num_outputs(); ++i)
    if (i != own_type_output && !output(i).empty()) check(output(i), "output");
  if (!shared && first_bool && !integers)
    fail(fmt::format("the data tensors are bool; {} takes float, float16, bfloat16 or double", op_type()));
  return shared.value_or(first_bool.value_or(Dtype::fp32));
}

void Node::require_inputs(int low, int high) const {
  const int n = num_inputs();
  if (n < low || n > high)
    fail(low == high ? fmt::format("{} inputs, expected {}", n, low)
                     : fmt::format("{} inputs, expected {} to {}", n, low, high));
}

void Node::require_outputs(int count) const {
  if (num_outputs() != count)
    fail(fmt::format("{} outputs; the importer supports {} (the optional outputs of {} are not supported)",
                     num_outputs(), count, op_type()));
}

// A constant as a weight of `dtype`, named after it (a second dtype of one
// constant gets its own weight).
std::string Node::constant_weight(const std::string &name, Dtype dtype) {
  const ConstTensor &c = state_.constants.at(name);
  std::string weight = name;
  if (state_.weight_names.count(name)) {
    if (state_.held.at(name) == dtype) return name;
    weight = fmt::format("{}/{}", name, dtype_name(dtype));
    if (state_.weight_names.count(weight)) return weight;
  }
  std::vector<int64_t> dims = c.dims;
  if (dims.empty()) dims = {1};  // a scalar broadcasts as a one-element tensor
  const bool is_float = dtype_info(dtype).is_float;
  nlohmann::ordered_json w = {
      {"name", weight},
      {"shape", dims},
      {"dtype", dtype_name(dtype)},
      {"data", encode_base64(device_bytes(c, dtype, fmt::format("{}: {}: constant '{}'", state_.where, label(), name)))},
      {"data_dtype", is_float ? "fp32" : dtype_name(dtype)}};
  state_.weights.push_back(std::move(w));
  state_.weight_names.insert(weight);
  state_.held[weight] = dtype;
  return weight;
}

std::string Node::data_input(int i, std::optional<Dtype> as) {
  if (!has_input(i)) fail(fmt::format("input {} is missing", i));
  const std::string &name = input(i);
  const bool is_bool = info(name).elem_type == TensorProto::BOOL;
  const std::optional<Dtype> held = held_dtype(name, "input");
  if (!held)
    fail(fmt::format("input {} ('{}') is {}; supported element types: {}", i, name, elem_type_name(info(name).elem_type),
                     device_types_text()));
  const Dtype want = as && is_bool ? *as : *held;
  if (state_.constants.count(name)) return constant_weight(name, want);
  if (want == *held) return name;
  // 0 / 1: exact in every dtype
  return emit_cast(name, want, temporary(fmt::format("{}_as_{}", name, dtype_name(want))));
}

std::string Node::emit_cast(const std::string &tensor, Dtype to, std::string out) {
  if (out.empty()) out = temporary(dtype_name(to));
  emit("builtin.cast", {{"to", dtype_name(to)}}, {tensor}, {out}, {to});
  return out;
}

std::string Node::temporary(std::string_view hint) {
  std::string name;
  do name = fmt::format("{}/{}_{}", node_.name().empty() ? op_type() : node_.name(), hint, state_.generated++);
  while (state_.tensor_names.count(name));
  state_.tensor_names.insert(name);
  return name;
}

// The outputs' dtypes: `out_dtypes`, else the first input's (what the
// built-in layers give, a custom op's element-wise dtype rule too).
void Node::record_held(const std::vector<std::string> &inputs, const std::vector<std::string> &outputs,
                       const std::vector<Dtype> &out_dtypes) {
  std::optional<Dtype> first;
  if (!inputs.empty()) first = held_dtype(inputs[0], "input");
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (k < out_dtypes.size()) state_.held[outputs[k]] = out_dtypes[k];
    else if (first) state_.held[outputs[k]] = *first;
  }
}

std::string Node::add_weight(std::string_view hint, const std::vector<int64_t> &dims, Dtype dtype,
                             const std::vector<double> &values) {
  const std::string name = temporary(hint);
  state_.held[name] = dtype;
  const bool is_float = dtype_info(dtype).is_float;  // an integer weight holds its values exactly
  const std::vector<uint8_t> bytes =
      is_float ? fp32_bytes(values)
               : device_bytes(ConstTensor{0, dims, values}, dtype, fmt::format("{}: {}: weight '{}'", state_.where,
                                                                                label(), name));
  state_.weights.push_back({{"name", name},
                            {"shape", dims},
                            {"dtype", dtype_name(dtype)},
                            {"data", encode_base64(bytes)},
                            {"data_dtype", is_float ? "fp32" : dtype_name(dtype)}});
  state_.weight_names.insert(name);
  return name;
}

void Node::emit(std::string_view op, nlohmann::ordered_json params, const std::vector<std::string> &inputs,
                const std::vector<std::string> &outputs, const std::vector<Dtype> &out_dtypes) {
  std::string base = node_.name().empty() ? fmt::format("{}_{}", op_type(), index_) : node_.name();
  if (emitted_ > 0) base = fmt::format("{}/{}", base, emitted_);
  std::string name = base;
  for (int k = 1; state_.layer_names.count(name); ++k) name = fmt::format("{}_{}", base, k);
  state_.layer_names.insert(name);
  ++emitted_;
  nlohmann::ordered_json layer = {{"name", name}, {"op", op}, {"params", std::move(params)},
                                  {"inputs", inputs}, {"outputs", outputs}};
  if (!out_dtypes.empty()) {
    std::vector<std::string> names;
    for (Dtype d : out_dtypes) names.push_back(dtype_name(d));
    layer["out_dtypes"] = names;
  }
  record_held(inputs, outputs, out_dtypes);
  state_.layers.push_back(std::move(layer));
}

}  // namespace tpu_runtime::onnx_import
