// gather.cc: BDC gather / scatter along W or H (gather.h).
#include "gather.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "family_rules.h"
#include "int_arith.h"
#include "movement.h"

namespace cmodel::bdc {
namespace {

const char *length_name(GatherAxis axis, bool of_param) {
  if (axis == GatherAxis::w) return of_param ? "param_w" : "output_w";
  return of_param ? "param_h" : "output_h";
}

// The vendor's rules for the instruction a form issues: the plain W forms
// (tpu_bdc_w_gather, _exception, w_scatter) SG-1..3, the batch_bcast /
// 4bank W forms SG-6..8, the H forms (gather/scatter line) SGL-1..3.
struct FormRules {
  Rule placement;    // operand alignment and start NPUs
  Rule index_dtype;  // 8- or 16-bit indices
  Rule lengths;      // dims in [1, 65535]
};

FormRules rules_of(GatherAxis axis, bool batch) {
  if (axis == GatherAxis::h) return {Rule::SGL_1, Rule::SGL_2, Rule::SGL_3};
  if (batch) return {Rule::SG_6, Rule::SG_7, Rule::SG_8};
  return {Rule::SG_1, Rule::SG_2, Rule::SG_3};
}

void require_index_dtype(const FormRules &rules, data_type_t dtype) {
  under_rule(rules.index_dtype,
             [&] { require_dtype("index_dtype", dtype, {DT_UINT8, DT_INT8, DT_UINT16, DT_INT16}); });
}

// The command's dims and its param (gather) or output (scatter) length.
void require_lengths(const FormRules &rules, const char *shape_role, const dim4 &shape, const char *length_role,
                     int length) {
  under_rule(rules.lengths, [&] {
    check_shape(shape_role, shape, 65535);
    check_dim(length_role, length);
  });
}

void require_aligned_starts(Context &ctx, const FormRules &rules, local_addr_t output, local_addr_t param,
                            local_addr_t index) {
  require_aligned_start(ctx, rules.placement, "output", output);
  require_aligned_start(ctx, rules.placement, "param", param);
  require_aligned_start(ctx, rules.placement, "index", index);
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

void require_one_start_npu(const Operands &o, const FormRules &rules) {
  require_same_start_npu(rules.placement, o.output, "output", o.param, "param");
  if (rules.placement != Rule::SG_1) {
    require_same_start_npu(rules.placement, o.output, "output", o.index, "index");
    return;
  }
  // The plain W forms: the vendor's instruction reads one index vector on
  // NPU 0 shared by every lane (SG-1, spec §5 item 6). We keep the
  // documented per-element index(n, c, h, w), which each lane reads from
  // its own NPU, so it must start on the output's NPU: our layout's rule,
  // not the vendor's (a kernel that puts both on NPU 0 satisfies both).
  if (o.output.start_npu != o.index.start_npu)
    fail(ErrorKind::illegal_command,
         "output starts on NPU {} but index on NPU {}; the index holds one value per element, which each NPU reads "
         "from its own local memory, so it must start on the output's NPU",
         o.output.start_npu, o.index.start_npu);
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
  const FormRules rules = rules_of(g.axis, g.batch);
  require_lengths(rules, "output", shape, length_name(g.axis, true), g.param_len);
  require_index_dtype(rules, g.index_dtype);
  require_aligned_starts(ctx, rules, output_addr, param_addr, index_addr);
  const Operands o{operand(ctx, "output", output_addr, shape, nullptr, g.dtype),
                   param_operand(ctx, param_addr, with_length(g.axis, shape, g.param_len), g.dtype, g.param_repeated),
                   operand(ctx, "index", index_addr, index_shape(g.axis, shape), nullptr, g.index_dtype)};
  require_one_start_npu(o, rules);
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
  const FormRules rules = rules_of(s.axis, s.batch);
  require_lengths(rules, "param", shape, length_name(s.axis, false), s.output_len);
  require_index_dtype(rules, s.index_dtype);
  require_aligned_starts(ctx, rules, output_addr, param_addr, index_addr);
  const Operands o{operand(ctx, "output", output_addr, with_length(s.axis, shape, s.output_len), nullptr, s.dtype),
                   param_operand(ctx, param_addr, shape, s.dtype, s.param_repeated),
                   operand(ctx, "index", index_addr, index_shape(s.axis, shape), nullptr, s.index_dtype)};
  require_one_start_npu(o, rules);
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
