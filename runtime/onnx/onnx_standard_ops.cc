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
#include "onnx/onnx_lowering.h"

namespace tpu_runtime::onnx_import {
namespace {

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
  for (int i = 0; i < 2; ++i) floats.push_back(node.emit_cast(node.data_input(i, dtype), Dtype::fp32));
  const std::string quotient = node.temporary("quotient");
  node.emit("builtin.expression", {{"formula", "x0 / x1"}, {"names", {"x0", "x1"}}}, floats, {quotient});
  node.emit_cast(quotient, dtype, node.output(0));
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

// Dropout as the identity: in inference, or in training with ratio 0
// (nothing dropped); training with another ratio drops random elements,
// which is refused. The optional mask is all true (1, in x's dtype).
void convert_dropout(Node &node) {
  node.require_inputs(1, 3);
  if (node.num_outputs() < 1 || node.num_outputs() > 2)
    node.fail(fmt::format("{} outputs, expected 1 or 2 (output, mask)", node.num_outputs()));
  float ratio = node.attr_float("ratio", 0.5f);
  if (node.has_input(1)) {
    const ConstTensor &r = node.constant_input(1, "ratio");
    if (r.values.size() != 1) node.fail(fmt::format("input 1 (ratio) has {} values, expected 1", r.values.size()));
    ratio = float(r.values[0]);
  }
  node.attr_int("seed", 0);
  if (node.has_input(2)) {
    const ConstTensor &training = node.constant_input(2, "training_mode");
    if ((training.values.size() != 1 || training.values[0] != 0) && ratio != 0)
      node.fail(fmt::format("input 2 (training_mode) is true with ratio {}: training Dropout drops random elements, "
                            "which the importer does not do (inference Dropout and ratio 0 are the identity)",
                            ratio));
  }
  const std::vector<int64_t> dims = node.output_dims(0);
  if (dims.empty()) node.fail(fmt::format("output '{}' is a scalar (rank 0), which a layer cannot produce", node.output(0)));
  node.dtype(true);
  node.emit("builtin.reshape", {{"shape", dims}}, {node.data_input(0)}, {node.output(0)});
  if (node.num_outputs() == 2 && !node.output(1).empty())
    node.emit("builtin.expression", {{"formula", "where(x0 == x0, 1, 1)"}, {"names", {"x0"}}}, {node.data_input(0)},
              {node.output(1)});
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

}  // namespace

// ---- data movement: transpose, slice, split, gather, expand ---------------------

int64_t normalized_axis(Node &node, int64_t axis, std::size_t rank, std::string_view what) {
  const int64_t r = int64_t(rank);
  if (axis < -r || axis >= r) node.fail(fmt::format("{} {} is out of range for {} dims", what, axis, rank));
  return axis < 0 ? axis + r : axis;
}

namespace {

void convert_transpose(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> in = node.input_dims(0);
  std::vector<int64_t> reversed(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) reversed[d] = int64_t(in.size() - 1 - d);
  node.emit("builtin.transpose", {{"perm", node.attr_ints("perm", reversed)}}, {node.data_input(0)}, {node.output(0)});
}

// A slice layer: full-rank starts / ends / steps (steps >= 1); start =
// end gives an empty tensor (its layer issues no command).
void emit_slice(Node &node, const std::string &input, const std::vector<int64_t> &starts,
                const std::vector<int64_t> &ends, const std::vector<int64_t> &steps, const std::string &output) {
  node.emit("builtin.slice", {{"starts", starts}, {"ends", ends}, {"steps", steps}}, {input}, {output});
}

// A constant input's or attribute's ints (Slice's starts ... before opset 10 were attributes).
std::vector<int64_t> ints_of(Node &node, int input, const std::string &attribute, bool required) {
  if (node.has_attr(attribute)) return node.attr_ints(attribute);
  if (node.has_input(input)) {
    const ConstTensor &c = node.constant_input(input, attribute);
    return saturated_int64s(c.values);
  }
  if (required) node.fail(fmt::format("'{}' is missing", attribute));
  return {};
}

// The rows a negative step takes along a dim of `size` (ONNX's clamping:
// the start into [0, size - 1], the end into [-1, size - 1]), in order.
std::vector<double> reversed_rows(int64_t start, int64_t end, int64_t step, int64_t size) {
  if (size == 0) return {};
  start = std::clamp<int64_t>(start < 0 ? start + size : start, 0, size - 1);
  end = std::clamp<int64_t>(end < 0 ? end + size : end, -1, size - 1);
  std::vector<double> rows;
  for (int64_t i = start; i > end; i += step) rows.push_back(double(i));
  return rows;
}

// Slice: positive steps as one builtin.slice; each axis with a negative
// step then as a builtin.gather of the rows it takes (an int32 weight of
// their indices, descending).
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
  std::map<int64_t, std::vector<double>> reversed;  // axis -> rows
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const int64_t d = normalized_axis(node, axes[i], in.size(), "axis");
    if (steps[i] == 0) node.fail(fmt::format("step 0 on axis {}; a step is nonzero", axes[i]));
    if (steps[i] < 0) {
      reversed[d] = reversed_rows(starts[i], ends[i], steps[i], in[d]);
      if (!reversed[d].empty()) continue;
      reversed.erase(d);  // nothing taken: an empty slice
      first[d] = last[d] = 0;
      continue;
    }
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + in[d] : v, 0, in[d]); };
    first[d] = clamp(starts[i]);
    last[d] = clamp(ends[i]);
    stride[d] = steps[i];
  }
  const bool whole = first == std::vector<int64_t>(in.size(), 0) && last == in &&
                     stride == std::vector<int64_t>(in.size(), 1);
  std::string x = node.data_input(0);
  if (!whole || reversed.empty()) {
    const std::string out = reversed.empty() ? node.output(0) : node.temporary("sliced");
    emit_slice(node, x, first, last, stride, out);
    x = out;
  }
  for (auto it = reversed.begin(); it != reversed.end(); ++it) {
    const std::string rows = node.add_weight("rows", {int64_t(it->second.size())}, Dtype::int32, it->second);
    const std::string out = std::next(it) == reversed.end() ? node.output(0) : node.temporary("reversed");
    node.emit("builtin.gather", {{"axis", it->first}}, {x, rows}, {out});
    x = out;
  }
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

}  // namespace

