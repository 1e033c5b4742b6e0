// tables.h: the SDK's own coefficient and lookup tables of the fp32
// transcendental functions (family Q2: tpu_bdc_load_fp32_*), and the check
// that a kernel passed a loaded table to the functions that need one.
//
// Sophgo's table values are not public, so these are our own, derived from
// textbook series and one fit of ours (tables.cc gives each table's length,
// meaning and derivation). Each table lives in static memory (SFU/Taylor
// table region) at a per-chip offset; its loader copies it into local
// memory as a [1, NPU_NUM, 1, len] fp32 tensor in the aligned layout
// starting on NPU 0: the same `len` values in every NPU, so a per-lane
// polynomial evaluation (tpu_bdc_fp_taylor) or lookup reads them locally.
//
// The emulator's transcendental functions compute in double (math.h); they
// do not evaluate these tables. They do check, on every call, that each
// table operand is where the kernel says and holds the bytes the matching
// loader wrote, in every NPU, as the hardware's results would silently be
// wrong otherwise.
#pragma once

#include <span>

#include "bdc.h"

namespace cmodel::bdc {

enum class Table { exp_coeff, exp_table, log_coeff, erf_coeff, sin_coeff, cos_coeff, tan_coeff, arcsin_coeff };
inline constexpr int table_count = 8;

struct TableInfo {
  const char *what;    // "fp32 exp coefficients", for messages
  const char *loader;  // "tpu_bdc_load_fp32_exp_coeff"
  const char *param;   // the loader's parameter: "coeff_addr" or "table_addr"
  std::span<const float> values;
};
const TableInfo &table_info(Table table);

// Byte offset of `table` in static memory. bm1684x follows the vendor's
// static-memory map (spec §1: EXP_TABLE @0, EXP_TAYLOR @1024, LOG_TAYLOR
// @1152, ERF_TAYLOR @1408, SIN @1728, COS @1856, ARCSIN @1984, TAN @2240);
// bm1688 the same sequence without the exp table (EXP_TAYLOR @0, ...), whose
// exp table this SDK keeps at 0x2000 (the vendor has none there; its
// location is ours).
uint32_t static_table_offset(const ChipSpec &chip, Table table);

// Writes every table into static memory at its offset. Idempotent; the
// loaders call it before copying, so static memory holds the tables
// whenever a kernel has loaded one.
void install_static_tables(Memory &memory);

// tpu_bdc_load_fp32_*: copies `table` from static memory to local address
// `addr` ([1, NPU_NUM, 1, len] fp32, aligned, NPU 0). Booked as a BDC copy.
void load_table(Context &ctx, const char *api, Table table, local_addr_t addr);

// For a function that takes `table` through its parameter `param` (e.g.
// "exp_coeff_addr"): the table as a local operand, after checking that it
// starts on NPU 0 and is aligned. Its contents are checked separately by
// require_table_contents, once the command's other checks passed.
TensorRef table_operand(Context &ctx, const char *param, local_addr_t addr, Table table);

// Fails unless every NPU's copy of `t` (made by table_operand) holds
// exactly the values the loader of `table` writes: "coeff_addr 0x... does
// not hold the fp32 exp coefficients; call
// tpu_bdc_load_fp32_exp_coeff(coeff_addr) first (...)".
void require_table_contents(const TensorRef &t, const char *param, Table table);

}  // namespace cmodel::bdc
