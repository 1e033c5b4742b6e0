// memory.cc: device memory descriptors, allocation, copies, fills and
// mapping on the emulator's global memory.
//
// Allocations are 4 KiB aligned like the vendor's (programs and kernels may
// rely on page alignment); the emulator places each block at a 4 KiB
// boundary and charges only its size rounded up to 512 bytes. Host copies
// must lie inside one allocated buffer or L2 SRAM (the emulator's strict
// default: a copy outside the buffers is BM_ERR_PARAM, the log naming the
// nearest buffers), or, in the "device-like" setting
// (TPU_SDK_UNALLOCATED_COPIES=allow, bm_emu_set_unallocated_copies), inside
// global memory anywhere, as on a board. Device-to-device copies and fills
// run inside the emulator (cmodel_global_copy / _fill): no host copy of the
// data.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "bmlib_internal.h"
#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace bmlib {
namespace {

constexpr uint64_t page_bytes = 4096;

// A zeroed descriptor of type DEVICE (bm_device_mem_t or bm_device_mem_u64_t).
template <typename Descriptor = bm_device_mem_t, typename Size = unsigned int>
Descriptor device_descriptor(uint64_t addr, Size size) {
  Descriptor mem;
  std::memset(&mem, 0, sizeof mem);
  mem.u.device.device_addr = addr;
  mem.flags.u.mem_type = BM_MEM_TYPE_DEVICE;
  mem.size = size;
  return mem;
}

// `size` bytes of global memory for `handle`'s device at *addr;
// BM_MEM_ADDR_NULL there when the memory is full.
bm_status_t allocate_at(bm_handle_t handle, uint64_t size, const char *tag, uint64_t *addr) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  if (size == 0) {
    log_error(tag, "cannot allocate 0 bytes");
    return BM_ERR_PARAM;
  }
  *addr = cmodel_global_alloc_aligned(size, page_bytes);
  if (!*addr) {
    log_error(tag, "out of device memory for {} bytes: {}", size, cmodel_last_error());
    *addr = BM_MEM_ADDR_NULL;
    return BM_ERR_NOMEM;
  }
  device->allocations[*addr] = {*addr, size};
  return BM_SUCCESS;
}

bm_status_t allocate(bm_handle_t handle, bm_device_mem_t *pmem, uint64_t size, const char *tag) {
  if (!pmem) {
    Guard guard(lock());
    if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
    log_error(tag, "pmem is a null pointer");
    return BM_ERR_DEVNOTREADY;
  }
  if (size > 0xffffffffull) {
    log_error(tag, "{} bytes do not fit a descriptor's 32-bit size", size);
    return BM_NOT_SUPPORTED;
  }
  uint64_t addr = 0;
  const bm_status_t status = allocate_at(handle, size, tag, &addr);
  if (status == BM_SUCCESS || status == BM_ERR_NOMEM) *pmem = device_descriptor(addr, unsigned(size));
  return status;
}

bm_status_t allocate_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem, uint64_t size, const char *tag) {
  if (!pmem) {
    Guard guard(lock());
    if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
    log_error(tag, "pmem is a null pointer");
    return BM_ERR_DEVNOTREADY;
  }
  uint64_t addr = 0;
  const bm_status_t status = allocate_at(handle, size, tag, &addr);
  if (status == BM_SUCCESS || status == BM_ERR_NOMEM)
    *pmem = device_descriptor<bm_device_mem_u64_t, uint64_t>(addr, size);
  return status;
}

bool heap_mask_selects_a_heap(int heap_id_mask, const char *tag) {
  if (heap_id_mask != 0) return true;
  log_error(tag, "heap mask 0 selects no heap");
  return false;
}

void free_at(bm_handle_t handle, uint64_t addr, const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return;
  const auto it = device->allocations.find(addr);
  if (it == device->allocations.end())
    return log_error(tag, "{:#x} is not an allocated device buffer (freed already, or never allocated)", addr);
  cmodel_global_free(it->second.raw);
  device->allocations.erase(it);
}

