// bdc_math_test: square roots, reciprocals and the fp32 transcendental
// functions (cmodel/bdc/math.h): exp, expm1, log, log1p, logx, sigmoid,
// silu, tanh, erf, erfc, gelu, gelu_fast, softplus, softsign, elu, swish,
// mish, sinh, cosh, pow, pow_C, C_pow, and rsqrt / sqrt / reciprocal in
// their fp32_, fp_ and tunable forms.
//
// The reference is long double <cmath> (64-bit significand), written with
// formulas of its own where the emulator's avoid cancellation differently.
// Accuracy is checked as an explicit distance: within 2 ulp of the exact
// value (the long double one) or 1e-6 relative, whichever is looser; the
// largest distance seen per function is printed. fp16 / bf16 and the fp32
// sqrt / reciprocal results must be the correctly rounded value exactly.
// Random shapes, start NPU != 0 (src, dst and work buffers on one NPU, the
// tables on NPU 0), in-place calls, both chips; the whole local memory is
// compared: only dst and the work buffers may change. Special values have
// their own cases, and every check fires with its message.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;

enum class F {
  exp, expm1, log, log1p, logx, sigmoid, silu, tanh, erf, erfc, gelu, gelu_fast,
  softplus, softsign, elu, swish, mish, sinh, cosh, pow, pow_C, C_pow, count
};

const char *f_name(F f) {
  static const char *names[] = {"exp",      "expm1",    "log",   "log1p",    "logx", "sigmoid", "silu", "tanh",
                                "erf",      "erfc",     "gelu",  "gelu_fast", "softplus", "softsign", "elu", "swish",
                                "mish",     "sinh",     "cosh",  "pow",      "pow_C", "C_pow"};
  return names[int(f)];
}

int work_buffers(F f) {
  switch (f) {
    case F::log: case F::log1p: case F::logx: return 1;
    case F::erf: case F::erfc: return 3;
    case F::gelu: return 4;
    case F::softsign: return 0;
    default: return 2;
  }
}

// ---- tables in local memory (NPU 0, top 4 KiB) -----------------------------------------------

struct Tables {
  local_addr_t exp_coeff, exp_table, log_coeff, erf_coeff;
};

Tables tables_at(const Chip &chip) {
  const uint32_t base = chip.lmem - 4096;
  return {base, base + 64, base + 832, base + 896};
}

void load_tables(const Tables &t) {
  tpu_bdc_load_fp32_exp_coeff(t.exp_coeff);
  tpu_bdc_load_fp32_exp_table(t.exp_table);
  tpu_bdc_load_fp32_log_coeff(t.log_coeff);
  tpu_bdc_load_fp32_erf_coeff(t.erf_coeff);
}

struct MathCall {
  F f;
  local_addr_t dst, src, src1, work[4];
  Tables t;
  float param;
  dim4 shape;
  bool load = true;
};

