#include "pool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "elementwise.h"
#include "int_arith.h"
#include "movement.h"
#include "family_rules.h"
#include "window.h"

namespace cmodel::bdc {
namespace {

constexpr int limit = 65535;
// The 4-bit register fields behind stride, dilation and padding (tier-3
// spec §5: the vendor checker rejects 16 and more for this command class),
// and the narrower insert field of the depthwise / pooling commands.
constexpr int field_limit = 15;
constexpr int insert_limit = 7;

// IEEE 754-2019 maximum / minimum on encodings, as tpu_bdc_max / min: a NaN
// wins (the first one, quieted), +0 beats -0 for max and -0 beats +0 for
// min, otherwise the larger / smaller value's encoding.
template <typename D, bool is_max>
typename D::Storage extreme_of(typename D::Storage a, typename D::Storage b) {
  using S = typename D::Storage;
  if constexpr (std::is_same_v<D, Fp32>) {
    uint32_t ua, ub;
    std::memcpy(&ua, &a, 4);
    std::memcpy(&ub, &b, 4);
    uint32_t r;
    if (std::isnan(a))
      r = ua | D::Format::quiet_bit;
    else if (std::isnan(b))
      r = ub | D::Format::quiet_bit;
    else if (a != b)
      r = (is_max ? a > b : a < b) ? ua : ub;
    else
      r = is_max ? ua & ub : ua | ub;  // equal: only +-0 differ, in the sign bit
    S out;
    std::memcpy(&out, &r, 4);
    return out;
  } else {
    const float x = D::load(a), y = D::load(b);
    if (std::isnan(x)) return S(a | D::Format::quiet_bit);
    if (std::isnan(y)) return S(b | D::Format::quiet_bit);
    if (x != y) return (is_max ? x > y : x < y) ? a : b;
    return is_max ? S(a & b) : S(a | b);
  }
}

struct Geometry {
  int h, w, oh, ow;
  WindowAxis rows, cols;
};

Geometry geometry(const PoolWindow &w) {
  const dim2 &k = w.kernel, &s = w.stride, &d = w.dilation, &ins = w.insert;
  const padding_t &p = w.padding;
  // Every field of the pooling geometry is POOL-4.
  const Rule rule = Rule::POOL_4;
  require_each_in(rule, "kernel", "h, w", {k.h, k.w}, 1, limit);
  require_each_in(rule, "stride", "h, w", {s.h, s.w}, 1, field_limit);
  require_each_in(rule, "dilation", "h, w", {d.h, d.w}, 1, field_limit);
  require_each_in(rule, "padding", "top, bottom, left, right", {p.top, p.bottom, p.left, p.right}, 0, field_limit);
  require_each_in(rule, "ins", "h, w", {ins.h, ins.w}, 0, insert_limit);
  require_shape_in(rule, "input", w.input_shape, limit);
  const int h = w.input_shape.h, wd = w.input_shape.w;
  return {
      .h = h,
      .w = wd,
      .oh = window_output_extent(rule, 'h', h, ins.h, p.top, p.bottom, k.h, s.h, d.h, limit),
      .ow = window_output_extent(rule, 'w', wd, ins.w, p.left, p.right, k.w, s.w, d.w, limit),
      .rows = {h, ins.h, p.top, k.h, s.h, d.h},
      .cols = {wd, ins.w, p.left, k.w, s.w, d.w},
  };
}

// Calls f(input index) for every tap of output (y, x) that reads an input
// element, in row-major window order, and f(-1) for every padding tap
// (inserted taps are skipped: every caller treats them as absent or zero).
template <typename F>
void for_each_tap(const Geometry &g, int y, int x, F &&f) {
  for (int i = 0; i < g.rows.kernel; ++i) {
    const Position r = g.rows.locate(y, i);
    for (int j = 0; j < g.cols.kernel; ++j) {
      const Position c = g.cols.locate(x, j);
      if (r.place == Place::padding || c.place == Place::padding)
        f(int64_t(-1));
      else if (r.place == Place::input && c.place == Place::input)
        f(int64_t(r.index) * g.w + c.index);
    }
  }
}

// One channel: `in` its h x w plane, `out` its oh x ow plane.
template <typename D, bool is_max>
void extreme_plane(const Geometry &g, const typename D::Storage *in, typename D::Storage *out,
                   typename D::Storage pad) {
  using S = typename D::Storage;
  for (int y = 0; y < g.oh; ++y)
    for (int x = 0; x < g.ow; ++x) {
      bool first = true;
      S acc = pad;
      for_each_tap(g, y, x, [&](int64_t at) {
        const S v = at >= 0 ? in[at] : pad;
        acc = first ? v : extreme_of<D, is_max>(acc, v);
        first = false;
      });
      // A lone NaN is quieted too, as extreme_of does for every later NaN.
      out[int64_t(y) * g.ow + x] = extreme_of<D, is_max>(acc, acc);
    }
}

// ---- max / min fast path ------------------------------------------------------------
// extreme_plane() visits every tap of every window through
// WindowAxis::locate. Without inserted zeros and without NaNs the result is
// order-free: the largest (smallest) value, +0 above -0. On "order keys"
// (the encoding with its sign bit flipped for positive values and every bit
// flipped for negative ones, so unsigned order is float order with
// -0 < +0, subnormals and infinities included) that is a plain unsigned
// max (min), the same for fp32, fp16 and bf16. The window is then
// separable: the extreme over the window's rows for every column (one
// contiguous pass per row, vectorised), then over the window's columns; a
// window reaching into padding takes pad_val as one more value. A NaN read
// sends the whole plane to extreme_plane(), which stays the reference
// (tests/cmodel/bdc/bdc_pool_fast_test.cc compares the two).

bool pool_fast_path_enabled = true;

template <typename U>
constexpr int kTopBit = int(sizeof(U)) * 8 - 1;
template <typename U>
constexpr U kSignBit = U(U(1) << kTopBit<U>);

template <typename U>
[[gnu::always_inline]] inline U order_key(U bits) {
  return U(bits ^ (U(0 - (bits >> kTopBit<U>)) | kSignBit<U>));
}
template <typename U>
[[gnu::always_inline]] inline U from_order_key(U key) {
  return U(key ^ (U((key >> kTopBit<U>) - 1) | kSignBit<U>));
}

template <typename U, bool is_max>
[[gnu::always_inline]] inline U key_extreme(U a, U b) {
  return is_max ? std::max(a, b) : std::min(a, b);
}

// The key no value beats (a NaN's; NaN planes never get here).
template <typename U, bool is_max>
constexpr U kNeutralKey = is_max ? U(0) : U(~U(0));

// Row `row` of the input as keys into acc (first) or folded into it; the
// largest magnitude read goes into `worst` (above the infinity: a NaN).
template <typename U, bool is_max>
[[gnu::always_inline]] inline void fold_row(const U *__restrict row, U *__restrict acc, int w, bool first, U &worst) {
  U most = worst;
  if (first) {
    for (int x = 0; x < w; ++x) most = std::max(most, U(row[x] & ~kSignBit<U>)), acc[x] = order_key(row[x]);
  } else {
    for (int x = 0; x < w; ++x)
      most = std::max(most, U(row[x] & ~kSignBit<U>)), acc[x] = key_extreme<U, is_max>(acc[x], order_key(row[x]));
  }
  worst = most;
}

// The window's rows of input row-major plane `in` folded into acc[0, w) as
// keys; false when no row is inside the input.
template <typename U, bool is_max>
[[gnu::always_inline]] inline bool fold_rows(const Geometry &g, int y, const U *in, U *acc, bool &padded, U &worst) {
  bool any = false;
  padded = false;
  for (int i = 0; i < g.rows.kernel; ++i) {
    const int64_t r = int64_t(y) * g.rows.stride + int64_t(i) * g.rows.dilation - g.rows.pad_lo;
    if (r < 0 || r >= g.h) {
      padded = true;
      continue;
    }
    fold_row<U, is_max>(in + r * g.w, acc, g.w, !any, worst);
    any = true;
  }
  return any;
}

// Output row from the folded rows: columns [lo, hi] have every tap inside.
template <typename U, bool is_max>
[[gnu::always_inline]] inline void fold_columns(const Geometry &g, const U *__restrict acc, U pad_key, bool padded,
                                                U *__restrict out) {
  const WindowAxis &c = g.cols;
  const int span = c.dilation * (c.kernel - 1) + 1;
  const int lo = std::min(g.ow, (c.pad_lo + c.stride - 1) / c.stride);
  const int hi = g.w - span + c.pad_lo < 0 ? -1 : std::min(g.ow - 1, (g.w - span + c.pad_lo) / c.stride);
  const U extra = padded ? pad_key : kNeutralKey<U, is_max>;
  auto edge = [&](int x) {
    U m = extra;
    bool pad = false;
    for (int j = 0; j < c.kernel; ++j) {
      const int64_t col = int64_t(x) * c.stride + int64_t(j) * c.dilation - c.pad_lo;
      if (col < 0 || col >= g.w)
        pad = true;
      else
        m = key_extreme<U, is_max>(m, acc[col]);
    }
    if (pad) m = key_extreme<U, is_max>(m, pad_key);
    out[x] = from_order_key(m);
  };
  for (int x = 0; x < std::min(lo, g.ow); ++x) edge(x);
  if (c.kernel == 2 && c.stride == 2 && c.dilation == 1) {  // the common 2x2 / stride-2 window
    // 64-bit indices: with int ones the compiler cannot prove the pairs
    // affine and leaves the loop scalar.
    const U *a = acc - c.pad_lo;
    for (int64_t x = lo; x <= hi; ++x)
      out[x] = from_order_key(key_extreme<U, is_max>(key_extreme<U, is_max>(a[2 * x], a[2 * x + 1]), extra));
  } else {
    for (int x = lo; x <= hi; ++x) {
      const U *a = acc + int64_t(x) * c.stride - c.pad_lo;
      U m = extra;
      for (int j = 0; j < c.kernel; ++j) m = key_extreme<U, is_max>(m, a[int64_t(j) * c.dilation]);
      out[x] = from_order_key(m);
    }
  }
  for (int x = std::max(lo, hi + 1); x < g.ow; ++x) edge(x);
}

// The common 2x2 window of stride 2 with every tap inside the input: one
// pass over each pair of rows, no folded-row buffer. The same keys and the
// same NaN rule as the separable path below.
inline bool plain_2x2(const WindowAxis &a) { return a.kernel == 2 && a.stride == 2 && a.dilation == 1 && a.pad_lo == 0; }

template <typename U, bool is_max>
[[gnu::always_inline]] inline bool extreme_2x2(const Geometry &g, const U *in, U *out, U inf_bits) {
  U worst = 0;
  for (int64_t y = 0; y < g.oh; ++y) {
    const U *__restrict r0 = in + 2 * y * g.w;
    const U *__restrict r1 = r0 + g.w;
    U *__restrict o = out + y * g.ow;
    // 64-bit indices: with int ones the compiler cannot prove the pairs
    // affine and leaves the loop scalar.
    for (int64_t x = 0; x < g.ow; ++x) {
      const U a = r0[2 * x], b = r0[2 * x + 1], c = r1[2 * x], d = r1[2 * x + 1];
      const U most = std::max(std::max(U(a & ~kSignBit<U>), U(b & ~kSignBit<U>)),
                              std::max(U(c & ~kSignBit<U>), U(d & ~kSignBit<U>)));
      worst = std::max(worst, most);
      const U top = key_extreme<U, is_max>(key_extreme<U, is_max>(order_key(a), order_key(b)),
                                           key_extreme<U, is_max>(order_key(c), order_key(d)));
      o[x] = from_order_key(top);
    }
  }
  return worst <= inf_bits;
}

// One plane; false (out incomplete) when a NaN was read.
template <typename U, bool is_max>
[[gnu::always_inline]] inline bool extreme_plane_keys(const Geometry &g, const U *in, U *out, U pad, U inf_bits,
                                                      U *acc) {
  if (plain_2x2(g.rows) && plain_2x2(g.cols) && 2 * int64_t(g.oh) <= g.h && 2 * int64_t(g.ow) <= g.w)
    return extreme_2x2<U, is_max>(g, in, out, inf_bits);
  const U pad_key = order_key(pad);
  U worst = 0;
  for (int y = 0; y < g.oh; ++y) {
    U *row = out + int64_t(y) * g.ow;
    bool padded;
    if (!fold_rows<U, is_max>(g, y, in, acc, padded, worst)) {
      std::fill(row, row + g.ow, pad);  // every tap is padding
      continue;
    }
    fold_columns<U, is_max>(g, acc, pad_key, padded, row);
  }
  return worst <= inf_bits;
}

template <typename U, bool is_max>
bool extreme_plane_keys_portable(const Geometry &g, const U *in, U *out, U pad, U inf_bits, U *acc) {
  return extreme_plane_keys<U, is_max>(g, in, out, pad, inf_bits, acc);
}

#if defined(__x86_64__) || defined(__i386__)
// extreme_2x2 for 32-bit values, 8 outputs at a time: the compiler leaves
// the pairwise loop scalar for 32-bit lanes. Same keys, same NaN rule.
#define POOL_AVX2 __attribute__((target("avx2"), always_inline)) inline
// order_key: x ^ (sign ? all ones : the sign bit); from_order_key undoes it.
POOL_AVX2 __m256i key8(__m256i v) {
  return _mm256_xor_si256(v, _mm256_or_si256(_mm256_srai_epi32(v, 31), _mm256_set1_epi32(int(0x80000000u))));
}
POOL_AVX2 __m256i unkey8(__m256i k) {
  const __m256i sign = _mm256_set1_epi32(int(0x80000000u));
  return _mm256_xor_si256(k, _mm256_or_si256(_mm256_srai_epi32(_mm256_xor_si256(k, sign), 31), sign));
}
template <bool is_max>
POOL_AVX2 __m256i extreme8(__m256i a, __m256i b) {
  return is_max ? _mm256_max_epu32(a, b) : _mm256_min_epu32(a, b);
}
POOL_AVX2 __m256i magnitude8(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi32(0x7fffffff)); }
POOL_AVX2 __m256 as_ps(__m256i v) { return _mm256_castsi256_ps(v); }
// The larger of two non-NaN floats per lane, +0 above -0: the signed
// maximum of the bits when it has the sign bit clear, else (both negative)
// the unsigned minimum; blendv_ps picks by that sign bit.
POOL_AVX2 __m256i float_max8(__m256i a, __m256i b) {
  const __m256i s = _mm256_max_epi32(a, b);
  return _mm256_castps_si256(_mm256_blendv_ps(as_ps(s), as_ps(_mm256_min_epu32(a, b)), as_ps(s)));
}

// The extreme of each adjacent pair of 16 columns (v0 then v1, each already
// folded over the window's two rows), in the shuffled lane order that one
// _mm256_permute4x64_epi64(.., _MM_SHUFFLE(3, 1, 2, 0)) puts right.
// of_floats: the lanes hold fp32 bits, combined by float_max8 (is_max
// only); otherwise keys, combined by extreme8.
template <bool is_max, bool of_floats>
POOL_AVX2 __m256i pairs_of(__m256i v0, __m256i v1) {
  const __m256 f0 = _mm256_castsi256_ps(v0), f1 = _mm256_castsi256_ps(v1);
  const __m256i even = _mm256_castps_si256(_mm256_shuffle_ps(f0, f1, _MM_SHUFFLE(2, 0, 2, 0)));
  const __m256i odd = _mm256_castps_si256(_mm256_shuffle_ps(f0, f1, _MM_SHUFFLE(3, 1, 3, 1)));
  if constexpr (of_floats) return float_max8(even, odd);
  return extreme8<is_max>(even, odd);
}

template <bool is_max>
__attribute__((target("avx2"))) bool extreme_2x2_avx2(const Geometry &g, const uint32_t *in, uint32_t *out,
                                                      uint32_t inf_bits) {
  __m256i worst = _mm256_setzero_si256();
  __m256 nan_seen = _mm256_setzero_ps();  // the max path's NaN watch
  uint32_t tail_worst = 0;
  for (int64_t y = 0; y < g.oh; ++y) {
    const uint32_t *r0 = in + 2 * y * g.w, *r1 = r0 + g.w;
    uint32_t *o = out + y * g.ow;
    int64_t x = 0;
    for (; x + 8 <= g.ow; x += 8) {
      const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(r0 + 2 * x));
      const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(r0 + 2 * x + 8));
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(r1 + 2 * x));
      const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(r1 + 2 * x + 8));
      if constexpr (is_max) {
        // Without keys: the maximum of values with the sign bit clear is at
        // the largest bits read as signed integers (+0 above -0, every
        // negative below); of negatives only, at the smallest bits read as
        // unsigned ones. So float_max8 gives the keys' result for two
        // values, and a window is two rows, then two columns. NaNs: an
        // unordered compare of the two rows sees any.
        nan_seen = _mm256_or_ps(nan_seen, _mm256_or_ps(_mm256_cmp_ps(as_ps(a0), as_ps(b0), _CMP_UNORD_Q),
                                                       _mm256_cmp_ps(as_ps(a1), as_ps(b1), _CMP_UNORD_Q)));
        const __m256i pairs = pairs_of<true, true>(float_max8(a0, b0), float_max8(a1, b1));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(o + x), _mm256_permute4x64_epi64(pairs, _MM_SHUFFLE(3, 1, 2, 0)));
        continue;
      }
      worst = _mm256_max_epu32(worst, _mm256_max_epu32(_mm256_max_epu32(magnitude8(a0), magnitude8(a1)),
                                                        _mm256_max_epu32(magnitude8(b0), magnitude8(b1))));
      // The two rows folded as keys, then the pairs of columns.
      const __m256i v0 = extreme8<is_max>(key8(a0), key8(b0)), v1 = extreme8<is_max>(key8(a1), key8(b1));
      // Unoptimised builds define the intrinsic as a macro: no template comma in its arguments.
      const __m256i folded = pairs_of<is_max, false>(v0, v1);
      const __m256i pairs = _mm256_permute4x64_epi64(folded, _MM_SHUFFLE(3, 1, 2, 0));
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(o + x), unkey8(pairs));
    }
    for (; x < g.ow; ++x) {
      const uint32_t a = r0[2 * x], b = r0[2 * x + 1], c = r1[2 * x], d = r1[2 * x + 1];
      tail_worst = std::max({tail_worst, a & 0x7fffffffu, b & 0x7fffffffu, c & 0x7fffffffu, d & 0x7fffffffu});
      o[x] = from_order_key(key_extreme<uint32_t, is_max>(
          key_extreme<uint32_t, is_max>(order_key(a), order_key(b)), key_extreme<uint32_t, is_max>(order_key(c), order_key(d))));
    }
  }
  if (_mm256_movemask_ps(nan_seen) != 0) return false;
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), worst);
  for (int i = 0; i < 8; ++i) tail_worst = std::max(tail_worst, lanes[i]);
  return tail_worst <= inf_bits;
}
#undef POOL_AVX2

