#include "unary.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cast.h"
#include "movement.h"

namespace cmodel::bdc {

using namespace typed;

namespace {

// Calls f(g) with g: Storage -> Storage, the operation on dtype T.
template <data_type_t T, typename F>
void with_op(Unary op, F &&f) {
  using S = typename Dt<T>::Storage;
  if constexpr (Dt<T>::is_float) {
    // Bit-level: the operations are exact, and NaNs are handled explicitly.
    using Format = FloatFormatOf<T>;
    constexpr S sign = S(Format::sign_bit), magnitude = S(~Format::sign_bit), inf = S(Format::inf_bits);
    constexpr S quiet = quiet_bit<T>();
    const S one = from_fp32<T>(1.0f, RM_HALF_TO_EVEN), minus_one = S(one | sign);
    switch (op) {
      case Unary::abs: return f([](S x) { return S(x & magnitude); });
      case Unary::neg: return f([](S x) { return S(x ^ sign); });
      case Unary::relu:
        return f([](S x) { return S((x & magnitude) > inf ? x | quiet : (x & sign) ? 0 : x); });
      case Unary::sign:
        return f([=](S x) {
          const S m = S(x & magnitude);
          return S(m > inf ? x | quiet : m == 0 ? 0 : (x & sign) ? minus_one : one);
        });
      case Unary::bit_not: break;  // rejected by the dtype check
    }
  } else if constexpr (std::is_signed_v<S>) {
    switch (op) {
      case Unary::abs: return f([](S x) { return numeric::saturate<S>(x < 0 ? -int64_t(x) : int64_t(x)); });
      case Unary::neg: return f([](S x) { return numeric::saturate<S>(-int64_t(x)); });
      case Unary::bit_not: return f([](S x) { return S(~x); });
      case Unary::sign: return f([](S x) { return S((x > 0) - (x < 0)); });
      case Unary::relu: return f([](S x) { return x > 0 ? x : S(0); });
    }
  } else {
    switch (op) {
      case Unary::abs:
      case Unary::relu: return f([](S x) { return x; });
      case Unary::bit_not: return f([](S x) { return S(~x); });
      case Unary::sign: return f([](S x) { return S(x != 0); });
      case Unary::neg: break;  // rejected by the dtype check
    }
  }
}

}  // namespace

void unary(Context &ctx, const char *api, Unary op, local_addr_t dst_addr, local_addr_t src_addr,
           const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {
  if (op == Unary::neg) require_dtype("dtype", dtype, {DT_INT8, DT_INT16, DT_INT32, DT_FP32, DT_FP16, DT_BFP16});
  if (op == Unary::bit_not)
    require_dtype("dtype", dtype, {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32});
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(dst, "dst", src, "src");
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  with_dtype(dtype, [&]<data_type_t T>(Dt<T>) {
    using S = typename Dt<T>::Storage;
    with_op<T>(op, [&](auto g) { map_bits<S, S>(dst, from, g); });
  });
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src});
}

void prelu(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, scalar_t alpha,
           const dim4 &shape, data_type_t dtype) {
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, dtype);
  require_same_npu(dst, "dst", src, "src");
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  with_dtype(dtype, [&]<data_type_t T>(Dt<T>) {
    using S = typename Dt<T>::Storage;
    S raw;
    std::memcpy(&raw, &alpha, sizeof raw);  // the scalar's low bytes hold the value
    if constexpr (Dt<T>::is_float) {
      using Format = FloatFormatOf<T>;
      constexpr S magnitude = S(~Format::sign_bit), quiet = quiet_bit<T>();
      const float a = to_fp32<T>(raw);
      const bool a_nan = S(raw & magnitude) > Format::inf_bits;
      map_bits<S, S>(dst, from, [=](S x) -> S {
        if (S(x & magnitude) > Format::inf_bits) return S(x | quiet);
        const float v = to_fp32<T>(x);
        if (v > 0) return x;
        if (a_nan) return S(raw | quiet);
        const float p = a * v;
        // 0 * inf: the positive quiet NaN, whatever the host's default NaN.
        if (std::isnan(p)) return S(Format::inf_bits | quiet);
        return from_fp32<T>(p, RM_HALF_TO_EVEN);
      });
    } else {
      const int64_t a = raw;
      map_bits<S, S>(dst, from, [a](S x) { return x > 0 ? x : numeric::saturate<S>(a * int64_t(x)); });
    }
  });
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src});
}

}  // namespace cmodel::bdc
