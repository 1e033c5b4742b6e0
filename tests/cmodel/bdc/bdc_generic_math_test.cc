// bdc_generic_math_test: the dtype-generic transcendental functions of the
// current vendor header and their coefficient tables (spec
// tpu-kernel-api-current.md §3.0, §5 item 17): tpu_bdc_load_fp_*_coeff,
// sfu_taylor_exp_len / sfu_taylor_log_len, tpu_bdc_fp_exp & co. (Q1, R).
//
// The pattern of the public kernels: reserve tpu_aligned_feature_size(1,
// len, dtype) bytes per table at an NPU-0 offset, load each table once,
// then run the function in place over several tiles with its work buffers.
// FP16 and BF16 run exhaustively over all 65536 encodings, FP32 over random
// and edge inputs. The reference is long double <cmath> with the
// functions' limits written out; the distance is measured in ulps of the
// dtype at the exact value, and the documented bound (docs/bdc-math.md:
// correctly rounded, i.e. <= 0.5 ulp, up to 1e-6 ulp for exact values
// next to a rounding boundary) is asserted, per function and dtype.
// Local memory outside dst, the work buffers and the tables must not
// change. The table rules (missing, overwritten, another dtype's, the fp32
// erf table for fp16) and the operand checks fire with their messages.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>
#include <map>
#include <string>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;
using ld = long double;

// ---- the functions ----------------------------------------------------------------------------

enum class G {
  exp, log, expm1, exp_for_neg_arg, sin, cos, arcsin, arccos, arctanh,
  erf, erfc, sigmoid, silu, gelu, gelu_fast, gelu_fast2, fp32_gelu_fast2, bf16_gelu_fast2, bf16_sigmoid_fast,
  elu, sinh, cosh, tanh, softplus, log_sigmoid, count
};

const char *g_name(G g) {
  static const char *names[] = {"exp",       "log",        "expm1",   "exp_for_neg_arg", "sin",
                                "cos",       "arcsin",     "arccos",  "arctanh",         "erf",
                                "erfc",      "sigmoid",    "silu",    "gelu",            "gelu_fast",
                                "gelu_fast2", "fp32_gelu_fast2", "bf16_gelu_fast2", "bf16_sigmoid_fast",
                                "elu",       "sinh",       "cosh",    "tanh",            "softplus",
                                "log_sigmoid"};
  return names[int(g)];
}

// The dtypes a function takes.
bool takes(G g, data_type_t t) {
  if (g == G::fp32_gelu_fast2) return t == DT_FP32;
  if (g == G::bf16_gelu_fast2 || g == G::bf16_sigmoid_fast) return t == DT_BFP16;
  return true;
}

int work_count(G g) {
  switch (g) {
    case G::log: case G::sin: case G::cos: case G::arcsin: case G::arccos: case G::arctanh: return 1;
    case G::erf: case G::erfc: case G::bf16_gelu_fast2: return 3;
    case G::gelu: return 4;
    default: return 2;
  }
}

// The tables a function needs (§3.0, end).
struct Needs {
  bool exp = false, log = false, erf = false, sin = false, cos = false, arcsin = false;
};
Needs needs(G g) {
  Needs n;
  switch (g) {
    case G::log: case G::arctanh: n.log = true; break;
    case G::sin: n.sin = true; break;
    case G::cos: n.cos = true; break;
    case G::arcsin: case G::arccos: n.arcsin = true; break;
    case G::erf: case G::erfc: case G::gelu: n.exp = n.erf = true; break;
    case G::softplus: case G::log_sigmoid: n.exp = n.log = true; break;
    default: n.exp = true; break;
  }
  return n;
}

// Table addresses (NPU 0 offsets), each reserved as the kernels do.
struct Tables {
  local_addr_t exp, log, erf, sin, cos, arcsin;
};

constexpr float elu_alpha = 1.5f, softplus_beta = 0.75f;

void call(G g, local_addr_t d, local_addr_t x, const local_addr_t *w, const Tables &t, const dim4 *s,
          data_type_t dt) {
  switch (g) {
    case G::exp: tpu_bdc_fp_exp(d, x, w[0], w[1], t.exp, s, dt); break;
    case G::log: tpu_bdc_fp_log(d, x, w[0], t.log, s, dt); break;
    case G::expm1: tpu_bdc_fp_expm1(d, x, w[0], w[1], t.exp, s, dt); break;
    case G::exp_for_neg_arg: tpu_bdc_fp_exp_for_neg_arg(d, x, w[0], w[1], t.exp, s, dt); break;
    case G::sin: tpu_bdc_fp_sin(d, x, w[0], t.sin, s, dt); break;
    case G::cos: tpu_bdc_fp_cos(d, x, w[0], t.cos, s, dt); break;
    case G::arcsin: tpu_bdc_fp_arcsin(d, x, w[0], t.arcsin, s, dt); break;
    case G::arccos: tpu_bdc_fp_arccos(d, x, w[0], t.arcsin, s, dt); break;
    case G::arctanh: tpu_bdc_fp_arctanh(d, x, w[0], t.log, s, dt); break;
    case G::erf: tpu_bdc_fp_erf(d, x, w[0], w[1], w[2], t.exp, t.erf, s, dt); break;
    case G::erfc: tpu_bdc_fp_erfc(d, x, w[0], w[1], w[2], t.exp, t.erf, s, dt); break;
    case G::sigmoid: tpu_bdc_fp_sigmoid(d, x, w[0], w[1], t.exp, NO_USE, s, dt); break;
    case G::silu: tpu_bdc_fp_silu(d, x, w[0], w[1], t.exp, NO_USE, s, dt); break;
    case G::gelu: tpu_bdc_fp_gelu(d, x, w[0], w[1], w[2], w[3], t.exp, t.erf, s, dt); break;
    case G::gelu_fast: tpu_bdc_fp_gelu_fast(d, x, w[0], w[1], t.exp, NO_USE, s, dt); break;
    case G::gelu_fast2: tpu_bdc_fp_gelu_fast2(d, x, w[0], w[1], t.exp, NO_USE, s, dt); break;
    case G::fp32_gelu_fast2: tpu_bdc_fp32_gelu_fast2(d, x, w[0], w[1], t.exp, NO_USE, s); break;
    case G::bf16_gelu_fast2: tpu_bdc_bf16_gelu_fast2(d, x, w[0], w[1], w[2], t.exp, NO_USE, s); break;
    case G::bf16_sigmoid_fast: tpu_bdc_bf16_sigmoid_fast(d, x, w[0], w[1], t.exp, NO_USE, s); break;
    case G::elu: tpu_bdc_fp_elu(d, x, w[0], w[1], t.exp, NO_USE, elu_alpha, s, dt); break;
    case G::sinh: tpu_bdc_fp_sinh(d, x, w[0], w[1], t.exp, s, dt); break;
    case G::cosh: tpu_bdc_fp_cosh(d, x, w[0], w[1], t.exp, s, dt); break;
    case G::tanh: tpu_bdc_fp_tanh(d, x, w[0], w[1], t.exp, s, dt); break;
    case G::softplus: tpu_bdc_fp_softplus(d, x, w[0], w[1], t.exp, t.log, s, softplus_beta, dt); break;
    case G::log_sigmoid: tpu_bdc_fp_log_sigmoid(d, x, w[0], w[1], t.exp, t.log, s, dt); break;
    case G::count: break;
  }
}

