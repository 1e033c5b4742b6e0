// bdc_activation_extra_test: tpu_bdc_fp_hsigmoid, tpu_bdc_fp_hswish,
// tpu_bdc_fp_isfinite and tpu_bdc_fp_exponent_part (cmodel/bdc/unary.h).
//
// The reference is written here from the definitions, in long double:
//   hsigmoid(x) = clamp(alpha x + beta, 0, 1), hswish(x) = x relu6(x + 3) / 6,
//   isfinite(x) = x finite ? 1 : 0, exponent_part(x) = ilogb(x) for normal x,
// then rounded to the dtype by the test's own encoder (a search over the
// encodings, ties to even). The documented choices are pinned: NaN in ->
// the same NaN made quiet, hswish(x <= -3) = -0, exponent_part of zeros and
// subnormals = -bias, of infinities and NaN = bias + 1, and what work0
// holds afterwards.
//
// Both chips, fp32 / fp16 / bf16: random shapes whose channel count is not a
// multiple of NPU_NUM, start NPU != 0, in-place calls, inputs rich in
// special values (+-0, subnormals, +-inf, NaNs, -3 and 3 and their
// neighbours, the inputs where alpha x + beta crosses 0 and 1); every fp16
// and bf16 encoding once; the whole local memory compared (only dst and
// work0 may change). Then costs and command counts, recording and replay,
// a race on work0, and every check with its message, the process surviving
// each failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;
using ld = long double;

enum class Fn { hsigmoid, hswish, isfinite, exponent_part, count };

const char *fn_name(Fn f) {
  static const char *names[] = {"hsigmoid", "hswish", "isfinite", "exponent_part"};
  return names[int(f)];
}

const data_type_t float_dtypes[] = {DT_FP32, DT_FP16, DT_BFP16};

// ---- float formats, the test's own -----------------------------------------------------------

struct Format {
  int exp_bits, man_bits;

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  uint32_t sign() const { return 1u << (exp_bits + man_bits); }
  uint32_t inf() const { return ((1u << exp_bits) - 1) << man_bits; }
  uint32_t quiet() const { return 1u << (man_bits - 1); }
  uint32_t one() const { return uint32_t(bias()) << man_bits; }
  uint32_t field(uint32_t b) const { return (b >> man_bits) & ((1u << exp_bits) - 1); }
  bool is_nan(uint32_t b) const { return (b & (sign() - 1)) > inf(); }
  // Magnitude of a finite magnitude encoding k.
  ld magnitude(uint32_t k) const {
    const uint32_t e = k >> man_bits, f = k & ((1u << man_bits) - 1);
    if (e == 0) return ldexpl(ld(f), 1 - bias() - man_bits);
    return ldexpl(ld((1u << man_bits) | f), int(e) - bias() - man_bits);
  }
  ld decode(uint32_t b) const {  // not NaN
    const uint32_t k = b & (sign() - 1);
    const ld m = k == inf() ? HUGE_VALL : magnitude(k);
    return (b & sign()) ? -m : m;
  }
  // x rounded to nearest, ties to even; overflow gives infinity; the sign of
  // zero is kept.
  uint32_t encode(ld x) const {
    const uint32_t s = std::signbit(x) ? sign() : 0;
    const ld m = fabsl(x);
    // Above the largest finite value by half an ulp or more: infinity.
    const ld top = magnitude(inf() - 1), half_ulp = (top - magnitude(inf() - 2)) / 2;
    if (m >= top + half_ulp) return s | inf();
    uint32_t lo = 0, hi = inf() - 1;  // magnitude(lo) <= m
    if (m >= top) return s | hi;
    while (hi - lo > 1) {
      const uint32_t mid = (lo + hi) / 2;
      if (magnitude(mid) <= m)
        lo = mid;
      else
        hi = mid;
    }
    if (magnitude(lo) == m) return s | lo;
    const ld midpoint = (magnitude(lo) + magnitude(lo + 1)) / 2;
    const bool up = m > midpoint || (m == midpoint && (lo & 1) != 0);
    return s | (up ? lo + 1 : lo);
  }
  // An fp32 NaN narrowed to this format: the top of its payload, quiet.
  uint32_t nan_from_fp32(float p) const {
    const uint32_t b = bits_of(p);
    const uint32_t s = (b >> 31) ? sign() : 0;
    return s | inf() | quiet() | ((b & 0x7fffff) >> (23 - man_bits));
  }
};

Format format_of(data_type_t t) {
  if (t == DT_FP16) return {5, 10};
  if (t == DT_BFP16) return {8, 7};
  return {8, 23};
}

// ---- the reference ----------------------------------------------------------------------------

struct Expected {
  uint32_t dst, work;
};

Expected ref_hsigmoid(data_type_t t, uint32_t x, float alpha, float beta) {
  const Format f = format_of(t);
  const uint32_t default_nan = f.inf() | f.quiet();
  if (f.is_nan(x)) return {x | f.quiet(), x | f.quiet()};
  if (std::isnan(alpha)) return {f.nan_from_fp32(alpha), f.nan_from_fp32(alpha)};
  if (std::isnan(beta)) return {f.nan_from_fp32(beta), f.nan_from_fp32(beta)};
  const ld p = ld(alpha) * f.decode(x);  // exact: 24 x 24 bits fit 64
  ld sum = p + ld(beta);
  if (std::isnan(sum)) return {default_nan, default_nan};  // 0 x inf, inf - inf
  if (std::isfinite(sum)) {
    // The part of p + beta that long double dropped (Knuth's TwoSum). The
    // exact sum lies strictly between `sum` and its neighbour on that side;
    // of the two, take the one with an odd last bit (rounding to odd): a
    // 24-bit format's values and midpoints all have even last bits in long
    // double, so the odd one rounds like the exact sum. (Always taking the
    // neighbour is wrong when the neighbour is itself a midpoint: alpha x
    // can be one exactly, and a tiny beta must still break the tie.)
    const ld bv = sum - p;
    const ld lost = (p - (sum - bv)) + (ld(beta) - bv);
    if (lost != 0) {
      int exponent = 0;
      const ld mantissa = frexpl(fabsl(sum), &exponent);  // [0.5, 1): 64 bits after the point
      const bool odd = (static_cast<unsigned long long>(ldexpl(mantissa, 64)) & 1) != 0;
      if (!odd) sum = nextafterl(sum, lost > 0 ? HUGE_VALL : -HUGE_VALL);
    }
  }
  const uint32_t work = f.encode(sum);
  if (sum >= 1) return {f.one(), work};
  if (sum > 0) return {f.encode(sum), work};
  return {0, work};
}

