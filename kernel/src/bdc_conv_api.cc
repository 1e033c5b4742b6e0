// bdc_conv_api.cc: tpu-kernel family I, convolution and depthwise
// convolution (float, int8, fused requant), over cmodel/bdc/conv (see
// conv.h for the layouts, numerics and checks). Each function decodes its
// arguments into one FpConv / IntConv command; the dtype rules that differ
// between functions (tier-3 spec §3.3 - §3.5) are applied here.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include <cstring>

#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/bdc/conv.h"
#include "cmodel/bdc/int_arith.h"
#include "cmodel/bdc/family_rules.h"
#include "cmodel/context.h"

namespace cmodel::impl {

namespace {

using bdc::ConvKind;
using bdc::ConvWindow;
using bdc::FpConv;
using bdc::IntConv;

ConvWindow conv_window(const dim4 *input_shape, const dim4 *input_stride, int output_c, const dim2 *kernel,
                       const padding_t *padding, const dim2 *stride, const dim2 *dilation) {
  ConvWindow w;
  w.input_shape = api::deref("input_shape", input_shape);
  w.input_stride = input_stride;
  w.output_c = output_c;
  w.kernel = api::deref("kernel", kernel);
  w.padding = api::deref("padding", padding);
  w.stride = api::deref("stride", stride);
  w.dilation = api::deref("dilation", dilation);
  return w;
}

// The *_for_deconv2d forms: stride 1, `insert` between input elements, the
// kernel rotated by 180 degrees.
ConvWindow deconv_window(const dim4 *input_shape, const dim4 *input_stride, int output_c, const dim2 *kernel,
                         const dim2 *insert, const padding_t *padding, const dim2 *dilation) {
  const dim2 one{1, 1};
  ConvWindow w = conv_window(input_shape, input_stride, output_c, kernel, padding, &one, dilation);
  w.insert = api::deref("insert", insert);
  w.rotate = true;
  return w;
}

ConvWindow depthwise_window(const dim4 *input_shape, const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                            const dim2 *dilation) {
  return conv_window(input_shape, nullptr, 0, kernel, padding, stride, dilation);
}

// ---- float ------------------------------------------------------------------------------

// FP32 input -> FP32; FP16 / BF16 -> the input dtype or FP32 (§3.3, CONV-7).
void require_fp_output(data_type_t output_dtype, data_type_t input_dtype) {
  bdc::under_rule(Rule::CONV_7, [&] {
    bdc::require_float("input_dtype", input_dtype);
    if (input_dtype == DT_FP32)
      bdc::require_dtype("output_dtype", output_dtype, {DT_FP32});
    else
      bdc::require_dtype("output_dtype", output_dtype, {input_dtype, DT_FP32});
  });
}

FpConv fp_conv(const ConvWindow &w, local_addr_t input, bdc::ConvSource weight, data_type_t output_dtype,
               data_type_t input_dtype, bool has_bias, local_addr_t bias, bool result_add) {
  require_fp_output(output_dtype, input_dtype);
  FpConv c;
  c.window = w;
  c.input = input;
  c.weight = weight;
  c.input_dtype = input_dtype;
  c.output_dtype = output_dtype;
  c.has_bias = has_bias;
  c.bias = bias;
  c.bias_dtype = DT_FP32;  // the vendor wrappers pass an FP32 bias
  c.result_add = result_add;
  return c;
}

FpConv fp_depthwise(const ConvWindow &w, local_addr_t input, bdc::ConvSource weight, data_type_t dtype, bool has_bias,
                    local_addr_t bias) {
  bdc::under_rule(Rule::DW_3, [&] { bdc::require_float("dtype", dtype); });
  FpConv c;
  c.kind = ConvKind::depthwise;
  c.window = w;
  c.input = input;
  c.weight = weight;
  c.input_dtype = c.output_dtype = c.bias_dtype = dtype;
  c.has_bias = has_bias;
  c.bias = bias;
  return c;
}

void run(const char *api, local_addr_t output, const FpConv &c) { bdc::fp_conv(api::context(), api, output, c); }
void run(const char *api, local_addr_t output, const IntConv &c) { bdc::int_conv(api::context(), api, output, c); }

[[noreturn]] void rescale_unsupported() {
  fail(ErrorKind::unsupported, "rescaling (do_rescale) applies to FP8 operands, which {} does not have",
       api::context().chip.name);
}

// ---- integer ----------------------------------------------------------------------------

constexpr std::initializer_list<data_type_t> any_int = {DT_INT8, DT_INT16, DT_INT32, DT_UINT8, DT_UINT16, DT_UINT32};

// The command writes an integer (CONV-12, DW-8); then the output dtypes the
// function documents.
void require_int_output(ConvKind kind, data_type_t output_dtype, std::initializer_list<data_type_t> allowed) {
  bdc::under_rule(kind == ConvKind::full ? Rule::CONV_12 : Rule::DW_8,
                  [&] { bdc::require_int_dtype("output_dtype", output_dtype); });
  bdc::require_dtype("output_dtype", output_dtype, allowed);
}

data_type_t with_sign(data_type_t dtype, bool is_signed) {
  return data_type_t(is_signed ? (dtype | 1) : (dtype & ~1));
}

// The sym sign rule (§3.4): relu gives an unsigned result, otherwise signed
// when any operand is.
bool sym_signed(data_type_t input, data_type_t weight, bool has_bias, data_type_t bias, bool relu) {
  if (relu) return false;
  return dtype_is_signed(input) || dtype_is_signed(weight) || (has_bias && dtype_is_signed(bias));
}

IntConv int_conv(ConvKind kind, const ConvWindow &w, local_addr_t input, data_type_t input_dtype,
                 bdc::ConvSource weight, data_type_t weight_dtype) {
  IntConv c;
  c.kind = kind;
  c.window = w;
  c.input = input;
  c.input_dtype = input_dtype;
  c.weight = weight;
  c.weight_dtype = weight_dtype;
  c.pad = c.insert = bdc::conv_constant({});
  return c;
}

void set_constant_pads(IntConv &c, scalar_t pad_val, scalar_t insert_val) {
  c.pad = bdc::conv_constant(pad_val);
  c.insert = bdc::conv_constant(insert_val);
}

void set_pad_tensor(IntConv &c, local_addr_t addr) {
  c.pad_insert_tensor = true;
  c.pad_insert_addr = addr;
}

void set_kzp(IntConv &c, bdc::ConvSource kzp, data_type_t kzp_dtype) {
  c.has_kzp = true;
  c.kzp = kzp;
  c.kzp_dtype = kzp_dtype;
}

void set_bias(IntConv &c, bool has_bias, local_addr_t bias, data_type_t bias_dtype) {
  c.has_bias = has_bias;
  c.bias = bias;
  c.bias_dtype = bias_dtype;
}

// Requant with m = 1, σ = -rshift, zp = 0: the plain right shift of the
// sym and int8 depthwise commands.
void set_rshift(IntConv &c, unsigned char rshift, rounding_mode_t mode, bool relu) {
  c.requant.shift = -int(rshift);
  c.requant.mode = mode;
  c.requant.relu = relu;
}

// The asym commands (no bias, no requant): INT16 / INT32 of the width the
// caller gives; unsigned only when input and weight are unsigned and the
// kernel zero point is a constant 0 (the vendor's rule).
data_type_t asym_output(data_type_t output_dtype, const IntConv &c) {
  require_int_output(c.kind, output_dtype, {DT_INT16, DT_INT32, DT_UINT16, DT_UINT32});
  const bool kzp_zero = c.kzp.is_const && (c.kzp.value.u32 & 0xff) == 0;
  const bool unsigned_result = !dtype_is_signed(c.input_dtype) && !dtype_is_signed(c.weight_dtype) && kzp_zero;
  return with_sign(output_dtype, !unsigned_result);
}

IntConv asym_scalar(ConvKind kind, const ConvWindow &w, local_addr_t input, bdc::ConvSource weight, scalar_t kzp_val,
                    scalar_t pad_val, scalar_t insert_val, data_type_t output_dtype, data_type_t input_dtype,
                    data_type_t weight_dtype, data_type_t kzp_dtype, bool result_add) {
  IntConv c = int_conv(kind, w, input, input_dtype, weight, weight_dtype);
  set_kzp(c, bdc::conv_constant(kzp_val), kzp_dtype);
  set_constant_pads(c, pad_val, insert_val);
  c.result_add = result_add;
  c.output_dtype = asym_output(output_dtype, c);
  return c;
}

IntConv asym_per_channel(const ConvWindow &w, local_addr_t input, local_addr_t weight, local_addr_t kzp,
                         local_addr_t pad_insert, data_type_t output_dtype, data_type_t input_dtype,
                         data_type_t weight_dtype, data_type_t kzp_dtype, bool result_add,
                         std::initializer_list<data_type_t> outputs) {
  require_int_output(ConvKind::full, output_dtype, outputs);
  IntConv c = int_conv(ConvKind::full, w, input, input_dtype, bdc::conv_tensor(weight), weight_dtype);
  set_kzp(c, bdc::conv_tensor(kzp), kzp_dtype);
  set_pad_tensor(c, pad_insert);
  c.result_add = result_add;
  c.output_dtype = output_dtype;
  return c;
}

IntConv sym(const ConvWindow &w, local_addr_t input, local_addr_t weight, local_addr_t bias, data_type_t output_dtype,
            data_type_t input_dtype, data_type_t weight_dtype, data_type_t bias_dtype, unsigned char rshift,
            bool has_bias, bool relu) {
  require_int_output(ConvKind::full, output_dtype, {DT_INT8, DT_INT16, DT_UINT8, DT_UINT16});
  IntConv c = int_conv(ConvKind::full, w, input, input_dtype, bdc::conv_tensor(weight), weight_dtype);
  set_bias(c, has_bias, bias, bias_dtype);
  set_rshift(c, rshift, RM_HALF_UP, relu);
  c.output_dtype = with_sign(output_dtype, sym_signed(input_dtype, weight_dtype, has_bias, bias_dtype, relu));
  return c;
}

// The int8 depthwise commands: pad and insert positions both read pad_val
// (or the per-channel pair), INT8 / INT16 / INT32 output with the sym sign
// rule.
IntConv int8_depthwise(const ConvWindow &w, local_addr_t input, bdc::ConvSource weight, local_addr_t bias,
                       data_type_t output_dtype, data_type_t input_dtype, data_type_t weight_dtype,
                       data_type_t bias_dtype, unsigned char rshift, bool has_bias, bool relu, rounding_mode_t mode) {
  require_int_output(ConvKind::depthwise, output_dtype, any_int);
  IntConv c = int_conv(ConvKind::depthwise, w, input, input_dtype, weight, weight_dtype);
  set_bias(c, has_bias, bias, bias_dtype);
  set_rshift(c, rshift, mode, relu);
  c.output_dtype = with_sign(output_dtype, sym_signed(input_dtype, weight_dtype, has_bias, bias_dtype, relu));
  return c;
}

// The fused-requant commands: with has_requant, RQ (§1.5) with the scalar
// (multiplier, shift, zero point) or the per-channel tensor, into the
// output dtype as given; without, saturation (relu first) with the sym
// sign rule.
void set_requant(IntConv &c, data_type_t output_dtype, bool has_requant, bool per_channel, local_addr_t requant_addr,
                 int multiplier, int shift, int zero_point, bool relu, bool sym_range, rounding_mode_t mode) {
  require_int_output(c.kind, output_dtype, any_int);
  c.requant.relu = relu;
  c.requant.mode = mode;
  c.requant.sym = has_requant && sym_range;
  if (!has_requant) {
    c.output_dtype =
        with_sign(output_dtype, sym_signed(c.input_dtype, c.weight_dtype, c.has_bias, c.bias_dtype, relu));
    return;
  }
  c.output_dtype = output_dtype;
  c.requant.per_channel = per_channel;
  c.requant.addr = requant_addr;
  c.requant.multiplier = multiplier;
  c.requant.shift = shift;
  c.requant.zero_point = zero_point;
}

// H: the fused per-channel requant conv is a bm1688-family command.
void require_bm1688(const char *api) {
  const char *chip = api::context().chip.name;
  if (std::strcmp(chip, "bm1688") != 0)
    fail(ErrorKind::unsupported, "{} is unsupported on this chip ({}): the fused requant convolution exists on bm1688",
         api, chip);
}

}  // namespace

// ---- float convolution ----------------------------------------------------------------------

void tpu_bdc_fp_conv2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                       local_addr_t bias_addr, const dim4 *input_shape, const dim4 *input_stride, int output_c,
                       const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                       data_type_t output_dtype, data_type_t input_dtype, bool has_bias, bool result_add) {
  run(__func__, output_addr,
      fp_conv(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation), input_addr,
              bdc::conv_tensor(weight_addr), output_dtype, input_dtype, has_bias, bias_addr, result_add));
}