template <typename U, bool is_max>
__attribute__((target("avx2"))) bool extreme_plane_keys_avx2(const Geometry &g, const U *in, U *out, U pad,
                                                              U inf_bits, U *acc) {
  if constexpr (sizeof(U) == 4)
    if (plain_2x2(g.rows) && plain_2x2(g.cols) && 2 * int64_t(g.oh) <= g.h && 2 * int64_t(g.ow) <= g.w)
      return extreme_2x2_avx2<is_max>(g, in, out, inf_bits);
  return extreme_plane_keys<U, is_max>(g, in, out, pad, inf_bits, acc);
}
#endif

// The fast path for one plane where it applies; false when the caller must
// use extreme_plane().
template <typename D, bool is_max>
bool extreme_plane_fast(const Geometry &g, const uint8_t *in_bytes, uint8_t *out_bytes,
                        typename D::Storage pad_bits, std::vector<uint32_t> &scratch) {
  using U = typename D::Bits;
  constexpr U inf_bits = U(D::Format::inf_bits);
  U pad;
  std::memcpy(&pad, &pad_bits, sizeof pad);
  if (U(pad & ~kSignBit<U>) > inf_bits) return false;  // a NaN pad_val: the reference's rules
  scratch.resize((size_t(g.w) * sizeof(U) + 3) / 4);
  U *acc = reinterpret_cast<U *>(scratch.data());
  const U *in = reinterpret_cast<const U *>(in_bytes);
  U *out = reinterpret_cast<U *>(out_bytes);
#if defined(__x86_64__) || defined(__i386__)
  if (numeric::bulk_convert_isa() == numeric::BulkIsa::f16c_avx2)
    return extreme_plane_keys_avx2<U, is_max>(g, in, out, pad, inf_bits, acc);
#endif
  return extreme_plane_keys_portable<U, is_max>(g, in, out, pad, inf_bits, acc);
}

