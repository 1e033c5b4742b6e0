// bdc_cast_test: tpu_bdc_cast (every pair of INT8, UINT8, INT16, UINT16,
// INT32, UINT32, FP16, BF16, FP32 with every rounding mode) and
// tpu_bdc_fp_round / fp_floor / fp_ceil, bit for bit over the whole local
// memory, on both chips: random shapes, free and aligned layouts, zero-stride
// sources, any start NPU, in place at one address (also from a wider dtype to
// a narrower one; an in-place widening is refused, AR-14).
//
// The reference is written from the spec, not from the emulator's numerics:
// values are decoded exactly into long double; a float result is found by
// binary search over the target's encodings (decoded with ldexpl) and
// picked by exact comparison with the midpoint of its two neighbours;
// integer rounding compares the exact fraction with 1/2.
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

const std::vector<data_type_t> all_dtypes = {DT_INT8,  DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                                             DT_UINT32, DT_FP16,  DT_BFP16, DT_FP32};
constexpr rounding_mode_t all_modes[] = {RM_HALF_TO_EVEN, RM_HALF_AWAY_FROM_ZERO, RM_TOWARDS_ZERO, RM_DOWN,
                                         RM_UP,           RM_HALF_UP,             RM_HALF_DOWN};

bool is_float(data_type_t t) { return t == DT_FP32 || t == DT_FP16 || t == DT_BFP16; }
bool dtype_signed(data_type_t t) { return t == DT_INT8 || t == DT_INT16 || t == DT_INT32; }

// ---- reference ------------------------------------------------------------------

struct Format {
  int exp_bits, man_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  uint32_t inf_bits() const { return ((1u << exp_bits) - 1) << man_bits; }
  uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
  uint32_t quiet_bit() const { return 1u << (man_bits - 1); }
  // Exact value of the magnitude encoding k, read as if the exponent field
  // were unbounded: k = inf_bits gives 2^(emax+1), the overflow candidate.
  long double value(uint32_t k) const {
    const uint32_t e = k >> man_bits, f = k & ((1u << man_bits) - 1);
    if (e == 0) return std::ldexp((long double)f, 1 - bias() - man_bits);
    return std::ldexp((long double)((1u << man_bits) + f), int(e) - bias() - man_bits);
  }
};

Format format_of(data_type_t t) {
  if (t == DT_FP16) return {5, 10};
  if (t == DT_BFP16) return {8, 7};
  return {8, 23};
}



struct FloatValue {
  bool nan, negative;
  long double magnitude;  // may be infinity
  uint32_t payload23;     // NaN: the fraction as an fp32 fraction field
};

FloatValue decode_float(data_type_t t, uint32_t bits) {
  const Format f = format_of(t);
  const bool negative = (bits & f.sign_bit()) != 0;
  const uint32_t mag = bits & (f.sign_bit() - 1);
  if (mag > f.inf_bits())
    return {true, negative, 0, (mag & ((1u << f.man_bits) - 1)) << (23 - f.man_bits)};
  if (mag == f.inf_bits()) return {false, negative, HUGE_VALL, 0};
  return {false, negative, f.value(mag), 0};
}

// The magnitude `mag` (finite) rounded into format f with `mode`; negative
// gives the sign (it matters to the directed modes).
uint32_t encode(const Format &f, bool negative, long double mag, rounding_mode_t mode) {
  const uint32_t sign = negative ? f.sign_bit() : 0, inf = f.inf_bits();
  if (std::isinf(mag)) return sign | inf;
  // Largest k in [0, inf] with value(k) <= mag.
  uint32_t lo = 0, hi = inf;
  if (mag >= f.value(inf)) {
    lo = inf;
  } else {
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      (f.value(mid) <= mag ? lo : hi) = mid;
    }
    if (f.value(hi) <= mag) lo = hi;
  }
  const uint32_t k = lo;
  if (k == inf) {  // beyond every finite value and every tie
    const bool to_max = mode == RM_TOWARDS_ZERO || (mode == RM_DOWN && !negative) || (mode == RM_UP && negative);
    return sign | (to_max ? inf - 1 : inf);
  }
  if (f.value(k) == mag) return sign | k;
  const long double midpoint = (f.value(k) + f.value(k + 1)) / 2;
  bool up;  // magnitude k + 1
  switch (mode) {
    case RM_TOWARDS_ZERO: up = false; break;
    case RM_DOWN: up = negative; break;
    case RM_UP: up = !negative; break;
    default:
      if (mag != midpoint) {
        up = mag > midpoint;
      } else {
        switch (mode) {
          case RM_HALF_TO_EVEN: up = (k & 1) != 0; break;
          case RM_HALF_AWAY_FROM_ZERO: up = true; break;
          case RM_HALF_UP: up = !negative; break;
          default: up = negative; break;  // RM_HALF_DOWN
        }
      }
  }
  return sign | (up ? k + 1 : k);  // k + 1 == inf is the overflow to infinity
}

