// global_memory_test: the global-memory allocator (first fit over the free
// gaps, O(log n)) against a plain reference allocator written here, the
// size setter, host copies outside the buffers in both settings, and the
// in-emulator copy and fill.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cmodel/chip_spec.h"
#include "cmodel/error.h"
#include "cmodel/memory.h"
#include "cmodel_host.h"
#include "support/test_support.h"

namespace {

constexpr uint64_t base = 0x100000000ull;

uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// First fit the slow, obvious way: walk the blocks in address order and
// take the first aligned place before the next block (or the end).
class ReferenceAllocator {
 public:
  explicit ReferenceAllocator(uint64_t bytes) : bytes_(bytes) {}
  uint64_t allocate(uint64_t bytes, uint64_t alignment) {
    if (bytes == 0 || bytes > bytes_) return 0;
    alignment = std::max<uint64_t>(alignment, 512);
    const uint64_t size = round_up(bytes, 512);
    uint64_t place = round_up(base, alignment);
    for (const auto &[addr, occupied] : blocks_) {
      if (place + size <= addr) break;
      place = std::max(place, round_up(addr + occupied, alignment));
    }
    if (place + size > base + bytes_) return 0;
    blocks_[place] = size;
    return place;
  }
  bool allocate_at(uint64_t addr, uint64_t bytes) {
    const uint64_t size = round_up(bytes, 512);
    if (bytes == 0 || addr % 512 || addr < base || addr + size > base + bytes_) return false;
    for (const auto &[start, occupied] : blocks_)
      if (start < addr + size && addr < start + occupied) return false;
    blocks_[addr] = size;
    return true;
  }
  bool release(uint64_t addr) { return blocks_.erase(addr) == 1; }

 private:
  uint64_t bytes_;
  std::map<uint64_t, uint64_t> blocks_;  // address -> occupied bytes
};

TEST(GlobalMemoryAllocator, FirstFitMatchesTheReferenceThroughRandomTraffic) {
  const uint64_t bytes = 64ull << 20;
  std::mt19937_64 random(36);
  for (int round = 0; round < test::rounds(8); ++round) {
    cmodel::GlobalMemory memory(base, bytes);
    ReferenceAllocator reference(bytes);
    std::vector<uint64_t> live;
    for (int step = 0; step < 3000; ++step) {
      const int what = int(random() % 10);
      if (what < 5) {
        const uint64_t size = 1 + random() % (what == 0 ? (4u << 20) : 20000u);
        const uint64_t alignment = uint64_t(1) << (9 + random() % 8);  // 512 B .. 64 KiB
        const uint64_t expected = reference.allocate(size, alignment);
        ASSERT_EQ(memory.allocate(size, alignment), expected) << "step " << step << ": " << size << " bytes";
        if (expected) live.push_back(expected);
      } else if (what < 9 && !live.empty()) {
        const size_t index = random() % live.size();
        ASSERT_TRUE(memory.release(live[index]));
        ASSERT_TRUE(reference.release(live[index]));
        live.erase(live.begin() + long(index));
      } else {
        const uint64_t addr = base + (random() % (bytes / 512)) * 512, size = 1 + random() % 8192;
        const bool expected = reference.allocate_at(addr, size);
        ASSERT_EQ(memory.allocate_at(addr, size), expected) << "allocate_at " << addr;
        if (expected) live.push_back(addr);
      }
    }
    EXPECT_FALSE(memory.release(base + 3));  // never the start of a block
  }
}

// Freed neighbours join: after freeing everything in any order, one block of
// the whole memory fits again, and the bytes in use go back to 0.
TEST(GlobalMemoryAllocator, FreedGapsJoinAndTheCountGoesBackToZero) {
  const uint64_t bytes = 1ull << 20;
  cmodel::GlobalMemory memory(base, bytes);
  std::vector<uint64_t> blocks;
  for (uint64_t addr; (addr = memory.allocate(1000)) != 0;) blocks.push_back(addr);
  EXPECT_EQ(blocks.size(), bytes / 1024);  // 1000 bytes occupy 1024
  EXPECT_EQ(memory.bytes_allocated(), blocks.size() * 1000);
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937(7));
  for (uint64_t addr : blocks) ASSERT_TRUE(memory.release(addr));
  EXPECT_EQ(memory.bytes_allocated(), 0u);
  EXPECT_EQ(memory.allocate(bytes), base);
}

