// pipeline_planner.cc: the AutoPipe dynamic programme (pipeline.h,
// docs/pipeline.md).
//
// best[k][b]: the smallest possible slowest-stage time when layers 0..b
// form stages 0..k. Stage k = [a, b] costs transfer_in(a) + compute(a..b) +
// transfer_out(b) and needs weights(a..b) + max live(a..b) bytes, so
//   best[k][b] = min over a of max(best[k - 1][a - 1], cost(a, b)),
// over the a where [a, b] fits the limit and neither end splits a layer
// group. For a fixed b, a walks down from b: the weights and the peak only
// grow, so the walk stops at the first stage too big. O(K n^2) time.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "pipeline/pipeline_internal.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/pipeline.h"

namespace tpu_runtime {

namespace {

using detail::pipeline_bytes_text;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Whether a stage may start at layer `a` / end at layer `b`.
bool may_start(const std::vector<PipelineLayer> &layers, int a) {
  return a == 0 || layers[std::size_t(a) - 1].cut_after;
}
bool may_end(const std::vector<PipelineLayer> &layers, int b) {
  return b + 1 == int(layers.size()) || layers[std::size_t(b)].cut_after;
}

// The first layer of the unit (layer group or single layer) holding `i`.
int unit_first(const std::vector<PipelineLayer> &layers, int i) {
  while (!may_start(layers, i)) --i;
  return i;
}
int unit_last(const std::vector<PipelineLayer> &layers, int i) {
  while (!may_end(layers, i)) ++i;
  return i;
}

std::string layer_label(const std::vector<PipelineLayer> &layers, int i) {
  return fmt::format("layer {} '{}'", i, layers[std::size_t(i)].name);
}

std::string unit_label(const std::vector<PipelineLayer> &layers, int first, int last) {
  if (first == last) return layer_label(layers, first);
  return fmt::format("layers {}..{} ('{}'..'{}', one layer group)", first, last, layers[std::size_t(first)].name,
                     layers[std::size_t(last)].name);
}

struct Sums {
  std::vector<double> time;  // prefix sums: time[i] = sum over layers < i
  explicit Sums(const std::vector<PipelineLayer> &layers) : time(layers.size() + 1, 0) {
    for (std::size_t i = 0; i < layers.size(); ++i) time[i + 1] = time[i] + layers[i].time_us;
  }
};

double stage_cost(const std::vector<PipelineLayer> &layers, const Sums &sums, const PipelineLink &link, int a, int b) {
  const double in = a == 0 ? 0 : link.transfer_us(layers[std::size_t(a) - 1].cut_bytes);
  const double out = b + 1 == int(layers.size()) ? 0 : link.transfer_us(layers[std::size_t(b)].cut_bytes);
  return in + (sums.time[std::size_t(b) + 1] - sums.time[std::size_t(a)]) + out;
}

void check_request(const std::vector<PipelineLayer> &layers, int stages) {
  if (stages < 1) throw Error(fmt::format("pipeline: {} stages: a pipeline has at least 1 stage", stages));
  if (layers.empty()) throw Error("pipeline: the model has no layers to place in stages");
  if (std::size_t(stages) > layers.size())
    throw Error(fmt::format("pipeline: {} stages for {} layers: each stage needs at least one layer", stages,
                            layers.size()));
  int units = 0;
  for (int i = 0; i < int(layers.size()); ++i) units += may_end(layers, i);
  if (stages > units)
    throw Error(fmt::format("pipeline: {} stages, but the {} layers form only {} units a stage boundary may fall "
                            "between (a layer group is never split; tpu_model build --no-groups allows every cut)",
                            stages, layers.size(), units));
}

// Each unit alone must fit: otherwise no plan exists, whatever K.
void check_units_fit(const std::vector<PipelineLayer> &layers, uint64_t limit) {
  for (int first = 0; first < int(layers.size());) {
    const int last = unit_last(layers, first);
    uint64_t weights = 0, peak = 0;
    for (int i = first; i <= last; ++i) {
      weights += layers[std::size_t(i)].weight_bytes;
      peak = std::max(peak, layers[std::size_t(i)].live_bytes);
    }
    if (weights + peak > limit)
      throw Error(
          fmt::format("pipeline: {} alone needs {} ({} of weights + {} of live activations), above the "
                      "stage memory limit of {} ({} bytes); raise --stage-memory",
                      unit_label(layers, first, last), pipeline_bytes_text(weights + peak),
                      pipeline_bytes_text(weights), pipeline_bytes_text(peak), pipeline_bytes_text(limit), limit));
    first = last + 1;
  }
}

// The fewest stages that fit the limit: greedy (a stage's memory only grows
// with its length), for the refusal's message.
int fewest_stages(const std::vector<PipelineLayer> &layers, uint64_t limit) {
  int stages = 0;
  for (int a = 0; a < int(layers.size());) {
    uint64_t weights = 0, peak = 0;
    int end = a - 1;
    for (int b = a; b < int(layers.size()); ++b) {
      weights += layers[std::size_t(b)].weight_bytes;
      peak = std::max(peak, layers[std::size_t(b)].live_bytes);
      if (weights + peak > limit) break;
      if (may_end(layers, b)) end = b;
    }
    ++stages;
    a = end + 1;
  }
  return stages;
}

struct Table {
  std::vector<std::vector<double>> best;  // [stage][last layer]
  std::vector<std::vector<int>> start;    // the first layer of that stage
};

void fill_stage(const std::vector<PipelineLayer> &layers, const Sums &sums, const PipelineLink &link, uint64_t limit,
                int k, Table &t) {
  const int n = int(layers.size());
  for (int b = k; b < n; ++b) {
    if (!may_end(layers, b)) continue;
    uint64_t weights = 0, peak = 0;
    for (int a = b; a >= k; --a) {
      weights += layers[std::size_t(a)].weight_bytes;
      peak = std::max(peak, layers[std::size_t(a)].live_bytes);
      if (weights + peak > limit) break;
      if (!may_start(layers, a) || (k == 0 && a != 0)) continue;
      const double before = k == 0 ? 0 : t.best[std::size_t(k) - 1][std::size_t(a) - 1];
      if (before == kInfinity) continue;
      const double value = std::max(before, stage_cost(layers, sums, link, a, b));
      if (value < t.best[std::size_t(k)][std::size_t(b)]) {
        t.best[std::size_t(k)][std::size_t(b)] = value;
        t.start[std::size_t(k)][std::size_t(b)] = a;
      }
    }
  }
}

struct Move {
  bool possible = false;
  std::string why_not;  // empty stage, memory
  double stage_us = 0, slowest_us = 0;
};

// The split with the cut after `old_after` moved to after `new_after`.
Move try_move(const std::vector<PipelineLayer> &layers, const PipelinePlan &plan, std::size_t boundary, int new_after,
              int receiving) {
  std::vector<int> lasts;
  for (const PipelineStage &s : plan.stages) lasts.push_back(s.last);
  lasts[boundary] = new_after;
  Move m;
  const int first = boundary == 0 ? 0 : lasts[boundary - 1] + 1;
  if (new_after < first || new_after >= lasts[boundary + 1]) {
    m.why_not = "empty";
    return m;
  }
  const std::vector<PipelineStage> stages = evaluate_split(layers, lasts, plan.link);
  const PipelineStage &r = stages[std::size_t(receiving)];
  if (r.memory_bytes() > plan.memory_limit) {
    m.why_not = fmt::format("would need {} in stage {}, above the limit of {}", pipeline_bytes_text(r.memory_bytes()),
                            receiving, pipeline_bytes_text(plan.memory_limit));
    return m;
  }
  m.possible = true;
  m.stage_us = r.time_us;
  for (const PipelineStage &s : stages) m.slowest_us = std::max(m.slowest_us, s.time_us);
  return m;
}

std::string move_text(const std::vector<PipelineLayer> &layers, const PipelinePlan &plan, std::size_t boundary,
                      bool leftwards) {
  const PipelineStage &left = plan.stages[boundary], &right = plan.stages[boundary + 1];
  const int first = leftwards ? unit_first(layers, left.last) : right.first;
  const int last = leftwards ? left.last : unit_last(layers, right.first);
  const int receiving = int(boundary) + (leftwards ? 1 : 0);
  const int giving = int(boundary) + (leftwards ? 0 : 1);
  const std::string what = fmt::format("moving {} to stage {}", unit_label(layers, first, last), receiving);
  const Move m = try_move(layers, plan, boundary, leftwards ? first - 1 : last, receiving);
  if (m.why_not == "empty") return fmt::format("{} would leave stage {} empty", what, giving);
  if (!m.possible) return fmt::format("{} {}", what, m.why_not);
  if (m.slowest_us > plan.slowest_us)
    return fmt::format("{} would raise stage {} to {:.2f} us (slowest {:.2f} us instead of {:.2f} us)", what,
                       receiving, m.stage_us, m.slowest_us, plan.slowest_us);
  return fmt::format("{} would make stage {} {:.2f} us and keep the slowest at {:.2f} us (an equal plan; the "
                     "planner keeps the first it finds)",
                     what, receiving, m.stage_us, m.slowest_us);
}

void explain_boundaries(const std::vector<PipelineLayer> &layers, PipelinePlan &plan) {
  for (std::size_t s = 0; s + 1 < plan.stages.size(); ++s)
    plan.boundaries.push_back(
        {plan.stages[s].last, move_text(layers, plan, s, true) + "; " + move_text(layers, plan, s, false)});
}

}  // namespace

std::string detail::pipeline_bytes_text(uint64_t bytes) {
  if (bytes >= (uint64_t(1) << 30)) return fmt::format("{:.2f} GiB", double(bytes) / double(uint64_t(1) << 30));
  if (bytes >= (uint64_t(1) << 20)) return fmt::format("{:.2f} MiB", double(bytes) / double(1 << 20));
  if (bytes >= (uint64_t(1) << 10)) return fmt::format("{:.1f} KiB", double(bytes) / double(1 << 10));
  return fmt::format("{} B", bytes);
}

double PipelineLink::transfer_us(uint64_t bytes) const { return latency_us + double(bytes) / bytes_per_us; }

PipelineLink default_pipeline_link(std::string_view chip) {
  if (chip == "bm1688")
    return {"global memory (cores of one chip)", 1.0, 12000,
            "bm1688 stages are the chip's TPU cores: a boundary tensor is copied within the shared DDR by GDMA "
            "(global to global, 12 GB/s in the cost model, docs/cmodel.md) after a core-to-core synchronisation "
            "of about 1 us (assumed)"};
  if (chip == "bm1684x")
    return {"PCIe through the host", 2 * kHostCopyLatencyUs, kHostTransferBytesPerUs / 2,
            "bm1684x has one TPU core: stages are cards, and a boundary tensor goes device -> host -> device, two "
            "copies each charged like a host layer's (10 us + 4 GB/s, docs/tpu-model.md \"Host layers\"); no "
            "peer-to-peer DMA is assumed"};
  throw Error(fmt::format("pipeline: unknown chip '{}' (bm1684x or bm1688)", chip));
}

uint64_t default_stage_memory(std::string_view chip, int stages) {
  if (chip == "bm1684x") return uint64_t(12) << 30;  // each card's DDR (docs/cmodel.md)
  if (chip == "bm1688") return (uint64_t(8) << 30) / uint64_t(std::max(stages, 1));  // shared by the cores
  throw Error(fmt::format("pipeline: unknown chip '{}' (bm1684x or bm1688)", chip));
}

std::vector<PipelineStage> evaluate_split(const std::vector<PipelineLayer> &layers, const std::vector<int> &lasts,
                                          const PipelineLink &link) {
  std::vector<PipelineStage> stages;
  int first = 0;
  for (int last : lasts) {
    PipelineStage s;
    s.first = first;
    s.last = last;
    for (int i = first; i <= last; ++i) {
      const PipelineLayer &l = layers[std::size_t(i)];
      s.compute_us += l.time_us;
      s.weight_bytes += l.weight_bytes;
      s.activation_bytes = std::max(s.activation_bytes, l.live_bytes);
    }
    if (first > 0) {
      s.bytes_in = layers[std::size_t(first) - 1].cut_bytes;
      s.transfer_in_us = link.transfer_us(s.bytes_in);
    }
    if (last + 1 < int(layers.size())) {
      s.bytes_out = layers[std::size_t(last)].cut_bytes;
      s.transfer_out_us = link.transfer_us(s.bytes_out);
    }
    s.time_us = s.transfer_in_us + s.compute_us + s.transfer_out_us;
    stages.push_back(s);
    first = last + 1;
  }
  return stages;
}

PipelinePlan plan_pipeline(const std::vector<PipelineLayer> &layers, int stages, uint64_t memory_limit,
                           const PipelineLink &link) {
  check_request(layers, stages);
  check_units_fit(layers, memory_limit);
  const int n = int(layers.size());
  const Sums sums(layers);
  Table t;
  t.best.assign(std::size_t(stages), std::vector<double>(std::size_t(n), kInfinity));
  t.start.assign(std::size_t(stages), std::vector<int>(std::size_t(n), -1));
  for (int k = 0; k < stages; ++k) fill_stage(layers, sums, link, memory_limit, k, t);
  if (t.best[std::size_t(stages) - 1][std::size_t(n) - 1] == kInfinity)
    throw Error(
        fmt::format("pipeline: {} stages of at most {} ({} bytes) each cannot hold the model: it needs at "
                    "least {} (--pipeline {}, or a larger --stage-memory)",
                    stages, pipeline_bytes_text(memory_limit), memory_limit, fewest_stages(layers, memory_limit),
                    fewest_stages(layers, memory_limit)));
  std::vector<int> lasts(static_cast<std::size_t>(stages));
  for (int k = stages - 1, b = n - 1; k >= 0; --k) {
    lasts[std::size_t(k)] = b;
    b = t.start[std::size_t(k)][std::size_t(b)] - 1;
  }
  PipelinePlan plan;
  plan.memory_limit = memory_limit;
  plan.link = link;
  plan.stages = evaluate_split(layers, lasts, link);
  for (std::size_t k = 0; k < plan.stages.size(); ++k)
    if (plan.stages[k].time_us > plan.slowest_us) {
      plan.slowest_us = plan.stages[k].time_us;
      plan.bottleneck = int(k);
    }
  explain_boundaries(layers, plan);
  return plan;
}

std::vector<int> equal_layer_split(std::size_t layers, int stages) {
  std::vector<int> lasts;
  for (int k = 0; k < stages; ++k)
    lasts.push_back(int(std::llround(double(k + 1) * double(layers) / double(stages))) - 1);
  return lasts;
}

}  // namespace tpu_runtime
