// builtin_int_mod.cc: builtin.int_mod's global kernel and reference
// (builtin_int_mod.h).
//
// The elements are viewed as [1, c, 1, count / c] (c the largest divisor of
// the count up to the NPU count) and walked in tiles of [1, c, 1, w]. Per
// tile, in local memory (eight regions, each in banks of its own):
//   X, Y loaded; A = |x|, B = |y| (max(v, 0 - v), read as uint32; unsigned
//   operands as they are); R = 0; for each bit k of A, highest first:
//   R = (R << 1) | ((A >> k) & 1); D = R - B; R = R < B ? R : D
//   (R < B <= 2^31 before each shift, so 2R + 1 fits uint32). Signed: r =
//   x < 0 ? -R : R; fmod 0: r = (r < 0) - (y < 0) != 0 and r != 0 ? r + y
//   : r. Last: r = y == 0 ? 0 : r.
#include "builtin/builtin_int_mod.h"

#include "builtin/builtin_tiles.h"

#include "emulator/emulator.h"

namespace tpu_runtime::detail {
namespace {

// the tile's eight regions
enum Region { kX, kY, kA, kB, kR, kT, kD, kS };

using Tile = RegionTile;

// dst = compared OP against ? if_true : if_false.
void select_into(SelectFn op, const Tile &t, local_addr_t dst, const variable_t &compared, const variable_t &against,
                 const variable_t &if_true, const variable_t &if_false, data_type_t dtype) {
  op(dst, &compared, &against, &if_true, &if_false, &t.shape, dtype, dtype);
}

// dst = |src| as uint32 (0 - INT32_MIN wraps to itself: 2^31 unsigned).
void magnitude(const Tile &t, local_addr_t dst, local_addr_t src) {
  tpu_bdc_int_C_sub(t.r[kT], src, int_scalar(0), &t.shape, nullptr, nullptr, DT_INT32, DT_INT32, DT_INT32, 0, RM_DOWN,
                    false);
  tpu_bdc_max(dst, src, t.r[kT], &t.shape, nullptr, nullptr, nullptr, DT_INT32);
}

// R = A mod B by long division over A's 32 bits (uint32).
void long_division(const Tile &t) {
  const dim4 *s = &t.shape;
  tpu_bdc_set_C(t.r[kR], int_scalar(0), s, nullptr, DT_UINT32);
  for (int bit = 31; bit >= 0; --bit) {
    tpu_bdc_logical_shift_C(t.r[kR], t.r[kR], 1, s, nullptr, nullptr, DT_UINT32, DT_UINT32, RM_DOWN);
    tpu_bdc_logical_shift_C(t.r[kT], t.r[kA], char(-bit), s, nullptr, nullptr, DT_UINT32, DT_UINT32, RM_DOWN);
    tpu_bdc_and_C(t.r[kT], t.r[kT], int_scalar(1), s, nullptr, nullptr, DT_UINT32);
    tpu_bdc_or(t.r[kR], t.r[kR], t.r[kT], s, nullptr, nullptr, nullptr, DT_UINT32);
    tpu_bdc_int_sub(t.r[kD], t.r[kR], t.r[kB], s, nullptr, nullptr, nullptr, DT_UINT32, DT_UINT32, DT_UINT32, 0,
                    RM_DOWN, false);
    select_into(tpu_bdc_less_select, t, t.r[kR], tensor_var(t.r[kR]), tensor_var(t.r[kB]), tensor_var(t.r[kR]),
                tensor_var(t.r[kD]), DT_UINT32);
  }
}

// R = the signed remainder from the magnitude's: x's sign, then (fmod 0)
// moved by y where its sign differs from y's.
void apply_signs(const Tile &t, bool fmod) {
  const dim4 *s = &t.shape;
  tpu_bdc_int_C_sub(t.r[kT], t.r[kR], int_scalar(0), s, nullptr, nullptr, DT_INT32, DT_INT32, DT_INT32, 0, RM_DOWN,
                    false);
  select_into(tpu_bdc_less_select, t, t.r[kR], tensor_var(t.r[kX]), scalar_var(0), tensor_var(t.r[kT]),
              tensor_var(t.r[kR]), DT_INT32);
  if (fmod) return;
  tpu_bdc_int_add(t.r[kS], t.r[kR], t.r[kY], s, nullptr, nullptr, nullptr, DT_INT32, DT_INT32, DT_INT32, 0, RM_DOWN,
                  false);  // r + y
  select_into(tpu_bdc_less_select, t, t.r[kT], tensor_var(t.r[kR]), scalar_var(0), scalar_var(1), scalar_var(0),
              DT_INT32);
  select_into(tpu_bdc_less_select, t, t.r[kD], tensor_var(t.r[kY]), scalar_var(0), scalar_var(1), scalar_var(0),
              DT_INT32);
  tpu_bdc_int_sub(t.r[kD], t.r[kT], t.r[kD], s, nullptr, nullptr, nullptr, DT_INT32, DT_INT32, DT_INT32, 0, RM_DOWN,
                  false);  // the signs differ where nonzero
  select_into(tpu_bdc_equal_select, t, t.r[kS], tensor_var(t.r[kD]), scalar_var(0), tensor_var(t.r[kR]),
              tensor_var(t.r[kS]), DT_INT32);
  select_into(tpu_bdc_equal_select, t, t.r[kR], tensor_var(t.r[kR]), scalar_var(0), scalar_var(0),
              tensor_var(t.r[kS]), DT_INT32);
}

void int_mod_tile(const IntModArgs &a, const Tile &t, const dim4 &global, uint64_t offset_bytes) {
  const dim4 *s = &t.shape;
  const data_type_t dtype = a.is_unsigned ? DT_UINT32 : DT_INT32;
  tpu_gdma_cpy_S2L(t.r[kX], a.x_addr + offset_bytes, s, nullptr, &global, dtype);
  tpu_gdma_cpy_S2L(t.r[kY], a.y_addr + offset_bytes, s, nullptr, &global, dtype);
  if (a.is_unsigned) {
    tpu_bdc_and_C(t.r[kA], t.r[kX], int_scalar(-1), s, nullptr, nullptr, DT_UINT32);  // copies
    tpu_bdc_and_C(t.r[kB], t.r[kY], int_scalar(-1), s, nullptr, nullptr, DT_UINT32);
  } else {
    magnitude(t, t.r[kA], t.r[kX]);
    magnitude(t, t.r[kB], t.r[kY]);
  }
  long_division(t);
  if (!a.is_unsigned) apply_signs(t, a.fmod);
  select_into(tpu_bdc_equal_select, t, t.r[kS], tensor_var(t.r[kY]), scalar_var(0), scalar_var(0),
              tensor_var(t.r[kR]), dtype);
  tpu_gdma_cpy_L2S(a.out_addr + offset_bytes, t.r[kS], s, &global, nullptr, dtype);
}

}  // namespace

int64_t int_mod_value(int64_t x, int64_t y, bool fmod) {
  if (y == 0) return 0;
  const int64_t r = x % y;
  return !fmod && r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

void run_int_mod_kernel(const IntModArgs &args) {
  run_on_emulator("the int_mod kernel failed", [&] {
    for_each_region_tile(args.count,
                         [&](const Tile &t, const dim4 &global, uint64_t offset) { int_mod_tile(args, t, global, offset); });
  });
}

}  // namespace tpu_runtime::detail
