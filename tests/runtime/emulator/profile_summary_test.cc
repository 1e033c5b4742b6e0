// profile_summary_test: the profile summary (tpu_runtime/profile_summary.h)
// of small hand-written kernels, checked against figures worked out here
// from the chip's cost formulas (docs/cmodel.md "Time"), not from the code
// under test; the emulator's concurrency against the intersection of the
// trace's intervals; the trace's metadata; the SVG's title, labels and
// windows (tpu_runtime/profile.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "tpu_kernel.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/profile.h"
#include "tpu_runtime/profile_summary.h"
#include "support/test_support.h"

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::json;

// ---- bm1684x's cost formulas, from docs/cmodel.md --------------------------------
// The TIU and the GDMA (and the SDMA) run at 1000 MHz: a cycle is a ns.
// GDMA: ceil(bytes / (bandwidth / clock)) + 64 cycles of latency, the
// bandwidths 58 GiB/s S2L, 44 GiB/s L2S, 28 GiB/s S2S.
// BDC arithmetic: ceil(elements per NPU / EU) passes of 1 cycle + 16 cycles
// to issue; the EU takes 64 bytes: 16 fp32 elements.
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
double dma_ns(double bytes, double gib_per_s) { return std::ceil(bytes / (gib_per_s * kGiB / 1e9)) + 64; }
double s2l_ns(double bytes) { return dma_ns(bytes, 58); }
double l2s_ns(double bytes) { return dma_ns(bytes, 44); }
double s2s_ns(double bytes) { return dma_ns(bytes, 28); }
double add_ns(double elements_per_npu) { return std::ceil(elements_per_npu / 16) + 16; }

struct Job {
  global_addr_t input = 0, output = 0;
};
Job g;

// 64 channels (one per NPU) of 8 x 16 fp32: 128 elements, 512 bytes per NPU.
const dim4 kTile = {1, 64, 8, 16};
constexpr double kTileBytes = 64 * 8 * 16 * 4;
// 64 channels of 1 x 16 fp32: 4096 bytes.
const dim4 kSmall = {1, 64, 1, 16};
constexpr double kSmallBytes = 64 * 16 * 4;
// 64 channels of 32 x 64 fp32: 2048 elements per NPU.
const dim4 kLarge = {1, 64, 32, 64};

