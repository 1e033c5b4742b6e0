// bdc_math_extra_test: the fp32 functions added to cmodel/bdc/math.h after
// the first set (bdc_math_test): sin, cos, tan, cot, arcsin, arccos,
// arcsinh, arccosh, arctanh, selu, log_sigmoid, and the compensated
// reciprocal (plain and tunable).
//
// The reference is long double <cmath>. Accuracy is checked as in
// bdc_math_test: within 2 ulp of the exact value or 1e-6 relative,
// whichever is looser, and the largest distance per function is printed;
// the compensated reciprocal must be correctly rounded exactly. Random
// shapes, start NPU != 0 (tables on NPU 0), in-place calls, free and
// zero-stride sources for the reciprocal, both chips; the whole local
// memory is compared (only dst and the work buffers may change), the
// documented work-buffer contents are checked, special values have their
// own cases, and every check fires with its message.
#include <gtest/gtest.h>

#include <algorithm>
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
using ld = long double;

enum class F { sin, cos, tan, cot, arcsin, arccos, arcsinh, arccosh, arctanh, selu, log_sigmoid, count };

const char *f_name(F f) {
  static const char *names[] = {"sin",     "cos",     "tan",     "cot",  "arcsin",     "arccos",
                                "arcsinh", "arccosh", "arctanh", "selu", "log_sigmoid"};
  return names[int(f)];
}

int work_buffers(F f) { return f == F::selu || f == F::log_sigmoid ? 2 : 1; }

// ---- tables in local memory (NPU 0, top 4 KiB) -----------------------------------------------

struct Tables {
  local_addr_t exp_coeff, exp_table, log_coeff, sin_coeff, cos_coeff, tan_coeff, arcsin_coeff;
};

Tables tables_at(const Chip &chip) {
  const uint32_t b = chip.lmem - 4096;
  return {b, b + 64, b + 832, b + 896, b + 960, b + 1024, b + 1088};
}

void load_tables(const Tables &t) {
  tpu_bdc_load_fp32_exp_coeff(t.exp_coeff);
  tpu_bdc_load_fp32_exp_table(t.exp_table);
  tpu_bdc_load_fp32_log_coeff(t.log_coeff);
  tpu_bdc_load_fp32_sin_coeff(t.sin_coeff);
  tpu_bdc_load_fp32_cos_coeff(t.cos_coeff);
  tpu_bdc_load_fp32_tan_coeff(t.tan_coeff);
  tpu_bdc_load_fp32_arcsin_coeff(t.arcsin_coeff);
}

struct MathCall {
  F f;
  local_addr_t dst, src, work[2];
  Tables t;
  dim4 shape;
  bool load = true;
};

void call(const MathCall &k) {
  const dim4 *s = &k.shape;
  const auto d = k.dst, x = k.src, w0 = k.work[0], w1 = k.work[1];
  const Tables &t = k.t;
  switch (k.f) {
    case F::sin: tpu_bdc_fp32_sin(d, x, w0, t.sin_coeff, s); break;
    case F::cos: tpu_bdc_fp32_cos(d, x, w0, t.cos_coeff, s); break;
    case F::tan: tpu_bdc_fp32_tan(d, x, w0, t.tan_coeff, s); break;
    case F::cot: tpu_bdc_fp32_cot(d, x, w0, t.tan_coeff, s); break;
    case F::arcsin: tpu_bdc_fp32_arcsin(d, x, w0, t.arcsin_coeff, s); break;
    case F::arccos: tpu_bdc_fp32_arccos(d, x, w0, t.arcsin_coeff, s); break;
    case F::arcsinh: tpu_bdc_fp32_arcsinh(d, x, w0, t.log_coeff, s); break;
    case F::arccosh: tpu_bdc_fp32_arccosh(d, x, w0, t.log_coeff, s); break;
    case F::arctanh: tpu_bdc_fp32_arctanh(d, x, w0, t.log_coeff, s); break;
    case F::selu: tpu_bdc_fp32_selu(d, x, w0, w1, t.exp_coeff, t.exp_table, s); break;
    case F::log_sigmoid: tpu_bdc_fp32_log_sigmoid(d, x, w0, w1, t.exp_coeff, t.exp_table, t.log_coeff, s); break;
    case F::count: break;
  }
}

void math_kernel(const void *arg) {
  const auto &k = *static_cast<const MathCall *>(arg);
  if (k.load) load_tables(k.t);
  call(k);
}