// ---- the reference ------------------------------------------------------------------------------

ld sigmoid_l(ld a) { return 1 / (1 + expl(-a)); }
// x s with the limit 0 (signed like x) when s is 0.
ld times(ld x, ld s) { return s == 0 ? copysignl(0, x) : x * s; }

ld reference(G g, ld x) {
  const ld inf = INFINITY;
  switch (g) {
    case G::exp: case G::exp_for_neg_arg: return expl(x);
    case G::log: return logl(x);
    case G::expm1: return expm1l(x);
    case G::sin: return sinl(x);
    case G::cos: return cosl(x);
    case G::arcsin: return asinl(x);
    case G::arccos: return acosl(x);
    case G::arctanh: return atanhl(x);
    case G::erf: return erfl(x);
    case G::erfc: return erfcl(x);
    case G::sigmoid: case G::bf16_sigmoid_fast: return sigmoid_l(x);
    case G::silu: return times(x, sigmoid_l(x));
    case G::gelu: return times(x, erfcl(-x / sqrtl(2)) / 2);
    case G::gelu_fast: {
      if (std::isinf(x)) return x > 0 ? x : -0.0L;
      // (1 + tanh u) / 2 = 1 / (1 + e^(-2u)), without the cancellation.
      const ld u = sqrtl(2 / acosl(-1)) * (x + 0.044715L * x * x * x);
      return times(x, sigmoid_l(2 * u));
    }
    case G::gelu_fast2: case G::fp32_gelu_fast2: case G::bf16_gelu_fast2: return times(x, sigmoid_l(1.702L * x));
    case G::elu: return x > 0 ? x : ld(elu_alpha) * expm1l(x);
    case G::sinh: return sinhl(x);
    case G::cosh: return coshl(x);
    case G::tanh: return tanhl(x);
    case G::softplus: {
      const ld b = softplus_beta, t = b * x;
      if (t == inf) return inf;
      return (t > 0 ? t : 0) / b + log1pl(expl(-fabsl(t))) / b;
    }
    case G::log_sigmoid: {
      if (x == -inf) return -inf;
      return -((x < 0 ? -x : 0) + log1pl(expl(-fabsl(x))));
    }
    case G::count: break;
  }
  return NAN;
}

// ---- distance in ulps of a dtype --------------------------------------------------------------

int precision(data_type_t t) { return t == DT_FP32 ? 24 : t == DT_FP16 ? 11 : 8; }
int min_exponent(data_type_t t) { return t == DT_FP32 ? -126 : t == DT_FP16 ? -14 : -126; }
ld max_finite(data_type_t t) { return t == DT_FP32 ? ld(FLT_MAX) : t == DT_FP16 ? 65504.0L : ld(decode(t, 0x7f7f)); }

// The ulp of dtype t at value v (the subnormal spacing below the normals).
ld ulp_at(data_type_t t, ld v) {
  int e = -100000;
  if (v != 0) frexpl(v, &e);  // |v| = m 2^e, m in [1/2, 1): the binade's ulp is 2^(e - p)
  return ldexpl(1, std::max(e - precision(t), min_exponent(t) + 1 - precision(t)));
}

// |got - exact| in ulps of t at exact; 0 when both are NaN; infinities must
// be the rounding of exact (|exact| at least max + half an ulp).
double ulps(data_type_t t, float got, ld exact) {
  if (std::isnan(exact) || std::isnan(got)) return std::isnan(exact) && std::isnan(got) ? 0 : INFINITY;
  const ld max = max_finite(t), threshold = max + ulp_at(t, max) / 2;
  if (std::isinf(got)) return (fabsl(exact) >= threshold && std::signbit(got) == std::signbit(exact)) ? 0 : INFINITY;
  if (std::isinf(exact)) return INFINITY;
  return double(fabsl(ld(got) - exact) / ulp_at(t, exact));
}

// The bound asserted for every function and dtype (docs/bdc-math.md).
constexpr double bound_ulps = 0.5 + 1e-6;

// ---- the pattern kernel -----------------------------------------------------------------------

struct Pattern {
  G g;
  data_type_t dtype;
  Tables t;
  local_addr_t data;  // [1, NPU, 1, tiles * tile_w] of dtype at NPU 0, in place
  local_addr_t work[4];
  int tile_w, tiles;
  bool fp32_erf_loader = false;  // load the erf table with tpu_bdc_load_fp32_erf_coeff
};

void pattern_kernel(const void *arg) {
  const auto &p = *static_cast<const Pattern *>(arg);
  const Needs n = needs(p.g);
  // Load once, before the tile loop.
  if (n.exp) tpu_bdc_load_fp_exp_coeff(p.t.exp, p.dtype);
  if (n.log) tpu_bdc_load_fp_log_coeff(p.t.log, p.dtype);
  if (n.erf) {
    if (p.fp32_erf_loader)
      tpu_bdc_load_fp32_erf_coeff(p.t.erf);
    else
      tpu_bdc_load_fp_erf_coeff(p.t.erf, p.dtype);
  }
  if (n.sin) tpu_bdc_load_fp_sin_coeff(p.t.sin, p.dtype);
  if (n.cos) tpu_bdc_load_fp_cos_coeff(p.t.cos, p.dtype);
  if (n.arcsin) tpu_bdc_load_fp_arcsin_coeff(p.t.arcsin, p.dtype);
  const dim4 shape = {1, NPU_NUM, 1, p.tile_w};
  const int esize = p.dtype == DT_FP32 ? 4 : 2;
  for (int k = 0; k < p.tiles; ++k) {
    const local_addr_t tile = p.data + local_addr_t(k * p.tile_w * esize);
    call(p.g, tile, tile, p.work, p.t, &shape, p.dtype);
  }
}

