// builtin_kernels.cc: the built-in ops' global kernels (builtin_kernels.h).
//
// Element-wise: the output's 4-d view is cut into tiles that fit half of
// local memory per NPU (every dim at most 65535, the engines' limit); per
// tile each operand is loaded with its own global strides (a zero stride
// repeats a broadcast operand), the BDC command runs in place on operand 0,
// and the tile is stored. Concat: one strided system-to-system copy per
// input and chunk, no local memory.
#include "builtin/builtin_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emulator/emulator.h"
#include "expression/elementwise_view.h"
#include "io/arrays.h"

namespace tpu_runtime::detail {
namespace {

constexpr int64_t kMaxDim = 65535;

int64_t align_up(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

dim4 make_dim4(int64_t n, int64_t c, int64_t h, int64_t w) { return {int(n), int(c), int(h), int(w)}; }

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
  const ElementwiseTile t = choose_tile(dims, a.dtype, half);
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

// The inner four dims per copy command (each cut to the engine's 65535),
// the outer ones walked through one counter.
void strided_copy_kernel(const StridedCopyArgs *a) {
  constexpr int outer = kStridedCopyDims - 4;
  const int64_t esize = tpu_data_type_size(a->dtype);
  int64_t out_stride[kStridedCopyDims];
  int64_t stride = 1;
  for (int k = kStridedCopyDims; k-- > 0;) out_stride[k] = stride, stride *= a->dims[k];
  const int64_t *d = a->dims + outer, *in = a->in_stride + outer, *out = out_stride + outer;
  const dim4 src_stride = make_dim4(in[0], in[1], in[2], in[3]), dst_stride = make_dim4(out[0], out[1], out[2], out[3]);
  int64_t blocks = 1;
  for (int k = 0; k < outer; ++k) blocks *= a->dims[k];
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t src = a->in_offset, dst = 0;
    for (int64_t rest = b, k = outer; k-- > 0; rest /= a->dims[k])
      src += rest % a->dims[k] * a->in_stride[k], dst += rest % a->dims[k] * out_stride[k];
    for (int64_t n = 0; n < d[0]; n += kMaxDim)
      for (int64_t c = 0; c < d[1]; c += kMaxDim)
        for (int64_t h = 0; h < d[2]; h += kMaxDim)
          for (int64_t w = 0; w < d[3]; w += kMaxDim) {
            const dim4 shape = make_dim4(std::min(kMaxDim, d[0] - n), std::min(kMaxDim, d[1] - c),
                                         std::min(kMaxDim, d[2] - h), std::min(kMaxDim, d[3] - w));
            const int64_t s = src + n * in[0] + c * in[1] + h * in[2] + w * in[3];
            const int64_t t = dst + n * out[0] + c * out[1] + h * out[2] + w * out[3];
            tpu_gdma_cpy_S2S(a->out_addr + uint64_t(t * esize), a->in_addr + uint64_t(s * esize), &shape, &dst_stride,
                             &src_stride, a->dtype);
          }
  }
}

// The elements as [1, c, 1, w] (c up to 64 lanes), tiled by local memory:
// each tile loaded in the source type into one half, converted by the BDC
// into the other half, stored in the destination type.
//
// ONNX's (numpy's) conversions: float to float and integer to float to
// nearest even; float to integer truncated toward zero (saturated beyond
// the type's range, NaN to 0: ONNX leaves those undefined); integer to
// integer keeps the low bits (two's-complement wrap), which the BDC's
// integer add of 0 without saturation gives (its cast saturates).
void convert_tile(local_addr_t dst, local_addr_t src, const dim4 &shape, data_type_t to, data_type_t from) {
  if (tpu_is_data_type_int(from) && tpu_is_data_type_int(to)) {
    scalar_t zero;
    zero.u32 = 0;
    return tpu_bdc_int_add_C(dst, src, zero, &shape, nullptr, nullptr, to, from, DT_INT32, 0, RM_DOWN, false);
  }
  const rounding_mode_t mode = tpu_is_data_type_int(to) ? RM_TOWARDS_ZERO : RM_HALF_TO_EVEN;
  tpu_bdc_cast(dst, src, &shape, nullptr, nullptr, to, from, mode);
}

void cast_kernel(const CastArgs *a) {
  int64_t c = std::min<int64_t>(64, a->count);
  while (a->count % c) --c;
  const int64_t dims[4] = {1, c, 1, a->count / c};
  const bool wide_src = tpu_data_type_size(a->src_dtype) >= tpu_data_type_size(a->dst_dtype);
  const int64_t half = tpu_local_mem_size_per_npu() / 2;
  const ElementwiseTile t = choose_tile(dims, wide_src ? a->src_dtype : a->dst_dtype, half);
  const int64_t stride[4] = {dims[1] * dims[3], dims[3], dims[3], 1};
  const dim4 global = make_dim4(stride[0], stride[1], stride[2], stride[3]);
  const int64_t src_size = tpu_data_type_size(a->src_dtype), dst_size = tpu_data_type_size(a->dst_dtype);
  for (int64_t ch = 0; ch < dims[1]; ch += t.c)
    for (int64_t w = 0; w < dims[3]; w += t.w) {
      const dim4 shape = make_dim4(1, std::min(t.c, dims[1] - ch), 1, std::min(t.w, dims[3] - w));
      tpu_gdma_cpy_S2L(0, element_addr(a->in_addr, stride, 0, ch, 0, w, src_size), &shape, nullptr, &global,
                       a->src_dtype);
      convert_tile(local_addr_t(half), 0, shape, a->dst_dtype, a->src_dtype);
      tpu_gdma_cpy_L2S(element_addr(a->out_addr, stride, 0, ch, 0, w, dst_size), local_addr_t(half), &shape, &global,
                       nullptr, a->dst_dtype);
    }
}

// ---- convolution ---------------------------------------------------------------
//
// One group at a time (a depthwise conv, group = ic = oc, all channels at
// once through tpu_bdc_fp_depthwise2d): output channels in tiles whose
// weights stay in local memory, then batches and output rows in tiles
// whose input window fits beside them. Local memory per NPU, from 0: the
// weights, the bias (fp32 for the conv command, and its staging copy in the
// input dtype), the input tile, the output tile; each region starts on a
// 64-byte boundary (ALIGN_BYTES of both chips divides it).

constexpr int64_t kLocalAlign = 64;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct ConvPlan {
  bool depthwise = false;
  int64_t ic = 1, oc = 1;       // per group (depthwise: the channels of a tile)
  int64_t oc_tile = 1, n_tile = 1, oh_tile = 1;
  int64_t parallel = 1;         // P of the P-IC weight layout
  local_addr_t weight = 0, bias = 0, bias_stage = 0, input = 0, output = 0;
  int64_t end = 0;              // bytes used per NPU
};

int64_t window_rows(const ConvArgs &a, int64_t out_rows) {
  return (out_rows - 1) * a.stride_h + int64_t(a.dilation_h) * (a.kh - 1) + 1;
}

// Lays out local memory for tiles of oc_tile channels, n_tile batches and
// oh_tile output rows; end > local memory when they do not fit.
void lay_out(const ConvArgs &a, ConvPlan &p) {
  const int64_t npu = tpu_npu_num(), esize = tpu_data_type_size(a.dtype), eu = tpu_eu_num(a.dtype);
  const int64_t oc_rows = ceil_div(p.oc_tile, npu);  // channels per NPU
  int64_t at = 0;
  p.weight = local_addr_t(at);
  at += p.depthwise ? oc_rows * a.kh * a.kw * esize : oc_rows * align_up(p.ic, p.parallel) * a.kh * a.kw * esize;
  at = align_up(at, kLocalAlign);
  p.bias = local_addr_t(at);
  at = align_up(at + oc_rows * 4, kLocalAlign);
  p.bias_stage = local_addr_t(at);
  at = align_up(at + oc_rows * esize, kLocalAlign);
  p.input = local_addr_t(at);
  const int64_t in_rows = std::min<int64_t>(window_rows(a, p.oh_tile), a.ih);
  at = align_up(at + p.n_tile * ceil_div(p.ic, npu) * align_up(in_rows * a.iw, eu) * esize, kLocalAlign);
  p.output = local_addr_t(at);
  at += p.n_tile * oc_rows * align_up(p.oh_tile * a.ow, eu) * esize;
  p.end = at;
}

// The largest tiles that fit: all output channels of a group if possible
// (else a multiple of the NPU count), then output rows, then batches.
bool plan_conv(const ConvArgs &a, ConvPlan &p) {
  const int64_t npu = tpu_npu_num(), size = tpu_local_mem_size_per_npu();
  p.depthwise = a.kind != WindowKind::conv || (a.group > 1 && a.group == a.ic && a.group == a.oc);
  p.ic = p.depthwise ? a.ic : a.ic / a.group;
  p.oc = p.depthwise ? a.oc : a.oc / a.group;
  p.parallel = p.depthwise ? 1 : tpu_get_ic_parallel(a.dtype);
  p.n_tile = p.oh_tile = 1;
  p.oc_tile = std::min(p.oc, kMaxDim / npu * npu);
  auto fits = [&] {
    if (p.depthwise) p.ic = p.oc_tile;  // a depthwise tile's input channels are its output channels
    lay_out(a, p);
    return p.end <= size;
  };
  while (!fits()) {
    if (p.oc_tile <= npu) return false;
    p.oc_tile = std::max(npu, ceil_div(p.oc_tile / 2, npu) * npu);
  }
  for (int64_t step = a.oh; step >= 1 && p.oh_tile < a.oh; step /= 2) {  // grow while it fits
    while (p.oh_tile + step <= std::min<int64_t>(a.oh, kMaxDim)) {
      p.oh_tile += step;
      if (!fits()) {
        p.oh_tile -= step;
        break;
      }
    }
  }
  if (p.oh_tile == a.oh)
    for (int64_t step = a.n; step >= 1 && p.n_tile < a.n; step /= 2)
      while (p.n_tile + step <= std::min<int64_t>(a.n, kMaxDim)) {
        p.n_tile += step;
        if (!fits()) {
          p.n_tile -= step;
          break;
        }
      }
  return fits();
}

dim4 compact_stride(const dim4 &shape) { return {shape.c * shape.h * shape.w, shape.h * shape.w, shape.w, 1}; }

// A matmul's 1x1 weight through its strides: channel o's row holds its ic
// weights (in the P-IC layout of one tap, the same order), the slots up to
// a multiple of P zeroed.
void load_strided_weights(const ConvArgs &a, const ConvPlan &p, int64_t o0, int64_t oc) {
  const int64_t esize = tpu_data_type_size(a.dtype), row = align_up(p.ic, p.parallel);
  if (row != p.ic) {
    const dim4 shape = make_dim4(1, oc, 1, row);
    const dim4 stride = make_dim4(row, row, row, 1);
    tpu_bdc_set_C(p.weight, scalar_t{}, &shape, &stride, a.dtype);
  }
  const dim4 shape = make_dim4(1, oc, p.ic, 1);
  const dim4 dst = make_dim4(row, row, 1, 1);
  const dim4 src = make_dim4(0, a.weight_o_stride, a.weight_i_stride, 1);  // n = 1: no n stride
  tpu_gdma_cpy_S2L(p.weight, a.weight_addr + uint64_t(o0 * a.weight_o_stride * esize), &shape, &dst, &src, a.dtype);
}

// Loads the weights of output channels [o0, o0 + oc) of group g.
void load_conv_weights(const ConvArgs &a, const ConvPlan &p, int64_t g, int64_t o0, int64_t oc) {
  if (a.weight_o_stride) return load_strided_weights(a, p, o0, oc);
  const int64_t esize = tpu_data_type_size(a.dtype), taps = int64_t(a.kh) * a.kw;
  const int64_t icg = a.ic / a.group;  // weights per output channel and tap
  const uint64_t rows = a.weight_addr + uint64_t((g * p.oc + o0) * icg * taps * esize);
  if (p.depthwise) {  // compact (1, oc, kh, kw)
    const dim4 shape = make_dim4(1, oc, a.kh, a.kw);
    const dim4 stride = compact_stride(shape);
    tpu_gdma_cpy_S2L(p.weight, rows, &shape, &stride, &stride, a.dtype);
    return;
  }
  if (p.parallel == 1) {  // compact (1, oc, ic, kh kw): the global rows as they are
    const dim4 shape = make_dim4(1, oc, p.ic, taps);
    const dim4 stride = compact_stride(shape);
    tpu_gdma_cpy_S2L(p.weight, rows, &shape, &stride, &stride, a.dtype);
    return;
  }
  // P-IC: w[o][i][tap] at (i / P) taps P + tap P + i % P of channel o's row.
  const int64_t row = align_up(p.ic, p.parallel) * taps;
  if (p.ic % p.parallel != 0) {  // the slots past ic are read by the command: zeros, not stale data
    const dim4 shape = make_dim4(1, oc, 1, row);
    const dim4 stride = make_dim4(row, row, row, 1);
    tpu_bdc_set_C(p.weight, scalar_t{}, &shape, &stride, a.dtype);
  }
  for (int64_t i0 = 0; i0 < p.ic; i0 += p.parallel) {
    const dim4 shape = make_dim4(1, oc, taps, std::min(p.parallel, p.ic - i0));
    const dim4 dst = make_dim4(row, row, p.parallel, 1);
    const dim4 src = make_dim4(oc * p.ic * taps, p.ic * taps, 1, taps);
    tpu_gdma_cpy_S2L(p.weight + local_addr_t(i0 * taps * esize), rows + uint64_t(i0 * taps * esize), &shape, &dst,
                     &src, a.dtype);
  }
}

// Loads the bias of output channels [c0, c0 + count) (global indices):
// fp32 at p.bias for the conv command; the input dtype at p.bias_stage.
void load_conv_bias(const ConvArgs &a, const ConvPlan &p, int64_t c0, int64_t count) {
  const int64_t esize = tpu_data_type_size(a.dtype);
  const dim4 shape = make_dim4(1, count, 1, 1);
  const dim4 stride = make_dim4(count, 1, 1, 1);
  const uint64_t src = a.bias_addr + uint64_t(c0 * esize);
  tpu_gdma_cpy_S2L(p.bias_stage, src, &shape, &stride, &stride, a.dtype);
  if (a.dtype == DT_FP32) tpu_gdma_cpy_S2L(p.bias, src, &shape, &stride, &stride, a.dtype);
  else tpu_bdc_cast(p.bias, p.bias_stage, &shape, &stride, &stride, DT_FP32, a.dtype, RM_HALF_TO_EVEN);
}

// A tensor's global element strides: `given` (a matmul's view) or compact.
dim4 global_strides(const int64_t given[4], int64_t c, int64_t h, int64_t w) {
  if (given[1] == 0) return make_dim4(c * h * w, h * w, w, 1);
  return make_dim4(given[0], given[1], given[2], given[3]);
}

// The conv / pool command on local operands: `in` holds rows [lo, lo +
// in_shape.h) of the input (the padding the window reaches around them is
// `padding`), `out` receives the output tile.
void window_command(const ConvArgs &a, const ConvPlan &p, local_addr_t out, local_addr_t in, const dim4 &in_shape,
                    const padding_t &padding, int64_t oc) {
  const dim2 kernel = {a.kh, a.kw}, stride = {a.stride_h, a.stride_w}, dilation = {a.dilation_h, a.dilation_w};
  if (a.kind != WindowKind::conv) {
    scalar_t value;
    value.f32 = a.kind == WindowKind::max_pool ? -INFINITY : 1.0f / float(a.kh * a.kw);
    if (a.dtype != DT_FP32) value = tpu_fp_cast(value, a.dtype, DT_FP32, RM_HALF_TO_EVEN);
    if (a.kind == WindowKind::max_pool)
      tpu_bdc_fp_max_pool2d(out, in, &in_shape, &kernel, &padding, &stride, &dilation, a.dtype, value);
    else
      tpu_bdc_fp_avg_pool2d(out, in, &in_shape, &kernel, &padding, &stride, &dilation, a.dtype, value);
  } else if (p.depthwise)
    tpu_bdc_fp_depthwise2d(out, in, p.weight, p.bias_stage, &in_shape, &kernel, &padding, &stride, &dilation, a.dtype,
                           a.bias_addr != 0);
  else
    tpu_bdc_fp_conv2d(out, in, p.weight, p.bias, &in_shape, nullptr, int(oc), &kernel, &padding, &stride, &dilation,
                      a.dtype, a.dtype, a.bias_addr != 0, false);
}

// An output tile whose every tap reads padding: the bias (or 0; an average
// pool's too; a max pool's windows always hold an input element).
void padding_only_tile(const ConvArgs &a, const ConvPlan &p, local_addr_t out, const dim4 &out_shape) {
  scalar_t zero;
  zero.u32 = 0;
  tpu_bdc_set_C(out, zero, &out_shape, nullptr, a.dtype);
  if (a.bias_addr) {
    const dim4 bias_stride = make_dim4(0, 1, 0, 0);
    tpu_bdc_fp_add(out, out, p.bias_stage, &out_shape, nullptr, nullptr, &bias_stride, a.dtype);
  }
}

// Output rows [y0, y0 + rows) of batches [n0, n0 + n) and channels [c0,
// c0 + oc) of the output, from input channels [i0, i0 + p.ic).
void conv_rows(const ConvArgs &a, const ConvPlan &p, int64_t n0, int64_t n, int64_t y0, int64_t rows, int64_t i0,
               int64_t c0, int64_t oc) {
  const int64_t esize = tpu_data_type_size(a.dtype);
  const int64_t ic = p.depthwise ? oc : p.ic;
  // The input rows the window reads, clipped to the input; the rest is padding.
  const int64_t first = y0 * a.stride_h - a.pad_top, last = first + window_rows(a, rows) - 1;
  int64_t lo = std::max<int64_t>(first, 0), hi = std::min<int64_t>(last, a.ih - 1);
  const bool real = lo <= hi;
  int pad_top = int(lo - first), pad_bottom = int(last - hi);
  const dim4 out_shape = make_dim4(n, oc, rows, a.ow);
  const dim4 out_global = global_strides(a.out_stride, a.oc, a.oh, a.ow);
  const uint64_t out_addr = a.out_addr + uint64_t((n0 * out_global.n + c0 * out_global.c + y0 * out_global.h) * esize);
  if (!real) {
    padding_only_tile(a, p, p.output, out_shape);
    tpu_gdma_cpy_L2S(out_addr, p.output, &out_shape, &out_global, nullptr, a.dtype);
    return;
  }
  const dim4 in_shape = make_dim4(n, ic, hi - lo + 1, a.iw);
  const dim4 in_global = global_strides(a.in_stride, a.ic, a.ih, a.iw);
  tpu_gdma_cpy_S2L(p.input, a.in_addr + uint64_t((n0 * in_global.n + i0 * in_global.c + lo * in_global.h) * esize),
                   &in_shape, nullptr, &in_global, a.dtype);
  const padding_t padding = {pad_top, pad_bottom, a.pad_left, a.pad_right};
  window_command(a, p, p.output, p.input, in_shape, padding, oc);
  tpu_gdma_cpy_L2S(out_addr, p.output, &out_shape, &out_global, nullptr, a.dtype);
}

void conv_kernel(const void *arg) {
  const ConvArgs &a = *static_cast<const ConvArgs *>(arg);
  ConvPlan p;
  if (!plan_conv(a, p))
    tpu_kernel_error(__FILE__, __LINE__, __func__,
                     "builtin.conv2d / pool2d: one output row of %lld channels with its weights and input window does not "
                     "fit the %d bytes of local memory per NPU (input channels per group %lld, kernel %dx%d, input "
                     "width %lld)",
                     (long long)std::min<int64_t>(p.oc, tpu_npu_num()), tpu_local_mem_size_per_npu(),
                     (long long)(a.ic / a.group), a.kh, a.kw, (long long)a.iw);
  const int64_t groups = p.depthwise ? 1 : a.group;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t o0 = 0; o0 < p.oc; o0 += p.oc_tile) {
      const int64_t oc = std::min(p.oc_tile, p.oc - o0);
      const int64_t c0 = g * p.oc + o0;  // the first output channel
      if (a.kind == WindowKind::conv) load_conv_weights(a, p, g, o0, oc);
      if (a.bias_addr) load_conv_bias(a, p, c0, oc);
      const int64_t i0 = p.depthwise ? c0 : g * p.ic;
      for (int64_t n0 = 0; n0 < a.n; n0 += p.n_tile)
        for (int64_t y0 = 0; y0 < a.oh; y0 += p.oh_tile)
          conv_rows(a, p, n0, std::min(p.n_tile, a.n - n0), y0, std::min(p.oh_tile, a.oh - y0), i0, c0, oc);
    }
}

}  // namespace

