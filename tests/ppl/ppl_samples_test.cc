// ppl_samples_test.cc: our PPL sample kernels (examples/ppl/*.pl), built as
// C++ over kernel/include/ppl through their generated interfaces, run on
// both chips against references computed here in double precision or by
// hand; the local-memory failure code and the host retry loop; and a
// check error that names the .pl file and line.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "add_row.h"
#include "int_average.h"
#include "lifetimes.h"
#include "matmul.h"
#include "misuse.h"
#include "pooling.h"
#include "rms_norm.h"
#include "row_stats.h"
#include "scale_shift.h"
#include "scaled_copy.h"
#include "softmax.h"
#include "ppl_support.h"
#include "support/test_support.h"

namespace {

using namespace ppl_test;

// The line of `needle` in a sample (or a test fixture, "tests/ppl/..."),
// counted here from the file itself.
int line_of(const std::string &file, const std::string &needle) {
  std::string path = TPU_SDK_SOURCE_DIR;
  path.append(file.rfind("tests/", 0) == 0 ? "/" : "/examples/ppl/").append(file);
  std::ifstream in(path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number)
    if (line.find(needle) != std::string::npos) return number;
  return -1;
}

class PplSamples : public ::testing::TestWithParam<Chip> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam().name), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
};

TEST_P(PplSamples, ScaleShiftBroadcastsChannelParametersOverNHW) {
  const int N = 2, C = 70, H = 5, W = 7;
  const std::vector<float> x = ramp(size_t(N) * C * H * W, 0.37f, -11.0f), scale = ramp(C, 0.11f, -3.0f),
                           shift = ramp(C, 1.7f, -40.0f);
  const uint64_t gx = upload(x), gs = upload(scale), gt = upload(shift), gout = upload(std::vector<float>(x.size()));
  // 48 channels a block: the second block starts past bm1688's 32 lanes.
  ASSERT_EQ(scale_shift_f32(gout, gx, gs, gt, N, C, H, W, 48, 2), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, x.size());
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int i = 0; i < H * W; ++i) {
        const size_t at = (size_t(n) * C + c) * H * W + i;
        const double expected = double(x[at]) * scale[c] + shift[c];
        ASSERT_NEAR(out[at], expected, 1e-5 * std::fabs(expected) + 1e-5) << "n " << n << " c " << c << " i " << i;
      }
}

TEST_P(PplSamples, AddRowBroadcastsOneRowOverEveryChannel) {
  const int C = 70, W = 11;  // more channels than either chip's lanes
  const std::vector<float> x = ramp(size_t(C) * W, 0.75f, -30.0f), row = ramp(W, 2.5f, -10.0f);
  const uint64_t gx = upload(x), grow = upload(row), gout = upload(std::vector<float>(x.size()));
  ASSERT_EQ(add_row_f32(gout, gx, grow, C, W), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, x.size());
  for (int c = 0; c < C; ++c)
    for (int w = 0; w < W; ++w)  // quarters: exact
      ASSERT_EQ(out[size_t(c) * W + w], x[size_t(c) * W + w] + row[w]) << c << ", " << w;
}

TEST_P(PplSamples, SoftmaxMatchesADoubleReference) {
  const int rows = 37, W = 19;
  const std::vector<float> x = ramp(size_t(rows) * W, 0.3f, -12.0f);
  const uint64_t gx = upload(x), gout = upload(std::vector<float>(x.size()));
  ASSERT_EQ(softmax_f32(gout, gx, rows, W, 16), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, x.size());
  for (int r = 0; r < rows; ++r) {
    double largest = -INFINITY, sum = 0;
    for (int w = 0; w < W; ++w) largest = std::max(largest, double(x[size_t(r) * W + w]));
    for (int w = 0; w < W; ++w) sum += std::exp(x[size_t(r) * W + w] - largest);
    for (int w = 0; w < W; ++w) {
      const double expected = std::exp(x[size_t(r) * W + w] - largest) / sum;
      ASSERT_NEAR(out[size_t(r) * W + w], expected, 1e-6 + 1e-5 * expected) << r << ", " << w;
    }
  }
}

