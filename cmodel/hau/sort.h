// sort.h: the HAU (hardware accelerator unit) sort on system memory, behind
// tpu_hau_sort* (kernel/src/hau_api.cc).
//
// One command sorts `rows` rows of `len` values each and keeps the first
// `k` of every sorted row; values are fp32, int32 or uint32, the carried
// indices uint32. Decisions where the public facts end (docs/cmodel.md):
// the sort is stable (equal values keep their input order, in both
// directions) and a NaN is greater than every number.
#pragma once

#include <cstdint>

#include "cmodel/context.h"

namespace cmodel::hau {

enum class Indices {
  none,     // values only
  natural,  // each kept value's position in its row, 0 .. len-1
  given,    // carried from index_in
};

struct SortCommand {
  uint64_t values_in = 0, values_out = 0;
  uint64_t index_in = 0, index_out = 0;  // by `indices`
  Indices indices = Indices::none;
  int rows = 1, len = 0, k = 0;
  bool descending = false;
  data_type_t dtype = DT_FP32;
};

void sort(Context &ctx, const char *api, const SortCommand &command);

}  // namespace cmodel::hau