void run_conv_kernel(const ConvArgs &args) {
  run_on_emulator("the conv2d kernel failed", [&] { conv_kernel(&args); });
}

void run_matmul_kernel(const MatmulArgs &args) {
  run_on_emulator("the matmul kernel failed", [&] {
    for (int64_t b = 0; b < args.batches; ++b) {
      ConvArgs one = args.conv;
      one.in_addr += args.a_offset[b], one.weight_addr += args.b_offset[b], one.out_addr += args.y_offset[b];
      conv_kernel(&one);
    }
  });
}

namespace {

// A layer group's layout of a window layer's weights and bias: every output
// channel's at `base` (group 1 or depthwise), placed as lay_out places them
// for one tile of all channels.
ConvPlan resident_plan(const ConvArgs &a, uint32_t base) {
  ConvPlan p;
  p.depthwise = a.kind != WindowKind::conv || (a.group > 1 && a.group == a.ic && a.group == a.oc);
  p.oc = p.oc_tile = a.oc;
  p.ic = p.depthwise ? a.oc : a.ic;
  p.parallel = p.depthwise ? 1 : tpu_get_ic_parallel(a.dtype);
  lay_out(a, p);
  p.weight += local_addr_t(base), p.bias += local_addr_t(base), p.bias_stage += local_addr_t(base);
  return p;
}

// A slice's rows (every `stride_h`-th of the slice, from its first) and
// columns (every `stride_w`-th from -pad_left) by one strided BDC copy out
// of the input slice, both in the aligned layout.
void slice_command(const ConvArgs &a, local_addr_t out, local_addr_t in, const dim4 &in_shape, const dim4 &out_shape) {
  const int plane = int(align_up(int64_t(in_shape.h) * in_shape.w, tpu_eu_num(a.dtype)));
  const int channel_rows = int(ceil_div(in_shape.c, tpu_npu_num()));
  const dim4 src_stride = make_dim4(channel_rows * plane, plane, a.stride_h * in_shape.w, a.stride_w);
  const local_addr_t first = in + local_addr_t(-a.pad_left * tpu_data_type_size(a.dtype));
  tpu_bdc_cpy(out, first, &out_shape, nullptr, &src_stride, a.dtype);
}

}  // namespace

