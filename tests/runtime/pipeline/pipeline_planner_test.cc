// pipeline_planner_test: the AutoPipe dynamic programme (tpu_runtime/pipeline.h)
//   - on random small instances its slowest stage equals the best of every
//     contiguous split enumerated by brute force (stage times and memory
//     computed here from the definitions in docs/pipeline.md), and it is
//     refused exactly when brute force finds no split;
//   - refusals name the layer, the layer group or the limit;
//   - transfer time on a 3-layer example computed by hand;
//   - the boundary explanations of that example.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/pipeline.h"

namespace {

namespace tr = tpu_runtime;

tr::PipelineLink test_link(double latency_us, double bytes_per_us) {
  return {"test link", latency_us, bytes_per_us, "a link for tests"};
}

// The brute-force reference: every choice of K - 1 cuts among the n - 1
// gaps, each stage's time and memory summed here. nullopt: none fits.
struct Reference {
  double slowest = std::numeric_limits<double>::infinity();
  bool found = false;
};

double reference_stage_time(const std::vector<tr::PipelineLayer> &layers, int a, int b, double latency,
                            double bandwidth) {
  double t = 0;
  for (int i = a; i <= b; ++i) t += layers[std::size_t(i)].time_us;
  if (a > 0) t += latency + double(layers[std::size_t(a) - 1].cut_bytes) / bandwidth;
  if (b + 1 < int(layers.size())) t += latency + double(layers[std::size_t(b)].cut_bytes) / bandwidth;
  return t;
}

uint64_t reference_stage_memory(const std::vector<tr::PipelineLayer> &layers, int a, int b) {
  uint64_t weights = 0, peak = 0;
  for (int i = a; i <= b; ++i) {
    weights += layers[std::size_t(i)].weight_bytes;
    peak = std::max(peak, layers[std::size_t(i)].live_bytes);
  }
  return weights + peak;
}

void enumerate(const std::vector<tr::PipelineLayer> &layers, int stages, uint64_t limit, double latency,
               double bandwidth, std::vector<int> &lasts, Reference &best) {
  const int n = int(layers.size());
  const int first = lasts.empty() ? 0 : lasts.back() + 1;
  if (int(lasts.size()) == stages - 1) {
    lasts.push_back(n - 1);
    double slowest = 0;
    bool fits = first <= n - 1;
    for (std::size_t k = 0; fits && k < lasts.size(); ++k) {
      const int a = k == 0 ? 0 : lasts[k - 1] + 1, b = lasts[k];
      fits = reference_stage_memory(layers, a, b) <= limit;
      slowest = std::max(slowest, reference_stage_time(layers, a, b, latency, bandwidth));
    }
    if (fits) {
      best.found = true;
      best.slowest = std::min(best.slowest, slowest);
    }
    lasts.pop_back();
    return;
  }
  for (int b = first; b < n - 1; ++b) {
    if (!layers[std::size_t(b)].cut_after) continue;
    lasts.push_back(b);
    enumerate(layers, stages, limit, latency, bandwidth, lasts, best);
    lasts.pop_back();
  }
}

std::vector<tr::PipelineLayer> random_layers(test::Seeded &s, int n) {
  std::vector<tr::PipelineLayer> layers(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    tr::PipelineLayer &l = layers[std::size_t(i)];
    l.name = "l" + std::to_string(i);
    l.time_us = s.uniform(0, 400) / 4.0;
    l.weight_bytes = uint64_t(s.uniform(0, 3) == 0 ? 0 : s.uniform(1, 5000));
    l.live_bytes = uint64_t(s.uniform(10, 5000));
    l.cut_bytes = uint64_t(s.uniform(0, 20000));
    l.cut_after = s.uniform(0, 3) != 0;
  }
  return layers;
}

TEST(PipelinePlanner, MatchesBruteForceOnRandomInstances) {
  test::Seeded s;
  int planned = 0, refused = 0;
  for (int round = 0; round < test::rounds(400); ++round) {
    const int n = s.uniform(1, 9);
    const int stages = s.uniform(1, std::min(n, 4));
    const std::vector<tr::PipelineLayer> layers = random_layers(s, n);
    const uint64_t limit = uint64_t(s.uniform(3000, 16000));
    const double latency = s.uniform(0, 8) / 2.0, bandwidth = s.uniform(100, 4000);
    SCOPED_TRACE(testing::Message() << "round " << round << ": " << n << " layers, " << stages << " stages, limit "
                                    << limit);
    Reference best;
    std::vector<int> lasts;
    enumerate(layers, stages, limit, latency, bandwidth, lasts, best);
    std::optional<tr::PipelinePlan> plan;
    try {
      plan = tr::plan_pipeline(layers, stages, limit, test_link(latency, bandwidth));
    } catch (const tr::Error &e) {
      EXPECT_FALSE(best.found) << "refused, but brute force found " << best.slowest << " us: " << e.what();
      ++refused;
      continue;
    }
    ++planned;
    ASSERT_TRUE(best.found) << "planned a split brute force says does not fit";
    EXPECT_NEAR(plan->slowest_us, best.slowest, 1e-9 * std::max(1.0, best.slowest));
    // The plan itself: K contiguous stages, each within the limit, cuts allowed.
    ASSERT_EQ(plan->stages.size(), std::size_t(stages));
    EXPECT_EQ(plan->stages.back().last, n - 1);
    double slowest = 0;
    for (std::size_t k = 0; k < plan->stages.size(); ++k) {
      const tr::PipelineStage &st = plan->stages[k];
      EXPECT_EQ(st.first, k == 0 ? 0 : plan->stages[k - 1].last + 1);
      EXPECT_LE(reference_stage_memory(layers, st.first, st.last), limit);
      if (k + 1 < plan->stages.size()) {
        EXPECT_TRUE(layers[std::size_t(st.last)].cut_after);
      }
      const double t = reference_stage_time(layers, st.first, st.last, latency, bandwidth);
      EXPECT_NEAR(st.time_us, t, 1e-9 * std::max(1.0, t));
      slowest = std::max(slowest, t);
    }
    EXPECT_NEAR(plan->stages[std::size_t(plan->bottleneck)].time_us, slowest, 1e-9 * std::max(1.0, slowest));
    EXPECT_EQ(plan->boundaries.size(), std::size_t(stages - 1));
  }
  // Both outcomes were exercised.
  EXPECT_GT(planned, 0);
  EXPECT_GT(refused, 0);
}

// Three layers: a (10 us) -> 4000 bytes -> b (20 us) -> 8000 bytes -> c (5 us),
// a link of 2 us + 1000 bytes/us. Cut after a: stage 0 = 10 + (2 + 4) = 16,
// stage 1 = (2 + 4) + 20 + 5 = 31. Cut after b: stage 0 = 10 + 20 + (2 + 8) =
// 40, stage 1 = (2 + 8) + 5 = 15. The best is the cut after a, 31 us.
std::vector<tr::PipelineLayer> three_layers() {
  std::vector<tr::PipelineLayer> layers(3);
  layers[0] = {"a", 10, 400, 5000, 4000, true};
  layers[1] = {"b", 20, 300, 9000, 8000, true};
  layers[2] = {"c", 5, 0, 8500, 0, true};
  return layers;
}

TEST(PipelinePlanner, CountsTransfersAsComputedByHand) {
  const tr::PipelinePlan plan = tr::plan_pipeline(three_layers(), 2, 1 << 20, test_link(2, 1000));
  ASSERT_EQ(plan.stages.size(), 2u);
  const tr::PipelineStage &s0 = plan.stages[0], &s1 = plan.stages[1];
  EXPECT_EQ(s0.last, 0);
  EXPECT_DOUBLE_EQ(s0.compute_us, 10);
  EXPECT_DOUBLE_EQ(s0.transfer_in_us, 0);
  EXPECT_DOUBLE_EQ(s0.transfer_out_us, 6);
  EXPECT_DOUBLE_EQ(s0.time_us, 16);
  EXPECT_EQ(s0.bytes_out, 4000u);
  EXPECT_DOUBLE_EQ(s1.transfer_in_us, 6);
  EXPECT_DOUBLE_EQ(s1.compute_us, 25);
  EXPECT_DOUBLE_EQ(s1.transfer_out_us, 0);
  EXPECT_DOUBLE_EQ(s1.time_us, 31);
  EXPECT_EQ(s1.bytes_in, 4000u);
  // Memory: weights summed, activations the peak of the stage's layers.
  EXPECT_EQ(s0.memory_bytes(), 400u + 5000u);
  EXPECT_EQ(s1.weight_bytes, 300u);
  EXPECT_EQ(s1.activation_bytes, 9000u);
  EXPECT_EQ(plan.bottleneck, 1);
  EXPECT_DOUBLE_EQ(plan.slowest_us, 31);
}

// The transfers decide: a (20 us) -> 100 bytes -> b (3 us) -> 10000 bytes ->
// c (21 us). Free transfers: cut after b, max(23, 21) = 23 < max(20, 24).
// At 1000 bytes/us: cut after a, max(20.1, 0.1 + 24) = 24.1 against
// max(23 + 10, 10 + 21) = 33.
TEST(PipelinePlanner, TransfersMoveTheCut) {
  std::vector<tr::PipelineLayer> layers(3);
  layers[0] = {"a", 20, 0, 10, 100, true};
  layers[1] = {"b", 3, 0, 10, 10000, true};
  layers[2] = {"c", 21, 0, 10, 0, true};
  const tr::PipelinePlan free = tr::plan_pipeline(layers, 2, 1 << 20, test_link(0, 1e15));
  EXPECT_EQ(free.stages[0].last, 1);
  EXPECT_NEAR(free.slowest_us, 23, 1e-9);
  const tr::PipelinePlan costly = tr::plan_pipeline(layers, 2, 1 << 20, test_link(0, 1000));
  EXPECT_EQ(costly.stages[0].last, 0);
  EXPECT_DOUBLE_EQ(costly.slowest_us, 24.1);
  EXPECT_DOUBLE_EQ(costly.stages[0].time_us, 20.1);
}

TEST(PipelinePlanner, ExplainsEachBoundary) {
  const tr::PipelinePlan plan = tr::plan_pipeline(three_layers(), 2, 1 << 20, test_link(2, 1000));
  ASSERT_EQ(plan.boundaries.size(), 1u);
  EXPECT_EQ(plan.boundaries[0].after, 0);
  const std::string &why = plan.boundaries[0].reason;
  EXPECT_CONTAINS(why, "moving layer 0 'a' to stage 1 would leave stage 0 empty");
  // b into stage 0: 10 + 20 + (2 + 8) = 40 us.
  EXPECT_CONTAINS(why, "moving layer 1 'b' to stage 0 would raise stage 0 to 40.00 us (slowest 40.00 us instead of "
                       "31.00 us)");
  // A memory limit that b cannot join a in: 400 + 300 weights + 9000 peak > 9300.
  const tr::PipelinePlan tight = tr::plan_pipeline(three_layers(), 2, 9300, test_link(2, 1000));
  EXPECT_CONTAINS(tight.boundaries[0].reason, "moving layer 1 'b' to stage 0 would need 9.5 KiB in stage 0, above "
                                              "the limit of 9.1 KiB");
}

std::string refusal(const std::vector<tr::PipelineLayer> &layers, int stages, uint64_t limit) {
  try {
    tr::plan_pipeline(layers, stages, limit, test_link(1, 1000));
  } catch (const tr::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "no refusal";
  return "";
}

TEST(PipelinePlanner, RefusesWithTheLayerOrLimitNamed) {
  EXPECT_CONTAINS(refusal(three_layers(), 4, 1 << 20), "4 stages for 3 layers: each stage needs at least one layer");
  EXPECT_CONTAINS(refusal(three_layers(), 0, 1 << 20), "0 stages");
  EXPECT_CONTAINS(refusal({}, 1, 1 << 20), "no layers");
  // b alone: 300 + 9000 bytes.
  EXPECT_CONTAINS(refusal(three_layers(), 2, 9000),
                  "layer 1 'b' alone needs 9.1 KiB (300 B of weights + 8.8 KiB of live activations), above the stage "
                  "memory limit of 8.8 KiB (9000 bytes)");
  // Each of four layers fits alone (60 + 10 bytes) but no two together.
  std::vector<tr::PipelineLayer> four(4, tr::PipelineLayer{"x", 1, 60, 10, 10, true});
  EXPECT_CONTAINS(refusal(four, 2, 100), "2 stages of at most 100 B (100 bytes) each cannot hold the model: it needs "
                                         "at least 4 (--pipeline 4");
  // a and b in one layer group: two units, never three stages, and the
  // group is named when it is too big.
  std::vector<tr::PipelineLayer> grouped = three_layers();
  grouped[0].cut_after = false;
  EXPECT_CONTAINS(refusal(grouped, 3, 1 << 20), "3 stages, but the 3 layers form only 2 units");
  EXPECT_CONTAINS(refusal(grouped, 2, 9350), "layers 0..1 ('a'..'b', one layer group) alone needs");
  const tr::PipelinePlan plan = tr::plan_pipeline(grouped, 2, 1 << 20, test_link(2, 1000));
  EXPECT_EQ(plan.stages[0].last, 1);  // the only cut allowed
}

TEST(PipelinePlanner, EqualLayerSplitAndLinks) {
  EXPECT_EQ(tr::equal_layer_split(10, 3), (std::vector<int>{2, 6, 9}));
  EXPECT_EQ(tr::equal_layer_split(4, 4), (std::vector<int>{0, 1, 2, 3}));
  // bm1684x: two host copies of 10 us + 4000 bytes/us: 8000 bytes -> 2 x (10 + 2) us.
  EXPECT_DOUBLE_EQ(tr::default_pipeline_link("bm1684x").transfer_us(8000), 24);
  // bm1688: 1 us + 12000 bytes/us.
  EXPECT_DOUBLE_EQ(tr::default_pipeline_link("bm1688").transfer_us(24000), 3);
  EXPECT_EQ(tr::default_stage_memory("bm1684x", 4), uint64_t(12) << 30);
  EXPECT_EQ(tr::default_stage_memory("bm1688", 2), uint64_t(4) << 30);
  EXPECT_THROW(tr::default_pipeline_link("bm1690"), tr::Error);
}

}  // namespace
