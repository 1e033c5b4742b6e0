// memory.cc: device memory descriptors, allocation, copies, fills and
// mapping on the emulator's global memory.
//
// Allocations are 4 KiB aligned like the vendor's (programs and kernels may
// rely on page alignment); the emulator places each block at a 4 KiB
// boundary and charges only its size rounded up to 512 bytes. Copies may
// target any range inside global memory or L2 SRAM, allocated or not, as
// on the device; anything outside is BM_ERR_PARAM with nothing copied.
#include <cstring>
#include <vector>

#include "bmlib_internal.h"
#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace bmlib {
namespace {

constexpr uint64_t page_bytes = 4096;

bm_device_mem_t device_descriptor(uint64_t addr, unsigned int size) {
  bm_device_mem_t mem;
  std::memset(&mem, 0, sizeof mem);
  mem.u.device.device_addr = addr;
  mem.flags.u.mem_type = BM_MEM_TYPE_DEVICE;
  mem.size = size;
  return mem;
}

bm_status_t allocate(bm_handle_t handle, bm_device_mem_t *pmem, uint64_t size, const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  if (!pmem) {
    log_error(tag, "pmem is a null pointer");
    return BM_ERR_DEVNOTREADY;
  }
  if (size == 0) {
    log_error(tag, "cannot allocate 0 bytes");
    return BM_ERR_PARAM;
  }
  if (size > 0xffffffffull) {
    log_error(tag, "{} bytes do not fit a descriptor's 32-bit size", size);
    return BM_NOT_SUPPORTED;
  }
  const uint64_t addr = cmodel_global_alloc_aligned(size, page_bytes);
  if (!addr) {
    log_error(tag, "out of device memory for {} bytes: {}", size, cmodel_last_error());
    *pmem = device_descriptor(BM_MEM_ADDR_NULL, unsigned(size));
    return BM_ERR_NOMEM;
  }
  device->allocations[addr] = {addr, size};
  *pmem = device_descriptor(addr, unsigned(size));
  return BM_SUCCESS;
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

// `size` bytes at `offset` inside a descriptor of `mem.size` bytes.
bool fits(const bm_device_mem_t &mem, uint64_t offset, uint64_t size, const char *tag) {
  if (offset + size <= mem.size) return true;
  log_error(tag, "{} bytes at offset {} exceed the {}-byte device buffer at {:#x}", size, offset, mem.size,
            uint64_t(mem.u.device.device_addr));
  return false;
}

bm_status_t copy_to_device(bm_handle_t handle, bm_device_mem_t dst, const void *src, uint64_t size, uint64_t offset,
                           const char *tag) {
  Guard guard(lock());
  if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
  if (!fits(dst, offset, size, tag)) return BM_ERR_PARAM;
  return write_device(dst.u.device.device_addr + offset, src, size, tag);
}

bm_status_t copy_from_device(bm_handle_t handle, void *dst, bm_device_mem_t src, uint64_t size, uint64_t offset,
                             const char *tag) {
  Guard guard(lock());
  if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
  if (!fits(src, offset, size, tag)) return BM_ERR_PARAM;
  return read_device(dst, src.u.device.device_addr + offset, size, tag);
}

// Device to device through a host buffer, so overlapping ranges copy as if
// the source was read first.
bm_status_t copy_on_device(bm_handle_t handle, bm_device_mem_t dst, uint64_t dst_offset, bm_device_mem_t src,
                           uint64_t src_offset, uint64_t size, const char *tag) {
  Guard guard(lock());
  if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
  if (!fits(src, src_offset, size, tag) || !fits(dst, dst_offset, size, tag)) return BM_ERR_PARAM;
  std::vector<unsigned char> staging(size);
  if (const bm_status_t status = read_device(staging.data(), src.u.device.device_addr + src_offset, size, tag))
    return status;
  return write_device(dst.u.device.device_addr + dst_offset, staging.data(), size, tag);
}

// A host pointer to the whole range of `mem` in the emulator's global memory.
void *mapped_range(const bm_device_mem_t &mem, const char *tag) {
  const uint64_t addr = mem.u.device.device_addr;
  const uint64_t last = addr + (mem.size ? mem.size - 1 : 0);
  auto *first_byte = static_cast<unsigned char *>(tpu_global_mem_addr(addr));
  auto *last_byte = static_cast<unsigned char *>(tpu_global_mem_addr(last));
  if (first_byte && last_byte && uint64_t(last_byte - first_byte) == last - addr) return first_byte;
  log_error(tag, "[{:#x}, {:#x}] is not a range of global memory: {}", addr, last + 1, cmodel_last_error());
  return nullptr;
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

void warn_unless_type(const bm_mem_desc &mem, bm_mem_type_t type, const char *tag) {
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

void bm_mem_set_device_addr(struct bm_mem_desc *pmem, unsigned long long addr) {
  if (!pmem) return log_error(__func__, "pmem is a null pointer");
  if (addr % 4) log_warning(__func__, "address {:#x} is not a multiple of 4", addr);
  pmem->u.device.device_addr = addr;
}

unsigned int bm_mem_get_device_size(struct bm_mem_desc mem) {
  warn_unless_type(mem, BM_MEM_TYPE_DEVICE, __func__);
  return mem.size;
}

void bm_mem_set_device_size(struct bm_mem_desc *pmem, unsigned int size) {
  if (!pmem) return log_error(__func__, "pmem is a null pointer");
  if (size % 4) log_warning(__func__, "size {} is not a multiple of 4", size);
  pmem->size = size;
}

void bm_set_device_mem(bm_device_mem_t *pmem, unsigned int size, unsigned long long addr) {
  if (!pmem) return log_error(__func__, "pmem is a null pointer");
  pmem->u.device.device_addr = addr;
  pmem->flags.u.mem_type = BM_MEM_TYPE_DEVICE;
  pmem->size = size;
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
  if (heap_id_mask == 0) {
    log_error(__func__, "heap mask 0 selects no heap");
    return BM_ERR_DEVNOTREADY;  // what the vendor library returns
  }
  return allocate(handle, pmem, size, __func__);
}

void bm_free_device(bm_handle_t handle, bm_device_mem_t mem) {
  Guard guard(lock());
  Device *device = device_of(handle, __func__);
  if (!device) return;
  const uint64_t addr = mem.u.device.device_addr;
  const auto it = device->allocations.find(addr);
  if (it == device->allocations.end())
    return log_error(__func__, "{:#x} is not an allocated device buffer (freed already, or never allocated)", addr);
  cmodel_global_free(it->second.raw);
  device->allocations.erase(it);
}

// ---- copies and fills ------------------------------------------------------------

bm_status_t bm_memcpy_s2d(bm_handle_t handle, bm_device_mem_t dst, void *src) {
  return copy_to_device(handle, dst, src, dst.size, 0, __func__);
}
bm_status_t bm_memcpy_d2s(bm_handle_t handle, void *dst, bm_device_mem_t src) {
  return copy_from_device(handle, dst, src, src.size, 0, __func__);
}
bm_status_t bm_memcpy_s2d_partial(bm_handle_t handle, bm_device_mem_t dst, void *src, unsigned int size) {
  return copy_to_device(handle, dst, src, size, 0, __func__);
}
bm_status_t bm_memcpy_d2s_partial(bm_handle_t handle, void *dst, bm_device_mem_t src, unsigned int size) {
  return copy_from_device(handle, dst, src, size, 0, __func__);
}
bm_status_t bm_memcpy_s2d_partial_offset(bm_handle_t handle, bm_device_mem_t dst, void *src, unsigned int size,
                                         unsigned int offset) {
  return copy_to_device(handle, dst, src, size, offset, __func__);
}
bm_status_t bm_memcpy_d2s_partial_offset(bm_handle_t handle, void *dst, bm_device_mem_t src, unsigned int size,
                                         unsigned int offset) {
  return copy_from_device(handle, dst, src, size, offset, __func__);
}

bm_status_t bm_memcpy_d2d(bm_handle_t handle, bm_device_mem_t dst, int dst_offset, bm_device_mem_t src, int src_offset,
                          int len) {
  if (dst_offset < 0 || src_offset < 0 || len < 0) {
    log_error(__func__, "negative offset or length (dst_offset {}, src_offset {}, len {})", dst_offset, src_offset,
              len);
    return BM_ERR_PARAM;
  }
  return copy_on_device(handle, dst, uint64_t(dst_offset), src, uint64_t(src_offset), uint64_t(len) * 4, __func__);
}

bm_status_t bm_memcpy_d2d_byte(bm_handle_t handle, bm_device_mem_t dst, size_t dst_offset, bm_device_mem_t src,
                               size_t src_offset, size_t size) {
  return copy_on_device(handle, dst, dst_offset, src, src_offset, size, __func__);
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
  if (!fits(src, 0, uint64_t(count) * uint64_t(src_stride) * element, tag) ||
      !fits(dst, 0, uint64_t(count) * uint64_t(dst_stride) * element, tag))
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
  std::vector<unsigned char> fill(mem.size);
  for (size_t i = 0; i < fill.size(); ++i) fill[i] = static_cast<const unsigned char *>(value)[i % unsigned(mode)];
  return write_device(mem.u.device.device_addr, fill.data(), fill.size(), tag);
}

bm_status_t bm_memset_device(bm_handle_t handle, const int value, bm_device_mem_t mem) {
  int pattern = value;  // the 4 bytes of value, little-endian
  return bm_memset_device_ext(handle, &pattern, 4, mem);
}

// ---- mapping --------------------------------------------------------------------

bm_status_t bm_mem_mmap_device_mem(bm_handle_t handle, bm_device_mem_t *dmem, unsigned long long *vmem) {
  Guard guard(lock());
  if (!device_of(handle, __func__)) return BM_ERR_DEVNOTREADY;
  if (!dmem || !vmem) {
    log_error(__func__, "dmem and vmem must not be null");
    return BM_ERR_PARAM;
  }
  void *pointer = mapped_range(*dmem, __func__);
  if (!pointer) return BM_ERR_PARAM;
  *vmem = reinterpret_cast<unsigned long long>(pointer);
  return BM_SUCCESS;
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
