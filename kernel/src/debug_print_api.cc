// debug_print_api.cc: family U debug prints of a local or system tensor.
//
// The tensor goes to stdout as text: a header line naming it, then one line
// per (n, c, h) row, "[n, c, h] v0 v1 ...", floats printed as %g of their
// value and integers as integers.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/context.h"
#include "cmodel/dtype.h"
#include "cmodel/numeric/dtypes.h"
#include "cmodel/tensor.h"

namespace cmodel::impl {

namespace {

template <typename V>
void print_value(V v) {
  if constexpr (std::is_floating_point_v<V>) std::printf(" %g", double(v));
  else std::printf(" %" PRId64, int64_t(v));
}

void print_rows(const char *api, const char *where, const TensorRef &t) {
  std::printf("%s: %s %s %s\n", api, where, describe(t.shape).c_str(), dtype_name(t.dtype));
  numeric::with_dtype(t.dtype, [&]<typename D>(D) {
    using S = typename D::Storage;
    for (int n = 0; n < t.shape.n; ++n)
      for (int c = 0; c < t.shape.c; ++c)
        for (int h = 0; h < t.shape.h; ++h) {
          std::printf("[%d, %d, %d]", n, c, h);
          for (int w = 0; w < t.shape.w; ++w) {
            S raw;
            std::memcpy(&raw, t.at(n, c, h, w), sizeof raw);
            print_value(D::load(raw));
          }
          std::printf("\n");
        }
  });
  // The kernel may crash or be stopped right after: the text must be out.
  std::fflush(stdout);
}

}  // namespace

void tpu_print_local_mem_data(local_addr_t local_offset, int start_idx, const dim4 *shape, const dim4 *stride,
                              data_type_t dtype) {
  const ChipSpec &chip = api::context().chip;
  if (start_idx < 0 || start_idx >= chip.npu_num)
    fail(ErrorKind::illegal_command, "start_idx = {}; NPUs are 0 .. {}", start_idx, chip.npu_num - 1);
  if (local_offset >= chip.local_mem_bytes)
    fail(ErrorKind::memory_fault, "local_offset {:#x} is past the local memory of an NPU ({})", local_offset,
         Bytes{chip.local_mem_bytes});
  const local_addr_t addr = local_addr_t(start_idx) * chip.local_mem_bytes + local_offset;
  const TensorRef t = local_tensor(api::context().memory, "src", addr, api::shape_of(shape), stride, dtype);
  print_rows(__func__, fmt::format("local {:#x} of NPU {}", local_offset, start_idx).c_str(), t);
}

void tpu_print_global_mem_data(global_addr_t addr, const dim4 *shape, const dim4 *stride, data_type_t dtype) {
  const TensorRef t = system_tensor(api::context().memory, "src", addr, api::shape_of(shape), stride, dtype);
  print_rows(__func__, fmt::format("system {:#x}", addr).c_str(), t);
}

}  // namespace cmodel::impl
