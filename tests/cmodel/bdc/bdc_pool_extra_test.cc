// bdc_pool_extra_test: the pooling forms of tier-3 spec §4 beyond
// fp_max_pool2d / fp_avg_pool2d (bdc_pool_test): tpu_bdc_fp_min_pool2d,
// fp_ins_avg_pool2d, fp_avg_pool2d_ex, int8_max_pool2d, int8_min_pool2d,
// int8_avg_pool2d, int8_ins_avg_pool2d, int_max_pool2d, int_min_pool2d, on
// both chips.
//
// The reference is written here from the spec: the window geometry of §3.1
// (padding, inserted zeros, dilation, stride), IEEE minimum for floats,
// exact integers with the rounding right shift of §1.4 (RM_HALF_UP, by
// floor division) for the integer average, compared bit for bit over the
// whole local memory. Worked example §8.5 and every check are exact cases.
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

enum Fn { fp_min, fp_ins_avg, fp_avg_ex, int8_max, int8_min, int8_avg, int8_ins_avg, int_max, int_min, fn_count };
const char *const fn_names[] = {"fp_min_pool2d",   "fp_ins_avg_pool2d",   "fp_avg_pool2d_ex",
                                "int8_max_pool2d", "int8_min_pool2d",     "int8_avg_pool2d",
                                "int8_ins_avg_pool2d", "int_max_pool2d", "int_min_pool2d"};

bool is_float_fn(int fn) { return fn <= fp_avg_ex; }
bool is_avg(int fn) { return fn == fp_ins_avg || fn == fp_avg_ex || fn == int8_avg || fn == int8_ins_avg; }
bool has_ins(int fn) { return fn == fp_ins_avg || fn == fp_avg_ex || fn == int8_ins_avg; }
bool is_min(int fn) { return fn == fp_min || fn == int8_min || fn == int_min; }

struct Call {
  int fn;
  local_addr_t out, in;
  dim4 shape;
  dim2 kernel, stride, dilation, ins;
  padding_t pad;
  data_type_t in_dt, out_dt;  // out_dt: fp_avg_ex and the int avg forms
  scalar_t value;             // pad_val or scale
  unsigned char scale, rshift;
};

void pool_kernel(const void *arg) {
  const auto &k = *static_cast<const Call *>(arg);
  const dim4 *s = &k.shape;
  const dim2 *kr = &k.kernel, *st = &k.stride, *d = &k.dilation, *ins = &k.ins;
  const padding_t *p = &k.pad;
  switch (k.fn) {
    case fp_min: tpu_bdc_fp_min_pool2d(k.out, k.in, s, kr, p, st, d, k.in_dt, k.value); break;
    case fp_ins_avg: tpu_bdc_fp_ins_avg_pool2d(k.out, k.in, s, kr, p, st, d, ins, k.in_dt, k.value); break;
    case fp_avg_ex: tpu_bdc_fp_avg_pool2d_ex(k.out, k.in, s, kr, p, st, d, ins, k.in_dt, k.out_dt, k.value); break;
    case int8_max: tpu_bdc_int8_max_pool2d(k.out, k.in, s, kr, p, st, d, k.in_dt, k.value); break;
    case int8_min: tpu_bdc_int8_min_pool2d(k.out, k.in, s, kr, p, st, d, k.in_dt, k.value); break;
    case int8_avg: tpu_bdc_int8_avg_pool2d(k.out, k.in, s, kr, p, st, d, k.out_dt, k.in_dt, k.scale, k.rshift); break;
    case int8_ins_avg:
      tpu_bdc_int8_ins_avg_pool2d(k.out, k.in, s, kr, p, st, ins, d, k.out_dt, k.in_dt, k.scale, k.rshift);
      break;
    case int_max: tpu_bdc_int_max_pool2d(k.out, k.in, s, kr, p, st, d, k.in_dt, k.value); break;
    case int_min: tpu_bdc_int_min_pool2d(k.out, k.in, s, kr, p, st, d, k.in_dt, k.value); break;
  }
}

// ---- the reference ---------------------------------------------------------------------------

// §3.1 along one axis: the inserted input has extent (in - 1)(ins + 1) + 1.
int out_extent(int in, int ins, int lo, int hi, int kernel, int stride, int dilation) {
  const int padded = (in - 1) * (ins + 1) + 1 + lo + hi, span = dilation * (kernel - 1) + 1;
  return padded >= span ? (padded - span) / stride + 1 : 0;
}

