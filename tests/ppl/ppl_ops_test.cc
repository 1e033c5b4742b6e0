// ppl_ops_test.cc: the PPL operations beyond the first slice (comparisons,
// selections, rounding, bit operations, shifts, transposes, broadcasts,
// fmm2_nt, the wrappers), multi-core kernels, pipelining and bank-aware
// placement, on both chips, against references computed here in double
// precision or by hand.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "banks.h"
#include "elementwise_logic.h"
#include "indices.h"
#include "l2_capacity.h"
#include "misuse_ops.h"
#include "layouts.h"
#include "multicore_sum.h"
#include "pipeline_dependence.h"
#include "ppl_support.h"
#include "scaled_copy.h"
#include "support/test_support.h"
#include "wrappers.h"

namespace {

using namespace ppl_test;

nlohmann::json last_stats() { return nlohmann::json::parse(cmodel_last_run_stats()); }

class PplOps : public ChipTest {};

// Quarters in [-6, 6], 0.5 and ties such as 2.5 and -1.5 among them.
std::vector<float> quarters(size_t count, int seed) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = float(int((i * 13 + size_t(seed)) % 49) - 24) / 4.0f;
  return values;
}

TEST_P(PplOps, ComparisonsSelectionsRoundingAndMacMatchTheirDefinitions) {
  const int C = 37, W = 9, n = C * W;
  const std::vector<float> x = quarters(n, 0), y = quarters(n, 17);
  std::vector<uint64_t> outs(8);
  for (uint64_t &o : outs) o = upload(std::vector<float>(n, -99.0f));
  ASSERT_EQ(float_logic(outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], outs[6], outs[7], upload(x), upload(y),
                        C, W),
            0)
      << cmodel_last_error();
  std::vector<std::vector<float>> got;
  for (uint64_t o : outs) got.push_back(download<float>(o, n));
  for (int i = 0; i < n; ++i) {
    const double a = x[i], b = y[i];
    ASSERT_EQ(got[0][i], a > b ? 1.0 : 0.0) << i;
    ASSERT_EQ(got[1][i], a > b ? a : b) << i;
    ASSERT_EQ(got[2][i], a < 0 ? a : 0.0) << i;
    ASSERT_EQ(got[3][i], a == 0.5 ? 5.0 : 0.0) << i;
    ASSERT_EQ(got[4][i], std::floor(a)) << i;
    ASSERT_EQ(got[5][i], std::nearbyint(a)) << i;  // ties to even
    ASSERT_EQ(got[6][i], std::fabs(a)) << i;
    ASSERT_EQ(got[7][i], b + a * a + 2 * a) << i;  // quarters: exact in fp32
  }
}

TEST_P(PplOps, BitOperationsAndShiftsMatchTheirDefinitions) {
  const int C = 21, W = 11, n = C * W;
  std::vector<int32_t> p(n), q(n);
  std::vector<int8_t> amounts(n);
  for (int i = 0; i < n; ++i) {
    p[i] = (i * 7919 % 200003) - 100001;
    q[i] = (i * 104729 % 65537) - 30000;
    amounts[i] = int8_t(i % 11 - 5);
  }
  std::vector<uint64_t> outs(7);
  for (uint64_t &o : outs) o = upload(std::vector<int32_t>(n));
  ASSERT_EQ(int_logic(outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], outs[6], upload(p), upload(q),
                      upload(amounts), C, W),
            0)
      << cmodel_last_error();
  std::vector<std::vector<int32_t>> got;
  for (uint64_t o : outs) got.push_back(download<int32_t>(o, n));
  for (int i = 0; i < n; ++i) {
    const int64_t a = p[i];
    ASSERT_EQ(got[0][i], p[i] & q[i]) << i;
    ASSERT_EQ(got[1][i], p[i] | 0xF0) << i;
    ASSERT_EQ(got[2][i], p[i] ^ q[i]) << i;
    ASSERT_EQ(got[3][i], a * 8) << i;
    ASSERT_EQ(got[4][i], int64_t(std::floor(double(a) / 4))) << i;
    ASSERT_EQ(uint32_t(got[5][i]), uint32_t(p[i]) / 16) << i;
    const int s = amounts[i];
    const int64_t expected = s >= 0 ? a * (int64_t(1) << s) : int64_t(std::floor(double(a) / double(1 << -s)));
    ASSERT_EQ(got[6][i], expected) << i << ": " << a << " shifted by " << s;
  }
}

