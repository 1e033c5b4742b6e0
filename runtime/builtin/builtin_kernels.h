// builtin_kernels.h (private): the global kernels of the built-in ops
// (builtin_ops.h), written against the kernel API like a user's kernel.
//
// The arguments are plain data: a failing tpu_* call leaves the kernel by
// longjmp (cmodel_run), so nothing the kernel touches may need a destructor.
#pragma once

#include <cstdint>

#include "tpu_kernel.h"

namespace tpu_runtime::detail {

enum class ElementwiseKind { add, sub, mul, relu };

// Dims of the element-wise view: the last four are the engines' n, c, h, w;
// the kernel loops over the others.
inline constexpr int kElementwiseDims = 8;

// out = a op b over an 8-d view of the output (compact); each operand is
// read with its own global strides (in elements; 0 along a broadcast dim).
struct ElementwiseArgs {
  ElementwiseKind kind = ElementwiseKind::add;
  data_type_t dtype = DT_FP32;
  int64_t dims[kElementwiseDims] = {1, 1, 1, 1, 1, 1, 1, 1};
  uint64_t out_addr = 0;
  int operands = 1;  // 1 (relu, or with a scalar) or 2
  uint64_t in_addr[2] = {0, 0};
  int64_t in_stride[2][kElementwiseDims] = {};
  bool has_scalar = false;
  bool scalar_first = false;  // scalar op tensor, rather than tensor op scalar
  float scalar = 0;           // rounded to `dtype` (nearest even) by the kernel
};

// The inputs of a concat, each [outer, mid_i, inner], copied side by side
// along the middle dim of the output [outer, sum(mid_i), inner].
struct ConcatArgs {
  data_type_t dtype = DT_FP32;
  int64_t outer = 1, inner = 1, out_mid = 0;
  uint64_t out_addr = 0;
  int inputs = 0;
  const uint64_t *in_addr = nullptr;
  const int64_t *in_mid = nullptr;
};

// A strided view of a tensor copied into a compact output (transpose,
// slice, broadcast): output element [i0..i8] = input element at
// in_offset + sum(i_k * in_stride[k]) (elements; a stride may be 0). Dims
// of 1 lead. The GDMA takes a w-stride of at most 128 bytes: a view whose
// last dim strides further ends in a dim of 1 (then the last real dim is
// the command's h). System-to-system copies, no local memory.
inline constexpr int kStridedCopyDims = 9;

struct StridedCopyArgs {
  data_type_t dtype = DT_FP32;
  int64_t dims[kStridedCopyDims] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  int64_t in_stride[kStridedCopyDims] = {};
  int64_t in_offset = 0;
  uint64_t in_addr = 0, out_addr = 0;
};

// `count` elements converted from one float type to another (nearest
// even), through local memory.
struct CastArgs {
  data_type_t src_dtype = DT_FP32, dst_dtype = DT_FP32;
  int64_t count = 1;
  uint64_t in_addr = 0, out_addr = 0;
};

// Rows gathered at run time: data [outer, rows, inner], indices `count`
// int32 values (the ONNX importer made negative ones positive), output
// [outer, count, inner]; one GDMA row gather (tpu_gdma_h_gather_S2S) per
// chunk of at most 65535 along each. An index outside [0, rows) gives a
// row of zeros (the engine's fill value).
struct GatherArgs {
  data_type_t dtype = DT_FP32;
  int64_t outer = 1, rows = 1, inner = 1, count = 1;
  uint64_t data_addr = 0, index_addr = 0, out_addr = 0;
};

// A 2-d convolution, NCHW: input [n, ic, ih, iw], weight [oc, ic / group,
// kh, kw] (OIHW), optional bias [oc], output [n, oc, oh, ow]; all of
// `dtype`, compact in global memory. Every pad <= 15, stride and dilation
// in 1..15 (the engine's limits; builtin_infer() checks them).
//
// The same tiling runs 2-d pooling (kind max_pool / avg_pool: no weight or
// bias, oc = ic, dilation 1): max with -inf padding, avg the sum of the
// window times 1 / (kh kw), padding counted (count_include_pad).
//
// kind slice (a layer group's builtin.slice along H and W only): output
// element (y, x) is input (start_h + y stride_h, start_w + x stride_w),
// start_h given as -pad_top (so the rows map like a window's of kh = 1),
// start_w as -pad_left.
enum class WindowKind { conv, max_pool, avg_pool, slice };

struct ConvArgs {
  WindowKind kind = WindowKind::conv;
  data_type_t dtype = DT_FP32;
  int64_t n = 1, ic = 1, ih = 1, iw = 1, oc = 1, oh = 1, ow = 1;
  int kh = 1, kw = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t group = 1;
  uint64_t in_addr = 0, weight_addr = 0, out_addr = 0;
  uint64_t bias_addr = 0;  // 0: no bias
  // A matmul's views (all 0: compact): element strides of the input and
  // output [n, c, h, w], and of a 1x1 weight per output and input channel.
  int64_t in_stride[4] = {}, out_stride[4] = {};
  int64_t weight_o_stride = 0, weight_i_stride = 0;
};

// A batch of matrix products y[b] = a[b] · w[b] (+ bias), each a 1x1 conv
// of the input [1, K, M, 1] (a's columns as channels) with the weight [N,
// K, 1, 1], read and written through strides, so a transposed or shared
// operand costs no copy. `conv` holds the first product (addresses and
// strides); the others add their offsets (bytes) to its addresses.
struct MatmulArgs {
  ConvArgs conv;
  int64_t batches = 1;
  const uint64_t *a_offset = nullptr, *b_offset = nullptr, *y_offset = nullptr;
};

// A padded copy of a tensor for an op's input layout (metadata_<op>'s
// innermost_multiple): `rows` rows of `extent` elements, contiguous at
// `src`, to rows of `pitch` elements at `dst`, the padding zeroed.
struct PadRowsArgs {
  data_type_t dtype = DT_FP32;
  uint64_t dst = 0, src = 0;
  int64_t rows = 1;
  int extent = 1, pitch = 1;  // each at most 65535
};

// A 4-d tensor [n, c, h, w] copied into the middle of [n, c, h + top +
// bottom, w + left + right], the border filled with `value` (any float,
// -inf included; rounded to `dtype`). System-to-system, no local memory:
// a pad too wide for the engines' 4-bit conv and pool padding.
struct Pad2dArgs {
  data_type_t dtype = DT_FP32;
  int64_t planes = 1, ih = 1, iw = 1;  // planes: n c
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  float value = 0;
  uint64_t in_addr = 0, out_addr = 0;
};

// Run on the open emulator; throw Error with its message on a failure.
void run_elementwise_kernel(const ElementwiseArgs &args);
void run_pad_rows_kernel(const PadRowsArgs &args);
void run_pad2d_kernel(const Pad2dArgs &args);
void run_concat_kernel(const ConcatArgs &args);
void run_strided_copy_kernel(const StridedCopyArgs &args);
void run_cast_kernel(const CastArgs &args);
// builtin.cast's local version in a layer group: the slice [n, c, h, w] at
// `in` (local memory, the aligned layout of `src`) converted into `out`
// (aligned for `dst`), by run_cast_kernel's rules.
void run_cast_local(data_type_t src, uint32_t in, data_type_t dst, uint32_t out, const int shape[4]);
void run_gather_kernel(const GatherArgs &args);

// The local versions of conv2d (group 1 or depthwise), the pools, a 2-d
// matmul (a 1x1 conv) and a slice along H and W in a layer group. `a` describes the whole layer
// (weight_addr / bias_addr in global memory; in_addr / out_addr unused); a
// slice holds n batches, input rows [in_row0, in_row0 + in_rows) and output
// rows [out_row0, out_row0 + out_rows), every channel and column, in the
// aligned layout. The weights and bias stay in local memory for the whole
// group ("resident", window_resident_bytes per NPU at `resident`), loaded
// once before its first slice.
struct WindowSlice {
  int n = 1, in_row0 = 0, in_rows = 1, out_row0 = 0, out_rows = 1;
};
// The input rows output rows [out_first, out_first + out_count) read,
// clipped to the input (the rest is padding); a window of padding only
// gives one row nearby (never empty), which the kernel does not read.
void window_input_rows(const ConvArgs &a, int out_first, int out_count, int *first, int *count);
uint32_t window_resident_bytes(const ConvArgs &a);  // needs the emulator open
void run_window_load_resident(const ConvArgs &a, uint32_t resident);
void run_window_local(const ConvArgs &a, uint32_t resident, uint32_t in, uint32_t out, const WindowSlice &slice);
void run_conv_kernel(const ConvArgs &args);
void run_matmul_kernel(const MatmulArgs &args);

}  // namespace tpu_runtime::detail