struct LenQuery {
  data_type_t dtype;
  int exp_len, log_len;
};
void len_kernel(void *arg) {
  auto &q = *static_cast<LenQuery *>(arg);
  q.exp_len = sfu_taylor_exp_len(q.dtype);
  q.log_len = sfu_taylor_log_len(q.dtype);
}
void len_kernel_c(const void *arg) { len_kernel(const_cast<void *>(arg)); }

// Lays out the tables (each tpu_aligned_feature_size(1, len, dtype) bytes,
// erf 10 entries as torch-tpu reserves) at the top of NPU 0's memory.
Tables layout_tables(const Chip &chip, data_type_t dtype) {
  const uint32_t exp_bytes = uint32_t(tpu_aligned_feature_size(1, sfu_taylor_exp_len(dtype), dtype));
  const uint32_t log_bytes = uint32_t(tpu_aligned_feature_size(1, sfu_taylor_log_len(dtype), dtype));
  // Room for the largest tables (fp32 arcsin: 12 entries; the fp32 erf table
  // an fp16 / bf16 erf may use: 10 fp32) whatever dtype.
  const uint32_t any = uint32_t(chip.eu_bytes) * 2 > 64 ? uint32_t(chip.eu_bytes) * 2 : 64;
  uint32_t at = chip.lmem - 8192;
  Tables t{};
  t.exp = at, at += exp_bytes;
  t.log = at, at += log_bytes;
  t.erf = at, at += std::max<uint32_t>(uint32_t(tpu_aligned_feature_size(1, 10, dtype)), any);
  t.sin = at, at += any;
  t.cos = at, at += any;
  t.arcsin = at;
  return t;
}

// The FP16 / BF16 encodings 0..65535 (every one, or an even spread of
// test::rounds of them), or FP32 random / edge values.
std::vector<uint32_t> inputs(data_type_t dtype, G g, std::mt19937_64 &rng, size_t count) {
  std::vector<uint32_t> v;
  if (dtype != DT_FP32) {
    const uint32_t step = 65536 / uint32_t(test::rounds(65536));
    for (uint32_t b = 0; b < 65536; b += step) v.push_back(b);
    return v;
  }
  const float inf = INFINITY;
  const std::vector<float> edges = {0.0f, -0.0f, inf, -inf, NAN, 88.72283f, 88.72284f, -103.97208f, -87.33654f,
                                    1e-30f, -1e-30f, 1.0f, -1.0f, 0.5f, FLT_MAX, -FLT_MAX, FLT_MIN,
                                    std::numeric_limits<float>::denorm_min(), 89.41599f, -9.0f, 10.0f, 0.99999994f};
  for (float e : edges) v.push_back(bits_of(e));
  std::uniform_real_distribution<double> unit(-1, 1);
  while (v.size() < count) {
    const int kind = int(rng() % 4);
    double x;
    if (kind == 0)
      x = unit(rng);  // [-1, 1]: the domain of arcsin, arccos, arctanh
    else if (kind == 1)
      x = 12 * unit(rng);
    else if (kind == 2)
      x = 100 * unit(rng);
    else
      x = std::ldexp(unit(rng), -int(rng() % 40));
    if (g == G::exp_for_neg_arg) x = -std::fabs(x);
    v.push_back(bits_of(float(x)));
  }
  return v;
}

class BdcGenericMath : public ChipTest {};

