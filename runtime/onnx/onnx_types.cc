// onnx_types.cc: how ONNX element types are held on the device
// (onnx_graph.h; docs/onnx.md "Element types").
//
//   float, float16, bfloat16       as themselves
//   double                         fp32 (computed in fp32; the conformance
//                                  script states the tolerance it accepts)
//   int8, uint8, int16, uint16,    as themselves (the BDC's integer
//   int32, uint32                  arithmetic, wrapping like numpy)
//   int64, uint64                  int32, uint32: a constant that they
//                                  cannot hold is refused at import naming
//                                  it, a graph input's values are checked
//                                  at run (detail::narrowed_inputs)
//   bool                           0 / 1: a graph input or constant as
//                                  uint8, a computed bool in the dtype of
//                                  the operands that made it; a node that
//                                  reads it in another dtype gets a cast
//                                  (0 and 1 are exact in every dtype)
//
// Every other type (uint64, string, complex, float8) is refused naming the
// tensor.
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "onnx/onnx_graph.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::onnx_import {
namespace {

using onnx::TensorProto;

template <typename T>
void store(std::vector<uint8_t> &bytes, std::size_t i, T value) {
  std::memcpy(bytes.data() + i * sizeof(T), &value, sizeof(T));
}

}  // namespace

std::optional<Dtype> device_dtype(int elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT: case TensorProto::DOUBLE: return Dtype::fp32;
    case TensorProto::FLOAT16: return Dtype::fp16;
    case TensorProto::BFLOAT16: return Dtype::bf16;
    case TensorProto::INT8: return Dtype::int8;
    case TensorProto::UINT8: case TensorProto::BOOL: return Dtype::uint8;
    case TensorProto::INT16: return Dtype::int16;
    case TensorProto::UINT16: return Dtype::uint16;
    case TensorProto::INT32: case TensorProto::INT64: return Dtype::int32;
    case TensorProto::UINT32: case TensorProto::UINT64: return Dtype::uint32;
    default: return std::nullopt;
  }
}

const char *device_types_text() {
  return "float, float16, bfloat16, double (as fp32), int8, uint8, int16, uint16, int32, uint32, int64 (as int32), "
         "uint64 (as uint32), bool (as 0 / 1)";
}

bool takes_integers(const std::string &op_type) {
  static const std::set<std::string> ops = {
      "Add",     "Sub",     "Mul",     "Div",       "Equal",   "Less",   "LessOrEqual", "Greater", "GreaterOrEqual",
      "And",     "Or",      "Xor",     "Not",       "Where",   "Neg",    "Abs",         "Relu",    "Sign",
      "Max",     "Min",     "Sum",     "Clip",      "Reshape", "Flatten", "Squeeze",    "Unsqueeze", "Identity",
      "Dropout", "Concat",  "Transpose", "Slice",   "Split",   "Gather", "Expand",      "Cast",
      "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2",
      "ReduceLogSum", "ReduceLogSumExp",  // the reductions other than Sum, Max, Min refuse integers by name
      "MaxPool",                          // int8 and uint8 (ONNX's), pooled in fp32 exactly
      "Pow"};                             // int32 and int64 bases: builtin.int_pow
  return ops.count(op_type) > 0;
}

int64_t saturated_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

std::vector<int64_t> saturated_int64s(const std::vector<double> &values) {
  std::vector<int64_t> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(saturated_int64(v));
  return out;
}

std::vector<uint8_t> device_bytes(const ConstTensor &c, Dtype dtype, const std::string &where) {
  std::vector<uint8_t> bytes(c.values.size() * dtype_size(dtype));
  if (dtype_info(dtype).is_float) {  // fp32 bytes: the weight's data_dtype, rounded into fp16 / bf16 by the builder
    bytes.resize(c.values.size() * sizeof(float));
    for (std::size_t i = 0; i < c.values.size(); ++i) store(bytes, i, float(c.values[i]));
    return bytes;
  }
  const auto [low, high] = integer_range(dtype);
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    const double v = c.values[i];
    if (v != std::nearbyint(v) || v < low || v > high)
      throw Error(fmt::format("{}: element {} is {}, which {} cannot hold{}", where, i, v, dtype_name(dtype),
                              c.elem_type == TensorProto::INT64    ? " (the device holds int64 tensors as int32)"
                              : c.elem_type == TensorProto::UINT64 ? " (the device holds uint64 tensors as uint32)"
                                                                   : ""));
    switch (dtype) {
      case Dtype::int8: store(bytes, i, int8_t(v)); break;
      case Dtype::uint8: store(bytes, i, uint8_t(v)); break;
      case Dtype::int16: store(bytes, i, int16_t(v)); break;
      case Dtype::uint16: store(bytes, i, uint16_t(v)); break;
      case Dtype::int32: store(bytes, i, int32_t(v)); break;
      default: store(bytes, i, uint32_t(v)); break;
    }
  }
  return bytes;
}

}  // namespace tpu_runtime::onnx_import
