// uninitialized_test: a command reading bytes nothing wrote (local memory
// since it was poisoned, a global buffer since it was allocated) is an
// "uninitialized read" naming the operand, the first unwritten byte and the
// kernel's call site (issue 26); commands, host writes and host pointers
// write; the option lowers the check to a warning (once per byte) or turns
// it off; cmodel_local_poison makes local memory unwritten again.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

struct Job {
  global_addr_t input = 0, output = 0, scratch = 0;
  dim4 tile{};
  int line = 0;
  int after = 0;  // written after a kernel's last call, so it is not a tail call (its call site stays)
};
Job g;

std::string error() { return cmodel_last_error(); }
std::string hex(uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(v));
  return text;
}
local_addr_t bank(int i) { return local_addr_t(i) * local_addr_t(BANK_SIZE); }

// The newcomer's kernel (issue 26): it loads one operand and adds a tile it
// never loaded.
void never_loaded_kernel(const void *) {
  tpu_gdma_cpy_S2L(bank(0), g.input, &g.tile, nullptr, nullptr, DT_FP32);
  g.line = __LINE__ + 1;
  tpu_bdc_fp_add(bank(8), bank(0), bank(4), &g.tile, nullptr, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(g.output, bank(8), &g.tile, nullptr, nullptr, DT_FP32);
}

// Loads half the channels of a tile, then reads all of it.
void half_loaded_kernel(const void *) {
  const dim4 half = {g.tile.n, g.tile.c / 2, g.tile.h, g.tile.w};
  tpu_gdma_cpy_S2L(bank(4), g.input, &half, nullptr, nullptr, DT_FP32);
  g.line = __LINE__ + 1;
  tpu_bdc_fp_mul(bank(8), bank(4), bank(4), &g.tile, nullptr, nullptr, nullptr, DT_FP32);
  g.after = 1;
}

// Loads, adds, stores: every byte read was written before.
void clean_kernel(const void *) {
  tpu_gdma_cpy_S2L(bank(0), g.input, &g.tile, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_add(bank(8), bank(0), bank(0), &g.tile, nullptr, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(g.output, bank(8), &g.tile, nullptr, nullptr, DT_FP32);
}

// Reads what an earlier run loaded (bank 0) and computes in place.
void reuse_kernel(const void *) {
  g.line = __LINE__ + 1;
  tpu_bdc_fp_add(bank(0), bank(0), bank(0), &g.tile, nullptr, nullptr, nullptr, DT_FP32);
  g.after = 1;
}

// Reads a global buffer nothing wrote.
void load_scratch_kernel(const void *) {
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(bank(0), g.scratch, &g.tile, nullptr, nullptr, DT_FP32);
  g.after = 1;
}

// Writes rows 0, 2, 4, ... of a strided local tensor, then reads exactly
// those rows: the gaps between them are not read, so nothing is reported.
void strided_rows_kernel(const void *) {
  const dim4 rows = {1, g.tile.c, 4, g.tile.w};
  const dim4 stride = {0, 8 * g.tile.w, 2 * g.tile.w, 1};
  tpu_gdma_cpy_S2L(bank(0), g.input, &rows, &stride, nullptr, DT_FP32);
  tpu_bdc_fp_add(bank(8), bank(0), bank(0), &rows, nullptr, &stride, &stride, DT_FP32);
  g.line = __LINE__ + 1;  // the gap row 1 is read here
  tpu_bdc_fp_add(bank(8), bank(0) + 4 * g.tile.w, bank(0), &rows, nullptr, &stride, &stride, DT_FP32);
  g.after = 1;
}

// A host pointer to local memory: the kernel fills bank 4 of NPU 0 by hand.
void pointer_kernel(const void *) {
  const dim4 one = {1, 1, 1, 16};
  auto *p = static_cast<float *>(tpu_local_mem_addr(0, bank(4)));
  for (int i = 0; i < 16; ++i) p[i] = float(i);
  tpu_bdc_fp_add(bank(8), bank(4), bank(4), &one, nullptr, nullptr, nullptr, DT_FP32);
}

// Takes host pointers to NPU 0 at bank 6 and then bank 4 (writing nothing
// through them), then reads one row of `g.tile.w` floats of NPU `g.after`
// at bank `g.line`.
void pointers_then_read_kernel(const void *) {
  tpu_local_mem_addr(0, bank(6));
  tpu_local_mem_addr(0, bank(4));
  const dim4 one = {1, 1, 1, g.tile.w};
  tpu_bdc_fp_add(bank(12) + local_addr_t(g.after) * LOCAL_MEM_SIZE, bank(g.line) + local_addr_t(g.after) * LOCAL_MEM_SIZE,
                 bank(g.line) + local_addr_t(g.after) * LOCAL_MEM_SIZE, &one, nullptr, nullptr, nullptr, DT_FP32);
}

// A host pointer to global memory: the kernel fills the scratch buffer.
void global_pointer_kernel(const void *) {
  auto *p = static_cast<float *>(tpu_global_mem_addr(g.scratch));
  for (int i = 0; i < 4; ++i) p[i] = 1.0f;
  tpu_gdma_cpy_S2L(bank(0), g.scratch, &g.tile, nullptr, nullptr, DT_FP32);
}

// Sets a tile with a BDC fill, then stores it: a fill writes.
void fill_then_store_kernel(const void *) {
  scalar_t one{};
  one.f32 = 1.0f;
  tpu_bdc_set_C(bank(2), one, &g.tile, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(g.scratch, bank(2), &g.tile, nullptr, nullptr, DT_FP32);
}

class Uninitialized : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open(GetParam()), 0);
    ASSERT_EQ(cmodel_set_option("uninitialized_reads", "error"), 0);
    g = Job{};
    g.tile = {1, tpu_npu_num(), 8, 16};
    bytes = 4ull * g.tile.c * g.tile.h * g.tile.w;
    g.input = cmodel_global_alloc(bytes);
    g.output = cmodel_global_alloc(bytes);
    g.scratch = cmodel_global_alloc(bytes);
    std::vector<float> host(bytes / 4);
    for (size_t i = 0; i < host.size(); ++i) host[i] = float(i % 100);
    ASSERT_EQ(cmodel_global_write(g.input, host.data(), bytes), 0);
  }
  void TearDown() override {
    cmodel_set_option("uninitialized_reads", "error");
    cmodel_close();
  }
  void expect_uninitialized(const std::string &operand, const std::string &byte) {
    const std::string m = error();
    EXPECT_NE(m.find("[uninitialized read]"), std::string::npos) << m;
    EXPECT_NE(m.find(operand), std::string::npos) << m;
    EXPECT_NE(m.find(byte), std::string::npos) << m;
    EXPECT_NE(m.find("uninitialized_test.cc:" + std::to_string(g.line)), std::string::npos) << m;
  }
  uint64_t bytes = 0;
};

TEST_P(Uninitialized, ReadingALocalTileNeverLoadedIsReportedWithItsFirstByte) {
  EXPECT_NE(cmodel_run(never_loaded_kernel, nullptr), 0);
  expect_uninitialized("tpu_bdc_fp_add: src1 [1, " + std::to_string(tpu_npu_num()) + ", 8, 16] DT_FP32 at local " +
                           hex(bank(4)),
                       "byte " + hex(bank(4)) + " of NPU 0");
}

TEST_P(Uninitialized, FirstUnwrittenByteIsOnTheFirstChannelNotLoaded) {
  EXPECT_NE(cmodel_run(half_loaded_kernel, nullptr), 0);
  const int npu = tpu_npu_num() / 2;
  expect_uninitialized("tpu_bdc_fp_mul: src0", "byte " + hex(bank(4)) + " of NPU " + std::to_string(npu) +
                                                   " (local address " +
                                                   hex(uint64_t(npu) * LOCAL_MEM_SIZE + bank(4)) + ")");
}

TEST_P(Uninitialized, CleanKernelRunsAndLocalMemoryKeepsItsStateBetweenRuns) {
  ASSERT_EQ(cmodel_run(clean_kernel, nullptr), 0) << error();
  // A host that loads in one run and computes in the next: still written.
  ASSERT_EQ(cmodel_run(reuse_kernel, nullptr), 0) << error();
  // Poisoned, as the op tester does between its cases: unwritten again.
  ASSERT_EQ(cmodel_local_poison(1), 0) << error();
  EXPECT_NE(cmodel_run(reuse_kernel, nullptr), 0);
  expect_uninitialized("src0", "byte 0x0 of NPU 0");
  uint32_t word = 0;
  ASSERT_EQ(cmodel_local_read(&word, 0, 0, 4), 0) << error();
  EXPECT_EQ(word, 0xffffffffu) << "poisoned with 0xFF bytes";
}

TEST_P(Uninitialized, GlobalBuffersAreUnwrittenUntilWritten) {
  EXPECT_NE(cmodel_run(load_scratch_kernel, nullptr), 0);
  expect_uninitialized("tpu_gdma_cpy_S2L: src", "byte " + hex(g.scratch));
  // Half written by the host: the first byte of the other half.
  std::vector<uint8_t> half(bytes / 2, 0);
  ASSERT_EQ(cmodel_global_write(g.scratch, half.data(), half.size()), 0);
  EXPECT_NE(cmodel_run(load_scratch_kernel, nullptr), 0);
  expect_uninitialized("src", "byte " + hex(g.scratch + bytes / 2));
  ASSERT_EQ(cmodel_global_write(g.scratch + bytes / 2, half.data(), half.size()), 0);
  EXPECT_EQ(cmodel_run(load_scratch_kernel, nullptr), 0) << error();
  // Poisoned again (the op tester's outputs), and a fresh buffer.
  ASSERT_EQ(cmodel_global_poison(g.scratch + 64, 4), 0) << error();
  EXPECT_NE(cmodel_run(load_scratch_kernel, nullptr), 0);
  expect_uninitialized("src", "byte " + hex(g.scratch + 64));
  cmodel_global_free(g.scratch);
  g.scratch = cmodel_global_alloc(bytes);
  EXPECT_NE(cmodel_run(load_scratch_kernel, nullptr), 0);
}

TEST_P(Uninitialized, CommandsAndPointersWrite) {
  ASSERT_EQ(cmodel_run(fill_then_store_kernel, nullptr), 0) << error();
  ASSERT_EQ(cmodel_run(load_scratch_kernel, nullptr), 0) << error();  // the store wrote the scratch buffer
  ASSERT_EQ(cmodel_run(pointer_kernel, nullptr), 0) << error();
  cmodel_global_free(g.scratch);
  g.scratch = cmodel_global_alloc(bytes);
  ASSERT_EQ(cmodel_run(global_pointer_kernel, nullptr), 0) << error();
}

// A host pointer counts as writing from its byte to the end of its NPU
// (whatever the kernel does through it), nothing below it and nothing on
// other NPUs; a poison undoes it, and the next pointer marks again.
TEST_P(Uninitialized, APointerMarksFromItsByteToTheEndOfItsNpuOnly) {
  const auto read_after_pointers = [&](int bank_index, int npu) {
    g.line = bank_index;
    g.after = npu;
    return cmodel_run(pointers_then_read_kernel, nullptr);
  };
  EXPECT_EQ(read_after_pointers(4, 0), 0) << error();
  EXPECT_EQ(read_after_pointers(15, 0), 0) << error();
  EXPECT_NE(read_after_pointers(3, 0), 0) << "below the lowest pointer";
  EXPECT_NE(read_after_pointers(8, 1), 0) << "another NPU";
  ASSERT_EQ(cmodel_local_poison(1), 0) << error();
  // The pointers of this run mark again what the poison cleared.
  EXPECT_EQ(read_after_pointers(8, 0), 0) << error();
  ASSERT_EQ(cmodel_local_poison(1), 0) << error();
  EXPECT_NE(read_after_pointers(2, 0), 0);
  EXPECT_NE(error().find("byte " + hex(bank(2)) + " of NPU 0"), std::string::npos) << error();
}

TEST_P(Uninitialized, GapsBetweenRowsAreNotRead) {
  EXPECT_NE(cmodel_run(strided_rows_kernel, nullptr), 0);
  expect_uninitialized("src0", "byte " + hex(bank(0) + 4 * g.tile.w) + " of NPU 0");
}

TEST_P(Uninitialized, WarningOnceOrOff) {
  ASSERT_EQ(cmodel_set_option("uninitialized_reads", "warning"), 0);
  ASSERT_EQ(cmodel_run(never_loaded_kernel, nullptr), 0) << error();
  auto stats = nlohmann::json::parse(cmodel_last_run_stats());
  ASSERT_EQ(stats["warnings"].size(), 1u) << stats.dump();
  const std::string warning = stats["warnings"][0].get<std::string>();
  EXPECT_NE(warning.find("tpu_bdc_fp_add: src1"), std::string::npos) << warning;
  EXPECT_NE(warning.find("uninitialized_test.cc:" + std::to_string(g.line)), std::string::npos) << warning;
  // Reported once: the bytes then count as written.
  ASSERT_EQ(cmodel_run(never_loaded_kernel, nullptr), 0) << error();
  EXPECT_TRUE(nlohmann::json::parse(cmodel_last_run_stats())["warnings"].empty());
  ASSERT_EQ(cmodel_set_option("uninitialized_reads", "off"), 0);
  ASSERT_EQ(cmodel_local_poison(1), 0);
  ASSERT_EQ(cmodel_run(never_loaded_kernel, nullptr), 0) << error();
  EXPECT_TRUE(nlohmann::json::parse(cmodel_last_run_stats())["warnings"].empty());
  EXPECT_NE(cmodel_set_option("uninitialized_reads", "sometimes"), 0);
  EXPECT_NE(error().find("expected \"error\", \"warning\" or \"off\""), std::string::npos) << error();
}

INSTANTIATE_TEST_SUITE_P(Chips, Uninitialized, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