// The two roundings of each step in two statements (no contraction into a
// fused multiply-add; see fp_arith.cc).
inline float scaled(float v, float scale) {
  const float p = v * scale;
  return p;
}

template <typename In, typename Out>
void avg_plane(const Geometry &g, const typename In::Storage *in, typename Out::Storage *out, float scale) {
  for (int y = 0; y < g.oh; ++y)
    for (int x = 0; x < g.ow; ++x) {
      bool first = true;
      float acc = 0.0f;
      for_each_tap(g, y, x, [&](int64_t at) {
        if (at < 0) return;  // padding adds nothing
        const float p = scaled(In::load(in[at]), scale);
        acc = first ? p : acc + p;
        first = false;
      });
      out[int64_t(y) * g.ow + x] = Out::store(acc);
    }
}

// The output tensor of a pooling command, on the input's NPU, and the
// input as read before anything is written (the output may overlap it).
struct Operands {
  TensorRef in, out, from;
  std::vector<uint8_t> storage;
};

// The vendor rules of the operands' placement and alignment: max / min
// (POOL-1, POOL-2), float average (POOL-6), integer average (POOL-10).
struct PlaceRules {
  Rule npu, align;
};

PlaceRules place_rules(Pool op, bool is_float) {
  if (op != Pool::avg) return {Rule::POOL_1, Rule::POOL_2};
  return is_float ? PlaceRules{Rule::POOL_6, Rule::POOL_6} : PlaceRules{Rule::POOL_10, Rule::POOL_10};
}

