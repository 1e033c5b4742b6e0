// chip_spec.h: the figures of each emulated chip, in one plain struct.
//
// Nothing else in the SDK hard-codes a chip figure; everything asks the
// ChipSpec of the open emulator. Sources: shared/spec/tpu-kernel-api.md §1.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace cmodel {

// Classes of BDC commands that cost differently (bdc_costs.def).
enum class BdcCost {
#define BDC_COST(name, x, y) name,
#include "bdc_costs.def"
#undef BDC_COST
};
inline constexpr int bdc_cost_count = 0
#define BDC_COST(name, x, y) +1
#include "bdc_costs.def"
#undef BDC_COST
    ;

// GDMA transfer directions ("S" is system memory: DDR or L2 SRAM).
enum class Direction { S2L, L2S, S2S, L2L };
inline constexpr int direction_count = 4;
const char *direction_name(Direction d);

struct ChipSpec {
  const char *name;
  int npu_num;                  // lanes
  int eu_bytes;                 // bytes one lane's EU processes per cycle
  uint32_t local_mem_bytes;     // per NPU
  int local_mem_banks;          // per NPU
  uint64_t global_mem_start;    // system address of DDR
  uint64_t global_mem_bytes;    // emulated DDR size by default (memory.h: global_mem_size)
  uint64_t l2_sram_start;       // system address of L2 SRAM
  uint32_t l2_sram_bytes;
  uint32_t local_mem_bus_start; // what tpu_local_mem_get_start_addr() reports
  uint32_t static_mem_start;    // what tpu_static_mem_get_start_addr() reports
  uint32_t static_mem_bytes;
  int core_num;
  int ic_parallel_8bit;         // conv input channels consumed per pass for 8-bit data
  double tiu_mhz;
  double gdma_mhz;
  // GDMA bandwidth per direction in bytes per second, indexed by Direction.
  double gdma_bytes_per_s[direction_count];
  // The same while several cores of a multi-core run stream at once
  // (Timeline::set_cores_streaming).
  double gdma_shared_bytes_per_s[direction_count];
  // Fixed cost of one GDMA command (descriptor fetch, first beat), GDMA cycles.
  int gdma_latency_cycles;
  // Fixed cost of issuing one BDC command, TIU cycles.
  int bdc_issue_cycles;
  // Cycles per EU pass, indexed by BdcCost.
  const double *bdc_factors;
  int gdma_shape_limit;         // max extent of each of n, c, h, w
  int gdma_max_wstride_bytes;
  int sdma_max_wstride_bytes;
  int vsdma_port_num;           // virtual SDMA ports a kernel may name (0 .. n-1)

  uint32_t bank_bytes() const { return local_mem_bytes / local_mem_banks; }
  uint64_t local_mem_total() const { return uint64_t(npu_num) * local_mem_bytes; }
  double bdc_factor(BdcCost c) const { return bdc_factors[int(c)]; }
  // Input channels (conv) or products per lane (matrix) the cube takes per
  // pass for elements of `bits` bits (tier-3 spec §1.1); 32-bit data: 1.
  int ic_parallel(int bits) const { return bits == 32 ? 1 : ic_parallel_8bit * 8 / bits; }
};

// The chip called `name` ("bm1684x", "bm1688"), or nullptr.
const ChipSpec *find_chip(std::string_view name);
std::span<const ChipSpec> all_chips();

}  // namespace cmodel