std::string emit_reduce(Node &node, const std::string &input, const std::vector<int64_t> &in,
                        const std::vector<int64_t> &axes, ReduceKind kind, std::string output) {
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

std::string emit_formula(Node &node, const std::string &formula, const std::vector<std::string> &inputs,
                         std::string output) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < inputs.size(); ++i) names.push_back(fmt::format("x{}", i));
  if (output.empty()) output = node.temporary("t");
  node.emit("builtin.expression", {{"formula", formula}, {"names", names}}, inputs, {output});
  return output;
}

namespace {

// ---- Pow ------------------------------------------------------------------------
//
// numpy's / ONNX's pow on floats: x^0 = 1 (even for NaN), a negative base
// has a real power only for an integer exponent (odd: negative), NaN
// otherwise; 0^y is 0 for y > 0 and inf for y < 0. A constant exponent
// picks its formula at import: small integers (|y| <= 8; in fp16 and bf16
// only 1, 2, -1) as products (a balanced tree: at most 4 roundings, then a
// division for y < 0), 0.5 and -0.5 as sqrt / rsqrt, anything else as
// exp(y log|x|) with the sign and NaN decided by y's parity. A tensor
// exponent decides per element: y is an integer when |y| >= 2^23 or
// rounding |y| to an integer ((|y| + 2^23) - 2^23, every operation rounding
// to fp32) gives it back; odd likewise for |y| / 2. exp and log run in fp32 (fp16 and
// bf16 inputs are cast there and back), so the relative error is about
// (2 |y ln|x|| + 2) · 2^-24 before the rounding to the output type
// (docs/onnx.md).

// x0 raised to the integer n (1 <= n <= 8) as a balanced product.
std::string power_product(int n) {
  if (n == 1) return "x0";
  const std::string half = power_product(n / 2);
  const std::string square = fmt::format("({} * {})", half, half);
  return n % 2 ? fmt::format("({} * x0)", square) : square;
}

// The formula of x0 ^ y for a constant y, in the float type the
// expression runs in.
std::string constant_power(double y) {
  if (y == 0) return "where(x0 != 0, 1, 1)";  // 1 for every x, NaN included
  if (y == 0.5) return "sqrt(x0)";
  if (y == -0.5) return "rsqrt(x0)";
  if (y == std::floor(y) && std::abs(y) <= 8) {
    const std::string product = power_product(int(std::abs(y)));
    return y > 0 ? (y == 1 ? "x0 * 1" : product) : fmt::format("1 / {}", product);
  }
  const std::string magnitude = fmt::format("exp({} * log(abs(x0)))", fmt::format("{}", y));
  if (y != std::floor(y)) return fmt::format("exp({} * log(x0))", y);  // log of a negative base is NaN
  const bool odd = std::abs(y) < 9007199254740992.0 && std::fmod(std::abs(y), 2.0) == 1.0;
  return odd ? fmt::format("where(x0 < 0, -{0}, {0})", magnitude) : magnitude;
}

// x0 ^ x1, both tensors, in a float type of `fraction_bits` (fp32: 23).
std::string tensor_power(int fraction_bits) {
  const std::string big = fmt::format("{}", std::ldexp(1.0, fraction_bits));
  const std::string twice = fmt::format("{}", std::ldexp(1.0, fraction_bits + 1));
  const std::string integer = fmt::format("max(abs(x1) >= {0}, ((abs(x1) + {0}) - {0}) == abs(x1))", big);
  const std::string odd =
      fmt::format("(abs(x1) < {1}) * (((abs(x1) * 0.5 + {0}) - {0}) != abs(x1) * 0.5)", big, twice);
  const std::string magnitude = "exp(x1 * log(abs(x0)))";
  return fmt::format("where(x1 == 0, 1, where(x0 < 0, where({0}, where({1}, -{2}, {2}), exp(x1 * log(x0))), {2}))",
                     integer, odd, magnitude);
}

// The exponent Y as one constant value, or nothing (a tensor of values).
std::optional<double> scalar_exponent(Node &node) {
  if (!node.is_constant_input(1)) return std::nullopt;
  const ConstTensor &y = node.constant_input(1, "exponent Y");
  if (y.values.empty()) node.fail("input 1 (Y) is an empty constant");
  for (double v : y.values)
    if (v != y.values[0]) return std::nullopt;
  if (!std::isfinite(y.values[0]))
    node.fail(fmt::format("input 1 (Y) is {}; a finite exponent is supported", y.values[0]));
  const std::vector<int64_t> x = node.input_dims(0), out = node.output_dims(0);
  if (x != out) return std::nullopt;  // Y broadcasts X: keep it a tensor
  return y.values[0];
}

// Y as a tensor: a constant of any numeric type becomes an fp32 weight (the
// type the power is computed in, so no digit of it is lost); a run-time Y
// keeps its own numeric type (ONNX's T2: an integer exponent of a float
// base), which emit_fp32_formula casts to fp32: exact for |y| <= 2^24,
// rounded beyond (where every power but of -1, 0 and 1 overflows or
// vanishes anyway).
TypedTensor exponent_tensor(Node &node) {
  if (!node.is_constant_input(1)) {
    const std::string y = node.data_input(1);
    if (node.info(y).elem_type == onnx::TensorProto::BOOL) node.fail("input 1 (Y) is bool; a numeric exponent is needed");
    return {y, *node.held_dtype(y, "input")};
  }
  const ConstTensor &y = node.constant_input(1, "exponent Y");
  std::vector<int64_t> dims = y.dims;
  if (dims.empty()) dims = {1};
  return {node.add_weight("exponent", dims, Dtype::fp32, y.values), Dtype::fp32};
}

}  // namespace

