// pool.h: float 2-D pooling (family I: tpu_bdc_fp_max_pool2d,
// tpu_bdc_fp_avg_pool2d), which kernels also use as H/W reductions (a
// kernel of (h, w) with stride 1 reduces each channel's plane to one value).
//
// Geometry. input [n, c, h, w] and output [n, c, oh, ow], both in the
// aligned layout (the commands take no strides) and starting on the same NPU
// (each channel stays in its lane), with
//   oh = (h + top + bottom - (dilation.h (kernel.h - 1) + 1)) / stride.h + 1
// and likewise ow. Output (y, x) covers input rows y stride.h - top +
// i dilation.h, i < kernel.h, and columns x stride.w - left + j dilation.w;
// positions outside the input are padding.
//
// max: the largest value of the window, padding positions holding pad_val
// (a scalar_t in dtype). Compared like tpu_bdc_max: IEEE 754-2019 maximum,
// a NaN anywhere in the window gives NaN, +0 beats -0. The result is one of
// the window's values, bit for bit.
//
// avg: sum over the window of x * scale (scale a scalar_t in dtype; 1 gives
// a plain sum, 1 / (kh kw) the mean). Computed as a depthwise convolution
// with a constant kernel would: each product x * scale is rounded to fp32,
// the products are added in fp32 in row-major window order (each addition
// rounded, starting from the first product), and the sum is rounded to
// nearest-even into fp16 / bf16 destinations. Padding positions contribute
// nothing; a window lying entirely in the padding gives +0.
//
// Output may overlap input (the result is as if the whole input was read
// first). dtypes fp32, fp16, bf16. Checks: kernel in [1, 65535], stride and
// dilation in [1, 15], padding in [0, 15] (4-bit register fields), oh and
// ow in [1, 65535]. Cost: the
// `pool` factor x kernel.h x kernel.w per EU pass of the output.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class Pool { max, avg };

// `value` is pad_val (max) or scale (avg).
void fp_pool2d(Context &ctx, const char *api, Pool op, local_addr_t output, local_addr_t input,
               const dim4 &input_shape, const dim2 &kernel, const padding_t &padding, const dim2 &stride,
               const dim2 &dilation, data_type_t dtype, scalar_t value);

}  // namespace cmodel::bdc
