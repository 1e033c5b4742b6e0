// onnx_graph.h (private): the state of one ONNX import and the view of one
// node the op converters work with (onnx_import.cc walks the graph,
// onnx_standard_ops.cc and onnx_custom_ops.cc convert nodes).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "tpu_runtime/dtype.h"
#include "tpu_runtime/onnx_op.h"

namespace tpu_runtime::onnx_import {

// A tensor's element type and shape as the model (after shape inference)
// states them; `known` is false when a dim is symbolic or the rank unknown.
struct TensorInfo {
  int elem_type = 0;  // onnx::TensorProto::DataType
  std::vector<int64_t> dims;
  bool known = false;
};

// A constant (initializer or Constant node output), its values widened.
struct ConstTensor {
  int elem_type = 0;
  std::vector<int64_t> dims;
  std::vector<double> values;
};

// "float", "int64", ... for messages.
std::string elem_type_name(int elem_type);
// fp32 / fp16 / bf16, or nothing for the other element types.
std::optional<Dtype> float_dtype(int elem_type);
// The dtype the device holds an element type in (onnx_types.cc: double as
// fp32, int64 as int32, bool as uint8), or nothing (uint64, string, ...).
std::optional<Dtype> device_dtype(int elem_type);
// The element types device_dtype() takes, for messages.
const char *device_types_text();
// Whether the op's conversion takes integer (and bool) tensors; the others
// take float types only.
bool takes_integers(const std::string &op_type);
// A constant's value (a double) as int64, saturated: INT64_MAX, a Slice's
// "to the end", is 2^63 as a double, which int64 does not hold.
int64_t saturated_int64(double v);
std::vector<int64_t> saturated_int64s(const std::vector<double> &values);
// A constant's values as a weight's data: fp32 bytes for a float dtype,
// else the integer dtype's bytes, each value checked to be an integer it
// holds (refused naming `where` and the element: an int64 beyond int32).
std::vector<uint8_t> device_bytes(const ConstTensor &c, Dtype dtype, const std::string &where);
// The values of a TensorProto (raw or typed fields); throws Error naming
// `where` for external data or an unsupported element type.
ConstTensor read_tensor(const onnx::TensorProto &tensor, const std::string &where);

struct ImportState {
  std::string where;  // the model, for messages
  std::map<std::string, TensorInfo> infos;
  std::map<std::string, ConstTensor> constants;
  std::map<std::string, int> opsets;  // domain ("" for ai.onnx) -> version
  std::vector<OnnxOpDefinition> custom_ops;
  // The dtype of every tensor of the net (inputs, weights, layer outputs);
  // a bool is 0 / 1 in it (uint8 for an input or constant, the operands'
  // dtype for a comparison's result).
  std::map<std::string, Dtype> held;
  std::string plugin_path;  // for the custom layers' parameter types
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  nlohmann::ordered_json weights = nlohmann::ordered_json::array();
  std::set<std::string> weight_names, layer_names, tensor_names;
  std::vector<std::string> warnings;
  int generated = 0;  // tensors and weights the importer names itself
  // Strings made by a Cast to string (onnx_casts.cc): text outputs of the
  // net, which no node may read.
  std::set<std::string> text_tensors;
  // Tensors the model declares rank 0, which the net holds as [1]: a graph
  // input or output among them is a scalar input or output of the net.
  std::set<std::string> scalars;
};

class Node {
 public:
  Node(const onnx::NodeProto &node, int index, ImportState &state);

  const onnx::NodeProto &proto() const { return node_; }
  const std::string &op_type() const { return node_.op_type(); }
  // "node 'conv1' (Conv)", or "node 3 (Conv)" when it has no name.
  std::string label() const;
  [[noreturn]] void fail(std::string_view what) const;
  ImportState &state() const { return state_; }

  // Attributes: each read marks it used; check_attributes_used() refuses
  // the rest. A wrong type or a missing required one is refused.
  bool has_attr(const std::string &name) const;
  int64_t attr_int(const std::string &name, std::optional<int64_t> fallback = std::nullopt);
  float attr_float(const std::string &name, std::optional<float> fallback = std::nullopt);
  std::string attr_string(const std::string &name, std::optional<std::string> fallback = std::nullopt);
  std::vector<int64_t> attr_ints(const std::string &name, std::optional<std::vector<int64_t>> fallback = std::nullopt);
  // Marks an attribute used whose value the caller has checked itself.
  const onnx::AttributeProto *attr(const std::string &name);
  void check_attributes_used() const;
  // Refuses the attribute unless it has `expected` (or is absent).
  void require_attr_value(const std::string &name, int64_t expected, std::string_view why);

