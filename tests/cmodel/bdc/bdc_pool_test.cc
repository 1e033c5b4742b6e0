// bdc_pool_test: float 2-D pooling (tpu_bdc_fp_max_pool2d,
// tpu_bdc_fp_avg_pool2d, cmodel/bdc/pool.h) against a reference written
// here from the documented semantics, bit for bit over the whole local
// memory: random shapes, kernels, strides, dilations and paddings, fp32 /
// fp16 / bf16, start NPU != 0, both chips, output overlapping the input;
// whole-plane reductions (kernel = (h, w)) as kernels use them for sums and
// means; NaN and signed-zero handling of max; every check with its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;

struct PoolCall {
  bool max;
  local_addr_t out, in;
  dim4 shape;  // input
  dim2 kernel, stride, dilation;
  padding_t pad;
  data_type_t dtype;
  scalar_t value;  // pad_val or scale
};

void pool_kernel(const void *arg) {
  const auto &k = *static_cast<const PoolCall *>(arg);
  if (k.max)
    tpu_bdc_fp_max_pool2d(k.out, k.in, &k.shape, &k.kernel, &k.pad, &k.stride, &k.dilation, k.dtype, k.value);
  else
    tpu_bdc_fp_avg_pool2d(k.out, k.in, &k.shape, &k.kernel, &k.pad, &k.stride, &k.dilation, k.dtype, k.value);
}

int out_extent(int in, int lo, int hi, int kernel, int stride, int dilation) {
  const int span = dilation * (kernel - 1) + 1;
  return in + lo + hi >= span ? (in + lo + hi - span) / stride + 1 : 0;
}

// IEEE 754-2019 maximum of two encodings: the first NaN (quieted) wins, +0
// beats -0.
uint32_t maximum(data_type_t t, uint32_t a, uint32_t b) {
  const float x = decode(t, a), y = decode(t, b);
  if (std::isnan(x)) return a | quiet_bit(t);
  if (std::isnan(y)) return b | quiet_bit(t);
  if (x > y) return a;
  if (y > x) return b;
  return std::signbit(x) ? b : a;
}

// The documented result of output element (n, c, y, x), as an encoding.
uint32_t reference(const Chip &chip, const PoolCall &k, const Tensor &in, int n, int c, int y, int x) {
  const data_type_t t = k.dtype;
  uint32_t value_bits = 0;
  std::memcpy(&value_bits, &k.value, size_t(esize(t)));
  bool any = false;
  uint32_t best = 0;
  float sum = 0;
  for (int i = 0; i < k.kernel.h; ++i)
    for (int j = 0; j < k.kernel.w; ++j) {
      const int r = y * k.stride.h - k.pad.top + i * k.dilation.h;
      const int col = x * k.stride.w - k.pad.left + j * k.dilation.w;
      const bool inside = r >= 0 && r < k.shape.h && col >= 0 && col < k.shape.w;
      if (k.max) {
        const uint32_t v = inside ? get_bits(chip, in, n, c, r, col) : value_bits;
        best = any ? maximum(t, best, v) : v;
        any = true;
      } else if (inside) {
        volatile float p = decode(t, get_bits(chip, in, n, c, r, col)) * decode(t, value_bits);
        sum = any ? sum + p : p;
        any = true;
      }
    }
  if (k.max) return maximum(t, best, best);
  return encode(t, any ? sum : 0.0f);
}

class BdcPool : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  Chip chip;
};

const data_type_t float_types[] = {DT_FP32, DT_FP16, DT_BFP16};

