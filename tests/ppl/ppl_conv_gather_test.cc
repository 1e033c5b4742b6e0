// ppl_conv_gather_test.cc: tiu::fconv and tiu::gather_hw
// (examples/ppl/conv_gather.pl) on both chips against references computed
// here in double precision from the definitions (convolution as a sum over
// input channels and the kernel window, zero outside the input; gathers by
// hand-made (h, w) pairs). Every value is a small multiple of 1/4 or 1/16,
// so the fp32 and fp16 results are exact and compared for equality.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conv_gather.h"
#include "ppl_support.h"

namespace {

using namespace ppl_test;

class PplConvGather : public ChipTest {};

struct ConvShape {
  int n, ic, h, w, oc, k, stride, pad_top, pad_left, dilation;
  int oh(int pad_bottom) const { return (h + pad_top + pad_bottom - (dilation * (k - 1) + 1)) / stride + 1; }
  int ow(int pad_right) const { return (w + pad_left + pad_right - (dilation * (k - 1) + 1)) / stride + 1; }
};

// out[n][o][y][x] = Σ_i Σ_p Σ_q in(n, i, y s + p d - pt, x s + q d - pl) w(o, i, p, q),
// zero outside the input; `weight(o, i, p, q)`.
template <typename Weight>
std::vector<double> reference_conv(const ConvShape &s, int oh, int ow, const std::vector<float> &x, Weight weight) {
  std::vector<double> out(size_t(s.n) * s.oc * oh * ow, 0.0);
  for (int n = 0; n < s.n; ++n)
    for (int o = 0; o < s.oc; ++o)
      for (int y = 0; y < oh; ++y)
        for (int xo = 0; xo < ow; ++xo) {
          double sum = 0;
          for (int i = 0; i < s.ic; ++i)
            for (int p = 0; p < s.k; ++p)
              for (int q = 0; q < s.k; ++q) {
                const int iy = y * s.stride + p * s.dilation - s.pad_top, ix = xo * s.stride + q * s.dilation - s.pad_left;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                sum += double(x[((size_t(n) * s.ic + i) * s.h + iy) * s.w + ix]) * weight(o, i, p, q);
              }
          out[((size_t(n) * s.oc + o) * oh + y) * ow + xo] = sum;
        }
  return out;
}

// Quarters in [-3, 3].
std::vector<float> quarters(size_t count, int seed) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = float(int((i * 29 + size_t(seed)) % 25) - 12) / 4.0f;
  return v;
}

TEST_P(PplConvGather, Fp32ConvolutionWithBiasStrideAndPaddingMatchesTheDefinition) {
  // 37 output channels cross bm1688's 32 lanes.
  const ConvShape s{2, 3, 7, 8, 37, 3, 2, 1, 1, 1};
  const int oh = s.oh(1), ow = s.ow(1);
  const std::vector<float> x = quarters(size_t(s.n) * s.ic * s.h * s.w, 1);
  const std::vector<float> w = quarters(size_t(s.oc) * s.ic * s.k * s.k, 7), bias = quarters(size_t(s.oc), 3);
  const uint64_t gout = upload(std::vector<float>(size_t(s.n) * s.oc * oh * ow, -99.0f));
  ASSERT_EQ(conv_bias_f32(gout, upload(x), upload(w), upload(bias), s.n, s.ic, s.h, s.w, s.oc, s.k, s.stride, 1), 0)
      << cmodel_last_error();
  const std::vector<double> want = reference_conv(s, oh, ow, x, [&](int o, int i, int p, int q) {
    return double(w[((size_t(o) * s.ic + i) * s.k + p) * s.k + q]);
  });
  const std::vector<float> got = download<float>(gout, want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    const size_t o = (k / size_t(oh * ow)) % size_t(s.oc);
    ASSERT_EQ(got[k], want[k] + bias[o]) << k;
  }
  // The handle form (conv::param) gives the same bytes.
  const uint64_t gout_h = upload(std::vector<float>(want.size(), -99.0f));
  ASSERT_EQ(conv_bias_f32_handles(gout_h, upload(x), upload(w), upload(bias), s.n, s.ic, s.h, s.w, s.oc, s.k,
                                  s.stride, 1),
            0)
      << cmodel_last_error();
  EXPECT_EQ(download<float>(gout_h, want.size()), got);
}

