// group_planner.cc: the layer-group DP (see tpu_runtime/group_planner.h).
#include "tpu_runtime/group_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tpu_runtime {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

int div_up(int a, int b) { return (a + b - 1) / b; }

// What a span shares: the largest scratch per row, and whether every layer
// lets each axis be split.
struct SpanFacts {
  double scratch_row = 0;
  bool split_n = true, split_h = true, split_w = true;
  std::string no_n, no_h;  // an op refusing the axis
};

}  // namespace

GroupPlanner::GroupPlanner(std::vector<PlannerLayer> layers, PlannerFigures figures)
    : layers_(std::move(layers)), fig_(figures) {
  const std::size_t n = layers_.size();
  for (auto *v : {&scale_, &shift_, &out_row_, &out_row_halo_, &out_pad_, &bdc_, &bdc_halo_, &resident_})
    v->assign(n + 1, 0.0);
  scale_[0] = 1;
  for (std::size_t k = 0; k < n; ++k) {
    const PlannerLayer &l = layers_[k];
    const int stride = std::max(1, l.stride);
    scale_[k + 1] = scale_[k] * stride;
    shift_[k + 1] = shift_[k] + (stride > 1 ? l.halo : std::max(0, l.halo)) * scale_[k];
    const double scale = scale_[k + 1], shift = shift_[k + 1];
    const double bdc_row = l.bdc_us / std::max(1, l.h);  // per output row of the layer
    out_row_[k + 1] = out_row_[k] + l.out_row_bytes / scale;
    out_row_halo_[k + 1] = out_row_halo_[k] + l.out_row_bytes * shift / scale;
    out_pad_[k + 1] = out_pad_[k] + l.out_plane_pad;
    bdc_[k + 1] = bdc_[k] + bdc_row / scale;
    bdc_halo_[k + 1] = bdc_halo_[k] + bdc_row * shift / scale;
    resident_[k + 1] = resident_[k] + l.resident_bytes;
  }
  for (std::vector<SideSums> &sums : side_) sums.assign(n + 1, SideSums{});
  for (std::size_t k = 0; k < n; ++k) {
    for (std::vector<SideSums> &sums : side_) sums[k + 1] = sums[k];
    for (const PlannerSide &side : layers_[k].sides) {
      SideSums &sum = side_[std::size_t(side.broadcast & 7)][k + 1];
      sum.bytes += side.bytes;
      sum.row += side.row_bytes;
      sum.pad += side.plane_pad;
    }
  }
  if (!(fig_.gdma_bytes_per_us > 0)) fig_.gdma_bytes_per_us = 1e4;
}

double GroupPlanner::level(int j, int rows) const {
  return scale_[std::size_t(j) + 1] * rows + shift_[std::size_t(j) + 1];
}

double GroupPlanner::input_rows(int i, int j, int rows) const {
  return (level(j, rows) - shift_[std::size_t(i)]) / scale_[std::size_t(i)];
}

// Per NPU, for `n_per` n and `rows` output rows of the last layer.
double GroupPlanner::local_bytes(int i, int j, int n_per, int rows) const {
  const PlannerLayer &first = layers_[std::size_t(i)], &last = layers_[std::size_t(j)];
  const double in_rows = input_rows(i, j, rows);
  const double input = first.in_row_bytes * in_rows + first.in_plane_pad;
  const double output = last.out_row_bytes * rows + last.out_plane_pad;
  // Intermediates: outputs of layers i..j-1, each with the rows the layers after it read.
  const double inner_rows = level(j, rows) * (out_row_[std::size_t(j)] - out_row_[std::size_t(i)]) -
                            (out_row_halo_[std::size_t(j)] - out_row_halo_[std::size_t(i)]);
  const double inner = inner_rows + out_pad_[std::size_t(j)] - out_pad_[std::size_t(i)];
  return n_per * (2 * input + 2 * output + inner);
}

double GroupPlanner::column_share(int i, int j, int w_slices) const {
  if (w_slices <= 1) return 1.0;
  const int W = std::max(1, layers_[std::size_t(j)].w);
  int halo = 0;
  for (int k = i; k <= j; ++k) halo += std::max(0, layers_[std::size_t(k)].halo_w);
  return std::min(1.0, double(div_up(W, w_slices) + halo) / W);
}

