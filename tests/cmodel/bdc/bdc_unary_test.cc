// bdc_unary_test: tpu_bdc_abs, neg, not, sign, relu and prelu on every dtype
// each takes, bit for bit over the whole local memory, on both chips:
// random shapes, free strides with zero-stride sources (abs, neg, not,
// relu), aligned layouts (sign, prelu), any start NPU, in place. Inputs
// include NaNs (quiet and signalling), infinities, both zeros, subnormals
// and the integer extremes. The reference is the semantics documented in
// cmodel/bdc/unary.h, computed on the bits and, for prelu, with exact long
// double products rounded by the test's own encoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "support/local_model.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using test::hex;

enum class Op { abs, neg, bit_not, sign, relu, prelu };
const char *op_name(Op op) {
  const char *names[] = {"abs", "neg", "not", "sign", "relu", "prelu"};
  return names[int(op)];
}

const std::vector<data_type_t> all_dtypes = {DT_INT8,  DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                                             DT_UINT32, DT_FP16,  DT_BFP16, DT_FP32};

bool is_float(data_type_t t) { return t == DT_FP32 || t == DT_FP16 || t == DT_BFP16; }
bool is_signed_int(data_type_t t) { return t == DT_INT8 || t == DT_INT16 || t == DT_INT32; }

bool takes(Op op, data_type_t t) {
  if (op == Op::neg) return is_float(t) || is_signed_int(t);
  if (op == Op::bit_not) return !is_float(t);
  return true;
}
bool strided(Op op) { return op != Op::sign && op != Op::prelu; }

// ---- float formats (the test's own) ---------------------------------------------

struct Format {
  int exp_bits, man_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  uint32_t inf_bits() const { return ((1u << exp_bits) - 1) << man_bits; }
  uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
  uint32_t quiet_bit() const { return 1u << (man_bits - 1); }
  uint32_t one() const { return uint32_t(bias()) << man_bits; }
  long double value(uint32_t k) const {  // magnitude encoding, unbounded exponent
    const uint32_t e = k >> man_bits, f = k & ((1u << man_bits) - 1);
    if (e == 0) return std::ldexp((long double)f, 1 - bias() - man_bits);
    return std::ldexp((long double)((1u << man_bits) + f), int(e) - bias() - man_bits);
  }
  bool is_nan(uint32_t b) const { return (b & (sign_bit() - 1)) > inf_bits(); }
  // Value of a non-NaN encoding.
  long double decode(uint32_t b) const {
    const uint32_t mag = b & (sign_bit() - 1);
    const long double v = mag == inf_bits() ? HUGE_VALL : value(mag);
    return (b & sign_bit()) ? -v : v;
  }
  // x rounded to nearest, ties to even (overflow to infinity).
  uint32_t encode(long double x) const {
    const uint32_t sign = std::signbit(x) ? sign_bit() : 0;
    const long double mag = std::fabs(x);
    if (std::isinf(mag) || mag >= value(inf_bits())) return sign | inf_bits();
    uint32_t lo = 0, hi = inf_bits();
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      (value(mid) <= mag ? lo : hi) = mid;
    }
    if (value(lo) == mag) return sign | lo;
    const long double midpoint = (value(lo) + value(lo + 1)) / 2;
    const bool up = mag > midpoint || (mag == midpoint && (lo & 1));
    return sign | (up ? lo + 1 : lo);
  }
};

Format format_of(data_type_t t) {
  if (t == DT_FP16) return {5, 10};
  if (t == DT_BFP16) return {8, 7};
  return {8, 23};
}

uint32_t mask(data_type_t t) { return esize(t) == 4 ? 0xffffffffu : (1u << (8 * esize(t))) - 1; }

// ---- reference ---------------------------------------------------------------------

