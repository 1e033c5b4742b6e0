// bdc_tables_test: the loaders of the fp32 transcendental tables
// (tpu_bdc_load_fp32_*, cmodel/bdc/tables.h).
//
// Each loader must write its documented table, the same `len` values in
// every NPU at the given offset ([1, NPU_NUM, 1, len] on NPU 0), and touch
// nothing else. The expected values are derived here independently (long
// double series and recurrences); the erf fit, which cannot be rederived,
// is checked by its accuracy. Each table's documented evaluation scheme is
// run in double on the loaded values and must reach its stated accuracy, so
// the tables are usable by kernels that evaluate them (tpu_bdc_fp_taylor).
// Static memory holds the tables at the documented offsets. Address checks
// fire with their messages.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmodel/context.h"
#include "support/local_model.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using test::hex;
using ld = long double;

enum class T { exp_coeff, exp_table, log_coeff, erf_coeff, sin_coeff, cos_coeff, tan_coeff, arcsin_coeff, count };

const char *loader_name(T t) {
  static const char *names[] = {"tpu_bdc_load_fp32_exp_coeff", "tpu_bdc_load_fp32_exp_table",
                                "tpu_bdc_load_fp32_log_coeff", "tpu_bdc_load_fp32_erf_coeff",
                                "tpu_bdc_load_fp32_sin_coeff", "tpu_bdc_load_fp32_cos_coeff",
                                "tpu_bdc_load_fp32_tan_coeff", "tpu_bdc_load_fp32_arcsin_coeff"};
  return names[int(t)];
}

// Documented lengths.
int table_len(T t) {
  static const int lens[] = {10, 192, 8, 10, 8, 8, 16, 12};
  return lens[int(t)];
}

struct Load {
  T t;
  local_addr_t addr;
};

void load(T t, local_addr_t a) {
  switch (t) {
    case T::exp_coeff: tpu_bdc_load_fp32_exp_coeff(a); break;
    case T::exp_table: tpu_bdc_load_fp32_exp_table(a); break;
    case T::log_coeff: tpu_bdc_load_fp32_log_coeff(a); break;
    case T::erf_coeff: tpu_bdc_load_fp32_erf_coeff(a); break;
    case T::sin_coeff: tpu_bdc_load_fp32_sin_coeff(a); break;
    case T::cos_coeff: tpu_bdc_load_fp32_cos_coeff(a); break;
    case T::tan_coeff: tpu_bdc_load_fp32_tan_coeff(a); break;
    case T::arcsin_coeff: tpu_bdc_load_fp32_arcsin_coeff(a); break;
    case T::count: break;
  }
}

void load_kernel(const void *arg) {
  const auto &l = *static_cast<const Load *>(arg);
  load(l.t, l.addr);
}

