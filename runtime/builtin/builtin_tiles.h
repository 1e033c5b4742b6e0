// builtin_tiles.h (private): what the element-wise built-in kernels of
// their own (builtin_int_pow.cc, builtin_int_mod.cc, builtin_math.cc)
// share: the walk over a tensor's elements in tiles, and the kernel API's
// scalar and variable operands.
#pragma once

#include <cstdint>
#include <functional>

#include "tpu_kernel.h"

namespace tpu_runtime::detail {

// `count` elements of 4 bytes viewed as [1, c, 1, count / c] (c the
// largest divisor of the count up to the NPU count; channel ch holds the
// elements [ch · w, (ch + 1) · w)), walked in tiles of [1, c, 1, tile_w]
// with tile_w at most region_bytes / 4 (and 65535): `tile` gets the
// tile's shape, the global view's strides (to copy it with) and the
// tile's byte offset into the tensor.
using TileFn = std::function<void(const dim4 &shape, const dim4 &global, uint64_t offset_bytes)>;
void for_each_tile(int64_t count, int64_t region_bytes, const TileFn &tile);

// A tile of for_each_tile with local memory cut into eight regions (each
// starting in banks of its own, a tile_w fitting one).
struct RegionTile {
  static constexpr int kRegions = 8;
  local_addr_t r[kRegions];
  dim4 shape;
};
using RegionTileFn = std::function<void(const RegionTile &tile, const dim4 &global, uint64_t offset_bytes)>;
void for_each_region_tile(int64_t count, const RegionTileFn &tile);

scalar_t int_scalar(int32_t v);
variable_t tensor_var(local_addr_t addr);
variable_t scalar_var(int32_t value);

// A select of the kernel API: dst = src0 OP src1 ? src2 : src3.
using SelectFn = void (*)(local_addr_t, const variable_t *, const variable_t *, const variable_t *,
                          const variable_t *, const dim4 *, data_type_t, data_type_t);

}  // namespace tpu_runtime::detail
