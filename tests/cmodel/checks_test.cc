// checks_test: every rule the emulator enforces stops the kernel with one
// message naming the API function, the offending values, the rule and the
// kernel's call site; the process carries on and the next run works.
#include <gtest/gtest.h>

#include <string>

#include "cmodel_host.h"
#include "support/test_support.h"
#include "tpu_kernel.h"

namespace {

struct Buffers {
  global_addr_t in = 0, out = 0;
  int line = 0;        // source line of the offending call
  int marker = 0;      // set by a kernel that went past its bad command
  int npu_num = 0;     // NPU_NUM and LOCAL_MEM_SIZE as the kernel saw them
  int local_mem = 0;
};
Buffers g;

std::string last_error() { return cmodel_last_error(); }

class Checks : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error();
    g = Buffers{};
    g.in = cmodel_global_alloc(1 << 20);
    g.out = cmodel_global_alloc(1 << 20);
    ASSERT_NE(g.in, 0u);
    ASSERT_NE(g.out, 0u);
    // good_kernel loads from it: written, as a kernel's input is.
    const std::vector<uint8_t> zeros(1 << 20, 0);
    ASSERT_EQ(cmodel_global_write(g.in, zeros.data(), zeros.size()), 0) << cmodel_last_error();
  }
  void TearDown() override { cmodel_close(); }

  // Runs a kernel that must fail; returns its message after checking the
  // common parts: API name, the call site (function and line), and that a
  // good kernel still runs afterwards.
  std::string expect_failure(void (*kernel)(const void *), const char *api, const char *kernel_name) {
    EXPECT_NE(cmodel_run(kernel, nullptr), 0) << "the kernel should have been stopped";
    const std::string message = last_error();
    EXPECT_EQ(message.rfind(api, 0), 0u) << message;
    EXPECT_NE(message.find(kernel_name), std::string::npos) << message;
    EXPECT_NE(message.find("checks_test.cc:" + std::to_string(g.line)), std::string::npos) << message;
    EXPECT_EQ(g.marker, 0) << "the kernel went on after its bad command";
    expect_good_run();
    return message;
  }

  static void good_kernel(const void *) {
    const dim4 shape = {1, 3, 4, 5};
    tpu_gdma_cpy_S2L(0, g.in, &shape, nullptr, nullptr, DT_FP32);
    tpu_gdma_cpy_L2S(g.out, 0, &shape, nullptr, nullptr, DT_FP32);
  }
  void expect_good_run() {
    EXPECT_EQ(cmodel_run(good_kernel, nullptr), 0) << cmodel_last_error();
    EXPECT_STREQ(cmodel_last_error(), "");
  }
};

#define CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// ---- shape -------------------------------------------------------------------
void zero_channel_kernel(const void *) {
  const dim4 shape = {1, 0, 4, 4};
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(0, g.in, &shape, nullptr, nullptr, DT_FP32);
  g.marker = 1;
}

TEST_P(Checks, ShapeDimZero) {
  const std::string m = expect_failure(zero_channel_kernel, "tpu_gdma_cpy_S2L", "zero_channel_kernel");
  CONTAINS(m, "c = 0");
  CONTAINS(m, "[1, 65535]");
  CONTAINS(m, "illegal command");
}

void huge_width_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 65536};
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_L2S(g.out, 0, &shape, nullptr, nullptr, DT_INT8);
  g.marker = 1;
}

TEST_P(Checks, ShapeDimAboveLimit) {
  const std::string m = expect_failure(huge_width_kernel, "tpu_gdma_cpy_L2S", "huge_width_kernel");
  CONTAINS(m, "w = 65536");
}

// ---- GDMA w-stride -----------------------------------------------------------
void wide_stride_kernel(const void *) {
  const dim4 shape = {1, 1, 2, 4};
  const dim4 src_stride = {256, 256, 128, 33};  // 33 fp32 elements = 132 bytes
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(0, g.in, &shape, nullptr, &src_stride, DT_FP32);
  g.marker = 1;
}

TEST_P(Checks, GdmaWStrideAbove128Bytes) {
  const std::string m = expect_failure(wide_stride_kernel, "tpu_gdma_cpy_S2L", "wide_stride_kernel");
  CONTAINS(m, "src stride.w = 33");
  CONTAINS(m, "132 bytes");
  CONTAINS(m, "at most 128 bytes");
}

