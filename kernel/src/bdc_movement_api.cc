// bdc_movement_api.cc: tpu-kernel family O, BDC data movement, over
// cmodel/bdc/movement.
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/movement.h"
#include "tpu_kernel.h"

using namespace cmodel;

extern "C" {

void tpu_bdc_cpy(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                 const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_cpy, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    bdc::copy(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride, dtype);
  });
}

void tpu_bdc_set_C(local_addr_t dst_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_set_C, dst_addr, C, shape, dst_stride, dtype),
                  [&, name = __func__] {
    bdc::fill(api::context(), name, dst_addr, C, api::shape_of(shape), dst_stride, dtype);
  });
}

void tpu_bdc_npu_bcast(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_npu_bcast, dst_addr, src_addr, shape, dtype),
                  [&, name = __func__] {
    bdc::npu_broadcast(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dtype);
  });
}

void tpu_bdc_cpy_cross_npu(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_cpy_cross_npu, dst_addr, src_addr, shape, dtype),
                  [&, name = __func__] {
    bdc::copy_cross_npu(api::context(), name, dst_addr, src_addr, api::shape_of(shape), dtype);
  });
}

// The two transposes give the same result: on hardware they differ in how
// the lanes walk the tensors (which one is faster depends on the shape, and
// which operand must start on NPU 0), not in what they compute.
void tpu_bdc_cw_trans(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_cw_trans, dst_addr, src_addr, shape, dtype),
                  [&, name = __func__] {
    bdc::cw_transpose(api::context(), name, bdc::Transpose::cw, dst_addr, src_addr, api::shape_of(shape), dtype);
  });
}

void tpu_bdc_wc_trans(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_wc_trans, dst_addr, src_addr, shape, dtype),
                  [&, name = __func__] {
    bdc::cw_transpose(api::context(), name, bdc::Transpose::wc, dst_addr, src_addr, api::shape_of(shape), dtype);
  });
}

}  // extern "C"