enum class Tap { input, inserted, padding };
Tap locate(int out, int tap, int in, int ins, int lo, int stride, int dilation, int &index) {
  const int u = out * stride + tap * dilation - lo;
  if (u < 0 || u >= (in - 1) * (ins + 1) + 1) return Tap::padding;
  if (u % (ins + 1) != 0) return Tap::inserted;
  index = u / (ins + 1);
  return Tap::input;
}

// IEEE 754-2019 minimum of two encodings: the first NaN (quieted) wins, -0
// beats +0.
uint32_t minimum(data_type_t t, uint32_t a, uint32_t b) {
  const float x = decode(t, a), y = decode(t, b);
  if (std::isnan(x)) return a | quiet_bit(t);
  if (std::isnan(y)) return b | quiet_bit(t);
  if (x < y) return a;
  if (y < x) return b;
  return std::signbit(x) ? a : b;
}

// R(x, k, RM_HALF_UP) of §1.4: floor(x / 2^k) plus one when the remainder
// is at least half.
int64_t half_up_shift(int64_t x, int k) {
  if (k == 0) return x;
  k = std::min(k, 63);
  const __int128 p = __int128(1) << k;
  __int128 q = x / p;
  if (q * p > x) q -= 1;
  return int64_t(q + (x - q * p >= p / 2 ? 1 : 0));
}

data_type_t int_dtype(int bytes, bool is_signed) {
  if (bytes == 1) return is_signed ? DT_INT8 : DT_UINT8;
  if (bytes == 2) return is_signed ? DT_INT16 : DT_UINT16;
  return is_signed ? DT_INT32 : DT_UINT32;
}

// The dtype the output is written in: the input's, fp_avg_ex's out_dtype,
// or for the integer average out_dtype's width with the input's sign.
data_type_t written_dtype(const Call &k) {
  if (k.fn == fp_avg_ex) return k.out_dt;
  if (k.fn == int8_avg || k.fn == int8_ins_avg) return int_dtype(esize(k.out_dt), is_signed_int_dtype(k.in_dt));
  return k.in_dt;
}

uint32_t reference(const Chip &chip, const Call &k, const Tensor &in, int n, int c, int y, int x) {
  const data_type_t t = k.in_dt;
  const uint32_t value_bits = k.value.u32 & dtype_mask(t);
  bool any = false;
  uint32_t best = 0;
  float sum = 0;
  int64_t acc = 0, extreme = 0;
  const int64_t pad = int_value(t, k.value.u32 & 0xff);  // the integer forms: the low byte
  for (int i = 0; i < k.kernel.h; ++i)
    for (int j = 0; j < k.kernel.w; ++j) {
      int r = 0, col = 0;
      const Tap tr = locate(y, i, k.shape.h, k.ins.h, k.pad.top, k.stride.h, k.dilation.h, r);
      const Tap tc = locate(x, j, k.shape.w, k.ins.w, k.pad.left, k.stride.w, k.dilation.w, col);
      const bool padding = tr == Tap::padding || tc == Tap::padding;
      const bool inside = tr == Tap::input && tc == Tap::input;
      if (is_avg(k.fn)) {
        if (!inside) continue;  // padding and inserted zeros add nothing
        if (is_float_fn(k.fn)) {
          volatile float p = decode(t, get_bits(chip, in, n, c, r, col)) * decode(t, value_bits);
          sum = any ? sum + p : p;
        } else {
          acc += int_value(t, get_bits(chip, in, n, c, r, col)) * k.scale;
        }
        any = true;
      } else if (is_float_fn(k.fn)) {
        const uint32_t v = inside ? get_bits(chip, in, n, c, r, col) : value_bits;
        best = any ? minimum(t, best, v) : v;
        any = true;
      } else if (padding || inside) {
        const int64_t v = inside ? int_value(t, get_bits(chip, in, n, c, r, col)) : pad;
        extreme = !any ? v : is_min(k.fn) ? std::min(extreme, v) : std::max(extreme, v);
        any = true;
      }
    }
  const data_type_t out = written_dtype(k);
  if (k.fn == fp_min) return minimum(t, best, best);
  if (is_float_fn(k.fn)) return encode(out, any ? sum : 0.0f);
  if (!is_avg(k.fn)) return uint32_t(extreme) & dtype_mask(out);
  const int64_t v = std::clamp(half_up_shift(acc, k.rshift), local_model::int_min(out), local_model::int_max(out));
  return uint32_t(v) & dtype_mask(out);
}

