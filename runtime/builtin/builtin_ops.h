// builtin_ops.h (private): the SDK's own ops, for nets that mix custom ops
// with the few TpuLang built-ins the vendor's custom-op tests use.
//
// A layer whose op is "builtin.<name>" needs no custom-op library: its shape
// and dtype inference and its reference are computed here, and its global
// kernel (builtin_kernels.cc, written against the kernel API like any user
// kernel) runs on the emulator while the builder records it, so a built-in
// layer is always a static layer (a recorded command stream).
//
//   builtin.add / builtin.sub / builtin.mul
//       two tensors (numpy broadcasting, same dtype), or one tensor and
//       params {"scalar": x} (a scalar operand; {"scalar_first": 1} puts it
//       on the left, which matters for sub: x - tensor)
//   builtin.relu     one tensor
//   builtin.concat   one or more tensors, params {"axis": a} (negative
//                    counts from the end; default 0), equal dtypes and
//                    equal sizes off the axis
//   builtin.reshape  one tensor, params {"shape": [...]} (one dim may be -1)
//   builtin.conv2d   input [n, ic, ih, iw], weight [oc, ic / group, kh, kw],
//                    optional bias of oc elements; params "stride" [h, w],
//                    "dilation" [h, w] (each 1..15), "pads" [top, left,
//                    bottom, right] (each 0..15), "group" (divides ic and
//                    oc; group = ic = oc runs as a depthwise conv)
//   builtin.transpose  one tensor, params {"perm": [...]} (a permutation)
//   builtin.slice    one tensor, params "starts", "ends", "steps" (one int
//                    per dim: 0 <= start < end <= dim, step >= 1)
//   builtin.broadcast one tensor, params {"shape": [...]} (numpy broadcast_to)
//                    (the three: one strided GDMA copy kernel)
//   builtin.cast     one tensor, params {"to": "fp16"} (any dtype): to a
//                    float nearest even, float to integer toward zero
//                    (saturated), integer to integer wrapped; the output
//                    has dtype `to`
//   builtin.gather   data and int32 indices, params {"axis": a}: numpy's
//                    take at run-time indices (out of range: zeros)
//   builtin.maxpool2d / builtin.avgpool2d
//                    input [n, c, h, w]; params "kernel" [kh, kw], "stride"
//                    [h, w], "dilation" [h, w] (each 1..15), "pads" [top,
//                    left, bottom, right]; avg counts padding (divides by
//                    kh kw)
//   builtin.matmul   a [..., M, K], b [..., K, N], optional bias of N
//                    elements; params "transpose_a" / "transpose_b" (0 or
//                    1: a given as [..., K, M], b as [..., N, K]); batch
//                    dims broadcast (numpy); K, N <= 65535. One layer: each
//                    product a 1x1 conv on the matrix unit reading a and b
//                    through strides (fp32 accumulation, one rounding)
//   builtin.pad2d    input [n, c, h, w]; params "pads" [top, left, bottom,
//                    right] (each 0..65535), "value" (the border's, a
//                    number; default 0) or "lowest": 1 (-inf); the
//                    importer's padding beyond the engines' 15
//   builtin.int_pow  base x (int32) and exponent y (int32 or uint32) of one
//                    shape: x^y exactly, wrapped to int32 like numpy
//                    (square-and-multiply over y's bits; a negative y:
//                    builtin_int_pow.h); the ONNX importer's integer Pow
//   builtin.int_mod  dividend x and divisor y of one shape, both int32 or
//                    both uint32, params {"fmod": 0 or 1}: the exact
//                    remainder (long division; fmod 1 x's sign, 0 y's; a
//                    zero divisor gives 0: builtin_int_mod.h); the ONNX
//                    importer's 32- and 64-bit integer Mod
//   builtin.sin / builtin.cos / builtin.tan / builtin.asin / builtin.acos
//                    one fp32 tensor: the BDC's fp32 functions
//                    (builtin_math.h); the ONNX importer's Sin, Cos, ...
//   builtin.expression
//                    one or more tensors, params {"formula": "x*x + y*z"}
//                    and optionally {"names": ["x", "y", "z"]} (the order
//                    the inputs bind in; default: the formula's names in
//                    the order they first appear); one fused kernel
//                    (runtime/expression/, docs/expressions.md)
//
// Layer groups: add, sub, mul and relu run as their expression form, cast
// and expression have local versions, and so do conv2d (group 1 or
// depthwise), the pools, a 2-d matmul and a slice along H and W
// (builtin_window_local below, docs/layer-groups.md).
//
// Element types: fp32, fp16 and bf16; the copies (reshape, concat,
// transpose, slice, broadcast, gather) and cast take integer types too, and
// expression computes on them. The output has the inputs' dtype
// (builtin.cast's: its `to`).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api_common.h"
#include "builtin/builtin_kernels.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/custom_libraries.h"

namespace tpu_runtime::detail {

inline constexpr std::string_view kBuiltinPrefix = "builtin.";

bool is_builtin_op(std::string_view op);
// "builtin.add, builtin.sub, ..." for messages.
std::string builtin_op_list();

struct BuiltinTensor {
  Shape shape;
  Dtype dtype = Dtype::fp32;
};

// Checks the parameters and inputs of a built-in layer and returns its one
// output. Throws Error with the problem (the caller names the layer).
BuiltinTensor builtin_infer(std::string_view op, const nlohmann::ordered_json &params,
                            const std::vector<BuiltinTensor> &inputs);

// The reference: `ins` hold the inputs' values (as stored in their dtype),
// `out` receives the result before it is rounded to the output dtype.
// Doubles, so that integer values are exact at any magnitude: the copies,
// cast, gather, int_pow, int_mod and an integer expression compute on them exactly
// (an expression's int32 add, sub and mul wrap as numpy's); the float ops
// compute in float as before. builtin_infer() must have accepted the layer.
void builtin_reference(std::string_view op, const nlohmann::ordered_json &params,
                       const std::vector<BuiltinTensor> &inputs, const std::vector<const double *> &ins,
                       std::vector<double> &out);

// The builtin.expression params ({"formula", "names"}) computing the same
// values as an element-wise built-in layer (add, sub, mul, relu), or
// nothing: the local version such a layer runs with in a layer group (the
// expression's local kernel; IEEE operations round alike in both).
std::optional<nlohmann::ordered_json> builtin_expression_form(std::string_view op, const nlohmann::ordered_json &params);

// The local version (layer groups) of builtin.conv2d (group 1 or
// depthwise), maxpool2d, avgpool2d, a 2-d matmul (a [M, K] x b, a 1x1
// conv whose batches are a's rows) and a slice along H and W of the 4-d
// view (WindowKind::slice): the kernel arguments of the whole layer
// without addresses (bias_addr 1 when it has a bias), for window_input_rows
// and run_window_local (builtin_kernels.h). Nothing for other ops; nothing
// and `why` set when the layer's attributes have no local version. The
// layer must have passed builtin_infer().
std::optional<ConvArgs> builtin_window_local(std::string_view op, const nlohmann::ordered_json &params,
                                             const std::vector<BuiltinTensor> &inputs, std::string &why);

// Runs the layer's kernel on the open emulator (the builder records it);
// `dtype` is the inputs' and output's. Throws Error with the emulator's
// message when the kernel fails.
void builtin_run_global(std::string_view op, const nlohmann::ordered_json &params, Dtype dtype,
                        const std::vector<tensor_spec_t> &inputs, const tensor_spec_t &output);

}  // namespace tpu_runtime::detail