// ---- the reference --------------------------------------------------------------------------

constexpr ld selu_alpha = 1.6732632423543772848170429916717L;
constexpr ld selu_scale = 1.0507009873554804934193349852946L;

ld reference(F f, ld x) {
  switch (f) {
    case F::sin: return sinl(x);
    case F::cos: return cosl(x);
    case F::tan: return tanl(x);
    case F::cot: return cosl(x) / sinl(x);
    case F::arcsin: return asinl(x);
    case F::arccos: return acosl(x);
    case F::arcsinh: return asinhl(x);
    case F::arccosh: return acoshl(x);
    case F::arctanh: return atanhl(x);
    case F::selu: return selu_scale * (x > 0 ? x : selu_alpha * expm1l(x));
    case F::log_sigmoid: return x >= 0 ? -log1pl(expl(-x)) : x - log1pl(expl(x));
    case F::count: break;
  }
  return 0;
}

// ulp_distance, within_documented, any_finite and sentinel come from bdc_helpers.h.

template <typename Rng>
float random_input(Rng &rng, F f) {
  auto uni = [&](double lo, double hi) { return float(std::uniform_real_distribution<double>(lo, hi)(rng)); };
  const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
  if (kind == 0) return any_finite(rng);
  if (kind == 1) return uni(-1, 1) * std::ldexp(1.0f, -std::uniform_int_distribution<int>(10, 140)(rng));
  auto wide = [&] { return std::ldexp(uni(1, 2), std::uniform_int_distribution<int>(-20, 127)(rng)); };
  switch (f) {
    case F::sin: case F::cos: case F::tan: case F::cot: return kind < 7 ? uni(-10, 10) : uni(-1e5, 1e5);
    case F::arcsin: case F::arccos: return kind < 8 ? uni(-1, 1) : uni(-1.5, 1.5);
    case F::arcsinh: return kind < 6 ? uni(-10, 10) : (kind % 2 ? 1.0f : -1.0f) * wide();
    case F::arccosh: return kind < 6 ? uni(1, 10) : kind == 6 ? uni(1, 1.001) : wide();
    case F::arctanh: return kind < 7 ? uni(-1, 1) : kind == 7 ? uni(0.999, 1) : uni(-1.2, 1.2);
    case F::selu: return kind < 7 ? uni(-20, 20) : uni(-120, 120);
    case F::log_sigmoid: return kind < 7 ? uni(-30, 30) : uni(-200, 200);
    case F::count: break;
  }
  return 0;
}

class BdcMathExtra : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  Chip chip;
};

TEST_P(BdcMathExtra, RandomInputsAreWithinTheirDocumentedAccuracy) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  std::map<std::string, double> worst;
  std::vector<uint8_t> before, expected;
  for (int iter = 0; iter < test::rounds(10 * int(F::count)); ++iter) {
    const F f = F(iter % int(F::count));
    const dim4 shape = {seeded.uniform(1, 2), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 4),
                        seeded.uniform(1, 40)};
    const int npu = seeded.uniform(1, chip.npu - 1);
    const uint32_t region = (aligned_bytes(chip, npu, shape, DT_FP32) + 63) / 64 * 64;
    auto at = [&](int slot) { return aligned(chip, npu, uint32_t(slot) * region, shape, DT_FP32); };
    std::vector<int> slots = {0, 1, 2, 3};
    std::shuffle(slots.begin(), slots.end(), rng);
    const Tensor dst = at(slots[0]);
    const bool in_place = seeded.uniform(0, 4) == 0;
    const Tensor src = in_place ? dst : at(slots[1]);
    std::vector<Tensor> work;
    for (int w = 0; w < work_buffers(f); ++w) work.push_back(at(slots[size_t(2 + w)]));
    MathCall k{f, dst.addr, src.addr, {work[0].addr, work.size() > 1 ? work[1].addr : 0}, tables_at(chip), shape};
    std::vector<float> x;
    for_each_index(shape, [&](int n, int c, int h, int w) {
      x.push_back(random_input(rng, f));
      set<float>(chip, src, n, c, h, w, x.back());
      for (const Tensor &t : work) set<uint32_t>(chip, t, n, c, h, w, sentinel);
    });
    {
      MathCall load_only = k;
      load_only.f = F::count;
      ASSERT_EQ(cmodel_run(math_kernel, &load_only), 0) << cmodel_last_error();
      before = snapshot(chip);
    }
    ASSERT_EQ(cmodel_run(math_kernel, &k), 0) << cmodel_last_error();
    expected = before;  // only dst and the work buffers may change
    accept_written(expected, chip, dst);
    for (const Tensor &t : work) accept_written(expected, chip, t);
    const std::string what = std::string(f_name(f)) + " iteration " + std::to_string(iter) + (in_place ? " in place" : "");
    expect_local_memory(chip, expected, [&] { return what; });

    size_t i = 0, failures = 0;
    double &worst_f = worst[f_name(f)];
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const float got = get<float>(chip, dst, n, c, h, w);
      const ld exact = reference(f, x[i]);
      const double d = ulp_distance(got, exact);
      worst_f = std::max(worst_f, d);
      if (!within_documented(f_name(f), got, exact) && failures++ < 5)
        ADD_FAILURE() << what << ": " << f_name(f) << "(" << std::hexfloat << x[i] << ") = " << got << ", expected "
                      << double(exact) << std::defaultfloat << " (" << d << " ulp)";
      for (size_t kk = 0; kk < work.size(); ++kk)
        if (get<uint32_t>(chip, work[kk], n, c, h, w) == sentinel && failures++ < 5)
          ADD_FAILURE() << what << ": work" << kk << " element was left untouched";
      // Documented intermediates.
      const double xd = x[i];
      const float w0 = get<float>(chip, work[0], n, c, h, w);
      if (f == F::sin || f == F::cos) {
        const float want = float(xd - std::nearbyint(xd / M_PI) * M_PI);
        if (!(std::isnan(want) && std::isnan(w0))) {
          EXPECT_EQ(w0, want) << what;
        }
      }
      if (f == F::arcsin && std::fabs(xd) <= 0.5) {
        EXPECT_EQ(w0, x[i]) << what;
      }
      ++i;
    });
  }
  expect_worst_within_documented(GetParam(), worst);
}

