// bdc_fp_arith_test: family M, float arithmetic: tpu_bdc_fp_add/sub/mul,
// diff_abs, square, the divisions (fp32_ and fp_, _C, C_div, tunable) and
// fp32_mac(_C), against a host reference, bit for bit.
//
// The reference computes each result exactly (or correctly rounded) in
// double and rounds it ONCE, directly to the destination format, with
// conversions written here (fp16 through the compiler's _Float16, bf16 by
// hand). The emulator computes in fp32 and rounds again into fp16/bf16;
// the two agree because double rounding through fp32 is harmless for
// +, -, *, / of fp16/bf16 values, which is one of the claims under test.
// Random shapes and layouts (aligned and free strides, zero-stride
// broadcast sources, in-place), any start NPU, both chips, values from
// plain decimals to random encodings (subnormal and overflowing results).
// The whole local memory is compared: bytes outside dst must not change.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "support/local_model.h"
#include "support/test_support.h"

namespace {

using namespace local_model;

enum class Op {
  add, sub, mul, diff_abs,                               // fp_, two tensors
  add_C, sub_C, C_sub, mul_C, diff_abs_C,                // fp_, scalar_t C
  square,                                                // fp_, one tensor
  div, div_C, C_div, tunable_div, tunable_div_C, tunable_C_div,
  fp32_div, fp32_div_C, fp32_C_div, fp32_tunable_div, fp32_tunable_div_C, fp32_tunable_C_div,
  mac, mac_C,                                            // fp32 only, dst += ...
  count
};

const char *op_name(Op op) {
  static const char *names[] = {"add", "sub", "mul", "diff_abs", "add_C", "sub_C", "C_sub", "mul_C", "diff_abs_C",
                                "square", "div", "div_C", "C_div", "tunable_div", "tunable_div_C", "tunable_C_div",
                                "fp32_div", "fp32_div_C", "fp32_C_div", "fp32_tunable_div", "fp32_tunable_div_C",
                                "fp32_tunable_C_div", "mac", "mac_C"};
  return names[int(op)];
}

bool two_tensors(Op op) {
  return op == Op::add || op == Op::sub || op == Op::mul || op == Op::diff_abs || op == Op::div ||
         op == Op::tunable_div || op == Op::fp32_div || op == Op::fp32_tunable_div || op == Op::mac;
}
bool fp32_only(Op op) { return op >= Op::fp32_div; }
bool is_division(Op op) { return op >= Op::div && op <= Op::fp32_tunable_C_div; }
// The constant is the dividend (C / src).
bool constant_divides(Op op) { return op == Op::C_div || op == Op::tunable_C_div || op == Op::fp32_C_div || op == Op::fp32_tunable_C_div; }

struct Command {
  Op op;
  Tensor dst, src0, src1;
  scalar_t C;
  int num_iter;
};

void fp_kernel(const void *arg) {
  const auto &k = *static_cast<const Command *>(arg);
  const dim4 *shape = &k.dst.shape;
  const data_type_t t = k.dst.dtype;
  const dim4 *ds = k.dst.api_stride(), *s0 = k.src0.api_stride(), *s1 = k.src1.api_stride();
  const auto d = k.dst.addr, a = k.src0.addr, b = k.src1.addr;
  const float f = k.C.f32;
  switch (k.op) {
    case Op::add: tpu_bdc_fp_add(d, a, b, shape, ds, s0, s1, t); break;
    case Op::sub: tpu_bdc_fp_sub(d, a, b, shape, ds, s0, s1, t); break;
    case Op::mul: tpu_bdc_fp_mul(d, a, b, shape, ds, s0, s1, t); break;
    case Op::diff_abs: tpu_bdc_fp_diff_abs(d, a, b, shape, ds, s0, s1, t); break;
    case Op::add_C: tpu_bdc_fp_add_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::sub_C: tpu_bdc_fp_sub_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::C_sub: tpu_bdc_fp_C_sub(d, a, k.C, shape, ds, s0, t); break;
    case Op::mul_C: tpu_bdc_fp_mul_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::diff_abs_C: tpu_bdc_fp_diff_abs_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::square: tpu_bdc_fp_square(d, a, shape, ds, s0, t); break;
    case Op::div: tpu_bdc_fp_div(d, a, b, shape, ds, s0, s1, t); break;
    case Op::div_C: tpu_bdc_fp_div_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::C_div: tpu_bdc_fp_C_div(d, a, k.C, shape, ds, s0, t); break;
    case Op::tunable_div: tpu_bdc_fp_tunable_div(d, a, b, shape, ds, s0, s1, t, k.num_iter); break;
    case Op::tunable_div_C: tpu_bdc_fp_tunable_div_C(d, a, k.C, shape, ds, s0, t, k.num_iter); break;
    case Op::tunable_C_div: tpu_bdc_fp_tunable_C_div(d, a, k.C, shape, ds, s0, t, k.num_iter); break;
    case Op::fp32_div: tpu_bdc_fp32_div(d, a, b, shape, ds, s0, s1); break;
    case Op::fp32_div_C: tpu_bdc_fp32_div_C(d, a, f, shape, ds, s0); break;
    case Op::fp32_C_div: tpu_bdc_fp32_C_div(d, a, f, shape, ds, s0); break;
    case Op::fp32_tunable_div: tpu_bdc_fp32_tunable_div(d, a, b, shape, ds, s0, s1, k.num_iter); break;
    case Op::fp32_tunable_div_C: tpu_bdc_fp32_tunable_div_C(d, a, f, shape, ds, s0, k.num_iter); break;
    case Op::fp32_tunable_C_div: tpu_bdc_fp32_tunable_C_div(d, a, f, shape, ds, s0, k.num_iter); break;
    case Op::mac: tpu_bdc_fp32_mac(d, a, b, shape, ds, s0, s1); break;
    case Op::mac_C: tpu_bdc_fp32_mac_C(d, a, f, shape, ds, s0); break;
    case Op::count: break;
  }
}

// ---- the reference's own rounding: double -> format, round to nearest even ----

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// bf16 has fp32's exponent range and 8 significant bits: round |x| to a
// multiple of 2^(e - 7) (e = exponent of x, at least -126 for subnormals).
uint16_t double_to_bf16(double x) {
  if (std::isnan(x)) return uint16_t((bits_of(float(x)) >> 16) | 0x40);
  const double mag = std::fabs(x);
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (mag == 0) return sign;
  int e;
  std::frexp(mag, &e);  // mag = m * 2^e, m in [0.5, 1): leading bit weight 2^(e-1)
  const int quantum = std::max(e - 1, -126) - 7;
  const double r = std::nearbyint(std::ldexp(mag, -quantum)) * std::ldexp(1.0, quantum);  // FE_TONEAREST
  if (r >= 0x1p128) return sign | 0x7f80;  // rounded past the largest finite value
  return uint16_t(sign | (bits_of(float(r)) >> 16));  // r is exact in bf16, hence in fp32
}

uint32_t round_to(data_type_t t, double x) {
  if (t == DT_FP32) return bits_of(float(x));
  if (t == DT_FP16) {
    const _Float16 h = _Float16(x);
    uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
  }
  return double_to_bf16(x);
}

double value_of(data_type_t t, uint32_t bits) {
  if (t == DT_FP32) return float_of(bits);
  return t == DT_FP16 ? from_fp16(uint16_t(bits)) : from_bf16(uint16_t(bits));
}

uint32_t load_bits(const Chip &chip, const Tensor &t, int n, int c, int h, int w) {
  return t.dtype == DT_FP32 ? get<uint32_t>(chip, t, n, c, h, w) : get<uint16_t>(chip, t, n, c, h, w);
}
void store_bits(const Chip &chip, const Tensor &t, int n, int c, int h, int w, uint32_t bits) {
  if (t.dtype == DT_FP32) set<uint32_t>(chip, t, n, c, h, w, bits);
  else set<uint16_t>(chip, t, n, c, h, w, uint16_t(bits));
}

// Correctly rounded result of `op` on a (src0), b (src1), c (C), d (old dst).
uint32_t reference(Op op, data_type_t t, double a, double b, double c, double d) {
  switch (op) {
    case Op::add: return round_to(t, a + b);  // a + b of two floats is exact or rounds harmlessly in double
    case Op::sub: return round_to(t, a - b);
    case Op::mul: return round_to(t, a * b);  // exact: 48 bits at most
    case Op::diff_abs: return round_to(t, std::fabs(a - b));
    case Op::add_C: return round_to(t, a + c);
    case Op::sub_C: return round_to(t, a - c);
    case Op::C_sub: return round_to(t, c - a);
    case Op::mul_C: return round_to(t, a * c);
    case Op::diff_abs_C: return round_to(t, std::fabs(a - c));
    case Op::square: return round_to(t, a * a);
    case Op::div: case Op::tunable_div: case Op::fp32_div: case Op::fp32_tunable_div: return round_to(t, a / b);
    case Op::div_C: case Op::tunable_div_C: case Op::fp32_div_C: case Op::fp32_tunable_div_C: return round_to(t, a / c);
    case Op::C_div: case Op::tunable_C_div: case Op::fp32_C_div: case Op::fp32_tunable_C_div: return round_to(t, c / a);
    // Not fused: the product is rounded to fp32 first.
    case Op::mac: return round_to(t, d + double(float(a * b)));
    case Op::mac_C: return round_to(t, d + double(float(a * c)));
    case Op::count: break;
  }
  return 0;
}

// Random finite encodings of dtype t: short decimals, exact quarters (ties
// in the additions), small magnitudes and, one time in five, any finite
// encoding at all (subnormals, huge values: overflow and underflow).
template <typename Rng>
uint32_t random_bits(Rng &rng, data_type_t t) {
  std::uniform_real_distribution<double> wide(-1000.0, 1000.0);
  switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
    case 0: return round_to(t, std::uniform_int_distribution<int>(-64, 64)(rng) * 0.25);
    case 1: return round_to(t, wide(rng) * 1e-3);
    case 2: {
      const int exp_bits = t == DT_FP16 ? 5 : 8, bits = t == DT_FP32 ? 32 : 16;
      const uint32_t exp_mask = ((1u << exp_bits) - 1) << (bits - 1 - exp_bits);
      for (;;) {
        const uint32_t u = uint32_t(rng()) & (bits == 32 ? 0xffffffffu : 0xffffu);
        if ((u & exp_mask) != exp_mask) return u;  // finite
      }
    }
    default: return round_to(t, wide(rng));
  }
}

