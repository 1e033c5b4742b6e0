// ppl_wrapper_func.h: the vendor's composite functions (global namespace),
// built from the operations of ppl.h. Their temporaries are local tensors
// declared here, so they count against the calling kernel's local memory
// (spec §3.9). Those not written yet are deleted in ppl_unimplemented.h.
#pragma once

#include "ppl.h"

namespace ppl::wrapper {

// A [1, LANE_NUM, 1, entries] coefficient table of T.
template <typename T>
tensor<T> coefficient_table(int entries, const rt::site &where) {
  const dim4 table = {1, lane_num(), 1, entries};
  return make_tensor<T>(table, table, TPU_ALIGN, where);
}

template <typename T>
void require_float_wrapper() {
  static_assert(element<T>::is_float, "PPL: this wrapper takes fp32, fp16 or bf16 tensors");
}

// ln x on the scalar core (<cmath> stays out of .pl files, spec §6.2):
// x = m 2^k with m in [0.5, 2], ln m = 2 atanh((m - 1) / (m + 1)) by its
// series; NaN for x <= 0.
constexpr double scalar_log(double x) {
  if (!(x > 0)) return __builtin_nan("");
  int k = 0;
  for (; x > 2; x /= 2) ++k;
  for (; x < 0.5; x *= 2) --k;
  const double r = (x - 1) / (x + 1), r2 = r * r;
  double sum = 0, term = r;
  for (int n = 1; n < 80; n += 2, term *= r2) sum += term / n;
  return 2 * sum + k * 0.69314718055994530942;
}

}  // namespace ppl::wrapper

// e^x of `in` into `out` (fp32, fp16, bf16), `in` first clamped from above
// to the largest x whose e^x the type holds (88 for fp32 and bf16, 11 for
// fp16): no infinity. `block` is the tensors' allocation shape, `real`
// their shape.
template <typename T>
void exp_no_overflow(const ppl::tensor<T> &out, const ppl::tensor<T> &in, const ppl::dim4 *block,
                     const ppl::dim4 *real, const ppl::rt::site &where = ppl::rt::site::current()) {
  ppl::wrapper::require_float_wrapper<T>();
  const float upper = std::is_same_v<T, ppl::fp16> ? 11.0f : 88.0f;
  auto clamped = ppl::make_tensor<T>(*block, *real);
  ppl::tiu::fmin(clamped, in, upper, false, where);
  auto work0 = ppl::make_tensor<T>(*block, *real);
  auto work1 = ppl::make_tensor<T>(*block, *real);
  auto coeff = ppl::wrapper::coefficient_table<T>(10, where);
  ppl::rt::tiu_table_function("exp_no_overflow", ppl::rt::table_function::exp, out.describe(), clamped.describe(),
                              work0.describe(), work1.describe(), coeff.describe(), where);
}
template <typename T>
void exp_no_overflow(const ppl::tensor<T> &out, const ppl::tensor<T> &in, const ppl::dim4 *shape,
                     const ppl::rt::site &where = ppl::rt::site::current()) {
  exp_no_overflow(out, in, shape, shape, where);
}

// Natural logarithm (fp32, fp16, bf16), by tpu-kernel's log.
template <typename T>
void flog(const ppl::tensor<T> &out, const ppl::tensor<T> &in, const ppl::dim4 *block, const ppl::dim4 *real,
          const ppl::rt::site &where = ppl::rt::site::current()) {
  ppl::wrapper::require_float_wrapper<T>();
  auto work = ppl::make_tensor<T>(*block, *real);
  auto coeff = ppl::wrapper::coefficient_table<T>(8, where);
  ppl::rt::tiu_table_function("flog", ppl::rt::table_function::log, out.describe(), in.describe(), work.describe(),
                              work.describe(), coeff.describe(), where);
}

// arcsin (fp32, fp16, bf16) for |x| <= 1, by tpu-kernel's arcsin.
template <typename T>
void farcsin(const ppl::tensor<T> &out, const ppl::tensor<T> &in, const ppl::dim4 *block, const ppl::dim4 *real,
             const ppl::rt::site &where = ppl::rt::site::current()) {
  ppl::wrapper::require_float_wrapper<T>();
  auto work = ppl::make_tensor<T>(*block, *real);
  auto coeff = ppl::wrapper::coefficient_table<T>(12, where);
  ppl::rt::tiu_table_function("farcsin", ppl::rt::table_function::arcsin, out.describe(), in.describe(),
                              work.describe(), work.describe(), coeff.describe(), where);
}