void widest_legal_stride_kernel(const void *) {
  const dim4 shape = {1, 1, 2, 4};
  const dim4 src_stride = {256, 256, 128, 32};  // exactly 128 bytes
  tpu_gdma_cpy_S2L(0, g.in, &shape, nullptr, &src_stride, DT_FP32);
}

TEST_P(Checks, GdmaWStrideOf128BytesIsLegal) {
  EXPECT_EQ(cmodel_run(widest_legal_stride_kernel, nullptr), 0) << cmodel_last_error();
}

// ---- local memory: no wrap into the next NPU ----------------------------------
// Rows of 64 floats (256 bytes) starting 256 bytes before the end of NPU
// `start_npu`, over NPU_NUM - start_npu + extra channels: row 0 of every
// NPU fits exactly, row 1 (channels NPU_NUM - start_npu and on, on NPUs
// 0 .. extra - 1) starts at the end of local memory.
struct RowsToNpuEnd {
  dim4 shape;
  local_addr_t addr;
};
RowsToNpuEnd rows_to_npu_end(int start_npu, int extra) {
  g.npu_num = NPU_NUM;
  g.local_mem = LOCAL_MEM_SIZE;
  return {{1, NPU_NUM - start_npu + extra, 1, 64}, local_addr_t((start_npu + 1) * LOCAL_MEM_SIZE - 256)};
}

void past_local_end_kernel(const void *) {
  const RowsToNpuEnd t = rows_to_npu_end(1, 2);
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(t.addr, g.in, &t.shape, nullptr, nullptr, DT_FP32);
  g.marker = 1;
}

// The message names the NPU with the lowest number among those the tensor
// overflows, that NPU's range, and how many NPUs overflow.
std::string overflow_text(int first_npu, int count, uint64_t begin, uint64_t end) {
  return "local range [" + test::hex(begin) + ", " + test::hex(end) + ") of NPU " + std::to_string(first_npu) +
         " is outside its local memory of " + std::to_string(g.local_mem) + " bytes (" +
         std::to_string(g.local_mem / 1024) +
         " KiB) (a local tensor must fit in its NPU; there is no wrap into the next); the tensor "
         "overflows " +
         std::to_string(count) + " of the " + std::to_string(g.npu_num) + " NPUs, the first being NPU " +
         std::to_string(first_npu);
}

TEST_P(Checks, LocalTensorMustFitItsNpu) {
  const std::string m = expect_failure(past_local_end_kernel, "tpu_gdma_cpy_S2L", "past_local_end_kernel");
  CONTAINS(m, "dst");
  // Channels NPU_NUM - 1 (NPU 0) and NPU_NUM (NPU 1) are the second rows.
  CONTAINS(m, overflow_text(0, 2, g.local_mem, g.local_mem + 256));
  CONTAINS(m, "memory fault");
}

void past_local_end_from_npu3_kernel(const void *) {
  const RowsToNpuEnd t = rows_to_npu_end(3, 3);
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(t.addr, g.in, &t.shape, nullptr, nullptr, DT_FP32);
  g.marker = 1;
}

TEST_P(Checks, LocalOverflowNamesTheFirstNpuAndTheCount) {
  // NPUs 0, 1 and 2 hold a second row; the last channel is on NPU 2.
  const std::string m =
      expect_failure(past_local_end_from_npu3_kernel, "tpu_gdma_cpy_S2L", "past_local_end_from_npu3_kernel");
  CONTAINS(m, overflow_text(0, 3, g.local_mem, g.local_mem + 256));
}

void every_npu_overflows_kernel(const void *) {
  g.npu_num = NPU_NUM;
  g.local_mem = LOCAL_MEM_SIZE;
  // One row of 256 bytes per NPU, from 128 bytes before the end of NPU 0.
  const dim4 shape = {1, NPU_NUM, 1, 64};
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_L2S(g.out, (local_addr_t)(LOCAL_MEM_SIZE - 128), &shape, nullptr, nullptr, DT_FP32);
  g.marker = 1;
}

TEST_P(Checks, LocalOverflowOnEveryNpu) {
  const std::string m = expect_failure(every_npu_overflows_kernel, "tpu_gdma_cpy_L2S", "every_npu_overflows_kernel");
  CONTAINS(m, "src");
  CONTAINS(m, overflow_text(0, g.npu_num, g.local_mem - 128, g.local_mem + 128));
}

void last_row_fits_kernel(const void *) {
  const RowsToNpuEnd t = rows_to_npu_end(1, 0);
  tpu_gdma_cpy_S2L(t.addr, g.in, &t.shape, nullptr, nullptr, DT_FP32);
}