GroupPlanner::SideCost GroupPlanner::side_cost(int i, int j, int n_slices, int h_slices, int w_slices) const {
  const PlannerLayer &first = layers_[std::size_t(i)], &last = layers_[std::size_t(j)];
  const int N = std::max(1, last.n), H = std::max(1, first.in_h > 0 ? first.in_h : first.h);
  const int n_per = div_up(N, n_slices), rows = div_up(std::max(1, last.h), h_slices);
  // A side input feeds some layer of the span, whose slice holds at most
  // the share of its rows the group's input slice holds of its input's.
  const double in_rows = std::min<double>(input_rows(i, j, rows), H);
  const double share = column_share(i, j, w_slices);
  const bool pipelined = n_slices * h_slices * w_slices > 1;
  SideCost cost;
  for (int pattern = 0; pattern < 8; ++pattern) {
    const SideSums &to = side_[std::size_t(pattern)][std::size_t(j) + 1], &from = side_[std::size_t(pattern)][std::size_t(i)];
    const double bytes = to.bytes - from.bytes, row = to.row - from.row, pad = to.pad - from.pad;
    if (bytes <= 0) continue;
    const bool bn = pattern & PlannerSide::kBroadcastN, bh = pattern & PlannerSide::kBroadcastH,
               bw = pattern & PlannerSide::kBroadcastW;
    const bool once = (n_slices == 1 || bn) && (h_slices == 1 || bh) && (w_slices == 1 || bw);
    const double n_local = bn ? 1 : n_per, rows_local = bh ? 1 : in_rows, w_share = bw ? 1 : share;
    cost.local += (once || !pipelined ? 1 : 2) * n_local * (row * rows_local * w_share + pad);
    const double loaded = bytes * (bn ? 1 : double(n_per) / N) * (bh ? 1 : in_rows / H) * w_share;
    (once ? cost.once_bytes : cost.slice_bytes) += loaded;
  }
  return cost;
}

double GroupPlanner::time_us(int i, int j, int n_slices, int h_slices, int w_slices) const {
  const PlannerLayer &first = layers_[std::size_t(i)], &last = layers_[std::size_t(j)];
  const int N = last.n, H = last.h, in_h = first.in_h > 0 ? first.in_h : first.h;
  const int n_per = div_up(N, n_slices), rows = div_up(H, h_slices);
  const double in_rows = std::min<double>(input_rows(i, j, rows), in_h);
  const double n_frac = double(n_per) / N;
  const double share = column_share(i, j, w_slices);
  const double out_share = w_slices > 1 ? double(div_up(std::max(1, last.w), w_slices)) / std::max(1, last.w) : 1.0;
  const SideCost sides = side_cost(i, j, n_slices, h_slices, w_slices);
  const double load = (first.in_bytes * n_frac * (in_rows / in_h) * share + sides.slice_bytes) / fig_.gdma_bytes_per_us;
  const double once = sides.once_bytes / fig_.gdma_bytes_per_us;
  const double store = last.out_bytes * n_frac * (double(rows) / H) * out_share / fig_.gdma_bytes_per_us;
  // Each layer's BDC time scaled by the share of its output rows it computes.
  const double bdc = level(j, rows) * (bdc_[std::size_t(j) + 1] - bdc_[std::size_t(i)]) -
                     (bdc_halo_[std::size_t(j) + 1] - bdc_halo_[std::size_t(i)]);
  const double compute = n_frac * bdc * share + fig_.per_command_us * (j - i + 3);
  // The group stream's pipeline (layer_groups.cc): stage t loads slice t,
  // stores slice t - 2 (both on the one GDMA) and computes slice t - 1 on the
  // BDC beside them; one slice runs load, compute, store in turn.
  const int slices = n_slices * h_slices * w_slices;
  if (slices == 1) return once + load + compute + store;
  return once + load + std::max(load, compute) + (slices - 2) * std::max(load + store, compute) +
         std::max(store, compute) + store;
}

SpanEstimate GroupPlanner::estimate(int i, int j) const {
  SpanFacts f;
  for (int k = i; k <= j; ++k) {
    const PlannerLayer &l = layers_[std::size_t(k)];
    f.scratch_row = std::max(f.scratch_row, l.scratch_row_bytes);
    if (!l.split_n && f.split_n) f.no_n = l.op;
    if (!l.split_h && f.split_h) f.no_h = l.op;
    f.split_n = f.split_n && l.split_n;
    f.split_h = f.split_h && l.split_h;
    f.split_w = f.split_w && l.split_w && l.w == layers_[std::size_t(j)].w;
  }
  const PlannerLayer &last = layers_[std::size_t(j)];
  const int N = std::max(1, last.n), H = std::max(1, last.h), W = std::max(1, last.w);
  const int n_choices = f.split_n ? N : 1, h_count = f.split_h ? H - 1 : 0, w_count = f.split_w ? W - 1 : 0;
  const int count = n_choices + h_count + w_count;
  struct Slicing {
    int n, h, w;
  };
  const auto slicing = [&](int k) {  // k in 1..count: N first, then H, then W
    if (k <= n_choices) return Slicing{k, 1, 1};
    if (k <= n_choices + h_count) return Slicing{n_choices, k - n_choices + 1, 1};
    return Slicing{n_choices, h_count + 1, k - n_choices - h_count + 1};
  };
  const auto bytes = [&](int k) {
    const Slicing sl = slicing(k);
    const int n_per = div_up(N, sl.n), rows = div_up(H, sl.h);
    const double in_rows = input_rows(i, j, rows);
    return (local_bytes(i, j, n_per, rows) + n_per * f.scratch_row * in_rows) * column_share(i, j, sl.w) +
           side_cost(i, j, sl.n, sl.h, sl.w).local + resident_[std::size_t(j) + 1] - resident_[std::size_t(i)];
  };
  SpanEstimate e;
  if (bytes(count) > fig_.local_mem_bytes) {
    e.why = fmt::format("even {} slices need {:.0f} bytes of local memory per NPU, more than the {:.0f} there are",
                        count, bytes(count), fig_.local_mem_bytes);
    if (!f.split_n && N > 1) e.why += fmt::format("; allow_data_split_{} refuses to split N", f.no_n);
    if (!f.split_h && H > 1) e.why += fmt::format("; allow_data_split_{} refuses to split H", f.no_h);
    if (!f.split_w && W > 1) e.why += "; W cannot be split (an op refuses axis 3 or changes W)";
    return e;
  }
  int lo = 1, hi = count;  // smallest feasible k
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (bytes(mid) <= fig_.local_mem_bytes) hi = mid;
    else lo = mid + 1;
  }
  e.feasible = true;
  e.time_us = kInfinity;
  for (int k = lo; k <= count; k = k * 2 > count && k < count ? count : k * 2) {
    if (bytes(k) > fig_.local_mem_bytes) continue;
    const Slicing sl = slicing(k);
    const double t = time_us(i, j, sl.n, sl.h, sl.w);
    if (t < e.time_us) {
      e.time_us = t;
      e.n_slices = sl.n;
      e.h_slices = sl.h;
      e.w_slices = sl.w;
      e.local_bytes = bytes(k);
    }
    if (k == count) break;
  }
  return e;
}