// A left shift without saturation wraps in dst's width, as (a op b) << s
// computed wide and cut to it.
TEST_P(PplOps, IntegerArithmeticShiftsLeftWrappingInTheDestination) {
  const int C = 9, W = 13, n = C * W;
  std::vector<int8_t> p(n), q(n);
  for (int i = 0; i < n; ++i) {
    p[i] = int8_t(i * 37 % 256 - 128);
    q[i] = int8_t(i * 59 % 256 - 128);
  }
  const uint64_t gsums = upload(std::vector<int8_t>(n)), gproducts = upload(std::vector<int32_t>(n));
  ASSERT_EQ(int_shifted(gsums, gproducts, upload(p), upload(q), C, W), 0) << cmodel_last_error();
  const std::vector<int8_t> sums = download<int8_t>(gsums, n);
  const std::vector<int32_t> products = download<int32_t>(gproducts, n);
  for (int i = 0; i < n; ++i) {
    const uint32_t wide = uint32_t((int(p[i]) + int(q[i])) * 4);
    ASSERT_EQ(sums[i], int8_t(uint8_t(wide & 0xFF))) << i << ": " << int(p[i]) << " + " << int(q[i]);
    ASSERT_EQ(products[i], p[i] * 5 * 8) << i;
  }
}

// With saturation a left shift clamps the exact (a op b) * 2^shift to dst's
// range: computed here in 64 bits (128 for the int32 products).
TEST_P(PplOps, IntegerArithmeticShiftsLeftSaturatingInTheDestination) {
  const int C = 40, W = 9, n = C * W;  // 40 channels cross bm1688's lanes
  std::vector<int16_t> p(n), q(n);
  std::vector<int32_t> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    p[i] = int16_t(i * 37 % 401 - 200);  // small and large: some fit after the shift, some saturate
    q[i] = int16_t(i * 59 % 97 - 48);
    x[i] = int32_t((i * 7919 % 200001 - 100000) * (i % 3 == 0 ? 30000 : 1));
    y[i] = int32_t(i * 104729 % 60001 - 30000);
  }
  auto clamp = [](__int128 v, __int128 lo, __int128 hi) { return int64_t(v < lo ? lo : v > hi ? hi : v); };
  for (const int shift : {1, 3}) {
    const uint64_t gs = upload(std::vector<int8_t>(n)), gd = upload(std::vector<uint8_t>(n)),
                   gm = upload(std::vector<int32_t>(n)), gk = upload(std::vector<int16_t>(n));
    ASSERT_EQ(int_saturating_shifts(gs, gd, gm, gk, upload(p), upload(q), upload(x), upload(y), C, W, shift), 0)
        << cmodel_last_error();
    const auto sums = download<int8_t>(gs, n);
    const auto differences = download<uint8_t>(gd, n);
    const auto products = download<int32_t>(gm, n);
    const auto scaled = download<int16_t>(gk, n);
    const __int128 k = __int128(1) << shift;
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(sums[i], clamp((__int128(p[i]) + q[i]) * k, -128, 127)) << shift << ", " << i;
      ASSERT_EQ(differences[i], clamp((__int128(p[i]) - q[i]) * k, 0, 255)) << shift << ", " << i;
      ASSERT_EQ(products[i], clamp(__int128(x[i]) * y[i] * k, INT32_MIN, INT32_MAX)) << shift << ", " << i;
      ASSERT_EQ(scaled[i], clamp(__int128(p[i]) * -3 * k, INT16_MIN, INT16_MAX)) << shift << ", " << i;
    }
  }
}