// The failure message of a copy the emulator refused, as BM_ERR_PARAM.
bm_status_t refused_copy(const char *tag) {
  log_error(tag, "{}", cmodel_last_error());
  return BM_ERR_PARAM;
}

bm_status_t write_device(uint64_t addr, const void *src, uint64_t bytes, const char *tag) {
  if (bytes == 0) return BM_SUCCESS;
  if (!src) {
    log_error(tag, "the host source pointer is null");
    return BM_ERR_PARAM;
  }
  return cmodel_global_write(addr, src, bytes) == 0 ? BM_SUCCESS : refused_copy(tag);
}

bm_status_t read_device(void *dst, uint64_t addr, uint64_t bytes, const char *tag) {
  if (bytes == 0) return BM_SUCCESS;
  if (!dst) {
    log_error(tag, "the host destination pointer is null");
    return BM_ERR_PARAM;
  }
  return cmodel_global_read(dst, addr, bytes) == 0 ? BM_SUCCESS : refused_copy(tag);
}

// A descriptor's device range, whatever the width of its size field.
struct Range {
  uint64_t addr;
  uint64_t size;
};
Range range_of(const bm_device_mem_t &mem) { return {mem.u.device.device_addr, mem.size}; }
Range range_of(const bm_device_mem_u64_t &mem) { return {mem.u.device.device_addr, mem.size}; }

// `size` bytes at `offset` inside `mem`.
bool fits(const Range &mem, uint64_t offset, uint64_t size, const char *tag) {
  if (offset <= mem.size && size <= mem.size - offset) return true;
  log_error(tag, "{} bytes at offset {} exceed the {}-byte device buffer at {:#x}", size, offset, mem.size, mem.addr);
  return false;
}

bm_status_t copy_to_device(bm_handle_t handle, Range dst, const void *src, uint64_t size, uint64_t offset,
                           const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  if (!fits(dst, offset, size, tag)) return BM_ERR_PARAM;
  const bm_status_t status = write_device(dst.addr + offset, src, size, tag);
  if (status == BM_SUCCESS) ++device->profile.copies_in;
  return status;
}

bm_status_t copy_from_device(bm_handle_t handle, void *dst, Range src, uint64_t size, uint64_t offset,
                             const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  if (!fits(src, offset, size, tag)) return BM_ERR_PARAM;
  const bm_status_t status = read_device(dst, src.addr + offset, size, tag);
  if (status == BM_SUCCESS) ++device->profile.copies_out;
  return status;
}

// Device to device inside the emulator (no host staging): overlapping
// ranges copy as if the source was read first.
bm_status_t copy_on_device(bm_handle_t handle, Range dst, uint64_t dst_offset, Range src, uint64_t src_offset,
                           uint64_t size, const char *tag) {
  Guard guard(lock());
  if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
  if (!fits(src, src_offset, size, tag) || !fits(dst, dst_offset, size, tag)) return BM_ERR_PARAM;
  if (size == 0) return BM_SUCCESS;
  return cmodel_global_copy(dst.addr + dst_offset, src.addr + src_offset, size) == 0 ? BM_SUCCESS
                                                                                     : refused_copy(tag);
}

// A host pointer to the whole range of `mem` in the emulator's global memory.
void *mapped_range(const Range &mem, const char *tag) {
  const uint64_t addr = mem.addr;
  const uint64_t last = addr + (mem.size ? mem.size - 1 : 0);
  auto *first_byte = static_cast<unsigned char *>(tpu_global_mem_addr(addr));
  auto *last_byte = static_cast<unsigned char *>(tpu_global_mem_addr(last));
  if (first_byte && last_byte && uint64_t(last_byte - first_byte) == last - addr) return first_byte;
  log_error(tag, "[{:#x}, {:#x}] is not a range of global memory: {}", addr, last + 1, cmodel_last_error());
  return nullptr;
}

