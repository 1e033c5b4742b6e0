// bdc_bitwise_test: family K: tpu_bdc_and/or/xor, tpu_bdc_min/max (all with
// _C forms) and tpu_bdc_arithmetic_shift / tpu_bdc_logical_shift (tensor
// and _C shift amounts), against a reference written here, bit for bit.
//
// Bitwise ops act on raw encodings of every 8/16/32-bit dtype (floats
// too); min/max compare values (floats: NaN propagates quietened, -0 < +0);
// arithmetic shifts are exact multiplications / rounded divisions by powers
// of two, saturated; logical shifts work on the unsigned bits and wrap.
// Random dtypes (mixed for shifts), every rounding mode, shift amounts
// from 0 to past the width (and the dtypes' extremes), raw random
// encodings (NaN, inf, subnormals, -0), random layouts (free strides,
// zero-stride broadcast sources and shift tensors, in-place), any start
// NPU, both chips. The whole local memory is compared.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/local_model.h"
#include "support/test_support.h"

namespace {

using namespace local_model;

using i128 = __int128;

enum class Op { and_, or_, xor_, and_C, or_C, xor_C, min, max, min_C, max_C, ashift, ashift_C, lshift, lshift_C, count };

const char *op_name(Op op) {
  static const char *names[] = {"and", "or", "xor", "and_C", "or_C", "xor_C", "min", "max", "min_C", "max_C",
                                "arithmetic_shift", "arithmetic_shift_C", "logical_shift", "logical_shift_C"};
  return names[int(op)];
}

bool is_shift(Op op) { return op >= Op::ashift; }
bool has_constant(Op op) {
  return op == Op::and_C || op == Op::or_C || op == Op::xor_C || op == Op::min_C || op == Op::max_C ||
         op == Op::ashift_C || op == Op::lshift_C;
}

const data_type_t kIntTypes[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};
const data_type_t kAllTypes[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP32, DT_FP16, DT_BFP16};

int bits_of(data_type_t t) { return esize(t) * 8; }
bool is_float(data_type_t t) { return t == DT_FP32 || t == DT_FP16 || t == DT_BFP16; }
bool is_signed(data_type_t t) { return t == DT_INT8 || t == DT_INT16 || t == DT_INT32; }
uint64_t mask_of(data_type_t t) { return (uint64_t(1) << bits_of(t)) - 1; }
i128 min_of(data_type_t t) { return is_signed(t) ? -(i128(1) << (bits_of(t) - 1)) : 0; }
i128 max_of(data_type_t t) { return is_signed(t) ? (i128(1) << (bits_of(t) - 1)) - 1 : (i128(1) << bits_of(t)) - 1; }
i128 value_of(data_type_t t, uint64_t raw) {
  raw &= mask_of(t);
  if (is_signed(t) && (raw >> (bits_of(t) - 1))) return i128(raw) - (i128(1) << bits_of(t));
  return i128(raw);
}
uint64_t raw_of(data_type_t t, i128 v) { return uint64_t(v) & mask_of(t); }
i128 clamp(data_type_t t, i128 v) { return v < min_of(t) ? min_of(t) : v > max_of(t) ? max_of(t) : v; }

// v / 2^s (s >= 1) rounded with mode; see bdc_int_arith_test: |v| < 2^66,
// so every s >= 68 behaves like s = 70.
i128 round_shift(i128 v, i128 s, rounding_mode_t mode) {
  if (s > 70) s = 70;
  const i128 unit = i128(1) << int(s);
  const i128 q = v >= 0 ? v / unit : -((-v + unit - 1) / unit);
  const i128 r = v - q * unit;
  if (r == 0) return q;
  const int cmp = 2 * r < unit ? -1 : 2 * r == unit ? 0 : 1;
  switch (mode) {
    case RM_DOWN: return q;
    case RM_UP: return q + 1;
    case RM_TOWARDS_ZERO: return v < 0 ? q + 1 : q;
    case RM_HALF_UP: return cmp >= 0 ? q + 1 : q;
    case RM_HALF_DOWN: return cmp > 0 ? q + 1 : q;
    case RM_HALF_AWAY_FROM_ZERO: return cmp > 0 || (cmp == 0 && v >= 0) ? q + 1 : q;
    case RM_HALF_TO_EVEN: return cmp > 0 || (cmp == 0 && (q & 1)) ? q + 1 : q;
  }
  return q;
}

// Float value of an encoding, and its NaN-ness and quiet bit.
double float_value(data_type_t t, uint64_t raw) {
  if (t == DT_FP32) {
    float f;
    const uint32_t u = uint32_t(raw);
    std::memcpy(&f, &u, 4);
    return f;
  }
  return t == DT_FP16 ? from_fp16(uint16_t(raw)) : from_bf16(uint16_t(raw));
}
uint64_t quiet_bit(data_type_t t) { return t == DT_FP32 ? 0x400000 : t == DT_FP16 ? 0x200 : 0x40; }

// IEEE 754-2019 minimum / maximum on encodings.
uint64_t float_min_max(data_type_t t, uint64_t a, uint64_t b, bool is_max) {
  const double x = float_value(t, a), y = float_value(t, b);
  if (std::isnan(x)) return a | quiet_bit(t);
  if (std::isnan(y)) return b | quiet_bit(t);
  if (x == 0 && y == 0) {  // +0 and -0: the sign decides
    if (is_max) return std::signbit(x) ? b : a;
    return std::signbit(x) ? a : b;
  }
  if (is_max) return x >= y ? a : b;
  return x <= y ? a : b;
}

uint64_t reference(Op op, data_type_t dst_t, data_type_t src_t, uint64_t a, uint64_t b, i128 shift,
                   rounding_mode_t mode) {
  switch (op) {
    case Op::and_: case Op::and_C: return a & b;
    case Op::or_: case Op::or_C: return a | b;
    case Op::xor_: case Op::xor_C: return a ^ b;
    case Op::min: case Op::min_C: case Op::max: case Op::max_C: {
      const bool is_max = op == Op::max || op == Op::max_C;
      if (is_float(src_t)) return float_min_max(src_t, a, b, is_max);
      const i128 x = value_of(src_t, a), y = value_of(src_t, b);
      return raw_of(src_t, is_max ? std::max(x, y) : std::min(x, y));
    }
    case Op::ashift: case Op::ashift_C: {
      const i128 v = value_of(src_t, a);
      // Any nonzero v times 2^41 is past every 32-bit range.
      if (shift >= 0) return raw_of(dst_t, clamp(dst_t, v * (i128(1) << int(std::min<i128>(shift, 41)))));
      return raw_of(dst_t, clamp(dst_t, round_shift(v, -shift, mode)));
    }
    case Op::lshift: case Op::lshift_C: {
      const i128 u = i128(a & mask_of(src_t));
      if (shift >= 0) return raw_of(dst_t, u * (i128(1) << int(std::min<i128>(shift, 64))));  // low bits only
      return raw_of(dst_t, round_shift(u, -shift, mode));
    }
    case Op::count: break;
  }
  return 0;
}

struct Command {
  Op op;
  Tensor dst, src0, src1;  // src1 is the shift tensor of the shifts
  data_type_t dst_dtype, src_dtype, shift_dtype;
  scalar_t C;
  int shift_C;
  rounding_mode_t mode;
};

void k_kernel(const void *arg) {
  const auto &k = *static_cast<const Command *>(arg);
  const dim4 *shape = &k.dst.shape;
  const dim4 *ds = k.dst.api_stride(), *s0 = k.src0.api_stride(), *s1 = k.src1.api_stride();
  const auto d = k.dst.addr, a = k.src0.addr, b = k.src1.addr;
  const data_type_t t = k.src_dtype;
  switch (k.op) {
    case Op::and_: tpu_bdc_and(d, a, b, shape, ds, s0, s1, t); break;
    case Op::or_: tpu_bdc_or(d, a, b, shape, ds, s0, s1, t); break;
    case Op::xor_: tpu_bdc_xor(d, a, b, shape, ds, s0, s1, t); break;
    case Op::and_C: tpu_bdc_and_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::or_C: tpu_bdc_or_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::xor_C: tpu_bdc_xor_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::min: tpu_bdc_min(d, a, b, shape, ds, s0, s1, t); break;
    case Op::max: tpu_bdc_max(d, a, b, shape, ds, s0, s1, t); break;
    case Op::min_C: tpu_bdc_min_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::max_C: tpu_bdc_max_C(d, a, k.C, shape, ds, s0, t); break;
    case Op::ashift:
      tpu_bdc_arithmetic_shift(d, a, b, shape, ds, s0, s1, k.dst_dtype, t, k.shift_dtype, k.mode);
      break;
    case Op::ashift_C: tpu_bdc_arithmetic_shift_C(d, a, char(k.shift_C), shape, ds, s0, k.dst_dtype, t, k.mode); break;
    case Op::lshift: tpu_bdc_logical_shift(d, a, b, shape, ds, s0, s1, k.dst_dtype, t, k.shift_dtype, k.mode); break;
    case Op::lshift_C: tpu_bdc_logical_shift_C(d, a, char(k.shift_C), shape, ds, s0, k.dst_dtype, t, k.mode); break;
    case Op::count: break;
  }
}

// Any encoding, with the extremes, small numbers and (floats) +-0 weighted up.
template <typename Rng>
uint64_t random_raw(Rng &rng, data_type_t t) {
  const int pick = std::uniform_int_distribution<int>(0, 7)(rng);
  if (is_float(t)) {
    const uint64_t sign = uint64_t(1) << (bits_of(t) - 1);
    if (pick == 0) return 0;
    if (pick == 1) return sign;  // -0
    return rng() & mask_of(t);
  }
  switch (pick) {
    case 0: return raw_of(t, min_of(t));
    case 1: return raw_of(t, max_of(t));
    case 2: return raw_of(t, std::uniform_int_distribution<int>(-3, 3)(rng));
    default: return rng() & mask_of(t);
  }
}

// Shift amounts: mostly within +-40, sometimes the dtype's extremes.
template <typename Rng>
uint64_t random_shift_raw(Rng &rng, data_type_t t) {
  switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
    case 0: return raw_of(t, min_of(t));
    case 1: return raw_of(t, max_of(t));
    default: return raw_of(t, clamp(t, std::uniform_int_distribution<int>(-40, 40)(rng)));
  }
}