TEST_P(PplConvGather, Fp16ConvolutionWithDilationAccumulatesIntoFp32) {
  // 20 input channels: one NIC group with filler on bm1684x (nic 32), two
  // on bm1688 (nic 16).
  const ConvShape s{2, 20, 9, 10, 5, 3, 1, 0, 0, 2};
  const int oh = s.oh(0), ow = s.ow(0), nic = GetParam().lanes / 2, groups = (s.ic + nic - 1) / nic;
  const std::vector<float> x = quarters(size_t(s.n) * s.ic * s.h * s.w, 2);
  const std::vector<float> w = quarters(size_t(s.oc) * s.ic * 9, 11), start = quarters(size_t(s.n) * s.oc * oh * ow, 5);
  // The NIC layout: output channel o's row holds, for each group of nic
  // input channels, the 9 taps of each, nic apart; filler slots zero.
  std::vector<uint16_t> packed(size_t(s.oc) * groups * 9 * nic, 0), xh(x.size());
  for (int o = 0; o < s.oc; ++o)
    for (int i = 0; i < s.ic; ++i)
      for (int tap = 0; tap < 9; ++tap)
        packed[size_t(o) * groups * 9 * nic + size_t(i / nic) * 9 * nic + size_t(tap) * nic + size_t(i % nic)] =
            half_bits(w[(size_t(o) * s.ic + i) * 9 + tap]);
  for (size_t k = 0; k < x.size(); ++k) xh[k] = half_bits(x[k]);
  const uint64_t gout = upload(start);
  ASSERT_EQ(conv_accumulate_f16(gout, upload(xh), upload(packed), s.n, s.ic, s.h, s.w, s.oc), 0) << cmodel_last_error();
  const std::vector<double> want = reference_conv(s, oh, ow, x, [&](int o, int i, int p, int q) {
    return double(w[(size_t(o) * s.ic + i) * 9 + size_t(p) * 3 + q]);
  });
  const std::vector<float> got = download<float>(gout, want.size());
  for (size_t k = 0; k < want.size(); ++k) ASSERT_EQ(got[k], want[k] + start[k]) << k;
}

TEST_P(PplConvGather, AConstantKernelSumsTheWindowTimesTheConstant) {
  const ConvShape s{1, 4, 5, 6, 3, 2, 1, 0, 0, 1};
  const std::vector<float> x = quarters(size_t(s.ic) * s.h * s.w, 4);
  const uint64_t gout = upload(std::vector<float>(size_t(s.oc) * s.h * s.w, -99.0f));
  ASSERT_EQ(conv_constant_f32(gout, upload(x), 0.5f, s.n, s.ic, s.h, s.w, s.oc), 0) << cmodel_last_error();
  // Padding only at the bottom and right keeps H and W.
  const std::vector<double> want = reference_conv(s, s.h, s.w, x, [](int, int, int, int) { return 0.5; });
  const std::vector<float> got = download<float>(gout, want.size());
  for (size_t k = 0; k < want.size(); ++k) ASSERT_EQ(got[k], want[k]) << k;
}

struct GatherCase {
  int n = 2, c = 37, ph = 5, pw = 7, w = 11;
};

// Pairs (h, w) for position j of batch b; `outside` puts some past the plane.
std::vector<uint16_t> make_pairs(const GatherCase &g, bool outside) {
  std::vector<uint16_t> pairs(size_t(g.n) * 2 * g.w);
  for (int b = 0; b < g.n; ++b)
    for (int j = 0; j < g.w; ++j) {
      const int extra = outside && j % 3 == 1 ? 3 : 0;
      pairs[(size_t(b) * g.w + j) * 2] = uint16_t((j * 3 + b) % g.ph + extra);
      pairs[(size_t(b) * g.w + j) * 2 + 1] = uint16_t((j * 5 + 2 * b) % g.pw + (j % 3 == 1 ? extra : 0));
    }
  return pairs;
}

