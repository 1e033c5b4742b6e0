// bdc_helpers.h: small helpers shared by the BDC tests (pool, linear,
// sequence, taylor, math, math_extra, compare, select): float encodings of
// the three float dtypes, exact values and random raw bits of every dtype,
// fp32 accuracy in ulps, whole-memory snapshots, run statistics and the
// failure-message assertions. Written independently of the emulator (float
// conversions come from local_model.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "local_model.h"
#include "test_support.h"

namespace bdc_helpers {

using namespace local_model;

using test::hex;  // defined in test_support.h

inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A float dtype's encoding <-> its value; encode rounds to nearest-even.
inline float decode(data_type_t t, uint32_t b) {
  return t == DT_FP32 ? float_of(b) : t == DT_FP16 ? from_fp16(uint16_t(b)) : from_bf16(uint16_t(b));
}
inline uint32_t encode(data_type_t t, float v) {
  return t == DT_FP32 ? bits_of(v) : t == DT_FP16 ? to_fp16(v) : to_bf16(v);
}
// The quiet bit of a NaN of a float dtype.
inline uint32_t quiet_bit(data_type_t t) { return t == DT_FP32 ? 0x00400000u : t == DT_FP16 ? 0x0200u : 0x0040u; }

// get_bits, set_bits, put and snapshot come from local_model.h.

// Lets every element of `t` differ from the expected image: copies it from
// the emulator's local memory into `expected` (for outputs checked apart,
// such as work buffers that may hold anything).
inline void accept_written(std::vector<uint8_t> &expected, const Chip &chip, const Tensor &t) {
  for_each_index(t.shape, [&](int n, int c, int h, int w) {
    const size_t o = offset_of(chip, t, n, c, h, w);
    std::memcpy(expected.data() + o, local_at(o), size_t(esize(t.dtype)));
  });
}

// ---- every 8/16/32-bit dtype, as raw bits ---------------------------------------------------

inline bool is_float_dtype(data_type_t t) { return t == DT_FP32 || t == DT_FP16 || t == DT_BFP16; }
inline bool is_signed_int_dtype(data_type_t t) { return t == DT_INT8 || t == DT_INT16 || t == DT_INT32; }
// The bits an element of dtype t holds (its low esize bytes).
inline uint32_t dtype_mask(data_type_t t) { return esize(t) == 4 ? 0xffffffffu : (1u << (8 * esize(t))) - 1; }

// The value of raw bits (the low esize bytes of `bits`) of dtype t, exactly.
inline double exact_value(data_type_t t, uint32_t bits) {
  return is_float_dtype(t) ? double(decode(t, bits)) : double(int_value(t, bits));
}

// Raw bits of a random value of dtype t for comparisons: often small values
// (|v| <= small, floats in steps of 0.5) so ties are common, zeros of both
// signs, infinities, NaNs with payloads and either sign, the extremes and
// arbitrary bit patterns.
template <typename Rng>
uint32_t random_compare_bits(Rng &rng, data_type_t t, int small) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const uint32_t any = uint32_t(rng()) & dtype_mask(t);
  if (is_float_dtype(t)) {
    const uint32_t sign = t == DT_FP32 ? 0x80000000u : 0x8000u;
    const uint32_t inf = t == DT_FP32 ? 0x7f800000u : t == DT_FP16 ? 0x7c00u : 0x7f80u;
    switch (pick(0, 9)) {
      case 0: return pick(0, 1) ? sign : 0;                                                 // +-0
      case 1: return inf | (pick(0, 1) ? sign : 0);                                         // +-inf
      case 2: return inf | (any & ~inf & ~sign & dtype_mask(t)) | 1u | (pick(0, 1) ? sign : 0);  // NaN
      case 3: return any;                                                                   // anything
      default: return encode(t, float(pick(-2 * small, 2 * small)) * 0.5f);                // small
    }
  }
  switch (pick(0, 5)) {
    case 0: return any;
    case 1: return is_signed_int_dtype(t) ? (1u << (8 * esize(t) - 1)) : dtype_mask(t);  // min / max
    default: return uint32_t(pick(-small, small)) & dtype_mask(t);
  }
}

// ---- fp32 accuracy -------------------------------------------------------------------------

// |got - exact| in ulps of fp32 at the exact value (subnormal spacing below
// FLT_MIN); 0 when both are NaN or the same infinity.
inline double ulp_distance(float got, long double exact) {
  if (std::isnan(exact) || std::isnan(got)) return std::isnan(exact) && std::isnan(got) ? 0 : INFINITY;
  const float rounded = float(exact);
  if (std::isinf(got) || std::isinf(rounded)) return got == rounded ? 0 : INFINITY;
  int e = -1000;
  if (exact != 0) frexpl(exact, &e);  // |exact| = m 2^e, m in [0.5, 1)
  const long double ulp = ldexpl(1, std::max(e - 24, -149));
  return double(fabsl((long double)got - exact) / ulp);
}

