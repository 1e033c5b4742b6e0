// record_replay_test: recording a kernel's command stream and replaying it
// (cmodel_host.h, "Recording and replay"; kernel/src/record.h).
//
// A pipeline kernel (GDMA both ways and system to system, a fill, table
// loads, a double-buffered parallel region, BDC float arithmetic, an exp,
// a select with variable_t operands, casts, a pooling with dim2/padding_t
// operands, barriers and messages) is recorded on one emulator and
// replayed on a fresh one after the same allocations and inputs: the whole
// global memory the kernel touches and the statistics JSON must be
// identical, on both chips, and again on a second replay. Every function of
// api_functions.def is called once while recording to check it follows its
// recording policy; corrupted, truncated and mismatched streams are
// rejected with a clear message and no crash.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api_guard.h"
#include "cmodel/context.h"
#include "cmodel_host.h"
#include "record.h"
#include "support/test_support.h"
#include "tpu_kernel.h"

namespace {

using Bytes = std::vector<uint8_t>;

constexpr int tiles = 4, tile_h = 4, tile_w = 6;

// Local memory, 1 KiB apart (every tensor here fits in one NPU's slot).
constexpr local_addr_t in_buf[2] = {0x0000, 0x0400};
constexpr local_addr_t tmp_buf = 0x0800, out_buf = 0x0C00, work0 = 0x1000, work1 = 0x1400, pooled_buf = 0x1800,
                       exp_coeff = 0x2000, exp_table = 0x2400;

struct Job {
  uint64_t in, out, pooled, copy, fill;
  int channels;  // NPU_NUM + 3: not a multiple of the NPU count
};

scalar_t f32(float v) {
  scalar_t s{};
  s.f32 = v;
  return s;
}

void pipeline_kernel(const void *arg) {
  const Job &job = *static_cast<const Job *>(arg);
  const dim4 tile = {1, job.channels, tile_h, tile_w};
  const dim4 all = {tiles, job.channels, tile_h, tile_w};
  const dim4 pooled = {1, job.channels, tile_h / 2, tile_w / 2};
  const uint64_t tile_bytes = uint64_t(job.channels) * tile_h * tile_w * 4;
  const uint64_t pooled_bytes = tile_bytes / 4;

  // System to system, and a fill, outside any region.
  tpu_gdma_cpy_S2S(job.copy, job.in, &all, nullptr, nullptr, DT_FP32);
  const dim4 fill_shape = {1, 2, 3, 5};
  tpu_gdma_set_C_system(job.fill, f32(7.25f), &fill_shape, nullptr, DT_FP32);
  tpu_bdc_load_fp32_exp_coeff(exp_coeff);
  tpu_bdc_load_fp32_exp_table(exp_table);
  tpu_bdc_send_msg(0, 1);
  tpu_gdma_wait_msg(0, 1);
  tpu_sync_all();

  tpu_gdma_cpy_S2L(in_buf[0], job.in, &tile, nullptr, nullptr, DT_FP32);
  for (int t = 0; t < tiles; ++t) {
    const local_addr_t in = in_buf[t % 2];
    tpu_parallel_start();
    // Load the next tile into the other buffer while this one is computed.
    if (t + 1 < tiles)
      tpu_gdma_cpy_S2L(in_buf[(t + 1) % 2], job.in + uint64_t(t + 1) * tile_bytes, &tile, nullptr, nullptr,
                       DT_FP32);
    tpu_bdc_fp_mul_C(tmp_buf, in, f32(0.5f), &tile, nullptr, nullptr, DT_FP32);
    tpu_bdc_fp32_exp(out_buf, tmp_buf, work0, work1, exp_coeff, exp_table, &tile);
    tpu_bdc_fp_add(out_buf, out_buf, in, &tile, nullptr, nullptr, nullptr, DT_FP32);
    // out = in > 0 ? out : 1
    variable_t src0{}, src1{}, src2{}, src3{};
    src0.type = TENSOR;
    src0.context.addr = in;
    src1.type = SCALAR;
    src1.context.scalar = f32(0.0f);
    src2.type = TENSOR;
    src2.context.addr = out_buf;
    src3.type = SCALAR;
    src3.context.scalar = f32(1.0f);
    tpu_bdc_greater_select(out_buf, &src0, &src1, &src2, &src3, &tile, DT_FP32, DT_FP32);
    // Through fp16 and back.
    tpu_bdc_cast(tmp_buf, out_buf, &tile, nullptr, nullptr, DT_FP16, DT_FP32, RM_HALF_TO_EVEN);
    tpu_bdc_cast(out_buf, tmp_buf, &tile, nullptr, nullptr, DT_FP32, DT_FP16, RM_HALF_TO_EVEN);
    const dim2 kernel = {2, 2}, stride = {2, 2}, dilation = {1, 1};
    const padding_t pad = {0, 0, 0, 0};
    tpu_bdc_fp_max_pool2d(pooled_buf, out_buf, &tile, &kernel, &pad, &stride, &dilation, DT_FP32, f32(-1e30f));
    tpu_parallel_end();
    tpu_gdma_cpy_L2S(job.out + uint64_t(t) * tile_bytes, out_buf, &tile, nullptr, nullptr, DT_FP32);
    tpu_gdma_cpy_L2S(job.pooled + uint64_t(t) * pooled_bytes, pooled_buf, &pooled, nullptr, nullptr, DT_FP32);
  }
  tpu_poll();
}

// An emulator with the job's buffers allocated (in a fixed order) and its
// input written from `seed`.
struct Prepared {
  Job job{};
  std::vector<std::pair<uint64_t, uint64_t>> buffers;  // every buffer: address, bytes
};

Prepared open_and_prepare(const char *chip, uint32_t seed) {
  EXPECT_EQ(cmodel_open(chip), 0) << cmodel_last_error();
  Prepared s;
  s.job.channels = tpu_npu_num() + 3;
  const uint64_t tile_bytes = uint64_t(s.job.channels) * tile_h * tile_w * 4;
  auto alloc = [&](uint64_t bytes) {
    const uint64_t addr = cmodel_global_alloc(bytes);
    EXPECT_NE(addr, 0u) << cmodel_last_error();
    s.buffers.emplace_back(addr, bytes);
    return addr;
  };
  s.job.in = alloc(tiles * tile_bytes);
  s.job.out = alloc(tiles * tile_bytes);
  s.job.pooled = alloc(tiles * tile_bytes / 4);
  s.job.copy = alloc(tiles * tile_bytes);
  s.job.fill = alloc(2 * 3 * 5 * 4);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> in(tiles * tile_bytes / 4);
  for (float &v : in) v = value(rng);
  EXPECT_EQ(cmodel_global_write(s.job.in, in.data(), tiles * tile_bytes), 0) << cmodel_last_error();
  return s;
}

// Every buffer's bytes, back to back.
Bytes snapshot(const Prepared &s) {
  Bytes all;
  for (const auto &[addr, bytes] : s.buffers) {
    Bytes b(bytes);
    EXPECT_EQ(cmodel_global_read(b.data(), addr, bytes), 0) << cmodel_last_error();
    all.insert(all.end(), b.begin(), b.end());
  }
  return all;
}

struct Recorded {
  Bytes stream;
  Bytes memory;
  std::string stats;
  Prepared setup;
};

Bytes end_recording() {
  void *data = nullptr;
  uint64_t size = 0;
  EXPECT_EQ(cmodel_record_end(&data, &size), 0) << cmodel_last_error();
  Bytes stream(static_cast<uint8_t *>(data), static_cast<uint8_t *>(data) + size);
  cmodel_record_free(data);
  return stream;
}

Recorded record_pipeline(const char *chip, uint32_t seed) {
  Recorded r;
  r.setup = open_and_prepare(chip, seed);
  EXPECT_EQ(cmodel_record_begin("pipeline test kernel"), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_recording(), 1);
  EXPECT_EQ(cmodel_run(pipeline_kernel, &r.setup.job), 0) << cmodel_last_error();
  r.stats = cmodel_last_run_stats();
  r.stream = end_recording();
  EXPECT_EQ(cmodel_recording(), 0);
  r.memory = snapshot(r.setup);
  return r;
}

nlohmann::json info(const Bytes &stream) {
  const char *text = cmodel_stream_info(stream.data(), stream.size());
  EXPECT_NE(text, nullptr) << cmodel_last_error();
  return text ? nlohmann::json::parse(text) : nlohmann::json();
}

// cmodel_replay must fail with a message containing `expected`.
void expect_rejected(const Bytes &stream, const std::string &expected) {
  EXPECT_NE(cmodel_replay(stream.data(), stream.size()), 0) << "accepted; expected: " << expected;
  EXPECT_NE(std::string(cmodel_last_error()).find(expected), std::string::npos)
      << "message: " << cmodel_last_error() << "\nexpected: " << expected;
}

// The stream's CRC-32 (offset 24) recomputed after an edit of the body.
void fix_checksum(Bytes &stream) {
  uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 32; i < stream.size(); ++i) {
    c ^= stream[i];
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  c ^= 0xFFFFFFFFu;
  std::memcpy(stream.data() + 24, &c, 4);
}

std::size_t find_bytes(const Bytes &haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end());
  return it == haystack.end() ? std::string::npos : std::size_t(it - haystack.begin());
}

