// bdc_compare_api.cc: tpu-kernel family L (element-wise comparisons; the
// vector-cross vc_* functions are elsewhere) over cmodel/bdc/compare.
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/compare.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::CompareOp;

extern "C" {

#define TPU_BDC_COMPARE(NAME, OP)                                                                                \
  void NAME(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, scalar_t true_val,            \
            const dim4 *shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride,         \
            data_type_t dst_dtype, data_type_t src_dtype) {                                                      \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src0_addr, src1_addr, true_val, shape, dst_stride, src0_stride,     \
                             src1_stride, dst_dtype, src_dtype),                                                 \
                    [&, name = __func__] {                                                                       \
      bdc::compare(api::context(), name, OP, dst_addr, src0_addr, src1_addr, true_val, api::shape_of(shape),          \
                   dst_stride, src0_stride, src1_stride, dst_dtype, src_dtype);                                  \
    });                                                                                                          \
  }
TPU_BDC_COMPARE(tpu_bdc_greater, CompareOp::greater)
TPU_BDC_COMPARE(tpu_bdc_less, CompareOp::less)
TPU_BDC_COMPARE(tpu_bdc_equal, CompareOp::equal)
TPU_BDC_COMPARE(tpu_bdc_greater_equal, CompareOp::greater_equal)
TPU_BDC_COMPARE(tpu_bdc_less_equal, CompareOp::less_equal)
TPU_BDC_COMPARE(tpu_bdc_not_equal, CompareOp::not_equal)
#undef TPU_BDC_COMPARE

#define TPU_BDC_COMPARE_C(NAME, OP)                                                                              \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, scalar_t true_val, const dim4 *shape,      \
            const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype) {      \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, true_val, shape, dst_stride, src_stride, dst_dtype,    \
                             src_dtype),                                                                         \
                    [&, name = __func__] {                                                                       \
      bdc::compare_const(api::context(), name, OP, dst_addr, src_addr, C, true_val, api::shape_of(shape), dst_stride, \
                         src_stride, dst_dtype, src_dtype);                                                      \
    });                                                                                                          \
  }
TPU_BDC_COMPARE_C(tpu_bdc_greater_C, CompareOp::greater)
TPU_BDC_COMPARE_C(tpu_bdc_less_C, CompareOp::less)
TPU_BDC_COMPARE_C(tpu_bdc_equal_C, CompareOp::equal)
TPU_BDC_COMPARE_C(tpu_bdc_greater_equal_C, CompareOp::greater_equal)
TPU_BDC_COMPARE_C(tpu_bdc_less_equal_C, CompareOp::less_equal)
TPU_BDC_COMPARE_C(tpu_bdc_not_equal_C, CompareOp::not_equal)
#undef TPU_BDC_COMPARE_C

}  // extern "C"
