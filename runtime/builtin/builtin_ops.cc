// builtin_ops.cc: parameters, shape inference, references and kernel
// arguments of the built-in ops (builtin_ops.h).
#include "builtin/builtin_ops.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "builtin/builtin_int_mod.h"
#include "builtin/builtin_int_pow.h"
#include "builtin/builtin_math.h"
#include "builtin/builtin_kernels.h"
#include "emulator/emulator.h"
#include "expression/elementwise_view.h"
#include "expression/expression_layer.h"
#include "io/arrays.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/expression.h"

namespace tpu_runtime::detail {
namespace {

constexpr int64_t kMaxConvDim = 65535;

enum class Op {
  add, sub, mul, relu, concat, reshape, conv2d, maxpool2d, avgpool2d, expression, transpose, slice, broadcast, cast,
  pad2d, matmul, gather, int_pow, int_mod, math
};

struct OpName {
  const char *name;
  Op op;
};
constexpr OpName kOps[] = {{"builtin.add", Op::add},
                           {"builtin.sub", Op::sub},
                           {"builtin.mul", Op::mul},
                           {"builtin.relu", Op::relu},
                           {"builtin.concat", Op::concat},
                           {"builtin.reshape", Op::reshape},
                           {"builtin.conv2d", Op::conv2d},
                           {"builtin.maxpool2d", Op::maxpool2d},
                           {"builtin.avgpool2d", Op::avgpool2d},
                           {"builtin.expression", Op::expression},
                           {"builtin.transpose", Op::transpose},
                           {"builtin.slice", Op::slice},
                           {"builtin.broadcast", Op::broadcast},
                           {"builtin.cast", Op::cast},
                           {"builtin.pad2d", Op::pad2d},
                           {"builtin.matmul", Op::matmul},
                           {"builtin.gather", Op::gather},
                           {"builtin.int_pow", Op::int_pow},
                           {"builtin.int_mod", Op::int_mod},
                           {"builtin.sin", Op::math},
                           {"builtin.cos", Op::math},
                           {"builtin.tan", Op::math},
                           {"builtin.asin", Op::math},
                           {"builtin.acos", Op::math}};

const OpName *find_op(std::string_view name) {
  for (const OpName &o : kOps)
    if (name == o.name) return &o;
  return nullptr;
}

Op lookup(std::string_view name) {
  const OpName *o = find_op(name);
  if (!o) throw Error(fmt::format("unknown built-in op '{}' (built-in ops: {})", name, builtin_op_list()));
  return o->op;
}

bool binary(Op op) { return op == Op::add || op == Op::sub || op == Op::mul; }

// ---- parameters -------------------------------------------------------------

void check_param_keys(std::string_view op, const nlohmann::ordered_json &params,
                      std::initializer_list<const char *> allowed) {
  for (const auto &[key, value] : params.items())
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char *a) { return key == a; }))
      throw Error(fmt::format("{}: unknown parameter '{}' (it takes: {})", op, key,
                              allowed.size() ? fmt::format("{}", fmt::join(allowed, ", ")) : "none"));
}

bool has_scalar(const nlohmann::ordered_json &params) { return params.contains("scalar"); }

float scalar_param(std::string_view op, const nlohmann::ordered_json &params) {
  const auto &v = params.at("scalar");
  if (!v.is_number()) throw Error(fmt::format("{}: parameter 'scalar' must be a number, not {}", op, v.dump()));
  return v.get<float>();
}

bool scalar_first(std::string_view op, const nlohmann::ordered_json &params) {
  if (!params.contains("scalar_first")) return false;
  const auto &v = params.at("scalar_first");
  if (!v.is_number_integer() && !v.is_boolean())
    throw Error(fmt::format("{}: parameter 'scalar_first' must be 0 or 1, not {}", op, v.dump()));
  return v.is_boolean() ? v.get<bool>() : v.get<int64_t>() != 0;
}

// The output shape of a reshape of `count` elements: the parameter "shape",
// a list of positive ints with at most one -1 (the dim that takes the rest)
// and the same element count.
Shape reshape_shape(const nlohmann::ordered_json &params, int64_t count) {
  if (!params.contains("shape") || !params.at("shape").is_array() || params.at("shape").empty())
    throw Error("builtin.reshape: parameter 'shape' must be a non-empty list of ints");
  Shape shape;
  int free_dim = -1;
  int64_t known = 1;
  for (const auto &v : params.at("shape")) {
    if (!v.is_number_integer()) throw Error(fmt::format("builtin.reshape: shape entry {} is not an int", v.dump()));
    const int64_t d = v.get<int64_t>();
    if (d == -1 && free_dim < 0) {
      free_dim = int(shape.size());
      shape.push_back(1);
      continue;
    }
    if (d < 0 || d > INT32_MAX)
      throw Error(fmt::format("builtin.reshape: shape {} has the dim {}; dims are 0 or more (one may be -1)",
                              params.at("shape").dump(), d));
    shape.push_back(int(d));
    known *= d;
  }
  if (shape.size() > MAX_SHAPE_DIMS)
    throw Error(fmt::format("builtin.reshape: shape {} has more than {} dims", params.at("shape").dump(), MAX_SHAPE_DIMS));
  if (free_dim >= 0) {
    if (known == 0 || count % known != 0)
      throw Error(fmt::format("builtin.reshape: {} elements do not fill the shape {}", count, params.at("shape").dump()));
    shape[std::size_t(free_dim)] = int(count / known);
    known = count;
  }
  if (known != count)
    throw Error(fmt::format("builtin.reshape: shape {} holds {} elements, the input {}", params.at("shape").dump(),
                            known, count));
  return shape;
}

// The concat axis, made non-negative for a tensor of `rank` dims.
int concat_axis(const nlohmann::ordered_json &params, std::size_t rank) {
  int64_t axis = 0;
  if (params.contains("axis")) {
    const auto &v = params.at("axis");
    if (!v.is_number_integer())
      throw Error(fmt::format("builtin.concat: parameter 'axis' must be an integer, not {}", v.dump()));
    axis = v.get<int64_t>();
  }
  const int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    throw Error(fmt::format("builtin.concat: axis {} is out of range for {}-d inputs (use {}..{})", axis, rank, -r,
                            r - 1));
  return int(axis < 0 ? axis + r : axis);
}

// A list parameter of `count` ints in [lo, hi], or `fallback` when absent.
std::vector<int> int_list(std::string_view op, const nlohmann::ordered_json &params, const char *key,
                          std::size_t count, int lo, int hi, std::vector<int> fallback, const char *why) {
  if (!params.contains(key)) {
    if (fallback.empty()) throw Error(fmt::format("{}: parameter '{}' ({} ints) is missing", op, key, count));
    return fallback;
  }
  const auto &v = params.at(key);
  if (!v.is_array() || v.size() != count)
    throw Error(fmt::format("{}: parameter '{}' must be a list of {} ints, not {}", op, key, count, v.dump()));
  std::vector<int> out;
  for (const auto &e : v) {
    if (!e.is_number_integer() || e.get<int64_t>() < lo || e.get<int64_t>() > hi)
      throw Error(fmt::format("{}: parameter '{}' {}: each entry must be an int in {}..{} ({})", op, key, v.dump(),
                              lo, hi, why));
    out.push_back(int(e.get<int64_t>()));
  }
  return out;
}

// A conv2d layer's geometry: NCHW input, OIHW weight, optional bias of oc
// elements; params "stride" [h, w], "dilation" [h, w], "pads" [top, left,
// bottom, right] (TpuLang's order), "group".
struct Conv {
  int64_t n = 1, ic = 1, ih = 1, iw = 1, oc = 1, oh = 1, ow = 1, group = 1;
  int kh = 1, kw = 1;
  std::vector<int> stride, dilation, pads;  // pads: top, left, bottom, right
  bool bias = false;
};