class BdcPoolExtra : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  Chip chip;
};

const data_type_t float_types[] = {DT_FP32, DT_FP16, DT_BFP16};
const data_type_t int_outputs[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};

std::string describe_call(const Call &k) {
  return std::string(fn_names[k.fn]) + " " + dtype_label(k.in_dt) + "->" + dtype_label(written_dtype(k)) +
         " input " + describe(k.shape) + " kernel " + std::to_string(k.kernel.h) + "x" + std::to_string(k.kernel.w) +
         " stride " + std::to_string(k.stride.h) + "x" + std::to_string(k.stride.w) + " dilation " +
         std::to_string(k.dilation.h) + "x" + std::to_string(k.dilation.w) + " ins " + std::to_string(k.ins.h) + "x" +
         std::to_string(k.ins.w) + " pad " + std::to_string(k.pad.top) + "," + std::to_string(k.pad.bottom) + "," +
         std::to_string(k.pad.left) + "," + std::to_string(k.pad.right) + " scale " + std::to_string(k.scale) +
         " rshift " + std::to_string(k.rshift);
}

// Every function, every dtype combination it takes, channels past one row
// of NPUs on a start NPU != 0, strides, dilations, paddings, insertions,
// output overlapping the input: the whole local memory is what the
// reference gives.
TEST_P(BdcPoolExtra, RandomGeometriesMatchTheReference) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  int ran = 0;
  for (int iter = 0; iter < test::rounds(40 * fn_count); ++iter) {
    Call k{};
    k.fn = iter % fn_count;
    if (is_float_fn(k.fn)) {
      k.in_dt = float_types[seeded.uniform(0, 2)];
      k.out_dt = k.fn == fp_avg_ex && seeded.uniform(0, 1) ? DT_FP32 : k.in_dt;
    } else {
      k.in_dt = seeded.uniform(0, 1) ? DT_INT8 : DT_UINT8;
      k.out_dt = is_avg(k.fn) ? int_outputs[seeded.uniform(0, 5)] : k.in_dt;
    }
    k.shape = {seeded.uniform(1, 2), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 8), seeded.uniform(1, 11)};
    k.kernel = {seeded.uniform(1, 4), seeded.uniform(1, 4)};
    k.stride = {seeded.uniform(1, 3), seeded.uniform(1, 3)};
    k.dilation = {seeded.uniform(0, 3) ? 1 : 2, seeded.uniform(0, 3) ? 1 : 2};
    k.ins = has_ins(k.fn) ? dim2{seeded.uniform(0, 2), seeded.uniform(0, 2)} : dim2{0, 0};
    k.pad = {seeded.uniform(0, 2), seeded.uniform(0, 2), seeded.uniform(0, 2), seeded.uniform(0, 2)};
    const int oh = out_extent(k.shape.h, k.ins.h, k.pad.top, k.pad.bottom, k.kernel.h, k.stride.h, k.dilation.h);
    const int ow = out_extent(k.shape.w, k.ins.w, k.pad.left, k.pad.right, k.kernel.w, k.stride.w, k.dilation.w);
    if (oh < 1 || ow < 1) continue;
    const dim4 out_shape = {k.shape.n, k.shape.c, oh, ow};
    const int npu = seeded.uniform(1, chip.npu - 1);
    const bool overlap = seeded.uniform(0, 3) == 0;
    const uint32_t half = chip.lmem / 2 / 64 * 64;
    const Tensor in = aligned(chip, npu, 0, k.shape, k.in_dt);
    const Tensor out = aligned(chip, npu, overlap ? 0 : half, out_shape, written_dtype(k));
    if (aligned_bytes(chip, npu, k.shape, k.in_dt) > half || aligned_bytes(chip, npu, out_shape, written_dtype(k)) > half)
      continue;
    k.in = in.addr;
    k.out = out.addr;
    k.value = {};
    if (is_float_fn(k.fn)) {
      const int pick = seeded.uniform(0, 3);
      const float v = k.fn == fp_min ? (pick == 0 ? INFINITY : pick == 1 ? 0.0f : pick == 2 ? -0.0f : 5.5f)
                                     : (pick == 0 ? 1.0f : pick == 1 ? 0.25f : -0.37f);
      k.value.u32 = encode(k.in_dt, v);
    } else {
      k.value.u32 = uint32_t(rng());  // only the low byte counts
      k.scale = (unsigned char)(seeded.uniform(0, 2) == 0 ? 1 : seeded.uniform(0, 255));
      k.rshift = (unsigned char)(seeded.uniform(0, 2) == 0 ? 0 : seeded.uniform(1, 20));
    }
    for_each_index(k.shape, [&](int n, int c, int h, int w) {
      uint32_t v = is_float_fn(k.fn) ? random_float_bits(rng, k.in_dt) : uint32_t(rng()) & dtype_mask(k.in_dt);
      if (k.fn == fp_min && seeded.uniform(0, 199) == 0)
        v = k.in_dt == DT_FP32 ? 0x7f800001u : k.in_dt == DT_FP16 ? 0x7c01u : 0x7f81u;  // signalling NaN
      set_bits(chip, in, n, c, h, w, v);
    });
    // The reference reads the input before the (possibly overlapping) output is written.
    std::vector<uint32_t> results;
    for_each_index(out_shape,
                   [&](int n, int c, int y, int x) { results.push_back(reference(chip, k, in, n, c, y, x)); });
    std::vector<uint8_t> expected = snapshot(chip);
    size_t i = 0;
    for_each_index(out_shape, [&](int n, int c, int y, int x) { put(expected, chip, out, n, c, y, x, results[i++]); });
    ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << describe_call(k) << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return describe_call(k) + " NPU " + std::to_string(npu) + (overlap ? " overlapping" : "") + " iteration " +
             std::to_string(iter);
    });
    ++ran;
  }
  EXPECT_GT(ran, test::rounds(40 * fn_count) / 2);  // at least half of the rounds ran
}