void place(Context &ctx, Operands &o, local_addr_t output_addr, local_addr_t input_addr, const PoolWindow &w,
           const Geometry &g, data_type_t input_dtype, data_type_t output_dtype, PlaceRules rules) {
  const dim4 &s = w.input_shape;
  require_aligned_start(ctx, rules.align, "input", input_addr);
  require_aligned_start(ctx, rules.align, "output", output_addr);
  o.in = operand(ctx, "input", input_addr, s, nullptr, input_dtype);
  o.out = operand(ctx, "output", output_addr, {s.n, s.c, g.oh, g.ow}, nullptr, output_dtype);
  require_same_start_npu(rules.npu, o.out, "output", o.in, "input");
  o.from = stable_source(o.in, o.out, o.storage, false);
}

}  // namespace

bool set_fp_pool_fast_path(bool enabled) {
  const bool previous = pool_fast_path_enabled;
  pool_fast_path_enabled = enabled;
  return previous;
}

void fp_pool2d(Context &ctx, const char *api, local_addr_t output_addr, local_addr_t input_addr, const PoolWindow &w,
               const FpPool &p) {
  const Pool op = p.op;
  const data_type_t input_dtype = p.input_dtype, output_dtype = p.output_dtype;
  const scalar_t value = p.value;
  under_rule(op == Pool::avg ? Rule::POOL_7 : Rule::POOL_3, [&] {
    require_float(p.input_dtype_name, input_dtype);
    if (op == Pool::avg) require_dtype(p.output_dtype_name, output_dtype, {input_dtype, DT_FP32});
  });
  if (op != Pool::avg) require_dtype(p.output_dtype_name, output_dtype, {input_dtype});
  const Geometry g = geometry(w);
  Operands o;
  place(ctx, o, output_addr, input_addr, w, g, input_dtype, output_dtype, place_rules(op, true));
  with_float_dtype(input_dtype, [&]<typename In>(In) {
    with_float_dtype(output_dtype, [&]<typename Out>(Out) {
      using SI = typename In::Storage;
      using SO = typename Out::Storage;
      const float scale = scalar_value<In>(value);
      std::vector<SI> plane(size_t(g.h) * g.w);
      std::vector<SO> result(size_t(g.oh) * g.ow);
      std::vector<uint32_t> scratch;
      const bool fast = op != Pool::avg && w.insert.h == 0 && w.insert.w == 0 && pool_fast_path_enabled;
      for (int n = 0; n < w.input_shape.n; ++n)
        for (int c = 0; c < w.input_shape.c; ++c) {
          if constexpr (std::is_same_v<In, Out>) {
            if (fast) {
              // Aligned planes (and the stable copy) are contiguous h x w runs.
              const uint8_t *from = o.from.channel(n, c);
              uint8_t *to = o.out.channel(n, c);
              const SI pad = scalar_storage<In>(value);
              if (op == Pool::max ? extreme_plane_fast<In, true>(g, from, to, pad, scratch)
                                  : extreme_plane_fast<In, false>(g, from, to, pad, scratch))
                continue;
            }
          }
          // Aligned planes (and the stable copy) are contiguous h x w runs.
          std::memcpy(plane.data(), o.from.channel(n, c), plane.size() * sizeof(SI));
          if constexpr (std::is_same_v<In, Out>) {
            if (op == Pool::max) extreme_plane<In, true>(g, plane.data(), result.data(), scalar_storage<In>(value));
            if (op == Pool::min) extreme_plane<In, false>(g, plane.data(), result.data(), scalar_storage<In>(value));
          }
          if (op == Pool::avg) avg_plane<In, Out>(g, plane.data(), result.data(), scale);
          std::memcpy(o.out.channel(n, c), result.data(), result.size() * sizeof(SO));
        }
    });
  });
  book(ctx, api, BdcCost::pool, o.out, output_dtype, {&o.out}, {&o.in}, double(w.kernel.h) * w.kernel.w);
}

