// bdc_int_arith_test: family N, integer arithmetic: tpu_bdc_int_add/sub/mul
// (plain, _C, C_sub, pcs forms), int_square, int_min_C / int_max_C,
// against exact integer arithmetic written here, bit for bit.
//
// The reference: the exact result in __int128, divided by 2^shift with a
// floor division and the remainder compared with half a unit for each of
// the seven rounding modes, then clamped (saturation) or reduced modulo
// 2^bits (wrap). Random mixes of the six 8/16/32-bit dtypes, shifts
// 0..127, every rounding mode, saturation on and off, full-range values
// with extra weight on the extremes, random layouts (free strides,
// zero-stride broadcast sources, in-place), any start NPU, both chips.
// The whole local memory is compared: bytes outside dst must not change.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "support/local_model.h"
#include "support/test_support.h"

namespace {

using namespace local_model;

using i128 = __int128;

enum class Op {
  add, sub, mul,                      // two tensors
  add_C, sub_C, C_sub, mul_C,         // scalar C of C_dtype
  square,
  pcs_add, pcs_sub, pcs_mul,          // per-channel shift tensor
  pcs_add_C, pcs_sub_C, pcs_C_sub, pcs_mul_C,
  min_C, max_C,                       // single dtype, shift without saturation flag
  count
};

const char *op_name(Op op) {
  static const char *names[] = {"add", "sub", "mul", "add_C", "sub_C", "C_sub", "mul_C", "square", "pcs_add",
                                "pcs_sub", "pcs_mul", "pcs_add_C", "pcs_sub_C", "pcs_C_sub", "pcs_mul_C", "min_C",
                                "max_C"};
  return names[int(op)];
}

bool two_tensors(Op op) {
  return op == Op::add || op == Op::sub || op == Op::mul || op == Op::pcs_add || op == Op::pcs_sub || op == Op::pcs_mul;
}
bool is_pcs(Op op) { return op >= Op::pcs_add && op <= Op::pcs_mul_C; }
bool is_min_max(Op op) { return op == Op::min_C || op == Op::max_C; }

const data_type_t kIntTypes[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};

int bits_of(data_type_t t) { return esize(t) * 8; }
bool is_signed(data_type_t t) { return t == DT_INT8 || t == DT_INT16 || t == DT_INT32; }
i128 min_of(data_type_t t) { return is_signed(t) ? -(i128(1) << (bits_of(t) - 1)) : 0; }
i128 max_of(data_type_t t) { return is_signed(t) ? (i128(1) << (bits_of(t) - 1)) - 1 : (i128(1) << bits_of(t)) - 1; }

// Raw bits <-> value of dtype t.
i128 value_of(data_type_t t, uint64_t raw) {
  const int b = bits_of(t);
  raw &= (uint64_t(1) << b) - 1;
  if (is_signed(t) && (raw >> (b - 1))) return i128(raw) - (i128(1) << b);
  return i128(raw);
}
uint64_t raw_of(data_type_t t, i128 v) { return uint64_t(v) & ((uint64_t(1) << bits_of(t)) - 1); }

// v / 2^s rounded with mode. |v| < 2^66 in every test, so for s >= 68 the
// quotient's floor is 0 or -1 and the remainder is below half a unit
// (v >= 0) or above it (v < 0) whatever s is: s = 70 stands for them all.
i128 round_shift(i128 v, int s, rounding_mode_t mode) {
  if (s == 0) return v;
  if (s > 70) s = 70;
  const i128 unit = i128(1) << s;
  const i128 q = v >= 0 ? v / unit : -((-v + unit - 1) / unit);  // floor
  const i128 r = v - q * unit;                                    // in [0, unit)
  if (r == 0) return q;
  const int cmp = 2 * r < unit ? -1 : 2 * r == unit ? 0 : 1;      // against half a unit
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

struct Command {
  Op op;
  Tensor dst, src0, src1, shift_tensor;
  data_type_t dst_dtype, src0_dtype, src1_dtype;  // src1_dtype is C_dtype for the _C forms
  scalar_t C;
  int shift;
  rounding_mode_t mode;
  bool saturation;
};

void int_kernel(const void *arg) {
  const auto &k = *static_cast<const Command *>(arg);
  const dim4 *shape = &k.dst.shape;
  const dim4 *ds = k.dst.api_stride(), *s0 = k.src0.api_stride(), *s1 = k.src1.api_stride();
  const auto d = k.dst.addr, a = k.src0.addr, b = k.src1.addr, sh = k.shift_tensor.addr;
  const data_type_t td = k.dst_dtype, t0 = k.src0_dtype, t1 = k.src1_dtype;
  const char s = char(k.shift);
  const rounding_mode_t m = k.mode;
  const bool sat = k.saturation;
  switch (k.op) {
    case Op::add: tpu_bdc_int_add(d, a, b, shape, ds, s0, s1, td, t0, t1, s, m, sat); break;
    case Op::sub: tpu_bdc_int_sub(d, a, b, shape, ds, s0, s1, td, t0, t1, s, m, sat); break;
    case Op::mul: tpu_bdc_int_mul(d, a, b, shape, ds, s0, s1, td, t0, t1, s, m, sat); break;
    case Op::add_C: tpu_bdc_int_add_C(d, a, k.C, shape, ds, s0, td, t0, t1, s, m, sat); break;
    case Op::sub_C: tpu_bdc_int_sub_C(d, a, k.C, shape, ds, s0, td, t0, t1, s, m, sat); break;
    case Op::C_sub: tpu_bdc_int_C_sub(d, a, k.C, shape, ds, s0, td, t0, t1, s, m, sat); break;
    case Op::mul_C: tpu_bdc_int_mul_C(d, a, k.C, shape, ds, s0, td, t0, t1, s, m, sat); break;
    case Op::square: tpu_bdc_int_square(d, a, shape, ds, s0, td, t0, s, m, sat); break;
    case Op::pcs_add: tpu_bdc_int_pcs_add(d, a, b, sh, shape, ds, s0, s1, td, t0, t1, m, sat); break;
    case Op::pcs_sub: tpu_bdc_int_pcs_sub(d, a, b, sh, shape, ds, s0, s1, td, t0, t1, m, sat); break;
    case Op::pcs_mul: tpu_bdc_int_pcs_mul(d, a, b, sh, shape, ds, s0, s1, td, t0, t1, m, sat); break;
    case Op::pcs_add_C: tpu_bdc_int_pcs_add_C(d, a, sh, k.C, shape, ds, s0, td, t0, t1, m, sat); break;
    case Op::pcs_sub_C: tpu_bdc_int_pcs_sub_C(d, a, sh, k.C, shape, ds, s0, td, t0, t1, m, sat); break;
    case Op::pcs_C_sub: tpu_bdc_int_pcs_C_sub(d, a, sh, k.C, shape, ds, s0, td, t0, t1, m, sat); break;
    case Op::pcs_mul_C: tpu_bdc_int_pcs_mul_C(d, a, sh, k.C, shape, ds, s0, td, t0, t1, m, sat); break;
    case Op::min_C: tpu_bdc_int_min_C(d, a, k.C, shape, ds, s0, td, s, m); break;
    case Op::max_C: tpu_bdc_int_max_C(d, a, k.C, shape, ds, s0, td, s, m); break;
    case Op::count: break;
  }
}

// The exact result before shifting.
i128 exact(Op op, i128 a, i128 b) {
  switch (op) {
    case Op::add: case Op::add_C: case Op::pcs_add: case Op::pcs_add_C: return a + b;
    case Op::sub: case Op::sub_C: case Op::pcs_sub: case Op::pcs_sub_C: return a - b;
    case Op::C_sub: case Op::pcs_C_sub: return b - a;  // b is C
    case Op::mul: case Op::mul_C: case Op::pcs_mul: case Op::pcs_mul_C: return a * b;
    case Op::square: return a * a;
    case Op::min_C: return a < b ? a : b;
    case Op::max_C: return a > b ? a : b;
    case Op::count: break;
  }
  return 0;
}

// Full-range values with the extremes and small numbers weighted up.
template <typename Rng>
i128 random_value(Rng &rng, data_type_t t) {
  switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
    case 0: return min_of(t);
    case 1: return max_of(t);
    case 2: return std::uniform_int_distribution<int>(is_signed(t) ? -3 : 0, 3)(rng);
    default: return value_of(t, rng());
  }
}

template <typename Rng>
int random_shift(Rng &rng) {
  switch (std::uniform_int_distribution<int>(0, 7)(rng)) {
    case 0: return 0;
    case 1: return std::uniform_int_distribution<int>(31, 127)(rng);
    default: return std::uniform_int_distribution<int>(0, 17)(rng);
  }
}

class BdcIntArith : public local_model::ChipTest {};

TEST_P(BdcIntArith, RandomShapesLayoutsDtypesShiftsAndModes) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const Chip chip = local_model::chip(GetParam());
  const uint32_t quarter = chip.lmem / 4 / 64 * 64;
  for (int iter = 0; iter < test::rounds(600); ++iter) {
    Command k{};
    k.op = Op(iter % int(Op::count));
    auto pick_type = [&] { return kIntTypes[seeded.uniform(0, 5)]; };
    k.dst_dtype = pick_type();
    k.src0_dtype = is_min_max(k.op) ? k.dst_dtype : pick_type();
    k.src1_dtype = is_min_max(k.op) ? k.dst_dtype : pick_type();
    k.shift = random_shift(rng);
    k.mode = rounding_mode_t(seeded.uniform(0, 6));
    k.saturation = is_min_max(k.op) || seeded.uniform(0, 1) == 1;
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 6),
                        seeded.uniform(1, 19)};
    const int npu = seeded.uniform(0, chip.npu - 1);
    const bool in_place = k.dst_dtype == k.src0_dtype && seeded.uniform(0, 4) == 0;
    if (!random_layout(rng, chip, npu, 0, shape, k.dst_dtype, false, quarter, k.dst) ||
        !random_layout(rng, chip, npu, quarter, shape, k.src0_dtype, true, quarter, k.src0) ||
        !random_layout(rng, chip, npu, 2 * quarter, shape, k.src1_dtype, true, quarter, k.src1)) {
      --iter;  // too large for this layout; try another
      continue;
    }
    if (in_place) k.src0 = k.dst;
    // The per-channel shift tensor: [1, C, 1, 1] int8, aligned.
    k.shift_tensor = aligned(chip, npu, 3 * quarter, {1, shape.c, 1, 1}, DT_INT8);
    std::vector<int> channel_shift(size_t(shape.c));
    for (int c = 0; c < shape.c; ++c) {
      channel_shift[size_t(c)] = random_shift(rng);
      set<int8_t>(chip, k.shift_tensor, 0, c, 0, 0, int8_t(channel_shift[size_t(c)]));
    }
    // C in the low bytes of the slot; the bytes above the C_dtype member are
    // garbage the emulator must ignore.
    const i128 c_value = random_value(rng, k.src1_dtype);
    const uint64_t garbage = uint32_t(rng()) & ~uint32_t(raw_of(k.src1_dtype, -1));
    k.C.u32 = uint32_t(raw_of(k.src1_dtype, c_value) | garbage);

    for_each_index(shape, [&](int n, int c, int h, int w) {
      set_bits(chip, k.src0, n, c, h, w, uint32_t(raw_of(k.src0_dtype, random_value(rng, k.src0_dtype))));
      set_bits(chip, k.src1, n, c, h, w, uint32_t(raw_of(k.src1_dtype, random_value(rng, k.src1_dtype))));
    });
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const i128 a = value_of(k.src0_dtype, get_bits(chip, k.src0, n, c, h, w));
      const i128 b = two_tensors(k.op) ? value_of(k.src1_dtype, get_bits(chip, k.src1, n, c, h, w)) : c_value;
      const int s = is_pcs(k.op) ? channel_shift[size_t(c)] : k.shift;
      i128 r = round_shift(exact(k.op, a, b), s, k.mode);
      if (k.saturation) r = std::max(min_of(k.dst_dtype), std::min(max_of(k.dst_dtype), r));
      put(expected, chip, k.dst, n, c, h, w, uint32_t(raw_of(k.dst_dtype, r)));
    });

    ASSERT_EQ(cmodel_run(int_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return std::string(op_name(k.op)) + " dtypes " + std::to_string(k.dst_dtype) + "/" +
             std::to_string(k.src0_dtype) + "/" + std::to_string(k.src1_dtype) + " shift " +
             std::to_string(k.shift) + " mode " + std::to_string(k.mode) + " saturation " +
             std::to_string(k.saturation) + " iteration " + std::to_string(iter);
    });
  }
}

