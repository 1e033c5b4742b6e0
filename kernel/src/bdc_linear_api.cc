// bdc_linear_api.cc: tpu-kernel family H, per-channel float linear
// operations (bias, scale, scale_bias, (src +- bias)^2 and their constant
// forms), over cmodel/bdc/linear (see linear.h for layouts and numerics).
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/linear.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::Linear;

extern "C" {

#define TPU_BDC_FP_PER_CHANNEL(NAME, OP, PARAM)                                                                  \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t PARAM, const dim4 *shape,                  \
            data_type_t dtype) {                                                                                  \
    return api::run(__func__, TPU_CALLER(),                                                                       \
                    TPU_ARGS(NAME, dst_addr, src_addr, PARAM, shape, dtype),                                      \
                    [&, name = __func__] {                                                                        \
      bdc::fp_linear(api::context(), name, OP, dst_addr, src_addr, PARAM, 0, api::shape_of(shape), dtype);       \
    });                                                                                                           \
  }
TPU_BDC_FP_PER_CHANNEL(tpu_bdc_fp_bias, Linear::bias, bias_addr)
TPU_BDC_FP_PER_CHANNEL(tpu_bdc_fp_scale, Linear::scale, scale_addr)
TPU_BDC_FP_PER_CHANNEL(tpu_bdc_fp_add_bias_sqr, Linear::add_sqr, bias_addr)
TPU_BDC_FP_PER_CHANNEL(tpu_bdc_fp_sub_bias_sqr, Linear::sub_sqr, bias_addr)
#undef TPU_BDC_FP_PER_CHANNEL

void tpu_bdc_fp_scale_bias(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t scale_addr,
                           local_addr_t bias_addr, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_scale_bias, dst_addr, src_addr, scale_addr, bias_addr, shape, dtype),
                  [&, name = __func__] {
    bdc::fp_linear(api::context(), name, Linear::scale_bias, dst_addr, src_addr, scale_addr, bias_addr,
                   api::shape_of(shape), dtype);
  });
}

void tpu_bdc_fp_scale_bias_C(local_addr_t dst_addr, local_addr_t src_addr, scalar_t scale, scalar_t bias,
                             const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_scale_bias_C, dst_addr, src_addr, scale, bias, shape, dtype),
                  [&, name = __func__] {
    bdc::fp_linear_const(api::context(), name, Linear::scale_bias, dst_addr, src_addr, scale, bias,
                         api::shape_of(shape), dtype);
  });
}

#define TPU_BDC_FP_C_SQR(NAME, OP)                                                                               \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, const dim4 *shape, data_type_t dtype) {     \
    return api::run(__func__, TPU_CALLER(),                                                                       \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dtype),                                          \
                    [&, name = __func__] {                                                                        \
      bdc::fp_linear_const(api::context(), name, OP, dst_addr, src_addr, C, scalar_t{}, api::shape_of(shape),     \
                           dtype);                                                                                \
    });                                                                                                           \
  }
TPU_BDC_FP_C_SQR(tpu_bdc_fp_add_C_sqr, Linear::add_sqr)
TPU_BDC_FP_C_SQR(tpu_bdc_fp_sub_C_sqr, Linear::sub_sqr)
#undef TPU_BDC_FP_C_SQR

}  // extern "C"
