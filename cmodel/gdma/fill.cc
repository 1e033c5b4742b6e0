// fill.cc: GDMA constant fills.
#include <cstring>

#include "mover.h"

namespace cmodel::gdma {

void fill(Context &ctx, const char *api, Endpoint dst_end, uint32_t value, const dim4 &shape, data_type_t dtype) {
  const TensorRef dst = operand(ctx, "dst", dst_end, shape, dtype);
  // The scalar's low bytes hold the value in dtype (x86 is little-endian).
  uint8_t pattern[4];
  std::memcpy(pattern, &value, sizeof pattern);
  move_rows(dst, [&](int, int, int) { return static_cast<const uint8_t *>(pattern); }, 0);
  // A fill reads nothing; it is booked in the direction of its destination.
  book(ctx, api, dst.is_local() ? Direction::L2L : Direction::S2S, uint64_t(dst.elements()) * dst.esize, &dst, nullptr);
}

}  // namespace cmodel::gdma
