// builtin_kernels.cc: the built-in ops' global kernels (builtin_kernels.h).
//
// Element-wise: the output's 4-d view is cut into tiles that fit half of
// local memory per NPU (every dim at most 65535, the engines' limit); per
// tile each operand is loaded with its own global strides (a zero stride
// repeats a broadcast operand), the BDC command runs in place on operand 0,
// and the tile is stored. Concat: one strided system-to-system copy per
// input and chunk, no local memory.
#include "builtin_kernels.h"

#include <fmt/format.h>

#include <algorithm>

#include "model_internal.h"

namespace tpu_runtime::detail {
namespace {

constexpr int64_t kMaxDim = 65535;

int64_t align_up(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

dim4 make_dim4(int64_t n, int64_t c, int64_t h, int64_t w) { return {int(n), int(c), int(h), int(w)}; }

// Tile extents for a [N, C, H, W] view: W first, then H, then C across the
// NPUs, so each tile is as long as local memory allows.
struct Tile {
  int64_t c = 1, h = 1, w = 1;
};

Tile choose_tile(const int64_t dims[4], data_type_t dtype, int64_t budget_bytes) {
  const int64_t esize = tpu_data_type_size(dtype);
  Tile t;
  t.w = std::min({dims[3], kMaxDim, budget_bytes / esize});
  t.h = std::min({dims[2], kMaxDim, budget_bytes / (t.w * esize)});
  // A channel's plane starts on an EU boundary (the compact local layout).
  const int64_t plane = align_up(t.h * t.w, tpu_eu_num(dtype)) * esize;
  t.c = std::min({dims[1], kMaxDim, budget_bytes / plane * tpu_npu_num()});
  return t;
}

uint64_t element_addr(uint64_t base, const int64_t stride[4], int64_t n, int64_t c, int64_t h, int64_t w,
                      int64_t esize) {
  return base + uint64_t((n * stride[0] + c * stride[1] + h * stride[2] + w * stride[3]) * esize);
}

void compute_tile(const ElementwiseArgs &a, local_addr_t x, local_addr_t y, const dim4 &shape, scalar_t C) {
  switch (a.kind) {
    case ElementwiseKind::relu:
      tpu_bdc_relu(x, x, &shape, nullptr, nullptr, a.dtype);
      return;
    case ElementwiseKind::add:
      if (a.has_scalar) tpu_bdc_fp_add_C(x, x, C, &shape, nullptr, nullptr, a.dtype);
      else tpu_bdc_fp_add(x, x, y, &shape, nullptr, nullptr, nullptr, a.dtype);
      return;
    case ElementwiseKind::mul:
      if (a.has_scalar) tpu_bdc_fp_mul_C(x, x, C, &shape, nullptr, nullptr, a.dtype);
      else tpu_bdc_fp_mul(x, x, y, &shape, nullptr, nullptr, nullptr, a.dtype);
      return;
    case ElementwiseKind::sub:
      if (!a.has_scalar) tpu_bdc_fp_sub(x, x, y, &shape, nullptr, nullptr, nullptr, a.dtype);
      else if (a.scalar_first) tpu_bdc_fp_C_sub(x, x, C, &shape, nullptr, nullptr, a.dtype);
      else tpu_bdc_fp_sub_C(x, x, C, &shape, nullptr, nullptr, a.dtype);
      return;
  }
}

// The 4-d tiles of one [n, c, h, w] block whose first elements are at
// out_base and in_base[i].
void elementwise_block(const ElementwiseArgs &a, const int64_t dims[4], uint64_t out_base, const uint64_t in_base[2],
                       scalar_t C) {
  const int64_t esize = tpu_data_type_size(a.dtype);
  const int64_t half = tpu_local_mem_size_per_npu() / 2;  // operand 1 in the other half: another bank
  const local_addr_t buffers[2] = {0, local_addr_t(half)};
  const Tile t = choose_tile(dims, a.dtype, half);
  const int64_t out_stride[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
  const int inner = kElementwiseDims - 4;
  for (int64_t n = 0; n < dims[0]; ++n)
    for (int64_t c = 0; c < dims[1]; c += t.c)
      for (int64_t h = 0; h < dims[2]; h += t.h)
        for (int64_t w = 0; w < dims[3]; w += t.w) {
          const dim4 shape =
              make_dim4(1, std::min(t.c, dims[1] - c), std::min(t.h, dims[2] - h), std::min(t.w, dims[3] - w));
          for (int i = 0; i < a.operands; ++i) {
            const int64_t *s = a.in_stride[i] + inner;
            const dim4 stride = make_dim4(s[0], s[1], s[2], s[3]);
            tpu_gdma_cpy_S2L(buffers[i], element_addr(in_base[i], s, n, c, h, w, esize), &shape, nullptr, &stride,
                             a.dtype);
          }
          compute_tile(a, buffers[0], buffers[1], shape, C);
          const dim4 stride = make_dim4(out_stride[0], out_stride[1], out_stride[2], out_stride[3]);
          tpu_gdma_cpy_L2S(element_addr(out_base, out_stride, n, c, h, w, esize), buffers[0], &shape, &stride,
                           nullptr, a.dtype);
        }
}

void elementwise_kernel(const void *arg) {
  const ElementwiseArgs &a = *static_cast<const ElementwiseArgs *>(arg);
  const int64_t esize = tpu_data_type_size(a.dtype);
  scalar_t C;
  C.f32 = a.scalar;
  if (a.dtype != DT_FP32) C = tpu_fp_cast(C, a.dtype, DT_FP32, RM_HALF_TO_EVEN);
  // The leading dims are walked here, one [n, c, h, w] block each.
  const int outer = kElementwiseDims - 4;
  const int64_t *inner_dims = a.dims + outer;
  const int64_t block = inner_dims[0] * inner_dims[1] * inner_dims[2] * inner_dims[3];
  int64_t blocks = 1;
  for (int d = 0; d < outer; ++d) blocks *= a.dims[d];
  for (int64_t b = 0; b < blocks; ++b) {
    uint64_t in_base[2] = {a.in_addr[0], a.in_addr[1]};
    for (int64_t rest = b, d = outer; d-- > 0; rest /= a.dims[d]) {
      const int64_t index = rest % a.dims[d];
      for (int i = 0; i < a.operands; ++i) in_base[i] += uint64_t(index * a.in_stride[i][d] * esize);
    }
    elementwise_block(a, inner_dims, a.out_addr + uint64_t(b * block * esize), in_base, C);
  }
}

void concat_kernel(const void *arg) {
  const ConcatArgs &a = *static_cast<const ConcatArgs *>(arg);
  const int64_t esize = tpu_data_type_size(a.dtype);
  int64_t offset = 0;  // along the middle dim of the output
  for (int i = 0; i < a.inputs; ++i) {
    const int64_t mid = a.in_mid[i];
    const int64_t src_stride[4] = {mid * a.inner, a.inner, 0, 1};
    const int64_t dst_stride[4] = {a.out_mid * a.inner, a.inner, 0, 1};
    for (int64_t o = 0; o < a.outer; o += kMaxDim)
      for (int64_t m = 0; m < mid; m += kMaxDim)
        for (int64_t w = 0; w < a.inner; w += kMaxDim) {
          const dim4 shape = make_dim4(std::min(kMaxDim, a.outer - o), std::min(kMaxDim, mid - m), 1,
                                       std::min(kMaxDim, a.inner - w));
          const dim4 src = make_dim4(src_stride[0], src_stride[1], shape.w, 1);
          const dim4 dst = make_dim4(dst_stride[0], dst_stride[1], shape.w, 1);
          tpu_gdma_cpy_S2S(element_addr(a.out_addr, dst_stride, o, offset + m, 0, w, esize),
                           element_addr(a.in_addr[i], src_stride, o, m, 0, w, esize), &shape, &dst, &src, a.dtype);
        }
    offset += mid;
  }
}

}  // namespace

void run_elementwise_kernel(const ElementwiseArgs &args) {
  run_on_emulator("the element-wise kernel failed", [&] { elementwise_kernel(&args); });
}

void run_concat_kernel(const ConcatArgs &args) {
  run_on_emulator("the concat kernel failed", [&] { concat_kernel(&args); });
}

}  // namespace tpu_runtime::detail
