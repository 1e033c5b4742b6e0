#include "unary.h"

#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "elementwise.h"
#include "movement.h"

namespace cmodel::bdc {

namespace {

// Calls f(g) with g: Bits -> Bits, the operation on dtype D.
template <typename D, typename F>
void with_op(Unary op, F &&f) {
  using S = typename D::Bits;
  if constexpr (D::is_float) {
    // Bit-level: the operations are exact, and NaNs are handled explicitly.
    using Format = typename D::Format;
    constexpr S sign = S(Format::sign_bit), magnitude = S(~Format::sign_bit), inf = S(Format::inf_bits);
    constexpr S quiet = S(Format::quiet_bit);
    const S one = D::store_bits(1.0f, RM_HALF_TO_EVEN), minus_one = S(one | sign);
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
  if (op == Unary::bit_not)  // NOT needs an 8/16/32-bit integer (AR-15)
    require_dtype(Rule::AR_15, "dtype", dtype, {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32});
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  with_dtype(dtype, [&]<typename D>(D) {
    using S = typename D::Bits;
    with_op<D>(op, [&](auto g) { map_bits<S, S>(dst, from, g); });
  });
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src});
}

void prelu(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, scalar_t alpha,
           const dim4 &shape, data_type_t dtype) {
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  with_dtype(dtype, [&]<typename D>(D) {
    using S = typename D::Bits;
    const S raw = scalar_bits<D>(alpha);
    if constexpr (D::is_float) {
      using Format = typename D::Format;
      constexpr S magnitude = S(~Format::sign_bit), quiet = S(Format::quiet_bit);
      const float a = D::load_bits(raw);
      const bool a_nan = S(raw & magnitude) > Format::inf_bits;
      map_bits<S, S>(dst, from, [=](S x) -> S {
        if (S(x & magnitude) > Format::inf_bits) return S(x | quiet);
        const float v = D::load_bits(x);
        if (v > 0) return x;
        if (a_nan) return S(raw | quiet);
        const float p = a * v;
        // 0 * inf: the positive quiet NaN, whatever the host's default NaN.
        if (std::isnan(p)) return S(Format::inf_bits | quiet);
        return D::store_bits(p, RM_HALF_TO_EVEN);
      });
    } else {
      const int64_t a = raw;
      map_bits<S, S>(dst, from, [a](S x) { return x > 0 ? x : numeric::saturate<S>(a * int64_t(x)); });
    }
  });
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src});
}

// ---- hard activations, isfinite, exponent_part ------------------------------------------

namespace {

// The bits of float dtype D.
template <typename D>
struct FloatBits {
  using S = typename D::Bits;
  using Format = typename D::Format;
  static constexpr S sign = S(Format::sign_bit), magnitude = S(~Format::sign_bit), inf = S(Format::inf_bits);
  static constexpr S quiet = S(Format::quiet_bit);
  // The positive quiet NaN with an empty payload: invalid operations (0 x
  // inf, inf - inf) give it whatever the host's default NaN is.
  static constexpr S default_nan = S(inf | quiet);
  static bool is_nan(S x) { return S(x & magnitude) > inf; }
  static S one() { return D::store_bits(1.0f, RM_HALF_TO_EVEN); }
  // y (exact, or rounded to odd in double) rounded once into D.
  static S round(double y) { return std::bit_cast<S>(store_rounded_once<D>(y)); }  // fp32 storage is a float
  // An fp32 parameter's NaN as a quiet NaN of D (narrowing keeps the top of
  // the payload).
  static S quiet_nan_of(float p) { return S(D::store_bits(p, RM_HALF_TO_EVEN) | quiet); }
};

// Calls f(g) with g: (S x, S &work) -> S, the operation on the bits of D;
// g also gives work0's element.
template <typename D, typename F>
void with_hard_activation(HardActivation op, float alpha, float beta, F &&f) {
  using B = FloatBits<D>;
  using S = typename B::S;
  switch (op) {
    case HardActivation::hsigmoid: {
      const bool alpha_nan = std::isnan(alpha), beta_nan = std::isnan(beta);
      const S param_nan = alpha_nan ? B::quiet_nan_of(alpha) : beta_nan ? B::quiet_nan_of(beta) : S(0);
      const S one = B::one();
      return f([=](S x, S &work) -> S {
        if (B::is_nan(x)) return work = S(x | B::quiet);
        if (alpha_nan || beta_nan) return work = param_nan;
        // alpha x is exact in double (24 x 24 bits); the sum is rounded to
        // odd, so rounding it into T is rounding the exact value once.
        const double product = double(alpha) * double(D::load_bits(x));
        const double t = add_round_to_odd(product, double(beta));
        if (std::isnan(t)) return work = B::default_nan;
        work = B::round(t);
        // 0 and 1 are exact in T: clamping before or after rounding agree.
        return t >= 1 ? one : t > 0 ? B::round(t) : S(0);
      });
    }
    case HardActivation::hswish:
      return f([](S x, S &work) -> S {
        if (B::is_nan(x)) return work = S(x | B::quiet);
        const double v = D::load_bits(x);
        const double shifted = add_round_to_odd(v, 3.0);  // +-inf stays +-inf
        work = B::round(shifted <= 0 ? 0.0 : shifted >= 6 ? 6.0 : shifted);
        if (v >= 3) return x;          // x * 6 / 6, exact; +inf too
        if (v <= -3) return B::sign;   // x * 0 / 6 = -0; the limit at -inf
        if (v == 0) return x;          // +-0 * 3 / 6 keeps the sign
        // x (x + 3) / 6 = x/2 + x^2/6: x/2 and x^2 are exact in double, the
        // one rounding of x^2/6 cannot move the sum across a rounding
        // boundary of T (x^2/6 has a factor 1/3 unless it is exact), and the
        // sum is rounded to odd.
        return B::round(add_round_to_odd(v / 2, v * v / 6));
      });
    case HardActivation::isfinite: {
      const S one = B::one();
      return f([one](S x, S &work) -> S {
        work = S(x & B::inf);  // the exponent field alone
        return S(x & B::magnitude) < B::inf ? one : S(0);
      });
    }
  }
}

// Cost of each activation's lowering, in arith passes.
double passes(HardActivation op) {
  switch (op) {
    case HardActivation::hsigmoid: return 2;  // alpha x + beta, clamp
    case HardActivation::hswish: return 4;    // x + 3, clamp to [0, 6], x * that, x 1/6
    case HardActivation::isfinite: return 2;  // exponent mask, compare
  }
  return 1;
}

}  // namespace