class BdcBitwise : public local_model::ChipTest {};

TEST_P(BdcBitwise, RandomShapesLayoutsDtypesAndShifts) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const Chip chip = local_model::chip(GetParam());
  const uint32_t third = chip.lmem / 3 / 64 * 64;
  for (int iter = 0; iter < test::rounds(500); ++iter) {
    Command k{};
    k.op = Op(iter % int(Op::count));
    if (is_shift(k.op)) {
      k.dst_dtype = kIntTypes[seeded.uniform(0, 5)];
      k.src_dtype = kIntTypes[seeded.uniform(0, 5)];
      // A signed shift tensor no wider than src (AR-12, AR-13).
      const data_type_t signed_types[] = {DT_INT8, DT_INT16, DT_INT32};
      k.shift_dtype = signed_types[seeded.uniform(0, esize(k.src_dtype) == 4 ? 2 : esize(k.src_dtype) - 1)];
    } else {
      k.dst_dtype = k.src_dtype = k.shift_dtype = kAllTypes[seeded.uniform(0, 8)];
    }
    k.mode = rounding_mode_t(seeded.uniform(0, 6));
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 6),
                        seeded.uniform(1, 19)};
    const int npu = seeded.uniform(0, chip.npu - 1);
    const bool in_place = k.dst_dtype == k.src_dtype && seeded.uniform(0, 4) == 0;
    if (!random_layout(rng, chip, npu, 0, shape, k.dst_dtype, false, third, k.dst) ||
        !random_layout(rng, chip, npu, third, shape, k.src_dtype, true, third, k.src0) ||
        !random_layout(rng, chip, npu, 2 * third, shape, k.shift_dtype, true, third, k.src1)) {
      --iter;
      continue;
    }
    if (in_place) k.src0 = k.dst;
    const uint64_t c_raw = random_raw(rng, k.src_dtype);
    k.C.u32 = uint32_t(c_raw | (uint32_t(rng()) & ~mask_of(k.src_dtype)));  // garbage above the member
    k.shift_C = seeded.uniform(0, 3) == 0 ? seeded.uniform(-128, 127) : seeded.uniform(-40, 40);

    for_each_index(shape, [&](int n, int c, int h, int w) {
      set_bits(chip, k.src0, n, c, h, w, uint32_t(random_raw(rng, k.src_dtype)));
      set_bits(chip, k.src1, n, c, h, w,
               uint32_t(is_shift(k.op) ? random_shift_raw(rng, k.shift_dtype) : random_raw(rng, k.src_dtype)));
    });
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const uint64_t a = get_bits(chip, k.src0, n, c, h, w);
      const uint64_t b = has_constant(k.op) ? c_raw : get_bits(chip, k.src1, n, c, h, w);
      const i128 s = k.op == Op::ashift_C || k.op == Op::lshift_C ? i128(k.shift_C) : value_of(k.shift_dtype, b);
      put(expected, chip, k.dst, n, c, h, w, uint32_t(reference(k.op, k.dst_dtype, k.src_dtype, a, b, s, k.mode)));
    });

    ASSERT_EQ(cmodel_run(k_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return std::string(op_name(k.op)) + " dtypes " + std::to_string(k.dst_dtype) + "/" +
             std::to_string(k.src_dtype) + "/" + std::to_string(k.shift_dtype) + " shift_C " +
             std::to_string(k.shift_C) + " mode " + std::to_string(k.mode) + " iteration " + std::to_string(iter);
    });
  }
}

