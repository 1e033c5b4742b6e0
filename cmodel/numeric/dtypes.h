// dtypes.h: the dtypes the emulator computes on, one C++ type each.
//
// A command's loops are instantiated per dtype (or per pair of dtypes), so
// that loading, computing and storing an element inline into one tight loop
// with no per-element switch; a dispatcher below picks the instantiation
// once per command from the run-time data_type_t.
//
// Every dtype type D (Dtype<DT_...>, with the aliases Fp32, Fp16, Bf16) has
//   D::code       its data_type_t;
//   D::is_float;
//   D::Storage    the type an element is held in: float for fp32, the
//                 encoding's uint16_t for fp16 / bf16, the integer itself;
//   D::Bits       the same bytes as an integer, for commands that work on
//                 encodings (uint32_t for fp32: moving a float through a
//                 float register must not be able to touch a NaN);
//   D::Value      the type arithmetic happens in: fp32 for the floats,
//                 int64 for the integers, so intermediate results never
//                 overflow;
//   D::load(Storage) -> Value and D::store(Value) -> Storage: floats round
//                 to nearest-even into fp16 / bf16, integers wrap to the
//                 storage width (saturating families clamp before storing).
// The float dtypes also have
//   D::Format     the encoding facts (sign bit, quiet bit, ...);
//   D::store(float, mode)           rounded with any rounding_mode_t;
//   D::load_bits(Bits) -> float     exact, a NaN keeps its payload;
//   D::store_bits(float, mode) -> Bits.
// RawBits<U> is any dtype's encoding as the unsigned integer U of its width,
// for commands that move or combine bit patterns.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "cmodel/dtype.h"
#include "cmodel/error.h"
#include "cmodel/numeric/float_convert.h"

