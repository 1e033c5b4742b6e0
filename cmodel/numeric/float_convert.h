// float_convert.h: bit-exact conversions between fp32, fp16, bf16 and the
// integer dtypes, for every rounding_mode_t.
//
// All rounding goes through one place: round_pack() takes an exact value
// sign * mag * 2^exp2 (an integer significand and a power of two), keeps as
// many bits as the target format holds at that magnitude, and lets
// round_up_magnitude() decide from the discarded remainder whether the kept
// magnitude goes up by one unit. fp32 -> fp16/bf16 and int -> fp16/bf16/fp32
// are both "decompose exactly, round once", so no conversion ever rounds
// twice. Rounding to an integral value (fp -> int) uses the same decision
// rule on the fraction.
//
// The per-element functions are inline and branch only on the value, so
// element-wise kernels can call them in their inner loops.
//
// NaN policy:
//  - widening (fp16/bf16 -> fp32) is a pure re-encoding: the payload moves to
//    the top of the fp32 fraction and a signalling NaN stays signalling, so
//    the bits read from memory are not altered by merely loading them;
//  - narrowing (fp32 -> fp16/bf16) keeps the top bits of the payload and
//    always sets the quiet bit: it is the step that may drop payload bits,
//    and a signalling NaN whose payload lay only in the dropped bits would
//    otherwise turn into an infinity;
//  - fp -> int gives 0 for NaN: NaN has no integer value and no sign to
//    saturate toward, and 0 is the least surprising value in a quantised
//    tensor (what the hardware returns is not documented). Infinities
//    saturate like any other out-of-range value.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cmodel/include/cmodel_machine_types.h"

