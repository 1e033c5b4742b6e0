// movement.h: BDC data movement (family O): local copies, fills, the NPU
// broadcast, copies between NPUs and the C <-> W transposes.
//
// Every command here moves bits unchanged (a NaN keeps its payload, a
// signalling NaN stays signalling); any dtype of the chip is accepted.
//
// Overlapping operands: every command behaves as if it read all of its
// source before writing any of dst (see stable_source()). The hardware's
// result for partially overlapping operands is not documented; this is the
// result a kernel author means when writing an in-place move.
#pragma once

#include <cstdint>
#include <vector>

#include "elementwise.h"

namespace cmodel::bdc {

// dst(n,c,h,w) = src(n,c,h,w), free strides; same start NPU.
void copy(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
          const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype);

// Every element of dst = C (the scalar_t member of dtype, its low bytes).
void fill(Context &ctx, const char *api, local_addr_t dst, scalar_t C, const dim4 &shape, const dim4 *dst_stride,
          data_type_t dtype);

// dst(n,c,h,w) = src(n,0,h,w): src [n, 1, h, w] and dst [n, c, h, w], both
// aligned; dst's channels must lie on distinct NPUs (start NPU + c <=
// NPU_NUM). src and dst may start on different NPUs.
void npu_broadcast(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
                   data_type_t dtype);

// dst(n,c,h,w) = src(n,c,h,w), aligned layouts at distinct addresses; src
// and dst may start on different NPUs.
void copy_cross_npu(Context &ctx, const char *api, local_addr_t dst, local_addr_t src, const dim4 &shape,
                    data_type_t dtype);

// How the hardware walks the tensors of a transpose: tpu_bdc_cw_trans (cw)
// reads its source from NPU 0, tpu_bdc_wc_trans (wc) writes its result from
// NPU 0 (the vendor's TR-2).
enum class Transpose { cw, wc };

// dst(n,c,h,w) = src(n,w,h,c); shape is dst's, src is [n, w, h, c]; aligned
// layouts at distinct addresses; the other operand may start on any NPU
// (the transpose moves every element between lanes anyway). Both forms give
// the same result.
void cw_transpose(Context &ctx, const char *api, Transpose form, local_addr_t dst, local_addr_t src,
                  const dim4 &shape, data_type_t dtype);

// ---- helpers shared by the BDC families of this directory -------------------

// True when no two elements of t share a byte (a sufficient test: sorted
// by stride, every dimension steps past everything the inner ones cover).
bool elements_distinct(const TensorRef &t);

// A tensor over host bytes (`bytes` already sized for it), read and
// written through the same accessors as local and system tensors.
TensorRef host_tensor(data_type_t dtype, const dim4 &shape, const dim4 &stride, std::vector<uint8_t> &bytes);

// The source a command should read so that its result is as if all of src
// were read before any of dst was written:
//  - src itself when the two footprints cannot overlap, or when
//    `elementwise_in_place` and dst is exactly src (same address, element
//    size and strides, distinct elements): an element-wise command reads
//    each element just before writing the same bytes;
//  - otherwise a copy of src's elements in `storage` (a host-memory
//    TensorRef with continuous strides, read through the same accessors).
TensorRef stable_source(const TensorRef &src, const TensorRef &dst, std::vector<uint8_t> &storage,
                        bool elementwise_in_place);

// dst = op(src) over raw storage, each operand with its own type and steps.
template <typename DS, typename SS, typename Op>
void map_bits(const TensorRef &dst, const TensorRef &src, Op op) {
  for_each_run(
      dst,
      [&](int64_t count, Run d, Run s) {
        auto *dp = reinterpret_cast<DS *>(d.p);
        const auto *sp = reinterpret_cast<const SS *>(s.p);
        if (d.step == 1 && s.step == 1) {
          for (int64_t i = 0; i < count; ++i) dp[i] = op(sp[i]);
        } else {
          for (int64_t i = 0; i < count; ++i) dp[i * d.step] = op(sp[i * s.step]);
        }
      },
      src);
}

}  // namespace cmodel::bdc
