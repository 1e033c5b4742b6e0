// pool.h: 2-D pooling (family I): float max / min / average
// (tpu_bdc_fp_max_pool2d, fp_min_pool2d, fp_avg_pool2d, fp_ins_avg_pool2d,
// fp_avg_pool2d_ex) and 8-bit integer max / min / average
// (tpu_bdc_int8_max_pool2d, int8_min_pool2d, int8_avg_pool2d,
// int8_ins_avg_pool2d; tier-3 spec §4), which kernels also use as H/W
// reductions (a kernel of (h, w) with stride 1 reduces each channel's plane
// to one value).
//
// Geometry (window.h). input [n, c, h, w] and output [n, c, oh, ow], both
// in the aligned layout (the commands take no strides) and starting on the
// same NPU (each channel stays in its lane), with `insert` zeros between
// input elements (the ins forms only),
//   oh = ((h - 1)(insert.h + 1) + 1 + top + bottom - (dilation.h (kernel.h - 1) + 1)) / stride.h + 1
// and likewise ow. Output (y, x), tap (i, j) reads position
// y stride.h - top + i dilation.h of the inserted input (likewise columns):
// outside it is padding, between input elements an inserted zero.
//
// max / min: the largest / smallest value of the window, padding positions
// holding pad_val (a scalar_t in dtype; the integer forms take its low
// byte). Floats compare like tpu_bdc_max / tpu_bdc_min: IEEE 754-2019
// maximum / minimum, a NaN anywhere in the window gives NaN (the first one,
// quieted), +0 beats -0 for max and -0 beats +0 for min. The result is one
// of the window's values, bit for bit. Output dtype = input dtype.
//
// float avg: sum over the window of x * scale (scale a scalar_t in the
// input dtype; 1 gives a plain sum, 1 / (kh kw) the mean). Computed as a
// depthwise convolution with a constant kernel would: each product
// x * scale is rounded to fp32, the products are added in fp32 in row-major
// window order (each addition rounded, starting from the first product),
// and the sum is rounded to nearest-even into the output dtype (the input
// dtype, or FP32 for fp_avg_pool2d_ex). Padding and inserted positions
// contribute nothing; a window without input elements gives +0.
//
// int avg (tier-3 §4): acc = sum over the window of x * scale exactly
// (padding and inserted positions 0), then R(acc, rshift, RM_HALF_UP)
// (a rounding right shift; above 63 it acts as 63) and saturation into the
// output: the width of output_dtype (8, 16 or 32 bits) with the input's
// signedness, as the vendor wrapper sets the command's sign.
//
// Output may overlap input (the result is as if the whole input was read
// first). Checks (tier-3 §5): dtypes; kernel in [1, 65535]; stride and
// dilation in [1, 15], padding in [0, 15] (4-bit register fields), insert
// in [0, 7]; oh and ow in [1, 65535]; rshift <= 128. Cost: the `pool`
// factor x kernel.h x kernel.w per EU pass of the output.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class Pool { max, min, avg };

struct PoolWindow {
  dim4 input_shape{};
  dim2 kernel{}, stride{1, 1}, dilation{1, 1}, insert{0, 0};
  padding_t padding{};
};

struct FpPool {
  Pool op = Pool::max;
  data_type_t input_dtype = DT_FP32;
  data_type_t output_dtype = DT_FP32;  // the input's, but for fp_avg_pool2d_ex (or FP32)
  scalar_t value{};                    // pad_val (max, min) or scale (avg, in input_dtype)
  // The argument names, for messages.
  const char *input_dtype_name = "dtype", *output_dtype_name = "dtype";
};

void fp_pool2d(Context &ctx, const char *api, local_addr_t output, local_addr_t input, const PoolWindow &w,
               const FpPool &pool);

// Whether fp max / min pooling may take its fast path (no inserted zeros,
// no NaN read; on by default). Returns the previous setting. For tests,
// which compare it with the general path; not thread-safe.
bool set_fp_pool_fast_path(bool enabled);

struct IntPool {
  Pool op = Pool::max;
  data_type_t input_dtype = DT_INT8;
  data_type_t output_dtype = DT_INT8;  // avg: its width is the output's
  scalar_t pad_val{};                  // max, min
  int scale = 1, rshift = 0;           // avg
};

void int_pool2d(Context &ctx, const char *api, local_addr_t output, local_addr_t input, const PoolWindow &w,
                const IntPool &pool);

}  // namespace cmodel::bdc
