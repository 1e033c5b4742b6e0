// ppl_test_state.h: what the host side of PPL __TEST__ programs shares
// between its files (ppl_test_runner.cc: buffers, random data, dumps and
// the main loop; ppl_test_data.cc: reading files into buffers and strided
// random fills; ppl_autotune.cc: the __AUTOTUNE__ table). Internal to
// libtpu_runtime.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tpu_runtime/dtype.h"

namespace ppl_test_host {

struct buffer {
  tpu_runtime::Dtype dtype;
  std::vector<int64_t> shape;
  uint64_t bytes;
};

// One kernel call of an __AUTOTUNE__ function: its scalar arguments, its
// status and the cost model's estimate of its run.
struct tuning_row {
  std::string kernel, arguments;
  int status = 0;
  double total_us = 0;
};

struct runner {
  std::map<uint64_t, buffer> buffers;  // by global address
  std::mt19937 random{20240607u};
  std::string stem;
  std::string data_dir = "data";
  int calls = 0;
  int failures = 0;  // of the running test
  // The running function is an __AUTOTUNE__ one: its kernel calls are rows
  // of its table (no dumps, no failures), null pointers get scratch buffers.
  bool autotune = false;
  std::vector<tuning_row> table;
  std::map<int, uint64_t> scratch;  // by pointer index
};

runner &state();

// ppl.h's DT_* numbering (spec §2.1) to the host's types; none for fp8 & co.
std::optional<tpu_runtime::Dtype> host_dtype(int ppl_dtype);

// Records the outcome of a kernel call of an __AUTOTUNE__ function in the
// row its arguments opened.
void record_tuning(const char *kernel, int status);

// The __AUTOTUNE__ function that just ended: prints its table and the
// fastest call; false when no call succeeded.
bool report_tuning(const char *function);

}  // namespace ppl_test_host
