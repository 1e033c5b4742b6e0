// hard_sigmoid_fp.pl: the kernels of the hardsigmoid op,
// out = min(max(x * alpha + beta, 0), 1), a PPL op with a local entry
// (register_custom_ppl_local_op): it runs alone on global memory, or as one
// layer of a layer group on the slice the group holds in local memory
// (docs/ppl.md, "Custom ops in PPL"). fp16 and bf16 are computed in fp32
// and rounded once at the end, as the plugin's reference (in float) is.
#include "ppl.h"
using namespace ppl;

// dst = clamp(src * alpha + beta, 0, 1), all fp32 tensors of one shape.
void hard_sigmoid_f32_tile(const tensor<fp32> &dst, const tensor<fp32> &src, float alpha, float beta) {
  tiu::fmul(dst, src, alpha);
  tiu::fadd(dst, dst, beta);
  tiu::fmax(dst, dst, 0.0f);
  tiu::fmin(dst, dst, 1.0f);
}

// One tile of the global kernel: `real` elements from `offset` on.
template <typename T>
void hard_sigmoid_tile(gtensor<T> &g_out, gtensor<T> &g_x, float alpha, float beta, dim4 &tile, dim4 &real,
                       dim4 &offset) {
  enable_pipeline();
  auto x = make_tensor<T>(tile, real);
  dma::load(x, g_x.sub_view(real, offset));
  if constexpr (std::is_same_v<T, fp32>) {
    auto y = make_tensor<fp32>(tile, real);
    hard_sigmoid_f32_tile(y, x, alpha, beta);
    dma::store(g_out.sub_view(real, offset), y);
  } else {
    auto wide = make_tensor<fp32>(tile, real);
    tiu::cast(wide, x);
    hard_sigmoid_f32_tile(wide, wide, alpha, beta);
    auto y = make_tensor<T>(tile, real);
    tiu::cast(y, wide);
    dma::store(g_out.sub_view(real, offset), y);
  }
}

// The global kernel: `length` elements as rows of `block`, LANE_NUM rows a
// tile, then the rest that fills no row; hard_sigmoid_fp_slice.cpp halves
// `block` while the tiles do not fit (PplLocalAddrAssignErr).
template <typename T>
void hard_sigmoid_global(T *out, T *x, float alpha, float beta, int length, int block) {
  const int rows = length / block;
  dim4 tile = {1, LANE_NUM, 1, block};
  if (rows > 0) {
    dim4 shape = {1, rows, 1, block};
    gtensor<T> g_x(shape, GLOBAL, x);
    gtensor<T> g_out(shape, GLOBAL, out);
    for (int row = 0; row < rows; row += LANE_NUM) {
      dim4 real = {1, min(LANE_NUM, rows - row), 1, block};
      dim4 offset = {0, row, 0, 0};
      hard_sigmoid_tile(g_out, g_x, alpha, beta, tile, real, offset);
    }
  }
  const int rest = length - rows * block;
  if (rest > 0) {
    dim4 shape = {1, 1, 1, rest};
    gtensor<T> g_x(shape, GLOBAL, x + rows * block);
    gtensor<T> g_out(shape, GLOBAL, out + rows * block);
    dim4 offset = {0, 0, 0, 0};
    hard_sigmoid_tile(g_out, g_x, alpha, beta, shape, shape, offset);
  }
}

__KERNEL__ void hard_sigmoid_f32(fp32 *out, fp32 *x, float alpha, float beta, int length, const int block) {
  hard_sigmoid_global(out, x, alpha, beta, length, block);
}
__KERNEL__ void hard_sigmoid_f16(fp16 *out, fp16 *x, float alpha, float beta, int length, const int block) {
  hard_sigmoid_global(out, x, alpha, beta, length, block);
}
__KERNEL__ void hard_sigmoid_bf16(bf16 *out, bf16 *x, float alpha, float beta, int length, const int block) {
  hard_sigmoid_global(out, x, alpha, beta, length, block);
}

// The local kernels: the layer group's input and output slices [N, C, H, W]
// (aligned) at the offsets the group gave them in the lanes from `lane` on,
// and for fp16 / bf16 an fp32 work buffer of the slice (the op's local
// bfsz). Every tensor has an explicit address: nothing is planned, so the
// kernel touches no local memory of the group but these.
template <typename T>
tensor<T> slice_at(int offset, int lane, int N, int C, int H, int W) {
  dim4 lanes = {N, lane + C, H, W}, shape = {N, C, H, W}, from = {0, lane, 0, 0};
  return tensor<T>(lanes, TPU_ALIGN, offset).sub_view(shape, from);
}

__KERNEL__ void hard_sigmoid_local_f32(int out_offset, int in_offset, int lane, float alpha, float beta, int N, int C,
                                       int H, int W) {
  hard_sigmoid_f32_tile(slice_at<fp32>(out_offset, lane, N, C, H, W), slice_at<fp32>(in_offset, lane, N, C, H, W),
                        alpha, beta);
}

template <typename T>
void hard_sigmoid_local(int out_offset, int in_offset, int work_offset, int lane, float alpha, float beta, int N, int C,
                        int H, int W) {
  auto wide = slice_at<fp32>(work_offset, lane, N, C, H, W);
  tiu::cast(wide, slice_at<T>(in_offset, lane, N, C, H, W));
  hard_sigmoid_f32_tile(wide, wide, alpha, beta);
  tiu::cast(slice_at<T>(out_offset, lane, N, C, H, W), wide);
}
__KERNEL__ void hard_sigmoid_local_f16(int out_offset, int in_offset, int work_offset, int lane, float alpha,
                                       float beta, int N, int C, int H, int W) {
  hard_sigmoid_local<fp16>(out_offset, in_offset, work_offset, lane, alpha, beta, N, C, H, W);
}
__KERNEL__ void hard_sigmoid_local_bf16(int out_offset, int in_offset, int work_offset, int lane, float alpha,
                                        float beta, int N, int C, int H, int W) {
  hard_sigmoid_local<bf16>(out_offset, in_offset, work_offset, lane, alpha, beta, N, C, H, W);
}
