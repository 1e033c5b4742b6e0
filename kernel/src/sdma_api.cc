// sdma_api.cc: family E (the system DMA engine) and family V (the same
// commands on a virtual SDMA port).
//
// The SDMA moves system memory only and runs the GDMA's command
// implementations (cmodel/gdma) with its commands booked on the SDMA
// timeline (gdma::OnSdma); its cw-transpose, mask select, nonzero and
// reverse are refused (SDMA-6), so its filter counts stay 0. A virtual port
// is a queue of that one engine: the port number is checked
// (ChipSpec::vsdma_port_num) and keeps its own filter count; its commands
// are counted under the tpu_vsdma_* name.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include <algorithm>

#include "api_guard.h"
#include "multicore.h"
#include "api_impl.h"
#include "cmodel/context.h"
#include "cmodel/gdma/gdma.h"

namespace cmodel::impl {

using gdma::system;

namespace {

// The SDMA's part of every command; `api` names it in the statistics.
void copy(const char *api, system_addr_t dst, system_addr_t src, const dim4 *shape, const dim4 *dst_stride,
          const dim4 *src_stride, data_type_t dtype) {
  Context &ctx = api::context();
  gdma::OnSdma sdma(ctx);
  gdma::copy(ctx, api, system(dst, dst_stride), system(src, src_stride), api::shape_of(shape), dtype);
}

void nc_transpose(const char *api, system_addr_t dst, system_addr_t src, const dim4 *dst_shape,
                  const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {
  Context &ctx = api::context();
  gdma::OnSdma sdma(ctx);
  gdma::nc_transpose(ctx, api, system(dst, dst_stride), system(src, src_stride), api::deref("dst_shape", dst_shape),
                     dtype);
}

void fill(const char *api, system_addr_t dst, scalar_t C, const dim4 *shape, const dim4 *dst_stride,
          data_type_t dtype) {
  Context &ctx = api::context();
  gdma::OnSdma sdma(ctx);
  gdma::fill(ctx, api, system(dst, dst_stride), C.u32, api::shape_of(shape), dtype);
}

void flat_copy(const char *api, system_addr_t dst, system_addr_t src, unsigned int count, data_type_t dtype) {
  Context &ctx = api::context();
  gdma::OnSdma sdma(ctx);
  gdma::flat_copy(ctx, api, dst, src, count, dtype);
}

void flat_fill(const char *api, system_addr_t dst, scalar_t C, unsigned int count, data_type_t dtype) {
  Context &ctx = api::context();
  gdma::OnSdma sdma(ctx);
  gdma::flat_fill(ctx, api, dst, C.u32, count, dtype);
}

// The SDMA has no cw-transpose, mask-select, nonzero or reverse command:
// the vendor's checker refuses them unconditionally ("Not support") and,
// unlike its other rules, that refusal stands in every build of the
// vendor's cmodel, which is what its users meet (SDMA-6, docs/cmodel.md).
[[noreturn]] void not_on_sdma(const char *command) {
  fail(Rule::SDMA_6, "the SDMA has no {} command (the vendor's cmodel refuses it: \"Not support\"); the GDMA has one",
       command);
}

void reduce(const char *api, gdma::ReduceSource from, system_addr_t dst, system_addr_t src, const dim4 *shape,
            const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int psum_op, int opcode) {
  Context &ctx = api::context();
  gdma::OnSdma sdma(ctx);
  gdma::reduce_copy(ctx, api, system(dst, dst_stride), system(src, src_stride), from, api::shape_of(shape), dtype,
                    {psum_op, opcode});
}

// The filter count of virtual port `port`, after checking the port.
uint32_t &port_filter_num(int port) {
  Context &ctx = api::context();
  if (port < 0 || port >= ctx.chip.vsdma_port_num)
    fail(ErrorKind::illegal_command, "port {} does not exist; {} has {} virtual SDMA ports (0 .. {})", port,
         ctx.chip.name, ctx.chip.vsdma_port_num, ctx.chip.vsdma_port_num - 1);
  return ctx.kernel.vsdma_filter_num[size_t(port)];
}
void check_port(int port) { (void)port_filter_num(port); }

}  // namespace

// ---- family E ------------------------------------------------------------------
void tpu_sdma_cpy_S2S(system_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                      const dim4 *src_stride, data_type_t dtype) {
  copy(__func__, dst_addr, src_addr, shape, dst_stride, src_stride, dtype);
}
void tpu_sdma_cpy_nc_trans_S2S(system_addr_t dst_addr, system_addr_t src_addr, const dim4 *dst_shape,
                               const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {
  nc_transpose(__func__, dst_addr, src_addr, dst_shape, dst_stride, src_stride, dtype);
}
void tpu_sdma_cpy_cw_trans_S2S(system_addr_t, system_addr_t, const dim4 *, const dim4 *, const dim4 *, data_type_t) {
  not_on_sdma("cw-transpose");
}
void tpu_sdma_set_C_system(system_addr_t dst_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride,
                           data_type_t dtype) {
  fill(__func__, dst_addr, C, shape, dst_stride, dtype);
}
void tpu_sdma_system_cpy(system_addr_t dst_addr, system_addr_t src_addr, unsigned int count, data_type_t dtype) {
  flat_copy(__func__, dst_addr, src_addr, count, dtype);
}
void tpu_sdma_system_set(system_addr_t dst_addr, scalar_t C, unsigned int count, data_type_t dtype) {
  flat_fill(__func__, dst_addr, C, count, dtype);
}
void tpu_sdma_reverse_S2S(system_addr_t, system_addr_t, const dim4 *, const dim4 *, const dim4 *, int, data_type_t) {
  not_on_sdma("reverse");
}
void tpu_sdma_mask_select_S2S(global_addr_t, global_addr_t, global_addr_t, const dim4 *, data_type_t, data_type_t) {
  not_on_sdma("mask-select");
}
void tpu_sdma_nonzero_S2S(global_addr_t, global_addr_t, const dim4 *, data_type_t, unsigned int) {
  not_on_sdma("nonzero");
}
unsigned int tpu_sdma_get_filter_num(void) { return api::context().kernel.sdma_filter_num; }
void tpu_sdma_cpy_reduce_S2L2(system_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape,
                              const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int reduce_psum_op,
                              int reduce_opcode) {
  reduce(__func__, gdma::ReduceSource::ddr, dst_addr, src_addr, shape, dst_stride, src_stride, dtype, reduce_psum_op,
         reduce_opcode);
}
void tpu_sdma_cpy_reduce_L22L2(system_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape,
                               const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int reduce_psum_op,
                               int reduce_opcode) {
  reduce(__func__, gdma::ReduceSource::l2, dst_addr, src_addr, shape, dst_stride, src_stride, dtype, reduce_psum_op,
         reduce_opcode);
}

// ---- family V: the port is checked before the command ------------------------------
void tpu_vsdma_initialize(void) {
  Context &ctx = api::context();
  ctx.timeline.sync();
  std::fill(ctx.kernel.vsdma_filter_num.begin(), ctx.kernel.vsdma_filter_num.end(), 0u);
}
void tpu_vsdma_port_initialize(int port) {
  port_filter_num(port) = 0;
  api::context().timeline.sync();
}
void tpu_vsdma_poll(void) { api::context().timeline.sync(); }
void tpu_vsdma_port_poll(int port) {
  check_port(port);
  api::context().timeline.sync();
}
void tpu_vsdma_cpy_S2S(system_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                       const dim4 *src_stride, data_type_t dtype, int port_id) {
  check_port(port_id);
  copy(__func__, dst_addr, src_addr, shape, dst_stride, src_stride, dtype);
}
void tpu_vsdma_cpy_nc_trans_S2S(system_addr_t dst_addr, system_addr_t src_addr, const dim4 *dst_shape,
                                const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int port_id) {
  check_port(port_id);
  nc_transpose(__func__, dst_addr, src_addr, dst_shape, dst_stride, src_stride, dtype);
}
void tpu_vsdma_cpy_cw_trans_S2S(system_addr_t, system_addr_t, const dim4 *, const dim4 *, const dim4 *, data_type_t,
                                int port_id) {
  check_port(port_id);
  not_on_sdma("cw-transpose");
}
void tpu_vsdma_set_C_system(system_addr_t dst_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride,
                            data_type_t dtype, int port_id) {
  check_port(port_id);
  fill(__func__, dst_addr, C, shape, dst_stride, dtype);
}
void tpu_vsdma_system_cpy(system_addr_t dst_addr, system_addr_t src_addr, unsigned int count, data_type_t dtype,
                          int port_id) {
  check_port(port_id);
  flat_copy(__func__, dst_addr, src_addr, count, dtype);
}
void tpu_vsdma_system_set(system_addr_t dst_addr, scalar_t C, unsigned int count, data_type_t dtype, int port_id) {
  check_port(port_id);
  flat_fill(__func__, dst_addr, C, count, dtype);
}
void tpu_vsdma_reverse_S2S(system_addr_t, system_addr_t, const dim4 *, const dim4 *, const dim4 *, int, data_type_t,
                           int port_id) {
  check_port(port_id);
  not_on_sdma("reverse");
}
void tpu_vsdma_mask_select_S2S(global_addr_t, global_addr_t, global_addr_t, const dim4 *, data_type_t, data_type_t,
                               int port_id) {
  check_port(port_id);
  not_on_sdma("mask-select");
}
void tpu_vsdma_nonzero_S2S(global_addr_t, global_addr_t, const dim4 *, data_type_t, unsigned int, int port_id) {
  check_port(port_id);
  not_on_sdma("nonzero");
}
unsigned int tpu_vsdma_get_filter_num(int port_id) { return port_filter_num(port_id); }

// ---- row gather and scatter (index in system memory; gdma_gather_api.cc) ----------
static void sdma_h_gather(const char *api, system_addr_t output_addr, system_addr_t param_addr,
                          system_addr_t index_addr, scalar_t C, const dim4 *shape, int param_h,
                          const dim4 *output_stride, const dim4 *param_stride, const dim4 *index_stride,
                          data_type_t dtype) {
  Context &ctx = api::context();
  gdma::OnSdma sdma(ctx);
  gdma::h_gather(ctx, api, system(output_addr, output_stride), system(param_addr, param_stride),
                 {system(index_addr, index_stride)}, api::shape_of(shape), param_h, C.u32, dtype);
}
static void sdma_h_scatter(const char *api, system_addr_t output_addr, system_addr_t param_addr,
                           system_addr_t index_addr, const dim4 *shape, int param_h, const dim4 *output_stride,
                           const dim4 *param_stride, const dim4 *index_stride, data_type_t dtype) {
  Context &ctx = api::context();
  gdma::OnSdma sdma(ctx);
  gdma::h_scatter(ctx, api, system(output_addr, output_stride), system(param_addr, param_stride),
                  {system(index_addr, index_stride)}, api::shape_of(shape), param_h, false, dtype);
}
void tpu_sdma_h_gather_S2S(system_addr_t output_addr, system_addr_t param_addr, system_addr_t index_addr, scalar_t C,
                           const dim4 *shape, int param_h, const dim4 *output_stride, const dim4 *param_stride,
                           const dim4 *index_stride, data_type_t dtype) {
  sdma_h_gather(__func__, output_addr, param_addr, index_addr, C, shape, param_h, output_stride, param_stride,
                index_stride, dtype);
}
void tpu_sdma_h_scatter_S2S(system_addr_t output_addr, system_addr_t param_addr, system_addr_t index_addr,
                            const dim4 *shape, int param_h, const dim4 *output_stride, const dim4 *param_stride,
                            const dim4 *index_stride, data_type_t dtype) {
  sdma_h_scatter(__func__, output_addr, param_addr, index_addr, shape, param_h, output_stride, param_stride,
                 index_stride, dtype);
}
void tpu_vsdma_h_gather_S2S(system_addr_t output_addr, system_addr_t param_addr, system_addr_t index_addr, scalar_t C,
                            const dim4 *shape, int param_h, const dim4 *output_stride, const dim4 *param_stride,
                            const dim4 *index_stride, data_type_t dtype, int port_id) {
  check_port(port_id);
  sdma_h_gather(__func__, output_addr, param_addr, index_addr, C, shape, param_h, output_stride, param_stride,
                index_stride, dtype);
}
void tpu_vsdma_h_scatter_S2S(system_addr_t output_addr, system_addr_t param_addr, system_addr_t index_addr,
                             const dim4 *shape, int param_h, const dim4 *output_stride, const dim4 *param_stride,
                             const dim4 *index_stride, data_type_t dtype, int port_id) {
  check_port(port_id);
  sdma_h_scatter(__func__, output_addr, param_addr, index_addr, shape, param_h, output_stride, param_stride,
                 index_stride, dtype);
}
// Messages order engine work on the hardware; the emulator executes every
// command when it is issued, so on one core only the port is checked. In a
// multi-core run they synchronise the cores (multicore.h).
void tpu_vsdma_send_msg(int msg_id, int wait_cnt, int port_id) {
  check_port(port_id);
  if (multicore::active()) multicore::send(__func__, msg_id, wait_cnt);
}
void tpu_vsdma_wait_msg(int msg_id, int send_cnt, int port_id) {
  check_port(port_id);
  if (multicore::active()) multicore::wait(__func__, msg_id, send_cnt);
}

}  // namespace cmodel::impl