// x (finite) rounded to an integral value with `mode`.
long double round_integral(long double x, rounding_mode_t mode) {
  const long double down = std::floor(x), frac = x - down;  // exact
  if (frac == 0) return x;
  const long double up = down + 1;
  switch (mode) {
    case RM_TOWARDS_ZERO: return x < 0 ? up : down;
    case RM_DOWN: return down;
    case RM_UP: return up;
    default: break;
  }
  if (frac < 0.5L) return down;
  if (frac > 0.5L) return up;
  switch (mode) {
    case RM_HALF_TO_EVEN: return std::fmod(down, 2.0L) == 0 ? down : up;
    case RM_HALF_AWAY_FROM_ZERO: return x < 0 ? down : up;
    case RM_HALF_UP: return up;
    default: return down;  // RM_HALF_DOWN
  }
}

int64_t saturate(long double v, data_type_t t) {
  if (v <= (long double)int_min(t)) return int_min(t);
  if (v >= (long double)int_max(t)) return int_max(t);
  return int64_t(v);
}

// The bits tpu_bdc_cast must produce from `bits` of src dtype s into dtype d
// (in the low esize(d) bytes; the rest zero).
uint32_t expected_cast_wide(data_type_t d, data_type_t s, uint32_t bits, rounding_mode_t mode) {
  if (d == s) return bits;
  if (!is_float(s)) {
    const int64_t v = int_value(s, bits);
    if (!is_float(d)) return uint32_t(std::clamp(v, int_min(d), int_max(d)));
    return encode(format_of(d), v < 0, (long double)(v < 0 ? -v : v), mode);
  }
  const FloatValue x = decode_float(s, bits);
  if (!is_float(d)) {
    if (x.nan) return 0;
    if (std::isinf(x.magnitude)) return uint32_t(x.negative ? int_min(d) : int_max(d));
    const long double v = x.negative ? -x.magnitude : x.magnitude;
    return uint32_t(saturate(round_integral(v, mode), d));
  }
  const Format f = format_of(d);
  if (x.nan) {
    // Widening re-encodes the payload; narrowing keeps its top bits and quiets.
    const bool widening = d == DT_FP32;
    return (x.negative ? f.sign_bit() : 0) | f.inf_bits() | (widening ? 0 : f.quiet_bit()) |
           (x.payload23 >> (23 - f.man_bits));
  }
  return encode(f, x.negative, x.magnitude, mode);
}

uint32_t expected_cast(data_type_t d, data_type_t s, uint32_t bits, rounding_mode_t mode) {
  const uint32_t r = expected_cast_wide(d, s, bits, mode);
  return esize(d) == 4 ? r : r & ((1u << (8 * esize(d))) - 1);
}

// The bits of fp_round: an integral value in the same format; a zero keeps
// the source's sign; NaN comes back quiet.
uint32_t expected_round(data_type_t t, uint32_t bits, rounding_mode_t mode) {
  const Format f = format_of(t);
  const FloatValue x = decode_float(t, bits);
  if (x.nan) return bits | f.quiet_bit();
  if (std::isinf(x.magnitude)) return bits;
  const long double r = round_integral(x.negative ? -x.magnitude : x.magnitude, mode);
  return encode(f, x.negative, std::fabs(r), RM_HALF_TO_EVEN);  // exact
}

// ---- random values ---------------------------------------------------------------