namespace cmodel::numeric {

// ---- rounding modes -------------------------------------------------------

constexpr bool is_valid_rounding_mode(int mode) {
  return mode >= RM_HALF_TO_EVEN && mode <= RM_HALF_DOWN;
}

// Calls f(std::integral_constant<rounding_mode_t, mode>{}), so each mode gets
// its own loop with the rounding decision folded in. A mode outside the enum
// (callers that check the mode first never pass one) runs as
// RM_TOWARDS_ZERO, the per-element conversions' own behaviour.
template <typename F>
[[gnu::always_inline]] inline void with_rounding(rounding_mode_t mode, F &&f) {
  switch (mode) {
    case RM_HALF_TO_EVEN: return f(std::integral_constant<rounding_mode_t, RM_HALF_TO_EVEN>{});
    case RM_HALF_AWAY_FROM_ZERO: return f(std::integral_constant<rounding_mode_t, RM_HALF_AWAY_FROM_ZERO>{});
    case RM_TOWARDS_ZERO: return f(std::integral_constant<rounding_mode_t, RM_TOWARDS_ZERO>{});
    case RM_DOWN: return f(std::integral_constant<rounding_mode_t, RM_DOWN>{});
    case RM_UP: return f(std::integral_constant<rounding_mode_t, RM_UP>{});
    case RM_HALF_UP: return f(std::integral_constant<rounding_mode_t, RM_HALF_UP>{});
    case RM_HALF_DOWN: return f(std::integral_constant<rounding_mode_t, RM_HALF_DOWN>{});
  }
  f(std::integral_constant<rounding_mode_t, RM_TOWARDS_ZERO>{});
}

// "RM_HALF_TO_EVEN" and so on, for messages.
constexpr const char *rounding_mode_name(rounding_mode_t mode) {
  switch (mode) {
    case RM_HALF_TO_EVEN: return "RM_HALF_TO_EVEN";
    case RM_HALF_AWAY_FROM_ZERO: return "RM_HALF_AWAY_FROM_ZERO";
    case RM_TOWARDS_ZERO: return "RM_TOWARDS_ZERO";
    case RM_DOWN: return "RM_DOWN";
    case RM_UP: return "RM_UP";
    case RM_HALF_UP: return "RM_HALF_UP";
    case RM_HALF_DOWN: return "RM_HALF_DOWN";
  }
  return "unknown rounding mode";
}

// The one rounding decision. A value of magnitude (kept + rem / (2 * half))
// units has been truncated to `kept` units (kept_odd = its lowest bit);
// returns true when the correctly rounded magnitude is kept + 1.
// Working on magnitudes is why the sign matters: rounding toward -inf
// (RM_DOWN, ties of RM_HALF_DOWN) makes a negative value's magnitude larger.
constexpr bool round_up_magnitude(bool negative, bool kept_odd, uint64_t rem, uint64_t half,
                                  rounding_mode_t mode) {
  if (rem == 0) return false;  // exact: every mode leaves it alone
  switch (mode) {
    case RM_HALF_TO_EVEN: return rem > half || (rem == half && kept_odd);
    case RM_HALF_AWAY_FROM_ZERO: return rem >= half;
    case RM_TOWARDS_ZERO: return false;
    case RM_DOWN: return negative;
    case RM_UP: return !negative;
    case RM_HALF_UP: return rem > half || (rem == half && !negative);
    case RM_HALF_DOWN: return rem > half || (rem == half && negative);
  }
  return false;  // callers validate the mode; an invalid one truncates
}

// IEEE 754 7.4: on overflow, round-to-nearest modes give infinity, while a
// directed mode gives the largest finite value when it rounds toward zero
// for that sign (RM_TOWARDS_ZERO, RM_DOWN of a positive, RM_UP of a negative).
constexpr bool overflow_gives_max_finite(bool negative, rounding_mode_t mode) {
  return mode == RM_TOWARDS_ZERO || (mode == RM_DOWN && !negative) || (mode == RM_UP && negative);
}

// ---- binary float formats ---------------------------------------------------

// An IEEE-style binary format: bias 2^(E-1)-1, subnormals, exponent field
// all ones for inf/NaN. Encodings are held in the low bits of a uint32_t.
template <int ExpBits, int ManBits>
struct FloatFormat {
  static constexpr int exp_bits = ExpBits;
  static constexpr int man_bits = ManBits;
  static constexpr int bias = (1 << (ExpBits - 1)) - 1;
  static constexpr int min_exp = 1 - bias;  // exponent of the smallest normal
  static constexpr uint32_t sign_bit = 1u << (ExpBits + ManBits);
  static constexpr uint32_t inf_bits = ((1u << ExpBits) - 1) << ManBits;
  static constexpr uint32_t max_finite_bits = inf_bits - 1;
  static constexpr uint32_t quiet_bit = 1u << (ManBits - 1);
};
using Fp16Format = FloatFormat<5, 10>;
using Bf16Format = FloatFormat<8, 7>;
using Fp32Format = FloatFormat<8, 23>;

// Encodes the exact value (negative ? -1 : 1) * mag * 2^exp2, rounded once
// with `mode`: the sign of zero is kept, results below the smallest normal
// become subnormals or zero, and overflow follows overflow_gives_max_finite.
template <class Format>
constexpr uint32_t round_pack(bool negative, uint64_t mag, int exp2, rounding_mode_t mode) {
  const uint32_t sign = negative ? Format::sign_bit : 0;
  if (mag == 0) return sign;
  const int value_exp = exp2 + (63 - std::countl_zero(mag));  // floor(log2(value))
  // Weight of the lowest kept bit: man_bits below the leading bit, but never
  // below the subnormal step, which is what makes gradual underflow work.
  const int quantum_exp = std::max(value_exp, Format::min_exp) - Format::man_bits;
  const int shift = quantum_exp - exp2;
  uint64_t kept;
  if (shift <= 0) {
    kept = mag << -shift;  // exact (shift >= -man_bits here)
  } else {
    uint64_t rem, half;
    if (shift < 64) {
      kept = mag >> shift;
      rem = mag & ((uint64_t{1} << shift) - 1);
      half = uint64_t{1} << (shift - 1);
    } else if (shift == 64) {
      kept = 0, rem = mag, half = uint64_t{1} << 63;
    } else {
      kept = 0, rem = 1, half = 2;  // mag < 2^64 <= half: below half, not zero
    }
    kept += round_up_magnitude(negative, kept & 1, rem, half, mode);
  }
  // With quantum_exp = (biased exponent field - 1) + (min_exp - man_bits),
  // field * 2^man_bits + fraction equals this sum: for a normal, kept carries
  // the hidden bit, which adds the missing 1 to the field; for a subnormal
  // the field is 0 and kept < 2^man_bits. A rounding carry into the next
  // binade (kept == 2^(man_bits+1)) lands on the right encoding as well.
  const uint64_t bits =
      (uint64_t(quantum_exp - (Format::min_exp - Format::man_bits)) << Format::man_bits) + kept;
  if (bits >= Format::inf_bits)
    return sign | (overflow_gives_max_finite(negative, mode) ? Format::max_finite_bits : Format::inf_bits);
  return sign | uint32_t(bits);
}

// fp32 encoding -> Format encoding, correctly rounded.
template <class Format>
constexpr uint32_t narrow_fp32_bits(uint32_t bits, rounding_mode_t mode) {
  const bool negative = (bits >> 31) != 0;
  const uint32_t exp = (bits >> 23) & 0xff;
  const uint32_t frac = bits & 0x7fffff;
  const uint32_t sign = negative ? Format::sign_bit : 0;
  if (exp == 0xff) {
    if (frac == 0) return sign | Format::inf_bits;  // inf is exact in every mode
    return sign | Format::inf_bits | Format::quiet_bit | (frac >> (23 - Format::man_bits));
  }
  if (exp == 0) return round_pack<Format>(negative, frac, -149, mode);  // fp32 subnormal
  return round_pack<Format>(negative, frac | 0x800000u, int(exp) - 150, mode);
}

// ---- fp32 <-> fp16 / bf16 ---------------------------------------------------

// Exact. A subnormal fp16 is renormalised (every fp16 value is a normal fp32).
inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t frac = h & 0x3ff;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (frac << 13));  // inf / NaN
  if (exp == 0) {
    if (frac == 0) return std::bit_cast<float>(sign);
    // frac * 2^-24 = 1.f * 2^(top - 24): move the leading 1 to the hidden bit.
    const int top = 31 - std::countl_zero(frac);
    const uint32_t fp32_frac = (frac << (23 - top)) & 0x7fffff;
    return std::bit_cast<float>(sign | (uint32_t(top + 103) << 23) | fp32_frac);
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (frac << 13));  // rebias 15 -> 127
}