TEST_P(PplOps, DmaTransposesSwapNAndCOnTheWayInAndOut) {
  const int N = 3, C = 5, W = 7;
  const std::vector<float> x = ramp(size_t(N) * C * W, 0.5f, -3.0f);
  const uint64_t gout = upload(std::vector<float>(x.size())), gback = upload(std::vector<float>(x.size()));
  ASSERT_EQ(transpose_nc(gout, gback, upload(x), N, C, W), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, x.size()), back = download<float>(gback, x.size());
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int w = 0; w < W; ++w)
        ASSERT_EQ(out[(size_t(c) * N + n) * W + w], x[(size_t(n) * C + c) * W + w]) << n << ", " << c << ", " << w;
  EXPECT_EQ(back, x);
}

TEST_P(PplOps, TiuTransposesSwapCAndW) {
  for (const auto &[C, W] : {std::pair{40, 6}, std::pair{6, 20}}) {
    const std::vector<float> x = ramp(size_t(C) * W, 0.25f, 1.0f);
    const uint64_t gout = upload(std::vector<float>(x.size()));
    ASSERT_EQ(transpose_cw(gout, upload(x), C, W), 0) << cmodel_last_error();
    const std::vector<float> out = download<float>(gout, x.size());
    for (int c = 0; c < C; ++c)
      for (int w = 0; w < W; ++w) ASSERT_EQ(out[size_t(w) * C + c], x[size_t(c) * W + w]) << C << "x" << W;
  }
}

TEST_P(PplOps, BroadcastsReplicateARowAndACompactLoadCopies) {
  const int C = 20, H = 3, W = 7;
  const std::vector<float> row = ramp(W, 1.5f, -4.0f), x = ramp(size_t(C) * H * W, 0.75f, 2.0f);
  const uint64_t gout = upload(std::vector<float>(size_t(2) * C * W)), gcopy = upload(std::vector<float>(x.size()));
  ASSERT_EQ(broadcasts(gout, gcopy, upload(row), upload(x), C, H, W), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, size_t(2) * C * W);
  for (int r = 0; r < 2 * C; ++r)
    for (int w = 0; w < W; ++w) ASSERT_EQ(out[size_t(r) * W + w], row[w]) << "row " << r << ", " << w;
  EXPECT_EQ(download<float>(gcopy, x.size()), x);
}

TEST_P(PplOps, Fmm2NtMultipliesByTheTransposeOfRight) {
  const int M = 20, K = 24, N = 12;
  std::vector<uint16_t> left(size_t(M) * K), right(size_t(N) * K);
  for (size_t i = 0; i < left.size(); ++i) left[i] = half_bits(float(int(i * 5 % 9) - 4) / 4.0f);
  for (size_t i = 0; i < right.size(); ++i) right[i] = half_bits(float(int(i * 7 % 11) - 5) / 2.0f);
  const uint64_t gout = upload(std::vector<float>(size_t(M) * N));
  ASSERT_EQ(matmul_nt(gout, upload(left), upload(right), M, K, N), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double sum = 0;
      for (int k = 0; k < K; ++k) sum += double(half_value(left[size_t(m) * K + k])) * half_value(right[size_t(n) * K + k]);
      ASSERT_EQ(out[size_t(m) * N + n], sum) << m << ", " << n;  // eighths: exact
    }
}

TEST_P(PplOps, MoveCrossLaneCopiesToAnotherLane) {
  const int W = 13;
  const std::vector<float> x = ramp(size_t(2) * W, 1.25f, -7.0f);
  const uint64_t gout = upload(std::vector<float>(x.size()));
  ASSERT_EQ(cross_lane(gout, upload(x), W), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, x.size());
  for (int w = 0; w < W; ++w) {
    EXPECT_EQ(out[w], x[w]) << w;
    EXPECT_EQ(out[W + w], x[W + w]) << w;
  }
}

TEST_P(PplOps, QuickPoolingGivesRowMaximaAndMeans) {
  const int C = 20, W = 37;
  const std::vector<float> x = ramp(size_t(C) * W, 0.5f, -20.0f);
  const uint64_t gmax = upload(std::vector<float>(C)), gmean = upload(std::vector<float>(C));
  ASSERT_EQ(row_pooling(gmax, gmean, upload(x), C, W, 48), 0) << cmodel_last_error();
  const std::vector<float> maxima = download<float>(gmax, C), means = download<float>(gmean, C);
  for (int c = 0; c < C; ++c) {
    double largest = -INFINITY, sum = 0;
    for (int w = 0; w < W; ++w) {
      largest = std::max(largest, double(x[size_t(c) * W + w]));
      sum += x[size_t(c) * W + w];
    }
    EXPECT_EQ(maxima[c], largest) << c;
    EXPECT_NEAR(means[c], sum / W, 1e-5 * std::fabs(sum / W) + 1e-6) << c;
  }
}

