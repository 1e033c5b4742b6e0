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
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "chip_spec.h"
#include "shadow.h"

namespace cmodel {

// Global memory bytes for `chip`: the size set_global_mem_size chose, else
// TPU_SDK_GLOBAL_MEM_SIZE (or the vendor's CMODEL_GLOBAL_MEM_SIZE) when set
// (a byte count, optionally with a K/M/G suffix meaning KiB/MiB/GiB), else
// the chip's board default; throws a config error naming a malformed value.
uint64_t global_mem_size(const ChipSpec &chip);
// The size global memory of every chip gets from now on (0: back to the
// environment or the board default); throws a config error unless it is a
// positive multiple of 512 bytes up to 32 GiB, `what` naming the setting.
void set_global_mem_size(uint64_t bytes, const char *what);
// The same check on its own.
void check_global_mem_size(uint64_t bytes, const char *what);

class GlobalMemory {
 public:
  GlobalMemory(uint64_t start, uint64_t bytes);
  ~GlobalMemory();
  GlobalMemory(const GlobalMemory &) = delete;
  GlobalMemory &operator=(const GlobalMemory &) = delete;

  // A device address aligned to `alignment` (a power of two, at least 512)
  // bytes, or 0 when no gap is large enough. The block occupies its size
  // rounded up to 512 bytes only: an alignment above 512 costs no padding
  // inside the block, only (possibly) a gap before it. First fit: the
  // lowest address where the block fits. O(log n) in the live allocations
  // (plus O(log n) for each lower gap that is long enough but cannot hold
  // the block at the alignment asked for).
  uint64_t allocate(uint64_t bytes, uint64_t alignment = 512);
  // The buffer [addr, addr + bytes) at exactly that address (512-byte
  // aligned, free, inside global memory); false otherwise. allocate() is
  // first fit from the start, so a fresh memory given the same sequence of
  // allocate/release calls hands out the same addresses.
  bool allocate_at(uint64_t addr, uint64_t bytes);
  // False when addr is not the start of a live allocation. O(log n).
  bool release(uint64_t addr);
  // A new size (a fresh, empty memory); throws as check_unused does.
  void resize(uint64_t bytes);
  // Throws a config error naming what is there when a buffer is allocated
  // or a host copy wrote outside every buffer.
  void check_unused() const;
  // Live allocations: device address -> bytes requested.
  const std::map<uint64_t, uint64_t> &allocations() const { return allocations_; }
  bool contains(uint64_t addr) const { return addr >= start_ && addr - start_ < bytes_; }
  // Host pointer to [addr, addr + bytes); throws unless inside one
  // allocation, naming the nearest buffers below and above.
  uint8_t *span(uint64_t addr, uint64_t bytes) const;
  // Host pointer to [addr, addr + bytes) anywhere inside global memory,
  // allocated or not (a host copy in "device-like" mode); throws when the
  // range leaves global memory.
  uint8_t *span_anywhere(uint64_t addr, uint64_t bytes);
  uint64_t start() const { return start_; }
  uint64_t size() const { return bytes_; }
  // Bytes requested by the live allocations.
  uint64_t bytes_allocated() const { return bytes_allocated_; }
  // The written bytes of the allocation holding addr (its start in
  // *start), or nullptr when addr is in none.
  RangeShadow *shadow_of(uint64_t addr, uint64_t *start);

 private:
  struct FreeGaps;  // memory.cc: the free ranges, for first fit in O(log n)

  std::string describe_neighbours(uint64_t addr) const;
  void reserve(uint64_t bytes);
  // Records the block [addr, addr + bytes) cut out of the free ranges.
  void add_allocation(uint64_t addr, uint64_t bytes);

