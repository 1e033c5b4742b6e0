// gdma_api.cc: tpu-kernel family D (GDMA) over cmodel/gdma.
//
// Each function names its endpoints and hands them to the engine; all
// checking happens there. S = system memory (global or L2 SRAM), L = local.
#include "api_guard.h"
#include "record.h"
#include "cmodel/gdma/gdma.h"
#include "tpu_kernel.h"

using namespace cmodel;
using gdma::local;
using gdma::system;

namespace {

// Compact local layout (channel pitch h*w) of a tensor starting at addr.
dim4 compact_stride_at(local_addr_t addr, const dim4 &shape) {
  const ChipSpec &chip = api::context().chip;
  return compact_stride(chip, int(addr / chip.local_mem_bytes), shape);
}

}  // namespace

extern "C" {

// ---- plain copies -----------------------------------------------------------
void tpu_gdma_cpy_S2L(local_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                      const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_cpy_S2L, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    gdma::copy(api::context(), name, local(dst_addr, dst_stride), system(src_addr, src_stride),
               api::deref("shape", shape), dtype);
  });
}

void tpu_gdma_cpy_L2S(system_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                      const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_cpy_L2S, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    gdma::copy(api::context(), name, system(dst_addr, dst_stride), local(src_addr, src_stride),
               api::deref("shape", shape), dtype);
  });
}

void tpu_gdma_cpy_L2L(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                      const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_cpy_L2L, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    gdma::copy(api::context(), name, local(dst_addr, dst_stride), local(src_addr, src_stride),
               api::deref("shape", shape), dtype);
  });
}

void tpu_gdma_cpy_S2S(system_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                      const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_cpy_S2S, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    gdma::copy(api::context(), name, system(dst_addr, dst_stride), system(src_addr, src_stride),
               api::deref("shape", shape), dtype);
  });
}

void tpu_gdma_general_cpy_S2L(local_addr_t dst_addr, system_addr_t src_addr, const dim4 *dst_shape,
                              const dim4 *src_shape, const dim4 *dst_stride, const dim4 *src_stride,
                              data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_general_cpy_S2L, dst_addr, src_addr, dst_shape, src_shape, dst_stride,
                           src_stride, dtype),
                  [&, name = __func__] {
    gdma::general_copy(api::context(), name, local(dst_addr, dst_stride), system(src_addr, src_stride),
                       api::deref("dst_shape", dst_shape), api::deref("src_shape", src_shape), dtype);
  });
}

void tpu_gdma_general_cpy_L2S(system_addr_t dst_addr, local_addr_t src_addr, const dim4 *dst_shape,
                              const dim4 *src_shape, const dim4 *dst_stride, const dim4 *src_stride,
                              data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_general_cpy_L2S, dst_addr, src_addr, dst_shape, src_shape, dst_stride,
                           src_stride, dtype),
                  [&, name = __func__] {
    gdma::general_copy(api::context(), name, system(dst_addr, dst_stride), local(src_addr, src_stride),
                       api::deref("dst_shape", dst_shape), api::deref("src_shape", src_shape), dtype);
  });
}

void tpu_gdma_system_cpy(system_addr_t dst_addr, system_addr_t src_addr, unsigned int count, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_system_cpy, dst_addr, src_addr, count, dtype),
                  [&, name = __func__] { gdma::flat_copy(api::context(), name, dst_addr, src_addr, count, dtype); });
}

// ---- compact local layout ---------------------------------------------------
void tpu_gdma_compact_S2L(local_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_compact_S2L, dst_addr, src_addr, shape, dtype),
                  [&, name = __func__] {
    const dim4 stride = compact_stride_at(dst_addr, api::deref("shape", shape));
    gdma::copy(api::context(), name, local(dst_addr, &stride), system(src_addr), *shape, dtype);
  });
}

void tpu_gdma_compact_L2S(system_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_compact_L2S, dst_addr, src_addr, shape, dtype),
                  [&, name = __func__] {
    const dim4 stride = compact_stride_at(src_addr, api::deref("shape", shape));
    gdma::copy(api::context(), name, system(dst_addr), local(src_addr, &stride), *shape, dtype);
  });
}

void tpu_gdma_compact_nc_trans_S2L(local_addr_t dst_addr, system_addr_t src_addr, const dim4 *dst_shape,
                                   data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_compact_nc_trans_S2L, dst_addr, src_addr, dst_shape, dtype),
                  [&, name = __func__] {
    const dim4 stride = compact_stride_at(dst_addr, api::deref("dst_shape", dst_shape));
    gdma::nc_transpose(api::context(), name, local(dst_addr, &stride), system(src_addr), *dst_shape, dtype);
  });
}