void call(const MathCall &k) {
  const dim4 *s = &k.shape;
  const auto d = k.dst, x = k.src, w0 = k.work[0], w1 = k.work[1], w2 = k.work[2], w3 = k.work[3];
  const Tables &t = k.t;
  switch (k.f) {
    case F::exp: tpu_bdc_fp32_exp(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::expm1: tpu_bdc_fp32_expm1(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::log: tpu_bdc_fp32_log(d, x, w0, t.log_coeff, s); break;
    case F::log1p: tpu_bdc_fp32_log1p(d, x, w0, t.log_coeff, s); break;
    case F::logx: tpu_bdc_fp32_logx(d, x, w0, t.log_coeff, s, k.param); break;
    case F::sigmoid: tpu_bdc_fp32_sigmoid(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::silu: tpu_bdc_fp32_silu(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::tanh: tpu_bdc_fp32_tanh(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::erf: tpu_bdc_fp32_erf(d, x, w0, w1, w2, t.exp_coeff, t.erf_coeff, t.exp_table, s); break;
    case F::erfc: tpu_bdc_fp32_erfc(d, x, w0, w1, w2, t.exp_coeff, t.erf_coeff, t.exp_table, s); break;
    case F::gelu: tpu_bdc_fp32_gelu(d, x, w0, w1, w2, w3, t.exp_coeff, t.erf_coeff, t.exp_table, s); break;
    case F::gelu_fast: tpu_bdc_fp32_gelu_fast(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::softplus: tpu_bdc_fp32_softplus(d, x, w0, w1, t.exp_coeff, t.log_coeff, t.exp_table, s, k.param); break;
    case F::softsign: tpu_bdc_fp32_softsign(d, x, s); break;
    case F::elu: tpu_bdc_fp32_elu(d, x, w0, w1, t.exp_coeff, t.exp_table, k.param, s); break;
    case F::swish: tpu_bdc_fp32_swish(d, x, w0, w1, t.exp_coeff, t.exp_table, k.param, s); break;
    case F::mish: tpu_bdc_fp32_mish(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::sinh: tpu_bdc_fp32_sinh(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::cosh: tpu_bdc_fp32_cosh(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::pow: tpu_bdc_fp32_pow(d, x, k.src1, w0, w1, t.exp_coeff, t.log_coeff, t.exp_table, s); break;
    case F::pow_C: tpu_bdc_fp32_pow_C(d, x, w0, w1, t.exp_coeff, t.log_coeff, t.exp_table, k.param, s); break;
    case F::C_pow: tpu_bdc_fp32_C_pow(d, x, w0, w1, t.exp_coeff, t.exp_table, k.param, s); break;
    case F::count: break;
  }
}

void math_kernel(const void *arg) {
  const auto &k = *static_cast<const MathCall *>(arg);
  if (k.load) load_tables(k.t);
  call(k);
}

// ---- the reference --------------------------------------------------------------------------

using ld = long double;

// Exact value of f (finite inputs; infinities have their own test).
ld reference(F f, ld x, ld y, ld p) {
  switch (f) {
    case F::exp: return expl(x);
    case F::expm1: return expm1l(x);
    case F::log: return logl(x);
    case F::log1p: return log1pl(x);
    case F::logx: return logl(x) / logl(p);
    case F::sigmoid: return 1 / (1 + expl(-x));
    case F::silu: return x / (1 + expl(-x));
    case F::tanh: return tanhl(x);
    case F::erf: return erfl(x);
    case F::erfc: return erfcl(x);
    case F::gelu: return x * erfcl(-x / sqrtl(2)) / 2;
    case F::gelu_fast: {
      const ld u = sqrtl(2 / acosl(-1)) * (x + 0.044715L * x * x * x);
      return x / (1 + expl(-2 * u));  // x (1 + tanh u) / 2
    }
    case F::softplus: {
      const ld t = p * x;
      return (t > 40 ? t + log1pl(expl(-t)) : log1pl(expl(t))) / p;
    }
    case F::softsign: return x / (1 + fabsl(x));
    case F::elu: return x > 0 ? x : p * expm1l(x);
    case F::swish: return x / (1 + expl(-p * x));
    case F::mish: return x * tanhl(log1pl(expl(x)));
    case F::sinh: return sinhl(x);
    case F::cosh: return coshl(x);
    case F::pow: return powl(x, y);
    case F::pow_C: return powl(x, p);
    case F::C_pow: return powl(p, x);
    case F::count: break;
  }
  return 0;
}

// ulp_distance and within_documented (each function's documented accuracy,
// the exact value rounded once) come from bdc_helpers.h.

// ---- inputs ---------------------------------------------------------------------------------

// A finite input suited to f: mostly its interesting range, sometimes tiny
// magnitudes or any finite encoding at all.
template <typename Rng>
float random_input(Rng &rng, F f, int operand) {
  auto uni = [&](double lo, double hi) { return float(std::uniform_real_distribution<double>(lo, hi)(rng)); };
  const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
  if (kind == 0) return any_finite(rng);
  if (kind == 1) return uni(-1, 1) * std::ldexp(1.0f, -std::uniform_int_distribution<int>(10, 140)(rng));
  auto positive_wide = [&] { return std::ldexp(uni(1, 2), std::uniform_int_distribution<int>(-149, 127)(rng)); };
  switch (f) {
    case F::exp: case F::expm1: return kind < 5 ? uni(-2, 2) : uni(-110, 95);
    case F::log: case F::logx: return kind == 2 ? uni(0.5, 2) : kind == 3 ? -positive_wide() : positive_wide();
    case F::log1p: return kind < 5 ? uni(-1, 3) : positive_wide();
    case F::erf: case F::erfc: return uni(-12, 12);
    case F::sinh: case F::cosh: return kind < 5 ? uni(-3, 3) : uni(-95, 95);
    case F::pow:
      if (operand == 1) return kind < 6 ? uni(-30, 30) : float(std::uniform_int_distribution<int>(-9, 9)(rng));
      return kind == 2 ? -float(std::uniform_int_distribution<int>(1, 9)(rng)) : kind < 6 ? uni(0, 10) : positive_wide();
    case F::pow_C: return kind < 4 ? uni(-10, 10) : positive_wide();
    case F::C_pow: return uni(-40, 40);
    default: return kind < 6 ? uni(-8, 8) : uni(-120, 120);
  }
}

template <typename Rng>
float random_param(Rng &rng, F f) {
  auto pick = [&](std::initializer_list<float> v) {
    return v.begin()[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  switch (f) {
    case F::logx: return pick({2.0f, 10.0f, 0.5f, 3.7f, float(M_E), 1e-3f});
    case F::softplus: return pick({1.0f, 2.0f, 0.5f, -1.0f, 10.0f});
    case F::elu: return pick({1.0f, 0.1f, 1.6732632f, 3.0f});
    case F::swish: return pick({1.0f, 1.702f, 0.25f, -2.0f, 0.0f});
    case F::pow_C: return pick({2.0f, 0.5f, -1.0f, 3.0f, -2.5f, 1.0f / 3, 0.0f, 7.25f});
    case F::C_pow: return pick({2.0f, 10.0f, 0.5f, float(M_E), 1.0001f, 123.0f, -2.0f});
    default: return 0;
  }
}

class BdcMath : public local_model::ChipTest {};

TEST_P(BdcMath, RandomInputsAreWithinTheirDocumentedAccuracy) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const Chip chip = local_model::chip(GetParam());
  std::map<std::string, double> worst;
  std::vector<uint8_t> before, expected;  // reused: 16 MiB images on bm1684x
  for (int iter = 0; iter < test::rounds(8 * int(F::count)); ++iter) {
    const F f = F(iter % int(F::count));
    const dim4 shape = {seeded.uniform(1, 2), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 4),
                        seeded.uniform(1, 40)};
    const int npu = seeded.uniform(1, chip.npu - 1);
    const uint32_t region = (aligned_bytes(chip, npu, shape, DT_FP32) + 63) / 64 * 64;
    auto at = [&](int slot) { return aligned(chip, npu, uint32_t(slot) * region, shape, DT_FP32); };
    // Slots in a random order: dst, src, src1, work0..3.
    std::vector<int> slots = {0, 1, 2, 3, 4, 5, 6};
    std::shuffle(slots.begin(), slots.end(), rng);
    const Tensor dst = at(slots[0]), src1 = at(slots[2]);
    const bool in_place = f != F::pow && seeded.uniform(0, 4) == 0;
    const Tensor src = in_place ? dst : at(slots[1]);
    std::vector<Tensor> work;
    for (int k = 0; k < work_buffers(f); ++k) work.push_back(at(slots[size_t(3 + k)]));
    MathCall k{.f = f, .dst = dst.addr, .src = src.addr, .src1 = src1.addr, .work = {}, .t = tables_at(chip),
               .param = random_param(rng, f), .shape = shape};
    for (size_t i = 0; i < work.size(); ++i) k.work[i] = work[i].addr;

    std::vector<float> x, y;
    for_each_index(shape, [&](int n, int c, int h, int w) {
      x.push_back(random_input(rng, f, 0));
      set<float>(chip, src, n, c, h, w, x.back());
      y.push_back(random_input(rng, f, 1));
      set<float>(chip, src1, n, c, h, w, y.back());
      for (const Tensor &t : work) set<uint32_t>(chip, t, n, c, h, w, sentinel);
    });
    // Tables are loaded by the kernel; run once to put them in place so the
    // snapshot already holds them.
    {
      MathCall load_only = k;
      load_only.f = F::count;
      ASSERT_EQ(cmodel_run(math_kernel, &load_only), 0) << cmodel_last_error();
      before = snapshot(chip);
    }
    ASSERT_EQ(cmodel_run(math_kernel, &k), 0) << cmodel_last_error();

    // Only dst and the work buffers changed.
    expected.assign(before.begin(), before.end());
    accept_written(expected, chip, dst);
    for (const Tensor &t : work) accept_written(expected, chip, t);
    const std::string what = std::string(f_name(f)) + " param " + std::to_string(k.param) + " iteration " +
                             std::to_string(iter) + (in_place ? " in place" : "");
    expect_local_memory(chip, expected, [&] { return what; });

    size_t i = 0, failures = 0;
    double &worst_f = worst[f_name(f)];
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const float got = get<float>(chip, dst, n, c, h, w);
      const ld exact = reference(f, x[i], y[i], k.param);
      const double d = ulp_distance(got, exact);
      if (!std::isnan(d)) worst_f = std::max(worst_f, d);
      if (!within_documented(f_name(f), got, exact) && failures++ < 5)
        ADD_FAILURE() << what << ": " << f_name(f) << "(" << std::hexfloat << x[i]
                      << (f == F::pow ? ", " + std::to_string(y[i]) : std::string()) << ") = " << got << ", expected "
                      << double(exact) << std::defaultfloat << " (" << d << " ulp)";
      for (size_t kk = 0; kk < work.size(); ++kk)
        if (get<uint32_t>(chip, work[kk], n, c, h, w) == sentinel && failures++ < 5)
          ADD_FAILURE() << what << ": work" << kk << " element was left untouched";
      if (f == F::exp) {  // documented intermediates: n and r with x = n + r, bit for bit (-0 included)
        const double nn = std::clamp(std::nearbyint(double(x[i])), -103.0, 88.0);
        EXPECT_EQ(get<uint32_t>(chip, work[0], n, c, h, w), bits_of(float(nn))) << x[i];
        EXPECT_EQ(get<uint32_t>(chip, work[1], n, c, h, w), bits_of(float(double(x[i]) - nn))) << x[i];
      }
      ++i;
    });
  }
  expect_worst_within_documented(GetParam(), worst);
}

// ---- special values -------------------------------------------------------------------------

struct Special {
  F f;
  float param, x, y;
  float expected;  // NaN: any NaN; zeros: sign checked
};

TEST_P(BdcMath, SpecialValues) {
  const Chip chip = local_model::chip(GetParam());
  const float inf = INFINITY, nan = NAN, dmin = std::numeric_limits<float>::denorm_min();
  const std::vector<Special> cases = {
      {F::exp, 0, nan, 0, nan}, {F::exp, 0, inf, 0, inf}, {F::exp, 0, -inf, 0, 0.0f}, {F::exp, 0, 0, 0, 1},
      {F::exp, 0, -0.0f, 0, 1}, {F::exp, 0, 89, 0, inf}, {F::exp, 0, -104, 0, 0.0f},
      {F::exp, 0, -100, 0, float(expl(-100))}, {F::exp, 0, 88.7f, 0, float(expl(88.7f))},
      {F::expm1, 0, -inf, 0, -1}, {F::expm1, 0, inf, 0, inf}, {F::expm1, 0, -0.0f, 0, -0.0f},
      {F::expm1, 0, 1e-10f, 0, float(expm1l(1e-10f))},
      {F::log, 0, 0, 0, -inf}, {F::log, 0, -0.0f, 0, -inf}, {F::log, 0, -1, 0, nan}, {F::log, 0, inf, 0, inf},
      {F::log, 0, -inf, 0, nan}, {F::log, 0, 1, 0, 0.0f}, {F::log, 0, nan, 0, nan},
      {F::log, 0, dmin, 0, float(logl(dmin))},
      {F::log1p, 0, -1, 0, -inf}, {F::log1p, 0, -2, 0, nan}, {F::log1p, 0, -0.0f, 0, -0.0f},
      {F::log1p, 0, inf, 0, inf}, {F::log1p, 0, 1e-30f, 0, 1e-30f},
      {F::logx, 2, 8, 0, 3}, {F::logx, 2, 0, 0, -inf}, {F::logx, 2, -1, 0, nan}, {F::logx, 1, 2, 0, inf},
      {F::logx, 1, 1, 0, nan}, {F::logx, 10, 1000, 0, float(logl(1000.0L) / logl(10.0L))},
      {F::sigmoid, 0, -inf, 0, 0.0f}, {F::sigmoid, 0, inf, 0, 1}, {F::sigmoid, 0, nan, 0, nan},
      {F::sigmoid, 0, 0, 0, 0.5f}, {F::sigmoid, 0, -200, 0, 0.0f}, {F::sigmoid, 0, -100, 0, float(expl(-100))},
      {F::silu, 0, -inf, 0, -0.0f}, {F::silu, 0, inf, 0, inf}, {F::silu, 0, -0.0f, 0, -0.0f}, {F::silu, 0, nan, 0, nan},
      {F::tanh, 0, inf, 0, 1}, {F::tanh, 0, -inf, 0, -1}, {F::tanh, 0, -0.0f, 0, -0.0f}, {F::tanh, 0, nan, 0, nan},
      {F::erf, 0, inf, 0, 1}, {F::erf, 0, -inf, 0, -1}, {F::erf, 0, -0.0f, 0, -0.0f}, {F::erf, 0, nan, 0, nan},
      {F::erfc, 0, -inf, 0, 2}, {F::erfc, 0, inf, 0, 0.0f}, {F::erfc, 0, 10, 0, float(erfcl(10))},
      {F::erfc, 0, 0, 0, 1},
      {F::gelu, 0, -inf, 0, -0.0f}, {F::gelu, 0, inf, 0, inf}, {F::gelu, 0, -0.0f, 0, -0.0f},
      {F::gelu, 0, 1, 0, 0.8413447460685429f}, {F::gelu, 0, nan, 0, nan},
      {F::gelu_fast, 0, -inf, 0, -0.0f}, {F::gelu_fast, 0, inf, 0, inf}, {F::gelu_fast, 0, nan, 0, nan},
      {F::softplus, 1, -inf, 0, 0.0f}, {F::softplus, 1, inf, 0, inf}, {F::softplus, 1, nan, 0, nan},
      {F::softplus, 1, 0, 0, float(logl(2))}, {F::softplus, 1, 100, 0, 100}, {F::softplus, 0, 3, 0, inf},
      {F::softsign, 0, inf, 0, 1}, {F::softsign, 0, -inf, 0, -1}, {F::softsign, 0, -0.0f, 0, -0.0f},
      {F::softsign, 0, nan, 0, nan}, {F::softsign, 0, 3, 0, 0.75f},
      {F::elu, 1.5f, -inf, 0, -1.5f}, {F::elu, 1.5f, inf, 0, inf}, {F::elu, 1.5f, -0.0f, 0, -0.0f},
      {F::elu, 1.5f, nan, 0, nan}, {F::elu, 1.5f, 2, 0, 2},
      {F::swish, 2, -inf, 0, -0.0f}, {F::swish, 2, inf, 0, inf}, {F::swish, 0, inf, 0, inf},
      {F::swish, 0, 3, 0, 1.5f}, {F::swish, 2, nan, 0, nan},
      {F::mish, 0, -inf, 0, -0.0f}, {F::mish, 0, inf, 0, inf}, {F::mish, 0, 0, 0, 0.0f}, {F::mish, 0, nan, 0, nan},
      {F::mish, 0, 1e30f, 0, 1e30f},
      {F::sinh, 0, inf, 0, inf}, {F::sinh, 0, -inf, 0, -inf}, {F::sinh, 0, 100, 0, inf}, {F::sinh, 0, -0.0f, 0, -0.0f},
      {F::cosh, 0, -inf, 0, inf}, {F::cosh, 0, 0, 0, 1}, {F::cosh, 0, nan, 0, nan},
      {F::pow, 0, 2, 3, 8}, {F::pow, 0, -2, 3, -8}, {F::pow, 0, -8, 1.0f / 3, nan}, {F::pow, 0, 0, -1, inf},
      {F::pow, 0, nan, 0, 1}, {F::pow, 0, 1, nan, 1}, {F::pow, 0, -1, inf, 1}, {F::pow, 0, 0.5f, inf, 0.0f},
      {F::pow, 0, 2, 200, inf}, {F::pow, 0, 2, -200, 0.0f}, {F::pow, 0, 2, -140, std::ldexp(1.0f, -140)},
      {F::pow, 0, -0.0f, 3, -0.0f},
      {F::pow_C, 0.5f, -1, 0, nan}, {F::pow_C, 0.5f, 4, 0, 2}, {F::pow_C, 0.5f, inf, 0, inf},
      {F::pow_C, 2, -3, 0, 9}, {F::pow_C, 0, nan, 0, 1},
      {F::C_pow, 2, 10, 0, 1024}, {F::C_pow, 2, -inf, 0, 0.0f}, {F::C_pow, 2, inf, 0, inf},
      {F::C_pow, 2, nan, 0, nan}, {F::C_pow, 2, 0, 0, 1}, {F::C_pow, -2, 3, 0, -8},
  };
  for (const Special &s : cases) {
    SCOPED_TRACE(std::string(f_name(s.f)) + " param " + std::to_string(s.param) + " x " + std::to_string(s.x) +
                 " y " + std::to_string(s.y));
    const dim4 shape = {1, 3, 1, 5};
    const int npu = chip.npu - 2;  // channels wrap to NPU 0
    MathCall k{.f = s.f, .dst = 0, .src = 0, .src1 = 0, .work = {}, .t = tables_at(chip), .param = s.param,
               .shape = shape};
    const Tensor dst = aligned(chip, npu, 0, shape, DT_FP32), src = aligned(chip, npu, 1024, shape, DT_FP32),
                 src1 = aligned(chip, npu, 2048, shape, DT_FP32);
    k.dst = dst.addr, k.src = src.addr, k.src1 = src1.addr;
    for (int w = 0; w < 4; ++w) k.work[w] = aligned(chip, npu, uint32_t(3072 + 1024 * w), shape, DT_FP32).addr;
    for_each_index(shape, [&](int n, int c, int h, int w) {
      set<float>(chip, src, n, c, h, w, s.x);
      set<float>(chip, src1, n, c, h, w, s.y);
    });
    ASSERT_EQ(cmodel_run(math_kernel, &k), 0) << cmodel_last_error();
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const float got = get<float>(chip, dst, n, c, h, w);
      // The expected values are the exact results rounded once (0^0 = 1,
      // pow(2, 3) = 8, ...): every function promises that, so they must
      // match bit for bit (zeros with their sign).
      if (std::isnan(s.expected))
        EXPECT_TRUE(std::isnan(got)) << got;
      else
        EXPECT_EQ(bits_of(got), bits_of(s.expected)) << std::hexfloat << got << " vs " << s.expected;
    });
  }
}

// ---- rsqrt, sqrt, reciprocal ----------------------------------------------------------------

enum class S { rsqrt, sqrt, reciprocal };
enum class Form { fp32, fp32_tunable, fp, fp_tunable };

struct SfuCall {
  S op;
  Form form;
  Tensor dst, src;
  int num_iter;
};

void sfu_kernel(const void *arg) {
  const auto &k = *static_cast<const SfuCall *>(arg);
  const dim4 *s = &k.dst.shape;
  const data_type_t t = k.dst.dtype;
  const auto d = k.dst.addr, x = k.src.addr;
  const dim4 *ds = k.dst.api_stride(), *xs = k.src.api_stride();
  const int it = k.num_iter;
  switch (k.op) {
    case S::rsqrt:
      if (k.form == Form::fp32) tpu_bdc_fp32_rsqrt(d, x, s);
      if (k.form == Form::fp32_tunable) tpu_bdc_fp32_tunable_rsqrt(d, x, s, it);
      if (k.form == Form::fp) tpu_bdc_fp_rsqrt(d, x, s, t);
      if (k.form == Form::fp_tunable) tpu_bdc_fp_tunable_rsqrt(d, x, s, t, it);
      break;
    case S::sqrt:
      if (k.form == Form::fp32) tpu_bdc_fp32_sqrt(d, x, s);
      if (k.form == Form::fp32_tunable) tpu_bdc_fp32_tunable_sqrt(d, x, s, it);
      if (k.form == Form::fp) tpu_bdc_fp_sqrt(d, x, s, t);
      if (k.form == Form::fp_tunable) tpu_bdc_fp_tunable_sqrt(d, x, s, t, it);
      break;
    case S::reciprocal:
      if (k.form == Form::fp32) tpu_bdc_fp32_reciprocal(d, x, s, ds, xs);
      if (k.form == Form::fp32_tunable) tpu_bdc_fp32_tunable_reciprocal(d, x, s, ds, xs, it);
      if (k.form == Form::fp) tpu_bdc_fp_reciprocal(d, x, s, ds, xs, t);
      if (k.form == Form::fp_tunable) tpu_bdc_fp_tunable_reciprocal(d, x, s, ds, xs, t, it);
      break;
  }
}

// Rounds v to nearest-even in a binary format with `p` significant bits and
// exponents down to `emin` (subnormals below), `emax` the largest exponent;
// returns it as a long double (infinite on overflow).
ld round_format(ld v, int p, int emin, int emax) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  int e;
  frexpl(fabsl(v), &e);  // leading bit weight 2^(e-1)
  const int quantum = std::max(e - 1, emin) - (p - 1);
  const ld r = nearbyintl(ldexpl(fabsl(v), -quantum));  // FE_TONEAREST: ties to even
  const ld mag = ldexpl(r, quantum);
  if (mag >= ldexpl(1, emax + 1)) return copysignl(INFINITY, v);
  return copysignl(mag, v);
}

// encode and decode come from bdc_helpers.h; the rounded value is exactly
// representable in t (or NaN), so float() does not round it again.
uint32_t correctly_rounded(data_type_t t, ld v) {
  if (t == DT_FP32) return encode(t, float(round_format(v, 24, -126, 127)));
  if (t == DT_FP16) return encode(t, float(round_format(v, 11, -14, 15)));
  return encode(t, float(round_format(v, 8, -126, 127)));
}

template <typename Rng>
uint32_t random_encoding(Rng &rng, data_type_t t, S op) {
  const bool wide = t == DT_FP32;
  for (;;) {
    uint32_t u = uint32_t(rng()) & (wide ? 0xffffffffu : 0xffffu);
    const int kind = std::uniform_int_distribution<int>(0, 5)(rng);
    if (kind == 0) u = correctly_rounded(t, std::uniform_real_distribution<double>(0, 10)(rng));
    if (op != S::reciprocal && kind < 5) u &= wide ? 0x7fffffffu : 0x7fffu;  // mostly non-negative
    if (std::isfinite(decode(t, u))) return u;
  }
}

ld sfu_reference(S op, ld x) {
  switch (op) {
    case S::rsqrt: return 1 / sqrtl(x);
    case S::sqrt: return sqrtl(x);
    case S::reciprocal: return 1 / x;
  }
  return 0;
}

TEST_P(BdcMath, RsqrtSqrtReciprocalAreCorrectlyRounded) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const Chip chip = local_model::chip(GetParam());
  const uint32_t half = chip.lmem / 2 / 64 * 64;
  int inexact_rsqrt = 0, total = 0;
  std::vector<uint8_t> expected;  // reused: 16 MiB on bm1684x
  for (int iter = 0; iter < test::rounds(240); ++iter) {  // a multiple of 12: every op and form
    const S op = S(iter % 3);
    const Form form = Form((iter / 3) % 4);
    const bool fp32_only = form == Form::fp32 || form == Form::fp32_tunable;
    const data_type_t t = fp32_only ? DT_FP32 : std::vector<data_type_t>{DT_FP32, DT_FP16, DT_BFP16}[seeded.uniform(0, 2)];
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 5),
                        seeded.uniform(1, 21)};
    const int npu = seeded.uniform(0, chip.npu - 1);
    SfuCall k{op, form, {}, {}, seeded.uniform(1, 4)};  // 1 to 4 steps (SFU-7, AR-6)
    if (op == S::reciprocal) {  // free strides
      if (!random_layout(rng, chip, npu, 0, shape, t, false, half, k.dst) ||
          !random_layout(rng, chip, npu, half, shape, t, true, half, k.src)) {
        --iter;
        continue;
      }
    } else {
      k.dst = aligned(chip, npu, 0, shape, t);
      k.src = aligned(chip, npu, half, shape, t);
    }
    const bool in_place = seeded.uniform(0, 4) == 0;
    if (in_place) k.src = k.dst;
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const uint32_t u = random_encoding(rng, t, op);
      if (t == DT_FP32) set<uint32_t>(chip, k.src, n, c, h, w, u);
      else set<uint16_t>(chip, k.src, n, c, h, w, uint16_t(u));
    });
    expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const uint32_t u = t == DT_FP32 ? get<uint32_t>(chip, k.src, n, c, h, w) : get<uint16_t>(chip, k.src, n, c, h, w);
      const uint32_t bits = correctly_rounded(t, sfu_reference(op, decode(t, u)));
      std::memcpy(expected.data() + offset_of(chip, k.dst, n, c, h, w), &bits, size_t(esize(t)));
    });
    ASSERT_EQ(cmodel_run(sfu_kernel, &k), 0) << cmodel_last_error();
    if (op == S::rsqrt) {
      // rsqrt rounds twice (1 / sqrt in double): allow 1 ulp, count them.
      for_each_index(shape, [&](int n, int c, int h, int w) {
        const size_t o = offset_of(chip, k.dst, n, c, h, w);
        uint32_t want = 0, got = 0;
        std::memcpy(&want, expected.data() + o, size_t(esize(t)));
        std::memcpy(&got, local_at(o), size_t(esize(t)));
        ++total;
        if (got != want) {
          ++inexact_rsqrt;
          EXPECT_EQ(std::max(got, want) - std::min(got, want), 1u) << "rsqrt off by more than 1 ulp";
          std::memcpy(expected.data() + o, &got, size_t(esize(t)));
        }
      });
    }
    expect_local_memory(chip, expected, [&] {
      return "op " + std::to_string(int(op)) + " form " + std::to_string(int(form)) + " dtype " + std::to_string(t) +
             " iteration " + std::to_string(iter) + (in_place ? " in place" : "");
    });
  }
  std::printf("[ accuracy ] %s rsqrt: %d of %d results 1 ulp off the correctly rounded one\n", GetParam(),
              inexact_rsqrt, total);
}