void fp_hard_activation(Context &ctx, const char *api, HardActivation op, local_addr_t dst_addr,
                        local_addr_t src_addr, local_addr_t work0_addr, const dim4 &shape, float alpha, float beta,
                        data_type_t dtype) {
  require_float("dtype", dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, dtype);
  const TensorRef work0 = operand(ctx, "work0", work0_addr, shape, nullptr, dtype);
  require_same_npu(dst, "dst", src, "src");
  require_same_npu(dst, "dst", work0, "work0");
  require_disjoint(work0, "work0", dst, "dst", work_buffer_reason);
  require_disjoint(work0, "work0", src, "src", work_buffer_reason);
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  with_float_dtype(dtype, [&]<typename D>(D) {
    using S = typename D::Bits;
    with_hard_activation<D>(op, alpha, beta, [&](auto g) {
      // work0 overlaps neither operand: it is written first, then dst
      // (element by element, in place when dst is src).
      map_bits<S, S>(work0, from, [&](S x) {
        S w;
        g(x, w);
        return w;
      });
      map_bits<S, S>(dst, from, [&](S x) {
        S w;
        return g(x, w);
      });
    });
  });
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst, &work0}, {&src}, passes(op));
}

void fp_exponent_part(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr,
                      const dim4 &shape, data_type_t dst_dtype, data_type_t src_dtype) {
  // The SFU's NORM takes a float and gives its exponent as a signed integer
  // as wide as the source, or the source's own float type (SFU-6).
  require_dtype(Rule::SFU_6, "src", src_dtype, {DT_FP32, DT_FP16, DT_BFP16});
  const data_type_t exponent = src_dtype == DT_FP32 ? DT_INT32 : DT_INT16;
  if (dst_dtype == src_dtype)
    fail(ErrorKind::unsupported, "dst dtype {} (the exponent as a float) is not emulated; use {}",
         dtype_name(dst_dtype), dtype_name(exponent));
  if (dst_dtype != exponent)
    fail(Rule::SFU_6,
         "dst dtype {} is not allowed here; the exponent part of a {} source is {} (an integer as wide as the "
         "source)",
         dtype_is_known(dst_dtype) ? dtype_name(dst_dtype) : std::to_string(int(dst_dtype)).c_str(),
         dtype_name(src_dtype), dtype_name(exponent));
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dst_dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, src_dtype);
  require_same_npu(Rule::SFU_1, dst, "dst", src, "src");
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  with_float_dtype(src_dtype, [&]<typename S>(S) {
    using SS = typename S::Bits;
    using Format = typename S::Format;
    with_dtype(dst_dtype, [&]<typename D>(D) {
      using DS = typename D::Bits;
      if constexpr (std::is_signed_v<DS>)
        map_bits<DS, SS>(dst, from, [](SS x) {
          const int field = int((x >> Format::man_bits) & ((1u << Format::exp_bits) - 1));
          return DS(field - Format::bias);
        });
    });
  });
  const data_type_t pace = dtype_bytes(dst_dtype) >= dtype_bytes(src_dtype) ? dst_dtype : src_dtype;
  book(ctx, api, BdcCost::arith, dst, pace, {&dst}, {&src});
}

}  // namespace cmodel::bdc