// Bits of a value of dtype t, drawn to hit ties, range limits, overflow,
// subnormals and special values often.
template <typename Rng>
uint32_t random_bits(Rng &rng, data_type_t t) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  static const long double limits[] = {127, 128, 255, 256, 32767, 32768, 65504, 65519, 65520, 65535, 65536,
                                       2147483647.0L, 2147483648.0L, 4294967295.0L, 4294967296.0L,
                                       16777216, 16777217, 3.3895313892515355e38L};
  const int kind = pick(0, 5);
  if (!is_float(t)) {
    const int bits = esize(t) * 8;
    uint32_t v = uint32_t(rng());
    if (kind == 0) {  // near a range limit (of any dtype)
      const long double base = limits[pick(0, 14)];
      const int64_t n = int64_t(base) + pick(-2, 2);
      v = uint32_t(pick(0, 1) ? n : -n);
    } else if (kind == 1) {  // on or next to a rounding tie of bf16, fp16 or fp32
      const int precision = std::vector<int>{8, 11, 24}[pick(0, 2)];
      const int width = pick(1, bits);
      v &= width == 32 ? 0xffffffffu : (1u << width) - 1;
      v |= 1u << (width - 1);
      if (const int cut = width - precision; cut >= 1) {
        v = (v >> cut << cut) | (1u << (cut - 1));
        v += uint32_t(pick(-1, 1));
      }
      if (dtype_signed(t) && pick(0, 1)) v = 0u - v;
    } else if (kind == 2) {  // a random magnitude
      const int width = pick(1, bits);
      v &= width == 32 ? 0xffffffffu : (1u << width) - 1;
      if (pick(0, 1)) v = 0u - v;
    }
    return bits == 32 ? v : v & ((1u << bits) - 1);
  }
  const Format f = format_of(t);
  long double value;
  switch (kind) {
    case 0: return uint32_t(rng()) & (f.sign_bit() * 2 - 1);  // any encoding: NaN, inf, subnormal
    case 1: value = pick(-4096, 4096) / 4.0L; break;        // halves and quarters: ties
    case 2: value = limits[pick(0, 17)] + pick(-8, 8) / 4.0L; break;
    case 3:
      if (t == DT_FP32) {  // on or next to a rounding tie of fp16 or bf16
        const int cut = 23 - (pick(0, 1) ? 7 : 10);
        uint32_t b = uint32_t(rng()) & 0x7fffffff;
        b = (b >> cut << cut) | (1u << (cut - 1));
        b += uint32_t(pick(-1, 1));
        return b | (pick(0, 1) ? 0x80000000u : 0);
      }
      [[fallthrough]];
    default: value = std::ldexp(1.0L + (rng() & 0xffffff) / 16777216.0L, pick(-30, 40)); break;
  }
  const bool negative = pick(0, 1) == 1;
  return encode(f, negative, std::fabs(value), all_modes[pick(0, 6)]);
}

// ---- kernels ---------------------------------------------------------------------

enum class Op { cast, round, floor, ceil };

struct Command {
  Op op;
  Tensor dst, src;
  rounding_mode_t mode;
};

void commands_kernel(const void *arg) {
  for (const Command &k : *static_cast<const std::vector<Command> *>(arg)) {
    const dim4 *shape = &k.dst.shape;
    switch (k.op) {
      case Op::cast:
        tpu_bdc_cast(k.dst.addr, k.src.addr, shape, k.dst.api_stride(), k.src.api_stride(), k.dst.dtype,
                     k.src.dtype, k.mode);
        break;
      case Op::round:
        tpu_bdc_fp_round(k.dst.addr, k.src.addr, shape, k.dst.api_stride(), k.src.api_stride(), k.dst.dtype, k.mode);
        break;
      case Op::floor:
        tpu_bdc_fp_floor(k.dst.addr, k.src.addr, shape, k.dst.api_stride(), k.src.api_stride(), k.dst.dtype);
        break;
      case Op::ceil:
        tpu_bdc_fp_ceil(k.dst.addr, k.src.addr, shape, k.dst.api_stride(), k.src.api_stride(), k.dst.dtype);
        break;
    }
  }
}