// Load, add, store: one engine at a time.
void serial_kernel(const void *) {
  tpu_gdma_cpy_S2L(0, g.input, &kTile, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_add(4 * BANK_SIZE, 0, 0, &kTile, nullptr, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(g.output, 4 * BANK_SIZE, &kTile, nullptr, nullptr, DT_FP32);
}

// A load, then a parallel region with two long adds on the BDC, two loads
// on the GDMA and a copy on the SDMA, then a store.
void parallel_kernel(const void *) {
  tpu_gdma_cpy_S2L(0, g.input, &kSmall, nullptr, nullptr, DT_FP32);
  tpu_parallel_start();
  tpu_bdc_fp_add(10 * BANK_SIZE, 8 * BANK_SIZE, 8 * BANK_SIZE, &kLarge, nullptr, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_add(12 * BANK_SIZE, 8 * BANK_SIZE, 8 * BANK_SIZE, &kLarge, nullptr, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_S2L(BANK_SIZE, g.input, &kSmall, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_S2L(2 * BANK_SIZE, g.input, &kSmall, nullptr, nullptr, DT_FP32);
  tpu_sdma_system_cpy(g.output + 65536, g.input, 64, DT_FP32);
  tpu_parallel_end();
  tpu_gdma_cpy_L2S(g.output, 0, &kSmall, nullptr, nullptr, DT_FP32);
}

// Four adds of tiles (512 bytes per NPU), two of them with two operands in
// one bank.
void bank_kernel(const void *) {
  const local_addr_t bank = BANK_SIZE;
  tpu_bdc_fp_add(2 * bank, 0, bank, &kTile, nullptr, nullptr, nullptr, DT_FP32);            // banks 2, 0, 1
  tpu_bdc_fp_add(1024, 0, bank, &kTile, nullptr, nullptr, nullptr, DT_FP32);                // 0, 0, 1: conflict
  tpu_bdc_fp_add(0, 0, bank, &kTile, nullptr, nullptr, nullptr, DT_FP32);                   // in place: 0, 1
  tpu_bdc_fp_add(2 * bank, bank - 256, bank + 1024, &kTile, nullptr, nullptr, nullptr, DT_FP32);  // 2, 0-1, 1: conflict
}

class Summary : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
    g.input = cmodel_global_alloc(1 << 20);
    g.output = cmodel_global_alloc(1 << 20);
    ASSERT_NE(g.input, 0u);
    ASSERT_NE(g.output, 0u);
    std::vector<float> data((1 << 20) / 4, 1.5f);
    ASSERT_EQ(cmodel_global_write(g.input, data.data(), 1 << 20), 0);
    // The adds read local memory no command wrote: what they compute does
    // not matter here, only their costs and operands.
    ASSERT_EQ(cmodel_set_option("uninitialized_reads", "off"), 0) << cmodel_last_error();
  }
  void TearDown() override {
    cmodel_set_option("uninitialized_reads", "error");
    cmodel_close();
  }

  std::string run(void (*kernel)(const void *)) {
    EXPECT_EQ(cmodel_run(kernel, nullptr), 0) << cmodel_last_error();
    return cmodel_last_run_stats();
  }
};

// Figures in microseconds, compared at the emulator's picosecond rounding.
constexpr double kEps = 1e-6;

TEST_F(Summary, SerialKernelByHand) {
  const double load = s2l_ns(kTileBytes), add = add_ns(128), store = l2s_ns(kTileBytes);
  ASSERT_EQ(load, 591);  // ceil(32768 / 62.277) + 64
  ASSERT_EQ(add, 24);    // 8 passes + 16
  ASSERT_EQ(store, 758);  // ceil(32768 / 47.245) + 64
  const double total = load + add + store;

  const tr::ProfileSummary s = tr::summarize_profile(tr::profile_figures(run(serial_kernel)));
  EXPECT_NEAR(s.total_us, total / 1e3, kEps);
  EXPECT_NEAR(s.tiu_busy_us, add / 1e3, kEps);
  EXPECT_NEAR(s.gdma_busy_us, (load + store) / 1e3, kEps);
  EXPECT_NEAR(s.tiu_ratio, add / total, 1e-6);
  EXPECT_NEAR(s.gdma_ratio, (load + store) / total, 1e-6);
  EXPECT_NEAR(s.parallelism, 1.0, 1e-6);  // never both, never idle
  EXPECT_EQ(s.concurrency, 0);
  EXPECT_EQ(s.tiu_commands, 1u);
  EXPECT_EQ(s.gdma_commands, 2u);
  EXPECT_EQ(s.sdma_commands, 0u);
  // The add reads one operand twice, at other banks than its output's.
  EXPECT_EQ(s.bank_conflicts, 0u);
  EXPECT_EQ(s.bank_conflict_ratio, 0);
  ASSERT_EQ(s.directions.size(), 2u);
  const tr::DirectionSummary &in = s.directions[0], &out = s.directions[1];
  EXPECT_EQ(in.engine + " " + in.direction, "GDMA S2L");
  EXPECT_EQ(in.bytes, uint64_t(kTileBytes));
  EXPECT_EQ(in.commands, 1u);
  EXPECT_NEAR(in.busy_us, load / 1e3, kEps);
  // bytes / ns = GB/s.
  EXPECT_NEAR(in.busy_gbps, kTileBytes / load, 1e-6);
  EXPECT_NEAR(in.average_gbps, kTileBytes / total, 1e-6);
  EXPECT_EQ(out.engine + " " + out.direction, "GDMA L2S");
  EXPECT_NEAR(out.busy_gbps, kTileBytes / store, 1e-6);
  EXPECT_NEAR(out.average_gbps, kTileBytes / total, 1e-6);
}

TEST_F(Summary, ParallelRegionByHand) {
  const double load = s2l_ns(kSmallBytes), add = add_ns(2048), copy = s2s_ns(256), store = l2s_ns(kSmallBytes);
  ASSERT_EQ(load, 130);  // ceil(4096 / 62.277) + 64
  ASSERT_EQ(add, 144);   // 128 passes + 16
  ASSERT_EQ(copy, 73);   // ceil(256 / 30.065) + 64
  ASSERT_EQ(store, 151);  // ceil(4096 / 47.245) + 64
  // The region starts at t = 130 when the first load ends; inside it the
  // BDC runs [130, 274) and [274, 418), the GDMA [130, 260) and [260, 390),
  // the SDMA [130, 203). It ends when the BDC does, at 418; the store runs
  // [418, 569).
  const double region_end = load + 2 * add, total = region_end + store;
  // Both busy: [130, 260) with the first add, [260, 274) the first add and
  // the second load, [274, 390) the second add and the second load.
  const double both = 130 + 14 + 116;
  ASSERT_EQ(total, 569);

  const std::string stats = run(parallel_kernel);
  const tr::ProfileSummary s = tr::summarize_profile(tr::profile_figures(stats));
  EXPECT_NEAR(s.total_us, total / 1e3, kEps);
  EXPECT_NEAR(s.tiu_busy_us, 2 * add / 1e3, kEps);
  EXPECT_NEAR(s.gdma_busy_us, (3 * load + store) / 1e3, kEps);
  EXPECT_NEAR(s.concurrent_us, both / 1e3, kEps);
  EXPECT_NEAR(s.tiu_ratio, 2 * add / total, 1e-6);
  EXPECT_NEAR(s.gdma_ratio, (3 * load + store) / total, 1e-6);
  EXPECT_NEAR(s.parallelism, (2 * add + 3 * load + store) / total, 1e-6);
  EXPECT_NEAR(s.concurrency, both / total, 1e-6);
  // Not what busy time minus run time gives: the SDMA was busy too.
  EXPECT_NEAR(Json::parse(stats).at("overlap_us").get<double>(), (2 * add + 3 * load + store + copy - total) / 1e3,
              kEps);
  EXPECT_EQ(s.tiu_commands, 2u);
  EXPECT_EQ(s.gdma_commands, 4u);
  EXPECT_EQ(s.sdma_commands, 1u);
  ASSERT_EQ(s.directions.size(), 3u);
  EXPECT_EQ(s.directions[0].direction, "S2L");
  EXPECT_EQ(s.directions[0].commands, 3u);
  EXPECT_EQ(s.directions[0].bytes, uint64_t(3 * kSmallBytes));
  EXPECT_NEAR(s.directions[0].busy_gbps, 3 * kSmallBytes / (3 * load), 1e-6);
  EXPECT_EQ(s.directions[1].direction, "L2S");
  EXPECT_NEAR(s.directions[1].busy_us, store / 1e3, kEps);
  EXPECT_EQ(s.directions[2].engine + " " + s.directions[2].direction, "SDMA S2S");
  EXPECT_EQ(s.directions[2].bytes, 256u);
  EXPECT_NEAR(s.directions[2].busy_gbps, 256 / copy, 1e-6);
  EXPECT_NEAR(s.directions[2].average_gbps, 256 / total, 1e-6);
}

// BANK_SIZE is 16 KiB on bm1684x and 8 KiB on bm1688: the same kernel has
// the same conflicts on both.
TEST_F(Summary, BankConflictsByHand) {
  for (const char *chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    ASSERT_EQ(cmodel_open(chip), 0) << cmodel_last_error();
    const tr::ProfileSummary s = tr::summarize_profile(tr::profile_figures(run(bank_kernel)));
    EXPECT_EQ(s.tiu_commands, 4u);
    EXPECT_EQ(s.bank_conflicts, 2u);
    EXPECT_DOUBLE_EQ(s.bank_conflict_ratio, 0.5);
  }
}

// The emulator keeps the concurrency as its commands are booked; the
// trace has every command's interval: their intersection is the same.
TEST_F(Summary, ConcurrencyIsTheIntersectionOfTheTracedIntervals) {
  ASSERT_EQ(cmodel_trace_enable(1), 0) << cmodel_last_error();
  const tr::ProfileFigures f = tr::profile_figures(run(parallel_kernel));
  const Json trace = Json::parse(cmodel_trace_json());
  std::vector<std::pair<double, double>> gdma, bdc;
  for (const Json &e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const double ts = e.at("ts"), end = ts + e.at("dur").get<double>();
    if (e.at("cat") == "GDMA") gdma.emplace_back(ts, end);
    if (e.at("cat") == "BDC") bdc.emplace_back(ts, end);
  }
  double both = 0;
  for (const auto &[a0, a1] : gdma)
    for (const auto &[b0, b1] : bdc) both += std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
  EXPECT_NEAR(f.concurrent_us, both, kEps);
  EXPECT_GT(both, 0);
}

// Runs add up: cmodel_total_stats of two runs, and their figures added.
TEST_F(Summary, FiguresAddUpOverRuns) {
  ASSERT_EQ(cmodel_total_stats_reset(), 0);
  tr::ProfileFigures sum = tr::profile_figures(run(serial_kernel));
  sum += tr::profile_figures(run(parallel_kernel));
  const tr::ProfileFigures total = tr::profile_figures(cmodel_total_stats());
  EXPECT_NEAR(total.total_us, sum.total_us, kEps);
  EXPECT_NEAR(total.concurrent_us, sum.concurrent_us, kEps);
  EXPECT_NEAR(total.tiu_busy_us, sum.tiu_busy_us, kEps);
  EXPECT_EQ(total.gdma_commands, sum.gdma_commands);
  EXPECT_EQ(total.gdma.at("S2L").bytes, sum.gdma.at("S2L").bytes);
  EXPECT_NEAR(total.gdma.at("L2S").busy_us, sum.gdma.at("L2S").busy_us, kEps);
  EXPECT_EQ(total.sdma.at("S2S").commands, 1u);
  const double serial_total = (591 + 24 + 758) / 1e3, parallel_total = 569 / 1e3;
  EXPECT_NEAR(tr::summarize_profile(total).concurrency, 0.260 / (serial_total + parallel_total), 1e-6);
}

TEST(SummaryOf, NothingGivesZeroesNotNaN) {
  for (const char *stats : {"{}", "not json", "[]"}) {
    const tr::ProfileSummary s = tr::summarize_profile(tr::profile_figures(stats));
    EXPECT_EQ(s.total_us, 0);
    EXPECT_EQ(s.tiu_ratio, 0);
    EXPECT_EQ(s.parallelism, 0);
    EXPECT_EQ(s.concurrency, 0);
    EXPECT_EQ(s.bank_conflict_ratio, 0);
    EXPECT_TRUE(s.directions.empty());
  }
}

TEST(SummaryOf, JsonRoundTrip) {
  tr::ProfileFigures f;
  f.total_us = 10;
  f.tiu_busy_us = 4;
  f.gdma_busy_us = 8;
  f.concurrent_us = 2;
  f.tiu_commands = 4;
  f.gdma_commands = 3;
  f.bank_conflicts = 1;
  f.gdma["S2L"] = {4000, 2, 2};
  f.sdma["S2S"] = {100, 1, 1};
  const tr::ProfileSummary s = tr::summarize_profile(f);
  EXPECT_DOUBLE_EQ(s.parallelism, 1.2);
  EXPECT_DOUBLE_EQ(s.concurrency, 0.2);
  EXPECT_DOUBLE_EQ(s.bank_conflict_ratio, 0.25);
  EXPECT_DOUBLE_EQ(s.directions[0].busy_gbps, 2.0);      // 4000 bytes in 2 us
  EXPECT_DOUBLE_EQ(s.directions[0].average_gbps, 0.4);  // over 10 us
  const nlohmann::ordered_json j = tr::profile_summary_json(s);
  EXPECT_EQ(j.at("tiu").at("ratio"), 0.4);
  EXPECT_EQ(j.at("bank_conflicts").at("commands"), 1);
  const tr::ProfileSummary back = tr::profile_summary_from_json(Json::parse(j.dump()));
  EXPECT_EQ(tr::profile_summary_json(back), j);
  EXPECT_EQ(tr::profile_summary_line(s), "TIU 40.0%  GDMA 80.0%  parallelism 120.0%  concurrency 20.0%  bank conflicts 1/4");
  const std::vector<std::string> lines = tr::profile_direction_lines(s);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "GDMA S2L 3.9 KiB in 2 commands, 2.000 us busy: 2.0 GB/s busy, 0.4 GB/s over the run");
}

// ---- the SVG and the trace's metadata -------------------------------------------

// Two cases of 3 us back to back, each a 2 us load and a 1 us add.
std::string two_case_trace() {
  Json events = Json::array();
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "bm1684x"}}}});
  for (const auto &[tid, name] : std::vector<std::pair<int, std::string>>{{1, "cases"}, {100, "GDMA"}, {101, "BDC"}})
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}});
  for (int c = 0; c < 2; ++c) {
    const double t = 3.0 * c;
    events.push_back({{"ph", "X"}, {"name", c ? "global firmware" : "global backend"}, {"pid", 1}, {"tid", 1},
                      {"ts", t}, {"dur", 3.0}});
    events.push_back({{"ph", "X"}, {"name", "tpu_gdma_cpy_S2L"}, {"pid", 1}, {"tid", 100}, {"ts", t}, {"dur", 2.0},
                      {"args", {{"bytes", 4096}}}});
    events.push_back({{"ph", "X"}, {"name", "tpu_bdc_fp_add"}, {"pid", 1}, {"tid", 101}, {"ts", t + 2}, {"dur", 1.0},
                      {"args", {{"elements", 512}}}});
  }
  return Json({{"traceEvents", events}, {"otherData", {{"clock_us", 6.0}}}}).dump();
}