struct Special {
  F f;
  float x, expected;  // NaN: any NaN; zeros and infinities: bits checked
};

TEST_P(BdcMathExtra, SpecialValues) {
  const float inf = INFINITY, nan = NAN;
  const float pi_2 = float(M_PI / 2), pi = float(M_PI);
  const std::vector<Special> cases = {
      {F::sin, inf, nan}, {F::sin, -inf, nan}, {F::sin, nan, nan}, {F::sin, -0.0f, -0.0f}, {F::sin, 0, 0.0f},
      {F::cos, -inf, nan}, {F::cos, 0, 1}, {F::cos, -0.0f, 1}, {F::cos, pi, -1},
      {F::tan, inf, nan}, {F::tan, -0.0f, -0.0f}, {F::tan, pi_2, float(tanl(pi_2))},
      {F::cot, 0, inf}, {F::cot, -0.0f, -inf}, {F::cot, inf, nan}, {F::cot, pi_2, float(cosl(pi_2) / sinl(pi_2))},
      {F::arcsin, 2, nan}, {F::arcsin, -1.5f, nan}, {F::arcsin, -0.0f, -0.0f}, {F::arcsin, 1, pi_2},
      {F::arcsin, -1, -pi_2}, {F::arcsin, inf, nan},
      {F::arccos, 1, 0.0f}, {F::arccos, -1, pi}, {F::arccos, 1.0001f, nan}, {F::arccos, 0, pi_2},
      {F::arcsinh, -inf, -inf}, {F::arcsinh, inf, inf}, {F::arcsinh, -0.0f, -0.0f}, {F::arcsinh, FLT_MAX, float(asinhl(FLT_MAX))},
      {F::arccosh, 1, 0.0f}, {F::arccosh, 0.5f, nan}, {F::arccosh, inf, inf}, {F::arccosh, -inf, nan},
      {F::arccosh, FLT_MAX, float(acoshl(FLT_MAX))},
      {F::arctanh, 1, inf}, {F::arctanh, -1, -inf}, {F::arctanh, 2, nan}, {F::arctanh, -0.0f, -0.0f},
      {F::selu, -inf, float(-selu_scale * selu_alpha)}, {F::selu, inf, inf}, {F::selu, -0.0f, -0.0f},
      {F::selu, nan, nan}, {F::selu, 1, float(selu_scale)}, {F::selu, FLT_MAX, inf},
      {F::log_sigmoid, -inf, -inf}, {F::log_sigmoid, inf, -0.0f}, {F::log_sigmoid, 0, float(-logl(2))},
      {F::log_sigmoid, nan, nan}, {F::log_sigmoid, 200, float(-expl(-200))}, {F::log_sigmoid, -200, -200},
  };
  for (const Special &s : cases) {
    SCOPED_TRACE(std::string(f_name(s.f)) + " x " + std::to_string(s.x));
    const dim4 shape = {1, 3, 1, 5};
    const int npu = chip.npu - 2;  // channels wrap to NPU 0
    const Tensor dst = aligned(chip, npu, 0, shape, DT_FP32), src = aligned(chip, npu, 1024, shape, DT_FP32);
    MathCall k{s.f, dst.addr, src.addr,
               {aligned(chip, npu, 2048, shape, DT_FP32).addr, aligned(chip, npu, 3072, shape, DT_FP32).addr},
               tables_at(chip), shape};
    for_each_index(shape, [&](int n, int c, int h, int w) { set<float>(chip, src, n, c, h, w, s.x); });
    ASSERT_EQ(cmodel_run(math_kernel, &k), 0) << cmodel_last_error();
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const float got = get<float>(chip, dst, n, c, h, w);
      if (std::isnan(s.expected))
        EXPECT_TRUE(std::isnan(got)) << got;
      else if (s.expected == 0 || std::isinf(s.expected))
        EXPECT_EQ(bits_of(got), bits_of(s.expected)) << got;
      else
        EXPECT_TRUE(within_documented(f_name(s.f), got, reference(s.f, s.x))) << got << " vs " << s.expected;
    });
  }
}