class BdcFpArith : public local_model::ChipTest {};

TEST_P(BdcFpArith, RandomShapesLayoutsDtypesAndOps) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const Chip chip = local_model::chip(GetParam());
  const uint32_t third = chip.lmem / 3 / 64 * 64;
  for (int iter = 0; iter < test::rounds(400); ++iter) {
    const Op op = Op(iter % int(Op::count));  // every op, in turn
    const data_type_t dtype =
        fp32_only(op) ? DT_FP32 : std::vector<data_type_t>{DT_FP32, DT_FP16, DT_BFP16}[seeded.uniform(0, 2)];
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 7),
                        seeded.uniform(1, 19)};
    const int npu = seeded.uniform(0, chip.npu - 1);
    const bool in_place = seeded.uniform(0, 4) == 0;
    Command k{};
    k.op = op;
    k.num_iter = seeded.uniform(1, 4);  // the checker allows 1 to 4 steps (AR-6)
    if (!random_layout(rng, chip, npu, 0, shape, dtype, false, third, k.dst) ||
        !random_layout(rng, chip, npu, third, shape, dtype, true, third, k.src0) ||
        !random_layout(rng, chip, npu, 2 * third, shape, dtype, true, third, k.src1)) {
      --iter;  // too large for this layout; try another
      continue;
    }
    if (in_place) k.src0 = k.dst;
    k.C.u32 = random_bits(rng, dtype);
    if (is_division(op) && value_of(dtype, k.C.u32) == 0) k.C.u32 = round_to(dtype, 1.5);  // no 0 / 0
    const double c = value_of(dtype, k.C.u32);

    // Inputs written through the model (broadcast sources keep their last
    // write), then 0 / 0 removed, then the expected results computed from
    // what memory holds, before the run.
    for_each_index(shape, [&](int n, int cc, int h, int w) {
      if (op == Op::mac || op == Op::mac_C) store_bits(chip, k.dst, n, cc, h, w, random_bits(rng, dtype));
      for (const Tensor *t : {&k.src0, &k.src1}) store_bits(chip, *t, n, cc, h, w, random_bits(rng, dtype));
    });
    if (op == Op::div || op == Op::tunable_div || op == Op::fp32_div || op == Op::fp32_tunable_div)
      for_each_index(shape, [&](int n, int cc, int h, int w) {
        if (value_of(dtype, load_bits(chip, k.src0, n, cc, h, w)) == 0 &&
            value_of(dtype, load_bits(chip, k.src1, n, cc, h, w)) == 0)
          store_bits(chip, k.src1, n, cc, h, w, round_to(dtype, -3.0));
      });
    if (constant_divides(op))
      for_each_index(shape, [&](int n, int cc, int h, int w) {
        if (value_of(dtype, load_bits(chip, k.src0, n, cc, h, w)) == 0 && c == 0)
          store_bits(chip, k.src0, n, cc, h, w, round_to(dtype, 2.0));
      });
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(shape, [&](int n, int cc, int h, int w) {
      const double a = value_of(dtype, load_bits(chip, k.src0, n, cc, h, w));
      const double b = two_tensors(op) ? value_of(dtype, load_bits(chip, k.src1, n, cc, h, w)) : 0.0;
      const double d = value_of(dtype, load_bits(chip, k.dst, n, cc, h, w));
      const uint32_t bits = reference(op, dtype, a, b, c, d);
      std::memcpy(expected.data() + offset_of(chip, k.dst, n, cc, h, w), &bits, esize(dtype));
    });

    ASSERT_EQ(cmodel_run(fp_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return std::string(op_name(op)) + " dtype " + std::to_string(dtype) + " in_place " +
             std::to_string(in_place) + " iteration " + std::to_string(iter);
    });
  }
}