void emit_fp32_formula(Node &node, const std::string &formula, const std::vector<TypedTensor> &operands, Dtype dtype) {
  std::vector<std::string> inputs;
  for (const TypedTensor &t : operands)
    inputs.push_back(t.dtype == Dtype::fp32 ? t.name : node.emit_cast(t.name, Dtype::fp32));
  if (dtype == Dtype::fp32) {
    emit_formula(node, formula, inputs, node.output(0));
    return;
  }
  node.emit_cast(emit_formula(node, formula, inputs), dtype, node.output(0));
}

namespace {

// ---- Pow of an integer base -----------------------------------------------------
//
// An int32 (or int64, held as int32) base: builtin.int_pow, the exact power
// wrapped to 32 bits like numpy's (square-and-multiply over the exponent's
// bits; a negative exponent gives the integer part of 1 / x^|y|, int32's
// largest value for 0: builtin_int_pow.h). Both operands are broadcast to
// the output's shape first. An integer exponent of 8 or 16 bits is cast to
// int32 (exact); a uint32 / uint64 one is read as unsigned. A float
// exponent (ONNX's reference: a double power truncated into the base's
// type): integral values (|y| < 2^31) through int_pow, exactly; the others
// through the float power of emit_fp32_formula's formula, rounded to the
// nearest integer when within 2^-20 of it (exp and log in fp32 would turn
// 4^0.5 into 1.9999999) and truncated toward zero (NaN, a negative base's
// fractional power, gives 0).

// `tensor` (dims `from`) copied by `op` (builtin.reshape, builtin.broadcast)
// into a new tensor of the dims `to`; the tensor itself when they agree.
std::string copied_into(Node &node, const char *op, const char *hint, const std::string &tensor,
                        const std::vector<int64_t> &from, const std::vector<int64_t> &to) {
  if (from == to) return tensor;
  const std::string out = node.temporary(hint);
  node.emit(op, {{"shape", to}}, {tensor}, {out});
  return out;
}

}  // namespace

std::string broadcast_input(Node &node, int i) {
  std::vector<int64_t> dims;
  if (node.is_constant_input(i)) dims = node.constant_input(i, "input").dims;
  else dims = node.input_dims(i);
  if (dims.empty()) dims = {1};  // a scalar constant's weight
  return copied_into(node, "builtin.broadcast", "broadcast", node.data_input(i), dims, node.output_dims(0));
}