// Leaves no recording open and no emulator behind.
class EmulatorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (cmodel_recording()) {
      void *data = nullptr;
      uint64_t size = 0;
      if (cmodel_record_end(&data, &size) == 0) cmodel_record_free(data);
    }
    cmodel_close();
  }
};

class RecordReplay : public EmulatorTest, public ::testing::WithParamInterface<const char *> {};

TEST_P(RecordReplay, ReplayReproducesMemoryAndStatistics) {
  const Recorded r = record_pipeline(GetParam(), 11);

  // Recording does not change what the run does.
  {
    Prepared plain = open_and_prepare(GetParam(), 11);
    ASSERT_EQ(cmodel_run(pipeline_kernel, &plain.job), 0) << cmodel_last_error();
    EXPECT_EQ(std::string(cmodel_last_run_stats()), r.stats);
    EXPECT_EQ(snapshot(plain), r.memory);
  }

  // A fresh emulator: the same allocations land at the same addresses.
  const Prepared fresh = open_and_prepare(GetParam(), 11);
  ASSERT_EQ(fresh.buffers, r.setup.buffers);
  const Bytes before = snapshot(fresh);
  ASSERT_NE(before, r.memory);
  ASSERT_EQ(cmodel_replay(r.stream.data(), r.stream.size()), 0) << cmodel_last_error();
  EXPECT_EQ(snapshot(fresh), r.memory);
  EXPECT_EQ(std::string(cmodel_last_run_stats()), r.stats);

  // Twice: the same again (the kernel does not modify its input).
  ASSERT_EQ(cmodel_replay(r.stream.data(), r.stream.size()), 0) << cmodel_last_error();
  EXPECT_EQ(snapshot(fresh), r.memory);
  EXPECT_EQ(std::string(cmodel_last_run_stats()), r.stats);

  // The statistics describe real work.
  const auto stats = nlohmann::json::parse(r.stats);
  EXPECT_GT(stats["engines"]["gdma"]["cycles"].get<double>(), 0);
  EXPECT_GT(stats["engines"]["bdc"]["cycles"].get<double>(), 0);
  EXPECT_GT(stats["overlap_us"].get<double>(), 0) << "the parallel region overlaps GDMA and BDC";
  EXPECT_EQ(stats["commands"]["tpu_gdma_cpy_S2L"].get<int>(), tiles);
}