// A few fixed cases a reader can check by hand.
struct Fixed {
  data_type_t dst, src0, src1;
  int64_t a, b;
  int shift;
  rounding_mode_t mode;
  bool saturation;
  int64_t want;
};

void one_mul_kernel(const void *arg) {
  const auto &f = *static_cast<const Fixed *>(arg);
  const dim4 shape = {1, 1, 1, 1};
  tpu_bdc_int_mul(0, 4096, 8192, &shape, nullptr, nullptr, nullptr, f.dst, f.src0, f.src1, char(f.shift), f.mode,
                  f.saturation);
}

TEST_P(BdcIntArith, HandPickedProducts) {
  const Chip chip = local_model::chip(GetParam());
  const std::vector<Fixed> cases = {
      {DT_INT8, DT_INT8, DT_INT8, 100, 3, 0, RM_HALF_TO_EVEN, true, 127},     // saturates
      {DT_INT8, DT_INT8, DT_INT8, 100, 3, 0, RM_HALF_TO_EVEN, false, 44},     // 300 mod 256
      {DT_INT8, DT_INT8, DT_INT8, 5, 3, 1, RM_HALF_TO_EVEN, true, 8},         // 7.5 -> 8
      {DT_INT8, DT_INT8, DT_INT8, 5, 3, 2, RM_HALF_TO_EVEN, true, 4},         // 3.75 -> 4
      {DT_INT8, DT_INT8, DT_INT8, 3, 3, 1, RM_HALF_TO_EVEN, true, 4},         // 4.5 -> 4
      {DT_INT8, DT_INT8, DT_INT8, -3, 3, 1, RM_HALF_AWAY_FROM_ZERO, true, -5}, // -4.5 -> -5
      {DT_INT8, DT_INT8, DT_INT8, -3, 3, 1, RM_HALF_UP, true, -4},            // -4.5 -> -4
      {DT_INT8, DT_INT8, DT_INT8, -3, 3, 1, RM_DOWN, true, -5},               // floor
      {DT_INT8, DT_INT8, DT_INT8, -3, 3, 1, RM_TOWARDS_ZERO, true, -4},
      {DT_UINT8, DT_INT8, DT_INT8, -3, 3, 0, RM_DOWN, true, 0},               // negative -> 0 in uint8
      {DT_UINT32, DT_UINT32, DT_UINT32, 4294967295, 4294967295, 32, RM_DOWN, true, 4294967294},
      {DT_INT32, DT_INT32, DT_INT32, -2147483648LL, -2147483648LL, 0, RM_DOWN, true, 2147483647},
      {DT_INT32, DT_INT32, DT_INT32, -2147483648LL, -2147483648LL, 0, RM_DOWN, false, 0},
      {DT_INT16, DT_UINT8, DT_INT8, 255, -128, 3, RM_UP, true, -4080},
      {DT_INT8, DT_INT32, DT_INT32, 1, 1, 127, RM_UP, true, 1},               // tiny positive, ceil
      {DT_INT8, DT_INT32, DT_INT32, -1, 1, 127, RM_DOWN, true, -1},
  };
  for (const Fixed &f : cases) {
    SCOPED_TRACE(std::to_string(f.a) + " * " + std::to_string(f.b) + " >> " + std::to_string(f.shift) + " mode " +
                 std::to_string(f.mode));
    const dim4 one = {1, 1, 1, 1};
    set_bits(chip, aligned(chip, 0, 4096, one, f.src0), 0, 0, 0, 0, uint32_t(raw_of(f.src0, f.a)));
    set_bits(chip, aligned(chip, 0, 8192, one, f.src1), 0, 0, 0, 0, uint32_t(raw_of(f.src1, f.b)));
    ASSERT_EQ(cmodel_run(one_mul_kernel, &f), 0) << cmodel_last_error();
    EXPECT_EQ(int64_t(value_of(f.dst, get_bits(chip, aligned(chip, 0, 0, one, f.dst), 0, 0, 0, 0))), f.want);
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

void float_dst_kernel(const void *) {
  tpu_bdc_int_add(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_FP32, DT_INT8, DT_INT8, 0, RM_DOWN, true);
}
void float_src1_kernel(const void *) {
  tpu_bdc_int_mul(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_BFP16, 0, RM_DOWN, true);
}
void float_C_kernel(const void *) {
  scalar_t C{};
  tpu_bdc_int_C_sub(0, 4096, C, &kShape, nullptr, nullptr, DT_INT16, DT_INT16, DT_FP16, 0, RM_DOWN, true);
}
void int4_min_kernel(const void *) {
  scalar_t C{};
  tpu_bdc_int_min_C(0, 4096, C, &kShape, nullptr, nullptr, DT_INT4, 0, RM_DOWN);
}
void float_square_kernel(const void *) {
  tpu_bdc_int_square(0, 4096, &kShape, nullptr, nullptr, DT_INT32, DT_FP32, 0, RM_DOWN, false);
}

TEST_P(BdcIntArith, RejectsNonIntegerDtypes) {
  const std::string ints = "expected one of DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32";
  EXPECT_RUN_FAILS_WITH(float_dst_kernel, nullptr, "tpu_bdc_int_add: dst dtype DT_FP32 is not allowed here; " + ints);
  EXPECT_RUN_FAILS_WITH(float_src1_kernel, nullptr, "tpu_bdc_int_mul: src1 dtype DT_BFP16 is not allowed here");
  EXPECT_RUN_FAILS_WITH(float_C_kernel, nullptr, "tpu_bdc_int_C_sub: C dtype DT_FP16 is not allowed here");
  EXPECT_RUN_FAILS_WITH(int4_min_kernel, nullptr, "tpu_bdc_int_min_C: ");
  EXPECT_RUN_FAILS_WITH(int4_min_kernel, nullptr, "dtype DT_INT4 is not allowed here");
  EXPECT_RUN_FAILS_WITH(float_square_kernel, nullptr, "tpu_bdc_int_square: src dtype DT_FP32 is not allowed here");
}

void negative_shift_kernel(const void *) {
  tpu_bdc_int_sub(0, 4096, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8, char(-3), RM_DOWN,
                  true);
}
void negative_shift_max_kernel(const void *) {
  scalar_t C{};
  tpu_bdc_int_max_C(0, 4096, C, &kShape, nullptr, nullptr, DT_INT16, char(-128), RM_DOWN);
}

TEST_P(BdcIntArith, RejectsNegativeShifts) {
  EXPECT_RUN_FAILS_WITH(negative_shift_kernel, nullptr,
                        "tpu_bdc_int_sub: shift -3 is out of range; the right-shift amount must be in [0, 127]");
  EXPECT_RUN_FAILS_WITH(negative_shift_max_kernel, nullptr, "tpu_bdc_int_max_C: shift -128 is out of range");
}

void negative_channel_shift_kernel(const void *) {
  const dim4 shape = {1, 3, 1, 4};
  tpu_bdc_int_pcs_add(0, 4096, 8192, 12288, &shape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8, RM_DOWN,
                      true);
}
void misplaced_shift_tensor_kernel(const void *arg) {
  const auto &chip = *static_cast<const Chip *>(arg);
  scalar_t C{};
  tpu_bdc_int_pcs_mul_C(0, 4096, chip.lmem + 12288, C, &kShape, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8, RM_DOWN,
                        true);
}
// The shift tensor need not be aligned (AR-8 asks only a multiple of its
// 1-byte element).
void unaligned_shift_tensor_kernel(const void *) {
  scalar_t C{};
  tpu_bdc_int_pcs_C_sub(0, 4096, 12289, C, &kShape, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8, RM_DOWN, true);
}

TEST_P(BdcIntArith, ChecksThePerChannelShiftTensor) {
  Chip chip = local_model::chip(GetParam());
  const Tensor shifts = aligned(chip, 0, 12288, {1, 3, 1, 1}, DT_INT8);
  set<int8_t>(chip, shifts, 0, 0, 0, 0, 1);
  set<int8_t>(chip, shifts, 0, 1, 0, 0, 0);
  set<int8_t>(chip, shifts, 0, 2, 0, 0, -7);
  EXPECT_RUN_FAILS_WITH(negative_channel_shift_kernel, nullptr,
                        "tpu_bdc_int_pcs_add: shift of channel 2 is -7 (tensor at 0x3000)");
  EXPECT_RUN_FAILS_WITH(misplaced_shift_tensor_kernel, &chip,
                        "tpu_bdc_int_pcs_mul_C: dst starts on NPU 0 but shift on NPU 1");
  const Tensor unaligned = aligned(chip, 0, 12289, {1, kShape.c, 1, 1}, DT_INT8);
  for (int c = 0; c < kShape.c; ++c) set<int8_t>(chip, unaligned, 0, c, 0, 0, 2);
  EXPECT_EQ(cmodel_run(unaligned_shift_tensor_kernel, nullptr), 0) << cmodel_last_error();
}

void bad_mode_kernel(const void *) {
  scalar_t C{};
  tpu_bdc_int_add_C(0, 4096, C, &kShape, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8, 0, rounding_mode_t(7), true);
}
void bad_mode_pcs_kernel(const void *) {
  tpu_bdc_int_pcs_sub(0, 4096, 8192, 12288, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8,
                      rounding_mode_t(-1), true);
}

TEST_P(BdcIntArith, RejectsUnknownRoundingModes) {
  EXPECT_RUN_FAILS_WITH(bad_mode_kernel, nullptr, "tpu_bdc_int_add_C: rounding_mode 7 is not a rounding_mode_t");
  EXPECT_RUN_FAILS_WITH(bad_mode_pcs_kernel, nullptr, "tpu_bdc_int_pcs_sub: rounding_mode -1 is not a rounding_mode_t");
}

void npu_kernel(const void *arg) {
  const auto &chip = *static_cast<const Chip *>(arg);
  tpu_bdc_int_add(0, 4096, 5 * chip.lmem + 8192, &kShape, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8, 0,
                  RM_DOWN, true);
}
void npu_square_kernel(const void *arg) {
  const auto &chip = *static_cast<const Chip *>(arg);
  tpu_bdc_int_square(chip.lmem, 4096, &kShape, nullptr, nullptr, DT_INT16, DT_INT8, 0, RM_DOWN, true);
}

TEST_P(BdcIntArith, OperandsMustStartOnTheSameNpu) {
  Chip chip = local_model::chip(GetParam());
  EXPECT_RUN_FAILS_WITH(npu_kernel, &chip, "tpu_bdc_int_add: dst starts on NPU 0 but src1 on NPU 5");
  EXPECT_RUN_FAILS_WITH(npu_square_kernel, &chip, "tpu_bdc_int_square: dst starts on NPU 1 but src on NPU 0");
}

void misaligned_kernel(const void *) {
  tpu_bdc_int_mul(0, 4097, 8192, &kShape, nullptr, nullptr, nullptr, DT_INT16, DT_INT8, DT_INT8, 0, RM_DOWN, true);
}
void misaligned_elem_kernel(const void *) {
  const dim4 stride = {16, 8, 2, 1};
  tpu_bdc_int_mul(0, 4096, 8193, &kShape, nullptr, nullptr, &stride, DT_INT16, DT_INT8, DT_INT32, 0, RM_DOWN, true);
}

TEST_P(BdcIntArith, AlignedOperandsNeedAlignedAddresses) {
  EXPECT_RUN_FAILS_WITH(misaligned_kernel, nullptr, "tpu_bdc_int_mul: src0 local address 0x1001 uses the aligned layout");
  EXPECT_RUN_FAILS_WITH(misaligned_elem_kernel, nullptr,
                        "tpu_bdc_int_mul: src1 local address 0x2001 is not a multiple of the 4-byte size of DT_INT32");
}

void null_shape_kernel(const void *) {
  scalar_t C{};
  tpu_bdc_int_mul_C(0, 4096, C, nullptr, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8, 0, RM_DOWN, true);
}

TEST_P(BdcIntArith, NullShapeIsRejected) {
  EXPECT_RUN_FAILS_WITH(null_shape_kernel, nullptr, "tpu_bdc_int_mul_C: shape is a null pointer");
}

void zero_dim_kernel(const void *) {
  const dim4 shape = {1, 0, 2, 2};
  tpu_bdc_int_square(0, 4096, &shape, nullptr, nullptr, DT_INT16, DT_INT8, 0, RM_DOWN, true);
}
void huge_dim_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 65536};
  scalar_t C{};
  tpu_bdc_int_pcs_add_C(0, 4096, 8192, C, &shape, nullptr, nullptr, DT_INT8, DT_INT8, DT_INT8, RM_DOWN, true);
}

TEST_P(BdcIntArith, ShapeDimsMustBeInRange) {
  EXPECT_RUN_FAILS_WITH(zero_dim_kernel, nullptr, "tpu_bdc_int_square: dst shape [1, 0, 2, 2]: c = 0");
  EXPECT_RUN_FAILS_WITH(huge_dim_kernel, nullptr, "tpu_bdc_int_pcs_add_C: dst shape [1, 1, 1, 65536]: w = 65536");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcIntArith, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
