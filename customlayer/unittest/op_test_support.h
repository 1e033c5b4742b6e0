// op_test_support.h: what the sample ops' unit tests share.
//
// The tests run on the chips named by CUSTOM_LAYER_CHIP_ARCH (set by
// run_custom_unittest <arch>) or, when it is unset, on both chips. The
// libraries come from the usual places (TPUC_ROOT, TPUKERNEL_CUSTOM_FIRMWARE_PATH).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "tpu_runtime/dtype.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/op_tester.h"

// GoogleTest prints parameters on failure: dtypes by name, not as bytes.
namespace tpu_runtime {
inline void PrintTo(Dtype dtype, std::ostream *os) { *os << dtype_name(dtype); }
}  // namespace tpu_runtime

namespace op_test {

inline std::vector<std::string> chips_under_test() {
  const char *arch = std::getenv("CUSTOM_LAYER_CHIP_ARCH");
  if (arch && *arch) return {arch};
  return {"bm1684x", "bm1688"};
}

inline const std::vector<tpu_runtime::Dtype> &float_dtypes() {
  static const std::vector<tpu_runtime::Dtype> dtypes = {tpu_runtime::Dtype::fp32, tpu_runtime::Dtype::fp16,
                                                         tpu_runtime::Dtype::bf16};
  return dtypes;
}

// One test per (chip, dtype).
using ChipDtype = std::tuple<std::string, tpu_runtime::Dtype>;

inline auto chip_dtype_values() {
  std::vector<ChipDtype> values;
  for (const std::string &chip : chips_under_test())
    for (tpu_runtime::Dtype dtype : float_dtypes()) values.emplace_back(chip, dtype);
  return ::testing::ValuesIn(values);
}

inline std::string chip_dtype_name(const ::testing::TestParamInfo<ChipDtype> &info) {
  return std::get<0>(info.param) + "_" + tpu_runtime::dtype_name(std::get<1>(info.param));
}

class OpTest : public ::testing::TestWithParam<ChipDtype> {
 protected:
  const std::string &chip() const { return std::get<0>(GetParam()); }
  tpu_runtime::Dtype dtype() const { return std::get<1>(GetParam()); }
  // A tester for this chip and dtype; fp32 results must be bit-exact.
  tpu_runtime::OpTester tester(const std::string &op) const {
    tpu_runtime::OpTester t;
    t.op(op).chip(chip()).dtype(dtype());
    if (dtype() == tpu_runtime::Dtype::fp32) t.exact();
    return t;
  }
};

// Runs the tester and checks every case passed; returns the report.
inline tpu_runtime::OpReport expect_pass(const tpu_runtime::OpTester &tester) {
  tpu_runtime::OpReport report = tester.run();
  EXPECT_TRUE(report.passed) << report.summary();
  return report;
}

// Runs the tester, which must throw tpu_runtime::Error; returns the
// message ("" after a failed expectation when nothing was thrown).
inline std::string expect_error(const tpu_runtime::OpTester &tester) {
  try {
    tester.run();
  } catch (const tpu_runtime::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "the op ran although it had to stop with an error";
  return "";
}

}  // namespace op_test