TEST_P(Checks, LocalTensorEndingAtTheEndOfEveryNpuFits) {
  EXPECT_EQ(cmodel_run(last_row_fits_kernel, nullptr), 0) << cmodel_last_error();
}

void local_address_out_of_range_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 16};
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_L2S(g.out, (local_addr_t)(NPU_NUM * LOCAL_MEM_SIZE), &shape, nullptr, nullptr, DT_FP32);
  g.marker = 1;
}

TEST_P(Checks, LocalAddressBeyondLocalMemory) {
  const std::string m =
      expect_failure(local_address_out_of_range_kernel, "tpu_gdma_cpy_L2S", "local_address_out_of_range_kernel");
  CONTAINS(m, "past the end of local memory");
}

// ---- system memory ------------------------------------------------------------
void past_buffer_end_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 64};
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_L2S(g.out + (1 << 20) - 128, 0, &shape, nullptr, nullptr, DT_FP32);
  g.marker = 1;
}

TEST_P(Checks, SystemRangeMustStayInsideItsBuffer) {
  const std::string m = expect_failure(past_buffer_end_kernel, "tpu_gdma_cpy_L2S", "past_buffer_end_kernel");
  CONTAINS(m, "not inside one allocated buffer");
}

void unmapped_address_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(0, 0x1000, &shape, nullptr, nullptr, DT_FP32);
  g.marker = 1;
}

TEST_P(Checks, SystemAddressOutsideEveryMemory) {
  const std::string m = expect_failure(unmapped_address_kernel, "tpu_gdma_cpy_S2L", "unmapped_address_kernel");
  CONTAINS(m, "neither global memory");
}

void past_l2_end_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 64};
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_S2S(tpu_l2_sram_get_start_addr() + tpu_l2_sram_size() - 64, g.in, &shape, nullptr, nullptr, DT_FP32);
  g.marker = 1;
}

TEST_P(Checks, L2SramRangeMustFit) {
  const std::string m = expect_failure(past_l2_end_kernel, "tpu_gdma_cpy_S2S", "past_l2_end_kernel");
  CONTAINS(m, "past the end of L2 SRAM");
}

// ---- general copy -------------------------------------------------------------
void unequal_general_copy_kernel(const void *) {
  const dim4 dst_shape = {1, 2, 3, 4}, src_shape = {1, 5, 5, 1};
  g.line = __LINE__ + 1;
  tpu_gdma_general_cpy_S2L(0, g.in, &dst_shape, &src_shape, nullptr, nullptr, DT_FP16);
  g.marker = 1;
}

TEST_P(Checks, GeneralCopyNeedsEqualElementCounts) {
  const std::string m =
      expect_failure(unequal_general_copy_kernel, "tpu_gdma_general_cpy_S2L", "unequal_general_copy_kernel");
  CONTAINS(m, "holds 24 elements");
  CONTAINS(m, "holds 25");
}

// ---- dtypes -------------------------------------------------------------------
void invalid_dtype_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(0, g.in, &shape, nullptr, nullptr, (data_type_t)99);
  g.marker = 1;
}

TEST_P(Checks, InvalidDtype) {
  const std::string m = expect_failure(invalid_dtype_kernel, "tpu_gdma_cpy_S2L", "invalid_dtype_kernel");
  CONTAINS(m, "dtype 99");
}

void fp8_dtype_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  g.line = __LINE__ + 1;
  tpu_gdma_cpy_L2S(g.out, 0, &shape, nullptr, nullptr, DT_FP8E5M2);
  g.marker = 1;
}

TEST_P(Checks, NewerGenerationDtypeIsRejected) {
  const std::string m = expect_failure(fp8_dtype_kernel, "tpu_gdma_cpy_L2S", "fp8_dtype_kernel");
  CONTAINS(m, "dtype " + std::to_string(int(DT_FP8E5M2)) + " is not a data type of this chip");
  CONTAINS(m, "[illegal command]");
}

// ---- parallel regions ----------------------------------------------------------
void nested_parallel_kernel(const void *) {
  tpu_parallel_start();
  g.line = __LINE__ + 1;
  tpu_parallel_start();
  g.marker = 1;
}

TEST_P(Checks, NestedParallelRegion) {
  const std::string m = expect_failure(nested_parallel_kernel, "tpu_parallel_start", "nested_parallel_kernel");
  CONTAINS(m, "already open");
}

void unmatched_parallel_end_kernel(const void *) {
  g.line = __LINE__ + 1;
  tpu_parallel_end();
  g.marker = 1;
}