Expected ref_hswish(data_type_t t, uint32_t x) {
  const Format f = format_of(t);
  if (f.is_nan(x)) return {x | f.quiet(), x | f.quiet()};
  const ld v = f.decode(x);
  const ld relu6 = std::min<ld>(std::max<ld>(v + 3, 0), 6);
  const uint32_t work = f.encode(relu6);
  if (v >= 3) return {x, work};
  if (v <= -3) return {f.sign(), work};  // x * 0 / 6 = -0
  if (v == 0) return {x, work};
  if (v + 3 == 3) {
    // |x| <= 2^-63: the exact x (x + 3) / 6 = x/2 + x^2/6 lies strictly
    // between x/2 and the next long double above it (x^2/6 > 0 is below
    // long double's resolution), where no rounding boundary lies.
    return {f.encode(nextafterl(v / 2, HUGE_VALL)), work};
  }
  return {f.encode(v * relu6 / 6), work};
}

Expected ref_isfinite(data_type_t t, uint32_t x) {
  const Format f = format_of(t);
  const bool finite = !f.is_nan(x) && std::isfinite(f.decode(x));
  return {finite ? f.one() : 0, x & f.inf()};
}

int64_t ref_exponent(data_type_t t, uint32_t x) {
  const Format f = format_of(t);
  if (f.is_nan(x)) return f.bias() + 1;
  const ld v = f.decode(x);
  if (std::isinf(v)) return f.bias() + 1;
  if (fabsl(v) < f.magnitude(1u << f.man_bits)) return -f.bias();  // zeros, subnormals
  return ilogbl(v);
}

uint32_t mask_of(data_type_t t) { return esize(t) == 4 ? 0xffffffffu : (1u << (8 * esize(t))) - 1; }

// ---- commands ---------------------------------------------------------------------------------

struct Command {
  Fn fn;
  Tensor dst, src, work;  // work unused by exponent_part
  float alpha = 0, beta = 0;
};

void issue(const Command &k) {
  const dim4 *s = &k.dst.shape;
  switch (k.fn) {
    case Fn::hsigmoid: tpu_bdc_fp_hsigmoid(k.dst.addr, k.src.addr, k.work.addr, s, k.alpha, k.beta, k.dst.dtype); break;
    case Fn::hswish: tpu_bdc_fp_hswish(k.dst.addr, k.src.addr, k.work.addr, s, k.dst.dtype); break;
    case Fn::isfinite: tpu_bdc_fp_isfinite(k.dst.addr, k.src.addr, k.work.addr, s, k.dst.dtype); break;
    case Fn::exponent_part: tpu_bdc_fp_exponent_part(k.dst.addr, k.src.addr, s, k.dst.dtype, k.src.dtype); break;
    case Fn::count: break;
  }
}

void command_kernel(const void *arg) { issue(*static_cast<const Command *>(arg)); }

std::string describe(const Command &k) {
  char b[256];
  std::snprintf(b, sizeof b, "%s dst %s @%#x src %s @%#x work0 @%#x shape %s alpha %.9g beta %.9g", fn_name(k.fn),
                dtype_label(k.dst.dtype).c_str(), k.dst.addr, dtype_label(k.src.dtype).c_str(), k.src.addr,
                k.work.addr, bdc_helpers::describe(k.dst.shape).c_str(), double(k.alpha), double(k.beta));
  return b;
}

// Writes `k`'s expected dst and work0 into `image`, from src as it is now.
void expect_results(const Chip &chip, const Command &k, std::vector<uint8_t> &image) {
  // Everything is read first: dst may be src.
  std::vector<uint32_t> in;
  for_each_index(k.src.shape, [&](int n, int c, int h, int w) { in.push_back(get_bits(chip, k.src, n, c, h, w)); });
  size_t i = 0;
  for_each_index(k.dst.shape, [&](int n, int c, int h, int w) {
    const uint32_t x = in[i++];
    const data_type_t t = k.src.dtype;
    Expected e{};
    switch (k.fn) {
      case Fn::hsigmoid: e = ref_hsigmoid(t, x, k.alpha, k.beta); break;
      case Fn::hswish: e = ref_hswish(t, x); break;
      case Fn::isfinite: e = ref_isfinite(t, x); break;
      case Fn::exponent_part: e.dst = uint32_t(ref_exponent(t, x)) & mask_of(k.dst.dtype); break;
      case Fn::count: break;
    }
    if (k.fn != Fn::exponent_part) put(image, chip, k.work, n, c, h, w, e.work);
    put(image, chip, k.dst, n, c, h, w, e.dst);
  });
}

// ---- inputs -----------------------------------------------------------------------------------

// Random encodings of dtype t, rich in special values: zeros, subnormals,
// infinities, NaNs, the clamp edges of hswish (+-3 and neighbours) and, for
// hsigmoid, the inputs where alpha x + beta crosses 0 and 1 (and neighbours).
template <typename Rng>
uint32_t random_input(Rng &rng, data_type_t t, float alpha, float beta) {
  const Format f = format_of(t);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const uint32_t s = pick(0, 1) ? f.sign() : 0;
  const uint32_t frac_mask = (1u << f.man_bits) - 1;
  auto near = [&](ld v) {  // v rounded to t, moved by up to 2 ulps
    const uint32_t b = f.encode(v);
    if ((b & (f.sign() - 1)) >= f.inf() - 2 || (b & (f.sign() - 1)) < 3) return b;
    return uint32_t(int64_t(b) + pick(-2, 2));
  };
  switch (pick(0, 15)) {
    case 0: return s;                                                                   // +-0
    case 1: return s | f.inf();                                                         // +-inf
    case 2: return s | f.inf() | f.quiet() | (uint32_t(rng()) & (f.quiet() - 1));      // quiet NaN
    case 3: return s | f.inf() | (uint32_t(rng()) % (f.quiet() - 1) + 1);             // signalling NaN
    case 4: return s | (uint32_t(rng()) % frac_mask + 1);                               // subnormal
    case 5: return s | (uint32_t(pick(1, 3)));                                          // the smallest subnormals
    case 6: return near(pick(0, 1) ? 3.0L : -3.0L);
    case 7: return alpha != 0 ? near(-ld(beta) / alpha) : s;                            // alpha x + beta = 0
    case 8: return alpha != 0 ? near((1 - ld(beta)) / alpha) : s;                       // alpha x + beta = 1
    case 9: return s | (f.inf() - 1 - uint32_t(pick(0, 3)));                            // near the largest
    case 10:
    case 11: return uint32_t(rng()) & mask_of(t);                                       // any encoding
    default: return f.encode(ld(std::uniform_real_distribution<double>(-8, 8)(rng)));  // moderate
  }
}

