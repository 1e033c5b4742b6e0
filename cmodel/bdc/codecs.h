// codecs.h: how element-wise BDC commands load and store each dtype.
//
// A codec names the storage type of a dtype and how to load it as the type
// arithmetic happens in and store it back. Float arithmetic happens in fp32
// and is rounded to nearest-even into fp16/bf16 destinations.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

#include "bdc.h"
#include "cmodel/numeric/float_convert.h"

namespace cmodel::bdc {

struct Fp32Codec {
  using Storage = float;
  using Value = float;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};
struct Fp16Codec {
  using Storage = uint16_t;
  using Value = float;
  static float load(uint16_t v) { return numeric::fp16_to_fp32(v); }
  static uint16_t store(float v) { return numeric::fp32_to_fp16(v, RM_HALF_TO_EVEN); }
};
struct Bf16Codec {
  using Storage = uint16_t;
  using Value = float;
  static float load(uint16_t v) { return numeric::bf16_to_fp32(v); }
  static uint16_t store(float v) { return numeric::fp32_to_bf16(v, RM_HALF_TO_EVEN); }
};
// Integers compute in int64 so intermediate results never overflow; the
// store truncates (wraps) to the storage width. Saturating families clamp
// before storing.
template <typename T>
struct IntCodec {
  using Storage = T;
  using Value = int64_t;
  static int64_t load(T v) { return v; }
  static T store(int64_t v) { return T(v); }
};

// A dtype's encoding as unsigned bits of its width: for commands that move
// or combine bit patterns (bitwise ops, true_val of comparisons).
template <typename T>
struct RawCodec {
  using Storage = T;
  using Value = T;
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};

// Calls f(RawCodec<T>{}) with T the unsigned integer as wide as `dtype`.
template <typename F>
void with_raw_codec(data_type_t dtype, F &&f) {
  switch (dtype_bytes(dtype)) {
    case 1: return f(RawCodec<uint8_t>{});
    case 2: return f(RawCodec<uint16_t>{});
    default: return f(RawCodec<uint32_t>{});
  }
}

// Calls f(Codec{}) with the codec of a float dtype.
template <typename F>
decltype(auto) with_float_codec(data_type_t dtype, F &&f) {
  switch (dtype) {
    case DT_FP32: return f(Fp32Codec{});
    case DT_FP16: return f(Fp16Codec{});
    case DT_BFP16: return f(Bf16Codec{});
    default: fail(ErrorKind::illegal_command, "dtype {} is not a float type", dtype_name(dtype));
  }
}

// Calls f(Codec{}) with the codec of an 8/16/32-bit integer dtype.
template <typename F>
decltype(auto) with_int_codec(data_type_t dtype, F &&f) {
  switch (dtype) {
    case DT_INT8: return f(IntCodec<int8_t>{});
    case DT_UINT8: return f(IntCodec<uint8_t>{});
    case DT_INT16: return f(IntCodec<int16_t>{});
    case DT_UINT16: return f(IntCodec<uint16_t>{});
    case DT_INT32: return f(IntCodec<int32_t>{});
    case DT_UINT32: return f(IntCodec<uint32_t>{});
    default: fail(ErrorKind::illegal_command, "dtype {} is not an 8/16/32-bit integer type", dtype_name(dtype));
  }
}

// Any dtype a BDC element-wise command takes.
template <typename F>
decltype(auto) with_codec(data_type_t dtype, F &&f) {
  if (dtype_is_float(dtype)) return with_float_codec(dtype, std::forward<F>(f));
  return with_int_codec(dtype, std::forward<F>(f));
}

// A scalar_t constant as a codec's value (its bits are the scalar_t member
// of the dtype, in the low bytes).
template <typename Codec>
typename Codec::Value scalar_value(scalar_t C) {
  typename Codec::Storage raw;
  std::memcpy(&raw, &C, sizeof raw);
  return Codec::load(raw);
}

}  // namespace cmodel::bdc