  uint64_t start_;
  uint64_t bytes_;
  uint8_t *host_ = nullptr;
  uint64_t bytes_allocated_ = 0;
  // A host copy wrote outside every buffer (span_anywhere): the memory is
  // in use even with nothing allocated.
  bool written_outside_ = false;
  // Device address -> bytes requested. Accesses are checked against the
  // requested size; the allocator keeps each block's 512-byte rounding free.
  std::map<uint64_t, uint64_t> allocations_;
  // Everything not occupied by a block (its size rounded up to 512 bytes).
  std::unique_ptr<FreeGaps> gaps_;
  // Device address -> which bytes of that allocation were written. Hashed:
  // the ordered lookup is allocations_', so allocating and freeing pay one
  // tree walk less.
  std::unordered_map<uint64_t, RangeShadow> shadows_;
};

// What the cores of one chip share: global memory and L2 SRAM (each core
// has its own local and static memory, docs/cmodel.md "Several cores").
struct SharedMemory {
  explicit SharedMemory(const ChipSpec &chip);
  GlobalMemory global;
  std::vector<uint8_t> l2;
  RangeShadow l2_shadow;
};

class Memory {
 public:
  // Local memory is filled with this byte at start: a NaN in every float
  // format and -1 in every signed integer, so reading what was never
  // written shows up in results.
  static constexpr uint8_t poison_byte = 0xff;

  // A core's memories; `shared` is another core's SharedMemory (null: new
  // ones, for core 0).
  explicit Memory(const ChipSpec &chip, std::shared_ptr<SharedMemory> shared = nullptr);

  // System memory: L2 SRAM or global memory, by the address range.
  uint8_t *system(uint64_t addr, uint64_t bytes);
  // The same, a failure's message starting with `role` ("dst: ...").
  uint8_t *system(const char *role, uint64_t addr, uint64_t bytes);
  bool is_l2(uint64_t addr) const { return addr >= chip_.l2_sram_start && addr - chip_.l2_sram_start < chip_.l2_sram_bytes; }
  // Local memory of one NPU: [offset, offset + bytes) must lie inside it.
  uint8_t *local(int npu, int64_t offset, uint64_t bytes);
  // Host pointer to byte 0 of NPU 0; callers index past it only after local(),
  // NPU n's byte 0 lying npu_pitch() bytes after NPU n-1's.
  uint8_t *local_base() { return local_.data(); }
  // Host bytes from one NPU's local memory to the next: LOCAL_MEM_SIZE plus
  // some padding (memory.cc says how much and why). With NPUs exactly LOCAL_MEM_SIZE (a multiple of 4 KiB)
  // apart, the same offset on every NPU falls into one set of the host's L1
  // cache, and a command over 64 channels of short rows (each operand at one
  // offset on every NPU) evicts its own lines (bdc_bench, 64 x 16 fp32 adds:
  // 1.1 M commands/s without padding, 2.7 M/s with it). Kernels
  // never see the padding: they address local memory by (NPU, offset), and
  // a host pointer from tpu_local_mem_addr* is valid up to the end of its
  // NPU's memory only.
  uint64_t npu_pitch() const { return npu_pitch_; }
  // log2(NPU_NUM) when NPU_NUM is a power of two, else -1 (TensorRef::npu_shift).
  int npu_shift() const { return npu_shift_; }
  uint8_t *static_mem(uint64_t offset, uint64_t bytes);

  GlobalMemory &global() { return shared_->global; }
  const std::shared_ptr<SharedMemory> &shared() const { return shared_; }
  const ChipSpec &chip() const { return chip_; }

  // ---- which bytes were written (shadow.h) ----
  LocalShadow &local_shadow() { return local_shadow_; }
  // Local memory unwritten again, and with `fill` filled with poison_byte.
  void poison_local(bool fill);
  // System bytes [addr, addr + bytes) (inside one buffer or L2 SRAM, as
  // system() checked) are written / unwritten again.
  void mark_system(uint64_t addr, uint64_t bytes);
  void unmark_system(uint64_t addr, uint64_t bytes);
  // The address of the first unwritten byte of [addr, addr + bytes), or -1.
  int64_t first_unwritten_system(uint64_t addr, uint64_t bytes);
  // The buffer (or L2 SRAM) holding addr is written all through; true too
  // when addr is in neither (nothing to check there).
  bool system_fully_written(uint64_t addr);
  // A host pointer into the buffer (or L2 SRAM) holding addr was handed
  // out: the emulator cannot see what is written through it, so all of it
  // counts as written.
  void mark_system_region(uint64_t addr);

 private:
  const ChipSpec &chip_;
  uint64_t npu_pitch_;
  int npu_shift_;
  std::shared_ptr<SharedMemory> shared_;
  std::vector<uint8_t> local_;
  std::vector<uint8_t> static_;
  LocalShadow local_shadow_;
  // The shadow of the system region holding addr, its start in *start.
  RangeShadow *system_shadow(uint64_t addr, uint64_t *start);
};

}  // namespace cmodel