template <typename Rng>
void random_params(Rng &rng, Command &k) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto uni = [&](double lo, double hi) { return float(std::uniform_real_distribution<double>(lo, hi)(rng)); };
  switch (pick(0, 5)) {
    case 0: k.alpha = 1.0f / 6, k.beta = 0.5f; break;  // PyTorch's hardsigmoid
    case 1: k.alpha = 0.2f, k.beta = 0.5f; break;       // ONNX's default
    case 2: k.alpha = uni(-4, 4), k.beta = uni(-2, 3); break;
    case 3: k.alpha = std::ldexp(uni(-1, 1), pick(-40, 40)), k.beta = uni(-1, 2); break;
    case 4: k.alpha = uni(-1, 1), k.beta = std::ldexp(uni(0, 1), -pick(10, 140)); break;  // tiny beta
    default: k.alpha = pick(0, 1) ? 0.0f : uni(-2, 2), k.beta = uni(-0.5, 1.5); break;
  }
}

// ---- fixture ---------------------------------------------------------------------------------

class BdcActivationExtra : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }

  // Fills src with `inputs` (cycled), runs k and compares the whole local
  // memory with the reference.
  void run_and_compare(const Command &k, const std::vector<uint32_t> &inputs, const std::string &what) {
    size_t i = 0;
    for_each_index(k.src.shape, [&](int n, int c, int h, int w) {
      set_bits(chip, k.src, n, c, h, w, inputs[i++ % inputs.size()]);
    });
    std::vector<uint8_t> want = snapshot(chip);
    expect_results(chip, k, want);
    ASSERT_EQ(cmodel_run(command_kernel, &k), 0) << what << ": " << cmodel_last_error();
    expect_local_memory(chip, want, [&] { return what + ": " + describe(k); });
  }

  Chip chip;
};

// ---- random shapes ------------------------------------------------------------------------------

TEST_P(BdcActivationExtra, RandomShapesMatchTheReference) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const uint32_t slot = chip.lmem / 4 / 64 * 64;
  int runs = 0, in_place = 0;
  for (int f = 0; f < int(Fn::count); ++f)
    for (data_type_t t : float_dtypes)
      for (int rep = 0; rep < 8; ++rep) {
        Command k{Fn(f), {}, {}, {}};
        random_params(rng, k);
        data_type_t dst_dtype = t;
        if (k.fn == Fn::exponent_part) {
          dst_dtype = t == DT_FP32 ? DT_INT32 : DT_INT16;  // the integer as wide as the source (SFU-6)
        }
        // Channels not a multiple of NPU_NUM, start NPU != 0.
        const int q = seeded.uniform(0, 2);
        const dim4 shape = {seeded.uniform(1, 3), q * chip.npu + seeded.uniform(1, chip.npu - 1), seeded.uniform(1, 5),
                            seeded.uniform(1, 19)};
        const int npu = seeded.uniform(1, chip.npu - 1);
        std::vector<int> slots = {0, 1, 2, 3};
        std::shuffle(slots.begin(), slots.end(), rng);
        k.dst = aligned(chip, npu, uint32_t(slots[0]) * slot, shape, dst_dtype);
        k.src = aligned(chip, npu, uint32_t(slots[1]) * slot, shape, t);
        k.work = aligned(chip, npu, uint32_t(slots[2]) * slot, shape, t);
        if (seeded.uniform(0, 3) == 0) {  // in place
          k.src.addr = k.dst.addr;
          ++in_place;
        }
        ASSERT_LE(std::max(aligned_bytes(chip, npu, shape, DT_FP32), aligned_bytes(chip, npu, shape, DT_INT32)), slot);
        std::vector<uint32_t> inputs;
        for (int64_t i = 0; i < int64_t(shape.n) * shape.c * shape.h * shape.w; ++i)
          inputs.push_back(random_input(rng, t, k.alpha, k.beta));
        run_and_compare(k, inputs, "rep " + std::to_string(rep));
        ++runs;
        if (HasFailure()) return;
      }
  EXPECT_EQ(runs, 4 * 3 * 8);
  EXPECT_GT(in_place, 0);
}

// ---- every fp16 and bf16 encoding -----------------------------------------------------------

TEST_P(BdcActivationExtra, EveryHalfPrecisionEncoding) {
  test::Seeded seeded;  // hsigmoid's random parameters
  std::vector<uint32_t> all(65536);
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  // [1, NPU_NUM + 5, 1, w] from NPU 3: every encoding at least once.
  const int c = chip.npu + 5, w = int(div_up(65536, c));
  const dim4 shape = {1, c, 1, w};
  const uint32_t slot = 32768;
  for (data_type_t t : {DT_FP16, DT_BFP16}) {
    std::vector<Command> commands;
    for (auto [alpha, beta] : std::vector<std::pair<float, float>>{
             {1.0f / 6, 0.5f}, {0.2f, 0.5f}, {-0.3f, 0.25f},
             {float(std::uniform_real_distribution<double>(-3, 3)(seeded.rng())),
              float(std::uniform_real_distribution<double>(-1, 2)(seeded.rng()))}})
      commands.push_back({Fn::hsigmoid, {}, {}, {}, alpha, beta});
    commands.push_back({Fn::hswish, {}, {}, {}});
    commands.push_back({Fn::isfinite, {}, {}, {}});
    Command exponent{Fn::exponent_part, {}, {}, {}};
    exponent.dst.dtype = DT_INT16;  // the only integer exponent of a 16-bit float (SFU-6)
    commands.push_back(exponent);
    for (Command &k : commands) {
      const data_type_t dst_dtype = k.fn == Fn::exponent_part ? k.dst.dtype : t;
      k.dst = aligned(chip, 3, 0, shape, dst_dtype);
      k.src = aligned(chip, 3, slot, shape, t);
      k.work = aligned(chip, 3, 2 * slot, shape, t);
      run_and_compare(k, all, "every " + dtype_label(t) + " encoding");
      if (HasFailure()) return;
    }
  }
}