TEST_P(BdcMath, SfuSpecialValues) {
  const Chip chip = local_model::chip(GetParam());
  const float inf = INFINITY, nan = NAN;
  struct Case {
    S op;
    float x, expected;
  };
  const std::vector<Case> cases = {
      {S::rsqrt, 0, inf},         {S::rsqrt, -0.0f, -inf}, {S::rsqrt, -1, nan}, {S::rsqrt, inf, 0.0f},
      {S::rsqrt, 4, 0.5f},        {S::rsqrt, nan, nan},    {S::sqrt, -0.0f, -0.0f}, {S::sqrt, -1, nan},
      {S::sqrt, inf, inf},        {S::sqrt, 2.25f, 1.5f},  {S::reciprocal, 0, inf}, {S::reciprocal, -0.0f, -inf},
      {S::reciprocal, inf, 0.0f}, {S::reciprocal, -inf, -0.0f}, {S::reciprocal, 4, 0.25f},
      {S::reciprocal, 1e-40f, inf},  // 1e40 overflows fp32
  };
  for (data_type_t t : {DT_FP32, DT_FP16, DT_BFP16})
    for (const Case &cs : cases) {
      SCOPED_TRACE(std::to_string(t) + " op " + std::to_string(int(cs.op)) + " x " + std::to_string(cs.x));
      const dim4 shape = {1, 2, 1, 3};
      SfuCall k{cs.op, Form::fp_tunable, aligned(chip, 1, 0, shape, t), aligned(chip, 1, 4096, shape, t), 2};
      const float x = t == DT_FP32 ? cs.x : decode(t, encode(t, cs.x));
      for_each_index(shape, [&](int n, int c, int h, int w) {
        if (t == DT_FP32) set<float>(chip, k.src, n, c, h, w, x);
        else set<uint16_t>(chip, k.src, n, c, h, w, uint16_t(encode(t, x)));
      });
      ASSERT_EQ(cmodel_run(sfu_kernel, &k), 0) << cmodel_last_error();
      for_each_index(shape, [&](int n, int c, int h, int w) {
        const uint32_t raw = t == DT_FP32 ? get<uint32_t>(chip, k.dst, n, c, h, w) : get<uint16_t>(chip, k.dst, n, c, h, w);
        const float got = decode(t, raw);
        const ld exact = sfu_reference(cs.op, x);
        if (std::isnan(cs.expected)) {
          EXPECT_TRUE(std::isnan(got)) << got;
        } else if (t == DT_FP32 || cs.x != 1e-40f) {
          EXPECT_EQ(raw, correctly_rounded(t, exact)) << got;
          if (cs.expected == 0 || std::isinf(cs.expected)) {
            EXPECT_EQ(bits_of(got), bits_of(cs.expected)) << got;
          }
        }
      });
    }
}

