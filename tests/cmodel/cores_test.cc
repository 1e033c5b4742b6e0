// cores_test: the order cmodel::CoreSync keeps between the cores of a
// multi-core run, and the byte ranges the cross-core race check compares.
// References: the byte sets enumerated element by element here, and the
// happens-before relation worked out by hand for each scenario.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "cmodel/cores.h"
#include "cmodel/error.h"
#include "support/test_support.h"

namespace {

using cmodel::CoreAccess;
using cmodel::CoreSync;

cmodel::TensorRef system_tensor(uint64_t addr, int esize, dim4 shape, dim4 stride) {
  cmodel::TensorRef t{};
  t.space = cmodel::Space::system;
  t.esize = esize;
  t.shape = shape;
  t.stride = stride;
  t.addr = addr;
  return t;
}

// Every byte the tensor's elements cover, one element at a time.
std::set<uint64_t> bytes_of(const cmodel::TensorRef &t) {
  std::set<uint64_t> bytes;
  for (int n = 0; n < t.shape.n; ++n)
    for (int c = 0; c < t.shape.c; ++c)
      for (int h = 0; h < t.shape.h; ++h)
        for (int w = 0; w < t.shape.w; ++w) {
          const int64_t e = int64_t(n) * t.stride.n + int64_t(c) * t.stride.c + int64_t(h) * t.stride.h +
                            int64_t(w) * t.stride.w;
          for (int b = 0; b < t.esize; ++b) bytes.insert(uint64_t(int64_t(t.addr) + e * t.esize + b));
        }
  return bytes;
}

std::set<uint64_t> bytes_of(const std::vector<std::pair<uint64_t, uint64_t>> &ranges) {
  std::set<uint64_t> bytes;
  for (const auto &[lo, hi] : ranges)
    for (uint64_t b = lo; b < hi; ++b) bytes.insert(b);
  return bytes;
}

TEST(CoreRanges, SystemRangesAreTheTensorsBytes) {
  std::mt19937 rng(34);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < test::rounds(300); ++round) {
    const dim4 shape = {pick(1, 3), pick(1, 4), pick(1, 3), pick(1, 5)};
    const dim4 stride = {pick(-40, 40), pick(-12, 12), pick(-6, 6), pick(-2, 3)};
    const int esize = 1 << pick(0, 2);
    const cmodel::TensorRef t = system_tensor(0x100000 + 4096, esize, shape, stride);
    const auto ranges = cmodel::system_ranges(t);
    for (size_t i = 1; i < ranges.size(); ++i) ASSERT_LT(ranges[i - 1].second, ranges[i].first) << "merged, sorted";
    ASSERT_EQ(bytes_of(ranges), bytes_of(t)) << "round " << round;
  }
}

TEST(CoreRanges, TooManyRowsFallBackToTheBound) {
  const cmodel::TensorRef t = system_tensor(1000, 4, {1, 1, 100, 1}, {0, 0, 2, 1});
  const auto ranges = cmodel::system_ranges(t, 10);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0], (std::pair<uint64_t, uint64_t>{1000, 1000 + (99 * 2 + 1) * 4}));
}

TEST(CoreRanges, MeetIsSharingAByte) {
  std::mt19937 rng(7);
  for (int round = 0; round < test::rounds(300); ++round) {
    std::vector<std::pair<uint64_t, uint64_t>> a, b;
    uint64_t at = 0;
    for (int i = 0; i < 4; ++i) {
      at += 1 + rng() % 5;
      const uint64_t end = at + 1 + rng() % 4;
      (rng() % 2 ? a : b).emplace_back(at, end);
      at = end;
    }
    // Shift b by a random amount so ranges may overlap; keep each list sorted.
    const uint64_t shift = rng() % 6;
    for (auto &r : b) r = {r.first + shift, r.second + shift};
    std::set<uint64_t> common;
    const std::set<uint64_t> ab = bytes_of(a), bb = bytes_of(b);
    for (uint64_t x : ab)
      if (bb.count(x)) common.insert(x);
    EXPECT_EQ(cmodel::ranges_meet(a, b), !common.empty()) << "round " << round;
  }
}

CoreAccess access(int core, uint64_t lo, uint64_t hi, bool write, int reduce_op = -1) {
  CoreAccess a;
  a.core = core;
  a.write = write;
  a.reduce_op = reduce_op;
  a.what = "test";
  a.ranges = {{lo, hi}};
  return a;
}