class BdcCast : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error();
    chip = local_model::chip(GetParam());
  }
  void TearDown() override { cmodel_close(); }

  // Places dst and src of one command in slot `slot` (of 10 per NPU) with
  // random layouts; in place (one address, aligned layouts) when asked.
  template <typename Rng>
  bool place(Rng &rng, test::Seeded &seeded, int slot, data_type_t dd, data_type_t sd, bool in_place, Command &k) {
    const uint32_t slot_bytes = chip.lmem / 10 / 128 * 128;
    const uint32_t half = slot_bytes / 2;
    const dim4 shape = {seeded.uniform(1, 2), seeded.uniform(1, chip.npu + 4), seeded.uniform(1, 5),
                        seeded.uniform(1, 13)};
    const int npu = seeded.uniform(0, chip.npu - 1);
    const uint32_t base = slot * slot_bytes;
    if (in_place) {
      k.dst = aligned(chip, npu, base, shape, dd);
      k.src = aligned(chip, npu, base, shape, sd);
      return std::max(aligned_bytes(chip, npu, shape, dd), aligned_bytes(chip, npu, shape, sd)) <= slot_bytes;
    }
    return random_layout(rng, chip, npu, base, shape, dd, false, half, k.dst) &&
           random_layout(rng, chip, npu, base + half, shape, sd, true, half, k.src);
  }

  // Fills the sources, computes every command's result from the memory as
  // it is before the run, runs them all in one kernel and compares.
  template <typename Rng>
  void run_commands(Rng &rng, const std::vector<Command> &commands, const std::string &what) {
    for (const Command &k : commands)
      for_each_index(k.src.shape,
                     [&](int n, int c, int h, int w) { set_bits(chip, k.src, n, c, h, w, random_bits(rng, k.src.dtype)); });
    std::vector<uint8_t> expected = snapshot(chip);
    for (const Command &k : commands)
      for_each_index(k.dst.shape, [&](int n, int c, int h, int w) {
        const uint32_t x = get_bits(chip, k.src, n, c, h, w);
        uint32_t r = 0;
        switch (k.op) {
          case Op::cast: r = expected_cast(k.dst.dtype, k.src.dtype, x, k.mode); break;
          case Op::round: r = expected_round(k.dst.dtype, x, k.mode); break;
          case Op::floor: r = expected_round(k.dst.dtype, x, RM_DOWN); break;
          case Op::ceil: r = expected_round(k.dst.dtype, x, RM_UP); break;
        }
        put(expected, chip, k.dst, n, c, h, w, r);
      });
    ASSERT_EQ(cmodel_run(commands_kernel, &commands), 0) << what << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      // Find the command whose dst holds the first difference.
      std::string s = what;
      for (const Command &k : commands)
        s += "\n  dst " + std::to_string(k.dst.dtype) + " @" + hex(k.dst.addr) + " src " +
             std::to_string(k.src.dtype) + " @" + hex(k.src.addr) + " mode " + std::to_string(k.mode) +
             " shape [" + std::to_string(k.dst.shape.n) + "," + std::to_string(k.dst.shape.c) + "," +
             std::to_string(k.dst.shape.h) + "," + std::to_string(k.dst.shape.w) + "]" +
             (k.dst.null_stride ? " aligned" : " strided") + (k.src.null_stride ? "/aligned" : "/strided");
      return s;
    });
  }

  Chip chip;
};

// Every (dst, src) pair with all seven modes: one run per pair, one command
// per mode.
TEST_P(BdcCast, EveryDtypePairAndRoundingMode) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  for (data_type_t dd : all_dtypes)
    for (data_type_t sd : all_dtypes) {
      std::vector<Command> commands;
      for (int m = 0; m < 7; ++m) {
        Command k{Op::cast, {}, {}, all_modes[m]};
        // In place only when dst is not the wider (AR-14).
        const bool in_place = seeded.uniform(0, 4) == 0 && esize(dd) <= esize(sd);
        while (!place(rng, seeded, m, dd, sd, in_place, k)) {
        }
        commands.push_back(k);
      }
      run_commands(rng, commands, "cast to " + std::to_string(dd) + " from " + std::to_string(sd));
      if (::testing::Test::HasFailure()) return;
    }
}

TEST_P(BdcCast, FpRoundFloorCeil) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  for (data_type_t t : {DT_FP32, DT_FP16, DT_BFP16})
    for (int rep = 0; rep < 4; ++rep) {
      std::vector<Command> commands;
      for (int i = 0; i < 9; ++i) {  // the seven modes of fp_round, then floor and ceil
        Command k{i < 7 ? Op::round : i == 7 ? Op::floor : Op::ceil, {}, {}, i < 7 ? all_modes[i] : RM_DOWN};
        const int placement = seeded.uniform(0, 3);  // 0: in place, aligned; 1: in place, free strides
        while (!place(rng, seeded, i, t, t, placement == 0, k)) {
        }
        if (placement == 1) k.src = k.dst;
        commands.push_back(k);
      }
      run_commands(rng, commands, "fp_round dtype " + std::to_string(t));
      if (::testing::Test::HasFailure()) return;
    }
}

