// builtin_int_pow.cc: builtin.int_pow's global kernel and reference
// (builtin_int_pow.h).
//
// The elements are viewed as [1, c, 1, count / c] (c the largest divisor of
// the count up to the NPU count) and walked in tiles of [1, c, 1, w]. Per
// tile, in local memory (six int32 regions, each in banks of its own):
//   N = y < 0; E = max(y, 0 - y) (|y|, wrapped: |INT_MIN| read as uint32 is
//   2^31); A = 1; then for each of E's 32 bits, lowest first:
//   F = (E & 1) == 1 ? X : 1; A = A * F; X = X * X; E = E >> 1 (logical)
// with integer multiplies that keep the low 32 bits. A negative exponent
// then fixes the result from the base (reloaded): Z = N ? x : 1 (1 changes
// nothing below); A = Z > 1 ? 0 : A; A = Z < -1 ? 0 : A; A = Z == 0 ?
// INT32_MAX : A (x = +-1 keep x^|y|, which is 1 / x^|y|).
#include "builtin/builtin_int_pow.h"

#include <limits>

#include "builtin/builtin_tiles.h"
#include "emulator/emulator.h"

namespace tpu_runtime::detail {
namespace {

// six of the tile's eight regions
enum Region { kX, kE, kA, kT, kF, kN };

using Tile = RegionTile;

// `dst` = compared OP value ? if_true : if_false.
void select_into(SelectFn op, const Tile &t, local_addr_t dst, local_addr_t compared, int32_t value,
                 const variable_t &if_true, const variable_t &if_false) {
  const variable_t a = tensor_var(compared), b = scalar_var(value);
  op(dst, &a, &b, &if_true, &if_false, &t.shape, DT_INT32, DT_INT32);
}

// A = x^|y| by square-and-multiply; X is overwritten (squared).
void power_of_magnitude(const Tile &t) {
  const dim4 *s = &t.shape;
  tpu_bdc_set_C(t.r[kA], int_scalar(1), s, nullptr, DT_INT32);
  for (int bit = 0; bit < 32; ++bit) {
    tpu_bdc_and_C(t.r[kT], t.r[kE], int_scalar(1), s, nullptr, nullptr, DT_UINT32);
    select_into(tpu_bdc_equal_select, t, t.r[kF], t.r[kT], 1, tensor_var(t.r[kX]), scalar_var(1));
    tpu_bdc_int_mul(t.r[kA], t.r[kA], t.r[kF], s, nullptr, nullptr, nullptr, DT_INT32, DT_INT32, DT_INT32, 0,
                    RM_DOWN, false);
    if (bit == 31) break;
    tpu_bdc_int_mul(t.r[kX], t.r[kX], t.r[kX], s, nullptr, nullptr, nullptr, DT_INT32, DT_INT32, DT_INT32, 0,
                    RM_DOWN, false);
    tpu_bdc_logical_shift_C(t.r[kE], t.r[kE], -1, s, nullptr, nullptr, DT_UINT32, DT_UINT32, RM_DOWN);
  }
}

// One tile: channel ch's elements start at offset_bytes + ch * w elements.
void int_pow_tile(const IntPowArgs &a, const Tile &t, const dim4 &global, uint64_t offset_bytes) {
  const dim4 *s = &t.shape;
  const data_type_t ytype = a.unsigned_exponent ? DT_UINT32 : DT_INT32;
  tpu_gdma_cpy_S2L(t.r[kX], a.x_addr + offset_bytes, s, nullptr, &global, DT_INT32);
  tpu_gdma_cpy_S2L(t.r[kE], a.y_addr + offset_bytes, s, nullptr, &global, ytype);
  if (!a.unsigned_exponent) {
    tpu_bdc_less_C(t.r[kN], t.r[kE], int_scalar(0), int_scalar(1), s, nullptr, nullptr, DT_INT32, DT_INT32);
    tpu_bdc_int_C_sub(t.r[kT], t.r[kE], int_scalar(0), s, nullptr, nullptr, DT_INT32, DT_INT32, DT_INT32, 0,
                      RM_DOWN, false);
    tpu_bdc_max(t.r[kE], t.r[kE], t.r[kT], s, nullptr, nullptr, nullptr, DT_INT32);
  }
  power_of_magnitude(t);
  if (!a.unsigned_exponent) {
    tpu_gdma_cpy_S2L(t.r[kX], a.x_addr + offset_bytes, s, nullptr, &global, DT_INT32);
    select_into(tpu_bdc_equal_select, t, t.r[kF], t.r[kN], 1, tensor_var(t.r[kX]), scalar_var(1));  // Z
    select_into(tpu_bdc_greater_select, t, t.r[kT], t.r[kF], 1, scalar_var(0), tensor_var(t.r[kA]));
    select_into(tpu_bdc_less_select, t, t.r[kA], t.r[kF], -1, scalar_var(0), tensor_var(t.r[kT]));
    select_into(tpu_bdc_equal_select, t, t.r[kT], t.r[kF], 0, scalar_var(std::numeric_limits<int32_t>::max()),
                tensor_var(t.r[kA]));
    tpu_gdma_cpy_L2S(a.out_addr + offset_bytes, t.r[kT], s, &global, nullptr, DT_INT32);
    return;
  }
  tpu_gdma_cpy_L2S(a.out_addr + offset_bytes, t.r[kA], s, &global, nullptr, DT_INT32);
}

}  // namespace

int32_t int_pow_value(int32_t x, int64_t y) {
  if (y < 0) {
    if (x == 1) return 1;
    if (x == -1) return (-y) % 2 ? -1 : 1;
    return x == 0 ? std::numeric_limits<int32_t>::max() : 0;
  }
  uint32_t result = 1, base = uint32_t(x);
  for (uint64_t e = uint64_t(y); e; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return int32_t(result);
}

void run_int_pow_kernel(const IntPowArgs &args) {
  run_on_emulator("the int_pow kernel failed", [&] {
    for_each_region_tile(args.count,
                         [&](const Tile &t, const dim4 &global, uint64_t offset) { int_pow_tile(args, t, global, offset); });
  });
}

}  // namespace tpu_runtime::detail