// The op tester's trace holds every case back to back: the title gave
// their sum (twice the op's time for a global-only op).
TEST(TraceSvgTitle, GivesTheTimeOfOneRun) {
  const std::string svg = tr::trace_svg(two_case_trace());
  EXPECT_CONTAINS(svg, "bm1684x: global backend 3.000 us per run; 2 runs drawn back to back (4 commands in 6.000 us)");
  // Boxes wide enough carry their command's name.
  EXPECT_CONTAINS(svg, ">gdma_cpy_S2L</text>");
  EXPECT_CONTAINS(svg, ">bdc_fp_add</text>");
}

TEST(TraceSvgTitle, AWindowDrawsOneCase) {
  const std::vector<tr::TraceLaneSpan> cases = tr::trace_lane_spans(two_case_trace(), "cases");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[1].name, "global firmware");
  EXPECT_EQ(cases[1].start_us, 3.0);
  EXPECT_EQ(cases[1].end_us, 6.0);
  tr::SvgOptions options;
  options.from_us = cases[1].start_us;
  options.to_us = cases[1].end_us;
  const std::string svg = tr::trace_svg(two_case_trace(), options);
  EXPECT_CONTAINS(svg, "bm1684x: 2 commands in 3.000 us");
  EXPECT_CONTAINS(svg, "global firmware");
  EXPECT_EQ(svg.find("global backend"), std::string::npos) << svg;
  EXPECT_CONTAINS(svg, "tpu_bdc_fp_add on BDC: 2.000 us .. 3.000 us");  // on the window's clock
  options.from_us = 4;
  options.to_us = 4;
  EXPECT_THROW(tr::trace_svg(two_case_trace(), options), tr::Error);
}

TEST(TraceMetadata, AddedAsTheRootMetadataMember) {
  const std::string trace = two_case_trace();
  const std::string with = tr::trace_with_metadata(trace, {{"profile_summary", {{"total", 1}}}});
  const Json doc = Json::parse(with);
  EXPECT_EQ(doc.at("metadata").at("profile_summary").at("total"), 1);
  EXPECT_EQ(doc.at("traceEvents"), Json::parse(trace).at("traceEvents"));
  EXPECT_EQ(doc.at("otherData"), Json::parse(trace).at("otherData"));
  EXPECT_THROW(tr::trace_with_metadata(with, {{"again", 1}}), tr::Error);
  EXPECT_THROW(tr::trace_with_metadata("{}", {{"x", 1}}), tr::Error);
}

}  // namespace
