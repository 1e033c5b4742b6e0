// ppl_host_test.cc: what host code sees of a generated PPL interface beyond
// its kernels: the chip helpers of <stem>.h (LANE_NUM, EU_NUM, align_up,
// get_chip, get_core_num; spec §4.2 item 3, values from its chip table
// §2.7), and kernels called from kernel code (a custom op's
// api_<op>_global inside a run): the retry loop works there, and a misuse
// stops the run at its .pl line.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "local_entry.h"
#include "misuse.h"
#include "scale_shift.h"
#include "scaled_copy.h"
#include "support/test_support.h"
// After the generated headers: their host EU_NUM (bytes) is the one tested.
#include "tpu_kernel.h"

namespace {

struct ChipFigures {
  const char *name;
  int lanes, eu_bytes;
  uint64_t lane_bytes;
};
const ChipFigures kFigures[] = {{"bm1684x", 64, 64, 256 * 1024}, {"bm1688", 32, 16, 128 * 1024}};

// Sets an environment variable for one scope (nullptr: unset), then puts
// the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char *name_;
  std::string old_;
  bool had_ = false;
};

TEST(PplHostHelpers, FollowTheOpenEmulatorsChip) {
  const ScopedEnv no_chip("CHIP", "bm1688");  // the open emulator wins over CHIP
  for (const ChipFigures &chip : kFigures) {
    ASSERT_EQ(cmodel_open(chip.name), 0) << cmodel_last_error();
    EXPECT_EQ(LANE_NUM, chip.lanes) << chip.name;
    EXPECT_EQ(EU_NUM, chip.eu_bytes) << chip.name;
    EXPECT_STREQ(get_chip(), chip.name);
    cmodel_close();
  }
}

TEST(PplHostHelpers, WithoutAnEmulatorReadChip) {
  {
    const ScopedEnv chip("CHIP", "bm1688");
    EXPECT_EQ(LANE_NUM, 32);
    EXPECT_EQ(EU_NUM, 16);
    EXPECT_STREQ(get_chip(), "bm1688");
  }
  {
    const ScopedEnv chip("CHIP", nullptr);
    EXPECT_EQ(LANE_NUM, 0);
    EXPECT_STREQ(get_chip(), "");
  }
  {
    const ScopedEnv chip("CHIP", "bm1690");
    EXPECT_EQ(EU_NUM, 0);
  }
}

TEST(PplHostHelpers, AlignUpAndCoreNum) {
  EXPECT_EQ(align_up(100, 64), 128);
  EXPECT_EQ(align_up(128, 64), 128);
  EXPECT_EQ(align_up(1, 16), 16);
  {
    const ScopedEnv cores("CORE_NUM", nullptr);
    EXPECT_EQ(get_core_num(), 1);  // the vendor's atoi(getenv()) would crash
  }
  {
    const ScopedEnv cores("CORE_NUM", "2");
    EXPECT_EQ(get_core_num(), 2);
  }
  for (const char *bad : {"two", "0", "-3", "2x"}) {
    const ScopedEnv cores("CORE_NUM", bad);
    EXPECT_EQ(get_core_num(), 1) << bad;
  }
}

// ---- kernels called inside a run ----------------------------------------

struct CopyJob {
  uint64_t out, x;
  int length, block, refused, status;
};

// What a custom op's api_<op>_global does: the vendor's halving loop.
void copy_with_retries(const void *p) {
  auto *job = static_cast<CopyJob *>(const_cast<void *>(p));
  while ((job->status = scaled_copy_pipelined(job->out, job->x, job->length, job->block)) == PplLocalAddrAssignErr) {
    ++job->refused;
    job->block /= 2;
  }
}

class PplInsideARun : public ::testing::TestWithParam<ChipFigures> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam().name), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
};

TEST_P(PplInsideARun, AKernelJoinsTheRunAndItsRetryLoopWorks) {
  const int length = GetParam().lanes * 2000;
  std::vector<float> x(length);
  for (int i = 0; i < length; ++i) x[i] = float(i % 113) * 0.5f - 20.0f;
  CopyJob job{cmodel_global_alloc(length * 4), cmodel_global_alloc(length * 4), length, 1 << 20, 0, -99};
  ASSERT_EQ(cmodel_global_write(job.x, x.data(), length * 4), 0);
  ASSERT_EQ(cmodel_run(copy_with_retries, &job), 0) << cmodel_last_error();
  ASSERT_EQ(job.status, 0);
  // Two fp32 tensors of [1, LANE_NUM, 1, block], doubled by the pipeline:
  // 2^20 halved until 16 * block fits a lane.
  EXPECT_EQ(job.block, int(GetParam().lane_bytes / 16));
  EXPECT_GT(job.refused, 0);
  std::vector<float> out(length);
  ASSERT_EQ(cmodel_global_read(out.data(), job.out, length * 4), 0);
  for (int i = 0; i < length; ++i) ASSERT_EQ(out[i], 2 * x[i]) << "element " << i;
}

struct MisuseJob {
  uint64_t out, x, row;
  bool returned;
};

void call_misuse(const void *p) {
  auto *job = static_cast<MisuseJob *>(const_cast<void *>(p));
  channel_broadcast(job->out, job->x, job->row, 3, 8);
  job->returned = true;
}

// The first line of tests/ppl/fixtures/<fixture> holding `needle` (-1: none).
int line_of(const char *fixture, const std::string &needle) {
  std::string path = TPU_SDK_SOURCE_DIR;
  std::ifstream in(path.append("/tests/ppl/fixtures/").append(fixture));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number)
    if (line.find(needle) != std::string::npos) return number;
  return -1;
}