TEST_P(PplOps, WrapperFunctionsMatchDoublePrecision) {
  const int C = 9, W = 14, n = C * W;
  std::vector<float> x(n), y(n), z(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f + 2.5f * float(i) / float(n);     // (0.5, 3)
    y[i] = -3.0f + 6.0f * float(i * 37 % n) / float(n);
    z[i] = -0.9f + 1.8f * float(i * 53 % n) / float(n);
  }
  std::vector<uint64_t> outs(6);
  for (uint64_t &o : outs) o = upload(std::vector<float>(n));
  ASSERT_EQ(functions(outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], upload(x), upload(y), upload(z), C, W), 0)
      << cmodel_last_error();
  std::vector<std::vector<float>> got;
  for (uint64_t o : outs) got.push_back(download<float>(o, n));
  const auto near = [](double value, double expected) { return std::fabs(value - expected) <= 2e-5 * std::fabs(expected) + 2e-6; };
  for (int i = 0; i < n; ++i) {
    const double a = x[i], b = y[i], c = z[i];
    EXPECT_PRED2(near, got[0][i], std::log(a)) << i;
    EXPECT_PRED2(near, got[1][i], 1 / (1 + std::exp(-b))) << i;
    EXPECT_PRED2(near, got[2][i], a * a) << i;
    EXPECT_PRED2(near, got[3][i], std::pow(2.0, b)) << i;
    EXPECT_PRED2(near, got[4][i], std::pow(a, b)) << i;
    EXPECT_PRED2(near, got[5][i], std::asin(c)) << i;
  }
}

TEST_P(PplOps, ArangeBroadcastFillsEveryChannelWithTheSequence) {
  const int C = 10, N = 16;
  const uint64_t gout = upload(std::vector<int32_t>(size_t(C) * N));
  ASSERT_EQ(sequence(gout, C, -3, 4, N), 0) << cmodel_last_error();
  const std::vector<int32_t> out = download<int32_t>(gout, size_t(C) * N);
  for (int c = 0; c < C; ++c)
    for (int i = 0; i < N; ++i) ASSERT_EQ(out[size_t(c) * N + i], -3 + 4 * i) << c << ", " << i;
}

TEST_P(PplOps, MinPoolingTakesEachWindowsMinimum) {
  const int C = 7, H = 6, W = 5;
  const std::vector<float> x = ramp(size_t(C) * H * W, 0.5f, -10.0f);
  const uint64_t gout = upload(std::vector<float>(size_t(C) * (H - 2) * W));
  ASSERT_EQ(min_pool(gout, upload(x), C, H, W), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, size_t(C) * (H - 2) * W);
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < H - 2; ++h)
      for (int w = 0; w < W; ++w) {
        float smallest = INFINITY;
        for (int k = 0; k < 3; ++k) smallest = std::min(smallest, x[(size_t(c) * H + h + k) * W + w]);
        ASSERT_EQ(out[(size_t(c) * (H - 2) + h) * W + w], smallest) << c << ", " << h << ", " << w;
      }
  // The handle form (pool::param) gives the same bytes.
  const uint64_t gout_h = upload(std::vector<float>(out.size()));
  ASSERT_EQ(min_pool_handles(gout_h, upload(x), C, H, W), 0) << cmodel_last_error();
  EXPECT_EQ(download<float>(gout_h, out.size()), out);
}

