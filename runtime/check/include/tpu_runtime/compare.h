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

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "tpu_runtime/dtype.h"

namespace tpu_runtime {

// Buckets of the ulp histogram: 0; then [1, 2), [2, 4), ... doubling, the
// last open-ended from 2^22 on; then infinite (NaN against a number).
inline constexpr std::size_t kUlpBuckets = 25;
std::size_t ulp_bucket_of(double ulps);
std::string ulp_bucket_label(std::size_t bucket);  // "0", "1", "2-3", "4-7", ..., ">=4194304", "inf"

struct Similarity {
  double cosine = 1;
  double euclidean = 1;
  double max_abs = 0;
  std::int64_t max_abs_index = -1;  // index of max_abs
  double peak = 0;                  // max |expected| over the finite elements
  double max_ulp = 0;          // infinity when a NaN meets a number
  std::int64_t first_mismatch = -1;  // first index whose ulp distance is not 0
  std::int64_t worst_index = -1;     // index of max_ulp
  std::size_t mismatches = 0;        // elements with a non-zero ulp distance
  // Elements where one side is NaN or infinite and the other is not the same
  // (NaN against a number, a number against NaN, +inf against a finite value
  // or -inf). The similarity figures cannot see them (NaN pairs are left out
  // of the sums; an all-NaN output would have cosine 1): every comparison
  // fails on any, under every criterion.
  std::size_t nonfinite_mismatches = 0;
  std::int64_t first_nonfinite = -1;
  // The values at first_mismatch (NaN when there is none), for reports.
  double first_actual = std::numeric_limits<double>::quiet_NaN();
  double first_expected = std::numeric_limits<double>::quiet_NaN();
  // How many elements lie at each ulp distance (ulp_bucket_of gives the
  // bucket of a distance, ulp_bucket_label names it).
  std::array<std::uint64_t, kUlpBuckets> ulp_histogram{};
};

// `actual` holds values of `dtype` (decoded to fp32); `expected` is the fp32
// reference.
Similarity compare(std::span<const float> actual, std::span<const float> expected, Dtype dtype);

// Elements an op never wrote. Before a run the runtime fills every output
// with 0xFF bytes (the op tester and model runs alike): a NaN in every float
// type, -1 or the maximum in the integer types. An element still holding
// those bytes where the reference, stored in the output's dtype, holds
// something else was not written. Under the vendor's criterion NaN counts as
// 0, so such elements could pass as "similar" where the reference is near 0:
// every comparison checks this first and fails on any. (Where the reference
// is NaN, a float element's poison cannot be told from a result.)
struct Unwritten {
  std::size_t count = 0;
  std::int64_t first = -1;  // index of the first one
};
// `stored`: the output's bytes as the op left them (element i at
// i * dtype_size(dtype)); `expected`: the fp32 reference, one per element.
Unwritten find_unwritten(std::span<const std::uint8_t> stored, Dtype dtype, std::span<const float> expected);

// What an output must reach. Default figures depend on the dtype
// (default_tolerance); max_ulp = 0 asks for bit-exact results.
// max_ulp NaN: the dtype's default bound (default_tolerance), for a
// tolerance that sets only the similarity figures (tpu_model --tolerance).
struct Tolerance {
  double min_cosine = 0.99999;
  double min_euclidean = 0.9999;
  double max_ulp = 2;
  // Bound on max_abs as a fraction of the reference's peak |value|
  // (infinity: none). A chain of layers computed in another order than its
  // reference (PyTorch, a plugin's inference) is off by a few ulps of the
  // terms it summed, not of each result: an element near 0 can be thousands
  // of its own ulps away while correct. Model outputs bound the error
  // against the output's peak instead (model_output_tolerance).
  double max_peak_error = std::numeric_limits<double>::infinity();
};
// `t` with a NaN max_ulp replaced by the default bound of `dtype`.
Tolerance resolved_tolerance(const Tolerance &t, Dtype dtype);
Tolerance default_tolerance(Dtype dtype);
// A model output's default: default_tolerance's similarity figures; for a
// float dtype no per-element ulp bound but max_abs at most 2^-16 (fp32),
// 2^-8 (fp16) or 2^-5 (bf16) of the peak, about 128, 4 and 4 ulps of the
// peak; an integer dtype keeps default_tolerance.
Tolerance model_output_tolerance(Dtype dtype);
// `t` with a NaN max_ulp replaced by model_output_tolerance's figures (the
// ulp bound and the peak bound): tpu_model --tolerance sets only the
// similarity figures.
Tolerance resolved_model_tolerance(const Tolerance &t, Dtype dtype);
Tolerance exact_tolerance();

// True when `s` is within `t`; otherwise `why` says which figure failed.
bool within(const Similarity &s, const Tolerance &t, std::string *why = nullptr);

// ---- The vendor's criterion ---------------------------------------------
// What decides whether an output passes: our ulp bounds (Tolerance), or the
// vendor tool chain's comparison (TensorCompare.compare of npz_tool.py):
//   1. equal values                                    -> equal (pass)
//   2. an integer type must be equal                   -> not_equal (fail)
//   3. |a - e| <= 1e-8 + 1e-3 |e| everywhere (allclose
//      at rtol 1e-3; NaN against NaN counts as close) -> close (pass)
//   4. NaN -> 0 and +-inf -> +-10000, then
//      cosine    a.e / (|a| |e|), 0 when either is all zero
//      euclidean 1 - |a - e| / (|(a + e) / 2| + 1e-7)
//      both above the bounds                           -> similar (pass)
//      otherwise                                       -> not_similar (fail)
// The ulp figures are computed either way and shown in reports.
enum class Criterion { ulp, vendor };
const char *criterion_name(Criterion criterion);
// "ulp" or "vendor"; throws Error naming the accepted values.
Criterion parse_criterion(std::string_view name);

// Cosine and euclidean similarity must be strictly greater than these.
struct VendorTolerance {
  double min_cosine = 0.99;
  double min_euclidean = 0.99;
};
// fp32: 0.99, 0.99 (npz_tool.py compare's default, also what TpuLang's
// compile_f32 asks of the fp32 Top inference against the references);
// fp16 and bf16: 0.95, 0.80 (what TpuLang asks of the f16/bf16 lowering
// against Top, and of the bmodel against it); integer types must be equal
// anyway.
VendorTolerance default_vendor_tolerance(Dtype dtype);

enum class VendorVerdict { equal, close, similar, not_equal, not_similar };
const char *verdict_name(VendorVerdict verdict);  // "equal", "close", "not similar", ...
bool verdict_passes(VendorVerdict verdict);

struct VendorComparison {
  VendorVerdict verdict = VendorVerdict::equal;
  double cosine = 1;     // the vendor's figures (step 4), also for equal/close
  double euclidean = 1;
  // As Similarity's: the vendor counts NaN as 0 and inf as 10000, so these
  // are checked first and make the verdict not_similar.
  std::size_t nonfinite_mismatches = 0;
  std::int64_t first_nonfinite = -1;
};
VendorComparison vendor_compare(std::span<const float> actual, std::span<const float> expected, Dtype dtype,
                                const VendorTolerance &tolerance);

}  // namespace tpu_runtime
