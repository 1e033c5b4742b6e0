// dtype.cc: element types and host-side float conversions.
#include "tpu_runtime/dtype.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common_def.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace {

constexpr std::array<DtypeInfo, 9> kDtypes = {{
    {Dtype::fp32, "fp32", SG_DTYPE_FP32, 4, true},
    {Dtype::fp16, "fp16", SG_DTYPE_FP16, 2, true},
    {Dtype::bf16, "bf16", SG_DTYPE_BFP16, 2, true},
    {Dtype::int8, "int8", SG_DTYPE_INT8, 1, false},
    {Dtype::uint8, "uint8", SG_DTYPE_UINT8, 1, false},
    {Dtype::int16, "int16", SG_DTYPE_INT16, 2, false},
    {Dtype::uint16, "uint16", SG_DTYPE_UINT16, 2, false},
    {Dtype::int32, "int32", SG_DTYPE_INT32, 4, false},
    {Dtype::uint32, "uint32", SG_DTYPE_UINT32, 4, false},
}};

// Rounds the fp32 `bits` to `mantissa_bits` fewer mantissa bits, nearest even.
uint32_t round_mantissa(uint32_t bits, int dropped) {
  const uint32_t half = 1u << (dropped - 1);
  const uint32_t lsb = (bits >> dropped) & 1u;
  return bits + half - 1 + lsb;
}

template <typename Int>
Int saturate_round(double value) {
  if (std::isnan(value)) return 0;
  const double rounded = std::nearbyint(value);  // default mode: ties to even
  if (rounded <= double(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
  if (rounded >= double(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
  return Int(rounded);
}

template <typename Int, typename Value>
void encode_ints(const Value *values, std::size_t count, void *out) {
  for (std::size_t i = 0; i < count; ++i) {
    const Int v = saturate_round<Int>(values[i]);
    std::memcpy(static_cast<char *>(out) + i * sizeof(Int), &v, sizeof(Int));
  }
}

template <typename Int, typename Value>
void decode_ints(const void *in, std::size_t count, Value *values) {
  for (std::size_t i = 0; i < count; ++i) {
    Int v;
    std::memcpy(&v, static_cast<const char *>(in) + i * sizeof(Int), sizeof(Int));
    values[i] = Value(v);
  }
}

template <uint16_t (*Encode)(float)>
void encode_halves(const float *values, std::size_t count, void *out) {
  for (std::size_t i = 0; i < count; ++i) {
    const uint16_t v = Encode(values[i]);
    std::memcpy(static_cast<char *>(out) + 2 * i, &v, 2);
  }
}

template <float (*Decode)(uint16_t)>
void decode_halves(const void *in, std::size_t count, float *values) {
  for (std::size_t i = 0; i < count; ++i) {
    uint16_t v;
    std::memcpy(&v, static_cast<const char *>(in) + 2 * i, 2);
    values[i] = Decode(v);
  }
}

}  // namespace

const DtypeInfo &dtype_info(Dtype dtype) { return kDtypes[static_cast<std::size_t>(dtype)]; }

std::pair<double, double> integer_range(Dtype dtype) {
  switch (dtype) {
    case Dtype::int8: return {-128, 127};
    case Dtype::uint8: return {0, 255};
    case Dtype::int16: return {-32768, 32767};
    case Dtype::uint16: return {0, 65535};
    case Dtype::int32: return {-2147483648.0, 2147483647.0};
    default: return {0, 4294967295.0};
  }
}

Dtype parse_dtype(std::string_view name) {
  if (name == "float32") return Dtype::fp32;
  if (name == "float16") return Dtype::fp16;
  if (name == "bfloat16") return Dtype::bf16;
  for (const DtypeInfo &info : kDtypes)
    if (name == info.name) return info.dtype;
  throw Error(fmt::format("unknown dtype '{}': expected fp32, fp16, bf16, int8, uint8, int16, uint16, int32 or uint32",
                          name));
}

Dtype dtype_from_sg(int sg_dtype) {
  for (const DtypeInfo &info : kDtypes)
    if (info.sg_dtype == sg_dtype) return info.dtype;
  throw Error(fmt::format("SG dtype {} has no host element type", sg_dtype));
}

uint16_t float_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return uint16_t((bits >> 16) | 0x40);  // stays a quiet NaN
  return uint16_t(round_mantissa(bits, 16) >> 16);
}

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(uint32_t(bits) << 16); }

uint16_t float_to_fp16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  const uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) return sign | 0x7e00;     // NaN
  if (magnitude >= 0x477ff000) return sign | 0x7c00;    // rounds past 65504: infinity
  if (magnitude >= 0x38800000) {                        // normal in fp16
    const uint32_t rebiased = magnitude - (uint32_t(127 - 15) << 23);
    return sign | uint16_t(round_mantissa(rebiased, 13) >> 13);
  }
  // Subnormal in fp16: the value in units of 2^-24, rounded to nearest even.
  const double units = double(std::bit_cast<float>(magnitude)) * 16777216.0;
  return sign | uint16_t(std::nearbyint(units));
}

