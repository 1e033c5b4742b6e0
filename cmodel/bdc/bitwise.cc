#include "bitwise.h"

#include <cmath>
#include <cstring>

#include "elementwise.h"
#include "int_arith.h"

namespace cmodel::bdc {
namespace {

// ---- bitwise ----------------------------------------------------------------------

void require_bitwise_dtype(data_type_t dtype) {
  require_dtype("dtype", dtype, {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP32, DT_FP16, DT_BFP16});
}

template <typename F>
void with_bitwise_op(Bitwise op, F &&f) {
  switch (op) {
    case Bitwise::and_: return f([](auto a, auto b) { return decltype(a)(a & b); });
    case Bitwise::or_: return f([](auto a, auto b) { return decltype(a)(a | b); });
    case Bitwise::xor_: return f([](auto a, auto b) { return decltype(a)(a ^ b); });
  }
}

// ---- min / max ------------------------------------------------------------------------

// IEEE 754-2019 minimum / maximum on encodings (see bitwise.h).
template <typename D, bool IsMax>
typename D::Bits float_min_max(typename D::Bits a, typename D::Bits b) {
  using B = typename D::Bits;
  const float x = D::load_bits(a), y = D::load_bits(b);
  if (std::isnan(x)) return B(a | D::Format::quiet_bit);
  if (std::isnan(y)) return B(b | D::Format::quiet_bit);
  if (x != y) return (IsMax ? x > y : x < y) ? a : b;
  // Equal values have equal encodings except +0 and -0, which differ in
  // the sign bit only: OR picks -0 (minimum), AND picks +0 (maximum).
  return IsMax ? B(a & b) : B(a | b);
}

// Calls f(T{}, op) with T what the loop loads and stores and op the min or
// max of two of them. A float dtype is loaded as RawBits: op compares the
// values but returns one of the encodings.
template <typename F>
void with_min_max(data_type_t dtype, bool is_max, F &&f) {
  if (dtype_is_float(dtype)) {
    with_float_dtype(dtype, [&]<typename D>(D) {
      using B = typename D::Bits;
      if (is_max)
        f(RawBits<B>{}, [](B a, B b) { return float_min_max<D, true>(a, b); });
      else
        f(RawBits<B>{}, [](B a, B b) { return float_min_max<D, false>(a, b); });
    });
    return;
  }
  with_int_dtype(dtype, [&]<typename C>(C) {
    if (is_max)
      f(C{}, [](int64_t a, int64_t b) { return a > b ? a : b; });
    else
      f(C{}, [](int64_t a, int64_t b) { return a < b ? a : b; });
  });
}

void require_any_dtype(data_type_t dtype) {
  require_dtype("dtype", dtype, {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP32, DT_FP16, DT_BFP16});
}

// ---- shifts ---------------------------------------------------------------------------

// A shift tensor holds signed amounts (AR-12: the checker lifts this only
// for sg2260e and V9 chips) no wider than the value shifted (AR-13).
void require_shift_amount(data_type_t shift_dtype, data_type_t src_dtype) {
  if (!dtype_is_signed(shift_dtype))
    fail(Rule::AR_12,
         "shift dtype {} is unsigned; a shift tensor holds signed amounts (DT_INT8, DT_INT16 or DT_INT32: negative "
         "ones shift right)",
         dtype_name(shift_dtype));
  if (dtype_bits(shift_dtype) > dtype_bits(src_dtype))
    fail(Rule::AR_13, "shift dtype {} is {} bits wide but src dtype {} only {}; the shift amounts may not be wider "
         "than the values shifted",
         dtype_name(shift_dtype), dtype_bits(shift_dtype), dtype_name(src_dtype), dtype_bits(src_dtype));
}

// Exact left shift (shift >= 0) of a value below 2^32 in magnitude,
// clamped to [lo, hi].
inline int64_t shift_left_saturated(int64_t v, int64_t shift, int64_t lo, int64_t hi) {
  if (v == 0) return 0;
  if (shift > 40) return v < 0 ? lo : hi;  // |v| * 2^41 >= 2^41 is past every 32-bit bound
  const __int128 r = static_cast<__int128>(v) * (static_cast<__int128>(1) << shift);
  return r < lo ? lo : r > hi ? hi : int64_t(r);
}

// A right shift by `amount` >= 1 (any size) with rounding.
inline int64_t shift_right_any(int64_t v, int64_t amount, rounding_mode_t mode) {
  return shift_right_rounded(v, int(amount > 127 ? 127 : amount), mode);
}

// One element of an arithmetic shift: v is src's value.
inline int64_t arithmetic_shift(int64_t v, int64_t s, rounding_mode_t mode, int64_t lo, int64_t hi) {
  if (s >= 0) return shift_left_saturated(v, s, lo, hi);
  const int64_t r = shift_right_any(v, -s, mode);
  return r < lo ? lo : r > hi ? hi : r;
}

// One element of a logical shift: u is src's bits as an unsigned number;
// the result is truncated to dst's width when stored.
inline int64_t logical_shift(uint64_t u, int64_t s, rounding_mode_t mode) {
  if (s >= 0) return s >= 64 ? 0 : int64_t(u << s);
  return shift_right_any(int64_t(u), -s, mode);
}

// src's value as the logical shift sees it: its bits as an unsigned number.
inline uint64_t unsigned_bits(int64_t v, int bits) { return uint64_t(v) & ((uint64_t{1} << bits) - 1); }

data_type_t widest(std::initializer_list<data_type_t> dtypes) {
  data_type_t w = *dtypes.begin();
  for (data_type_t t : dtypes)
    if (dtype_bits(t) > dtype_bits(w)) w = t;
  return w;
}

// Runs the shift over dst with `src` operands; shift_of(in, k) gives the
// shift amount of element k.
template <typename ShiftOf>
void run_shift(ShiftKind kind, const TensorRef &dst, const TensorRef &src, rounding_mode_t mode, ShiftOf shift_of,
               const auto &...extra) {
  const int64_t lo = int_min_of(dst.dtype), hi = int_max_of(dst.dtype);
  const int src_bits = dtype_bits(src.dtype);
  with_rounding(mode, [&](auto M) {
    int_map(
        dst,
        [&](int64_t count, int64_t *out, const int64_t(*in)[int_chunk]) {
          if (kind == ShiftKind::arithmetic)
            for (int64_t k = 0; k < count; ++k)
              out[k] = arithmetic_shift(in[0][k], shift_of(in, k), M.value, lo, hi);
          else
            for (int64_t k = 0; k < count; ++k)
              out[k] = logical_shift(unsigned_bits(in[0][k], src_bits), shift_of(in, k), M.value);
        },
        src, extra...);
  });
}

}  // namespace

void bitwise(Context &ctx, const char *api, Bitwise op, local_addr_t dst_addr, local_addr_t src0_addr,
             local_addr_t src1_addr, const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride,
             const dim4 *src1_stride, data_type_t dtype) {
  require_bitwise_dtype(dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src0 = operand(ctx, "src0", src0_addr, shape, src0_stride, dtype);
  const TensorRef src1 = operand(ctx, "src1", src1_addr, shape, src1_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src0, "src0");
  require_same_npu(Rule::TIU_4, dst, "dst", src1, "src1");
  bitwise_on(op, dst, src0, src1, dtype);
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src0, &src1});
}