TEST_P(RecordReplay, StreamInfoDescribesTheStream) {
  const Recorded r = record_pipeline(GetParam(), 3);
  const nlohmann::json j = info(r.stream);
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["chip"], GetParam());
  EXPECT_EQ(j["origin"], "pipeline test kernel");
  EXPECT_EQ(j["bytes"], r.stream.size());
  const nlohmann::json &f = j["functions"];
  EXPECT_EQ(f["tpu_parallel_start"], tiles);
  EXPECT_EQ(f["tpu_parallel_end"], tiles);
  EXPECT_EQ(f["tpu_gdma_cpy_S2L"], tiles);
  EXPECT_EQ(f["tpu_gdma_cpy_L2S"], 2 * tiles);
  EXPECT_EQ(f["tpu_gdma_cpy_S2S"], 1);
  EXPECT_EQ(f["tpu_bdc_load_fp32_exp_table"], 1);
  EXPECT_EQ(f["tpu_bdc_greater_select"], tiles);
  EXPECT_EQ(f["tpu_bdc_fp_max_pool2d"], tiles);
  EXPECT_EQ(f["tpu_bdc_send_msg"], 1);
  EXPECT_EQ(f["tpu_sync_all"], 1);
  EXPECT_EQ(f["tpu_poll"], 1);
  EXPECT_FALSE(f.contains("tpu_npu_num")) << "queries are not recorded";
  EXPECT_FALSE(f.contains("cmodel_run")) << "one run: no run boundary";
  uint64_t total = 0;
  for (const auto &[name, count] : f.items()) total += count.get<uint64_t>();
  EXPECT_EQ(j["commands"], total);
  // The live buffers, as allocated.
  ASSERT_EQ(j["buffers"].size(), r.setup.buffers.size());
  for (std::size_t i = 0; i < r.setup.buffers.size(); ++i) {
    EXPECT_EQ(j["buffers"][i]["addr"], r.setup.buffers[i].first);
    EXPECT_EQ(j["buffers"][i]["bytes"], r.setup.buffers[i].second);
  }
}

TEST_P(RecordReplay, BuffersRecreatedWithAllocAt) {
  const Recorded r = record_pipeline(GetParam(), 5);
  const nlohmann::json j = info(r.stream);
  ASSERT_EQ(cmodel_open(GetParam()), 0);
  // Nothing allocated: replay refuses before running anything.
  expect_rejected(r.stream, "which no buffer allocated here holds; allocate the same memory plan first");
  // In reverse order, at the recorded addresses.
  for (auto it = j["buffers"].rbegin(); it != j["buffers"].rend(); ++it) {
    const uint64_t addr = (*it)["addr"], bytes = (*it)["bytes"];
    ASSERT_EQ(cmodel_global_alloc_at(addr, bytes), addr) << cmodel_last_error();
  }
  ASSERT_EQ(cmodel_global_write(r.setup.job.in, r.memory.data(), r.setup.buffers[0].second), 0);
  ASSERT_EQ(cmodel_replay(r.stream.data(), r.stream.size()), 0) << cmodel_last_error();
  EXPECT_EQ(snapshot(r.setup), r.memory);
  EXPECT_EQ(std::string(cmodel_last_run_stats()), r.stats);
}