Call small_call(const Chip &chip, int fn, data_type_t in_dt, data_type_t out_dt, int h, int w) {
  Call k{};
  k.fn = fn;
  k.in_dt = in_dt;
  k.out_dt = out_dt;
  k.shape = {1, 1, h, w};
  k.kernel = {h, w};
  k.stride = k.dilation = {1, 1};
  k.in = 0;
  k.out = chip.lmem / 2;
  k.scale = 1;
  return k;
}

// Tier-3 §8 example 5: UINT8 window 10, 20, 30, 41, scale 1, rshift 2,
// output UINT8: 101 -> R(101, 2) = 25 (101 / 4 = 25.25). torch-tpu's exact
// window sum: scale 1, rshift 0, UINT8 -> UINT16.
TEST_P(BdcPoolExtra, WorkedExampleInt8Average) {
  Call k = small_call(chip, int8_avg, DT_UINT8, DT_UINT8, 2, 2);
  k.rshift = 2;
  const Tensor in = aligned(chip, 0, 0, k.shape, DT_UINT8);
  const uint8_t v[4] = {10, 20, 30, 41};
  for (int i = 0; i < 4; ++i) set<uint8_t>(chip, in, 0, 0, i / 2, i % 2, v[i]);
  ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get<uint8_t>(chip, aligned(chip, 0, k.out, {1, 1, 1, 1}, DT_UINT8), 0, 0, 0, 0), 25);
  // 102 / 4 = 25.5 rounds half up to 26.
  set<uint8_t>(chip, in, 0, 0, 1, 1, 42);
  ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get<uint8_t>(chip, aligned(chip, 0, k.out, {1, 1, 1, 1}, DT_UINT8), 0, 0, 0, 0), 26);

  Call sum = small_call(chip, int8_avg, DT_UINT8, DT_UINT16, 4, 8);
  const Tensor big = aligned(chip, 0, 0, sum.shape, DT_UINT8);
  for_each_index(sum.shape, [&](int n, int c, int h, int w) { set<uint8_t>(chip, big, n, c, h, w, 255); });
  ASSERT_EQ(cmodel_run(pool_kernel, &sum), 0) << cmodel_last_error();
  EXPECT_EQ(get<uint16_t>(chip, aligned(chip, 0, sum.out, {1, 1, 1, 1}, DT_UINT16), 0, 0, 0, 0), 32 * 255);
}