namespace {

// x ^ y for a float y (fp32): int_pow of its integral values, the rounded
// float power of the others.
void emit_integer_pow_of_float(Node &node, const std::string &x, const std::string &y) {
  const std::string big = "8388608";  // 2^23: every fp32 beyond it is an integer
  const std::string integral = fmt::format("max(abs(x0) >= {0}, ((abs(x0) + {0}) - {0}) == abs(x0))", big);
  const std::string below_2_31 = fmt::format("where(abs(x0) < 2147483648, {}, 0)", integral);
  const std::string flag = node.emit_cast(emit_formula(node, below_2_31, {y}), Dtype::int32);
  const std::string exact = node.temporary("power");
  node.emit("builtin.int_pow", nlohmann::ordered_json::object(), {x, node.emit_cast(y, Dtype::int32)}, {exact});
  const std::string power = emit_formula(node, tensor_power(23), {node.emit_cast(x, Dtype::fp32), y});
  // x0 itself when it is an integer already or farther than 2^-20 x0 from the nearest one; else that integer
  const std::string nearest = fmt::format("where(x0 < 0, -((abs(x0) + {0}) - {0}), (abs(x0) + {0}) - {0})", big);
  const std::string rounded = emit_formula(
      node, fmt::format("where(max(abs(x0) >= {0}, abs(x0 - {1}) > abs(x0) * (1 / 1048576)), x0, {1})", big, nearest),
      {power});
  emit_formula(node, "where(x0, x1, x2)", {flag, exact, node.emit_cast(rounded, Dtype::int32)}, node.output(0));
}

void convert_integer_pow(Node &node, Dtype dtype) {
  if (dtype != Dtype::int32)
    node.fail(fmt::format("input '{}' is {}: an integer Pow takes int32 and int64 bases", node.input(0),
                          elem_type_name(node.info(node.input(0)).elem_type)));
  if (node.info(node.input(1)).elem_type == onnx::TensorProto::BOOL)
    node.fail("input 1 (Y) is bool; a numeric exponent is needed");
  const std::string x = broadcast_input(node, 0), y = broadcast_input(node, 1);
  const Dtype held = *node.held_dtype(y, "input");
  if (dtype_info(held).is_float)
    return emit_integer_pow_of_float(node, x, held == Dtype::fp32 ? y : node.emit_cast(y, Dtype::fp32));
  const bool wide = held == Dtype::int32 || held == Dtype::uint32;
  node.emit("builtin.int_pow", nlohmann::ordered_json::object(), {x, wide ? y : node.emit_cast(y, Dtype::int32)},
            {node.output(0)});
}

void convert_pow(Node &node) {
  node.require_inputs(2, 2);
  node.require_outputs(1);
  const Dtype dtype = node.dtype(false, 1);  // X's and the output's; Y may be of any numeric type
  if (!dtype_info(dtype).is_float) return convert_integer_pow(node, dtype);
  if (const std::optional<double> y = scalar_exponent(node)) {
    // One operation in the operands' type (x, x·x, 1/x, sqrt, rsqrt), or an fp32 product of a few roundings;
    // anything else runs in fp32 and is rounded once to a shorter type.
    const bool single = *y == 0 || *y == 1 || *y == 2 || *y == -1 || std::abs(*y) == 0.5;
    const bool exact = single || (dtype == Dtype::fp32 && *y == std::floor(*y) && std::abs(*y) <= 8);
    if (exact) emit_formula(node, constant_power(*y), {node.data_input(0)}, node.output(0));
    else emit_fp32_formula(node, constant_power(*y), {{node.data_input(0), dtype}}, dtype);
    return;
  }
  emit_fp32_formula(node, tensor_power(23), {{node.data_input(0), dtype}, exponent_tensor(node)}, dtype);
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

// ---- matrix products: builtin.matmul -------------------------------------------
//
// One layer: the built-in matmul broadcasts batch dims (numpy's rule, as
// ONNX's MatMul), reads a transposed operand through strides (Gemm's transA
// / transB) and adds a per-column bias; it accumulates in fp32 on the matrix
// unit and rounds once.

std::string reshaped(Node &node, const std::string &tensor, const std::vector<int64_t> &from,
                     const std::vector<int64_t> &to) {
  return copied_into(node, "builtin.reshape", "view", tensor, from, to);
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
  const std::vector<int64_t> a = node.input_dims(0), b = node.input_dims(1), out = node.output_dims(0);
  if (out.empty()) node.fail(fmt::format("output '{}' is a scalar (rank 0), which a layer cannot produce", node.output(0)));
  // numpy: a vector a is one row, a vector b one column; the output drops that dim
  const std::string x = a.size() == 1 ? reshaped(node, node.data_input(0), a, {1, a[0]}) : node.data_input(0);
  const std::string w = b.size() == 1 ? reshaped(node, node.data_input(1), b, {b[0], 1}) : node.data_input(1);
  if (a.size() > 1 && b.size() > 1) {
    node.emit("builtin.matmul", nlohmann::ordered_json::object(), {x, w}, {node.output(0)});
    return;
  }
  const std::string y = node.temporary("matmul");
  node.emit("builtin.matmul", nlohmann::ordered_json::object(), {x, w}, {y});
  node.emit("builtin.reshape", {{"shape", out}}, {y}, {node.output(0)});
}

// B for Gemm: alpha folded into a constant B (in double, then rounded once).
std::string gemm_b(Node &node, float alpha, bool &alpha_folded) {
  alpha_folded = alpha == 1.0f || node.is_constant_input(1);
  if (alpha == 1.0f || !node.is_constant_input(1)) return node.data_input(1);
  std::vector<double> values = node.constant_input(1, "B").values;
  for (double &v : values) v *= double(alpha);
  return node.add_weight("alpha_b", node.input_dims(1), node.dtype(), values);
}

// Y = alpha op(A) op(B) + beta C: one builtin.matmul when alpha folds into
// a constant B and C is constant with one value per column (the bias, times
// beta); otherwise an expression after it.
void convert_gemm(Node &node) {
  node.require_inputs(2, 3);
  node.require_outputs(1);
  node.dtype();
  const float alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
  const bool trans_a = node.attr_int("transA", 0) != 0, trans_b = node.attr_int("transB", 0) != 0;
  const std::vector<int64_t> a = node.input_dims(0), b = node.input_dims(1), out = node.output_dims(0);
  if (a.size() != 2 || b.size() != 2) node.fail("inputs A and B must be 2-D");
  const int64_t n = out[1];
  bool alpha_folded = false;
  std::vector<std::string> inputs = {node.data_input(0), gemm_b(node, alpha, alpha_folded)};
  std::string c_after;
  if (node.has_input(2)) {
    const std::vector<int64_t> c = node.input_dims(2);
    const bool per_column = product(c, 0, c.size()) == n && (c.empty() || c.back() == n);
    if (per_column && node.is_constant_input(2) && alpha_folded) {
      std::vector<double> values = node.constant_input(2, "C").values;
      for (double &v : values) v *= beta;
      inputs.push_back(node.add_weight("bias", {n}, node.dtype(), values));
    } else {
      c_after = node.data_input(2);
    }
  }
  std::string formula = alpha_folded ? "x0" : fmt::format("{} * x0", number(node, "alpha", alpha));
  if (!c_after.empty()) formula += fmt::format(" + {} * x1", number(node, "beta", beta));
  const bool direct = formula == "x0";
  const std::string y = direct ? node.output(0) : node.temporary("matmul");
  node.emit("builtin.matmul", {{"transpose_a", int(trans_a)}, {"transpose_b", int(trans_b)}}, inputs, {y});
  if (direct) return;
  std::vector<std::string> terms = {y};
  if (!c_after.empty()) terms.push_back(c_after);
  emit_formula(node, formula, terms, node.output(0));
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

// The conv and pool engines pad by at most 15: wider pads [top, left,
// bottom, right] are made in global memory first (builtin.pad2d, filled
// with 0, or -inf when `lowest`) and the window then runs unpadded. Returns the input the
// window reads; `pads` becomes what the window itself pads.
constexpr int64_t kEnginePadLimit = 15;

std::string prepadded(Node &node, const std::string &input, std::vector<int64_t> &pads, bool lowest) {
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p <= kEnginePadLimit; })) return input;
  const std::string out = node.temporary("padded");
  nlohmann::ordered_json params = {{"pads", pads}};
  if (lowest) params["lowest"] = 1;
  node.emit("builtin.pad2d", std::move(params), {input}, {out});
  pads.assign(4, 0);
  return out;
}

void convert_conv(Node &node) {
  node.require_inputs(2, 3);
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> weight = node.input_dims(1);
  if (weight.size() != 4)
    node.fail(fmt::format("weight '{}' has {} dims; only 1-D and 2-D convolutions are supported", node.input(1),
                          weight.size()));
  Window w = read_window(node, node.input_dims(0), {weight[2], weight[3]});
  std::vector<std::string> inputs = {prepadded(node, node.data_input(0), w.pads, false), node.data_input(1)};
  if (node.has_input(2)) inputs.push_back(node.data_input(2));
  node.emit("builtin.conv2d",
            {{"stride", w.strides}, {"dilation", w.dilations}, {"pads", w.pads}, {"group", node.attr_int("group", 1)}},
            inputs, {node.output(0)});
}