TEST_P(BdcPool, RandomGeometriesMatchTheReference) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  int ran = 0;
  std::vector<uint8_t> expected;
  for (int iter = 0; iter < test::rounds(240); ++iter) {
    PoolCall k{};
    k.max = iter % 2 == 0;
    k.dtype = float_types[seeded.uniform(0, 2)];
    k.shape = {seeded.uniform(1, 2), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 9), seeded.uniform(1, 13)};
    k.kernel = {seeded.uniform(1, 5), seeded.uniform(1, 5)};
    k.stride = {seeded.uniform(1, 3), seeded.uniform(1, 3)};
    k.dilation = {seeded.uniform(0, 3) ? 1 : 2, seeded.uniform(0, 3) ? 1 : 2};
    k.pad = {seeded.uniform(0, 2), seeded.uniform(0, 2), seeded.uniform(0, 2), seeded.uniform(0, 2)};
    const int oh = out_extent(k.shape.h, k.pad.top, k.pad.bottom, k.kernel.h, k.stride.h, k.dilation.h);
    const int ow = out_extent(k.shape.w, k.pad.left, k.pad.right, k.kernel.w, k.stride.w, k.dilation.w);
    if (oh < 1 || ow < 1) continue;
    const dim4 out_shape = {k.shape.n, k.shape.c, oh, ow};
    const int npu = seeded.uniform(1, chip.npu - 1);
    const int mode = seeded.uniform(0, 3);  // 0, 1: apart; 2: same address; 3: output shifted onto the input
    const uint32_t half = chip.lmem / 2 / 64 * 64;
    const Tensor in = aligned(chip, npu, mode == 3 ? 64 * uint32_t(seeded.uniform(0, 4)) : 0, k.shape, k.dtype);
    const Tensor out = aligned(chip, npu, mode >= 2 ? 0 : half, out_shape, k.dtype);
    if (aligned_bytes(chip, npu, k.shape, k.dtype) > half || aligned_bytes(chip, npu, out_shape, k.dtype) > half)
      continue;
    k.in = in.addr;
    k.out = out.addr;
    if (k.max) {
      const int pick = seeded.uniform(0, 3);
      const float pad = pick == 0 ? -INFINITY : pick == 1 ? 0.0f : pick == 2 ? -0.0f : -5.5f;
      k.value.u32 = encode(k.dtype, pad);
    } else {
      const int pick = seeded.uniform(0, 2);
      const float scale = pick == 0 ? 1.0f : pick == 1 ? 1.0f / float(k.kernel.h * k.kernel.w) : -0.37f;
      k.value.u32 = encode(k.dtype, scale);
    }
    for_each_index(k.shape, [&](int n, int c, int h, int w) {
      uint32_t v = random_float_bits(rng, k.dtype);
      if (k.max && seeded.uniform(0, 199) == 0) v = k.dtype == DT_FP32 ? 0x7f800001u : k.dtype == DT_FP16 ? 0x7c01u : 0x7f81u;
      set_bits(chip, in, n, c, h, w, v);
    });
    expected = snapshot(chip);
    for_each_index(out_shape, [&](int n, int c, int y, int x) {
      put(expected, chip, out, n, c, y, x, reference(chip, k, in, n, c, y, x));
    });
    ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return std::string(k.max ? "max" : "avg") + " " + dtype_label(k.dtype) + " input " + describe(k.shape) +
             " kernel " + std::to_string(k.kernel.h) + "x" + std::to_string(k.kernel.w) + " stride " +
             std::to_string(k.stride.h) + "x" + std::to_string(k.stride.w) + " dilation " +
             std::to_string(k.dilation.h) + "x" + std::to_string(k.dilation.w) + " pad " + std::to_string(k.pad.top) +
             "," + std::to_string(k.pad.bottom) + "," + std::to_string(k.pad.left) + "," + std::to_string(k.pad.right) +
             " NPU " + std::to_string(npu) + " mode " + std::to_string(mode) + " iteration " + std::to_string(iter);
    });
    ++ran;
  }
  EXPECT_GT(ran, test::rounds(240) / 2);  // at least half of the rounds ran
}

