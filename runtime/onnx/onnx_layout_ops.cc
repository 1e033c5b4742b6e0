// onnx_layout_ops.cc: Pad, Tile, Trilu, DepthToSpace, SpaceToDepth and
// InstanceNormalization (onnx_lowering.h add_layout_converters;
// docs/onnx.md lists the limits).
//
// All are compositions of built-in layers, for every element type the
// copies take:
//   Pad        negative pads first, as one builtin.slice (a crop); then per
//              padded axis: constant mode a builtin.concat of the input and
//              blocks of the value (a one-element weight broadcast), edge
//              and reflect modes a builtin.gather of the rows they repeat
//              (an int32 weight of indices)
//   Tile       per repeated axis a builtin.gather of the rows i mod n
//   Trilu      an expression keeping x where a constant 0 / 1 mask of the
//              last two dims says (j - i >= k upper, <= k lower)
//   DepthToSpace, SpaceToDepth
//              reshape to 6 dims, builtin.transpose, reshape (DCR, CRD)
//   InstanceNormalization
//              LayerNormalization's steps over the spatial axes (mean and
//              variance by pools), the per-channel scale and bias
//              broadcast as [C, 1, ...]
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "onnx/onnx_lowering.h"

namespace tpu_runtime::onnx_import {
namespace {

// `rows` (indices along `axis`) of `x` gathered into `out` (a new tensor
// when empty); returns the gathered tensor.
std::string gather_rows(Node &node, const std::string &x, int64_t axis, const std::vector<double> &rows,
                        std::string out = {}) {
  const std::string indices = node.add_weight("rows", {int64_t(rows.size())}, Dtype::int32, rows);
  if (out.empty()) out = node.temporary("gathered");
  node.emit("builtin.gather", {{"axis", axis}}, {x, indices}, {out});
  return out;
}

// A constant or attribute list of ints (Pad's pads, Tile's repeats).
std::vector<int64_t> int_list(Node &node, int input, const char *attribute, std::string_view what) {
  if (node.has_attr(attribute)) return node.attr_ints(attribute);
  const ConstTensor &c = node.constant_input(input, what);
  return saturated_int64s(c.values);
}

// ---- Pad ---------------------------------------------------------------------------

// The row of the input that padded position i (from -begin) repeats:
// edge clamps, reflect mirrors without repeating the border.
double source_row(int64_t i, int64_t n, bool reflect) {
  if (!reflect || n == 1) return double(std::clamp<int64_t>(i, 0, n - 1));
  const int64_t period = 2 * (n - 1);
  int64_t j = i % period;
  if (j < 0) j += period;
  return double(j < n ? j : period - j);
}

// The constant block of `dims` holding `value`, in `dtype`.
std::string constant_block(Node &node, const std::vector<int64_t> &dims, Dtype dtype, double value) {
  const std::string one = node.add_weight("pad_value", {1}, dtype, {value});
  const std::string block = node.temporary("pad_block");
  node.emit("builtin.broadcast", {{"shape", dims}}, {one}, {block});
  return block;
}

struct PadSpec {
  std::vector<int64_t> begin, end;  // per dim of the input
  std::string mode;
  double value = 0;
};

PadSpec pad_spec(Node &node, std::size_t rank) {
  PadSpec p;
  p.mode = node.attr_string("mode", "constant");
  if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge")
    node.fail(fmt::format("attribute 'mode' = '{}' is not supported (constant, reflect, edge)", p.mode));
  const std::vector<int64_t> pads = int_list(node, 1, "pads", "pads");
  std::vector<int64_t> axes;
  if (node.has_input(3)) {
    const ConstTensor &a = node.constant_input(3, "axes");
    for (double v : a.values) axes.push_back(normalized_axis(node, int64_t(v), rank, "axis"));
  } else {
    for (std::size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
  }
  if (pads.size() != 2 * axes.size())
    node.fail(fmt::format("'pads' has {} values; {} axes need {}", pads.size(), axes.size(), 2 * axes.size()));
  p.begin.assign(rank, 0);
  p.end.assign(rank, 0);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    p.begin[std::size_t(axes[i])] = pads[i];
    p.end[std::size_t(axes[i])] = pads[i + axes.size()];
  }
  if (node.has_attr("value")) p.value = node.attr_float("value");
  if (node.has_input(2)) {
    const ConstTensor &v = node.constant_input(2, "constant_value");
    if (v.values.size() != 1) node.fail(fmt::format("input 2 (constant_value) has {} values, expected 1", v.values.size()));
    p.value = v.values[0];
  }
  return p;
}

// The negative pads as one crop; `dims` becomes the cropped shape.
std::string cropped(Node &node, const std::string &x, const PadSpec &p, std::vector<int64_t> &dims) {
  std::vector<int64_t> starts(dims.size(), 0), ends = dims;
  bool crop = false;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    starts[d] = std::max<int64_t>(-p.begin[d], 0);
    ends[d] = dims[d] - std::max<int64_t>(-p.end[d], 0);
    crop = crop || starts[d] || ends[d] != dims[d];
    if (ends[d] < starts[d]) node.fail(fmt::format("the pads remove more than axis {}'s {} elements", d, dims[d]));
  }
  if (!crop) return x;
  const std::string out = node.temporary("cropped");
  node.emit("builtin.slice", {{"starts", starts}, {"ends", ends}, {"steps", std::vector<int64_t>(dims.size(), 1)}}, {x},
            {out});
  for (std::size_t d = 0; d < dims.size(); ++d) dims[d] = ends[d] - starts[d];
  return out;
}

void convert_pad(Node &node) {
  node.require_inputs(1, 4);
  node.require_outputs(1);
  const Dtype dtype = node.dtype(false, 1);
  std::vector<int64_t> dims = node.input_dims(0);
  const PadSpec p = pad_spec(node, dims.size());
  std::string x = cropped(node, node.data_input(0), p, dims);
  std::vector<std::size_t> padded;
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (p.begin[d] > 0 || p.end[d] > 0) padded.push_back(d);
  if (padded.empty()) {
    node.emit("builtin.reshape", {{"shape", dims}}, {x}, {node.output(0)});
    return;
  }
  for (std::size_t d : padded) {
    const int64_t b = std::max<int64_t>(p.begin[d], 0), e = std::max<int64_t>(p.end[d], 0), n = dims[d];
    const std::string out = d == padded.back() ? node.output(0) : node.temporary("padded");
    if (p.mode == "constant") {
      std::vector<std::string> parts;
      for (int64_t size : {b, int64_t(-1), e}) {
        if (size == 0) continue;
        std::vector<int64_t> block = dims;
        block[d] = size;
        parts.push_back(size < 0 ? x : constant_block(node, block, dtype, p.value));
      }
      node.emit("builtin.concat", {{"axis", int64_t(d)}}, parts, {out});
    } else {
      if (n == 0) node.fail(fmt::format("mode '{}' pads axis {}, which is empty", p.mode, d));
      std::vector<double> rows;
      for (int64_t i = -b; i < n + e; ++i) rows.push_back(source_row(i, n, p.mode == "reflect"));
      gather_rows(node, x, int64_t(d), rows, out);
    }
    dims[d] = b + n + e;
    x = out;
  }
}

// ---- Tile, Trilu ---------------------------------------------------------------------

void convert_tile(Node &node) {
  node.require_inputs(2, 2);
  node.require_outputs(1);
  node.dtype(false, 1);
  const std::vector<int64_t> dims = node.input_dims(0);
  const std::vector<int64_t> repeats = int_list(node, 1, "", "repeats");
  if (repeats.size() != dims.size())
    node.fail(fmt::format("'repeats' has {} values for {} dims", repeats.size(), dims.size()));
  std::vector<std::size_t> tiled;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (repeats[d] < 0) node.fail(fmt::format("repeat {} on axis {} is negative", repeats[d], d));
    if (repeats[d] != 1) tiled.push_back(d);
  }
  std::string x = node.data_input(0);
  if (tiled.empty()) {
    node.emit("builtin.reshape", {{"shape", dims}}, {x}, {node.output(0)});
    return;
  }
  for (std::size_t d : tiled) {
    std::vector<double> rows;
    for (int64_t i = 0; i < dims[d] * repeats[d]; ++i) rows.push_back(double(i % dims[d]));
    x = gather_rows(node, x, int64_t(d), rows, d == tiled.back() ? node.output(0) : std::string());
  }
}

