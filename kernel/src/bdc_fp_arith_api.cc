// bdc_fp_arith_api.cc: tpu-kernel family M, float arithmetic, over
// cmodel/bdc/fp_arith and cmodel/bdc/fp_divide.
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/fp_arith.h"
#include "cmodel/bdc/fp_divide.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::FpBinary;

namespace {

scalar_t fp32_scalar(float C) {
  scalar_t s{};
  s.f32 = C;
  return s;
}


}  // namespace

extern "C" {

#define TPU_BDC_FP_BINARY(NAME, OP)                                                                             \
  void NAME(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, const dim4 *shape,           \
            const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dtype) {      \
    return api::run(__func__, TPU_CALLER(),                                                                     \
                    TPU_ARGS(NAME, dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride, src1_stride, \
                             dtype),                                                                            \
                    [&, name = __func__] {                                                                      \
      bdc::fp_binary(api::context(), name, OP, dst_addr, src0_addr, src1_addr, api::shape_of(shape), dst_stride,     \
                     src0_stride, src1_stride, dtype);                                                          \
    });                                                                                                         \
  }
TPU_BDC_FP_BINARY(tpu_bdc_fp_add, FpBinary::add)
TPU_BDC_FP_BINARY(tpu_bdc_fp_sub, FpBinary::sub)
TPU_BDC_FP_BINARY(tpu_bdc_fp_mul, FpBinary::mul)
TPU_BDC_FP_BINARY(tpu_bdc_fp_diff_abs, FpBinary::diff_abs)
#undef TPU_BDC_FP_BINARY

#define TPU_BDC_FP_BINARY_C(NAME, OP, CONSTANT_FIRST)                                                            \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride, \
            const dim4 *src_stride, data_type_t dtype) {                                                         \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride, dtype),                 \
                    [&, name = __func__] {                                                                       \
      bdc::fp_binary_const(api::context(), name, OP, CONSTANT_FIRST, dst_addr, src_addr, C, api::shape_of(shape),     \
                           dst_stride, src_stride, dtype);                                                       \
    });                                                                                                          \
  }
TPU_BDC_FP_BINARY_C(tpu_bdc_fp_add_C, FpBinary::add, false)
TPU_BDC_FP_BINARY_C(tpu_bdc_fp_sub_C, FpBinary::sub, false)
TPU_BDC_FP_BINARY_C(tpu_bdc_fp_C_sub, FpBinary::sub, true)
TPU_BDC_FP_BINARY_C(tpu_bdc_fp_mul_C, FpBinary::mul, false)
TPU_BDC_FP_BINARY_C(tpu_bdc_fp_diff_abs_C, FpBinary::diff_abs, false)
#undef TPU_BDC_FP_BINARY_C

void tpu_bdc_fp_square(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                       const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_square, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    bdc::fp_square(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride, dtype);
  });
}

void tpu_bdc_fp32_mac(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, const dim4 *shape,
                      const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_mac, dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride,
                           src1_stride),
                  [&, name = __func__] {
    bdc::fp32_mac(api::context(), name, dst_addr, src0_addr, src1_addr, api::shape_of(shape), dst_stride, src0_stride,
                  src1_stride);
  });
}

void tpu_bdc_fp32_mac_C(local_addr_t dst_addr, local_addr_t src_addr, float C, const dim4 *shape,
                        const dim4 *dst_stride, const dim4 *src_stride) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_mac_C, dst_addr, src_addr, C, shape, dst_stride, src_stride),
                  [&, name = __func__] {
    bdc::fp32_mac_const(api::context(), name, dst_addr, src_addr, C, api::shape_of(shape), dst_stride, src_stride);
  });
}

// ---- division (see fp_divide.h for accuracy and num_iter) ----------------------------------

void tpu_bdc_fp32_div(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, const dim4 *shape,
                      const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_div, dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride,
                           src1_stride),
                  [&, name = __func__] {
    bdc::fp_div(api::context(), name, dst_addr, src0_addr, src1_addr, api::shape_of(shape), dst_stride, src0_stride,
                src1_stride, DT_FP32, bdc::default_div_iterations);
  });
}

void tpu_bdc_fp32_tunable_div(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr,
                              const dim4 *shape, const dim4 *dst_stride, const dim4 *src0_stride,
                              const dim4 *src1_stride, int num_iter) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_tunable_div, dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride,
                           src1_stride, num_iter),
                  [&, name = __func__] {
    bdc::fp_div(api::context(), name, dst_addr, src0_addr, src1_addr, api::shape_of(shape), dst_stride, src0_stride,
                src1_stride, DT_FP32, num_iter);
  });
}