// ---- division: special values, num_iter, costs ---------------------------------

struct DivCase {
  double a, b;
};

struct SpecialsArg {
  data_type_t dtype;
  Tensor dst, src0, src1;
  int num_iter;
};

void specials_kernel(const void *arg) {
  const auto &k = *static_cast<const SpecialsArg *>(arg);
  tpu_bdc_fp_tunable_div(k.dst.addr, k.src0.addr, k.src1.addr, &k.dst.shape, nullptr, nullptr, nullptr, k.dtype,
                         k.num_iter);
}

TEST_P(BdcFpArith, DivisionFollowsIeeeForSpecialValues) {
  const Chip chip = local_model::chip(GetParam());
  const double inf = INFINITY;
  const std::vector<DivCase> cases = {
      {1, 0},   {-1, 0},    {1, -0.0},   {0, 0},       {-0.0, 5},  {inf, inf}, {inf, 2}, {-3, inf},
      {1, 3},   {2, 3},     {-7, 9},     {1e-30, 1e10}, {1e30, 1e-10}, {65504, 0.5}, {1e-7, 3e4}, {0.1, 0.3},
  };
  for (data_type_t dtype : {DT_FP32, DT_FP16, DT_BFP16})
    for (int num_iter : {1, 2, 3, 4}) {
      SCOPED_TRACE(std::to_string(dtype) + " num_iter " + std::to_string(num_iter));
      const dim4 shape = {1, 2, 1, int(cases.size())};
      SpecialsArg k{dtype, aligned(chip, 0, 0, shape, dtype), aligned(chip, 0, 4096, shape, dtype),
                    aligned(chip, 0, 8192, shape, dtype), num_iter};
      for (int c = 0; c < 2; ++c)
        for (int i = 0; i < int(cases.size()); ++i) {
          store_bits(chip, k.src0, 0, c, 0, i, round_to(dtype, cases[size_t(i)].a));
          store_bits(chip, k.src1, 0, c, 0, i, round_to(dtype, cases[size_t(i)].b));
        }
      ASSERT_EQ(cmodel_run(specials_kernel, &k), 0) << cmodel_last_error();
      for (int c = 0; c < 2; ++c)
        for (int i = 0; i < int(cases.size()); ++i) {
          const double a = value_of(dtype, load_bits(chip, k.src0, 0, c, 0, i));
          const double b = value_of(dtype, load_bits(chip, k.src1, 0, c, 0, i));
          const uint32_t got = load_bits(chip, k.dst, 0, c, 0, i);
          SCOPED_TRACE(std::to_string(a) + " / " + std::to_string(b));
          if (std::isnan(a / b))
            EXPECT_TRUE(std::isnan(value_of(dtype, got))) << std::hex << got;
          else
            EXPECT_EQ(got, round_to(dtype, a / b));
        }
    }
}