Conv conv_geometry(const nlohmann::ordered_json &params, const std::vector<BuiltinTensor> &inputs) {
  check_param_keys("builtin.conv2d", params, {"stride", "dilation", "pads", "group"});
  if (inputs.size() != 2 && inputs.size() != 3)
    throw Error(fmt::format("builtin.conv2d: it takes an input, a weight and an optional bias, not {} tensors",
                            inputs.size()));
  const Shape &x = inputs[0].shape, &w = inputs[1].shape;
  if (x.size() != 4) throw Error(fmt::format("builtin.conv2d: the input {} is not 4-d (NCHW)", shape_text(x)));
  if (w.size() != 4)
    throw Error(fmt::format("builtin.conv2d: the weight {} is not 4-d ([oc, ic / group, kh, kw])", shape_text(w)));
  Conv c;
  const char *engine = "the engine's limit";
  c.stride = int_list("builtin.conv2d", params, "stride", 2, 1, 15, {1, 1}, engine);
  c.dilation = int_list("builtin.conv2d", params, "dilation", 2, 1, 15, {1, 1}, engine);
  c.pads = int_list("builtin.conv2d", params, "pads", 4, 0, 15, {0, 0, 0, 0}, engine);
  if (params.contains("group")) {
    const auto &g = params.at("group");
    if (!g.is_number_integer() || g.get<int64_t>() < 1)
      throw Error(fmt::format("builtin.conv2d: parameter 'group' must be a positive int, not {}", g.dump()));
    c.group = g.get<int64_t>();
  }
  c.n = x[0], c.ic = x[1], c.ih = x[2], c.iw = x[3];
  c.oc = w[0], c.kh = w[2], c.kw = w[3];
  if (c.ic % c.group || c.oc % c.group)
    throw Error(fmt::format("builtin.conv2d: group {} does not divide the input channels {} and the output channels "
                            "{}",
                            c.group, c.ic, c.oc));
  if (w[1] != c.ic / c.group)
    throw Error(fmt::format("builtin.conv2d: the weight {} has {} input channels, but the input {} with group {} "
                            "needs {}",
                            shape_text(w), w[1], shape_text(x), c.group, c.ic / c.group));
  if (inputs.size() == 3) {
    c.bias = true;
    if (element_count(inputs[2].shape) != c.oc)
      throw Error(fmt::format("builtin.conv2d: the bias {} has {} elements; it needs one per output channel ({})",
                              shape_text(inputs[2].shape), element_count(inputs[2].shape), c.oc));
  }
  const int64_t extent_h = c.ih + c.pads[0] + c.pads[2], extent_w = c.iw + c.pads[1] + c.pads[3];
  const int64_t window_h = int64_t(c.dilation[0]) * (c.kh - 1) + 1, window_w = int64_t(c.dilation[1]) * (c.kw - 1) + 1;
  if (window_h > extent_h || window_w > extent_w)
    throw Error(fmt::format("builtin.conv2d: the kernel window {}x{} (dilation {}x{}) is larger than the padded "
                            "input {}x{}",
                            window_h, window_w, c.dilation[0], c.dilation[1], extent_h, extent_w));
  c.oh = (extent_h - window_h) / c.stride[0] + 1;
  c.ow = (extent_w - window_w) / c.stride[1] + 1;
  if (c.ic / c.group > kMaxConvDim || c.oc > kMaxConvDim || extent_w > kMaxConvDim || c.ow > kMaxConvDim ||
      int64_t(c.kh) * c.kw > kMaxConvDim)
    throw Error(fmt::format("builtin.conv2d: input channels per group {}, output channels {}, padded width {}, "
                            "output width {} and kernel taps {} must each be at most {} (the engine's limit)",
                            c.ic / c.group, c.oc, extent_w, c.ow, int64_t(c.kh) * c.kw, kMaxConvDim));
  return c;
}

// A pooling layer's geometry in a Conv (oc = ic = group): params "kernel"
// [kh, kw] (required), "stride" [h, w], "dilation" [h, w], "pads" [top,
// left, bottom, right]. A max pool's pads are below its window, so that
// its first and last windows hold an input element.
Conv pool_geometry(std::string_view op, bool max, const nlohmann::ordered_json &params,
                   const std::vector<BuiltinTensor> &inputs) {
  check_param_keys(op, params, {"kernel", "stride", "dilation", "pads"});
  if (inputs.size() != 1) throw Error(fmt::format("{}: it takes one input, not {}", op, inputs.size()));
  const Shape &x = inputs[0].shape;
  if (x.size() != 4) throw Error(fmt::format("{}: the input {} is not 4-d (NCHW)", op, shape_text(x)));
  const char *engine = "the engine's limit";
  Conv c;
  const std::vector<int> kernel = int_list(op, params, "kernel", 2, 1, int(kMaxConvDim), {}, engine);
  c.kh = kernel[0], c.kw = kernel[1];
  c.stride = int_list(op, params, "stride", 2, 1, 15, {1, 1}, engine);
  c.dilation = int_list(op, params, "dilation", 2, 1, 15, {1, 1}, engine);
  c.pads = int_list(op, params, "pads", 4, 0, 15, {0, 0, 0, 0}, engine);
  const int64_t window_h = int64_t(c.dilation[0]) * (c.kh - 1) + 1, window_w = int64_t(c.dilation[1]) * (c.kw - 1) + 1;
  if (max && (c.pads[0] >= window_h || c.pads[2] >= window_h || c.pads[1] >= window_w || c.pads[3] >= window_w))
    throw Error(fmt::format("{}: pads {} reach a window of padding only; each is below the window {}x{}", op,
                            fmt::join(c.pads, ","), window_h, window_w));
  c.n = x[0], c.ic = c.oc = c.group = x[1], c.ih = x[2], c.iw = x[3];
  const int64_t extent_h = c.ih + c.pads[0] + c.pads[2], extent_w = c.iw + c.pads[1] + c.pads[3];
  if (window_h > extent_h || window_w > extent_w)
    throw Error(fmt::format("{}: the window {}x{} (kernel {}x{}, dilation {}x{}) is larger than the padded input {}x{}",
                            op, window_h, window_w, c.kh, c.kw, c.dilation[0], c.dilation[1], extent_h, extent_w));
  c.oh = (extent_h - window_h) / c.stride[0] + 1;
  c.ow = (extent_w - window_w) / c.stride[1] + 1;
  if (c.ic > kMaxConvDim || extent_w > kMaxConvDim || c.ow > kMaxConvDim)
    throw Error(fmt::format("{}: channels {}, padded width {} and output width {} must each be at most {} (the "
                            "engine's limit)",
                            op, c.ic, extent_w, c.ow, kMaxConvDim));
  return c;
}

// Max (over the input elements of the window) or average (the window's sum
// over kh kw, padding counted as 0) in double.
void pool_reference(const Conv &c, bool max, const float *x, std::vector<float> &out) {
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t ch = 0; ch < c.ic; ++ch)
      for (int64_t y = 0; y < c.oh; ++y)
        for (int64_t xo = 0; xo < c.ow; ++xo) {
          double acc = max ? -INFINITY : 0.0;
          for (int p = 0; p < c.kh; ++p) {
            const int64_t u = y * c.stride[0] + int64_t(p) * c.dilation[0] - c.pads[0];
            if (u < 0 || u >= c.ih) continue;
            for (int q = 0; q < c.kw; ++q) {
              const int64_t v = xo * c.stride[1] + int64_t(q) * c.dilation[1] - c.pads[1];
              if (v < 0 || v >= c.iw) continue;
              const double e = x[((n * c.ic + ch) * c.ih + u) * c.iw + v];
              acc = max ? std::max(acc, e) : acc + e;
            }
          }
          out[std::size_t(((n * c.ic + ch) * c.oh + y) * c.ow + xo)] =
              float(max ? acc : acc / double(c.kh * c.kw));
        }
}

// Direct convolution in double, rounded once to float.
void conv_reference(const Conv &c, const std::vector<const float *> &ins, std::vector<float> &out) {
  const int64_t icg = c.ic / c.group, ocg = c.oc / c.group;
  const float *x = ins[0], *w = ins[1];
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t o = 0; o < c.oc; ++o) {
      const int64_t g = o / ocg;
      for (int64_t y = 0; y < c.oh; ++y)
        for (int64_t xo = 0; xo < c.ow; ++xo) {
          double acc = c.bias ? double(ins[2][o]) : 0.0;
          for (int64_t i = 0; i < icg; ++i)
            for (int p = 0; p < c.kh; ++p) {
              const int64_t u = y * c.stride[0] + int64_t(p) * c.dilation[0] - c.pads[0];
              if (u < 0 || u >= c.ih) continue;
              for (int q = 0; q < c.kw; ++q) {
                const int64_t v = xo * c.stride[1] + int64_t(q) * c.dilation[1] - c.pads[1];
                if (v < 0 || v >= c.iw) continue;
                acc += double(x[((n * c.ic + g * icg + i) * c.ih + u) * c.iw + v]) *
                       double(w[((o * icg + i) * c.kh + p) * c.kw + q]);
              }
            }
          out[std::size_t(((n * c.oc + o) * c.oh + y) * c.ow + xo)] = float(acc);
        }
    }
}

