// scale_add_fp.pl: the kernels of the scaleadd op, which has two inputs and
// two outputs: out0 = a * scale, out1 = a * scale + b (docs/ppl.md,
// "Custom ops in PPL"). One kernel per float type, as the vendor's
// customlayer writes them; scale_add_fp_slice.cpp picks one and the block.
//
// The tensors are flat vectors of `length` elements, viewed as rows of
// `block` elements: [1, rows, 1, block] tiles of LANE_NUM rows each, then
// the rest that fills no whole row as a [1, 1, 1, rest] tile. Local memory
// grows with `block` (four tensors, double-buffered by the pipeline), so the
// host halves it while the kernel answers PplLocalAddrAssignErr.
#include "ppl.h"
using namespace ppl;

// One tile: `real` elements of every tensor, starting `offset` elements in.
// fp16 and bf16 are computed in fp32 and rounded once at the end, as the
// op's reference (the plugin's inference_scaleadd, in float) rounds them.
template <typename T>
void scale_add_tile(gtensor<T> &g_out0, gtensor<T> &g_out1, gtensor<T> &g_a, gtensor<T> &g_b, float scale,
                    dim4 &tile, dim4 &real, dim4 &offset) {
  enable_pipeline();
  auto a = make_tensor<T>(tile, real);
  auto b = make_tensor<T>(tile, real);
  dma::load(a, g_a.sub_view(real, offset));
  dma::load(b, g_b.sub_view(real, offset));
  if constexpr (std::is_same_v<T, fp32>) {
    auto scaled = make_tensor<fp32>(tile, real);
    tiu::fmul(scaled, a, scale);
    auto sum = make_tensor<fp32>(tile, real);
    tiu::fadd(sum, scaled, b);
    dma::store(g_out0.sub_view(real, offset), scaled);
    dma::store(g_out1.sub_view(real, offset), sum);
  } else {
    auto wide_a = make_tensor<fp32>(tile, real);
    auto wide_b = make_tensor<fp32>(tile, real);
    tiu::cast(wide_a, a);
    tiu::cast(wide_b, b);
    tiu::fmul(wide_a, wide_a, scale);
    tiu::fadd(wide_b, wide_a, wide_b);
    auto scaled = make_tensor<T>(tile, real);
    auto sum = make_tensor<T>(tile, real);
    tiu::cast(scaled, wide_a);
    tiu::cast(sum, wide_b);
    dma::store(g_out0.sub_view(real, offset), scaled);
    dma::store(g_out1.sub_view(real, offset), sum);
  }
}

template <typename T>
void scale_add(T *out0, T *out1, T *a, T *b, float scale, int length, int block) {
  const int rows = length / block;
  dim4 tile = {1, LANE_NUM, 1, block};
  if (rows > 0) {
    dim4 shape = {1, rows, 1, block};
    gtensor<T> g_a(shape, GLOBAL, a);
    gtensor<T> g_b(shape, GLOBAL, b);
    gtensor<T> g_out0(shape, GLOBAL, out0);
    gtensor<T> g_out1(shape, GLOBAL, out1);
    for (int row = 0; row < rows; row += LANE_NUM) {
      dim4 real = {1, min(LANE_NUM, rows - row), 1, block};
      dim4 offset = {0, row, 0, 0};
      scale_add_tile(g_out0, g_out1, g_a, g_b, scale, tile, real, offset);
    }
  }
  const int rest = length - rows * block;
  if (rest > 0) {
    const int done = rows * block;
    dim4 shape = {1, 1, 1, rest};
    gtensor<T> g_a(shape, GLOBAL, a + done);
    gtensor<T> g_b(shape, GLOBAL, b + done);
    gtensor<T> g_out0(shape, GLOBAL, out0 + done);
    gtensor<T> g_out1(shape, GLOBAL, out1 + done);
    dim4 offset = {0, 0, 0, 0};
    scale_add_tile(g_out0, g_out1, g_a, g_b, scale, tile, shape, offset);
  }
}

__KERNEL__ void scale_add_f32(fp32 *out0, fp32 *out1, fp32 *a, fp32 *b, float scale, int length, const int block) {
  scale_add(out0, out1, a, b, scale, length, block);
}

__KERNEL__ void scale_add_f16(fp16 *out0, fp16 *out1, fp16 *a, fp16 *b, float scale, int length, const int block) {
  scale_add(out0, out1, a, b, scale, length, block);
}

__KERNEL__ void scale_add_bf16(bf16 *out0, bf16 *out1, bf16 *a, bf16 *b, float scale, int length, const int block) {
  scale_add(out0, out1, a, b, scale, length, block);
}

// Host tests (built only into a __TEST__ program, cmake/TpuPpl.cmake's
// tpu_ppl_test): random inputs, then a kernel call; the program writes each
// call's pointer arguments before and after it (out0, out1, a, b as arrays
// "0" to "3" of data/scale_add_fp_input.npz and _tar.npz), which
// tests/ppl/ppl_test_check.py compares with numpy. 1000 elements in blocks
// of 64: full tiles of LANE_NUM rows, a short tile and a 40-element rest.
__TEST__ int scale_add_test_f32() {
  dim4 shape = {1, 1, 1, 1000};
  fp32 *out0 = malloc<fp32>(&shape);
  fp32 *out1 = malloc<fp32>(&shape);
  fp32 *a = rand<fp32>(&shape, -2.0f, 2.0f);
  fp32 *b = rand<fp32>(&shape, -2.0f, 2.0f);
  scale_add_f32(out0, out1, a, b, 1.5f, 1000, 64);
  return 0;
}

__TEST__ int scale_add_test_f16() {
  dim4 shape = {2, 3, 5, 7};
  fp16 *out0 = malloc<fp16>(&shape);
  fp16 *out1 = malloc<fp16>(&shape);
  fp16 *a = rand<fp16>(&shape, -4.0f, 4.0f);
  fp16 *b = rand<fp16>(&shape, -4.0f, 4.0f);
  scale_add_f16(out0, out1, a, b, -0.5f, 2 * 3 * 5 * 7, 16);
  return 0;
}
