// group_planner.h: where a model's layer sequence is cut into layer groups,
// and how finely each group is sliced (docs/tpu-model.md, "Layer groups").
//
// The planner is a contiguous-partition dynamic programme over the layer
// sequence: best[j] = min over i of best[i-1] + cost(i..j), where a span of
// one layer is a global layer (its measured time) and a longer span is a
// layer group whose cost is estimated from prefix sums in O(1) per slice
// count. For each span the smallest slice count whose slice buffers fit
// local memory is found by binary search, and a few larger counts are tried
// too (more slices overlap loads and compute better but pay more halo and
// command overhead).
//
// The estimate of a group sliced into s pieces (N first, then H, then W where
// every op allows it; a W slice of c columns holds c + the span's column
// halo, as a fraction of each row):
//   load  L = bytes of the group input slice (halo rows included) and of
//             the side inputs loaded per slice / bandwidth
//   store S = bytes of the group output slice / bandwidth
//   BDC   C = sum over layers of (layer BDC time) x (rows it computes / H) / n_slices
//   overhead per slice: per_command_us x (layers + 2)
//   time  = L + C + S + (s - 1) x max(L, C, S)      (double-buffered pipeline)
//           + the side inputs loaded once / bandwidth
// and its local memory per NPU:
//   2 x (input slice + output slice) (ping-pong) + every intermediate slice
//   + the side inputs' slices (two of each loaded per slice, one of each
//   loaded once) + the largest _local_bfsz scratch; each tensor slice rounded per
//   (n, channel row) plane to the EU width.
// The planner only sees the figures below; the builder measures them
// (layer_groups.cc) and checks the chosen slicing exactly before recording.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu_runtime {

// An input of a layer other than its chain tensor: a side input, which the
// group loads from global memory beside the chain. It holds every channel
// in local memory and one element along each axis it broadcasts over; when
// it broadcasts over every axis the slicing splits, it is loaded once for
// the whole group, else per slice (two buffers when double-buffered).
struct PlannerSide {
  static constexpr int kBroadcastN = 1, kBroadcastH = 2, kBroadcastW = 4;
  int broadcast = 0;      // kBroadcast* bits
  double bytes = 0;       // the whole tensor in global memory
  double row_bytes = 0;   // per NPU, one row of one n as loaded (one column when broadcast over W)
  double plane_pad = 0;   // per NPU per n: EU rounding of the planes
};

struct PlannerLayer {
  // Why this layer cannot be part of a group at all ("" when it can).
  std::string not_groupable;
  // Why a group cannot continue from the previous layer into this one ("":
  // it can; always "" for layer 0).
  std::string chain_break;
  std::string op;                       // for messages
  bool split_n = true, split_h = true;  // allow_data_split_ on axis 0 / 2
  bool split_w = false;                 // axis 3: allowed, and the layer keeps W
  int n = 1, h = 1, w = 1;              // N, H and W of the layer's output (N = input's)
  int in_h = 0;                         // H of its input (0: h, the layer keeps H)
  // r output rows read stride r + halo input rows (a custom op: stride 1,
  // halo from backward_h_; a conv or pool: its stride, and its window's
  // extent less the stride, which may be negative).
  int stride = 1;
  int halo = 0;
  int halo_w = 0;                       // extra input columns per output slice (backward_w_)
  double in_bytes = 0, out_bytes = 0;   // whole input / output in global memory
  double in_row_bytes = 0, out_row_bytes = 0;  // per NPU, one row of one n
  double in_plane_pad = 0, out_plane_pad = 0;  // per NPU per n: EU rounding of the planes
  double scratch_row_bytes = 0;         // _local_bfsz per NPU per row of one n
  double resident_bytes = 0;            // per NPU, weights in local memory for the whole group
  double bdc_us = 0;                    // BDC time of the whole layer
  double global_us = 0;                 // time as a global layer
  std::vector<PlannerSide> sides;       // side inputs (builtin.expression of several inputs)
};

struct PlannerFigures {
  double gdma_bytes_per_us = 1e4;
  double per_command_us = 0.05;
  double local_mem_bytes = 256 * 1024;  // per NPU
};

struct PlannedGroup {
  int first = 0, last = 0;  // layers, inclusive; first == last: a global layer
  int n_slices = 1, h_slices = 1, w_slices = 1;
  double estimate_us = 0;
  double local_bytes = 0;   // estimated per NPU
  bool grouped() const { return last > first; }
};

struct PlanBoundary {
  int after = 0;  // the cut lies between layer `after` and `after + 1`
  std::string reason;
};

struct GroupPlan {
  std::vector<PlannedGroup> groups;  // covering every layer, in order
  std::vector<PlanBoundary> boundaries;
  double global_us = 0;   // every layer global
  double planned_us = 0;  // the plan's estimate
};

// One span's best slicing: feasible == false when no slice count fits
// (then `why` says what stopped it).
struct SpanEstimate {
  bool feasible = false;
  int n_slices = 1, h_slices = 1, w_slices = 1;
  double time_us = 0, local_bytes = 0;
  std::string why;
};

class GroupPlanner {
 public:
  GroupPlanner(std::vector<PlannerLayer> layers, PlannerFigures figures);
  // The best estimate for layers [first, last] as one group (first < last;
  // every layer groupable and chained).
  SpanEstimate estimate(int first, int last) const;
  // The DP over the whole sequence; `max_group` bounds a group's length
  // (0: no bound).
  GroupPlan plan(int max_group = 0) const;

 private:
  double local_bytes(int first, int last, int n_per, int rows) const;
  // The share of each row a W slice holds (1 when W is not split).
  double column_share(int first, int last, int w_slices) const;
  double time_us(int first, int last, int n_slices, int h_slices, int w_slices) const;
  std::string boundary_reason(int left_first, int after, int right_last) const;
  // The side inputs of layers [first, last] under a slicing: their local
  // bytes per NPU, and the bytes loaded once and per slice.
  struct SideCost {
    double local = 0, once_bytes = 0, slice_bytes = 0;
  };
  SideCost side_cost(int first, int last, int n_slices, int h_slices, int w_slices) const;

  std::vector<PlannerLayer> layers_;
  PlannerFigures fig_;
  // Rows through a span (the layers' strides and halos): layer k's output
  // rows for r output rows of layer j are (scale_[j+1] r + shift_[j+1] -
  // shift_[k+1]) / scale_[k+1], and its input rows the same with k for
  // k + 1 (scale_: the strides' product before the layer, shift_: the
  // halos at the first layer's input scale).
  double input_rows(int first, int last, int rows) const;
  double level(int last, int rows) const;
  // Prefix sums over layers (index k + 1 holds the sum through layer k);
  // the per-row figures divided by scale_ so that a span's sum is one
  // subtraction.
  std::vector<double> scale_, shift_, out_row_, out_row_halo_, out_pad_, bdc_, bdc_halo_, resident_;
  // Per broadcast pattern (PlannerSide::broadcast), prefix sums of the side
  // inputs' bytes, row bytes and plane padding.
  struct SideSums {
    double bytes = 0, row = 0, pad = 0;
  };
  std::array<std::vector<SideSums>, 8> side_;
};

}  // namespace tpu_runtime