// ---- hand-picked cases ----------------------------------------------------------------

struct MinMaxArg {
  bool is_max;
  data_type_t dtype;
};

void min_max_kernel(const void *arg) {
  const auto &k = *static_cast<const MinMaxArg *>(arg);
  const dim4 shape = {1, 1, 1, 8};
  if (k.is_max) tpu_bdc_max(0, 4096, 8192, &shape, nullptr, nullptr, nullptr, k.dtype);
  else tpu_bdc_min(0, 4096, 8192, &shape, nullptr, nullptr, nullptr, k.dtype);
}

TEST_P(BdcBitwise, FloatMinMaxPropagatesNanAndOrdersSignedZeros) {
  const Chip chip = local_model::chip(GetParam());
  const dim4 shape = {1, 1, 1, 8};
  const Tensor dst = aligned(chip, 0, 0, shape, DT_FP32), a = aligned(chip, 0, 4096, shape, DT_FP32),
               b = aligned(chip, 0, 8192, shape, DT_FP32);
  // a, b, min, max
  const uint32_t qnan = 0x7fc00001, snan = 0x7f800005, neg_snan = 0xff800007;
  const uint32_t rows[][4] = {
      {0x3f800000, 0x40000000, 0x3f800000, 0x40000000},  // 1, 2
      {0x80000000, 0x00000000, 0x80000000, 0x00000000},  // -0, +0
      {0x00000000, 0x80000000, 0x80000000, 0x00000000},  // +0, -0
      {qnan, 0x3f800000, qnan, qnan},                    // NaN wins
      {0x3f800000, snan, snan | 0x400000, snan | 0x400000},  // signalling NaN comes out quiet
      {neg_snan, qnan, neg_snan | 0x400000, neg_snan | 0x400000},  // both NaN: src0's
      {0xff800000, 0x00000001, 0xff800000, 0x00000001},  // -inf, smallest subnormal
      {0x7f800000, 0x7f7fffff, 0x7f7fffff, 0x7f800000},  // inf, max finite
  };
  for (bool is_max : {false, true}) {
    for (int i = 0; i < 8; ++i) {
      set<uint32_t>(chip, a, 0, 0, 0, i, rows[i][0]);
      set<uint32_t>(chip, b, 0, 0, 0, i, rows[i][1]);
    }
    MinMaxArg arg{is_max, DT_FP32};
    ASSERT_EQ(cmodel_run(min_max_kernel, &arg), 0) << cmodel_last_error();
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(get<uint32_t>(chip, dst, 0, 0, 0, i), rows[i][is_max ? 3 : 2]) << (is_max ? "max" : "min") << " row " << i;
  }
}

