// onnx_fold.cc: the shape computations of an exported model folded into
// constants before the conversion (onnx_graph.h, fold_shape_computations).
//
// torch.onnx.export writes `x.view(x.size(0), -1)` as Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape, `torch.arange(n)` as Range over a
// Gather of a Shape, `x.new_zeros(...)` as ConstantOfShape; the SDK's
// shapes are static, so each such node is evaluated here, on the host, and
// replaced by an initializer holding its value: the Reshape, Expand or
// Slice it configures then reads a constant, as the importer requires.
//
// What folds:
//   Shape, Size          when the input's shape is fixed (start / end)
//   ConstantOfShape      its shape input constant (else refused)
//   Range                its three inputs constant (else refused)
//   integer / bool ops   every input constant and every output an integer
//                        or bool tensor: arithmetic (Add, Sub, Mul, Div,
//                        Mod, Neg, Abs, Max, Min), comparisons and logic
//                        (Equal, Less, Greater, ..., And, Or, Not, Where),
//                        copies (Identity, Reshape, Flatten, Squeeze,
//                        Unsqueeze, Expand, Concat, Gather, Slice, Tile)
//                        and Cast of any constant (into a numeric type)
// Integer arithmetic runs in int64 and wraps to the output type's width
// like the device's and numpy's; a computed int64 value beyond 2^53 (the
// importer holds constants as doubles) is refused, and so is an integer
// division by zero. Float tensors are not folded (a layer computes them,
// rounding in its dtype), except the values ConstantOfShape, Range and a
// Cast of a constant make.
// Each round folds what it can in graph order, then shape inference runs
// again: a Shape of a tensor whose shape a folded constant fixed folds in
// the next round.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "onnx/onnx_graph.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::onnx_import {
namespace {

using onnx::TensorProto;
using Dims = std::vector<int64_t>;

// Elements an integer op folds (larger results stay layers) and the most
// ConstantOfShape and Range may make.
constexpr std::size_t kMaxFolded = std::size_t(1) << 20;
constexpr std::size_t kMaxMade = std::size_t(1) << 22;
constexpr double kExactLimit = 9007199254740992.0;  // 2^53

bool is_integer_type(int t) {
  switch (t) {
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::INT16: case TensorProto::UINT16:
    case TensorProto::INT32: case TensorProto::UINT32: case TensorProto::INT64: case TensorProto::UINT64:
    case TensorProto::BOOL: return true;
    default: return false;
  }
}

std::size_t element_count(const Dims &dims) {
  std::size_t n = 1;
  for (int64_t d : dims) n *= std::size_t(d);
  return n;
}

// An integer result in the width of `type` (two's complement wrap; bool:
// nonzero is 1).
double wrapped(Node &node, uint64_t v, int type) {
  switch (type) {
    case TensorProto::BOOL: return v != 0;
    case TensorProto::INT8: return int8_t(v);
    case TensorProto::UINT8: return uint8_t(v);
    case TensorProto::INT16: return int16_t(v);
    case TensorProto::UINT16: return uint16_t(v);
    case TensorProto::INT32: return int32_t(v);
    case TensorProto::UINT32: return uint32_t(v);
    default: break;
  }
  const double d = type == TensorProto::UINT64 ? double(v) : double(int64_t(v));
  if (std::abs(d) > kExactLimit)
    node.fail(fmt::format("a folded {} value is {}, beyond 2^53, which the importer's constants do not hold exactly",
                          elem_type_name(type), d));
  return d;
}

// numpy's broadcast of the operands' dims.
Dims broadcast_dims(Node &node, const std::vector<const ConstTensor *> &in) {
  std::size_t rank = 0;
  for (const ConstTensor *c : in) rank = std::max(rank, c->dims.size());
  Dims out(rank, 1);
  for (const ConstTensor *c : in)
    for (std::size_t k = 0; k < c->dims.size(); ++k) {
      int64_t &o = out[rank - c->dims.size() + k];
      const int64_t d = c->dims[k];
      if (d != 1 && o != 1 && d != o)
        node.fail(fmt::format("the constant inputs' shapes do not broadcast ([{}])", fmt::join(c->dims, ", ")));
      if (d != 1) o = d;
    }
  return out;
}

// For each element of `out` (row-major), the flat index of the element of
// `operand` (right-aligned, its dims of 1 broadcast) it reads.
std::vector<std::size_t> broadcast_sources(const Dims &out, const Dims &operand) {
  std::vector<std::size_t> sources(element_count(out));
  Dims index(out.size(), 0);
  const std::size_t offset = out.size() - operand.size();
  for (std::size_t &s : sources) {
    std::size_t flat = 0;
    for (std::size_t d = 0; d < operand.size(); ++d)
      flat = flat * std::size_t(operand[d]) + (operand[d] == 1 ? 0 : std::size_t(index[d + offset]));
    s = flat;
    for (std::size_t d = out.size(); d-- > 0;) {
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
  return sources;
}

using IntFn = std::function<uint64_t(const std::vector<int64_t> &)>;

// An element-wise op over the constant inputs (numpy broadcasting) in
// int64, the result wrapped into `out_type`.
ConstTensor elementwise(Node &node, const std::vector<const ConstTensor *> &in, int out_type, const IntFn &fn) {
  ConstTensor r{out_type, broadcast_dims(node, in), {}};
  std::vector<std::vector<std::size_t>> sources;
  for (const ConstTensor *c : in) sources.push_back(broadcast_sources(r.dims, c->dims));
  std::vector<int64_t> args(in.size());
  r.values.resize(element_count(r.dims));
  for (std::size_t e = 0; e < r.values.size(); ++e) {
    for (std::size_t k = 0; k < in.size(); ++k) args[k] = saturated_int64(in[k]->values[sources[k][e]]);
    r.values[e] = wrapped(node, fn(args), out_type);
  }
  return r;
}

// `c` taking, along each axis d, the rows rows[d] (in order): slices,
// broadcasts and tiles.
ConstTensor take_rows(const ConstTensor &c, const std::vector<Dims> &rows) {
  ConstTensor r{c.elem_type, {}, {}};
  for (const Dims &axis : rows) r.dims.push_back(int64_t(axis.size()));
  r.values.resize(element_count(r.dims));
  Dims index(rows.size(), 0);
  for (double &v : r.values) {
    std::size_t flat = 0;
    for (std::size_t d = 0; d < rows.size(); ++d) flat = flat * std::size_t(c.dims[d]) + std::size_t(rows[d][index[d]]);
    v = c.values[flat];
    for (std::size_t d = rows.size(); d-- > 0;) {
      if (++index[d] < r.dims[d]) break;
      index[d] = 0;
    }
  }
  return r;
}

Dims iota(int64_t n) {
  Dims v(std::size_t(std::max<int64_t>(n, 0)));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

int64_t axis_in(Node &node, int64_t axis, std::size_t rank, std::string_view what) {
  const int64_t r = int64_t(rank);
  if (axis < -r || axis >= r) node.fail(fmt::format("{} {} is out of range for {} dims", what, axis, rank));
  return axis < 0 ? axis + r : axis;
}

// ---- the folds: one function per op family ------------------------------------

struct FoldInputs {
  std::vector<const ConstTensor *> in;  // nullptr: an omitted optional input
  int out_type = 0;                     // output 0's element type (shape inference's)
};

const ConstTensor &required(Node &node, const FoldInputs &f, std::size_t i) {
  if (i >= f.in.size() || !f.in[i]) node.fail(fmt::format("input {} is missing", i));
  return *f.in[i];
}

Dims values_of(const ConstTensor &c) { return saturated_int64s(c.values); }

// Ints from an attribute (older opsets) or a constant input.
Dims ints_input(Node &node, const FoldInputs &f, std::size_t i, const std::string &attribute) {
  if (node.has_attr(attribute)) return node.attr_ints(attribute);
  if (i < f.in.size() && f.in[i]) return values_of(*f.in[i]);
  return {};
}

ConstTensor reshaped(const ConstTensor &c, Dims dims) {
  ConstTensor r = c;
  r.dims = std::move(dims);
  return r;
}

ConstTensor fold_reshape(Node &node, const FoldInputs &f) {
  const ConstTensor &x = required(node, f, 0);
  const Dims shape = values_of(required(node, f, 1));
  const bool allow_zero = node.attr_int("allowzero", 0) != 0;
  Dims out;
  int64_t known = 1, inferred = -1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    int64_t v = shape[d];
    if (v == 0 && !allow_zero) {
      if (d >= x.dims.size()) node.fail(fmt::format("shape value 0 at dim {} copies a dim the input lacks", d));
      v = x.dims[d];
    }
    if (v == -1) {
      if (inferred >= 0) node.fail("the shape has two -1 dims");
      inferred = int64_t(d);
    } else if (v < 0) {
      node.fail(fmt::format("shape value {} at dim {} is negative", v, d));
    } else {
      known *= v;
    }
    out.push_back(v);
  }
  if (inferred >= 0) out[std::size_t(inferred)] = known ? int64_t(x.values.size()) / known : 0;
  if (element_count(out) != x.values.size())
    node.fail(fmt::format("the shape [{}] does not hold the input's {} elements", fmt::join(out, ", "), x.values.size()));
  return reshaped(x, out);
}

ConstTensor fold_flatten(Node &node, const FoldInputs &f) {
  const ConstTensor &x = required(node, f, 0);
  const int64_t rank = int64_t(x.dims.size());
  int64_t axis = node.attr_int("axis", 1);
  if (axis < -rank || axis > rank) node.fail(fmt::format("attribute 'axis' {} is out of range for {} dims", axis, rank));
  if (axis < 0) axis += rank;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[std::size_t(d)];
  return reshaped(x, {outer, outer ? int64_t(x.values.size()) / outer : 0});
}

ConstTensor fold_squeeze(Node &node, const FoldInputs &f) {
  const ConstTensor &x = required(node, f, 0);
  std::set<int64_t> axes;
  for (int64_t a : ints_input(node, f, 1, "axes")) axes.insert(axis_in(node, a, x.dims.size(), "axis"));
  Dims out;
  for (std::size_t d = 0; d < x.dims.size(); ++d) {
    const bool listed = axes.count(int64_t(d)) > 0;
    if (listed && x.dims[d] != 1) node.fail(fmt::format("axis {} has size {}; Squeeze removes dims of 1", d, x.dims[d]));
    if (!(listed || (axes.empty() && x.dims[d] == 1))) out.push_back(x.dims[d]);
  }
  return reshaped(x, out);
}

ConstTensor fold_unsqueeze(Node &node, const FoldInputs &f) {
  const ConstTensor &x = required(node, f, 0);
  const Dims listed = ints_input(node, f, 1, "axes");
  const std::size_t rank = x.dims.size() + listed.size();
  std::set<int64_t> axes;
  for (int64_t a : listed)
    if (!axes.insert(axis_in(node, a, rank, "axis")).second) node.fail(fmt::format("axis {} is listed twice", a));
  Dims out;
  std::size_t next = 0;
  for (std::size_t d = 0; d < rank; ++d) out.push_back(axes.count(int64_t(d)) ? 1 : x.dims[next++]);
  return reshaped(x, out);
}

ConstTensor fold_identity(Node &node, const FoldInputs &f) { return required(node, f, 0); }

// Expand (numpy broadcast of the input and the shape) and Tile (repeats).
ConstTensor fold_expand(Node &node, const FoldInputs &f) {
  const ConstTensor &x = required(node, f, 0);
  const ConstTensor shape{TensorProto::INT64, values_of(required(node, f, 1)), {}};
  ConstTensor view = x;
  const Dims out = broadcast_dims(node, {&x, &shape});
  view.dims.insert(view.dims.begin(), out.size() - x.dims.size(), 1);
  std::vector<Dims> rows;
  for (std::size_t d = 0; d < out.size(); ++d) rows.push_back(view.dims[d] == 1 ? Dims(std::size_t(out[d]), 0) : iota(out[d]));
  return take_rows(view, rows);
}

ConstTensor fold_tile(Node &node, const FoldInputs &f) {
  const ConstTensor &x = required(node, f, 0);
  const Dims repeats = values_of(required(node, f, 1));
  if (repeats.size() != x.dims.size())
    node.fail(fmt::format("'repeats' has {} values for {} dims", repeats.size(), x.dims.size()));
  std::vector<Dims> rows;
  for (std::size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0) node.fail(fmt::format("repeat {} on axis {} is negative", repeats[d], d));
    Dims r;
    for (int64_t i = 0; i < x.dims[d] * repeats[d]; ++i) r.push_back(i % x.dims[d]);
    rows.push_back(r);
  }
  return take_rows(x, rows);
}

ConstTensor fold_concat(Node &node, const FoldInputs &f) {
  const ConstTensor &first = required(node, f, 0);
  const int64_t axis = axis_in(node, node.attr_int("axis"), first.dims.size(), "attribute 'axis'");
  ConstTensor r{first.elem_type, first.dims, {}};
  r.dims[std::size_t(axis)] = 0;
  for (const ConstTensor *c : f.in) {
    if (!c) node.fail("an input is missing");
    r.dims[std::size_t(axis)] += c->dims[std::size_t(axis)];
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first.dims[std::size_t(d)];
  for (int64_t o = 0; o < outer; ++o)
    for (const ConstTensor *c : f.in) {
      const std::size_t block = outer ? c->values.size() / std::size_t(outer) : 0;
      r.values.insert(r.values.end(), c->values.begin() + long(std::size_t(o) * block),
                      c->values.begin() + long(std::size_t(o + 1) * block));
    }
  return r;
}

ConstTensor fold_gather(Node &node, const FoldInputs &f) {
  const ConstTensor &data = required(node, f, 0), &indices = required(node, f, 1);
  if (data.dims.empty()) node.fail("the data is a scalar; Gather needs at least one dim");
  const int64_t axis = axis_in(node, node.attr_int("axis", 0), data.dims.size(), "attribute 'axis'");
  const int64_t size = data.dims[std::size_t(axis)];
  std::vector<Dims> rows;
  for (std::size_t d = 0; d < data.dims.size(); ++d) rows.push_back(iota(data.dims[d]));
  rows[std::size_t(axis)].clear();
  for (int64_t i : values_of(indices)) rows[std::size_t(axis)].push_back(axis_in(node, i, std::size_t(size), "index"));
  ConstTensor r = take_rows(data, rows);
  r.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  r.dims.insert(r.dims.end(), indices.dims.begin(), indices.dims.end());
  r.dims.insert(r.dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  return r;
}

// The rows one axis of `size` takes from start to end by step, clamped as
// ONNX's Slice does.
Dims slice_rows(int64_t start, int64_t end, int64_t step, int64_t size) {
  Dims rows;
  if (step > 0) {
    start = std::clamp<int64_t>(start < 0 ? start + size : start, 0, size);
    end = std::clamp<int64_t>(end < 0 ? end + size : end, 0, size);
    for (int64_t i = start; i < end; i += step) rows.push_back(i);
  } else {
    start = std::clamp<int64_t>(start < 0 ? start + size : start, 0, size - 1);
    end = std::clamp<int64_t>(end < 0 ? end + size : end, -1, size - 1);
    for (int64_t i = start; i > end; i += step) rows.push_back(i);
  }
  return rows;
}

ConstTensor fold_slice(Node &node, const FoldInputs &f) {
  const ConstTensor &x = required(node, f, 0);
  const Dims starts = ints_input(node, f, 1, "starts"), ends = ints_input(node, f, 2, "ends");
  Dims axes = ints_input(node, f, 3, "axes"), steps = ints_input(node, f, 4, "steps");
  if (axes.empty()) axes = iota(int64_t(starts.size()));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    node.fail(fmt::format("starts, ends, axes and steps have {}, {}, {} and {} values; they must agree", starts.size(),
                          ends.size(), axes.size(), steps.size()));
  std::vector<Dims> rows;
  for (int64_t size : x.dims) rows.push_back(iota(size));
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::size_t d = std::size_t(axis_in(node, axes[i], x.dims.size(), "axis"));
    if (steps[i] == 0) node.fail(fmt::format("step 0 on axis {}; a step is nonzero", axes[i]));
    rows[d] = x.dims[d] ? slice_rows(starts[i], ends[i], steps[i], x.dims[d]) : Dims{};
  }
  return take_rows(x, rows);
}

// ---- arithmetic, comparisons, logic, Cast --------------------------------------

uint64_t u(int64_t v) { return uint64_t(v); }

int64_t divided(Node &node, int64_t a, int64_t b) {
  if (b == 0) node.fail("an integer division by zero in a constant");
  if (b == -1) return int64_t(0 - u(a));  // INT64_MIN / -1 wraps
  return a / b;
}

// ONNX's Mod: fmod 1 the C remainder (the dividend's sign), fmod 0 the
// divisor's sign (Python's %).
int64_t modulo(Node &node, int64_t a, int64_t b, bool fmod) {
  if (b == 0) node.fail("an integer Mod by zero in a constant");
  if (b == -1) return 0;
  const int64_t r = a % b;
  return !fmod && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

// The integer function of an element-wise op, or nothing.
std::optional<IntFn> integer_function(Node &node) {
  using V = const std::vector<int64_t> &;
  static const std::map<std::string, IntFn> plain = {
      {"Add", [](V a) { return u(a[0]) + u(a[1]); }},
      {"Sub", [](V a) { return u(a[0]) - u(a[1]); }},
      {"Mul", [](V a) { return u(a[0]) * u(a[1]); }},
      {"Neg", [](V a) { return 0 - u(a[0]); }},
      {"Abs", [](V a) { return a[0] < 0 ? 0 - u(a[0]) : u(a[0]); }},
      {"Equal", [](V a) { return u(a[0] == a[1]); }},
      {"Less", [](V a) { return u(a[0] < a[1]); }},
      {"LessOrEqual", [](V a) { return u(a[0] <= a[1]); }},
      {"Greater", [](V a) { return u(a[0] > a[1]); }},
      {"GreaterOrEqual", [](V a) { return u(a[0] >= a[1]); }},
      {"And", [](V a) { return u(a[0] && a[1]); }},
      {"Or", [](V a) { return u(a[0] || a[1]); }},
      {"Xor", [](V a) { return u((a[0] != 0) != (a[1] != 0)); }},
      {"Not", [](V a) { return u(a[0] == 0); }},
      {"Where", [](V a) { return u(a[0] ? a[1] : a[2]); }},
      {"Max", [](V a) { return u(*std::max_element(a.begin(), a.end())); }},
      {"Min", [](V a) { return u(*std::min_element(a.begin(), a.end())); }},
  };
  if (const auto it = plain.find(node.op_type()); it != plain.end()) return it->second;
  if (node.op_type() == "Div") return [&node](V a) { return u(divided(node, a[0], a[1])); };
  if (node.op_type() == "Mod") {
    const bool fmod = node.attr_int("fmod", 0) != 0;
    return [&node, fmod](V a) { return u(modulo(node, a[0], a[1], fmod)); };
  }
  return std::nullopt;
}

// One value cast into `to` (an integer type: truncated toward zero, then
// wrapped like the device's integer casts; refused beyond int64 or NaN,
// which ONNX leaves undefined).
double cast_value(Node &node, double v, int to) {
  if (is_integer_type(to) && to != TensorProto::BOOL) {
    if (std::isnan(v) || std::abs(v) >= 9223372036854775808.0)
      node.fail(fmt::format("a constant {} cast to {} is undefined (ONNX leaves it open)", v, elem_type_name(to)));
    return wrapped(node, u(int64_t(std::trunc(v))), to);
  }
  switch (to) {
    case TensorProto::BOOL: return v != 0;  // NaN is true
    case TensorProto::FLOAT: return double(float(v));
    case TensorProto::DOUBLE: return v;
    case TensorProto::FLOAT16: return fp16_to_float(float_to_fp16(float(v)));
    case TensorProto::BFLOAT16: return bf16_to_float(float_to_bf16(float(v)));
    default: node.fail(fmt::format("attribute 'to' = {}: a folded constant cannot be cast to it", elem_type_name(to)));
  }
}

// Cast of a constant: to an integer type truncated and wrapped, to bool
// nonzero, to a float type the nearest value (one rounding from the
// double it is held in; a double constant into float16 rounds twice).
ConstTensor fold_cast(Node &node, const FoldInputs &f) {
  const ConstTensor &x = required(node, f, 0);
  const int to = int(node.attr_int("to"));
  node.attr_int("saturate", 1);  // float8 targets only
  ConstTensor r{to, x.dims, {}};
  for (double v : x.values) r.values.push_back(cast_value(node, v, to));
  return r;
}

// ---- Shape, Size, ConstantOfShape, Range ---------------------------------------

// The fixed shape of input 0 (a constant's, or shape inference's), or
// nothing when it is not known yet.
std::optional<Dims> known_shape(Node &node) {
  if (!node.has_input(0)) node.fail("input 0 is missing");
  const ImportState &state = node.state();
  if (const auto c = state.constants.find(node.input(0)); c != state.constants.end()) return c->second.dims;
  const auto info = state.infos.find(node.input(0));
  if (info == state.infos.end() || !info->second.known) return std::nullopt;
  return info->second.dims;
}

ConstTensor fold_shape(Node &node, const Dims &dims) {
  const int64_t rank = int64_t(dims.size());
  auto clamped = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamped(node.attr_int("start", 0)), end = clamped(node.attr_int("end", rank));
  ConstTensor r{TensorProto::INT64, {std::max<int64_t>(end - start, 0)}, {}};
  for (int64_t d = start; d < end; ++d) r.values.push_back(double(dims[std::size_t(d)]));
  return r;
}

ConstTensor fold_constant_of_shape(Node &node, const ConstTensor &shape) {
  ConstTensor value{TensorProto::FLOAT, {1}, {0.0}};
  if (const onnx::AttributeProto *a = node.attr("value")) {
    value = read_tensor(a->t(), fmt::format("{}: {}: attribute 'value'", node.state().where, node.label()));
    if (value.values.size() != 1)
      node.fail(fmt::format("attribute 'value' holds {} values; ConstantOfShape takes one", value.values.size()));
  }
  ConstTensor r{value.elem_type, values_of(shape), {}};
  double count = 1;
  for (int64_t d : r.dims) {
    if (d < 0) node.fail(fmt::format("the shape [{}] has a negative dim", fmt::join(r.dims, ", ")));
    count *= double(d);
  }
  if (count > double(kMaxMade))
    node.fail(fmt::format("the shape [{}] has {} elements; a folded constant holds at most {}", fmt::join(r.dims, ", "),
                          count, kMaxMade));
  r.values.assign(std::size_t(count), value.values[0]);
  return r;
}

double scalar_value(Node &node, const ConstTensor &c, std::string_view what) {
  if (c.values.size() != 1) node.fail(fmt::format("input '{}' holds {} values; a scalar is expected", what, c.values.size()));
  return c.values[0];
}

// numpy's arange(start, limit, delta) in the inputs' type: count
// max(ceil((limit - start) / delta), 0), exact for integers.
ConstTensor fold_range(Node &node, const FoldInputs &f) {
  const ConstTensor &s = required(node, f, 0);
  const double start = scalar_value(node, s, "start"), limit = scalar_value(node, required(node, f, 1), "limit");
  const double delta = scalar_value(node, required(node, f, 2), "delta");
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    node.fail(fmt::format("Range({}, {}, {}) has no finite length", start, limit, delta));
  const bool integer = is_integer_type(s.elem_type);
  double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (integer) {
    const int64_t a = saturated_int64(start), b = saturated_int64(limit), d = saturated_int64(delta);
    count = double(d > 0 ? (b > a ? (b - a + d - 1) / d : 0) : (a > b ? (a - b - d - 1) / -d : 0));
  }
  if (count > double(kMaxMade))
    node.fail(fmt::format("Range({}, {}, {}) has {} elements; a folded constant holds at most {}", start, limit, delta,
                          count, kMaxMade));
  ConstTensor r{s.elem_type, {int64_t(count)}, {}};
  for (int64_t i = 0; i < int64_t(count); ++i) {
    const double v = integer ? double(saturated_int64(start) + i * saturated_int64(delta)) : start + double(i) * delta;
    r.values.push_back(s.elem_type == TensorProto::FLOAT ? double(float(v)) : v);
  }
  return r;
}

// ---- which nodes fold ------------------------------------------------------------

using Fold = std::function<ConstTensor(Node &, const FoldInputs &)>;

const std::map<std::string, Fold> &integer_folds() {
  static const std::map<std::string, Fold> folds = {
      {"Identity", fold_identity}, {"Reshape", fold_reshape}, {"Flatten", fold_flatten},
      {"Squeeze", fold_squeeze},   {"Unsqueeze", fold_unsqueeze}, {"Expand", fold_expand},
      {"Tile", fold_tile},         {"Concat", fold_concat},   {"Gather", fold_gather},
      {"Slice", fold_slice},
  };
  return folds;
}

// The node's inputs when every one is a constant (omitted optional inputs
// as nullptr), else nothing.
std::optional<FoldInputs> constant_inputs(Node &node) {
  FoldInputs f;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) {
      f.in.push_back(nullptr);
      continue;
    }
    const auto c = node.state().constants.find(node.input(i));
    if (c == node.state().constants.end()) return std::nullopt;
    f.in.push_back(&c->second);
  }
  if (f.in.empty()) return std::nullopt;
  const auto info = node.state().infos.find(node.output(0));
  if (info != node.state().infos.end()) f.out_type = info->second.elem_type;
  return f;
}

// An integer / bool op over constants: its value, or nothing when it does
// not fold (another op, a float tensor, a result beyond kMaxFolded).
std::optional<ConstTensor> fold_integer_op(Node &node) {
  const std::optional<FoldInputs> f = constant_inputs(node);
  if (!f || node.num_outputs() != 1) return std::nullopt;
  // A Cast of a constant folds (into a numeric type: exact on the host); the others into an integer or bool.
  if (node.op_type() == "Cast") {  // to and from string: the boundary's text (onnx_casts.cc)
    if (!f->in[0] || f->out_type == TensorProto::STRING || f->in[0]->elem_type == TensorProto::STRING)
      return std::nullopt;
    return fold_cast(node, *f);
  }
  if (!is_integer_type(f->out_type)) return std::nullopt;
  if (const auto fold = integer_folds().find(node.op_type()); fold != integer_folds().end()) {
    ConstTensor r = fold->second(node, *f);
    if (r.values.size() > kMaxFolded) return std::nullopt;
    return r;
  }
  const std::optional<IntFn> fn = integer_function(node);
  if (!fn) return std::nullopt;
  std::vector<const ConstTensor *> in;
  for (const ConstTensor *c : f->in) {
    if (!c || !is_integer_type(c->elem_type)) return std::nullopt;
    in.push_back(c);
  }
  if (element_count(broadcast_dims(node, in)) > kMaxFolded) return std::nullopt;
  return elementwise(node, in, f->out_type, *fn);
}

// The node's value when it folds (outputs one tensor), else nothing.
std::optional<ConstTensor> fold_node(Node &node) {
  const std::string &op = node.op_type();
  if (node.num_outputs() != 1) return std::nullopt;
  if (op == "Shape" || op == "Size") {
    const std::optional<Dims> dims = known_shape(node);
    if (!dims) return std::nullopt;
    if (op == "Shape") return fold_shape(node, *dims);
    return ConstTensor{TensorProto::INT64, {}, {double(element_count(*dims))}};
  }
  if (op == "ConstantOfShape" || op == "Range") {
    const std::optional<FoldInputs> f = constant_inputs(node);
    if (!f) return std::nullopt;
    if (op == "Range") return fold_range(node, *f);
    return fold_constant_of_shape(node, required(node, *f, 0));
  }
  return fold_integer_op(node);
}

// A folded value as an initializer.
TensorProto initializer(const std::string &name, const ConstTensor &c) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(c.elem_type);
  for (int64_t d : c.dims) t.add_dims(d);
  for (double v : c.values) switch (c.elem_type) {
      case TensorProto::FLOAT: t.add_float_data(float(v)); break;
      case TensorProto::DOUBLE: t.add_double_data(v); break;
      case TensorProto::INT64: t.add_int64_data(int64_t(v)); break;
      case TensorProto::UINT32: case TensorProto::UINT64: t.add_uint64_data(uint64_t(v)); break;
      case TensorProto::FLOAT16: t.add_int32_data(float_to_fp16(float(v))); break;
      case TensorProto::BFLOAT16: t.add_int32_data(float_to_bf16(float(v))); break;
      default: t.add_int32_data(int32_t(v)); break;  // the 8- to 32-bit integers and bool
    }
  return t;
}

// The graph without the folded nodes; their outputs that another node or
// the graph's outputs read become initializers.
void replace_folded(onnx::GraphProto &g, const std::set<int> &folded, const std::map<std::string, ConstTensor> &values) {
  std::set<std::string> read;
  for (int i = 0; i < g.node_size(); ++i)
    if (!folded.count(i))
      for (const std::string &in : g.node(i).input()) read.insert(in);
  for (const auto &o : g.output()) read.insert(o.name());
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < g.node_size(); ++i) {
    if (!folded.count(i)) {
      *kept.Add() = g.node(i);
      continue;
    }
    const std::string &out = g.node(i).output(0);
    if (read.count(out)) *g.add_initializer() = initializer(out, values.at(out));
  }
  g.mutable_node()->Swap(&kept);
}

