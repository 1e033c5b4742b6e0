// ppl_tiu_func.h: ppl::tiu, the vector and matrix engine's operations
// (spec §3.8); part of ppl.h.
#pragma once

namespace ppl {
namespace tiu {

template <typename T>
constexpr void require_float(const char *) {
  static_assert(element<T>::is_float, "PPL: this tiu operation takes fp32, fp16 or bf16 tensors");
}

#define PPL_TIU_BINARY(NAME, OP)                                                                          \
  template <typename T>                                                                                   \
  void NAME(const tensor<T> &dst, const tensor<T> &a, const tensor<T> &b, bool = false,                   \
            const rt::site &where = rt::site::current()) {                                                \
    require_float<T>(#NAME);                                                                              \
    rt::tiu_binary("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), b.describe(), where); \
  }                                                                                                       \
  template <typename T>                                                                                   \
  void NAME(const tensor<T> &dst, const tensor<T> &a, float c, bool = false,                              \
            const rt::site &where = rt::site::current()) {                                                \
    require_float<T>(#NAME);                                                                              \
    rt::tiu_binary_scalar("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), c, false, where); \
  }
PPL_TIU_BINARY(fadd, add)
PPL_TIU_BINARY(fmul, mul)
PPL_TIU_BINARY(fsub, sub)
PPL_TIU_BINARY(fmax, max)
PPL_TIU_BINARY(fmin, min)
#undef PPL_TIU_BINARY

// c - a.
template <typename T>
void fsub(const tensor<T> &dst, float c, const tensor<T> &a, bool = false,
          const rt::site &where = rt::site::current()) {
  require_float<T>("fsub");
  rt::tiu_binary_scalar("ppl::tiu::fsub", rt::binary::sub, dst.describe(), a.describe(), c, true, where);
}

template <typename T>
void fdiv(const tensor<T> &dst, const tensor<T> &a, const tensor<T> &b, int = 3,
          const rt::site &where = rt::site::current()) {
  require_float<T>("fdiv");
  rt::tiu_binary("ppl::tiu::fdiv", rt::binary::div, dst.describe(), a.describe(), b.describe(), where);
}
template <typename T>
void fdiv(const tensor<T> &dst, const tensor<T> &a, float c, int = 3, const rt::site &where = rt::site::current()) {
  require_float<T>("fdiv");
  rt::tiu_binary_scalar("ppl::tiu::fdiv", rt::binary::div, dst.describe(), a.describe(), c, false, where);
}
// c / a.
template <typename T>
void fdiv(const tensor<T> &dst, float c, const tensor<T> &a, int = 3, const rt::site &where = rt::site::current()) {
  require_float<T>("fdiv");
  rt::tiu_binary_scalar("ppl::tiu::fdiv", rt::binary::div, dst.describe(), a.describe(), c, true, where);
}

template <typename T>
void fill(const tensor<T> &dst, double value, const rt::site &where = rt::site::current()) {
  rt::tiu_fill("ppl::tiu::fill", dst.describe(), value, where);
}
template <typename T>
void zero(const tensor<T> &dst, const rt::site &where = rt::site::current()) {
  rt::tiu_fill("ppl::tiu::zero", dst.describe(), 0.0, where);
}
template <typename T>
void move(const tensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::tiu_move("ppl::tiu::move", dst.describe(), src.describe(), where);
}
template <typename T0, typename T1>
void cast(const tensor<T0> &dst, const tensor<T1> &src, rounding_mode_t mode = RM_HALF_TO_EVEN,
          const rt::site &where = rt::site::current()) {
  rt::tiu_cast("ppl::tiu::cast", dst.describe(), src.describe(), mode, where);
}
template <typename T>
constexpr void require_integer() {
  static_assert(!element<T>::is_float, "PPL: the integer tiu operations (add, sub, mul) take integer tensors");
}

// The work tensor of a saturating left shift (docs/ppl.md, "Integer
// shifts"): 32 bits, unsigned when dst is, of the shape the operands
// broadcast to; made only for a left shift with saturation whose operands
// have shapes (without, the runtime refuses the call).
template <typename TD>
using shift_wide_t = std::conditional_t<std::is_unsigned_v<TD>, uint32, int32>;
inline dim4 broadcast_extents(const dim4 &a, const dim4 &b) {
  return {a.n > b.n ? a.n : b.n, a.c > b.c ? a.c : b.c, a.h > b.h ? a.h : b.h, a.w > b.w ? a.w : b.w};
}
inline bool needs_shift_work(int shift, bool saturation, const dim4 &s) {
  return shift > 0 && saturation && s.n > 0 && s.c > 0 && s.h > 0 && s.w > 0;
}

// Integer add, sub, mul: (a op b) shifted left by `shift` (right by -shift,
// rounded by `rm`), saturated to dst's type when `saturation`.
#define PPL_TIU_INT(NAME, OP)                                                                                     \
  template <typename TD, typename TA, typename TB>                                                                \
  void NAME(const tensor<TD> &dst, const tensor<TA> &a, const tensor<TB> &b, int shift = 0,                     \
            rounding_mode_t rm = RM_HALF_UP, bool saturation = false, const rt::site &where = rt::site::current()) { \
    require_integer<TD>();                                                                                        \
    const dim4 s = broadcast_extents(a.getShape(), b.getShape());                                                 \
    if (needs_shift_work(shift, saturation, s)) {                                                                 \
      auto work = make_tensor<shift_wide_t<TD>>(s, s, TPU_ALIGN, where);                                          \
      rt::tiu_int_binary("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), b.describe(),         \
                         rt::int_mode{shift, rm, saturation, &work.describe()}, where);                            \
      return;                                                                                                     \
    }                                                                                                             \
    rt::tiu_int_binary("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), b.describe(),           \
                       rt::int_mode{shift, rm, saturation}, where);                                                \
  }                                                                                                               \
  template <typename TD, typename TA>                                                                             \
  void NAME(const tensor<TD> &dst, const tensor<TA> &a, long long c, int shift = 0, rounding_mode_t rm = RM_HALF_UP, \
            bool saturation = false, const rt::site &where = rt::site::current()) {                              \
    require_integer<TD>();                                                                                        \
    const dim4 s = a.getShape();                                                                                  \
    if (needs_shift_work(shift, saturation, s)) {                                                                 \
      auto work = make_tensor<shift_wide_t<TD>>(s, s, TPU_ALIGN, where);                                          \
      rt::tiu_int_binary_scalar("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), c, false,      \
                                rt::int_mode{shift, rm, saturation, &work.describe()}, where);                     \
      return;                                                                                                     \
    }                                                                                                             \
    rt::tiu_int_binary_scalar("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), c, false,        \
                              rt::int_mode{shift, rm, saturation}, where);                                         \
  }
PPL_TIU_INT(add, add)
PPL_TIU_INT(sub, sub)
PPL_TIU_INT(mul, mul)
#undef PPL_TIU_INT

// Element-wise maximum and minimum of any type (the corpus uses them on
// floats too).
template <typename T>
void max(const tensor<T> &dst, const tensor<T> &a, const tensor<T> &b, const rt::site &where = rt::site::current()) {
  rt::tiu_binary("ppl::tiu::max", rt::binary::max, dst.describe(), a.describe(), b.describe(), where);
}
template <typename T>
void min(const tensor<T> &dst, const tensor<T> &a, const tensor<T> &b, const rt::site &where = rt::site::current()) {
  rt::tiu_binary("ppl::tiu::min", rt::binary::min, dst.describe(), a.describe(), b.describe(), where);
}
template <typename T>
void max(const tensor<T> &dst, const tensor<T> &a, double c, const rt::site &where = rt::site::current()) {
  rt::tiu_binary_scalar("ppl::tiu::max", rt::binary::max, dst.describe(), a.describe(), c, false, where);
}
template <typename T>
void min(const tensor<T> &dst, const tensor<T> &a, double c, const rt::site &where = rt::site::current()) {
  rt::tiu_binary_scalar("ppl::tiu::min", rt::binary::min, dst.describe(), a.describe(), c, false, where);
}

// src [n, 1, h, w] copied to `num` (or dst's C) lanes: dst [n, num, h, w].
template <typename T>
void broadcast(const tensor<T> &dst, const tensor<T> &src, int num = 0, const rt::site &where = rt::site::current()) {
  rt::tiu_lane_broadcast("ppl::tiu::broadcast", dst.describe(), src.describe(), num, where);
}
// 1/sqrt(x) by Newton iterations (1 to 4; aligned tensors).
template <typename T>
void frsqrt(const tensor<T> &dst, const tensor<T> &src, int num_iter = 3,
            const rt::site &where = rt::site::current()) {
  require_float<T>("frsqrt");
  rt::tiu_rsqrt("ppl::tiu::frsqrt", dst.describe(), src.describe(), num_iter, where);
}
// Pooling over H and W in the vendor's pointer form; fpool_avg gives the
// window's sum times `scale` (docs/ppl.md). Aligned tensors.
template <typename T>
void fpool_avg(const tensor<T> &dst, const tensor<T> &src, const dim2 *kernel, const padding_t *pad,
               const dim2 *stride, const dim2 *dilation, float scale = 1.0f,
               const rt::site &where = rt::site::current()) {
  require_float<T>("fpool_avg");
  rt::tiu_pool("ppl::tiu::fpool_avg", rt::pool::average, dst.describe(), src.describe(),
               rt::pool_window{*kernel, *stride, *dilation, *pad}, scale, where);
}
template <typename T>
void fpool_max(const tensor<T> &dst, const tensor<T> &src, const dim2 *kernel, const padding_t *pad,
               const dim2 *stride, const dim2 *dilation, const rt::site &where = rt::site::current()) {
  require_float<T>("fpool_max");
  rt::tiu_pool("ppl::tiu::fpool_max", rt::pool::max, dst.describe(), src.describe(),
               rt::pool_window{*kernel, *stride, *dilation, *pad}, 1.0, where);
}
// Reduces the W dimension (spec §3.8, `reduce`; §7 question 9 decided as W).
template <typename T>
void reduce(const tensor<T> &dst, const tensor<T> &src, all_reduce_opcode_t op, bool = false,
            const rt::site &where = rt::site::current()) {
  require_float<T>("reduce");
  rt::tiu_reduce_w("ppl::tiu::reduce", dst.describe(), src.describe(), op, where);
}
// dst[1,M,1,N] (fp32, or T) = [dst +] left[1,M,1,K] x right[1,K,1,N].
template <typename TD, typename T>
void fmm2(const tensor<TD> &dst, const tensor<T> &left, const tensor<T> &right, bool result_add = false,
          const rt::site &where = rt::site::current()) {
  require_float<T>("fmm2");
  rt::tiu_fmm2("ppl::tiu::fmm2", dst.describe(), left.describe(), right.describe(), result_add, where);
}
// The forms with out_dtype (dst's type) and with transpose flags: left
// and result untransposed; rtrans multiplies by right [1,N,1,K]
// transposed, as fmm2_nt (the other transposes are refused).
template <typename TD, typename T>
void fmm2(const tensor<TD> &dst, const tensor<T> &left, const tensor<T> &right, bool result_add,
          data_type_t out_dtype, const rt::site &where = rt::site::current()) {
  require_float<T>("fmm2");
  rt::require_dtype("ppl::tiu::fmm2", "out_dtype", out_dtype, element<TD>::dtype, where);
  rt::tiu_fmm2("ppl::tiu::fmm2", dst.describe(), left.describe(), right.describe(), result_add, where);
}
template <typename TD, typename T>
void fmm2(const tensor<TD> &dst, const tensor<T> &left, const tensor<T> &right, bool ltrans, bool rtrans,
          bool rst_trans, const rt::site &where = rt::site::current()) {
  require_float<T>("fmm2");
  rt::require_untransposed("ppl::tiu::fmm2", ltrans, rst_trans, where);
  if (rtrans)
    rt::tiu_fmm2_nt("ppl::tiu::fmm2", dst.describe(), left.describe(), right.describe(), where);
  else
    rt::tiu_fmm2("ppl::tiu::fmm2", dst.describe(), left.describe(), right.describe(), false, where);
}

// An operand that is a tensor or a scalar (the vendor's "L|K").
template <typename A>
rt::tensor_or_scalar operand_of(const A &v) {
  if constexpr (std::is_arithmetic_v<A>)
    return {nullptr, static_cast<double>(v)};
  else
    return {&v.describe(), 0.0};
}

// fmm2_nn is fmm2; fmm2_nt multiplies by the transpose of right [1,N,1,K].
template <typename TD, typename T>
void fmm2_nn(const tensor<TD> &dst, const tensor<T> &left, const tensor<T> &right, bool result_add = false,
             const rt::site &where = rt::site::current()) {
  require_float<T>("fmm2_nn");
  rt::tiu_fmm2("ppl::tiu::fmm2_nn", dst.describe(), left.describe(), right.describe(), result_add, where);
}
template <typename TD, typename T>
void fmm2_nt(const tensor<TD> &dst, const tensor<T> &left, const tensor<T> &right,
             const rt::site &where = rt::site::current()) {
  require_float<T>("fmm2_nt");
  rt::tiu_fmm2_nt("ppl::tiu::fmm2_nt", dst.describe(), left.describe(), right.describe(), where);
}

// dst = true_val where a > b (lt: <, eq: ==), else 0; b a tensor or a scalar.
#define PPL_TIU_COMPARE(NAME, OP)                                                                              \
  template <typename TD, typename T, typename B>                                                               \
  void NAME(const tensor<TD> &dst, const tensor<T> &a, const B &b, double true_val,                            \
            const rt::site &where = rt::site::current()) {                                                     \
    rt::tiu_compare("ppl::tiu::" #NAME, rt::compare::OP, dst.describe(), a.describe(), operand_of(b), true_val, \
                    where);                                                                                    \
  }
PPL_TIU_COMPARE(gt, greater)
PPL_TIU_COMPARE(lt, less)
PPL_TIU_COMPARE(eq, equal)
#undef PPL_TIU_COMPARE

// dst = (a > b) ? x : y (lt_select: <, eq_select: ==); each a tensor of
// dst's shape or a scalar.
#define PPL_TIU_SELECT(NAME, OP)                                                                                 \
  template <typename TD, typename A, typename B, typename X, typename Y>                                         \
  void NAME(const tensor<TD> &dst, const A &a, const B &b, const X &x, const Y &y,                               \
            const rt::site &where = rt::site::current()) {                                                       \
    rt::tiu_select("ppl::tiu::" #NAME, rt::compare::OP, dst.describe(), operand_of(a), operand_of(b), operand_of(x), \
                   operand_of(y), where);                                                                        \
  }
PPL_TIU_SELECT(gt_select, greater)
PPL_TIU_SELECT(lt_select, less)
PPL_TIU_SELECT(eq_select, equal)
#undef PPL_TIU_SELECT

// Bitwise and, or, xor of integer tensors; b a tensor or a scalar.
#define PPL_TIU_BITWISE(NAME, OP)                                                                                 \
  template <typename T, typename B>                                                                               \
  void NAME(const tensor<T> &dst, const tensor<T> &a, const B &b, const rt::site &where = rt::site::current()) {  \
    rt::tiu_bitwise("ppl::tiu::" #NAME, rt::bitwise::OP, dst.describe(), a.describe(), operand_of(b), where);     \
  }
PPL_TIU_BITWISE(bitwise_and, and_)
PPL_TIU_BITWISE(bitwise_or, or_)
PPL_TIU_BITWISE(bitwise_xor, xor_)
#undef PPL_TIU_BITWISE

template <typename T>
void abs(const tensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::tiu_abs("ppl::tiu::abs", dst.describe(), src.describe(), where);
}
// Shift by an int8 constant or a tensor of shifts (positive: left; a right
// shift rounds by rm).
template <typename TD, typename TS, typename S>
void shift(const tensor<TD> &dst, const tensor<TS> &src, const S &amount, rounding_mode_t rm,
           const rt::site &where = rt::site::current()) {
  rt::tiu_shift("ppl::tiu::shift", false, dst.describe(), src.describe(), operand_of(amount), rm, where);
}
template <typename TD, typename TS, typename S>
void logical_shift(const tensor<TD> &dst, const tensor<TS> &src, const S &amount, rounding_mode_t rm,
                   const rt::site &where = rt::site::current()) {
  rt::tiu_shift("ppl::tiu::logical_shift", true, dst.describe(), src.describe(), operand_of(amount), rm, where);
}
// dst += a * b (fp32); b a tensor or a float.
template <typename B>
void fmac(const tensor<fp32> &dst, const tensor<fp32> &a, const B &b, const rt::site &where = rt::site::current()) {
  rt::tiu_fmac("ppl::tiu::fmac", dst.describe(), a.describe(), operand_of(b), where);
}
// Round to an integer value, in the same float type.
template <typename T>
void floor(const tensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::tiu_round("ppl::tiu::floor", dst.describe(), src.describe(), RM_DOWN, true, where);
}
template <typename T>
void round(const tensor<T> &dst, const tensor<T> &src, rounding_mode_t rm = RM_HALF_TO_EVEN,
           const rt::site &where = rt::site::current()) {
  rt::tiu_round("ppl::tiu::round", dst.describe(), src.describe(), rm, false, where);
}
template <typename T>
void fpool_min(const tensor<T> &dst, const tensor<T> &src, const dim2 *kernel, const padding_t *pad,
               const dim2 *stride, const dim2 *dilation, const rt::site &where = rt::site::current()) {
  require_float<T>("fpool_min");
  rt::tiu_pool("ppl::tiu::fpool_min", rt::pool::min, dst.describe(), src.describe(),
               rt::pool_window{*kernel, *stride, *dilation, *pad}, 1.0, where);
}
// Integer pooling of int8/uint8 tensors, the vendor's pointer form:
// pool_max keeps the type; pool_avg gives the window's sum times `scale`,
// shifted right by `rshift` (rounding half up), saturated to dst's type.
template <typename T>
void pool_max(const tensor<T> &dst, const tensor<T> &src, const dim2 *kernel, const padding_t *pad,
              const dim2 *stride, const dim2 *dilation, const rt::site &where = rt::site::current()) {
  rt::tiu_int_pool("ppl::tiu::pool_max", rt::int_pool{}, dst.describe(), src.describe(),
                   rt::pool_window{*kernel, *stride, *dilation, *pad}, where);
}
template <typename T0, typename T1>
void pool_avg(const tensor<T0> &dst, const tensor<T1> &src, const dim2 *kernel, const padding_t *pad,
              const dim2 *stride, const dim2 *dilation, int scale, int rshift = 0,
              const rt::site &where = rt::site::current()) {
  rt::tiu_int_pool("ppl::tiu::pool_avg", rt::int_pool{true, scale, rshift}, dst.describe(), src.describe(),
                   rt::pool_window{*kernel, *stride, *dilation, *pad}, where);
}
// The handle forms of pooling (spec §2.3 and §3.8): the window from
// pool::param::kernel / padding / insert handles, the same commands as the
// pointer forms. fpool_avg's optional rshift is not taken.
template <typename T>
void fpool_avg(const tensor<T> &dst, const tensor<T> &src, int kernel, int pad, int insert, float scale = 1.0f,
               const rt::site &where = rt::site::current()) {
  require_float<T>("fpool_avg");
  rt::tiu_pool("ppl::tiu::fpool_avg", rt::pool::average, dst.describe(), src.describe(),
               rt::window_of("ppl::tiu::fpool_avg", kernel, pad, insert, where), scale, where);
}
template <typename T>
void fpool_avg(const tensor<T> &dst, const tensor<T> &src, int kernel, int pad, float scale = 1.0f,
               const rt::site &where = rt::site::current()) {
  fpool_avg(dst, src, kernel, pad, -1, scale, where);  // no insert handle
}
template <typename T>
void fpool_max(const tensor<T> &dst, const tensor<T> &src, int kernel, int pad, int insert = -1,
               const rt::site &where = rt::site::current()) {
  require_float<T>("fpool_max");
  rt::tiu_pool("ppl::tiu::fpool_max", rt::pool::max, dst.describe(), src.describe(),
               rt::window_of("ppl::tiu::fpool_max", kernel, pad, insert, where), 1.0, where);
}
template <typename T>
void fpool_min(const tensor<T> &dst, const tensor<T> &src, int kernel, int pad, int insert = -1,
               const rt::site &where = rt::site::current()) {
  require_float<T>("fpool_min");
  rt::tiu_pool("ppl::tiu::fpool_min", rt::pool::min, dst.describe(), src.describe(),
               rt::window_of("ppl::tiu::fpool_min", kernel, pad, insert, where), 1.0, where);
}
template <typename T>
void pool_max(const tensor<T> &dst, const tensor<T> &src, int kernel, int pad, int insert = -1,
              const rt::site &where = rt::site::current()) {
  rt::tiu_int_pool("ppl::tiu::pool_max", rt::int_pool{}, dst.describe(), src.describe(),
                   rt::window_of("ppl::tiu::pool_max", kernel, pad, insert, where), where);
}
// With int handles, (kernel, pad, scale[, rshift]) and (kernel, pad,
// insert, scale) would be one signature: the insert form takes all three
// integers (kernel, pad, insert, scale, rshift).
template <typename T0, typename T1>
void pool_avg(const tensor<T0> &dst, const tensor<T1> &src, int kernel, int pad, int insert, int scale, int rshift,
              const rt::site &where = rt::site::current()) {
  rt::tiu_int_pool("ppl::tiu::pool_avg", rt::int_pool{true, scale, rshift}, dst.describe(), src.describe(),
                   rt::window_of("ppl::tiu::pool_avg", kernel, pad, insert, where), where);
}
template <typename T0, typename T1>
void pool_avg(const tensor<T0> &dst, const tensor<T1> &src, int kernel, int pad, int scale, int rshift = 0,
              const rt::site &where = rt::site::current()) {
  pool_avg(dst, src, kernel, pad, -1, scale, rshift, where);  // no insert handle
}
// dst(n, c, h, index(n, c, h, w)) = param(n, c, h, w), index 16- or 8-bit;
// `param_repeated`: param is one channel, the same in every lane.
template <typename T, typename TI>
void scatter_w(const tensor<T> &dst, const tensor<T> &param, const tensor<TI> &index, bool param_repeated = false,
               const rt::site &where = rt::site::current()) {
  rt::tiu_scatter_w("ppl::tiu::scatter_w", dst.describe(), param.describe(), index.describe(), param_repeated, where);
}
// dst(n, c, h, w) = src(n, w, h, c): transpose_cw for C > W, transpose_wc
// for W > C (either gives the same result).
template <typename T>
void transpose_cw(const tensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::tiu_transpose("ppl::tiu::transpose_cw", true, dst.describe(), src.describe(), where);
}
template <typename T>
void transpose_wc(const tensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::tiu_transpose("ppl::tiu::transpose_wc", false, dst.describe(), src.describe(), where);
}
// A copy whose source and destination start on different lanes.
template <typename T>
void move_cross_lane(const tensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::tiu_move_cross_lane("ppl::tiu::move_cross_lane", dst.describe(), src.describe(), where);
}
// dst [1, c, 1, num] (int32/uint32): start + i * step in every lane.
template <typename T>
void arange_broadcast(const tensor<T> &dst, int start, int step, int num, int c = 0,
                      const rt::site &where = rt::site::current()) {
  rt::tiu_arange("ppl::tiu::arange_broadcast", dst.describe(), start, step, num, c, where);
}
// Float convolution in the vendor's deprecated pointer form, parameters in
// the spec's order (kernel, stride, dilation, padding), as decided in
// docs/ppl.md ("fconv"): weight [1, oc, ceil(ic / nic) kh kw, nic] compact
// (nic = get_nic<T>()), optional fp32 bias [1, oc, 1, 1] compact, both on
// dst's lane; dst of src's type or fp32; result_add accumulates into dst.
// A float weight is a constant kernel. Forms with insertion or the trailing
// has_bias / saturate / kernel_rotate flags do not compile.
template <typename TD, typename T>
void fconv(const tensor<TD> &dst, const tensor<T> &src, const tensor<T> &weight, const tensor<fp32> &bias, int oc,
           const dim2 *kernel, const dim2 *stride, const dim2 *dilation, const padding_t *pad,
           bool result_add = false, const rt::site &where = rt::site::current()) {
  require_float<T>("fconv");
  rt::tiu_fconv("ppl::tiu::fconv", dst.describe(), src.describe(),
                rt::conv_operands{operand_of(weight), &bias.describe(), oc, result_add},
                rt::conv_window{rt::pool_window{*kernel, *stride, *dilation, *pad}}, where);
}
template <typename TD, typename T, typename W>
void fconv(const tensor<TD> &dst, const tensor<T> &src, const W &weight, int oc, const dim2 *kernel,
           const dim2 *stride, const dim2 *dilation, const padding_t *pad, bool result_add = false,
           const rt::site &where = rt::site::current()) {
  require_float<T>("fconv");
  static_assert(std::is_arithmetic_v<W> || std::is_same_v<W, tensor<T>>,
                "PPL: fconv's weight is a tensor of src's type or a float constant");
  rt::tiu_fconv("ppl::tiu::fconv", dst.describe(), src.describe(), rt::conv_operands{operand_of(weight), nullptr, oc,
                result_add}, rt::conv_window{rt::pool_window{*kernel, *stride, *dilation, *pad}}, where);
}
// fconv's handle form: the window from conv::param::kernel / padding /
// insert handles; out_dtype must be dst's type (dst decides it). A kernel
// handle with rotate reads the kernel turned by 180 degrees; insertion
// (ins_h, ins_w) needs rotate and stride 1 (docs/ppl.md, "fconv").
template <typename TD, typename T>
void fconv(const tensor<TD> &dst, const tensor<T> &src, const tensor<T> &weight, const tensor<fp32> &bias, int oc,
           int kernel, int pad, int insert, data_type_t out_dtype, bool result_add = false,
           const rt::site &where = rt::site::current()) {
  require_float<T>("fconv");
  rt::require_dtype("ppl::tiu::fconv", "out_dtype", out_dtype, element<TD>::dtype, where);
  rt::tiu_fconv("ppl::tiu::fconv", dst.describe(), src.describe(),
                rt::conv_operands{operand_of(weight), &bias.describe(), oc, result_add},
                rt::conv_window_of("ppl::tiu::fconv", kernel, pad, insert, where), where);
}
template <typename TD, typename T, typename W>
void fconv(const tensor<TD> &dst, const tensor<T> &src, const W &weight, int oc, int kernel, int pad, int insert,
           data_type_t out_dtype, bool result_add = false, const rt::site &where = rt::site::current()) {
  require_float<T>("fconv");
  static_assert(std::is_arithmetic_v<W> || std::is_same_v<W, tensor<T>>,
                "PPL: fconv's weight is a tensor of src's type or a float constant");
  rt::require_dtype("ppl::tiu::fconv", "out_dtype", out_dtype, element<TD>::dtype, where);
  rt::tiu_fconv("ppl::tiu::fconv", dst.describe(), src.describe(), rt::conv_operands{operand_of(weight), nullptr, oc,
                result_add}, rt::conv_window_of("ppl::tiu::fconv", kernel, pad, insert, where), where);
}
// dst [n, c, 1, w] = param(n, c, h_i, w_i) for the (h, w) pairs of index:
// a 16-bit tensor [n, 1, 1, 2w] (h, w, h, w, ...) or a 32-bit one
// [n, 1, 1, w] (h in the low half, w in the high), on lane 0, shared by
// every channel (docs/ppl.md, "gather_hw"). Without C an out-of-range pair
// stops the kernel; with C it gives C (fill_const) or the nearest element.
template <typename T, typename TI>
void gather_hw(const tensor<T> &dst, const tensor<T> &param, const tensor<TI> &index,
               const rt::site &where = rt::site::current()) {
  rt::tiu_gather_hw("ppl::tiu::gather_hw", dst.describe(), param.describe(), index.describe(), rt::gather_fill{},
                    where);
}
template <typename T, typename TI>
void gather_hw(const tensor<T> &dst, const tensor<T> &param, const tensor<TI> &index, double C,
               bool fill_const = true, const rt::site &where = rt::site::current()) {
  rt::tiu_gather_hw("ppl::tiu::gather_hw", dst.describe(), param.describe(), index.describe(),
                    rt::gather_fill{true, C, fill_const}, where);
}
// A fill constant: any arithmetic type but bool (a bool there is the
// param_repeated flag of the forms without C).
template <typename K>
constexpr bool fill_constant_v = std::is_arithmetic_v<K> && !std::is_same_v<K, bool>;
// dst(n, c, h, w) = param(n, c, h, index(n, c, h, w)): index (8- or 16-bit)
// of dst's shape, param [n, c (1 when param_repeated: one channel present in
// every lane), h, W]. Without C an out-of-range index stops the kernel; with
// C it gives C (fill_const) or the nearest element.
template <typename T, typename TI>
void gather_w(const tensor<T> &dst, const tensor<T> &param, const tensor<TI> &index, bool param_repeated = false,
              const rt::site &where = rt::site::current()) {
  rt::tiu_gather("ppl::tiu::gather_w", rt::gather_axis::w, dst.describe(), param.describe(), index.describe(),
                 rt::gather_fill{}, param_repeated, where);
}
template <typename T, typename TI, typename K, std::enable_if_t<fill_constant_v<K>, int> = 0>
void gather_w(const tensor<T> &dst, const tensor<T> &param, const tensor<TI> &index, K C, bool param_repeated = false,
              bool fill_const = true, const rt::site &where = rt::site::current()) {
  rt::tiu_gather("ppl::tiu::gather_w", rt::gather_axis::w, dst.describe(), param.describe(), index.describe(),
                 rt::gather_fill{true, static_cast<double>(C), fill_const}, param_repeated, where);
}
// dst(n, c, h, w) = param(n, c, index(n, c, h), w): index [n, c, h, 1],
// param [n, c (or 1), H, w]; C and fill_const as for gather_w.
template <typename T, typename TI>
void gather_h(const tensor<T> &dst, const tensor<T> &param, const tensor<TI> &index, bool param_repeated = false,
              const rt::site &where = rt::site::current()) {
  rt::tiu_gather("ppl::tiu::gather_h", rt::gather_axis::h, dst.describe(), param.describe(), index.describe(),
                 rt::gather_fill{}, param_repeated, where);
}
template <typename T, typename TI, typename K, std::enable_if_t<fill_constant_v<K>, int> = 0>
void gather_h(const tensor<T> &dst, const tensor<T> &param, const tensor<TI> &index, bool param_repeated, K C,
              bool fill_const = true, const rt::site &where = rt::site::current()) {
  rt::tiu_gather("ppl::tiu::gather_h", rt::gather_axis::h, dst.describe(), param.describe(), index.describe(),
                 rt::gather_fill{true, static_cast<double>(C), fill_const}, param_repeated, where);
}
// dst(n, c, index(n, c, h), w) = param(n, c, h, w): index [n, c, param's h,
// 1]; out-of-range rows are skipped, other rows of dst keep their values.
template <typename T, typename TI>
void scatter_h(const tensor<T> &dst, const tensor<T> &param, const tensor<TI> &index, bool param_repeated = false,
               const rt::site &where = rt::site::current()) {
  rt::tiu_scatter_h("ppl::tiu::scatter_h", dst.describe(), param.describe(), index.describe(), param_repeated, where);
}
// dst(n, c, h_i, w_i) = param(n, c, 0, i), param [n, c, 1, w], for the
// (h, w) pairs of index (gather_hw's layout); outside pairs are skipped.
template <typename T, typename TI>
void scatter_hw(const tensor<T> &dst, const tensor<T> &param, const tensor<TI> &index,
                const rt::site &where = rt::site::current()) {
  rt::tiu_scatter_hw("ppl::tiu::scatter_hw", dst.describe(), param.describe(), index.describe(), where);
}
// Transposed float convolution over deconv::param handles (docs/ppl.md,
// "fdeconv"): the kernel handle's stride, the padding and the insert
// handle's dilation are the transposed convolution's; weight and bias as
// fconv's, weight(o, i, p, q) the forward convolution's (not rotated).
template <typename TD, typename T>
void fdeconv(const tensor<TD> &dst, const tensor<T> &src, const tensor<T> &weight, const tensor<fp32> &bias, int oc,
             int kernel, int pad, int insert, data_type_t out_dtype, bool result_add = false,
             const rt::site &where = rt::site::current()) {
  require_float<T>("fdeconv");
  rt::require_dtype("ppl::tiu::fdeconv", "out_dtype", out_dtype, element<TD>::dtype, where);
  rt::tiu_fdeconv("ppl::tiu::fdeconv", dst.describe(), src.describe(),
                  rt::conv_operands{operand_of(weight), &bias.describe(), oc, result_add},
                  rt::deconv_window_of("ppl::tiu::fdeconv", kernel, pad, insert, where), where);
}
template <typename TD, typename T>
void fdeconv(const tensor<TD> &dst, const tensor<T> &src, const tensor<T> &weight, int oc, int kernel, int pad,
             int insert, data_type_t out_dtype, bool result_add = false, const rt::site &where = rt::site::current()) {
  require_float<T>("fdeconv");
  rt::require_dtype("ppl::tiu::fdeconv", "out_dtype", out_dtype, element<TD>::dtype, where);
  rt::tiu_fdeconv("ppl::tiu::fdeconv", dst.describe(), src.describe(),
                  rt::conv_operands{operand_of(weight), nullptr, oc, result_add},
                  rt::deconv_window_of("ppl::tiu::fdeconv", kernel, pad, insert, where), where);
}
// Depthwise float convolution: channel c of dst [n, c, oh, ow] (src's
// type) is channel c of src convolved with weight [1, c, kh, kw] (+ bias
// [1, c, 1, 1]), both of src's type, compact, on src's lane. The pointer
// form takes kernel, stride, dilation, padding (fconv's order); the handle
// form conv::param handles.
template <typename T>
void fdw_conv(const tensor<T> &dst, const tensor<T> &src, const tensor<T> &weight, const tensor<T> &bias,
              const dim2 *kernel, const dim2 *stride, const dim2 *dilation, const padding_t *pad,
              const rt::site &where = rt::site::current()) {
  require_float<T>("fdw_conv");
  rt::tiu_fdw_conv("ppl::tiu::fdw_conv", dst.describe(), src.describe(), weight.describe(), &bias.describe(),
                   rt::pool_window{*kernel, *stride, *dilation, *pad}, where);
}
template <typename T>
void fdw_conv(const tensor<T> &dst, const tensor<T> &src, const tensor<T> &weight, const dim2 *kernel,
              const dim2 *stride, const dim2 *dilation, const padding_t *pad,
              const rt::site &where = rt::site::current()) {
  require_float<T>("fdw_conv");
  rt::tiu_fdw_conv("ppl::tiu::fdw_conv", dst.describe(), src.describe(), weight.describe(), nullptr,
                   rt::pool_window{*kernel, *stride, *dilation, *pad}, where);
}
template <typename T>
void fdw_conv(const tensor<T> &dst, const tensor<T> &src, const tensor<T> &weight, const tensor<T> &bias, int kernel,
              int pad, int insert, const rt::site &where = rt::site::current()) {
  require_float<T>("fdw_conv");
  rt::tiu_fdw_conv("ppl::tiu::fdw_conv", dst.describe(), src.describe(), weight.describe(), &bias.describe(),
                   rt::window_of("ppl::tiu::fdw_conv", kernel, pad, insert, where), where);
}
template <typename T>
void fdw_conv(const tensor<T> &dst, const tensor<T> &src, const tensor<T> &weight, int kernel, int pad, int insert,
              const rt::site &where = rt::site::current()) {
  require_float<T>("fdw_conv");
  rt::tiu_fdw_conv("ppl::tiu::fdw_conv", dst.describe(), src.describe(), weight.describe(), nullptr,
                   rt::window_of("ppl::tiu::fdw_conv", kernel, pad, insert, where), where);
}
// Engine messages (a multi-core run's cores; alone, they do nothing).
inline void send_msg(int id, int wait_count, const rt::site &where = rt::site::current()) {
  rt::send_message(rt::message_engine::tiu, id, wait_count, where);
}
inline void wait_msg(int id, int send_count, const rt::site &where = rt::site::current()) {
  rt::wait_message(rt::message_engine::tiu, id, send_count, where);
}

}  // namespace tiu

// Window parameter handles of the pooling and convolution operations'
// handle forms (spec §2.3; `int`, as in tpu-mlir's headers). padding's
// value and mode must be 0 and insert's ins_h / ins_w too when an
// operation reads them (the commands pad with their own value and insert
// nothing here). conv::param builds the same handles.
namespace pool::param {
inline int kernel(int kh, int kw, int stride_h, int stride_w, bool relu = false, bool rotate = false) {
  return rt::window_param_handle({rt::window_param_kind::kernel, {kh, kw, stride_h, stride_w, relu, rotate}});
}
inline int padding(int value, int up, int down, int left, int right, int mode = 0) {
  return rt::window_param_handle({rt::window_param_kind::padding, {value, up, down, left, right, mode}});
}
inline int insert(int value = 0, int dil_h = 1, int dil_w = 1, int ins_h = 0, int ins_w = 0) {
  return rt::window_param_handle({rt::window_param_kind::insert, {value, dil_h, dil_w, ins_h, ins_w, 0}});
}
}  // namespace pool::param
namespace conv::param {
using pool::param::insert;
using pool::param::kernel;
using pool::param::padding;
}  // namespace conv::param
// deconv::param: kernel's rotate defaults to true (the deconvolution reads
// its kernel rotated); the stride is the transposed convolution's.
namespace deconv::param {
inline int kernel(int kh, int kw, int stride_h, int stride_w, bool relu = false, bool rotate = true) {
  return pool::param::kernel(kh, kw, stride_h, stride_w, relu, rotate);
}
using pool::param::insert;
using pool::param::padding;
}  // namespace deconv::param
}  // namespace ppl
