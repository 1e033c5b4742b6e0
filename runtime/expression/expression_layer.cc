// expression_layer.cc: the net layer builtin.expression (expression_layer.h).
#include "expression/expression_layer.h"

#include <fmt/format.h>

#include <algorithm>

#include "emulator/emulator.h"
#include "expression/expression_kernel.h"
#include "io/arrays.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

Expression parse_params(const nlohmann::ordered_json &params) {
  for (const auto &[key, value] : params.items())
    if (key != "formula" && key != "names")
      throw Error(fmt::format("builtin.expression: unknown parameter '{}' (it takes: formula, names)", key));
  if (!params.contains("formula") || !params.at("formula").is_string())
    throw Error("builtin.expression: parameter 'formula' (a string such as \"x*x + y*z\") is missing");
  std::vector<std::string> names;
  if (params.contains("names")) {
    const auto &n = params.at("names");
    if (!n.is_array() || n.empty() || !std::all_of(n.begin(), n.end(), [](const auto &v) { return v.is_string(); }))
      throw Error(fmt::format("builtin.expression: parameter 'names' must be a non-empty list of input names, not {}",
                              n.dump()));
    for (const auto &v : n) names.push_back(v.get<std::string>());
  }
  return Expression::parse(params.at("formula").get<std::string>(), names);
}

}  // namespace

ExpressionLayer expression_layer(const nlohmann::ordered_json &params, const std::vector<Shape> &shapes,
                                 const std::vector<Dtype> &dtypes) {
  ExpressionLayer l{parse_params(params), shapes, {}, Dtype::fp32};
  const Expression &e = l.expression;
  if (shapes.empty())
    throw Error(fmt::format("formula '{}': column 1: the layer has no input tensors", e.formula()));
  l.out_shape = e.output_shape(shapes);  // checks the count and the broadcasting
  l.dtype = dtypes[0];
  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    if (dtypes[i] != l.dtype)
      throw Error(fmt::format("formula '{}': column {}: input '{}' is {} but input '{}' is {}; the inputs of an "
                              "expression share one dtype (cast first)",
                              e.formula(), e.first_column(i), e.inputs()[i], dtype_name(dtypes[i]), e.inputs()[0],
                              dtype_name(l.dtype)));
  }
  compile_expression(e, l.dtype);  // refuses what the kernel cannot take, before anything runs
  return l;
}

void expression_reference(const ExpressionLayer &layer, const std::vector<const double *> &ins,
                          std::vector<double> &out) {
  const Shape &o = layer.out_shape;
  out.assign(std::size_t(element_count(o)), 0.0);
  std::vector<int> index(o.size(), 0);
  std::vector<double> point(ins.size());
  for (double &result : out) {
    for (std::size_t i = 0; i < ins.size(); ++i) {
      const Shape &s = layer.shapes[i];
      const std::size_t offset = o.size() - s.size();
      int64_t flat = 0;
      for (std::size_t d = 0; d < s.size(); ++d) flat = flat * s[d] + (s[d] == 1 ? 0 : index[d + offset]);
      point[i] = ins[i][flat];
    }
    // A float dtype's result as fp32 holds it (the reference's values are fp32 ones).
    const double value = layer.expression.evaluate_rounded(point, layer.dtype);
    result = dtype_info(layer.dtype).is_float ? double(float(value)) : value;
    for (std::size_t d = index.size(); d-- > 0;) {  // next index, last dim fastest
      if (++index[d] < o[d]) break;
      index[d] = 0;
    }
  }
}

void expression_run_global(const nlohmann::ordered_json &params, Dtype dtype, const std::vector<tensor_spec_t> &inputs,
                           const tensor_spec_t &output) {
  const Expression e = parse_params(params);
  std::vector<Shape> shapes;
  std::vector<uint64_t> addrs;
  for (const tensor_spec_t &s : inputs) {
    shapes.emplace_back(s.shape, s.shape + s.dims);
    addrs.push_back(s.addr);
  }
  const Shape out_shape(output.shape, output.shape + output.dims);
  // A broadcast input every tile reads the same part of is loaded once.
  const uint32_t kept = broadcast_inputs(int(shapes.size()), shapes, out_shape);
  const ExprProgram program = compile_expression(e, dtype, false, kept);
  ExprKernelArgs args = expression_args(program, dtype, shapes, addrs, out_shape, output.addr);
  args.kept_inputs = kept;
  run_expression_kernel(args);
}

int expression_local_scratch(const nlohmann::ordered_json &params, Dtype dtype, uint64_t slice_bytes, int expanded) {
  const ExprProgram program = compile_expression(parse_params(params), dtype, true);
  return int(expression_scratch_bytes(program, int64_t(slice_bytes), expanded));
}

void expression_run_local(const nlohmann::ordered_json &params, Dtype dtype, const int shape[4],
                          const std::vector<ExprLocalInput> &inputs, uint32_t output, uint32_t scratch,
                          uint64_t slice_bytes) {
  const ExprProgram program = compile_expression(parse_params(params), dtype, true);
  if (int(inputs.size()) != program.inputs)
    throw Error(fmt::format("formula '{}': {} input slices for {} inputs", params.at("formula").get<std::string>(),
                            inputs.size(), program.inputs));
  ExprLocalArgs a;
  a.program = &program;
  a.dtype = kernel_dtype(dtype);
  a.shape = {shape[0], shape[1], shape[2], shape[3]};
  std::copy(inputs.begin(), inputs.end(), a.input);
  a.output = output;
  a.scratch = scratch;
  a.slice_bytes = int64_t(slice_bytes);
  run_expression_local(a);
}

}  // namespace tpu_runtime::detail