// ---- strided views: transpose, slice, broadcast ---------------------------------

bool strided(Op op) { return op == Op::transpose || op == Op::slice || op == Op::broadcast; }

// The output of a strided op: element [i...] of `shape` is input element
// offset + sum(i_k * strides[k]).
struct StridedView {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// A list parameter of exactly `count` ints.
std::vector<int64_t> exact_ints(std::string_view op, const nlohmann::ordered_json &params, const char *key,
                                std::size_t count) {
  const auto &v = params.at(key);
  if (!v.is_array() || v.size() != count || !std::all_of(v.begin(), v.end(), [](const auto &e) { return e.is_number_integer(); }))
    throw Error(fmt::format("{}: parameter '{}' must be a list of {} ints (one per input dim), not {}", op, key, count,
                            v.dump()));
  return v.get<std::vector<int64_t>>();
}

StridedView transpose_view(std::string_view op, const nlohmann::ordered_json &params, const Shape &in,
                           const std::vector<int64_t> &in_strides) {
  check_param_keys(op, params, {"perm"});
  if (!params.contains("perm")) throw Error(fmt::format("{}: parameter 'perm' is missing", op));
  const std::vector<int64_t> perm = exact_ints(op, params, "perm", in.size());
  std::vector<bool> seen(in.size(), false);
  StridedView v;
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(in.size()) || seen[std::size_t(p)])
      throw Error(fmt::format("{}: perm {} is not a permutation of 0..{}", op, params.at("perm").dump(), in.size() - 1));
    seen[std::size_t(p)] = true;
    v.shape.push_back(in[std::size_t(p)]);
    v.strides.push_back(in_strides[std::size_t(p)]);
  }
  return v;
}

StridedView slice_view(std::string_view op, const nlohmann::ordered_json &params, const Shape &in,
                       const std::vector<int64_t> &in_strides) {
  check_param_keys(op, params, {"starts", "ends", "steps"});
  if (!params.contains("starts") || !params.contains("ends"))
    throw Error(fmt::format("{}: parameters 'starts' and 'ends' are required", op));
  const std::vector<int64_t> starts = exact_ints(op, params, "starts", in.size());
  const std::vector<int64_t> ends = exact_ints(op, params, "ends", in.size());
  const std::vector<int64_t> steps =
      params.contains("steps") ? exact_ints(op, params, "steps", in.size()) : std::vector<int64_t>(in.size(), 1);
  StridedView v;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (steps[d] < 1 || starts[d] < 0 || ends[d] < starts[d] || ends[d] > in[d])
      throw Error(fmt::format("{}: dim {} of {}: start {}, end {}, step {}; it needs 0 <= start <= end <= {} and step "
                              ">= 1 (start = end: an empty slice)",
                              op, d, shape_text(in), starts[d], ends[d], steps[d], in[d]));
    v.shape.push_back(int((ends[d] - starts[d] + steps[d] - 1) / steps[d]));
    v.strides.push_back(in_strides[d] * steps[d]);
    v.offset += starts[d] * in_strides[d];
  }
  return v;
}

StridedView broadcast_view(std::string_view op, const nlohmann::ordered_json &params, const Shape &in,
                           const std::vector<int64_t> &in_strides) {
  check_param_keys(op, params, {"shape"});
  if (!params.contains("shape") || !params.at("shape").is_array())
    throw Error(fmt::format("{}: parameter 'shape' (the output shape) must be a list of ints", op));
  const std::vector<int64_t> out = exact_ints(op, params, "shape", params.at("shape").size());
  if (out.size() < in.size() || out.size() > MAX_SHAPE_DIMS)
    throw Error(fmt::format("{}: shape {} has {} dims; it needs {} to {} (the input {})", op, params.at("shape").dump(),
                            out.size(), in.size(), MAX_SHAPE_DIMS, shape_text(in)));
  StridedView v;
  const std::size_t lead = out.size() - in.size();
  for (std::size_t d = 0; d < out.size(); ++d) {
    const int64_t src = d < lead ? 1 : in[d - lead];
    if (out[d] < 1 || out[d] > INT32_MAX || (src != 1 && src != out[d]))
      throw Error(fmt::format("{}: the input {} does not broadcast to {} (dim {}: {} to {})", op, shape_text(in),
                              params.at("shape").dump(), d, src, out[d]));
    v.shape.push_back(int(out[d]));
    v.strides.push_back(src == 1 ? 0 : in_strides[d - lead]);
  }
  return v;
}

StridedView strided_view(Op op, std::string_view name, const nlohmann::ordered_json &params, const Shape &in) {
  std::vector<int64_t> in_strides(in.size());
  int64_t stride = 1;
  for (std::size_t d = in.size(); d-- > 0;) in_strides[d] = stride, stride *= in[d];
  if (op == Op::transpose) return transpose_view(name, params, in, in_strides);
  if (op == Op::slice) return slice_view(name, params, in, in_strides);
  return broadcast_view(name, params, in, in_strides);
}

void strided_reference(const StridedView &v, const double *in, std::vector<double> &out) {
  std::vector<int> index(v.shape.size(), 0);
  for (double &result : out) {
    int64_t flat = v.offset;
    for (std::size_t d = 0; d < index.size(); ++d) flat += index[d] * v.strides[d];
    result = in[flat];
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < v.shape[d]) break;
      index[d] = 0;
    }
  }
}

void run_strided(const StridedView &v, Dtype dtype, const tensor_spec_t &input, const tensor_spec_t &output) {
  StridedCopyArgs a;
  a.dtype = kernel_dtype(dtype);
  // Dims of 1 dropped, then aligned to the last of the eight.
  std::vector<int64_t> dims, strides;
  for (std::size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] != 1) dims.push_back(v.shape[d]), strides.push_back(v.strides[d]);
  for (int64_t s : strides)
    if (s > INT32_MAX) throw Error(fmt::format("a stride of {} elements is beyond the copy engine's 32-bit strides", s));
  // The GDMA's w-stride is at most 128 bytes: a far-strided last dim becomes the command's h.
  if (!dims.empty() && strides.back() * int64_t(dtype_size(dtype)) > 128) dims.push_back(1), strides.push_back(1);
  const std::size_t pad = kStridedCopyDims - dims.size();
  for (std::size_t d = 0; d < dims.size(); ++d) a.dims[pad + d] = dims[d], a.in_stride[pad + d] = strides[d];
  a.in_offset = v.offset;
  a.in_addr = input.addr;
  a.out_addr = output.addr;
  run_strided_copy_kernel(a);
}

// builtin.cast's {"to": "fp16"}: any dtype.
Dtype cast_target(std::string_view op, const nlohmann::ordered_json &params) {
  check_param_keys(op, params, {"to"});
  if (!params.contains("to") || !params.at("to").is_string())
    throw Error(fmt::format("{}: parameter 'to' (a dtype: fp32, int32, ...) is missing", op));
  return parse_dtype(params.at("to").get<std::string>());
}

// Copies (reshape, concat, the strided ones) and cast move elements of any
// dtype; the arithmetic, convolution and pooling kernels take floats.
void check_input_dtype(Op op, std::string_view name, Dtype dtype) {
  const bool any_dtype = op == Op::reshape || op == Op::concat || op == Op::cast || strided(op);
  if (!any_dtype && !dtype_info(dtype).is_float)
    throw Error(fmt::format("{}: input dtype {}: this built-in op takes fp32, fp16 or bf16 (reshape, concat, "
                            "transpose, slice, broadcast and cast take every dtype)",
                            name, dtype_name(dtype)));
}

// builtin.cast's values before the store into `to` rounds them (nearest
// even, saturating): a float into an integer truncated toward zero first
// (NaN to 0), an integer into another wrapped (the kernel's rules).
void cast_reference(Dtype from, Dtype to, const double *in, std::vector<double> &out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    double v = in[i];
    if (!dtype_info(to).is_float)
      v = dtype_info(from).is_float ? (std::isnan(v) ? 0.0 : std::trunc(v)) : round_to_dtype(v, to);
    out[i] = v;
  }
}

