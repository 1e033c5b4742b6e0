// readable_error_test.cc: the emulator's errors as a person reads them
// (cmodel_last_error_readable): a short first line naming what failed and
// where in the kernel, then the details one clause a line; sizes in bytes
// with their binary unit; source paths relative to where the person works.
// cmodel_last_error() keeps its one line alongside.
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel/call_site.h"
#include "cmodel/error.h"
#include "cmodel_host.h"
#include "support/run_body.h"
#include "tpu_kernel.h"

namespace {

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

TEST(Bytes, ExactBytesThenTheBinaryUnit) {
  EXPECT_EQ(fmt::format("{}", cmodel::Bytes{0}), "0 bytes");
  EXPECT_EQ(fmt::format("{}", cmodel::Bytes{1023}), "1023 bytes");
  EXPECT_EQ(fmt::format("{}", cmodel::Bytes{1024}), "1024 bytes (1 KiB)");
  EXPECT_EQ(fmt::format("{}", cmodel::Bytes{1536}), "1536 bytes (1.5 KiB)");
  EXPECT_EQ(fmt::format("{}", cmodel::Bytes{65536}), "65536 bytes (64 KiB)");
  EXPECT_EQ(fmt::format("{}", cmodel::Bytes{167936}), "167936 bytes (164 KiB)");
  EXPECT_EQ(fmt::format("{}", cmodel::Bytes{5u << 20}), "5242880 bytes (5 MiB)");
  EXPECT_EQ(fmt::format("{}", cmodel::Bytes{uint64_t(3) << 30}), "3221225472 bytes (3 GiB)");
}

// A directory to work in and a project, each holding a source file.
TEST(DisplayPath, RelativeToTheWorkingDirectoryThenToTheProject) {
  char base_template[] = "/tmp/display_path_XXXXXX";
  const std::string base = mkdtemp(base_template);
  const std::string project = base + "/project", elsewhere = base + "/elsewhere";
  ASSERT_EQ(std::system(("mkdir -p " + project + "/customlayer/src " + elsewhere).c_str()), 0);
  const std::string source = project + "/customlayer/src/kernel.c";
  char *old_cwd = getcwd(nullptr, 0);
  ASSERT_EQ(chdir(project.c_str()), 0);
  EXPECT_EQ(cmodel::display_path(source), "customlayer/src/kernel.c");
  ASSERT_EQ(chdir(elsewhere.c_str()), 0);
  unsetenv("CUSTOM_LAYER_PATH");
  EXPECT_EQ(cmodel::display_path(source), source) << "outside both: as it is";
  setenv("CUSTOM_LAYER_PATH", project.c_str(), 1);
  EXPECT_EQ(cmodel::display_path(source), "customlayer/src/kernel.c");
  unsetenv("CUSTOM_LAYER_PATH");
  EXPECT_EQ(cmodel::display_path("../src/kernel.c"), "../src/kernel.c") << "a relative path: as it is";
  ASSERT_EQ(chdir(old_cwd), 0);
  std::free(old_cwd);
  std::system(("rm -rf " + base).c_str());
}

// A GDMA copy of 256 KiB of fp32 from the 4 KiB buffer at *arg.
int g_copy_line = 0;
void copy_past_buffer(const void *arg) {
  const dim4 shape = {1, 16, 1, 4096};
  g_copy_line = __LINE__ + 1;
  tpu_gdma_cpy_S2L(0, *static_cast<const uint64_t *>(arg), &shape, nullptr, nullptr, DT_FP32);
  g_copy_line = -g_copy_line;  // not reached: the call stops the kernel (and is no tail call)
}

// A BDC copy reading the bytes a GDMA load of the same parallel region writes.
int g_race_line = 0;
void race_in_region(const void *arg) {
  const dim4 shape = {1, 1, 1, 64};
  tpu_parallel_start();
  tpu_gdma_cpy_S2L(0, *static_cast<const uint64_t *>(arg), &shape, nullptr, nullptr, DT_FP32);
  g_race_line = __LINE__ + 1;
  tpu_bdc_cpy(4096, 0, &shape, nullptr, nullptr, DT_FP32);
  tpu_parallel_end();
}

class ReadableError : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
  void fails(std::function<void()> body) { ASSERT_FALSE(test::run_kernel_body(std::move(body))); }
};