void bitwise_on(Bitwise op, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, data_type_t dtype) {
  require_bitwise_dtype(dtype);
  with_raw_bits(dtype, [&]<typename C>(C) {
    with_bitwise_op(op, [&](auto f) { map<C, C, C>(dst, f, src0, src1); });
  });
}

void bitwise_const(Context &ctx, const char *api, Bitwise op, local_addr_t dst_addr, local_addr_t src_addr,
                   scalar_t C, const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {
  require_bitwise_dtype(dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  with_raw_bits(dtype, [&]<typename D>(D) {
    const auto c = scalar_value<D>(C);
    with_bitwise_op(op, [&](auto f) { map<D, D>(dst, [&](auto x) { return f(x, c); }, src); });
  });
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src});
}

void min_max(Context &ctx, const char *api, bool is_max, local_addr_t dst_addr, local_addr_t src0_addr,
             local_addr_t src1_addr, const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride,
             const dim4 *src1_stride, data_type_t dtype) {
  require_any_dtype(dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src0 = operand(ctx, "src0", src0_addr, shape, src0_stride, dtype);
  const TensorRef src1 = operand(ctx, "src1", src1_addr, shape, src1_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src0, "src0");
  require_same_npu(Rule::TIU_4, dst, "dst", src1, "src1");
  min_max_on(is_max, dst, src0, src1, dtype);
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src0, &src1});
}

void min_max_on(bool is_max, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, data_type_t dtype) {
  require_any_dtype(dtype);
  with_min_max(dtype, is_max, [&]<typename C>(C, auto f) { map<C, C, C>(dst, f, src0, src1); });
}

void min_max_const(Context &ctx, const char *api, bool is_max, local_addr_t dst_addr, local_addr_t src_addr,
                   scalar_t C, const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {
  require_any_dtype(dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  with_min_max(dtype, is_max, [&]<typename D>(D, auto f) {
    const auto c = scalar_value<D>(C);
    map<D, D>(dst, [&](auto x) { return f(x, c); }, src);
  });
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src});
}

void shift(Context &ctx, const char *api, ShiftKind kind, local_addr_t dst_addr, local_addr_t src_addr,
           local_addr_t shift_addr, const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride,
           const dim4 *shift_stride, data_type_t dst_dtype, data_type_t src_dtype, data_type_t shift_dtype,
           rounding_mode_t rounding_mode) {
  require_int_dtype("dst", dst_dtype);
  require_int_dtype(Rule::AR_13, "src", src_dtype);
  require_int_dtype(Rule::AR_13, "shift", shift_dtype);
  require_shift_amount(shift_dtype, src_dtype);
  require_rounding_mode(rounding_mode);
  const TensorRef dst = result(ctx, "dst", dst_addr, shape, dst_stride, dst_dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, src_dtype);
  const TensorRef amount = operand(ctx, "shift", shift_addr, shape, shift_stride, shift_dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  require_same_npu(Rule::TIU_4, dst, "dst", amount, "shift");
  run_shift(
      kind, dst, src, rounding_mode, [](const int64_t(*in)[int_chunk], int64_t k) { return in[1][k]; }, amount);
  book(ctx, api, BdcCost::arith, dst, widest({dst_dtype, src_dtype, shift_dtype}), {&dst}, {&src, &amount});
}

void shift_const(Context &ctx, const char *api, ShiftKind kind, local_addr_t dst_addr, local_addr_t src_addr, int C,
                 const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype,
                 data_type_t src_dtype, rounding_mode_t rounding_mode) {
  require_int_dtype("dst", dst_dtype);
  require_int_dtype(Rule::AR_13, "src", src_dtype);
  require_rounding_mode(rounding_mode);
  const TensorRef dst = result(ctx, "dst", dst_addr, shape, dst_stride, dst_dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, src_dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  run_shift(kind, dst, src, rounding_mode, [C](const int64_t(*)[int_chunk], int64_t) { return int64_t(C); });
  book(ctx, api, BdcCost::arith, dst, widest({dst_dtype, src_dtype}), {&dst}, {&src});
}

}  // namespace cmodel::bdc