void convert_trilu(Node &node) {
  node.require_inputs(1, 2);
  node.require_outputs(1);
  const Dtype dtype = node.dtype(false, 1);
  const std::vector<int64_t> dims = node.input_dims(0);
  if (dims.size() < 2) node.fail(fmt::format("the input has {} dims; Trilu needs at least 2", dims.size()));
  const bool upper = node.attr_int("upper", 1) != 0;
  int64_t k = 0;
  if (node.has_input(1)) {
    const ConstTensor &c = node.constant_input(1, "k");
    if (c.values.size() != 1) node.fail(fmt::format("input 1 (k) has {} values, expected 1", c.values.size()));
    k = saturated_int64(c.values[0]);
  }
  const int64_t rows = dims[dims.size() - 2], cols = dims.back();
  if (rows == 0 || cols == 0) {  // an empty matrix: nothing to mask
    node.emit("builtin.reshape", {{"shape", dims}}, {node.data_input(0)}, {node.output(0)});
    return;
  }
  std::vector<double> mask;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask.push_back(upper ? j - i >= k : j - i <= k);
  const std::string m = node.add_weight("mask", {rows, cols}, dtype, mask);
  emit_formula(node, "where(x1 != 0, x0, 0)", {node.data_input(0), m}, node.output(0));
}

// ---- DepthToSpace, SpaceToDepth ----------------------------------------------------------