// A gap long enough for the size but not at the alignment is passed over
// for the next one that fits, as first fit must.
TEST(GlobalMemoryAllocator, MisalignedGapIsPassedOver) {
  cmodel::GlobalMemory memory(base, 1ull << 20);
  const uint64_t first = memory.allocate(512);
  const uint64_t hole = memory.allocate(8192);
  memory.allocate(512);
  ASSERT_TRUE(memory.release(hole));
  // The 8 KiB hole starts 512 bytes in: an 8 KiB block aligned to 8 KiB
  // does not fit there, a 4 KiB one aligned to 4 KiB does.
  EXPECT_EQ(hole, first + 512);
  EXPECT_EQ(memory.allocate(8192, 8192), base + 16384);
  EXPECT_EQ(memory.allocate(4096, 4096), base + 4096);
}

TEST(GlobalMemoryAllocator, ResizeOnlyWhileUnused) {
  cmodel::GlobalMemory memory(base, 1ull << 20);
  memory.resize(2ull << 20);
  EXPECT_EQ(memory.size(), 2ull << 20);
  EXPECT_EQ(memory.allocate(2ull << 20), base);
  try {
    memory.resize(4ull << 20);
    FAIL() << "resized a memory in use";
  } catch (const cmodel::Error &e) {
    EXPECT_CONTAINS(e.what(), "global memory is in use (1 buffers hold");
    EXPECT_CONTAINS(e.what(), "the first at 0x100000000");
  }
  EXPECT_EQ(memory.size(), 2ull << 20);
}

// ---- through the host API --------------------------------------------------

class GlobalMemoryHost : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error(); }
  void TearDown() override {
    cmodel_set_option("unallocated_copies", "");
    cmodel_set_global_mem_size(0);
    cmodel_close();
  }
};

TEST_F(GlobalMemoryHost, SizeSetterAppliesBeforeTheFirstAllocationOnly) {
  EXPECT_EQ(cmodel_global_size(), 12ull << 30);
  ASSERT_EQ(cmodel_set_global_mem_size(16ull << 30), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_global_size(), 16ull << 30);
  std::vector<uint64_t> buffers;
  for (int i = 0; i < 4; ++i) buffers.push_back(cmodel_global_alloc(1ull << 30));
  for (uint64_t addr : buffers) EXPECT_NE(addr, 0u) << cmodel_last_error();
  EXPECT_EQ(cmodel_set_global_mem_size(8ull << 30), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "global memory is in use (4 buffers hold 4294967296 bytes");
  EXPECT_CONTAINS(cmodel_last_error(), "only before the first allocation");
  EXPECT_EQ(cmodel_global_size(), 16ull << 30);
  for (uint64_t addr : buffers) cmodel_global_free(addr);
  // Emulators opened later take the size too, over the environment's.
  setenv("TPU_SDK_GLOBAL_MEM_SIZE", "4G", 1);
  ASSERT_EQ(cmodel_open("bm1688"), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_global_size(), 16ull << 30);
  ASSERT_EQ(cmodel_set_global_mem_size(0), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_global_size(), 4ull << 30);
  unsetenv("TPU_SDK_GLOBAL_MEM_SIZE");
  for (uint64_t bad : {uint64_t(1000), uint64_t((32ull << 30) + 512)}) {
    EXPECT_EQ(cmodel_set_global_mem_size(bad), -1);
    EXPECT_CONTAINS(cmodel_last_error(),
                    "is not a size of global memory (a positive multiple of 512 bytes up to 32 GiB)");
  }
}

TEST_F(GlobalMemoryHost, StrictCopyOutsideTheBuffersNamesTheNeighbours) {
  const uint64_t below = cmodel_global_alloc(1000), above = cmodel_global_alloc_aligned(64, 65536);
  ASSERT_EQ(below, base);
  ASSERT_EQ(above, base + 65536);
  const uint32_t word = 0x12345678;
  EXPECT_EQ(cmodel_global_write(base + 4096, &word, 4), -1);
  const std::string message = cmodel_last_error();
  EXPECT_CONTAINS(message, "global range [0x100001000, 0x100001004) (4 bytes) is not inside one allocated buffer");
  EXPECT_CONTAINS(message, "the buffer below is [0x100000000, 0x1000003e8)");
  EXPECT_CONTAINS(message, "the buffer above is [0x100010000, 0x100010040)");
  EXPECT_CONTAINS(message, "TPU_SDK_UNALLOCATED_COPIES=allow");
  uint32_t read = 0;
  EXPECT_EQ(cmodel_global_read(&read, above + 64, 4), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "no buffer lies above");
}