// ---- costs (bdc_cycles comes from bdc_helpers.h) ---------------------------------------------

TEST_P(BdcMath, TunableCostGrowsWithIterations) {
  const Chip chip = local_model::chip(GetParam());
  const dim4 shape = {2, chip.npu, 8, 16};
  auto cycles = [&](Form form, int num_iter) {
    SfuCall k{S::rsqrt, form, aligned(chip, 0, 0, shape, DT_FP32), aligned(chip, 0, 32768, shape, DT_FP32), num_iter};
    for_each_index(shape, [&](int n, int c, int h, int w) { set<float>(chip, k.src, n, c, h, w, 2.0f); });
    EXPECT_EQ(cmodel_run(sfu_kernel, &k), 0) << cmodel_last_error();
    return bdc_cycles();
  };
  const double plain = cycles(Form::fp32, 0), one = cycles(Form::fp32_tunable, 1),
               three = cycles(Form::fp32_tunable, 3), four = cycles(Form::fp32_tunable, 4);
  EXPECT_EQ(plain, three);  // the non-tunable calls stand for 3 steps
  EXPECT_LT(one, three);
  EXPECT_LT(three, four);  // 4, the most the checker allows (SFU-7)
}

TEST_P(BdcMath, TranscendentalsCostMoreThanSquareRoots) {
  const Chip chip = local_model::chip(GetParam());
  const dim4 shape = {1, chip.npu, 8, 16};
  MathCall k{.f = F::exp, .dst = 0, .src = 8192, .src1 = 0, .work = {16384, 24576, 0, 0}, .t = tables_at(chip),
             .param = 0, .shape = shape, .load = false};
  for_each_index(shape, [&](int n, int c, int h, int w) {
    set<float>(chip, aligned(chip, 0, 8192, shape, DT_FP32), n, c, h, w, 1.0f);
  });
  MathCall load = k;
  load.f = F::count;
  load.load = true;
  ASSERT_EQ(cmodel_run(math_kernel, &load), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_run(math_kernel, &k), 0) << cmodel_last_error();
  const double exp_cycles = bdc_cycles();
  const nlohmann::json stats = run_stats();
  EXPECT_EQ(stats.at("commands").at("tpu_bdc_fp32_exp").get<int>(), 1);
  SfuCall s{S::sqrt, Form::fp32, aligned(chip, 0, 0, shape, DT_FP32), aligned(chip, 0, 8192, shape, DT_FP32), 0};
  ASSERT_EQ(cmodel_run(sfu_kernel, &s), 0) << cmodel_last_error();
  EXPECT_GT(exp_cycles, bdc_cycles());
}