namespace cmodel::numeric {

template <data_type_t Code>
struct Dtype;  // one specialisation per dtype, below

// ---- floats ------------------------------------------------------------------------

template <>
struct Dtype<DT_FP32> {
  static constexpr data_type_t code = DT_FP32;
  static constexpr bool is_float = true;
  using Format = Fp32Format;
  using Storage = float;
  using Bits = uint32_t;
  using Value = float;
  static float load(float v) { return v; }
  // fp32 holds every fp32 value: no mode changes anything.
  static float store(float v) { return v; }
  static float store(float v, rounding_mode_t) { return v; }
  static float load_bits(uint32_t b) { return std::bit_cast<float>(b); }
  static uint32_t store_bits(float v, rounding_mode_t) { return std::bit_cast<uint32_t>(v); }
};

// fp16 and bf16: held as their encodings, widened to fp32 exactly (every
// value of theirs is an fp32 value) and narrowed with one rounding.
template <data_type_t Code>
struct HalfDtype {
  static constexpr data_type_t code = Code;
  static constexpr bool is_float = true;
  using Format = std::conditional_t<Code == DT_FP16, Fp16Format, Bf16Format>;
  using Storage = uint16_t;
  using Bits = uint16_t;
  using Value = float;
  static float load(uint16_t v) {
    if constexpr (Code == DT_FP16)
      return fp16_to_fp32(v);
    else
      return bf16_to_fp32(v);
  }
  static uint16_t store(float v, rounding_mode_t mode) {
    if constexpr (Code == DT_FP16)
      return fp32_to_fp16(v, mode);
    else
      return fp32_to_bf16(v, mode);
  }
  static uint16_t store(float v) { return store(v, RM_HALF_TO_EVEN); }
  static float load_bits(uint16_t b) { return load(b); }
  static uint16_t store_bits(float v, rounding_mode_t mode) { return store(v, mode); }
};
template <>
struct Dtype<DT_FP16> : HalfDtype<DT_FP16> {};
template <>
struct Dtype<DT_BFP16> : HalfDtype<DT_BFP16> {};

using Fp32 = Dtype<DT_FP32>;
using Fp16 = Dtype<DT_FP16>;
using Bf16 = Dtype<DT_BFP16>;

// ---- integers ----------------------------------------------------------------------

template <data_type_t Code, typename T>
struct IntDtype {
  static constexpr data_type_t code = Code;
  static constexpr bool is_float = false;
  using Storage = T;
  using Bits = T;
  using Value = int64_t;
  static int64_t load(T v) { return v; }
  static T store(int64_t v) { return T(v); }
};
template <>
struct Dtype<DT_INT8> : IntDtype<DT_INT8, int8_t> {};
template <>
struct Dtype<DT_UINT8> : IntDtype<DT_UINT8, uint8_t> {};
template <>
struct Dtype<DT_INT16> : IntDtype<DT_INT16, int16_t> {};
template <>
struct Dtype<DT_UINT16> : IntDtype<DT_UINT16, uint16_t> {};
template <>
struct Dtype<DT_INT32> : IntDtype<DT_INT32, int32_t> {};
template <>
struct Dtype<DT_UINT32> : IntDtype<DT_UINT32, uint32_t> {};

// ---- raw bits ----------------------------------------------------------------------

// Bitwise operations and the true_val of comparisons see a dtype only as
// bits of its width, so dtypes of one width share one instantiation.
template <typename U>
struct RawBits {
  static constexpr bool is_float = false;
  using Storage = U;
  using Bits = U;
  using Value = U;
  static U load(U v) { return v; }
  static U store(U v) { return v; }
};

// ---- dispatchers -------------------------------------------------------------------
// Each calls f(D{}) with the type of `dtype` and returns what f returns.

// The float dtypes.
template <typename F>
decltype(auto) with_float_dtype(data_type_t dtype, F &&f) {
  switch (dtype) {
    case DT_FP32: return f(Fp32{});
    case DT_FP16: return f(Fp16{});
    case DT_BFP16: return f(Bf16{});
    default: fail(ErrorKind::illegal_command, "dtype {} is not a float type", dtype_name(dtype));
  }
}

// The 8/16/32-bit integer dtypes.
template <typename F>
decltype(auto) with_int_dtype(data_type_t dtype, F &&f) {
  switch (dtype) {
    case DT_INT8: return f(Dtype<DT_INT8>{});
    case DT_UINT8: return f(Dtype<DT_UINT8>{});
    case DT_INT16: return f(Dtype<DT_INT16>{});
    case DT_UINT16: return f(Dtype<DT_UINT16>{});
    case DT_INT32: return f(Dtype<DT_INT32>{});
    case DT_UINT32: return f(Dtype<DT_UINT32>{});
    default: fail(ErrorKind::illegal_command, "dtype {} is not an 8/16/32-bit integer type", dtype_name(dtype));
  }
}

// Any of the two classes above.
template <typename F>
decltype(auto) with_dtype(data_type_t dtype, F &&f) {
  if (dtype_is_float(dtype)) return with_float_dtype(dtype, std::forward<F>(f));
  return with_int_dtype(dtype, std::forward<F>(f));
}

// RawBits of the unsigned integer as wide as `dtype`.
template <typename F>
void with_raw_bits(data_type_t dtype, F &&f) {
  switch (dtype_bytes(dtype)) {
    case 1: return f(RawBits<uint8_t>{});
    case 2: return f(RawBits<uint16_t>{});
    default: return f(RawBits<uint32_t>{});
  }
}

// ---- scalar constants --------------------------------------------------------------
// A scalar_t holds a constant of dtype D in the member of that dtype, which
// occupies its low bytes.

template <typename D>
typename D::Storage scalar_storage(scalar_t C) {
  typename D::Storage raw;
  std::memcpy(&raw, &C, sizeof raw);
  return raw;
}

// (Straight into the integer: a float register must not touch a NaN.)
template <typename D>
typename D::Bits scalar_bits(scalar_t C) {
  typename D::Bits raw;
  std::memcpy(&raw, &C, sizeof raw);
  return raw;
}

template <typename D>
typename D::Value scalar_value(scalar_t C) {
  return D::load(scalar_storage<D>(C));
}

}  // namespace cmodel::numeric
