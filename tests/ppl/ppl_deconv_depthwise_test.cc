// ppl_deconv_depthwise_test.cc: tiu::fdw_conv and tiu::fdeconv
// (examples/ppl/deconv_depthwise.pl) on both chips against references
// computed here from the definitions in double precision: the depthwise
// convolution as a sum over each channel's window (zero outside the input),
// the transposed convolution as every input element scattered through the
// kernel to y = h s + p d - pad. Values are quarters, so the fp32 results
// are exact and compared for equality.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "deconv_depthwise.h"
#include "ppl_support.h"

namespace {

using namespace ppl_test;

class PplDeconvDepthwise : public ChipTest {};

std::vector<float> quarters(size_t count, int seed) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = float(int((i * 31 + size_t(seed)) % 23) - 11) / 4.0f;
  return v;
}

struct Window {
  int k, stride, pad, dilation;
};

std::vector<double> reference_depthwise(int N, int C, int H, int W, const Window &win, int oh, int ow,
                                        const std::vector<float> &x, const std::vector<float> &w,
                                        const std::vector<float> *bias) {
  std::vector<double> out(size_t(N) * C * oh * ow);
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int y = 0; y < oh; ++y)
        for (int xo = 0; xo < ow; ++xo) {
          double sum = bias ? double((*bias)[size_t(c)]) : 0.0;
          for (int p = 0; p < win.k; ++p)
            for (int q = 0; q < win.k; ++q) {
              const int iy = y * win.stride + p * win.dilation - win.pad,
                        ix = xo * win.stride + q * win.dilation - win.pad;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              sum += double(x[((size_t(n) * C + c) * H + iy) * W + ix]) * w[(size_t(c) * win.k + p) * win.k + q];
            }
          out[((size_t(n) * C + c) * oh + y) * ow + xo] = sum;
        }
  return out;
}

TEST_P(PplDeconvDepthwise, DepthwiseConvolutionMatchesTheDefinition) {
  const int N = 2, C = 40, H = 7, W = 6;  // 40 channels cross bm1688's 32 lanes
  const struct {
    Window win;
    bool bias, handles;
  } cases[] = {{{3, 2, 1, 1}, true, false}, {{3, 1, 2, 2}, false, true}, {{2, 1, 0, 1}, true, true}};
  const std::vector<float> x = quarters(size_t(N) * C * H * W, 3), b = quarters(size_t(C), 5);
  for (const auto &t : cases) {
    const Window &win = t.win;
    const std::vector<float> w = quarters(size_t(C) * win.k * win.k, win.k + win.stride);
    const int span = win.dilation * (win.k - 1) + 1, oh = (H + 2 * win.pad - span) / win.stride + 1,
              ow = (W + 2 * win.pad - span) / win.stride + 1;
    const uint64_t gx = upload(x), gw = upload(w), gb = upload(b),
                   gout = upload(std::vector<float>(size_t(N) * C * oh * ow, -1234.0f));
    ASSERT_EQ(depthwise_f32(gout, gx, gw, gb, N, C, H, W, win.k, win.stride, win.pad, win.dilation, t.bias, t.handles),
              0)
        << cmodel_last_error();
    const std::vector<float> out = download<float>(gout, size_t(N) * C * oh * ow);
    const std::vector<double> want = reference_depthwise(N, C, H, W, win, oh, ow, x, w, t.bias ? &b : nullptr);
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(out[i], want[i]) << "k " << win.k << " stride " << win.stride << " element " << i;
  }
}

// out[n][o][h s + p d - pad][w s + q d - pad] += x[n][i][h][w] w(o, i, p, q)
// (+ bias[o]), positions outside [0, OH) x [0, OW) dropped.
std::vector<double> reference_deconv(int N, int IC, int H, int W, int OC, const Window &win, int oh, int ow,
                                     const std::vector<float> &x, const std::vector<float> &w,
                                     const std::vector<float> *bias) {
  std::vector<double> out(size_t(N) * OC * oh * ow, 0.0);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) {
      for (int i = 0; i < oh * ow; ++i) out[(size_t(n) * OC + o) * oh * ow + i] = bias ? double((*bias)[o]) : 0.0;
      for (int c = 0; c < IC; ++c)
        for (int h = 0; h < H; ++h)
          for (int v = 0; v < W; ++v)
            for (int p = 0; p < win.k; ++p)
              for (int q = 0; q < win.k; ++q) {
                const int y = h * win.stride + p * win.dilation - win.pad,
                          xo = v * win.stride + q * win.dilation - win.pad;
                if (y < 0 || y >= oh || xo < 0 || xo >= ow) continue;
                out[((size_t(n) * OC + o) * oh + y) * ow + xo] +=
                    double(x[((size_t(n) * IC + c) * H + h) * W + v]) *
                    w[((size_t(o) * IC + c) * win.k + p) * win.k + q];
              }
    }
  return out;
}

