// conv_layout_api.cc: family C queries about the convolution weight layout
// (shared spec tpu-kernel-tier3.md §1.1): how many input channels the conv
// unit takes per pass, and the bytes a weight tensor needs per NPU.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/context.h"
#include "cmodel/dtype.h"

namespace cmodel::impl {

namespace {

// Bytes of `channels` weight rows of ALIGN(ic, P) * kh * kw elements each.
int weight_bytes(const char *api, int64_t rows, int ic, const dim2 *kernel, data_type_t dtype) {
  const dim2 &k = api::deref("ker", kernel);
  if (ic <= 0 || k.h <= 0 || k.w <= 0)
    fail(ErrorKind::illegal_command, "ic = {}, ker = ({}, {}); all must be positive", ic, k.h, k.w);
  const int64_t parallel = impl::tpu_get_ic_parallel(dtype);
  const int64_t bits = rows * ALIGN(int64_t(ic), parallel) * k.h * k.w * dtype_bits(dtype);
  const int64_t bytes = ALIGN(bits, int64_t(8)) / 8;
  if (bytes > INT32_MAX) fail(ErrorKind::illegal_command, "{} would return {} bytes, more than an int holds", api, bytes);
  return int(bytes);
}

}  // namespace

int tpu_get_ic_parallel(data_type_t dtype) {
  if (!dtype_is_known(dtype))
    fail(ErrorKind::unsupported, "dtype {} is not supported on {}", dtype_name(dtype), api::context().chip.name);
  return api::context().chip.ic_parallel(dtype_bits(dtype));
}

int tpu_conv_kernel_size_per_oc(int ic, const dim2 *ker, data_type_t dtype) {
  return weight_bytes(__func__, 1, ic, ker, dtype);
}

int tpu_conv_kernel_size(int oc, int ic, const dim2 *ker, data_type_t dtype) {
  if (oc <= 0) fail(ErrorKind::illegal_command, "oc = {}; must be positive", oc);
  return weight_bytes(__func__, DIV_UP(int64_t(oc), int64_t(api::context().chip.npu_num)), ic, ker, dtype);
}

bool tpu_is_data_type_fp8(data_type_t dtype) { return dtype == DT_FP8E5M2 || dtype == DT_FP8E4M3; }

}  // namespace cmodel::impl
