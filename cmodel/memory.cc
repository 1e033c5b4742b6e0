#include "memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "error.h"

namespace cmodel {
namespace {

constexpr uint64_t allocation_alignment = 512;  // DMA_ALGN_BYTES
constexpr uint64_t page_bytes = 4096;
// Padding between NPUs' local memories (see Memory::npu_pitch): 8 KiB and
// two cache lines.
//  - Two lines modulo 4 KiB, for the host's L1: the same offset on 64 NPUs
//    then falls into 32 different pairs of sets (one line measured 2-3
//    times slower than two on 64-channel short-row commands, likely the
//    adjacent-line prefetcher fetching lines in pairs).
//  - 8 KiB more, for the host's L2 (set period 64-128 KiB): with 128 bytes
//    only, 64 NPUs' planes at one offset all land in the first 16 KiB of
//    the period and a command reading 8 KiB per NPU keeps a fraction of
//    its data in L2 (bdc_bench max-pool fp32: 0.41 of the baseline with
//    128 bytes, 0.49 with 2 KiB + 128, 0.57-0.61 with 8 KiB + 128).
constexpr uint64_t npu_padding = 8192 + 128;

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

uint64_t global_mem_size(const ChipSpec &chip) {
  // The vendor's cmodel reads CMODEL_GLOBAL_MEM_SIZE: honoured too, ours first.
  const char *name = "TPU_SDK_GLOBAL_MEM_SIZE";
  const char *text = std::getenv(name);
  if (!text || !*text) text = std::getenv(name = "CMODEL_GLOBAL_MEM_SIZE");
  if (!text || !*text) return chip.global_mem_bytes;
  char *end = nullptr;
  errno = 0;
  const unsigned long long count = std::strtoull(text, &end, 10);
  uint64_t unit = 1;
  if (*end == 'K' || *end == 'k') unit = 1ull << 10;
  if (*end == 'M' || *end == 'm') unit = 1ull << 20;
  if (*end == 'G' || *end == 'g') unit = 1ull << 30;
  if (unit != 1) ++end;
  // 32 GiB at most: twice the largest board, so a mistyped unit cannot reserve
  // absurd address space, and every address stays below BM_MEM_ADDR_NULL (2^36 - 1).
  constexpr uint64_t most = 32ull << 30;
  if (end == text || *end != '\0' || errno == ERANGE || *text == '-' || count == 0 || count > most / unit ||
      count * unit % allocation_alignment != 0)
    fail(ErrorKind::config,
         "{}=\"{}\" is not a size of global memory (a positive multiple of 512 bytes up to 32G, e.g. 12G, 8192M or "
         "4294967296)",
         name, text);
  return count * unit;
}

GlobalMemory::GlobalMemory(uint64_t start, uint64_t bytes) : start_(start), bytes_(bytes) {
  // MAP_NORESERVE: the whole size is address space only; pages appear on first touch.
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    fail(ErrorKind::config, "cannot reserve {} bytes of address space for global memory: {}", bytes,
         std::strerror(errno));
  host_ = static_cast<uint8_t *>(p);
}

GlobalMemory::~GlobalMemory() { munmap(host_, bytes_); }

uint64_t GlobalMemory::allocate(uint64_t bytes, uint64_t alignment) {
  if (bytes == 0 || bytes > bytes_) return 0;
  alignment = std::max(alignment, allocation_alignment);
  const uint64_t size = align_up(bytes, allocation_alignment);
  // First fit over the gaps between live allocations (kept sorted by address).
  uint64_t candidate = align_up(start_, alignment);
  for (const auto &[addr, len] : allocations_) {
    if (addr >= candidate && addr - candidate >= size) break;
    candidate = std::max(candidate, align_up(addr + len, alignment));
  }
  if (candidate < start_ || candidate - start_ > bytes_) return 0;
  if (candidate - start_ > bytes_ - size) return 0;
  allocations_.emplace(candidate, bytes);
  shadows_.insert_or_assign(candidate, RangeShadow(bytes));
  return candidate;
}

bool GlobalMemory::allocate_at(uint64_t addr, uint64_t bytes) {
  if (bytes == 0 || addr % allocation_alignment != 0 || !contains(addr) || bytes > bytes_ - (addr - start_))
    return false;
  const uint64_t end = align_up(addr - start_ + bytes, allocation_alignment) + start_;
  // Blocks occupy their 512-byte rounding, as allocate() keeps them.
  auto after = allocations_.lower_bound(addr);
  if (after != allocations_.end() && after->first < end) return false;
  if (after != allocations_.begin()) {
    auto before = std::prev(after);
    if (align_up(before->first + before->second, allocation_alignment) > addr) return false;
  }
  allocations_.emplace(addr, bytes);
  shadows_.insert_or_assign(addr, RangeShadow(bytes));
  return true;
}

bool GlobalMemory::release(uint64_t addr) {
  auto it = allocations_.find(addr);
  if (it == allocations_.end()) return false;
  // Hand whole pages back to the OS; a later allocation reads zeros there.
  const uint64_t first = align_up(addr - start_, page_bytes);
  const uint64_t last = (addr - start_ + it->second) / page_bytes * page_bytes;
  if (last > first) madvise(host_ + first, last - first, MADV_DONTNEED);
  allocations_.erase(it);
  shadows_.erase(addr);
  return true;
}

RangeShadow *GlobalMemory::shadow_of(uint64_t addr, uint64_t *start) {
  auto it = shadows_.upper_bound(addr);
  if (it == shadows_.begin()) return nullptr;
  --it;
  if (addr - it->first >= it->second.bytes()) return nullptr;
  *start = it->first;
  return &it->second;
}

uint64_t GlobalMemory::bytes_allocated() const {
  uint64_t total = 0;
  for (const auto &entry : allocations_) total += entry.second;
  return total;
}

uint8_t *GlobalMemory::span(uint64_t addr, uint64_t bytes) const {
  auto it = allocations_.upper_bound(addr);
  if (it != allocations_.begin()) {
    --it;
    const uint64_t offset = addr - it->first;
    if (offset <= it->second && bytes <= it->second - offset) return host_ + (addr - start_);
  }
  fail(ErrorKind::memory_fault, "global range [{:#x}, {:#x}) ({}) is not inside one allocated buffer{}", addr,
       addr + bytes, Bytes{bytes}, describe_neighbours(addr));
}

std::string GlobalMemory::describe_neighbours(uint64_t addr) const {
  if (allocations_.empty()) return "; nothing is allocated";
  auto after = allocations_.upper_bound(addr);
  std::string text;
  if (after != allocations_.begin()) {
    auto before = std::prev(after);
    text += fmt::format("; the buffer below is [{:#x}, {:#x})", before->first, before->first + before->second);
  }
  if (after != allocations_.end())
    text += fmt::format("; the buffer above starts at {:#x}", after->first);
  return text;
}

SharedMemory::SharedMemory(const ChipSpec &chip)
    : global(chip.global_mem_start, global_mem_size(chip)), l2(chip.l2_sram_bytes, 0), l2_shadow(chip.l2_sram_bytes) {}

Memory::Memory(const ChipSpec &chip, std::shared_ptr<SharedMemory> shared)
    : chip_(chip),
      npu_pitch_(uint64_t(chip.local_mem_bytes) + npu_padding),
      npu_shift_(std::has_single_bit(unsigned(chip.npu_num)) ? std::countr_zero(unsigned(chip.npu_num)) : -1),
      shared_(shared ? std::move(shared) : std::make_shared<SharedMemory>(chip)),
      local_(uint64_t(chip.npu_num) * npu_pitch_, poison_byte),
      static_(chip.static_mem_bytes, 0),
      local_shadow_(chip.npu_num, chip.local_mem_bytes) {}

void Memory::poison_local(bool fill) {
  local_shadow_.reset();
  if (fill) std::fill(local_.begin(), local_.end(), poison_byte);
}

RangeShadow *Memory::system_shadow(uint64_t addr, uint64_t *start) {
  if (is_l2(addr)) {
    *start = chip_.l2_sram_start;
    return &shared_->l2_shadow;
  }
  return shared_->global.shadow_of(addr, start);
}

void Memory::mark_system(uint64_t addr, uint64_t bytes) {
  uint64_t start = 0;
  if (RangeShadow *s = system_shadow(addr, &start)) s->mark(addr - start, bytes);
}

void Memory::unmark_system(uint64_t addr, uint64_t bytes) {
  uint64_t start = 0;
  if (RangeShadow *s = system_shadow(addr, &start)) s->unmark(addr - start, bytes);
}

int64_t Memory::first_unwritten_system(uint64_t addr, uint64_t bytes) {
  uint64_t start = 0;
  const RangeShadow *s = system_shadow(addr, &start);
  if (!s) return -1;
  const int64_t offset = s->first_unwritten(addr - start, bytes);
  return offset < 0 ? -1 : int64_t(start) + offset;
}

bool Memory::system_fully_written(uint64_t addr) {
  uint64_t start = 0;
  const RangeShadow *s = system_shadow(addr, &start);
  return !s || s->full();
}

void Memory::mark_system_region(uint64_t addr) {
  uint64_t start = 0;
  if (RangeShadow *s = system_shadow(addr, &start)) s->mark_all();
}

uint8_t *Memory::system(uint64_t addr, uint64_t bytes) {
  if (is_l2(addr)) {
    const uint64_t offset = addr - chip_.l2_sram_start;
    if (bytes > chip_.l2_sram_bytes - offset)
      fail(ErrorKind::memory_fault, "L2 SRAM range [{:#x}, {:#x}) runs past the end of L2 SRAM at {:#x}", addr,
           addr + bytes, chip_.l2_sram_start + chip_.l2_sram_bytes);
    return shared_->l2.data() + offset;
  }
  if (!shared_->global.contains(addr))
    fail(ErrorKind::memory_fault,
         "system address {:#x} is neither global memory [{:#x}, {:#x}) nor L2 SRAM [{:#x}, {:#x})", addr,
         chip_.global_mem_start, chip_.global_mem_start + shared_->global.size(), chip_.l2_sram_start,
         chip_.l2_sram_start + chip_.l2_sram_bytes);
  return shared_->global.span(addr, bytes);
}

uint8_t *Memory::system(const char *role, uint64_t addr, uint64_t bytes) {
  try {
    return system(addr, bytes);
  } catch (const Error &e) {
    throw Error(e.kind(), fmt::format("{}: {}", role, e.what()), e.rule());
  }
}

uint8_t *Memory::local(int npu, int64_t offset, uint64_t bytes) {
  if (npu < 0 || npu >= chip_.npu_num)
    fail(ErrorKind::memory_fault, "NPU {} does not exist (the chip has {})", npu, chip_.npu_num);
  if (offset < 0 || uint64_t(offset) > chip_.local_mem_bytes || bytes > chip_.local_mem_bytes - uint64_t(offset))
    fail(ErrorKind::memory_fault,
         "local range [{:#x}, {:#x}) of NPU {} is outside its local memory of {} (a local tensor must fit "
         "in its NPU; there is no wrap into the next)",
         offset, offset + int64_t(bytes), npu, Bytes{chip_.local_mem_bytes});
  return local_.data() + uint64_t(npu) * npu_pitch_ + offset;
}

uint8_t *Memory::static_mem(uint64_t offset, uint64_t bytes) {
  if (offset > static_.size() || bytes > static_.size() - offset)
    fail(ErrorKind::memory_fault, "static memory range [{:#x}, {:#x}) is outside its {}", offset,
         offset + bytes, Bytes{static_.size()});
  return static_.data() + offset;
}

}  // namespace cmodel