// §5 item 17 for every function, dtype and chip.
TEST_P(BdcGenericMath, TilesInPlaceWithTablesLoadedOnceAreCorrectlyRounded) {
  test::Seeded seeded;
  const Chip chip = local_model::chip(GetParam());
  std::map<std::string, double> worst;
  std::vector<uint8_t> before, expected;
  for (data_type_t dtype : {DT_FP32, DT_FP16, DT_BFP16}) {
    LenQuery q{dtype, 0, 0};
    ASSERT_EQ(cmodel_run(len_kernel_c, &q), 0) << cmodel_last_error();
    const Tables t = layout_tables(chip, dtype);
    for (int gi = 0; gi < int(G::count); ++gi) {
      const G g = G(gi);
      if (!takes(g, dtype)) continue;
      const std::vector<uint32_t> in = inputs(dtype, g, seeded.rng(), size_t(test::rounds(chip.npu * 512)));
      const int esize = dtype == DT_FP32 ? 4 : 2;
      // Tiles of tile_w elements per NPU; the data covers every input.
      const int per_npu = int(div_up(int64_t(in.size()), chip.npu));
      const int tile_w = 256;
      const int tiles = int(div_up(per_npu, tile_w));
      const uint32_t data_bytes = uint32_t(tiles * tile_w * esize);
      const Tensor data = aligned(chip, 0, 0, {1, chip.npu, 1, tiles * tile_w}, dtype);
      Pattern p{.g = g, .dtype = dtype, .t = t, .data = 0, .work = {}, .tile_w = tile_w, .tiles = tiles};
      const uint32_t work_bytes = uint32_t(tile_w * esize);
      for (int k = 0; k < 4; ++k) p.work[k] = data_bytes + uint32_t(k) * work_bytes;
      // Inputs: element i at channel i / per_npu... simpler: (c, w) = (i % npu, i / npu); the rest 0.
      std::vector<uint32_t> placed(size_t(chip.npu) * size_t(tiles * tile_w), 0);
      for (size_t i = 0; i < in.size(); ++i) placed[(i % size_t(chip.npu)) * size_t(tiles * tile_w) + i / size_t(chip.npu)] = in[i];
      for (int c = 0; c < chip.npu; ++c)
        for (int w = 0; w < tiles * tile_w; ++w)
          set_bits(chip, data, 0, c, 0, w, placed[size_t(c) * size_t(tiles * tile_w) + size_t(w)]);
      before = snapshot(chip);
      ASSERT_EQ(cmodel_run(pattern_kernel, &p), 0) << g_name(g) << " " << dtype_label(dtype) << ": " << cmodel_last_error();

      // Only the data, the work buffers and the tables changed.
      expected.assign(before.begin(), before.end());
      accept_written(expected, chip, data);
      for (int k = 0; k < work_count(g); ++k)
        accept_written(expected, chip, aligned(chip, 0, p.work[k], {1, chip.npu, 1, tile_w}, dtype));
      for (local_addr_t a : {t.exp, t.log, t.erf, t.sin, t.cos, t.arcsin})
        accept_written(expected, chip, aligned(chip, 0, a, {1, chip.npu, 1, 16}, DT_FP32));
      const std::string what = std::string(g_name(g)) + " " + dtype_label(dtype);
      expect_local_memory(chip, expected, [&] { return what; });

      double &worst_g = worst[what];
      int failures = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        const int c = int(i % size_t(chip.npu)), w = int(i / size_t(chip.npu));
        const float x = decode(dtype, in[i]);
        if (g == G::exp_for_neg_arg && x > 0) continue;  // its domain: x <= 0 (NaN included)
        const float got = decode(dtype, get_bits(chip, data, 0, c, 0, w));
        const ld exact = reference(g, ld(x));
        const double d = ulps(dtype, got, exact);
        worst_g = std::max(worst_g, d);
        if (!(d <= bound_ulps) && failures++ < 5)
          ADD_FAILURE() << what << "(" << std::hexfloat << x << ") = " << got << ", expected " << double(exact)
                        << std::defaultfloat << " (" << d << " ulp)";
        // Zeros keep the exact value's sign.
        if (got == 0 && exact == 0 && std::signbit(got) != std::signbit(exact) && failures++ < 5)
          ADD_FAILURE() << what << "(" << x << ") = " << got << ": wrong sign of zero";
      }
    }
  }
  // Each function and dtype against its documented bound (checked per
  // element above); printed for the record.
  for (const auto &[what, d] : worst) std::printf("[ accuracy ] %s %s worst ulp %.4f\n", GetParam(), what.c_str(), d);
}

TEST_P(BdcGenericMath, TableLengths) {
  for (auto [dtype, e, l] : {std::tuple{DT_FP32, 10, 8}, std::tuple{DT_FP16, 7, 5}, std::tuple{DT_BFP16, 7, 5}}) {
    LenQuery q{dtype, 0, 0};
    ASSERT_EQ(cmodel_run(len_kernel_c, &q), 0) << cmodel_last_error();
    EXPECT_EQ(q.exp_len, e) << dtype_label(dtype);
    EXPECT_EQ(q.log_len, l) << dtype_label(dtype);
  }
  LenQuery bad{DT_INT8, 0, 0};
  EXPECT_RUN_FAILS_WITH(len_kernel_c, &bad, "dtype DT_INT8 is not allowed here");
  LenQuery fp8{DT_FP8E4M3, 0, 0};
  EXPECT_RUN_FAILS_WITH(len_kernel_c, &fp8, "DT_FP8E4M3 is not supported on");
}

// ---- the loaders ------------------------------------------------------------------------------

struct Load {
  int which;  // 0 exp, 1 log, 2 erf, 3 sin, 4 cos, 5 arcsin, 6..8 fp32 exp / log / erf loaders
  data_type_t dtype;
  local_addr_t addr;
};
void load_kernel(const void *arg) {
  const auto &l = *static_cast<const Load *>(arg);
  switch (l.which) {
    case 0: tpu_bdc_load_fp_exp_coeff(l.addr, l.dtype); break;
    case 1: tpu_bdc_load_fp_log_coeff(l.addr, l.dtype); break;
    case 2: tpu_bdc_load_fp_erf_coeff(l.addr, l.dtype); break;
    case 3: tpu_bdc_load_fp_sin_coeff(l.addr, l.dtype); break;
    case 4: tpu_bdc_load_fp_cos_coeff(l.addr, l.dtype); break;
    case 5: tpu_bdc_load_fp_arcsin_coeff(l.addr, l.dtype); break;
    case 6: tpu_bdc_load_fp32_exp_coeff(l.addr); break;
    case 7: tpu_bdc_load_fp32_log_coeff(l.addr); break;
    case 8: tpu_bdc_load_fp32_erf_coeff(l.addr); break;
  }
}

ld fact(int k) { return k == 0 ? 1 : k * fact(k - 1); }

// The documented fp16 / bf16 series tables, derived here (NaN: not checked
// entry by entry, the erf fit).
std::vector<ld> series(int which) {
  std::vector<ld> v;
  switch (which) {
    case 0: for (int k = 0; k < 7; ++k) v.push_back(1 / fact(k)); break;
    case 1: for (int k = 0; k < 4; ++k) v.push_back(2.0L / (2 * k + 1)); v.push_back(logl(2)); break;
    case 3: for (int k = 0; k < 5; ++k) v.push_back((k % 2 ? -1 : 1) / fact(2 * k + 1)); break;
    case 4: for (int k = 0; k < 5; ++k) v.push_back((k % 2 ? -1 : 1) / fact(2 * k)); break;
    case 5:
      for (int k = 0; k < 6; ++k) v.push_back(fact(2 * k) / (powl(4, k) * fact(k) * fact(k) * (2 * k + 1)));
      break;
    default: v.assign(10, NAN);
  }
  return v;
}

