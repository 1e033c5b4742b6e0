// onnx_standard_ops.cc: ONNX standard ops as built-in layers, one table
// (converters() at the end; docs/onnx.md lists the ops and their limits).
//
// Element-wise ops (arithmetic, activations, comparisons with their bools
// held as 0 / 1) become builtin.expression layers: one fused kernel per
// node, numpy broadcasting (ONNX's multidirectional broadcasting is the
// same rule). Ops that keep the elements' order (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity, inference Dropout) become builtin.reshape to the
// shape ONNX's shape inference gave; Transpose, Slice, Split, Gather and
// Expand are strided copies. Conv and the pools map to their built-ins;
// reductions, Softmax and LayerNormalization are pools (or a depthwise
// convolution with ones, for sums) over the reduced elements between
// transposes, reshapes and expressions; MatMul and Gemm are grouped 1x1
// convolutions. Every attribute is read or refused
// (Node::check_attributes_used).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "onnx/onnx_graph.h"

namespace tpu_runtime::onnx_import {
namespace {

using Converter = std::function<void(Node &)>;

// A number in a formula: the float's shortest exact decimal form.
std::string number(Node &node, const std::string &attribute, float value) {
  if (!std::isfinite(value)) node.fail(fmt::format("attribute '{}' is {}, which a formula cannot hold", attribute, value));
  return fmt::format("({})", value);
}

// One builtin.expression layer over the node's data inputs [first, last)
// (bound to x0, x1, ...) writing output 0. A bool output (a comparison's,
// a logic op's) is held as 0 / 1 in the inputs' dtype.
void emit_expression(Node &node, const std::string &formula, int first, int last, bool bool_output = false) {
  const Dtype dtype = node.dtype(bool_output);
  std::vector<std::string> inputs, names;
  for (int i = first; i < last; ++i) {
    inputs.push_back(node.data_input(i, dtype));
    names.push_back(fmt::format("x{}", i - first));
  }
  node.emit("builtin.expression", {{"formula", formula}, {"names", names}}, inputs, {node.output(0)});
}

// f(x0) for a one-input op.
Converter unary(std::string formula) {
  return [formula](Node &node) {
    node.require_inputs(1, 1);
    node.require_outputs(1);
    emit_expression(node, formula, 0, 1);
  };
}

// A one-input op whose formula reads float attributes.
Converter unary_with(std::function<std::string(Node &)> formula) {
  return [formula](Node &node) {
    node.require_inputs(1, 1);
    node.require_outputs(1);
    emit_expression(node, formula(node), 0, 1);
  };
}

Converter binary(std::string formula, bool bool_output = false) {
  return [formula, bool_output](Node &node) {
    node.require_inputs(2, 2);
    node.require_outputs(1);
    emit_expression(node, formula, 0, 2, bool_output);
  };
}

// Comparisons and logic ops: bool results held as 0 / 1.
Converter comparison(std::string formula) { return binary(std::move(formula), true); }

void convert_not(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  emit_expression(node, "x0 == 0", 0, 1, true);
}

bool is_unsigned(Dtype d) { return d == Dtype::uint8 || d == Dtype::uint16 || d == Dtype::uint32; }

// abs of a signed integer as max(x, -x): the BDC's integer abs saturates
// INT_MIN, numpy's (and ONNX's) wraps it to itself, which -x (wrapped)
// gives; of an unsigned one, a copy.
void convert_abs(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  const Dtype d = node.dtype();
  emit_expression(node, dtype_info(d).is_float ? "abs(x0)" : is_unsigned(d) ? "x0" : "max(x0, -x0)", 0, 1);
}

// Sign; an unsigned integer's has no -1 (a constant its type cannot hold).
void convert_sign(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  const Dtype d = node.dtype();
  emit_expression(node, is_unsigned(d) ? "where(x0 > 0, 1, 0)" : "where(x0 > 0, 1, where(x0 < 0, -1, 0))", 0, 1);
}

// Div of floats as a formula; of 8- and 16-bit integers through fp32, the
// quotient truncated toward zero by the cast back (exact: for |a| < 2^24 the
// fp32 quotient never rounds across an integer; a division by zero gives
// the type's saturated value, 0 for 0 / 0); int32 and int64 (held as int32)
// are refused, fp32 not holding them exactly.
void convert_div(Node &node) {
  node.require_inputs(2, 2);
  node.require_outputs(1);
  const Dtype dtype = node.dtype();
  if (dtype_info(dtype).is_float) return emit_expression(node, "x0 / x1", 0, 2);
  if (dtype_size(dtype) == 4)
    node.fail(fmt::format("output '{}' is {}: integer Div takes 8- and 16-bit integers (computed exactly through "
                          "fp32, which does not hold every 32-bit integer)",
                          node.output(0), elem_type_name(node.info(node.output(0)).elem_type)));
  std::vector<std::string> floats;
  for (int i = 0; i < 2; ++i) {
    floats.push_back(node.temporary("fp32"));
    node.emit("builtin.cast", {{"to", "fp32"}}, {node.data_input(i, dtype)}, {floats.back()}, {Dtype::fp32});
  }
  const std::string quotient = node.temporary("quotient");
  node.emit("builtin.expression", {{"formula", "x0 / x1"}, {"names", {"x0", "x1"}}}, floats, {quotient});
  node.emit("builtin.cast", {{"to", dtype_name(dtype)}}, {quotient}, {node.output(0)}, {dtype});
}

void convert_where(Node &node) {
  node.require_inputs(3, 3);
  node.require_outputs(1);
  emit_expression(node, "where(x0, x1, x2)", 0, 3);
}

// Sum / Max / Min / Mean of 1..16 inputs: `fold` joins two terms.
Converter variadic(std::function<std::string(const std::string &, const std::string &)> fold, bool mean) {
  return [fold, mean](Node &node) {
    node.require_inputs(1, 16);
    node.require_outputs(1);
    std::string formula = "x0";
    for (int i = 1; i < node.num_inputs(); ++i) formula = fold(formula, fmt::format("x{}", i));
    if (mean && node.num_inputs() > 1) formula = fmt::format("({}) / {}", formula, node.num_inputs());
    if (node.num_inputs() == 1) formula = "x0 * 1";
    emit_expression(node, formula, 0, node.num_inputs());
  };
}

// The bound of Clip: attribute (opset < 11) or constant input.
std::optional<float> clip_bound(Node &node, int input, const std::string &attribute) {
  if (node.has_attr(attribute)) return node.attr_float(attribute);
  if (!node.has_input(input)) return std::nullopt;
  const ConstTensor &c = node.constant_input(input, attribute);
  if (c.values.size() != 1) node.fail(fmt::format("input {} ({}) has {} values, expected 1", input, attribute, c.values.size()));
  return float(c.values[0]);
}

void convert_clip(Node &node) {
  node.require_inputs(1, 3);
  node.require_outputs(1);
  std::string formula = "x0";
  if (const std::optional<float> low = clip_bound(node, 1, "min"))
    formula = fmt::format("max({}, {})", formula, number(node, "min", *low));
  if (const std::optional<float> high = clip_bound(node, 2, "max"))
    formula = fmt::format("min({}, {})", formula, number(node, "max", *high));
  if (formula == "x0") formula = "x0 * 1";
  emit_expression(node, formula, 0, 1);
}

// Ops whose result is their input's elements in the same order: one copy
// into the shape shape inference gave.
void emit_reshape(Node &node) {
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> dims = node.output_dims(0);
  if (dims.empty()) node.fail(fmt::format("output '{}' is a scalar (rank 0), which a layer cannot produce", node.output(0)));
  node.emit("builtin.reshape", {{"shape", dims}}, {node.data_input(0)}, {node.output(0)});
}

void convert_reshape(Node &node) {
  node.require_inputs(2, 2);
  node.constant_input(1, "shape");
  node.attr_int("allowzero", 0);  // the output shape comes from shape inference, which applied it
  emit_reshape(node);
}

void convert_flatten(Node &node) {
  node.require_inputs(1, 1);
  node.attr_int("axis", 1);
  emit_reshape(node);
}

// Squeeze / Unsqueeze: axes as an attribute (opset < 13) or a constant input.
void convert_squeeze(Node &node) {
  node.require_inputs(1, 2);
  if (node.has_attr("axes")) node.attr_ints("axes");
  if (node.has_input(1)) node.constant_input(1, "axes");
  emit_reshape(node);
}

// Identity of a constant (PyTorch writes one for each repeated
// initializer) is that constant; of a tensor, a copy.
void convert_identity(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  if (node.is_constant_input(0)) {
    ImportState &state = node.state();
    state.constants[node.output(0)] = node.constant_input(0, "input");
    state.infos[node.output(0)] = node.info(node.input(0));
    return;
  }
  emit_reshape(node);
}

void convert_dropout(Node &node) {
  node.require_inputs(1, 3);
  node.attr_float("ratio", 0.5f);
  node.attr_int("seed", 0);
  if (node.has_input(2)) {
    const ConstTensor &training = node.constant_input(2, "training_mode");
    if (training.values.size() != 1 || training.values[0] != 0)
      node.fail("input 2 (training_mode) is true: only inference Dropout (the identity) is supported");
  }
  emit_reshape(node);
}

void convert_concat(Node &node) {
  node.require_inputs(1, 64);
  node.require_outputs(1);
  const Dtype dtype = node.dtype();
  std::vector<std::string> inputs;
  for (int i = 0; i < node.num_inputs(); ++i) inputs.push_back(node.data_input(i, dtype));
  node.emit("builtin.concat", {{"axis", node.attr_int("axis")}}, inputs, {node.output(0)});
}

// erf in two layers: |x| < 0.5 by its Taylor series to x^11 (truncation
// below 2e-8), elsewhere Abramowitz and Stegun 7.1.26 (absolute error below
// 1.5e-7), t = 1 / (1 + p |x|) computed first; then rounding in the dtype.
void convert_erf(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  node.dtype();
  const std::string x = node.data_input(0), t = node.temporary("t");
  node.emit("builtin.expression", {{"formula", "1 / (1 + 0.3275911 * abs(x0))"}, {"names", {"x0"}}}, {x}, {t});
  const std::string series =
      "1.1283791670955126 * x0 * (1 + x0 * x0 * (-1 / 3 + x0 * x0 * (1 / 10 + x0 * x0 * (-1 / 42 + x0 * x0 * "
      "(1 / 216 + x0 * x0 * (-1 / 1320))))))";
  const std::string tail =
      "where(x0 < 0, -1, 1) * (1 - x1 * (0.254829592 + x1 * (-0.284496736 + x1 * (1.421413741 + x1 * "
      "(-1.453152027 + x1 * 1.061405429)))) * exp(-(x0 * x0)))";
  node.emit("builtin.expression",
            {{"formula", fmt::format("where(abs(x0) < 0.5, {}, {})", series, tail)}, {"names", {"x0", "x1"}}},
            {x, t}, {node.output(0)});
}

// x ^ y for a constant scalar y with an exact element-wise form.
void convert_pow(Node &node) {
  node.require_inputs(2, 2);
  node.require_outputs(1);
  const ConstTensor &y = node.constant_input(1, "exponent Y");
  if (y.values.size() != 1) node.fail(fmt::format("input 1 (Y) has {} values; a scalar exponent is supported", y.values.size()));
  static const std::map<double, const char *> forms = {{1, "x0 * 1"},      {2, "x0 * x0"},    {3, "x0 * x0 * x0"},
                                                       {4, "(x0 * x0) * (x0 * x0)"}, {-1, "1 / x0"},
                                                       {-2, "1 / (x0 * x0)"}, {0.5, "sqrt(x0)"}, {-0.5, "rsqrt(x0)"}};
  const auto it = forms.find(y.values[0]);
  if (it == forms.end())
    node.fail(fmt::format("input 1 (Y) is {}; supported exponents: -2, -1, -0.5, 0.5, 1, 2, 3, 4", y.values[0]));
  emit_expression(node, it->second, 0, 1);
}

// A cast into int64 or uint64 (held as int32, uint32) from a type whose
// values the held type does not all hold: unsigned into signed from 2^31,
// signed into unsigned below 0.
void check_wide_integer_cast(Node &node, int from, int to) {
  using T = onnx::TensorProto;
  const bool from_unsigned = from == T::UINT32 || from == T::UINT64;
  const bool from_signed = from == T::INT8 || from == T::INT16 || from == T::INT32 || from == T::INT64;
  if ((to == T::INT64 && from_unsigned) || (to == T::UINT64 && from_signed))
    node.fail(fmt::format("attribute 'to' = {}: a cast from {} to {} is not supported (the device holds int64 as "
                          "int32 and uint64 as uint32, which do not hold every {} value)",
                          elem_type_name(to), elem_type_name(from), elem_type_name(to), elem_type_name(from)));
}

// Cast between the held types (onnx_types.cc), ONNX's (numpy's) rules:
// to bool x != 0 (NaN is true); from bool 0 / 1; float to integer truncated
// toward zero (saturated beyond the range, NaN to 0: left undefined by
// ONNX); integer to integer wrapped; to float nearest even. Types held
// alike (int64 and int32, double and float) are a copy.
void convert_cast(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  const int to = int(node.attr_int("to"));
  node.attr_int("saturate", 1);  // float8 targets only
  const int from = node.info(node.input(0)).elem_type;
  const std::optional<Dtype> source = node.held_dtype(node.input(0), "input"), target = device_dtype(to);
  if (!source || !target)
    node.fail(fmt::format("attribute 'to' = {}: a cast from {} to {} is not supported (supported element types: {})",
                          elem_type_name(to), elem_type_name(from), elem_type_name(to), device_types_text()));
  check_wide_integer_cast(node, from, to);
  const std::string x = node.data_input(0);
  if (to == onnx::TensorProto::BOOL) {
    node.emit("builtin.expression", {{"formula", "x0 != 0"}, {"names", {"x0"}}}, {x}, {node.output(0)});
    return;
  }
  if (*source == *target) return emit_reshape(node);
  node.emit("builtin.cast", {{"to", dtype_name(*target)}}, {x}, {node.output(0)}, {*target});
}

// ---- data movement: transpose, slice, split, gather, expand ---------------------

int64_t normalized_axis(Node &node, int64_t axis, std::size_t rank, std::string_view what) {
  const int64_t r = int64_t(rank);
  if (axis < -r || axis >= r) node.fail(fmt::format("{} {} is out of range for {} dims", what, axis, rank));
  return axis < 0 ? axis + r : axis;
}

void convert_transpose(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> in = node.input_dims(0);
  std::vector<int64_t> reversed(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) reversed[d] = int64_t(in.size() - 1 - d);
  node.emit("builtin.transpose", {{"perm", node.attr_ints("perm", reversed)}}, {node.data_input(0)}, {node.output(0)});
}

// A slice layer: full-rank starts / ends / steps (steps >= 1).
void emit_slice(Node &node, const std::string &input, const std::vector<int64_t> &starts,
                const std::vector<int64_t> &ends, const std::vector<int64_t> &steps, const std::string &output) {
  for (std::size_t d = 0; d < starts.size(); ++d)
    if (ends[d] <= starts[d])
      node.fail(fmt::format("the slice of dim {} is empty (start {}, end {}); a layer cannot produce an empty tensor",
                            d, starts[d], ends[d]));
  node.emit("builtin.slice", {{"starts", starts}, {"ends", ends}, {"steps", steps}}, {input}, {output});
}

// A constant input's or attribute's ints (Slice's starts ... before opset 10 were attributes).
std::vector<int64_t> ints_of(Node &node, int input, const std::string &attribute, bool required) {
  if (node.has_attr(attribute)) return node.attr_ints(attribute);
  if (node.has_input(input)) {
    const ConstTensor &c = node.constant_input(input, attribute);
    return std::vector<int64_t>(c.values.begin(), c.values.end());
  }
  if (required) node.fail(fmt::format("'{}' is missing", attribute));
  return {};
}

void convert_slice(Node &node) {
  node.require_inputs(1, 5);
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> in = node.input_dims(0);
  const std::vector<int64_t> starts = ints_of(node, 1, "starts", true), ends = ints_of(node, 2, "ends", true);
  std::vector<int64_t> axes = ints_of(node, 3, "axes", false), steps = ints_of(node, 4, "steps", false);
  if (axes.empty())
    for (std::size_t d = 0; d < starts.size(); ++d) axes.push_back(int64_t(d));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    node.fail(fmt::format("starts, ends, axes and steps have {}, {}, {} and {} values; they must agree", starts.size(),
                          ends.size(), axes.size(), steps.size()));
  std::vector<int64_t> first(in.size(), 0), last = in, stride(in.size(), 1);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const int64_t d = normalized_axis(node, axes[i], in.size(), "axis");
    if (steps[i] < 1) node.fail(fmt::format("step {} on axis {} is not supported (steps >= 1 only)", steps[i], axes[i]));
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + in[d] : v, 0, in[d]); };
    first[d] = clamp(starts[i]);
    last[d] = clamp(ends[i]);
    stride[d] = steps[i];
  }
  emit_slice(node, node.data_input(0), first, last, stride, node.output(0));
}