// ---- compensated reciprocal ---------------------------------------------------------------

struct RecipCall {
  bool tunable;
  local_addr_t dst, work[3];
  Tensor src;
  dim4 shape;
  int num_iter, num_comp;
};

void recip_kernel(const void *arg) {
  const auto &k = *static_cast<const RecipCall *>(arg);
  if (k.tunable)
    tpu_bdc_fp32_tunable_compensate_reciprocal(k.dst, k.src.addr, k.work[0], k.work[1], k.work[2], &k.shape,
                                               k.src.api_stride(), k.num_iter, k.num_comp);
  else
    tpu_bdc_fp32_compensate_reciprocal(k.dst, k.src.addr, k.work[0], k.work[1], k.work[2], &k.shape,
                                       k.src.api_stride(), k.num_comp);
}

TEST_P(BdcMathExtra, CompensatedReciprocalIsCorrectlyRounded) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const uint32_t fifth = chip.lmem / 5 / 64 * 64;
  std::vector<uint8_t> expected;
  int ran = 0;
  for (int iter = 0; iter < 80; ++iter) {
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 5),
                        seeded.uniform(1, 21)};
    const int npu = seeded.uniform(1, chip.npu - 1);
    if (aligned_bytes(chip, npu, shape, DT_FP32) > fifth) continue;
    RecipCall k{iter % 2 == 1, 0, {}, {}, shape, seeded.uniform(1, 4), seeded.uniform(0, 4)};  // num_iter <= 4: AR-6
    std::vector<int> slots = {0, 1, 2, 3};
    std::shuffle(slots.begin(), slots.end(), rng);
    const Tensor dst = aligned(chip, npu, uint32_t(slots[0]) * fifth, shape, DT_FP32);
    k.dst = dst.addr;
    std::vector<Tensor> work;
    for (int w = 0; w < 3; ++w) {
      work.push_back(aligned(chip, npu, uint32_t(slots[size_t(1 + w)]) * fifth, shape, DT_FP32));
      k.work[w] = work.back().addr;
    }
    if (seeded.uniform(0, 4) == 0) {
      k.src = dst;  // in place
    } else if (!random_layout(rng, chip, npu, 4 * fifth, shape, DT_FP32, true, fifth, k.src)) {
      continue;
    }
    for_each_index(shape, [&](int n, int c, int h, int w) {
      float v = any_finite(rng);
      if (seeded.uniform(0, 3) == 0) v = float(std::uniform_real_distribution<double>(-10, 10)(rng));
      set<float>(chip, k.src, n, c, h, w, v);
      for (const Tensor &t : work) set<uint32_t>(chip, t, n, c, h, w, sentinel);
    });
    expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const float x = get<float>(chip, k.src, n, c, h, w);
      const float r = float(1.0L / ld(x));  // long double has 64 >= 2 x 24 + 2 bits: one correct rounding
      put(expected, chip, dst, n, c, h, w, bits_of(r));
      put(expected, chip, work[0], n, c, h, w, bits_of(r));
      const float residual = float(1.0L - ld(x) * ld(r));  // exact product in long double
      put(expected, chip, work[1], n, c, h, w, bits_of(residual));
      put(expected, chip, work[2], n, c, h, w, bits_of(float(double(r) * double(residual))));
    });
    ASSERT_EQ(cmodel_run(recip_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return std::string(k.tunable ? "tunable " : "") + "compensate_reciprocal " + describe(shape) + " NPU " +
             std::to_string(npu) + " num_comp " + std::to_string(k.num_comp) + " iteration " + std::to_string(iter);
    });
    ++ran;
  }
  EXPECT_GT(ran, 40);
}

