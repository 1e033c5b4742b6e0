// bdc_pool_api.cc: tpu-kernel family I, 2-D pooling: float max / min /
// average (with insertion and an FP32 output in the _ins and _ex forms) and
// 8-bit integer max / min / average, over cmodel/bdc/pool (see pool.h for
// the geometry, numerics and checks; tier-3 spec §4).
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/bdc/pool.h"
#include "cmodel/numeric/float_convert.h"
#include "cmodel/context.h"

namespace cmodel::impl {

namespace {

using bdc::FpPool;
using bdc::IntPool;
using bdc::Pool;
using bdc::PoolWindow;

PoolWindow window(const dim4 *input_shape, const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                  const dim2 *dilation) {
  PoolWindow w;
  w.input_shape = api::deref("input_shape", input_shape);
  w.kernel = api::deref("kernel", kernel);
  w.padding = api::deref("padding", padding);
  w.stride = api::deref("stride", stride);
  w.dilation = api::deref("dilation", dilation);
  return w;
}

PoolWindow with_ins(PoolWindow w, const dim2 *ins) {
  w.insert = api::deref("ins", ins);
  return w;
}

// The float forms whose input and output share `dtype`.
void fp_pool(const char *api, Pool op, local_addr_t output_addr, local_addr_t input_addr, const PoolWindow &w,
             data_type_t dtype, scalar_t value) {
  FpPool p;
  p.op = op;
  p.input_dtype = p.output_dtype = dtype;
  p.value = value;
  bdc::fp_pool2d(api::context(), api, output_addr, input_addr, w, p);
}

void int_extreme(const char *api, Pool op, local_addr_t output_addr, local_addr_t input_addr, const PoolWindow &w,
                 data_type_t dtype, scalar_t pad_val) {
  IntPool p;
  p.op = op;
  p.input_dtype = p.output_dtype = dtype;
  p.pad_val = pad_val;
  bdc::int_pool2d(api::context(), api, output_addr, input_addr, w, p);
}

void int_avg(const char *api, local_addr_t output_addr, local_addr_t input_addr, const PoolWindow &w,
             data_type_t output_dtype, data_type_t input_dtype, unsigned char scale, unsigned char rshift) {
  IntPool p;
  p.op = Pool::avg;
  p.input_dtype = input_dtype;
  p.output_dtype = output_dtype;
  p.scale = scale;
  p.rshift = rshift;
  bdc::int_pool2d(api::context(), api, output_addr, input_addr, w, p);
}

// tpu_bdc_int_max/min_pool2d: the hardware pools 8-bit integers only (the
// vendor checker, POOL-3: an illegal command); the vendor wrapper stops for
// every dtype. Tier-3 §4, proposed: 8-bit dtypes run as the int8
// functions, the others stop.
void require_8bit_pool(data_type_t dtype) {
  if (dtype != DT_INT8 && dtype != DT_UINT8)
    fail(Rule::POOL_3,
         "dtype {} is not allowed here; the pooling command of this chip takes 8-bit integers only (DT_INT8, DT_UINT8)",
         dtype_name(dtype));
}

}  // namespace

// ---- float ------------------------------------------------------------------------------

void tpu_bdc_fp_max_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                           const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                           data_type_t dtype, scalar_t pad_val) {
  fp_pool(__func__, Pool::max, output_addr, input_addr, window(input_shape, kernel, padding, stride, dilation), dtype,
          pad_val);
}

void tpu_bdc_fp_min_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                           const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                           data_type_t dtype, scalar_t pad_val) {
  fp_pool(__func__, Pool::min, output_addr, input_addr, window(input_shape, kernel, padding, stride, dilation), dtype,
          pad_val);
}

void tpu_bdc_fp_avg_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                           const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                           data_type_t dtype, scalar_t scale) {
  fp_pool(__func__, Pool::avg, output_addr, input_addr, window(input_shape, kernel, padding, stride, dilation), dtype,
          scale);
}

