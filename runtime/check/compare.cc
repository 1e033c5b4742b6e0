// compare.cc: similarity figures between an output and its reference.
#include "tpu_runtime/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace {

// Bits of `value` as `dtype`, mapped to a line where adjacent representable
// values differ by one (negative values mirrored below zero).
std::int64_t ordered_bits(float value, Dtype dtype) {
  std::int64_t bits = 0, sign_bit = 0;
  switch (dtype) {
    case Dtype::fp16: bits = float_to_fp16(value); sign_bit = 0x8000; break;
    case Dtype::bf16: bits = float_to_bf16(value); sign_bit = 0x8000; break;
    default: bits = std::bit_cast<std::uint32_t>(value); sign_bit = 0x80000000LL; break;
  }
  return bits & sign_bit ? -(bits & (sign_bit - 1)) : bits;
}

// Distance in the element type's ulps; integers count in units of 1.
double ulp_distance(float actual, float expected, Dtype dtype) {
  const bool nan_a = std::isnan(actual), nan_e = std::isnan(expected);
  if (nan_a || nan_e) return nan_a && nan_e ? 0 : std::numeric_limits<double>::infinity();
  if (!dtype_info(dtype).is_float) {
    float rounded;
    std::uint8_t storage[4];
    encode_floats(dtype, &expected, 1, storage);
    decode_floats(dtype, storage, 1, &rounded);
    return std::fabs(double(actual) - double(rounded));
  }
  return double(std::llabs(ordered_bits(actual, dtype) - ordered_bits(expected, dtype)));
}

// NaN against a number (either way), or an infinity against anything but
// the same infinity.
bool nonfinite_mismatch(float a, float e) {
  const bool nan_a = std::isnan(a), nan_e = std::isnan(e);
  if (nan_a || nan_e) return nan_a != nan_e;
  return (std::isinf(a) || std::isinf(e)) && a != e;
}

struct NonFinite {
  std::size_t count = 0;
  std::int64_t first = -1;
};

NonFinite find_nonfinite_mismatches(std::span<const float> actual, std::span<const float> expected) {
  NonFinite n;
  for (std::size_t i = 0; i < actual.size(); ++i)
    if (nonfinite_mismatch(actual[i], expected[i]) && n.count++ == 0) n.first = std::int64_t(i);
  return n;
}

}  // namespace

std::size_t ulp_bucket_of(double ulps) {
  if (!(ulps < std::numeric_limits<double>::infinity())) return kUlpBuckets - 1;
  if (ulps < 1) return 0;  // distances are whole numbers: this is 0
  // [2^(k-1), 2^k) is bucket k; the last finite bucket takes the rest.
  const int k = std::ilogb(ulps) + 1;
  return std::min<std::size_t>(std::size_t(k), kUlpBuckets - 2);
}

std::string ulp_bucket_label(std::size_t bucket) {
  if (bucket == 0) return "0";
  if (bucket >= kUlpBuckets - 1) return "inf";
  const std::uint64_t low = std::uint64_t(1) << (bucket - 1);
  if (bucket == kUlpBuckets - 2) return fmt::format(">={}", low);
  return low == 1 ? "1" : fmt::format("{}-{}", low, 2 * low - 1);
}

Similarity compare(std::span<const float> actual, std::span<const float> expected, Dtype dtype) {
  if (actual.size() != expected.size())
    throw Error(fmt::format("compare: {} values against a reference of {}", actual.size(), expected.size()));
  Similarity s;
  double dot = 0, norm_a = 0, norm_e = 0, diff = 0, mean = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    const double ulps = ulp_distance(actual[i], expected[i], dtype);
    ++s.ulp_histogram[ulp_bucket_of(ulps)];
    if (ulps != 0) {
      ++s.mismatches;
      if (s.first_mismatch < 0) {
        s.first_mismatch = std::int64_t(i);
        s.first_actual = a;
        s.first_expected = e;
      }
    }
    if (ulps > s.max_ulp) {
      s.max_ulp = ulps;
      s.worst_index = std::int64_t(i);
    }
    if (std::isnan(a) || std::isnan(e)) {
      if (std::isnan(a) != std::isnan(e)) s.max_abs = std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::fabs(a - e) > s.max_abs) {
      s.max_abs = std::fabs(a - e);
      s.max_abs_index = std::int64_t(i);
    }
    if (std::isfinite(e)) s.peak = std::max(s.peak, std::fabs(e));
    dot += a * e;
    norm_a += a * a;
    norm_e += e * e;
    diff += (a - e) * (a - e);
    mean += (a + e) * (a + e) / 4;
  }
  const NonFinite n = find_nonfinite_mismatches(actual, expected);
  s.nonfinite_mismatches = n.count;
  s.first_nonfinite = n.first;
  if (norm_a > 0 || norm_e > 0) s.cosine = norm_a > 0 && norm_e > 0 ? dot / std::sqrt(norm_a * norm_e) : 0;
  if (mean > 0 || diff > 0) s.euclidean = mean > 0 ? 1 - std::sqrt(diff) / std::sqrt(mean) : 0;
  return s;
}