// A few values written out by hand, so the meaning of each mode is pinned
// independently of the reference above.
struct Known {
  data_type_t dst, src;
  rounding_mode_t mode;
  uint32_t in, out;
};

const Known known[] = {
    // fp32 2.5 / -2.5 -> int8 in the seven modes
    {DT_INT8, DT_FP32, RM_HALF_TO_EVEN, 0x40200000, 2},
    {DT_INT8, DT_FP32, RM_HALF_AWAY_FROM_ZERO, 0x40200000, 3},
    {DT_INT8, DT_FP32, RM_TOWARDS_ZERO, 0x40200000, 2},
    {DT_INT8, DT_FP32, RM_DOWN, 0x40200000, 2},
    {DT_INT8, DT_FP32, RM_UP, 0x40200000, 3},
    {DT_INT8, DT_FP32, RM_HALF_UP, 0x40200000, 3},
    {DT_INT8, DT_FP32, RM_HALF_DOWN, 0x40200000, 2},
    {DT_INT8, DT_FP32, RM_HALF_TO_EVEN, 0xc0200000, 0xfe},         // -2
    {DT_INT8, DT_FP32, RM_HALF_AWAY_FROM_ZERO, 0xc0200000, 0xfd},  // -3
    {DT_INT8, DT_FP32, RM_TOWARDS_ZERO, 0xc0200000, 0xfe},
    {DT_INT8, DT_FP32, RM_DOWN, 0xc0200000, 0xfd},
    {DT_INT8, DT_FP32, RM_UP, 0xc0200000, 0xfe},
    {DT_INT8, DT_FP32, RM_HALF_UP, 0xc0200000, 0xfe},
    {DT_INT8, DT_FP32, RM_HALF_DOWN, 0xc0200000, 0xfd},
    // saturation, NaN, infinities
    {DT_INT8, DT_FP32, RM_HALF_TO_EVEN, 0x43965a1d, 0x7f},   // 300.7 -> 127
    {DT_UINT8, DT_FP32, RM_HALF_TO_EVEN, 0xbf800000, 0},     // -1 -> 0
    {DT_INT16, DT_FP32, RM_HALF_TO_EVEN, 0x7fc00000, 0},     // NaN -> 0
    {DT_INT32, DT_FP32, RM_HALF_TO_EVEN, 0xff800000, 0x80000000},  // -inf -> INT32_MIN
    {DT_UINT32, DT_FP32, RM_UP, 0x4f800000, 0xffffffff},     // 2^32 -> UINT32_MAX
    {DT_INT8, DT_UINT8, RM_HALF_TO_EVEN, 200, 0x7f},
    {DT_UINT16, DT_INT16, RM_HALF_TO_EVEN, 0xfffb, 0},       // -5 -> 0
    {DT_INT16, DT_INT32, RM_HALF_TO_EVEN, 0xffff0000, 0x8000},  // -65536 -> -32768
    // int -> float rounds once
    {DT_FP32, DT_INT32, RM_HALF_TO_EVEN, 16777217, 0x4b800000},  // 2^24
    {DT_FP32, DT_INT32, RM_UP, 16777217, 0x4b800001},            // 2^24 + 2
    {DT_FP16, DT_INT32, RM_HALF_TO_EVEN, 65520, 0x7c00},         // tie past max -> inf
    {DT_FP16, DT_INT32, RM_TOWARDS_ZERO, 65520, 0x7bff},         // 65504
    {DT_BFP16, DT_INT16, RM_HALF_TO_EVEN, 257, 0x4380},          // 256
    {DT_BFP16, DT_INT16, RM_HALF_UP, 257, 0x4381},               // 258
    // float -> float
    {DT_FP16, DT_FP32, RM_HALF_TO_EVEN, 0x477ff000, 0x7c00},   // 65520 -> inf
    {DT_FP16, DT_FP32, RM_DOWN, 0x477ff000, 0x7bff},           // 65504
    {DT_FP16, DT_FP32, RM_HALF_TO_EVEN, 0x33800000, 0x0001},   // 2^-24: smallest subnormal
    {DT_FP16, DT_FP32, RM_HALF_TO_EVEN, 0x33000000, 0x0000},   // 2^-25: tie to even zero
    {DT_FP16, DT_FP32, RM_UP, 0x33000000, 0x0001},
    {DT_FP32, DT_FP16, RM_HALF_TO_EVEN, 0x7d00, 0x7fa00000},   // signalling NaN widens unchanged
    {DT_BFP16, DT_FP32, RM_HALF_TO_EVEN, 0x7f800001, 0x7fc0},  // payload only in dropped bits: quiet NaN
    {DT_FP16, DT_BFP16, RM_TOWARDS_ZERO, 0x4780, 0x7bff},      // 65536 -> 65504
    {DT_FP16, DT_FP16, RM_UP, 0x7d01, 0x7d01},                 // same dtype: bits unchanged
};