TEST_P(RecordReplay, SeveralRunsReplayAsOne) {
  Prepared s = open_and_prepare(GetParam(), 8);
  struct Fill {
    uint64_t addr;
  } fill{s.job.fill};
  auto fill_kernel = [](const void *arg) {
    const dim4 shape = {1, 2, 3, 5};
    tpu_gdma_set_C_system(static_cast<const Fill *>(arg)->addr, f32(-3.0f), &shape, nullptr, DT_FP32);
  };
  auto query_kernel = [](const void *) { (void)tpu_npu_num(); };

  ASSERT_EQ(cmodel_record_begin(nullptr), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_run(query_kernel, nullptr), 0) << cmodel_last_error();  // records nothing
  ASSERT_EQ(cmodel_run(pipeline_kernel, &s.job), 0) << cmodel_last_error();
  const auto first = nlohmann::json::parse(cmodel_last_run_stats());
  ASSERT_EQ(cmodel_run(query_kernel, nullptr), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_run(fill_kernel, &fill), 0) << cmodel_last_error();
  const auto second = nlohmann::json::parse(cmodel_last_run_stats());
  const Bytes stream = end_recording();
  const Bytes memory = snapshot(s);
  EXPECT_EQ(info(stream)["functions"]["cmodel_run"], 1) << "one boundary between the two runs that did work";

  const Prepared fresh = open_and_prepare(GetParam(), 8);
  ASSERT_EQ(cmodel_replay(stream.data(), stream.size()), 0) << cmodel_last_error();
  EXPECT_EQ(snapshot(fresh), memory);
  // One run's statistics covering both.
  const auto both = nlohmann::json::parse(cmodel_last_run_stats());
  for (const char *engine : {"gdma", "bdc"}) {
    EXPECT_EQ(both["engines"][engine]["commands"].get<uint64_t>(),
              first["engines"][engine]["commands"].get<uint64_t>() +
                  second["engines"][engine]["commands"].get<uint64_t>());
    const double sum =
        first["engines"][engine]["cycles"].get<double>() + second["engines"][engine]["cycles"].get<double>();
    EXPECT_NEAR(both["engines"][engine]["cycles"].get<double>(), sum, sum * 1e-12);
  }
  EXPECT_EQ(both["commands"]["tpu_gdma_set_C_system"], 2);
  EXPECT_NEAR(both["total_us"].get<double>(), first["total_us"].get<double>() + second["total_us"].get<double>(),
              0.002);
}

// A batch joins runs into one: a parallel region opened by one kernel holds
// the GDMA load of the next kernel beside the BDC work of a third, the time
// runs on, and a recording of the batch has no run boundary and replays to
// the same memory and statistics.
TEST_P(RecordReplay, BatchedRunsAreOneRun) {
  Prepared s = open_and_prepare(GetParam(), 4);
  struct Stage {
    uint64_t in;
    int channels;
  } stage{s.job.in, s.job.channels};
  auto open_region = [](const void *) { tpu_parallel_start(); };
  auto close_region = [](const void *) { tpu_parallel_end(); };
  auto load = [](const void *arg) {
    const Stage &st = *static_cast<const Stage *>(arg);
    const dim4 tile = {1, st.channels, tile_h, tile_w};
    tpu_gdma_cpy_S2L(in_buf[1], st.in, &tile, nullptr, nullptr, DT_FP32);
  };
  auto compute = [](const void *arg) {
    const Stage &st = *static_cast<const Stage *>(arg);
    const dim4 tile = {1, st.channels, tile_h, tile_w};
    for (int i = 0; i < 8; ++i) tpu_bdc_fp_mul_C(tmp_buf, in_buf[0], f32(0.5f), &tile, nullptr, nullptr, DT_FP32);
  };
  // compute reads in_buf[0], which nothing loads (the test is about time,
  // not values): host pointers mark it written on every NPU.
  const auto mark_in_buf0 = [] {
    for (int npu = 0; npu < tpu_npu_num(); ++npu) (void)tpu_local_mem_addr(npu, in_buf[0]);
  };
  mark_in_buf0();
  // The same work with each kernel a run of its own: nothing overlaps.
  double apart_us = 0;
  for (auto kernel : {+load, +compute}) {
    ASSERT_EQ(cmodel_run(kernel, &stage), 0) << cmodel_last_error();
    apart_us += nlohmann::json::parse(cmodel_last_run_stats())["total_us"].get<double>();
  }

  ASSERT_EQ(cmodel_record_begin("batch"), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_batch_begin(), 0) << cmodel_last_error();
  EXPECT_NE(cmodel_batch_begin(), 0) << "batches do not nest";
  EXPECT_NE(std::string(cmodel_last_error()).find("a batch is already open"), std::string::npos);
  for (auto kernel : {+open_region, +load, +compute, +close_region})
    ASSERT_EQ(cmodel_run(kernel, &stage), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_run(load, &stage), 0) << cmodel_last_error();  // after the region: waits for it
  ASSERT_EQ(cmodel_batch_end(), 0) << cmodel_last_error();
  const auto batched = nlohmann::json::parse(cmodel_last_run_stats());
  const Bytes stream = end_recording();
  const Bytes memory = snapshot(s);

  EXPECT_EQ(batched["engines"]["gdma"]["commands"], 2);
  EXPECT_EQ(batched["engines"]["bdc"]["commands"], 8);
  EXPECT_GT(batched["overlap_us"].get<double>(), 0) << batched.dump();
  const double load_us = batched["engines"]["gdma"]["busy_us"].get<double>() / 2;
  EXPECT_NEAR(batched["total_us"].get<double>(), apart_us - batched["overlap_us"].get<double>() + load_us, 0.01)
      << "the region's load overlaps its compute; the last load follows both";
  const nlohmann::json j = info(stream);
  EXPECT_FALSE(j["functions"].contains("cmodel_run")) << "a batch has no run boundary";
  EXPECT_EQ(j["functions"]["tpu_parallel_start"], 1);

  const Prepared fresh = open_and_prepare(GetParam(), 4);
  mark_in_buf0();
  ASSERT_EQ(cmodel_replay(stream.data(), stream.size()), 0) << cmodel_last_error();
  EXPECT_EQ(snapshot(fresh), memory);
  EXPECT_EQ(nlohmann::json::parse(cmodel_last_run_stats()), batched);
}

