#include "movement.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "cmodel/gdma/mover.h"
#include "cmodel/hazard.h"
#include "elementwise.h"
#include "family_rules.h"

namespace cmodel::bdc {
namespace {

// Moves `count` elements of `esize` bytes; steps in elements.
inline void move(const Run &d, const Run &s, int64_t count, int esize) {
  gdma::move_run(d.p, d.step, s.p, s.step, count, esize);
}

bool overlap(const LocalFootprint &a, const LocalFootprint &b) {
  return (a.npu_mask & b.npu_mask) != 0 && a.lo < b.hi && b.lo < a.hi;
}

// Element copies of one size between two tensors, element by element.
template <typename T>
void copy_elements(const TensorRef &dst, auto &&src_of) {
  const dim4 &s = dst.shape;
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h) {
        auto *d = dst.row(n, c, h);
        for (int w = 0; w < s.w; ++w)
          std::memcpy(d + int64_t(w) * dst.stride.w * int64_t(sizeof(T)), src_of(n, c, h, w), sizeof(T));
      }
}

// The vendor checker refuses these commands in place: the result at the
// source's own address.
void require_distinct(Rule rule, local_addr_t dst, local_addr_t src, const char *what) {
  if (dst == src)
    fail(rule, "dst and src are both at local address {:#x}; {} cannot work in place (give dst its own buffer)", dst,
         what);
}

}  // namespace

bool elements_distinct(const TensorRef &t) {
  struct Dim {
    int64_t count, stride;
  };
  const int rows = t.is_local() ? (t.start_npu + t.shape.c - 1) / t.npu_num + 1 : t.shape.c;
  Dim dims[4] = {{t.shape.n, t.stride.n}, {rows, t.stride.c}, {t.shape.h, t.stride.h}, {t.shape.w, t.stride.w}};
  int used = 0;
  for (const Dim &d : dims) {
    if (d.count <= 1) continue;
    if (d.stride == 0) return false;
    dims[used++] = {d.count, std::abs(d.stride)};
  }
  for (int i = 1; i < used; ++i)  // insertion sort by stride: at most four dims
    for (int j = i; j > 0 && dims[j].stride < dims[j - 1].stride; --j) std::swap(dims[j], dims[j - 1]);
  int64_t covered = 0;  // elements spanned by the inner dims, minus one
  for (int i = 0; i < used; ++i) {
    if (dims[i].stride <= covered) return false;
    covered += (dims[i].count - 1) * dims[i].stride;
  }
  return true;
}

TensorRef host_tensor(data_type_t dtype, const dim4 &shape, const dim4 &stride, std::vector<uint8_t> &bytes) {
  TensorRef t{};
  t.space = Space::system;
  t.dtype = dtype;
  t.esize = dtype_bytes(dtype);
  t.shape = shape;
  t.stride = stride;
  t.origin = bytes.data();
  return t;
}

TensorRef stable_source(const TensorRef &src, const TensorRef &dst, std::vector<uint8_t> &storage,
                        bool elementwise_in_place) {
  if (elementwise_in_place && same_layout(src, dst) && elements_distinct(dst)) return src;
  if (!overlap(footprint(src), footprint(dst))) return src;
  storage.resize(size_t(src.elements()) * src.esize);
  const TensorRef copy = host_tensor(src.dtype, src.shape, continuous_stride(src.shape), storage);
  const int esize = src.esize;
  for_each_run(copy, [&](int64_t count, Run d, Run s) { move(d, s, count, esize); }, src);
  return copy;
}

void copy(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
          const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  if (!same_layout(from, dst)) {  // copying a tensor onto itself changes nothing
    const int esize = dst.esize;
    for_each_run(dst, [&](int64_t count, Run d, Run s) { move(d, s, count, esize); }, from);
  }
  book(ctx, api, BdcCost::copy, dst, dtype, {&dst}, {&src});
}