// By hand: inserted zeros are skipped by the average and the window of a
// 1 x 2 input with ins 1 and kernel 1 x 3 covers x0, (inserted), x1.
TEST_P(BdcPoolExtra, InsertedPositionsAddNothing) {
  Call k = small_call(chip, int8_ins_avg, DT_INT8, DT_INT16, 1, 2);
  k.kernel = {1, 3};
  k.ins = {0, 1};
  k.scale = 3;
  const Tensor in = aligned(chip, 0, 0, k.shape, DT_INT8);
  set<int8_t>(chip, in, 0, 0, 0, 0, -100);
  set<int8_t>(chip, in, 0, 0, 0, 1, -120);
  ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get<int16_t>(chip, aligned(chip, 0, k.out, {1, 1, 1, 1}, DT_INT16), 0, 0, 0, 0), -660);
  // The same window through fp_ins_avg_pool2d with scale 0.5.
  Call f = small_call(chip, fp_ins_avg, DT_FP32, DT_FP32, 1, 2);
  f.kernel = {1, 3};
  f.ins = {0, 1};
  f.value.f32 = 0.5f;
  const Tensor fin = aligned(chip, 0, 0, f.shape, DT_FP32);
  set<float>(chip, fin, 0, 0, 0, 0, 3.0f);
  set<float>(chip, fin, 0, 0, 0, 1, 5.0f);
  ASSERT_EQ(cmodel_run(pool_kernel, &f), 0) << cmodel_last_error();
  EXPECT_EQ(get<float>(chip, aligned(chip, 0, f.out, {1, 1, 1, 1}, DT_FP32), 0, 0, 0, 0), 4.0f);
}

// fp_min: a NaN wins (quieted), -0 beats +0.
TEST_P(BdcPoolExtra, FpMinPropagatesNaNAndPrefersNegativeZero) {
  Call k = small_call(chip, fp_min, DT_BFP16, DT_BFP16, 1, 3);
  k.shape.c = 2;
  k.value.u32 = encode(DT_BFP16, INFINITY);
  const Tensor in = aligned(chip, 0, 0, k.shape, DT_BFP16);
  const uint16_t c0[] = {0x3f80, 0x7f81, 0xc000}, c1[] = {0x0000, 0x8000, 0x0000};
  for (int w = 0; w < 3; ++w) {
    set<uint16_t>(chip, in, 0, 0, 0, w, c0[w]);
    set<uint16_t>(chip, in, 0, 1, 0, w, c1[w]);
  }
  ASSERT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
  const Tensor out = aligned(chip, 0, k.out, {1, 2, 1, 1}, DT_BFP16);
  EXPECT_EQ(get<uint16_t>(chip, out, 0, 0, 0, 0), 0x7fc1);
  EXPECT_EQ(get<uint16_t>(chip, out, 0, 1, 0, 0), 0x8000);
}

// Cost: the pool factor x kh x kw per EU pass of the output, as the float
// forms; every call is one command.
TEST_P(BdcPoolExtra, CostGrowsWithTheKernelAndCommandsAreCounted) {
  auto cycles = [&](int kernel) {
    Call k = small_call(chip, int8_max, DT_INT8, DT_INT8, 16, 16);
    k.shape.c = chip.npu;
    k.kernel = {kernel, kernel};
    EXPECT_EQ(cmodel_run(pool_kernel, &k), 0) << cmodel_last_error();
    EXPECT_EQ(run_stats().at("commands").at("tpu_bdc_int8_max_pool2d").get<int>(), 1);
    return bdc_cycles();
  };
  EXPECT_LT(cycles(2), cycles(4));
}

// ---- checks ----------------------------------------------------------------------------------

