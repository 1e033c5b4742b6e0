// bdc_bitwise_api.cc: tpu-kernel family K, bitwise, min/max and shifts,
// over cmodel/bdc/bitwise (semantics documented there).
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/bitwise.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::Bitwise;
using bdc::ShiftKind;

extern "C" {

#define TPU_BDC_BITWISE(NAME, OP)                                                                               \
  void NAME(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, const dim4 *shape,           \
            const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dtype) {      \
    return api::run(__func__, TPU_CALLER(),                                                                     \
                    TPU_ARGS(NAME, dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride, src1_stride, \
                             dtype),                                                                            \
                    [&, name = __func__] {                                                                      \
      bdc::bitwise(api::context(), name, OP, dst_addr, src0_addr, src1_addr, api::shape_of(shape), dst_stride,       \
                   src0_stride, src1_stride, dtype);                                                            \
    });                                                                                                         \
  }
TPU_BDC_BITWISE(tpu_bdc_and, Bitwise::and_)
TPU_BDC_BITWISE(tpu_bdc_or, Bitwise::or_)
TPU_BDC_BITWISE(tpu_bdc_xor, Bitwise::xor_)
#undef TPU_BDC_BITWISE

#define TPU_BDC_BITWISE_C(NAME, OP)                                                                              \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride, \
            const dim4 *src_stride, data_type_t dtype) {                                                         \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride, dtype),                 \
                    [&, name = __func__] {                                                                       \
      bdc::bitwise_const(api::context(), name, OP, dst_addr, src_addr, C, api::shape_of(shape), dst_stride,           \
                         src_stride, dtype);                                                                     \
    });                                                                                                          \
  }
TPU_BDC_BITWISE_C(tpu_bdc_and_C, Bitwise::and_)
TPU_BDC_BITWISE_C(tpu_bdc_or_C, Bitwise::or_)
TPU_BDC_BITWISE_C(tpu_bdc_xor_C, Bitwise::xor_)
#undef TPU_BDC_BITWISE_C

#define TPU_BDC_MIN_MAX(NAME, IS_MAX)                                                                           \
  void NAME(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, const dim4 *shape,           \
            const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dtype) {      \
    return api::run(__func__, TPU_CALLER(),                                                                     \
                    TPU_ARGS(NAME, dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride, src1_stride, \
                             dtype),                                                                            \
                    [&, name = __func__] {                                                                      \
      bdc::min_max(api::context(), name, IS_MAX, dst_addr, src0_addr, src1_addr, api::shape_of(shape), dst_stride,   \
                   src0_stride, src1_stride, dtype);                                                            \
    });                                                                                                         \
  }
TPU_BDC_MIN_MAX(tpu_bdc_min, false)
TPU_BDC_MIN_MAX(tpu_bdc_max, true)
#undef TPU_BDC_MIN_MAX

#define TPU_BDC_MIN_MAX_C(NAME, IS_MAX)                                                                          \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride, \
            const dim4 *src_stride, data_type_t dtype) {                                                         \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride, dtype),                 \
                    [&, name = __func__] {                                                                       \
      bdc::min_max_const(api::context(), name, IS_MAX, dst_addr, src_addr, C, api::shape_of(shape), dst_stride,       \
                         src_stride, dtype);                                                                     \
    });                                                                                                          \
  }
TPU_BDC_MIN_MAX_C(tpu_bdc_min_C, false)
TPU_BDC_MIN_MAX_C(tpu_bdc_max_C, true)
#undef TPU_BDC_MIN_MAX_C

#define TPU_BDC_SHIFT(NAME, KIND)                                                                                \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t shift_addr, const dim4 *shape,            \
            const dim4 *dst_stride, const dim4 *src_stride, const dim4 *shift_stride, data_type_t dst_dtype,     \
            data_type_t src_dtype, data_type_t shift_dtype, rounding_mode_t rounding_mode) {                     \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src_addr, shift_addr, shape, dst_stride, src_stride, shift_stride,  \
                             dst_dtype, src_dtype, shift_dtype, rounding_mode),                                  \
                    [&, name = __func__] {                                                                       \
      bdc::shift(api::context(), name, KIND, dst_addr, src_addr, shift_addr, api::shape_of(shape), dst_stride,        \
                 src_stride, shift_stride, dst_dtype, src_dtype, shift_dtype, rounding_mode);                    \
    });                                                                                                          \
  }
TPU_BDC_SHIFT(tpu_bdc_arithmetic_shift, ShiftKind::arithmetic)
TPU_BDC_SHIFT(tpu_bdc_logical_shift, ShiftKind::logical)
#undef TPU_BDC_SHIFT

// `char` is signed on the targets the SDK supports; a negative C shifts right.
#define TPU_BDC_SHIFT_C(NAME, KIND)                                                                              \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, char C, const dim4 *shape, const dim4 *dst_stride,     \
            const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t rounding_mode) { \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst_addr, src_addr, C, shape, dst_stride, src_stride, dst_dtype, src_dtype,   \
                             rounding_mode),                                                                     \
                    [&, name = __func__] {                                                                       \
      bdc::shift_const(api::context(), name, KIND, dst_addr, src_addr, static_cast<signed char>(C),              \
                       api::shape_of(shape), dst_stride, src_stride, dst_dtype, src_dtype, rounding_mode);            \
    });                                                                                                          \
  }
TPU_BDC_SHIFT_C(tpu_bdc_arithmetic_shift_C, ShiftKind::arithmetic)
TPU_BDC_SHIFT_C(tpu_bdc_logical_shift_C, ShiftKind::logical)
#undef TPU_BDC_SHIFT_C

}  // extern "C"