// ---- pooling: 1-D, 2-D and 3-D windows as 2-D pools --------------------------
//
// The built-in pools are 2-D: a 1-D window is a 2-D one over [n, c, 1, w];
// a 3-D window pools (h, w) over [n, c·d, h, w], then d over [n, c, d,
// oh·ow] (max of maxes; an average of averages over whole windows, padding
// counted, divides by kd·kh·kw). ceil_mode's last window reaches past the
// padding: that overhang is padding too (-inf for max, 0 for average). An
// average that must not count some of its taps (count_include_pad 0 with
// padding, ceil_mode's overhang) is scaled after by a constant kd·kh·kw /
// taps counted, per output position (the count is a product over axes).

struct PoolAxis {
  int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
  int64_t overhang = 0;  // padding past pad_end that ceil_mode's last window reaches
  int64_t window() const { return (kernel - 1) * dilation + 1; }
};

// A per-axis attribute of `count` values, each at least `low`.
std::vector<int64_t> pool_attr(Node &node, const char *name, std::size_t count, int64_t fallback, int64_t low) {
  const std::vector<int64_t> v = node.attr_ints(name, std::vector<int64_t>(count, fallback));
  if (v.size() != count)
    node.fail(fmt::format("attribute '{}' has {} values, expected {} for the input's {} spatial dims", name, v.size(),
                          count, count % 2 == 0 && std::string_view(name) == "pads" ? count / 2 : count));
  for (int64_t e : v)
    if (e < low) node.fail(fmt::format("attribute '{}' is [{}]; each value must be at least {}", name, fmt::join(v, ", "), low));
  return v;
}

// The output size of one axis, ONNX's rule: floor (or ceil with ceil_mode)
// of (in + pads - window) / stride + 1, a ceil_mode window that would start
// in the end padding dropped; SAME_*: ceil(in / stride), the padding split.
void pool_axis_size(Node &node, PoolAxis &a, const std::string &auto_pad, bool ceil_mode) {
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    a.out = (a.in + a.stride - 1) / a.stride;
    const int64_t total = std::max<int64_t>(0, (a.out - 1) * a.stride + a.window() - a.in);
    a.pad_begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    a.pad_end = total - a.pad_begin;
    return;
  }
  const int64_t extent = a.in + a.pad_begin + a.pad_end;
  if (a.window() > extent)
    node.fail(fmt::format("the window of {} (kernel {}, dilation {}) is larger than the padded input of {}", a.window(),
                          a.kernel, a.dilation, extent));
  a.out = (extent - a.window() + (ceil_mode ? a.stride - 1 : 0)) / a.stride + 1;
  if (ceil_mode && (a.out - 1) * a.stride >= a.in + a.pad_begin) --a.out;
  a.overhang = std::max<int64_t>(0, (a.out - 1) * a.stride + a.window() - extent);
}

// The spatial axes of a pool over `in` ([n, c, spatial...]); `kernel`: the
// kernel_shape when the node has none (a Conv's, from its weight).
std::vector<PoolAxis> pool_axes(Node &node, const std::vector<int64_t> &in,
                                std::optional<std::vector<int64_t>> kernel_default = std::nullopt) {
  const std::size_t rank = in.size() - 2;
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape", kernel_default);
  if (kernel.size() != rank)
    node.fail(fmt::format("attribute 'kernel_shape' is [{}]; the input '{}' has {} spatial dims", fmt::join(kernel, ", "),
                          node.input(0), rank));
  const std::vector<int64_t> strides = pool_attr(node, "strides", rank, 1, 1);
  const std::vector<int64_t> dilations = pool_attr(node, "dilations", rank, 1, 1);
  const bool ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    node.fail(fmt::format("attribute 'auto_pad' = '{}' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER", auto_pad));
  if (auto_pad != "NOTSET" && node.has_attr("pads"))
    node.fail(fmt::format("attribute 'pads' is given with auto_pad '{}'; ONNX allows one of them", auto_pad));
  const std::vector<int64_t> pads = auto_pad == "NOTSET" ? pool_attr(node, "pads", 2 * rank, 0, 0)
                                                          : std::vector<int64_t>(2 * rank, 0);
  std::vector<PoolAxis> axes(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    PoolAxis &a = axes[d];
    a.in = in[2 + d], a.kernel = kernel[d], a.stride = strides[d], a.dilation = dilations[d];
    if (a.kernel < 1) node.fail(fmt::format("attribute 'kernel_shape' is [{}]; each value must be at least 1", fmt::join(kernel, ", ")));
    a.pad_begin = pads[d], a.pad_end = pads[rank + d];
    pool_axis_size(node, a, auto_pad, ceil_mode);
  }
  return axes;
}

// kd·kh·kw / (taps counted), per output position, or nothing when every
// window counts all its taps. Counted: inside the input, or inside the
// padding too with count_include_pad (never ceil_mode's overhang).
std::optional<std::vector<double>> pool_scale(const std::vector<PoolAxis> &axes, bool include_pad) {
  std::vector<double> scale = {1.0};
  bool partial = false;
  for (const PoolAxis &a : axes) {
    const int64_t low = include_pad ? -a.pad_begin : 0, high = include_pad ? a.in + a.pad_end : a.in;
    std::vector<double> next;
    for (double outer : scale)
      for (int64_t o = 0; o < a.out; ++o) {
        int64_t counted = 0;
        for (int64_t j = 0; j < a.kernel; ++j) {
          const int64_t at = o * a.stride - a.pad_begin + j * a.dilation;
          counted += at >= low && at < high;
        }
        partial = partial || counted != a.kernel;
        next.push_back(counted ? outer * double(a.kernel) / double(counted) : NAN);
      }
    scale = std::move(next);
  }
  if (!partial) return std::nullopt;
  return scale;
}