// Only the command encoding differs from tpu_bdc_fp_conv2d.
void tpu_bdc_fp_conv2d_long_instr(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                  local_addr_t bias_addr, const dim4 *input_shape, const dim4 *input_stride,
                                  int output_c, const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                  const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                  bool has_bias, bool result_add) {
  run(__func__, output_addr,
      fp_conv(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation), input_addr,
              bdc::conv_tensor(weight_addr), output_dtype, input_dtype, has_bias, bias_addr, result_add));
}

void tpu_bdc_fp_conv2d_kernel_const(local_addr_t output_addr, local_addr_t input_addr, local_addr_t bias_addr,
                                    scalar_t C, const dim4 *input_shape, const dim4 *input_stride, int output_c,
                                    const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                    const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                    bool has_bias, bool result_add) {
  run(__func__, output_addr,
      fp_conv(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation), input_addr,
              bdc::conv_constant(C), output_dtype, input_dtype, has_bias, bias_addr, result_add));
}

void tpu_bdc_fp_conv2d_with_relu(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                 local_addr_t bias_addr, const dim4 *input_shape, const dim4 *input_stride,
                                 int output_c, const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                 const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                 bool has_bias, bool result_add, bool do_relu) {
  FpConv c = fp_conv(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation), input_addr,
                     bdc::conv_tensor(weight_addr), output_dtype, input_dtype, has_bias, bias_addr, result_add);
  c.relu = do_relu;
  run(__func__, output_addr, c);
}