// ---- checks (EXPECT_RUN_FAILS_WITH and hex come from bdc_helpers.h) -------------------------

// A valid exp call on NPU `npu` with tables at tables_at(); tests break one thing.
MathCall valid_call(const Chip &chip, F f, int npu) {
  const dim4 shape = {1, 5, 2, 8};
  auto at = [&](uint32_t off) { return local_addr_t(npu * chip.lmem + off); };
  return {.f = f, .dst = at(0), .src = at(1024), .src1 = at(2048), .work = {at(3072), at(4096), at(5120), at(6144)},
          .t = tables_at(chip), .param = 1, .shape = shape};
}

TEST_P(BdcMath, ValidCallsPass) {
  const Chip chip = local_model::chip(GetParam());
  for (int f = 0; f < int(F::count); ++f) {
    const MathCall k = valid_call(chip, F(f), 3);
    EXPECT_EQ(cmodel_run(math_kernel, &k), 0) << f_name(F(f)) << ": " << cmodel_last_error();
  }
}

// ---- races with the GDMA: work buffers are written, tables read ------------------------------

struct RaceArg {
  MathCall k;
  global_addr_t global;
  int target;  // 0: store work0 while exp writes it; 1: load into the exp table while exp reads it;
               // 2: store the exp table while exp reads it (no race)
};