void convert_split(Node &node) {
  node.require_inputs(1, 2);
  node.dtype();
  const std::vector<int64_t> in = node.input_dims(0);
  const int64_t axis = normalized_axis(node, node.attr_int("axis", 0), in.size(), "attribute 'axis'");
  std::vector<int64_t> sizes = ints_of(node, 1, "split", false);
  if (sizes.empty())
    for (int o = 0; o < node.num_outputs(); ++o) sizes.push_back(node.output_dims(o)[std::size_t(axis)]);
  if (int(sizes.size()) != node.num_outputs())
    node.fail(fmt::format("'split' has {} sizes for {} outputs", sizes.size(), node.num_outputs()));
  const std::string input = node.data_input(0);
  int64_t offset = 0;
  for (int o = 0; o < node.num_outputs(); ++o) {
    std::vector<int64_t> first(in.size(), 0), last = in;
    first[std::size_t(axis)] = offset;
    last[std::size_t(axis)] = offset + sizes[std::size_t(o)];
    offset = last[std::size_t(axis)];
    emit_slice(node, input, first, last, std::vector<int64_t>(in.size(), 1), node.output(o));
  }
  if (offset != in[std::size_t(axis)])
    node.fail(fmt::format("the split sizes add up to {}, but axis {} has {}", offset, axis, in[std::size_t(axis)]));
}

