// onnx_lowering.h (private): what the standard ops' converters share
// across files: the converter table's type, the layer-emitting helpers of
// onnx_standard_ops.cc, and the tables of the later op families
// (onnx_math_ops.cc, onnx_index_ops.cc, onnx_layout_ops.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "onnx/onnx_graph.h"

namespace tpu_runtime::onnx_import {

using Converter = std::function<void(Node &)>;
using ConverterTable = std::map<std::string, Converter>;

// An axis in [-rank, rank) made non-negative, refused naming `what`.
int64_t normalized_axis(Node &node, int64_t axis, std::size_t rank, std::string_view what);

// An element-wise formula over tensors (bound to x0, x1, ...) as one
// builtin.expression layer into `output` (a new tensor when empty);
// returns the output's name.
std::string emit_formula(Node &node, const std::string &formula, const std::vector<std::string> &inputs,
                         std::string output = {});

// A tensor and the dtype the net holds it in.
struct TypedTensor {
  std::string name;
  Dtype dtype;
};

// An expression run in fp32 into output 0 of type `dtype`: fp16 / bf16
// operands are cast in and the result cast back (a few roundings in a
// short type would lose digits).
void emit_fp32_formula(Node &node, const std::string &formula, const std::vector<TypedTensor> &operands, Dtype dtype);

// Input i as the net holds it (a constant as a weight), broadcast to output
// 0's shape by a builtin.broadcast when it differs.
std::string broadcast_input(Node &node, int i);

enum class ReduceKind { max, mean, sum };

// The reduction of `input` (dims `in`) over `axes` (normalized, sorted),
// keeping them as dims of 1, into `output` (a new tensor when empty): the
// axes moved last, a [1, R] pool (max, mean) or a depthwise convolution
// with ones (sum). Returns the output's name.
std::string emit_reduce(Node &node, const std::string &input, const std::vector<int64_t> &in,
                        const std::vector<int64_t> &axes, ReduceKind kind, std::string output = {});

// The op families beyond issue 33's first table, each adding its converters.
void add_math_converters(ConverterTable &table);    // Floor, Ceil, Round, Sin, Cos, Mod, IsNaN, IsInf, ...
void add_index_converters(ConverterTable &table);   // ArgMax, ArgMin
void add_layout_converters(ConverterTable &table);  // Pad, Tile, Trilu, DepthToSpace, SpaceToDepth, InstanceNormalization
// Whether one of those families' ops takes integer (and bool) tensors
// (onnx_types.cc's takes_integers lists the first table's).
bool later_op_takes_integers(const std::string &op_type);

}  // namespace tpu_runtime::onnx_import