void tpu_bdc_fp_conv2d_for_deconv2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                    local_addr_t bias_addr, const dim4 *input_shape, const dim4 *input_stride,
                                    int output_c, const dim2 *kernel, const dim2 *insert, const padding_t *padding,
                                    const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                    bool has_bias, bool result_add) {
  run(__func__, output_addr,
      fp_conv(deconv_window(input_shape, input_stride, output_c, kernel, insert, padding, dilation), input_addr,
              bdc::conv_tensor(weight_addr), output_dtype, input_dtype, has_bias, bias_addr, result_add));
}

// Without rescaling this is fp_conv2d with a choice of bias dtype and relu;
// rescaling is for FP8 operands only.
void tpu_bdc_fp_conv2d_with_rescale(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                    local_addr_t bias_addr, local_addr_t, const dim4 *input_shape,
                                    const dim4 *input_stride, int output_c, const dim2 *kernel,
                                    const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                                    data_type_t output_dtype, data_type_t input_dtype, data_type_t weight_dtype,
                                    data_type_t bias_dtype, bool has_bias, bool result_add, bool do_relu,
                                    bool do_rescale, bool) {
  if (do_rescale) rescale_unsupported();
  FpConv c = fp_conv(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation), input_addr,
                     bdc::conv_tensor(weight_addr), output_dtype, input_dtype, has_bias, bias_addr, result_add);
  bdc::require_dtype("weight_dtype", weight_dtype, {input_dtype});
  // FP32 -> FP32; FP16 / BF16 -> the input dtype or FP32 (CONV-8).
  if (has_bias)
    bdc::under_rule(Rule::CONV_8, [&] { bdc::require_dtype("bias_dtype", bias_dtype, {input_dtype, DT_FP32}); });
  c.bias_dtype = bias_dtype;
  c.relu = do_relu;
  run(__func__, output_addr, c);
}

