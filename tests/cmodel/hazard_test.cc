// hazard_test: inside a parallel region the GDMA and BDC are not ordered;
// a BDC command using local memory that a GDMA command of the same region
// writes (or the reverse) is reported with both call sites, whatever the
// estimated timeline says, and a correctly double-buffered kernel runs
// clean, with its transfers hidden behind compute.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

struct Job {
  global_addr_t input = 0, output = 0;
  int tiles = 0;
  dim4 tile{};
  int gdma_line = 0, bdc_line = 0;
  bool load_first = false;  // tiled_store_kernel: each region starts with a load
  int reached = -1;         // tiled_store_kernel: the last tile it began
};
Job g;

std::string error() { return cmodel_last_error(); }

// Loads into the buffer the BDC reads in the same region.
void load_while_computing_kernel(const void *) {
  tpu_parallel_start();
  g.gdma_line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(0, g.input, &g.tile, nullptr, nullptr, DT_FP32);
  g.bdc_line = __LINE__ + 1;
  tpu_bdc_fp_add(4 * BANK_SIZE, 0, 0, &g.tile, nullptr, nullptr, nullptr, DT_FP32);
  tpu_parallel_end();
}

// The BDC command comes first in program order and ends before the GDMA
// one does; they still run side by side.
void compute_then_load_kernel(const void *) {
  tpu_gdma_cpy_S2L(0, g.input, &g.tile, nullptr, nullptr, DT_FP32);
  tpu_parallel_start();
  g.bdc_line = __LINE__ + 1;
  tpu_bdc_fp_add(4 * BANK_SIZE, 0, 0, &g.tile, nullptr, nullptr, nullptr, DT_FP32);
  g.gdma_line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(0, g.input, &g.tile, nullptr, nullptr, DT_FP32);
  tpu_parallel_end();
}

// Stores a buffer the BDC overwrites in the same region.
void store_while_overwriting_kernel(const void *) {
  tpu_gdma_cpy_S2L(0, g.input, &g.tile, nullptr, nullptr, DT_FP32);
  tpu_parallel_start();
  g.gdma_line = __LINE__ + 1;
  tpu_gdma_cpy_L2S(g.output, 0, &g.tile, nullptr, nullptr, DT_FP32);
  g.bdc_line = __LINE__ + 1;
  tpu_bdc_fp_mul(0, 0, 0, &g.tile, nullptr, nullptr, nullptr, DT_FP32);
  tpu_parallel_end();
}

// output[i] = input[i] + input[i], tile by tile, loading tile i + 1 while
// computing tile i: buffers A/B for input, C/D for output.
void double_buffered_kernel(const void *) {
  const unsigned long long tile_bytes = 4ull * g.tile.n * g.tile.c * g.tile.h * g.tile.w;
  const local_addr_t bank = local_addr_t(BANK_SIZE);
  const local_addr_t in[2] = {0, 4 * bank}, out[2] = {8 * bank, 12 * bank};
  tpu_gdma_cpy_S2L(in[0], g.input, &g.tile, nullptr, nullptr, DT_FP32);
  for (int i = 0; i < g.tiles; ++i) {
    tpu_parallel_start();
    if (i + 1 < g.tiles) tpu_gdma_cpy_S2L(in[(i + 1) % 2], g.input + (i + 1) * tile_bytes, &g.tile, nullptr, nullptr, DT_FP32);
    if (i > 0) tpu_gdma_cpy_L2S(g.output + (i - 1) * tile_bytes, out[(i - 1) % 2], &g.tile, nullptr, nullptr, DT_FP32);
    tpu_bdc_fp_add(out[i % 2], in[i % 2], in[i % 2], &g.tile, nullptr, nullptr, nullptr, DT_FP32);
    tpu_parallel_end();
  }
  tpu_gdma_cpy_L2S(g.output + (g.tiles - 1) * tile_bytes, out[(g.tiles - 1) % 2], &g.tile, nullptr, nullptr, DT_FP32);
}

