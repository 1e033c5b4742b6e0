// compare.h: how close an op's output is to its reference.
//
// The vendor flow's two similarity figures, plus the errors a kernel author
// needs to see:
//   cosine      a.b / (|a| |b|)            (1 when both are all zero)
//   euclidean   1 - |a - b| / |(a + b) / 2| (1 when both are all zero)
//   max_abs     max |a_i - b_i|
//   max_ulp     max distance in units in the last place of the element
//               type, after rounding the reference to that type (nearest
//               even): 0 means exactly the correctly rounded result
// NaN matches NaN; a NaN against a number is a mismatch of infinite error,
// and NaNs are left out of the similarity sums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tpu_runtime/dtype.h"

namespace tpu_runtime {

struct Similarity {
  double cosine = 1;
  double euclidean = 1;
  double max_abs = 0;
  double max_ulp = 0;          // infinity when a NaN meets a number
  std::int64_t first_mismatch = -1;  // first index whose ulp distance is not 0
  std::int64_t worst_index = -1;     // index of max_ulp
  std::size_t mismatches = 0;        // elements with a non-zero ulp distance
};

// `actual` holds values of `dtype` (decoded to fp32); `expected` is the fp32
// reference.
Similarity compare(std::span<const float> actual, std::span<const float> expected, Dtype dtype);

// What an output must reach. Default figures depend on the dtype
// (default_tolerance); max_ulp = 0 asks for bit-exact results.
struct Tolerance {
  double min_cosine = 0.99999;
  double min_euclidean = 0.9999;
  double max_ulp = 2;
};
Tolerance default_tolerance(Dtype dtype);
Tolerance exact_tolerance();

// True when `s` is within `t`; otherwise `why` says which figure failed.
bool within(const Similarity &s, const Tolerance &t, std::string *why = nullptr);

}  // namespace tpu_runtime
