// gdma_gather_api.cc: family D row gather and scatter along H
// (tpu_gdma_h_gather_* / tpu_gdma_h_scatter_*, their _ext forms); the SDMA
// and virtual-SDMA forms are in sdma_api.cc.
//
// The index is a local or a system tensor (index_is_local) of uint32 row
// numbers, shape (N, C, H, 1) for a gather (one per output row) and
// (N, C, param_h, 1) for a scatter (one per source row: `shape` is the
// destination's there too), read with index_stride (NULL: the default
// layout of its space). The C boundaries are generated from
// kernel/api/tpu_kernel.api (tag `wrap`); these are the bodies, run inside
// api::run.
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/context.h"
#include "cmodel/gdma/gdma.h"

namespace cmodel::impl {

using gdma::local;
using gdma::system;

namespace {

gdma::RowIndex row_index(addr_t index_addr, bool index_is_local, const dim4 *index_stride, uint32_t start_pos = 0) {
  return {index_is_local ? local(local_addr_t(index_addr), index_stride) : system(index_addr, index_stride),
          start_pos};
}

void gather(const char *api, gdma::Endpoint dst, gdma::Endpoint param, const gdma::RowIndex &index, scalar_t C,
            const dim4 *shape, int param_h, data_type_t dtype) {
  gdma::h_gather(api::context(), api, dst, param, index, api::shape_of(shape), param_h, C.u32, dtype);
}

// `shape` is the destination's, param_h the source's row count.
void scatter(const char *api, gdma::Endpoint dst, gdma::Endpoint param, const gdma::RowIndex &index,
             const dim4 *shape, int param_h, bool add, data_type_t dtype) {
  gdma::h_scatter(api::context(), api, dst, param, index, api::shape_of(shape), param_h, add, dtype);
}

}  // namespace

void tpu_gdma_h_gather_S2L(local_addr_t output_addr, system_addr_t param_addr, addr_t index_addr, bool index_is_local,
                           scalar_t C, const dim4 *shape, int param_h, const dim4 *output_stride,
                           const dim4 *param_stride, const dim4 *index_stride, data_type_t dtype) {
  gather(__func__, local(output_addr, output_stride), system(param_addr, param_stride),
         row_index(index_addr, index_is_local, index_stride), C, shape, param_h, dtype);
}

void tpu_gdma_h_gather_L2S(system_addr_t output_addr, local_addr_t param_addr, addr_t index_addr, bool index_is_local,
                           scalar_t C, const dim4 *shape, int param_h, const dim4 *output_stride,
                           const dim4 *param_stride, const dim4 *index_stride, data_type_t dtype) {
  gather(__func__, system(output_addr, output_stride), local(param_addr, param_stride),
         row_index(index_addr, index_is_local, index_stride), C, shape, param_h, dtype);
}

void tpu_gdma_h_gather_L2L(local_addr_t output_addr, local_addr_t param_addr, addr_t index_addr, bool index_is_local,
                           scalar_t C, const dim4 *shape, int param_h, const dim4 *output_stride,
                           const dim4 *param_stride, const dim4 *index_stride, data_type_t dtype) {
  gather(__func__, local(output_addr, output_stride), local(param_addr, param_stride),
         row_index(index_addr, index_is_local, index_stride), C, shape, param_h, dtype);
}

void tpu_gdma_h_gather_S2S(system_addr_t output_addr, system_addr_t param_addr, addr_t index_addr,
                           bool index_is_local, scalar_t C, const dim4 *shape, int param_h, const dim4 *output_stride,
                           const dim4 *param_stride, const dim4 *index_stride, data_type_t dtype) {
  gather(__func__, system(output_addr, output_stride), system(param_addr, param_stride),
         row_index(index_addr, index_is_local, index_stride), C, shape, param_h, dtype);
}

void tpu_gdma_h_gather_S2S_ext(system_addr_t output_addr, system_addr_t param_addr, addr_t index_addr,
                               bool index_is_local, scalar_t C, const dim4 *shape, int param_h, u32 start_pos,
                               const dim4 *output_stride, const dim4 *param_stride, const dim4 *index_stride,
                               data_type_t dtype) {
  gather(__func__, system(output_addr, output_stride), system(param_addr, param_stride),
         row_index(index_addr, index_is_local, index_stride, start_pos), C, shape, param_h, dtype);
}

void tpu_gdma_h_scatter_S2L(local_addr_t output_addr, system_addr_t param_addr, addr_t index_addr,
                            bool index_is_local, const dim4 *shape, int param_h, const dim4 *output_stride,
                            const dim4 *param_stride, const dim4 *index_stride, data_type_t dtype) {
  scatter(__func__, local(output_addr, output_stride), system(param_addr, param_stride),
          row_index(index_addr, index_is_local, index_stride), shape, param_h, false, dtype);
}

void tpu_gdma_h_scatter_L2S(system_addr_t output_addr, local_addr_t param_addr, addr_t index_addr,
                            bool index_is_local, const dim4 *shape, int param_h, const dim4 *output_stride,
                            const dim4 *param_stride, const dim4 *index_stride, data_type_t dtype) {
  scatter(__func__, system(output_addr, output_stride), local(param_addr, param_stride),
          row_index(index_addr, index_is_local, index_stride), shape, param_h, false, dtype);
}

void tpu_gdma_h_scatter_L2L(local_addr_t output_addr, local_addr_t param_addr, addr_t index_addr,
                            bool index_is_local, const dim4 *shape, int param_h, const dim4 *output_stride,
                            const dim4 *param_stride, const dim4 *index_stride, data_type_t dtype) {
  scatter(__func__, local(output_addr, output_stride), local(param_addr, param_stride),
          row_index(index_addr, index_is_local, index_stride), shape, param_h, false, dtype);
}

void tpu_gdma_h_scatter_S2S(system_addr_t output_addr, system_addr_t param_addr, addr_t index_addr,
                            bool index_is_local, const dim4 *shape, int param_h, const dim4 *output_stride,
                            const dim4 *param_stride, const dim4 *index_stride, data_type_t dtype) {
  scatter(__func__, system(output_addr, output_stride), system(param_addr, param_stride),
          row_index(index_addr, index_is_local, index_stride), shape, param_h, false, dtype);
}

void tpu_gdma_h_scatter_S2S_ext(system_addr_t output_addr, system_addr_t param_addr, addr_t index_addr,
                                bool index_is_local, const dim4 *shape, int param_h, u32 start_pos, int inplace_add,
                                const dim4 *output_stride, const dim4 *param_stride, const dim4 *index_stride,
                                data_type_t dtype) {
  if (inplace_add != 0 && inplace_add != 1)
    fail(ErrorKind::illegal_command, "inplace_add = {}; expected 0 (overwrite) or 1 (add into the row)", inplace_add);
  scatter(__func__, system(output_addr, output_stride), system(param_addr, param_stride),
          row_index(index_addr, index_is_local, index_stride, start_pos), shape, param_h, inplace_add == 1, dtype);
}

}  // namespace cmodel::impl