bool is_standard(const onnx::NodeProto &n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

}  // namespace

void fold_shape_computations(onnx::ModelProto &model, const std::string &where,
                             const std::function<void(onnx::ModelProto &)> &infer) {
  for (int round = 0; round <= model.graph().node_size(); ++round) {
    ImportState state;
    state.where = where;
    read_graph_facts(model, state, kMaxFolded);  // a model's large weights are never folded: not read here
    std::set<int> folded;
    const onnx::GraphProto &g = model.graph();
    for (int index = 0; index < g.node_size(); ++index) {
      if (!is_standard(g.node(index))) continue;
      Node node(g.node(index), index, state);
      if (node.op_type() == "Constant") {
        if (node.num_outputs() == 1) state.constants[node.output(0)] = constant_node_value(node);
        continue;
      }
      std::optional<ConstTensor> value = fold_node(node);
      if (!value) continue;
      node.check_attributes_used();
      state.infos[node.output(0)] = TensorInfo{value->elem_type, value->dims, true};
      state.constants[node.output(0)] = std::move(*value);
      folded.insert(index);
    }
    if (folded.empty()) return;
    replace_folded(*model.mutable_graph(), folded, state.constants);
    infer(model);
  }
}

void refuse_unfolded(Node &node) {
  const std::string &op = node.op_type();
  if (op == "Shape" || op == "Size")
    node.fail(fmt::format("input '{}' has no fixed shape, so its {} cannot be folded into a constant (the importer "
                          "builds static shapes)",
                          node.input(0), op));
  for (int i = 0; i < node.num_inputs(); ++i)
    if (node.has_input(i) && !node.is_constant_input(i))
      node.fail(fmt::format("input {} ('{}') is not a constant: {} is folded into a constant at import (the importer "
                            "builds static shapes), which needs every input constant",
                            i, node.input(i), op));
  node.fail(fmt::format("{} has {} outputs; it folds with one", op, node.num_outputs()));
}

}  // namespace tpu_runtime::onnx_import