void tpu_bdc_fp_conv2d_rescale_C(local_addr_t, local_addr_t, local_addr_t, local_addr_t, const dim4 *, const dim4 *,
                                 int, const dim2 *, const padding_t *, const dim2 *, const dim2 *, data_type_t,
                                 data_type_t, data_type_t, data_type_t, float, bool, bool, bool) {
  rescale_unsupported();
}

void tpu_bdc_fp_conv2d_rescale_pc(local_addr_t, local_addr_t, local_addr_t, local_addr_t, local_addr_t, const dim4 *,
                                  const dim4 *, int, const dim2 *, const padding_t *, const dim2 *, const dim2 *,
                                  data_type_t, data_type_t, data_type_t, data_type_t, bool, bool, bool) {
  rescale_unsupported();
}

// ---- float depthwise ------------------------------------------------------------------------

void tpu_bdc_fp_depthwise2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                            local_addr_t bias_addr, const dim4 *input_shape, const dim2 *kernel,
                            const padding_t *padding, const dim2 *stride, const dim2 *dilation, data_type_t dtype,
                            bool has_bias) {
  run(__func__, output_addr,
      fp_depthwise(depthwise_window(input_shape, kernel, padding, stride, dilation), input_addr,
                   bdc::conv_tensor(weight_addr), dtype, has_bias, bias_addr));
}

void tpu_bdc_fp_ins_depthwise(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                              local_addr_t bias_addr, const dim4 *input_shape, const dim2 *kernel,
                              const padding_t *padding, const dim2 *stride, const dim2 *ins, const dim2 *dilation,
                              data_type_t dtype, bool has_bias) {
  ConvWindow w = depthwise_window(input_shape, kernel, padding, stride, dilation);
  w.insert = api::deref("ins", ins);
  run(__func__, output_addr, fp_depthwise(w, input_addr, bdc::conv_tensor(weight_addr), dtype, has_bias, bias_addr));
}

// kernel_is_const: the bits of weight_addr are the constant (input dtype).
void tpu_bdc_fp_depthwise_for_deconv2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                       local_addr_t bias_addr, const dim4 *input_shape, const dim2 *kernel,
                                       const dim2 *insert, const padding_t *padding, const dim2 *dilation,
                                       data_type_t output_dtype, data_type_t input_dtype, bool kernel_is_const,
                                       bool has_bias) {
  bdc::under_rule(Rule::DW_3, [&] { bdc::require_float("input_dtype", input_dtype); });
  bdc::require_dtype("output_dtype", output_dtype, {input_dtype});
  scalar_t C{};
  C.u32 = weight_addr;
  const bdc::ConvSource weight = kernel_is_const ? bdc::conv_constant(C) : bdc::conv_tensor(weight_addr);
  run(__func__, output_addr,
      fp_depthwise(deconv_window(input_shape, nullptr, 0, kernel, insert, padding, dilation), input_addr, weight,
                   input_dtype, has_bias, bias_addr));
}

// Without rescaling: output the input dtype or FP32, bias in the output
// dtype, relu; rescaling is for FP8 operands only.
void tpu_bdc_fp_depthwise2d_with_scale(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                       local_addr_t bias_addr, local_addr_t, const dim4 *input_shape,
                                       const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                       const dim2 *dilation, data_type_t out_dtype, data_type_t in_dtype,
                                       data_type_t weight_dtype, data_type_t bias_dtype, float, bool has_bias,
                                       bool do_relu, bool do_rescale, bool) {
  if (do_rescale) rescale_unsupported();
  FpConv c = fp_depthwise(depthwise_window(input_shape, kernel, padding, stride, dilation), input_addr,
                          bdc::conv_tensor(weight_addr), in_dtype, has_bias, bias_addr);
  bdc::require_dtype("out_dtype", out_dtype, {in_dtype, DT_FP32});
  bdc::require_dtype("weight_dtype", weight_dtype, {in_dtype});
  if (has_bias) bdc::require_dtype("bias_dtype", bias_dtype, {out_dtype});
  c.output_dtype = out_dtype;
  c.bias_dtype = bias_dtype;
  c.relu = do_relu;
  run(__func__, output_addr, c);
}