bm_status_t map_device(bm_handle_t handle, std::optional<Range> dmem, unsigned long long *vmem, const char *tag) {
  Guard guard(lock());
  if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
  if (!dmem || !vmem) {
    log_error(tag, "dmem and vmem must not be null");
    return BM_ERR_PARAM;
  }
  void *pointer = mapped_range(*dmem, tag);
  if (!pointer) return BM_ERR_PARAM;
  *vmem = reinterpret_cast<unsigned long long>(pointer);
  return BM_SUCCESS;
}

// Cache maintenance has nothing to do here (the mapping is the memory);
// the arguments are still checked.
bm_status_t cache_noop(bm_handle_t handle, const bm_device_mem_t *dmem, const char *tag) {
  Guard guard(lock());
  if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
  if (!dmem) {
    log_error(tag, "dmem is a null pointer");
    return BM_ERR_PARAM;
  }
  return BM_SUCCESS;
}

// The descriptor setters of both widths: they warn, never fail, on values
// that are not multiples of 4, as the vendor's do.
template <typename Descriptor, typename Size>
void set_size(Descriptor *pmem, Size size, const char *tag) {
  if (!pmem) return log_error(tag, "pmem is a null pointer");
  if (size % 4) log_warning(tag, "size {} is not a multiple of 4", size);
  pmem->size = size;
}
template <typename Descriptor>
void set_address(Descriptor *pmem, uint64_t addr, const char *tag) {
  if (!pmem) return log_error(tag, "pmem is a null pointer");
  if (addr % 4) log_warning(tag, "address {:#x} is not a multiple of 4", addr);
  pmem->u.device.device_addr = addr;
}
template <typename Descriptor, typename Size>
void set_device(Descriptor *pmem, Size size, uint64_t addr, const char *tag) {
  if (!pmem) return log_error(tag, "pmem is a null pointer");
  pmem->u.device.device_addr = addr;
  pmem->flags.u.mem_type = BM_MEM_TYPE_DEVICE;
  pmem->size = size;
}

template <typename Descriptor>
void warn_unless_type(const Descriptor &mem, bm_mem_type_t type, const char *tag) {
  if (mem.flags.u.mem_type != type)
    log_warning(tag, "the descriptor has memory type {}, not {}", int(mem.flags.u.mem_type), int(type));
}

}  // namespace
}  // namespace bmlib

using namespace bmlib;