// The batch calls refuse what they cannot do, and a batch left open with a
// region ends cleanly.
TEST_P(RecordReplay, BatchMisuseIsRefused) {
  EXPECT_NE(cmodel_batch_begin(), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("no emulator is open"), std::string::npos) << cmodel_last_error();
  const Recorded r = record_pipeline(GetParam(), 2);
  Prepared s = open_and_prepare(GetParam(), 2);
  EXPECT_NE(cmodel_batch_end(), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("no batch is open"), std::string::npos) << cmodel_last_error();
  ASSERT_EQ(cmodel_batch_begin(), 0) << cmodel_last_error();
  EXPECT_NE(cmodel_replay(r.stream.data(), r.stream.size()), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("a batch is open"), std::string::npos) << cmodel_last_error();
  auto nested_batch = [](const void *) {
    EXPECT_NE(cmodel_batch_begin(), 0);
    EXPECT_NE(std::string(cmodel_last_error()).find("inside a running kernel"), std::string::npos);
  };
  ASSERT_EQ(cmodel_run(nested_batch, nullptr), 0) << cmodel_last_error();
  auto open_region = [](const void *) { tpu_parallel_start(); };
  ASSERT_EQ(cmodel_run(open_region, nullptr), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_batch_end(), 0) << cmodel_last_error();  // closes the region
  auto in_region = [](const void *) { EXPECT_FALSE(tpu_is_parallel_state()); };
  ASSERT_EQ(cmodel_run(in_region, nullptr), 0) << cmodel_last_error();
  // cmodel_close forgets an open batch: the next emulator's runs are plain.
  ASSERT_EQ(cmodel_batch_begin(), 0) << cmodel_last_error();
  cmodel_close();
  s = open_and_prepare(GetParam(), 2);
  EXPECT_NE(cmodel_batch_end(), 0) << "the batch ended with its emulator";
  ASSERT_EQ(cmodel_replay(r.stream.data(), r.stream.size()), 0) << cmodel_last_error();
}

TEST_P(RecordReplay, WrongChipIsRejected) {
  const Recorded r = record_pipeline(GetParam(), 1);
  const char *other = std::string(GetParam()) == "bm1684x" ? "bm1688" : "bm1684x";
  ASSERT_EQ(cmodel_open(other), 0);
  expect_rejected(r.stream, std::string("the stream was recorded on ") + GetParam() + ", but the open emulator is " +
                                other);
}