void race_kernel(const void *arg) {
  const auto &a = *static_cast<const RaceArg *>(arg);
  load_tables(a.k.t);
  const dim4 row = {1, 1, 1, 16};
  // A copy of the table's first row, for target 1 to write back unchanged.
  tpu_gdma_cpy_L2S(a.global, a.k.t.exp_table, &row, nullptr, nullptr, DT_FP32);
  // The GDMA command first: it outlasts the BDC one.
  tpu_parallel_start();
  if (a.target == 0) tpu_gdma_cpy_L2S(a.global, a.k.work[0], &row, nullptr, nullptr, DT_FP32);
  if (a.target == 1) tpu_gdma_cpy_S2L(a.k.t.exp_table, a.global, &row, nullptr, nullptr, DT_FP32);
  if (a.target == 2) tpu_gdma_cpy_L2S(a.global, a.k.t.exp_table, &row, nullptr, nullptr, DT_FP32);
  call(a.k);
  tpu_parallel_end();
}

TEST_P(BdcMath, GdmaRacesOnWorkBuffersAndTablesAreCaught) {
  const Chip chip = local_model::chip(GetParam());
  ASSERT_EQ(cmodel_set_option("hazards", "error"), 0);
  RaceArg a{valid_call(chip, F::exp, 0), cmodel_global_alloc(4096), 0};
  a.k.load = false;
  EXPECT_RUN_FAILS_WITH(race_kernel, &a, "race inside a parallel region");
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("tpu_bdc_fp32_exp"), std::string::npos) << m;
  EXPECT_NE(m.find("tpu_gdma_cpy_L2S"), std::string::npos) << m;
  a.target = 1;
  EXPECT_RUN_FAILS_WITH(race_kernel, &a, "race inside a parallel region");
  m = cmodel_last_error();
  EXPECT_NE(m.find("tpu_gdma_cpy_S2L"), std::string::npos) << m;
  a.target = 2;  // both only read the table: no race
  EXPECT_EQ(cmodel_run(race_kernel, &a), 0) << cmodel_last_error();
}

