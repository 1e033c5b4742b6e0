// onnx_int64_checks.cc: run-time checks of the values the device holds in
// 32 bits for an int64 / uint64 tensor (docs/onnx.md, "int64 results").
//
// The device holds int64 as int32 and uint64 as uint32: an Add, Sub, Mul,
// Neg or Abs whose true result leaves the 32-bit range wraps, and a
// Cast from a float saturates. After such a node the importer adds a check
// layer (net.h NetLayer::check) whose output flags the elements where that
// happened; the run fails at the first flagged element, naming the node.
//
// The flags of the arithmetic ops come from fp32: the operands and the
// wrapped result r cast to fp32, the node's formula evaluated on the
// operands, flag = |formula - r| > 2^31. That is exact: the true result t
// and r differ by a multiple of 2^32 (the wrap). Within the range (|t| <
// 2^31) the fp32 formula is off by at most 3 x 2^-24 x 2^31 < 2^9 and r's
// cast by 2^7, far below 2^31; outside, |t - r| >= 2^32 while the fp32
// error is at most 3 x 2^-24 |t| <= 3 x 2^-24 (2^31 + |t - r|), so the
// difference stays above 2^31.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "onnx/onnx_graph.h"

namespace tpu_runtime::onnx_import {
namespace {

// The layer the node emitted that writes `tensor`, or nullptr.
const nlohmann::ordered_json *producer(const ImportState &state, const std::string &tensor) {
  for (auto it = state.layers.rbegin(); it != state.layers.rend(); ++it)
    for (const auto &out : (*it)["outputs"])
      if (out == tensor) return &*it;
  return nullptr;
}

// The true result of the node over x0, x1, ... (fp32), or "" for a node
// whose int64 result cannot leave the 32-bit range.
// (ONNX's Sum, Mean and the reductions other than ReduceSum take floats
// only; ReduceSum's folded sums are not checked, docs/onnx.md.)
std::string true_result(const std::string &op) {
  if (op == "Add") return "x0 + x1";
  if (op == "Sub") return "x0 - x1";
  if (op == "Mul") return "x0 * x1";
  if (op == "Neg") return "-x0";
  if (op == "Abs") return "abs(x0)";
  return "";
}

// A check layer writing flags of `dtype` from `formula` over `inputs`.
void emit_check(Node &node, const std::string &formula, const std::vector<std::string> &inputs, Dtype dtype,
                const std::string &text) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < inputs.size(); ++i) names.push_back(i + 1 == inputs.size() ? "r" : fmt::format("x{}", i));
  const std::string flags = node.temporary("range_check");
  node.emit("builtin.expression", {{"formula", formula}, {"names", names}}, inputs, {flags}, {dtype});
  node.state().layers.back()["check"] = text;
}

// A float cast into int64 / uint64: the flags of the inputs whose value
// truncated toward zero leaves the held type (NaN is not flagged: ONNX
// leaves its cast undefined).
void check_float_cast(Node &node, const nlohmann::ordered_json &layer, bool is_unsigned) {
  const std::string x = layer["inputs"][0].get<std::string>();
  const std::optional<Dtype> dtype = node.held_dtype(x, "input");
  if (!dtype) return;
  const char *range = is_unsigned ? "(x0 >= 4294967296) + (x0 <= -1)" : "(x0 >= 2147483648) + (x0 < -2147483648)";
  std::vector<std::string> names = {"x0"};
  const std::string flags = node.temporary("range_check");
  node.emit("builtin.expression", {{"formula", range}, {"names", names}}, {x}, {flags}, {*dtype});
  node.state().layers.back()["check"] =
      fmt::format("{}: a value cast to {} lies beyond {}'s range, which the device holds it in (the cast saturated "
                  "it); ONNX computes it in 64 bits",
                  node.label(), is_unsigned ? "uint64" : "int64", is_unsigned ? "uint32" : "int32");
}

}  // namespace

void emit_int64_checks(Node &node) {
  if (node.num_outputs() != 1) return;
  const std::string &out = node.output(0);
  const int type = node.info(out).elem_type;
  const bool is_unsigned = type == onnx::TensorProto::UINT64;
  if (type != onnx::TensorProto::INT64 && !is_unsigned) return;
  const nlohmann::ordered_json *layer = producer(node.state(), out);
  if (!layer) return;  // folded or copied: its values were checked as constants or inputs
  if (node.op_type() == "Cast" && (*layer)["op"] == "builtin.cast") {
    const std::optional<Dtype> from = node.held_dtype((*layer)["inputs"][0].get<std::string>(), "input");
    if (from && dtype_info(*from).is_float) check_float_cast(node, *layer, is_unsigned);
    return;
  }
  const std::vector<std::string> operands = (*layer)["inputs"].get<std::vector<std::string>>();
  const std::string result = true_result(node.op_type());
  if (result.empty() || (*layer)["op"] != "builtin.expression") return;
  // The operands and the wrapped result in fp32, then the flags.
  std::vector<std::string> inputs;
  for (const std::string &operand : operands) inputs.push_back(node.emit_cast(operand, Dtype::fp32));
  inputs.push_back(node.emit_cast(out, Dtype::fp32));
  emit_check(node, fmt::format("abs(({}) - r) > 2147483648", result), inputs, Dtype::fp32,
             fmt::format("{}: its {} result left {}'s range, which the device holds it in (it wrapped at 32 bits); "
                         "ONNX computes it in 64 bits",
                         node.label(), is_unsigned ? "uint64" : "int64", is_unsigned ? "uint32" : "int32"));
}

}  // namespace tpu_runtime::onnx_import