TEST_P(PplSamples, Fp16SoftmaxIsTheReferenceRoundedToHalf) {
  const int rows = 5, W = 12;
  std::vector<uint16_t> x(size_t(rows) * W);
  for (size_t i = 0; i < x.size(); ++i) x[i] = half_bits(float(int(i * 13 % 29) - 14) / 4.0f);
  const uint64_t gx = upload(x), gout = upload(std::vector<uint16_t>(x.size()));
  ASSERT_EQ(softmax_f16(gout, gx, rows, W, 4), 0) << cmodel_last_error();
  const std::vector<uint16_t> out = download<uint16_t>(gout, x.size());
  for (int r = 0; r < rows; ++r) {
    double largest = -INFINITY, sum = 0;
    for (int w = 0; w < W; ++w) largest = std::max(largest, double(half_value(x[size_t(r) * W + w])));
    for (int w = 0; w < W; ++w) sum += std::exp(half_value(x[size_t(r) * W + w]) - largest);
    for (int w = 0; w < W; ++w) {
      const double expected = std::exp(half_value(x[size_t(r) * W + w]) - largest) / sum;
      // One fp16 rounding of a result within fp32 accuracy: half an fp16 ulp (2^-11 relative) and a bit.
      ASSERT_NEAR(half_value(out[size_t(r) * W + w]), expected, expected * std::ldexp(1.0, -10) + 1e-7) << r << ", " << w;
    }
  }
}

// (a + b) / 2 with ties toward +infinity, saturated to int8 (a sum of two
// int8 halved always fits); 3a - b exact in int16.
TEST_P(PplSamples, IntegerAddMulSubFollowShiftRoundingAndWidening) {
  const int columns = 40, length = GetParam().lanes * columns;
  std::vector<int8_t> a(length), b(length);
  for (int i = 0; i < length; ++i) {
    a[i] = int8_t((i * 37) % 256 - 128);
    b[i] = int8_t((i * 101 + 7) % 256 - 128);
  }
  const uint64_t ga = upload(a), gb = upload(b), gmean = upload(std::vector<int8_t>(length)),
                 gcombined = upload(std::vector<int16_t>(length));
  ASSERT_EQ(int_average(gmean, gcombined, ga, gb, columns), 0) << cmodel_last_error();
  const std::vector<int8_t> mean = download<int8_t>(gmean, length);
  const std::vector<int16_t> combined = download<int16_t>(gcombined, length);
  for (int i = 0; i < length; ++i) {
    const int sum = a[i] + b[i];
    const int expected_mean = int(std::floor(sum / 2.0 + 0.5));
    ASSERT_EQ(mean[i], expected_mean) << "element " << i << ": " << int(a[i]) << " + " << int(b[i]);
    ASSERT_EQ(combined[i], 3 * a[i] - b[i]) << "element " << i;
  }
}

TEST_P(PplSamples, RowStatsReduceEveryRowToItsSumAndMaximum) {
  const int rows = 40, W = 13;
  const std::vector<float> x = ramp(size_t(rows) * W, 0.25f, -9.0f);
  const uint64_t gx = upload(x), gsum = upload(std::vector<float>(rows)), gmax = upload(std::vector<float>(rows));
  ASSERT_EQ(row_stats_f32(gsum, gmax, gx, rows, W, 16), 0) << cmodel_last_error();
  const std::vector<float> sums = download<float>(gsum, rows), maxima = download<float>(gmax, rows);
  for (int r = 0; r < rows; ++r) {
    double sum = 0, largest = -INFINITY;
    for (int w = 0; w < W; ++w) {
      sum += x[size_t(r) * W + w];
      largest = std::max(largest, double(x[size_t(r) * W + w]));
    }
    EXPECT_NEAR(sums[r], sum, 1e-4) << "row " << r;  // quarters: exact in fp32
    EXPECT_EQ(maxima[r], largest) << "row " << r;
  }
}