TEST_P(BdcMath, TablesMustHaveBeenLoaded) {
  const Chip chip = local_model::chip(GetParam());
  MathCall k = valid_call(chip, F::exp, 2);
  k.load = false;  // local memory still holds its poison
  EXPECT_RUN_FAILS_WITH(math_kernel, &k,
                        "tpu_bdc_fp32_exp: coeff_addr " + hex(k.t.exp_coeff) +
                            " does not hold the fp32 exp coefficients; call tpu_bdc_load_fp32_exp_coeff(coeff_addr) "
                            "first (NPU 0 element 0 is 0xffffffff");
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("[illegal command]"), std::string::npos) << m;

  // Loaded, then one NPU's copy of the exp table damaged.
  k = valid_call(chip, F::exp, 2);
  ASSERT_EQ(cmodel_run(math_kernel, &k), 0) << cmodel_last_error();
  k.load = false;
  uint8_t *entry = local_at(size_t(chip.npu - 1) * chip.lmem + k.t.exp_table + 4 * 7);
  *entry ^= 1;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k,
                        "tpu_bdc_fp32_exp: table_addr " + hex(k.t.exp_table) +
                            " does not hold the fp32 exp table; call tpu_bdc_load_fp32_exp_table(table_addr) first "
                            "(NPU " + std::to_string(chip.npu - 1) + " element 7 is");
  *entry ^= 1;
  EXPECT_EQ(cmodel_run(math_kernel, &k), 0) << cmodel_last_error();

  // The erf family names its own parameters.
  k = valid_call(chip, F::gelu, 1);
  k.load = false;                 // every table is still loaded at its place
  k.t.erf_coeff = k.t.log_coeff;  // loaded, but the wrong table
  EXPECT_RUN_FAILS_WITH(math_kernel, &k,
                        "tpu_bdc_fp32_gelu: erf_coeff_addr " + hex(k.t.log_coeff) +
                            " does not hold the fp32 erf coefficients; call tpu_bdc_load_fp32_erf_coeff(erf_coeff_addr) "
                            "first");
  m = cmodel_last_error();
  EXPECT_NE(m.find("it holds the fp32 log coefficients instead"), std::string::npos) << m;
  k = valid_call(chip, F::pow, 1);
  k.load = false;
  k.t.log_coeff = k.t.exp_coeff;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_pow: log_coeff_addr " + hex(k.t.exp_coeff) +
                                             " does not hold the fp32 log coefficients");
  k = valid_call(chip, F::log1p, 1);
  k.load = false;
  k.t.log_coeff = k.t.erf_coeff;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_log1p: coeff_addr " + hex(k.t.erf_coeff) +
                                             " does not hold the fp32 log coefficients; call "
                                             "tpu_bdc_load_fp32_log_coeff(coeff_addr) first");
}

void exp_with_table_kernel(const void *arg) {
  const auto &k = *static_cast<const MathCall *>(arg);
  call(k);
}

TEST_P(BdcMath, TablesMustStartOnNpuZeroAligned) {
  const Chip chip = local_model::chip(GetParam());
  MathCall k = valid_call(chip, F::sigmoid, 0);
  k.t.exp_table += chip.lmem;  // NPU 1
  EXPECT_RUN_FAILS_WITH(exp_with_table_kernel, &k,
                        "tpu_bdc_fp32_sigmoid: table_addr " + hex(k.t.exp_table) +
                            " is on NPU 1; the fp32 exp table must start on NPU 0 (a [1, " +
                            std::to_string(chip.npu) + ", 1, 192] fp32 tensor, as tpu_bdc_load_fp32_exp_table writes it)");
  k = valid_call(chip, F::erf, 0);
  k.t.exp_coeff += 4;
  EXPECT_RUN_FAILS_WITH(exp_with_table_kernel, &k,
                        "tpu_bdc_fp32_erf: exp_coeff_addr local address " + hex(k.t.exp_coeff) +
                            " uses the aligned layout (NULL stride) but its offset");
}

TEST_P(BdcMath, OperandsMustStartOnTheSameNpu) {
  const Chip chip = local_model::chip(GetParam());
  MathCall k = valid_call(chip, F::exp, 2);
  k.src += chip.lmem;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_exp: dst starts on NPU 2 but src on NPU 3");
  k = valid_call(chip, F::tanh, 2);
  k.work[1] -= chip.lmem;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_tanh: dst starts on NPU 2 but work1 on NPU 1");
  k = valid_call(chip, F::log, 4);
  k.work[0] += chip.lmem;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_log: dst starts on NPU 4 but work on NPU 5");
  k = valid_call(chip, F::pow, 4);
  k.src1 += chip.lmem;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_pow: dst starts on NPU 4 but src1 on NPU 5");
}