// Gather with indices computed at run time (or given as a graph input):
// negative indices made positive by an expression, then builtin.gather
// (the GDMA's row gather; an index outside the axis gives zeros: ONNX
// calls it an error).
void convert_runtime_gather(Node &node, const std::vector<int64_t> &in, int64_t axis) {
  if (node.info(node.input(1)).elem_type == onnx::TensorProto::BOOL || node.held_dtype(node.input(1), "") != Dtype::int32)
    node.fail(fmt::format("input 1 (indices) '{}' is {}; indices are int32 or int64", node.input(1),
                          elem_type_name(node.info(node.input(1)).elem_type)));
  const std::vector<int64_t> out = node.output_dims(0);
  if (out.empty()) node.fail(fmt::format("output '{}' is a scalar (rank 0), which a layer cannot produce", node.output(0)));
  const std::string data = node.data_input(0), indices = node.temporary("indices");
  node.emit("builtin.expression",
            {{"formula", fmt::format("where(x0 < 0, x0 + {}, x0)", in[std::size_t(axis)])}, {"names", {"x0"}}},
            {node.data_input(1)}, {indices});
  node.emit("builtin.gather", {{"axis", axis}}, {data, indices}, {node.output(0)});
}

// Gather with constant indices of at most one dim: one slice per index
// (then a concat of them, or a reshape dropping the axis for a scalar
// index); other indices at run time (convert_runtime_gather).
void convert_gather(Node &node) {
  node.require_inputs(2, 2);
  node.require_outputs(1);
  const std::vector<int64_t> in = node.input_dims(0);
  const int64_t axis = normalized_axis(node, node.attr_int("axis", 0), in.size(), "attribute 'axis'");
  if (!node.is_constant_input(1)) return convert_runtime_gather(node, in, axis);
  const ConstTensor &indices = node.constant_input(1, "indices");
  if (indices.dims.size() > 1 || indices.values.empty() || indices.values.size() > 64)
    return convert_runtime_gather(node, in, axis);
  const std::string input = node.data_input(0);
  std::vector<std::string> pieces;
  for (double value : indices.values) {
    const int64_t index = normalized_axis(node, int64_t(value), std::size_t(in[std::size_t(axis)]), "index");
    std::vector<int64_t> first(in.size(), 0), last = in;
    first[std::size_t(axis)] = index;
    last[std::size_t(axis)] = index + 1;
    pieces.push_back(node.temporary("gathered"));
    emit_slice(node, input, first, last, std::vector<int64_t>(in.size(), 1), pieces.back());
  }
  if (indices.dims.empty() || pieces.size() == 1) {
    const std::vector<int64_t> out = node.output_dims(0);
    if (out.empty()) node.fail(fmt::format("output '{}' is a scalar (rank 0), which a layer cannot produce", node.output(0)));
    node.emit("builtin.reshape", {{"shape", out}}, {pieces[0]}, {node.output(0)});
    return;
  }
  node.emit("builtin.concat", {{"axis", axis}}, pieces, {node.output(0)});
}