// ---- int_pow -------------------------------------------------------------------

// builtin.int_pow: x int32 and y int32 or uint32 of one shape; the power is int32.
BuiltinTensor int_pow_output(std::string_view op, const nlohmann::ordered_json &params,
                             const std::vector<BuiltinTensor> &in) {
  check_param_keys(op, params, {});
  if (in.size() != 2) throw Error(fmt::format("{}: it takes a base and an exponent, not {} tensors", op, in.size()));
  if (in[0].dtype != Dtype::int32)
    throw Error(fmt::format("{}: the base is {}; it takes int32", op, dtype_name(in[0].dtype)));
  if (in[1].dtype != Dtype::int32 && in[1].dtype != Dtype::uint32)
    throw Error(fmt::format("{}: the exponent is {}; it takes int32 or uint32", op, dtype_name(in[1].dtype)));
  if (in[0].shape != in[1].shape)
    throw Error(fmt::format("{}: the base {} and the exponent {} differ in shape (broadcast them first)", op,
                            shape_text(in[0].shape), shape_text(in[1].shape)));
  return {in[0].shape, Dtype::int32};
}

// ---- int_mod -------------------------------------------------------------------

// builtin.int_mod: x and y of one shape and one dtype (int32 or uint32),
// params {"fmod": 0 or 1}; the remainder has their dtype. Returns fmod.
bool int_mod_params(std::string_view op, const nlohmann::ordered_json &params, const std::vector<BuiltinTensor> &in) {
  check_param_keys(op, params, {"fmod"});
  if (in.size() != 2) throw Error(fmt::format("{}: it takes a dividend and a divisor, not {} tensors", op, in.size()));
  if (in[0].dtype != Dtype::int32 && in[0].dtype != Dtype::uint32)
    throw Error(fmt::format("{}: the dividend is {}; it takes int32 or uint32", op, dtype_name(in[0].dtype)));
  if (in[1].dtype != in[0].dtype)
    throw Error(fmt::format("{}: the divisor is {}, the dividend {}; they share one dtype", op,
                            dtype_name(in[1].dtype), dtype_name(in[0].dtype)));
  if (in[0].shape != in[1].shape)
    throw Error(fmt::format("{}: the dividend {} and the divisor {} differ in shape (broadcast them first)", op,
                            shape_text(in[0].shape), shape_text(in[1].shape)));
  const auto &fmod = params.value("fmod", nlohmann::ordered_json(0));
  if (!fmod.is_number_integer() || (fmod.get<int64_t>() != 0 && fmod.get<int64_t>() != 1))
    throw Error(fmt::format("{}: parameter 'fmod' is {}; it is 0 or 1", op, fmod.dump()));
  return fmod.get<int64_t>() == 1;
}

// ---- math ----------------------------------------------------------------------

// builtin.sin, cos, tan, asin, acos: one fp32 tensor, no parameters; the
// output is alike.
MathFn math_params(std::string_view op, const nlohmann::ordered_json &params, const std::vector<BuiltinTensor> &in) {
  check_param_keys(op, params, {});
  if (in.size() != 1) throw Error(fmt::format("{}: it takes one tensor, not {}", op, in.size()));
  if (in[0].dtype != Dtype::fp32)
    throw Error(fmt::format("{}: the input is {}; it takes fp32 (cast fp16 / bf16 first)", op, dtype_name(in[0].dtype)));
  return math_fn(op.substr(kBuiltinPrefix.size())).value();
}

// ---- gather --------------------------------------------------------------------

// builtin.gather's data viewed as [outer, rows, inner] around "axis", the
// indices as `count` values.
struct GatherView {
  int64_t outer = 1, rows = 1, inner = 1, count = 1;
  Shape shape;  // the output's
};

GatherView gather_view(std::string_view op, const nlohmann::ordered_json &params, const std::vector<BuiltinTensor> &in) {
  check_param_keys(op, params, {"axis"});
  if (in.size() != 2) throw Error(fmt::format("{}: it takes two inputs (data, indices), not {}", op, in.size()));
  if (in[1].dtype != Dtype::int32)
    throw Error(fmt::format("{}: the indices are {}; they must be int32", op, dtype_name(in[1].dtype)));
  const Shape &data = in[0].shape;
  const int64_t rank = int64_t(data.size());
  if (params.contains("axis") && !params.at("axis").is_number_integer())
    throw Error(fmt::format("{}: parameter 'axis' must be an integer, not {}", op, params.at("axis").dump()));
  const int64_t axis = params.value("axis", int64_t(0));
  if (axis < 0 || axis >= rank) throw Error(fmt::format("{}: axis {} is not a dim of {}", op, axis, shape_text(data)));
  GatherView v;
  v.shape.assign(data.begin(), data.begin() + axis);
  v.shape.insert(v.shape.end(), in[1].shape.begin(), in[1].shape.end());
  v.shape.insert(v.shape.end(), data.begin() + axis + 1, data.end());
  if (v.shape.size() > 8) throw Error(fmt::format("{}: the output would have {} dims (at most 8)", op, v.shape.size()));
  for (int64_t d = 0; d < axis; ++d) v.outer *= data[d];
  for (int64_t d = axis + 1; d < rank; ++d) v.inner *= data[d];
  v.rows = data[axis];
  v.count = element_count(in[1].shape);
  if (v.outer * v.rows * v.inner > INT32_MAX || v.count > INT32_MAX / (v.outer * v.inner))
    throw Error(fmt::format("{}: more than 2^31 elements (the engine's strides are 32-bit)", op));
  return v;
}

// An index outside [0, rows) gives zeros, as the kernel's fill does.
void gather_reference(const GatherView &v, const double *data, const double *indices, std::vector<double> &out) {
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.count; ++i) {
      const int64_t row = int64_t(indices[i]);
      for (int64_t k = 0; k < v.inner; ++k)
        out[std::size_t((o * v.count + i) * v.inner + k)] =
            row >= 0 && row < v.rows ? data[(o * v.rows + row) * v.inner + k] : 0.0;
    }
}

void run_gather(const GatherView &v, Dtype dtype, const std::vector<tensor_spec_t> &inputs, const tensor_spec_t &output) {
  GatherArgs a;
  a.dtype = kernel_dtype(dtype);
  a.outer = v.outer, a.rows = v.rows, a.inner = v.inner, a.count = v.count;
  a.data_addr = inputs[0].addr, a.index_addr = inputs[1].addr, a.out_addr = output.addr;
  run_gather_kernel(a);
}

// ---- pad2d ------------------------------------------------------------------------

struct Pad2d {
  std::vector<int> pads;  // top, left, bottom, right
  float value = 0;
};

// builtin.pad2d's params: "pads" [top, left, bottom, right] (each 0..65535)
// and "value" (a number, default 0) or "lowest": 1 (-inf, which a JSON
// number cannot hold).
Pad2d pad2d_params(std::string_view op, const nlohmann::ordered_json &params, const std::vector<BuiltinTensor> &inputs) {
  check_param_keys(op, params, {"pads", "value", "lowest"});
  if (inputs.size() != 1) throw Error(fmt::format("{}: it takes one input, not {}", op, inputs.size()));
  if (inputs[0].shape.size() != 4)
    throw Error(fmt::format("{}: the input {} is not 4-d (NCHW)", op, shape_text(inputs[0].shape)));
  Pad2d p;
  p.pads = int_list(op, params, "pads", 4, 0, int(kMaxConvDim), {}, "a GDMA extent");
  if (params.contains("value")) {
    const auto &v = params.at("value");
    if (!v.is_number()) throw Error(fmt::format("{}: parameter 'value' must be a number, not {}", op, v.dump()));
    p.value = v.get<float>();
  }
  if (params.contains("lowest")) {
    const auto &v = params.at("lowest");
    if (!(v.is_boolean() || v == 0 || v == 1) || params.contains("value"))
      throw Error(fmt::format("{}: parameter 'lowest' must be 0 or 1 (1: fill with -inf), without a 'value', not {}",
                              op, v.dump()));
    if (v == true || v == 1) p.value = -INFINITY;
  }
  const Shape &x = inputs[0].shape;
  if (x[2] + p.pads[0] + p.pads[2] > kMaxConvDim || x[3] + p.pads[1] + p.pads[3] > kMaxConvDim)
    throw Error(fmt::format("{}: the padded plane of {} with pads [{}] is over {} rows or columns (a GDMA extent)", op,
                            shape_text(x), fmt::join(p.pads, ", "), kMaxConvDim));
  return p;
}