TEST_P(BdcMath, WorkBuffersMustNotOverlapOtherOperands) {
  const Chip chip = local_model::chip(GetParam());
  const std::string scratch = "the command uses its work buffers as scratch";
  MathCall k = valid_call(chip, F::exp, 1);
  k.work[0] = k.src;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_exp: work0 at " + hex(k.work[0]));
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("overlaps src at " + hex(k.src)), std::string::npos) << m;
  EXPECT_NE(m.find(scratch), std::string::npos) << m;
  k = valid_call(chip, F::gelu, 1);
  k.work[3] = k.dst;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_gelu: work3 at " + hex(k.dst));
  m = cmodel_last_error();
  EXPECT_NE(m.find("overlaps dst at " + hex(k.dst)), std::string::npos) << m;
  k = valid_call(chip, F::erfc, 1);
  k.work[2] = k.work[0];
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_erfc: work2 at " + hex(k.work[0]));
  m = cmodel_last_error();
  EXPECT_NE(m.find("overlaps work0 at"), std::string::npos) << m;
  k = valid_call(chip, F::pow, 1);
  k.work[1] = k.src1;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "overlaps src1 at " + hex(k.src1));
  // A work buffer on the tables (NPU 0 here, where they live).
  k = valid_call(chip, F::softplus, 0);
  k.work[0] = k.t.exp_table;
  EXPECT_RUN_FAILS_WITH(exp_with_table_kernel, &k, "tpu_bdc_fp32_softplus: work0 at " + hex(k.t.exp_table));
  m = cmodel_last_error();
  EXPECT_NE(m.find("overlaps exp_table_addr at"), std::string::npos) << m;
  // The tables span every NPU: a work buffer on NPU 5 at their offset overlaps them too.
  k = valid_call(chip, F::silu, 5);
  k.work[1] = 5 * chip.lmem + k.t.exp_coeff;
  EXPECT_RUN_FAILS_WITH(exp_with_table_kernel, &k, "overlaps coeff_addr at " + hex(k.t.exp_coeff));
  // dst on a table.
  k = valid_call(chip, F::cosh, 3);
  k.dst = 3 * chip.lmem + k.t.exp_table;
  EXPECT_RUN_FAILS_WITH(exp_with_table_kernel, &k, "tpu_bdc_fp32_cosh: dst at " + hex(k.dst));
  m = cmodel_last_error();
  EXPECT_NE(m.find("overlaps table_addr at " + hex(k.t.exp_table) + " "), std::string::npos) << m;
  EXPECT_NE(m.find("writing dst would overwrite the table"), std::string::npos) << m;
  // dst == src is fine (in place), and so is src on a table (read only).
  k = valid_call(chip, F::mish, 1);
  k.src = k.dst;
  EXPECT_EQ(cmodel_run(math_kernel, &k), 0) << cmodel_last_error();
}

void misaligned_rsqrt_kernel(const void *) {
  const dim4 shape = {1, 2, 3, 4};
  tpu_bdc_fp32_rsqrt(8, 4096, &shape);
}
void bad_dtype_kernel(const void *) {
  const dim4 shape = {1, 2, 3, 4};
  tpu_bdc_fp_sqrt(0, 4096, &shape, DT_INT16);
}
void sfu_npu_kernel(const void *) {
  const dim4 shape = {1, 2, 3, 4};
  tpu_bdc_fp_reciprocal(LOCAL_MEM_SIZE, 4096, &shape, nullptr, nullptr, DT_FP16);
}
void null_shape_kernel(const void *) { tpu_bdc_fp32_sqrt(0, 4096, nullptr); }
void exp_misaligned_kernel(const void *arg) {
  MathCall k = *static_cast<const MathCall *>(arg);
  k.work[1] += 4;
  call(k);
}

TEST_P(BdcMath, OperandChecks) {
  const Chip chip = local_model::chip(GetParam());
  EXPECT_RUN_FAILS_WITH(misaligned_rsqrt_kernel, nullptr,
                        "tpu_bdc_fp32_rsqrt: dst local address 0x8 uses the aligned layout (NULL stride)");
  EXPECT_RUN_FAILS_WITH(bad_dtype_kernel, nullptr, "tpu_bdc_fp_sqrt: dtype");
  EXPECT_RUN_FAILS_WITH(bad_dtype_kernel, nullptr,
                        "DT_INT16 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16");
  EXPECT_RUN_FAILS_WITH(sfu_npu_kernel, nullptr, "tpu_bdc_fp_reciprocal: dst starts on NPU 1 but src on NPU 0");
  EXPECT_RUN_FAILS_WITH(null_shape_kernel, nullptr, "tpu_bdc_fp32_sqrt: shape is a null pointer");
  const MathCall k = valid_call(chip, F::expm1, 0);
  EXPECT_RUN_FAILS_WITH(exp_misaligned_kernel, &k,
                        "tpu_bdc_fp32_expm1: work1 local address " + hex(k.work[1] + 4) + " uses the aligned layout");
}

struct IterArg {
  int form;
  int num_iter;
};
void bad_iterations_kernel(const void *arg) {
  const auto &a = *static_cast<const IterArg *>(arg);
  const dim4 shape = {1, 1, 1, 4};
  if (a.form == 0) tpu_bdc_fp32_tunable_rsqrt(0, 256, &shape, a.num_iter);
  if (a.form == 1) tpu_bdc_fp_tunable_sqrt(0, 256, &shape, DT_BFP16, a.num_iter);
  if (a.form == 2) tpu_bdc_fp_tunable_reciprocal(0, 256, &shape, nullptr, nullptr, DT_FP16, a.num_iter);
}

TEST_P(BdcMath, TunableFormsNeedAtLeastOneIteration) {
  IterArg zero{0, 0}, negative{1, -3}, recip{2, 0};
  EXPECT_RUN_FAILS_WITH(bad_iterations_kernel, &zero,
                        "tpu_bdc_fp32_tunable_rsqrt: num_iter 0 returns the hardware's bare SFU seed");
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("[unsupported]"), std::string::npos) << m;
  EXPECT_RUN_FAILS_WITH(bad_iterations_kernel, &negative, "tpu_bdc_fp_tunable_sqrt: num_iter -3 is negative");
  m = cmodel_last_error();
  EXPECT_NE(m.find("[illegal command]"), std::string::npos) << m;
  EXPECT_RUN_FAILS_WITH(bad_iterations_kernel, &recip, "tpu_bdc_fp_tunable_reciprocal: num_iter 0");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcMath, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