struct ShiftArg {
  bool logical;
  data_type_t dst, src;
  int shift;
  rounding_mode_t mode;
};

void one_shift_kernel(const void *arg) {
  const auto &k = *static_cast<const ShiftArg *>(arg);
  const dim4 shape = {1, 1, 1, 1};
  if (k.logical) tpu_bdc_logical_shift_C(0, 4096, char(k.shift), &shape, nullptr, nullptr, k.dst, k.src, k.mode);
  else tpu_bdc_arithmetic_shift_C(0, 4096, char(k.shift), &shape, nullptr, nullptr, k.dst, k.src, k.mode);
}

TEST_P(BdcBitwise, HandPickedShifts) {
  const Chip chip = local_model::chip(GetParam());
  struct Case {
    ShiftArg arg;
    int64_t src, want;
  };
  const std::vector<Case> cases = {
      {{false, DT_INT8, DT_INT8, 2, RM_DOWN}, 31, 124},
      {{false, DT_INT8, DT_INT8, 3, RM_DOWN}, 31, 127},          // saturates
      {{false, DT_INT8, DT_INT8, 3, RM_DOWN}, -31, -128},
      {{false, DT_INT8, DT_INT8, -1, RM_HALF_TO_EVEN}, 5, 2},    // 2.5 -> 2
      {{false, DT_INT8, DT_INT8, -1, RM_HALF_AWAY_FROM_ZERO}, -5, -3},
      {{false, DT_INT8, DT_INT8, -1, RM_DOWN}, -5, -3},          // plain >>
      {{false, DT_INT8, DT_INT32, -8, RM_HALF_UP}, 100000, 127},  // 390.6 saturates
      {{false, DT_UINT8, DT_INT16, 0, RM_DOWN}, -1, 0},
      {{false, DT_INT32, DT_INT32, -128, RM_UP}, 1, 1},          // tiny positive, ceil
      {{true, DT_UINT8, DT_INT8, -1, RM_DOWN}, -2, 127},          // 0xfe >> 1
      {{true, DT_UINT8, DT_INT8, -1, RM_UP}, -1, 128},            // 255 / 2 rounded up
      {{true, DT_INT8, DT_UINT8, 1, RM_DOWN}, 200, -112},         // 400 wraps to 0x90
      {{true, DT_UINT16, DT_UINT8, 4, RM_DOWN}, 255, 4080},
      {{true, DT_INT32, DT_INT32, 127, RM_DOWN}, -1, 0},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.arg.logical ? "logical " : "arithmetic ") + std::to_string(c.src) + " by " +
                 std::to_string(c.arg.shift) + " mode " + std::to_string(c.arg.mode));
    const dim4 one = {1, 1, 1, 1};
    set_bits(chip, aligned(chip, 0, 4096, one, c.arg.src), 0, 0, 0, 0, uint32_t(raw_of(c.arg.src, c.src)));
    ASSERT_EQ(cmodel_run(one_shift_kernel, &c.arg), 0) << cmodel_last_error();
    EXPECT_EQ(int64_t(value_of(c.arg.dst, get_bits(chip, aligned(chip, 0, 0, one, c.arg.dst), 0, 0, 0, 0))), c.want);
  }
}