// ---- values written out by hand ------------------------------------------------------------

struct Case {
  Fn fn;
  data_type_t t;
  uint32_t in, out;
  float alpha = 0, beta = 0;
  data_type_t dst_dtype = DT_FP32;  // exponent_part
};

TEST_P(BdcActivationExtra, KnownValues) {
  const float sixth = 1.0f / 6, nan_param = float_of(0x7fa12345);
  const Case cases[] = {
      // hswish: edges, zeros, infinities, NaN, correctly rounded subnormals
      {Fn::hswish, DT_FP32, 0x40400000, 0x40400000},  // 3 -> 3
      {Fn::hswish, DT_FP32, 0xc0400000, 0x80000000},  // -3 -> -0
      {Fn::hswish, DT_FP32, 0xc0a00000, 0x80000000},  // -5 -> -0
      {Fn::hswish, DT_FP32, 0xff800000, 0x80000000},  // -inf -> -0 (the limit)
      {Fn::hswish, DT_FP32, 0x7f800000, 0x7f800000},  // +inf
      {Fn::hswish, DT_FP32, 0x80000000, 0x80000000},  // -0 -> -0
      {Fn::hswish, DT_FP32, 0x00000000, 0x00000000},
      {Fn::hswish, DT_FP32, 0x3f800000, 0x3f2aaaab},  // 1 -> 2/3
      {Fn::hswish, DT_FP32, 0xbf800000, 0xbeaaaaab},  // -1 -> -1/3
      {Fn::hswish, DT_FP32, 0x7f800001, 0x7fc00001},  // signalling NaN comes back quiet
      {Fn::hswish, DT_FP32, 0x00000001, 0x00000001},  // 2^-150 + tiny rounds up, not to even
      {Fn::hswish, DT_FP32, 0x80000003, 0x80000001},  // -(1.5 - tiny) 2^-149 rounds to -1
      {Fn::hswish, DT_FP32, 0x80000001, 0x80000000},  // -(0.5 - tiny) 2^-149 rounds to -0
      {Fn::hswish, DT_FP16, 0x0001, 0x0001},
      {Fn::hswish, DT_FP16, 0x8003, 0x8001},
      {Fn::hswish, DT_FP16, 0x4200, 0x4200},          // 3
      {Fn::hswish, DT_FP16, 0xc1ff, 0x93ff},          // -2.998046875 -> -0.00097596.. -> -(2^-10 - 2^-21)
      {Fn::hswish, DT_BFP16, 0xc040, 0x8000},         // -3 -> -0
      {Fn::hswish, DT_BFP16, 0x0001, 0x0001},
      // hsigmoid: the standard parameters and the edges where alpha x + beta crosses 0 and 1
      {Fn::hsigmoid, DT_FP32, 0x40400000, 0x3f800000, sixth, 0.5f},  // 3 -> 1
      {Fn::hsigmoid, DT_FP32, 0xc0400000, 0x00000000, sixth, 0.5f},  // -3: float(1/6) > 1/6, so slightly below 0
      {Fn::hsigmoid, DT_FP32, 0x00000000, 0x3f000000, sixth, 0.5f},  // 0 -> 0.5
      {Fn::hsigmoid, DT_FP32, 0xff800000, 0x00000000, sixth, 0.5f},  // -inf -> 0
      {Fn::hsigmoid, DT_FP32, 0x7f800000, 0x3f800000, sixth, 0.5f},  // +inf -> 1
      {Fn::hsigmoid, DT_FP32, 0xc0000000, 0x00000000, 0.25f, 0.5f},  // -2: exactly 0 -> +0
      {Fn::hsigmoid, DT_FP32, 0x40000000, 0x3f800000, 0.25f, 0.5f},  // 2: exactly 1
      {Fn::hsigmoid, DT_FP32, 0xbfffffff, 0x33000000, 0.25f, 0.5f},  // just above -2: exactly 2^-25
      {Fn::hsigmoid, DT_FP32, 0xc0000001, 0x00000000, 0.25f, 0.5f},  // just below -2: 0
      {Fn::hsigmoid, DT_FP32, 0x3fffffff, 0x3f800000, 0.25f, 0.5f},  // just below 2: 1 - 2^-25, a tie: to even
      {Fn::hsigmoid, DT_FP32, 0x40000001, 0x3f800000, 0.25f, 0.5f},  // just above 2: 1
      {Fn::hsigmoid, DT_FP16, 0xbfff, 0x0c00, 0.25f, 0.5f},          // -2 + 2^-10: exactly 2^-12
      // A tie of alpha x decided by a beta below double's resolution: rounding twice would go to even.
      {Fn::hsigmoid, DT_FP32, 0x3f800800, 0x3e801001, 0x1.001p-2f, 0x1p-100f},   // 0.25 + 2^-13 + 2^-26 + 2^-100
      {Fn::hsigmoid, DT_FP32, 0x3f800800, 0x3e801000, 0x1.001p-2f, -0x1p-100f},  // ... - 2^-100
      {Fn::hsigmoid, DT_FP16, 0x0001, 0x3801, 0x1p-60f, 0x1.002p-1f},             // 0.5 + 2^-12 + 2^-84
      {Fn::hsigmoid, DT_FP16, 0x0001, 0x3800, -0x1p-60f, 0x1.002p-1f},            // 0.5 + 2^-12 - 2^-84
      {Fn::hsigmoid, DT_FP32, 0x80000000, 0x00000000, 0.0f, -0.0f},  // alpha x + beta = -0 -> +0
      {Fn::hsigmoid, DT_FP32, 0x7f800000, 0x7fc00000, 0.0f, 0.5f},   // 0 x inf: the default NaN
      {Fn::hsigmoid, DT_FP16, 0x7c00, 0x7e00, 0.0f, 0.5f},
      {Fn::hsigmoid, DT_FP32, 0x3f800000, 0x00000000, 1.0f, -INFINITY},  // 1 - inf = -inf -> 0
      {Fn::hsigmoid, DT_FP32, 0x7f800000, 0x7fc00000, 1.0f, -INFINITY},  // inf - inf: the default NaN
      {Fn::hsigmoid, DT_FP32, 0x3f800000, 0x7fe12345, nan_param, 0.5f},  // NaN alpha: its NaN, quiet
      {Fn::hsigmoid, DT_BFP16, 0x3f80, 0x7fe1, 0.5f, nan_param},          // NaN beta, narrowed
      {Fn::hsigmoid, DT_FP16, 0xfd01, 0xff01, sixth, 0.5f},               // NaN x wins
      {Fn::hsigmoid, DT_BFP16, 0x0001, 0x3f00, 1e30f, 0.5f},              // 1e30 x 2^-133 + 0.5
      // isfinite
      {Fn::isfinite, DT_FP32, 0x00000000, 0x3f800000},
      {Fn::isfinite, DT_FP32, 0x80000001, 0x3f800000},
      {Fn::isfinite, DT_FP32, 0x7f7fffff, 0x3f800000},
      {Fn::isfinite, DT_FP32, 0xff800000, 0x00000000},
      {Fn::isfinite, DT_FP32, 0x7fc00000, 0x00000000},
      {Fn::isfinite, DT_FP16, 0x7bff, 0x3c00},
      {Fn::isfinite, DT_FP16, 0x7c00, 0x0000},
      {Fn::isfinite, DT_FP16, 0xfe00, 0x0000},
      {Fn::isfinite, DT_BFP16, 0x8001, 0x3f80},
      {Fn::isfinite, DT_BFP16, 0x7f81, 0x0000},
      // exponent_part: field - bias for every value
      {Fn::exponent_part, DT_FP32, 0x3f800000, 0, 0, 0, DT_INT32},            // 1 -> 0
      {Fn::exponent_part, DT_FP32, 0x40400000, 1, 0, 0, DT_INT32},            // 3 -> 1
      {Fn::exponent_part, DT_FP32, 0x3f400000, 0xffffffff, 0, 0, DT_INT32},   // 0.75 -> -1
      {Fn::exponent_part, DT_FP32, 0xc1000000, 3, 0, 0, DT_INT32},            // -8 -> 3
      {Fn::exponent_part, DT_FP32, 0x00800000, 0xffffff82, 0, 0, DT_INT32},   // FLT_MIN -> -126
      {Fn::exponent_part, DT_FP32, 0x7f7fffff, 127, 0, 0, DT_INT32},          // FLT_MAX -> 127
      {Fn::exponent_part, DT_FP32, 0x00000000, 0xffffff81, 0, 0, DT_INT32},   // +0 -> -127
      {Fn::exponent_part, DT_FP32, 0x80000000, 0xffffff81, 0, 0, DT_INT32},   // -0 -> -127
      {Fn::exponent_part, DT_FP32, 0x00000001, 0xffffff81, 0, 0, DT_INT32},   // subnormal -> -127
      {Fn::exponent_part, DT_FP32, 0x007fffff, 0xffffff81, 0, 0, DT_INT32},
      {Fn::exponent_part, DT_FP32, 0xff800000, 128, 0, 0, DT_INT32},          // -inf -> 128
      {Fn::exponent_part, DT_FP32, 0x7fc00000, 128, 0, 0, DT_INT32},          // NaN -> 128
      {Fn::exponent_part, DT_FP16, 0x3c00, 0, 0, 0, DT_INT16},
      {Fn::exponent_part, DT_FP16, 0x7bff, 15, 0, 0, DT_INT16},
      {Fn::exponent_part, DT_FP16, 0x0400, 0xfff2, 0, 0, DT_INT16},           // smallest normal -> -14
      {Fn::exponent_part, DT_FP16, 0x8001, 0xfff1, 0, 0, DT_INT16},           // subnormal -> -15
      {Fn::exponent_part, DT_FP16, 0xfc00, 16, 0, 0, DT_INT16},               // -inf -> 16
      {Fn::exponent_part, DT_BFP16, 0x3f80, 0, 0, 0, DT_INT16},
      {Fn::exponent_part, DT_BFP16, 0x0080, 0xff82, 0, 0, DT_INT16},          // -126
      {Fn::exponent_part, DT_BFP16, 0x0001, 0xff81, 0, 0, DT_INT16},          // -127
      {Fn::exponent_part, DT_BFP16, 0x7fc1, 128, 0, 0, DT_INT16},
  };
  int i = 0;
  for (const Case &c : cases) {
    SCOPED_TRACE("case " + std::to_string(i) + ": " + fn_name(c.fn) + " " + dtype_label(c.t) + " in " + hex(c.in));
    Command k{c.fn, {}, {}, {}, c.alpha, c.beta};
    const dim4 shape = {1, 3, 1, 2};
    const int npu = chip.npu - 1;  // channels wrap to NPU 0 and 1
    k.dst = aligned(chip, npu, 0, shape, c.fn == Fn::exponent_part ? c.dst_dtype : c.t);
    k.src = aligned(chip, npu, 1024, shape, c.t);
    k.work = aligned(chip, npu, 2048, shape, c.t);
    for_each_index(shape, [&](int n, int ch, int h, int w) { set_bits(chip, k.src, n, ch, h, w, c.in); });
    ASSERT_EQ(cmodel_run(command_kernel, &k), 0) << cmodel_last_error();
    for_each_index(shape, [&](int n, int ch, int h, int w) {
      EXPECT_EQ(hex(get_bits(chip, k.dst, n, ch, h, w)), hex(c.out));
    });
    // The reference agrees with the hand-written value.
    std::vector<uint8_t> image = snapshot(chip);
    expect_results(chip, k, image);
    uint32_t reference = 0;
    std::memcpy(&reference, image.data() + offset_of(chip, k.dst, 0, 0, 0, 0), size_t(esize(k.dst.dtype)));
    EXPECT_EQ(hex(reference), hex(c.out)) << "reference";
    ++i;
  }
}

