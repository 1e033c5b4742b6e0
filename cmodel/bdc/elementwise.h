// elementwise.h: the loops of element-wise BDC commands.
//
// for_each_run() walks dst and its sources together, handing each run of
// elements to a callback: one run per channel when every operand's h x w
// plane is contiguous, one per row otherwise. map() applies a per-element
// function over such runs with typed loads and stores; the contiguous case
// is a plain loop the compiler vectorises.
//
// Values are handled through codecs: a codec names the storage type of a
// dtype and how to load it as the type arithmetic happens in and store it
// back. Float arithmetic happens in fp32 and is rounded to nearest-even
// into fp16/bf16 destinations.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "bdc.h"
#include "cmodel/numeric/float_convert.h"

namespace cmodel::bdc {

struct Run {
  uint8_t *p;
  int64_t step;  // elements
};

template <typename Fn, typename... Src>
void for_each_run(const TensorRef &dst, Fn &&fn, const Src &...src) {
  const dim4 &s = dst.shape;
  const bool planes = dst.plane_contiguous() && (src.plane_contiguous() && ...);
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c) {
      if (planes) {
        fn(int64_t(s.h) * s.w, Run{dst.channel(n, c), 1}, Run{src.channel(n, c), 1}...);
        continue;
      }
      for (int h = 0; h < s.h; ++h)
        fn(int64_t(s.w), Run{dst.row(n, c, h), dst.stride.w}, Run{src.row(n, c, h), src.stride.w}...);
    }
}

// ---- codecs -------------------------------------------------------------------
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

// ---- one rounding of a double -----------------------------------------------------
// Functions evaluated in double (math.cc, the activations of unary.cc) round
// their result once into the destination format.

// x rounded to fp32 "to odd": truncated, then the last bit set if inexact.
// Rounding that to nearest-even in a format with at most 22 significant
// bits (fp16, bf16) equals rounding x there directly.
inline float round_to_odd(double x) {
  const float f = float(x);
  if (!std::isfinite(x) || double(f) == x) return f;
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (std::fabs(double(f)) > std::fabs(x)) --u;  // f != 0 here: one step toward zero
  return std::bit_cast<float>(u | 1u);
}

// y rounded to nearest-even into a float codec's format, once: fp32
// directly, fp16 / bf16 through fp32 rounded to odd.
template <typename Codec>
typename Codec::Storage store_rounded_once(double y) {
  if constexpr (std::is_same_v<Codec, Fp32Codec>)
    return float(y);
  else
    return Codec::store(round_to_odd(y));
}

// a + b rounded to odd in double: the sum itself when it is a double,
// otherwise the one of the two doubles around it whose last bit is 1.
// Rounding that to nearest-even in fp32, fp16 or bf16 (at most 24
// significant bits, 53 >= 24 + 2) equals rounding the exact sum there.
inline double add_round_to_odd(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return s;
  // TwoSum (Knuth): s + e == a + b exactly.
  const double bv = s - a;
  const double e = (a - (s - bv)) + (b - bv);
  if (e == 0 || (std::bit_cast<uint64_t>(s) & 1) != 0) return s;
  return std::nextafter(s, e > 0 ? HUGE_VAL : -HUGE_VAL);
}

// ---- typed maps -----------------------------------------------------------------
// dst = op(src...) element by element; each operand has its own codec.
template <typename DstCodec, typename... SrcCodec, typename Op, typename... Src>
void map(const TensorRef &dst, Op op, const Src &...src) {
  using D = typename DstCodec::Storage;
  for_each_run(
      dst,
      [&](int64_t count, Run d, auto... s) {
        auto *dp = reinterpret_cast<D *>(d.p);
        if (d.step == 1 && ((s.step == 1) && ...)) {
          for (int64_t i = 0; i < count; ++i)
            dp[i] = DstCodec::store(op(SrcCodec::load(reinterpret_cast<const typename SrcCodec::Storage *>(s.p)[i])...));
        } else {
          for (int64_t i = 0; i < count; ++i)
            dp[i * d.step] = DstCodec::store(
                op(SrcCodec::load(reinterpret_cast<const typename SrcCodec::Storage *>(s.p)[i * s.step])...));
        }
      },
      src...);
}

}  // namespace cmodel::bdc