TEST_P(PplSamples, RowSumOfHalvesGoesThroughFp32Exactly) {
  const int rows = 8, W = 10;
  std::vector<uint16_t> x(size_t(rows) * W);
  std::vector<double> expected(rows, 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = static_cast<float>(int(i * 37 % 61) - 30) / 4.0f;
    x[i] = half_bits(v);
    expected[i / W] += v;
  }
  const uint64_t gx = upload(x), gsum = upload(std::vector<uint16_t>(rows));
  ASSERT_EQ(row_sum_f16(gsum, gx, rows, W), 0) << cmodel_last_error();
  const std::vector<uint16_t> sums = download<uint16_t>(gsum, rows);
  for (int r = 0; r < rows; ++r) EXPECT_EQ(half_value(sums[r]), expected[r]) << "row " << r;
}

TEST_P(PplSamples, MatmulWithFmm2MatchesADoubleProduct) {
  const int M = 20, K = 12, N = 9;
  const std::vector<float> left = ramp(size_t(M) * K, 0.13f, -6.0f), right = ramp(size_t(K) * N, 0.07f, -3.0f);
  const uint64_t gl = upload(left), gr = upload(right), gout = upload(std::vector<float>(size_t(M) * N));
  ASSERT_EQ(matmul_f32(gout, gl, gr, M, K, N), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double expected = 0;
      for (int k = 0; k < K; ++k) expected += double(left[size_t(m) * K + k]) * right[size_t(k) * N + n];
      EXPECT_NEAR(out[size_t(m) * N + n], expected, 1e-4 * std::fabs(expected) + 1e-4) << m << ", " << n;
    }
}

TEST_P(PplSamples, PoolingMatchesWindowsComputedHere) {
  const int N = 2, C = 37, H = 6, W = 9, OH = 3, OW = 4;
  const std::vector<float> x = ramp(size_t(N) * C * H * W, 0.5f, -20.0f);
  const uint64_t gx = upload(x), gavg = upload(std::vector<float>(size_t(N) * C * OH * OW)),
                 gmax = upload(std::vector<float>(x.size()));
  ASSERT_EQ(avg_pool_2x2(gavg, gx, N, C, H, W), 0) << cmodel_last_error();
  ASSERT_EQ(max_pool_3x3(gmax, gx, N, C, H, W), 0) << cmodel_last_error();
  const std::vector<float> avg = download<float>(gavg, size_t(N) * C * OH * OW), largest = download<float>(gmax, x.size());
  // The handle forms (pool::param) give the same bytes.
  const uint64_t gavg_h = upload(std::vector<float>(avg.size())), gmax_h = upload(std::vector<float>(x.size()));
  ASSERT_EQ(avg_pool_2x2_handles(gavg_h, gx, N, C, H, W), 0) << cmodel_last_error();
  ASSERT_EQ(max_pool_3x3_handles(gmax_h, gx, N, C, H, W), 0) << cmodel_last_error();
  EXPECT_EQ(download<float>(gavg_h, avg.size()), avg);
  EXPECT_EQ(download<float>(gmax_h, x.size()), largest);
  EXPECT_NE(pool_with_swapped_handles(gmax_h, gx, N, C, H, W), 0);
  EXPECT_CONTAINS(cmodel_last_error(), "(pooling.pl:74)");
  EXPECT_CONTAINS(cmodel_last_error(), "the kernel argument is a padding handle (::param::padding); pass a ::param::kernel handle");
  auto at = [&](int plane, int h, int w) { return x[(size_t(plane) * H + h) * W + w]; };
  for (int plane = 0; plane < N * C; ++plane) {
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        const double mean = (double(at(plane, 2 * oh, 2 * ow)) + at(plane, 2 * oh, 2 * ow + 1) +
                             at(plane, 2 * oh + 1, 2 * ow) + at(plane, 2 * oh + 1, 2 * ow + 1)) / 4;
        ASSERT_EQ(avg[(size_t(plane) * OH + oh) * OW + ow], mean) << plane << ": " << oh << ", " << ow;
      }
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < W; ++w) {
        float expected = -INFINITY;
        for (int dh = -1; dh <= 1; ++dh)
          for (int dw = -1; dw <= 1; ++dw)
            if (h + dh >= 0 && h + dh < H && w + dw >= 0 && w + dw < W) expected = std::max(expected, at(plane, h + dh, w + dw));
        ASSERT_EQ(largest[(size_t(plane) * H + h) * W + w], expected) << plane << ": " << h << ", " << w;
      }
  }
}