float fp16_to_float(uint16_t bits) {
  const uint32_t sign = uint32_t(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1f;
  const uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    const float magnitude = float(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

namespace {

// The integer types' stores and loads, for float or double values (doubles
// hold every integer value exactly); false for a float type.
template <typename Value>
bool encode_integers(Dtype dtype, const Value *values, std::size_t count, void *out) {
  switch (dtype) {
    case Dtype::int8: return encode_ints<int8_t>(values, count, out), true;
    case Dtype::uint8: return encode_ints<uint8_t>(values, count, out), true;
    case Dtype::int16: return encode_ints<int16_t>(values, count, out), true;
    case Dtype::uint16: return encode_ints<uint16_t>(values, count, out), true;
    case Dtype::int32: return encode_ints<int32_t>(values, count, out), true;
    case Dtype::uint32: return encode_ints<uint32_t>(values, count, out), true;
    case Dtype::fp32:
    case Dtype::fp16:
    case Dtype::bf16: break;
  }
  return false;
}

template <typename Value>
bool decode_integers(Dtype dtype, const void *in, std::size_t count, Value *values) {
  switch (dtype) {
    case Dtype::int8: return decode_ints<int8_t>(in, count, values), true;
    case Dtype::uint8: return decode_ints<uint8_t>(in, count, values), true;
    case Dtype::int16: return decode_ints<int16_t>(in, count, values), true;
    case Dtype::uint16: return decode_ints<uint16_t>(in, count, values), true;
    case Dtype::int32: return decode_ints<int32_t>(in, count, values), true;
    case Dtype::uint32: return decode_ints<uint32_t>(in, count, values), true;
    case Dtype::fp32:
    case Dtype::fp16:
    case Dtype::bf16: break;
  }
  return false;
}

}  // namespace

void encode_floats(Dtype dtype, const float *values, std::size_t count, void *out) {
  if (count == 0) return;  // an empty tensor's buffers may be null, which memcpy may not get
  if (encode_integers(dtype, values, count, out)) return;
  if (dtype == Dtype::fp32) std::memcpy(out, values, count * 4);
  else if (dtype == Dtype::fp16) encode_halves<float_to_fp16>(values, count, out);
  else encode_halves<float_to_bf16>(values, count, out);
}

void decode_floats(Dtype dtype, const void *in, std::size_t count, float *values) {
  if (count == 0) return;  // an empty tensor's buffers may be null, which memcpy may not get
  if (decode_integers(dtype, in, count, values)) return;
  if (dtype == Dtype::fp32) std::memcpy(values, in, count * 4);
  else if (dtype == Dtype::fp16) decode_halves<fp16_to_float>(in, count, values);
  else decode_halves<bf16_to_float>(in, count, values);
}

void encode_values(Dtype dtype, const double *values, std::size_t count, void *out) {
  if (encode_integers(dtype, values, count, out)) return;
  // A float type: through fp32, as encode_floats stores it.
  const std::vector<float> floats(values, values + count);
  encode_floats(dtype, floats.data(), count, out);
}

void decode_values(Dtype dtype, const void *in, std::size_t count, double *values) {
  if (decode_integers(dtype, in, count, values)) return;
  std::vector<float> floats(count);
  decode_floats(dtype, in, count, floats.data());
  std::copy(floats.begin(), floats.end(), values);
}

}  // namespace tpu_runtime
