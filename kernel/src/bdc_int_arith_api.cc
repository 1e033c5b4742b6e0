// bdc_int_arith_api.cc: tpu-kernel family N, integer arithmetic, over
// cmodel/bdc/int_arith (semantics documented there).
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/int_arith.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::IntBinary;

namespace {

// `char` is signed on the targets the SDK supports; the value is passed on
// as an int so that a negative shift is reported as such.
bdc::IntRescale rescale(char shift, rounding_mode_t rounding_mode, bool saturation) {
  return {static_cast<signed char>(shift), rounding_mode, saturation};
}

}  // namespace

extern "C" {

#define TPU_BDC_INT_BINARY(NAME, OP)                                                                             \
  void NAME(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, const dim4 *shape,            \
            const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dst_dtype,     \
            data_type_t src0_dtype, data_type_t src1_dtype, char shift, rounding_mode_t rounding_mode,           \
            bool saturation) {                                                                                   \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride, src1_stride,  \
                             dst_dtype, src0_dtype, src1_dtype, shift, rounding_mode, saturation),               \
                    [&, name = __func__] {                                                                       \
      bdc::int_binary(api::context(), name, OP, dst_addr, src0_addr, src1_addr, api::shape_of(shape), dst_stride,     \
                      src0_stride, src1_stride, dst_dtype, src0_dtype, src1_dtype,                               \
                      rescale(shift, rounding_mode, saturation));                                                \
    });                                                                                                          \
  }
TPU_BDC_INT_BINARY(tpu_bdc_int_add, IntBinary::add)
TPU_BDC_INT_BINARY(tpu_bdc_int_sub, IntBinary::sub)
TPU_BDC_INT_BINARY(tpu_bdc_int_mul, IntBinary::mul)
#undef TPU_BDC_INT_BINARY

#define TPU_BDC_INT_BINARY_C(NAME, OP, CONSTANT_FIRST)                                                           \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride, \
            const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype, data_type_t C_dtype,          \
            char shift, rounding_mode_t rounding_mode, bool saturation) {                                        \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride, dst_dtype, src_dtype,   \
                             C_dtype, shift, rounding_mode, saturation),                                         \
                    [&, name = __func__] {                                                                       \
      bdc::int_binary_const(api::context(), name, OP, CONSTANT_FIRST, dst_addr, src_addr, C, api::shape_of(shape),    \
                            dst_stride, src_stride, dst_dtype, src_dtype, C_dtype,                               \
                            rescale(shift, rounding_mode, saturation));                                          \
    });                                                                                                          \
  }
TPU_BDC_INT_BINARY_C(tpu_bdc_int_add_C, IntBinary::add, false)
TPU_BDC_INT_BINARY_C(tpu_bdc_int_sub_C, IntBinary::sub, false)
TPU_BDC_INT_BINARY_C(tpu_bdc_int_C_sub, IntBinary::sub, true)
TPU_BDC_INT_BINARY_C(tpu_bdc_int_mul_C, IntBinary::mul, false)
#undef TPU_BDC_INT_BINARY_C

#define TPU_BDC_INT_PCS_BINARY(NAME, OP)                                                                         \
  void NAME(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, local_addr_t shift_addr,      \
            const dim4 *shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride,         \
            data_type_t dst_dtype, data_type_t src0_dtype, data_type_t src1_dtype,                               \
            rounding_mode_t rounding_mode, bool saturation) {                                                    \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src0_addr, src1_addr, shift_addr, shape, dst_stride, src0_stride,   \
                             src1_stride, dst_dtype, src0_dtype, src1_dtype, rounding_mode, saturation),         \
                    [&, name = __func__] {                                                                       \
      bdc::int_binary_pcs(api::context(), name, OP, dst_addr, src0_addr, src1_addr, shift_addr, api::shape_of(shape), \
                          dst_stride, src0_stride, src1_stride, dst_dtype, src0_dtype, src1_dtype,               \
                          rounding_mode, saturation);                                                            \
    });                                                                                                          \
  }
TPU_BDC_INT_PCS_BINARY(tpu_bdc_int_pcs_add, IntBinary::add)
TPU_BDC_INT_PCS_BINARY(tpu_bdc_int_pcs_sub, IntBinary::sub)
TPU_BDC_INT_PCS_BINARY(tpu_bdc_int_pcs_mul, IntBinary::mul)
#undef TPU_BDC_INT_PCS_BINARY

#define TPU_BDC_INT_PCS_BINARY_C(NAME, OP, CONSTANT_FIRST)                                                       \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t shift_addr, scalar_t C,                   \
            const dim4 *shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype,            \
            data_type_t src_dtype, data_type_t C_dtype, rounding_mode_t rounding_mode, bool saturation) {        \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src_addr, shift_addr, C, shape, dst_stride, src_stride, dst_dtype,  \
                             src_dtype, C_dtype, rounding_mode, saturation),                                     \
                    [&, name = __func__] {                                                                       \
      bdc::int_binary_pcs_const(api::context(), name, OP, CONSTANT_FIRST, dst_addr, src_addr, shift_addr, C,     \
                                api::shape_of(shape), dst_stride, src_stride, dst_dtype, src_dtype, C_dtype,          \
                                rounding_mode, saturation);                                                      \
    });                                                                                                          \
  }
TPU_BDC_INT_PCS_BINARY_C(tpu_bdc_int_pcs_add_C, IntBinary::add, false)
TPU_BDC_INT_PCS_BINARY_C(tpu_bdc_int_pcs_sub_C, IntBinary::sub, false)
TPU_BDC_INT_PCS_BINARY_C(tpu_bdc_int_pcs_C_sub, IntBinary::sub, true)
TPU_BDC_INT_PCS_BINARY_C(tpu_bdc_int_pcs_mul_C, IntBinary::mul, false)
#undef TPU_BDC_INT_PCS_BINARY_C

void tpu_bdc_int_square(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                        const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype, char shift,
                        rounding_mode_t rounding_mode, bool saturation) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_int_square, dst_addr, src_addr, shape, dst_stride, src_stride, dst_dtype,
                           src_dtype, shift, rounding_mode, saturation),
                  [&, name = __func__] {
    bdc::int_square(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride, dst_dtype,
                    src_dtype, rescale(shift, rounding_mode, saturation));
  });
}

#define TPU_BDC_INT_MIN_MAX_C(NAME, IS_MAX)                                                                      \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride, \
            const dim4 *src_stride, data_type_t dtype, char shift, rounding_mode_t rounding_mode) {             \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride, dtype, shift,           \
                             rounding_mode),                                                                     \
                    [&, name = __func__] {                                                                       \
      bdc::int_min_max_const(api::context(), name, IS_MAX, dst_addr, src_addr, C, api::shape_of(shape), dst_stride,   \
                             src_stride, dtype, static_cast<signed char>(shift), rounding_mode);                 \
    });                                                                                                          \
  }
TPU_BDC_INT_MIN_MAX_C(tpu_bdc_int_min_C, false)
TPU_BDC_INT_MIN_MAX_C(tpu_bdc_int_max_C, true)
#undef TPU_BDC_INT_MIN_MAX_C

}  // extern "C"