// One built-in 2-D pool: h and w of the window; `input` is [n, c, h, w].
std::string emit_pool2d(Node &node, bool max, const std::string &input, const PoolAxis &h, const PoolAxis &w,
                        std::string out = {}) {
  if (out.empty()) out = node.temporary("pool");
  std::vector<int64_t> pads = {h.pad_begin, w.pad_begin, h.pad_end + h.overhang, w.pad_end + w.overhang};
  const std::string source = prepadded(node, input, pads, max);
  node.emit(max ? "builtin.maxpool2d" : "builtin.avgpool2d",
            {{"kernel", {h.kernel, w.kernel}}, {"stride", {h.stride, w.stride}}, {"dilation", {h.dilation, w.dilation}},
             {"pads", pads}},
            {source}, {out});
  return out;
}

// An integer MaxPool's input as fp32 (the pools take floats): exact, for
// ONNX allows int8 and uint8 only (its checker refuses wider ones first).
std::string pool_source(Node &node, Dtype dtype) {
  const std::string x = node.data_input(0);
  return dtype_info(dtype).is_float ? x : node.emit_cast(x, Dtype::fp32);
}

// ---- MaxPool's Indices ------------------------------------------------------------
//
// ONNX's Indices: per output, the flat index into X (n, c included) of the
// window's first maximal element in row-major window order; storage_order
// 1 flattens X column-major ((n c) W + w) H + h instead. Computed on the
// device: the input in fp32 (exact for every type MaxPool takes), padded
// with -inf, each tap of the window sliced out as [n, c, oh, ow]; a chain of
// expressions keeps the running maximum and the offset, within the window,
// of the first tap that reached it (`tap > max so far` selects it: a later
// equal tap does not), up to kIndexTapsPerLayer taps per layer; the offset
// (exact in fp32) is cast to int32 and the window position's index added
// (int32 weights per (n, c) and per output position). Int64 held as int32:
// refused when the last flat index does not fit.

constexpr std::size_t kIndexTapsPerLayer = 8;

// One layer's part of the chain: the offset of the first maximum. Carried
// (a later layer): x0 the maximum so far, x1 its offset, the taps x2 on;
// else the taps from x0, the first one starting the maximum.
std::string first_maximum_formula(bool carried, const std::vector<int64_t> &offsets) {
  const std::size_t base = carried ? 2 : 0;
  std::string maximum = "x0";
  std::string chosen = carried ? "x1" : fmt::format("{}", offsets[0]);
  for (std::size_t j = carried ? 0 : 1; j < offsets.size(); ++j) {
    const std::string tap = fmt::format("x{}", base + j);
    chosen = fmt::format("where({} > {}, {}, {})", tap, maximum, offsets[j], chosen);
    maximum = fmt::format("max({}, {})", maximum, tap);
  }
  return chosen;
}

// The same layer's running maximum (the inputs bound alike).
std::string running_maximum_formula(bool carried, std::size_t taps) {
  const std::size_t base = carried ? 2 : 0;
  std::string maximum = "x0";
  for (std::size_t j = carried ? 0 : 1; j < taps; ++j) maximum = fmt::format("max({}, x{})", maximum, base + j);
  return maximum;
}

// The taps of the window over `padded` ([n, c, h + pads, w + pads], fp32),
// each [n, c, oh, ow], with their offsets within X from the window's corner.
std::vector<std::pair<std::string, int64_t>> window_taps(Node &node, const std::string &padded,
                                                         const std::vector<int64_t> &in, const PoolAxis &h,
                                                         const PoolAxis &w, bool column_major) {
  std::vector<std::pair<std::string, int64_t>> taps;
  for (int64_t i = 0; i < h.kernel; ++i)
    for (int64_t j = 0; j < w.kernel; ++j) {
      const int64_t top = i * h.dilation, left = j * w.dilation;
      const std::string tap = node.temporary("tap");
      emit_slice(node, padded, {0, 0, top, left},
                 {in[0], in[1], top + (h.out - 1) * h.stride + 1, left + (w.out - 1) * w.stride + 1},
                 {1, 1, h.stride, w.stride}, tap);
      taps.emplace_back(tap, column_major ? left * in[2] + top : top * in[3] + left);
    }
  return taps;
}

// The flat index of each window's corner (its first tap, in the padding
// or not), as two int32 weights: per (n, c) [n, c, 1, 1] and per output
// position [oh, ow].
std::pair<std::string, std::string> corner_indices(Node &node, const std::vector<int64_t> &in, const PoolAxis &h,
                                                   const PoolAxis &w, bool column_major) {
  std::vector<double> planes, positions;
  for (int64_t p = 0; p < in[0] * in[1]; ++p) planes.push_back(double(p * in[2] * in[3]));
  for (int64_t y = 0; y < h.out; ++y)
    for (int64_t x = 0; x < w.out; ++x) {
      const int64_t row = y * h.stride - h.pad_begin, column = x * w.stride - w.pad_begin;
      positions.push_back(double(column_major ? column * in[2] + row : row * in[3] + column));
    }
  return {node.add_weight("plane_index", {in[0], in[1], 1, 1}, Dtype::int32, planes),
          node.add_weight("window_index", {h.out, w.out}, Dtype::int32, positions)};
}

