// ppl_ops_conv.cc: the PPL operations that read a window of another tensor
// per output element: the float convolutions (tiu::fconv), spec §3.8; the
// decisions are in docs/ppl.md ("fconv").
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

// The convolution's dst, src, weight and bias as tpu_bdc_fp_conv2d wants
// them; dst's shape from the window.
void check_fconv(const char *name, const desc &dst, const desc &src, const conv_operands &o, const pool_window &window,
                 const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_aligned(name, "dst", dst, where);
  require_aligned(name, "src", src, where);
  if (!is_float(src.dtype)) refuse(name, where, "src must be fp32, fp16 or bf16");
  if (dst.dtype != src.dtype && dst.dtype != ppl::DT_FP32)
    refuse(name, where, "dst must be of src's type or fp32 (the convolution accumulates in fp32)");
  if (src.dtype != ppl::DT_FP32 && src.lane != 0)
    refuse(name, where, fmt::format("a 16-bit src must start on lane 0, not {} (the convolution reads its input "
                                    "channels from lane 0)", src.lane));
  const dim2 out = window_output(name, src.shape, window, where);
  const dim4 expected{src.shape.n, o.oc, out.h, out.w};
  if (o.oc < 1 || !same(dst.shape, expected))
    refuse(name, where, fmt::format("dst of shape {} must be {} (oc {} output channels of this window over src {})",
                                    text(dst.shape), text(expected), o.oc, text(src.shape)));
  if (o.weight.d) {
    const int nic = src.element_size == 4 ? 1 : ppl::lane_num() / src.element_size, ic = src.shape.c;
    const dim4 weight_shape{1, o.oc, div_up_int(ic, nic) * window.kernel.h * window.kernel.w, nic};
    if (o.weight.d->dtype != src.dtype) refuse(name, where, "weight must be of src's type");
    require_compact(name, "weight", *o.weight.d, weight_shape, dst.lane, where);
  }
  if (o.bias) {
    if (o.bias->dtype != ppl::DT_FP32) refuse(name, where, "bias must be fp32");
    require_compact(name, "bias", *o.bias, dim4{1, o.oc, 1, 1}, dst.lane, where);
  }
}

}  // namespace

void tiu_fconv(const char *name, const desc &dst, const desc &src, const conv_operands &o, const pool_window &window,
               const site &where) {
  check_fconv(name, dst, src, o, window, where);
  // An operand the call does not have is recorded as src again (a read).
  const desc *weight = o.weight.d ? o.weight.d : &src, *bias = o.bias ? o.bias : &src;
  const double constant = o.weight.value;
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}, {weight, tiu_engine}, {bias, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(src.shape);
    const ::dim2 k{window.kernel.h, window.kernel.w}, st{window.stride.h, window.stride.w},
        dl{window.dilation.h, window.dilation.w};
    const ::padding_t p{window.padding.top, window.padding.bottom, window.padding.left, window.padding.right};
    const uint32_t bias_address = o.bias ? local_address(*o.bias) : 0;
    if (o.weight.d)
      tpu_bdc_fp_conv2d(local_address(dst), local_address(src), local_address(*o.weight.d), bias_address, &shape,
                        nullptr, o.oc, &k, &p, &st, &dl, kernel_dtype(dst.dtype), kernel_dtype(src.dtype),
                        o.bias != nullptr, o.result_add);
    else
      tpu_bdc_fp_conv2d_kernel_const(local_address(dst), local_address(src), bias_address,
                                     scalar_of(constant, src.dtype), &shape, nullptr, o.oc, &k, &p, &st, &dl,
                                     kernel_dtype(dst.dtype), kernel_dtype(src.dtype), o.bias != nullptr,
                                     o.result_add);
  });
}

}  // namespace ppl::rt
