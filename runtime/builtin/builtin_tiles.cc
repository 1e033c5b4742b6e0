// builtin_tiles.cc: the element walk and operands of builtin_tiles.h.
#include "builtin/builtin_tiles.h"

#include <algorithm>

namespace tpu_runtime::detail {

void for_each_tile(int64_t count, int64_t region_bytes, const TileFn &tile) {
  const int64_t npu = tpu_npu_num();
  int64_t c = std::min<int64_t>(npu, count);
  while (count % c) --c;
  const int64_t w = count / c;
  const int64_t tile_w = std::min<int64_t>({w, region_bytes / 4, 65535});
  const dim4 global = {int(c * w), int(w), int(w), 1};
  for (int64_t at = 0; at < w; at += tile_w) {
    const dim4 shape = {1, int(c), 1, int(std::min(tile_w, w - at))};
    tile(shape, global, uint64_t(at) * 4);
  }
}

void for_each_region_tile(int64_t count, const RegionTileFn &tile) {
  const int64_t region = tpu_local_mem_size_per_npu() / RegionTile::kRegions;
  RegionTile t;
  for (int i = 0; i < RegionTile::kRegions; ++i) t.r[i] = local_addr_t(i * region);
  for_each_tile(count, region, [&](const dim4 &shape, const dim4 &global, uint64_t offset) {
    t.shape = shape;
    tile(t, global, offset);
  });
}

scalar_t int_scalar(int32_t v) {
  scalar_t s;
  s.s32 = v;
  return s;
}

variable_t tensor_var(local_addr_t addr) {
  variable_t v;
  v.type = TENSOR;
  v.context.addr = addr;
  return v;
}

variable_t scalar_var(int32_t value) {
  variable_t v;
  v.type = SCALAR;
  v.context.scalar = int_scalar(value);
  return v;
}

}  // namespace tpu_runtime::detail