  // Inputs: an empty name (an omitted optional input) counts as absent.
  int num_inputs() const;
  bool has_input(int i) const;
  const std::string &input(int i) const { return node_.input(i); }
  int num_outputs() const { return node_.output_size(); }
  const std::string &output(int i) const { return node_.output(i); }
  const TensorInfo &info(const std::string &tensor) const;
  // The input as a constant (initializer / Constant), or refused naming `what`.
  const ConstTensor &constant_input(int i, std::string_view what) const;
  bool is_constant_input(int i) const;
  // The input as a tensor a layer reads: a constant becomes a weight (in
  // `as`, else its own type's dtype); a bool held in another dtype than
  // `as` is cast to it first (a builtin.cast layer).
  std::string data_input(int i, std::optional<Dtype> as = std::nullopt);
  // The fixed shape of an input or output (refused when not known).
  std::vector<int64_t> input_dims(int i) const;
  std::vector<int64_t> output_dims(int i) const;
  // The dtype shared by the data inputs and outputs that are not bools
  // (refused otherwise, and an integer one unless takes_integers(op));
  // bools follow it (data_input casts them), and without other tensors the
  // first bool input's dtype is the node's. `bool_outputs` is kept for the
  // callers that make bools (the outputs are never what decides).
  // `own_type_input`: an input that may have a numeric type of its own
  // (Pow's exponent), left out of the check; `own_type_output` likewise
  // (MaxPool's int64 Indices).
  Dtype dtype(bool bool_outputs = false, int own_type_input = -1, int own_type_output = -1) const;
  // The dtype the device holds a tensor in (device_dtype of its element
  // type, or the dtype a layer gave it); nothing for an unsupported type.
  std::optional<Dtype> held_dtype(const std::string &tensor, std::string_view role) const;
  void require_inputs(int low, int high) const;
  void require_outputs(int count) const;

  // A weight the importer makes (folded constants); returns its name.
  std::string add_weight(std::string_view hint, const std::vector<int64_t> &dims, Dtype dtype,
                         const std::vector<double> &values);
  // A new tensor name for an intermediate of a lowering into several layers.
  std::string temporary(std::string_view hint);
  // Appends a layer; the first layer of a node takes the node's name.
  void emit(std::string_view op, nlohmann::ordered_json params, const std::vector<std::string> &inputs,
            const std::vector<std::string> &outputs, const std::vector<Dtype> &out_dtypes = {});
  // A builtin.cast layer converting `tensor` into `to`, written into `out`
  // (a new temporary when empty); returns the converted tensor's name.
  std::string emit_cast(const std::string &tensor, Dtype to, std::string out = {});

 private:
  std::string constant_weight(const std::string &name, Dtype dtype);
  void record_held(const std::vector<std::string> &inputs, const std::vector<std::string> &outputs,
                   const std::vector<Dtype> &out_dtypes);
  const onnx::AttributeProto *find_attr(const std::string &name) const;
  const onnx::AttributeProto *typed_attr(const std::string &name, int type);

  const onnx::NodeProto &node_;
  int index_;
  ImportState &state_;
  std::set<std::string> used_attrs_;
  int emitted_ = 0;
};

// Cast and CastLike (onnx_casts.cc), to and from string tensors too.
void convert_cast(Node &node);
void convert_castlike(Node &node);
// The dtype string graph input `name` is held in: the one its Casts ask
// for (refused naming the node when a node other than Cast / CastLike
// reads it, or two Casts ask for different types); fp32 when no Cast does.
Dtype string_input_dtype(const onnx::GraphProto &g, const std::string &name, ImportState &state);
// The value of a Constant node (value, value_float(s), value_int(s)); other
// attributes are refused (onnx_import.cc).
ConstTensor constant_node_value(Node &node);
// The tensors' element types and shapes (inputs, value_info, outputs,
// initializers) and the values of the initializers of at most
// `max_values` elements, as shape inference left them.
void read_graph_facts(const onnx::ModelProto &model, ImportState &state, std::size_t max_values = SIZE_MAX);

// Folds the shape computations an exporter writes (Shape, Size,
// ConstantOfShape, Range, and integer / bool arithmetic and copies over
// constants: Gather, Unsqueeze, Concat, Mul, ...) into initializers,
// evaluated exactly on the host, so that the Reshape, Expand or Slice
// they configure sees constants (onnx_fold.cc). `infer` re-runs shape
// inference after each round: a Shape of a tensor whose shape a folded
// constant fixed is folded in the next round.
void fold_shape_computations(onnx::ModelProto &model, const std::string &where,
                             const std::function<void(onnx::ModelProto &)> &infer);
// Shape, Size, ConstantOfShape, Range that fold_shape_computations left
// (an input not constant, or a shape not fixed): refused naming the node
// and the input.
void refuse_unfolded(Node &node);

// Converts a node of the standard domain; false when the op is unknown.
bool convert_standard_node(Node &node);
// After a converted standard node whose int64 / uint64 result the device
// holds in 32 bits (Add, Sub, Mul, Neg, Abs; Cast from a float): a
// check layer flagging the elements that left the 32-bit range, which
// fails the run (onnx_int64_checks.cc).
void emit_int64_checks(Node &node);
// The standard ops convert_standard_node knows, sorted.
std::vector<std::string> standard_ops();
// The definition a custom-domain node matches (by domain, op type and the
// model's opset of the domain), its inputs, outputs and attributes checked
// against it; refused naming the node, the field and what was expected.
const OnnxOpDefinition &check_custom_node(Node &node);
// Converts a node of a custom domain by the identities in the state.
void convert_custom_node(Node &node);

// Registers ONNX schemas for the identities (once per identity and
// process; a later import with another plugin updates what their shape
// inference calls).
void register_custom_schemas(const std::vector<OnnxOpDefinition> &ops, const std::string &plugin_path);

// A custom node's attributes as the op's parameters, in slot order (the JSON
// a net layer's "params" holds, keyed by `param_names` when the op declares
// parameter types, else by attribute name); `lookup` finds an attribute by
// name (nullptr: absent). Errors start with `label`.
using AttributeLookup = std::function<const onnx::AttributeProto *(const std::string &)>;
nlohmann::ordered_json custom_params(const OnnxOpDefinition &d, const std::vector<std::string> &param_names,
                                     const std::string &label, const AttributeLookup &lookup);

}  // namespace tpu_runtime::onnx_import