void window_input_rows(const ConvArgs &a, int out_first, int out_count, int *first, int *count) {
  const int64_t top = int64_t(out_first) * a.stride_h - a.pad_top, bottom = top + window_rows(a, out_count) - 1;
  const int64_t lo = std::max<int64_t>(top, 0), hi = std::min<int64_t>(bottom, a.ih - 1);
  if (lo <= hi) {
    *first = int(lo), *count = int(hi - lo + 1);
    return;
  }
  // Every tap in the padding: one row nearby, which the kernel does not read.
  *first = int(bottom < 0 ? 0 : a.ih - 1), *count = 1;
}

uint32_t window_resident_bytes(const ConvArgs &a) {
  if (a.kind != WindowKind::conv) return 0;
  uint32_t bytes = 0;
  run_on_emulator("sizing a conv's local weights", [&] { bytes = uint32_t(resident_plan(a, 0).input); });
  return bytes;
}

void run_window_load_resident(const ConvArgs &a, uint32_t base) {
  if (a.kind != WindowKind::conv) return;
  run_on_emulator("loading a conv's weights into local memory failed", [&] {
    const ConvPlan p = resident_plan(a, base);
    load_conv_weights(a, p, 0, 0, p.oc);
    if (a.bias_addr) load_conv_bias(a, p, 0, p.oc);
  });
}