// Exact: bf16 is the upper half of an fp32.
inline float bf16_to_fp32(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

inline uint16_t fp32_to_fp16(float f, rounding_mode_t mode) {
  return uint16_t(narrow_fp32_bits<Fp16Format>(std::bit_cast<uint32_t>(f), mode));
}

inline uint16_t fp32_to_bf16(float f, rounding_mode_t mode) {
  return uint16_t(narrow_fp32_bits<Bf16Format>(std::bit_cast<uint32_t>(f), mode));
}

// Widening to fp32 is exact, so these round once.
inline uint16_t fp16_to_bf16(uint16_t h, rounding_mode_t mode) { return fp32_to_bf16(fp16_to_fp32(h), mode); }
inline uint16_t bf16_to_fp16(uint16_t b, rounding_mode_t mode) { return fp32_to_fp16(bf16_to_fp32(b), mode); }

// ---- integers -> floats -----------------------------------------------------

// Rounded once, straight from the integer (int -> fp32 -> fp16 would round
// twice and can miss by one unit on values just past a tie).
template <class Format>
constexpr uint32_t int_to_float_bits(int64_t value, rounding_mode_t mode) {
  const bool negative = value < 0;
  const uint64_t mag = negative ? 0 - uint64_t(value) : uint64_t(value);
  return round_pack<Format>(negative, mag, 0, mode);
}

inline float int_to_fp32(int64_t value, rounding_mode_t mode) {
  return std::bit_cast<float>(int_to_float_bits<Fp32Format>(value, mode));
}
inline uint16_t int_to_fp16(int64_t value, rounding_mode_t mode) {
  return uint16_t(int_to_float_bits<Fp16Format>(value, mode));
}
inline uint16_t int_to_bf16(int64_t value, rounding_mode_t mode) {
  return uint16_t(int_to_float_bits<Bf16Format>(value, mode));
}

// ---- floats -> integers -----------------------------------------------------

// x rounded to an integral value with `mode` (IEEE roundToIntegral): NaN and
// infinities come back unchanged, a zero result keeps the sign of x.
inline double round_to_integral(double x, rounding_mode_t mode) {
  // From 2^52 on every double is an integer; this also lets NaN and inf out.
  if (!(std::fabs(x) < 0x1p52)) return x;
  const double down = std::floor(x);
  if (down == x) return x;  // already integral (keeps the sign of a zero)
  const bool negative = x < 0;
  const double small = negative ? down + 1 : down;  // the neighbour nearer zero
  const double large = negative ? down : down + 1;
  // Compare with the midpoint, not x - down: below 2^52 down + 0.5 is exact,
  // while x - down can round (x = -0.49999999999999994 would look like a tie).
  const double mid = down + 0.5;
  // The shared rule works on magnitudes: x lies past `small` by rem of 2*half
  // units, with half = 2 (1 below the midpoint, 2 on it, 3 beyond it).
  const uint64_t rem = x == mid ? 2 : (negative ? x < mid : x > mid) ? 3 : 1;
  const bool small_odd = (int64_t(small) & 1) != 0;
  const double r = round_up_magnitude(negative, small_odd, rem, 2, mode) ? large : small;
  return r == 0 ? std::copysign(0.0, x) : r;  // IEEE: -0.3 rounds to -0
}

inline float round_to_integral(float x, rounding_mode_t mode) {
  // Exact: a float's integral neighbours are floats, and float -> double is exact.
  return float(round_to_integral(double(x), mode));
}

// Clamps to [lo, hi].
constexpr int64_t saturate(int64_t value, int64_t lo, int64_t hi) {
  return value < lo ? lo : value > hi ? hi : value;
}

template <class T>
constexpr T saturate(int64_t value) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 4, "targets are at most 32 bits wide");
  return T(saturate(value, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

// x rounded with `mode` and clamped to [lo, hi] (both within 32 bits); NaN -> 0.
inline int64_t fp_to_int(double x, rounding_mode_t mode, int64_t lo, int64_t hi) {
  if (std::isnan(x)) return 0;
  const double r = round_to_integral(x, mode);
  // lo and hi are exact doubles, so these comparisons are exact.
  if (r <= double(lo)) return lo;
  if (r >= double(hi)) return hi;
  return int64_t(r);
}

template <class T>
inline T fp_to_int(double x, rounding_mode_t mode) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 4, "targets are at most 32 bits wide");
  return T(fp_to_int(x, mode, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

// ---- scalar slots -----------------------------------------------------------

// Converts a scalar_t slot (its 32 bits, the value held as the member of
// `src` would hold it) from `src` to `dst`, for every pair of dtypes the SDK
// emulates (cmodel::dtype_is_known). INT4/UINT4 are read from the low nibble (INT4 sign-extended)
// and written as the s4/u4 byte would hold them (INT4 sign-extended to 8
// bits). Bits of the slot outside the member are ignored on input and zero
// on output.
//   int -> int: saturating; the mode is ignored.
//   fp  -> int: rounded with `mode`, then saturated; NaN -> 0.
//   int -> fp : correctly rounded with `mode`, in one step.
//   fp  -> fp : through fp32 (exact), then rounded once.
//   same dtype: the bits unchanged (a signalling NaN stays signalling).
// Throws cmodel::Error (illegal_command) for any other dtype, or for an
// invalid mode when a float dtype is involved. Not for inner loops.
uint32_t convert_scalar_bits(uint32_t src_bits, data_type_t dst, data_type_t src, rounding_mode_t mode);

}  // namespace cmodel::numeric