extern "C" {

// ---- descriptors -----------------------------------------------------------

bm_device_mem_t bm_mem_from_device(unsigned long long device_addr, unsigned int len) {
  return device_descriptor(device_addr, len);
}

unsigned long long bm_mem_get_device_addr(struct bm_mem_desc mem) {
  warn_unless_type(mem, BM_MEM_TYPE_DEVICE, __func__);
  return mem.u.device.device_addr;
}

void bm_mem_set_device_addr(struct bm_mem_desc *pmem, unsigned long long addr) { set_address(pmem, addr, __func__); }

unsigned int bm_mem_get_device_size(struct bm_mem_desc mem) {
  warn_unless_type(mem, BM_MEM_TYPE_DEVICE, __func__);
  return mem.size;
}

void bm_mem_set_device_size(struct bm_mem_desc *pmem, unsigned int size) { set_size(pmem, size, __func__); }

void bm_set_device_mem(bm_device_mem_t *pmem, unsigned int size, unsigned long long addr) {
  set_device(pmem, size, addr, __func__);
}

bm_mem_type_t bm_mem_get_type(struct bm_mem_desc mem) { return mem.flags.u.mem_type; }

bm_device_mem_t bm_mem_null(void) {
  bm_device_mem_t mem;
  std::memset(&mem, 0, sizeof mem);
  mem.flags.u.mem_type = BM_MEM_TYPE_INVALID;
  return mem;
}

bm_system_mem_t bm_mem_from_system(void *system_addr) {
  bm_system_mem_t mem;
  std::memset(&mem, 0, sizeof mem);
  mem.u.system.system_addr = system_addr;
  mem.flags.u.mem_type = BM_MEM_TYPE_SYSTEM;
  return mem;
}

void *bm_mem_get_system_addr(struct bm_mem_desc mem) {
  warn_unless_type(mem, BM_MEM_TYPE_SYSTEM, __func__);
  return mem.u.system.system_addr;
}

unsigned int bm_mem_get_size(struct bm_mem_desc mem) { return mem.size; }

bm_device_mem_u64_t bm_mem_from_device_u64(unsigned long long device_addr, unsigned long long len) {
  return device_descriptor<bm_device_mem_u64_t, uint64_t>(device_addr, len);
}

unsigned long long bm_mem_get_device_addr_u64(struct bm_mem_desc_u64 mem) {
  warn_unless_type(mem, BM_MEM_TYPE_DEVICE, __func__);
  return mem.u.device.device_addr;
}

void bm_mem_set_device_addr_u64(struct bm_mem_desc_u64 *pmem, unsigned long long addr) {
  set_address(pmem, addr, __func__);
}

unsigned long long bm_mem_get_device_size_u64(struct bm_mem_desc_u64 mem) {
  warn_unless_type(mem, BM_MEM_TYPE_DEVICE, __func__);
  return mem.size;
}

void bm_mem_set_device_size_u64(struct bm_mem_desc_u64 *pmem, unsigned long long size) {
  set_size(pmem, size, __func__);
}

void bm_set_device_mem_u64(bm_device_mem_u64_t *pmem, unsigned long long size, unsigned long long addr) {
  set_device(pmem, size, addr, __func__);
}

// ---- allocation --------------------------------------------------------------

bm_status_t bm_malloc_device_byte(bm_handle_t handle, bm_device_mem_t *pmem, unsigned int size) {
  return allocate(handle, pmem, size, __func__);
}

bm_status_t bm_malloc_device_dword(bm_handle_t handle, bm_device_mem_t *pmem, int count) {
  if (count < 0) {
    log_error(__func__, "count {} is negative", count);
    return BM_ERR_PARAM;
  }
  return allocate(handle, pmem, uint64_t(count) * 4, __func__);
}

bm_status_t bm_malloc_neuron_device(bm_handle_t handle, bm_device_mem_t *pmem, int n, int c, int h, int w) {
  if (n < 0 || c < 0 || h < 0 || w < 0) {
    log_error(__func__, "negative dimension in {}x{}x{}x{}", n, c, h, w);
    return BM_ERR_PARAM;
  }
  // Each factor is below 2^31: the product of four overflows 64 bits only
  // past 2^124, so check step by step against the 32-bit limit.
  uint64_t bytes = 4;
  for (int dim : {n, c, h, w}) {
    bytes *= uint64_t(dim);
    if (bytes > 0xffffffffull) {
      log_error(__func__, "{}x{}x{}x{} floats do not fit a descriptor's 32-bit size", n, c, h, w);
      return BM_NOT_SUPPORTED;
    }
  }
  return allocate(handle, pmem, bytes, __func__);
}

bm_status_t bm_malloc_device_byte_heap(bm_handle_t handle, bm_device_mem_t *pmem, int heap_id, unsigned int size) {
  (void)heap_id;  // one heap: any id is accepted
  return allocate(handle, pmem, size, __func__);
}

bm_status_t bm_malloc_device_byte_heap_mask(bm_handle_t handle, bm_device_mem_t *pmem, int heap_id_mask,
                                            unsigned int size) {
  // BM_ERR_DEVNOTREADY for mask 0: what the vendor library returns.
  if (!heap_mask_selects_a_heap(heap_id_mask, __func__)) return BM_ERR_DEVNOTREADY;
  return allocate(handle, pmem, size, __func__);
}

void bm_free_device(bm_handle_t handle, bm_device_mem_t mem) { free_at(handle, mem.u.device.device_addr, __func__); }

bm_status_t bm_malloc_device_byte_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem, unsigned long long size) {
  return allocate_u64(handle, pmem, size, __func__);
}

