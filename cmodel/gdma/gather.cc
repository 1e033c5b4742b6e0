// gather.cc: GDMA row gather and scatter along H (gdma.h).
//
// Every row number is read and checked before any data moves, so a command
// with a bad operand leaves its destination untouched.
#include <cstdint>
#include <cstring>
#include <vector>

#include "cmodel/error.h"
#include "cmodel/numeric/dtypes.h"
#include "mover.h"

namespace cmodel::gdma {
namespace {

// The row numbers of an (N, C, H) index tensor, start_pos already taken
// off; -1 for a row outside [0, rows).
std::vector<int64_t> read_rows(Context &ctx, const RowIndex &index, const dim4 &shape, int rows,
                               const DimLimits &limits, TensorRef *ref) {
  *ref = operand(ctx, "index", index.index, {shape.n, shape.c, shape.h, 1}, DT_UINT32, limits);
  std::vector<int64_t> out;
  out.reserve(size_t(shape.n) * shape.c * shape.h);
  for (int n = 0; n < shape.n; ++n)
    for (int c = 0; c < shape.c; ++c)
      for (int h = 0; h < shape.h; ++h) {
        uint32_t raw;
        std::memcpy(&raw, ref->at(n, c, h, 0), sizeof raw);
        const int64_t row = int64_t(raw) - int64_t(index.start_pos);
        out.push_back(row >= 0 && row < rows ? row : -1);
      }
  return out;
}

// f(n, c, h, row) for every (n, c, h) of `shape` with its row number from
// read_rows (-1: out of range).
template <typename F>
void for_each_indexed_row(const dim4 &shape, const std::vector<int64_t> &rows, F &&f) {
  size_t next = 0;
  for (int n = 0; n < shape.n; ++n)
    for (int c = 0; c < shape.c; ++c)
      for (int h = 0; h < shape.h; ++h) f(n, c, h, rows[next++]);
}

// Adds the w elements of src into dst (both rows of `dtype`).
void add_row(uint8_t *dst, int64_t dst_step, const uint8_t *src, int64_t src_step, int w, data_type_t dtype) {
  numeric::with_dtype(dtype, [&]<typename D>(D) {
    using S = typename D::Storage;
    for (int i = 0; i < w; ++i) {
      S a, b;
      std::memcpy(&a, dst + i * dst_step * int64_t(sizeof(S)), sizeof a);
      std::memcpy(&b, src + i * src_step * int64_t(sizeof(S)), sizeof b);
      using V = decltype(D::load(a));
      V sum;
      if constexpr (std::is_floating_point_v<V>) sum = D::load(a) + D::load(b);
      else sum = V(uint64_t(D::load(a)) + uint64_t(D::load(b)));  // integers wrap
      const S r = D::store(sum);
      std::memcpy(dst + i * dst_step * int64_t(sizeof(S)), &r, sizeof r);
    }
  });
}

// The gather and scatter descriptors have 16-bit c and w counts but a
// 32-bit h count and no n at all (the API's n is looped): only C and W
// are bounded (DMA-15 / DMA-17, SDMA-7 / SDMA-8).
DimLimits row_limits(const Context &ctx, bool scatter) {
  const Rule rule =
      scatter ? engine_rule(ctx, Rule::DMA_17, Rule::SDMA_8) : engine_rule(ctx, Rule::DMA_15, Rule::SDMA_7);
  return {{INT32_MAX, 65535, INT32_MAX, 65535}, rule};
}

// When both data tensors carry user strides the index must be read with an
// h-stride of 1 (DMA-16, SDMA-7 / SDMA-8); its default layouts have one.
void check_index_stride(const Context &ctx, const Endpoint &dst, const Endpoint &param, const RowIndex &index,
                        bool scatter) {
  const dim4 *stride = index.index.stride;
  if (!dst.stride || !param.stride || !stride || stride->h == 1) return;
  fail(engine_rule(ctx, Rule::DMA_16, scatter ? Rule::SDMA_8 : Rule::SDMA_7),
       "index stride.h = {} while the output and param strides are given; the index h-stride must then be 1",
       stride->h);
}

// param_h is a row count; no field bounds it but it must name a row.
void check_param_h(const DimLimits &limits, int param_h) {
  if (param_h < 1) fail(limits.rule, "param_h = {}; it must be at least 1", param_h);
}

}  // namespace

void h_gather(Context &ctx, const char *api, Endpoint dst_end, Endpoint param_end, const RowIndex &index,
              const dim4 &shape, int param_h, uint32_t fill_value, data_type_t dtype) {
  const DimLimits limits = row_limits(ctx, false);
  check_param_h(limits, param_h);
  check_index_stride(ctx, dst_end, param_end, index, false);
  const TensorRef dst = operand(ctx, "dst", dst_end, shape, dtype, limits);
  const TensorRef param = operand(ctx, "param", param_end, {shape.n, shape.c, param_h, shape.w}, dtype, limits);
  TensorRef index_ref;
  const std::vector<int64_t> rows = read_rows(ctx, index, shape, param_h, limits, &index_ref);
  for_each_indexed_row(shape, rows, [&](int n, int c, int h, int64_t row) {
    if (row >= 0) {
      move_run(dst.row(n, c, h), dst.stride.w, param.row(n, c, int(row)), param.stride.w, shape.w, dst.esize);
    } else {
      for (int w = 0; w < shape.w; ++w) std::memcpy(dst.at(n, c, h, w), &fill_value, size_t(dst.esize));
    }
  });
  ctx.hazards.note(index_ref, false);
  book(ctx, api, dst, param);
}

void h_scatter(Context &ctx, const char *api, Endpoint dst_end, Endpoint param_end, const RowIndex &index,
               const dim4 &shape, int param_h, bool add, data_type_t dtype) {
  const DimLimits limits = row_limits(ctx, true);
  check_param_h(limits, param_h);
  check_index_stride(ctx, dst_end, param_end, index, true);
  const dim4 param_shape = {shape.n, shape.c, param_h, shape.w};
  const TensorRef dst = operand(ctx, "dst", dst_end, shape, dtype, limits);
  const TensorRef param = operand(ctx, "param", param_end, param_shape, dtype, limits);
  TensorRef index_ref;
  const std::vector<int64_t> rows = read_rows(ctx, index, param_shape, shape.h, limits, &index_ref);
  for_each_indexed_row(param_shape, rows, [&](int n, int c, int h, int64_t row) {
    if (row < 0) return;
    uint8_t *to = dst.row(n, c, int(row));
    if (add) add_row(to, dst.stride.w, param.row(n, c, h), param.stride.w, shape.w, dtype);
    else move_run(to, dst.stride.w, param.row(n, c, h), param.stride.w, shape.w, dst.esize);
  });
  ctx.hazards.note(index_ref, false);
  if (add) ctx.hazards.note(dst, false);  // adds to what dst holds
  book(ctx, api, direction(dst.space, param.space), uint64_t(param.elements()) * param.esize, &dst, &param);
}

}  // namespace cmodel::gdma
