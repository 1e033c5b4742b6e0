// bdc_cast_api.cc: tpu-kernel family P, BDC cast and rounding, over
// cmodel/bdc/cast.
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/cast.h"
#include "tpu_kernel.h"

using namespace cmodel;

extern "C" {

void tpu_bdc_cast(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                  const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t mode) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_cast, dst_addr, src_addr, shape, dst_stride, src_stride, dst_dtype, src_dtype,
                           mode),
                  [&, name = __func__] {
    bdc::cast(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride, dst_dtype,
              src_dtype, mode);
  });
}

void tpu_bdc_fp_round(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                      const dim4 *src_stride, data_type_t dtype, rounding_mode_t mode) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_round, dst_addr, src_addr, shape, dst_stride, src_stride, dtype, mode),
                  [&, name = __func__] {
    bdc::fp_round(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride, dtype, mode);
  });
}

void tpu_bdc_fp_floor(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                      const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_floor, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    bdc::fp_round(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride, dtype,
                  RM_DOWN);
  });
}

void tpu_bdc_fp_ceil(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                     const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_ceil, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    bdc::fp_round(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride, dtype, RM_UP);
  });
}

}  // extern "C"
