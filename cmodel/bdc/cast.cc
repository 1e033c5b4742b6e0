#include "cast.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>
#include <vector>

#include "elementwise.h"
#include "movement.h"

namespace cmodel::bdc {
namespace {

constexpr std::initializer_list<data_type_t> cast_dtypes = {DT_INT8,  DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                                                           DT_UINT32, DT_FP16,  DT_BFP16, DT_FP32};

// One element, on the encodings: moving a float through a register must
// not be able to touch a NaN.
template <typename D, typename S>
inline typename D::Bits convert(typename S::Bits x, rounding_mode_t mode) {
  using DB = typename D::Bits;
  if constexpr (std::is_same_v<D, S>) {
    return x;
  } else if constexpr (S::is_float && D::is_float) {
    return D::store_bits(S::load_bits(x), mode);  // widening to fp32 is exact: one rounding
  } else if constexpr (S::is_float) {
    return numeric::fp_to_int<DB>(double(S::load_bits(x)), mode);
  } else if constexpr (D::code == DT_FP32) {
    return std::bit_cast<uint32_t>(numeric::int_to_fp32(int64_t(x), mode));
  } else if constexpr (D::code == DT_FP16) {
    return numeric::int_to_fp16(int64_t(x), mode);
  } else if constexpr (D::code == DT_BFP16) {
    return numeric::int_to_bf16(int64_t(x), mode);
  } else {
    return numeric::saturate<DB>(int64_t(x));
  }
}

// ---- float -> float in blocks ------------------------------------------------------
// Between fp32, fp16 and bf16 a cast is convert<D, S>'s two steps, widening
// to fp32 (exact) and narrowing once with the mode; done a block at a time
// with the vectorised conversions of numeric/bulk_convert.h, the same bits
// come out many times faster. Same-dtype casts keep their bit copy (a
// round trip through fp32 would quiet a signalling NaN).

bool casts_in_blocks(data_type_t dst, data_type_t src) {
  return dst != src && dtype_is_float(dst) && dtype_is_float(src);
}

void widen_block(const Run &r, int64_t first, int64_t n, data_type_t dtype, float *out) {
  if (dtype == DT_FP32) {
    const auto *p = reinterpret_cast<const uint32_t *>(r.p) + first * r.step;
    for (int64_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(p[i * r.step]);
    return;
  }
  const auto *p = reinterpret_cast<const uint16_t *>(r.p) + first * r.step;
  if (dtype == DT_FP16)
    numeric::fp16_to_fp32_n(p, r.step, out, n);
  else
    numeric::bf16_to_fp32_n(p, r.step, out, n);
}

void narrow_block(const float *in, const Run &r, int64_t first, int64_t n, data_type_t dtype, rounding_mode_t mode) {
  if (dtype == DT_FP32) {
    auto *p = reinterpret_cast<uint32_t *>(r.p) + first * r.step;
    for (int64_t i = 0; i < n; ++i) p[i * r.step] = std::bit_cast<uint32_t>(in[i]);
    return;
  }
  auto *p = reinterpret_cast<uint16_t *>(r.p) + first * r.step;
  if (dtype == DT_FP16)
    numeric::fp32_to_fp16_n(in, p, r.step, n, mode);
  else
    numeric::fp32_to_bf16_n(in, p, r.step, n, mode);
}

// `from` is a stable source (stable_source): it shares no byte with dst, or
// is dst itself element for element, so reading a block before writing it
// gives what the per-element loop gives.
void float_cast_blocks(const TensorRef &dst, const TensorRef &from, rounding_mode_t mode) {
  for_each_run(
      dst,
      [&](int64_t count, Run d, Run s) {
        // An fp32 side that is contiguous needs no scratch: narrow straight
        // from it, or widen straight into it.
        if (from.dtype == DT_FP32 && s.step == 1)
          return narrow_block(reinterpret_cast<const float *>(s.p), d, 0, count, dst.dtype, mode);
        if (dst.dtype == DT_FP32 && d.step == 1)
          return widen_block(s, 0, count, from.dtype, reinterpret_cast<float *>(d.p));
        Block<float> wide;
        for (int64_t first = 0; first < count; first += kBlock) {
          const int64_t n = std::min(kBlock, count - first);
          widen_block(s, first, n, from.dtype, wide.data);
          narrow_block(wide.data, d, first, n, dst.dtype, mode);
        }
      },
      from);
}

void require_mode(rounding_mode_t mode) {
  if (!numeric::is_valid_rounding_mode(int(mode)))
    fail(ErrorKind::illegal_command, "mode {} is not a rounding_mode_t; expected RM_HALF_TO_EVEN (0) to RM_HALF_DOWN (6)",
         int(mode));
}

}  // namespace

void cast(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
          const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype,
          rounding_mode_t mode) {
  require_dtype("dst", dst_dtype, cast_dtypes);
  require_dtype("src", src_dtype, cast_dtypes);
  require_mode(mode);
  const TensorRef dst = result(ctx, "dst", dst_addr, shape, dst_stride, dst_dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, src_dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  // The hardware converts in place element by element, so a wider result
  // would overwrite sources not yet read; the checker refuses it (AR-14).
  if (dst_addr == src_addr && dtype_bytes(dst_dtype) > dtype_bytes(src_dtype))
    fail(Rule::AR_14,
         "dst and src are both at {:#x} but dst dtype {} is wider than src dtype {}; an in-place cast may not widen",
         dst_addr, dtype_name(dst_dtype), dtype_name(src_dtype));
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  if (casts_in_blocks(dst_dtype, src_dtype)) {
    float_cast_blocks(dst, from, mode);
  } else {
    with_dtype(dst_dtype, [&]<typename D>(D) {
      with_dtype(src_dtype, [&]<typename S>(S) {
        using SB = typename S::Bits;
        map_bits<typename D::Bits, SB>(dst, from, [mode](SB x) { return convert<D, S>(x, mode); });
      });
    });
  }
  // The wider side sets the pace: it has the fewer EU lanes.
  const data_type_t pace = dtype_bytes(dst_dtype) >= dtype_bytes(src_dtype) ? dst_dtype : src_dtype;
  book(ctx, api, BdcCost::cast, dst, pace, {&dst}, {&src});
}

void fp_round(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
              const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, rounding_mode_t mode) {
  require_float("dtype", dtype);
  require_mode(mode);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  with_float_dtype(dtype, [&]<typename D>(D) {
    using B = typename D::Bits;
    map_bits<B, B>(dst, from, [mode](B x) -> B {
      const float f = D::load_bits(x);
      if (std::isnan(f)) return B(x | D::Format::quiet_bit);
      // The integral neighbours of a value are values of its format, so
      // re-encoding the result is exact.
      return D::store_bits(numeric::round_to_integral(f, mode), RM_HALF_TO_EVEN);
    });
  });
  book(ctx, api, BdcCost::cast, dst, dtype, {&dst}, {&src});
}

}  // namespace cmodel::bdc