void fill(Context &ctx, const char *api, local_addr_t dst_addr, scalar_t C, const dim4 &shape,
          const dim4 *dst_stride, data_type_t dtype) {
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  // The scalar's low bytes hold the value in dtype (x86 is little-endian).
  uint8_t pattern[4];
  std::memcpy(pattern, &C, sizeof pattern);
  const int esize = dst.esize;
  for_each_run(dst, [&](int64_t count, Run d) { move(d, Run{pattern, 0}, count, esize); });
  book(ctx, api, BdcCost::copy, dst, dtype, {&dst}, {});
}

void npu_broadcast(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
                   data_type_t dtype) {
  require_aligned_start(ctx, Rule::BC_1, "dst", dst_addr);
  require_aligned_start(ctx, Rule::BC_1, "src", src_addr);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, {shape.n, 1, shape.h, shape.w}, nullptr, dtype);
  // The lane broadcast writes one channel into each of shape.c NPUs; it
  // cannot put two channels in one NPU (a second row).
  if (dst.start_npu + shape.c > ctx.chip.npu_num)
    fail(Rule::BC_1,
         "dst starts on NPU {} and shape.c = {} would reach NPU {}; the broadcast writes one channel into each of "
         "shape.c consecutive NPUs, so start NPU + c must be at most NPU_NUM = {}",
         dst.start_npu, shape.c, dst.start_npu + shape.c - 1, ctx.chip.npu_num);
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, false);
  const int esize = dst.esize;
  for (int n = 0; n < shape.n; ++n)
    for (int c = 0; c < shape.c; ++c)
      for (int h = 0; h < shape.h; ++h)
        move(Run{dst.row(n, c, h), dst.stride.w}, Run{from.row(n, 0, h), from.stride.w}, shape.w, esize);
  book(ctx, api, BdcCost::copy, dst, dtype, {&dst}, {&src});
}

void copy_cross_npu(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr,
                    const dim4 &shape, data_type_t dtype) {
  require_aligned_start(ctx, Rule::BC_2, "dst", dst_addr);
  require_aligned_start(ctx, Rule::BC_2, "src", src_addr);
  require_distinct(Rule::BC_2, dst_addr, src_addr, "the copy between NPUs");
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, dtype);
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  if (!same_layout(from, dst)) {
    const int esize = dst.esize;
    for_each_run(dst, [&](int64_t count, Run d, Run s) { move(d, s, count, esize); }, from);
  }
  book(ctx, api, BdcCost::cross_npu, dst, dtype, {&dst}, {&src});
}

void cw_transpose(Context &ctx, const char *api, Transpose form, local_addr_t dst_addr, local_addr_t src_addr,
                  const dim4 &shape, data_type_t dtype) {
  require_aligned_start(ctx, Rule::TR_1, "dst", dst_addr);
  require_aligned_start(ctx, Rule::TR_1, "src", src_addr);
  require_distinct(Rule::TR_3, dst_addr, src_addr, "the transpose");
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, {shape.n, shape.w, shape.h, shape.c}, nullptr, dtype);
  if (form == Transpose::cw && src.start_npu != 0)
    fail(Rule::TR_2,
         "src starts on NPU {} (local address {:#x}); tpu_bdc_cw_trans reads its source from NPU 0 "
         "(tpu_bdc_wc_trans takes a source on any NPU but writes its result from NPU 0)",
         src.start_npu, src_addr);
  if (form == Transpose::wc && dst.start_npu != 0)
    fail(Rule::TR_2,
         "dst starts on NPU {} (local address {:#x}); tpu_bdc_wc_trans writes its result from NPU 0 "
         "(tpu_bdc_cw_trans writes to any NPU but reads its source from NPU 0)",
         dst.start_npu, dst_addr);
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, false);
  auto src_of = [&](int n, int c, int h, int w) { return from.at(n, w, h, c); };
  switch (dst.esize) {
    case 1: copy_elements<uint8_t>(dst, src_of); break;
    case 2: copy_elements<uint16_t>(dst, src_of); break;
    default: copy_elements<uint32_t>(dst, src_of); break;
  }
  book(ctx, api, BdcCost::transpose, dst, dtype, {&dst}, {&src});
}

}  // namespace cmodel::bdc