// The mean of each channel's h x w plane: an average pool whose window is
// the whole plane, with scale 1 / (h w) in dtype (so the fp16 / bf16 forms
// scale by that value rounded into dtype, as a kernel passing the scale
// would). buffer_addr is the hardware's scratch; the emulator needs none
// and does not touch it.
void tpu_bdc_fp_hw_reduce_mean(local_addr_t output_addr, local_addr_t input_addr, local_addr_t buffer_addr,
                               const dim4 *shape, data_type_t dtype) {
  (void)buffer_addr;
  PoolWindow w;
  w.input_shape = api::deref("shape", shape);
  w.kernel = {w.input_shape.h, w.input_shape.w};
  const float mean = 1.0f / (float(w.input_shape.h) * float(w.input_shape.w));
  scalar_t scale{};
  if (dtype == DT_FP16) scale.u16 = numeric::fp32_to_fp16(mean, RM_HALF_TO_EVEN);
  else if (dtype == DT_BFP16) scale.u16 = numeric::fp32_to_bf16(mean, RM_HALF_TO_EVEN);
  else scale.f32 = mean;
  fp_pool(__func__, Pool::avg, output_addr, input_addr, w, dtype, scale);
}

void tpu_bdc_fp_ins_avg_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                               const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                               const dim2 *ins, data_type_t dtype, scalar_t scale) {
  fp_pool(__func__, Pool::avg, output_addr, input_addr,
          with_ins(window(input_shape, kernel, padding, stride, dilation), ins), dtype, scale);
}

// The scale is in in_dtype (proposed: the operand the command multiplies).
void tpu_bdc_fp_avg_pool2d_ex(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                              const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                              const dim2 *ins, data_type_t in_dtype, data_type_t out_dtype, scalar_t scale) {
  FpPool p;
  p.op = Pool::avg;
  p.input_dtype = in_dtype;
  p.output_dtype = out_dtype;
  p.value = scale;
  p.input_dtype_name = "in_dtype";
  p.output_dtype_name = "out_dtype";
  bdc::fp_pool2d(api::context(), __func__, output_addr, input_addr,
                 with_ins(window(input_shape, kernel, padding, stride, dilation), ins), p);
}

// ---- integer ----------------------------------------------------------------------------

void tpu_bdc_int8_max_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                             const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                             data_type_t dtype, scalar_t pad_val) {
  int_extreme(__func__, Pool::max, output_addr, input_addr, window(input_shape, kernel, padding, stride, dilation),
              dtype, pad_val);
}

void tpu_bdc_int8_min_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                             const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                             data_type_t dtype, scalar_t pad_val) {
  int_extreme(__func__, Pool::min, output_addr, input_addr, window(input_shape, kernel, padding, stride, dilation),
              dtype, pad_val);
}

void tpu_bdc_int_max_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                            const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                            data_type_t dtype, scalar_t pad_val) {
  require_8bit_pool(dtype);
  int_extreme(__func__, Pool::max, output_addr, input_addr, window(input_shape, kernel, padding, stride, dilation),
              dtype, pad_val);
}

void tpu_bdc_int_min_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                            const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                            data_type_t dtype, scalar_t pad_val) {
  require_8bit_pool(dtype);
  int_extreme(__func__, Pool::min, output_addr, input_addr, window(input_shape, kernel, padding, stride, dilation),
              dtype, pad_val);
}

void tpu_bdc_int8_avg_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                             const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                             data_type_t output_dtype, data_type_t input_dtype, unsigned char scale,
                             unsigned char rshift) {
  int_avg(__func__, output_addr, input_addr, window(input_shape, kernel, padding, stride, dilation), output_dtype,
          input_dtype, scale, rshift);
}

// Argument order ... stride, ins, dilation ... (unlike fp_ins_avg_pool2d).
void tpu_bdc_int8_ins_avg_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape,
                                 const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *ins,
                                 const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                 unsigned char scale, unsigned char rshift) {
  int_avg(__func__, output_addr, input_addr, with_ins(window(input_shape, kernel, padding, stride, dilation), ins),
          output_dtype, input_dtype, scale, rshift);
}

}  // namespace cmodel::impl
