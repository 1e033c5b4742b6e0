// expression_layer.h (private): the net layer builtin.expression, as the
// built-in ops (builtin_ops.h) see it: its parameters, shape and dtype
// checks, reference and global kernel.
//
//   params {"formula": "x*x + y*z"}            inputs bind to the formula's
//                                                names in the order they
//                                                first appear (x, y, z)
//   params {"formula": "...", "names": [...]}   inputs bind to these names
//
// Every input has the same dtype (fp32, fp16 or bf16), the output too; the
// shapes broadcast like numpy.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api_common.h"
#include "expression/expression_kernel.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/expression.h"

namespace tpu_runtime::detail {

struct ExpressionLayer {
  Expression expression;
  std::vector<Shape> shapes;  // the inputs'
  Shape out_shape;
  Dtype dtype = Dtype::fp32;
};

// Parses and checks the layer; throws Error naming the formula and the
// column of what is wrong (the caller names the layer).
ExpressionLayer expression_layer(const nlohmann::ordered_json &params, const std::vector<Shape> &shapes,
                                 const std::vector<Dtype> &dtypes);

// The reference: each operation rounded to the dtype
// (Expression::evaluate_rounded: exact, then wrapped, for an integer dtype),
// in doubles, which hold every integer value exactly.
void expression_reference(const ExpressionLayer &layer, const std::vector<const double *> &ins,
                          std::vector<double> &out);

// Runs the fused kernel on the open emulator (the builder records it).
void expression_run_global(const nlohmann::ordered_json &params, Dtype dtype, const std::vector<tensor_spec_t> &inputs,
                           const tensor_spec_t &output);

// Layer groups: a builtin.expression layer joins a group as a local layer
// (element-wise: every slice's input rows are its output rows, no halo; N,
// H and W may be split). One input, of the output's shape, is the group's
// chain; the others are side inputs loaded into local memory by the group,
// broadcast ones compact (layer_groups.cc).
//
// Scratch bytes per NPU of a step whose slices take `slice_bytes` per NPU
// and which expands `expanded` broadcast inputs.
int expression_local_scratch(const nlohmann::ordered_json &params, Dtype dtype, uint64_t slice_bytes,
                             int expanded = 0);
// One step on the open emulator: input i's slice at inputs[i] (a full
// slice, or a broadcast one to expand), the output slice at `output`, an
// [n, c, h, w] slice in the aligned layout; the scratch at `scratch`.
void expression_run_local(const nlohmann::ordered_json &params, Dtype dtype, const int shape[4],
                          const std::vector<ExprLocalInput> &inputs, uint32_t output, uint32_t scratch,
                          uint64_t slice_bytes);

}  // namespace tpu_runtime::detail