TEST_P(BdcGenericMath, LoadersWriteOneRowPerNpuAndNothingElse) {
  const Chip chip = local_model::chip(GetParam());
  const uint32_t addr = 4096;
  for (int which = 0; which < 6; ++which)
    for (data_type_t dtype : {DT_FP32, DT_FP16, DT_BFP16}) {
      const std::string what = std::to_string(which) + " " + dtype_label(dtype);
      // The fp32 image: what the fp32 loader writes (exp, log, erf) or the
      // fp32 table of the generic loader.
      Load l{which, dtype, addr};
      const std::vector<uint8_t> before = snapshot(chip);
      ASSERT_EQ(cmodel_run(load_kernel, &l), 0) << cmodel_last_error();
      const std::vector<uint8_t> after = snapshot(chip);
      // Which bytes changed: only [addr, addr + len * esize) of every NPU.
      const bool fp32_erf = which == 2 && (dtype == DT_FP32 || chip.name == "bm1684x");
      const int esize = dtype == DT_FP32 || fp32_erf ? 4 : 2;
      const std::vector<ld> want = series(which);
      const int len = dtype == DT_FP32 || fp32_erf ? -1 : int(want.size());
      for (int npu = 0; npu < chip.npu; ++npu) {
        const uint8_t *row = after.data() + size_t(npu) * chip.lmem + addr;
        EXPECT_EQ(std::memcmp(row, after.data() + addr, 64), 0) << what << ": NPU " << npu << " differs from NPU 0";
      }
      if (len > 0) {
        for (int k = 0; k < len; ++k) {
          uint16_t h;
          std::memcpy(&h, after.data() + addr + 2 * size_t(k), 2);
          if (!std::isnan(want[size_t(k)])) {
            EXPECT_EQ(h, uint16_t(encode(dtype, float(want[size_t(k)])))) << what << " entry " << k;
          }
        }
        // Nothing past the table.
        std::vector<uint8_t> expected = before;
        for (int npu = 0; npu < chip.npu; ++npu)
          std::memcpy(expected.data() + size_t(npu) * chip.lmem + addr, after.data() + size_t(npu) * chip.lmem + addr,
                      size_t(len * esize));
        expect_local_memory(chip, expected, [&] { return what; });
      }
      // The fp32 forms are the fp32 loaders' tables.
      if (which <= 2 && (dtype == DT_FP32 || fp32_erf)) {
        Load old{6 + which, DT_FP32, addr + 8192};
        ASSERT_EQ(cmodel_run(load_kernel, &old), 0) << cmodel_last_error();
        const size_t bytes = which == 0 ? 40 : which == 1 ? 32 : 40;  // 10, 8, 10 floats
        EXPECT_EQ(std::memcmp(local_at(addr), local_at(addr + 8192), bytes), 0) << what;
      }
    }
  // Other dtypes.
  Load bad{0, DT_INT16, addr};
  EXPECT_RUN_FAILS_WITH(load_kernel, &bad, "dtype DT_INT16 is not allowed here");
  Load fp8{1, DT_FP8E5M2, addr};
  EXPECT_RUN_FAILS_WITH(load_kernel, &fp8, "not supported on " + chip.name);
  Load tf32{2, DT_TF32, addr};
  EXPECT_RUN_FAILS_WITH(load_kernel, &tf32, "DT_TF32 is not supported");
  // Not on NPU 0.
  Load npu1{0, DT_FP16, chip.lmem + addr};
  EXPECT_RUN_FAILS_WITH(load_kernel, &npu1, "must start on NPU 0");
}

// ---- special values -----------------------------------------------------------------------------

struct Special {
  G g;
  float x, expected;  // NaN: any NaN; zeros: sign checked
};

TEST_P(BdcGenericMath, SpecialValuesInEveryDtype) {
  const Chip chip = local_model::chip(GetParam());
  const float inf = INFINITY, nan = NAN;
  const std::vector<Special> cases = {
      {G::exp, -inf, 0.0f}, {G::exp, inf, inf}, {G::exp, -0.0f, 1}, {G::exp, nan, nan},
      {G::exp_for_neg_arg, -inf, 0.0f}, {G::exp_for_neg_arg, -0.0f, 1},
      {G::expm1, -0.0f, -0.0f}, {G::expm1, -inf, -1}, {G::expm1, inf, inf},
      {G::log, 0.0f, -inf}, {G::log, -0.0f, -inf}, {G::log, -1, nan}, {G::log, inf, inf}, {G::log, 1, 0.0f},
      {G::sin, -0.0f, -0.0f}, {G::sin, inf, nan}, {G::cos, inf, nan}, {G::cos, 0.0f, 1},
      {G::arcsin, -0.0f, -0.0f}, {G::arcsin, 2, nan}, {G::arccos, 1, 0.0f}, {G::arccos, 2, nan},
      {G::arctanh, 1, inf}, {G::arctanh, -1, -inf}, {G::arctanh, -0.0f, -0.0f}, {G::arctanh, 2, nan},
      {G::erf, -0.0f, -0.0f}, {G::erf, inf, 1}, {G::erf, -inf, -1}, {G::erfc, -inf, 2}, {G::erfc, inf, 0.0f},
      {G::sigmoid, -inf, 0.0f}, {G::sigmoid, inf, 1}, {G::sigmoid, 0.0f, 0.5f},
      {G::silu, -inf, -0.0f}, {G::silu, -0.0f, -0.0f}, {G::silu, inf, inf},
      {G::gelu, -inf, -0.0f}, {G::gelu, inf, inf}, {G::gelu, -0.0f, -0.0f},
      {G::gelu_fast, -inf, -0.0f}, {G::gelu_fast, inf, inf}, {G::gelu_fast2, -inf, -0.0f},
      {G::gelu_fast2, inf, inf}, {G::elu, -inf, -elu_alpha}, {G::elu, -0.0f, -0.0f}, {G::elu, inf, inf},
      {G::sinh, -inf, -inf}, {G::sinh, -0.0f, -0.0f}, {G::cosh, -inf, inf}, {G::tanh, -inf, -1},
      {G::tanh, -0.0f, -0.0f}, {G::softplus, -inf, 0.0f}, {G::softplus, inf, inf}, {G::log_sigmoid, -inf, -inf},
      {G::log_sigmoid, inf, -0.0f},
  };
  for (data_type_t dtype : {DT_FP32, DT_FP16, DT_BFP16}) {
    const Tables t = layout_tables(chip, dtype);
    for (const Special &s : cases) {
      const Tensor data = aligned(chip, 0, 0, {1, chip.npu, 1, 8}, dtype);
      for (int c = 0; c < chip.npu; ++c)
        for (int w = 0; w < 8; ++w) set_bits(chip, data, 0, c, 0, w, encode(dtype, s.x));
      Pattern p{.g = s.g, .dtype = dtype, .t = t, .data = 0, .work = {4096, 8192, 12288, 16384}, .tile_w = 8,
                .tiles = 1};
      ASSERT_EQ(cmodel_run(pattern_kernel, &p), 0) << cmodel_last_error();
      const float got = decode(dtype, get_bits(chip, data, 0, chip.npu - 1, 0, 7));
      const std::string what = std::string(g_name(s.g)) + "(" + std::to_string(s.x) + ") " + dtype_label(dtype);
      if (std::isnan(s.expected)) {
        EXPECT_TRUE(std::isnan(got)) << what << " = " << got;
      } else {
        EXPECT_EQ(got, s.expected) << what;
        EXPECT_EQ(std::signbit(got), std::signbit(s.expected)) << what << ": sign";
      }
    }
  }
}