// Same local offsets, but on NPUs the other command does not touch.
void disjoint_npus_kernel(const void *) {
  const dim4 few = {1, 4, g.tile.h, g.tile.w};
  tpu_gdma_cpy_S2L(8 * LOCAL_MEM_SIZE, g.input, &few, nullptr, nullptr, DT_FP32);
  tpu_parallel_start();
  tpu_gdma_cpy_S2L(0, g.input, &few, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_add(8 * LOCAL_MEM_SIZE + 4 * BANK_SIZE, 8 * LOCAL_MEM_SIZE, 8 * LOCAL_MEM_SIZE, &few, nullptr, nullptr,
                 nullptr, DT_FP32);
  tpu_parallel_end();
}

// The newcomer's tiled kernel (issue 26): the store of tile i is issued in
// the region whose BDC command computes tile i. On the estimated timeline
// the store may start after the add ends (always, once a load is issued
// first in the region: the GDMA is busy with it meanwhile), but the
// hardware does not order them: the race is reported on the first tile.
void tiled_store_kernel(const void *) {
  const unsigned long long tile_bytes = 4ull * g.tile.n * g.tile.c * g.tile.h * g.tile.w;
  const local_addr_t bank = local_addr_t(BANK_SIZE);
  const local_addr_t in[2] = {0, 4 * bank}, out = 8 * bank;
  tpu_gdma_cpy_S2L(in[0], g.input, &g.tile, nullptr, nullptr, DT_FP32);
  for (int i = 0; i < g.tiles; ++i) {
    g.reached = i;
    tpu_parallel_start();
    if (g.load_first && i + 1 < g.tiles)
      tpu_gdma_cpy_S2L(in[(i + 1) % 2], g.input + (i + 1) * tile_bytes, &g.tile, nullptr, nullptr, DT_FP32);
    g.bdc_line = __LINE__ + 1;
    tpu_bdc_fp_add(out, in[i % 2], in[i % 2], &g.tile, nullptr, nullptr, nullptr, DT_FP32);
    g.gdma_line = __LINE__ + 1;
    tpu_gdma_cpy_L2S(g.output + i * tile_bytes, out, &g.tile, nullptr, nullptr, DT_FP32);
    if (!g.load_first && i + 1 < g.tiles)
      tpu_gdma_cpy_S2L(in[(i + 1) % 2], g.input + (i + 1) * tile_bytes, &g.tile, nullptr, nullptr, DT_FP32);
    tpu_parallel_end();
  }
}

class Hazards : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open(GetParam()), 0);
    ASSERT_EQ(cmodel_set_option("hazards", "error"), 0);
    g = Job{};
    g.tiles = 6;
    g.tile = {1, tpu_npu_num(), 8, 64};
    const uint64_t bytes = 4ull * g.tiles * g.tile.c * g.tile.h * g.tile.w;
    g.input = cmodel_global_alloc(bytes);
    g.output = cmodel_global_alloc(bytes);
    host_input.resize(bytes / 4);
    for (size_t i = 0; i < host_input.size(); ++i) host_input[i] = float(i % 1000) * 0.5f;
    ASSERT_EQ(cmodel_global_write(g.input, host_input.data(), bytes), 0);
  }
  void TearDown() override {
    cmodel_set_option("hazards", "error");
    cmodel_close();
  }
  void expect_race_between(const char *gdma_api, const char *bdc_api) {
    const std::string m = error();
    EXPECT_NE(m.find("race inside a parallel region"), std::string::npos) << m;
    EXPECT_NE(m.find(gdma_api), std::string::npos) << m;
    EXPECT_NE(m.find(bdc_api), std::string::npos) << m;
    EXPECT_NE(m.find("hazard_test.cc:" + std::to_string(g.gdma_line)), std::string::npos) << m;
    EXPECT_NE(m.find("hazard_test.cc:" + std::to_string(g.bdc_line)), std::string::npos) << m;
  }
  std::vector<float> host_input;
};