void bad_iterations_kernel(const void *arg) {
  const int num_iter = *static_cast<const int *>(arg);
  const dim4 shape = {1, 1, 1, 4};
  tpu_bdc_fp32_tunable_div_C(0, 256, 2.0f, &shape, nullptr, nullptr, num_iter);
}

TEST_P(BdcFpArith, TunableDivisionTakesOneToFourIterations) {
  int zero = 0, negative = -2, five = 5;
  EXPECT_NE(cmodel_run(bad_iterations_kernel, &zero), 0);
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("tpu_bdc_fp32_tunable_div_C: num_iter 0 returns the hardware's bare reciprocal seed"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("[unsupported]"), std::string::npos) << m;
  EXPECT_NE(cmodel_run(bad_iterations_kernel, &negative), 0);
  m = cmodel_last_error();
  EXPECT_NE(m.find("tpu_bdc_fp32_tunable_div_C: num_iter -2 is negative"), std::string::npos) << m;
  EXPECT_NE(cmodel_run(bad_iterations_kernel, &five), 0);
  m = cmodel_last_error();
  EXPECT_NE(m.find("tpu_bdc_fp32_tunable_div_C: num_iter 5 is above 4"), std::string::npos) << m;
}

struct CostArg {
  int variant;  // 0: fp32_div, 1..: tunable with that many iterations
};