Unwritten find_unwritten(std::span<const std::uint8_t> stored, Dtype dtype, std::span<const float> expected) {
  const std::size_t size = dtype_size(dtype);
  if (stored.size() != expected.size() * size)
    throw Error(fmt::format("find_unwritten: {} bytes against a reference of {} {}-byte elements", stored.size(),
                            expected.size(), size));
  const bool is_float = dtype_info(dtype).is_float;
  const auto poisoned = [&](const std::uint8_t *bytes) {
    for (std::size_t b = 0; b < size; ++b)
      if (bytes[b] != 0xFF) return false;
    return true;
  };
  Unwritten u;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (!poisoned(stored.data() + i * size)) continue;
    if (is_float) {
      if (std::isnan(expected[i])) continue;
    } else {
      std::uint8_t reference[8];
      encode_floats(dtype, &expected[i], 1, reference);
      if (poisoned(reference)) continue;
    }
    if (u.count++ == 0) u.first = std::int64_t(i);
  }
  return u;
}

Tolerance default_tolerance(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32: return {0.999999, 0.99999, 4};
    case Dtype::fp16: return {0.9999, 0.999, 2};
    case Dtype::bf16: return {0.999, 0.99, 2};
    default: return {0.9999, 0.999, 1};
  }
}

// Bit-exact: the ulp check decides; the similarity bounds only leave room
// for the rounding of the sums themselves.
Tolerance exact_tolerance() { return {0.999999, 0.99999, 0}; }

Tolerance model_output_tolerance(Dtype dtype) {
  Tolerance t = default_tolerance(dtype);
  if (!dtype_info(dtype).is_float) return t;
  t.max_ulp = std::numeric_limits<double>::infinity();
  t.max_peak_error = dtype == Dtype::fp32 ? 0x1p-16 : dtype == Dtype::fp16 ? 0x1p-8 : 0x1p-5;
  return t;
}

Tolerance resolved_model_tolerance(const Tolerance &t, Dtype dtype) {
  Tolerance r = t;
  if (std::isnan(r.max_ulp)) {
    const Tolerance d = model_output_tolerance(dtype);
    r.max_ulp = d.max_ulp;
    r.max_peak_error = d.max_peak_error;
  }
  return r;
}

Tolerance resolved_tolerance(const Tolerance &t, Dtype dtype) {
  Tolerance r = t;
  if (std::isnan(r.max_ulp)) r.max_ulp = default_tolerance(dtype).max_ulp;
  return r;
}

bool within(const Similarity &s, const Tolerance &t, std::string *why) {
  std::string reason;
  if (s.nonfinite_mismatches)
    reason = fmt::format("{} elements are NaN or infinite where the reference is not (or the reverse); the first at "
                         "index {}",
                         s.nonfinite_mismatches, s.first_nonfinite);
  else if (s.max_ulp > t.max_ulp)
    reason = fmt::format("max error {} ulp > {} allowed (index {})", s.max_ulp, t.max_ulp, s.worst_index);
  else if (s.max_abs > t.max_peak_error * s.peak)
    reason = fmt::format("max error {:.4g} (index {}) is {:.3g} of the reference's peak |value| {:.4g}; at most {:.3g} "
                         "allowed",
                         s.max_abs, s.max_abs_index, s.peak > 0 ? s.max_abs / s.peak : INFINITY, s.peak,
                         t.max_peak_error);
  else if (s.cosine < t.min_cosine)
    reason = fmt::format("cosine {:.8f} < {}", s.cosine, t.min_cosine);
  else if (s.euclidean < t.min_euclidean)
    reason = fmt::format("euclidean similarity {:.8f} < {}", s.euclidean, t.min_euclidean);
  if (why) *why = reason;
  return reason.empty();
}

}  // namespace tpu_runtime