std::string GroupPlanner::boundary_reason(int a, int after, int b) const {
  const PlannerLayer &left = layers_[std::size_t(after)], &right = layers_[std::size_t(after) + 1];
  if (!left.not_groupable.empty()) return left.not_groupable;
  if (!right.not_groupable.empty()) return right.not_groupable;
  if (!right.chain_break.empty()) return right.chain_break;
  for (int k = a + 1; k <= b; ++k)  // the merged span must be one chain too
    if (!layers_[std::size_t(k)].not_groupable.empty()) return layers_[std::size_t(k)].not_groupable;
    else if (!layers_[std::size_t(k)].chain_break.empty()) return layers_[std::size_t(k)].chain_break;
  const SpanEstimate merged = estimate(a, b);
  if (!merged.feasible) return "memory: " + merged.why;
  return "cheaper";  // the caller adds the figures
}

GroupPlan GroupPlanner::plan(int max_group) const {
  const int n = int(layers_.size());
  GroupPlan plan;
  for (const PlannerLayer &l : layers_) plan.global_us += l.global_us;
  if (n == 0) return plan;
  std::vector<double> best(std::size_t(n) + 1, kInfinity);
  struct Choice {
    int first = 0;
    SpanEstimate span;
  };
  std::vector<Choice> choice(static_cast<std::size_t>(n));
  best[0] = 0;
  for (int j = 0; j < n; ++j) {
    // A global layer.
    best[std::size_t(j) + 1] = best[std::size_t(j)] + layers_[std::size_t(j)].global_us;
    choice[std::size_t(j)] = {j, {}};
    if (!layers_[std::size_t(j)].not_groupable.empty()) continue;
    // Groups [i, j], i going down while the chain holds.
    for (int i = j - 1; i >= 0; --i) {
      if (!layers_[std::size_t(i)].not_groupable.empty() || !layers_[std::size_t(i) + 1].chain_break.empty()) break;
      if (max_group > 0 && j - i + 1 > max_group) break;
      const SpanEstimate e = estimate(i, j);
      if (!e.feasible) continue;  // a longer span may still fit: its layers' rows and halos differ
      const double total = best[std::size_t(i)] + e.time_us;
      if (total < best[std::size_t(j) + 1]) {
        best[std::size_t(j) + 1] = total;
        choice[std::size_t(j)] = {i, e};
      }
    }
  }
  plan.planned_us = best[std::size_t(n)];
  for (int j = n - 1; j >= 0;) {
    const Choice &c = choice[std::size_t(j)];
    PlannedGroup g;
    g.first = c.first;
    g.last = j;
    if (g.grouped()) {
      g.n_slices = c.span.n_slices;
      g.h_slices = c.span.h_slices;
      g.w_slices = c.span.w_slices;
      g.estimate_us = c.span.time_us;
      g.local_bytes = c.span.local_bytes;
    } else {
      g.estimate_us = layers_[std::size_t(j)].global_us;
    }
    plan.groups.push_back(g);
    j = c.first - 1;
  }
  std::reverse(plan.groups.begin(), plan.groups.end());
  for (std::size_t g = 0; g + 1 < plan.groups.size(); ++g) {
    const PlannedGroup &left = plan.groups[g], &right = plan.groups[g + 1];
    std::string reason = boundary_reason(left.first, left.last, right.last);
    if (reason == "cheaper") {
      const SpanEstimate merged = estimate(left.first, right.last);
      reason = fmt::format("cheaper: {:.2f} us cut here, {:.2f} us as one group", left.estimate_us + right.estimate_us,
                           merged.time_us);
    }
    plan.boundaries.push_back({left.last, std::move(reason)});
  }
  return plan;
}

}  // namespace tpu_runtime