void cost_kernel(const void *arg) {
  const int v = static_cast<const CostArg *>(arg)->variant;
  const dim4 shape = {2, 64, 8, 16};
  if (v == 0) tpu_bdc_fp32_div(0, 32768, 65536, &shape, nullptr, nullptr, nullptr);
  else tpu_bdc_fp32_tunable_div(0, 32768, 65536, &shape, nullptr, nullptr, nullptr, v);
}

TEST_P(BdcFpArith, DivisionCostGrowsWithIterations) {
  // The operands' values do not matter here: host pointers mark them written.
  for (int npu = 0; npu < tpu_npu_num(); ++npu) (void)tpu_local_mem_addr(npu, 32768);
  auto cycles = [](int variant) {
    CostArg a{variant};
    EXPECT_EQ(cmodel_run(cost_kernel, &a), 0) << cmodel_last_error();
    return nlohmann::json::parse(cmodel_last_run_stats()).at("engines").at("bdc").at("cycles").get<double>();
  };
  const double plain = cycles(0), one = cycles(1), three = cycles(3), four = cycles(4);
  EXPECT_EQ(plain, three);  // the non-tunable division stands for 3 steps
  EXPECT_LT(one, three);
  EXPECT_LT(three, four);
}

// ---- checks ---------------------------------------------------------------------------

#define EXPECT_RUN_FAILS_WITH(kernel, arg, text)                        \
  do {                                                                  \
    EXPECT_NE(cmodel_run(kernel, arg), 0);                              \
    const std::string m = cmodel_last_error();                          \
    EXPECT_NE(m.find(text), std::string::npos) << m;                    \
  } while (0)

void mismatched_npu_kernel(const void *) {
  const dim4 shape = {1, 4, 2, 2};
  tpu_bdc_fp_add(0, LOCAL_MEM_SIZE, 2 * 4096, &shape, nullptr, nullptr, nullptr, DT_FP32);
}

TEST_P(BdcFpArith, OperandsMustStartOnTheSameNpu) {
  EXPECT_RUN_FAILS_WITH(mismatched_npu_kernel, nullptr, "tpu_bdc_fp_add: dst starts on NPU 0 but src0 on NPU 1");
}

void mac_npu_kernel(const void *) {
  const dim4 shape = {1, 4, 2, 2};
  tpu_bdc_fp32_mac(0, 4096, 2 * LOCAL_MEM_SIZE + 8192, &shape, nullptr, nullptr, nullptr);
}

TEST_P(BdcFpArith, MacOperandsMustStartOnTheSameNpu) {
  EXPECT_RUN_FAILS_WITH(mac_npu_kernel, nullptr, "tpu_bdc_fp32_mac: dst starts on NPU 0 but src1 on NPU 2");
}

void div_npu_kernel(const void *) {
  const dim4 shape = {1, 4, 2, 2};
  scalar_t C{};
  C.f32 = 2;
  tpu_bdc_fp_C_div(3 * LOCAL_MEM_SIZE, 4096, C, &shape, nullptr, nullptr, DT_FP32);
}