void tpu_gdma_compact_nc_trans_L2S(system_addr_t dst_addr, local_addr_t src_addr, const dim4 *dst_shape,
                                   data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_compact_nc_trans_L2S, dst_addr, src_addr, dst_shape, dtype),
                  [&, name = __func__] {
    const dim4 &s = api::deref("dst_shape", dst_shape);
    const dim4 stride = compact_stride_at(src_addr, {s.c, s.n, s.h, s.w});
    gdma::nc_transpose(api::context(), name, system(dst_addr), local(src_addr, &stride), s, dtype);
  });
}

// ---- N <-> C transposes -------------------------------------------------------
#define TPU_GDMA_TRANSPOSE(NAME, ENGINE, DST_T, DST, SRC_T, SRC)                                                  \
  void NAME(DST_T dst_addr, SRC_T src_addr, const dim4 *dst_shape, const dim4 *dst_stride, const dim4 *src_stride, \
            data_type_t dtype) {                                                                                 \
    return api::run(__func__, TPU_CALLER(),                                                                                       \
                    TPU_ARGS(NAME, dst_addr, src_addr, dst_shape, dst_stride, src_stride, dtype),                                 \
                    [&, name = __func__] {                                                                                        \
      gdma::ENGINE(api::context(), name, DST(dst_addr, dst_stride), SRC(src_addr, src_stride),               \
                   api::deref("dst_shape", dst_shape), dtype);                                                     \
    });                                                                                                          \
  }

TPU_GDMA_TRANSPOSE(tpu_gdma_cpy_nc_trans_S2L, nc_transpose, local_addr_t, local, system_addr_t, system)
TPU_GDMA_TRANSPOSE(tpu_gdma_cpy_nc_trans_L2S, nc_transpose, system_addr_t, system, local_addr_t, local)
TPU_GDMA_TRANSPOSE(tpu_gdma_cpy_nc_trans_L2L, nc_transpose, local_addr_t, local, local_addr_t, local)
TPU_GDMA_TRANSPOSE(tpu_gdma_cpy_nc_trans_S2S, nc_transpose, system_addr_t, system, system_addr_t, system)
TPU_GDMA_TRANSPOSE(tpu_gdma_cpy_cw_trans_S2L, cw_transpose, local_addr_t, local, system_addr_t, system)
TPU_GDMA_TRANSPOSE(tpu_gdma_cpy_cw_trans_L2S, cw_transpose, system_addr_t, system, local_addr_t, local)
TPU_GDMA_TRANSPOSE(tpu_gdma_cpy_cw_trans_L2L, cw_transpose, local_addr_t, local, local_addr_t, local)
TPU_GDMA_TRANSPOSE(tpu_gdma_cpy_cw_trans_S2S, cw_transpose, system_addr_t, system, system_addr_t, system)
#undef TPU_GDMA_TRANSPOSE

// ---- reverse ----------------------------------------------------------------
#define TPU_GDMA_REVERSE(NAME, DST_T, DST, SRC_T, SRC)                                                           \
  void NAME(DST_T dst_addr, SRC_T src_addr, const dim4 *shape, const dim4 *dst_stride, const dim4 *src_stride,   \
            int reverse_axis, data_type_t dtype) {                                                             \
    return api::run(__func__, TPU_CALLER(),                                                                                     \
                    TPU_ARGS(NAME, dst_addr, src_addr, shape, dst_stride, src_stride, reverse_axis, dtype),                     \
                    [&, name = __func__] {                                                                                      \
      gdma::reverse(api::context(), name, DST(dst_addr, dst_stride), SRC(src_addr, src_stride),            \
                    api::deref("shape", shape), reverse_axis, dtype);                                            \
    });                                                                                                        \
  }

TPU_GDMA_REVERSE(tpu_gdma_reverse_S2L, local_addr_t, local, system_addr_t, system)
TPU_GDMA_REVERSE(tpu_gdma_reverse_L2S, system_addr_t, system, local_addr_t, local)
TPU_GDMA_REVERSE(tpu_gdma_reverse_L2L, local_addr_t, local, local_addr_t, local)
TPU_GDMA_REVERSE(tpu_gdma_reverse_S2S, system_addr_t, system, system_addr_t, system)
#undef TPU_GDMA_REVERSE

