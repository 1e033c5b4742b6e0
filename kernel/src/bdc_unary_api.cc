// bdc_unary_api.cc: tpu-kernel families Q1 (abs, neg, not, sign), R (relu,
// prelu, fp_hsigmoid, fp_hswish, fp_isfinite) and Q2 (fp_exponent_part),
// over cmodel/bdc/unary (semantics documented there).
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/unary.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::HardActivation;
using bdc::Unary;

extern "C" {

#define TPU_BDC_UNARY(NAME, OP)                                                                                 \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,            \
            const dim4 *src_stride, data_type_t dtype) {                                                        \
    return api::run(__func__, TPU_CALLER(),                                                                     \
                    TPU_ARGS(NAME, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),                   \
                    [&, name = __func__] {                                                                      \
      bdc::unary(api::context(), name, OP, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride, dtype); \
    });                                                                                                         \
  }
TPU_BDC_UNARY(tpu_bdc_abs, Unary::abs)
TPU_BDC_UNARY(tpu_bdc_neg, Unary::neg)
TPU_BDC_UNARY(tpu_bdc_not, Unary::bit_not)
TPU_BDC_UNARY(tpu_bdc_relu, Unary::relu)
#undef TPU_BDC_UNARY

void tpu_bdc_sign(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_sign, dst_addr, src_addr, shape, dtype),
                  [&, name = __func__] {
    bdc::unary(api::context(), name, Unary::sign, dst_addr, src_addr, api::shape_of(shape), nullptr, nullptr, dtype);
  });
}

void tpu_bdc_prelu(local_addr_t dst_addr, local_addr_t src_addr, scalar_t alpha, const dim4 *shape,
                   data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_prelu, dst_addr, src_addr, alpha, shape, dtype),
                  [&, name = __func__] {
    bdc::prelu(api::context(), name, dst_addr, src_addr, alpha, api::shape_of(shape), dtype);
  });
}

void tpu_bdc_fp_hsigmoid(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, const dim4 *shape,
                         float alpha, float beta, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_hsigmoid, dst_addr, src_addr, work0_addr, shape, alpha, beta, dtype),
                  [&, name = __func__] {
    bdc::fp_hard_activation(api::context(), name, HardActivation::hsigmoid, dst_addr, src_addr, work0_addr,
                            api::shape_of(shape), alpha, beta, dtype);
  });
}

#define TPU_BDC_FP_HARD_ACTIVATION(NAME, OP)                                                                     \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, const dim4 *shape,            \
            data_type_t dtype) {                                                                                 \
    return api::run(__func__, TPU_CALLER(), TPU_ARGS(NAME, dst_addr, src_addr, work0_addr, shape, dtype),        \
                    [&, name = __func__] {                                                                       \
      bdc::fp_hard_activation(api::context(), name, OP, dst_addr, src_addr, work0_addr, api::shape_of(shape),    \
                              0.0f, 0.0f, dtype);                                                                \
    });                                                                                                          \
  }
TPU_BDC_FP_HARD_ACTIVATION(tpu_bdc_fp_hswish, HardActivation::hswish)
TPU_BDC_FP_HARD_ACTIVATION(tpu_bdc_fp_isfinite, HardActivation::isfinite)
#undef TPU_BDC_FP_HARD_ACTIVATION

void tpu_bdc_fp_exponent_part(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t dst_dtype,
                              data_type_t src_dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_exponent_part, dst_addr, src_addr, shape, dst_dtype, src_dtype),
                  [&, name = __func__] {
    bdc::fp_exponent_part(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dst_dtype, src_dtype);
  });
}

}  // extern "C"
