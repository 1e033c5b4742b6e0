/*
 * fp16.h: scalar conversions between 16-bit floats and fp32, for host-side
 * and kernel-side C code. The function names are those of the standalone
 * FP16 header that the vendor common.h includes; the implementation is this
 * SDK's own.
 *
 *   fp16_ieee_*  IEEE 754 binary16 (1-5-10, with infinities and NaNs).
 *   fp16_alt_*   the "alternative" half format: the same fields, but
 *                exponent 31 is an ordinary exponent, so there are no
 *                infinities or NaNs and the largest value is 131008.
 *
 * Conversions to fp32 are exact. Conversions from fp32 round to nearest,
 * ties to even; IEEE: overflow gives an infinity and a NaN stays a quiet NaN
 * (sign kept); alternative: overflow, infinities and NaNs saturate to the
 * largest magnitude with the input's sign.
 *
 * The include guard is the original header's, so a kernel that also
 * includes that header does not get two definitions. C11 and C++.
 */
#ifndef FP16_FP16_H
#define FP16_FP16_H

#include <stdint.h>

#include <bitcasts.h>

/* Bits of the fp32 value of a half whose exponent field 31 is ordinary
 * (alternative format) or special (IEEE). */
static inline uint32_t fp16_to_fp32_bits_common(uint16_t h, int ieee) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f && ieee) return sign | 0x7f800000u | (mantissa << 13);
  if (exponent != 0) return sign | ((exponent + 112u) << 23) | (mantissa << 13);
  if (mantissa == 0) return sign;
  /* Subnormal: normalise. Its value is mantissa * 2^-24. */
  uint32_t e = 113;
  while (!(mantissa & 0x400u)) {
    mantissa <<= 1;
    e--;
  }
  return sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
}

static inline uint32_t fp16_ieee_to_fp32_bits(uint16_t h) { return fp16_to_fp32_bits_common(h, 1); }
static inline float fp16_ieee_to_fp32_value(uint16_t h) { return fp32_from_bits(fp16_ieee_to_fp32_bits(h)); }
static inline uint32_t fp16_alt_to_fp32_bits(uint16_t h) { return fp16_to_fp32_bits_common(h, 0); }
static inline float fp16_alt_to_fp32_value(uint16_t h) { return fp32_from_bits(fp16_alt_to_fp32_bits(h)); }

/* Magnitude bits of a finite fp32 magnitude rounded to half precision,
 * ties to even; may round up into exponent 31. */
static inline uint16_t fp16_round_magnitude(uint32_t magnitude) {
  const int32_t exponent = (int32_t)(magnitude >> 23) - 127 + 15;
  uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  uint32_t shift;
  uint32_t base;
  if (magnitude < 0x33000000u) return 0; /* below half the smallest subnormal */
  if (exponent >= 1) {
    shift = 13;
    base = (uint32_t)exponent << 10;
    mantissa &= 0x7fffffu;
  } else {
    shift = (uint32_t)(14 - exponent); /* subnormal: the implicit bit moves in */
    base = 0;
  }
  const uint32_t kept = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  uint32_t result = base + kept;
  if (rest > half || (rest == half && (kept & 1u))) result++;
  return (uint16_t)result;
}

static inline uint16_t fp16_ieee_from_fp32_value(float f) {
  const uint32_t bits = fp32_to_bits(f);
  const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u | (uint16_t)((magnitude >> 13) & 0x3ffu); /* NaN */
  if (magnitude >= 0x47800000u) return sign | 0x7c00u; /* 65536 and up, infinity */
  const uint16_t h = fp16_round_magnitude(magnitude);
  return sign | (h >= 0x7c00u ? 0x7c00u : h);
}

static inline uint16_t fp16_alt_from_fp32_value(float f) {
  const uint32_t bits = fp32_to_bits(f);
  const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x48000000u) return sign | 0x7fffu; /* 131072 and up, infinities, NaNs */
  const uint16_t h = fp16_round_magnitude(magnitude);
  return sign | (h > 0x7fffu ? 0x7fffu : h);
}

#endif /* FP16_FP16_H */