// The reduction kernels use: kernel (h, w), stride 1, no padding: one value
// per channel, the sum (scale 1), the mean (scale 1 / (h w)) or the maximum.
TEST_P(BdcPool, WholePlaneReductions) {
  test::Seeded seeded;
  for (data_type_t t : float_types)
    for (int op = 0; op < 3; ++op) {
      const dim4 shape = {2, chip.npu + 3, 6, 10};
      const int npu = 3;
      PoolCall k{};
      k.max = op == 2;
      k.dtype = t;
      k.shape = shape;
      k.kernel = {shape.h, shape.w};
      k.stride = {1, 1};
      k.dilation = {1, 1};
      const Tensor in = aligned(chip, npu, 0, shape, t), out = aligned(chip, npu, 32768, {2, shape.c, 1, 1}, t);
      k.in = in.addr;
      k.out = out.addr;
      k.value.u32 = encode(t, op == 0 ? 1.0f : op == 1 ? 1.0f / 60 : -INFINITY);
      // Small integers: sums are exact in every dtype (bf16 up to 256).
      std::vector<int> sums(size_t(2 * shape.c), 0), maxima(size_t(2 * shape.c), -1000);
      for_each_index(shape, [&](int n, int c, int h, int w) {
        const int v = seeded.uniform(-2, 5);
        set_bits(chip, in, n, c, h, w, encode(t, float(v)));
        sums[size_t(n * shape.c + c)] += v;
        maxima[size_t(n * shape.c + c)] = std::max(maxima[size_t(n * shape.c + c)], v);
      });
      ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
      for (int n = 0; n < 2; ++n)
        for (int c = 0; c < shape.c; ++c) {
          const float got = decode(t, get_bits(chip, out, n, c, 0, 0));
          const int i = n * shape.c + c;
          if (op == 0) {
            EXPECT_EQ(got, float(sums[size_t(i)])) << dtype_label(t) << " sum channel " << c;
          } else if (op == 1) {
            EXPECT_NEAR(got, sums[size_t(i)] / 60.0, t == DT_FP32 ? 1e-5 : 0.05) << dtype_label(t);
          } else {
            EXPECT_EQ(got, float(maxima[size_t(i)])) << dtype_label(t) << " max channel " << c;
          }
        }
    }
}

// A small case written out by hand: 1 x 4 x 4 input, 3 x 3 kernel, stride
// 2, padding 1, dilation 1 -> 2 x 2 output.
TEST_P(BdcPool, KnownSmallCase) {
  const dim4 shape = {1, 1, 4, 4};
  PoolCall k{};
  k.dtype = DT_FP32;
  k.shape = shape;
  k.kernel = {3, 3};
  k.stride = {2, 2};
  k.dilation = {1, 1};
  k.pad = {1, 1, 1, 1};
  const Tensor in = aligned(chip, 1, 0, shape, DT_FP32), out = aligned(chip, 1, 4096, {1, 1, 2, 2}, DT_FP32);
  k.in = in.addr;
  k.out = out.addr;
  for (int h = 0; h < 4; ++h)
    for (int w = 0; w < 4; ++w) set<float>(chip, in, 0, 0, h, w, float(4 * h + w));  // 0 .. 15
  k.max = true;
  k.value.f32 = 100;  // the padding wins every window that reaches it: all but (1, 1)
  ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
  const float padded_want[2][2] = {{100, 100}, {100, 15}};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) EXPECT_EQ(get<float>(chip, out, 0, 0, y, x), padded_want[y][x]);
  k.value.f32 = -1;
  ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
  const float max_want[2][2] = {{5, 7}, {13, 15}};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) EXPECT_EQ(get<float>(chip, out, 0, 0, y, x), max_want[y][x]);
  k.max = false;
  k.value.f32 = 1;  // padding adds nothing
  ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
  const float sum_want[2][2] = {{0 + 1 + 4 + 5, 1 + 2 + 3 + 5 + 6 + 7}, {4 + 5 + 8 + 9 + 12 + 13, 5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15}};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) EXPECT_EQ(get<float>(chip, out, 0, 0, y, x), sum_want[y][x]);
}