void emit_max_pool_indices(Node &node, Dtype dtype, const std::vector<int64_t> &in, const std::vector<PoolAxis> &axes) {
  const int64_t order = node.attr_int("storage_order", 0);
  if (order != 0 && order != 1) node.fail(fmt::format("attribute 'storage_order' is {}; 0 or 1", order));
  if (axes.size() != 2)
    node.fail(fmt::format("output 1 (Indices) '{}': Indices are supported for 2-D windows ([n, c, h, w]), not {}-D",
                          node.output(1), axes.size()));
  const int64_t last = in[0] * in[1] * in[2] * in[3] - 1;
  if (last > INT32_MAX)
    node.fail(fmt::format("output 1 (Indices) '{}': the flat index reaches {}, which int32 cannot hold (the device "
                          "holds int64 tensors as int32)",
                          node.output(1), last));
  const PoolAxis &h = axes[0], &w = axes[1];
  const std::string x = node.data_input(0);
  const std::string source = dtype == Dtype::fp32 ? x : node.emit_cast(x, Dtype::fp32);
  const std::vector<int64_t> pads = {h.pad_begin, w.pad_begin, h.pad_end + h.overhang, w.pad_end + w.overhang};
  std::string padded = source;
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p > 0; })) {
    padded = node.temporary("padded");
    node.emit("builtin.pad2d", {{"pads", pads}, {"lowest", 1}}, {source}, {padded});
  }
  const auto taps = window_taps(node, padded, in, h, w, order == 1);
  if (taps.back().second >= (int64_t(1) << 24))
    node.fail(fmt::format("output 1 (Indices) '{}': a window spans {} elements of X, beyond fp32's exact integers "
                          "(2^24), in which the offsets are chosen",
                          node.output(1), taps.back().second));
  std::string maximum, offset;
  for (std::size_t first = 0; first < taps.size(); first += kIndexTapsPerLayer) {
    const bool carried = first > 0;
    std::vector<std::string> inputs;
    if (carried) inputs = {maximum, offset};
    std::vector<int64_t> offsets;
    for (std::size_t t = first; t < std::min(taps.size(), first + kIndexTapsPerLayer); ++t) {
      inputs.push_back(taps[t].first);
      offsets.push_back(taps[t].second);
    }
    const std::string next_offset = emit_formula(node, first_maximum_formula(carried, offsets), inputs);
    if (first + kIndexTapsPerLayer < taps.size())
      maximum = emit_formula(node, running_maximum_formula(carried, offsets.size()), inputs);
    offset = next_offset;
  }
  const auto [planes, positions] = corner_indices(node, in, h, w, order == 1);
  emit_formula(node, "x0 + x1 + x2", {node.emit_cast(offset, Dtype::int32), planes, positions}, node.output(1));
}