void convert_expand(Node &node) {
  node.require_inputs(2, 2);
  node.require_outputs(1);
  node.dtype();
  node.constant_input(1, "shape");
  node.emit("builtin.broadcast", {{"shape", node.output_dims(0)}}, {node.data_input(0)}, {node.output(0)});
}

// ---- reductions: a pool over the reduced elements ----------------------------
//
// The reduced axes are moved last (a transpose when they are not), the
// tensor viewed as [n, c, 1, R] (n c the kept elements, R the reduced
// ones), pooled with a [1, R] window (max, average) or convolved with ones
// (sum, accumulated in fp32 by the engine), and reshaped to the result.

enum class ReduceKind { max, mean, sum };

// The largest divisor of `count` that is at most `limit`.
int64_t divisor_up_to(int64_t count, int64_t limit) {
  for (int64_t c = std::min(count, limit); c > 1; --c)
    if (count % c == 0) return c;
  return 1;
}

std::vector<int64_t> reduced_axes(Node &node, std::vector<int64_t> axes, std::size_t rank) {
  if (axes.empty())
    for (std::size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
  for (int64_t &a : axes) a = normalized_axis(node, a, rank, "axis");
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    node.fail(fmt::format("axes [{}] name an axis twice", fmt::join(axes, ", ")));
  return axes;
}

// The reduction of `input` (dims `in`) over `axes` (normalized, sorted),
// keeping them as dims of 1, into `output` (a new tensor when empty).
// `input` (dims `in`) with the reduced `axes` moved last: `outer` kept
// elements times `reduced` ones; `result` the dims with the axes kept as 1.
struct MovedAxes {
  std::string source;
  int64_t outer = 1, reduced = 1;
  std::vector<int64_t> result;
};

MovedAxes move_axes_last(Node &node, const std::string &input, const std::vector<int64_t> &in,
                         const std::vector<int64_t> &axes) {
  MovedAxes m{input, 1, 1, in};
  std::vector<int64_t> kept, moved;
  for (std::size_t d = 0; d < in.size(); ++d) {
    const bool r = std::binary_search(axes.begin(), axes.end(), int64_t(d));
    (r ? moved : kept).push_back(int64_t(d));
    (r ? m.reduced : m.outer) *= in[d];
    if (r) m.result[d] = 1;
  }
  std::vector<int64_t> perm = kept;
  perm.insert(perm.end(), moved.begin(), moved.end());
  if (!std::is_sorted(perm.begin(), perm.end())) {
    m.source = node.temporary("moved");
    node.emit("builtin.transpose", {{"perm", perm}}, {input}, {m.source});
  }
  return m;
}

std::string emit_reduce(Node &node, const std::string &input, const std::vector<int64_t> &in,
                        const std::vector<int64_t> &axes, ReduceKind kind, std::string output = {}) {
  const MovedAxes moved = move_axes_last(node, input, in, axes);
  const std::string &source = moved.source;
  const std::vector<int64_t> &result = moved.result;
  const int64_t outer = moved.outer, reduced = moved.reduced;
  const int64_t c = divisor_up_to(outer, 4096), n = outer / c;
  const std::string view = node.temporary("rows"), pooled = node.temporary("reduced");
  node.emit("builtin.reshape", {{"shape", std::vector<int64_t>{n, c, 1, reduced}}}, {source}, {view});
  const nlohmann::ordered_json window = {{"kernel", std::vector<int64_t>{1, reduced}}};
  if (kind == ReduceKind::sum) {
    const std::string ones = node.add_weight("ones", {c, 1, 1, reduced}, node.dtype(),
                                             std::vector<double>(std::size_t(c * reduced), 1.0));
    node.emit("builtin.conv2d", {{"group", c}}, {view, ones}, {pooled});
  } else {
    node.emit(kind == ReduceKind::max ? "builtin.maxpool2d" : "builtin.avgpool2d", window, {view}, {pooled});
  }
  if (output.empty()) output = node.temporary("result");
  node.emit("builtin.reshape", {{"shape", result}}, {pooled}, {output});
  return output;
}

// An element-wise formula over tensors (x0, x1, ...) into `output` (a new
// tensor when empty).
std::string emit_formula(Node &node, const std::string &formula, const std::vector<std::string> &inputs,
                         std::string output = {}) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < inputs.size(); ++i) names.push_back(fmt::format("x{}", i));
  if (output.empty()) output = node.temporary("t");
  node.emit("builtin.expression", {{"formula", formula}, {"names", names}}, inputs, {output});
  return output;
}

// Reduce<Op>: `before` applied to each element, the reduction, `after`
// applied to its result (x0 in both; "" for none).
struct Reduction {
  ReduceKind kind;
  const char *before, *after;
};

// Integer ReduceSum, ReduceMax, ReduceMin, exact (sums wrap like numpy's):
// the reduced axes moved last, the tensor viewed as [outer, R], each of the
// R columns sliced out and folded by expressions of up to 16 inputs (a
// tree); R at most 256 (about R + R / 15 layers).
void convert_integer_reduce(Node &node, const std::vector<int64_t> &in, const std::vector<int64_t> &axes,
                            const std::vector<int64_t> &out) {
  static const std::map<std::string, const char *> folds = {
      {"ReduceSum", "{} + {}"}, {"ReduceMax", "max({}, {})"}, {"ReduceMin", "min({}, {})"}};
  const auto fold = folds.find(node.op_type());
  if (fold == folds.end()) node.fail("integer tensors are supported by ReduceSum, ReduceMax and ReduceMin only");
  const MovedAxes m = move_axes_last(node, node.data_input(0), in, axes);
  if (m.reduced > 256)
    node.fail(fmt::format("an integer reduction over {} elements is not supported (at most 256: it is folded by "
                          "element-wise layers, exactly)",
                          m.reduced));
  const std::string view = node.temporary("rows");
  node.emit("builtin.reshape", {{"shape", std::vector<int64_t>{m.outer, m.reduced}}}, {m.source}, {view});
  std::vector<std::string> terms;
  for (int64_t r = 0; r < m.reduced; ++r) {
    terms.push_back(node.temporary("column"));
    emit_slice(node, view, {0, r}, {m.outer, r + 1}, {1, 1}, terms.back());
  }
  while (terms.size() > 1) {
    std::vector<std::string> folded;
    for (std::size_t first = 0; first < terms.size(); first += 16) {
      const std::vector<std::string> group(terms.begin() + long(first),
                                           terms.begin() + long(std::min(terms.size(), first + 16)));
      std::string formula = "x0";
      for (std::size_t k = 1; k < group.size(); ++k)
        formula = fmt::format(fmt::runtime(fold->second), formula, fmt::format("x{}", k));
      folded.push_back(group.size() == 1 ? group[0] : emit_formula(node, formula, group));
    }
    terms = std::move(folded);
  }
  node.emit("builtin.reshape", {{"shape", out}}, {terms[0]}, {node.output(0)});
}

