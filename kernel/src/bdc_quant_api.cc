// bdc_quant_api.cc: tpu-kernel family J, requantisation and
// dequantisation, over cmodel/bdc/quant (see quant.h for the formulas and
// what is left unimplemented). The C boundaries are generated from
// kernel/api/tpu_kernel.api (tag `wrap`); these are the bodies.
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/bdc/quant.h"
#include "cmodel/context.h"

namespace cmodel::impl {

void tpu_bdc_int_requant(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, int multiplier, char shift,
                         scalar_t offset, data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t rounding_mode) {
  const bdc::IntQuant q{false, 0, false, multiplier, static_cast<signed char>(shift), offset};
  bdc::int_quant(api::context(), __func__, dst_addr, src_addr, api::deref("shape", shape), q, dst_dtype, src_dtype,
                 rounding_mode);
}

void tpu_bdc_int_pc_requant(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t quant_addr, const dim4 *shape,
                            data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t rounding_mode) {
  const bdc::IntQuant q{false, quant_addr, true, 0, 0, {}};
  bdc::int_quant(api::context(), __func__, dst_addr, src_addr, api::deref("shape", shape), q, dst_dtype, src_dtype,
                 rounding_mode);
}

void tpu_bdc_int_dequant(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, scalar_t offset,
                         int multiplier, char shift, data_type_t dst_dtype, data_type_t src_dtype,
                         rounding_mode_t rounding_mode) {
  const bdc::IntQuant q{true, 0, false, multiplier, static_cast<signed char>(shift), offset};
  bdc::int_quant(api::context(), __func__, dst_addr, src_addr, api::deref("shape", shape), q, dst_dtype, src_dtype,
                 rounding_mode);
}

void tpu_bdc_fp32_requant(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, float scale, float offset,
                          data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t dst_rounding_mode,
                          rounding_mode_t src_rounding_mode) {
  bdc::fp32_requant(api::context(), __func__, dst_addr, src_addr, api::deref("shape", shape), scale, offset, dst_dtype,
                    src_dtype, dst_rounding_mode, src_rounding_mode);
}

void tpu_bdc_fp32_dequant(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, scalar_t offset,
                          float scale, data_type_t src_dtype, rounding_mode_t rounding_mode) {
  bdc::fp32_dequant(api::context(), __func__, dst_addr, src_addr, api::deref("shape", shape), offset, scale, src_dtype,
                    rounding_mode);
}

}  // namespace cmodel::impl