uint32_t expected(Op op, data_type_t t, uint32_t x, uint32_t alpha) {
  if (is_float(t)) {
    const Format f = format_of(t);
    const uint32_t sign = f.sign_bit(), magnitude = x & (sign - 1);
    switch (op) {
      case Op::abs: return magnitude;
      case Op::neg: return x ^ sign;
      case Op::bit_not: break;
      case Op::relu:
        if (f.is_nan(x)) return x | f.quiet_bit();
        return (x & sign) ? 0 : x;
      case Op::sign:
        if (f.is_nan(x)) return x | f.quiet_bit();
        if (magnitude == 0) return 0;
        return (x & sign) ? f.one() | sign : f.one();
      case Op::prelu: {
        if (f.is_nan(x)) return x | f.quiet_bit();
        const long double v = f.decode(x);
        if (v > 0) return x;
        if (f.is_nan(alpha)) return alpha | f.quiet_bit();
        // Exact product (at most 24 x 24 bits), rounded once to fp32, then
        // (exactly, since fp16/bf16 products fit fp32) to the dtype. 0 * inf
        // gives the positive quiet NaN with an empty payload.
        const long double product = f.decode(alpha) * v;
        if (std::isnan(product)) return f.inf_bits() | f.quiet_bit();
        const Format fp32 = format_of(DT_FP32);
        const uint32_t p32 = fp32.encode(product);
        return f.encode(fp32.decode(p32));
      }
    }
    return 0;
  }
  const int64_t v = int_value(t, x);
  int64_t r = 0;
  switch (op) {
    case Op::abs: r = std::min(v < 0 ? -v : v, int_max(t)); break;
    case Op::neg: r = std::clamp(-v, int_min(t), int_max(t)); break;
    case Op::bit_not: r = ~v; break;
    case Op::sign: r = (v > 0) - (v < 0); break;
    case Op::relu: r = std::max<int64_t>(v, 0); break;
    case Op::prelu: r = v > 0 ? v : std::clamp(int_value(t, alpha) * v, int_min(t), int_max(t)); break;
  }
  return uint32_t(r) & mask(t);
}

// Random element bits: special values often.
template <typename Rng>
uint32_t random_bits(Rng &rng, data_type_t t) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const uint32_t m = mask(t);
  if (is_float(t)) {
    const Format f = format_of(t);
    const uint32_t sign = pick(0, 1) ? f.sign_bit() : 0;
    switch (pick(0, 7)) {
      case 0: return sign;                                  // +-0
      case 1: return sign | f.inf_bits();                   // +-inf
      case 2: return sign | f.inf_bits() | f.quiet_bit() | (uint32_t(rng()) & (f.quiet_bit() - 1));  // quiet NaN
      case 3: return sign | f.inf_bits() | (uint32_t(rng()) % (f.quiet_bit() - 1) + 1);  // signalling NaN
      case 4: return sign | (uint32_t(rng()) & ((1u << f.man_bits) - 1));  // subnormal
      default: return uint32_t(rng()) & m;
    }
  }
  switch (pick(0, 5)) {
    case 0: return uint32_t(int_min(t)) & m;
    case 1: return uint32_t(int_max(t)) & m;
    case 2: return uint32_t(pick(-2, 2)) & m;
    default: return uint32_t(rng()) & m;
  }
}

// A prelu slope of dtype t, in a scalar_t whose other bytes are junk.
template <typename Rng>
scalar_t random_alpha(Rng &rng, data_type_t t) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  scalar_t a;
  a.u32 = uint32_t(rng());
  uint32_t bits;
  if (is_float(t)) {
    const long double choices[] = {0.1L, 0.25L, -0.5L, 2, 0, 1e-30L, 3e30L, 1.0L / 3};
    bits = format_of(t).encode(choices[pick(0, 7)] * (pick(0, 3) ? 1 : -1));
    if (pick(0, 3) == 0) bits = uint32_t(rng()) & mask(t);  // any value
    if (format_of(t).is_nan(bits)) bits = 0;  // a NaN slope is pinned by a known-value test
  } else {
    bits = pick(0, 1) ? uint32_t(pick(-3, 3)) : uint32_t(rng());
  }
  const uint32_t m = mask(t);
  a.u32 = (a.u32 & ~m) | (bits & m);
  return a;
}

// ---- kernels ---------------------------------------------------------------------

struct Command {
  Op op;
  Tensor dst, src;
  scalar_t alpha;
};

