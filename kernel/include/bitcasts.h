/*
 * bitcasts.h: reinterpret the bits of a float or double as an integer and
 * back, without undefined behaviour (memcpy, which compilers turn into a
 * register move). Companion of fp16.h; the names are those vendor kernels
 * use. C11 and C++ compatible.
 */
#ifndef FP16_BITCASTS_H
#define FP16_BITCASTS_H

#include <stdint.h>
#include <string.h>

static inline float fp32_from_bits(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

static inline uint32_t fp32_to_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

static inline double fp64_from_bits(uint64_t bits) {
  double value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

static inline uint64_t fp64_to_bits(double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

#endif /* FP16_BITCASTS_H */