TEST_P(BdcCast, KnownValues) {
  std::vector<Command> commands;
  const int count = int(sizeof known / sizeof known[0]);
  for (int i = 0; i < count; ++i) {
    Command k{Op::cast, {}, {}, known[i].mode};
    k.dst = aligned(chip, i % chip.npu, uint32_t(i) * 128, {1, 1, 1, 1}, known[i].dst);
    k.src = aligned(chip, i % chip.npu, 8192 + uint32_t(i) * 128, {1, 1, 1, 1}, known[i].src);
    set_bits(chip, k.src, 0, 0, 0, 0, known[i].in);
    commands.push_back(k);
  }
  ASSERT_EQ(cmodel_run(commands_kernel, &commands), 0) << cmodel_last_error();
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(get_bits(chip, commands[i].dst, 0, 0, 0, 0), known[i].out)
        << "known value " << i << ": " << hex(known[i].in) << " from " << known[i].src << " to " << known[i].dst
        << " mode " << known[i].mode;
    // The reference agrees with the hand-written table.
    EXPECT_EQ(expected_cast(known[i].dst, known[i].src, known[i].in, known[i].mode), known[i].out) << "reference " << i;
  }
}

TEST_P(BdcCast, KnownRoundings) {
  struct Case {
    Op op;
    data_type_t t;
    rounding_mode_t mode;
    uint32_t in, out;
  };
  const Case cases[] = {
      {Op::floor, DT_FP32, RM_DOWN, 0xbe99999a, 0xbf800000},   // floor(-0.3) = -1
      {Op::ceil, DT_FP32, RM_UP, 0xbe99999a, 0x80000000},      // ceil(-0.3) = -0
      {Op::round, DT_FP32, RM_HALF_TO_EVEN, 0x40200000, 0x40000000},  // 2.5 -> 2
      {Op::round, DT_FP32, RM_HALF_AWAY_FROM_ZERO, 0x40200000, 0x40400000},  // 3
      {Op::round, DT_FP16, RM_HALF_DOWN, 0xbe00, 0xc000},      // -1.5 -> -2
      {Op::round, DT_FP16, RM_HALF_UP, 0xbe00, 0xbc00},        // -1.5 -> -1
      {Op::round, DT_BFP16, RM_TOWARDS_ZERO, 0xff80, 0xff80},  // -inf stays
      {Op::round, DT_FP16, RM_HALF_TO_EVEN, 0x7d01, 0x7f01},   // signalling NaN comes back quiet
      {Op::floor, DT_BFP16, RM_DOWN, 0x4b00, 0x4b00},          // 2^23: already integral
      {Op::ceil, DT_FP16, RM_UP, 0x0001, 0x3c00},              // smallest subnormal -> 1
  };
  std::vector<Command> commands;
  int i = 0;
  for (const Case &c : cases) {
    Command k{c.op, {}, {}, c.mode};
    k.dst = aligned(chip, 3, uint32_t(i) * 128, {1, 1, 1, 1}, c.t);
    k.src = aligned(chip, 3, 8192 + uint32_t(i) * 128, {1, 1, 1, 1}, c.t);
    set_bits(chip, k.src, 0, 0, 0, 0, c.in);
    commands.push_back(k);
    ++i;
  }
  ASSERT_EQ(cmodel_run(commands_kernel, &commands), 0) << cmodel_last_error();
  i = 0;
  for (const Case &c : cases) {
    EXPECT_EQ(get_bits(chip, commands[i].dst, 0, 0, 0, 0), c.out) << "case " << i;
    EXPECT_EQ(expected_round(c.t, c.in, c.mode), c.out) << "reference " << i;
    ++i;
  }
}