void convert_reduce(Node &node, const Reduction &r) {
  node.require_inputs(1, 2);
  node.require_outputs(1);
  const bool integers = !dtype_info(node.dtype()).is_float;
  const std::vector<int64_t> in = node.input_dims(0);
  std::vector<int64_t> axes = ints_of(node, 1, "axes", false);
  node.attr_int("keepdims", 1);  // the output shape (from shape inference) applies it
  // No axes: the identity (ONNX's rule) for ReduceSum, Max, Mean and Min
  // (whose steps before and after are one negation, or none).
  if (axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0 && std::string_view(r.before) == r.after)
    return emit_reshape(node);
  if (axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0)
    node.fail("attribute 'noop_with_empty_axes' = 1 with no axes is not supported for this reduction (ONNX gives "
              "the input, without the element-wise step of the reduction)");
  axes = reduced_axes(node, axes, in.size());
  const std::vector<int64_t> out = node.output_dims(0);
  if (out.empty()) node.fail(fmt::format("output '{}' is a scalar (rank 0), which a layer cannot produce", node.output(0)));
  if (integers) return convert_integer_reduce(node, in, axes, out);
  std::string x = node.data_input(0);
  if (*r.before) x = emit_formula(node, r.before, {x});
  std::string y = emit_reduce(node, x, in, axes, r.kind);
  if (*r.after) y = emit_formula(node, r.after, {y});
  node.emit("builtin.reshape", {{"shape", out}}, {y}, {node.output(0)});
}

// The axes Softmax / LogSoftmax normalize over: one axis from opset 13,
// before it every axis from `axis` on (the input coerced to 2-D).
std::vector<int64_t> softmax_axes(Node &node, std::size_t rank) {
  const int version = node.state().opsets.count("") ? node.state().opsets.at("") : 13;
  const int64_t axis = normalized_axis(node, node.attr_int("axis", version >= 13 ? -1 : 1), rank, "attribute 'axis'");
  if (version >= 13) return {axis};
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < int64_t(rank); ++d) axes.push_back(d);
  return axes;
}

// softmax = exp(x - max) / sum(exp(x - max)); log: x - max - log(sum).
void convert_softmax(Node &node, bool log) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> in = node.input_dims(0);
  const std::vector<int64_t> axes = softmax_axes(node, in.size());
  const std::string x = node.data_input(0);
  const std::string max = emit_reduce(node, x, in, axes, ReduceKind::max);
  const std::string e = emit_formula(node, "exp(x0 - x1)", {x, max});
  const std::string sum = emit_reduce(node, e, in, axes, ReduceKind::sum);
  if (log) emit_formula(node, "x0 - x1 - log(x2)", {x, max, sum}, node.output(0));
  else emit_formula(node, "x0 / x1", {e, sum}, node.output(0));
}

// y = (x - mean) / sqrt(var + epsilon) * scale + bias over the axes from
// `axis` on, the variance the mean of squared deviations.
void convert_layer_norm(Node &node) {
  node.require_inputs(2, 3);
  if (node.num_outputs() < 1 || node.num_outputs() > 3)
    node.fail(fmt::format("{} outputs, expected 1 to 3 (Y, Mean, InvStdDev)", node.num_outputs()));
  node.dtype();
  const std::vector<int64_t> in = node.input_dims(0);
  const int64_t axis = normalized_axis(node, node.attr_int("axis", -1), in.size(), "attribute 'axis'");
  const float epsilon = node.attr_float("epsilon", 1e-5f);
  node.attr_int("stash_type", 1);  // the statistics' type: the engine's fp32 accumulation, or the dtype
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < int64_t(in.size()); ++d) axes.push_back(d);
  const std::string x = node.data_input(0);
  const std::string mean = emit_reduce(node, x, in, axes, ReduceKind::mean);
  const std::string deviation = emit_formula(node, "x0 - x1", {x, mean});
  const std::string square = emit_formula(node, "x0 * x0", {deviation});
  const std::string variance = emit_reduce(node, square, in, axes, ReduceKind::mean);
  std::vector<std::string> inputs = {deviation, variance, node.data_input(1)};
  std::string formula = fmt::format("x0 / sqrt(x1 + {}) * x2", number(node, "epsilon", epsilon));
  if (node.has_input(2)) {
    inputs.push_back(node.data_input(2));
    formula += " + x3";
  }
  emit_formula(node, formula, inputs, node.output(0));
  // The optional outputs: the statistics in the shape shape inference gave.
  if (node.num_outputs() > 1 && !node.output(1).empty())
    node.emit("builtin.reshape", {{"shape", node.output_dims(1)}}, {mean}, {node.output(1)});
  if (node.num_outputs() > 2 && !node.output(2).empty()) {
    const std::string inv = emit_formula(node, fmt::format("1 / sqrt(x0 + {})", number(node, "epsilon", epsilon)), {variance});
    node.emit("builtin.reshape", {{"shape", node.output_dims(2)}}, {inv}, {node.output(2)});
  }
}

// ---- matrix products: grouped 1x1 convolutions -------------------------------
//
// a [G, M, K] times b [G, K, N] (or one b [K, N] for every batch) is a 1x1
// convolution of the input [1, G K, M, 1] with the weight [G N, K, 1, 1] in
// G groups: the engine's conv accumulates each dot product in fp32 and
// rounds once. a's rows are made channels and back by transposes.

struct MatmulB {
  std::string tensor;                  // b as a tensor ([G, K, N], or [K, N] / [N, K] when shared)
  const ConstTensor *constant = nullptr;  // a shared constant b [K, N] (or [N, K]): folded into the weight
  bool batched = false;
  bool transposed = false;  // a shared b given as [N, K] (Gemm's transB)
  double scale = 1;         // folded into a constant b (Gemm's alpha)
};

// The weight [G N, K, 1, 1] of a matmul.
std::string matmul_weight(Node &node, const MatmulB &b, int64_t groups, int64_t k, int64_t n) {
  if (b.constant) {
    std::vector<double> w(std::size_t(n * k));
    for (int64_t o = 0; o < n; ++o)
      for (int64_t i = 0; i < k; ++i)
        w[std::size_t(o * k + i)] = b.scale * b.constant->values[std::size_t(b.transposed ? o * k + i : i * n + o)];
    return node.add_weight("weight", {n, k, 1, 1}, node.dtype(), w);
  }
  std::string rows = b.tensor;
  if (!b.transposed) {
    rows = node.temporary("b_t");
    node.emit("builtin.transpose", {{"perm", b.batched ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{1, 0}}},
              {b.tensor}, {rows});
  }
  const std::string weight = node.temporary("weight");
  node.emit("builtin.reshape", {{"shape", std::vector<int64_t>{groups * n, k, 1, 1}}}, {rows}, {weight});
  return weight;
}