// Overflow and underflow edges of exp in each dtype: the largest input
// whose result is finite and the smallest whose result is not zero.
TEST_P(BdcGenericMath, ExpOverflowAndUnderflowEdges) {
  const Chip chip = local_model::chip(GetParam());
  struct Edge {
    data_type_t dtype;
    float x;
    bool finite;  // exp(x) finite (and nonzero)
  };
  const std::vector<Edge> edges = {
      {DT_FP32, 88.72283f, true}, {DT_FP32, 88.72284f, false}, {DT_FP32, -103.0f, true},
      {DT_FP16, 11.08f, true},     {DT_FP16, 11.09f, false},     {DT_FP16, -16.5f, true},
      {DT_BFP16, 88.5f, true},     {DT_BFP16, 89.0f, false},
  };
  for (const Edge &e : edges) {
    const Tables t = layout_tables(chip, e.dtype);
    const Tensor data = aligned(chip, 0, 0, {1, chip.npu, 1, 8}, e.dtype);
    const float x = decode(e.dtype, encode(e.dtype, e.x));
    for (int c = 0; c < chip.npu; ++c)
      for (int w = 0; w < 8; ++w) set_bits(chip, data, 0, c, 0, w, encode(e.dtype, x));
    Pattern p{.g = G::exp, .dtype = e.dtype, .t = t, .data = 0, .work = {4096, 8192}, .tile_w = 8, .tiles = 1};
    ASSERT_EQ(cmodel_run(pattern_kernel, &p), 0) << cmodel_last_error();
    const float got = decode(e.dtype, get_bits(chip, data, 0, 0, 0, 0));
    EXPECT_EQ(std::isfinite(got) && got != 0, e.finite) << dtype_label(e.dtype) << " exp(" << x << ") = " << got;
    EXPECT_LE(ulps(e.dtype, got, expl(ld(x))), bound_ulps) << dtype_label(e.dtype) << " exp(" << x << ")";
  }
}

// ---- table rules --------------------------------------------------------------------------------

struct Misuse {
  int kind;
  data_type_t dtype;
  local_addr_t table, other, fresh, exp_table;  // fresh: never loaded
};
// Data [1, NPU, 1, 16] at 0, work0 / work1 at 4096 / 8192, the exp table
// at `table` unless the kind says otherwise.
void misuse_kernel(const void *arg) {
  const auto &m = *static_cast<const Misuse *>(arg);
  const dim4 shape = {1, NPU_NUM, 1, 16}, wide = {1, NPU_NUM, 1, 64}, one = {1, 1, 1, 1};
  const scalar_t zero = {.u32 = 0};
  switch (m.kind) {
    case 0:  // no table loaded at all
      tpu_bdc_fp_exp(0, 0, 4096, 8192, m.fresh, &shape, m.dtype);
      break;
    case 1:  // the log table where the exp table is expected
      tpu_bdc_load_fp_log_coeff(m.table, m.dtype);
      tpu_bdc_fp_exp(0, 0, 4096, 8192, m.table, &shape, m.dtype);
      break;
    case 2:  // loaded, then overwritten
      tpu_bdc_load_fp_exp_coeff(m.table, m.dtype);
      tpu_bdc_set_C(m.table, zero, &one, NULL, DT_INT32);
      tpu_bdc_fp_exp(0, 0, 4096, 8192, m.table, &shape, m.dtype);
      break;
    case 3:  // the table of another dtype: warns, runs (twice: one warning)
      tpu_bdc_load_fp_exp_coeff(m.table, DT_FP32);
      tpu_bdc_fp_exp(0, 0, 4096, 8192, m.table, &shape, m.dtype);
      tpu_bdc_fp_exp(0, 0, 4096, 8192, m.table, &shape, m.dtype);
      break;
    case 4:  // the fp32 erf table (fp32 loader) with fp16 erf / erfc / gelu: silent
      tpu_bdc_load_fp_exp_coeff(m.table, m.dtype);
      tpu_bdc_load_fp32_erf_coeff(m.other);
      tpu_bdc_fp_erf(0, 0, 4096, 8192, 12288, m.table, m.other, &shape, m.dtype);
      tpu_bdc_fp_erfc(0, 0, 4096, 8192, 12288, m.table, m.other, &shape, m.dtype);
      tpu_bdc_fp_gelu(0, 0, 4096, 8192, 12288, 16384, m.table, m.other, &shape, m.dtype);
      break;
    case 5:  // fp32 loader and generic fp32 call are interchangeable
      tpu_bdc_load_fp32_exp_coeff(m.table);
      tpu_bdc_fp_exp(0, 0, 4096, 8192, m.table, &shape, DT_FP32);
      tpu_bdc_load_fp_exp_coeff(m.other, DT_FP32);
      tpu_bdc_load_fp32_exp_table(m.exp_table);
      tpu_bdc_fp32_exp(0, 0, 4096, 8192, m.other, m.exp_table, &shape);
      break;
    case 6:  // work0 overlapping src
      tpu_bdc_load_fp_exp_coeff(m.table, m.dtype);
      tpu_bdc_fp_exp(16384, 0, 64, 8192, m.table, &wide, m.dtype);
      break;
    case 7:  // work1 overlapping the table
      tpu_bdc_load_fp_exp_coeff(m.table, m.dtype);
      tpu_bdc_fp_exp(0, 0, 4096, m.table, m.table, &shape, m.dtype);
      break;
    case 8:  // work0 misaligned
      tpu_bdc_load_fp_exp_coeff(m.table, m.dtype);
      tpu_bdc_fp_exp(0, 0, 4098, 8192, m.table, &shape, m.dtype);
      break;
    case 9:  // work0 outside local memory
      tpu_bdc_load_fp_exp_coeff(m.table, m.dtype);
      tpu_bdc_fp_exp(0, 0, local_addr_t(NPU_NUM) * local_addr_t(LOCAL_MEM_SIZE) - 64, 8192, m.table, &shape,
                     m.dtype);
      break;
    case 10:  // work0 == work1
      tpu_bdc_load_fp_exp_coeff(m.table, m.dtype);
      tpu_bdc_fp_exp(0, 0, 4096, 4096, m.table, &shape, m.dtype);
      break;
    case 11:  // dst over the table
      tpu_bdc_load_fp_exp_coeff(m.table, m.dtype);
      tpu_bdc_fp_exp(m.table, 0, 4096, 8192, m.table, &shape, m.dtype);
      break;
    case 12:  // an integer dtype
      tpu_bdc_fp_exp(0, 0, 4096, 8192, m.table, &shape, DT_INT16);
      break;
    case 13:  // FP8
      tpu_bdc_fp_log(0, 0, 4096, m.table, &shape, DT_FP8E4M3);
      break;
    case 14:  // bf16-only function with... nothing wrong: the bf16 table
      tpu_bdc_load_fp_exp_coeff(m.table, DT_BFP16);
      tpu_bdc_bf16_sigmoid_fast(0, 0, 4096, 8192, m.table, NO_USE, &shape);
      break;
    case 15:  // the fp16 erf table... of the wrong function: sin table as erf
      tpu_bdc_load_fp_exp_coeff(m.table, m.dtype);
      tpu_bdc_load_fp_sin_coeff(m.other, m.dtype);
      tpu_bdc_fp_erf(0, 0, 4096, 8192, 12288, m.table, m.other, &shape, m.dtype);
      break;
  }
}

