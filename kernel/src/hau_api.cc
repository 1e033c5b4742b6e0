// hau_api.cc: family T, the HAU sort (cmodel/hau/sort.h). The NMS and line
// gather forms are not emulated: their record formats are not public.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/context.h"
#include "cmodel/hau/sort.h"

namespace cmodel::impl {

using hau::Indices;
using hau::SortCommand;

namespace {

void run_sort(const char *api, SortCommand c) { hau::sort(api::context(), api, c); }

SortCommand values_only(system_addr_t out, system_addr_t in, int rows, int len, int K, bool descended,
                        data_type_t dtype) {
  SortCommand c;
  c.values_out = out;
  c.values_in = in;
  c.rows = rows;
  c.len = len;
  c.k = K;
  c.descending = descended;
  c.dtype = dtype;
  return c;
}

SortCommand with_indices(SortCommand c, Indices kind, system_addr_t index_out, system_addr_t index_in = 0) {
  c.indices = kind;
  c.index_out = index_out;
  c.index_in = index_in;
  return c;
}

data_type_t general_dtype(int dtype_flags) {
  switch (dtype_flags) {
    case 0: return DT_FP32;
    case 1: return DT_INT32;
    case 2: return DT_UINT32;
  }
  fail(ErrorKind::illegal_command, "dtype_flags = {}; expected 0 (fp32), 1 (int32) or 2 (uint32)", dtype_flags);
}

bool flag(const char *name, int value) {
  if (value != 0 && value != 1) fail(ErrorKind::illegal_command, "{} = {}; expected 0 or 1", name, value);
  return value == 1;
}

}  // namespace

void tpu_hau_sort(system_addr_t output_addr, system_addr_t input_addr, int len, int K, bool descended,
                  data_type_t dtype) {
  run_sort(__func__, values_only(output_addr, input_addr, 1, len, K, descended, dtype));
}

void tpu_hau_sort_natural_index(system_addr_t output_data_addr, system_addr_t output_idx_addr,
                                system_addr_t input_addr, int len, int K, bool descended, data_type_t dtype) {
  run_sort(__func__, with_indices(values_only(output_data_addr, input_addr, 1, len, K, descended, dtype),
                                  Indices::natural, output_idx_addr));
}

void tpu_hau_sort_specific_index(system_addr_t output_data_addr, system_addr_t output_idx_addr,
                                 system_addr_t input_data_addr, system_addr_t input_idx_addr, int len, int K,
                                 bool descended, data_type_t dtype) {
  run_sort(__func__, with_indices(values_only(output_data_addr, input_data_addr, 1, len, K, descended, dtype),
                                  Indices::given, output_idx_addr, input_idx_addr));
}

void tpu_hau_sort_2d(system_addr_t output_addr, system_addr_t input_addr, int row_num, int len, int K,
                     bool descended, data_type_t dtype) {
  run_sort(__func__, values_only(output_addr, input_addr, row_num, len, K, descended, dtype));
}

void tpu_hau_sort_natural_index_2d(system_addr_t output_data_addr, system_addr_t output_idx_addr,
                                   system_addr_t input_addr, int row_num, int len, int K, bool descended,
                                   data_type_t dtype) {
  run_sort(__func__, with_indices(values_only(output_data_addr, input_addr, row_num, len, K, descended, dtype),
                                  Indices::natural, output_idx_addr));
}

void tpu_hau_sort_specific_index_2d(system_addr_t output_data_addr, system_addr_t output_idx_addr,
                                    system_addr_t input_data_addr, system_addr_t input_idx_addr, int row_num,
                                    int len, int K, bool descended, data_type_t dtype) {
  run_sort(__func__,
           with_indices(values_only(output_data_addr, input_data_addr, row_num, len, K, descended, dtype),
                        Indices::given, output_idx_addr, input_idx_addr));
}

// idx_enable: write indices to dst_idx_addr; idx_auto: natural ones rather
// than those at src_idx_addr.
void tpu_hau_sort_general(system_addr_t src_data_addr, system_addr_t src_idx_addr, system_addr_t dst_data_addr,
                          system_addr_t dst_idx_addr, int dtype_flags, int len, int is_descend, int idx_enable,
                          int idx_auto, int topk) {
  SortCommand c = values_only(dst_data_addr, src_data_addr, 1, len, topk, flag("is_descend", is_descend),
                              general_dtype(dtype_flags));
  const bool indices = flag("idx_enable", idx_enable), natural = flag("idx_auto", idx_auto);
  if (indices) c = with_indices(c, natural ? Indices::natural : Indices::given, dst_idx_addr, src_idx_addr);
  run_sort(__func__, c);
}

}  // namespace cmodel::impl