// a [G, M, K] (batched b) or [P, K] (shared b) times b; returns [G, M, N]
// or [P, N]. `bias`: N values added by the conv (shared b only).
std::string emit_matmul(Node &node, const std::string &a, int64_t groups, int64_t m, int64_t k, const MatmulB &b,
                        int64_t n, const std::string &bias = {}) {
  const std::vector<int64_t> swap = b.batched ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{1, 0};
  const int64_t g = b.batched ? groups : 1;
  const std::string columns = node.temporary("a_t"), image = node.temporary("a_image");
  node.emit("builtin.transpose", {{"perm", swap}}, {a}, {columns});
  node.emit("builtin.reshape", {{"shape", std::vector<int64_t>{1, g * k, m, 1}}}, {columns}, {image});
  std::vector<std::string> inputs = {image, matmul_weight(node, b, g, k, n)};
  if (!bias.empty()) inputs.push_back(bias);
  const std::string conv = node.temporary("products"), planes = node.temporary("planes");
  const std::string result = node.temporary("matmul");
  node.emit("builtin.conv2d", {{"group", g}}, inputs, {conv});
  node.emit("builtin.reshape", {{"shape", b.batched ? std::vector<int64_t>{g, n, m} : std::vector<int64_t>{n, m}}},
            {conv}, {planes});
  node.emit("builtin.transpose", {{"perm", swap}}, {planes}, {result});
  return result;
}

std::string reshaped(Node &node, const std::string &tensor, const std::vector<int64_t> &from,
                     const std::vector<int64_t> &to) {
  if (from == to) return tensor;
  const std::string out = node.temporary("view");
  node.emit("builtin.reshape", {{"shape", to}}, {tensor}, {out});
  return out;
}

int64_t product(const std::vector<int64_t> &dims, std::size_t first, std::size_t last) {
  int64_t p = 1;
  for (std::size_t d = first; d < last; ++d) p *= dims[d];
  return p;
}

void convert_matmul(Node &node) {
  node.require_inputs(2, 2);
  node.require_outputs(1);
  node.dtype();
  std::vector<int64_t> a = node.input_dims(0), b = node.input_dims(1);
  if (a.size() == 1) a.insert(a.begin(), 1);  // numpy: a vector is a row of a, a column of b
  if (b.size() == 1) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  const std::vector<int64_t> out = node.output_dims(0);
  if (out.empty()) node.fail(fmt::format("output '{}' is a scalar (rank 0), which a layer cannot produce", node.output(0)));
  MatmulB mb;
  if (product(b, 0, b.size() - 2) == 1) {  // one b for every row of a
    if (node.is_constant_input(1)) mb.constant = &node.constant_input(1, "B");
    else mb.tensor = reshaped(node, node.data_input(1), node.input_dims(1), {k, n});
    const int64_t rows = product(a, 0, a.size() - 1);
    const std::string y = emit_matmul(node, reshaped(node, node.data_input(0), node.input_dims(0), {rows, k}), 1, rows,
                                      k, mb, n);
    node.emit("builtin.reshape", {{"shape", out}}, {y}, {node.output(0)});
    return;
  }
  // Batched: both broadcast to the output's batch dims, then [G, M, K] x [G, K, N].
  // The output is batch + [M] (unless a is a vector) + [N] (unless b is).
  const std::size_t trailing = std::size_t(node.input_dims(0).size() > 1) + std::size_t(node.input_dims(1).size() > 1);
  const std::vector<int64_t> batch(out.begin(), out.end() - std::ptrdiff_t(trailing));
  const int64_t groups = product(batch, 0, batch.size());
  auto batched = [&](int input, std::vector<int64_t> dims, int64_t rows, int64_t cols) {
    std::vector<int64_t> full = batch;
    full.push_back(rows), full.push_back(cols);
    std::string t = reshaped(node, node.data_input(input), node.input_dims(input), dims);
    if (dims != full) {
      const std::string wide = node.temporary("broadcast");
      node.emit("builtin.broadcast", {{"shape", full}}, {t}, {wide});
      t = wide;
    }
    return reshaped(node, t, full, {groups, rows, cols});
  };
  mb.batched = true;
  mb.tensor = batched(1, b, k, n);
  const std::string y = emit_matmul(node, batched(0, a, m, k), groups, m, k, mb, n);
  node.emit("builtin.reshape", {{"shape", out}}, {y}, {node.output(0)});
}

// Y = alpha op(A) op(B) + beta C: alpha folded into a constant B, C as the
// conv's bias when it holds one value per column, else added after.
void convert_gemm(Node &node) {
  node.require_inputs(2, 3);
  node.require_outputs(1);
  node.dtype();
  const float alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
  const bool trans_a = node.attr_int("transA", 0) != 0, trans_b = node.attr_int("transB", 0) != 0;
  const std::vector<int64_t> a = node.input_dims(0), b = node.input_dims(1), out = node.output_dims(0);
  if (a.size() != 2 || b.size() != 2) node.fail("inputs A and B must be 2-D");
  const int64_t m = out[0], n = out[1], k = trans_a ? a[0] : a[1];
  std::string x = node.data_input(0);
  if (trans_a) x = node.temporary("a_rows"), node.emit("builtin.transpose", {{"perm", {1, 0}}}, {node.data_input(0)}, {x});
  MatmulB mb;
  mb.transposed = trans_b;
  if (node.is_constant_input(1)) mb.constant = &node.constant_input(1, "B"), mb.scale = alpha;
  else mb.tensor = node.data_input(1);
  const bool alpha_after = !mb.constant && alpha != 1.0f;
  std::string bias, c_after;
  if (node.has_input(2)) {
    const std::vector<int64_t> c = node.input_dims(2);
    const bool per_column = product(c, 0, c.size()) == n && (c.empty() || c.back() == n);
    if (per_column && node.is_constant_input(2) && !alpha_after) {
      std::vector<double> values = node.constant_input(2, "C").values;
      for (double &v : values) v *= beta;
      bias = node.add_weight("bias", {n}, node.dtype(), values);
    } else {
      c_after = node.data_input(2);
    }
  }
  std::string y = emit_matmul(node, x, 1, m, k, mb, n, bias);
  std::string formula = alpha_after ? fmt::format("{} * x0", number(node, "alpha", alpha)) : "x0";
  std::vector<std::string> inputs = {y};
  if (!c_after.empty()) formula += fmt::format(" + {} * x1", number(node, "beta", beta)), inputs.push_back(c_after);
  if (formula == "x0") node.emit("builtin.reshape", {{"shape", out}}, {y}, {node.output(0)});
  else emit_formula(node, formula, inputs, node.output(0));
}

// ---- convolution and pooling -------------------------------------------------

// The 2-D window attributes shared by Conv and the pools.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: top, left, bottom, right
};