TEST_P(PplSamples, RmsNormMatchesADoubleReference) {
  const int rows = 45, W = 24;
  const float eps = 1e-5f;
  const std::vector<float> x = ramp(size_t(rows) * W, 0.21f, -9.0f);
  const uint64_t gx = upload(x), gout = upload(std::vector<float>(x.size()));
  ASSERT_EQ(rms_norm_f32(gout, gx, rows, W, eps, 16), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, x.size());
  for (int r = 0; r < rows; ++r) {
    double squares = 0;
    for (int w = 0; w < W; ++w) squares += double(x[size_t(r) * W + w]) * x[size_t(r) * W + w];
    const double factor = 1 / std::sqrt(squares / W + eps);
    for (int w = 0; w < W; ++w) {
      const double expected = x[size_t(r) * W + w] * factor;
      ASSERT_NEAR(out[size_t(r) * W + w], expected, 2e-5 * std::fabs(expected) + 1e-6) << r << ", " << w;
    }
  }
}

// Two fp32 tensors of [1, LANE_NUM, 1, block] are alive at once: 8 * block
// bytes per lane; under enable_pipeline both are doubled: 16 * block.
TEST_P(PplSamples, LocalMemoryRunsOutAtTheHandDerivedBlock) {
  const Chip chip = GetParam();
  const int columns = 96, length = chip.lanes * columns;
  const uint64_t gx = upload(ramp(length, 1.0f, 0.0f)), gout = upload(std::vector<float>(length));
  const int serial_limit = int(chip.lane_bytes / 8), pipelined_limit = int(chip.lane_bytes / 16);
  EXPECT_EQ(scaled_copy_serial(gout, gx, length, serial_limit), 0) << cmodel_last_error();
  EXPECT_EQ(scaled_copy_serial(gout, gx, length, serial_limit + 16), PplLocalAddrAssignErr);
  EXPECT_EQ(scaled_copy_pipelined(gout, gx, length, pipelined_limit), 0) << cmodel_last_error();
  EXPECT_EQ(scaled_copy_pipelined(gout, gx, length, pipelined_limit + 16), PplLocalAddrAssignErr);
  EXPECT_CONTAINS(cmodel_last_error(), "PplLocalAddrAssignErr");
  EXPECT_CONTAINS(cmodel_last_error(), "scaled_copy.pl:");
  EXPECT_CONTAINS(cmodel_last_error(), "doubled by enable_pipeline");
}

// 60% of a lane each: sequential lifetimes share the bytes, overlapping ones
// do not fit.
TEST_P(PplSamples, TensorsShareBytesWhenTheirLifetimesDoNotOverlap) {
  const Chip chip = GetParam();
  const int columns = int(chip.lane_bytes * 6 / 10 / 4) / 16 * 16, length = chip.lanes * columns;
  const std::vector<float> x = ramp(length, 0.5f, -20.0f);
  const uint64_t gx = upload(x), gout = upload(std::vector<float>(length));
  ASSERT_EQ(one_after_the_other(gout, gx, columns), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, length);
  for (int i = 0; i < length; ++i) ASSERT_EQ(out[i], 3 * x[i]) << "element " << i;
  EXPECT_EQ(both_alive(gout, gx, columns), PplLocalAddrAssignErr);
  EXPECT_CONTAINS(cmodel_last_error(), "lifetimes.pl:");
}

