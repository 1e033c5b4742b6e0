// onnx_casts.cc: Cast and CastLike, between the held types (onnx_types.cc)
// and to and from string tensors (docs/onnx.md, "String tensors").
//
// The device holds no text. A string graph input is held as the numbers the
// Casts reading it ask for, and is a text input of the net (net.h): the run
// reads the caller's strings as numbers of that type. A Cast to string
// copies its numbers into a text output of the net, which the run writes
// out as text. So a string tensor can be a graph input read by Casts, or
// the result of a Cast that is a graph output, and nothing else.
#include <fmt/format.h>

#include "onnx/onnx_graph.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::onnx_import {
namespace {

using onnx::TensorProto;

// A cast into int64 or uint64 (held as int32, uint32) from a type whose
// values the held type does not all hold: unsigned into signed from 2^31,
// signed into unsigned below 0.
void check_wide_integer_cast(Node &node, int from, int to, const std::string &target) {
  const bool from_unsigned = from == TensorProto::UINT32 || from == TensorProto::UINT64;
  const bool from_signed =
      from == TensorProto::INT8 || from == TensorProto::INT16 || from == TensorProto::INT32 || from == TensorProto::INT64;
  if ((to == TensorProto::INT64 && from_unsigned) || (to == TensorProto::UINT64 && from_signed))
    node.fail(fmt::format("{}: a cast from {} to {} is not supported (the device holds int64 as int32 and uint64 as "
                          "uint32, which do not hold every {} value)",
                          target, elem_type_name(from), elem_type_name(to), elem_type_name(from)));
}

// The output, a copy of input 0 (held alike): a layer, since a net output
// must be computed by one.
void emit_copy(Node &node) {
  const std::vector<int64_t> dims = node.output_dims(0);
  if (dims.empty()) node.fail(fmt::format("output '{}' is a scalar (rank 0), which a layer cannot produce", node.output(0)));
  node.emit("builtin.reshape", {{"shape", dims}}, {node.data_input(0)}, {node.output(0)});
}

// Numbers to a string graph output: the copy is a text output of the net.
void cast_to_text(Node &node, int from, const std::string &target) {
  if (from == TensorProto::STRING) node.fail(fmt::format("{}: a cast from string to string is not supported", target));
  if (from == TensorProto::BOOL)
    node.fail(fmt::format("{}: a cast from bool to string is not supported (numbers only)", target));
  if (!node.held_dtype(node.input(0), "input"))
    node.fail(fmt::format("{}: a cast from {} to string is not supported (supported element types: {})", target,
                          elem_type_name(from), device_types_text()));
  emit_copy(node);
  node.state().text_tensors.insert(node.output(0));
}

// `to`: the target element type; `target` says where it came from.
void convert_cast_to(Node &node, int to, const std::string &target) {
  node.require_outputs(1);
  node.attr_int("saturate", 1);  // float8 targets only
  const int from = node.info(node.input(0)).elem_type;
  if (to == TensorProto::STRING) return cast_to_text(node, from, target);
  // A string input is already held as this cast's type (string_input_dtype).
  if (from == TensorProto::STRING) return emit_copy(node);
  const std::optional<Dtype> source = node.held_dtype(node.input(0), "input"), held_target = device_dtype(to);
  if (!source || !held_target)
    node.fail(fmt::format("{}: a cast from {} to {} is not supported (supported element types: {})", target,
                          elem_type_name(from), elem_type_name(to), device_types_text()));
  check_wide_integer_cast(node, from, to, target);
  const std::string x = node.data_input(0);
  if (to == TensorProto::BOOL) {
    node.emit("builtin.expression", {{"formula", "x0 != 0"}, {"names", {"x0"}}}, {x}, {node.output(0)});
    return;
  }
  if (*source == *held_target) return emit_copy(node);
  node.emit_cast(x, *held_target, node.output(0));
}

// The type a node reading string tensor `name` as input `i` asks it to be
// read as: a Cast's or CastLike's target; nothing for CastLike's input 1
// (read for its type only).
std::optional<int> string_read_as(Node &node, int i, const std::string &name) {
  const bool cast = node.op_type() == "Cast" && i == 0, like = node.op_type() == "CastLike";
  if (!cast && !like)
    node.fail(fmt::format("input {} ('{}') is a string tensor; a string graph input can only be read by Cast or "
                          "CastLike (to a number)",
                          i, name));
  if (like && i == 1) return std::nullopt;
  const onnx::NodeProto &p = node.proto();
  int to = TensorProto::UNDEFINED;
  if (cast) {
    for (const onnx::AttributeProto &a : p.attribute())
      if (a.name() == "to") to = int(a.i());
  } else if (p.input_size() > 1) {
    to = node.info(p.input(1)).elem_type;
  }
  if (to == TensorProto::STRING || to == TensorProto::BOOL || !device_dtype(to))
    node.fail(fmt::format("a cast of string input '{}' to {} is not supported (numbers only: {}, not bool)", name,
                          elem_type_name(to), device_types_text()));
  return to;
}

}  // namespace

// Cast between the held types, ONNX's (numpy's) rules: to bool x != 0 (NaN
// is true); from bool 0 / 1; float to integer truncated toward zero
// (saturated beyond the range, NaN to 0: left undefined by ONNX); integer
// to integer wrapped; to float nearest even. Types held alike (int64 and
// int32, double and float) are a copy.
void convert_cast(Node &node) {
  node.require_inputs(1, 1);
  const int to = int(node.attr_int("to"));
  convert_cast_to(node, to, fmt::format("attribute 'to' = {}", elem_type_name(to)));
}

// CastLike: a Cast to input 1's element type (its values are not read).
void convert_castlike(Node &node) {
  node.require_inputs(2, 2);
  const int to = node.info(node.input(1)).elem_type;
  convert_cast_to(node, to, fmt::format("input 1 ('{}') is {}", node.input(1), elem_type_name(to)));
}

Dtype string_input_dtype(const onnx::GraphProto &g, const std::string &name, ImportState &state) {
  std::optional<int> held;  // the element type the first reader asks for
  for (int index = 0; index < g.node_size(); ++index) {
    Node node(g.node(index), index, state);
    for (int i = 0; i < g.node(index).input_size(); ++i) {
      if (g.node(index).input(i) != name) continue;
      const std::optional<int> to = string_read_as(node, i, name);
      if (!to) continue;
      if (held && device_dtype(*held) != device_dtype(*to))
        node.fail(fmt::format("casts string input '{}' to {}, but an earlier node casts it to {}: the input is held "
                              "as one type",
                              name, elem_type_name(*to), elem_type_name(*held)));
      held = to;
    }
  }
  // No Cast reads it (unused, or only CastLike's type input): its strings are still read, as float.
  return held ? *device_dtype(*held) : Dtype::fp32;
}

}  // namespace tpu_runtime::onnx_import