// 1 / (1 + e^-x) in fp32.
inline void sigmoid_fp32(const ppl::tensor<ppl::fp32> &out, const ppl::tensor<ppl::fp32> &in, const ppl::dim4 *block,
                         const ppl::dim4 *real, const ppl::rt::site &where = ppl::rt::site::current()) {
  auto negated = ppl::make_tensor<ppl::fp32>(*block, *real);
  ppl::tiu::fmul(negated, in, -1.0f, false, where);
  auto e = ppl::make_tensor<ppl::fp32>(*block, *real);
  exp_no_overflow(e, negated, block, real, where);
  ppl::tiu::fadd(e, e, 1.0f, false, where);
  ppl::tiu::fdiv(out, 1.0f, e, 3, where);
}

// a^b = e^(b ln a) in fp32, for a > 0; a or b may be a scalar.
template <typename A, typename B>
void pow_f32(const ppl::tensor<ppl::fp32> &out, const A &a, const B &b, const ppl::dim4 *block,
             const ppl::dim4 *real, const ppl::rt::site &where = ppl::rt::site::current()) {
  static_assert(!(std::is_arithmetic_v<A> && std::is_arithmetic_v<B>), "PPL: pow_f32 needs a tensor operand");
  auto product = ppl::make_tensor<ppl::fp32>(*block, *real);
  if constexpr (std::is_arithmetic_v<A>) {
    // A scalar base: its logarithm is a constant of the scalar core.
    ppl::tiu::fmul(product, b, static_cast<float>(ppl::wrapper::scalar_log(a)), false, where);
  } else {
    auto log_a = ppl::make_tensor<ppl::fp32>(*block, *real);
    flog(log_a, a, block, real, where);
    if constexpr (std::is_arithmetic_v<B>)
      ppl::tiu::fmul(product, log_a, static_cast<float>(b), false, where);
    else
      ppl::tiu::fmul(product, log_a, b, false, where);
  }
  exp_no_overflow(out, product, block, real, where);
}

// Reduces W of `in` (real shape `in_real`, allocation `in_block`) into out
// [n, c, h, 1]: W padded with `fill` up to a multiple of the EU count,
// then mode 0 takes the maximum, any other mode the sum times `scale`
// (spec §3.9).
template <typename T>
void quick_pooling(const ppl::tensor<T> &out, const ppl::tensor<T> &in, const ppl::dim4 *in_block,
                   const ppl::dim4 *in_real, float fill, int mode, float scale = 1.0f,
                   const ppl::rt::site &where = ppl::rt::site::current()) {
  ppl::wrapper::require_float_wrapper<T>();
  const int eu = ppl::get_eu_num<T>();
  const ppl::dim4 padded_block = {in_block->n, in_block->c, in_block->h, ppl::align(in_block->w, eu)};
  const ppl::dim4 padded_real = {in_real->n, in_real->c, in_real->h, ppl::align(in_real->w, eu)};
  auto padded = ppl::make_tensor<T>(padded_block, padded_real, ppl::TPU_ALIGN, where);
  ppl::tiu::fill(padded, fill, where);
  ppl::tiu::move(padded.sub_view(*in_real, {0, 0, 0, 0}, where), in, where);
  const ppl::dim2 kernel = {1, padded_real.w}, one = {1, 1};
  const ppl::padding_t none = {0, 0, 0, 0};
  if (mode == 0)
    ppl::tiu::fpool_max(out, padded, &kernel, &none, &one, &one, where);
  else
    ppl::tiu::fpool_avg(out, padded, &kernel, &none, &one, &one, scale, where);
}

// dst [1, c, 1, num] (int32/uint32) = start + i * step in each of its c lanes.
template <typename T>
void arange_broadcast(const ppl::tensor<T> &dst, int c, int start, int step, int num,
                      const ppl::rt::site &where = ppl::rt::site::current()) {
  ppl::tiu::arange_broadcast(dst, start, step, num, c, where);
}
