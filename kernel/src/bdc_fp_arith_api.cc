// bdc_fp_arith_api.cc: tpu-kernel family M, float arithmetic, over
// cmodel/bdc/fp_arith.
#include "api_guard.h"
#include "cmodel/bdc/fp_arith.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::FpBinary;

namespace {

const dim4 &shape_of(const dim4 *shape) {
  if (!shape) fail(ErrorKind::illegal_command, "shape is a null pointer");
  return *shape;
}

}  // namespace

extern "C" {

#define TPU_BDC_FP_BINARY(NAME, OP)                                                                             \
  void NAME(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, const dim4 *shape,           \
            const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dtype) {      \
    return api::run(__func__, TPU_CALLER(), [&, name = __func__] {                                              \
      bdc::fp_binary(api::context(), name, OP, dst_addr, src0_addr, src1_addr, shape_of(shape), dst_stride,     \
                     src0_stride, src1_stride, dtype);                                                          \
    });                                                                                                         \
  }
TPU_BDC_FP_BINARY(tpu_bdc_fp_add, FpBinary::add)
TPU_BDC_FP_BINARY(tpu_bdc_fp_sub, FpBinary::sub)
TPU_BDC_FP_BINARY(tpu_bdc_fp_mul, FpBinary::mul)
#undef TPU_BDC_FP_BINARY

#define TPU_BDC_FP_BINARY_C(NAME, OP, CONSTANT_FIRST)                                                            \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride, \
            const dim4 *src_stride, data_type_t dtype) {                                                         \
    return api::run(__func__, TPU_CALLER(), [&, name = __func__] {                                               \
      bdc::fp_binary_const(api::context(), name, OP, CONSTANT_FIRST, dst_addr, src_addr, C, shape_of(shape),     \
                           dst_stride, src_stride, dtype);                                                       \
    });                                                                                                          \
  }
TPU_BDC_FP_BINARY_C(tpu_bdc_fp_add_C, FpBinary::add, false)
TPU_BDC_FP_BINARY_C(tpu_bdc_fp_sub_C, FpBinary::sub, false)
TPU_BDC_FP_BINARY_C(tpu_bdc_fp_C_sub, FpBinary::sub, true)
TPU_BDC_FP_BINARY_C(tpu_bdc_fp_mul_C, FpBinary::mul, false)
#undef TPU_BDC_FP_BINARY_C

}  // extern "C"