std::string run_capturing_stderr(const Misuse &m, int *status) {
  testing::internal::CaptureStderr();
  *status = cmodel_run(misuse_kernel, &m);
  return testing::internal::GetCapturedStderr();
}

TEST_P(BdcGenericMath, TableRulesAndOperandChecks) {
  const Chip chip = local_model::chip(GetParam());
  const local_addr_t table = chip.lmem - 1024, other = chip.lmem - 512, fresh = chip.lmem - 2048,
                     exp_table = chip.lmem - 4096;
  for (data_type_t dtype : {DT_FP16, DT_BFP16, DT_FP32}) {
    const std::string dn = dtype == DT_FP32 ? "DT_FP32" : dtype == DT_FP16 ? "DT_FP16" : "DT_BFP16";
    SCOPED_TRACE(dn);
    auto m = [&](int kind) { return Misuse{kind, dtype, table, other, fresh, exp_table}; };
    Misuse k = m(0);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "coeff_addr " + hex(fresh) + " holds no " + dn +
                                                 " exp table; call tpu_bdc_load_fp_exp_coeff(coeff_addr, " + dn + ")");
    k = m(1);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "log coefficients instead");
    k = m(2);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "have been overwritten since");
    if (dtype != DT_FP32) {
      k = m(3);
      int status = -1;
      const std::string err = run_capturing_stderr(k, &status);
      EXPECT_EQ(status, 0) << cmodel_last_error();
      EXPECT_NE(err.find("warning: tpu_bdc_fp_exp: coeff_addr " + hex(table) + " holds the fp32 exp coefficients"),
                std::string::npos)
          << err;
      EXPECT_EQ(err.find("warning"), err.rfind("warning")) << "one warning per address: " << err;
      const auto warnings = run_stats().at("warnings");
      EXPECT_EQ(warnings.size(), 1u) << warnings.dump();
      k = m(4);
      const std::string silent = run_capturing_stderr(k, &status);
      EXPECT_EQ(status, 0) << cmodel_last_error();
      EXPECT_EQ(silent.find("warning"), std::string::npos) << silent;
    }
    k = m(5);
    EXPECT_EQ(cmodel_run(misuse_kernel, &k), 0) << cmodel_last_error();
    k = m(6);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "work0 at 0x40");
    EXPECT_NE(std::string(cmodel_last_error()).find("overlaps src"), std::string::npos) << cmodel_last_error();
    k = m(7);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "overlaps coeff_addr");
    k = m(8);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "work0 local address 0x1002");
    k = m(9);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "work0");
    k = m(10);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "work1 at 0x1000");
    k = m(11);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "writing dst would overwrite the table");
    k = m(12);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "dtype DT_INT16 is not allowed here; expected one of DT_FP32");
    k = m(13);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "dtype DT_FP8E4M3 is not supported on " + chip.name);
    k = m(14);
    EXPECT_EQ(cmodel_run(misuse_kernel, &k), 0) << cmodel_last_error();
    k = m(15);
    EXPECT_RUN_FAILS_WITH(misuse_kernel, &k, "erf_coeff_addr " + hex(other) + " holds no " + dn + " erf table");
    EXPECT_NE(std::string(cmodel_last_error()).find("sin coefficients instead"), std::string::npos)
        << cmodel_last_error();
  }
}

// An FP32 erf table loaded by tpu_bdc_load_fp_erf_coeff(addr, DT_FP32) also
// serves FP16 (both chips; on bm1684x it is the only erf table), silently,
// and the results are the same as with the dtype's own loader.
TEST_P(BdcGenericMath, Fp32ErfTableServesFp16Erfc) {
  const Chip chip = local_model::chip(GetParam());
  for (data_type_t dtype : {DT_FP16, DT_BFP16}) {
    std::vector<std::vector<uint8_t>> results;
    for (bool fp32_loader : {false, true}) {
      const Tables t = layout_tables(chip, dtype);
      const Tensor data = aligned(chip, 0, 0, {1, chip.npu, 1, 64}, dtype);
      for (int c = 0; c < chip.npu; ++c)
        for (int w = 0; w < 64; ++w) set_bits(chip, data, 0, c, 0, w, encode(dtype, float(c * 64 + w - 1024) / 256));
      Pattern p{.g = G::erfc, .dtype = dtype, .t = t, .data = 0, .work = {8192, 12288, 16384}, .tile_w = 32,
                .tiles = 2, .fp32_erf_loader = fp32_loader};
      testing::internal::CaptureStderr();
      const int status = cmodel_run(pattern_kernel, &p);
      const std::string err = testing::internal::GetCapturedStderr();
      ASSERT_EQ(status, 0) << cmodel_last_error();
      EXPECT_EQ(err.find("warning"), std::string::npos) << err;
      results.emplace_back(local_at(0), local_at(0) + 64 * 2);
    }
    EXPECT_EQ(results[0], results[1]);
  }
}

