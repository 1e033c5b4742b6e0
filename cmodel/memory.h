// memory.h: the chip's memories and the one checked accessor to them.
//
// Global memory (DDR) is a lazily reserved address space: untouched pages
// cost nothing. Only bytes inside a live allocation may be accessed. L2
// SRAM, local memory (NPU_NUM x LOCAL_MEM_SIZE) and static memory are
// plain arrays. Every engine reaches memory through system() or local(),
// which throw a memory_fault naming the range when it is invalid.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chip_spec.h"

namespace cmodel {

class GlobalMemory {
 public:
  GlobalMemory(uint64_t start, uint64_t bytes);
  ~GlobalMemory();
  GlobalMemory(const GlobalMemory &) = delete;
  GlobalMemory &operator=(const GlobalMemory &) = delete;

  // A device address aligned to 512 bytes, or 0 when no gap is large enough.
  uint64_t allocate(uint64_t bytes);
  // The buffer [addr, addr + bytes) at exactly that address (512-byte
  // aligned, free, inside global memory); false otherwise. allocate() is
  // first fit from the start, so a fresh memory given the same sequence of
  // allocate/release calls hands out the same addresses.
  bool allocate_at(uint64_t addr, uint64_t bytes);
  // False when addr is not the start of a live allocation.
  bool release(uint64_t addr);
  // Live allocations: device address -> bytes requested.
  const std::map<uint64_t, uint64_t> &allocations() const { return allocations_; }
  bool contains(uint64_t addr) const { return addr >= start_ && addr - start_ < bytes_; }
  // Host pointer to [addr, addr + bytes); throws unless inside one allocation.
  uint8_t *span(uint64_t addr, uint64_t bytes) const;
  uint64_t start() const { return start_; }
  uint64_t bytes_allocated() const;

 private:
  std::string describe_neighbours(uint64_t addr) const;

  uint64_t start_;
  uint64_t bytes_;
  uint8_t *host_ = nullptr;
  // Device address -> bytes requested. Accesses are checked against the
  // requested size; the allocator keeps each block's 512-byte rounding free.
  std::map<uint64_t, uint64_t> allocations_;
};

class Memory {
 public:
  // Local memory is filled with this byte at start: a NaN in every float
  // format and -1 in every signed integer, so reading what was never
  // written shows up in results.
  static constexpr uint8_t poison_byte = 0xff;

  explicit Memory(const ChipSpec &chip);

  // System memory: L2 SRAM or global memory, by the address range.
  uint8_t *system(uint64_t addr, uint64_t bytes);
  // The same, a failure's message starting with `role` ("dst: ...").
  uint8_t *system(const char *role, uint64_t addr, uint64_t bytes);
  bool is_l2(uint64_t addr) const { return addr >= chip_.l2_sram_start && addr - chip_.l2_sram_start < chip_.l2_sram_bytes; }
  // Local memory of one NPU: [offset, offset + bytes) must lie inside it.
  uint8_t *local(int npu, int64_t offset, uint64_t bytes);
  // Host pointer to byte 0 of NPU 0; callers index past it only after local().
  uint8_t *local_base() { return local_.data(); }
  uint8_t *static_mem(uint64_t offset, uint64_t bytes);

  GlobalMemory &global() { return global_; }
  const ChipSpec &chip() const { return chip_; }

 private:
  const ChipSpec &chip_;
  GlobalMemory global_;
  std::vector<uint8_t> l2_;
  std::vector<uint8_t> local_;
  std::vector<uint8_t> static_;
};

}  // namespace cmodel
