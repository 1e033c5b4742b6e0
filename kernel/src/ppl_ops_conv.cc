// ppl_ops_conv.cc: the PPL operations that read a window of another tensor
// per output element: the float convolutions (tiu::fconv), transposed
// (fdeconv) and depthwise (fdw_conv), spec §3.8; the decisions are in
// docs/ppl.md ("fconv", "fdeconv and fdw_conv").
#include "ppl_ops_common.h"

namespace ppl::rt {
namespace {

int div_up_int(int a, int b) { return (a + b - 1) / b; }

// A [1, c, h, w] operand in the compact layout on `lane` (a conv weight or
// bias, as tpu_bdc_fp_conv2d reads them).
void require_compact(const char *name, const char *role, const desc &d, const dim4 &shape, int lane,
                     const site &where) {
  require_local(name, role, d, where);
  if (!same(d.shape, shape))
    refuse(name, where, fmt::format("{} of shape {} must be {}", role, text(d.shape), text(shape)));
  const dim4 compact = local_strides(shape, TPU_COMPACT, d.element_size, d.lane);
  if (!same(d.stride, compact))
    refuse(name, where, fmt::format("{} must have the compact layout's strides {}, not {} (make it TPU_COMPACT)", role,
                                    text(compact), text(d.stride)));
  if (d.lane != lane)
    refuse(name, where, fmt::format("{} starts on lane {}; it must start on dst's lane {}", role, d.lane, lane));
}

// The convolution's dst, src, weight and bias as tpu_bdc_fp_conv2d (and
// _for_deconv2d) want them, dst [n, oc, out.h, out.w] (a dst declared
// without a shape takes it); the dst to write.
desc check_conv_operands(const char *name, const desc &dst_in, const desc &src, const conv_operands &o, dim2 kernel,
                         dim2 out, const site &where) {
  require_local(name, "src", src, where);
  require_aligned(name, "src", src, where);
  if (o.result_add) check_known(name, "dst (accumulated into)", dst_in, where);
  const dim4 expected{src.shape.n, o.oc, out.h, out.w};
  const desc dst = o.oc >= 1 ? written(name, dst_in, expected, where) : dst_in;
  require_local(name, "dst", dst, where);
  require_aligned(name, "dst", dst, where);
  if (!is_float(src.dtype)) refuse(name, where, "src must be fp32, fp16 or bf16");
  if (dst.dtype != src.dtype && dst.dtype != ppl::DT_FP32)
    refuse(name, where, "dst must be of src's type or fp32 (the convolution accumulates in fp32)");
  if (src.dtype != ppl::DT_FP32 && src.lane != 0)
    refuse(name, where, fmt::format("a 16-bit src must start on lane 0, not {} (the convolution reads its input "
                                    "channels from lane 0)", src.lane));
  if (o.oc < 1 || !same(dst.shape, expected))
    refuse(name, where, fmt::format("dst of shape {} must be {} (oc {} output channels of this window over src {})",
                                    text(dst.shape), text(expected), o.oc, text(src.shape)));
  if (o.weight.d) {
    const int nic = src.element_size == 4 ? 1 : ppl::lane_num() / src.element_size, ic = src.shape.c;
    const dim4 weight_shape{1, o.oc, div_up_int(ic, nic) * kernel.h * kernel.w, nic};
    if (o.weight.d->dtype != src.dtype) refuse(name, where, "weight must be of src's type");
    require_compact(name, "weight", *o.weight.d, weight_shape, dst.lane, where);
  }
  if (o.bias) {
    if (o.bias->dtype != ppl::DT_FP32) refuse(name, where, "bias must be fp32");
    require_compact(name, "bias", *o.bias, dim4{1, o.oc, 1, 1}, dst.lane, where);
  }
  return dst;
}

::padding_t kernel_padding(const padding_t &p) { return ::padding_t{p.top, p.bottom, p.left, p.right}; }

}  // namespace

namespace {

// The window's output over src with (ins_h, ins_w) zeros inserted between
// its elements: refuses what the rotating command cannot do.
dim2 inserted_output(const char *name, const desc &src, const conv_operands &o, const conv_window &w,
                     const site &where) {
  if (w.insert.h < 0 || w.insert.w < 0) refuse(name, where, "insertion must not be negative");
  const bool inserting = w.insert.h > 0 || w.insert.w > 0;
  if (inserting && !w.rotate)
    refuse(name, where, fmt::format("the insert handle inserts {} rows and {} columns with an unrotated kernel, "
                                    "which is not done (tpu_bdc_fp_conv2d_with_ins is not emulated); with rotate "
                                    "(conv::param::kernel(..., rotate = true)) and stride 1 it is",
                                    w.insert.h, w.insert.w));
  if (w.rotate && (w.window.stride.h != 1 || w.window.stride.w != 1 || !o.weight.d))
    refuse(name, where, fmt::format("a rotated kernel (or insertion) needs stride 1 and a tensor weight (one "
                                    "tpu_bdc_fp_conv2d_for_deconv2d); this call has stride {} x {}{}",
                                    w.window.stride.h, w.window.stride.w, o.weight.d ? "" : " and a constant weight"));
  dim4 inserted = src.shape;
  inserted.h = (src.shape.h - 1) * (w.insert.h + 1) + 1;
  inserted.w = (src.shape.w - 1) * (w.insert.w + 1) + 1;
  return window_output(name, inserted, w.window, where);
}

}  // namespace

void tiu_fconv(const char *name, const desc &dst_in, const desc &src, const conv_operands &o, const conv_window &cw,
               const site &where) {
  check_known(name, "src", src, where);
  const pool_window window = cw.window;
  const desc dst = check_conv_operands(name, dst_in, src, o, window.kernel, inserted_output(name, src, o, cw, where),
                                       where);
  // Copies (a pipelined loop issues after the caller's handles are gone);
  // an operand the call does not have is recorded as src again (a read).
  const desc weight = o.weight.d ? *o.weight.d : src, bias = o.bias ? *o.bias : src;
  const bool constant_kernel = !o.weight.d, has_bias = o.bias != nullptr, rotate = cw.rotate;
  const double constant = o.weight.value;
  const int oc = o.oc;
  const bool result_add = o.result_add;
  const dim2 insert = cw.insert;
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}, {&weight, tiu_engine}, {&bias, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(src.shape);
    const ::dim2 k{window.kernel.h, window.kernel.w}, st{window.stride.h, window.stride.w},
        dl{window.dilation.h, window.dilation.w}, ins{insert.h, insert.w};
    const ::padding_t p = kernel_padding(window.padding);
    const uint32_t bias_address = has_bias ? local_address(bias) : 0;
    if (rotate)
      tpu_bdc_fp_conv2d_for_deconv2d(local_address(dst), local_address(src), local_address(weight), bias_address,
                                     &shape, nullptr, oc, &k, &ins, &p, &dl, kernel_dtype(dst.dtype),
                                     kernel_dtype(src.dtype), has_bias, result_add);
    else if (!constant_kernel)
      tpu_bdc_fp_conv2d(local_address(dst), local_address(src), local_address(weight), bias_address, &shape, nullptr,
                        oc, &k, &p, &st, &dl, kernel_dtype(dst.dtype), kernel_dtype(src.dtype), has_bias, result_add);
    else
      tpu_bdc_fp_conv2d_kernel_const(local_address(dst), local_address(src), bias_address,
                                     scalar_of(constant, src.dtype), &shape, nullptr, oc, &k, &p, &st, &dl,
                                     kernel_dtype(dst.dtype), kernel_dtype(src.dtype), has_bias, result_add);
  });
}