namespace {

data_type_t int_dtype(int bits, bool is_signed) {
  switch (bits) {
    case 8: return is_signed ? DT_INT8 : DT_UINT8;
    case 16: return is_signed ? DT_INT16 : DT_UINT16;
    default: return is_signed ? DT_INT32 : DT_UINT32;
  }
}

// The low byte of pad_val in an 8-bit dtype.
int64_t low_byte(scalar_t s, data_type_t dtype) {
  const uint8_t b = uint8_t(s.u32 & 0xff);
  return dtype_is_signed(dtype) ? int64_t(int8_t(b)) : int64_t(b);
}

void int_plane(const Geometry &g, const IntPool &p, data_type_t out_dtype, const int64_t *in, int64_t *out) {
  const int64_t pad = low_byte(p.pad_val, p.input_dtype);
  const int64_t lo = int_min_of(out_dtype), hi = int_max_of(out_dtype);
  for (int y = 0; y < g.oh; ++y)
    for (int x = 0; x < g.ow; ++x) {
      int64_t acc = 0;
      bool first = true;
      for_each_tap(g, y, x, [&](int64_t at) {
        if (p.op == Pool::avg) {
          if (at >= 0) acc += in[at] * p.scale;  // padding and inserted positions are 0
          return;
        }
        const int64_t v = at >= 0 ? in[at] : pad;
        acc = first ? v : p.op == Pool::max ? std::max(acc, v) : std::min(acc, v);
        first = false;
      });
      if (p.op == Pool::avg) acc = std::clamp(shift_right_rounded(acc, std::min(p.rshift, 63), RM_HALF_UP), lo, hi);
      out[int64_t(y) * g.ow + x] = acc;
    }
}

}  // namespace

