// ppl_gathers_test.cc: tiu::gather_w, gather_h, scatter_h and scatter_hw
// (examples/ppl/gathers.pl) on both chips against references computed here
// from the definitions: dst(n, c, h, w) = param(n, c, h, index(n, c, h, w))
// along W, param(n, c, index(n, c, h), w) along H, and the scatters'
// inverses; outside indices filled, clamped or skipped. Elements move bit
// for bit, so results are compared for equality. 40 channels cross bm1688's
// 32 lanes.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gathers.h"
#include "ppl_support.h"

namespace {

using namespace ppl_test;

class PplGathers : public ChipTest {};

std::vector<float> distinct_values(size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = float(i) * 0.25f - 100.0f;
  return v;
}

// Along W: plain (every index inside), filled with -7 and clamped (some
// indices past PW, some negative).
TEST_P(PplGathers, GatherWPicksColumnsFillsAndClamps) {
  const int C = 40, H = 3, PW = 11, W = 7;
  const std::vector<float> param = distinct_values(size_t(C) * H * PW);
  std::vector<int16_t> inside(size_t(C) * H * W), outside(inside.size());
  for (size_t i = 0; i < inside.size(); ++i) {
    inside[i] = int16_t((i * 5 + i / 7) % PW);
    outside[i] = int16_t(int(i % 17) - 3);  // -3 to 13: both sides of [0, PW)
  }
  const uint64_t gp = upload(param), gout = upload(std::vector<float>(inside.size()));
  for (int mode = 0; mode < 3; ++mode) {
    const std::vector<int16_t> &index = mode == 0 ? inside : outside;
    const uint64_t gi = upload(index);
    ASSERT_EQ(gather_w_rows(gout, gp, gi, C, H, PW, W, mode), 0) << cmodel_last_error();
    const std::vector<float> out = download<float>(gout, index.size());
    for (int c = 0; c < C; ++c)
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w) {
          const size_t at = (size_t(c) * H + h) * W + w;
          const int k = index[at];
          const float picked = param[(size_t(c) * H + h) * PW + size_t(std::clamp(k, 0, PW - 1))];
          const float expected = (k >= 0 && k < PW) ? picked : mode == 1 ? -7.0f : picked;
          ASSERT_EQ(out[at], expected) << "mode " << mode << " c " << c << " h " << h << " w " << w;
        }
  }
}

// Along H: plain, filled (rows past PH give -7) and with one channel of
// param repeated in every lane.
TEST_P(PplGathers, GatherHPicksRowsFillsAndReadsARepeatedParam) {
  const int C = 40, PH = 9, H = 5, W = 6;
  std::vector<uint16_t> index(size_t(C) * H);
  for (size_t i = 0; i < index.size(); ++i) index[i] = uint16_t((i * 7) % (PH + 3));  // up to PH + 2
  const uint64_t gout = upload(std::vector<float>(size_t(C) * H * W));
  for (int mode = 0; mode < 3; ++mode) {
    const int channels = mode == 2 ? 1 : C;
    const std::vector<float> param = distinct_values(size_t(channels) * PH * W);
    std::vector<uint16_t> used = index;
    if (mode != 1)
      for (auto &row : used) row = uint16_t(row % PH);  // the plain gather stops at an outside row
    const uint64_t gp = upload(param), gu = upload(used);
    ASSERT_EQ(gather_h_rows(gout, gp, gu, C, PH, H, W, mode), 0) << cmodel_last_error();
    const std::vector<float> out = download<float>(gout, size_t(C) * H * W);
    for (int c = 0; c < C; ++c)
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w) {
          const int row = used[size_t(c) * H + h], source = mode == 2 ? 0 : c;
          const float expected = row < PH ? param[(size_t(source) * PH + row) * W + w] : -7.0f;
          ASSERT_EQ(out[(size_t(c) * H + h) * W + w], expected) << "mode " << mode << " c " << c << " h " << h;
        }
  }
}

// Rows of param to the rows index names; rows past OH skipped, rows no
// index names keep -1. Indices distinct per channel (no two rows collide).
TEST_P(PplGathers, ScatterHWritesRowsWhereTheIndexSays) {
  const int C = 40, H = 4, OH = 6, W = 5;
  const std::vector<float> param = distinct_values(size_t(C) * H * W);
  std::vector<uint16_t> index(size_t(C) * H);
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < H; ++h) index[size_t(c) * H + h] = uint16_t((c + 2 * h) % (OH + 1));  // OH: outside
  const uint64_t gp = upload(param), gi = upload(index), gout = upload(std::vector<float>(size_t(C) * OH * W));
  ASSERT_EQ(scatter_h_rows(gout, gp, gi, C, H, OH, W), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, size_t(C) * OH * W);
  std::vector<float> expected(out.size(), -1.0f);
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < H; ++h) {
      const int row = index[size_t(c) * H + h];
      if (row >= OH) continue;
      for (int w = 0; w < W; ++w) expected[(size_t(c) * OH + row) * W + w] = param[(size_t(c) * H + h) * W + w];
    }
  EXPECT_EQ(out, expected);
}

// param's W elements to the (h, w) pairs, the same for every channel; a
// pair outside the plane is skipped.
TEST_P(PplGathers, ScatterHwWritesElementsAtThePairs) {
  const int C = 40, W = 6, OH = 3, OW = 4;
  const std::vector<float> param = distinct_values(size_t(C) * W);
  const std::vector<uint16_t> pairs = {0, 0, 2, 3, 1, 1, 5, 0 /* outside */, 0, 3, 2, 0};
  const uint64_t gp = upload(param), gi = upload(pairs), gout = upload(std::vector<float>(size_t(C) * OH * OW));
  ASSERT_EQ(scatter_hw_pairs(gout, gp, gi, C, W, OH, OW), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, size_t(C) * OH * OW);
  std::vector<float> expected(out.size(), -1.0f);
  for (int c = 0; c < C; ++c)
    for (int i = 0; i < W; ++i) {
      const int h = pairs[2 * i], w = pairs[2 * i + 1];
      if (h < OH && w < OW) expected[(size_t(c) * OH + h) * OW + w] = param[size_t(c) * W + i];
    }
  EXPECT_EQ(out, expected);
}

// Each misuse refused in the plan pass at its line, naming what was wrong;
// the output keeps its sentinel.
TEST_P(PplGathers, MisusesAreRefusedAtTheirLine) {
  const std::vector<Misuse> misuses = {
      {"// misuse: 32-bit index", "ppl::tiu::gather_w", "index must be an 8- or 16-bit integer tensor"},
      {"// misuse: param", "ppl::tiu::gather_h", "param of shape [1, 4, 1, 16] must be [1, 4, 1, 8]"},
      {"// misuse: scatter index", "ppl::tiu::scatter_h", "index of shape [1, 4, 1, 2] must be [1, 4, 2, 1]"}};
  const uint64_t gout = upload(std::vector<float>(64, -5.0f));
  expect_refused_at_lines("examples/ppl/gathers.pl", misuses, [&](int which) { return gather_misuse(gout, which); },
                          gout, 64, -5.0f);
  EXPECT_EQ(gather_misuse(gout, 3), 0) << cmodel_last_error();
  EXPECT_EQ(download<float>(gout, 64), std::vector<float>(64, 1.0f));
}

INSTANTIATE_TEST_SUITE_P(Chips, PplGathers, ::testing::ValuesIn(kChips),
                         [](const ::testing::TestParamInfo<Chip> &info) { return std::string(info.param.name); });

}  // namespace