// The accuracy docs/bdc-math.md promises for the fp32 math functions: the
// exact value rounded once into fp32, i.e. within 0.5 ulp plus the error of
// the double evaluation (a few double ulps, ~1e-7 fp32 ulp), and rsqrt
// within 1 ulp (two roundings). Every test of a math function holds its
// results to this bound, and a function the table does not know fails, so
// a new function must have its accuracy documented and listed here first.
inline double documented_fp32_ulp(const std::string &function) {
  static const std::map<std::string, double> bounds = [] {
    std::map<std::string, double> b;
    for (const char *f : {"exp", "expm1", "log", "log1p", "logx", "sigmoid", "silu", "tanh", "erf", "erfc", "gelu",
                          "gelu_fast", "softplus", "softsign", "elu", "swish", "mish", "sinh", "cosh", "pow",
                          "pow_C", "C_pow", "sin", "cos", "tan", "cot", "arcsin", "arccos", "arcsinh", "arccosh",
                          "arctanh", "selu", "log_sigmoid", "sqrt", "reciprocal"})
      b[f] = 0.5 + 1e-6;
    b["rsqrt"] = 1.0;
    return b;
  }();
  const auto it = bounds.find(function);
  if (it == bounds.end()) {
    ADD_FAILURE() << function << " has no documented accuracy: add it to docs/bdc-math.md and documented_fp32_ulp";
    return 0;
  }
  return it->second;
}

// `got` is within the documented accuracy of `function` at `exact`.
inline bool within_documented(const std::string &function, float got, long double exact) {
  return ulp_distance(got, exact) <= documented_fp32_ulp(function);
}

// What work buffers are filled with before a call, to see the elements it
// left untouched: a finite fp32 no intermediate equals.
inline constexpr uint32_t sentinel = 0x7f3e1234;

// Any finite fp32 encoding.
template <typename Rng>
float any_finite(Rng &rng) {
  for (;;) {
    const float f = float_of(uint32_t(rng()));
    if (std::isfinite(f)) return f;
  }
}

// Prints the largest ulp distance seen per function on `chip` and checks
// each against the function's documented accuracy.
inline void expect_worst_within_documented(const char *chip, const std::map<std::string, double> &worst) {
  std::string summary;
  for (const auto &[name, d] : worst) {
    char b[64];
    std::snprintf(b, sizeof b, " %s %.4f", name.c_str(), d);
    summary += b;
    EXPECT_LE(d, documented_fp32_ulp(name)) << chip << ": the worst error of " << name << " exceeds its documented "
                                            << "accuracy";
  }
  std::printf("[ accuracy ] %s worst ulp:%s\n", chip, summary.c_str());
}

// A random finite value of a float dtype (as its encoding): mostly moderate
// magnitudes, sometimes zeros of either sign, tiny or huge values.
template <typename Rng>
uint32_t random_float_bits(Rng &rng, data_type_t t, double range = 100) {
  const int kind = std::uniform_int_distribution<int>(0, 19)(rng);
  float v;
  if (kind == 0)
    v = 0.0f;
  else if (kind == 1)
    v = -0.0f;
  else if (kind == 2)
    v = float(std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), -std::uniform_int_distribution<int>(5, 30)(rng)));
  else
    v = float(std::uniform_real_distribution<double>(-range, range)(rng));
  return encode(t, v);
}

inline nlohmann::json run_stats() { return nlohmann::json::parse(cmodel_last_run_stats()); }
inline double bdc_cycles() { return run_stats().at("engines").at("bdc").at("cycles").get<double>(); }

// Runs a kernel (no argument) that must fail; returns the emulator's message.
inline std::string run_failing(void (*kernel)(const void *)) {
  EXPECT_NE(cmodel_run(kernel, nullptr), 0);
  return cmodel_last_error();
}

inline std::string dtype_label(data_type_t t) {
  switch (t) {
    case DT_FP32: return "fp32";
    case DT_FP16: return "fp16";
    case DT_BFP16: return "bf16";
    case DT_INT8: return "int8";
    case DT_UINT8: return "uint8";
    case DT_INT16: return "int16";
    case DT_UINT16: return "uint16";
    case DT_INT32: return "int32";
    case DT_UINT32: return "uint32";
    default: return std::to_string(int(t));
  }
}

inline std::string describe(const dim4 &s) {
  return "[" + std::to_string(s.n) + "," + std::to_string(s.c) + "," + std::to_string(s.h) + "," +
         std::to_string(s.w) + "]";
}

}  // namespace bdc_helpers

// The kernel fails, and its message contains `text`.
#define EXPECT_RUN_FAILS_WITH(kernel, arg, text)                  \
  do {                                                            \
    EXPECT_NE(cmodel_run(kernel, arg), 0) << "expected: " << text; \
    const std::string m_ = cmodel_last_error();                   \
    EXPECT_NE(m_.find(text), std::string::npos) << m_;            \
  } while (0)
