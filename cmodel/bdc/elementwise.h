// elementwise.h: the loops of element-wise BDC commands.
//
// for_each_run() walks dst and its sources together, handing each run of
// elements to a callback: one run per channel when every operand's h x w
// plane is contiguous, one per row otherwise. map() applies a per-element
// function over such runs with typed loads and stores; the contiguous case
// is a plain loop the compiler vectorises.
//
// Operands are loaded and stored as their dtype types (numeric/dtypes.h).
// Contiguous runs touching fp16 / bf16 take the 8-lane path of half_lanes.h
// where the host has it.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "bdc.h"
#include "cmodel/numeric/bulk_convert.h"
#include "cmodel/numeric/dtypes.h"
#include "cmodel/numeric/float_convert.h"
#include "half_lanes.h"

namespace cmodel::bdc {

// The dtype types and their dispatchers, which every family here uses.
using numeric::Bf16;
using numeric::Fp16;
using numeric::Fp32;
using numeric::RawBits;
using numeric::scalar_bits;
using numeric::scalar_storage;
using numeric::scalar_value;
using numeric::with_dtype;
using numeric::with_float_dtype;
using numeric::with_int_dtype;
using numeric::with_raw_bits;

struct Run {
  uint8_t *p;
  int64_t step;  // elements
};

// Channels are found with ChannelCursor (tensor.h): for short rows the
// per-channel address arithmetic is a large part of a command's cost.
template <typename Fn, typename... Src>
void for_each_run(const TensorRef &dst, Fn &&fn, const Src &...src) {
  const dim4 &s = dst.shape;
  const bool planes = dst.plane_contiguous() && (src.plane_contiguous() && ...);
  const int64_t plane = int64_t(s.h) * s.w;
  for (int n = 0; n < s.n; ++n) {
    ChannelCursor d(dst, n);
    std::tuple cursors{ChannelCursor(src, n)...};
    std::apply(
        [&](auto &...sc) {
          if (planes) {  // one run per channel
            for (int c = 0; c < s.c; ++c, d.next(), (sc.next(), ...)) fn(plane, Run{d.get(), 1}, Run{sc.get(), 1}...);
            return;
          }
          for (int c = 0; c < s.c; ++c, d.next(), (sc.next(), ...))
            for (int h = 0; h < s.h; ++h)
              fn(int64_t(s.w), Run{d.get() + int64_t(dst.esize) * h * dst.stride.h, dst.stride.w},
                 Run{sc.get() + int64_t(src.esize) * h * src.stride.h, src.stride.w}...);
        },
        cursors);
  }
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

// y rounded to nearest-even into float dtype D, once: fp32 directly,
// fp16 / bf16 through fp32 rounded to odd.
template <typename D>
typename D::Storage store_rounded_once(double y) {
  if constexpr (std::is_same_v<D, Fp32>)
    return float(y);
  else
    return D::store(round_to_odd(y));
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

// ---- fp16 / bf16 in blocks ---------------------------------------------------------
// Converting fp16 / bf16 one element at a time costs far more than the
// arithmetic; the block path of map() converts a block of each operand to
// fp32 at once (numeric/bulk_convert.h, vectorised), applies the op over the
// fp32 block and converts the results back at once. Each element still goes
// through exactly the same load, op and store as in the per-element loop,
// so the bits are the same.

template <typename D>
constexpr bool is_half_dtype = std::is_same_v<D, Fp16> || std::is_same_v<D, Bf16>;

// Elements per block: the scratch arrays stay in L1.
inline constexpr int64_t kBlock = 512;

// The bytes a run of `count` elements of `size` bytes covers, as [lo, hi).
inline std::pair<const uint8_t *, const uint8_t *> run_bytes(const Run &r, int64_t count, size_t size) {
  const int64_t span = (count - 1) * r.step * int64_t(size);
  const uint8_t *first = r.p, *last = r.p + span;
  return {std::min(first, last), std::max(first, last) + size};
}

// Whether the block path may handle this run: it reads a whole block of
// every source before writing that block of dst, which is what the
// per-element loop does only when no source shares bytes with dst, or
// one is dst itself element for element (an in-place command).
template <typename D, typename... S>
bool blocks_preserve_order(int64_t count, const Run &d, const S &...s) {
  const auto dst = run_bytes(d, count, sizeof(D));
  auto independent = [&](const Run &src, size_t size) {
    if (src.p == d.p && src.step == d.step && size == sizeof(D)) return true;
    const auto bytes = run_bytes(src, count, size);
    return bytes.second <= dst.first || dst.second <= bytes.first;
  };
  return (independent(s.run, sizeof(typename S::Storage)) && ...);
}

// Values of a run, a block at a time.
template <typename D>
void load_block(const Run &r, int64_t first, int64_t count, typename D::Value *out) {
  const auto *p = reinterpret_cast<const typename D::Storage *>(r.p) + first * r.step;
  if constexpr (std::is_same_v<D, Fp16>)
    numeric::fp16_to_fp32_n(p, r.step, out, count);
  else if constexpr (std::is_same_v<D, Bf16>)
    numeric::bf16_to_fp32_n(p, r.step, out, count);
  else
    for (int64_t i = 0; i < count; ++i) out[i] = D::load(p[i * r.step]);
}

template <typename D, typename V>
void store_block(const Run &r, int64_t first, int64_t count, const V *in) {
  auto *p = reinterpret_cast<typename D::Storage *>(r.p) + first * r.step;
  if constexpr (std::is_same_v<D, Fp16> && std::is_same_v<V, float>)
    numeric::fp32_to_fp16_n(in, p, r.step, count, RM_HALF_TO_EVEN);
  else if constexpr (std::is_same_v<D, Bf16> && std::is_same_v<V, float>)
    numeric::fp32_to_bf16_n(in, p, r.step, count, RM_HALF_TO_EVEN);
  else
    for (int64_t i = 0; i < count; ++i) p[i * r.step] = D::store(in[i]);
}

// Scratch for one block; its constructor leaves the elements uninitialised
// (zeroing them would cost more than a short row's whole work).
template <typename V>
struct Block {
  Block() {}
  V data[kBlock];
};

// A source run with its dtype, for the block path.
template <typename D>
struct TypedRun {
  using Storage = typename D::Storage;
  Run run;
};

template <typename DstType, typename... SrcType, typename Op>
void map_blocks(int64_t count, const Run &d, Op &op, const TypedRun<SrcType> &...s) {
  using R = std::invoke_result_t<Op &, typename SrcType::Value...>;
  std::tuple<Block<typename SrcType::Value>...> in;
  Block<R> out;
  for (int64_t first = 0; first < count; first += kBlock) {
    const int64_t n = std::min(kBlock, count - first);
    std::apply([&](auto &...block) { (load_block<SrcType>(s.run, first, n, block.data), ...); }, in);
    std::apply(
        [&](const auto &...block) {
          for (int64_t i = 0; i < n; ++i) out.data[i] = op(block.data[i]...);
        },
        in);
    store_block<DstType>(d, first, n, out.data);
  }
}

// Whether map() may hand a contiguous run to map_half_lanes: every operand
// of a float dtype and the op a function of fp32 values giving fp32.
template <typename Op, typename DstType, typename... SrcType>
constexpr bool lane_path_fits = [] {
  if constexpr (!TPU_HALF_LANES_X86 || !DstType::is_float || !(SrcType::is_float && ...))
    return false;
  else
    return std::is_same_v<std::invoke_result_t<Op &, typename SrcType::Value...>, float>;
}();

#if TPU_HALF_LANES_X86
// Whether every operand's h x w planes are contiguous and no source shares
// a byte with dst, unless it is dst itself (same bytes, same layout): then
// map_planes_half_lanes may read 8 lanes of any source before writing.
template <typename... Src>
bool planes_apart(const TensorRef &dst, const Src &...src) {
  // overlapping() knows local footprints only; a local tensor and a host or
  // system one never share bytes, and two of the latter are left to the
  // per-run check.
  auto disjoint = [&](const TensorRef &t) {
    return t.is_local() && dst.is_local() ? !overlapping(t, dst) : t.space != dst.space;
  };
  auto apart = [&](const TensorRef &t) { return t.plane_contiguous() && (same_layout(t, dst) || disjoint(t)); };
  return dst.plane_contiguous() && (apart(src) && ...);
}

// The lane path over whole planes, many channels per call (short rows
// would otherwise pay the call's set-up once per channel).
template <typename DstType, typename... SrcType, typename Op, typename... Src>
void map_planes_half_lanes(const TensorRef &dst, Op &op, const Src &...src) {
  using D = typename DstType::Storage;
  constexpr int batch = 64;
  const int64_t plane = int64_t(dst.shape.h) * dst.shape.w;
  D *d[batch];
  std::tuple<std::array<const typename SrcType::Storage *, batch>...> s;
  for (int n = 0; n < dst.shape.n; ++n) {
    ChannelCursor dc(dst, n);
    std::tuple cursors{ChannelCursor(src, n)...};
    for (int c0 = 0; c0 < dst.shape.c; c0 += batch) {
      const int runs = std::min(batch, dst.shape.c - c0);
      for (int r = 0; r < runs; ++r, dc.next()) {
        d[r] = reinterpret_cast<D *>(dc.get());
        [&]<size_t... I>(std::index_sequence<I...>) {
          ((std::get<I>(s)[size_t(r)] = reinterpret_cast<const typename SrcType::Storage *>(std::get<I>(cursors).get()),
            std::get<I>(cursors).next()),
           ...);
        }(std::index_sequence_for<SrcType...>{});
      }
      std::apply([&](const auto &...ptrs) { map_half_lanes_runs<DstType, SrcType...>(plane, runs, d, op, ptrs.data()...); },
                 s);
    }
  }
}

#endif

// ---- typed maps -----------------------------------------------------------------
// dst = op(src...) element by element; each operand has its own dtype type.
// Commands touching fp16 / bf16 take the block path (above) whenever it
// keeps the per-element order's result.
template <typename DstType, typename... SrcType, typename Op, typename... Src>
void map(const TensorRef &dst, Op op, const Src &...src) {
  using D = typename DstType::Storage;
  constexpr bool any_half = is_half_dtype<DstType> || (is_half_dtype<SrcType> || ...);
#if TPU_HALF_LANES_X86
  if constexpr (any_half && lane_path_fits<Op, DstType, SrcType...>) {
    // A few channels take the per-run path below: the overlap test here
    // costs more than it saves for them.
    if (int64_t(dst.shape.n) * dst.shape.c >= 4 && half_lanes_available() && planes_apart(dst, src...))
      return map_planes_half_lanes<DstType, SrcType...>(dst, op, src...);
  }
#endif
  for_each_run(
      dst,
      [&](int64_t count, Run d, auto... s) {
        if constexpr (any_half) {
          if (blocks_preserve_order<D>(count, d, TypedRun<SrcType>{s}...)) {
            if constexpr (lane_path_fits<Op, DstType, SrcType...>) {
              if (d.step == 1 && ((s.step == 1) && ...) && half_lanes_available()) {
                map_half_lanes<DstType, SrcType...>(
                    count, reinterpret_cast<D *>(d.p), op,
                    reinterpret_cast<const typename SrcType::Storage *>(s.p)...);
                return;
              }
            }
            map_blocks<DstType>(count, d, op, TypedRun<SrcType>{s}...);
            return;
          }
        }
        auto *dp = reinterpret_cast<D *>(d.p);
        if (d.step == 1 && ((s.step == 1) && ...)) {
          for (int64_t i = 0; i < count; ++i)
            dp[i] = DstType::store(op(SrcType::load(reinterpret_cast<const typename SrcType::Storage *>(s.p)[i])...));
        } else {
          for (int64_t i = 0; i < count; ++i)
            dp[i * d.step] = DstType::store(
                op(SrcType::load(reinterpret_cast<const typename SrcType::Storage *>(s.p)[i * s.step])...));
        }
      },
      src...);
}

}  // namespace cmodel::bdc