TEST_P(PplOps, IntegerPoolingTakesMaximaAndScaledShiftedSums) {
  const int C = 5, H = 4, W = 6, OH = H - 1, OW = W - 1;
  std::vector<int8_t> x(size_t(C) * H * W);
  for (size_t i = 0; i < x.size(); ++i) x[i] = int8_t(int(i * 89 % 256) - 128);
  const uint64_t gmax = upload(std::vector<int8_t>(size_t(C) * OH * OW)),
                 gavg = upload(std::vector<int16_t>(size_t(C) * OH * OW));
  ASSERT_EQ(int_pools(gmax, gavg, upload(x), C, H, W), 0) << cmodel_last_error();
  const std::vector<int8_t> maxima = download<int8_t>(gmax, size_t(C) * OH * OW);
  const std::vector<int16_t> averages = download<int16_t>(gavg, size_t(C) * OH * OW);
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < OH; ++h)
      for (int w = 0; w < OW; ++w) {
        int largest = -128, sum = 0;
        for (int dh = 0; dh < 2; ++dh)
          for (int dw = 0; dw < 2; ++dw) {
            const int v = x[(size_t(c) * H + h + dh) * W + w + dw];
            largest = std::max(largest, v);
            sum += v;
          }
        const size_t at = (size_t(c) * OH + h) * OW + w;
        ASSERT_EQ(maxima[at], largest) << c << ", " << h << ", " << w;
        // (3 sum) / 4 rounded half up: floor((3 sum + 2) / 4).
        ASSERT_EQ(averages[at], int(std::floor((3.0 * sum + 2) / 4))) << c << ", " << h << ", " << w;
      }
  // The handle form (pool::param) gives the same bytes.
  const uint64_t gmax_h = upload(std::vector<int8_t>(maxima.size())),
                 gavg_h = upload(std::vector<int16_t>(averages.size()));
  ASSERT_EQ(int_pools_handles(gmax_h, gavg_h, upload(x), C, H, W), 0) << cmodel_last_error();
  EXPECT_EQ(download<int8_t>(gmax_h, maxima.size()), maxima);
  EXPECT_EQ(download<int16_t>(gavg_h, averages.size()), averages);
}

TEST_P(PplOps, ScatterWPlacesEachValueAtItsIndex) {
  const int C = 6, W = 5, OW = 9;
  const std::vector<float> param = ramp(size_t(C) * W, 0.5f, 3.0f);
  std::vector<uint16_t> index(size_t(C) * W);
  for (int c = 0; c < C; ++c)
    for (int w = 0; w < W; ++w) index[size_t(c) * W + w] = uint16_t((2 * w + c) % OW);  // distinct in a row
  const uint64_t gout = upload(std::vector<float>(size_t(C) * OW));
  ASSERT_EQ(scatter_columns(gout, upload(param), upload(index), C, W, OW), 0) << cmodel_last_error();
  std::vector<float> expected(size_t(C) * OW, -1.0f);
  for (int c = 0; c < C; ++c)
    for (int w = 0; w < W; ++w) expected[size_t(c) * OW + index[size_t(c) * W + w]] = param[size_t(c) * W + w];
  EXPECT_EQ(download<float>(gout, size_t(C) * OW), expected);
}

TEST_P(PplOps, NonzeroGivesTheIndicesAndACountTheKernelActsOn) {
  const int N = 50;
  std::vector<float> x(N, 0.0f);
  std::vector<uint32_t> expected;
  for (int i = 0; i < N; ++i)
    if (i % 3 == 1 || i == 49) {
      x[i] = float(i) - 20.5f;
      expected.push_back(uint32_t(i + 100));
    }
  const uint64_t gindices = upload(std::vector<uint32_t>(N)), gcount = upload(std::vector<int32_t>(1, -1)),
                 gfirst = upload(std::vector<uint32_t>(N, 7));
  ASSERT_EQ(find_nonzero(gindices, gcount, gfirst, upload(x), N), 0) << cmodel_last_error();
  EXPECT_EQ(download<int32_t>(gcount, 1)[0], int32_t(expected.size()));
  std::vector<uint32_t> first = download<uint32_t>(gfirst, N);
  EXPECT_EQ(std::vector<uint32_t>(first.begin(), first.begin() + long(expected.size())), expected);
  EXPECT_EQ(first[expected.size()], 7u) << "written past the count";
}

