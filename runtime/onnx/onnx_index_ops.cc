// onnx_index_ops.cc: ArgMax and ArgMin (onnx_lowering.h
// add_index_converters; docs/onnx.md).
//
// In fp32 (every input type they take is exact there): the maximum along
// the axis (emit_reduce, a max pool; ArgMin on -x), then per element
// where(x == max, key, floor) with a constant key per position along the
// axis, then the maximum of the keys: the first maximal position is the
// largest of -position (floor -R), the last one the largest position
// (floor -1). The index is cast to int32 (int64 held as int32) and the
// axis dropped without keepdims. Positions are exact in fp32 (R < 2^24).
#include <fmt/format.h>

#include "onnx/onnx_lowering.h"

namespace tpu_runtime::onnx_import {
namespace {

void convert_arg_extreme(Node &node, bool max) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  const Dtype d = node.dtype(false, -1, 0);  // the output is int64
  if (!dtype_info(d).is_float && dtype_size(d) == 4)
    node.fail(fmt::format("input '{}' is {}: {} takes float and 8- or 16-bit integer tensors (compared in fp32, "
                          "which does not hold every 32-bit integer)",
                          node.input(0), elem_type_name(node.info(node.input(0)).elem_type), node.op_type()));
  const std::vector<int64_t> in = node.input_dims(0);
  if (in.empty()) node.fail("the input is a scalar; the axis needs at least one dim");
  const int64_t axis = normalized_axis(node, node.attr_int("axis", 0), in.size(), "attribute 'axis'");
  const bool keepdims = node.attr_int("keepdims", 1) != 0, last = node.attr_int("select_last_index", 0) != 0;
  const int64_t size = in[std::size_t(axis)];
  if (size >= (int64_t(1) << 24)) node.fail(fmt::format("axis {} has {} elements; at most 2^24", axis, size));
  std::string x = node.data_input(0);
  if (d != Dtype::fp32) x = node.emit_cast(x, Dtype::fp32);
  if (!max) x = emit_formula(node, "-x0", {x});
  const std::string extreme = emit_reduce(node, x, in, {axis}, ReduceKind::max);
  std::vector<int64_t> key_dims(in.size(), 1);
  key_dims[std::size_t(axis)] = size;
  std::vector<double> keys;
  for (int64_t i = 0; i < size; ++i) keys.push_back(last ? double(i) : -double(i));
  const std::string key = node.add_weight("positions", key_dims, Dtype::fp32, keys);
  const std::string floor = last ? "-1" : fmt::format("-{}", size);
  // A NaN is the extreme (the pool's maximum propagates it), found by x != x: numpy's first NaN.
  const std::string candidates =
      emit_formula(node, fmt::format("where(max(x0 == x1, x0 != x0), x2, {})", floor), {x, extreme, key});
  std::string found = emit_reduce(node, candidates, in, {axis}, ReduceKind::max);
  if (!last) found = emit_formula(node, "-x0", {found});
  const std::vector<int64_t> out = node.output_dims(0);
  if (keepdims) {
    node.emit_cast(found, Dtype::int32, node.output(0));
    return;
  }
  if (out.empty()) node.fail(fmt::format("output '{}' is a scalar (rank 0), which a layer cannot produce", node.output(0)));
  const std::string index = node.emit_cast(found, Dtype::int32);
  node.emit("builtin.reshape", {{"shape", out}}, {index}, {node.output(0)});
}

}  // namespace

void add_index_converters(ConverterTable &table) {
  table["ArgMax"] = [](Node &n) { convert_arg_extreme(n, true); };
  table["ArgMin"] = [](Node &n) { convert_arg_extreme(n, false); };
}

}  // namespace tpu_runtime::onnx_import