void run_window_local(const ConvArgs &a, uint32_t resident, uint32_t in, uint32_t out, const WindowSlice &s) {
  run_on_emulator("the local kernel of a conv2d, pool, matmul or slice layer failed", [&] {
    const ConvPlan p = resident_plan(a, resident);
    const int64_t top = int64_t(s.out_row0) * a.stride_h - a.pad_top, bottom = top + window_rows(a, s.out_rows) - 1;
    const int64_t lo = std::max<int64_t>(top, 0), hi = std::min<int64_t>(bottom, a.ih - 1);
    const dim4 out_shape = make_dim4(s.n, a.oc, s.out_rows, a.ow);
    if (lo > hi) return padding_only_tile(a, p, local_addr_t(out), out_shape);
    if (lo != s.in_row0 || hi - lo + 1 != s.in_rows)
      tpu_kernel_error(__FILE__, __LINE__, __func__,
                       "output rows %d..%d need input rows %lld..%lld, but the slice holds rows %d..%d", s.out_row0,
                       s.out_row0 + s.out_rows - 1, (long long)lo, (long long)hi, s.in_row0,
                       s.in_row0 + s.in_rows - 1);
    const dim4 in_shape = make_dim4(s.n, a.ic, s.in_rows, a.iw);
    if (a.kind == WindowKind::slice) return slice_command(a, local_addr_t(out), local_addr_t(in), in_shape, out_shape);
    const padding_t padding = {int(lo - top), int(bottom - hi), a.pad_left, a.pad_right};
    window_command(a, p, local_addr_t(out), local_addr_t(in), in_shape, padding, a.oc);
  });
}

