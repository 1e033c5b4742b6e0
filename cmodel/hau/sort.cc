// sort.cc: the HAU sort (sort.h).
#include "sort.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "cmodel/dtype.h"
#include "cmodel/error.h"

namespace cmodel::hau {
namespace {

void check(const SortCommand &c) {
  if (c.dtype != DT_FP32 && c.dtype != DT_INT32 && c.dtype != DT_UINT32)
    fail(ErrorKind::illegal_command, "dtype {}: the HAU sorts DT_FP32, DT_INT32 or DT_UINT32 values",
         dtype_name(c.dtype));
  if (c.rows < 1) fail(ErrorKind::illegal_command, "row_num = {}; at least one row is sorted", c.rows);
  if (c.len < 1) fail(ErrorKind::illegal_command, "len = {}; a row holds at least one value", c.len);
  if (c.k < 1 || c.k > c.len)
    fail(ErrorKind::illegal_command, "K = {}; it must be in [1, len = {}]", c.k, c.len);
}

// A sort key that orders like the value (-0 equal to +0); NaNs are ordered
// by the caller.
double key_of(uint32_t bits, data_type_t dtype) {
  if (dtype == DT_INT32) return double(int32_t(bits));
  if (dtype == DT_UINT32) return double(bits);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f == 0 ? 0.0 : double(f);
}

bool is_nan(uint32_t bits, data_type_t dtype) {
  return dtype == DT_FP32 && (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
}

// Order of positions 0..len-1 of `values` (stable).
std::vector<uint32_t> sorted_positions(const uint32_t *values, int len, bool descending, data_type_t dtype) {
  std::vector<uint32_t> order(static_cast<size_t>(len));
  std::iota(order.begin(), order.end(), 0u);
  auto less = [&](uint32_t a, uint32_t b) {
    const bool na = is_nan(values[a], dtype), nb = is_nan(values[b], dtype);
    if (na || nb) return !na && nb;  // NaN above everything, including +inf
    return key_of(values[a], dtype) < key_of(values[b], dtype);
  };
  if (descending) std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return less(b, a); });
  else std::stable_sort(order.begin(), order.end(), less);
  return order;
}

uint32_t *words(Context &ctx, const char *role, uint64_t addr, uint64_t count) {
  return reinterpret_cast<uint32_t *>(ctx.memory.system(role, addr, count * 4));
}

}  // namespace

void sort(Context &ctx, const char *api, const SortCommand &c) {
  check(c);
  const uint64_t in_count = uint64_t(c.rows) * uint64_t(c.len), out_count = uint64_t(c.rows) * uint64_t(c.k);
  // Every operand is checked before anything is written.
  const uint32_t *values = words(ctx, "input", c.values_in, in_count);
  const uint32_t *given = c.indices == Indices::given ? words(ctx, "input index", c.index_in, in_count) : nullptr;
  uint32_t *out = words(ctx, "output", c.values_out, out_count);
  uint32_t *out_index = c.indices != Indices::none ? words(ctx, "output index", c.index_out, out_count) : nullptr;
  // Sorted into buffers first: the output may overlap the input.
  std::vector<uint32_t> sorted(out_count), sorted_index(out_index ? out_count : 0);
  for (int r = 0; r < c.rows; ++r) {
    const uint64_t base = uint64_t(r) * uint64_t(c.len);
    const std::vector<uint32_t> order = sorted_positions(values + base, c.len, c.descending, c.dtype);
    for (int i = 0; i < c.k; ++i) {
      const uint64_t o = uint64_t(r) * uint64_t(c.k) + uint64_t(i);
      sorted[o] = values[base + order[size_t(i)]];
      if (out_index) sorted_index[o] = given ? given[base + order[size_t(i)]] : order[size_t(i)];
    }
  }
  std::memcpy(out, sorted.data(), out_count * 4);
  if (out_index) std::memcpy(out_index, sorted_index.data(), out_count * 4);
  // Cost (no published figure): a merge sort's comparisons, one per cycle,
  // plus reading and writing every word.
  const double per_row = double(c.len) * std::max(1.0, std::ceil(std::log2(double(c.len))));
  ctx.hazards.note_system("input", c.values_in, in_count * 4, false);
  if (given) ctx.hazards.note_system("input index", c.index_in, in_count * 4, false);
  ctx.hazards.note_system("output", c.values_out, out_count * 4, true);
  if (out_index) ctx.hazards.note_system("output index", c.index_out, out_count * 4, true);
  ctx.count(api);
  ctx.issue(Engine::hau, 100 + double(c.rows) * per_row + double(in_count + out_count) / 16, api, out_count);
}

}  // namespace cmodel::hau