// bm1688 runs the kernel on its two cores, bm1684x on its one: the same
// sums either way.
TEST_P(PplOps, MultiCoreKernelSplitsRowsOverTheChipsCores) {
  const int C = 45, W = 24, cores = std::string(GetParam().name) == "bm1688" ? 2 : 1;
  const std::vector<float> x = ramp(size_t(C) * W, 0.25f, -11.0f);
  const uint64_t gsums = upload(std::vector<float>(C)), gtotal = upload(std::vector<float>(1)),
                 gpartials = upload(std::vector<float>(2));
  ASSERT_EQ(row_sums_multicore(gsums, gtotal, gpartials, upload(x), C, W, true), 0) << cmodel_last_error();
  EXPECT_EQ(last_stats().value("cores", nlohmann::json::array()).size(), cores == 2 ? 2u : 0u);
  const std::vector<float> sums = download<float>(gsums, C);
  double total = 0;
  for (int c = 0; c < C; ++c) {
    double sum = 0;
    for (int w = 0; w < W; ++w) sum += x[size_t(c) * W + w];
    EXPECT_EQ(sums[c], sum) << c;  // quarters: exact
    total += sum;
  }
  EXPECT_EQ(download<float>(gtotal, 1)[0], total);
}

TEST_P(PplOps, MultiCoreKernelWithoutItsSyncIsACrossCoreRace) {
  // bm1684x has one core: two are emulated (option cores, which ends with
  // the test's emulator), so the race exists there too.
  if (std::string(GetParam().name) != "bm1688") {
    ASSERT_EQ(cmodel_set_option("cores", "2"), 0) << cmodel_last_error();
  }
  const int C = 8, W = 4;
  const uint64_t gsums = upload(std::vector<float>(C)), gtotal = upload(std::vector<float>(1)),
                 gpartials = upload(std::vector<float>(2));
  EXPECT_EQ(row_sums_multicore(gsums, gtotal, gpartials, upload(ramp(size_t(C) * W, 1, 0)), C, W, false), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "cross-core race");
  EXPECT_CONTAINS(cmodel_last_error(), "multicore_sum.pl:");
}

TEST_P(PplOps, CoresReduceIntoOneL2TensorBetweenSyncs) {
  const int C = 45, W = 24;
  const std::vector<float> x = ramp(size_t(C) * W, 0.25f, -11.0f);
  const uint64_t gout = upload(std::vector<float>(W, -1.0f));
  ASSERT_EQ(column_sums_multicore(gout, upload(x), C, W), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, W);
  for (int w = 0; w < W; ++w) {
    double sum = 0;
    for (int c = 0; c < C; ++c) sum += x[size_t(c) * W + w];
    EXPECT_EQ(out[w], sum) << w;  // quarters: exact in any order
  }
}

// The chips' L2 SRAM is 2 MiB (docs/cmodel.md): 512 rows of 1024 fp32 fit.
TEST_P(PplOps, L2TensorsPastTheSramAnswerPplL2AddrAssignErr) {
  const uint64_t gout = upload(std::vector<float>(16, -1.0f));
  EXPECT_EQ(l2_block(gout, 513), PplL2AddrAssignErr);
  EXPECT_CONTAINS(cmodel_last_error(), "l2_capacity.pl:");
  EXPECT_EQ(download<float>(gout, 16), std::vector<float>(16, -1.0f)) << "a refused call wrote its output";
  ASSERT_EQ(l2_block(gout, 512), 0) << cmodel_last_error();
  EXPECT_EQ(download<float>(gout, 16), std::vector<float>(16, 3.0f));
}