// ---- int8 convolution ---------------------------------------------------------------------

void tpu_bdc_int8_asym_quant_conv2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                    scalar_t kzp_val, scalar_t pad_val, const dim4 *input_shape,
                                    const dim4 *input_stride, int output_c, const dim2 *kernel,
                                    const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                                    data_type_t output_dtype, data_type_t input_dtype, data_type_t weight_dtype,
                                    data_type_t kzp_dtype, bool result_add) {
  run(__func__, output_addr,
      asym_scalar(ConvKind::full, conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation),
                  input_addr, bdc::conv_tensor(weight_addr), kzp_val, pad_val, {}, output_dtype, input_dtype,
                  weight_dtype, kzp_dtype, result_add));
}

void tpu_bdc_int8_asym_quant_conv2d_kernel_const(local_addr_t output_addr, local_addr_t input_addr, scalar_t C,
                                                 scalar_t kzp_val, scalar_t pad_val, const dim4 *input_shape,
                                                 const dim4 *input_stride, int output_c, const dim2 *kernel,
                                                 const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                                                 data_type_t output_dtype, data_type_t input_dtype,
                                                 data_type_t weight_dtype, data_type_t kzp_dtype, bool result_add) {
  run(__func__, output_addr,
      asym_scalar(ConvKind::full, conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation),
                  input_addr, bdc::conv_constant(C), kzp_val, pad_val, {}, output_dtype, input_dtype, weight_dtype,
                  kzp_dtype, result_add));
}

void tpu_bdc_int8_asym_quant_conv2d_for_deconv2d(local_addr_t output_addr, local_addr_t input_addr,
                                                 local_addr_t weight_addr, scalar_t kzp_val, scalar_t pad_val,
                                                 scalar_t insert_val, const dim4 *input_shape,
                                                 const dim4 *input_stride, int output_c, const dim2 *kernel,
                                                 const dim2 *insert, const padding_t *padding, const dim2 *dilation,
                                                 data_type_t output_dtype, data_type_t input_dtype,
                                                 data_type_t weight_dtype, data_type_t kzp_dtype, bool result_add) {
  run(__func__, output_addr,
      asym_scalar(ConvKind::full,
                  deconv_window(input_shape, input_stride, output_c, kernel, insert, padding, dilation), input_addr,
                  bdc::conv_tensor(weight_addr), kzp_val, pad_val, insert_val, output_dtype, input_dtype,
                  weight_dtype, kzp_dtype, result_add));
}

void tpu_bdc_int8_asym_pc_quant_conv2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                       local_addr_t kzp_addr, local_addr_t pad_addr, const dim4 *input_shape,
                                       const dim4 *input_stride, int output_c, const dim2 *kernel,
                                       const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                                       data_type_t output_dtype, data_type_t input_dtype, data_type_t weight_dtype,
                                       data_type_t kzp_dtype, bool result_add) {
  run(__func__, output_addr,
      asym_per_channel(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation),
                       input_addr, weight_addr, kzp_addr, pad_addr, output_dtype, input_dtype, weight_dtype, kzp_dtype,
                       result_add, {DT_INT16, DT_INT32}));
}

// The vendor wrapper asserts an unsigned output; any sign is taken (§7.9).
void tpu_bdc_int8_asym_pc_quant_conv2d_for_deconv2d(local_addr_t output_addr, local_addr_t input_addr,
                                                    local_addr_t weight_addr, local_addr_t kzp_addr,
                                                    local_addr_t pad_insert_addr, const dim4 *input_shape,
                                                    const dim4 *input_stride, int output_c, const dim2 *kernel,
                                                    const dim2 *insert, const padding_t *padding,
                                                    const dim2 *dilation, data_type_t output_dtype,
                                                    data_type_t input_dtype, data_type_t weight_dtype,
                                                    data_type_t kzp_dtype, bool result_add) {
  run(__func__, output_addr,
      asym_per_channel(deconv_window(input_shape, input_stride, output_c, kernel, insert, padding, dilation),
                       input_addr, weight_addr, kzp_addr, pad_insert_addr, output_dtype, input_dtype, weight_dtype,
                       kzp_dtype, result_add, {DT_INT16, DT_INT32, DT_UINT16, DT_UINT32}));
}

