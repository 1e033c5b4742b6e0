#include "chip_spec.h"

namespace cmodel {
namespace {

constexpr double bm1684x_bdc_factors[] = {
#define BDC_COST(name, x, y) x,
#include "bdc_costs.def"
#undef BDC_COST
};
constexpr double bm1688_bdc_factors[] = {
#define BDC_COST(name, x, y) y,
#include "bdc_costs.def"
#undef BDC_COST
};

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
constexpr double GB = 1e9;

// bm1684x: one core of 64 NPUs x 256 KiB. GDMA figures are PerfAI's
// theoretical bandwidths at a 1000 MHz GDMA clock; L2L is not published and
// is taken equal to S2L (both stay inside the chip's fabric).
// bm1688: per core 32 NPUs x 128 KiB; bandwidths are the tpu-mlir cmodel
// settings for a 64-bit DDR. Its L2 SRAM is not described publicly; the
// bm1684x window is assumed (documented in docs/cmodel.md).
// Static memory: bm1684x's sits right after its 16 MiB local-memory window
// (debugger map, 0x0900_0000); bm1688's decoder selects it with bit 23 of a
// kernel-visible (23-bit) local address, so it starts at 1 << 23. Neither
// start is below the 64 KiB size, so an address and a bare offset never
// collide. Virtual SDMA ports: the public sources give no count; eight is
// assumed for both chips.
constexpr ChipSpec chips[] = {
    {
        .name = "bm1684x",
        .npu_num = 64,
        .eu_bytes = 64,
        .local_mem_bytes = 1u << 18,
        .local_mem_banks = 16,
        .global_mem_start = 0x100000000ull,
        .global_mem_bytes = 12ull << 30,  // a 12 GiB board (SC7 class); TPU_SDK_GLOBAL_MEM_SIZE overrides
        .l2_sram_start = 0x10000000ull,
        .l2_sram_bytes = 0x200000,
        .local_mem_bus_start = 0x08000000,
        .static_mem_start = 0x09000000,
        .static_mem_bytes = 0x10000,
        .core_num = 1,
        .ic_parallel_8bit = 64,
        .tiu_mhz = 1000,
        .gdma_mhz = 1000,
        .gdma_bytes_per_s = {58 * GiB, 44 * GiB, 28 * GiB, 58 * GiB},
        // One core: no published figure for several streaming; emulated
        // extra cores (option "cores") keep the single-core bandwidth.
        .gdma_shared_bytes_per_s = {58 * GiB, 44 * GiB, 28 * GiB, 58 * GiB},
        .gdma_latency_cycles = 64,
        .bdc_issue_cycles = 16,
        .bdc_factors = bm1684x_bdc_factors,
        .gdma_shape_limit = 65535,
        .gdma_max_wstride_bytes = 128,
        .sdma_max_wstride_bytes = 64,
        .vsdma_port_num = 8,
    },
    {
        .name = "bm1688",
        .npu_num = 32,
        .eu_bytes = 16,
        .local_mem_bytes = 1u << 17,
        .local_mem_banks = 16,
        .global_mem_start = 0x100000000ull,
        .global_mem_bytes = 8ull << 30,  // an 8 GiB module (SE9 class); TPU_SDK_GLOBAL_MEM_SIZE overrides
        .l2_sram_start = 0x10000000ull,
        .l2_sram_bytes = 0x200000,
        .local_mem_bus_start = 0x25000000,
        .static_mem_start = 0x00800000,
        .static_mem_bytes = 0x10000,
        .core_num = 2,
        .ic_parallel_8bit = 32,
        .tiu_mhz = 900,
        .gdma_mhz = 750,
        .gdma_bytes_per_s = {24 * GB, 24 * GB, 12 * GB, 12 * GB},
        // The vendor's cycle calculator lowers S2L and L2S to 15 GB/s when
        // both cores stream (tpu-kernel-api.md §1, GDMA row).
        .gdma_shared_bytes_per_s = {15 * GB, 15 * GB, 12 * GB, 12 * GB},
        .gdma_latency_cycles = 64,
        .bdc_issue_cycles = 16,
        .bdc_factors = bm1688_bdc_factors,
        .gdma_shape_limit = 65535,
        .gdma_max_wstride_bytes = 128,
        .sdma_max_wstride_bytes = 64,
        .vsdma_port_num = 8,
    },
};

}  // namespace

const char *direction_name(Direction d) {
  switch (d) {
    case Direction::S2L: return "S2L";
    case Direction::L2S: return "L2S";
    case Direction::S2S: return "S2S";
    case Direction::L2L: return "L2L";
  }
  return "?";
}

const ChipSpec *find_chip(std::string_view name) {
  for (const ChipSpec &chip : chips)
    if (name == chip.name) return &chip;
  return nullptr;
}

std::span<const ChipSpec> all_chips() { return chips; }

}  // namespace cmodel