TEST_P(BdcMathExtra, CompensatedReciprocalCostGrowsWithSteps) {
  const dim4 shape = {1, chip.npu, 8, 16};
  auto cycles = [&](int num_iter, int num_comp) {
    RecipCall k{true, 0, {16384, 32768, 49152}, aligned(chip, 0, 65536, shape, DT_FP32), shape, num_iter, num_comp};
    for_each_index(shape, [&](int n, int c, int h, int w) { set<float>(chip, k.src, n, c, h, w, 3.0f); });
    EXPECT_EQ(cmodel_run(recip_kernel, &k), 0) << cmodel_last_error();
    return bdc_cycles();
  };
  EXPECT_LT(cycles(1, 1), cycles(3, 1));
  EXPECT_LT(cycles(3, 0), cycles(3, 2));
}

// ---- checks -----------------------------------------------------------------------------

MathCall valid_call(const Chip &chip, F f, int npu, bool load = true) {
  const dim4 shape = {1, 5, 2, 8};
  auto at = [&](uint32_t off) { return local_addr_t(npu * chip.lmem + off); };
  return {f, at(0), at(1024), {at(2048), at(3072)}, tables_at(chip), shape, load};
}

TEST_P(BdcMathExtra, ValidCallsPass) {
  for (int f = 0; f < int(F::count); ++f) {
    const MathCall k = valid_call(chip, F(f), 3);
    EXPECT_EQ(cmodel_run(math_kernel, &k), 0) << f_name(F(f)) << ": " << cmodel_last_error();
  }
}

TEST_P(BdcMathExtra, EachFunctionNeedsItsTable) {
  // Every table loaded at its place, then each function given a wrong one.
  MathCall k = valid_call(chip, F::count, 1);
  ASSERT_EQ(cmodel_run(math_kernel, &k), 0) << cmodel_last_error();
  k = valid_call(chip, F::sin, 1, false);
  k.t.sin_coeff = k.t.cos_coeff;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k,
                        "tpu_bdc_fp32_sin: coeff_addr " + hex(k.t.cos_coeff) +
                            " does not hold the fp32 sin coefficients; call tpu_bdc_load_fp32_sin_coeff(coeff_addr) first");
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("it holds the fp32 cos coefficients instead"), std::string::npos) << m;
  k = valid_call(chip, F::cot, 1, false);
  k.t.tan_coeff = k.t.sin_coeff;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_cot: coeff_addr " + hex(k.t.sin_coeff) + " does not hold the fp32 tan coefficients");
  k = valid_call(chip, F::arccos, 1, false);
  k.t.arcsin_coeff = k.t.tan_coeff;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_arccos: coeff_addr " + hex(k.t.tan_coeff) + " does not hold the fp32 arcsin coefficients");
  k = valid_call(chip, F::arctanh, 1, false);
  k.t.log_coeff = k.t.exp_coeff;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_arctanh: coeff_addr " + hex(k.t.exp_coeff) + " does not hold the fp32 log coefficients");
  k = valid_call(chip, F::log_sigmoid, 1, false);
  k.t.log_coeff = k.t.sin_coeff;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_log_sigmoid: ln_coeff_addr " + hex(k.t.sin_coeff) + " does not hold the fp32 log coefficients");
  k = valid_call(chip, F::selu, 1, false);
  k.t.exp_table = k.t.exp_coeff;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_selu: table_addr " + hex(k.t.exp_coeff) + " does not hold the fp32 exp table");
  // Never loaded: the poison is seen.
  MathCall fresh = valid_call(chip, F::tan, 2);
  fresh.load = false;
  fresh.t.tan_coeff = chip.lmem - 8192;
  EXPECT_RUN_FAILS_WITH(math_kernel, &fresh, "tpu_bdc_fp32_tan: coeff_addr " + hex(chip.lmem - 8192) +
                                                 " does not hold the fp32 tan coefficients; call "
                                                 "tpu_bdc_load_fp32_tan_coeff(coeff_addr) first (NPU 0 element 0 is 0xffffffff");
}