void tpu_bdc_int8_sym_quant_conv2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                   local_addr_t bias_addr, const dim4 *input_shape, const dim4 *input_stride,
                                   int output_c, const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                   const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                   data_type_t weight_dtype, data_type_t bias_dtype, unsigned char rshift,
                                   bool has_bias, bool result_relu) {
  run(__func__, output_addr,
      sym(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation), input_addr, weight_addr,
          bias_addr, output_dtype, input_dtype, weight_dtype, bias_dtype, rshift, has_bias, result_relu));
}

void tpu_bdc_int8_sym_quant_conv2d_for_deconv2d(local_addr_t output_addr, local_addr_t input_addr,
                                                local_addr_t weight_addr, local_addr_t bias_addr,
                                                const dim4 *input_shape, const dim4 *input_stride, int output_c,
                                                const dim2 *kernel, const dim2 *insert, const padding_t *padding,
                                                const dim2 *dilation, data_type_t output_dtype,
                                                data_type_t input_dtype, data_type_t weight_dtype,
                                                data_type_t bias_dtype, unsigned char rshift, bool has_bias,
                                                bool result_relu) {
  run(__func__, output_addr,
      sym(deconv_window(input_shape, input_stride, output_c, kernel, insert, padding, dilation), input_addr,
          weight_addr, bias_addr, output_dtype, input_dtype, weight_dtype, bias_dtype, rshift, has_bias,
          result_relu));
}

// ---- fused requant convolution ------------------------------------------------------------

void tpu_bdc_conv2d_requant_pc(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                               local_addr_t bias_addr, local_addr_t requant_addr, const dim4 *input_shape,
                               const dim4 *input_stride, int output_c, const dim2 *kernel, const padding_t *padding,
                               const dim2 *stride, const dim2 *dilation, data_type_t output_dtype,
                               data_type_t input_dtype, data_type_t weight_dtype, data_type_t bias_dtype,
                               bool has_bias, bool result_relu, bool has_requant, bool sym_range) {
  require_bm1688(__func__);
  IntConv c = int_conv(ConvKind::full, conv_window(input_shape, input_stride, output_c, kernel, padding, stride,
                                                   dilation),
                       input_addr, input_dtype, bdc::conv_tensor(weight_addr), weight_dtype);
  set_bias(c, has_bias, bias_addr, bias_dtype);
  set_requant(c, output_dtype, has_requant, true, requant_addr, 1, 0, 0, result_relu, sym_range, RM_HALF_UP);
  run(__func__, output_addr, c);
}

void tpu_bdc_conv2d_requant_C(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                              local_addr_t bias_addr, const dim4 *input_shape, const dim4 *input_stride, int output_c,
                              const dim2 *kernel, const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                              data_type_t output_dtype, data_type_t input_dtype, data_type_t weight_dtype,
                              data_type_t bias_dtype, int multiplier, char rshift, short output_zp, bool has_bias,
                              bool result_relu, bool has_requant, bool sym_range) {
  require_bm1688(__func__);
  IntConv c = int_conv(ConvKind::full, conv_window(input_shape, input_stride, output_c, kernel, padding, stride,
                                                   dilation),
                       input_addr, input_dtype, bdc::conv_tensor(weight_addr), weight_dtype);
  set_bias(c, has_bias, bias_addr, bias_dtype);
  set_requant(c, output_dtype, has_requant, false, 0, multiplier, rshift, output_zp, result_relu, sym_range,
              RM_HALF_UP);
  run(__func__, output_addr, c);
}

namespace {

// The asym requant forms: kernel zero point and pad as tensors or
// constants. Without a kzp_dtype argument the zero point has the weight's
// signedness.
IntConv requant_asym(const ConvWindow &w, local_addr_t input, local_addr_t weight, local_addr_t bias,
                     bdc::ConvSource kzp, bdc::ConvSource pad, data_type_t input_dtype, data_type_t weight_dtype,
                     data_type_t bias_dtype, bool has_bias, bool result_add) {
  IntConv c = int_conv(ConvKind::full, w, input, input_dtype, bdc::conv_tensor(weight), weight_dtype);
  set_bias(c, has_bias, bias, bias_dtype);
  set_kzp(c, kzp, weight_dtype);
  if (pad.is_const)
    set_constant_pads(c, pad.value, {});
  else
    set_pad_tensor(c, pad.addr);
  c.result_add = result_add;
  return c;
}

}  // namespace

void tpu_bdc_conv2d_requant_pc_asym_pc(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                       local_addr_t bias_addr, local_addr_t kzp_addr, local_addr_t pad_addr,
                                       local_addr_t requant_addr, const dim4 *input_shape, const dim4 *input_stride,
                                       int output_c, const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                       const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                       data_type_t weight_dtype, data_type_t bias_dtype, bool has_requant,
                                       bool has_bias, bool result_relu, bool result_add, bool sym_range,
                                       rounding_mode_t rounding_mode) {
  IntConv c = requant_asym(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation),
                           input_addr, weight_addr, bias_addr, bdc::conv_tensor(kzp_addr), bdc::conv_tensor(pad_addr),
                           input_dtype, weight_dtype, bias_dtype, has_bias, result_add);
  set_requant(c, output_dtype, has_requant, true, requant_addr, 1, 0, 0, result_relu, sym_range, rounding_mode);
  run(__func__, output_addr, c);
}

