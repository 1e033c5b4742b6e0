// bdc_gather_api.cc: tpu-kernel family S, BDC gather / scatter inside local
// memory, over cmodel/bdc/gather (see gather.h for layouts and the rules
// for out-of-range indices). The C boundaries are generated from
// kernel/api/tpu_kernel.api (tag `wrap`); these are the bodies.
//
// The (h, w) pair forms (tpu_bdc_hw_gather*, tpu_bdc_hw_scatter) are over
// cmodel/bdc/hw_gather (hw_gather.h: the index pairs' layout we decided).
//
// Not implemented (still a "not implemented" stub):
// tpu_bdc_batch_bcast_w_mask_select (its packing and the count's dtype are
// not documented).
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/bdc/gather.h"
#include "cmodel/bdc/hw_gather.h"
#include "cmodel/context.h"

namespace cmodel::impl {
namespace {

using bdc::Gather;
using bdc::GatherAxis;
using bdc::OutOfRange;
using bdc::Scatter;

void run_gather(const char *api, local_addr_t output, local_addr_t param, local_addr_t index, const dim4 *shape,
                const Gather &g) {
  bdc::gather(api::context(), api, output, param, index, api::deref("shape", shape), g);
}

void run_scatter(const char *api, local_addr_t output, local_addr_t param, local_addr_t index, const dim4 *shape,
                 const Scatter &s) {
  bdc::scatter(api::context(), api, output, param, index, api::deref("shape", shape), s);
}

// The *_exception forms: C for out-of-range indices when fill_const, else
// the nearest valid position.
Gather with_exception(Gather g, scalar_t C, bool fill_const) {
  g.out_of_range = fill_const ? OutOfRange::fill : OutOfRange::clamp;
  g.fill = C;
  return g;
}

}  // namespace

void tpu_bdc_w_gather(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr, const dim4 *shape,
                      int param_w, data_type_t dtype, data_type_t index_dtype) {
  run_gather(__func__, output_addr, param_addr, index_addr, shape, {GatherAxis::w, param_w, dtype, index_dtype});
}

void tpu_bdc_w_gather_exception(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                                scalar_t C, const dim4 *shape, int param_w, data_type_t dtype,
                                data_type_t index_dtype, bool fill_const) {
  run_gather(__func__, output_addr, param_addr, index_addr, shape,
             with_exception({GatherAxis::w, param_w, dtype, index_dtype}, C, fill_const));
}

void tpu_bdc_w_scatter(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr, const dim4 *shape,
                       int output_w, data_type_t dtype, data_type_t index_dtype) {
  run_scatter(__func__, output_addr, param_addr, index_addr, shape, {GatherAxis::w, output_w, dtype, index_dtype});
}

void tpu_bdc_batch_bcast_w_gather(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                                  const dim4 *shape, int param_w, data_type_t dtype, data_type_t index_dtype,
                                  bool is_param_repeated) {
  run_gather(__func__, output_addr, param_addr, index_addr, shape,
             {GatherAxis::w, param_w, dtype, index_dtype, is_param_repeated, true});
}

void tpu_bdc_batch_bcast_w_gather_exception(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                                            scalar_t C, const dim4 *shape, int param_w, data_type_t dtype,
                                            data_type_t index_dtype, bool is_param_repeated, bool fill_const) {
  run_gather(__func__, output_addr, param_addr, index_addr, shape,
             with_exception({GatherAxis::w, param_w, dtype, index_dtype, is_param_repeated, true}, C, fill_const));
}

void tpu_bdc_batch_bcast_w_scatter(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                                   const dim4 *shape, int output_w, data_type_t dtype, data_type_t index_dtype,
                                   bool is_param_repeated) {
  run_scatter(__func__, output_addr, param_addr, index_addr, shape,
              {GatherAxis::w, output_w, dtype, index_dtype, is_param_repeated, true});
}

void tpu_bdc_batch_bcast_h_gather(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                                  const dim4 *shape, int param_h, data_type_t dtype, data_type_t index_dtype,
                                  bool is_param_repeated) {
  run_gather(__func__, output_addr, param_addr, index_addr, shape,
             {GatherAxis::h, param_h, dtype, index_dtype, is_param_repeated, true});
}

void tpu_bdc_batch_bcast_h_gather_exception(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                                            scalar_t C, const dim4 *shape, int param_h, data_type_t dtype,
                                            data_type_t index_dtype, bool is_param_repeated, bool fill_const) {
  run_gather(__func__, output_addr, param_addr, index_addr, shape,
             with_exception({GatherAxis::h, param_h, dtype, index_dtype, is_param_repeated, true}, C, fill_const));
}

void tpu_bdc_batch_bcast_h_scatter(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                                   const dim4 *shape, int output_h, data_type_t dtype, data_type_t index_dtype,
                                   bool is_param_repeated) {
  run_scatter(__func__, output_addr, param_addr, index_addr, shape,
              {GatherAxis::h, output_h, dtype, index_dtype, is_param_repeated, true});
}

// The 4-bank forms differ in where the hardware keeps the operands, not in
// what they compute.
void tpu_bdc_4bank_w_gather(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                            const dim4 *shape, int param_w, data_type_t dtype, data_type_t index_dtype,
                            bool is_param_repeated) {
  run_gather(__func__, output_addr, param_addr, index_addr, shape,
             {GatherAxis::w, param_w, dtype, index_dtype, is_param_repeated, true});
}

void tpu_bdc_4bank_w_gather_exception(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                                      scalar_t C, const dim4 *shape, int param_w, data_type_t dtype,
                                      data_type_t index_dtype, bool is_param_repeated, bool fill_const) {
  run_gather(__func__, output_addr, param_addr, index_addr, shape,
             with_exception({GatherAxis::w, param_w, dtype, index_dtype, is_param_repeated, true}, C, fill_const));
}

// ---- by (h, w) index pairs ----------------------------------------------------------

void tpu_bdc_hw_gather(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr, const dim4 *shape,
                       int param_h, int param_w, data_type_t dtype) {
  bdc::hw_gather(api::context(), __func__, output_addr, param_addr, index_addr, api::deref("shape", shape),
                 {param_h, param_w, dtype});
}

void tpu_bdc_hw_gather_exception(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
                                 scalar_t C, const dim4 *shape, int param_h, int param_w, data_type_t dtype,
                                 bool fill_const) {
  bdc::hw_gather(api::context(), __func__, output_addr, param_addr, index_addr, api::deref("shape", shape),
                 {param_h, param_w, dtype, fill_const ? OutOfRange::fill : OutOfRange::clamp, C});
}

void tpu_bdc_hw_scatter(local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr, const dim4 *shape,
                        int output_h, int output_w, data_type_t dtype) {
  bdc::hw_scatter(api::context(), __func__, output_addr, param_addr, index_addr, api::deref("shape", shape), output_h,
                  output_w, dtype);
}

}  // namespace cmodel::impl
