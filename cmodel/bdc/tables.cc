#include "tables.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "cmodel/dtype.h"
#include "cmodel/numeric/float_convert.h"

namespace cmodel::bdc {
namespace {

// ---- the tables ----------------------------------------------------------------------------
// Every value is the fp32 nearest to the exact number named beside it.
// "Scheme" is the evaluation each table is designed for; the tables test
// evaluates each scheme in double with these fp32 values and checks the
// stated accuracy. The emulator's own functions compute in double and only
// check that the tables were loaded (math.h).

// exp coefficients, len 10: 1/k!, k = 0..9, the Taylor coefficients of
// e^r. Scheme (with the exp table): x = n + r, n = nearest integer to x
// clamped to [-103, 88], so |r| <= 1/2 (up to 0.73 just below the overflow
// threshold 88.72), e^x = table[n + 103] * sum_k coeff[k] r^k; truncation
// error below 2e-8 relative (5e-10 for |r| <= 1/2), so the result is within
// ~1 ulp of e^x.
constexpr float exp_coeff[] = {
    0x1p+0f,          // 1/0!
    0x1p+0f,          // 1/1!
    0x1p-1f,          // 1/2!
    0x1.555556p-3f,   // 1/3!
    0x1.555556p-5f,   // 1/4!
    0x1.111112p-7f,   // 1/5!
    0x1.6c16c2p-10f,  // 1/6!
    0x1.a01a02p-13f,  // 1/7!
    0x1.a01a02p-16f,  // 1/8!
    0x1.71de3ap-19f,  // 1/9!
};

// exp table, len 192: e^i for the integers i = -103 .. 88 (entry i + 103),
// the integer powers of e that fp32 can hold (e^-104 is below the smallest
// subnormal, e^89 above FLT_MAX). Entries below e^-87 are subnormal and
// hence only approximately e^i. Built at start-up: the fp32 rounding of the
// host's double exp(i), which is within 1 ulp of double, so every entry is
// the correctly rounded e^i (no e^i lies that close to an fp32 midpoint).
constexpr int exp_table_first = -103;
constexpr int exp_table_len = 192;

// log coefficients, len 8: 2/(2k+1), k = 0..6, then ln 2. Scheme: x = m 2^e
// with m in [sqrt(1/2), sqrt(2)), s = (m - 1)/(m + 1) (|s| <= 0.1716),
// ln x = e ln2 + s * sum_{k<7} coeff[k] s^(2k) (the series of 2 atanh(s));
// truncation error below 1e-12 relative. coeff[0..6] can be fed to
// tpu_bdc_fp_taylor (num 7) with src = s^2.
constexpr float log_coeff[] = {
    0x1p+1f,         // 2/1
    0x1.555556p-1f,  // 2/3
    0x1.99999ap-2f,  // 2/5
    0x1.24924ap-2f,  // 2/7
    0x1.c71c72p-3f,  // 2/9
    0x1.745d18p-3f,  // 2/11
    0x1.3b13b2p-3f,  // 2/13
    0x1.62e43p-1f,   // ln 2
};

// erf coefficients, len 10 (the 10 entries torch-tpu's kernels reserve
// for the erf table: tpu_aligned_feature_size(1, 10, dtype)).
// P(t) = sum_k coeff[k] t^k, k = 0..9, with erfc(z) = t exp(-z^2 + P(t)),
// t = 1/(1 + z/2), z >= 0 (erfc(-z) = 2 - erfc(z)); erf(z) = 1 - erfc(z).
// P is our own fit of log(erfc(z)/t) + z^2 over the whole t in [0, 1]
// (z in [0, inf); the form of the classic Chebyshev erfc approximation):
// the degree-9 minimax polynomial by Remez exchange in 30-digit arithmetic
// (levelled error 9.7e-8), the coefficients rounded to fp32 one at a time
// from the highest degree with the lower ones re-minimaxed after each
// rounding, then a search of +-3 ulp moves of one or two coefficients that
// lowers the maximum error. Measured (P evaluated in double, 20001 points
// per range): erfc within 1.03e-7 relative on z in [0, 10] and within
// 1.05e-7 for z > 10 (P(0) = -ln(2 sqrt(pi)) to 1.05e-7); erf = 1 - erfc
// within 9.1e-8 absolute everywhere. The table carries no series for small
// |z|: relative accuracy of erf near 0 needs erf's own series
// (2z/sqrt(pi)) (1 - z^2/3 + ...), whose coefficients a kernel has in code.
constexpr float erf_coeff[] = {
    -0x1.43f89cp+0f,  0x1.00017cp+0f,  0x1.7f1aacp-2f,  0x1.8ace24p-4f,  -0x1.78c348p-3f,  // t^0 .. t^4
    0x1.15dd2ep-2f,  -0x1.1f006cp+0f,  0x1.792752p+0f, -0x1.a06c4ep-1f,   0x1.599f8p-3f,   // t^5 .. t^9
};

// sin coefficients, len 8: (-1)^k / (2k+1)!, k = 0..7. Scheme: reduce x to
// r = x - j pi with |r| <= pi/2, sin x = (-1)^j r sum_k coeff[k] r^(2k);
// truncation below 1e-11.
constexpr float sin_coeff[] = {
    0x1p+0f,          // +1/1!
    -0x1.555556p-3f,  // -1/3!
    0x1.111112p-7f,   // +1/5!
    -0x1.a01a02p-13f, // -1/7!
    0x1.71de3ap-19f,  // +1/9!
    -0x1.ae6456p-26f, // -1/11!
    0x1.612462p-33f,  // +1/13!
    -0x1.ae7f3ep-41f, // -1/15!
};

// cos coefficients, len 8: (-1)^k / (2k)!, k = 0..7. Scheme: as sin,
// cos x = (-1)^j sum_k coeff[k] r^(2k); truncation below 1e-10 absolute.
constexpr float cos_coeff[] = {
    0x1p+0f,          // +1/0!
    -0x1p-1f,         // -1/2!
    0x1.555556p-5f,   // +1/4!
    -0x1.6c16c2p-10f, // -1/6!
    0x1.a01a02p-16f,  // +1/8!
    -0x1.27e4fcp-22f, // -1/10!
    0x1.1eed8ep-29f,  // +1/12!
    -0x1.93974ap-37f, // -1/14!
};

// tan coefficients, len 16: the Taylor coefficients of tan x at 0,
// (-1)^(n-1) 2^(2n) (2^(2n) - 1) B_2n / (2n)! for x^(2n-1), n = 1..16
// (B = Bernoulli numbers, computed exactly). Scheme: reduce x to
// r = x - j pi/2 with |r| <= pi/4; tan x = T(r) for even j and -1/T(r) for
// odd j, T(r) = r sum_k coeff[k] r^(2k); truncation below 2e-10 relative.
constexpr float tan_coeff[] = {
    0x1p+0f,          // 1
    0x1.555556p-2f,   // 1/3
    0x1.111112p-3f,   // 2/15
    0x1.ba1ba2p-5f,   // 17/315
    0x1.664f48p-6f,   // 62/2835
    0x1.226e36p-7f,   // 1382/155925
    0x1.d6d3dp-9f,    // 21844/6081075
    0x1.7da364p-10f,  // 929569/638512875
    0x1.355824p-11f,  // 6404582/10854718875
    0x1.f57d78p-13f,  // 443861162/1856156927625
    0x1.967e18p-14f,  // x^21
    0x1.497d8ep-15f,  // x^23
    0x1.0b132ep-16f,  // x^25
    0x1.b0f72ep-18f,  // x^27
    0x1.5ef2dap-19f,  // x^29
    0x1.1c77ep-20f,   // x^31
};

// arcsin coefficients, len 12: (2k)! / (4^k (k!)^2 (2k+1)), k = 0..11, the
// Taylor coefficients of arcsin x for x^(2k+1). Scheme: for |x| <= 1/2,
// arcsin x = x sum_k coeff[k] x^(2k) (truncation below 3e-9 relative); for
// |x| > 1/2, arcsin x = sign(x) (pi/2 - 2 arcsin(sqrt((1 - |x|)/2))).
constexpr float arcsin_coeff[] = {
    0x1p+0f,          // 1
    0x1.555556p-3f,   // 1/6
    0x1.333334p-4f,   // 3/40
    0x1.6db6dcp-5f,   // 5/112
    0x1.f1c71cp-6f,   // 35/1152
    0x1.6e8ba2p-6f,   // 63/2816
    0x1.1c4ec4p-6f,   // 231/13312
    0x1.c9999ap-7f,   // 143/10240
    0x1.7a8788p-7f,   // 6435/557056
    0x1.3fde5p-7f,    // 12155/1245184
    0x1.12ef3cp-7f,   // 46189/5505024
    0x1.df3bd4p-8f,   // 88179/12058624
};

const std::array<float, exp_table_len> &exp_table() {
  static const std::array<float, exp_table_len> table = [] {
    std::array<float, exp_table_len> t{};
    for (int i = 0; i < exp_table_len; ++i) t[size_t(i)] = float(std::exp(double(i + exp_table_first)));
    return t;
  }();
  return table;
}

// ---- fp16 / bf16 tables (tpu_bdc_load_fp_*_coeff(addr, DT_FP16 / DT_BFP16)) -----------------
// Our own, like the fp32 ones: the same series, fewer terms (what the
// dtype's precision needs), each value the nearest fp16 / bf16 to the exact
// number. Stored in local memory in the table's dtype. Schemes as the fp32
// tables above; truncation errors at the ends of the reduced ranges:
//   exp, len 7 (= sfu_taylor_exp_len): 1/k!, k = 0..6; |r| <= 1/2: 2e-6 relative.
//   log, len 5 (= sfu_taylor_log_len): 2/(2k+1), k = 0..3, then ln 2; |s| <= 0.1716: 3e-8.
//   sin, len 5: (-1)^k/(2k+1)!, k = 0..4; |r| <= pi/2: 4e-6.
//   cos, len 5: (-1)^k/(2k)!, k = 0..4; |r| <= pi/2: 3e-5 absolute.
//   arcsin, len 6: (2k)!/(4^k (k!)^2 (2k+1)), k = 0..5; |x| <= 1/2: 5e-6 relative.
//   erf, len 10 (bm1688 only; bm1684x has no fp16 / bf16 erf table): P(t)
//     of erfc(z) = t exp(-z^2 + P(t)), t = 1/(1 + z/2), of degree 9 as the
//     fp32 table (fitted separately for each dtype): our Chebyshev fit of degree 9 (40-digit
//     arithmetic), the coefficients rounded to the dtype one at a time from
//     the highest degree, refitting the lower ones after each rounding; P
//     within 1.2e-4 absolute (erfc within 1.2e-4 relative: 0.25 ulp of fp16,
//     0.03 ulp of bf16), dominated by the rounding of P(0) = -ln(2 sqrt(pi)).
//     Small |z| uses erf's own series, which needs no table in these
//     precisions (erf(z) = 2z/sqrt(pi) (1 - z^2/3) within 3e-5 for |z| < 1/8).
constexpr double exp_series[] = {1, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720};
constexpr double log_series[] = {2, 2.0 / 3, 2.0 / 5, 2.0 / 7, 0.69314718055994530942};
constexpr double sin_series[] = {1, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880};
constexpr double cos_series[] = {1, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320};
constexpr double arcsin_series[] = {1, 1.0 / 6, 3.0 / 40, 5.0 / 112, 35.0 / 1152, 63.0 / 2816};
constexpr float erf_fit_fp16[] = {
    -0x1.44p+0f, 0x1p+0f, 0x1.7ecp-2f, 0x1.9e4p-4f, -0x1.a98p-3f,
    0x1.5a8p-2f, -0x1.3bcp+0f, 0x1.958p+0f, -0x1.becp-1f, 0x1.74cp-3f,
};
constexpr float erf_fit_bf16[] = {
    -0x1.44p+0f, 0x1p+0f, 0x1.8p-2f, 0x1.84p-4f, -0x1.8ap-3f,
    0x1.46p-2f, -0x1.38p+0f, 0x1.94p+0f, -0x1.bep-1f, 0x1.74p-3f,
};

// Each exact value rounded to the dtype (nearest-even), kept as float.
std::vector<float> rounded(std::span<const double> exact, data_type_t dtype) {
  std::vector<float> v;
  for (double x : exact)
    v.push_back(dtype == DT_FP16 ? numeric::fp16_to_fp32(numeric::fp32_to_fp16(float(x), RM_HALF_TO_EVEN))
                                 : numeric::bf16_to_fp32(numeric::fp32_to_bf16(float(x), RM_HALF_TO_EVEN)));
  return v;
}

const TableInfo *infos() {
  static const std::vector<float> exp16 = rounded(exp_series, DT_FP16), exp_bf = rounded(exp_series, DT_BFP16),
                                  log16 = rounded(log_series, DT_FP16), log_bf = rounded(log_series, DT_BFP16),
                                  sin16 = rounded(sin_series, DT_FP16), sin_bf = rounded(sin_series, DT_BFP16),
                                  cos16 = rounded(cos_series, DT_FP16), cos_bf = rounded(cos_series, DT_BFP16),
                                  asin16 = rounded(arcsin_series, DT_FP16),
                                  asin_bf = rounded(arcsin_series, DT_BFP16);
  static const TableInfo all[table_count] = {
      {"fp32 exp coefficients", "tpu_bdc_load_fp32_exp_coeff", "coeff_addr", exp_coeff, TableFunc::exp, DT_FP32},
      {"fp32 exp table", "tpu_bdc_load_fp32_exp_table", "table_addr", exp_table(), TableFunc::exp_table, DT_FP32},
      {"fp32 log coefficients", "tpu_bdc_load_fp32_log_coeff", "coeff_addr", log_coeff, TableFunc::log, DT_FP32},
      {"fp32 erf coefficients", "tpu_bdc_load_fp32_erf_coeff", "coeff_addr", erf_coeff, TableFunc::erf, DT_FP32},
      {"fp32 sin coefficients", "tpu_bdc_load_fp32_sin_coeff", "coeff_addr", sin_coeff, TableFunc::sin, DT_FP32},
      {"fp32 cos coefficients", "tpu_bdc_load_fp32_cos_coeff", "coeff_addr", cos_coeff, TableFunc::cos, DT_FP32},
      {"fp32 tan coefficients", "tpu_bdc_load_fp32_tan_coeff", "coeff_addr", tan_coeff, TableFunc::tan, DT_FP32},
      {"fp32 arcsin coefficients", "tpu_bdc_load_fp32_arcsin_coeff", "coeff_addr", arcsin_coeff, TableFunc::arcsin,
       DT_FP32},
      {"fp16 exp coefficients", "tpu_bdc_load_fp_exp_coeff", "coeff_addr", exp16,
       TableFunc::exp, DT_FP16},
      {"bf16 exp coefficients", "tpu_bdc_load_fp_exp_coeff", "coeff_addr", exp_bf,
       TableFunc::exp, DT_BFP16},
      {"fp16 log coefficients", "tpu_bdc_load_fp_log_coeff", "coeff_addr", log16,
       TableFunc::log, DT_FP16},
      {"bf16 log coefficients", "tpu_bdc_load_fp_log_coeff", "coeff_addr", log_bf,
       TableFunc::log, DT_BFP16},
      {"fp16 erf coefficients", "tpu_bdc_load_fp_erf_coeff", "coeff_addr", erf_fit_fp16, TableFunc::erf, DT_FP16},
      {"bf16 erf coefficients", "tpu_bdc_load_fp_erf_coeff", "coeff_addr", erf_fit_bf16, TableFunc::erf, DT_BFP16},
      {"fp16 sin coefficients", "tpu_bdc_load_fp_sin_coeff", "coeff_addr", sin16,
       TableFunc::sin, DT_FP16},
      {"bf16 sin coefficients", "tpu_bdc_load_fp_sin_coeff", "coeff_addr", sin_bf,
       TableFunc::sin, DT_BFP16},
      {"fp16 cos coefficients", "tpu_bdc_load_fp_cos_coeff", "coeff_addr", cos16,
       TableFunc::cos, DT_FP16},
      {"bf16 cos coefficients", "tpu_bdc_load_fp_cos_coeff", "coeff_addr", cos_bf,
       TableFunc::cos, DT_BFP16},
      {"fp16 arcsin coefficients", "tpu_bdc_load_fp_arcsin_coeff", "coeff_addr", asin16,
       TableFunc::arcsin, DT_FP16},
      {"bf16 arcsin coefficients", "tpu_bdc_load_fp_arcsin_coeff", "coeff_addr", asin_bf,
       TableFunc::arcsin, DT_BFP16},
  };
  return all;
}

// Static-memory slots: offset and capacity in bytes (spec §1, S6 memmap.h).
// `none`: the chip has no such table.
struct Slot {
  uint32_t offset;
  uint32_t capacity;
};
constexpr uint32_t none = UINT32_MAX;

Slot static_slot(const ChipSpec &chip, Table table) {
  // bm1684x (tpu_6_0). bm1688 (tpul_6_0) has no EXP_TABLE: its sequence
  // starts with EXP_TAYLOR at 0, i.e. 1024 bytes lower. After TAN come the
  // fp16 / bf16 exp / log / sin / cos Taylor tables (16 entries each; their
  // order and 64-byte slots are ours), then ARCTAN (32 floats, @2880).
  // The fp16 / bf16 arcsin tables (both chips) and erf tables (bm1688's
  // ERF_FP16 / ERF_BF16) have SDK-chosen slots from 0x2400 on.
  static constexpr Slot bm1684x[table_count] = {
      {1024, 128},  // exp_coeff  (EXP_TAYLOR)
      {0, 1024},    // exp_table  (EXP_TABLE)
      {1152, 256},  // log_coeff  (LOG_TAYLOR)
      {1408, 64},   // erf_coeff  (ERF_TAYLOR; the 10-entry table uses 40 bytes)
      {1728, 128},  // sin_coeff
      {1856, 128},  // cos_coeff
      {2240, 128},  // tan_coeff
      {1984, 256},  // arcsin_coeff
      {2368, 64},   // exp_coeff_fp16
      {2432, 64},   // exp_coeff_bf16
      {2496, 64},   // log_coeff_fp16
      {2560, 64},   // log_coeff_bf16
      {none, 0},    // erf_coeff_fp16 (bm1688 only)
      {none, 0},    // erf_coeff_bf16 (bm1688 only)
      {2624, 64},   // sin_coeff_fp16
      {2688, 64},   // sin_coeff_bf16
      {2752, 64},   // cos_coeff_fp16
      {2816, 64},   // cos_coeff_bf16
      {0x2400, 64}, // arcsin_coeff_fp16 (ours)
      {0x2440, 64}, // arcsin_coeff_bf16 (ours)
  };
  Slot slot = bm1684x[int(table)];
  if (std::string_view(chip.name) != "bm1684x") {
    if (table == Table::exp_table) return {0x2000, 1024};  // SDK-chosen, see tables.h
    if (table == Table::erf_coeff_fp16) return {0x2480, 64};  // ERF_FP16 (offset ours)
    if (table == Table::erf_coeff_bf16) return {0x24c0, 64};  // ERF_BF16 (offset ours)
    if (slot.offset < 0x2000) slot.offset -= 1024;
  }
  return slot;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

const TableInfo &table_info(Table table) { return infos()[int(table)]; }

const char *table_func_name(TableFunc func) {
  switch (func) {
    case TableFunc::exp: return "exp";
    case TableFunc::exp_table: return "exp table";
    case TableFunc::log: return "log";
    case TableFunc::erf: return "erf";
    case TableFunc::sin: return "sin";
    case TableFunc::cos: return "cos";
    case TableFunc::tan: return "tan";
    case TableFunc::arcsin: return "arcsin";
  }
  return "?";
}

std::span<const uint8_t> table_bytes(Table table) {
  static const std::vector<std::vector<uint8_t>> all = [] {
    std::vector<std::vector<uint8_t>> out;
    for (int i = 0; i < table_count; ++i) {
      const TableInfo &info = table_info(Table(i));
      std::vector<uint8_t> b;
      for (float v : info.values) {
        if (info.dtype == DT_FP32) {
          const uint32_t u = bits_of(v);
          for (int k = 0; k < 4; ++k) b.push_back(uint8_t(u >> (8 * k)));
        } else {
          const uint16_t h = info.dtype == DT_FP16 ? numeric::fp32_to_fp16(v, RM_HALF_TO_EVEN)
                                                   : numeric::fp32_to_bf16(v, RM_HALF_TO_EVEN);
          b.push_back(uint8_t(h));
          b.push_back(uint8_t(h >> 8));
        }
      }
      out.push_back(std::move(b));
    }
    return out;
  }();
  return all[size_t(table)];
}

uint32_t static_table_offset(const ChipSpec &chip, Table table) { return static_slot(chip, table).offset; }

void install_static_tables(Memory &memory) {
  for (int i = 0; i < table_count; ++i) {
    const Table table = Table(i);
    const Slot slot = static_slot(memory.chip(), table);
    if (slot.offset == none) continue;
    const std::span<const uint8_t> bytes = table_bytes(table);
    if (bytes.size() > slot.capacity)
      fail(ErrorKind::config, "the {} ({} bytes) do not fit their {}-byte static-memory slot",
           table_info(table).what, bytes.size(), slot.capacity);
    std::memcpy(memory.static_mem(slot.offset, bytes.size()), bytes.data(), bytes.size());
  }
}

TensorRef table_operand(Context &ctx, const char *param, local_addr_t addr, Table table) {
  const TableInfo &info = table_info(table);
  const dim4 shape = {1, ctx.chip.npu_num, 1, int(info.values.size())};
  const TensorRef t = operand(ctx, param, addr, shape, nullptr, info.dtype);
  if (t.start_npu != 0)
    fail(ErrorKind::illegal_command,
         "{} {:#x} is on NPU {}; the {} must start on NPU 0 (a [1, {}, 1, {}] {} tensor, as {} writes it)", param,
         addr, t.start_npu, info.what, ctx.chip.npu_num, info.values.size(),
         info.dtype == DT_FP32 ? "fp32" : info.dtype == DT_FP16 ? "fp16" : "bf16", info.loader);
  return t;
}

namespace {

// Every NPU's copy of the table at NPU-0 offset `addr` holds `table`.
bool holds(Context &ctx, local_addr_t addr, Table table) {
  const std::span<const uint8_t> want = table_bytes(table);
  if (addr >= ctx.chip.local_mem_bytes || addr + want.size() > ctx.chip.local_mem_bytes) return false;
  for (int npu = 0; npu < ctx.chip.npu_num; ++npu)
    if (std::memcmp(ctx.memory.local(npu, addr, want.size()), want.data(), want.size()) != 0) return false;
  return true;
}

// "; it holds the fp32 log coefficients instead" when another table (of
// another function than `func`) is intact at `addr`, else "".
std::string other_table(Context &ctx, local_addr_t addr, TableFunc func) {
  for (int u = 0; u < table_count; ++u)
    if (table_info(Table(u)).func != func && holds(ctx, addr, Table(u)))
      return fmt::format("; it holds the {} instead", table_info(Table(u)).what);
  return "";
}

}  // namespace

void require_table_contents(const TensorRef &t, const char *param, Table table) {
  const TableInfo &info = table_info(table);
  const std::span<const float> want = info.values;
  const std::span<const uint8_t> want_bytes = table_bytes(table);
  for (int npu = 0; npu < t.shape.c; ++npu) {
    const uint8_t *got = t.channel(0, npu);
    if (std::memcmp(got, want_bytes.data(), want_bytes.size()) == 0) continue;
    // The first differing element (table_operand made t of the table's dtype).
    const size_t esize = size_t(dtype_bytes(info.dtype));
    size_t i = 0;
    while (i < want.size() && std::memcmp(got + esize * i, want_bytes.data() + esize * i, esize) == 0) ++i;
    uint32_t raw = 0, expected = 0;
    std::memcpy(&raw, got + esize * i, esize);
    std::memcpy(&expected, want_bytes.data() + esize * i, esize);
    const auto value_of = [&](uint32_t b) {
      return info.dtype == DT_FP32 ? std::bit_cast<float>(b)
             : info.dtype == DT_FP16 ? numeric::fp16_to_fp32(uint16_t(b))
                                     : numeric::bf16_to_fp32(uint16_t(b));
    };
    // Another table at this address: the kernel mixed up its buffers.
    std::string other;
    for (int u = 0; u < table_count && npu == 0; ++u) {
      const std::span<const uint8_t> theirs = table_bytes(Table(u));
      const size_t common = std::min(theirs.size(), want_bytes.size());
      if (Table(u) != table && std::memcmp(got, theirs.data(), common) == 0)
        other = fmt::format("; it holds the {} instead", table_info(Table(u)).what);
    }
    const int digits = int(2 * esize);
    const std::string loader_call = info.dtype == DT_FP32 && std::string_view(info.loader).starts_with("tpu_bdc_load_fp32")
                                        ? fmt::format("{}({})", info.loader, param)
                                        : fmt::format("{}({}, {})", info.loader, param, dtype_name(info.dtype));
    fail(ErrorKind::illegal_command,
         "{} {:#x} does not hold the {}; call {} first (NPU {} element {} is {:#0{}x} ({}), expected "
         "{:#0{}x} ({}){})",
         param, t.addr, info.what, loader_call, npu, i, raw, digits + 2, value_of(raw), expected, digits + 2,
         value_of(expected), other);
  }
}

void load_table(Context &ctx, const char *api, Table table, local_addr_t addr) {
  const TableInfo &info = table_info(table);
  const TensorRef dst = table_operand(ctx, info.param, addr, table);
  install_static_tables(ctx.memory);
  const std::span<const uint8_t> bytes = table_bytes(table);
  const uint8_t *src = ctx.memory.static_mem(static_table_offset(ctx.chip, table), bytes.size());
  for (int npu = 0; npu < ctx.chip.npu_num; ++npu) std::memcpy(dst.channel(0, npu), src, bytes.size());
  book(ctx, api, BdcCost::copy, dst, info.dtype, {&dst}, {});
  ctx.loaded_tables[addr] = int(table);
}

void require_generic_float(const ChipSpec &chip, const char *role, data_type_t dtype) {
  if (dtype == DT_FP8E5M2 || dtype == DT_FP8E4M3 || dtype == DT_FP20 || dtype == DT_TF32)
    fail(ErrorKind::unsupported, "{} {} is not supported on {} (FP8, FP20 and TF32 belong to newer chips)", role,
         dtype_name(dtype), chip.name);
  require_float(role, dtype);
}

Table fp_table(const ChipSpec &chip, TableFunc func, data_type_t dtype) {
  require_generic_float(chip, "dtype", dtype);
  const int d = dtype == DT_FP32 ? 0 : dtype == DT_FP16 ? 1 : 2;
  switch (func) {
    case TableFunc::exp: return std::array{Table::exp_coeff, Table::exp_coeff_fp16, Table::exp_coeff_bf16}[d];
    case TableFunc::log: return std::array{Table::log_coeff, Table::log_coeff_fp16, Table::log_coeff_bf16}[d];
    case TableFunc::erf:
      if (std::string_view(chip.name) == "bm1684x") return Table::erf_coeff;  // its only erf table
      return std::array{Table::erf_coeff, Table::erf_coeff_fp16, Table::erf_coeff_bf16}[d];
    case TableFunc::sin: return std::array{Table::sin_coeff, Table::sin_coeff_fp16, Table::sin_coeff_bf16}[d];
    case TableFunc::cos: return std::array{Table::cos_coeff, Table::cos_coeff_fp16, Table::cos_coeff_bf16}[d];
    case TableFunc::arcsin:
      return std::array{Table::arcsin_coeff, Table::arcsin_coeff_fp16, Table::arcsin_coeff_bf16}[d];
    case TableFunc::exp_table: return Table::exp_table;
    case TableFunc::tan: return Table::tan_coeff;
  }
  return Table::exp_coeff;
}

void load_fp_table(Context &ctx, const char *api, TableFunc func, local_addr_t addr, data_type_t dtype) {
  load_table(ctx, api, fp_table(ctx.chip, func, dtype), addr);
}

FpTable find_fp_table(Context &ctx, const char *param, local_addr_t addr, TableFunc func, data_type_t dtype) {
  const Table want = fp_table(ctx.chip, func, dtype);
  // The expected table first, then the other dtypes' tables of func.
  std::vector<Table> candidates = {want};
  for (int u = 0; u < table_count; ++u)
    if (Table(u) != want && table_info(Table(u)).func == func) candidates.push_back(Table(u));
  for (Table c : candidates)
    if (holds(ctx, addr, c)) return {table_operand(ctx, param, addr, c), true, c};
  return {table_operand(ctx, param, addr, want), false, want};
}

void require_fp_table(Context &ctx, const char *api, const FpTable &found, const char *param, TableFunc func,
                      data_type_t dtype) {
  const Table want = fp_table(ctx.chip, func, dtype);
  // The dtype-generic loader, also for fp32 (its fp32 twin writes the same table).
  const std::string loader = fmt::format("tpu_bdc_load_fp_{}_coeff", table_func_name(func));
  const local_addr_t addr = found.t.addr;
  if (!found.found) {
    // What the kernel may have meant: a table loaded here and overwritten
    // since, or another function's table.
    std::string detail = other_table(ctx, addr, func);
    if (const auto it = ctx.loaded_tables.find(addr); detail.empty() && it != ctx.loaded_tables.end()) {
      const TableInfo &was = table_info(Table(it->second));
      detail = fmt::format(" (the {} loaded there by {} have been overwritten since)", was.what, was.loader);
    }
    fail(ErrorKind::illegal_command, "{} {:#x} holds no {} {} table; call {}({}, {}) once before this call{}", param,
         addr, dtype_name(dtype), table_func_name(func), loader, param, dtype_name(dtype), detail);
  }
  if (found.table == want) return;
  const TableInfo &got = table_info(found.table);
  // Public erf / erfc / gelu kernels load the fp32 erf table for every dtype.
  if (func == TableFunc::erf && got.dtype == DT_FP32) return;
  if (!ctx.table_warnings.insert(addr).second) return;
  const std::string message =
      fmt::format("{}: {} {:#x} holds the {} (loaded for {}), not the {} table of this {} call; the results here "
                  "are computed all the same, but the hardware would evaluate the wrong table: load it with {}({}, {})",
                  api, param, addr, got.what, dtype_name(got.dtype), dtype_name(dtype), dtype_name(dtype),
                  loader, param, dtype_name(dtype));
  std::fprintf(stderr, "warning: %s\n", message.c_str());
  ctx.hazards.warnings.push_back(message);
}

}  // namespace cmodel::bdc
