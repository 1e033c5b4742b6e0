// local_image.h: the emulator's local memory as a test sees it, addressed
// by unified local addresses (npu * LOCAL_MEM_SIZE + offset).
//
// A host pointer from tpu_local_mem_addr / tpu_local_mem_addr_unified is
// valid up to the end of its NPU's local memory only: the emulator keeps a
// little padding between the NPUs (cmodel/memory.h, Memory::npu_pitch), so
// one NPU's pointer plus LOCAL_MEM_SIZE is not the next NPU's byte 0. Whole
// images are therefore copied NPU by NPU. Valid between cmodel_open and
// cmodel_close.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace local_image {

// The byte at unified local address `addr`; accesses through the pointer
// must stay inside that NPU.
inline uint8_t *at(uint64_t addr) { return static_cast<uint8_t *>(tpu_local_mem_addr_unified(local_addr_t(addr))); }

// All NPUs' local memories, NPU after NPU (index = unified local address).
inline std::vector<uint8_t> read() {
  const size_t npu_bytes = size_t(tpu_local_mem_size_per_npu());
  std::vector<uint8_t> image(size_t(tpu_npu_num()) * npu_bytes);
  for (int npu = 0; npu < tpu_npu_num(); ++npu)
    std::memcpy(image.data() + size_t(npu) * npu_bytes, tpu_local_mem_addr(npu, 0), npu_bytes);
  return image;
}

// Writes a whole image (as read() returns it) back.
inline void write(const std::vector<uint8_t> &image) {
  const size_t npu_bytes = size_t(tpu_local_mem_size_per_npu());
  for (int npu = 0; npu < tpu_npu_num(); ++npu)
    std::memcpy(tpu_local_mem_addr(npu, 0), image.data() + size_t(npu) * npu_bytes, npu_bytes);
}

}  // namespace local_image