TEST_P(PplOps, RowsGatheredAndScatteredAlongH) {
  const int C = 6, R = 5, H = 7, W = 9;
  const std::vector<float> table = ramp(size_t(C) * R * W, 0.5f, 1.0f);
  std::vector<uint32_t> index(size_t(C) * H);
  for (size_t i = 0; i < index.size(); ++i) index[i] = uint32_t(i * 3 % (R + 2));  // R and R + 1: out of range
  const uint64_t ggathered = upload(std::vector<float>(size_t(C) * H * W)),
                 gscattered = upload(std::vector<float>(table.size(), 7.0f));
  ASSERT_EQ(gather_scatter_rows(ggathered, gscattered, upload(table), upload(index), C, R, H, W), 0)
      << cmodel_last_error();
  const std::vector<float> gathered = download<float>(ggathered, size_t(C) * H * W),
                           scattered = download<float>(gscattered, table.size());
  std::vector<float> expected_scatter(table.size(), 0.0f);
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < H; ++h) {
      const uint32_t row = index[size_t(c) * H + h];
      for (int w = 0; w < W; ++w) {
        const float value = row < uint32_t(R) ? table[(size_t(c) * R + row) * W + w] : -1.0f;
        ASSERT_EQ(gathered[(size_t(c) * H + h) * W + w], value) << c << ", " << h << ", " << w;
        if (row < uint32_t(R)) expected_scatter[(size_t(c) * R + row) * W + w] = value;  // later rows win
      }
    }
  EXPECT_EQ(scattered, expected_scatter);
}

// bm1688: core 1 reads what core 0 wrote once core 0's message arrives.
// bm1684x: one core, core 0's half alone.
TEST_P(PplOps, AnEngineMessageHandsDataFromOneCoreToTheOther) {
  const int W = 20;
  const bool two = std::string(GetParam().name) == "bm1688";
  const std::vector<float> x = ramp(W, 0.5f, -4.0f);
  const uint64_t gout = upload(std::vector<float>(W, -7.0f)), gmiddle = upload(std::vector<float>(W));
  ASSERT_EQ(message_handoff(gout, gmiddle, upload(x), W), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, W), middle = download<float>(gmiddle, W);
  for (int w = 0; w < W; ++w) {
    EXPECT_EQ(middle[w], 2 * x[w]) << w;
    EXPECT_EQ(out[w], two ? 2 * x[w] + 1 : -7.0f) << w;
  }
}

// 16 blocks of 16 columns: under enable_pipeline the loads of block i + 1
// and the stores of block i - 1 run beside the multiply of block i.
TEST_P(PplOps, PipeliningOverlapsGdmaAndBdcWithTheSameResults) {
  const int columns = 256, length = GetParam().lanes * columns, block = 16;
  const std::vector<float> x = ramp(length, 0.5f, -9.0f);
  const uint64_t gx = upload(x), serial_out = upload(std::vector<float>(length)),
                 pipelined_out = upload(std::vector<float>(length));
  ASSERT_EQ(scaled_copy_serial(serial_out, gx, length, block), 0) << cmodel_last_error();
  const nlohmann::json serial = last_stats();
  ASSERT_EQ(scaled_copy_pipelined(pipelined_out, gx, length, block), 0) << cmodel_last_error();
  const nlohmann::json pipelined = last_stats();
  const std::vector<float> a = download<float>(serial_out, length), b = download<float>(pipelined_out, length);
  for (int i = 0; i < length; ++i) ASSERT_EQ(a[i], 2 * x[i]) << i;
  EXPECT_EQ(a, b);
  EXPECT_EQ(serial["gdma_bdc_concurrent_us"].get<double>(), 0.0);
  EXPECT_GT(pipelined["gdma_bdc_concurrent_us"].get<double>(), 0.0);
  EXPECT_LT(pipelined["total_us"].get<double>(), serial["total_us"].get<double>());
  // The same commands, only ordered and overlapped differently.
  EXPECT_EQ(pipelined["engines"]["gdma"]["commands"], serial["engines"]["gdma"]["commands"]);
  EXPECT_EQ(pipelined["engines"]["bdc"]["commands"], serial["engines"]["bdc"]["commands"]);
}

// Iterations that depend on each other through global memory keep their
// order: no overlap, the right sum.
TEST_P(PplOps, PipelinedLoopWithADependenceBetweenIterationsRunsInOrder) {
  const int blocks = 6, W = 8, row = GetParam().lanes * W;
  const std::vector<float> x = ramp(size_t(blocks) * row, 0.25f, -5.0f);
  const uint64_t gacc = upload(std::vector<float>(row, 1.0f));
  ASSERT_EQ(accumulate_blocks(gacc, upload(x), blocks, W), 0) << cmodel_last_error();
  const std::vector<float> acc = download<float>(gacc, row);
  for (int i = 0; i < row; ++i) {
    double sum = 1;
    for (int b = 0; b < blocks; ++b) sum += x[size_t(b) * row + i];
    ASSERT_EQ(acc[i], sum) << i;  // quarters: exact
  }
  EXPECT_EQ(last_stats()["gdma_bdc_concurrent_us"].get<double>(), 0.0);
}