namespace tpu_runtime {
namespace {

// Step 4's clean-up of a value: NaN counts as 0 and an infinity as +-10000.
double vendor_finite(float value) {
  if (std::isnan(value)) return 0;
  if (std::isinf(value)) return value > 0 ? 10000 : -10000;
  return value;
}

bool all_equal(std::span<const float> actual, std::span<const float> expected) {
  for (std::size_t i = 0; i < actual.size(); ++i)
    if (!(actual[i] == expected[i])) return false;  // NaN equals nothing, as in numpy
  return true;
}

// numpy.allclose(actual, expected, rtol, atol = 1e-8, equal_nan = True).
bool all_close(std::span<const float> actual, std::span<const float> expected, double rtol) {
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isnan(a) || std::isnan(e)) {
      if (std::isnan(a) && std::isnan(e)) continue;
      return false;
    }
    if (std::isinf(a) || std::isinf(e)) {
      if (a == e) continue;
      return false;
    }
    if (std::fabs(a - e) > 1e-8 + rtol * std::fabs(e)) return false;
  }
  return true;
}

// The reference as the integer type stores it, for the equality an integer
// output must meet.
std::vector<float> rounded_to(Dtype dtype, std::span<const float> values) {
  std::vector<std::uint8_t> stored(values.size() * dtype_size(dtype));
  std::vector<float> rounded(values.size());
  encode_floats(dtype, values.data(), values.size(), stored.data());
  decode_floats(dtype, stored.data(), values.size(), rounded.data());
  return rounded;
}

void vendor_similarity(std::span<const float> actual, std::span<const float> expected, VendorComparison &c) {
  double dot = 0, norm_a = 0, norm_e = 0, diff = 0, mean = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = vendor_finite(actual[i]), e = vendor_finite(expected[i]);
    dot += a * e;
    norm_a += a * a;
    norm_e += e * e;
    diff += (a - e) * (a - e);
    mean += (a + e) * (a + e) / 4;
  }
  c.cosine = norm_a > 0 && norm_e > 0 ? dot / std::sqrt(norm_a * norm_e) : 0;
  c.euclidean = 1 - std::sqrt(diff) / (std::sqrt(mean) + 1e-7);
}

}  // namespace

const char *criterion_name(Criterion criterion) { return criterion == Criterion::vendor ? "vendor" : "ulp"; }

Criterion parse_criterion(std::string_view name) {
  if (name == "ulp") return Criterion::ulp;
  if (name == "vendor") return Criterion::vendor;
  throw Error(fmt::format("unknown criterion \"{}\"; expected \"ulp\" or \"vendor\"", name));
}

VendorTolerance default_vendor_tolerance(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp16:
    case Dtype::bf16: return {0.95, 0.80};
    default: return {0.99, 0.99};
  }
}

const char *verdict_name(VendorVerdict verdict) {
  switch (verdict) {
    case VendorVerdict::equal: return "equal";
    case VendorVerdict::close: return "close";
    case VendorVerdict::similar: return "similar";
    case VendorVerdict::not_equal: return "not equal";
    case VendorVerdict::not_similar: return "not similar";
  }
  return "?";
}

bool verdict_passes(VendorVerdict verdict) {
  return verdict == VendorVerdict::equal || verdict == VendorVerdict::close || verdict == VendorVerdict::similar;
}

VendorComparison vendor_compare(std::span<const float> actual, std::span<const float> expected, Dtype dtype,
                                const VendorTolerance &tolerance) {
  if (actual.size() != expected.size())
    throw Error(fmt::format("compare: {} values against a reference of {}", actual.size(), expected.size()));
  VendorComparison c;
  const bool integer = !dtype_info(dtype).is_float;
  const std::vector<float> integer_reference = integer ? rounded_to(dtype, expected) : std::vector<float>{};
  const std::span<const float> reference = integer ? std::span<const float>(integer_reference) : expected;
  vendor_similarity(actual, reference, c);
  const NonFinite n = find_nonfinite_mismatches(actual, reference);
  c.nonfinite_mismatches = n.count;
  c.first_nonfinite = n.first;
  if (n.count) {
    c.verdict = VendorVerdict::not_similar;  // whatever NaN-as-0 would make of it
  } else if (all_equal(actual, reference)) {
    c.verdict = VendorVerdict::equal;
  } else if (integer) {
    c.verdict = VendorVerdict::not_equal;
  } else if (all_close(actual, reference, 1e-3)) {
    c.verdict = VendorVerdict::close;
  } else {
    const bool similar = c.cosine > tolerance.min_cosine && c.euclidean > tolerance.min_euclidean;
    c.verdict = similar ? VendorVerdict::similar : VendorVerdict::not_similar;
  }
  return c;
}

}  // namespace tpu_runtime