TEST_P(Checks, ParallelEndWithoutStart) {
  const std::string m =
      expect_failure(unmatched_parallel_end_kernel, "tpu_parallel_end", "unmatched_parallel_end_kernel");
  CONTAINS(m, "no parallel region is open");
}

// ---- kernel assertions and missing functions -----------------------------------
void assert_kernel(const void *) {
  const int channels = 3;
  g.line = __LINE__ + 1;
  TPUKERNEL_ASSERT_INFO(channels % 2 == 0, "channels = %d must be even", channels);
  g.marker = 1;
}

TEST_P(Checks, KernelAssertion) {
  const std::string m = expect_failure(assert_kernel, "TPUKERNEL_ASSERT", "assert_kernel");
  CONTAINS(m, "channels % 2 == 0");
  CONTAINS(m, "channels = 3 must be even");
  // The file as every other message names a call site: the file name, not
  // the path the compiler saw (__FILE__ is absolute in a CMake build).
  CONTAINS(m, "assert_kernel (checks_test.cc:" + std::to_string(g.line) + ")");
  EXPECT_EQ(m.find('/'), std::string::npos) << m;
}

void unimplemented_kernel(const void *) {
  // Not implemented: non-maximum suppression on the HAU engine.
  g.line = __LINE__ + 1;
  tpu_hau_hard_nms(g.out, g.in, 16, 4);
  g.marker = 1;
}

TEST_P(Checks, UnimplementedFunctionLinksAndFailsClearly) {
  const std::string m = expect_failure(unimplemented_kernel, "tpu_hau_hard_nms", "unimplemented_kernel");
  CONTAINS(m, "tpu_hau_hard_nms is not implemented in this SDK");
}

INSTANTIATE_TEST_SUITE_P(BothChips, Checks, ::testing::Values("bm1684x", "bm1688"));

// ---- the host API ---------------------------------------------------------------
TEST(HostApi, UnknownChipIsRejected) {
  EXPECT_NE(cmodel_open("bm9999"), 0);
  const std::string m = last_error();
  CONTAINS(m, "unknown chip \"bm9999\"");
  CONTAINS(m, "bm1684x");
  EXPECT_STREQ(cmodel_chip(), "");
}

TEST(HostApi, CallsWithoutAnOpenChipFail) {
  cmodel_close();
  EXPECT_NE(cmodel_run([](const void *) {}, nullptr), 0);
  CONTAINS(last_error(), "no emulator is open");
  EXPECT_EQ(cmodel_global_alloc(64), 0u);
  // A kernel API call made directly by the host fails the same way.
  EXPECT_EQ(tpu_npu_num(), 0);
  CONTAINS(last_error(), "tpu_npu_num: no emulator is open");
}

TEST(HostApi, GlobalBuffers) {
  ASSERT_EQ(cmodel_open("bm1684x"), 0);
  const uint64_t a = cmodel_global_alloc(1000), b = cmodel_global_alloc(1000);
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  EXPECT_EQ(a % 512, 0u);
  EXPECT_GE(b, a + 1000);
  const std::string text = "hello, device";
  ASSERT_EQ(cmodel_global_write(a + 10, text.data(), text.size()), 0);
  std::string back(text.size(), '\0');
  ASSERT_EQ(cmodel_global_read(back.data(), a + 10, back.size()), 0);
  EXPECT_EQ(back, text);

  EXPECT_NE(cmodel_global_write(a + 990, text.data(), text.size()), 0);
  CONTAINS(last_error(), "cmodel_global_write");
  CONTAINS(last_error(), "not inside one allocated buffer");
  EXPECT_EQ(cmodel_global_read(back.data(), a, 0), 0) << cmodel_last_error();  // a zero-byte read succeeds
  EXPECT_STREQ(cmodel_last_error(), "");

  cmodel_global_free(a);
  EXPECT_NE(cmodel_global_read(back.data(), a, 1), 0) << "a freed buffer must not be readable";
  cmodel_global_free(a);
  CONTAINS(last_error(), "not the start of an allocated global buffer");
  EXPECT_EQ(cmodel_global_alloc(uint64_t(1) << 40), 0u);
  CONTAINS(last_error(), "cannot allocate");
  cmodel_close();
}

TEST(HostApi, NullKernelIsRejected) {
  ASSERT_EQ(cmodel_open("bm1688"), 0);
  EXPECT_NE(cmodel_run(nullptr, nullptr), 0);
  CONTAINS(last_error(), "kernel function pointer is null");
  cmodel_close();
}

}  // namespace