void tpu_bdc_conv2d_requant_C_asym_pc(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                      local_addr_t bias_addr, local_addr_t kzp_addr, local_addr_t pad_addr,
                                      const dim4 *input_shape, const dim4 *input_stride, int output_c,
                                      const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                      const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                      data_type_t weight_dtype, data_type_t bias_dtype, int multiplier, char rshift,
                                      short output_zp, bool has_requant, bool has_bias, bool result_relu,
                                      bool result_add, bool sym_range, rounding_mode_t rounding_mode) {
  IntConv c = requant_asym(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation),
                           input_addr, weight_addr, bias_addr, bdc::conv_tensor(kzp_addr), bdc::conv_tensor(pad_addr),
                           input_dtype, weight_dtype, bias_dtype, has_bias, result_add);
  set_requant(c, output_dtype, has_requant, false, 0, multiplier, rshift, output_zp, result_relu, sym_range,
              rounding_mode);
  run(__func__, output_addr, c);
}

void tpu_bdc_conv2d_requant_C_asym_C(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                     local_addr_t bias_addr, scalar_t kzp_val, scalar_t pad_val,
                                     const dim4 *input_shape, const dim4 *input_stride, int output_c,
                                     const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                     const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                     data_type_t weight_dtype, data_type_t bias_dtype, int multiplier, char rshift,
                                     short output_zp, bool has_requant, bool has_bias, bool result_relu,
                                     bool result_add, bool sym_range, rounding_mode_t rounding_mode) {
  IntConv c = requant_asym(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation),
                           input_addr, weight_addr, bias_addr, bdc::conv_constant(kzp_val),
                           bdc::conv_constant(pad_val), input_dtype, weight_dtype, bias_dtype, has_bias, result_add);
  set_requant(c, output_dtype, has_requant, false, 0, multiplier, rshift, output_zp, result_relu, sym_range,
              rounding_mode);
  run(__func__, output_addr, c);
}

void tpu_bdc_conv2d_requant_pc_asym_C(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                      local_addr_t bias_addr, local_addr_t requant_addr, scalar_t kzp_val,
                                      scalar_t pad_val, const dim4 *input_shape, const dim4 *input_stride,
                                      int output_c, const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                      const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                      data_type_t weight_dtype, data_type_t bias_dtype, bool has_requant,
                                      bool has_bias, bool result_relu, bool result_add, bool sym_range,
                                      rounding_mode_t rounding_mode) {
  IntConv c = requant_asym(conv_window(input_shape, input_stride, output_c, kernel, padding, stride, dilation),
                           input_addr, weight_addr, bias_addr, bdc::conv_constant(kzp_val),
                           bdc::conv_constant(pad_val), input_dtype, weight_dtype, bias_dtype, has_bias, result_add);
  set_requant(c, output_dtype, has_requant, true, requant_addr, 1, 0, 0, result_relu, sym_range, rounding_mode);
  run(__func__, output_addr, c);
}

// ---- int8 depthwise -----------------------------------------------------------------------

void tpu_bdc_int8_depthwise2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                              local_addr_t bias_addr, scalar_t pad_val, const dim4 *input_shape, const dim2 *kernel,
                              const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                              data_type_t output_dtype, data_type_t input_dtype, data_type_t weight_dtype,
                              data_type_t bias_dtype, unsigned char rshift, bool has_bias, bool result_relu,
                              rounding_mode_t rounding_mode) {
  IntConv c = int8_depthwise(depthwise_window(input_shape, kernel, padding, stride, dilation), input_addr,
                             bdc::conv_tensor(weight_addr), bias_addr, output_dtype, input_dtype, weight_dtype,
                             bias_dtype, rshift, has_bias, result_relu, rounding_mode);
  set_constant_pads(c, pad_val, pad_val);
  run(__func__, output_addr, c);
}

void tpu_bdc_int8_depthwise2d_kernel_const(local_addr_t output_addr, local_addr_t input_addr, local_addr_t bias_addr,
                                           scalar_t C, scalar_t pad_val, const dim4 *input_shape, const dim2 *kernel,
                                           const padding_t *padding, const dim2 *stride, const dim2 *dilation,
                                           data_type_t output_dtype, data_type_t input_dtype, data_type_t weight_dtype,
                                           data_type_t bias_dtype, unsigned char rshift, bool has_bias,
                                           bool result_relu, rounding_mode_t rounding_mode) {
  IntConv c = int8_depthwise(depthwise_window(input_shape, kernel, padding, stride, dilation), input_addr,
                             bdc::conv_constant(C), bias_addr, output_dtype, input_dtype, weight_dtype, bias_dtype,
                             rshift, has_bias, result_relu, rounding_mode);
  set_constant_pads(c, pad_val, pad_val);
  run(__func__, output_addr, c);
}