// x reshaped to `view`, transposed by `perm`, reshaped to the output.
void emit_rearrange(Node &node, const std::vector<int64_t> &view, const std::vector<int64_t> &perm) {
  const std::string v = node.temporary("blocks"), t = node.temporary("moved");
  node.emit("builtin.reshape", {{"shape", view}}, {node.data_input(0)}, {v});
  node.emit("builtin.transpose", {{"perm", perm}}, {v}, {t});
  node.emit("builtin.reshape", {{"shape", node.output_dims(0)}}, {t}, {node.output(0)});
}

std::vector<int64_t> nchw_and_block(Node &node, int64_t &b) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  node.dtype();
  const std::vector<int64_t> in = node.input_dims(0);
  if (in.size() != 4) node.fail(fmt::format("the input has {} dims; {} takes [N, C, H, W]", in.size(), node.op_type()));
  b = node.attr_int("blocksize");
  if (b < 1) node.fail(fmt::format("attribute 'blocksize' = {}; it must be at least 1", b));
  return in;
}

void convert_depth_to_space(Node &node) {
  int64_t b = 1;
  const std::vector<int64_t> in = nchw_and_block(node, b);
  const std::string mode = node.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") node.fail(fmt::format("attribute 'mode' = '{}' is not supported (DCR, CRD)", mode));
  if (in[1] % (b * b)) node.fail(fmt::format("C = {} is not a multiple of blocksize^2 = {}", in[1], b * b));
  const int64_t n = in[0], c = in[1] / (b * b), h = in[2], w = in[3];
  if (mode == "DCR") emit_rearrange(node, {n, b, b, c, h, w}, {0, 3, 4, 1, 5, 2});
  else emit_rearrange(node, {n, c, b, b, h, w}, {0, 1, 4, 2, 5, 3});
}

void convert_space_to_depth(Node &node) {
  int64_t b = 1;
  const std::vector<int64_t> in = nchw_and_block(node, b);
  if (in[2] % b || in[3] % b)
    node.fail(fmt::format("H = {} and W = {} must be multiples of blocksize {}", in[2], in[3], b));
  emit_rearrange(node, {in[0], in[1], in[2] / b, b, in[3] / b, b}, {0, 3, 5, 1, 2, 4});
}

// ---- InstanceNormalization ----------------------------------------------------------------

// A per-channel input ([C]) viewed as [C, 1, ...] to broadcast over x.
std::string per_channel(Node &node, int i, std::size_t rank, Dtype dtype) {
  std::vector<int64_t> view(rank - 1, 1);
  const std::vector<int64_t> dims = node.is_constant_input(i) ? node.constant_input(i, "input").dims : node.input_dims(i);
  view[0] = dims.empty() ? 1 : dims[0];
  const std::string out = node.temporary("per_channel");
  node.emit("builtin.reshape", {{"shape", view}}, {node.data_input(i, dtype)}, {out});
  return out;
}

void convert_instance_norm(Node &node) {
  node.require_inputs(3, 3);
  node.require_outputs(1);
  const Dtype dtype = node.dtype();
  const std::vector<int64_t> in = node.input_dims(0);
  if (in.size() < 3) node.fail(fmt::format("the input has {} dims; InstanceNormalization takes [N, C, D1, ...]", in.size()));
  const float epsilon = node.attr_float("epsilon", 1e-5f);
  if (!std::isfinite(epsilon)) node.fail(fmt::format("attribute 'epsilon' is {}, which a formula cannot hold", epsilon));
  std::vector<int64_t> axes;
  for (std::size_t d = 2; d < in.size(); ++d) axes.push_back(int64_t(d));
  const std::string x = node.data_input(0);
  const std::string mean = emit_reduce(node, x, in, axes, ReduceKind::mean);
  const std::string deviation = emit_formula(node, "x0 - x1", {x, mean});
  const std::string square = emit_formula(node, "x0 * x0", {deviation});
  const std::string variance = emit_reduce(node, square, in, axes, ReduceKind::mean);
  const std::string scale = per_channel(node, 1, in.size(), dtype), bias = per_channel(node, 2, in.size(), dtype);
  emit_formula(node, fmt::format("x0 / sqrt(x1 + ({})) * x2 + x3", epsilon), {deviation, variance, scale, bias},
               node.output(0));
}

}  // namespace

bool later_op_takes_integers(const std::string &op_type) {
  static const std::set<std::string> ops = {"Mod", "ArgMax", "ArgMin", "Pad", "Tile", "Trilu", "DepthToSpace", "SpaceToDepth"};
  return ops.count(op_type) > 0;
}

void add_layout_converters(ConverterTable &table) {
  table["Pad"] = convert_pad;
  table["Tile"] = convert_tile;
  table["Trilu"] = convert_trilu;
  table["DepthToSpace"] = convert_depth_to_space;
  table["SpaceToDepth"] = convert_space_to_depth;
  table["InstanceNormalization"] = convert_instance_norm;
}

}  // namespace tpu_runtime::onnx_import