TEST_P(PplDeconvDepthwise, TransposedConvolutionMatchesTheDefinition) {
  const int N = 2, IC = 3, H = 4, W = 5, OC = 37;
  const struct {
    Window win;
    int pad_end;
    bool bias;
  } cases[] = {{{3, 2, 1, 1}, 0, true}, {{3, 1, 0, 2}, 0, false}, {{2, 3, 1, 1}, 1, true}};
  const std::vector<float> x = quarters(size_t(N) * IC * H * W, 7), b = quarters(size_t(OC), 9);
  for (const auto &t : cases) {
    const Window &win = t.win;
    const std::vector<float> w = quarters(size_t(OC) * IC * win.k * win.k, win.k * 3 + win.stride);
    const int span = win.dilation * (win.k - 1) + 1, oh = (H - 1) * win.stride - win.pad - t.pad_end + span,
              ow = (W - 1) * win.stride - win.pad - t.pad_end + span;
    const uint64_t gx = upload(x), gw = upload(w), gb = upload(b),
                   gout = upload(std::vector<float>(size_t(N) * OC * oh * ow, -1234.0f));
    ASSERT_EQ(deconv_f32(gout, gx, gw, gb, N, IC, H, W, OC, win.k, win.stride, win.pad, t.pad_end, win.dilation, t.bias),
              0)
        << cmodel_last_error();
    const std::vector<float> out = download<float>(gout, size_t(N) * OC * oh * ow);
    // The reference drops what pad_end cuts at the bottom and right: its
    // grid is oh x ow from the top-left `pad` on.
    const std::vector<double> want = reference_deconv(N, IC, H, W, OC, win, oh, ow, x, w, t.bias ? &b : nullptr);
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(out[i], want[i]) << "k " << win.k << " stride " << win.stride << " element " << i;
  }
}

// out[n][o][y][x] = sum over i, p, q of xi[n][i][y + p d - pad][x + q d - pad]
// w(o, i, k - 1 - p, k - 1 - q), xi the input with `ins` zeros between its
// elements (zero outside it).
std::vector<double> reference_inserted(int N, int IC, int H, int W, int OC, int k, int ins, int pad, int dilation,
                                       int oh, int ow, const std::vector<float> &x, const std::vector<float> &w) {
  std::vector<double> out(size_t(N) * OC * oh * ow, 0.0);
  const int step = ins + 1, eh = (H - 1) * step + 1, ew = (W - 1) * step + 1;
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o)
      for (int y = 0; y < oh; ++y)
        for (int xo = 0; xo < ow; ++xo) {
          double sum = 0;
          for (int i = 0; i < IC; ++i)
            for (int p = 0; p < k; ++p)
              for (int q = 0; q < k; ++q) {
                const int u = y + p * dilation - pad, v = xo + q * dilation - pad;
                if (u < 0 || u >= eh || v < 0 || v >= ew || u % step || v % step) continue;
                sum += double(x[((size_t(n) * IC + i) * H + u / step) * W + v / step]) *
                       w[((size_t(o) * IC + i) * k + (k - 1 - p)) * k + (k - 1 - q)];
              }
          out[((size_t(n) * OC + o) * oh + y) * ow + xo] = sum;
        }
  return out;
}

TEST_P(PplDeconvDepthwise, ConvolutionWithInsertionAndARotatedKernelMatchesTheDefinition) {
  const int N = 2, IC = 3, H = 4, W = 5, OC = 37;
  const struct {
    int k, ins, pad, dilation;
  } cases[] = {{3, 1, 1, 1}, {2, 2, 0, 1}, {3, 0, 2, 2}};
  const std::vector<float> x = quarters(size_t(N) * IC * H * W, 13);
  for (const auto &t : cases) {
    const std::vector<float> w = quarters(size_t(OC) * IC * t.k * t.k, t.k + 5 * t.ins);
    const int span = t.dilation * (t.k - 1) + 1, oh = (H - 1) * (t.ins + 1) + 1 + 2 * t.pad - span + 1,
              ow = (W - 1) * (t.ins + 1) + 1 + 2 * t.pad - span + 1;
    const uint64_t gx = upload(x), gw = upload(w), gout = upload(std::vector<float>(size_t(N) * OC * oh * ow, -1234.0f));
    ASSERT_EQ(fconv_inserted_f32(gout, gx, gw, N, IC, H, W, OC, t.k, t.ins, t.pad, t.dilation), 0) << cmodel_last_error();
    const std::vector<float> out = download<float>(gout, size_t(N) * OC * oh * ow);
    const std::vector<double> want = reference_inserted(N, IC, H, W, OC, t.k, t.ins, t.pad, t.dilation, oh, ow, x, w);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], want[i]) << "k " << t.k << " ins " << t.ins << " element " << i;
  }
}

TEST_P(PplDeconvDepthwise, MisusesAreRefusedAtTheirLine) {
  const std::vector<Misuse> misuses = {
      {"// misuse: weight shape", "ppl::tiu::fdw_conv", "weight of shape [1, 4, 1, 9] must be [1, 4, 3, 3]"},
      {"// misuse: deconv padding", "ppl::tiu::fdeconv", "must be in [0, dilation (kernel - 1)] = [0, 2]"},
      {"// misuse: rotate", "ppl::tiu::fdeconv", "rotate = false"},
      {"// misuse: unrotated insertion", "ppl::tiu::fconv", "inserts 1 rows and 1 columns with an unrotated kernel"}};
  const uint64_t gout = upload(std::vector<float>(64, -5.0f));
  expect_refused_at_lines("examples/ppl/deconv_depthwise.pl", misuses,
                          [&](int which) { return conv_family_misuse(gout, which); }, gout, 64, -5.0f);
  EXPECT_EQ(conv_family_misuse(gout, 4), 0) << cmodel_last_error();
  EXPECT_EQ(download<float>(gout, 64), std::vector<float>(64, 1.0f));
}

INSTANTIATE_TEST_SUITE_P(Chips, PplDeconvDepthwise, ::testing::ValuesIn(kChips),
                         [](const ::testing::TestParamInfo<Chip> &info) { return std::string(info.param.name); });

}  // namespace