TEST_P(Hazards, BdcReadingWhatTheGdmaIsLoadingIsCaught) {
  EXPECT_NE(cmodel_run(load_while_computing_kernel, nullptr), 0);
  expect_race_between("tpu_gdma_cpy_S2L", "tpu_bdc_fp_add");
  EXPECT_NE(error().find("writes"), std::string::npos);
}

TEST_P(Hazards, GdmaLoadingWhatAnEarlierBdcCommandReadsIsCaught) {
  EXPECT_NE(cmodel_run(compute_then_load_kernel, nullptr), 0);
  expect_race_between("tpu_gdma_cpy_S2L", "tpu_bdc_fp_add");
}

TEST_P(Hazards, BdcOverwritingWhatTheGdmaIsStoringIsCaught) {
  EXPECT_NE(cmodel_run(store_while_overwriting_kernel, nullptr), 0);
  expect_race_between("tpu_gdma_cpy_L2S", "tpu_bdc_fp_mul");
}

TEST_P(Hazards, StoreOfTheTileComputedInTheSameRegionIsCaughtOnTheFirstTile) {
  for (bool load_first : {false, true}) {
    SCOPED_TRACE(load_first ? "each region loads first" : "each region computes first");
    g.load_first = load_first;
    g.reached = -1;
    EXPECT_NE(cmodel_run(tiled_store_kernel, nullptr), 0);
    EXPECT_EQ(g.reached, 0) << "the race of tile 0 is reported in tile 0's region";
    expect_race_between("tpu_gdma_cpy_L2S", "tpu_bdc_fp_add");
    EXPECT_NE(error().find("either order"), std::string::npos) << error();
  }
}

TEST_P(Hazards, RacesCanBeLoweredToWarnings) {
  ASSERT_EQ(cmodel_set_option("hazards", "warning"), 0);
  ASSERT_EQ(cmodel_run(load_while_computing_kernel, nullptr), 0) << error();
  const auto stats = nlohmann::json::parse(cmodel_last_run_stats());
  ASSERT_EQ(stats["warnings"].size(), 1u) << stats.dump();
  EXPECT_NE(stats["warnings"][0].get<std::string>().find("race inside a parallel region"), std::string::npos);
  // The tiled kernel races once per tile, each reported, and finishes.
  g.load_first = true;
  ASSERT_EQ(cmodel_run(tiled_store_kernel, nullptr), 0) << error();
  EXPECT_EQ(nlohmann::json::parse(cmodel_last_run_stats())["warnings"].size(), size_t(g.tiles));
  EXPECT_NE(cmodel_set_option("hazards", "sometimes"), 0);
  EXPECT_NE(error().find("expected \"error\" or \"warning\""), std::string::npos) << error();
  EXPECT_NE(cmodel_set_option("colour", "blue"), 0);
  EXPECT_NE(error().find("unknown option \"colour\""), std::string::npos) << error();
}

TEST_P(Hazards, DoubleBufferedKernelRunsCleanAndOverlaps) {
  ASSERT_EQ(cmodel_run(double_buffered_kernel, nullptr), 0) << error();
  std::vector<float> out(host_input.size());
  ASSERT_EQ(cmodel_global_read(out.data(), g.output, out.size() * 4), 0);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], host_input[i] + host_input[i]) << "element " << i;
  const auto stats = nlohmann::json::parse(cmodel_last_run_stats());
  EXPECT_TRUE(stats["warnings"].empty());
  EXPECT_GT(stats["overlap_us"].get<double>(), 0.0) << stats.dump();
  EXPECT_EQ(stats["commands"]["tpu_bdc_fp_add"].get<int>(), g.tiles);
  // Overlap hides work: the run is shorter than the engines' busy time added up.
  const double busy = stats["engines"]["gdma"]["busy_us"].get<double>() + stats["engines"]["bdc"]["busy_us"].get<double>();
  EXPECT_LT(stats["total_us"].get<double>(), busy);
}

TEST_P(Hazards, SameOffsetsOnOtherNpusDoNotRace) {
  EXPECT_EQ(cmodel_run(disjoint_npus_kernel, nullptr), 0) << error();
}

INSTANTIATE_TEST_SUITE_P(Chips, Hazards, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