void run_elementwise_kernel(const ElementwiseArgs &args) {
  run_on_emulator("the element-wise kernel failed", [&] { elementwise_kernel(&args); });
}

namespace {

// Whole row chunks of at most 65535 rows (a GDMA extent) and 2^30
// elements (the strides are ints): the padding set to zero first, then the
// rows copied into place.
void pad_rows_kernel(const PadRowsArgs *a) {
  const int64_t esize = tpu_data_type_size(a->dtype);
  const int64_t chunk = std::min<int64_t>(65535, std::max<int64_t>(1, (int64_t(1) << 30) / a->pitch));
  scalar_t zero;
  zero.u32 = 0;
  for (int64_t r0 = 0; r0 < a->rows; r0 += chunk) {
    const int rows = int(std::min(chunk, a->rows - r0));
    const uint64_t dst = a->dst + uint64_t(r0 * a->pitch * esize), src = a->src + uint64_t(r0 * a->extent * esize);
    const dim4 dst_stride = {rows * a->pitch, rows * a->pitch, a->pitch, 1};
    if (a->pitch > a->extent) {
      const dim4 pad = {1, 1, rows, a->pitch - a->extent};
      tpu_gdma_set_C_system(dst + uint64_t(a->extent * esize), zero, &pad, &dst_stride, a->dtype);
    }
    const dim4 shape = {1, 1, rows, a->extent};
    const dim4 src_stride = {rows * a->extent, rows * a->extent, a->extent, 1};
    tpu_gdma_cpy_S2S(dst, src, &shape, &dst_stride, &src_stride, a->dtype);
  }
}

// Planes in chunks of at most 65535 (a GDMA extent) and 2^30 elements: the whole padded
// chunk set to the value, then the input planes copied into its middle.
void pad2d_kernel(const Pad2dArgs *a) {
  const int64_t esize = tpu_data_type_size(a->dtype);
  const int64_t oh = a->ih + a->top + a->bottom, ow = a->iw + a->left + a->right;
  scalar_t value;
  value.f32 = a->value;
  if (a->dtype != DT_FP32) value = tpu_fp_cast(value, a->dtype, DT_FP32, RM_HALF_TO_EVEN);
  const int64_t chunk = std::min<int64_t>(65535, std::max<int64_t>(1, (int64_t(1) << 30) / (oh * ow)));  // int strides
  for (int64_t p0 = 0; p0 < a->planes; p0 += chunk) {
    const int planes = int(std::min<int64_t>(chunk, a->planes - p0));
    const uint64_t dst = a->out_addr + uint64_t(p0 * oh * ow * esize), src = a->in_addr + uint64_t(p0 * a->ih * a->iw * esize);
    const dim4 out_shape = {1, planes, int(oh), int(ow)};
    const dim4 out_stride = {int(planes * oh * ow), int(oh * ow), int(ow), 1};
    tpu_gdma_set_C_system(dst, value, &out_shape, &out_stride, a->dtype);
    const dim4 in_shape = {1, planes, int(a->ih), int(a->iw)};
    const dim4 in_stride = {int(planes * a->ih * a->iw), int(a->ih * a->iw), int(a->iw), 1};
    tpu_gdma_cpy_S2S(dst + uint64_t((a->top * ow + a->left) * esize), src, &in_shape, &out_stride, &in_stride, a->dtype);
  }
}

}  // namespace

