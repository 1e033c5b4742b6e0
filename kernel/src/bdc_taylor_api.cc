// bdc_taylor_api.cc: tpu-kernel family Q2, per-lane polynomials and table
// lookups (tpu_bdc_fp_taylor, tpu_bdc_table_lookup), over cmodel/bdc/taylor.
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/taylor.h"
#include "tpu_kernel.h"

using namespace cmodel;

extern "C" {

void tpu_bdc_fp_taylor(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t coeff_addr, const dim4 *shape,
                       int num, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_taylor, dst_addr, src_addr, coeff_addr, shape, num, dtype),
                  [&, name = __func__] {
    bdc::fp_taylor(api::context(), name, dst_addr, src_addr, coeff_addr, api::shape_of(shape), num, dtype);
  });
}

void tpu_bdc_table_lookup(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t table_addr, const dim4 *shape,
                          int len, data_type_t dst_dtype, data_type_t src_dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_table_lookup, dst_addr, src_addr, table_addr, shape, len, dst_dtype, src_dtype),
                  [&, name = __func__] {
    bdc::table_lookup(api::context(), name, dst_addr, src_addr, table_addr, api::shape_of(shape), len, dst_dtype,
                      src_dtype);
  });
}

}  // extern "C"