INSTANTIATE_TEST_SUITE_P(Chips, RecordReplay, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

class RecordReplayRejects : public EmulatorTest {
 protected:
  void SetUp() override { r_ = record_pipeline("bm1684x", 2); }
  // A fresh emulator holding the buffers the stream needs.
  Prepared reopen() { return open_and_prepare("bm1684x", 2); }
  Recorded r_;
};

TEST_F(RecordReplayRejects, TruncatedStreams) {
  reopen();
  const Bytes &s = r_.stream;
  expect_rejected(Bytes(), "shorter than the 32-byte header");
  expect_rejected(Bytes(s.begin(), s.begin() + 31), "shorter than the 32-byte header");
  for (std::size_t n = 32; n < s.size(); n += 1 + n / 64)
    expect_rejected(Bytes(s.begin(), s.begin() + long(n)), "truncated: the header announces");
  Bytes longer = s;
  longer.push_back(0);
  expect_rejected(longer, "1 bytes follow the end of the stream");
  EXPECT_NE(cmodel_replay(nullptr, 100), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("the stream pointer is null"), std::string::npos);
}

TEST_F(RecordReplayRejects, CorruptedStreams) {
  const Prepared prepared = reopen();
  const Bytes before = snapshot(prepared);
  ASSERT_NE(before, r_.memory);  // so that "untouched" below can tell
  Bytes bad = r_.stream;
  bad[0] = 'X';
  expect_rejected(bad, "does not start with the magic \"TPUCMDS\" (not a command stream)");
  bad = r_.stream;
  bad[8] = 2;
  expect_rejected(bad, "it is version 2; this SDK reads version 1");
  // Any flipped bit of the body fails the checksum.
  for (std::size_t i = 32; i < r_.stream.size(); i += 7) {
    bad = r_.stream;
    bad[i] ^= uint8_t(1u << (i % 8));
    expect_rejected(bad, "checksum mismatch");
  }
  // Nothing ran: this emulator's memory is what it was before the replays.
  EXPECT_EQ(snapshot(prepared), before);
}

TEST_F(RecordReplayRejects, MalformedBodies) {
  reopen();
  // An unknown function name (same length, checksum fixed).
  Bytes bad = r_.stream;
  std::size_t at = find_bytes(bad, "tpu_bdc_fp_add");
  ASSERT_NE(at, std::string::npos);
  std::memcpy(bad.data() + at, "tpu_bdc_fp_zzz", 14);
  fix_checksum(bad);
  expect_rejected(bad, "unknown function \"tpu_bdc_fp_zzz\"");
  // A query's name: never in a stream.
  bad = r_.stream;
  at = find_bytes(bad, "tpu_sync_all");
  ASSERT_NE(at, std::string::npos);
  std::memcpy(bad.data() + at, "tpu_npu_num\0", 12);
  // Shorten the name by one: rewrite its length and drop the NUL.
  uint32_t len = 11;
  std::memcpy(bad.data() + at - 4, &len, 4);
  bad.erase(bad.begin() + long(at) + 11);
  uint64_t body = bad.size() - 32;
  std::memcpy(bad.data() + 16, &body, 8);
  fix_checksum(bad);
  expect_rejected(bad, "function \"tpu_npu_num\" never appears in a command stream");
  // An argument size that does not fit the function: the first command is
  // tpu_gdma_cpy_S2S; grow its argument size by 4 and append 4 bytes at the end.
  bad = r_.stream;
  // Find the command count, then the first command's size field after it.
  std::size_t p = 32;
  auto skip_string = [&] {
    uint32_t n;
    std::memcpy(&n, bad.data() + p, 4);
    p += 4 + n;
  };
  skip_string();  // chip
  skip_string();  // origin
  uint32_t names;
  std::memcpy(&names, bad.data() + p, 4);
  p += 4;
  for (uint32_t i = 0; i < names; ++i) skip_string();
  uint32_t buffers;
  std::memcpy(&buffers, bad.data() + p, 4);
  p += 4 + 16 * std::size_t(buffers);
  p += 8;  // command count
  uint32_t size;
  std::memcpy(&size, bad.data() + p + 4, 4);
  const uint32_t grown = size + 4;
  std::memcpy(bad.data() + p + 4, &grown, 4);
  bad.insert(bad.begin() + long(p + 8 + size), 4, 0);
  body = bad.size() - 32;
  std::memcpy(bad.data() + 16, &body, 8);
  fix_checksum(bad);
  expect_rejected(bad, "command 1 (tpu_gdma_cpy_S2S): its " + std::to_string(grown) +
                           " argument bytes do not match the function's parameters");
  // An invalid presence byte of a pointer argument (the shape's, after two
  // 8-byte addresses).
  bad = r_.stream;
  bad[p + 8 + 16] = 2;
  fix_checksum(bad);
  expect_rejected(bad, "command 1 (tpu_gdma_cpy_S2S)");
  // A function index past the string table.
  bad = r_.stream;
  const uint32_t index = 999;
  std::memcpy(bad.data() + p, &index, 4);
  fix_checksum(bad);
  expect_rejected(bad, "command 1 names function 999, but the string table has");
}

// Random edits with the checksum fixed: every stream is either rejected or
// runs into the API's own checks; nothing crashes.
// Random edits (checksum fixed) are each either rejected with a message
// naming the stream or the replayed command, or accepted; either way the process survives and the
// emulator is left sound: the unedited stream, replayed next on the same
// emulator with its inputs restored, gives the recorded memory exactly.
TEST_F(RecordReplayRejects, RandomEditsAreRejectedOrLeaveTheEmulatorSound) {
  test::Seeded seeded;
  const Prepared prepared = reopen();
  const Bytes inputs = snapshot(prepared);
  int rejected = 0, accepted = 0;
  for (int i = 0; i < 300; ++i) {
    Bytes bad = r_.stream;
    const int edits = seeded.uniform(1, 4);
    for (int e = 0; e < edits; ++e)
      bad[std::size_t(seeded.uniform(32, int(bad.size()) - 1))] = uint8_t(seeded.uniform(0, 255));
    fix_checksum(bad);
    if (cmodel_replay(bad.data(), bad.size()) != 0) {
      ++rejected;
      const std::string message = cmodel_last_error();
      // Refused as a stream (cmodel_replay: ...) or stopped at a command
      // (... called from replayed command N ...).
      const bool named = message.find("cmodel_replay") != std::string::npos ||
                         message.find("replayed command") != std::string::npos;
      ASSERT_TRUE(named) << "edit " << i << ": " << message;
    } else {
      ++accepted;
    }
    // Restore the inputs (an accepted edit may have written anywhere in the
    // buffers), then the unedited stream must reproduce the recording.
    std::size_t offset = 0;
    for (const auto &[addr, bytes] : prepared.buffers) {
      ASSERT_EQ(cmodel_global_write(addr, inputs.data() + offset, bytes), 0) << cmodel_last_error();
      offset += bytes;
    }
    ASSERT_EQ(cmodel_replay(r_.stream.data(), r_.stream.size()), 0) << "after edit " << i << ": "
                                                                      << cmodel_last_error();
    ASSERT_EQ(snapshot(prepared), r_.memory) << "after edit " << i;
  }
  EXPECT_GT(rejected, 0);
  RecordProperty("rejected", rejected);
  RecordProperty("accepted", accepted);
}

TEST_F(RecordReplayRejects, FailingCommandNamesItsPlaceInTheStream) {
  // The S2S copy's destination: move it out of every buffer.
  Bytes bad = r_.stream;
  uint64_t dst = r_.setup.job.copy;
  // The last occurrence: the buffer table before the commands holds it too.
  const Bytes needle(reinterpret_cast<const uint8_t *>(&dst), reinterpret_cast<const uint8_t *>(&dst) + 8);
  const auto found = std::find_end(bad.begin(), bad.end(), needle.begin(), needle.end());
  ASSERT_NE(found, bad.end());
  const std::size_t at = std::size_t(found - bad.begin());
  dst = r_.setup.job.copy + 0x10000000;
  std::memcpy(bad.data() + at, &dst, 8);
  fix_checksum(bad);
  reopen();
  expect_rejected(bad, "tpu_gdma_cpy_S2S: ");
  expect_rejected(bad, "called from replayed command 1 (tpu_gdma_cpy_S2S) of the stream recorded from pipeline "
                       "test kernel");
}

TEST_F(RecordReplayRejects, ReplayNeedsNoRecordingOpen) {
  reopen();
  ASSERT_EQ(cmodel_record_begin("x"), 0);
  expect_rejected(r_.stream, "a recording is open; end it with cmodel_record_end() before replaying a stream");
  EXPECT_NE(cmodel_record_begin("y"), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("a recording (from \"x\") is already open"), std::string::npos);
  end_recording();
}

// ---- recording rules ---------------------------------------------------------

class Recording : public EmulatorTest {};

TEST_F(Recording, IsOffByDefault) {
  ASSERT_EQ(cmodel_open("bm1684x"), 0);
  EXPECT_EQ(cmodel_recording(), 0);
  void *data = nullptr;
  uint64_t size = 0;
  EXPECT_NE(cmodel_record_end(&data, &size), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("no recording is open; call cmodel_record_begin() first"),
            std::string::npos);
  // A call that cannot be recorded is fine when nothing records.
  auto host_pointer_kernel = [](const void *) { (void)tpu_local_mem_addr(0, 0); };
  EXPECT_EQ(cmodel_run(host_pointer_kernel, nullptr), 0) << cmodel_last_error();
}

TEST_F(Recording, NeedsAnOpenEmulator) {
  cmodel_close();
  EXPECT_NE(cmodel_record_begin("x"), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("no emulator is open"), std::string::npos);
}

TEST_F(Recording, RefusedCallFailsTheRunAndTheRecording) {
  ASSERT_EQ(cmodel_open("bm1684x"), 0);
  ASSERT_EQ(cmodel_record_begin("layer bad (op peek)"), 0);
  auto host_pointer_kernel = [](const void *) {
    tpu_parallel_start();
    (void)tpu_global_mem_addr(0x100000000ull);
    tpu_parallel_end();
  };
  EXPECT_NE(cmodel_run(host_pointer_kernel, nullptr), 0);
  const std::string message = cmodel_last_error();
  EXPECT_NE(message.find("tpu_global_mem_addr: tpu_global_mem_addr cannot be recorded for a static layer (it gives "
                         "the kernel a host pointer into device memory"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("mark the layer dynamic [unsupported]"), std::string::npos) << message;
  void *data = reinterpret_cast<void *>(1);
  uint64_t size = 1;
  EXPECT_NE(cmodel_record_end(&data, &size), 0);
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_NE(std::string(cmodel_last_error()).find("no stream was made: a recorded run failed: tpu_global_mem_addr"),
            std::string::npos)
      << cmodel_last_error();
  EXPECT_EQ(cmodel_recording(), 0);
}

// An engine function that does not pass its arguments (as a newly written
// one might) goes through note_call: the recording fails rather than lose
// its work.
std::string note_call_error(const char *api) {
  try {
    cmodel::record::note_call(api);
  } catch (const cmodel::Error &e) {
    return e.what();
  }
  return "";
}

TEST_F(Recording, UnwiredFunctionsCannotBeDroppedSilently) {
  EXPECT_EQ(note_call_error("tpu_bdc_fp_add"),
            "tpu_bdc_fp_add cannot be recorded for a static layer: this SDK does not capture its arguments yet; mark "
            "the layer dynamic");
  EXPECT_EQ(note_call_error("tpu_npu_num"), "");
  EXPECT_NE(note_call_error("tpu_local_mem_addr").find("cannot be recorded for a static layer (it gives the kernel"),
            std::string::npos);
  EXPECT_NE(note_call_error("tpu_no_such_function").find("it is not in this SDK's list of API functions"),
            std::string::npos);

  // Engine work counted under a name the recorder never saw.
  ASSERT_EQ(cmodel_open("bm1684x"), 0);
  ASSERT_EQ(cmodel_record_begin("x"), 0);
  auto uncounted = [](const void *) { cmodel::api::context().count("tpu_secret_command"); };
  EXPECT_NE(cmodel_run(uncounted, nullptr), 0);
  EXPECT_NE(std::string(cmodel_last_error())
                .find("cmodel_run: tpu_secret_command issued 1 engine command(s) that were not recorded (a bug in "
                      "this SDK); mark the layer dynamic"),
            std::string::npos)
      << cmodel_last_error();
  void *data = nullptr;
  uint64_t size = 0;
  EXPECT_NE(cmodel_record_end(&data, &size), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("no stream was made: tpu_secret_command issued"), std::string::npos)
      << cmodel_last_error();
}

// ---- every API function follows its policy ------------------------------------

template <typename R, typename... P>
void call_with_zeros(R (*fn)(P...)) {
  (void)fn(P{}...);
}

struct ApiFunction {
  const char *name;
  void (*call)();
};

#define ZERO_CALL(fn) {#fn, [] { call_with_zeros(&fn); }},
#define ZERO_CALL_recorded ZERO_CALL
#define ZERO_CALL_ignored ZERO_CALL
#define ZERO_CALL_refused ZERO_CALL
#define ZERO_CALL_support(fn)  // assert, error and log: variadic, and not API calls a kernel makes itself
const ApiFunction api_functions[] = {
#define TPU_API_FUNCTION(family, fn, policy) ZERO_CALL_##policy(fn)
#include "api_functions.def"
#undef TPU_API_FUNCTION
};

void zero_call_kernel(const void *arg) { static_cast<const ApiFunction *>(arg)->call(); }

TEST_F(Recording, EveryApiFunctionFollowsItsPolicy) {
  ASSERT_EQ(cmodel_open("bm1684x"), 0);
  int recorded = 0, ignored = 0, refused = 0, missing = 0;
  for (const ApiFunction &f : api_functions) {
    SCOPED_TRACE(f.name);
    const char *policy = cmodel::record::policy_name(f.name);
    ASSERT_NE(policy, nullptr);
    ASSERT_EQ(cmodel_record_begin(f.name), 0) << cmodel_last_error();
    const uint64_t before = cmodel::record::recorded_commands();
    const bool ok = cmodel_run(zero_call_kernel, &f) == 0;
    const std::string message = ok ? "" : cmodel_last_error();
    const uint64_t added = cmodel::record::recorded_commands() - before;
    void *data = nullptr;
    uint64_t size = 0;
    if (cmodel_record_end(&data, &size) == 0) cmodel_record_free(data);
    const bool not_implemented = message.find("is not implemented in this SDK") != std::string::npos;
    EXPECT_EQ(message.find("does not capture its arguments yet"), std::string::npos) << message;
    EXPECT_EQ(message.find("(a bug in this SDK)"), std::string::npos) << message;
    if (std::string(policy) == "recorded") {
      EXPECT_TRUE(added == 1 || not_implemented) << "recorded " << added << " commands; " << message;
      recorded += added == 1;
    } else if (std::string(policy) == "refused") {
      EXPECT_EQ(added, 0u);
      EXPECT_TRUE(not_implemented || message.find("cannot be recorded for a static layer (") != std::string::npos)
          << message;
      refused += !not_implemented;
    } else {
      EXPECT_EQ(added, 0u);
      EXPECT_EQ(message.find("cannot be recorded"), std::string::npos) << message;
      ++ignored;
    }
    missing += not_implemented;
    cmodel_close();  // a fresh emulator for each: a call may leave a region open
    ASSERT_EQ(cmodel_open("bm1684x"), 0);
  }
  std::printf("recorded %d, ignored %d, refused %d; %d not implemented\n", recorded, ignored, refused, missing);
  EXPECT_GT(recorded, 200);
  EXPECT_GE(refused, 4);
}

// ---- global allocation ------------------------------------------------------------

TEST_F(Recording, GlobalAllocationIsDeterministicAndAllocAtIsExact) {
  std::vector<uint64_t> first;
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(cmodel_open("bm1688"), 0);
    std::vector<uint64_t> got;
    const uint64_t a = cmodel_global_alloc(1000), b = cmodel_global_alloc(5000);
    cmodel_global_free(a);
    const uint64_t c = cmodel_global_alloc(100), d = cmodel_global_alloc(2000);
    got = {a, b, c, d};
    if (round == 0)
      first = got;
    else
      EXPECT_EQ(got, first);
    cmodel_close();
  }
  ASSERT_EQ(cmodel_open("bm1684x"), 0);
  const uint64_t base = 0x100000000ull;
  EXPECT_EQ(cmodel_global_alloc_at(base + 0x10000, 1000), base + 0x10000) << cmodel_last_error();
  EXPECT_EQ(cmodel_global_alloc_at(base + 0x10200, 10), 0u) << "inside the first buffer's 512-byte rounding";
  EXPECT_NE(std::string(cmodel_last_error()).find("the live buffer [0x100010000, 0x1000103e8) overlaps it"),
            std::string::npos)
      << cmodel_last_error();
  EXPECT_EQ(cmodel_global_alloc_at(base + 0x10400, 10), base + 0x10400) << cmodel_last_error();
  EXPECT_EQ(cmodel_global_alloc_at(base + 0x10401, 10), 0u);
  EXPECT_NE(std::string(cmodel_last_error()).find("is not 512-byte aligned"), std::string::npos);
  EXPECT_EQ(cmodel_global_alloc_at(0x1000, 10), 0u);
  EXPECT_NE(std::string(cmodel_last_error()).find("is not inside global memory"), std::string::npos);
  EXPECT_EQ(cmodel_global_alloc_at(base + cmodel_global_size() - 0x200, 1024), 0u) << "past the end";
  // First fit uses the gap below the exact buffers, then goes past them.
  EXPECT_EQ(cmodel_global_alloc(0x10000), base);
  EXPECT_EQ(cmodel_global_alloc(100), base + 0x10600);
}

}  // namespace