TEST_F(GlobalMemoryHost, DeviceLikeCopiesReachAnyGlobalAddressButNotBeyond) {
  ASSERT_EQ(cmodel_set_option("unallocated_copies", "allow"), 0) << cmodel_last_error();
  const uint32_t word = 0xcafef00d;
  const uint64_t addr = base + (5ull << 30) + 12;
  ASSERT_EQ(cmodel_global_write(addr, &word, 4), 0) << cmodel_last_error();
  uint32_t read = 0;
  ASSERT_EQ(cmodel_global_read(&read, addr, 4), 0) << cmodel_last_error();
  EXPECT_EQ(read, word);
  // The end of global memory still ends it.
  EXPECT_EQ(cmodel_global_write(base + (12ull << 30) - 2, &word, 4), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "is not inside global memory [0x100000000, 0x400000000)");
  // A copy outside the buffers counts as use: the size is fixed now.
  EXPECT_EQ(cmodel_set_global_mem_size(4ull << 30), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "host copies wrote outside every buffer");
  // Kernels stay bound to buffers; back to strict, host copies are too.
  ASSERT_EQ(cmodel_set_option("unallocated_copies", "error"), 0);
  EXPECT_EQ(cmodel_global_read(&read, addr, 4), -1);
  EXPECT_EQ(cmodel_set_option("unallocated_copies", "sometimes"), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "option unallocated_copies = \"sometimes\"");
}

TEST_F(GlobalMemoryHost, EnvironmentChoosesTheCopySettingAtOpen) {
  setenv("TPU_SDK_UNALLOCATED_COPIES", "allow", 1);
  ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
  const uint32_t word = 7;
  EXPECT_EQ(cmodel_global_write(base + 4096, &word, 4), 0) << cmodel_last_error();
  setenv("TPU_SDK_UNALLOCATED_COPIES", "yes", 1);
  EXPECT_EQ(cmodel_open("bm1684x"), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "TPU_SDK_UNALLOCATED_COPIES=\"yes\" is not a setting");
  unsetenv("TPU_SDK_UNALLOCATED_COPIES");
  ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_global_write(base + 4096, &word, 4), -1);
}

// cmodel_global_copy is memmove; cmodel_global_fill repeats the pattern and
// cuts the last one short. Reference: the same on a host vector.
TEST_F(GlobalMemoryHost, CopyAndFillInsideTheEmulator) {
  const uint64_t bytes = 3 * 4096 + 7;
  const uint64_t addr = cmodel_global_alloc(bytes);
  std::vector<uint8_t> model(bytes);
  for (size_t i = 0; i < bytes; ++i) model[i] = uint8_t(i * 31 + 5);
  ASSERT_EQ(cmodel_global_write(addr, model.data(), bytes), 0);
  auto device = [&] {
    std::vector<uint8_t> out(bytes);
    EXPECT_EQ(cmodel_global_read(out.data(), addr, bytes), 0) << cmodel_last_error();
    return out;
  };
  ASSERT_EQ(cmodel_global_copy(addr + 100, addr, 9000), 0) << cmodel_last_error();  // overlap, dst above src
  std::memmove(model.data() + 100, model.data(), 9000);
  EXPECT_EQ(device(), model);
  ASSERT_EQ(cmodel_global_copy(addr, addr + 3001, 9000), 0) << cmodel_last_error();  // overlap, dst below src
  std::memmove(model.data(), model.data() + 3001, 9000);
  EXPECT_EQ(device(), model);
  const uint8_t pattern[3] = {0xa1, 0xb2, 0xc3};
  ASSERT_EQ(cmodel_global_fill(addr + 1, pattern, 3, 10001), 0) << cmodel_last_error();
  for (size_t i = 0; i < 10001; ++i) model[1 + i] = pattern[i % 3];
  EXPECT_EQ(device(), model);
  // Either range outside the buffer: nothing is written.
  EXPECT_EQ(cmodel_global_copy(addr, addr + 8, bytes), -1);
  EXPECT_EQ(cmodel_global_fill(addr, pattern, 3, bytes + 1), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "is not inside one allocated buffer");
  EXPECT_EQ(device(), model);
  EXPECT_EQ(cmodel_global_fill(addr, nullptr, 3, 3), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "the fill pattern is a null pointer");
  EXPECT_EQ(cmodel_global_allocated(), bytes);
}

}  // namespace
