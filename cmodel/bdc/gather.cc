// gather.cc: BDC gather / scatter along W or H (gather.h).
#include "gather.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "int_arith.h"
#include "movement.h"

namespace cmodel::bdc {
namespace {

const char *length_name(GatherAxis axis, bool of_param) {
  if (axis == GatherAxis::w) return of_param ? "param_w" : "output_w";
  return of_param ? "param_h" : "output_h";
}

void require_index_dtype(data_type_t dtype) {
  require_dtype("index_dtype", dtype, {DT_UINT8, DT_INT8, DT_UINT16, DT_INT16, DT_UINT32, DT_INT32});
}

// The index tensor's shape: one index per element along W, one per row along H.
dim4 index_shape(GatherAxis axis, const dim4 &shape) {
  return axis == GatherAxis::w ? shape : dim4{shape.n, shape.c, shape.h, 1};
}

// `shape` with its W (or H) replaced by `length`.
dim4 with_length(GatherAxis axis, const dim4 &shape, int length) {
  return axis == GatherAxis::w ? dim4{shape.n, shape.c, shape.h, length} : dim4{shape.n, shape.c, length, shape.w};
}

// param: `shape` in the aligned layout, or with `repeated` one channel of
// that layout at the same offset of every NPU (channel stride 0: channel c
// reads the copy in its own NPU).
TensorRef param_operand(Context &ctx, local_addr_t addr, const dim4 &shape, data_type_t dtype, bool repeated) {
  if (!repeated) return operand(ctx, "param", addr, shape, nullptr, dtype);
  const TensorRef one = operand(ctx, "param", addr, {shape.n, 1, shape.h, shape.w}, nullptr, dtype);
  dim4 stride = one.stride;
  stride.c = 0;
  return operand(ctx, "param", addr, shape, &stride, dtype);
}

// f(n, c, h, w, value) over the index tensor in (n, c, h, w) order.
template <typename F>
void for_each_index(const TensorRef &index, F &&f) {
  for_each_position(index.shape, [&](int n, int c, int h, int w) {
    f(n, c, h, w, load_int(index.dtype, index.at(n, c, h, w)));
  });
}

struct Operands {
  TensorRef output, param, index;
};

void require_one_start_npu(const Operands &o) {
  require_same_npu(o.output, "output", o.param, "param");
  require_same_npu(o.output, "output", o.index, "index");
}

// Which index (in index order) serves element k (in (n, c, h, w) order):
// the element's own along W, its row's along H.
size_t index_of(GatherAxis axis, size_t k, const dim4 &shape) { return axis == GatherAxis::w ? k : k / size_t(shape.w); }

// The element of `t` at (n, c, h, w) with W (or H) replaced by `position`.
uint8_t *along(const TensorRef &t, GatherAxis axis, int n, int c, int h, int w, int64_t position) {
  return axis == GatherAxis::w ? t.at(n, c, h, int(position)) : t.at(n, c, int(position), w);
}

// The positions a gather reads, index order; -1 for "write the fill value".
std::vector<int64_t> gather_positions(const TensorRef &index, const Gather &g, const char *api) {
  std::vector<int64_t> positions;
  positions.reserve(size_t(index.elements()));
  for_each_index(index, [&](int n, int c, int h, int w, int64_t v) {
    if (v >= 0 && v < g.param_len) return positions.push_back(v);
    switch (g.out_of_range) {
      case OutOfRange::fail:
        fail(ErrorKind::illegal_command,
             "index element ({}, {}, {}, {}) is {}, outside [0, {} = {}); every index of {} must name a param "
             "element (the *_gather_exception forms fill or clamp out-of-range indices)",
             n, c, h, w, v, length_name(g.axis, true), g.param_len, api);
      case OutOfRange::fill: return positions.push_back(-1);
      case OutOfRange::clamp: return positions.push_back(std::clamp<int64_t>(v, 0, g.param_len - 1));
    }
  });
  return positions;
}

}  // namespace

void gather(Context &ctx, const char *api, local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
            const dim4 &shape, const Gather &g) {
  check_dim(length_name(g.axis, true), g.param_len);
  require_index_dtype(g.index_dtype);
  const Operands o{operand(ctx, "output", output_addr, shape, nullptr, g.dtype),
                   param_operand(ctx, param_addr, with_length(g.axis, shape, g.param_len), g.dtype, g.param_repeated),
                   operand(ctx, "index", index_addr, index_shape(g.axis, shape), nullptr, g.index_dtype)};
  require_one_start_npu(o);
  const std::vector<int64_t> positions = gather_positions(o.index, g, api);  // read (and checked) first
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(o.param, o.output, storage, false);
  const size_t esize = size_t(o.output.esize);
  size_t k = 0;  // the element's number in (n, c, h, w) order
  for_each_position(shape, [&](int n, int c, int h, int w) {
    const int64_t p = positions[index_of(g.axis, k++, shape)];
    // The fill value is the scalar's low bytes (x86 is little-endian).
    const void *value = p < 0 ? static_cast<const void *>(&g.fill) : along(from, g.axis, n, c, h, w, p);
    std::memcpy(o.output.at(n, c, h, w), value, esize);
  });
  book(ctx, api, BdcCost::lookup, o.output, g.dtype, {&o.output}, {&o.param, &o.index});
}

void scatter(Context &ctx, const char *api, local_addr_t output_addr, local_addr_t param_addr, local_addr_t index_addr,
             const dim4 &shape, const Scatter &s) {
  check_dim(length_name(s.axis, false), s.output_len);
  require_index_dtype(s.index_dtype);
  const Operands o{operand(ctx, "output", output_addr, with_length(s.axis, shape, s.output_len), nullptr, s.dtype),
                   param_operand(ctx, param_addr, shape, s.dtype, s.param_repeated),
                   operand(ctx, "index", index_addr, index_shape(s.axis, shape), nullptr, s.index_dtype)};
  require_one_start_npu(o);
  std::vector<int64_t> positions;
  positions.reserve(size_t(o.index.elements()));
  int64_t skipped = 0;
  std::string first_skipped;
  for_each_index(o.index, [&](int n, int c, int h, int w, int64_t v) {
    const bool inside = v >= 0 && v < s.output_len;
    if (!inside && skipped++ == 0) first_skipped = fmt::format("index element ({}, {}, {}, {}) = {}", n, c, h, w, v);
    positions.push_back(inside ? v : -1);
  });
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(o.param, o.output, storage, false);
  const size_t esize = size_t(o.output.esize);
  size_t k = 0;
  for_each_position(shape, [&](int n, int c, int h, int w) {
    const int64_t p = positions[index_of(s.axis, k++, shape)];
    if (p >= 0) std::memcpy(along(o.output, s.axis, n, c, h, w, p), from.at(n, c, h, w), esize);
  });
  if (skipped > 0)
    warn(ctx, api,
         fmt::format("{} index value(s) outside [0, {} = {}) were skipped (nothing written for them); the first: {}",
                     skipped, length_name(s.axis, false), s.output_len, first_skipped));
  book(ctx, api, BdcCost::lookup, o.param, s.dtype, {&o.output}, {&o.param, &o.index});
}

}  // namespace cmodel::bdc