void int_pool2d(Context &ctx, const char *api, local_addr_t output_addr, local_addr_t input_addr,
                const PoolWindow &w, const IntPool &p) {
  const bool avg = p.op == Pool::avg;
  under_rule(avg ? Rule::POOL_11 : Rule::POOL_3,
             [&] { require_dtype(avg ? "input_dtype" : "dtype", p.input_dtype, {DT_INT8, DT_UINT8}); });
  data_type_t out_dtype = p.input_dtype;
  if (avg) {
    under_rule(Rule::POOL_11, [&] { require_int_dtype("output_dtype", p.output_dtype); });
    if (p.rshift > 128) fail(ErrorKind::illegal_command, "rshift = {}: it must be in [0, 128]", p.rshift);
    out_dtype = int_dtype(dtype_bits(p.output_dtype), dtype_is_signed(p.input_dtype));
  }
  const Geometry g = geometry(w);
  Operands o;
  place(ctx, o, output_addr, input_addr, w, g, p.input_dtype, out_dtype, place_rules(p.op, false));
  std::vector<int64_t> plane(size_t(g.h) * g.w), result(size_t(g.oh) * g.ow);
  for (int n = 0; n < w.input_shape.n; ++n)
    for (int c = 0; c < w.input_shape.c; ++c) {
      load_ints(p.input_dtype, o.from.channel(n, c), 1, int64_t(plane.size()), plane.data());
      int_plane(g, p, out_dtype, plane.data(), result.data());
      store_ints(out_dtype, o.out.channel(n, c), 1, int64_t(result.size()), result.data());
    }
  book(ctx, api, BdcCost::pool, o.out, out_dtype, {&o.out}, {&o.in}, double(w.kernel.h) * w.kernel.w);
}

}  // namespace cmodel::bdc