namespace {

// A transposed convolution of stride s, padding p and dilation d is one
// stride-1 convolution of the input with s - 1 zeros inserted between its
// elements, padded by d (k - 1) - p, with the kernel rotated (the command
// rotates it). Refuses a padding the transposed output cannot lose.
padding_t deconv_padding(const char *name, const pool_window &w, const site &where) {
  const int span_h = w.dilation.h * (w.kernel.h - 1), span_w = w.dilation.w * (w.kernel.w - 1);
  const padding_t p = w.padding;
  if (p.top > span_h || p.bottom > span_h || p.left > span_w || p.right > span_w || p.top < 0 || p.bottom < 0 ||
      p.left < 0 || p.right < 0)
    refuse(name, where, fmt::format("padding (up {}, down {}, left {}, right {}) must be in [0, dilation (kernel - "
                                    "1)] = [0, {}] in H and [0, {}] in W",
                                    p.top, p.bottom, p.left, p.right, span_h, span_w));
  return padding_t{span_h - p.top, span_h - p.bottom, span_w - p.left, span_w - p.right};
}

}  // namespace

void tiu_fdeconv(const char *name, const desc &dst_in, const desc &src, const conv_operands &o,
                 const pool_window &window, const site &where) {
  if (!o.weight.d) refuse(name, where, "weight must be a tensor (the deconvolution has no constant-kernel form)");
  check_known(name, "src", src, where);
  const dim2 s = window.stride, d = window.dilation, k = window.kernel;
  if (s.h < 1 || s.w < 1 || d.h < 1 || d.w < 1 || k.h < 1 || k.w < 1)
    refuse(name, where, "kernel, stride and dilation must be at least 1");
  const padding_t conv_pad = deconv_padding(name, window, where);
  const dim2 out{(src.shape.h - 1) * s.h - window.padding.top - window.padding.bottom + d.h * (k.h - 1) + 1,
                 (src.shape.w - 1) * s.w - window.padding.left - window.padding.right + d.w * (k.w - 1) + 1};
  const desc dst = check_conv_operands(name, dst_in, src, o, k, out, where);
  const desc weight = *o.weight.d, bias = o.bias ? *o.bias : src;  // copies, as in tiu_fconv
  const bool has_bias = o.bias != nullptr, result_add = o.result_add;
  const int oc = o.oc;
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}, {&weight, tiu_engine}, {&bias, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(src.shape);
    const ::dim2 kk{k.h, k.w}, insert{s.h - 1, s.w - 1}, dl{d.h, d.w};
    const ::padding_t p = kernel_padding(conv_pad);
    tpu_bdc_fp_conv2d_for_deconv2d(local_address(dst), local_address(src), local_address(weight),
                                   has_bias ? local_address(bias) : 0, &shape, nullptr, oc, &kk, &insert, &p, &dl,
                                   kernel_dtype(dst.dtype), kernel_dtype(src.dtype), has_bias, result_add);
  });
}