void commands_kernel(const void *arg) {
  for (const Command &k : *static_cast<const std::vector<Command> *>(arg)) {
    const dim4 *shape = &k.dst.shape;
    const dim4 *ds = k.dst.api_stride(), *ss = k.src.api_stride();
    const data_type_t t = k.dst.dtype;
    switch (k.op) {
      case Op::abs: tpu_bdc_abs(k.dst.addr, k.src.addr, shape, ds, ss, t); break;
      case Op::neg: tpu_bdc_neg(k.dst.addr, k.src.addr, shape, ds, ss, t); break;
      case Op::bit_not: tpu_bdc_not(k.dst.addr, k.src.addr, shape, ds, ss, t); break;
      case Op::sign: tpu_bdc_sign(k.dst.addr, k.src.addr, shape, t); break;
      case Op::relu: tpu_bdc_relu(k.dst.addr, k.src.addr, shape, ds, ss, t); break;
      case Op::prelu: tpu_bdc_prelu(k.dst.addr, k.src.addr, k.alpha, shape, t); break;
    }
  }
}

class BdcUnary : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error();
    chip = local_model::chip(GetParam());
  }
  void TearDown() override { cmodel_close(); }

  // Runs the commands in one kernel after filling their sources; the
  // expected memory is computed from the memory before the run.
  template <typename Rng>
  void run_commands(Rng &rng, const std::vector<Command> &commands, const std::string &what) {
    for (const Command &k : commands)
      for_each_index(k.src.shape, [&](int n, int c, int h, int w) {
        set_bits(chip, k.src, n, c, h, w, random_bits(rng, k.src.dtype));
      });
    std::vector<uint8_t> want = snapshot(chip);
    for (const Command &k : commands)
      for_each_index(k.dst.shape, [&](int n, int c, int h, int w) {
        put(want, chip, k.dst, n, c, h, w,
            expected(k.op, k.dst.dtype, get_bits(chip, k.src, n, c, h, w), k.alpha.u32 & mask(k.dst.dtype)));
      });
    ASSERT_EQ(cmodel_run(commands_kernel, &commands), 0) << what << ": " << cmodel_last_error();
    expect_local_memory(chip, want, [&] {
      std::string s = what;
      for (const Command &k : commands)
        s += std::string("\n  ") + op_name(k.op) + " dst @" + hex(k.dst.addr) + " src @" + hex(k.src.addr) +
             " shape [" + std::to_string(k.dst.shape.n) + "," + std::to_string(k.dst.shape.c) + "," +
             std::to_string(k.dst.shape.h) + "," + std::to_string(k.dst.shape.w) + "]" +
             (k.dst.null_stride ? " aligned" : " strided") + (k.src.null_stride ? "/aligned" : "/strided") +
             " alpha " + hex(k.alpha.u32);
      return s;
    });
  }

  Chip chip;
};

// Per dtype, one run with every op that takes it, each in its own slot of
// local memory; three runs per dtype.
TEST_P(BdcUnary, EveryOpAndDtype) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const uint32_t slot = chip.lmem / 6 / 128 * 128, half = slot / 2;
  for (data_type_t t : all_dtypes)
    for (int rep = 0; rep < 3; ++rep) {
      std::vector<Command> commands;
      for (int o = 0; o < 6; ++o) {
        const Op op = Op(o);
        if (!takes(op, t)) continue;
        Command k{op, {}, {}, random_alpha(rng, t)};
        for (;;) {
          const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 6),
                              seeded.uniform(1, 17)};
          const int npu = seeded.uniform(0, chip.npu - 1);
          const uint32_t base = uint32_t(o) * slot;
          const int placement = seeded.uniform(0, 4);  // 0: in place
          if (!strided(op)) {
            k.dst = aligned(chip, npu, base, shape, t);
            k.src = placement == 0 ? k.dst : aligned(chip, npu, base + half, shape, t);
            if (aligned_bytes(chip, npu, shape, t) <= half) break;
            continue;
          }
          if (!random_layout(rng, chip, npu, base, shape, t, false, half, k.dst) ||
              !random_layout(rng, chip, npu, base + half, shape, t, true, half, k.src))
            continue;
          if (placement == 0) k.src = k.dst;
          break;
        }
        commands.push_back(k);
      }
      run_commands(rng, commands, "dtype " + std::to_string(t) + " rep " + std::to_string(rep));
      if (::testing::Test::HasFailure()) return;
    }
}