TEST_P(BdcPool, MaxPropagatesNaNAndPrefersPositiveZero) {
  const dim4 shape = {1, 2, 1, 3};
  PoolCall k{};
  k.max = true;
  k.dtype = DT_FP16;
  k.shape = shape;
  k.kernel = {1, 3};
  k.stride = {1, 1};
  k.dilation = {1, 1};
  k.value.u32 = encode(DT_FP16, -INFINITY);
  const Tensor in = aligned(chip, 2, 0, shape, DT_FP16), out = aligned(chip, 2, 4096, {1, 2, 1, 1}, DT_FP16);
  k.in = in.addr;
  k.out = out.addr;
  // Channel 0: a signalling NaN among numbers; channel 1: -0, +0, -0.
  const uint16_t c0[] = {0x3c00, 0x7c01, 0x4000}, c1[] = {0x8000, 0x0000, 0x8000};
  for (int w = 0; w < 3; ++w) {
    set<uint16_t>(chip, in, 0, 0, 0, w, c0[w]);
    set<uint16_t>(chip, in, 0, 1, 0, w, c1[w]);
  }
  ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get<uint16_t>(chip, out, 0, 0, 0, 0), 0x7e01);  // quieted
  EXPECT_EQ(get<uint16_t>(chip, out, 0, 1, 0, 0), 0x0000);
}

// The cost grows with the kernel area; commands are counted.
TEST_P(BdcPool, CostGrowsWithTheKernel) {
  const dim4 shape = {1, chip.npu, 16, 16};
  auto cycles = [&](int kernel) {
    PoolCall k{};
    k.dtype = DT_FP32;
    k.shape = shape;
    k.kernel = {kernel, kernel};
    k.stride = {1, 1};
    k.dilation = {1, 1};
    k.in = 0;
    k.out = 65536;
    k.value.f32 = 1;
    EXPECT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
    EXPECT_EQ(run_stats().at("commands").at("tpu_bdc_fp_avg_pool2d").get<int>(), 1);
    return bdc_cycles();
  };
  // Output 15 x 15 vs 13 x 13 elements, but 4 vs 16 kernel elements each.
  EXPECT_LT(cycles(2), cycles(4));
}

// Inside a parallel region, a GDMA load into the pool's input races with
// the pool reading it; a load into another buffer (double buffering) does not.
struct RaceArg {
  global_addr_t global;
  bool same_buffer;
};

