// multicore_test: cmodel_run_cores runs every core of a launch (docs/cmodel.md
// "Several cores"): a bm1688 kernel split by tpu_core_index that hands
// results over with an engine message and tpu_sync_all matches a reference
// computed here; deadlocks, a missing peer, a message nobody waits for and a
// cross-core race are each stopped with the cores' call sites; reducing
// copies into L2 from both cores combine; the schedule is reproducible and a
// random one gives the same results; the estimate is the slowest core's,
// at the shared DMA bandwidth.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cmodel/include/cmodel_all_reduce.h"
#include "cmodel_host.h"
#include "support/test_support.h"
#include "tpu_kernel.h"

namespace {

constexpr int kWidth = 64;  // elements per core's row

struct Split {
  uint64_t x;      // 2 rows of kWidth fp32
  uint64_t y;      // 2 rows: y[k] = x[k] * (k + 2), core k's
  uint64_t total;  // y[0] + y[1], core 0's after core 1's message
  uint64_t copy;   // total, copied by core 1 after tpu_sync_all
};

const dim4 kRow = {1, 1, 1, kWidth};
constexpr uint64_t kRowBytes = kWidth * sizeof(float);
constexpr int kMessage = 5;

scalar_t f32(float v) {
  scalar_t s;
  s.f32 = v;
  return s;
}

// Row k of x scaled by k + 2, stored as row k of y; local addresses 0 and
// 4 KiB of NPU 0.
void scale_own_row(const Split &a, int k) {
  tpu_gdma_cpy_S2L(0, a.x + uint64_t(k) * kRowBytes, &kRow, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_mul_C(4096, 0, f32(float(k + 2)), &kRow, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(a.y + uint64_t(k) * kRowBytes, 4096, &kRow, nullptr, nullptr, DT_FP32);
}

// Core 0 adds core 1's row to its own once core 1's message says it is there.
void add_rows(const Split &a) {
  tpu_gdma_cpy_S2L(8192, a.y + kRowBytes, &kRow, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_add(12288, 4096, 8192, &kRow, nullptr, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(a.total, 12288, &kRow, nullptr, nullptr, DT_FP32);
}

extern "C" void split_kernel(const void *arg) {
  const Split &a = *static_cast<const Split *>(arg);
  const int k = tpu_core_index();
  if (tpu_core_num() != 2) return;  // the test checks the outputs: nothing written fails it
  scale_own_row(a, k);
  if (k == 1) tpu_gdma_send_msg(kMessage, 1);
  if (k == 0) {
    tpu_gdma_wait_msg(kMessage, 1);
    add_rows(a);
  }
  tpu_sync_all();
  if (k == 1) tpu_gdma_cpy_S2S(a.copy, a.total, &kRow, nullptr, nullptr, DT_FP32);
}

// Without the message: core 0 reads core 1's row while core 1 writes it.
constexpr int kRaceReadLine = __LINE__ + 6;
constexpr int kRaceWriteLine = __LINE__ + 6;
extern "C" void race_kernel(const void *arg) {
  const Split &a = *static_cast<const Split *>(arg);
  const int k = tpu_core_index();
  tpu_gdma_cpy_S2L(0, a.x + uint64_t(k) * kRowBytes, &kRow, nullptr, nullptr, DT_FP32);
  if (k == 0) tpu_gdma_cpy_S2L(8192, a.y + kRowBytes, &kRow, nullptr, nullptr, DT_FP32);
  if (k == 1) tpu_gdma_cpy_L2S(a.y + kRowBytes, 0, &kRow, nullptr, nullptr, DT_FP32);
  tpu_sync_all();
}

// Each core waits for the message the other sends only after its wait.
constexpr int kDeadlockLine = __LINE__ + 3;
extern "C" void deadlock_kernel(const void *) {
  const int k = tpu_core_index();
  tpu_gdma_wait_msg(10 + k, 1);
  tpu_bdc_send_msg(10 + (1 - k), 1);
}

// Core 1 leaves at once (a kernel that thinks it runs alone); core 0 waits
// for it at tpu_sync_all.
constexpr int kMissingPeerLine = __LINE__ + 4;
extern "C" void missing_peer_kernel(const void *) {
  if (tpu_core_index() == 1) return;
  tpu_poll();
  tpu_sync_all();
}

// Core 0 sends a message for one wait that no core makes.
constexpr int kUnconsumedLine = __LINE__ + 3;
extern "C" void unconsumed_message_kernel(const void *) {
  if (tpu_core_index() == 0) {
    tpu_sdma_send_msg(7, 1);
  }
}

// Core 1 breaks a rule while core 0 waits for it.
constexpr int kBadBarrierLine = __LINE__ + 4;
extern "C" void failing_core_kernel(const void *) {
  if (tpu_core_index() == 0) tpu_sync_all();
  if (tpu_core_index() == 1) {
    tpu_core_barrier(0, 3);
  }
}

struct Reduce {
  uint64_t x;    // 2 rows; core k adds row k into the L2 buffer
  uint64_t l2;   // kWidth fp32 of L2 SRAM, zero before the run
  uint64_t out;  // the L2 buffer after the barrier
};

extern "C" void reduce_kernel(const void *arg) {
  const Reduce &a = *static_cast<const Reduce *>(arg);
  const int k = tpu_core_index();
  tpu_gdma_cpy_S2L(0, a.x + uint64_t(k) * kRowBytes, &kRow, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_reduce_L12L2(a.l2, 0, &kRow, nullptr, nullptr, DT_FP32, ALL_REDUCE_PSUM_WR, ALL_REDUCE_ADD);
  tpu_sync_all();
  if (k == 0) tpu_gdma_cpy_S2S(a.out, a.l2, &kRow, nullptr, nullptr, DT_FP32);
}

// Each core's answers to the partition queries, through a host pointer:
// 6 ints per core.
extern "C" void queries_kernel(const void *arg) {
  const uint64_t out = *static_cast<const uint64_t *>(arg);
  const int k = tpu_core_index();
  int *mine = static_cast<int *>(tpu_global_mem_addr(out)) + 6 * k;
  mine[0] = k;
  mine[1] = tpu_core_num();
  mine[2] = tpu_workitem_index();
  mine[3] = tpu_workitem_num();
  mine[4] = tpu_is_last_workitem();
  mine[5] = tpu_physical_core_id();
  tpu_core_barrier(3, tpu_core_num());
}

// Core 0 moves 512 KiB into local memory; both cores meet; core 1 then moves
// as much: the run lasts both moves (the barrier puts them one after the other).
struct Stream {
  uint64_t src;
};
const dim4 kStreamShape = {1, 32, 1, 4096};  // 512 KiB of fp32 over bm1688's 32 NPUs
extern "C" void stream_kernel(const void *arg) {
  const Stream &a = *static_cast<const Stream *>(arg);
  if (tpu_core_index() == 0) tpu_gdma_cpy_S2L(0, a.src, &kStreamShape, nullptr, nullptr, DT_FP32);
  tpu_sync_all();
  if (tpu_core_index() == 1) tpu_gdma_cpy_S2L(0, a.src, &kStreamShape, nullptr, nullptr, DT_FP32);
}
extern "C" void stream_once_kernel(const void *arg) {
  tpu_gdma_cpy_S2L(0, static_cast<const Stream *>(arg)->src, &kStreamShape, nullptr, nullptr, DT_FP32);
}


// Streams replayed inside a multi-core run (cmodel_stream_replay_here): the
// producer stream writes y = x * 2 and ends with a lone core's tpu_sync_all
// (replayed, it must not wait for the other core); the consumer stream
// writes z = y * 3. Core 0 replays the producer, core 1 the consumer;
// with `hand_off` a message orders them.
struct Handed {
  uint64_t x, y, z;
};
extern "C" void produce_kernel(const void *arg) {
  const Handed &a = *static_cast<const Handed *>(arg);
  tpu_gdma_cpy_S2L(0, a.x, &kRow, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_mul_C(4096, 0, f32(2.f), &kRow, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(a.y, 4096, &kRow, nullptr, nullptr, DT_FP32);
  tpu_sync_all();
}
extern "C" void consume_kernel(const void *arg) {
  const Handed &a = *static_cast<const Handed *>(arg);
  tpu_gdma_cpy_S2L(0, a.y, &kRow, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_mul_C(4096, 0, f32(3.f), &kRow, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(a.z, 4096, &kRow, nullptr, nullptr, DT_FP32);
}
struct Stages {
  const cmodel_stream *produce, *consume;
  bool hand_off;
  double time_before = -2, time_after = -2;  // core 1's clock around its replay
};
extern "C" void stages_kernel(const void *arg) {
  auto &a = *static_cast<Stages *>(const_cast<void *>(arg));
  if (tpu_core_index() == 0) {
    cmodel_stream_replay_here(a.produce);
    tpu_poll();
    if (a.hand_off) tpu_gdma_send_msg(20, 1);
    return;
  }
  if (a.hand_off) tpu_gdma_wait_msg(20, 1);
  a.time_before = cmodel_core_time_us();
  cmodel_stream_replay_here(a.consume);
  tpu_poll();
  a.time_after = cmodel_core_time_us();
}

// The message holds `part` (named in the failure with the whole message).
void expect_contains(const std::string &message, const std::string &part) {
  EXPECT_NE(message.find(part), std::string::npos) << "missing: " << part << "\nin: " << message;
}

// Core 1 starts a thread that calls the API: refused, as in a one-core run.
struct ForeignCall {
  int npu_num = -1;
  std::string error;
};
extern "C" void foreign_thread_kernel(const void *arg) {
  auto *out = static_cast<ForeignCall *>(const_cast<void *>(arg));
  if (tpu_core_index() == 1) {
    std::thread other([out] {
      out->npu_num = tpu_npu_num();
      out->error = cmodel_last_error();
    });
    other.join();
  }
  tpu_sync_all();
}

std::string site(const char *function, int line) {
  return std::string(function) + " (multicore_test.cc:" + std::to_string(line) + ")";
}

class MultiCore : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open("bm1688"), 0) << cmodel_last_error(); }
  // Closing puts the options cores and core_schedule back (CoreOptions below).
  void TearDown() override { cmodel_close(); }

  uint64_t buffer(const std::vector<float> &values) {
    const uint64_t addr = cmodel_global_alloc(values.size() * sizeof(float));
    EXPECT_NE(addr, 0u);
    EXPECT_EQ(cmodel_global_write(addr, values.data(), values.size() * sizeof(float)), 0);
    return addr;
  }
  static std::vector<float> read(uint64_t addr, size_t count) {
    std::vector<float> out(count);
    EXPECT_EQ(cmodel_global_read(out.data(), addr, count * sizeof(float)), 0) << cmodel_last_error();
    return out;
  }
  // Inputs exactly representable, and so every product and sum below.
  static std::vector<float> inputs() {
    std::vector<float> x(2 * kWidth);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 17) - 8) + 0.5f;
    return x;
  }
  Split split_buffers() {
    const std::vector<float> zeros(2 * kWidth, 0.f);
    return {buffer(inputs()), buffer(zeros), buffer(std::vector<float>(kWidth, 0.f)),
            buffer(std::vector<float>(kWidth, 0.f))};
  }
  static std::string failure(void (*kernel)(const void *), const void *arg = nullptr) {
    EXPECT_NE(cmodel_run_cores(kernel, arg, 2), 0) << "the run was expected to fail";
    return cmodel_last_error();
  }
  // The emulator still runs multi-core kernels correctly.
  void expect_split_works() {
    const Split a = split_buffers();
    ASSERT_EQ(cmodel_run_cores(split_kernel, &a, 2), 0) << cmodel_last_error();
    const std::vector<float> x = inputs(), total = read(a.total, kWidth), copy = read(a.copy, kWidth);
    const std::vector<float> y = read(a.y, 2 * kWidth);
    for (int i = 0; i < kWidth; ++i) {
      // Hand reference in double: all values are small halves, so exact.
      const double y0 = double(x[size_t(i)]) * 2, y1 = double(x[size_t(kWidth + i)]) * 3;
      ASSERT_EQ(double(y[size_t(i)]), y0) << i;
      ASSERT_EQ(double(y[size_t(kWidth + i)]), y1) << i;
      ASSERT_EQ(double(total[size_t(i)]), y0 + y1) << i;
      ASSERT_EQ(double(copy[size_t(i)]), y0 + y1) << i;
    }
  }
};

TEST_F(MultiCore, ChipsKnowTheirCores) {
  EXPECT_EQ(cmodel_core_count(), 2);
  ASSERT_EQ(cmodel_open("bm1684x"), 0);
  EXPECT_EQ(cmodel_core_count(), 1);
  EXPECT_EQ(cmodel_set_option("cores", "4"), 0);
  EXPECT_EQ(cmodel_core_count(), 4);
  EXPECT_NE(cmodel_set_option("cores", "65"), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("option cores = \"65\""), std::string::npos);
  EXPECT_NE(cmodel_set_option("core_schedule", "random:x"), 0);
  EXPECT_NE(cmodel_run_cores(split_kernel, nullptr, 5), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("core_num = 5; bm1684x has 4 core(s)"), std::string::npos)
      << cmodel_last_error();
}

// Each core notes its index as it reaches the barrier: the order the
// schedule gave the cores (one core runs at a time, so no lock).
extern "C" void arrival_order_kernel(const void *arg) {
  auto *order = static_cast<std::vector<int> *>(const_cast<void *>(arg));
  order->push_back(tpu_core_index());
  tpu_sync_all();
}

std::vector<int> arrival_order(int cores) {
  std::vector<int> order;
  EXPECT_EQ(cmodel_run_cores(arrival_order_kernel, &order, cores), 0) << cmodel_last_error();
  return order;
}

// The options cores and core_schedule belong to one emulator: a later one
// starts with the environment's (the chip's count, in index order), however
// the earlier one ended.
TEST(CoreOptions, EndWithTheirEmulator) {
  if (std::getenv("TPU_SDK_CORES") || std::getenv("TPU_SDK_CORE_SCHEDULE"))
    GTEST_SKIP() << "the environment sets the options this test resets";
  const std::vector<int> in_order = {0, 1, 2, 3};
  ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_set_option("cores", "4"), 0) << cmodel_last_error();
  std::string shuffling_seed;  // one whose schedule is not index order
  for (int seed = 1; seed <= 20 && shuffling_seed.empty(); ++seed) {
    const std::string schedule = "random:" + std::to_string(seed);
    ASSERT_EQ(cmodel_set_option("core_schedule", schedule.c_str()), 0) << cmodel_last_error();
    if (arrival_order(4) != in_order) shuffling_seed = schedule;
  }
  ASSERT_FALSE(shuffling_seed.empty()) << "no seed of 20 shuffled 4 cores";
  cmodel_close();

  ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_core_count(), 1);
  EXPECT_EQ(cmodel_cores_option(), 0);
  ASSERT_EQ(cmodel_set_option("cores", "4"), 0) << cmodel_last_error();
  EXPECT_EQ(arrival_order(4), in_order) << "the schedule " << shuffling_seed << " outlived its emulator";

  // A cmodel_open that replaces the open emulator ends its options too.
  ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_core_count(), 1);

  // Set while none is open: for the next emulator, and that one only.
  cmodel_close();
  ASSERT_EQ(cmodel_set_option("cores", "3"), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_open("bm1688"), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_core_count(), 3);
  cmodel_close();
  ASSERT_EQ(cmodel_open("bm1688"), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_core_count(), 2);
  cmodel_close();
}

TEST_F(MultiCore, TwoCoresSplitRowsAndHandOverWithAMessageAndSyncAll) {
  expect_split_works();
  const nlohmann::json stats = nlohmann::json::parse(cmodel_last_run_stats());
  ASSERT_EQ(stats["cores"].size(), 2u);
  EXPECT_DOUBLE_EQ(stats["total_us"].get<double>(),
                   std::max(stats["cores"][0]["total_us"].get<double>(), stats["cores"][1]["total_us"].get<double>()));
}

TEST_F(MultiCore, RandomSchedulesGiveTheSameResults) {
  for (int seed = 1; seed <= test::rounds(6); ++seed) {
    ASSERT_EQ(cmodel_set_option("core_schedule", ("random:" + std::to_string(seed)).c_str()), 0);
    expect_split_works();
  }
}

TEST_F(MultiCore, CrossCoreRaceNamesBothCallSites) {
  const Split a = split_buffers();
  const std::string message = failure(race_kernel, &a);
  expect_contains(message, "core 1 of 2: tpu_gdma_cpy_L2S: cross-core race");
  expect_contains(message,
                  "core 1's tpu_gdma_cpy_L2S (called from " + site("race_kernel", kRaceWriteLine) + ") writes");
  expect_contains(message, "core 0's tpu_gdma_cpy_S2L (called from " + site("race_kernel", kRaceReadLine) + ") reads");
  expect_contains(message, "[core synchronisation]");
  expect_split_works();
}

// A stream recorded on a lone core, replayed on a core of a multi-core run:
// its commands run there, its tpu_sync_all waits for that core only, and
// its global accesses take part in the race check: without the message,
// core 1 reads y while core 0 writes it.
TEST_F(MultiCore, StreamsReplayOnTheirCoresAndAMissingHandOffIsARace) {
  const std::vector<float> x = inputs();
  const Handed h{buffer({x.begin(), x.begin() + kWidth}), buffer(std::vector<float>(kWidth, 0.f)),
                 buffer(std::vector<float>(kWidth, 0.f))};
  const auto record = [&](void (*kernel)(const void *), const char *origin) {
    EXPECT_EQ(cmodel_record_begin(origin), 0) << cmodel_last_error();
    EXPECT_EQ(cmodel_run(kernel, &h), 0) << cmodel_last_error();
    void *bytes = nullptr;
    uint64_t size = 0;
    EXPECT_EQ(cmodel_record_end(&bytes, &size), 0) << cmodel_last_error();
    cmodel_stream *stream = cmodel_stream_open(bytes, size);
    EXPECT_NE(stream, nullptr) << cmodel_last_error();
    cmodel_record_free(bytes);
    return stream;
  };
  cmodel_stream *produce = record(produce_kernel, "stage 0"), *consume = record(consume_kernel, "stage 1");
  ASSERT_TRUE(produce && consume);
  ASSERT_EQ(cmodel_global_write(h.z, std::vector<float>(kWidth, -1.f).data(), kRowBytes), 0);
  Stages ordered{produce, consume, true};
  ASSERT_EQ(cmodel_run_cores(stages_kernel, &ordered, 2), 0) << cmodel_last_error();
  const std::vector<float> z = read(h.z, kWidth);
  for (int i = 0; i < kWidth; ++i) ASSERT_EQ(double(z[size_t(i)]), double(x[size_t(i)]) * 6) << i;
  // Core 1 waited for core 0's replay, then ran its own on its clock.
  EXPECT_GT(ordered.time_before, 0);
  EXPECT_GT(ordered.time_after, ordered.time_before);

  Stages unordered{produce, consume, false};
  const std::string message = failure(stages_kernel, &unordered);
  expect_contains(message, "cross-core race");
  expect_contains(message, "stage 0");
  expect_contains(message, "stage 1");
  // Outside a kernel the replay is refused; a null stream too.
  EXPECT_NE(cmodel_stream_replay_here(produce), 0);
  expect_contains(cmodel_last_error(), "no kernel runs on this thread");
  EXPECT_EQ(cmodel_core_time_us(), -1);
  cmodel_stream_close(produce);
  cmodel_stream_close(consume);
  EXPECT_EQ(cmodel_stream_open(nullptr, 0), nullptr);
  expect_split_works();
}

TEST_F(MultiCore, DeadlockNamesEveryCoresWait) {
  const std::string message = failure(deadlock_kernel);
  expect_contains(message, "deadlock: every core of the 2-core run waits");
  for (int core = 0; core < 2; ++core)
    expect_contains(message, "core " + std::to_string(core) + " waits in tpu_gdma_wait_msg (called from " +
                           site("deadlock_kernel", kDeadlockLine) + ") for 1 send(s) of message " +
                           std::to_string(10 + core));
  expect_split_works();
}

TEST_F(MultiCore, MissingPeerIsAWaitThatCanNeverPass) {
  const std::string message = failure(missing_peer_kernel);
  expect_contains(message, "core 0 of 2: tpu_sync_all: a wait that can never be satisfied");
  expect_contains(message, "core 0 waits in tpu_sync_all (called from " +
                               site("missing_peer_kernel", kMissingPeerLine) + ") for all 2 cores");
  expect_contains(message, "core 1 has finished");
  expect_split_works();
}

TEST_F(MultiCore, MessageNobodyWaitsForFailsTheRun) {
  const std::string message = failure(unconsumed_message_kernel);
  expect_contains(message, "message slot 7 was sent 1 time(s) (first from " +
                         site("unconsumed_message_kernel", kUnconsumedLine) + ") for 1 wait(s), and 0 came");
}

TEST_F(MultiCore, OneCoresErrorStopsTheOthers) {
  const std::string message = failure(failing_core_kernel);
  expect_contains(message, "core 1 of 2: tpu_core_barrier: core_num = 3; this run has 2 cores");
  expect_contains(message, site("failing_core_kernel", kBadBarrierLine));
  expect_split_works();
}

TEST_F(MultiCore, ReducingCopiesFromBothCoresCombineInL2) {
  const std::vector<float> x = inputs();
  const uint64_t l2 = 0x10000000;  // bm1688's L2 SRAM
  const std::vector<float> zeros(kWidth, 0.f);
  ASSERT_EQ(cmodel_global_write(l2, zeros.data(), kRowBytes), 0) << cmodel_last_error();
  const Reduce a{buffer(x), l2, buffer(zeros)};
  ASSERT_EQ(cmodel_run_cores(reduce_kernel, &a, 2), 0) << cmodel_last_error();
  const std::vector<float> out = read(a.out, kWidth);
  for (int i = 0; i < kWidth; ++i) EXPECT_EQ(double(out[size_t(i)]), double(x[size_t(i)]) + x[size_t(kWidth + i)]);
}

TEST_F(MultiCore, PartitionQueriesAnswerPerCoreAndMoreCoresCanBeEmulated) {
  ASSERT_EQ(cmodel_set_option("cores", "4"), 0);
  const uint64_t out = cmodel_global_alloc(4 * 6 * sizeof(int));
  ASSERT_EQ(cmodel_run_cores(queries_kernel, &out, 4), 0) << cmodel_last_error();
  std::vector<int> got(4 * 6);
  ASSERT_EQ(cmodel_global_read(got.data(), out, got.size() * sizeof(int)), 0);
  for (int k = 0; k < 4; ++k) {
    const std::vector<int> mine(got.begin() + 6 * k, got.begin() + 6 * k + 6);
    EXPECT_EQ(mine, (std::vector<int>{k, 4, k, 4, k == 3 ? 1 : 0, k})) << "core " << k;
  }
}

TEST_F(MultiCore, RunTimeIsTheSlowestCoreAtTheSharedBandwidth) {
  const uint64_t bytes = uint64_t(kStreamShape.c) * kStreamShape.w * sizeof(float);
  const Stream a{buffer(std::vector<float>(bytes / sizeof(float), 1.f))};
  // bm1688: GDMA at 750 MHz, 64 cycles per command; 24 GB/s alone, 15 GB/s
  // when both cores stream (docs/cmodel.md).
  auto us = [&](double bytes_per_s) { return (std::ceil(double(bytes) / (bytes_per_s / 750e6)) + 64) / 750.0; };
  ASSERT_EQ(cmodel_run(stream_once_kernel, &a), 0) << cmodel_last_error();
  EXPECT_NEAR(nlohmann::json::parse(cmodel_last_run_stats())["total_us"].get<double>(), us(24e9), 1e-3);
  ASSERT_EQ(cmodel_run_cores(stream_kernel, &a, 2), 0) << cmodel_last_error();
  const nlohmann::json stats = nlohmann::json::parse(cmodel_last_run_stats());
  EXPECT_NEAR(stats["total_us"].get<double>(), 2 * us(15e9), 1e-3) << stats.dump();
  EXPECT_NEAR(stats["cores"][0]["total_us"].get<double>(), us(15e9), 1e-3) << stats.dump();
}

TEST_F(MultiCore, TheTraceHasLanesPerCoreAndItsClockMovesPastTheSlowestCore) {
  const uint64_t bytes = uint64_t(kStreamShape.c) * kStreamShape.w * sizeof(float);
  const Stream a{buffer(std::vector<float>(bytes / sizeof(float), 1.f))};
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  ASSERT_EQ(cmodel_run_cores(stream_kernel, &a, 2), 0) << cmodel_last_error();
  const double run_us = nlohmann::json::parse(cmodel_last_run_stats())["total_us"].get<double>();
  const nlohmann::json trace = nlohmann::json::parse(cmodel_trace_json());
  std::map<int, std::string> lanes;
  std::map<std::string, std::vector<double>> starts;  // lane title -> command start times
  for (const auto &e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") lanes[e["tid"].get<int>()] = e["args"]["name"];
  for (const auto &e : trace["traceEvents"])
    if (e["ph"] == "X") starts[lanes.at(e["tid"].get<int>())].push_back(e["ts"].get<double>());
  for (const char *lane : {"core 0 GDMA", "core 0 BDC", "core 1 GDMA", "core 1 SDMA"})
    EXPECT_TRUE(std::any_of(lanes.begin(), lanes.end(), [&](const auto &l) { return l.second == lane; })) << lane;
  // Core 0 moved first, core 1 after the barrier, at the end of core 0's move.
  ASSERT_EQ(starts["core 0 GDMA"].size(), 1u);
  ASSERT_EQ(starts["core 1 GDMA"].size(), 1u);
  EXPECT_EQ(starts["core 0 GDMA"][0], 0);
  EXPECT_NEAR(starts["core 1 GDMA"][0], run_us / 2, 1e-3);
  EXPECT_NEAR(trace["otherData"]["clock_us"].get<double>(), run_us, 1e-6);
  cmodel_trace_enable(0);
}

TEST_F(MultiCore, ThreadsAKernelStartsAreRefused) {
  ForeignCall call;
  ASSERT_EQ(cmodel_run_cores(foreign_thread_kernel, &call, 2), 0) << cmodel_last_error();
  EXPECT_EQ(call.npu_num, 0);
  expect_contains(call.error, "tpu_npu_num was called from a thread other than the one running the kernel");
}

TEST_F(MultiCore, CoreSetupRunsAloneRefuseCrossCoreBarriers) {
  ASSERT_EQ(cmodel_set_core(0, 2), 0);
  EXPECT_NE(cmodel_run(missing_peer_kernel, nullptr), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("run the cores of a group together with cmodel_run_cores"),
            std::string::npos)
      << cmodel_last_error();
  ASSERT_EQ(cmodel_set_core(0, 1), 0);
}

// Core k copies row k of x to NPU 0's local bytes [0, kRowBytes).
extern "C" void own_row_to_local_kernel(const void *arg) {
  const uint64_t x = *static_cast<const uint64_t *>(arg);
  tpu_gdma_cpy_S2L(0, x + uint64_t(tpu_core_index()) * kRowBytes, &kRow, nullptr, nullptr, DT_FP32);
}

TEST_F(MultiCore, LocalMemoryCanBeReadPerCoreAfterTheRun) {
  const std::vector<float> x = inputs();
  const uint64_t addr = buffer(x);
  ASSERT_EQ(cmodel_run_cores(own_row_to_local_kernel, &addr, 2), 0) << cmodel_last_error();
  std::vector<float> row(kWidth);
  for (int core = 0; core < 2; ++core) {
    ASSERT_EQ(cmodel_local_read_core(row.data(), core, 0, 0, kRowBytes), 0) << cmodel_last_error();
    EXPECT_EQ(std::memcmp(row.data(), x.data() + size_t(core) * kWidth, kRowBytes), 0) << "core " << core;
  }
  // The old call reads core 0, as documented.
  ASSERT_EQ(cmodel_local_read(row.data(), 0, 0, kRowBytes), 0) << cmodel_last_error();
  EXPECT_EQ(std::memcmp(row.data(), x.data(), kRowBytes), 0);
  EXPECT_NE(cmodel_local_read_core(row.data(), 2, 0, 0, kRowBytes), 0);
  expect_contains(cmodel_last_error(), "core 2 does not exist on bm1688 (cores 0..1");
  EXPECT_NE(cmodel_local_read_core(row.data(), -1, 0, 0, kRowBytes), 0);
  // Poisoning reaches every core's local memory.
  ASSERT_EQ(cmodel_local_poison(1), 0) << cmodel_last_error();
  std::vector<uint8_t> bytes(kRowBytes);
  ASSERT_EQ(cmodel_local_read_core(bytes.data(), 1, 0, 0, kRowBytes), 0) << cmodel_last_error();
  EXPECT_TRUE(std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0xFF; }));
}

// split_kernel with CDMA messages, or with a CDMA send and a GDMA wait.
extern "C" void cdma_split_kernel(const void *arg) {
  const Split &a = *static_cast<const Split *>(arg);
  const int k = tpu_core_index();
  scale_own_row(a, k);
  if (k == 1) tpu_cdma_send_msg(0, kMessage, 1);
  if (k == 0) {
    tpu_cdma_wait_msg(0, kMessage, 1);
    add_rows(a);
  }
  tpu_sync_all();
  if (k == 1) tpu_gdma_cpy_S2S(a.copy, a.total, &kRow, nullptr, nullptr, DT_FP32);
}
extern "C" void cdma_to_gdma_kernel(const void *arg) {
  const Split &a = *static_cast<const Split *>(arg);
  const int k = tpu_core_index();
  scale_own_row(a, k);
  if (k == 1) tpu_cdma_send_msg(3, kMessage, 1);
  if (k == 0) {
    tpu_gdma_wait_msg(kMessage, 1);
    add_rows(a);
  }
}
constexpr int kCdmaDeadlockLine = __LINE__ + 2;
extern "C" void cdma_deadlock_kernel(const void *) {
  tpu_cdma_wait_msg(0, 20 + tpu_core_index(), 1);
  tpu_cdma_send_msg(0, 20 + (1 - tpu_core_index()), 1);
}
extern "C" void cdma_bad_port_kernel(const void *) { tpu_cdma_send_msg(-1, 1, 1); }

TEST_F(MultiCore, CdmaMessagesUseTheSameSlots) {
  // Ordered by the CDMA message, the hand-over is no race and the sum is right.
  for (auto kernel : {cdma_split_kernel, cdma_to_gdma_kernel}) {
    const Split a = split_buffers();
    ASSERT_EQ(cmodel_run_cores(kernel, &a, 2), 0) << cmodel_last_error();
    const std::vector<float> x = inputs(), total = read(a.total, kWidth);
    for (int i = 0; i < kWidth; ++i)
      ASSERT_EQ(double(total[size_t(i)]), double(x[size_t(i)]) * 2 + double(x[size_t(kWidth + i)]) * 3) << i;
  }
  const std::string deadlock = failure(cdma_deadlock_kernel);
  expect_contains(deadlock, "deadlock");
  expect_contains(deadlock, "core 0 waits in tpu_cdma_wait_msg (called from " +
                                site("cdma_deadlock_kernel", kCdmaDeadlockLine));
  expect_contains(deadlock, "1 send(s) of message 20 (slot 20; 0 arrived)");
  expect_contains(failure(cdma_bad_port_kernel), "port = -1; CDMA ports are not negative");
  // Alone on a core a CDMA message does nothing, as before.
  const Split a = split_buffers();
  cmodel_set_core(1, 2);
  EXPECT_EQ(cmodel_run(cdma_to_gdma_kernel, &a), 0) << cmodel_last_error();
  cmodel_set_core(0, 1);
}

#ifdef TPU_SAMPLE_OPS_LIB_DIR
// The sample linear op (customlayer/src/tpu_impl_linear.c) splits its
// output rows across the cores: on 2 and 4 cores its outputs are those of
// one core bit for bit, with no cross-core race, and all match a double
// reference within the fp32 bound of a K-term sum.
using LinearFn = void (*)(uint64_t, uint64_t, uint64_t, uint64_t, int64_t, int, int, bool, bool, data_type_t);
struct Linear {
  LinearFn fn;
  uint64_t y, x, w, b;
  int64_t M;
  int K, O;
};
extern "C" void linear_kernel(const void *arg) {
  const Linear &a = *static_cast<const Linear *>(arg);
  a.fn(a.y, a.x, a.w, a.b, a.M, a.K, a.O, true, false, DT_FP32);
}

TEST_F(MultiCore, SampleLinearSplitByRowsMatchesOneCore) {
  void *lib = dlopen(TPU_SAMPLE_OPS_LIB_DIR "/libcmodel_custom_bm1688.so", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  Linear a{reinterpret_cast<LinearFn>(dlsym(lib, "tpu_impl_linear_global")), 0, 0, 0, 0, 37, 20, 9};
  ASSERT_NE(a.fn, nullptr);
  std::vector<float> x(size_t(a.M * a.K)), w(size_t(a.O * a.K)), b(size_t(a.O));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 7 % 23) - 11) / 8.f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i * 5 % 19) - 9) / 16.f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(i) - 4.f;
  a.x = buffer(x);
  a.w = buffer(w);
  a.b = buffer(b);
  ASSERT_EQ(cmodel_set_option("cores", "4"), 0);
  std::vector<std::vector<float>> results;
  for (int cores : {1, 2, 4}) {
    a.y = buffer(std::vector<float>(size_t(a.M * a.O), -1.f));
    ASSERT_EQ(cores == 1 ? cmodel_run(linear_kernel, &a) : cmodel_run_cores(linear_kernel, &a, cores), 0)
        << cores << " cores: " << cmodel_last_error();
    results.push_back(read(a.y, size_t(a.M * a.O)));
  }
  for (size_t r = 1; r < results.size(); ++r)
    EXPECT_EQ(std::memcmp(results[0].data(), results[r].data(), results[0].size() * sizeof(float)), 0) << r;
  // Every product and partial sum is a multiple of 2^-7 below 2^10: exact
  // in fp32, so the double reference must match exactly.
  for (int64_t m = 0; m < a.M; ++m)
    for (int o = 0; o < a.O; ++o) {
      double sum = b[size_t(o)];
      for (int k = 0; k < a.K; ++k) sum += double(x[size_t(m * a.K + k)]) * w[size_t(o * a.K + k)];
      ASSERT_EQ(double(results[2][size_t(m * a.O + o)]), sum) << m << ", " << o;
    }
  dlclose(lib);
}
#endif

}  // namespace