// The vendor's host loop: halve the block while the kernel answers
// PplLocalAddrAssignErr. The refused calls issue no command: the output
// keeps its sentinel until the call that fits.
TEST_P(PplSamples, HostRetryLoopHalvesTheBlockUntilItFits) {
  const Chip chip = GetParam();
  const int columns = 3000, length = chip.lanes * columns;
  const std::vector<float> x = ramp(length, 0.5f, -20.0f);
  const uint64_t gx = upload(x), gout = upload(std::vector<float>(length, -1234.5f));
  int block = 1 << 20, refused = 0, status = 0;
  while ((status = scaled_copy_pipelined(gout, gx, length, block)) == PplLocalAddrAssignErr) {
    ++refused;
    EXPECT_EQ(download<float>(gout, 1)[0], -1234.5f) << "a refused call wrote its output";
    block /= 2;
  }
  ASSERT_EQ(status, 0) << cmodel_last_error();
  // 2^20 halved until 16 * block <= lane bytes.
  EXPECT_EQ(block, int(chip.lane_bytes / 16));
  EXPECT_GT(refused, 0);
  const std::vector<float> out = download<float>(gout, length);
  for (int i = 0; i < length; ++i) ASSERT_EQ(out[i], 2 * x[i]) << "element " << i;
}

TEST_P(PplSamples, ACheckErrorNamesThePlFileAndLine) {
  const int N = 1, C = 4, H = 2, W = 8;
  const uint64_t gs = upload(std::vector<float>(C)), gt = upload(std::vector<float>(C)),
                 gout = upload(std::vector<float>(size_t(N) * C * H * W));
  const uint64_t outside = uint64_t(1) << 44;  // far beyond either chip's global memory
  EXPECT_EQ(scale_shift_f32(gout, outside, gs, gt, N, C, H, W, 4, 2), -1);
  const int line = line_of("scale_shift.pl", "dma::load(in, g_x");
  ASSERT_GT(line, 0);
  EXPECT_CONTAINS(cmodel_last_error(), "tpu_gdma_cpy_S2L");
  EXPECT_CONTAINS(cmodel_last_error(), "scale_shift.pl:" + std::to_string(line));
}

// Refused in the plan pass: nothing ran, the output keeps its sentinel.
TEST_P(PplSamples, AMisuseIsRefusedBeforeAnyCommandAtItsPlLine) {
  const int C = 3, W = 8;
  const uint64_t gx = upload(std::vector<float>(C * W, 1.0f)), grow = upload(std::vector<float>(W, 2.0f)),
                 gout = upload(std::vector<float>(C * W, -7.0f));
  EXPECT_EQ(channel_broadcast(gout, gx, grow, C, W), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "ppl::tiu::fadd: src1 of shape [1, 1, 1, 8] broadcasts over C to [1, 3, 1, 8], "
                                       "which needs a tensor made with one channel (its block's C is 3)");
  EXPECT_CONTAINS(cmodel_last_error(),
                  "misuse.pl:" + std::to_string(line_of("tests/ppl/fixtures/misuse.pl", "tiu::fadd(sum, a, a.sub_view")));
  EXPECT_EQ(download<float>(gout, C * W), std::vector<float>(C * W, -7.0f));

  EXPECT_EQ(window_outside(gout, W), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "window [1, 4, 1, 8] at offset [0, 1, 0, 0] leaves the tensor of shape [1, 4, 1, 8]");
  EXPECT_CONTAINS(cmodel_last_error(),
                  "misuse.pl:" + std::to_string(line_of("tests/ppl/fixtures/misuse.pl", "dma::store(g_out.sub_view")));
  EXPECT_EQ(download<float>(gout, C * W), std::vector<float>(C * W, -7.0f));
}

INSTANTIATE_TEST_SUITE_P(Chips, PplSamples, ::testing::ValuesIn(kChips),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(PplLaunch, WithoutAnOpenEmulatorAKernelAnswersPplJitSetChipErr) {
  EXPECT_EQ(matmul_f32(0, 0, 0, 1, 1, 1), PplJitSetChipErr);
  EXPECT_CONTAINS(cmodel_last_error(), "no emulator is open");
}

}  // namespace