// The torch-tpu reservation: tpu_aligned_feature_size(1, 10, dtype) bytes
// for the erf table, directly followed by another buffer holding data (here
// fp_erf's input). Each erf loader writes within the reservation (48 bytes
// for FP32 on bm1688, 64 on bm1684x): the neighbour's bytes stay as they
// were in every NPU, and fp_erf runs with the table and gives erf of the
// neighbour's data.
struct ErfReservation {
  data_type_t dtype;  // of the data, the call and the reservation
  bool fp32_loader;   // tpu_bdc_load_fp32_erf_coeff, else tpu_bdc_load_fp_erf_coeff(erf, dtype)
  local_addr_t exp, erf, neighbour, dst, work[3];
  int w;
};
void erf_reservation_kernel(const void *arg) {
  const auto &k = *static_cast<const ErfReservation *>(arg);
  tpu_bdc_load_fp_exp_coeff(k.exp, k.dtype);
  if (k.fp32_loader)
    tpu_bdc_load_fp32_erf_coeff(k.erf);
  else
    tpu_bdc_load_fp_erf_coeff(k.erf, k.dtype);
  const dim4 shape = {1, NPU_NUM, 1, k.w};
  tpu_bdc_fp_erf(k.dst, k.neighbour, k.work[0], k.work[1], k.work[2], k.exp, k.erf, &shape, k.dtype);
}

TEST_P(BdcGenericMath, ErfTableFitsTheTorchTpuReservation) {
  const Chip chip = local_model::chip(GetParam());
  for (auto [dtype, fp32_loader] : {std::tuple{DT_FP32, true}, std::tuple{DT_FP32, false},
                                    std::tuple{DT_FP16, false}, std::tuple{DT_BFP16, false}}) {
    const std::string what = std::string(dtype_label(dtype)) + (fp32_loader ? " fp32 loader" : " generic loader");
    const uint32_t reserved = uint32_t(tpu_aligned_feature_size(1, 10, dtype));
    if (dtype == DT_FP32) {
      EXPECT_EQ(reserved, chip.name == "bm1684x" ? 64u : 48u) << what;
    }
    ErfReservation k{.dtype = dtype, .fp32_loader = fp32_loader, .exp = 0, .erf = 1024, .neighbour = 1024 + reserved,
                     .dst = 4096, .work = {8192, 12288, 16384}, .w = 32};
    const Tensor data = aligned(chip, 0, k.neighbour, {1, chip.npu, 1, k.w}, dtype);
    for (int c = 0; c < chip.npu; ++c)
      for (int w = 0; w < k.w; ++w) set_bits(chip, data, 0, c, 0, w, encode(dtype, float(c * k.w + w - 512) / 128));
    const std::vector<uint8_t> before = snapshot(chip);
    ASSERT_EQ(cmodel_run(erf_reservation_kernel, &k), 0) << what << ": " << cmodel_last_error();
    const uint32_t data_bytes = uint32_t(k.w) * uint32_t(dtype == DT_FP32 ? 4 : 2);
    for (int npu = 0; npu < chip.npu; ++npu) {
      const size_t o = size_t(npu) * chip.lmem + k.neighbour;
      EXPECT_EQ(std::memcmp(local_at(o), before.data() + o, data_bytes), 0) << what << ": NPU " << npu;
    }
    // Nothing else changed but the reservation, the exp table, dst and the work buffers.
    std::vector<uint8_t> expected = before;
    accept_written(expected, chip, aligned(chip, 0, k.erf, {1, chip.npu, 1, int(reserved)}, DT_INT8));
    accept_written(expected, chip, aligned(chip, 0, k.exp, {1, chip.npu, 1, 16}, DT_FP32));
    for (local_addr_t a : {k.dst, k.work[0], k.work[1], k.work[2]})
      accept_written(expected, chip, aligned(chip, 0, a, {1, chip.npu, 1, k.w}, dtype));
    expect_local_memory(chip, expected, [&] { return what; });
    const Tensor dst = aligned(chip, 0, k.dst, {1, chip.npu, 1, k.w}, dtype);
    for (int c = 0; c < chip.npu; ++c)
      for (int w = 0; w < k.w; ++w) {
        const float x = decode(dtype, get_bits(chip, data, 0, c, 0, w));
        const float got = decode(dtype, get_bits(chip, dst, 0, c, 0, w));
        EXPECT_LE(ulps(dtype, got, erfl(x)), bound_ulps) << what << ": erf(" << x << ") = " << got;
      }
  }
}

// The cost: several transcendental passes, scaled by the dtype's EU count.
TEST_P(BdcGenericMath, CostsAreBookedAsBdcWork) {
  const Chip chip = local_model::chip(GetParam());
  std::map<std::string, double> cycles;
  for (data_type_t dtype : {DT_FP32, DT_FP16}) {
    for (G g : {G::exp, G::erf}) {
      const Tables t = layout_tables(chip, dtype);
      Pattern p{.g = g, .dtype = dtype, .t = t, .data = 0, .work = {16384, 32768, 49152}, .tile_w = 1024,
                .tiles = 1};
      ASSERT_EQ(cmodel_run(pattern_kernel, &p), 0) << cmodel_last_error();
      cycles[std::string(g_name(g)) + dtype_label(dtype)] = bdc_cycles();
      const auto commands = run_stats().at("commands");
      EXPECT_EQ(commands.at(std::string("tpu_bdc_fp_") + g_name(g)).get<int>(), 1) << commands.dump();
    }
  }
  // fp16 packs twice the elements per EU pass; erf costs twice exp.
  EXPECT_LT(cycles["expfp16"], cycles["expfp32"]);
  EXPECT_GT(cycles["erffp32"], cycles["expfp32"]);
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcGenericMath, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