// ---- checks ---------------------------------------------------------------------------

#define EXPECT_RUN_FAILS_WITH(kernel, arg, text)     \
  do {                                               \
    EXPECT_NE(cmodel_run(kernel, arg), 0);           \
    const std::string m = cmodel_last_error();       \
    EXPECT_NE(m.find(text), std::string::npos) << m; \
  } while (0)

const dim4 kShape = {1, 4, 2, 2};

void int4_and_kernel(const void *) { tpu_bdc_and(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT4); }
void uint4_max_C_kernel(const void *) {
  scalar_t C{};
  tpu_bdc_max_C(0, 4096, C, &kShape, nullptr, nullptr, DT_UINT4);
}
void float_shift_kernel(const void *) {
  tpu_bdc_arithmetic_shift(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT32, DT_INT32, DT_FP32, RM_DOWN);
}
void float_src_shift_kernel(const void *) {
  tpu_bdc_logical_shift_C(0, 4096, 1, &kShape, nullptr, nullptr, DT_INT16, DT_FP16, RM_DOWN);
}
void float_dst_shift_kernel(const void *) {
  tpu_bdc_logical_shift(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_BFP16, DT_INT16, DT_INT8, RM_DOWN);
}
void unknown_dtype_kernel(const void *) {
  tpu_bdc_xor(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, data_type_t(99));
}

TEST_P(BdcBitwise, RejectsUnsupportedDtypes) {
  EXPECT_RUN_FAILS_WITH(int4_and_kernel, nullptr, "tpu_bdc_and: ");
  EXPECT_RUN_FAILS_WITH(int4_and_kernel, nullptr, "dtype DT_INT4 is not allowed here");
  EXPECT_RUN_FAILS_WITH(uint4_max_C_kernel, nullptr, "tpu_bdc_max_C: ");
  EXPECT_RUN_FAILS_WITH(uint4_max_C_kernel, nullptr, "dtype DT_UINT4 is not allowed here");
  EXPECT_RUN_FAILS_WITH(float_shift_kernel, nullptr, "tpu_bdc_arithmetic_shift: shift dtype DT_FP32 is not allowed here");
  EXPECT_RUN_FAILS_WITH(float_src_shift_kernel, nullptr, "tpu_bdc_logical_shift_C: src dtype DT_FP16 is not allowed here");
  EXPECT_RUN_FAILS_WITH(float_dst_shift_kernel, nullptr, "tpu_bdc_logical_shift: dst dtype DT_BFP16 is not allowed here");
  EXPECT_RUN_FAILS_WITH(unknown_dtype_kernel, nullptr, "tpu_bdc_xor: ");
  EXPECT_RUN_FAILS_WITH(unknown_dtype_kernel, nullptr, "99");
}