ld factorial(int n) {
  ld f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

// The documented values, derived independently; NaN where they cannot be
// (the erf fit, checked through its accuracy instead).
std::vector<ld> documented(T t) {
  std::vector<ld> v;
  switch (t) {
    case T::exp_coeff:
      for (int k = 0; k < 10; ++k) v.push_back(1 / factorial(k));
      break;
    case T::exp_table:
      for (int i = 0; i < 192; ++i) v.push_back(expl(ld(i - 103)));
      break;
    case T::log_coeff:
      for (int k = 0; k < 7; ++k) v.push_back(ld(2) / (2 * k + 1));
      v.push_back(logl(2));
      break;
    case T::erf_coeff:
      for (int k = 0; k < 10; ++k) v.push_back(NAN);
      break;
    case T::sin_coeff:
      for (int k = 0; k < 8; ++k) v.push_back((k % 2 ? -1 : 1) / factorial(2 * k + 1));
      break;
    case T::cos_coeff:
      for (int k = 0; k < 8; ++k) v.push_back((k % 2 ? -1 : 1) / factorial(2 * k));
      break;
    case T::tan_coeff:
      // tan' = 1 + tan^2: (2k + 1) c_k = [k = 0] + sum_{i + j = k - 1} c_i c_j.
      for (int k = 0; k < 16; ++k) {
        ld s = k == 0 ? 1 : 0;
        for (int i = 0; i <= k - 1; ++i) s += v[size_t(i)] * v[size_t(k - 1 - i)];
        v.push_back(s / (2 * k + 1));
      }
      break;
    case T::arcsin_coeff: {
      ld a = 1;  // (2k)! / (4^k k!^2)
      for (int k = 0; k < 12; ++k) {
        if (k > 0) a *= ld(2 * k - 1) / (2 * k);
        v.push_back(a / (2 * k + 1));
      }
      break;
    }
    case T::count: break;
  }
  return v;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

class BdcTables : public local_model::ChipTest {};

TEST_P(BdcTables, LoadersWriteTheDocumentedValuesInEveryNpu) {
  test::Seeded seeded;
  const Chip chip = local_model::chip(GetParam());
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < int(T::count); ++i) {
      const T t = T(i);
      const int len = table_len(t);
      const uint32_t slots = (chip.lmem - 4 * uint32_t(len)) / uint32_t(chip.eu_bytes);
      const Load l{t, local_addr_t(uint32_t(seeded.uniform(0, int(slots))) * uint32_t(chip.eu_bytes))};
      SCOPED_TRACE(std::string(loader_name(t)) + " at " + std::to_string(l.addr));
      std::vector<uint8_t> expected = snapshot(chip);
      const std::vector<ld> want = documented(t);
      ASSERT_EQ(int(want.size()), len);
      // The expected image: the documented values (the fit: what NPU 0 got,
      // checked below to be the same in every NPU and by accuracy elsewhere).
      std::vector<float> values(static_cast<size_t>(len));
      ASSERT_EQ(cmodel_run(load_kernel, &l), 0) << cmodel_last_error();
      for (int k = 0; k < len; ++k) {
        std::memcpy(&values[size_t(k)], local_at(l.addr + 4 * size_t(k)), 4);
        if (!std::isnan(want[size_t(k)])) {
          EXPECT_EQ(bits_of(values[size_t(k)]), bits_of(float(want[size_t(k)])))
              << "entry " << k << ": " << values[size_t(k)] << " instead of " << double(want[size_t(k)]);
        }
      }
      for (int npu = 0; npu < chip.npu; ++npu)
        std::memcpy(expected.data() + size_t(npu) * chip.lmem + l.addr, values.data(), 4 * size_t(len));
      expect_local_memory(chip, expected, [&] { return std::string(loader_name(t)); });
      // Static memory holds the same table at its documented offset.
      const bool x = chip.name == "bm1684x";
      static const uint32_t offsets_1684x[] = {1024, 0, 1152, 1408, 1728, 1856, 2240, 1984};
      const uint32_t offset = x ? offsets_1684x[i] : t == T::exp_table ? 0x2000 : offsets_1684x[i] - 1024;
      const uint8_t *stat = cmodel::current_context()->memory.static_mem(offset, 4 * size_t(len));
      EXPECT_EQ(std::memcmp(stat, values.data(), 4 * size_t(len)), 0) << "static memory at " << offset;
    }
}

// ---- the schemes the tables are meant for -------------------------------------------------

std::vector<double> loaded(const Chip &chip, T t, local_addr_t addr) {
  const Load l{t, addr};
  EXPECT_EQ(cmodel_run(load_kernel, &l), 0) << cmodel_last_error();
  std::vector<double> v;
  for (int k = 0; k < table_len(t); ++k) {
    float f;
    std::memcpy(&f, local_at(size_t(chip.npu - 1) * chip.lmem + addr + 4 * size_t(k)), 4);  // last NPU's copy
    v.push_back(f);
  }
  return v;
}

double horner(const std::vector<double> &c, size_t first, size_t count, double z) {
  double s = 0;
  for (size_t k = count; k-- > 0;) s = s * z + c[first + k];
  return s;
}

// Relative error in fp32 ulps of the exact value.
double ulps(double got, ld exact) {
  int e;
  frexpl(exact, &e);
  return double(fabsl(got - exact) / ldexpl(1, std::max(e - 24, -149)));
}

TEST_P(BdcTables, SchemesReachTheirDocumentedAccuracy) {
  const Chip chip = local_model::chip(GetParam());
  const auto exp_c = loaded(chip, T::exp_coeff, 0), exp_t = loaded(chip, T::exp_table, 1024),
             log_c = loaded(chip, T::log_coeff, 2048), erf_c = loaded(chip, T::erf_coeff, 3072),
             sin_c = loaded(chip, T::sin_coeff, 4096), cos_c = loaded(chip, T::cos_coeff, 5120),
             tan_c = loaded(chip, T::tan_coeff, 6144), asin_c = loaded(chip, T::arcsin_coeff, 7168);
  const double pi = M_PI;
  double worst[8] = {};
  for (int i = 0; i <= 20000; ++i) {
    const double u = i / 20000.0;  // [0, 1]
    {  // exp over the normal range: e^x = table[n + 103] * P(r)
      const double x = -87 + u * 175.7;
      const double n = std::min(std::nearbyint(x), 88.0);  // the table ends at e^88
      const double got = exp_t[size_t(n + 103)] * horner(exp_c, 0, 10, x - n);
      worst[0] = std::max(worst[0], ulps(got, expl(x)));
    }
    {  // log: x = m 2^e, s = (m - 1) / (m + 1)
      const double x = std::ldexp(1 + u, int(i % 250) - 125);
      int e;
      double m = std::frexp(x, &e);
      if (m < M_SQRT1_2) m *= 2, --e;
      const double s = (m - 1) / (m + 1);
      const double got = e * log_c[7] + s * horner(log_c, 0, 7, s * s);
      if (x != 1) worst[1] = std::max(worst[1], ulps(got, logl(x)));
    }
    {  // erfc(z) = t exp(-z^2 + P(t)), relative, z in [0, 10] (erfc(10) is
       // near fp32's last nonzero value) and beyond; erf = 1 - erfc,
       // absolute (no relative bound exists at 0; above z = 5 erfc < 2e-12)
      const auto erfc_of = [&](double z, double t) { return t * std::exp(-z * z + horner(erf_c, 0, 10, t)); };
      const double z = u * 10;
      const double got = erfc_of(z, 1 / (1 + z / 2));
      worst[2] = std::max(worst[2], double(fabsl(got - erfcl(z)) / erfcl(z)));
      // z > 10 (t < 1/6) in logarithms, where double's exp underflows:
      // relative error exp(d) - 1 for d = P(t) - (ln(erfc(z)/t) + z^2), up
      // to z = 100 (erfcl stays normal), then at t = 0: P(0) = -ln(2 sqrt(pi)).
      const ld tf = 1 / ld(6) - u * (1 / ld(6) - 1 / ld(51)), zf = 2 * (1 / tf - 1);
      const ld d = horner(erf_c, 0, 10, double(tf)) - (logl(erfcl(zf) / tf) + zf * zf);
      const ld d0 = erf_c[0] + logl(2 * sqrtl(acosl(-1)));
      worst[2] = std::max({worst[2], double(fabsl(expm1l(d))), double(fabsl(expm1l(d0)))});
      const double ze = u * 5;
      worst[3] = std::max(worst[3], double(fabsl(1 - erfc_of(ze, 1 / (1 + ze / 2)) - erfl(ze))));
    }
    {  // sin, cos on [-pi/2, pi/2], absolute
      const double r = (u - 0.5) * pi;
      worst[4] = std::max(worst[4], double(fabsl(r * horner(sin_c, 0, 8, r * r) - sinl(r))));
      worst[5] = std::max(worst[5], double(fabsl(horner(cos_c, 0, 8, r * r) - cosl(r))));
    }
    {  // tan on [-pi/4, pi/4], relative
      const double r = (u - 0.5) * pi / 2;
      if (r != 0) worst[6] = std::max(worst[6], double(fabsl((r * horner(tan_c, 0, 16, r * r) - tanl(r)) / tanl(r))));
    }
    {  // arcsin on [-1/2, 1/2], ulps
      const double x = u - 0.5;
      if (x != 0) worst[7] = std::max(worst[7], ulps(x * horner(asin_c, 0, 12, x * x), asinl(x)));
    }
  }
  EXPECT_LE(worst[0], 1.0) << "exp, ulp";
  EXPECT_LE(worst[1], 1.0) << "log, ulp";
  EXPECT_LE(worst[2], 1.1e-7) << "erfc, relative";
  EXPECT_LE(worst[3], 1e-7) << "erf, absolute";
  EXPECT_LE(worst[4], 1e-7) << "sin, absolute";
  EXPECT_LE(worst[5], 1e-7) << "cos, absolute";
  EXPECT_LE(worst[6], 1.2e-7) << "tan, relative";
  EXPECT_LE(worst[7], 1.0) << "arcsin, ulp";
  std::printf("[ accuracy ] %s schemes: exp %.3g ulp, log %.3g ulp, erfc %.3g rel, erf %.3g abs, sin %.3g abs, "
              "cos %.3g abs, tan %.3g rel, arcsin %.3g ulp\n",
              GetParam(), worst[0], worst[1], worst[2], worst[3], worst[4], worst[5], worst[6], worst[7]);
}

// ---- checks and cost ------------------------------------------------------------------------

#define EXPECT_RUN_FAILS_WITH(kernel, arg, text)     \
  do {                                               \
    EXPECT_NE(cmodel_run(kernel, arg), 0);           \
    const std::string m = cmodel_last_error();       \
    EXPECT_NE(m.find(text), std::string::npos) << m; \
  } while (0)

TEST_P(BdcTables, AddressChecks) {
  const Chip chip = local_model::chip(GetParam());
  const Load on_npu1{T::log_coeff, chip.lmem + 256};
  EXPECT_RUN_FAILS_WITH(load_kernel, &on_npu1,
                        "tpu_bdc_load_fp32_log_coeff: coeff_addr " + hex(on_npu1.addr) +
                            " is on NPU 1; the fp32 log coefficients must start on NPU 0 (a [1, " +
                            std::to_string(chip.npu) + ", 1, 8] fp32 tensor");
  const Load misaligned{T::exp_table, 8};
  EXPECT_RUN_FAILS_WITH(load_kernel, &misaligned,
                        "tpu_bdc_load_fp32_exp_table: table_addr local address 0x8 uses the aligned layout");
  const Load past_end{T::exp_table, chip.lmem - 256};
  EXPECT_RUN_FAILS_WITH(load_kernel, &past_end, "tpu_bdc_load_fp32_exp_table: table_addr [1, " +
                                                    std::to_string(chip.npu) + ", 1, 192] DT_FP32 at local " +
                                                    hex(past_end.addr));
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("[memory fault]"), std::string::npos) << m;
  const Load beyond{T::sin_coeff, chip.lmem * uint32_t(chip.npu)};
  EXPECT_RUN_FAILS_WITH(load_kernel, &beyond, "is past the end of local memory");
  // The last aligned slot that fits is fine.
  const Load last{T::arcsin_coeff, chip.lmem - uint32_t(chip.eu_bytes) * 3};
  EXPECT_EQ(cmodel_run(load_kernel, &last), 0) << cmodel_last_error();
}

TEST_P(BdcTables, EachLoadIsOneBdcCopy) {
  for (int i = 0; i < int(T::count); ++i) {
    const Load l{T(i), 4096};
    ASSERT_EQ(cmodel_run(load_kernel, &l), 0) << cmodel_last_error();
    const nlohmann::json stats = nlohmann::json::parse(cmodel_last_run_stats());
    EXPECT_EQ(stats.at("commands").at(loader_name(T(i))).get<int>(), 1);
    EXPECT_EQ(stats.at("engines").at("bdc").at("commands").get<int>(), 1);
    EXPECT_GT(stats.at("engines").at("bdc").at("cycles").get<double>(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcTables, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
