// builtin_ops.cc: parameters, shape inference, references and kernel
// arguments of the built-in ops (builtin_ops.h).
#include "builtin_ops.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "builtin_kernels.h"
#include "model_internal.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

enum class Op { add, sub, mul, relu, concat, reshape };

struct OpName {
  const char *name;
  Op op;
};
constexpr OpName kOps[] = {{"builtin.add", Op::add},
                           {"builtin.sub", Op::sub},
                           {"builtin.mul", Op::mul},
                           {"builtin.relu", Op::relu},
                           {"builtin.concat", Op::concat},
                           {"builtin.reshape", Op::reshape}};

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
    if (d < 1 || d > INT32_MAX)
      throw Error(fmt::format("builtin.reshape: shape {} has the dim {}; dims are positive (one may be -1)",
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

// `shape` padded on the left with 1s to `rank` dims.
Shape padded(const Shape &shape, std::size_t rank) {
  Shape p(rank - shape.size(), 1);
  p.insert(p.end(), shape.begin(), shape.end());
  return p;
}

// The element-wise kernel's view: the output's dims merged into groups,
// adjacent dims merging when every operand broadcasts the same way
// along both. Each operand's stride per group (0 when broadcast).
struct View {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;  // per operand
};

View elementwise_view(const Shape &out, const std::vector<Shape> &operands) {
  const std::size_t rank = out.size();
  std::vector<Shape> ops;
  for (const Shape &s : operands) ops.push_back(padded(s, rank));
  auto pattern = [&](std::size_t d) {
    unsigned bits = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) bits |= unsigned(ops[i][d] == 1) << i;
    return bits;
  };
  View v;
  std::vector<unsigned> patterns;
  for (std::size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;  // a dim of 1 needs no group
    const unsigned p = pattern(d);
    if (!patterns.empty() && patterns.back() == p) {
      v.dims.back() *= out[d];
    } else {
      v.dims.push_back(out[d]);
      patterns.push_back(p);
    }
  }
  if (v.dims.empty()) {
    v.dims.push_back(1);
    patterns.push_back(0);
  }
  v.strides.assign(ops.size(), std::vector<int64_t>(v.dims.size()));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    int64_t stride = 1;
    for (std::size_t g = v.dims.size(); g-- > 0;) {
      const bool broadcast = (patterns[g] >> i) & 1;
      v.strides[i][g] = broadcast ? 0 : stride;
      stride *= broadcast ? 1 : v.dims[g];
    }
  }
  return v;
}

// ---- references ---------------------------------------------------------------

float apply(Op op, float x, float y) {
  switch (op) {
    case Op::add: return x + y;
    case Op::sub: return x - y;
    case Op::mul: return x * y;
    case Op::relu: return x > 0 ? x : 0.0f;
    case Op::concat:
    case Op::reshape: break;
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
                      const std::vector<const float *> &ins, std::vector<float> &out) {
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

// A single group (no broadcasting) spread over the NPUs: [1, c, 1, n / c]
// with c the largest divisor of n up to 64, so the tiles fill many lanes.
View spread_single_group(const View &v) {
  const int64_t n = v.dims[0];
  int64_t c = std::min<int64_t>(64, n);
  while (n % c) --c;
  View spread;
  spread.dims = {c, n / c};
  for (const std::vector<int64_t> &s : v.strides) spread.strides.push_back({s[0] * (n / c), s[0]});  // 0: broadcast
  return spread;
}

void run_elementwise(Op op, const nlohmann::ordered_json &params, Dtype dtype,
                     const std::vector<tensor_spec_t> &inputs, const tensor_spec_t &output) {
  std::vector<Shape> shapes;
  for (const tensor_spec_t &s : inputs) shapes.push_back(spec_shape(s));
  View v = elementwise_view(spec_shape(output), shapes);
  if (v.dims.size() == 1) v = spread_single_group(v);
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

}  // namespace

bool is_builtin_op(std::string_view op) { return op.starts_with(kBuiltinPrefix); }

std::string builtin_op_list() {
  std::vector<std::string> names;
  for (const OpName &o : kOps) names.push_back(o.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

BuiltinTensor builtin_infer(std::string_view name, const nlohmann::ordered_json &params,
                            const std::vector<BuiltinTensor> &inputs) {
  const Op op = lookup(name);
  if (!params.is_object()) throw Error(fmt::format("{}: params must be an object", name));
  if (inputs.empty()) throw Error(fmt::format("{}: it needs at least one input", name));
  const Dtype dtype = inputs[0].dtype;
  if (!dtype_info(dtype).is_float || dtype_size(dtype) > 4)
    throw Error(fmt::format("{}: input dtype {}: built-in ops take fp32, fp16 or bf16", name, dtype_name(dtype)));
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
  if (op == Op::reshape) {
    check_param_keys(name, params, {"shape"});
    if (inputs.size() != 1) throw Error(fmt::format("{}: it takes one input, not {}", name, inputs.size()));
    return {reshape_shape(params, element_count(inputs[0].shape)), dtype};
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

void builtin_reference(std::string_view name, const nlohmann::ordered_json &params,
                       const std::vector<BuiltinTensor> &inputs, const std::vector<const float *> &ins,
                       std::vector<float> &out) {
  const Op op = lookup(name);
  const BuiltinTensor result = builtin_infer(name, params, inputs);
  out.assign(std::size_t(element_count(result.shape)), 0.0f);
  if (op == Op::concat) return concat_reference(params, inputs, ins, out);
  if (op == Op::reshape) {
    std::copy_n(ins[0], out.size(), out.begin());
    return;
  }
  if (op == Op::relu) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::isnan(ins[0][i]) ? ins[0][i] : apply(op, ins[0][i], 0);
    return;
  }
  binary_reference(op, params, inputs, ins, result.shape, out);
}

void builtin_run_global(std::string_view name, const nlohmann::ordered_json &params, Dtype dtype,
                        const std::vector<tensor_spec_t> &inputs, const tensor_spec_t &output) {
  const Op op = lookup(name);
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
