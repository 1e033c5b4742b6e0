// elementwise_view.h (private): how an element-wise kernel walks tensors
// that broadcast like numpy, shared by the built-in element-wise ops
// (builtin_kernels.h) and the fused expression kernel (expression_kernel.h).
//
// elementwise_view() merges the output's dims into groups: adjacent dims
// merge when every operand broadcasts the same way along both, so a kernel
// walks as few dims as the broadcasting allows, each operand with its own
// stride per group (0 along a broadcast group). A view of one group (no
// broadcasting) is spread over the NPUs as [c, 1, n / c] (the kernels'
// c, h and w), c the largest divisor of n up to 64, so tiles fill many
// lanes.
//
// choose_tile() sizes a tile of the view's last four dims (n, c, h, w) for
// a local buffer: W first, then H, then C across the NPUs. It calls the
// kernel API (the emulator is open, inside a kernel).
#pragma once

#include <cstdint>
#include <vector>

#include "tpu_kernel.h"
#include "tpu_runtime/dtype.h"

namespace tpu_runtime::detail {

struct ElementwiseView {
  std::vector<int64_t> dims;                  // outermost first
  std::vector<std::vector<int64_t>> strides;  // per operand, per group, in elements
};

ElementwiseView elementwise_view(const Shape &out, const std::vector<Shape> &operands);

struct ElementwiseTile {
  int64_t c = 1, h = 1, w = 1;
};

// The largest [1, c, h, w] tile of dims[4] = {n, c, h, w} whose per-NPU
// bytes (each channel's plane on an EU boundary) fit `budget_bytes`.
ElementwiseTile choose_tile(const int64_t dims[4], data_type_t dtype, int64_t budget_bytes);

}  // namespace tpu_runtime::detail