void pad2d_reference(const Pad2d &p, const Shape &x, const float *in, std::vector<float> &out) {
  const int64_t oh = x[2] + p.pads[0] + p.pads[2], ow = x[3] + p.pads[1] + p.pads[3];
  std::fill(out.begin(), out.end(), p.value);
  for (int64_t plane = 0; plane < int64_t(x[0]) * x[1]; ++plane)
    for (int64_t r = 0; r < x[2]; ++r)
      std::copy_n(in + (plane * x[2] + r) * x[3], x[3], out.begin() + (plane * oh + r + p.pads[0]) * ow + p.pads[1]);
}

// ---- shapes -----------------------------------------------------------------

// numpy broadcasting of two shapes (right-aligned, each dim equal or 1).
Shape broadcast_shape(std::string_view op, const Shape &a, const Shape &b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const int da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(fmt::format("{}: shapes {} and {} do not broadcast (dim {} from the right: {} vs {})", op,
                              shape_text(a), shape_text(b), rank - i, da, db));
    out[i] = std::max(da, db);
  }
  return out;
}

// ---- references ---------------------------------------------------------------

float apply(Op op, float x, float y) {
  switch (op) {
    case Op::add: return x + y;
    case Op::sub: return x - y;
    case Op::mul: return x * y;
    case Op::relu: return x > 0 ? x : 0.0f;
    case Op::concat:
    case Op::reshape:
    case Op::conv2d:
    case Op::maxpool2d:
    case Op::avgpool2d:
    case Op::expression:
    case Op::transpose:
    case Op::slice:
    case Op::broadcast:
    case Op::cast:
    case Op::pad2d:
    case Op::matmul:
    case Op::gather:
    case Op::int_pow:
    case Op::int_mod:
    case Op::math: break;
  }
  return 0;
}

// The flat index into an operand of shape `operand` (right-aligned against
// the output) of the output element with multi-index `index`.
int64_t broadcast_index(const Shape &out, const Shape &operand, const std::vector<int> &index) {
  const std::size_t offset = out.size() - operand.size();
  int64_t flat = 0;
  for (std::size_t d = 0; d < operand.size(); ++d) flat = flat * operand[d] + (operand[d] == 1 ? 0 : index[d + offset]);
  return flat;
}

// `value` as the output dtype holds it.
float rounded_to(Dtype dtype, float value) {
  const float v[1] = {value};
  return decode_array(encode_array({1}, dtype, v), dtype)[0];
}