// Values written out by hand: the decisions of unary.h, pinned.
TEST_P(BdcUnary, KnownValues) {
  struct Case {
    Op op;
    data_type_t t;
    uint32_t in, out, alpha;
  };
  const Case cases[] = {
      {Op::abs, DT_INT8, 0x80, 0x7f, 0},                 // abs(-128) saturates to 127
      {Op::abs, DT_INT32, 0x80000000, 0x7fffffff, 0},
      {Op::neg, DT_INT16, 0x8000, 0x7fff, 0},            // neg(-32768) saturates
      {Op::neg, DT_INT8, 0x05, 0xfb, 0},
      {Op::abs, DT_UINT8, 0xf0, 0xf0, 0},                // unsigned: identity
      {Op::bit_not, DT_UINT16, 0x1234, 0xedcb, 0},
      {Op::abs, DT_FP32, 0xff800001, 0x7f800001, 0},     // signalling NaN stays signalling
      {Op::neg, DT_FP16, 0x0000, 0x8000, 0},             // neg(+0) = -0
      {Op::neg, DT_BFP16, 0x7fc1, 0xffc1, 0},            // NaN: sign flipped, payload kept
      {Op::relu, DT_FP32, 0x80000000, 0x00000000, 0},    // relu(-0) = +0
      {Op::relu, DT_FP16, 0xfc00, 0x0000, 0},            // relu(-inf) = 0
      {Op::relu, DT_FP16, 0x7d00, 0x7f00, 0},            // NaN comes back quiet
      {Op::relu, DT_INT16, 0xfffe, 0x0000, 0},
      {Op::sign, DT_FP32, 0x80000000, 0x00000000, 0},    // sign(-0) = +0
      {Op::sign, DT_FP16, 0xfc00, 0xbc00, 0},            // sign(-inf) = -1
      {Op::sign, DT_BFP16, 0x0001, 0x3f80, 0},           // sign(subnormal) = 1
      {Op::sign, DT_FP32, 0xff800001, 0xffc00001, 0},    // NaN comes back quiet
      {Op::sign, DT_UINT32, 0x80000000, 1, 0},
      {Op::sign, DT_INT8, 0x80, 0xff, 0},
      {Op::prelu, DT_FP32, 0xc0000000, 0xbf000000, 0x3e800000},  // -2 * 0.25 = -0.5
      {Op::prelu, DT_FP32, 0x40000000, 0x40000000, 0x3e800000},  // positive: unchanged
      {Op::prelu, DT_FP16, 0x8000, 0x8000, 0x3c00},              // -0 * 1 = -0
      {Op::prelu, DT_FP16, 0xfc00, 0x7e00, 0x0000},              // -inf * 0: NaN
      {Op::prelu, DT_BFP16, 0xbf80, 0x7fc1, 0x7f81},             // NaN slope: its quiet NaN
      {Op::prelu, DT_INT8, 0x80, 0x7f, 0xff},                    // -128 * -1 saturates
      {Op::prelu, DT_INT16, 0xfff0, 0xffe0, 0x0002},             // -16 * 2 = -32
      {Op::prelu, DT_UINT8, 0x00, 0x00, 0x05},
  };
  std::vector<Command> commands;
  int i = 0;
  for (const Case &c : cases) {
    Command k{c.op, {}, {}, {}};
    k.alpha.u32 = c.alpha | (0xdeadbeefu & ~mask(c.t));  // junk above the member
    k.dst = aligned(chip, 5, uint32_t(i) * 128, {1, 1, 1, 1}, c.t);
    k.src = aligned(chip, 5, 8192 + uint32_t(i) * 128, {1, 1, 1, 1}, c.t);
    set_bits(chip, k.src, 0, 0, 0, 0, c.in);
    commands.push_back(k);
    ++i;
  }
  ASSERT_EQ(cmodel_run(commands_kernel, &commands), 0) << cmodel_last_error();
  i = 0;
  for (const Case &c : cases) {
    EXPECT_EQ(get_bits(chip, commands[i].dst, 0, 0, 0, 0), c.out) << "case " << i << " " << op_name(c.op);
    EXPECT_EQ(expected(c.op, c.t, c.in, c.alpha), c.out) << "reference, case " << i;
    ++i;
  }
}