// A GDMA copy past its buffer: the one line as before, and the readable
// form with the API, the class and the call site first, sizes in KiB.
TEST_P(ReadableError, OutOfBoundsCopy) {
  const uint64_t buf = cmodel_global_alloc(4096);
  ASSERT_NE(cmodel_run(copy_past_buffer, &buf), 0);
  const int line = g_copy_line;
  const std::string one_line = cmodel_last_error();
  EXPECT_EQ(one_line.find('\n'), std::string::npos) << one_line;
  EXPECT_EQ(one_line.rfind("tpu_gdma_cpy_S2L: ", 0), 0u) << one_line;
  EXPECT_HAS(one_line, "[memory fault]; called from ");
  EXPECT_HAS(one_line, "readable_error_test.cc:" + std::to_string(line) + ")");

  const std::vector<std::string> lines = lines_of(cmodel_last_error_readable());
  ASSERT_GE(lines.size(), 2u) << cmodel_last_error_readable();
  EXPECT_EQ(lines[0].rfind("tpu_gdma_cpy_S2L: memory fault at ", 0), 0u) << lines[0];
  EXPECT_HAS(lines[0], "readable_error_test.cc:" + std::to_string(line) + " (");
  EXPECT_HAS(lines[0], "copy_past_buffer");
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(lines[i].rfind("  ", 0), 0u) << lines[i];
  EXPECT_HAS(cmodel_last_error_readable(), "(262144 bytes (256 KiB))");
  cmodel_global_free(buf);
}

// A race says so on its first line, not only "illegal command"; the
// one-line form keeps its class.
TEST_P(ReadableError, RaceIsNamedOnTheFirstLine) {
  const uint64_t buf = cmodel_global_alloc(256);
  const std::vector<float> zeros(64, 0.0f);
  ASSERT_EQ(cmodel_global_write(buf, zeros.data(), 256), 0) << cmodel_last_error();
  ASSERT_NE(cmodel_run(race_in_region, &buf), 0);
  const std::vector<std::string> lines = lines_of(cmodel_last_error_readable());
  EXPECT_EQ(lines[0].rfind("tpu_bdc_cpy: race inside a parallel region (illegal command) at ", 0), 0u) << lines[0];
  EXPECT_HAS(lines[0], "readable_error_test.cc:" + std::to_string(g_race_line) + " (");
  EXPECT_HAS(cmodel_last_error(), "[illegal command]; called from ");
  cmodel_global_free(buf);
}

// The kernel's own message (TPUKERNEL_ASSERT_INFO) is shown as written, on
// the line after the assertion and its place.
TEST_P(ReadableError, KernelAssertionKeepsItsMessageWhole) {
  int line = 0;
  fails([&] {
    line = __LINE__ + 1;
    TPUKERNEL_ASSERT_INFO(line < 0, "needs %d channels; got %d", 3, 4);
  });
  const std::vector<std::string> lines = lines_of(cmodel_last_error_readable());
  ASSERT_EQ(lines.size(), 2u) << cmodel_last_error_readable();
  EXPECT_EQ(lines[0].rfind("TPUKERNEL_ASSERT(line < 0) failed at ", 0), 0u) << lines[0];
  EXPECT_HAS(lines[0], "readable_error_test.cc:" + std::to_string(line));
  EXPECT_EQ(lines[1], "  needs 3 channels; got 4");
  EXPECT_HAS(cmodel_last_error(), "TPUKERNEL_ASSERT(line < 0) failed: needs 3 channels; got 4 [kernel assertion failed]");
}

// A message recorded without parts (a host call's) is split into clauses
// all the same; a success clears both forms.
TEST_P(ReadableError, HostErrorsAndSuccess) {
  EXPECT_EQ(cmodel_global_alloc(uint64_t(1) << 40), 0u);
  EXPECT_HAS(cmodel_last_error_readable(), "cannot allocate 1099511627776 bytes (1 TiB) of global memory");
  EXPECT_EQ(cmodel_last_error_readable(), std::string(cmodel_last_error()));  // a single clause
  const uint64_t buf = cmodel_global_alloc(64);
  ASSERT_NE(buf, 0u);
  EXPECT_STREQ(cmodel_last_error_readable(), "");
  cmodel_global_free(buf);
}

INSTANTIATE_TEST_SUITE_P(BothChips, ReadableError, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