// ---- work0 afterwards ----------------------------------------------------------------------------

TEST_P(BdcActivationExtra, Work0HoldsTheDocumentedIntermediate) {
  const dim4 shape = {1, 2, 1, 4};
  auto run = [&](Fn fn, data_type_t t, std::vector<uint32_t> in, float alpha = 0, float beta = 0) {
    Command k{fn, aligned(chip, 1, 0, shape, t), aligned(chip, 1, 512, shape, t), aligned(chip, 1, 1024, shape, t),
              alpha, beta};
    size_t i = 0;
    for_each_index(shape, [&](int n, int c, int h, int w) { set_bits(chip, k.src, n, c, h, w, in[i++ % in.size()]); });
    EXPECT_EQ(cmodel_run(command_kernel, &k), 0) << cmodel_last_error();
    std::vector<uint32_t> out;
    for_each_index(shape, [&](int n, int c, int h, int w) { out.push_back(get_bits(chip, k.work, n, c, h, w)); });
    return out;
  };
  // hsigmoid: alpha x + beta, unclamped: 0.25 * {8, -8, 2, 0} + 0.5
  std::vector<uint32_t> w = run(Fn::hsigmoid, DT_FP32, {0x41000000, 0xc1000000, 0x40000000, 0}, 0.25f, 0.5f);
  EXPECT_EQ(hex(w[0]), hex(bits_of(2.5f)));
  EXPECT_EQ(hex(w[1]), hex(bits_of(-1.5f)));
  EXPECT_EQ(hex(w[2]), hex(bits_of(1.0f)));
  EXPECT_EQ(hex(w[3]), hex(bits_of(0.5f)));
  // hswish: relu6(x + 3) for {-5, 1, 7, -inf} in fp16
  w = run(Fn::hswish, DT_FP16, {0xc500, 0x3c00, 0x4700, 0xfc00});
  EXPECT_EQ(hex(w[0]), hex(0x0000));
  EXPECT_EQ(hex(w[1]), hex(0x4400));  // 4
  EXPECT_EQ(hex(w[2]), hex(0x4600));  // 6
  EXPECT_EQ(hex(w[3]), hex(0x0000));
  // isfinite: the exponent field alone, for {-1.5, subnormal, -inf, NaN} in bf16
  w = run(Fn::isfinite, DT_BFP16, {0xbfc0, 0x8005, 0xff80, 0xffc3});
  EXPECT_EQ(hex(w[0]), hex(0x3f80));
  EXPECT_EQ(hex(w[1]), hex(0x0000));
  EXPECT_EQ(hex(w[2]), hex(0x7f80));
  EXPECT_EQ(hex(w[3]), hex(0x7f80));
}

