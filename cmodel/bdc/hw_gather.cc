// hw_gather.cc: BDC gather / scatter by (h, w) index pairs (hw_gather.h).
#include "hw_gather.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "family_rules.h"
#include "movement.h"

namespace cmodel::bdc {
namespace {

// One (row, column) pair of the index; row -1 means "write the fill value".
struct Pair {
  int64_t h, w;
};

// The checks SG-5 makes of one command: `plane` is the operand with H = 1
// (the gather's output, the scatter's param), `extent` the other's H and W.
void require_sg5(Context &ctx, const char *plane_role, const dim4 &plane, const char *extent_role, int extent_h,
                 int extent_w, local_addr_t output, local_addr_t param, local_addr_t index) {
  under_rule(Rule::SG_5, [&] {
    check_shape(plane_role, plane, 65535);
    check_dim(fmt::format("{}_h", extent_role).c_str(), extent_h);
    check_dim(fmt::format("{}_w", extent_role).c_str(), extent_w);
    check_dim("index length (2 W)", 2 * plane.w);
  });
  if (plane.h != 1)
    fail(Rule::SG_5, "{} has H = {}; the (h, w) gather's output and the scatter's param are one row per channel (H = 1)",
         plane_role, plane.h);
  require_aligned_start(ctx, Rule::SG_5, "output", output);
  require_aligned_start(ctx, Rule::SG_5, "param", param);
  require_aligned_start(ctx, Rule::SG_5, "index", index);
}

// The index operand: [N, 1, 1, 2 W] UINT16 on NPU 0.
TensorRef index_operand(Context &ctx, local_addr_t addr, const dim4 &plane) {
  TensorRef index = operand(ctx, "index", addr, {plane.n, 1, 1, 2 * plane.w}, nullptr, DT_UINT16, Rule::SG_5);
  require_start_npu(Rule::SG_5, index, "index", 0, "the NPU of the one index vector every lane reads");
  return index;
}

// The pairs of the index in (n, w) order, each read once.
std::vector<Pair> read_pairs(const TensorRef &index) {
  std::vector<Pair> pairs;
  pairs.reserve(size_t(index.shape.n) * size_t(index.shape.w / 2));
  for (int n = 0; n < index.shape.n; ++n)
    for (int w = 0; w < index.shape.w; w += 2) {
      uint16_t h_value, w_value;
      std::memcpy(&h_value, index.at(n, 0, 0, w), 2);
      std::memcpy(&w_value, index.at(n, 0, 0, w + 1), 2);
      pairs.push_back({h_value, w_value});
    }
  return pairs;
}

bool inside(const Pair &p, int h, int w) { return p.h < h && p.w < w; }

// The gather's pairs after its out-of-range rule.
std::vector<Pair> gather_pairs(const TensorRef &index, const HwGather &g, const char *api) {
  std::vector<Pair> pairs = read_pairs(index);
  const int width = index.shape.w / 2;
  for (size_t k = 0; k < pairs.size(); ++k) {
    Pair &p = pairs[k];
    if (inside(p, g.param_h, g.param_w)) continue;
    switch (g.out_of_range) {
      case OutOfRange::fail:
        fail(ErrorKind::illegal_command,
             "index pair {} of batch {} is (h {}, w {}), outside param_h {} x param_w {}; every pair of {} must name "
             "a param element (tpu_bdc_hw_gather_exception fills or clamps out-of-range pairs)",
             k % size_t(width), k / size_t(width), p.h, p.w, g.param_h, g.param_w, api);
      case OutOfRange::fill: p = {-1, -1}; break;
      case OutOfRange::clamp: p = {std::min<int64_t>(p.h, g.param_h - 1), std::min<int64_t>(p.w, g.param_w - 1)};
    }
  }
  return pairs;
}

}  // namespace

void hw_gather(Context &ctx, const char *api, local_addr_t output_addr, local_addr_t param_addr,
               local_addr_t index_addr, const dim4 &shape, const HwGather &g) {
  require_sg5(ctx, "output", shape, "param", g.param_h, g.param_w, output_addr, param_addr, index_addr);
  const TensorRef output = operand(ctx, "output", output_addr, shape, nullptr, g.dtype, Rule::SG_5);
  const TensorRef param =
      operand(ctx, "param", param_addr, {shape.n, shape.c, g.param_h, g.param_w}, nullptr, g.dtype, Rule::SG_5);
  const TensorRef index = index_operand(ctx, index_addr, shape);
  require_same_start_npu(Rule::SG_5, output, "output", param, "param");
  const std::vector<Pair> pairs = gather_pairs(index, g, api);  // read (and checked) first
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(param, output, storage, false);
  const size_t esize = size_t(output.esize);
  for_each_position(shape, [&](int n, int c, int, int w) {
    const Pair &p = pairs[size_t(n) * size_t(shape.w) + size_t(w)];
    // The fill value is the scalar's low bytes (x86 is little-endian).
    const void *value = p.h < 0 ? static_cast<const void *>(&g.fill) : from.at(n, c, int(p.h), int(p.w));
    std::memcpy(output.at(n, c, 0, w), value, esize);
  });
  book(ctx, api, BdcCost::lookup, output, g.dtype, {&output}, {&param, &index});
}

void hw_scatter(Context &ctx, const char *api, local_addr_t output_addr, local_addr_t param_addr,
                local_addr_t index_addr, const dim4 &shape, int output_h, int output_w, data_type_t dtype) {
  require_sg5(ctx, "param", shape, "output", output_h, output_w, output_addr, param_addr, index_addr);
  const TensorRef output =
      operand(ctx, "output", output_addr, {shape.n, shape.c, output_h, output_w}, nullptr, dtype, Rule::SG_5);
  const TensorRef param = operand(ctx, "param", param_addr, shape, nullptr, dtype, Rule::SG_5);
  const TensorRef index = index_operand(ctx, index_addr, shape);
  require_same_start_npu(Rule::SG_5, output, "output", param, "param");
  const std::vector<Pair> pairs = read_pairs(index);
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(param, output, storage, false);
  const size_t esize = size_t(output.esize);
  for_each_position(shape, [&](int n, int c, int, int w) {
    const Pair &p = pairs[size_t(n) * size_t(shape.w) + size_t(w)];
    if (inside(p, output_h, output_w)) std::memcpy(output.at(n, c, int(p.h), int(p.w)), from.at(n, c, 0, w), esize);
  });
  const auto skipped = std::count_if(pairs.begin(), pairs.end(), [&](const Pair &p) {
    return !inside(p, output_h, output_w);
  });
  if (skipped > 0)
    warn(ctx, api,
         fmt::format("{} index pair(s) outside output_h {} x output_w {} were skipped (nothing written for them)",
                     skipped, output_h, output_w));
  book(ctx, api, BdcCost::lookup, param, dtype, {&output}, {&param, &index});
}

}  // namespace cmodel::bdc