void tiu_fdw_conv(const char *name, const desc &dst_in, const desc &src, const desc &weight, const desc *bias,
                  const pool_window &window, const site &where) {
  if (!is_float(src.dtype)) refuse(name, where, "src must be fp32, fp16 or bf16");
  const desc dst = check_window_output(name, dst_in, src, window, where);
  if (dst.dtype != src.dtype) refuse(name, where, "dst must be of src's type (the depthwise command's output)");
  if (dst.lane != src.lane)
    refuse(name, where, fmt::format("dst starts on lane {} but src on lane {}; they must start on one lane", dst.lane,
                                    src.lane));
  if (weight.dtype != src.dtype) refuse(name, where, "weight must be of src's type");
  require_compact(name, "weight", weight, dim4{1, src.shape.c, window.kernel.h, window.kernel.w}, src.lane, where);
  if (bias) {
    if (bias->dtype != src.dtype) refuse(name, where, "bias must be of src's type (the depthwise command's)");
    require_compact(name, "bias", *bias, dim4{1, src.shape.c, 1, 1}, src.lane, where);
  }
  const desc kernel_weights = weight, bias_copy = bias ? *bias : src;  // copies, as in tiu_fconv
  const bool has_bias = bias != nullptr;
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}, {&kernel_weights, tiu_engine}, {&bias_copy, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(src.shape);
    const ::dim2 k{window.kernel.h, window.kernel.w}, st{window.stride.h, window.stride.w},
        dl{window.dilation.h, window.dilation.w};
    const ::padding_t p = kernel_padding(window.padding);
    tpu_bdc_fp_depthwise2d(local_address(dst), local_address(src), local_address(kernel_weights),
                           has_bias ? local_address(bias_copy) : 0, &shape, &k, &p, &st, &dl, kernel_dtype(src.dtype),
                           has_bias);
  });
}

}  // namespace ppl::rt