void tpu_bdc_fp_div(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, const dim4 *shape,
                    const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_div, dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride,
                           src1_stride, dtype),
                  [&, name = __func__] {
    bdc::fp_div(api::context(), name, dst_addr, src0_addr, src1_addr, api::shape_of(shape), dst_stride, src0_stride,
                src1_stride, dtype, bdc::default_div_iterations);
  });
}

void tpu_bdc_fp_tunable_div(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr,
                            const dim4 *shape, const dim4 *dst_stride, const dim4 *src0_stride,
                            const dim4 *src1_stride, data_type_t dtype, int num_iter) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_tunable_div, dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride,
                           src1_stride, dtype, num_iter),
                  [&, name = __func__] {
    bdc::fp_div(api::context(), name, dst_addr, src0_addr, src1_addr, api::shape_of(shape), dst_stride, src0_stride,
                src1_stride, dtype, num_iter);
  });
}

#define TPU_BDC_FP32_DIV_C(NAME, CONSTANT_FIRST)                                                                \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, float C, const dim4 *shape, const dim4 *dst_stride,   \
            const dim4 *src_stride) {                                                                           \
    return api::run(__func__, TPU_CALLER(),                                                                     \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride),                       \
                    [&, name = __func__] {                                                                      \
      bdc::fp_div_const(api::context(), name, CONSTANT_FIRST, dst_addr, src_addr, fp32_scalar(C),               \
                        api::shape_of(shape), dst_stride, src_stride, DT_FP32, bdc::default_div_iterations);         \
    });                                                                                                         \
  }
TPU_BDC_FP32_DIV_C(tpu_bdc_fp32_div_C, false)
TPU_BDC_FP32_DIV_C(tpu_bdc_fp32_C_div, true)
#undef TPU_BDC_FP32_DIV_C

#define TPU_BDC_FP32_TUNABLE_DIV_C(NAME, CONSTANT_FIRST)                                                        \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, float C, const dim4 *shape, const dim4 *dst_stride,   \
            const dim4 *src_stride, int num_iter) {                                                             \
    return api::run(__func__, TPU_CALLER(),                                                                     \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride, num_iter),             \
                    [&, name = __func__] {                                                                      \
      bdc::fp_div_const(api::context(), name, CONSTANT_FIRST, dst_addr, src_addr, fp32_scalar(C),               \
                        api::shape_of(shape), dst_stride, src_stride, DT_FP32, num_iter);                            \
    });                                                                                                         \
  }
TPU_BDC_FP32_TUNABLE_DIV_C(tpu_bdc_fp32_tunable_div_C, false)
TPU_BDC_FP32_TUNABLE_DIV_C(tpu_bdc_fp32_tunable_C_div, true)
#undef TPU_BDC_FP32_TUNABLE_DIV_C

#define TPU_BDC_FP_DIV_C(NAME, CONSTANT_FIRST)                                                                  \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, const dim4 *shape,                        \
            const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {                                \
    return api::run(__func__, TPU_CALLER(),                                                                     \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride, dtype),                \
                    [&, name = __func__] {                                                                      \
      bdc::fp_div_const(api::context(), name, CONSTANT_FIRST, dst_addr, src_addr, C, api::shape_of(shape),           \
                        dst_stride, src_stride, dtype, bdc::default_div_iterations);                            \
    });                                                                                                         \
  }
TPU_BDC_FP_DIV_C(tpu_bdc_fp_div_C, false)
TPU_BDC_FP_DIV_C(tpu_bdc_fp_C_div, true)
#undef TPU_BDC_FP_DIV_C

#define TPU_BDC_FP_TUNABLE_DIV_C(NAME, CONSTANT_FIRST)                                                          \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, const dim4 *shape,                        \
            const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int num_iter) {                  \
    return api::run(__func__, TPU_CALLER(),                                                                     \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride, dtype, num_iter),      \
                    [&, name = __func__] {                                                                      \
      bdc::fp_div_const(api::context(), name, CONSTANT_FIRST, dst_addr, src_addr, C, api::shape_of(shape),           \
                        dst_stride, src_stride, dtype, num_iter);                                               \
    });                                                                                                         \
  }
TPU_BDC_FP_TUNABLE_DIV_C(tpu_bdc_fp_tunable_div_C, false)
TPU_BDC_FP_TUNABLE_DIV_C(tpu_bdc_fp_tunable_C_div, true)
#undef TPU_BDC_FP_TUNABLE_DIV_C

}  // extern "C"