void bad_mode_kernel(const void *) {
  tpu_bdc_arithmetic_shift_C(0, 4096, -1, &kShape, nullptr, nullptr, DT_INT8, DT_INT8, rounding_mode_t(12));
}
void bad_mode_tensor_kernel(const void *) {
  tpu_bdc_logical_shift(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8,
                        rounding_mode_t(-4));
}

TEST_P(BdcBitwise, RejectsUnknownRoundingModes) {
  EXPECT_RUN_FAILS_WITH(bad_mode_kernel, nullptr, "tpu_bdc_arithmetic_shift_C: rounding_mode 12 is not a rounding_mode_t");
  EXPECT_RUN_FAILS_WITH(bad_mode_tensor_kernel, nullptr, "tpu_bdc_logical_shift: rounding_mode -4 is not a rounding_mode_t");
}

void npu_kernel(const void *arg) {
  const auto &chip = *static_cast<const Chip *>(arg);
  tpu_bdc_or(0, 2 * chip.lmem + 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_UINT16);
}
void npu_shift_kernel(const void *arg) {
  const auto &chip = *static_cast<const Chip *>(arg);
  tpu_bdc_arithmetic_shift(0, 4096, 3 * chip.lmem + 8192, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8,
                           DT_INT8, RM_DOWN);
}
void npu_min_C_kernel(const void *arg) {
  const auto &chip = *static_cast<const Chip *>(arg);
  scalar_t C{};
  tpu_bdc_min_C(chip.lmem, 4096, C, &kShape, nullptr, nullptr, DT_FP16);
}

TEST_P(BdcBitwise, OperandsMustStartOnTheSameNpu) {
  Chip chip = local_model::chip(GetParam());
  EXPECT_RUN_FAILS_WITH(npu_kernel, &chip, "tpu_bdc_or: dst starts on NPU 0 but src0 on NPU 2");
  EXPECT_RUN_FAILS_WITH(npu_shift_kernel, &chip, "tpu_bdc_arithmetic_shift: dst starts on NPU 0 but shift on NPU 3");
  EXPECT_RUN_FAILS_WITH(npu_min_C_kernel, &chip, "tpu_bdc_min_C: dst starts on NPU 1 but src on NPU 0");
}

void misaligned_kernel(const void *) { tpu_bdc_max(0, 4096, 8200, &kShape, nullptr, nullptr, nullptr, DT_INT8); }
void misaligned_shift_kernel(const void *) {
  const dim4 stride = {8, 8, 2, 1};
  tpu_bdc_logical_shift(0, 4096, 8193, &kShape, nullptr, nullptr, &stride, DT_INT8, DT_INT16, DT_INT16, RM_DOWN);
}

TEST_P(BdcBitwise, AlignedOperandsNeedAlignedAddresses) {
  EXPECT_RUN_FAILS_WITH(misaligned_kernel, nullptr, "tpu_bdc_max: src1 local address 0x2008 uses the aligned layout");
  EXPECT_RUN_FAILS_WITH(misaligned_shift_kernel, nullptr,
                        "tpu_bdc_logical_shift: shift local address 0x2001 is not a multiple of the 2-byte size of DT_INT16");
}

void null_shape_kernel(const void *) {
  tpu_bdc_arithmetic_shift_C(0, 4096, 1, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, RM_DOWN);
}

TEST_P(BdcBitwise, NullShapeIsRejected) {
  EXPECT_RUN_FAILS_WITH(null_shape_kernel, nullptr, "tpu_bdc_arithmetic_shift_C: shape is a null pointer");
}

void zero_dim_kernel(const void *) {
  const dim4 shape = {0, 1, 2, 2};
  tpu_bdc_logical_shift(0, 4096, 8192, &shape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8, RM_DOWN);
}

TEST_P(BdcBitwise, ShapeDimsMustBeInRange) {
  EXPECT_RUN_FAILS_WITH(zero_dim_kernel, nullptr, "tpu_bdc_logical_shift: dst shape [0, 1, 2, 2]: n = 0");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcBitwise, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