void convert_pool(Node &node, bool max) {
  node.require_inputs(1, 1);
  const bool indices = max && node.num_outputs() > 1 && !node.output(1).empty();
  const Dtype dtype = node.dtype(false, -1, 1);  // integers only for MaxPool (takes_integers); Indices are int64
  const bool integer = !dtype_info(dtype).is_float;
  const std::vector<int64_t> in = node.input_dims(0);
  if (in.size() < 3 || in.size() > 5)
    node.fail(fmt::format("input '{}' has {} dims; 1-D, 2-D and 3-D windows ([n, c, ...] of 3 to 5 dims) are supported",
                          node.input(0), in.size()));
  const std::vector<PoolAxis> axes = pool_axes(node, in);
  bool include_pad = false;
  if (max) node.attr_int("storage_order", 0);  // the layout of Indices only
  if (indices) emit_max_pool_indices(node, dtype, in, axes);
  if (!max) include_pad = node.attr_int("count_include_pad", 0) != 0;
  std::vector<int64_t> out = {in[0], in[1]};
  for (const PoolAxis &a : axes) out.push_back(a.out);
  if (out != node.output_dims(0))
    node.fail(fmt::format("the output '{}' has the shape [{}], but the window gives [{}] (with ceil_mode, ONNX 1.12's "
                          "shape inference keeps a last window that starts in the end padding; PyTorch and ONNX's "
                          "reference drop it, and so does the importer)",
                          node.output(0), fmt::join(node.output_dims(0), ", "), fmt::join(out, ", ")));
  const std::size_t rank = axes.size();
  const PoolAxis unit, &h = rank >= 2 ? axes[rank - 2] : unit, &w = axes[rank - 1];
  const int64_t depth = rank == 3 ? axes[0].in : 1;
  const std::optional<std::vector<double>> scale = max ? std::nullopt : pool_scale(axes, include_pad);
  // An integer pool's fp32 result is cast back into the output at the end.
  const std::string result = integer ? node.temporary("pooled") : node.output(0);
  const bool direct = rank == 2 && !scale;  // the 2-D pool writes the result itself
  std::string y = emit_pool2d(node, max, reshaped(node, pool_source(node, dtype), in, {in[0], in[1] * depth, h.in, w.in}),
                              h, w, direct ? result : std::string());
  const auto finish = [&] {
    if (integer) node.emit_cast(result, dtype, node.output(0));
  };
  if (direct) return finish();
  std::vector<int64_t> dims = {in[0], in[1] * depth, h.out, w.out};
  if (rank == 3) {
    PoolAxis plane;
    plane.in = plane.out = h.out * w.out;
    y = emit_pool2d(node, max, reshaped(node, y, dims, {in[0], in[1], depth, plane.in}), axes[0], plane);
    dims = {in[0], in[1], axes[0].out, plane.out};
  }
  if (!scale) {
    node.emit("builtin.reshape", {{"shape", out}}, {y}, {result});
    return finish();
  }
  const std::vector<int64_t> spatial(out.begin() + 2, out.end());
  y = reshaped(node, y, dims, out);
  emit_formula(node, "x0 * x1", {y, node.add_weight("count_scale", spatial, dtype, *scale)}, node.output(0));
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

// A 1-D convolution as a 2-D one over [n, c, 1, w] with the weight [oc,
// ic / group, 1, k] (its window read as a pool's, which has the same
// attributes and output size).
void convert_conv1d(Node &node, const std::vector<int64_t> &weight) {
  const std::vector<int64_t> in = node.input_dims(0);
  if (in.size() != 3)
    node.fail(fmt::format("input '{}' has {} dims but the weight 3; a 1-D convolution takes [n, c, w]", node.input(0),
                          in.size()));
  const PoolAxis a = pool_axes(node, in, std::vector<int64_t>{weight[2]})[0];
  if (a.kernel != weight[2])
    node.fail(fmt::format("attribute 'kernel_shape' is [{}]; expected the weight's [{}]", a.kernel, weight[2]));
  const std::vector<int64_t> plane_weight = {weight[0], weight[1], 1, weight[2]};
  std::vector<int64_t> pads = {0, a.pad_begin, 0, a.pad_end};
  std::vector<std::string> inputs = {
      prepadded(node, reshaped(node, node.data_input(0), in, {in[0], in[1], 1, in[2]}), pads, false),
      node.is_constant_input(1)
          ? node.add_weight("weight", plane_weight, node.dtype(), node.constant_input(1, "W").values)
          : reshaped(node, node.data_input(1), weight, plane_weight)};
  if (node.has_input(2)) inputs.push_back(node.data_input(2));
  const std::string y = node.temporary("conv");
  node.emit("builtin.conv2d",
            {{"stride", {1, a.stride}}, {"dilation", {1, a.dilation}}, {"pads", pads}, {"group", node.attr_int("group", 1)}},
            inputs, {y});
  node.emit("builtin.reshape", {{"shape", node.output_dims(0)}}, {y}, {node.output(0)});
}

// Conv of a 3-d weight (1-D) or a 4-d one (2-D).
void convert_conv_1d_or_2d(Node &node) {
  node.require_inputs(2, 3);
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> weight = node.input_dims(1);
  if (weight.size() == 3) return convert_conv1d(node, weight);
  convert_conv(node);
}

// Inference BatchNormalization, y = (x - mean) / sqrt(var + eps) * scale + b.
// Constant statistics are folded in double into y = x * a + c per channel;
// tensors are reshaped to [c, 1, ...] (so they broadcast along the channel
// dim) and combined by one expression.
// Training BatchNormalization (opset 14 on: training_mode 1), ONNX's
// formula checked against its test data: the batch statistics over every
// axis but the channel's, the variance the population one (divided by the
// count), y = (x - mean) / sqrt(var + eps) * scale + B; the optional
// outputs running_mean = input_mean · momentum + mean · (1 - momentum), and
// running_var likewise from var. Reductions (pools) and expressions.
void convert_batch_norm_training(Node &node, const std::vector<int64_t> &in, const std::vector<int64_t> &dims,
                                 float epsilon, float momentum) {
  std::vector<int64_t> axes = {0};
  for (int64_t d = 2; d < int64_t(in.size()); ++d) axes.push_back(d);
  const std::string x = node.data_input(0);
  const std::string mean = emit_reduce(node, x, in, axes, ReduceKind::mean);
  const std::string deviation = emit_formula(node, "x0 - x1", {x, mean});
  const std::string variance = emit_reduce(node, emit_formula(node, "x0 * x0", {deviation}), in, axes, ReduceKind::mean);
  std::vector<std::string> affine;
  for (int i = 1; i <= 2; ++i) affine.push_back(reshaped(node, node.data_input(i), {in[1]}, dims));
  emit_formula(node, fmt::format("x0 / sqrt(x1 + {}) * x2 + x3", number(node, "epsilon", epsilon)),
               {deviation, variance, affine[0], affine[1]}, node.output(0));
  const std::string keep = number(node, "momentum", momentum), take = number(node, "momentum", 1.0f - momentum);
  std::vector<int64_t> kept = in;  // the statistics' dims: 1 along the reduced axes
  for (int64_t a : axes) kept[std::size_t(a)] = 1;
  const std::string statistics[] = {mean, variance};
  for (int k = 1; k <= 2; ++k) {  // running_mean from input 3 and the mean, running_var from input 4 and the variance
    if (node.num_outputs() <= k || node.output(k).empty()) continue;
    const std::string batch = reshaped(node, statistics[k - 1], kept, {in[1]});
    emit_formula(node, fmt::format("x0 * {} + x1 * {}", keep, take), {node.data_input(k + 2), batch}, node.output(k));
  }
}

void convert_batch_norm(Node &node) {
  node.require_inputs(5, 5);
  const Dtype dtype = node.dtype();
  const float epsilon = node.attr_float("epsilon", 1e-5f);
  const float momentum = node.attr_float("momentum", 0.9f);  // training only
  const bool training = node.attr_int("training_mode", 0) != 0;
  if (training ? node.num_outputs() > 3 : node.num_outputs() != 1)
    node.fail(fmt::format("{} outputs; {} BatchNormalization has {}", node.num_outputs(),
                          training ? "training" : "inference",
                          training ? "1 to 3 (Y, running_mean, running_var)" : "1 (training_mode 1 adds the running "
                                                                               "statistics; before opset 14 "
                                                                               "training outputs are not supported)"));
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
  if (training) return convert_batch_norm_training(node, in, dims, epsilon, momentum);
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

std::map<std::string, Converter> standard_table() {
  std::map<std::string, Converter> table = {
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
      {"CastLike", convert_castlike},
      {"Gemm", convert_gemm},
      {"Conv", convert_conv_1d_or_2d},
      {"MaxPool", [](Node &n) { convert_pool(n, true); }},
      {"AveragePool", [](Node &n) { convert_pool(n, false); }},
      {"GlobalMaxPool", [](Node &n) { convert_global_pool(n, true); }},
      {"GlobalAveragePool", [](Node &n) { convert_global_pool(n, false); }},
      {"BatchNormalization", convert_batch_norm},
      // folded into constants before the conversion (onnx_fold.cc); what reaches here is refused
      {"Shape", refuse_unfolded},
      {"Size", refuse_unfolded},
      {"ConstantOfShape", refuse_unfolded},
      {"Range", refuse_unfolded},
  };
  add_math_converters(table);
  add_index_converters(table);
  add_layout_converters(table);
  return table;
}

const std::map<std::string, Converter> &converters() {
  static const std::map<std::string, Converter> table = standard_table();
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