// Pads for auto_pad (NOTSET: the "pads" attribute).
std::vector<int64_t> window_pads(Node &node, const std::vector<int64_t> &in, const Window &w) {
  const std::string mode = node.attr_string("auto_pad", "NOTSET");
  if (mode == "NOTSET") return node.attr_ints("pads", std::vector<int64_t>{0, 0, 0, 0});
  if (mode == "VALID") return {0, 0, 0, 0};
  if (mode != "SAME_UPPER" && mode != "SAME_LOWER")
    node.fail(fmt::format("attribute 'auto_pad' = '{}' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER", mode));
  std::vector<int64_t> pads(4);
  for (int d = 0; d < 2; ++d) {
    const int64_t out = (in[2 + d] + w.strides[d] - 1) / w.strides[d];
    const int64_t extent = (w.kernel[d] - 1) * w.dilations[d] + 1;
    const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] + extent - in[2 + d]);
    const int64_t small = total / 2, large = total - small;
    pads[d] = mode == "SAME_UPPER" ? small : large;
    pads[d + 2] = mode == "SAME_UPPER" ? large : small;
  }
  return pads;
}

// kernel from `kernel` (the weight's spatial dims for Conv); refuses anything
// but 2-D.
Window read_window(Node &node, const std::vector<int64_t> &in, std::vector<int64_t> kernel) {
  if (in.size() != 4)
    node.fail(fmt::format("input '{}' has {} dims; only 2-D windows ([n, c, h, w] inputs) are supported", node.input(0),
                          in.size()));
  Window w;
  w.kernel = node.attr_ints("kernel_shape", kernel);
  if (w.kernel.size() != 2 || (!kernel.empty() && w.kernel != kernel))
    node.fail(fmt::format("attribute 'kernel_shape' is [{}]; expected two dims{}", fmt::join(w.kernel, ", "),
                          kernel.empty() ? "" : fmt::format(" equal to the weight's [{}]", fmt::join(kernel, ", "))));
  w.strides = node.attr_ints("strides", std::vector<int64_t>{1, 1});
  w.dilations = node.attr_ints("dilations", std::vector<int64_t>{1, 1});
  if (w.strides.size() != 2) node.fail(fmt::format("attribute 'strides' has {} values, expected 2", w.strides.size()));
  if (w.dilations.size() != 2)
    node.fail(fmt::format("attribute 'dilations' has {} values, expected 2", w.dilations.size()));
  w.pads = window_pads(node, in, w);
  if (w.pads.size() != 4) node.fail(fmt::format("attribute 'pads' has {} values, expected 4", w.pads.size()));
  return w;
}

void convert_conv(Node &node) {
  node.require_inputs(2, 3);
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> weight = node.input_dims(1);
  if (weight.size() != 4) node.fail(fmt::format("weight '{}' has {} dims; only 2-D convolutions are supported", node.input(1), weight.size()));
  const Window w = read_window(node, node.input_dims(0), {weight[2], weight[3]});
  std::vector<std::string> inputs = {node.data_input(0), node.data_input(1)};
  if (node.has_input(2)) inputs.push_back(node.data_input(2));
  node.emit("builtin.conv2d",
            {{"stride", w.strides}, {"dilation", w.dilations}, {"pads", w.pads}, {"group", node.attr_int("group", 1)}},
            inputs, {node.output(0)});
}

void convert_pool(Node &node, bool max) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  node.dtype();
  const Window w = read_window(node, node.input_dims(0), {});
  node.require_attr_value("ceil_mode", 0, "the output size is rounded down (floor)");
  if (max) {
    node.require_attr_value("storage_order", 0, "row-major only");
    if (w.dilations != std::vector<int64_t>{1, 1})
      node.fail(fmt::format("attribute 'dilations' is [{}]; pooling supports [1, 1] only", fmt::join(w.dilations, ", ")));
  } else {
    const bool padded = std::any_of(w.pads.begin(), w.pads.end(), [](int64_t p) { return p != 0; });
    if (padded && node.attr_int("count_include_pad", 0) == 0)
      node.fail("attribute 'count_include_pad' is 0 (the default) and the window is padded: the built-in average "
                "pool divides by kh·kw, counting the padding (count_include_pad = 1)");
    node.attr_int("count_include_pad", 0);
  }
  node.emit(max ? "builtin.maxpool2d" : "builtin.avgpool2d", {{"kernel", w.kernel}, {"stride", w.strides}, {"pads", w.pads}},
            {node.data_input(0)}, {node.output(0)});
}

void convert_global_pool(Node &node, bool max) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> in = node.input_dims(0);
  if (in.size() != 4) node.fail(fmt::format("input '{}' has {} dims; only [n, c, h, w] is supported", node.input(0), in.size()));
  node.emit(max ? "builtin.maxpool2d" : "builtin.avgpool2d",
            {{"kernel", std::vector<int64_t>{in[2], in[3]}}, {"stride", std::vector<int64_t>{1, 1}},
             {"pads", std::vector<int64_t>{0, 0, 0, 0}}},
            {node.data_input(0)}, {node.output(0)});
}

// Inference BatchNormalization, y = (x - mean) / sqrt(var + eps) * scale + b.
// Constant statistics are folded in double into y = x * a + c per channel;
// tensors are reshaped to [c, 1, ...] (so they broadcast along the channel
// dim) and combined by one expression.
void convert_batch_norm(Node &node) {
  node.require_inputs(5, 5);
  node.require_outputs(1);
  const Dtype dtype = node.dtype();
  const float epsilon = node.attr_float("epsilon", 1e-5f);
  node.attr_float("momentum", 0.9f);  // training only
  node.require_attr_value("training_mode", 0, "only inference BatchNormalization is supported");
  if (node.has_attr("spatial")) node.require_attr_value("spatial", 1, "per-channel statistics only");
  const std::vector<int64_t> in = node.input_dims(0);
  if (in.size() < 2) node.fail(fmt::format("input '{}' has {} dims; expected [n, c, ...]", node.input(0), in.size()));
  const int64_t channels = in[1];
  std::vector<int64_t> dims(in.size() - 1, 1);
  dims[0] = channels;  // [c, 1, ...]: broadcasts along the channel dim
  const char *names[] = {"scale", "B", "input_mean", "input_var"};
  bool constant = true;
  for (int i = 1; i <= 4; ++i) {
    if (node.input_dims(i) != std::vector<int64_t>{channels})
      node.fail(fmt::format("input {} ({}) has the shape [{}], expected [{}] (one value per channel)", i, names[i - 1],
                            fmt::join(node.input_dims(i), ", "), channels));
    constant = constant && node.is_constant_input(i);
  }
  if (constant) {
    std::vector<double> a(channels), c(channels);
    for (int64_t k = 0; k < channels; ++k) {
      auto value = [&](int i) { return node.constant_input(i, names[i - 1]).values[k]; };
      a[k] = value(1) / std::sqrt(value(4) + double(epsilon));
      c[k] = value(2) - value(3) * a[k];
    }
    const std::string scale = node.add_weight("scale", dims, dtype, a);
    const std::string shift = node.add_weight("shift", dims, dtype, c);
    node.emit("builtin.expression", {{"formula", "x0 * x1 + x2"}, {"names", {"x0", "x1", "x2"}}},
              {node.data_input(0), scale, shift}, {node.output(0)});
    return;
  }
  std::vector<std::string> inputs = {node.data_input(0)};
  for (int i = 1; i <= 4; ++i) {
    inputs.push_back(node.temporary(names[i - 1]));
    node.emit("builtin.reshape", {{"shape", dims}}, {node.data_input(i)}, {inputs.back()});
  }
  node.emit("builtin.expression",
            {{"formula", fmt::format("(x0 - x3) / sqrt(x4 + {}) * x1 + x2", number(node, "epsilon", epsilon))},
             {"names", {"x0", "x1", "x2", "x3", "x4"}}},
            inputs, {node.output(0)});
}