bm_status_t bm_malloc_device_byte_heap_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem, int heap_id,
                                           unsigned long long size) {
  (void)heap_id;  // one heap: any id is accepted
  return allocate_u64(handle, pmem, size, __func__);
}

bm_status_t bm_malloc_device_byte_heap_mask_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem, int heap_id_mask,
                                                unsigned long long size) {
  if (!heap_mask_selects_a_heap(heap_id_mask, __func__)) return BM_ERR_DEVNOTREADY;
  return allocate_u64(handle, pmem, size, __func__);
}

void bm_free_device_u64(bm_handle_t handle, bm_device_mem_u64_t mem) {
  free_at(handle, mem.u.device.device_addr, __func__);
}

bm_status_t bm_malloc_device_mem(bm_handle_t handle, unsigned long long *paddr, int heap_id, unsigned long long size) {
  (void)heap_id;  // one heap: any id is accepted
  bm_device_mem_u64_t mem;
  const bm_status_t status = allocate_u64(handle, paddr ? &mem : nullptr, size, __func__);
  if (paddr && (status == BM_SUCCESS || status == BM_ERR_NOMEM)) *paddr = mem.u.device.device_addr;
  return status;
}

bm_status_t bm_malloc_device_mem_mask(bm_handle_t handle, unsigned long long *paddr, int heap_id_mask,
                                      unsigned long long size) {
  if (!heap_mask_selects_a_heap(heap_id_mask, __func__)) return BM_ERR_DEVNOTREADY;
  bm_device_mem_u64_t mem;
  const bm_status_t status = allocate_u64(handle, paddr ? &mem : nullptr, size, __func__);
  if (paddr && (status == BM_SUCCESS || status == BM_ERR_NOMEM)) *paddr = mem.u.device.device_addr;
  return status;
}

void bm_free_device_mem(bm_handle_t ctx, unsigned long long paddr) { free_at(ctx, paddr, __func__); }

// ---- copies and fills ------------------------------------------------------------

bm_status_t bm_memcpy_s2d(bm_handle_t handle, bm_device_mem_t dst, void *src) {
  return copy_to_device(handle, range_of(dst), src, dst.size, 0, __func__);
}
bm_status_t bm_memcpy_d2s(bm_handle_t handle, void *dst, bm_device_mem_t src) {
  return copy_from_device(handle, dst, range_of(src), src.size, 0, __func__);
}
bm_status_t bm_memcpy_s2d_partial(bm_handle_t handle, bm_device_mem_t dst, void *src, unsigned int size) {
  return copy_to_device(handle, range_of(dst), src, size, 0, __func__);
}
bm_status_t bm_memcpy_d2s_partial(bm_handle_t handle, void *dst, bm_device_mem_t src, unsigned int size) {
  return copy_from_device(handle, dst, range_of(src), size, 0, __func__);
}
bm_status_t bm_memcpy_s2d_partial_offset(bm_handle_t handle, bm_device_mem_t dst, void *src, unsigned int size,
                                         unsigned int offset) {
  return copy_to_device(handle, range_of(dst), src, size, offset, __func__);
}
bm_status_t bm_memcpy_d2s_partial_offset(bm_handle_t handle, void *dst, bm_device_mem_t src, unsigned int size,
                                         unsigned int offset) {
  return copy_from_device(handle, dst, range_of(src), size, offset, __func__);
}