void binary_reference(Op op, const nlohmann::ordered_json &params, const std::vector<BuiltinTensor> &inputs,
                      const std::vector<const float *> &ins, const Shape &out_shape, std::vector<float> &out) {
  const bool scalar = has_scalar(params);
  const float c = scalar ? rounded_to(inputs[0].dtype, scalar_param("", params)) : 0.0f;
  const bool c_first = scalar && scalar_first("", params);
  std::vector<int> index(out_shape.size(), 0);
  for (float &result : out) {
    const float x = ins[0][broadcast_index(out_shape, inputs[0].shape, index)];
    const float y = scalar ? c : ins[1][broadcast_index(out_shape, inputs[1].shape, index)];
    result = c_first ? apply(op, c, x) : apply(op, x, y);
    for (std::size_t d = index.size(); d-- > 0;) {  // next index, last dim fastest
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
}

void concat_reference(const nlohmann::ordered_json &params, const std::vector<BuiltinTensor> &inputs,
                      const std::vector<const double *> &ins, std::vector<double> &out) {
  const Shape &first = inputs[0].shape;
  const int axis = concat_axis(params, first.size());
  int64_t outer = 1, inner = 1, total_mid = 0;
  for (int d = 0; d < axis; ++d) outer *= first[d];
  for (std::size_t d = std::size_t(axis) + 1; d < first.size(); ++d) inner *= first[d];
  for (const BuiltinTensor &t : inputs) total_mid += t.shape[axis];
  int64_t offset = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const int64_t mid = inputs[i].shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(ins[i] + o * mid * inner, mid * inner, out.begin() + (o * total_mid + offset) * inner);
    offset += mid;
  }
}

// ---- matmul -------------------------------------------------------------------------

// builtin.matmul: a [..., M, K] (or [..., K, M] with "transpose_a") times b
// [..., K, N] (or [..., N, K] with "transpose_b"), the batch dims
// broadcast (numpy), an optional bias of N values added to every row.
struct Matmul {
  bool trans_a = false, trans_b = false, bias = false;
  int64_t m = 1, k = 1, n = 1;
  Shape batch;                           // the output's batch dims
  std::vector<int64_t> a_batch, b_batch;  // each batch index's element offset into a and b
};

bool flag_param(std::string_view op, const nlohmann::ordered_json &params, const char *key) {
  if (!params.contains(key)) return false;
  const auto &v = params.at(key);
  if (!v.is_boolean() && v != 0 && v != 1) throw Error(fmt::format("{}: parameter '{}' must be 0 or 1, not {}", op, key, v.dump()));
  return v == true || v == 1;
}

// The element offset of every output batch into an operand with the batch
// dims `dims` (right-aligned against `batch`, 1 broadcasting) and
// `matrix` elements per batch.
std::vector<int64_t> batch_offsets(const Shape &batch, const Shape &dims, int64_t matrix) {
  std::vector<int64_t> offsets;
  std::vector<int> index(batch.size(), 0);
  for (int64_t b = 0, total = element_count(batch); b < total; ++b) {
    offsets.push_back(broadcast_index(batch, dims, index) * matrix);
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

Matmul matmul_geometry(std::string_view op, const nlohmann::ordered_json &params,
                       const std::vector<BuiltinTensor> &inputs) {
  check_param_keys(op, params, {"transpose_a", "transpose_b"});
  if (inputs.size() != 2 && inputs.size() != 3)
    throw Error(fmt::format("{}: it takes a, b and an optional bias, not {} tensors", op, inputs.size()));
  const Shape &a = inputs[0].shape, &b = inputs[1].shape;
  if (a.size() < 2 || b.size() < 2)
    throw Error(fmt::format("{}: a {} and b {} must each have at least 2 dims", op, shape_text(a), shape_text(b)));
  Matmul mm;
  mm.trans_a = flag_param(op, params, "transpose_a"), mm.trans_b = flag_param(op, params, "transpose_b");
  const std::size_t ra = a.size(), rb = b.size();
  mm.m = mm.trans_a ? a[ra - 1] : a[ra - 2], mm.k = mm.trans_a ? a[ra - 2] : a[ra - 1];
  const int64_t kb = mm.trans_b ? b[rb - 1] : b[rb - 2];
  mm.n = mm.trans_b ? b[rb - 2] : b[rb - 1];
  if (kb != mm.k)
    throw Error(fmt::format("{}: a {} has {} columns but b {} has {} rows (transpose_a {}, transpose_b {})", op,
                            shape_text(a), mm.k, shape_text(b), kb, int(mm.trans_a), int(mm.trans_b)));
  if (mm.k > kMaxConvDim || mm.n > kMaxConvDim)
    throw Error(fmt::format("{}: K {} and N {} must each be at most {} (the engine's channel limit)", op, mm.k, mm.n,
                            kMaxConvDim));
  const Shape a_dims(a.begin(), a.end() - 2), b_dims(b.begin(), b.end() - 2);
  mm.batch = broadcast_shape(op, a_dims, b_dims);
  mm.a_batch = batch_offsets(mm.batch, a_dims, mm.m * mm.k);
  mm.b_batch = batch_offsets(mm.batch, b_dims, mm.k * mm.n);
  if (inputs.size() == 3) {
    mm.bias = true;
    if (element_count(inputs[2].shape) != mm.n)
      throw Error(fmt::format("{}: the bias {} has {} elements; it needs one per column ({})", op,
                              shape_text(inputs[2].shape), element_count(inputs[2].shape), mm.n));
  }
  return mm;
}

// In double, rounded once to float.
void matmul_reference(const Matmul &mm, const std::vector<const float *> &ins, std::vector<float> &out) {
  for (std::size_t g = 0; g < mm.a_batch.size(); ++g)
    for (int64_t i = 0; i < mm.m; ++i)
      for (int64_t j = 0; j < mm.n; ++j) {
        double acc = mm.bias ? double(ins[2][j]) : 0.0;
        for (int64_t x = 0; x < mm.k; ++x) {
          const float a = ins[0][mm.a_batch[g] + (mm.trans_a ? x * mm.m + i : i * mm.k + x)];
          const float b = ins[1][mm.b_batch[g] + (mm.trans_b ? j * mm.k + x : x * mm.n + j)];
          acc += double(a) * double(b);
        }
        out[(g * mm.m + i) * mm.n + j] = float(acc);
      }
}

// ---- kernels ------------------------------------------------------------------

Shape spec_shape(const tensor_spec_t &spec) { return Shape(spec.shape, spec.shape + spec.dims); }

ElementwiseKind elementwise_kind(Op op) {
  switch (op) {
    case Op::sub: return ElementwiseKind::sub;
    case Op::mul: return ElementwiseKind::mul;
    case Op::relu: return ElementwiseKind::relu;
    default: return ElementwiseKind::add;
  }
}

void run_elementwise(Op op, const nlohmann::ordered_json &params, Dtype dtype,
                     const std::vector<tensor_spec_t> &inputs, const tensor_spec_t &output) {
  std::vector<Shape> shapes;
  for (const tensor_spec_t &s : inputs) shapes.push_back(spec_shape(s));
  const ElementwiseView v = elementwise_view(spec_shape(output), shapes);
  ElementwiseArgs a;
  a.kind = elementwise_kind(op);
  a.dtype = kernel_dtype(dtype);
  // At most eight groups: tensors have at most eight dims.
  const std::size_t pad = kElementwiseDims - v.dims.size();
  for (std::size_t g = 0; g < v.dims.size(); ++g) a.dims[pad + g] = v.dims[g];
  a.out_addr = output.addr;
  a.operands = int(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    a.in_addr[i] = inputs[i].addr;
    for (std::size_t g = 0; g < v.dims.size(); ++g) a.in_stride[i][pad + g] = v.strides[i][g];
  }
  a.has_scalar = has_scalar(params);
  if (a.has_scalar) {
    a.scalar = scalar_param("", params);
    a.scalar_first = scalar_first("", params);
  }
  run_elementwise_kernel(a);
}

// Each product a 1x1 conv of [1, K, M, 1] (a read through strides) with
// [N, K, 1, 1] (b through strides) into [1, N, M, 1] (y's columns as
// channels).
void run_matmul(std::string_view name, const nlohmann::ordered_json &params, Dtype dtype,
                const std::vector<tensor_spec_t> &inputs, const tensor_spec_t &output) {
  std::vector<BuiltinTensor> shapes;
  for (const tensor_spec_t &s : inputs) shapes.push_back({spec_shape(s), dtype});
  const Matmul mm = matmul_geometry(name, params, shapes);
  MatmulArgs m;
  ConvArgs &a = m.conv;
  a.dtype = kernel_dtype(dtype);
  a.ic = mm.k, a.ih = a.oh = mm.m, a.oc = mm.n;
  a.in_stride[1] = mm.trans_a ? mm.m : 1, a.in_stride[2] = mm.trans_a ? 1 : mm.k, a.in_stride[3] = 1;
  a.out_stride[1] = 1, a.out_stride[2] = mm.n, a.out_stride[3] = 1;
  a.weight_o_stride = mm.trans_b ? mm.k : 1, a.weight_i_stride = mm.trans_b ? 1 : mm.n;
  a.in_addr = inputs[0].addr, a.weight_addr = inputs[1].addr, a.out_addr = output.addr;
  a.bias_addr = mm.bias ? inputs[2].addr : 0;
  const uint64_t esize = dtype_size(dtype);
  std::vector<uint64_t> a_offset, b_offset, y_offset;
  for (std::size_t g = 0; g < mm.a_batch.size(); ++g) {
    a_offset.push_back(uint64_t(mm.a_batch[g]) * esize), b_offset.push_back(uint64_t(mm.b_batch[g]) * esize);
    y_offset.push_back(uint64_t(g) * uint64_t(mm.m * mm.n) * esize);
  }
  m.batches = int64_t(a_offset.size());
  m.a_offset = a_offset.data(), m.b_offset = b_offset.data(), m.y_offset = y_offset.data();
  run_matmul_kernel(m);
}

}  // namespace

bool is_builtin_op(std::string_view op) { return op.starts_with(kBuiltinPrefix); }

std::string builtin_op_list() {
  std::vector<std::string> names;
  for (const OpName &o : kOps) names.push_back(o.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::optional<nlohmann::ordered_json> builtin_expression_form(std::string_view name,
                                                              const nlohmann::ordered_json &params) {
  const OpName *o = find_op(name);
  if (!o || !(binary(o->op) || o->op == Op::relu)) return std::nullopt;
  if (o->op == Op::relu) return nlohmann::ordered_json{{"formula", "relu(x0)"}, {"names", {"x0"}}};
  const char *sign = o->op == Op::add ? "+" : o->op == Op::sub ? "-" : "*";
  if (!has_scalar(params)) return nlohmann::ordered_json{{"formula", fmt::format("x0 {} x1", sign)}, {"names", {"x0", "x1"}}};
  const float c = scalar_param(name, params);
  if (!std::isfinite(c)) return std::nullopt;  // a formula holds finite numbers only
  // The float's exact value (the shortest double form): the formula folds it in double and rounds once to
  // the dtype, as the kernel rounds the float.
  const std::string constant = fmt::format("({})", double(c));
  const std::string formula = scalar_first(name, params) ? fmt::format("{} {} x0", constant, sign)
                                                         : fmt::format("x0 {} {}", sign, constant);
  return nlohmann::ordered_json{{"formula", formula}, {"names", {"x0"}}};
}

BuiltinTensor builtin_infer(std::string_view name, const nlohmann::ordered_json &params,
                            const std::vector<BuiltinTensor> &inputs) {
  const Op op = lookup(name);
  if (!params.is_object()) throw Error(fmt::format("{}: params must be an object", name));
  if (op == Op::expression) {
    std::vector<Shape> shapes;
    std::vector<Dtype> dtypes;
    for (const BuiltinTensor &t : inputs) shapes.push_back(t.shape), dtypes.push_back(t.dtype);
    const ExpressionLayer layer = expression_layer(params, shapes, dtypes);
    return {layer.out_shape, layer.dtype};
  }
  if (inputs.empty()) throw Error(fmt::format("{}: it needs at least one input", name));
  const Dtype dtype = inputs[0].dtype;
  if (op == Op::gather) return {gather_view(name, params, inputs).shape, dtype};
  if (op == Op::int_pow) return int_pow_output(name, params, inputs);
  if (op == Op::math) return (void)math_params(name, params, inputs), inputs[0];
  if (op == Op::int_mod) return (void)int_mod_params(name, params, inputs), inputs[0];
  check_input_dtype(op, name, dtype);
  for (std::size_t i = 1; i < inputs.size(); ++i)
    if (inputs[i].dtype != dtype)
      throw Error(fmt::format("{}: input {} is {} but input 0 is {}; built-in ops take one dtype", name, i,
                              dtype_name(inputs[i].dtype), dtype_name(dtype)));
  if (op == Op::relu) {
    check_param_keys(name, params, {});
    if (inputs.size() != 1) throw Error(fmt::format("{}: it takes one input, not {}", name, inputs.size()));
    return inputs[0];
  }
  if (binary(op)) {
    check_param_keys(name, params, {"scalar", "scalar_first"});
    const std::size_t wanted = has_scalar(params) ? 1 : 2;
    if (inputs.size() != wanted)
      throw Error(fmt::format("{}: it takes {} ({}), not {} inputs", name,
                              wanted == 1 ? "one input" : "two inputs",
                              wanted == 1 ? "with the parameter 'scalar'" : "or one and a 'scalar'", inputs.size()));
    if (has_scalar(params)) {
      scalar_param(name, params);
      scalar_first(name, params);
      return inputs[0];
    }
    if (params.contains("scalar_first"))
      throw Error(fmt::format("{}: 'scalar_first' needs the parameter 'scalar'", name));
    return {broadcast_shape(name, inputs[0].shape, inputs[1].shape), dtype};
  }
  if (op == Op::conv2d || op == Op::maxpool2d || op == Op::avgpool2d) {
    const Conv c = op == Op::conv2d ? conv_geometry(params, inputs)
                                    : pool_geometry(name, op == Op::maxpool2d, params, inputs);
    return {{int(c.n), int(c.oc), int(c.oh), int(c.ow)}, dtype};
  }
  if (op == Op::reshape) {
    check_param_keys(name, params, {"shape"});
    if (inputs.size() != 1) throw Error(fmt::format("{}: it takes one input, not {}", name, inputs.size()));
    return {reshape_shape(params, element_count(inputs[0].shape)), dtype};
  }
  if (strided(op)) {
    if (inputs.size() != 1) throw Error(fmt::format("{}: it takes one input, not {}", name, inputs.size()));
    return {strided_view(op, name, params, inputs[0].shape).shape, dtype};
  }
  if (op == Op::cast) {
    if (inputs.size() != 1) throw Error(fmt::format("{}: it takes one input, not {}", name, inputs.size()));
    return {inputs[0].shape, cast_target(name, params)};
  }
  if (op == Op::matmul) {
    const Matmul mm = matmul_geometry(name, params, inputs);
    Shape out = mm.batch;
    out.push_back(int(mm.m)), out.push_back(int(mm.n));
    return {out, dtype};
  }
  if (op == Op::pad2d) {
    const Pad2d p = pad2d_params(name, params, inputs);
    const Shape &x = inputs[0].shape;
    return {{x[0], x[1], x[2] + p.pads[0] + p.pads[2], x[3] + p.pads[1] + p.pads[3]}, dtype};
  }
  // concat
  check_param_keys(name, params, {"axis"});
  const Shape &first = inputs[0].shape;
  const int axis = concat_axis(params, first.size());
  Shape out = first;
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const Shape &s = inputs[i].shape;
    bool same = s.size() == first.size();
    for (std::size_t d = 0; same && d < s.size(); ++d) same = int(d) == axis || s[d] == first[d];
    if (!same)
      throw Error(fmt::format("{}: input {} has the shape {}, input 0 {}; along axis {} only that dim may differ",
                              name, i, shape_text(s), shape_text(first), axis));
    out[axis] += s[axis];
  }
  return {out, dtype};
}

namespace {

// The ops of float inputs only (check_input_dtype): computed in float as
// the engines do, from the inputs' values (floats, which doubles hold
// exactly) into `out` (float results, before the output's rounding).
void float_reference(Op op, std::string_view name, const nlohmann::ordered_json &params,
                     const std::vector<BuiltinTensor> &inputs, const std::vector<std::vector<float>> &values,
                     const Shape &out_shape, std::vector<float> &out) {
  std::vector<const float *> ins;
  for (const std::vector<float> &v : values) ins.push_back(v.data());
  if (op == Op::conv2d) return conv_reference(conv_geometry(params, inputs), ins, out);
  if (op == Op::maxpool2d || op == Op::avgpool2d)
    return pool_reference(pool_geometry(name, op == Op::maxpool2d, params, inputs), op == Op::maxpool2d, ins[0], out);
  if (op == Op::matmul) return matmul_reference(matmul_geometry(name, params, inputs), ins, out);
  if (op == Op::pad2d) return pad2d_reference(pad2d_params(name, params, inputs), inputs[0].shape, ins[0], out);
  if (op == Op::relu) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::isnan(ins[0][i]) ? ins[0][i] : apply(op, ins[0][i], 0);
    return;
  }
  binary_reference(op, params, inputs, ins, out_shape, out);
}

// builtin.int_pow on int32 values (exact in doubles): x^y wrapped to int32.
void int_pow_reference(const std::vector<const double *> &ins, std::vector<double> &out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = double(int_pow_value(int32_t(ins[0][i]), int64_t(ins[1][i])));
}

}  // namespace

void builtin_reference(std::string_view name, const nlohmann::ordered_json &params,
                       const std::vector<BuiltinTensor> &inputs, const std::vector<const double *> &ins,
                       std::vector<double> &out) {
  const Op op = lookup(name);
  const BuiltinTensor result = builtin_infer(name, params, inputs);
  out.assign(std::size_t(element_count(result.shape)), 0.0);
  if (op == Op::expression) {
    std::vector<Shape> shapes;
    std::vector<Dtype> dtypes;
    for (const BuiltinTensor &t : inputs) shapes.push_back(t.shape), dtypes.push_back(t.dtype);
    return expression_reference(expression_layer(params, shapes, dtypes), ins, out);
  }
  // The copies, cast, int_pow and int_mod take integers: computed on the exact values.
  if (op == Op::concat) return concat_reference(params, inputs, ins, out);
  if (op == Op::gather) return gather_reference(gather_view(name, params, inputs), ins[0], ins[1], out);
  if (op == Op::int_pow) return int_pow_reference(ins, out);
  if (op == Op::int_mod) {
    const bool fmod = int_mod_params(name, params, inputs);
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = double(int_mod_value(int64_t(ins[0][i]), int64_t(ins[1][i]), fmod));
    return;
  }
  if (op == Op::math) {
    // A float function, rounded to fp32 as the float ops' results are.
    const MathFn fn = math_params(name, params, inputs);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = double(float(math_value(fn, ins[0][i])));
    return;
  }
  if (op == Op::cast) return cast_reference(inputs[0].dtype, cast_target(name, params), ins[0], out);
  if (op == Op::reshape) {
    std::copy_n(ins[0], out.size(), out.begin());
    return;
  }
  if (strided(op)) return strided_reference(strided_view(op, name, params, inputs[0].shape), ins[0], out);
  std::vector<std::vector<float>> values;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    values.emplace_back(ins[i], ins[i] + element_count(inputs[i].shape));
  std::vector<float> floats(out.size());
  float_reference(op, name, params, inputs, values, result.shape, floats);
  std::copy(floats.begin(), floats.end(), out.begin());
}

namespace {

// A conv2d / pool layer's kernel arguments, without addresses (bias_addr 1
// when it has a bias).
ConvArgs window_args(Op op, std::string_view name, const nlohmann::ordered_json &params,
                     const std::vector<BuiltinTensor> &shapes, Dtype dtype) {
  const Conv c = op == Op::conv2d ? conv_geometry(params, shapes)
                                  : pool_geometry(name, op == Op::maxpool2d, params, shapes);
  ConvArgs a;
  a.kind = op == Op::conv2d ? WindowKind::conv : op == Op::maxpool2d ? WindowKind::max_pool : WindowKind::avg_pool;
  a.dtype = kernel_dtype(dtype);
  a.n = c.n, a.ic = c.ic, a.ih = c.ih, a.iw = c.iw, a.oc = c.oc, a.oh = c.oh, a.ow = c.ow;
  a.kh = c.kh, a.kw = c.kw, a.group = c.group;
  a.stride_h = c.stride[0], a.stride_w = c.stride[1], a.dilation_h = c.dilation[0], a.dilation_w = c.dilation[1];
  a.pad_top = c.pads[0], a.pad_left = c.pads[1], a.pad_bottom = c.pads[2], a.pad_right = c.pads[3];
  a.bias_addr = c.bias ? 1 : 0;
  return a;
}

// A 2-d matmul a [M, K] x b as a 1x1 conv of [M, K, 1, 1] (a's rows as
// batches, so a group slices them along N) with the weight b.
std::optional<ConvArgs> matmul_window(std::string_view name, const nlohmann::ordered_json &params,
                                      const std::vector<BuiltinTensor> &shapes, Dtype dtype, std::string &why) {
  const Matmul mm = matmul_geometry(name, params, shapes);
  if (shapes[0].shape.size() != 2 || shapes[1].shape.size() != 2 || mm.trans_a) {
    why = fmt::format("{} has a local version for a 2-d a [M, K] (not transposed) and a 2-d b only, not a {} and b {}",
                      name, shape_text(shapes[0].shape), shape_text(shapes[1].shape));
    return std::nullopt;
  }
  ConvArgs a;
  a.dtype = kernel_dtype(dtype);
  a.n = mm.m, a.ic = mm.k, a.oc = mm.n;
  a.weight_o_stride = mm.trans_b ? mm.k : 1, a.weight_i_stride = mm.trans_b ? 1 : mm.n;
  a.bias_addr = mm.bias ? 1 : 0;
  return a;
}

// A slice of a tensor of at most 4 dims along H and W of its 4-d view (N
// and C whole: a group slices N, and the channels sit on the NPUs): a
// window of one tap whose stride is the step, starting at the start.
std::optional<ConvArgs> slice_window(std::string_view name, const nlohmann::ordered_json &params, const Shape &in,
                                     Dtype dtype, std::string &why) {
  if (in.size() > 4) {
    why = fmt::format("{} of a {}-d tensor has no local version (groups hold 4-d views)", name, in.size());
    return std::nullopt;
  }
  Shape dims = in;
  std::vector<int64_t> starts = exact_ints(name, params, "starts", in.size()), ends = exact_ints(name, params, "ends", in.size());
  std::vector<int64_t> steps =
      params.contains("steps") ? exact_ints(name, params, "steps", in.size()) : std::vector<int64_t>(in.size(), 1);
  for (std::size_t d = in.size(); d < 4; ++d) dims.push_back(1), starts.push_back(0), ends.push_back(1), steps.push_back(1);
  for (std::size_t d = 0; d < 2; ++d)
    if (starts[d] != 0 || ends[d] != dims[d] || steps[d] != 1) {
      why = fmt::format("{} along dim {} of {} has no local version: a group keeps N and C whole (it slices along the "
                        "last two of the 4-d view)",
                        name, d, shape_text(in));
      return std::nullopt;
    }
  if (steps[2] > kMaxConvDim || steps[3] > kMaxConvDim) {
    why = fmt::format("{} with steps {} has no local version (steps up to {})", name, params.at("steps").dump(), kMaxConvDim);
    return std::nullopt;
  }
  ConvArgs a;
  a.kind = WindowKind::slice;
  a.dtype = kernel_dtype(dtype);
  a.n = dims[0], a.ic = a.oc = dims[1], a.ih = dims[2], a.iw = dims[3];
  a.oh = (ends[2] - starts[2] + steps[2] - 1) / steps[2], a.ow = (ends[3] - starts[3] + steps[3] - 1) / steps[3];
  a.stride_h = int(steps[2]), a.stride_w = int(steps[3]);
  a.pad_top = int(-starts[2]), a.pad_left = int(-starts[3]);
  return a;
}

}  // namespace

std::optional<ConvArgs> builtin_window_local(std::string_view name, const nlohmann::ordered_json &params,
                                             const std::vector<BuiltinTensor> &inputs, std::string &why) {
  const OpName *o = find_op(name);
  if (!o || (o->op != Op::conv2d && o->op != Op::maxpool2d && o->op != Op::avgpool2d && o->op != Op::matmul &&
             o->op != Op::slice))
    return std::nullopt;
  const Dtype dtype = inputs.at(0).dtype;
  if (o->op == Op::matmul) return matmul_window(name, params, inputs, dtype, why);
  if (o->op == Op::slice) return slice_window(name, params, inputs[0].shape, dtype, why);
  const ConvArgs a = window_args(o->op, name, params, inputs, dtype);
  if (a.kind == WindowKind::conv && a.group > 1 && !(a.group == a.ic && a.group == a.oc)) {
    why = fmt::format("{} with group {} of {} input channels has a local version for group 1 and depthwise only (a "
                      "group's channels would start off NPU 0)",
                      name, a.group, a.ic);
    return std::nullopt;
  }
  return a;
}

void builtin_run_global(std::string_view name, const nlohmann::ordered_json &params, Dtype dtype,
                        const std::vector<tensor_spec_t> &inputs, const tensor_spec_t &output) {
  const Op op = lookup(name);
  if (op == Op::expression) return expression_run_global(params, dtype, inputs, output);
  if (op == Op::conv2d || op == Op::maxpool2d || op == Op::avgpool2d) {
    std::vector<BuiltinTensor> shapes;
    for (const tensor_spec_t &s : inputs) shapes.push_back({spec_shape(s), dtype});
    ConvArgs a = window_args(op, name, params, shapes, dtype);
    a.in_addr = inputs[0].addr, a.out_addr = output.addr;
    a.weight_addr = op == Op::conv2d ? inputs[1].addr : 0;
    a.bias_addr = a.bias_addr ? inputs[2].addr : 0;
    return run_conv_kernel(a);
  }
  if (strided(op)) return run_strided(strided_view(op, name, params, spec_shape(inputs[0])), dtype, inputs[0], output);
  if (op == Op::matmul) return run_matmul(name, params, dtype, inputs, output);
  if (op == Op::pad2d) {
    const Shape x = spec_shape(inputs[0]);
    const Pad2d p = pad2d_params(name, params, {{x, dtype}});
    Pad2dArgs a;
    a.dtype = kernel_dtype(dtype);
    a.planes = int64_t(x[0]) * x[1], a.ih = x[2], a.iw = x[3];
    a.top = p.pads[0], a.left = p.pads[1], a.bottom = p.pads[2], a.right = p.pads[3];
    a.value = p.value;
    a.in_addr = inputs[0].addr, a.out_addr = output.addr;
    return run_pad2d_kernel(a);
  }
  if (op == Op::gather) {
    const std::vector<BuiltinTensor> shapes = {{spec_shape(inputs[0]), dtype},
                                               {spec_shape(inputs[1]), dtype_from_sg(inputs[1].dtype)}};
    return run_gather(gather_view(name, params, shapes), dtype, inputs, output);
  }
  if (op == Op::int_pow) {
    IntPowArgs a;
    a.count = element_count(spec_shape(inputs[0]));
    a.unsigned_exponent = dtype_from_sg(inputs[1].dtype) == Dtype::uint32;
    a.x_addr = inputs[0].addr, a.y_addr = inputs[1].addr, a.out_addr = output.addr;
    return run_int_pow_kernel(a);
  }
  if (op == Op::int_mod) {
    IntModArgs a;
    const Dtype operands = dtype_from_sg(inputs[0].dtype);
    a.fmod = int_mod_params(name, params, {{spec_shape(inputs[0]), operands}, {spec_shape(inputs[1]), operands}});
    a.is_unsigned = operands == Dtype::uint32;
    a.count = element_count(spec_shape(inputs[0]));
    a.x_addr = inputs[0].addr, a.y_addr = inputs[1].addr, a.out_addr = output.addr;
    return run_int_mod_kernel(a);
  }
  if (op == Op::math) {
    MathArgs a;
    a.fn = math_params(name, params, {{spec_shape(inputs[0]), dtype}});
    a.count = element_count(spec_shape(inputs[0]));
    a.in_addr = inputs[0].addr, a.out_addr = output.addr;
    return run_math_kernel(a);
  }
  if (op == Op::cast) {
    CastArgs a;
    a.src_dtype = kernel_dtype(dtype_from_sg(inputs[0].dtype));
    a.dst_dtype = kernel_dtype(dtype);
    a.count = element_count(spec_shape(inputs[0]));
    a.in_addr = inputs[0].addr, a.out_addr = output.addr;
    return run_cast_kernel(a);
  }
  if (op == Op::reshape) {  // the elements in the same order: one copy, a concat of one input
    const int64_t count = element_count(spec_shape(inputs[0]));
    const uint64_t addr = inputs[0].addr;
    const int64_t mid = 1;
    ConcatArgs a;
    a.dtype = kernel_dtype(dtype);
    a.inner = count;
    a.out_mid = 1;
    a.out_addr = output.addr;
    a.inputs = 1;
    a.in_addr = &addr;
    a.in_mid = &mid;
    return run_concat_kernel(a);
  }
  if (op != Op::concat) return run_elementwise(op, params, dtype, inputs, output);
  std::vector<uint64_t> addrs;
  std::vector<int64_t> mids;
  const Shape first = spec_shape(inputs[0]);
  const int axis = concat_axis(params, first.size());
  ConcatArgs a;
  a.dtype = kernel_dtype(dtype);
  for (int d = 0; d < axis; ++d) a.outer *= first[d];
  for (std::size_t d = std::size_t(axis) + 1; d < first.size(); ++d) a.inner *= first[d];
  for (const tensor_spec_t &s : inputs) {
    addrs.push_back(s.addr);
    mids.push_back(s.shape[axis]);
    a.out_mid += s.shape[axis];
  }
  a.out_addr = output.addr;
  a.inputs = int(inputs.size());
  a.in_addr = addrs.data();
  a.in_mid = mids.data();
  run_concat_kernel(a);
}

}  // namespace tpu_runtime::detail