void run_pad2d_kernel(const Pad2dArgs &args) {
  run_on_emulator("the pad2d kernel failed", [&] { pad2d_kernel(&args); });
}

void run_pad_rows_kernel(const PadRowsArgs &args) {
  run_on_emulator("the padded copy of an input failed", [&] { pad_rows_kernel(&args); });
}

void run_strided_copy_kernel(const StridedCopyArgs &args) {
  run_on_emulator("the strided copy kernel failed", [&] { strided_copy_kernel(&args); });
}

namespace {

void gather_kernel(const GatherArgs *a) {
  const int64_t esize = tpu_data_type_size(a->dtype);
  const dim4 out_stride = make_dim4(0, a->count * a->inner, a->inner, 1);
  const dim4 data_stride = make_dim4(0, a->rows * a->inner, a->inner, 1), index_stride = make_dim4(0, 0, 1, 1);
  scalar_t zero;
  zero.u32 = 0;
  for (int64_t o = 0; o < a->outer; o += kMaxDim)
    for (int64_t i = 0; i < a->count; i += kMaxDim)
      for (int64_t k = 0; k < a->inner; k += kMaxDim) {
        const dim4 shape = make_dim4(1, std::min(kMaxDim, a->outer - o), std::min(kMaxDim, a->count - i),
                                     std::min(kMaxDim, a->inner - k));
        const uint64_t out = a->out_addr + uint64_t(((o * a->count + i) * a->inner + k) * esize);
        const uint64_t data = a->data_addr + uint64_t((o * a->rows * a->inner + k) * esize);
        tpu_gdma_h_gather_S2S(out, data, a->index_addr + uint64_t(i * 4), false, zero, &shape, int(a->rows),
                              &out_stride, &data_stride, &index_stride, a->dtype);
      }
}

}  // namespace

void run_gather_kernel(const GatherArgs &args) {
  run_on_emulator("the gather kernel failed", [&] { gather_kernel(&args); });
}

void run_cast_kernel(const CastArgs &args) {
  run_on_emulator("the cast kernel failed", [&] { cast_kernel(&args); });
}

void run_cast_local(data_type_t src, uint32_t in, data_type_t dst, uint32_t out, const int shape[4]) {
  const dim4 slice = {shape[0], shape[1], shape[2], shape[3]};
  // The global kernel's conversion (ONNX's rules for integers too), so
  // that grouped and ungrouped runs agree.
  run_on_emulator("builtin.cast's local kernel failed",
                  [&] { convert_tile(local_addr_t(out), local_addr_t(in), slice, dst, src); });
}

void run_concat_kernel(const ConcatArgs &args) {
  run_on_emulator("the concat kernel failed", [&] { concat_kernel(&args); });
}

}  // namespace tpu_runtime::detail