bm_status_t bm_memcpy_s2d_u64(bm_handle_t handle, bm_device_mem_u64_t dst, void *src) {
  return copy_to_device(handle, range_of(dst), src, dst.size, 0, __func__);
}
bm_status_t bm_memcpy_d2s_u64(bm_handle_t handle, void *dst, bm_device_mem_u64_t src) {
  return copy_from_device(handle, dst, range_of(src), src.size, 0, __func__);
}
bm_status_t bm_memcpy_s2d_partial_u64(bm_handle_t handle, bm_device_mem_u64_t dst, void *src, unsigned long long size) {
  return copy_to_device(handle, range_of(dst), src, size, 0, __func__);
}
bm_status_t bm_memcpy_d2s_partial_u64(bm_handle_t handle, void *dst, bm_device_mem_u64_t src, unsigned long long size) {
  return copy_from_device(handle, dst, range_of(src), size, 0, __func__);
}
bm_status_t bm_memcpy_s2d_partial_offset_u64(bm_handle_t handle, bm_device_mem_u64_t dst, void *src,
                                             unsigned long long size, unsigned long long offset) {
  return copy_to_device(handle, range_of(dst), src, size, offset, __func__);
}
bm_status_t bm_memcpy_d2s_partial_offset_u64(bm_handle_t handle, void *dst, bm_device_mem_u64_t src,
                                             unsigned long long size, unsigned long long offset) {
  return copy_from_device(handle, dst, range_of(src), size, offset, __func__);
}

bm_status_t bm_memcpy_d2d(bm_handle_t handle, bm_device_mem_t dst, int dst_offset, bm_device_mem_t src, int src_offset,
                          int len) {
  if (dst_offset < 0 || src_offset < 0 || len < 0) {
    log_error(__func__, "negative offset or length (dst_offset {}, src_offset {}, len {})", dst_offset, src_offset,
              len);
    return BM_ERR_PARAM;
  }
  return copy_on_device(handle, range_of(dst), uint64_t(dst_offset), range_of(src), uint64_t(src_offset),
                        uint64_t(len) * 4, __func__);
}

bm_status_t bm_memcpy_d2d_byte(bm_handle_t handle, bm_device_mem_t dst, size_t dst_offset, bm_device_mem_t src,
                               size_t src_offset, size_t size) {
  return copy_on_device(handle, range_of(dst), dst_offset, range_of(src), src_offset, size, __func__);
}

bm_status_t bm_memcpy_d2d_byte_u64(bm_handle_t handle, bm_device_mem_u64_t dst, size_t dst_offset,
                                   bm_device_mem_u64_t src, size_t src_offset, size_t size) {
  return copy_on_device(handle, range_of(dst), dst_offset, range_of(src), src_offset, size, __func__);
}

bm_status_t bm_memcpy_c2c(bm_handle_t src_handle, bm_handle_t dst_handle, bm_device_mem_t src, bm_device_mem_t dst,
                          bool force_dst_cdma) {
  (void)force_dst_cdma;  // which engine moves the bytes: nothing to choose here
  {
    Guard guard(lock());
    if (!device_of(dst_handle, __func__)) return BM_ERR_DEVNOTREADY;
  }
  return copy_on_device(src_handle, range_of(dst), 0, range_of(src), 0, src.size, __func__);
}

