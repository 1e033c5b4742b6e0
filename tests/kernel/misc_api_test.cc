// misc_api_test.cc: family U besides the prints (tpu-kernel-api-current.md
// §3 U): cache maintenance, tpu_kernel_memcpy/memset, the layer dump and
// the memory checker, on both chips, against expectations written from
// their definitions (kernel/src/misc_api.cc, docs/cmodel.md).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "support/run_body.h"
#include "support/temp_dir.h"
#include "tpu_kernel.h"

namespace {

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

class Misc : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
  bool run(std::function<void()> body) { return test::run_kernel_body(std::move(body)); }
  std::string failure(std::function<void()> body) {
    EXPECT_FALSE(run(std::move(body)));
    return cmodel_last_error();
  }
};

TEST_P(Misc, CacheMaintenanceChecksTheRangeOnly) {
  const uint64_t buf = cmodel_global_alloc(256);
  int line = 0;
  ASSERT_TRUE(run([&] {
    tpu_flush_cache(buf, 256);
    tpu_invalidate_cache(buf + 64, 64);
    tpu_invalidate_cache(buf, 0);
    line = tpu_cache_line_size();
  })) << cmodel_last_error();
  EXPECT_EQ(line, 64);
  const std::string e = failure([&] { tpu_flush_cache(buf + 128, 4096); });
  EXPECT_HAS(e, "tpu_flush_cache: range: ");
  EXPECT_HAS(e, "[memory fault]");
}

TEST_P(Misc, KernelMemcpyAndMemsetWorkOnHostPointers) {
  const uint64_t buf = cmodel_global_alloc(64);
  const std::vector<uint8_t> pattern = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_EQ(cmodel_global_write(buf, pattern.data(), pattern.size()), 0);
  void *ret_copy = nullptr, *ret_set = nullptr;
  ASSERT_TRUE(run([&] {
    auto *p = static_cast<uint8_t *>(tpu_global_mem_addr(buf));
    ret_copy = tpu_kernel_memcpy(p + 2, p, 6);  // overlapping: a memmove
    ret_set = tpu_kernel_memset(p + 10, 0xab, 3);
  })) << cmodel_last_error();
  std::vector<uint8_t> got(13);
  ASSERT_EQ(cmodel_global_read(got.data(), buf, got.size()), 0);
  EXPECT_EQ(got, (std::vector<uint8_t>{1, 2, 1, 2, 3, 4, 5, 6, 0, 0, 0xab, 0xab, 0xab}));
  EXPECT_NE(ret_copy, nullptr);
  EXPECT_NE(ret_set, nullptr);
  EXPECT_HAS(failure([&] { tpu_kernel_memcpy(nullptr, &got, 4); }), "dst pointer is NULL for a copy of 4 bytes");
}

TEST_P(Misc, DumpWritesTheTensorsBytes) {
  test::TempDir dir;
  const std::string file = dir.file("layer.bin");
  std::vector<float> values(2 * 3 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i) * 1.5f - 7;
  const uint64_t buf = cmodel_global_alloc(values.size() * 4);
  ASSERT_EQ(cmodel_global_write(buf, values.data(), values.size() * 4), 0);
  const int shape[3] = {2, 3, 5};
  ASSERT_TRUE(run([&] { tpu_dump_global_layer_data(file.c_str(), buf, shape, 3, DT_FP32); })) << cmodel_last_error();
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_EQ(bytes.size(), values.size() * 4);
  EXPECT_EQ(std::memcmp(bytes.data(), values.data(), bytes.size()), 0);
  // A failing kernel leaves by longjmp: no object with a destructor may live in it.
  const std::string unwritable = dir.file("no/such/dir.bin");
  EXPECT_HAS(failure([&] { tpu_dump_global_layer_data(unwritable.c_str(), buf, shape, 3, DT_FP32); }),
             "cannot write");
  const int big[1] = {1000};
  EXPECT_HAS(failure([&] { tpu_dump_global_layer_data(file.c_str(), buf, big, 1, DT_FP32); }), "[memory fault]");
}

TEST_P(Misc, MemoryCheckerAcceptsOnlyRegisteredRanges) {
  const uint64_t buf = cmodel_global_alloc(4096);
  // Without registered ranges the checks use the allocation rule.
  ASSERT_TRUE(run([&] { tpu_mem_check_range(buf, 4096, 1); })) << cmodel_last_error();
  EXPECT_HAS(failure([&] { tpu_mem_check_range(buf, 4097, 1); }), "[memory fault]");

  const dim4 shape = {2, 3, 4, 5};
  ASSERT_TRUE(run([&] {
    tpu_mem_record_add(buf, 1024, 7);
    tpu_mem_record_add(buf + 2048, 512, 8);
    tpu_mem_check_range(buf + 2048, 512, 0);
    tpu_mem_check_tensor(buf, &shape, nullptr, DT_FP32, 1);  // 480 bytes
    tpu_mem_check_matrix(buf + 2048, 4, 8, 16, DT_FP16, 0);  // rows 32 bytes apart: bytes [0, 112)
    tpu_mem_record_del(buf + 2048, 512);
  })) << cmodel_last_error();
  // The ranges last for the run: a new run starts without them.
  const std::string outside = failure([&] {
    tpu_mem_record_add(buf, 1024, 7);
    tpu_mem_check_range(buf + 1000, 100, 1);
  });
  EXPECT_HAS(outside, "tpu_mem_check_range: the range (read) touches [");
  EXPECT_HAS(outside, "which is not inside one registered range ([");
  EXPECT_HAS(outside, "tag 7)");
  // A tensor with a negative stride reaches below its address.
  const dim4 back = {1, 1, 1, 4}, back_stride = {4, 4, 4, -1};
  EXPECT_HAS(failure([&] {
               tpu_mem_record_add(buf + 64, 64, 1);
               tpu_mem_check_tensor(buf + 64, &back, &back_stride, DT_INT32, 0);
             }),
             "the tensor (write) touches");
  EXPECT_HAS(failure([&] {
               tpu_mem_record_add(buf, 64, 1);
               tpu_mem_record_add(buf + 32, 64, 2);
             }),
             "overlaps a registered range");
  EXPECT_HAS(failure([&] { tpu_mem_record_del(buf, 64); }), "was not registered with tpu_mem_record_add (registered: none)");
  EXPECT_HAS(failure([&] { tpu_mem_check_range(buf, 8, 2); }), "is_read = 2; expected 0 or 1");
}

INSTANTIATE_TEST_SUITE_P(Chips, Misc, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
