// bdc_helpers.h: small helpers shared by the BDC tests of the tier-2
// families (pool, linear, sequence, taylor, math_extra): float encodings of
// the three float dtypes, whole-memory snapshots, run statistics and the
// failure-message assertion. Written independently of the emulator (float
// conversions come from local_model.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "local_model.h"

namespace bdc_helpers {

using namespace local_model;

inline std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(v));
  return b;
}

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