bm_status_t bm_memcpy_d2d_stride(bm_handle_t handle, bm_device_mem_t dst, int dst_stride, bm_device_mem_t src,
                                 int src_stride, int count, int format_size) {
  const char *tag = __func__;
  Guard guard(lock());
  if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
  const bool widening = dst_stride == 4 && src_stride == 1 && format_size == 1;
  if (src_stride < 1 || (dst_stride != 1 && !widening) || (format_size != 1 && format_size != 2 && format_size != 4) ||
      count < 0) {
    log_error(tag, "unsupported stride copy: dst_stride {}, src_stride {}, count {}, format_size {}", dst_stride,
              src_stride, count, format_size);
    return BM_ERR_PARAM;
  }
  const uint64_t element = uint64_t(format_size);
  if (!fits(range_of(src), 0, uint64_t(count) * uint64_t(src_stride) * element, tag) ||
      !fits(range_of(dst), 0, uint64_t(count) * uint64_t(dst_stride) * element, tag))
    return BM_ERR_PARAM;
  std::vector<unsigned char> in(uint64_t(count) * uint64_t(src_stride) * element);
  std::vector<unsigned char> out(uint64_t(count) * uint64_t(dst_stride) * element);
  if (const bm_status_t status = read_device(in.data(), src.u.device.device_addr, in.size(), tag)) return status;
  if (const bm_status_t status = read_device(out.data(), dst.u.device.device_addr, out.size(), tag)) return status;
  for (uint64_t i = 0; i < uint64_t(count); ++i)
    std::memcpy(&out[i * uint64_t(dst_stride) * element], &in[i * uint64_t(src_stride) * element], element);
  return write_device(dst.u.device.device_addr, out.data(), out.size(), tag);
}

bm_status_t bm_memset_device_ext(bm_handle_t handle, void *value, int mode, bm_device_mem_t mem) {
  const char *tag = __func__;
  Guard guard(lock());
  if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
  if (!value || mode < 1 || mode > 4) {
    log_error(tag, "the pattern must be 1 to 4 bytes at a valid pointer (mode {}, value {})", mode, value);
    return BM_ERR_PARAM;
  }
  if (mem.size % unsigned(mode) != 0) {
    log_error(tag, "a {}-byte buffer is not a whole number of {}-byte patterns", mem.size, mode);
    return BM_ERR_PARAM;
  }
  if (mem.size == 0) return BM_SUCCESS;
  // Filled inside the emulator: no host buffer of the memory's size.
  return cmodel_global_fill(mem.u.device.device_addr, value, uint64_t(mode), mem.size) == 0 ? BM_SUCCESS
                                                                                          : refused_copy(tag);
}

bm_status_t bm_memset_device(bm_handle_t handle, const int value, bm_device_mem_t mem) {
  int pattern = value;  // the 4 bytes of value, little-endian
  return bm_memset_device_ext(handle, &pattern, 4, mem);
}

// ---- mapping --------------------------------------------------------------------

bm_status_t bm_mem_mmap_device_mem(bm_handle_t handle, bm_device_mem_t *dmem, unsigned long long *vmem) {
  return map_device(handle, dmem ? std::optional(range_of(*dmem)) : std::nullopt, vmem, __func__);
}

bm_status_t bm_mem_mmap_device_mem_u64(bm_handle_t handle, bm_device_mem_u64_t *dmem, unsigned long long *vmem) {
  return map_device(handle, dmem ? std::optional(range_of(*dmem)) : std::nullopt, vmem, __func__);
}

bm_status_t bm_mem_unmap_device_mem(bm_handle_t handle, void *vmem, int size) {
  (void)vmem;
  (void)size;  // the mapping is the emulator's memory itself: nothing to undo
  Guard guard(lock());
  return device_of(handle, __func__) ? BM_SUCCESS : BM_ERR_DEVNOTREADY;
}

bm_status_t bm_mem_flush_device_mem(bm_handle_t handle, bm_device_mem_t *dmem) {
  return cache_noop(handle, dmem, __func__);
}
bm_status_t bm_mem_flush_partial_device_mem(bm_handle_t handle, bm_device_mem_t *dmem, unsigned int offset,
                                            unsigned int len) {
  (void)offset;
  (void)len;
  return cache_noop(handle, dmem, __func__);
}
bm_status_t bm_mem_invalidate_device_mem(bm_handle_t handle, bm_device_mem_t *dmem) {
  return cache_noop(handle, dmem, __func__);
}
bm_status_t bm_mem_invalidate_partial_device_mem(bm_handle_t handle, bm_device_mem_t *dmem, unsigned int offset,
                                                 unsigned int len) {
  (void)offset;
  (void)len;
  return cache_noop(handle, dmem, __func__);
}

}  // extern "C"