// Each misuse is refused by the plan pass at its .pl line (counted here from
// the fixture), naming the operation; the store before it never ran.
TEST_P(PplOps, MisusesOfTheNewOperationsAreRefusedBeforeAnyCommand) {
  const struct {
    const char *call, *name, *says;
  } misuses[] = {{"tiu::transpose_cw(r, a)", "ppl::tiu::transpose_cw", "must be [1, 8, 1, 4]"},
                 {"tiu::gt_select(r, 1.0f", "ppl::tiu::gt_select", "cannot both be scalars"},
                 {"tiu::scatter_w(r, a, i32)", "ppl::tiu::scatter_w", "16- or 8-bit"},
                 {"dma::reduce(g_out", "ppl::dma::reduce", "must be an L2 tensor"},
                 {"set_core_num(0)", "ppl::set_core_num", "at least 1"},
                 {"nowhere(shape, GLOBAL)", "ppl::gtensor", "needs its address"},
                 {"tiu::add(s8, s8, s8, 40", "ppl::tiu::add", "shift 40 is outside [-32, 31]"},
                 {"tiu::fconv(r, a, a, 4", "ppl::tiu::fconv", "weight of shape [1, 4, 1, 8] must be [1, 4, 4, 1]"},
                 {"tiu::gather_hw(r, a, u16)", "ppl::tiu::gather_hw", "must be a 16-bit integer tensor [1, 1, 1, 16]"}};
  std::ifstream in(std::string(TPU_SDK_SOURCE_DIR) + "/tests/ppl/fixtures/misuse_ops.pl");
  const std::vector<std::string> lines = [&] {
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);) all.push_back(line);
    return all;
  }();
  const uint64_t gout = upload(std::vector<float>(32, -5.0f));
  for (int which = 0; which < int(std::size(misuses)); ++which) {
    int line = 0;
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find(misuses[which].call) != std::string::npos) line = int(i) + 1;
    ASSERT_GT(line, 0) << misuses[which].call;
    EXPECT_EQ(misuse_op(gout, which), -1) << misuses[which].call;
    EXPECT_CONTAINS(cmodel_last_error(), misuses[which].name);
    EXPECT_CONTAINS(cmodel_last_error(), misuses[which].says);
    EXPECT_CONTAINS(cmodel_last_error(), "misuse_ops.pl:" + std::to_string(line));
    EXPECT_EQ(download<float>(gout, 32), std::vector<float>(32, -5.0f)) << "a refused kernel ran: " << which;
  }
  EXPECT_EQ(misuse_op(gout, int(std::size(misuses))), 0) << cmodel_last_error();  // no misuse: the store runs
  EXPECT_EQ(download<float>(gout, 32), std::vector<float>(32, 1.0f));
}

// Three operands of one fadd, 1 KiB per lane each: packed they all sit in
// bank 0 (one command with a conflict); placed bank first, in banks 0, 1, 2.
TEST_P(PplOps, PlacementKeepsOneOperationsOperandsInDifferentBanks) {
  const int W = 256, length = GetParam().lanes * W;
  const std::vector<float> x = ramp(length, 0.5f, -3.0f);
  const uint64_t gx = upload(x), gout = upload(std::vector<float>(length));
  for (const bool pack : {false, true}) {
    ASSERT_EQ(bank_spread(gout, gx, W, pack), 0) << cmodel_last_error();
    EXPECT_EQ(last_stats()["bdc_bank_conflicts"].get<int>(), pack ? 1 : 0) << (pack ? "packed" : "bank first");
    const std::vector<float> out = download<float>(gout, length);
    for (int i = 0; i < length; ++i) ASSERT_EQ(out[i], 2 * x[i]) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Chips, PplOps, ::testing::ValuesIn(kChips),
                         [](const ::testing::TestParamInfo<Chip> &info) { return std::string(info.param.name); });

}  // namespace