int line_of_misuse(const std::string &needle) { return line_of("misuse.pl", needle); }

TEST_P(PplInsideARun, AMisuseStopsTheRunAtItsPlLine) {
  const std::vector<float> sentinel(24, -7.0f);
  MisuseJob job{cmodel_global_alloc(24 * 4), cmodel_global_alloc(24 * 4), cmodel_global_alloc(8 * 4), false};
  ASSERT_EQ(cmodel_global_write(job.out, sentinel.data(), 24 * 4), 0);
  EXPECT_NE(cmodel_run(call_misuse, &job), 0);
  EXPECT_FALSE(job.returned) << "the run went on after the refusal";
  EXPECT_CONTAINS(cmodel_last_error(), "ppl::tiu::fadd");
  EXPECT_CONTAINS(cmodel_last_error(), "misuse.pl:" + std::to_string(line_of_misuse("tiu::fadd(sum, a, a.sub_view")));
  std::vector<float> out(24);
  ASSERT_EQ(cmodel_global_read(out.data(), job.out, 24 * 4), 0);
  EXPECT_EQ(out, sentinel);
}

// A check error inside a PPL operation stops the run from within the
// operation; the next run's errors (a C kernel's) name their own place, not
// the .pl line the stopped run was at.
void call_scale_shift_outside(const void *) {
  scale_shift_f32(0, uint64_t(1) << 44, 0, 0, 1, 4, 2, 8, 4, 2);
}
void c_kernel_reading_outside(const void *) {
  const dim4 shape = {1, 1, 1, 8};
  tpu_gdma_cpy_S2L(0, uint64_t(1) << 44, &shape, nullptr, nullptr, DT_FP32);
}

TEST_P(PplInsideARun, TheNextRunDoesNotInheritTheStoppedRunsPlLine) {
  EXPECT_NE(cmodel_run(call_scale_shift_outside, nullptr), 0);
  EXPECT_CONTAINS(cmodel_last_error(), "scale_shift.pl:");
  EXPECT_NE(cmodel_run(c_kernel_reading_outside, nullptr), 0);
  const std::string error = cmodel_last_error();
  EXPECT_CONTAINS(error, "tpu_gdma_cpy_S2L");
  EXPECT_CONTAINS(error, "ppl_host_test.cc:");
  EXPECT_EQ(error.find("scale_shift.pl"), std::string::npos) << error;
}

// Run as an op's local entry (cmodel_set_local_entry), a kernel may use
// tensors at the addresses it is given, but a make_tensor, which would be
// planned over the layer group's tensors, stops it at its .pl line before
// any command; outside a local entry the same kernel runs.
TEST_P(PplInsideARun, ALocalEntryRefusesAutomaticTensorsAtTheirPlLine) {
  const int W = 8;
  std::vector<float> x(4 * W);
  for (int i = 0; i < 4 * W; ++i) x[size_t(i)] = float(i) - 9.5f;
  const std::vector<float> sentinel(x.size(), -7.0f);
  const uint64_t gx = cmodel_global_alloc(x.size() * 4), gout = cmodel_global_alloc(x.size() * 4);
  ASSERT_EQ(cmodel_global_write(gx, x.data(), x.size() * 4), 0);
  const auto output = [&] {
    std::vector<float> out(x.size());
    EXPECT_EQ(cmodel_global_read(out.data(), gout, out.size() * 4), 0);
    return out;
  };
  std::vector<float> doubled;
  for (float v : x) doubled.push_back(v + v);  // exact: halves and small integers

  ASSERT_EQ(cmodel_set_local_entry(1), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_global_write(gout, sentinel.data(), sentinel.size() * 4), 0);
  EXPECT_NE(double_rows(gout, gx, W, 1), 0);
  EXPECT_CONTAINS(cmodel_last_error(), "ppl::make_tensor");
  EXPECT_CONTAINS(cmodel_last_error(), "local entry");
  EXPECT_CONTAINS(cmodel_last_error(), "local_entry.pl:" + std::to_string(line_of("local_entry.pl", "make_tensor<")));
  EXPECT_EQ(output(), sentinel) << "a command ran before the refusal";
  ASSERT_EQ(double_rows(gout, gx, W, 0), 0) << cmodel_last_error();  // explicit tensors only
  EXPECT_EQ(output(), doubled);

  ASSERT_EQ(cmodel_set_local_entry(0), 0);
  ASSERT_EQ(cmodel_global_write(gout, sentinel.data(), sentinel.size() * 4), 0);
  ASSERT_EQ(double_rows(gout, gx, W, 1), 0) << cmodel_last_error();
  EXPECT_EQ(output(), doubled);

  // cmodel_close ends it, as it ends the emulator.
  ASSERT_EQ(cmodel_set_local_entry(1), 0);
  cmodel_close();
  ASSERT_EQ(cmodel_open(GetParam().name), 0) << cmodel_last_error();
  const uint64_t gx2 = cmodel_global_alloc(x.size() * 4), gout2 = cmodel_global_alloc(x.size() * 4);
  ASSERT_EQ(cmodel_global_write(gx2, x.data(), x.size() * 4), 0);
  EXPECT_EQ(double_rows(gout2, gx2, W, 1), 0) << cmodel_last_error();
}

INSTANTIATE_TEST_SUITE_P(Chips, PplInsideARun, ::testing::ValuesIn(kFigures),
                         [](const auto &info) { return std::string(info.param.name); });

}  // namespace
