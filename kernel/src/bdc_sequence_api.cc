// bdc_sequence_api.cc: tpu-kernel family Q2, arithmetic sequences and
// copies from static memory, over cmodel/bdc/sequence (see sequence.h for
// the layouts written).
#include "api_guard.h"
#include "api_impl.h"
#include "record.h"
#include "cmodel/bdc/sequence.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::SequenceLayout;

extern "C" {

void tpu_bdc_arithmetic_sequence_bcast(local_addr_t dst_addr, int npu_num, int start, int step, int num) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_arithmetic_sequence_bcast, dst_addr, npu_num, start, step, num),
                  [&, name = __func__] {
    bdc::arithmetic_sequence(api::context(), name, SequenceLayout::bcast, dst_addr, npu_num, start, step, num);
  });
}

void tpu_bdc_arithmetic_sequence_distribute(local_addr_t dst_addr, int start, int step, int num) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_arithmetic_sequence_distribute, dst_addr, start, step, num),
                  [&, name = __func__] {
    bdc::arithmetic_sequence(api::context(), name, SequenceLayout::distribute, dst_addr, 0, start, step, num);
  });
}

void tpu_bdc_arithmetic_sequence_distribute_aligned(local_addr_t dst_addr, int start, int step, int num) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_arithmetic_sequence_distribute_aligned, dst_addr, start, step, num),
                  [&, name = __func__] {
    bdc::arithmetic_sequence(api::context(), name, SequenceLayout::distribute_aligned, dst_addr, 0, start, step,
                             num);
  });
}

void tpu_bdc_arithmetic_sequence_general(local_addr_t dst_addr, local_addr_t buffer_addr, int npu_num, int start,
                                         int step, int num) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_arithmetic_sequence_general, dst_addr, buffer_addr, npu_num, start, step, num),
                  [&, name = __func__] {
    bdc::arithmetic_sequence_general(api::context(), name, dst_addr, buffer_addr, npu_num, start, step, num);
  });
}

void tpu_bdc_generate_arithmetic_sequence(local_addr_t dst_addr, int num, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_generate_arithmetic_sequence, dst_addr, num, dtype),
                  [&, name = __func__] {
    bdc::generate_sequence(api::context(), name, dst_addr, num, dtype);
  });
}

void tpu_bdc_npu_bcast_from_static(local_addr_t dst_addr, static_addr_t src_addr, int npu_num, int len,
                                   data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_npu_bcast_from_static, dst_addr, src_addr, npu_num, len, dtype),
                  [&, name = __func__] {
    bdc::copy_from_static(api::context(), name, false, dst_addr, src_addr, npu_num, len, dtype);
  });
}

void tpu_bdc_npu_distribute_from_static(local_addr_t dst_addr, static_addr_t src_addr, int len, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_npu_distribute_from_static, dst_addr, src_addr, len, dtype),
                  [&, name = __func__] {
    bdc::copy_from_static(api::context(), name, true, dst_addr, src_addr, 0, len, dtype);
  });
}

}  // extern "C"

// The *_with_dtype forms: the same layouts, elements of `dtype` (sequence.h).
// Their C boundaries are generated (tag `wrap`).
namespace cmodel::impl {

void tpu_bdc_arithmetic_sequence_bcast_with_dtype(local_addr_t dst_addr, int npu_num, int start, int step, int num,
                                                  data_type_t dtype) {
  bdc::arithmetic_sequence(api::context(), __func__, SequenceLayout::bcast, dst_addr, npu_num, start, step, num, dtype);
}

void tpu_bdc_arithmetic_sequence_distribute_with_dtype(local_addr_t dst_addr, int start, int step, int num,
                                                       data_type_t dtype) {
  bdc::arithmetic_sequence(api::context(), __func__, SequenceLayout::distribute, dst_addr, 0, start, step, num, dtype);
}

void tpu_bdc_arithmetic_sequence_distribute_aligned_with_dtype(local_addr_t dst_addr, int start, int step, int num,
                                                               data_type_t dtype) {
  bdc::arithmetic_sequence(api::context(), __func__, SequenceLayout::distribute_aligned, dst_addr, 0, start, step, num,
                           dtype);
}

void tpu_bdc_arithmetic_sequence_general_with_dtype(local_addr_t dst_addr, local_addr_t buffer_addr, int npu_num,
                                                    int start, int step, int num, data_type_t dtype) {
  bdc::arithmetic_sequence_general(api::context(), __func__, dst_addr, buffer_addr, npu_num, start, step, num, dtype);
}

}  // namespace cmodel::impl