// ---- channel broadcast --------------------------------------------------------
void tpu_gdma_channel_bcast_S2L(local_addr_t dst_addr, system_addr_t src_addr, const dim4 *shape,
                                const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_channel_bcast_S2L, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    gdma::channel_broadcast(api::context(), name, local(dst_addr, dst_stride), system(src_addr, src_stride),
                            api::deref("shape", shape), dtype);
  });
}

void tpu_gdma_channel_bcast_L2L(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape,
                                const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_channel_bcast_L2L, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    gdma::channel_broadcast(api::context(), name, local(dst_addr, dst_stride), local(src_addr, src_stride),
                            api::deref("shape", shape), dtype);
  });
}

// ---- matrix and vector layouts ------------------------------------------------
void tpu_gdma_matrix_S2L(local_addr_t dst_addr, system_addr_t src_addr, int rows, int cols, int cols_per_channel,
                         int row_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_matrix_S2L, dst_addr, src_addr, rows, cols, cols_per_channel, row_stride, dtype),
                  [&, name = __func__] {
    gdma::matrix(api::context(), name, {dst_addr, src_addr, rows, cols, cols_per_channel, row_stride, true},
                 dtype);
  });
}

void tpu_gdma_matrix_L2S(system_addr_t dst_addr, local_addr_t src_addr, int rows, int cols, int cols_per_channel,
                         int row_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_matrix_L2S, dst_addr, src_addr, rows, cols, cols_per_channel, row_stride, dtype),
                  [&, name = __func__] {
    gdma::matrix(api::context(), name, {src_addr, dst_addr, rows, cols, cols_per_channel, row_stride, false},
                 dtype);
  });
}

// Local holds src^T: [src_cols, src_rows].
void tpu_gdma_matrix_trans_S2L(local_addr_t dst_addr, system_addr_t src_addr, int src_rows, int src_cols,
                               int dst_cols_per_channel, int src_row_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_matrix_trans_S2L, dst_addr, src_addr, src_rows, src_cols, dst_cols_per_channel,
                           src_row_stride, dtype),
                  [&, name = __func__] {
    gdma::matrix(api::context(), name,
                 {dst_addr, src_addr, src_cols, src_rows, dst_cols_per_channel, src_row_stride, true, true}, dtype);
  });
}

// Local holds [src_rows, src_cols]; the system gets its transpose.
void tpu_gdma_matrix_trans_L2S(system_addr_t dst_addr, local_addr_t src_addr, int src_rows, int src_cols,
                               int src_cols_per_channel, int dst_row_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_matrix_trans_L2S, dst_addr, src_addr, src_rows, src_cols, src_cols_per_channel,
                           dst_row_stride, dtype),
                  [&, name = __func__] {
    gdma::matrix(api::context(), name,
                 {src_addr, dst_addr, src_rows, src_cols, src_cols_per_channel, dst_row_stride, false, true}, dtype);
  });
}

void tpu_gdma_vector_S2L(local_addr_t dst_addr, system_addr_t src_addr, int len, int len_per_channel,
                         data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_vector_S2L, dst_addr, src_addr, len, len_per_channel, dtype),
                  [&, name = __func__] {
    gdma::matrix(api::context(), name, {dst_addr, src_addr, 1, len, len_per_channel, len, true}, dtype);
  });
}

void tpu_gdma_vector_L2S(system_addr_t dst_addr, local_addr_t src_addr, int len, int len_per_channel,
                         data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_vector_L2S, dst_addr, src_addr, len, len_per_channel, dtype),
                  [&, name = __func__] {
    gdma::matrix(api::context(), name, {src_addr, dst_addr, 1, len, len_per_channel, len, false}, dtype);
  });
}

// ---- constant fills -----------------------------------------------------------
void tpu_gdma_set_C_system(system_addr_t dst_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride,
                           data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_set_C_system, dst_addr, C, shape, dst_stride, dtype),
                  [&, name = __func__] {
    gdma::fill(api::context(), name, system(dst_addr, dst_stride), C.u32, api::deref("shape", shape), dtype);
  });
}

void tpu_gdma_set_C_local(local_addr_t dst_addr, scalar_t C, const dim4 *shape, const dim4 *dst_stride,
                          data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_gdma_set_C_local, dst_addr, C, shape, dst_stride, dtype),
                  [&, name = __func__] {
    gdma::fill(api::context(), name, local(dst_addr, dst_stride), C.u32, api::deref("shape", shape), dtype);
  });
}

}  // extern "C"
