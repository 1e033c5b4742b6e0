#include "tables.h"

#include <array>
#include <cmath>
#include <cstring>
#include <string_view>

#include "cmodel/dtype.h"

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

// erf coefficients, len 16.
// Entries 0..11: P(t) = sum_k coeff[k] t^k with erfc(z) = t exp(-z^2 + P(t)),
// t = 1/(1 + z/2), z >= 0 (erfc(-z) = 2 - erfc(z)). P is our own fit of
// log(erfc(z)/t) + z^2 over t in [0, 1] (the form of the classic Chebyshev
// erfc approximation): Chebyshev interpolation of degree 11 computed with
// 40-digit arithmetic, rounding the coefficients to fp32 one at a time from
// the highest degree and refitting the lower ones after each rounding. Its
// error is below 6e-8 absolute in P, i.e. erfc within 6e-8 relative
// (before the rounding of the evaluation itself).
// Entries 12..15: (2/sqrt(pi)) (-1)^k / (k! (2k+1)), k = 0..3, the Taylor
// series erf(z) = z sum_k c_k z^(2k), used for |z| < 1/8, where 1 - erfc(z)
// would cancel (truncation below 3e-10 relative). Elsewhere erf = 1 - erfc,
// within 4e-7 relative down to z = 1/8.
constexpr float erf_coeff[] = {
    -0x1.43f89ap+0f,  0x1.fffffcp-1f,  0x1.8008f8p-2f,  0x1.50f76cp-4f,   // P: t^0 .. t^3
    -0x1.24e54ap-4f, -0x1.0131a8p-2f,  0x1.91ea38p-2f, -0x1.57a946p+0f,   // t^4 .. t^7
    0x1.468be2p+1f,  -0x1.29e35cp+1f,  0x1.0bd9b4p+0f, -0x1.83d316p-3f,   // t^8 .. t^11
    0x1.20dd76p+0f,   // (2/sqrt(pi)) *  1/(0! * 1)
    -0x1.812746p-2f,  // (2/sqrt(pi)) * -1/(1! * 3)
    0x1.ce2f22p-4f,   // (2/sqrt(pi)) *  1/(2! * 5)
    -0x1.b82ce4p-6f,  // (2/sqrt(pi)) * -1/(3! * 7)
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

const TableInfo *infos() {
  static const TableInfo all[table_count] = {
      {"fp32 exp coefficients", "tpu_bdc_load_fp32_exp_coeff", "coeff_addr", exp_coeff},
      {"fp32 exp table", "tpu_bdc_load_fp32_exp_table", "table_addr", exp_table()},
      {"fp32 log coefficients", "tpu_bdc_load_fp32_log_coeff", "coeff_addr", log_coeff},
      {"fp32 erf coefficients", "tpu_bdc_load_fp32_erf_coeff", "coeff_addr", erf_coeff},
      {"fp32 sin coefficients", "tpu_bdc_load_fp32_sin_coeff", "coeff_addr", sin_coeff},
      {"fp32 cos coefficients", "tpu_bdc_load_fp32_cos_coeff", "coeff_addr", cos_coeff},
      {"fp32 tan coefficients", "tpu_bdc_load_fp32_tan_coeff", "coeff_addr", tan_coeff},
      {"fp32 arcsin coefficients", "tpu_bdc_load_fp32_arcsin_coeff", "coeff_addr", arcsin_coeff},
  };
  return all;
}

// Static-memory slots: offset and capacity in floats (spec §1, S6 memmap.h).
struct Slot {
  uint32_t offset;
  uint32_t capacity;
};

Slot static_slot(const ChipSpec &chip, Table table) {
  // bm1684x (tpu_6_0). bm1688 (tpul_6_0) has no EXP_TABLE: its sequence
  // starts with EXP_TAYLOR at 0, i.e. 1024 bytes lower.
  static constexpr Slot bm1684x[table_count] = {
      {1024, 32},  // exp_coeff  (EXP_TAYLOR)
      {0, 256},    // exp_table  (EXP_TABLE)
      {1152, 64},  // log_coeff  (LOG_TAYLOR)
      {1408, 16},  // erf_coeff  (ERF_TAYLOR)
      {1728, 32},  // sin_coeff
      {1856, 32},  // cos_coeff
      {2240, 32},  // tan_coeff
      {1984, 64},  // arcsin_coeff
  };
  Slot slot = bm1684x[int(table)];
  if (std::string_view(chip.name) != "bm1684x") {
    if (table == Table::exp_table) return {0x2000, 256};  // SDK-chosen, see tables.h
    slot.offset -= 1024;
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

uint32_t static_table_offset(const ChipSpec &chip, Table table) { return static_slot(chip, table).offset; }

void install_static_tables(Memory &memory) {
  for (int i = 0; i < table_count; ++i) {
    const Table table = Table(i);
    const Slot slot = static_slot(memory.chip(), table);
    const std::span<const float> values = table_info(table).values;
    if (values.size() > slot.capacity)
      fail(ErrorKind::config, "the {} ({} values) do not fit their {}-value static-memory slot",
           table_info(table).what, values.size(), slot.capacity);
    std::memcpy(memory.static_mem(slot.offset, values.size_bytes()), values.data(), values.size_bytes());
  }
}

TensorRef table_operand(Context &ctx, const char *param, local_addr_t addr, Table table) {
  const TableInfo &info = table_info(table);
  const dim4 shape = {1, ctx.chip.npu_num, 1, int(info.values.size())};
  const TensorRef t = operand(ctx, param, addr, shape, nullptr, DT_FP32);
  if (t.start_npu != 0)
    fail(ErrorKind::illegal_command,
         "{} {:#x} is on NPU {}; the {} must start on NPU 0 (a [1, {}, 1, {}] fp32 tensor, as {} writes it)",
         param, addr, t.start_npu, info.what, ctx.chip.npu_num, info.values.size(), info.loader);
  return t;
}

void require_table_contents(const TensorRef &t, const char *param, Table table) {
  const TableInfo &info = table_info(table);
  const std::span<const float> want = info.values;
  for (int npu = 0; npu < t.shape.c; ++npu) {
    const uint8_t *got = t.channel(0, npu);
    if (std::memcmp(got, want.data(), want.size_bytes()) == 0) continue;
    size_t i = 0;
    float value = 0;
    for (; i < want.size(); ++i) {
      std::memcpy(&value, got + 4 * i, 4);
      if (bits_of(value) != bits_of(want[i])) break;
    }
    // Another table at this address: the kernel mixed up its buffers.
    std::string other;
    for (int u = 0; u < table_count && npu == 0; ++u) {
      const std::span<const float> theirs = table_info(Table(u)).values;
      const size_t common = std::min(theirs.size(), want.size());
      if (Table(u) != table && std::memcmp(got, theirs.data(), common * 4) == 0)
        other = fmt::format("; it holds the {} instead", table_info(Table(u)).what);
    }
    fail(ErrorKind::illegal_command,
         "{} {:#x} does not hold the {}; call {}({}) first (NPU {} element {} is {:#010x} ({}), expected "
         "{:#010x} ({}){})",
         param, t.addr, info.what, info.loader, param, npu, i, bits_of(value), value, bits_of(want[i]), want[i],
         other);
  }
}

void load_table(Context &ctx, const char *api, Table table, local_addr_t addr) {
  const TableInfo &info = table_info(table);
  const TensorRef dst = table_operand(ctx, info.param, addr, table);
  install_static_tables(ctx.memory);
  const uint8_t *src = ctx.memory.static_mem(static_table_offset(ctx.chip, table), info.values.size_bytes());
  for (int npu = 0; npu < ctx.chip.npu_num; ++npu) std::memcpy(dst.channel(0, npu), src, info.values.size_bytes());
  book(ctx, api, BdcCost::copy, dst, DT_FP32, {&dst}, {});
}

}  // namespace cmodel::bdc