TEST_P(PplConvGather, GatherByPairsPlainFilledAndClampedMatchesTheDefinition) {
  const GatherCase g;
  std::vector<float> param(size_t(g.n) * g.c * g.ph * g.pw);
  for (size_t k = 0; k < param.size(); ++k) param[k] = float(k) / 4.0f;
  const uint64_t gparam = upload(param);
  for (const int mode : {0, 1, 2}) {
    const std::vector<uint16_t> pairs = make_pairs(g, mode != 0);
    const uint64_t gout = upload(std::vector<float>(size_t(g.n) * g.c * g.w, -99.0f));
    ASSERT_EQ(gather_pairs(gout, gparam, upload(pairs), g.n, g.c, g.ph, g.pw, g.w, mode, -7.5f), 0)
        << "mode " << mode << ": " << cmodel_last_error();
    const std::vector<float> got = download<float>(gout, size_t(g.n) * g.c * g.w);
    for (int b = 0; b < g.n; ++b)
      for (int ch = 0; ch < g.c; ++ch)
        for (int j = 0; j < g.w; ++j) {
          int h = pairs[(size_t(b) * g.w + j) * 2], w = pairs[(size_t(b) * g.w + j) * 2 + 1];
          double want;
          if (h < g.ph && w < g.pw) {
            want = param[((size_t(b) * g.c + ch) * g.ph + h) * g.pw + w];
          } else if (mode == 1) {
            want = -7.5;
          } else {
            h = std::min(h, g.ph - 1), w = std::min(w, g.pw - 1);
            want = param[((size_t(b) * g.c + ch) * g.ph + h) * g.pw + w];
          }
          ASSERT_EQ(got[(size_t(b) * g.c + ch) * g.w + j], want) << "mode " << mode << " " << b << " " << ch << " " << j;
        }
  }
}

TEST_P(PplConvGather, APairOutsideThePlaneStopsThePlainGatherAtItsPlLine) {
  const GatherCase g;
  const uint64_t gout = upload(std::vector<float>(size_t(g.n) * g.c * g.w, -99.0f));
  const uint64_t gparam = upload(std::vector<float>(size_t(g.n) * g.c * g.ph * g.pw, 1.0f));
  EXPECT_EQ(gather_pairs(gout, gparam, upload(make_pairs(g, true)), g.n, g.c, g.ph, g.pw, g.w, 0, 0.0f), -1);
  const std::string error = cmodel_last_error();
  EXPECT_NE(error.find("tpu_bdc_hw_gather: index pair 1 of batch 0"), std::string::npos) << error;
  EXPECT_NE(error.find("conv_gather.pl:"), std::string::npos) << error;
}

TEST_P(PplConvGather, ThirtyTwoBitPairsGatherInt16Elements) {
  const GatherCase g{1, 9, 4, 6, 8};
  std::vector<int16_t> param(size_t(g.n) * g.c * g.ph * g.pw);
  for (size_t k = 0; k < param.size(); ++k) param[k] = int16_t(int(k) * 37 - 900);
  std::vector<uint32_t> index(size_t(g.w));
  for (int j = 0; j < g.w; ++j) index[size_t(j)] = uint32_t((j * 3) % g.ph) | (uint32_t((j * 5 + 1) % g.pw) << 16);
  const uint64_t gout = upload(std::vector<int16_t>(size_t(g.c) * g.w));
  ASSERT_EQ(gather_pairs_wide(gout, upload(param), upload(index), g.n, g.c, g.ph, g.pw, g.w), 0) << cmodel_last_error();
  const std::vector<int16_t> got = download<int16_t>(gout, size_t(g.c) * g.w);
  for (int ch = 0; ch < g.c; ++ch)
    for (int j = 0; j < g.w; ++j) {
      const int h = (j * 3) % g.ph, w = (j * 5 + 1) % g.pw;
      ASSERT_EQ(got[size_t(ch) * g.w + j], param[(size_t(ch) * g.ph + h) * g.pw + w]) << ch << " " << j;
    }
}

INSTANTIATE_TEST_SUITE_P(Chips, PplConvGather, ::testing::ValuesIn(kChips),
                         [](const ::testing::TestParamInfo<Chip> &info) { return std::string(info.param.name); });

}  // namespace