void tpu_bdc_int8_pc_pad_depthwise2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                     local_addr_t bias_addr, local_addr_t pad_addr, const dim4 *input_shape,
                                     const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                     const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                     data_type_t weight_dtype, data_type_t bias_dtype, unsigned char rshift,
                                     bool has_bias, bool result_relu, rounding_mode_t rounding_mode) {
  IntConv c = int8_depthwise(depthwise_window(input_shape, kernel, padding, stride, dilation), input_addr,
                             bdc::conv_tensor(weight_addr), bias_addr, output_dtype, input_dtype, weight_dtype,
                             bias_dtype, rshift, has_bias, result_relu, rounding_mode);
  set_pad_tensor(c, pad_addr);
  run(__func__, output_addr, c);
}

void tpu_bdc_int8_depthwise_for_deconv2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                         local_addr_t bias_addr, scalar_t pad_val, const dim4 *input_shape,
                                         const dim2 *kernel, const padding_t *padding, const dim2 *insert,
                                         const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                         data_type_t weight_dtype, data_type_t bias_dtype, unsigned char rshift,
                                         bool has_bias, bool result_relu, rounding_mode_t rounding_mode) {
  IntConv c = int8_depthwise(deconv_window(input_shape, nullptr, 0, kernel, insert, padding, dilation), input_addr,
                             bdc::conv_tensor(weight_addr), bias_addr, output_dtype, input_dtype, weight_dtype,
                             bias_dtype, rshift, has_bias, result_relu, rounding_mode);
  set_constant_pads(c, pad_val, pad_val);
  run(__func__, output_addr, c);
}

// The vendor wrapper marks the pad as constant; the tensor is read, as the
// name says (§7.9).
void tpu_bdc_int8_pc_pad_depthwise_for_deconv2d(local_addr_t output_addr, local_addr_t input_addr,
                                                local_addr_t weight_addr, local_addr_t bias_addr,
                                                local_addr_t pad_addr, const dim4 *input_shape, const dim2 *kernel,
                                                const padding_t *padding, const dim2 *insert, const dim2 *dilation,
                                                data_type_t output_dtype, data_type_t input_dtype,
                                                data_type_t weight_dtype, data_type_t bias_dtype,
                                                unsigned char rshift, bool has_bias, bool result_relu,
                                                rounding_mode_t rounding_mode) {
  IntConv c = int8_depthwise(deconv_window(input_shape, nullptr, 0, kernel, insert, padding, dilation), input_addr,
                             bdc::conv_tensor(weight_addr), bias_addr, output_dtype, input_dtype, weight_dtype,
                             bias_dtype, rshift, has_bias, result_relu, rounding_mode);
  set_pad_tensor(c, pad_addr);
  run(__func__, output_addr, c);
}

void tpu_bdc_depthwise2d_requant_pc_asym_C(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                           local_addr_t bias_addr, local_addr_t requant_addr, scalar_t pad_val,
                                           const dim4 *input_shape, const dim2 *kernel, const padding_t *padding,
                                           const dim2 *stride, const dim2 *dilation, data_type_t output_dtype,
                                           data_type_t input_dtype, data_type_t weight_dtype, data_type_t bias_dtype,
                                           bool has_bias, bool has_requant, bool result_relu, bool sym_range,
                                           rounding_mode_t rounding_mode) {
  IntConv c = int_conv(ConvKind::depthwise, depthwise_window(input_shape, kernel, padding, stride, dilation),
                       input_addr, input_dtype, bdc::conv_tensor(weight_addr), weight_dtype);
  set_bias(c, has_bias, bias_addr, bias_dtype);
  set_constant_pads(c, pad_val, pad_val);
  set_requant(c, output_dtype, has_requant, true, requant_addr, 1, 0, 0, result_relu, sym_range, rounding_mode);
  run(__func__, output_addr, c);
}

// A right shift gives an 8-bit result (UINT8 with relu), as the vendor's
// wrapper sets it.
void tpu_bdc_depthwise2d_requant_C_sym_C(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                                         local_addr_t bias_addr, scalar_t pad_val, const dim4 *input_shape,
                                         const dim2 *kernel, const padding_t *padding, const dim2 *stride,
                                         const dim2 *dilation, data_type_t output_dtype, data_type_t input_dtype,
                                         data_type_t weight_dtype, data_type_t bias_dtype, unsigned char rshift,
                                         bool has_bias, bool result_relu, bool sym_range,
                                         rounding_mode_t rounding_mode) {
  IntConv c = int8_depthwise(depthwise_window(input_shape, kernel, padding, stride, dilation), input_addr,
                             bdc::conv_tensor(weight_addr), bias_addr, output_dtype, input_dtype, weight_dtype,
                             bias_dtype, rshift, has_bias, result_relu, rounding_mode);
  set_constant_pads(c, pad_val, pad_val);
  c.requant.sym = sym_range;
  if (rshift != 0) c.output_dtype = result_relu ? DT_UINT8 : DT_INT8;
  run(__func__, output_addr, c);
}

}  // namespace cmodel::impl