void race_kernel(const void *arg) {
  const auto &a = *static_cast<const RaceArg *>(arg);
  const dim4 shape = {1, NPU_NUM, 8, 8};
  const dim2 kernel = {8, 8}, one = {1, 1};
  const padding_t pad = {0, 0, 0, 0};
  scalar_t scale{};
  scale.f32 = 1;
  tpu_gdma_cpy_S2L(0, a.global, &shape, nullptr, nullptr, DT_FP32);
  tpu_parallel_start();
  tpu_gdma_cpy_S2L(a.same_buffer ? 0 : 16384, a.global, &shape, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_avg_pool2d(32768, 0, &shape, &kernel, &pad, &one, &one, DT_FP32, scale);
  tpu_parallel_end();
}

TEST_P(BdcPool, GdmaRacesOnTheInputAreCaught) {
  ASSERT_EQ(cmodel_set_option("hazards", "error"), 0);
  RaceArg a{cmodel_global_alloc(size_t(chip.npu) * 64 * 4), true};
  ASSERT_NE(a.global, 0u);
  EXPECT_RUN_FAILS_WITH(race_kernel, &a, "race inside a parallel region");
  const std::string m = cmodel_last_error();
  EXPECT_NE(m.find("tpu_bdc_fp_avg_pool2d"), std::string::npos) << m;
  EXPECT_NE(m.find("tpu_gdma_cpy_S2L"), std::string::npos) << m;
  a.same_buffer = false;
  EXPECT_EQ(cmodel_run(race_kernel, &a), 0) << cmodel_last_error();
}

// ---- checks ------------------------------------------------------------------------------

struct Bad {
  int which;
};

void bad_kernel(const void *arg) {
  const int which = static_cast<const Bad *>(arg)->which;
  dim4 shape = {1, 4, 6, 6};
  dim2 kernel = {2, 2}, stride = {1, 1}, dilation = {1, 1};
  padding_t pad = {0, 0, 0, 0};
  data_type_t t = DT_FP32;
  local_addr_t out = 8192, in = 0;
  scalar_t v{};
  v.f32 = 1;
  switch (which) {
    case 0: t = DT_INT8; break;
    case 1: kernel.w = 0; break;
    case 2: stride.h = 0; break;
    case 3: dilation.w = -1; break;
    case 4: pad.left = -1; break;
    case 5: kernel = {8, 2}; break;  // taller than the input
    case 6: out = LOCAL_MEM_SIZE + 8192; break;
    case 7: out = 8192 + 4; break;
    case 8: tpu_bdc_fp_avg_pool2d(out, in, &shape, nullptr, &pad, &stride, &dilation, t, v); return;
    case 9: shape.c = 0; break;
    case 10: out = LOCAL_MEM_SIZE - 64; break;  // runs past the end of its NPU
    case 11: kernel = {1, 1}; stride = {1, 1}; shape.w = 65535; shape.h = 1; shape.c = 1; pad.right = 1; break;
    // The 4-bit register fields (tier-3 spec §5): 16 is one past the limit.
    case 12: stride.w = 16; break;
    case 13: dilation.h = 16; break;
    case 14: pad.bottom = 16; break;
    default: break;
  }
  tpu_bdc_fp_max_pool2d(out, in, &shape, &kernel, &pad, &stride, &dilation, t, v);
}

TEST_P(BdcPool, ChecksNameTheFunctionAndTheValue) {
  Bad b{0};
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "tpu_bdc_fp_max_pool2d: dtype DT_INT8 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16");
  b.which = 1;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "tpu_bdc_fp_max_pool2d: kernel (h, w) = (2, 0): each must be in [1, 65535]");
  b.which = 2;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "stride (h, w) = (0, 1): each must be in [1, 15]");
  b.which = 3;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "dilation (h, w) = (1, -1): each must be in [1, 15]");
  b.which = 4;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "padding (top, bottom, left, right) = (0, 0, -1, 0): each must be in [0, 15]");
  b.which = 5;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b,
                        "the output would have oh = 0: the padded input h = 6 + 0 + 0 = 6 and the dilated kernel "
                        "spans 8 with stride 1; oh must be in [1, 65535]");
  b.which = 6;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "tpu_bdc_fp_max_pool2d: output starts on NPU 1 but input on NPU 0");
  b.which = 7;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "output local address 0x2004 uses the aligned layout (NULL stride)");
  b.which = 8;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "tpu_bdc_fp_avg_pool2d: kernel is a null pointer");
  b.which = 9;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "input shape [1, 0, 6, 6]: c = 0; every dim must be in [1, 65535]");
  b.which = 10;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "is outside its");
  b.which = 11;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "the output would have ow = 65536");
  b.which = 12;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "tpu_bdc_fp_max_pool2d: stride (h, w) = (1, 16): each must be in [1, 15]");
  b.which = 13;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b, "tpu_bdc_fp_max_pool2d: dilation (h, w) = (16, 1): each must be in [1, 15]");
  b.which = 14;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &b,
                        "tpu_bdc_fp_max_pool2d: padding (top, bottom, left, right) = (0, 16, 0, 0): each must be in "
                        "[0, 15]");
  // A rejected command leaves memory alone.
  const Chip chip = local_model::chip(GetParam());
  const std::vector<uint8_t> before = snapshot(chip);
  b.which = 5;
  EXPECT_NE(cmodel_run(bad_kernel, &b), 0);
  expect_local_memory(chip, before, [] { return std::string("after a rejected pool"); });
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcPool, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
