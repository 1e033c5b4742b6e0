// misc_api.cc: family U besides the debug prints: cache maintenance, the
// firmware's memcpy/memset, the layer dump and the memory checker.
//
// Cache maintenance has nothing to do on the emulator (there is no cache
// between the kernel and memory) beyond checking that the range is system
// memory. The memory checker keeps the ranges a kernel registers with
// tpu_mem_record_add for the run; a check fails, naming the access and the
// registered ranges, unless the access lies inside one of them. With no
// range registered the checks fall back to the emulator's own rule (inside
// one allocated buffer), so kernels that call them unconditionally still run.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/context.h"
#include "cmodel/dtype.h"
#include "cmodel/tensor.h"

namespace cmodel::impl {

namespace {

constexpr int kCacheLineBytes = 64;

void check_system_range(const char *role, uint64_t addr, uint64_t bytes) {
  if (bytes > 0) api::context().memory.system(role, addr, bytes);
}

std::string registered_ranges(const KernelState &k) {
  std::string out;
  for (const auto &[start, record] : k.mem_records) {
    if (!out.empty()) out += ", ";
    out += fmt::format("[{:#x}, {:#x}) tag {}", start, start + record.first, record.second);
  }
  return out;
}

// The checker's rule for the bytes [first, last] an access touches.
void check_access(const char *what, uint64_t first, uint64_t last, int is_read) {
  if (is_read != 0 && is_read != 1) fail(ErrorKind::illegal_command, "is_read = {}; expected 0 or 1", is_read);
  const char *kind = is_read ? "read" : "write";
  const KernelState &k = api::context().kernel;
  if (k.mem_records.empty()) {
    check_system_range(fmt::format("{} ({})", what, kind).c_str(), first, last - first + 1);
    return;
  }
  auto it = k.mem_records.upper_bound(first);
  if (it != k.mem_records.begin()) {
    --it;
    if (last - it->first < it->second.first) return;
  }
  fail(ErrorKind::memory_fault, "{} ({}) touches [{:#x}, {:#x}], which is not inside one registered range ({})",
       what, kind, first, last, registered_ranges(k));
}

}  // namespace

void tpu_invalidate_cache(system_addr_t address, unsigned long long size) {
  check_system_range("range", address, size);
}
void tpu_flush_cache(system_addr_t address, unsigned long long size) { check_system_range("range", address, size); }
int tpu_cache_line_size(void) { return kCacheLineBytes; }

void *tpu_kernel_memcpy(void *dst, const void *src, size_t n) {
  if (n > 0 && (!dst || !src))
    fail(ErrorKind::illegal_command, "{} pointer is NULL for a copy of {} bytes", dst ? "src" : "dst", n);
  return n ? std::memmove(dst, src, n) : dst;
}
void *tpu_kernel_memset(void *dst, int c, size_t n) {
  if (n > 0 && !dst) fail(ErrorKind::illegal_command, "dst pointer is NULL for a fill of {} bytes", n);
  return n ? std::memset(dst, c, n) : dst;
}

// The tensor's elements, continuous, as raw little-endian bytes.
void tpu_dump_global_layer_data(const char *filename, global_addr_t addr, const int *shape, int dims,
                                data_type_t dtype) {
  if (!filename || !*filename) fail(ErrorKind::illegal_command, "filename is empty");
  if (dims < 1 || dims > 8 || !shape) fail(ErrorKind::illegal_command, "dims = {}; expected 1 .. 8 dims", dims);
  uint64_t count = 1;
  for (int i = 0; i < dims; ++i) {
    if (shape[i] < 1) fail(ErrorKind::illegal_command, "shape[{}] = {}; every dim must be positive", i, shape[i]);
    count *= uint64_t(shape[i]);
  }
  if (dtype_bits(dtype) < 8) fail(ErrorKind::unsupported, "dtype {}: 4-bit dumps are not supported", dtype_name(dtype));
  const uint64_t bytes = count * uint64_t(dtype_bytes(dtype));
  const uint8_t *data = api::context().memory.system("src", addr, bytes);
  FILE *f = std::fopen(filename, "wb");
  if (!f) fail(ErrorKind::illegal_command, "cannot write '{}': {}", filename, std::strerror(errno));
  const bool written = std::fwrite(data, 1, bytes, f) == bytes;
  if (std::fclose(f) != 0 || !written) fail(ErrorKind::illegal_command, "writing '{}' failed", filename);
}

void tpu_mem_record_add(system_addr_t addr, u64 size, u64 info) {
  if (size == 0) fail(ErrorKind::illegal_command, "size = 0; a registered range holds at least one byte");
  check_system_range("range", addr, size);
  KernelState &k = api::context().kernel;
  auto next = k.mem_records.lower_bound(addr);
  const bool overlaps_next = next != k.mem_records.end() && next->first < addr + size;
  const bool overlaps_prev = next != k.mem_records.begin() && std::prev(next)->first + std::prev(next)->second.first > addr;
  if (overlaps_next || overlaps_prev)
    fail(ErrorKind::illegal_command, "[{:#x}, {:#x}) overlaps a registered range ({})", addr, addr + size,
         registered_ranges(k));
  k.mem_records[addr] = {size, info};
}

void tpu_mem_record_del(system_addr_t addr, u64 size) {
  KernelState &k = api::context().kernel;
  auto it = k.mem_records.find(addr);
  if (it == k.mem_records.end() || it->second.first != size)
    fail(ErrorKind::illegal_command, "[{:#x}, {:#x}) was not registered with tpu_mem_record_add (registered: {})",
         addr, addr + size, k.mem_records.empty() ? std::string("none") : registered_ranges(k));
  k.mem_records.erase(it);
}

void tpu_mem_check_range(system_addr_t addr, u64 size, int is_read) {
  if (size == 0) return;
  check_access("the range", addr, addr + size - 1, is_read);
}

void tpu_mem_check_tensor(system_addr_t addr, const dim4 *shape, const dim4 *stride, data_type_t dtype, int is_read) {
  const dim4 &s = api::shape_of(shape);
  check_shape("tensor", s, 65535);
  const dim4 st = stride ? *stride : continuous_stride(s);
  const int64_t esize = dtype_bytes(dtype);
  // The lowest and highest element offsets of a strided tensor.
  int64_t low = 0, high = 0;
  const int64_t extents[4][2] = {{s.n, st.n}, {s.c, st.c}, {s.h, st.h}, {s.w, st.w}};
  for (const auto &[count, step] : extents) (step < 0 ? low : high) += (count - 1) * step;
  if (int64_t(addr) + low * esize < 0) fail(ErrorKind::memory_fault, "the tensor reaches below address 0");
  check_access("the tensor", addr + uint64_t(low * esize), addr + uint64_t(high * esize + esize - 1), is_read);
}

void tpu_mem_check_matrix(system_addr_t addr, u32 rows, u32 cols, u32 row_stride, data_type_t dtype, int is_read) {
  if (rows == 0 || cols == 0) fail(ErrorKind::illegal_command, "a {} x {} matrix has no element", rows, cols);
  const uint64_t esize = uint64_t(dtype_bytes(dtype));
  const uint64_t last = (uint64_t(rows - 1) * row_stride + (cols - 1)) * esize + esize - 1;
  check_access("the matrix", addr, addr + last, is_read);
}

}  // namespace cmodel::impl
