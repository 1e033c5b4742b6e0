// timeline_test: the cost model books commands serially outside parallel
// regions and overlaps GDMA with BDC inside them; GDMA cycles follow the
// chip's bandwidth for the direction plus a fixed latency.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cmodel/chip_spec.h"
#include "cmodel/timeline.h"

namespace {

using cmodel::Direction;
using cmodel::Engine;

const cmodel::ChipSpec &chip(const char *name) { return *cmodel::find_chip(name); }

TEST(Timeline, GdmaCyclesFollowBandwidthAndLatency) {
  for (const char *name : {"bm1684x", "bm1688"}) {
    const cmodel::ChipSpec &c = chip(name);
    cmodel::Timeline t(c);
    for (Direction d : {Direction::S2L, Direction::L2S, Direction::S2S, Direction::L2L}) {
      const uint64_t bytes = 1 << 20;
      // bytes / (bytes per second) seconds, in GDMA cycles.
      const double expected = std::ceil(bytes * c.gdma_mhz * 1e6 / c.gdma_bytes_per_s[int(d)]) + c.gdma_latency_cycles;
      EXPECT_NEAR(t.gdma_cycles(d, bytes), expected, 1.0) << name << " " << cmodel::direction_name(d);
    }
    EXPECT_LT(t.gdma_cycles(Direction::S2L, 1 << 20), t.gdma_cycles(Direction::S2S, 1 << 20))
        << name << ": S2S is the slowest direction";
  }
}

TEST(Timeline, SerialOutsideParallelRegions) {
  const cmodel::ChipSpec &c = chip("bm1684x");  // both engines at 1000 MHz: 1 cycle = 1 ns
  cmodel::Timeline t(c);
  t.issue(Engine::gdma, 1000);
  t.issue(Engine::bdc, 500);
  t.issue(Engine::gdma, 250);
  t.sync();
  EXPECT_DOUBLE_EQ(t.now_ns(), 1750);
  EXPECT_DOUBLE_EQ(t.stats(Engine::gdma).cycles, 1250);
  EXPECT_EQ(t.stats(Engine::gdma).commands, 2u);
  EXPECT_EQ(t.stats(Engine::bdc).commands, 1u);
}

TEST(Timeline, GdmaAndBdcOverlapInsideARegion) {
  const cmodel::ChipSpec &c = chip("bm1684x");
  cmodel::Timeline t(c);
  t.issue(Engine::gdma, 100);  // before the region: 0..100
  t.parallel_start();
  const auto load = t.issue(Engine::gdma, 1000);
  const auto compute = t.issue(Engine::bdc, 600);
  const auto compute2 = t.issue(Engine::bdc, 600);
  EXPECT_DOUBLE_EQ(load.start_ns, 100);
  EXPECT_DOUBLE_EQ(compute.start_ns, 100) << "BDC must not wait for the GDMA inside a region";
  EXPECT_DOUBLE_EQ(compute2.start_ns, 700) << "commands of one engine stay in order";
  t.parallel_end();
  EXPECT_DOUBLE_EQ(t.now_ns(), 1300);  // the region ends with its slower engine
  const auto after = t.issue(Engine::gdma, 10);
  EXPECT_DOUBLE_EQ(after.start_ns, 1300);
}

TEST(Timeline, EnginesUseTheirOwnClocks) {
  const cmodel::ChipSpec &c = chip("bm1688");  // TIU 900 MHz, GDMA 750 MHz
  cmodel::Timeline t(c);
  t.issue(Engine::bdc, 900);
  t.issue(Engine::gdma, 750);
  t.sync();
  EXPECT_NEAR(t.now_ns(), 2000, 1e-9);
}

TEST(Timeline, StatsJsonReportsOverlap) {
  const cmodel::ChipSpec &c = chip("bm1684x");
  cmodel::Timeline t(c);
  cmodel::RunStats stats;
  t.parallel_start();
  t.issue(Engine::gdma, 1000);
  t.issue(Engine::bdc, 400);
  t.parallel_end();
  const auto json = nlohmann::json::parse(cmodel::stats_json(c, t, stats));
  EXPECT_NEAR(json["total_us"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(json["overlap_us"].get<double>(), 0.4, 1e-9);
  EXPECT_NEAR(json["engines"]["bdc"]["busy_us"].get<double>(), 0.4, 1e-9);
  EXPECT_EQ(json["engines"]["gdma"]["commands"].get<int>(), 1);
}

}  // namespace