const std::map<std::string, Converter> &converters() {
  static const std::map<std::string, Converter> table = {
      {"Add", binary("x0 + x1")},
      {"Sub", binary("x0 - x1")},
      {"Mul", binary("x0 * x1")},
      {"Div", convert_div},
      {"PRelu", binary("where(x0 < 0, x1 * x0, x0)")},
      {"Equal", comparison("x0 == x1")},
      {"Less", comparison("x0 < x1")},
      {"LessOrEqual", comparison("x0 <= x1")},
      {"Greater", comparison("x0 > x1")},
      {"GreaterOrEqual", comparison("x0 >= x1")},
      {"And", comparison("x0 * x1")},
      {"Or", comparison("max(x0, x1)")},
      {"Xor", comparison("x0 != x1")},
      {"Not", convert_not},
      {"Where", convert_where},
      {"Neg", unary("-x0")},
      {"Abs", convert_abs},
      {"Relu", unary("relu(x0)")},
      {"Sigmoid", unary("sigmoid(x0)")},
      {"Tanh", unary("tanh(x0)")},
      {"Exp", unary("exp(x0)")},
      {"Log", unary("log(x0)")},
      {"Sqrt", unary("sqrt(x0)")},
      {"Reciprocal", unary("1 / x0")},
      {"Softsign", unary("x0 / (1 + abs(x0))")},
      {"Softplus", unary("log(exp(x0) + 1)")},
      {"Sign", convert_sign},
      {"LeakyRelu", unary_with([](Node &n) {
         return fmt::format("where(x0 < 0, {} * x0, x0)", number(n, "alpha", n.attr_float("alpha", 0.01f)));
       })},
      {"Elu", unary_with([](Node &n) {
         return fmt::format("where(x0 < 0, {} * (exp(x0) - 1), x0)", number(n, "alpha", n.attr_float("alpha", 1.0f)));
       })},
      {"Selu", unary_with([](Node &n) {
         const std::string alpha = number(n, "alpha", n.attr_float("alpha", 1.67326319217681884765625f));
         const std::string gamma = number(n, "gamma", n.attr_float("gamma", 1.05070102214813232421875f));
         return fmt::format("{} * where(x0 <= 0, {} * (exp(x0) - 1), x0)", gamma, alpha);
       })},
      {"HardSigmoid", unary_with([](Node &n) {
         const std::string alpha = number(n, "alpha", n.attr_float("alpha", 0.2f));
         const std::string beta = number(n, "beta", n.attr_float("beta", 0.5f));
         return fmt::format("max(0, min(1, {} * x0 + {}))", alpha, beta);
       })},
      {"HardSwish", unary("x0 * max(0, min(1, x0 * (1 / 6) + 0.5))")},
      {"ThresholdedRelu", unary_with([](Node &n) {
         return fmt::format("where(x0 > {}, x0, 0)", number(n, "alpha", n.attr_float("alpha", 1.0f)));
       })},
      {"Sum", variadic([](const std::string &a, const std::string &b) { return a + " + " + b; }, false)},
      {"Mean", variadic([](const std::string &a, const std::string &b) { return a + " + " + b; }, true)},
      {"Max", variadic([](const std::string &a, const std::string &b) { return fmt::format("max({}, {})", a, b); }, false)},
      {"Min", variadic([](const std::string &a, const std::string &b) { return fmt::format("min({}, {})", a, b); }, false)},
      {"Clip", convert_clip},
      {"Reshape", convert_reshape},
      {"Flatten", convert_flatten},
      {"Squeeze", convert_squeeze},
      {"Unsqueeze", convert_squeeze},
      {"Identity", convert_identity},
      {"Dropout", convert_dropout},
      {"Concat", convert_concat},
      {"Transpose", convert_transpose},
      {"Slice", convert_slice},
      {"Split", convert_split},
      {"Gather", convert_gather},
      {"Expand", convert_expand},
      {"ReduceMean", [](Node &n) { convert_reduce(n, {ReduceKind::mean, "", ""}); }},
      {"ReduceSum", [](Node &n) { convert_reduce(n, {ReduceKind::sum, "", ""}); }},
      {"ReduceMax", [](Node &n) { convert_reduce(n, {ReduceKind::max, "", ""}); }},
      {"ReduceMin", [](Node &n) { convert_reduce(n, {ReduceKind::max, "-x0", "-x0"}); }},
      {"ReduceSumSquare", [](Node &n) { convert_reduce(n, {ReduceKind::sum, "x0 * x0", ""}); }},
      {"ReduceL1", [](Node &n) { convert_reduce(n, {ReduceKind::sum, "abs(x0)", ""}); }},
      {"ReduceL2", [](Node &n) { convert_reduce(n, {ReduceKind::sum, "x0 * x0", "sqrt(x0)"}); }},
      {"ReduceLogSum", [](Node &n) { convert_reduce(n, {ReduceKind::sum, "", "log(x0)"}); }},
      {"ReduceLogSumExp", [](Node &n) { convert_reduce(n, {ReduceKind::sum, "exp(x0)", "log(x0)"}); }},
      {"Softmax", [](Node &n) { convert_softmax(n, false); }},
      {"LogSoftmax", [](Node &n) { convert_softmax(n, true); }},
      {"LayerNormalization", convert_layer_norm},
      {"MatMul", convert_matmul},
      {"Erf", convert_erf},
      {"Pow", convert_pow},
      {"Cast", convert_cast},
      {"Gemm", convert_gemm},
      {"Conv", convert_conv},
      {"MaxPool", [](Node &n) { convert_pool(n, true); }},
      {"AveragePool", [](Node &n) { convert_pool(n, false); }},
      {"GlobalMaxPool", [](Node &n) { convert_global_pool(n, true); }},
      {"GlobalAveragePool", [](Node &n) { convert_global_pool(n, false); }},
      {"BatchNormalization", convert_batch_norm},
  };
  return table;
}

}  // namespace

bool convert_standard_node(Node &node) {
  auto it = converters().find(node.op_type());
  if (it == converters().end()) return false;
  it->second(node);
  return true;
}

std::vector<std::string> standard_ops() {
  std::vector<std::string> ops;
  for (const auto &[name, converter] : converters()) ops.push_back(name);
  ops.push_back("Constant");
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace tpu_runtime::onnx_import
