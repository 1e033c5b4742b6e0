#include "pool.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "elementwise.h"
#include "movement.h"
#include "window.h"

namespace cmodel::bdc {
namespace {

constexpr int limit = 65535;
// The 4-bit register fields behind stride, dilation and padding (tier-3
// spec §5: the vendor checker rejects 16 and more for this command class).
constexpr int field_limit = 15;

// The quiet bit of fp16 / bf16 NaNs.
template <typename Codec>
constexpr uint16_t quiet_bit16() {
  return std::is_same_v<Codec, Fp16Codec> ? 0x0200 : 0x0040;
}

// A 16-bit float encoding as an unsigned key in the order of its values:
// positives above negatives, negatives' magnitudes reversed.
constexpr uint16_t order_key(uint16_t v) { return (v & 0x8000) ? uint16_t(~v) : uint16_t(v | 0x8000); }

// IEEE 754-2019 maximum on encodings, as tpu_bdc_max: a NaN wins (the first
// one, quieted), +0 beats -0, otherwise the larger value's encoding.
template <typename Codec>
typename Codec::Storage max_of(typename Codec::Storage a, typename Codec::Storage b) {
  using S = typename Codec::Storage;
  if constexpr (std::is_same_v<Codec, Fp32Codec>) {
    uint32_t ua, ub;
    std::memcpy(&ua, &a, 4);
    std::memcpy(&ub, &b, 4);
    uint32_t r;
    if (std::isnan(a))
      r = ua | 0x00400000u;
    else if (std::isnan(b))
      r = ub | 0x00400000u;
    else if (a != b)
      r = a > b ? ua : ub;
    else
      r = ua & ub;
    S out;
    std::memcpy(&out, &r, 4);
    return out;
  } else {
    // The same rule on the 16-bit encodings, without converting them: a
    // NaN's magnitude bits exceed the infinity's; other values order as
    // their sign-magnitude keys (below), where -0 < +0 makes max(-0, +0)
    // = +0 = (-0 & +0), and equal values otherwise have equal encodings.
    constexpr uint16_t inf = std::is_same_v<Codec, Fp16Codec> ? 0x7c00 : 0x7f80;
    if ((a & 0x7fff) > inf) return S(a | quiet_bit16<Codec>());
    if ((b & 0x7fff) > inf) return S(b | quiet_bit16<Codec>());
    return order_key(a) >= order_key(b) ? a : b;
  }
}

struct Geometry {
  int h, w, oh, ow;
  WindowAxis rows, cols;
};

// The input element tap t of output o reads along one axis, or -1 for
// padding: WindowAxis::locate() without its divisions, which pooling (no
// inserted zeros) does not need and which cost more than the max itself.
inline int tap_index(const WindowAxis &axis, int o, int t) {
  const int64_t u = int64_t(o) * axis.stride + int64_t(t) * axis.dilation - axis.pad_lo;
  return u >= 0 && u < axis.in ? int(u) : -1;
}

// One channel: `in` its h x w plane, `out` its oh x ow plane.
template <typename Codec>
void max_plane(const Geometry &g, const typename Codec::Storage *in,
               typename Codec::Storage *out, typename Codec::Storage pad) {
  using S = typename Codec::Storage;
  const int kh = g.rows.kernel, kw = g.cols.kernel;
  for (int y = 0; y < g.oh; ++y)
    for (int x = 0; x < g.ow; ++x) {
      bool first = true;
      S acc = pad;
      for (int i = 0; i < kh; ++i) {
        const int r = tap_index(g.rows, y, i);
        for (int j = 0; j < kw; ++j) {
          const int col = tap_index(g.cols, x, j);
          const S v = r >= 0 && col >= 0 ? in[int64_t(r) * g.w + col] : pad;
          acc = first ? v : max_of<Codec>(acc, v);
          first = false;
        }
      }
      // A lone NaN is quieted too, as max_of does for every later NaN.
      out[int64_t(y) * g.ow + x] = max_of<Codec>(acc, acc);
    }
}

// The two roundings of each step in two statements (no contraction into a
// fused multiply-add; see fp_arith.cc).
inline float scaled(float v, float scale) {
  const float p = v * scale;
  return p;
}

template <typename Codec>
void avg_plane(const Geometry &g, const typename Codec::Storage *in, typename Codec::Storage *out,
               float scale) {
  const int kh = g.rows.kernel, kw = g.cols.kernel;
  for (int y = 0; y < g.oh; ++y)
    for (int x = 0; x < g.ow; ++x) {
      bool first = true;
      float acc = 0.0f;
      for (int i = 0; i < kh; ++i) {
        const int r = tap_index(g.rows, y, i);
        if (r < 0) continue;
        for (int j = 0; j < kw; ++j) {
          const int col = tap_index(g.cols, x, j);
          if (col < 0) continue;
          const float p = scaled(Codec::load(in[int64_t(r) * g.w + col]), scale);
          acc = first ? p : acc + p;
          first = false;
        }
      }
      out[int64_t(y) * g.ow + x] = Codec::store(acc);
    }
}

}  // namespace

void fp_pool2d(Context &ctx, const char *api, Pool op, local_addr_t output_addr, local_addr_t input_addr,
               const dim4 &input_shape, const dim2 &kernel, const padding_t &padding, const dim2 &stride,
               const dim2 &dilation, data_type_t dtype, scalar_t value) {
  require_float("dtype", dtype);
  require_each_in("kernel", "h, w", {kernel.h, kernel.w}, 1, limit);
  require_each_in("stride", "h, w", {stride.h, stride.w}, 1, field_limit);
  require_each_in("dilation", "h, w", {dilation.h, dilation.w}, 1, field_limit);
  require_each_in("padding", "top, bottom, left, right", {padding.top, padding.bottom, padding.left, padding.right},
                  0, field_limit);
  check_shape("input", input_shape, limit);
  const Geometry g{
      .h = input_shape.h,
      .w = input_shape.w,
      .oh = window_output_extent('h', input_shape.h, 0, padding.top, padding.bottom, kernel.h, stride.h, dilation.h,
                                 limit),
      .ow = window_output_extent('w', input_shape.w, 0, padding.left, padding.right, kernel.w, stride.w, dilation.w,
                                 limit),
      .rows = {input_shape.h, 0, padding.top, kernel.h, stride.h, dilation.h},
      .cols = {input_shape.w, 0, padding.left, kernel.w, stride.w, dilation.w},
  };
  const TensorRef in = operand(ctx, "input", input_addr, input_shape, nullptr, dtype);
  const TensorRef out = operand(ctx, "output", output_addr, {input_shape.n, input_shape.c, g.oh, g.ow}, nullptr, dtype);
  require_same_npu(out, "output", in, "input");
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(in, out, storage, false);
  with_float_codec(dtype, [&]<typename Codec>(Codec) {
    using S = typename Codec::Storage;
    const S pad = [&] {
      S raw;
      std::memcpy(&raw, &value, sizeof raw);
      return raw;
    }();
    const float scale = scalar_value<Codec>(value);
    std::vector<S> plane(size_t(g.h) * g.w), result(size_t(g.oh) * g.ow);
    for (int n = 0; n < input_shape.n; ++n)
      for (int c = 0; c < input_shape.c; ++c) {
        // Aligned planes (and the stable copy) are contiguous h x w runs.
        std::memcpy(plane.data(), from.channel(n, c), plane.size() * sizeof(S));
        if (op == Pool::max)
          max_plane<Codec>(g, plane.data(), result.data(), pad);
        else
          avg_plane<Codec>(g, plane.data(), result.data(), scale);
        std::memcpy(out.channel(n, c), result.data(), result.size() * sizeof(S));
      }
  });
  book(ctx, api, BdcCost::pool, out, dtype, {&out}, {&in}, double(kernel.h) * kernel.w);
}

}  // namespace cmodel::bdc