// ---- checks ----------------------------------------------------------------------

void bad_kernel(const void *arg) {
  const int which = *static_cast<const int *>(arg);
  const dim4 shape = {1, 4, 2, 2}, stride = {8, 4, 2, 1};
  const local_addr_t npu1 = LOCAL_MEM_SIZE;
  scalar_t alpha{};
  switch (which) {
    case 0: tpu_bdc_neg(0, 4096, &shape, nullptr, nullptr, DT_UINT8); break;
    case 1: tpu_bdc_not(0, 4096, &shape, nullptr, nullptr, DT_FP32); break;
    case 2: tpu_bdc_abs(0, npu1, &shape, &stride, &stride, DT_INT16); break;
    case 3: tpu_bdc_relu(0, 4096 + 8, &shape, nullptr, nullptr, DT_FP32); break;
    case 4: tpu_bdc_sign(8, 4096, &shape, DT_FP32); break;
    case 5: tpu_bdc_prelu(0, npu1, alpha, &shape, DT_FP16); break;
    case 6: tpu_bdc_prelu(0, 4096, alpha, &shape, DT_INT4); break;
    case 7: tpu_bdc_sign(0, 4096, &shape, data_type_t(15)); break;
    case 8: tpu_bdc_relu(0, 4096, nullptr, nullptr, nullptr, DT_INT8); break;
    case 9: {
      const dim4 wide = {1, 1, 70000, 1};
      tpu_bdc_abs(0, 4096, &wide, &stride, &stride, DT_INT8);
      break;
    }
    case 10: tpu_bdc_prelu(0, 4096 + 4, alpha, &shape, DT_FP32); break;
    case 11: tpu_bdc_not(2 * npu1 + 1, 2 * npu1 + 4096, &shape, &stride, &stride, DT_INT32); break;
  }
}

std::string failure(int which) {
  EXPECT_NE(cmodel_run(bad_kernel, &which), 0) << "case " << which;
  return cmodel_last_error();
}

#define EXPECT_MESSAGE(which, text)                                              \
  do {                                                                           \
    const std::string m = failure(which);                                        \
    EXPECT_NE(m.find(text), std::string::npos) << "case " << which << ": " << m; \
  } while (0)

TEST_P(BdcUnary, ChecksNameTheFunctionAndTheValue) {
  EXPECT_MESSAGE(0, "tpu_bdc_neg: ");
  EXPECT_MESSAGE(0, "dtype DT_UINT8 is not allowed here; expected one of DT_INT8, DT_INT16, DT_INT32, DT_FP32, "
                    "DT_FP16, DT_BFP16");
  EXPECT_MESSAGE(1, "tpu_bdc_not: ");
  EXPECT_MESSAGE(1, "dtype DT_FP32 is not allowed here; expected one of DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, "
                    "DT_INT32, DT_UINT32");
  EXPECT_MESSAGE(2, "tpu_bdc_abs: dst starts on NPU 0 but src on NPU 1");
  EXPECT_MESSAGE(3, "tpu_bdc_relu: src local address 0x1008 uses the aligned layout");
  EXPECT_MESSAGE(4, "tpu_bdc_sign: dst local address 0x8 uses the aligned layout");
  EXPECT_MESSAGE(5, "tpu_bdc_prelu: dst starts on NPU 0 but src on NPU 1");
  EXPECT_MESSAGE(6, "tpu_bdc_prelu: dst dtype DT_INT4: 4-bit tensors are not emulated yet");
  EXPECT_MESSAGE(7, "tpu_bdc_sign: dst dtype 15 is not a data type of this chip");
  EXPECT_MESSAGE(8, "tpu_bdc_relu: shape is a null pointer");
  EXPECT_MESSAGE(9, "tpu_bdc_abs: dst shape [1, 1, 70000, 1]: h = 70000; every dim must be in [1, 65535]");
  EXPECT_MESSAGE(10, "tpu_bdc_prelu: src local address 0x1004 uses the aligned layout");
  EXPECT_MESSAGE(11, "tpu_bdc_not: dst local address " + hex(2ull * chip.lmem + 1) +
                         " is not a multiple of the 4-byte size of DT_INT32");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcUnary, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