TEST(CoreSync, UnorderedWriteAndReadOfOneByteRace) {
  CoreSync sync(2);
  EXPECT_EQ(sync.access(access(0, 100, 108, true)), nullptr);
  EXPECT_EQ(sync.access(access(1, 108, 116, false)), nullptr) << "adjacent, not overlapping";
  EXPECT_EQ(sync.access(access(1, 0, 50, true)), nullptr) << "elsewhere";
  const CoreAccess *other = sync.access(access(1, 107, 108, false));
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->core, 0);
  EXPECT_NE(sync.access(access(0, 40, 44, false)), nullptr) << "core 1 wrote it, unordered";
}

TEST(CoreSync, ReadsDoNotRaceAndOneCoreDoesNotRaceItself) {
  CoreSync sync(2);
  EXPECT_EQ(sync.access(access(0, 0, 8, false)), nullptr);
  EXPECT_EQ(sync.access(access(1, 0, 8, false)), nullptr);
  EXPECT_EQ(sync.access(access(0, 100, 108, true)), nullptr);
  EXPECT_EQ(sync.access(access(0, 100, 108, false)), nullptr) << "core 0 reads its own write";
  EXPECT_EQ(sync.access(access(0, 100, 108, true)), nullptr) << "and writes it again";
  EXPECT_NE(sync.access(access(1, 104, 105, true)), nullptr) << "core 1's write against core 0's";
  EXPECT_NE(sync.access(access(0, 0, 1, true)), nullptr) << "core 0's write against core 1's read";
}

TEST(CoreSync, AMessageOrdersWhatCameBeforeTheSendBeforeWhatComesAfterTheWait) {
  CoreSync sync(2);
  std::string error;
  EXPECT_EQ(sync.access(access(1, 0, 8, true)), nullptr);
  ASSERT_TRUE(sync.send(1, 5, 1, 0, {}, &error)) << error;
  EXPECT_EQ(sync.access(access(1, 64, 72, true)), nullptr) << "after the send";
  EXPECT_FALSE(sync.can_pass_wait(5, 2));
  ASSERT_TRUE(sync.can_pass_wait(5, 1));
  sync.pass_wait(0, 5);
  EXPECT_EQ(sync.access(access(0, 0, 8, false)), nullptr) << "ordered by the message";
  EXPECT_NE(sync.access(access(0, 64, 72, false)), nullptr) << "written after the send: not ordered";
  EXPECT_TRUE(sync.unconsumed().empty()) << "the one wait consumed it";
}

TEST(CoreSync, SendsOfOneSlotMustAgreeOnTheirWaits) {
  CoreSync sync(3);
  std::string error;
  ASSERT_TRUE(sync.send(0, 130, 2, 0, {}, &error));  // slot 2
  EXPECT_FALSE(sync.send(1, 2, 1, 0, {}, &error));
  EXPECT_NE(error.find("was sent before"), std::string::npos) << error;
  ASSERT_TRUE(sync.send(2, 2, 2, 0, {}, &error)) << error;
  sync.pass_wait(1, 2);
  ASSERT_EQ(sync.unconsumed().size(), 1u) << "one of two waits came";
  sync.pass_wait(2, 2);
  EXPECT_TRUE(sync.unconsumed().empty());
}

TEST(CoreSync, ABarrierOrdersEverythingBeforeItAndPassesAtTheLastArrival) {
  CoreSync sync(3);
  EXPECT_EQ(sync.access(access(0, 0, 8, true)), nullptr);
  EXPECT_EQ(sync.access(access(2, 16, 24, true)), nullptr);
  double release = -1;
  const uint64_t g0 = sync.arrive(0, -1, 3, 10.0);
  const uint64_t g2 = sync.arrive(2, -1, 3, 30.0);
  EXPECT_FALSE(sync.barrier_passed(-1, g0, &release));
  EXPECT_EQ(sync.arrived(-1), 2);
  const uint64_t g1 = sync.arrive(1, -1, 3, 20.0);
  ASSERT_TRUE(sync.barrier_passed(-1, g1, &release));
  EXPECT_EQ(release, 30.0) << "the last arrival's time";
  for (int core : {0, 1, 2}) sync.pass_barrier(core, -1);
  (void)g2;
  EXPECT_EQ(sync.access(access(1, 0, 24, true)), nullptr) << "after the barrier";
  EXPECT_NE(sync.access(access(2, 0, 1, false)), nullptr) << "core 1's write after the barrier is not ordered";
}

TEST(CoreSync, ReductionsOfOneOpcodeCombineButRaceWithPlainAccesses) {
  CoreSync sync(2);
  constexpr int add = 4, max = 2;
  EXPECT_EQ(sync.access(access(0, 0, 64, true, add)), nullptr);
  EXPECT_EQ(sync.access(access(1, 0, 64, true, add)), nullptr);
  EXPECT_NE(sync.access(access(1, 0, 4, true, max)), nullptr) << "another opcode";
  EXPECT_NE(sync.access(access(1, 8, 12, false)), nullptr) << "a plain read";
}

}  // namespace