TEST_P(BdcFpArith, DivisionOperandsMustStartOnTheSameNpu) {
  EXPECT_RUN_FAILS_WITH(div_npu_kernel, nullptr, "tpu_bdc_fp_C_div: dst starts on NPU 3 but src on NPU 0");
}

void int_dtype_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  tpu_bdc_fp_mul(0, 256, 512, &shape, nullptr, nullptr, nullptr, DT_INT16);
}
void int_div_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  tpu_bdc_fp_tunable_div(0, 256, 512, &shape, nullptr, nullptr, nullptr, DT_UINT8, 2);
}
void int_square_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  tpu_bdc_fp_square(0, 256, &shape, nullptr, nullptr, DT_INT32);
}
void int_diff_abs_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  scalar_t C{};
  tpu_bdc_fp_diff_abs_C(0, 256, C, &shape, nullptr, nullptr, DT_INT8);
}

TEST_P(BdcFpArith, RejectsIntegerDtypes) {
  const std::string allowed = " is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16";
  EXPECT_RUN_FAILS_WITH(int_dtype_kernel, nullptr, "tpu_bdc_fp_mul: ");
  EXPECT_RUN_FAILS_WITH(int_dtype_kernel, nullptr, "dtype DT_INT16" + allowed);
  EXPECT_RUN_FAILS_WITH(int_div_kernel, nullptr, "tpu_bdc_fp_tunable_div: ");
  EXPECT_RUN_FAILS_WITH(int_div_kernel, nullptr, "dtype DT_UINT8" + allowed);
  EXPECT_RUN_FAILS_WITH(int_square_kernel, nullptr, "tpu_bdc_fp_square: ");
  EXPECT_RUN_FAILS_WITH(int_square_kernel, nullptr, "dtype DT_INT32" + allowed);
  EXPECT_RUN_FAILS_WITH(int_diff_abs_kernel, nullptr, "tpu_bdc_fp_diff_abs_C: ");
  EXPECT_RUN_FAILS_WITH(int_diff_abs_kernel, nullptr, "dtype DT_INT8" + allowed);
}

void misaligned_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  tpu_bdc_fp_add(0, 4, 4096, &shape, nullptr, nullptr, nullptr, DT_FP32);
}
void misaligned_mac_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  tpu_bdc_fp32_mac_C(8, 4096, 1.0f, &shape, nullptr, nullptr);
}
void misaligned_div_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  const dim4 stride = {4, 4, 4, 1};
  tpu_bdc_fp32_div(0, 4096, 8194, &shape, nullptr, nullptr, &stride);  // 2 bytes into an fp32
}

TEST_P(BdcFpArith, AlignedLayoutNeedsAlignedAddress) {
  EXPECT_RUN_FAILS_WITH(misaligned_kernel, nullptr, "tpu_bdc_fp_add: src0 local address 0x4 uses the aligned layout");
  EXPECT_RUN_FAILS_WITH(misaligned_mac_kernel, nullptr,
                        "tpu_bdc_fp32_mac_C: dst local address 0x8 uses the aligned layout");
  EXPECT_RUN_FAILS_WITH(misaligned_div_kernel, nullptr,
                        "tpu_bdc_fp32_div: src1 local address 0x2002 is not a multiple of the 4-byte size");
}

void null_shape_kernel(const void *) { tpu_bdc_fp_square(0, 4096, nullptr, nullptr, nullptr, DT_FP32); }

TEST_P(BdcFpArith, NullShapeIsRejected) {
  EXPECT_RUN_FAILS_WITH(null_shape_kernel, nullptr, "tpu_bdc_fp_square: shape is a null pointer");
}

void zero_dim_kernel(const void *) {
  const dim4 shape = {1, 1, 0, 2};
  tpu_bdc_fp_tunable_C_div(0, 4096, scalar_t{}, &shape, nullptr, nullptr, DT_BFP16, 3);
}

TEST_P(BdcFpArith, ShapeDimsMustBeInRange) {
  EXPECT_RUN_FAILS_WITH(zero_dim_kernel, nullptr, "tpu_bdc_fp_tunable_C_div: dst shape [1, 1, 0, 2]: h = 0");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcFpArith, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