// ---- cost and command counts -------------------------------------------------------------------

TEST_P(BdcActivationExtra, CostAndCommandCounts) {
  // [1, NPU_NUM + 3, 4, 16] from NPU 0: two rows of 64 elements per NPU.
  const dim4 shape = {1, chip.npu + 3, 4, 16};
  struct Expect {
    Fn fn;
    data_type_t dtype, dst_dtype;
    double passes;  // arith passes of the lowering (unary.h)
    const char *api;
  };
  const Expect expects[] = {
      {Fn::hsigmoid, DT_FP32, DT_FP32, 2, "tpu_bdc_fp_hsigmoid"},
      {Fn::hsigmoid, DT_FP16, DT_FP16, 2, "tpu_bdc_fp_hsigmoid"},
      {Fn::hswish, DT_BFP16, DT_BFP16, 4, "tpu_bdc_fp_hswish"},
      {Fn::isfinite, DT_FP32, DT_FP32, 2, "tpu_bdc_fp_isfinite"},
      {Fn::exponent_part, DT_FP16, DT_INT16, 1, "tpu_bdc_fp_exponent_part"},
      {Fn::exponent_part, DT_FP32, DT_INT32, 1, "tpu_bdc_fp_exponent_part"},
  };
  for (const Expect &e : expects) {
    SCOPED_TRACE(e.api);
    Command k{e.fn, aligned(chip, 0, 0, shape, e.dst_dtype), aligned(chip, 0, 4096, shape, e.dtype),
              aligned(chip, 0, 8192, shape, e.dtype), 0.5f, 0.5f};
    ASSERT_EQ(cmodel_run(command_kernel, &k), 0) << cmodel_last_error();
    const nlohmann::json stats = run_stats();
    EXPECT_EQ(stats.at("commands").value(e.api, 0), 1) << stats.dump();
    EXPECT_EQ(stats.at("engines").at("bdc").at("commands").get<int>(), 1) << stats.dump();
    const data_type_t pace = esize(e.dst_dtype) >= esize(e.dtype) ? e.dst_dtype : e.dtype;
    const double eu = chip.eu_bytes / esize(pace);
    const double per_npu = 2.0 * 4 * 16;
    EXPECT_EQ(bdc_cycles(), std::ceil(per_npu / eu) * e.passes + 16);
  }
  // Two calls count twice.
  struct Twice {
    static void kernel(const void *arg) {
      const auto &k = *static_cast<const Command *>(arg);
      issue(k);
      issue(k);
    }
  };
  Command k{Fn::hswish, aligned(chip, 0, 0, shape, DT_FP32), aligned(chip, 0, 4096, shape, DT_FP32),
            aligned(chip, 0, 8192, shape, DT_FP32)};
  ASSERT_EQ(cmodel_run(Twice::kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(run_stats().at("commands").value("tpu_bdc_fp_hswish", 0), 2);
}

// ---- recording and replay ---------------------------------------------------------------------

void all_four_kernel(const void *arg) {
  const auto &k = *static_cast<const std::vector<Command> *>(arg);
  for (const Command &c : k) issue(c);
}

TEST_P(BdcActivationExtra, RecordedAndReplayed) {
  test::Seeded seeded;
  const dim4 shape = {2, chip.npu + 1, 2, 5};
  const int npu = 2;
  std::vector<Command> commands = {
      {Fn::hsigmoid, aligned(chip, npu, 0, shape, DT_FP16), aligned(chip, npu, 8192, shape, DT_FP16),
       aligned(chip, npu, 16384, shape, DT_FP16), 0.2f, 0.5f},
      {Fn::hswish, aligned(chip, npu, 24576, shape, DT_FP32), aligned(chip, npu, 8192, shape, DT_FP32),
       aligned(chip, npu, 32768, shape, DT_FP32)},
      {Fn::isfinite, aligned(chip, npu, 40960, shape, DT_BFP16), aligned(chip, npu, 8192, shape, DT_BFP16),
       aligned(chip, npu, 49152, shape, DT_BFP16)},
      {Fn::exponent_part, aligned(chip, npu, 57344, shape, DT_INT32), aligned(chip, npu, 8192, shape, DT_FP32), {}},
  };
  // One source region, read as each dtype.
  const Tensor src = aligned(chip, npu, 8192, shape, DT_FP32);
  std::vector<uint32_t> inputs;
  for_each_index(shape, [&](int, int, int, int) { inputs.push_back(uint32_t(seeded.rng()())); });
  auto fill = [&] {
    size_t i = 0;
    for_each_index(shape, [&](int n, int c, int h, int w) { set_bits(chip, src, n, c, h, w, inputs[i++]); });
  };
  fill();
  ASSERT_EQ(cmodel_record_begin("activation extra"), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_run(all_four_kernel, &commands), 0) << cmodel_last_error();
  void *stream = nullptr;
  uint64_t size = 0;
  ASSERT_EQ(cmodel_record_end(&stream, &size), 0) << cmodel_last_error();
  const std::vector<uint8_t> recorded = snapshot(chip);
  const char *info = cmodel_stream_info(stream, size);
  ASSERT_NE(info, nullptr) << cmodel_last_error();
  const nlohmann::json j = nlohmann::json::parse(info);
  for (const char *api : {"tpu_bdc_fp_hsigmoid", "tpu_bdc_fp_hswish", "tpu_bdc_fp_isfinite", "tpu_bdc_fp_exponent_part"})
    EXPECT_EQ(j["functions"][api], 1) << api << ": " << info;

  // A fresh emulator with the same inputs gives the same local memory.
  cmodel_close();
  ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error();
  fill();
  ASSERT_EQ(cmodel_replay(stream, size), 0) << cmodel_last_error();
  cmodel_record_free(stream);
  expect_local_memory(chip, recorded, [] { return std::string("replay"); });
}

// ---- a race on work0 inside a parallel region --------------------------------------------------

struct RaceArg {
  Command k;
  global_addr_t global;
  bool on_work;  // the GDMA reads work0 (a race) or another buffer (none)
};

void race_kernel(const void *arg) {
  const auto &a = *static_cast<const RaceArg *>(arg);
  const dim4 row = {1, 1, 1, 16};
  tpu_parallel_start();
  tpu_gdma_cpy_L2S(a.global, a.on_work ? a.k.work.addr : a.k.work.addr + 65536, &row, nullptr, nullptr, DT_FP32);
  issue(a.k);
  tpu_parallel_end();
}

TEST_P(BdcActivationExtra, Work0IsWrittenForRaceTracking) {
  ASSERT_EQ(cmodel_set_option("hazards", "error"), 0);
  const dim4 shape = {1, 4, 2, 8};
  RaceArg a{{Fn::hswish, aligned(chip, 0, 0, shape, DT_FP32), aligned(chip, 0, 4096, shape, DT_FP32),
             aligned(chip, 0, 8192, shape, DT_FP32)},
            cmodel_global_alloc(4096), true};
  EXPECT_RUN_FAILS_WITH(race_kernel, &a, "race inside a parallel region");
  const std::string m = cmodel_last_error();
  EXPECT_NE(m.find("tpu_bdc_fp_hswish"), std::string::npos) << m;
  a.on_work = false;
  EXPECT_EQ(cmodel_run(race_kernel, &a), 0) << cmodel_last_error();
}

// ---- checks ---------------------------------------------------------------------------------------

struct BadCall {
  std::string expected;  // substring of the message
  void (*call)();
};

// Every call below fails; LOCAL_MEM_SIZE and NPU_NUM are read inside the run.
const std::vector<BadCall> &bad_calls() {
  static const std::vector<BadCall> calls = {
      {"tpu_bdc_fp_hsigmoid: dtype DT_INT16 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_hsigmoid(0, 4096, 8192, &s, 1, 0, DT_INT16); }},
      {"tpu_bdc_fp_hswish: dtype DT_UINT8 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_hswish(0, 4096, 8192, &s, DT_UINT8); }},
      {"tpu_bdc_fp_isfinite: dtype 15 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_isfinite(0, 4096, 8192, &s, data_type_t(15)); }},
      {"tpu_bdc_fp_hswish: dtype DT_INT4 is not allowed here",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_hswish(0, 4096, 8192, &s, DT_INT4); }},
      {"tpu_bdc_fp_exponent_part: src dtype DT_INT32 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_exponent_part(0, 4096, &s, DT_INT32, DT_INT32); }},
      {"tpu_bdc_fp_exponent_part: dst dtype DT_FP32 (the exponent as a float) is not emulated; use DT_INT32",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_exponent_part(0, 4096, &s, DT_FP32, DT_FP32); }},
      {"tpu_bdc_fp_exponent_part: dst dtype DT_UINT16 is not allowed here",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_exponent_part(0, 4096, &s, DT_UINT16, DT_FP16); }},
      {"tpu_bdc_fp_exponent_part: dst dtype DT_INT8 is not allowed here; the exponent part of a DT_BFP16 source is "
       "DT_INT16",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_exponent_part(0, 4096, &s, DT_INT8, DT_BFP16); }},
      {"tpu_bdc_fp_hswish: shape is a null pointer", [] { tpu_bdc_fp_hswish(0, 4096, 8192, nullptr, DT_FP32); }},
      {"tpu_bdc_fp_exponent_part: shape is a null pointer",
       [] { tpu_bdc_fp_exponent_part(0, 4096, nullptr, DT_INT32, DT_FP32); }},
      {"tpu_bdc_fp_hsigmoid: dst shape [1, 1, 70000, 1]: h = 70000; every dim must be in [1, 65535]",
       [] { const dim4 s = {1, 1, 70000, 1}; tpu_bdc_fp_hsigmoid(0, 4096, 8192, &s, 1, 0, DT_FP16); }},
      {"tpu_bdc_fp_isfinite: dst shape [1, 0, 2, 2]: c = 0; every dim must be in [1, 65535]",
       [] { const dim4 s = {1, 0, 2, 2}; tpu_bdc_fp_isfinite(0, 4096, 8192, &s, DT_FP32); }},
      {"tpu_bdc_fp_exponent_part: dst shape [-1, 2, 2, 2]: n = -1",
       [] { const dim4 s = {-1, 2, 2, 2}; tpu_bdc_fp_exponent_part(0, 4096, &s, DT_INT16, DT_FP16); }},
      {"tpu_bdc_fp_hswish: dst [1, 2, 64, 64] DT_FP32 at local",
       [] {  // 16 KiB per NPU from near the end of NPU 0
         const dim4 s = {1, 2, 64, 64};
         tpu_bdc_fp_hswish(LOCAL_MEM_SIZE - 4096, 0, 32768, &s, DT_FP32);
       }},
      {"tpu_bdc_fp_isfinite: work0 [1, 2, 64, 64] DT_FP16 at local",
       [] {
         const dim4 s = {1, 2, 64, 64};
         tpu_bdc_fp_isfinite(0, 16384, LOCAL_MEM_SIZE - 1024, &s, DT_FP16);
       }},
      {"tpu_bdc_fp_hsigmoid: src local address",  // past the end of local memory
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_hsigmoid(0, NPU_NUM * LOCAL_MEM_SIZE, 8192, &s, 1, 0, DT_FP32); }},
      {"tpu_bdc_fp_hsigmoid: dst starts on NPU 0 but src on NPU 1",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_hsigmoid(0, LOCAL_MEM_SIZE + 4096, 8192, &s, 1, 0, DT_FP32); }},
      {"tpu_bdc_fp_hswish: dst starts on NPU 0 but work0 on NPU 1",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_hswish(0, 4096, LOCAL_MEM_SIZE + 8192, &s, DT_BFP16); }},
      {"tpu_bdc_fp_exponent_part: dst starts on NPU 2 but src on NPU 0",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_exponent_part(2 * LOCAL_MEM_SIZE, 4096, &s, DT_INT32, DT_FP32); }},
      {"tpu_bdc_fp_isfinite: work0 at 0x1000 (bytes [0x1000, 0x1100) of its NPUs) overlaps src at 0x1000",
       [] { const dim4 s = {1, 4, 8, 8}; tpu_bdc_fp_isfinite(0, 4096, 4096, &s, DT_FP32); }},
      {"tpu_bdc_fp_hsigmoid: work0 at 0x40 (bytes [0x40, 0x140) of its NPUs) overlaps dst at 0x0 (bytes [0x0, "
       "0x100)); the command uses its work buffers as scratch, so a work buffer must not overlap any other operand",
       [] { const dim4 s = {1, 4, 8, 8}; tpu_bdc_fp_hsigmoid(0, 4096, 64, &s, 1, 0, DT_FP32); }},
      {"tpu_bdc_fp_hswish: dst local address 0x8 uses the aligned layout (NULL stride) but its offset 0x8",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_hswish(8, 4096, 8192, &s, DT_FP32); }},
      {"tpu_bdc_fp_isfinite: work0 local address 0x2008 uses the aligned layout",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_isfinite(0, 4096, 8192 + 8, &s, DT_FP16); }},
      {"tpu_bdc_fp_exponent_part: src local address 0x1002 is not a multiple of the 4-byte size of DT_FP32",
       [] { const dim4 s = {1, 4, 2, 8}; tpu_bdc_fp_exponent_part(0, 4096 + 2, &s, DT_INT32, DT_FP32); }},
  };
  return calls;
}

