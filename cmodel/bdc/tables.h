// tables.h: the SDK's own coefficient and lookup tables of the
// transcendental functions (family Q2: tpu_bdc_load_fp32_* and the
// dtype-generic tpu_bdc_load_fp_*_coeff(addr, dtype)), and the check that a
// kernel passed a loaded table to the functions that need one.
//
// Sophgo's table values are not public, so these are our own, derived from
// textbook series and one fit of ours (tables.cc gives each table's length,
// meaning and derivation). Each table lives in static memory (SFU/Taylor
// table region) at a per-chip offset; its loader copies it into local
// memory as a [1, NPU_NUM, 1, len] fp32 tensor in the aligned layout
// starting on NPU 0: the same `len` values in every NPU, so a per-lane
// polynomial evaluation (tpu_bdc_fp_taylor) or lookup reads them locally.
// The fp16 / bf16 tables of the dtype-generic loaders are [1, NPU_NUM, 1,
// len] tensors of their own dtype (values exact in it), shorter than the
// fp32 ones (tables.cc; docs/bdc-math.md).
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

enum class Table {
  exp_coeff, exp_table, log_coeff, erf_coeff, sin_coeff, cos_coeff, tan_coeff, arcsin_coeff,  // fp32
  exp_coeff_fp16, exp_coeff_bf16, log_coeff_fp16, log_coeff_bf16, erf_coeff_fp16, erf_coeff_bf16,
  sin_coeff_fp16, sin_coeff_bf16, cos_coeff_fp16, cos_coeff_bf16, arcsin_coeff_fp16, arcsin_coeff_bf16,
};
inline constexpr int table_count = 20;

// The function a table serves (tables of one function differ by dtype).
enum class TableFunc { exp, exp_table, log, erf, sin, cos, tan, arcsin };
const char *table_func_name(TableFunc func);  // "exp", ...

struct TableInfo {
  const char *what;    // "fp32 exp coefficients", for messages
  const char *loader;  // "tpu_bdc_load_fp32_exp_coeff" (fp16 / bf16: "tpu_bdc_load_fp_exp_coeff")
  const char *param;   // the loader's parameter: "coeff_addr" or "table_addr"
  std::span<const float> values;  // exact in `dtype`
  TableFunc func;
  data_type_t dtype;  // DT_FP32, DT_FP16 or DT_BFP16
};
const TableInfo &table_info(Table table);
// The table's image in local memory (one NPU's row): `values` in `dtype`.
std::span<const uint8_t> table_bytes(Table table);

// The table tpu_bdc_load_fp_<func>_coeff(addr, dtype) writes on `chip`, and
// that a dtype-generic call in `dtype` expects. bm1684x has no fp16 / bf16
// erf table (its static memory holds only the fp32 one): there the fp16 /
// bf16 erf loader writes the fp32 erf table. Fails for dtypes other than
// FP32, FP16, BF16 (FP8 / FP20 / TF32: unsupported on these chips).
Table fp_table(const ChipSpec &chip, TableFunc func, data_type_t dtype);

// dtype must be FP32, FP16 or BF16: FP8 / FP20 / TF32 are "unsupported on
// this chip", any other dtype an illegal command naming it.
void require_generic_float(const ChipSpec &chip, const char *role, data_type_t dtype);

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
// Remembers (Context::loaded_tables) which table was loaded at `addr`.
void load_table(Context &ctx, const char *api, Table table, local_addr_t addr);

// tpu_bdc_load_fp_<func>_coeff(coeff_addr, dtype): load_table of
// fp_table(chip, func, dtype).
void load_fp_table(Context &ctx, const char *api, TableFunc func, local_addr_t addr, data_type_t dtype);

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

// ---- tables of the dtype-generic functions (tpu_bdc_fp_exp & co.) ----
// A call in `dtype` that needs the `func` table at `addr` (through its
// parameter `param`) accepts any table of `func` there, identified by its
// contents in every NPU (so a table overwritten since it was loaded no
// longer counts):
//   - the one fp_table(chip, func, dtype) names: silently;
//   - the fp32 erf table for an fp16 / bf16 erf, erfc or gelu: silently
//     (public kernels load it with tpu_bdc_load_fp32_erf_coeff for every
//     dtype; bm1684x has no other);
//   - one of another float dtype: with a warning (stderr and the run's
//     warnings), once per address and run;
// and fails when `addr` holds no table of `func`, naming the parameter, the
// address and the loader to call (and what the address holds instead).
struct FpTable {
  TensorRef t;            // the table operand (placement checked)
  bool found;             // some table of `func` is there
  Table table;            // the one found, else the expected one
};
// Placement checks only (NPU 0, aligned, inside local memory).
FpTable find_fp_table(Context &ctx, const char *param, local_addr_t addr, TableFunc func, data_type_t dtype);
// The contents verdict, after the command's other checks passed.
void require_fp_table(Context &ctx, const char *api, const FpTable &found, const char *param, TableFunc func,
                      data_type_t dtype);

}  // namespace cmodel::bdc