// ---- checks ----------------------------------------------------------------------

void bad_kernel(const void *arg) {
  const int which = *static_cast<const int *>(arg);
  const dim4 shape = {1, 4, 2, 2}, zero_h = {1, 4, 0, 2};
  const local_addr_t npu2 = 2 * LOCAL_MEM_SIZE;
  switch (which) {
    case 0: tpu_bdc_cast(0, 4096, &shape, nullptr, nullptr, DT_INT4, DT_FP32, RM_HALF_TO_EVEN); break;
    case 1: tpu_bdc_cast(0, 4096, &shape, nullptr, nullptr, DT_FP32, data_type_t(15), RM_HALF_TO_EVEN); break;
    case 2: tpu_bdc_cast(0, 4096, &shape, nullptr, nullptr, DT_FP16, DT_FP32, rounding_mode_t(7)); break;
    case 3: tpu_bdc_cast(0, npu2, &shape, nullptr, nullptr, DT_FP16, DT_FP32, RM_HALF_TO_EVEN); break;
    case 4: tpu_bdc_cast(0, 4096 + 2, &shape, nullptr, nullptr, DT_INT8, DT_FP16, RM_UP); break;
    case 5: tpu_bdc_fp_round(0, 4096, &shape, nullptr, nullptr, DT_INT32, RM_UP); break;
    case 6: tpu_bdc_fp_round(0, 4096, &shape, nullptr, nullptr, DT_FP32, rounding_mode_t(7)); break;
    case 7: tpu_bdc_fp_floor(0, 4096, &shape, nullptr, nullptr, DT_INT8); break;
    case 8: tpu_bdc_fp_ceil(0, npu2, &shape, nullptr, nullptr, DT_BFP16); break;
    case 9: tpu_bdc_fp_round(0, 4096, &zero_h, nullptr, nullptr, DT_FP16, RM_DOWN); break;
    case 10: tpu_bdc_cast(0, 4096, nullptr, nullptr, nullptr, DT_FP16, DT_FP32, RM_DOWN); break;
    case 11: {
      const dim4 stride = {64, 16, 4, 1};
      tpu_bdc_cast(1, 4096, &shape, &stride, nullptr, DT_INT16, DT_FP32, RM_DOWN);
      break;
    }
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

TEST_P(BdcCast, ChecksNameTheFunctionAndTheValue) {
  EXPECT_MESSAGE(0, "tpu_bdc_cast: dst dtype DT_INT4 is not allowed here; expected one of DT_INT8, DT_UINT8, "
                    "DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP16, DT_BFP16, DT_FP32");
  EXPECT_MESSAGE(1, "tpu_bdc_cast: src dtype 15 is not allowed here");
  EXPECT_MESSAGE(2, "tpu_bdc_cast: mode 7 is not a rounding_mode_t; expected RM_HALF_TO_EVEN (0) to RM_HALF_DOWN (6)");
  EXPECT_MESSAGE(3, "tpu_bdc_cast: dst starts on NPU 0 but src on NPU 2");
  EXPECT_MESSAGE(4, "tpu_bdc_cast: src local address 0x1002 uses the aligned layout");
  EXPECT_MESSAGE(5, "tpu_bdc_fp_round: ");
  EXPECT_MESSAGE(5, "dtype DT_INT32 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16");
  EXPECT_MESSAGE(6, "tpu_bdc_fp_round: mode 7 is not a rounding_mode_t");
  EXPECT_MESSAGE(7, "tpu_bdc_fp_floor: ");
  EXPECT_MESSAGE(7, "dtype DT_INT8 is not allowed here");
  EXPECT_MESSAGE(8, "tpu_bdc_fp_ceil: dst starts on NPU 0 but src on NPU 2");
  EXPECT_MESSAGE(9, "tpu_bdc_fp_round: dst shape [1, 4, 0, 2]: h = 0; every dim must be in [1, 65535]");
  EXPECT_MESSAGE(10, "tpu_bdc_cast: shape is a null pointer");
  EXPECT_MESSAGE(11, "tpu_bdc_cast: dst local address 0x1 is not a multiple of the 2-byte size of DT_INT16");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcCast, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