TEST_P(BdcPoolExtra, ChecksNameTheFunctionTheValueAndTheRule) {
  struct Bad {
    Call k;
    std::string message;
  };
  std::vector<Bad> cases;
  auto base = [&](int fn) {
    const bool f = is_float_fn(fn);
    Call k = small_call(chip, fn, f ? DT_FP32 : DT_INT8, f ? DT_FP32 : DT_INT16, 6, 6);
    k.kernel = {2, 2};
    return k;
  };
  {
    Call k = base(int8_max);
    k.in_dt = DT_INT16;
    cases.push_back({k, "tpu_bdc_int8_max_pool2d: dtype DT_INT16 is not allowed here; expected one of DT_INT8, DT_UINT8"});
  }
  {
    Call k = base(int8_avg);
    k.in_dt = DT_FP16;
    cases.push_back(
        {k, "tpu_bdc_int8_avg_pool2d: input_dtype DT_FP16 is not allowed here; expected one of DT_INT8, DT_UINT8"});
  }
  {
    Call k = base(int8_avg);
    k.out_dt = DT_FP32;
    cases.push_back({k, "tpu_bdc_int8_avg_pool2d: output_dtype DT_FP32 is not allowed here"});
  }
  {
    Call k = base(int8_ins_avg);
    k.rshift = 129;
    cases.push_back({k, "tpu_bdc_int8_ins_avg_pool2d: rshift = 129: it must be in [0, 128]"});
  }
  {
    Call k = base(int8_ins_avg);
    k.ins = {8, 0};
    cases.push_back({k, "tpu_bdc_int8_ins_avg_pool2d: ins (h, w) = (8, 0): each must be in [0, 7]"});
  }
  {
    Call k = base(fp_ins_avg);
    k.ins = {0, -1};
    cases.push_back({k, "tpu_bdc_fp_ins_avg_pool2d: ins (h, w) = (0, -1): each must be in [0, 7]"});
  }
  {
    Call k = base(fp_avg_ex);
    k.in_dt = DT_FP16;
    k.out_dt = DT_BFP16;
    cases.push_back({k, "tpu_bdc_fp_avg_pool2d_ex: out_dtype DT_BFP16 is not allowed here; expected one of DT_FP16, "
                        "DT_FP32"});
  }
  {
    Call k = base(fp_avg_ex);
    k.in_dt = DT_INT8;
    k.out_dt = DT_FP32;
    cases.push_back({k, "tpu_bdc_fp_avg_pool2d_ex: in_dtype DT_INT8 is not allowed here"});
  }
  {
    Call k = base(fp_min);
    k.in_dt = DT_UINT8;
    cases.push_back({k, "tpu_bdc_fp_min_pool2d: dtype DT_UINT8 is not allowed here"});
  }
  {
    Call k = base(int_max);
    k.in_dt = DT_INT16;
    cases.push_back({k, "tpu_bdc_int_max_pool2d: dtype DT_INT16 is not allowed here; the pooling command of this "
                        "chip takes 8-bit integers only"});
  }
  {
    Call k = base(int_min);
    k.in_dt = DT_UINT32;
    cases.push_back({k, "tpu_bdc_int_min_pool2d: dtype DT_UINT32 is not allowed here"});
  }
  {
    Call k = base(int8_min);
    k.stride = {16, 1};
    cases.push_back({k, "tpu_bdc_int8_min_pool2d: stride (h, w) = (16, 1): each must be in [1, 15]"});
  }
  {
    Call k = base(int8_max);
    k.dilation = {1, 0};
    cases.push_back({k, "tpu_bdc_int8_max_pool2d: dilation (h, w) = (1, 0): each must be in [1, 15]"});
  }
  {
    Call k = base(int8_avg);
    k.pad = {0, 0, 16, 0};
    cases.push_back(
        {k, "tpu_bdc_int8_avg_pool2d: padding (top, bottom, left, right) = (0, 0, 16, 0): each must be in [0, 15]"});
  }
  {
    Call k = base(int8_avg);
    k.kernel = {7, 1};
    cases.push_back({k, "tpu_bdc_int8_avg_pool2d: the output would have oh = 0"});
  }
  {
    Call k = base(int8_ins_avg);
    k.kernel = {2, 0};
    cases.push_back({k, "tpu_bdc_int8_ins_avg_pool2d: kernel (h, w) = (2, 0): each must be in [1, 65535]"});
  }
  {
    Call k = base(int8_max);
    k.out = chip.lmem + chip.lmem / 2;
    cases.push_back({k, "tpu_bdc_int8_max_pool2d: output starts on NPU 1 but input on NPU 0"});
  }
  {
    Call k = base(int8_min);
    k.in = 4;
    cases.push_back({k, "tpu_bdc_int8_min_pool2d: input local address 0x4 uses the aligned layout"});
  }
  for (const Bad &b : cases) EXPECT_RUN_FAILS_WITH(pool_kernel, &b.k, b.message);
}

void null_ins_kernel(const void *) {
  const dim4 shape{1, 1, 2, 2};
  const dim2 kernel{2, 2}, one{1, 1};
  const padding_t pad{};
  tpu_bdc_int8_ins_avg_pool2d(4096, 0, &shape, &kernel, &pad, &one, nullptr, &one, DT_INT16, DT_INT8, 1, 0);
}

TEST_P(BdcPoolExtra, NullInsStopsTheKernel) {
  EXPECT_RUN_FAILS_WITH(null_ins_kernel, nullptr, "tpu_bdc_int8_ins_avg_pool2d: ins is a null pointer");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcPoolExtra, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