void bad_kernel(const void *arg) { static_cast<const BadCall *>(arg)->call(); }

void good_kernel(const void *) {
  const dim4 s = {1, NPU_NUM + 1, 2, 8};
  tpu_bdc_fp_hsigmoid(0, 4096, 8192, &s, 0.2f, 0.5f, DT_FP32);
  tpu_bdc_fp_hswish(0, 4096, 8192, &s, DT_FP16);
  tpu_bdc_fp_isfinite(0, 0, 8192, &s, DT_BFP16);  // in place
  tpu_bdc_fp_exponent_part(0, 4096, &s, DT_INT32, DT_FP32);
}

TEST_P(BdcActivationExtra, EachCheckFiresWithItsMessageAndTheProcessSurvives) {
  int i = 0;
  for (const BadCall &b : bad_calls()) {
    SCOPED_TRACE("bad call " + std::to_string(i++));
    EXPECT_RUN_FAILS_WITH(bad_kernel, &b, b.expected);
    // The kernel was stopped, not the process: the emulator runs the next kernel.
    EXPECT_EQ(cmodel_run(good_kernel, nullptr), 0) << cmodel_last_error();
  }
  // The memory messages carry the rule.
  EXPECT_RUN_FAILS_WITH(bad_kernel, &bad_calls()[13], "is outside its");
  EXPECT_RUN_FAILS_WITH(bad_kernel, &bad_calls()[15], "is past the end of local memory");
}

TEST_P(BdcActivationExtra, OutsideARunTheCallReturnsAndKeepsTheMessage) {
  const dim4 s = {1, 4, 2, 8};
  tpu_bdc_fp_hswish(0, 4096, 8192, &s, DT_INT8);
  EXPECT_NE(std::string(cmodel_last_error()).find("tpu_bdc_fp_hswish: dtype DT_INT8 is not allowed here"),
            std::string::npos)
      << cmodel_last_error();
  tpu_bdc_fp_exponent_part(0, 4096, &s, DT_INT8, DT_FP32);
  EXPECT_NE(std::string(cmodel_last_error()).find("tpu_bdc_fp_exponent_part: dst dtype DT_INT8 is not allowed here"),
            std::string::npos)
      << cmodel_last_error();
  EXPECT_EQ(cmodel_run(good_kernel, nullptr), 0) << cmodel_last_error();
}

TEST_P(BdcActivationExtra, NoLongerNotImplemented) {
  EXPECT_EQ(cmodel_run(good_kernel, nullptr), 0) << cmodel_last_error();
  EXPECT_EQ(std::string(cmodel_last_error()).find("is not implemented in this SDK"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcActivationExtra, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
