// gdma_system_api.cc: family D commands on flat system memory (fill,
// broadcast), the reducing copies into L2 SRAM, the local reshaping copy,
// and mask select / nonzero with the filter count they leave behind.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/context.h"
#include "cmodel/gdma/gdma.h"

namespace cmodel::impl {

using gdma::local;
using gdma::system;

void tpu_gdma_system_set(system_addr_t dst_addr, scalar_t C, unsigned int count, data_type_t dtype) {
  gdma::flat_fill(api::context(), __func__, dst_addr, C.u32, count, dtype);
}

void tpu_gdma_system_bcast(system_addr_t dst_addr, system_addr_t src_addr, unsigned int count, int dst_channel,
                           data_type_t dtype) {
  gdma::flat_broadcast(api::context(), __func__, dst_addr, src_addr, count, dst_channel, dtype);
}

void tpu_gdma_general_cpy_L2L(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *dst_shape,
                              const dim4 *src_shape, const dim4 *dst_stride, const dim4 *src_stride,
                              data_type_t dtype) {
  gdma::general_copy(api::context(), __func__, local(dst_addr, dst_stride), local(src_addr, src_stride),
                     api::deref("dst_shape", dst_shape), api::deref("src_shape", src_shape), dtype);
}

// ---- reducing copies into L2 SRAM -------------------------------------------------
void tpu_gdma_cpy_reduce_L12L2(system_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape,
                               const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int reduce_psum_op,
                               int reduce_opcode) {
  gdma::reduce_copy(api::context(), __func__, system(dst_addr, dst_stride), local(src_addr, src_stride),
                    gdma::ReduceSource::local, api::shape_of(shape), dtype, {reduce_psum_op, reduce_opcode});
}

void tpu_gdma_cpy_reduce_S2L2(system_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape,
                              const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int reduce_psum_op,
                              int reduce_opcode) {
  gdma::reduce_copy(api::context(), __func__, system(dst_addr, dst_stride), system(src_addr, src_stride),
                    gdma::ReduceSource::ddr, api::shape_of(shape), dtype, {reduce_psum_op, reduce_opcode});
}

void tpu_gdma_cpy_reduce_L22L2(system_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape,
                               const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int reduce_psum_op,
                               int reduce_opcode) {
  gdma::reduce_copy(api::context(), __func__, system(dst_addr, dst_stride), system(src_addr, src_stride),
                    gdma::ReduceSource::l2, api::shape_of(shape), dtype, {reduce_psum_op, reduce_opcode});
}

// ---- mask select and nonzero ---------------------------------------------------------
namespace {

gdma::Endpoint mask_endpoint(addr_t mask_addr, int mask_in_lmem) {
  if (mask_in_lmem != 0 && mask_in_lmem != 1)
    fail(ErrorKind::illegal_command, "mask_in_lmem = {}; expected 0 (system memory) or 1 (local memory)",
         mask_in_lmem);
  return mask_in_lmem ? local(local_addr_t(mask_addr)) : system(mask_addr);
}

// Every mask select leaves its element count for tpu_gdma_get_filter_num.
unsigned int mask_select(const char *api, global_addr_t dst_addr, gdma::Endpoint src, addr_t mask_addr,
                         int mask_in_lmem, const dim4 *shape, data_type_t data_dtype, data_type_t mask_dtype) {
  Context &ctx = api::context();
  ctx.kernel.gdma_filter_num = gdma::mask_select(ctx, api, dst_addr, src, mask_endpoint(mask_addr, mask_in_lmem),
                                                 api::shape_of(shape), data_dtype, mask_dtype);
  return ctx.kernel.gdma_filter_num;
}

}  // namespace

void tpu_gdma_mask_select_S2S(global_addr_t dst_addr, global_addr_t src_addr, addr_t mask_addr, int mask_in_lmem,
                              const dim4 *shape, data_type_t data_dtype, data_type_t mask_dtype) {
  mask_select(__func__, dst_addr, system(src_addr), mask_addr, mask_in_lmem, shape, data_dtype, mask_dtype);
}

void tpu_gdma_mask_select_L2S(global_addr_t dst_addr, local_addr_t src_addr, addr_t mask_addr, int mask_in_lmem,
                              const dim4 *shape, data_type_t data_dtype, data_type_t mask_dtype) {
  mask_select(__func__, dst_addr, local(src_addr), mask_addr, mask_in_lmem, shape, data_dtype, mask_dtype);
}

unsigned int tpu_gdma_mask_select_S2S_with_ret(global_addr_t dst_addr, global_addr_t src_addr, addr_t mask_addr,
                                               int mask_in_lmem, const dim4 *shape, data_type_t data_dtype,
                                               data_type_t mask_dtype) {
  return mask_select(__func__, dst_addr, system(src_addr), mask_addr, mask_in_lmem, shape, data_dtype, mask_dtype);
}

void tpu_gdma_nonzero_S2S(global_addr_t dst_addr, global_addr_t src_addr, const dim4 *shape, data_type_t data_dtype,
                          unsigned int base_idx) {
  Context &ctx = api::context();
  ctx.kernel.gdma_filter_num =
      gdma::nonzero(ctx, __func__, dst_addr, system(src_addr), api::shape_of(shape), data_dtype, base_idx);
}

void tpu_gdma_nonzero_L2S(global_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t data_dtype,
                          unsigned int base_idx) {
  Context &ctx = api::context();
  ctx.kernel.gdma_filter_num =
      gdma::nonzero(ctx, __func__, dst_addr, local(src_addr), api::shape_of(shape), data_dtype, base_idx);
}

unsigned int tpu_gdma_get_filter_num(void) { return api::context().kernel.gdma_filter_num; }

}  // namespace cmodel::impl