TEST_P(BdcMathExtra, OperandChecks) {
  MathCall k = valid_call(chip, F::sin, 2);
  k.src += chip.lmem;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_sin: dst starts on NPU 2 but src on NPU 3");
  k = valid_call(chip, F::arcsinh, 2);
  k.work[0] = k.src;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_arcsinh: work at " + hex(k.src));
  k = valid_call(chip, F::selu, 2);
  k.work[1] = k.work[0];
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_selu: work1 at " + hex(k.work[0]));
  k = valid_call(chip, F::cos, 2);
  k.dst += 4;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "tpu_bdc_fp32_cos: dst local address " + hex(k.dst) + " uses the aligned layout");
  k = valid_call(chip, F::tan, 0);
  k.dst = k.t.tan_coeff;
  EXPECT_RUN_FAILS_WITH(math_kernel, &k, "writing dst would overwrite the table");
}

void bad_recip_kernel(const void *arg) {
  const int which = *static_cast<const int *>(arg);
  const dim4 shape = {1, 4, 2, 8};
  const local_addr_t npu1 = LOCAL_MEM_SIZE;
  switch (which) {
    case 0: tpu_bdc_fp32_compensate_reciprocal(0, 4096, 8192, 12288, 16384, &shape, nullptr, -1); break;
    case 1: tpu_bdc_fp32_tunable_compensate_reciprocal(0, 4096, 8192, 12288, 16384, &shape, nullptr, 0, 1); break;
    case 2: tpu_bdc_fp32_compensate_reciprocal(0, 4096, 4096, 12288, 16384, &shape, nullptr, 1); break;
    case 3: {
      const dim4 stride = {0, 0, 0, 0};
      tpu_bdc_fp32_compensate_reciprocal(0, npu1 + 4, 8192, 12288, 16384, &shape, &stride, 1);
      break;
    }
    case 4: tpu_bdc_fp32_compensate_reciprocal(0, 4096, 8192, 12288, npu1 + 16384, &shape, nullptr, 1); break;
    case 5: {  // zero strides are fine
      const dim4 stride = {0, 0, 0, 0};
      tpu_bdc_fp32_tunable_compensate_reciprocal(0, 4, 8192, 12288, 16384, &shape, &stride, 2, 0);
      break;
    }
  }
}

TEST_P(BdcMathExtra, CompensatedReciprocalChecks) {
  int w = 0;
  EXPECT_RUN_FAILS_WITH(bad_recip_kernel, &w, "tpu_bdc_fp32_compensate_reciprocal: num_comp -1 is negative");
  w = 1;
  EXPECT_RUN_FAILS_WITH(bad_recip_kernel, &w, "tpu_bdc_fp32_tunable_compensate_reciprocal: num_iter 0 returns the hardware's bare SFU seed");
  w = 2;
  EXPECT_RUN_FAILS_WITH(bad_recip_kernel, &w, "tpu_bdc_fp32_compensate_reciprocal: work0 at 0x1000");
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("overlaps src at 0x1000"), std::string::npos) << m;
  w = 3;
  EXPECT_RUN_FAILS_WITH(bad_recip_kernel, &w, "tpu_bdc_fp32_compensate_reciprocal: dst starts on NPU 0 but src on NPU 1");
  w = 4;
  EXPECT_RUN_FAILS_WITH(bad_recip_kernel, &w, "dst starts on NPU 0 but work2 on NPU 1");
  w = 5;
  const dim4 shape = {1, 4, 2, 8};
  // Zero strides: every channel reads offset 4 of its own NPU.
  for (int c = 0; c < shape.c; ++c) set<float>(chip, Tensor{4, shape, {0, 0, 0, 0}, DT_FP32}, 0, c, 0, 0, 8.0f);
  ASSERT_EQ(cmodel_run(bad_recip_kernel, &w), 0) << cmodel_last_error();
  for_each_index(shape, [&](int n, int c, int h, int ww) {
    EXPECT_EQ(get<float>(chip, aligned(chip, 0, 0, shape, DT_FP32), n, c, h, ww), 0.125f);
  });
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcMathExtra, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
