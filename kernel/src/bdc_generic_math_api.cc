// bdc_generic_math_api.cc: the dtype-generic transcendental functions of
// the current vendor header and their coefficient-table loaders (spec
// tpu-kernel-api-current.md §3.0; families Q1, Q2, R, Z), over
// cmodel/bdc/math (fp_math) and cmodel/bdc/tables (load_fp_table).
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run. docs/bdc-math.md has
// the per-function table (dtypes, tables, work buffers, accuracy).
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/bdc/math.h"
#include "cmodel/bdc/tables.h"

namespace cmodel::impl {

using bdc::FpTableBuffer;
using bdc::Math;
using bdc::TableFunc;
using bdc::WorkBuffer;

namespace {

// Entries of the table tpu_bdc_load_fp_<func>_coeff(addr, dtype) writes
// (tables.cc), which kernels size their reservation with.
int table_len(TableFunc func, data_type_t dtype) {
  const ChipSpec &chip = api::context().chip;
  bdc::require_generic_float(chip, "dtype", dtype);
  return int(bdc::table_info(bdc::fp_table(chip, func, dtype)).values.size());
}

void math(const char *api, Math op, float param, data_type_t dtype, local_addr_t dst, local_addr_t src,
          std::initializer_list<WorkBuffer> work, std::initializer_list<FpTableBuffer> tables, const dim4 *shape) {
  bdc::fp_math(api::context(), api, op, param, dtype, dst, src, work, tables, api::shape_of(shape));
}

}  // namespace

// ---- Z: table lengths -------------------------------------------------------------------------

int sfu_taylor_exp_len(data_type_t dtype) { return table_len(TableFunc::exp, dtype); }
int sfu_taylor_log_len(data_type_t dtype) { return table_len(TableFunc::log, dtype); }

// ---- Q2: loaders ---------------------------------------------------------------------------------

void tpu_bdc_load_fp_exp_coeff(local_addr_t coeff_addr, data_type_t dtype) {
  bdc::load_fp_table(api::context(), __func__, TableFunc::exp, coeff_addr, dtype);
}
void tpu_bdc_load_fp_erf_coeff(local_addr_t coeff_addr, data_type_t dtype) {
  bdc::load_fp_table(api::context(), __func__, TableFunc::erf, coeff_addr, dtype);
}
void tpu_bdc_load_fp_log_coeff(local_addr_t coeff_addr, data_type_t dtype) {
  bdc::load_fp_table(api::context(), __func__, TableFunc::log, coeff_addr, dtype);
}
void tpu_bdc_load_fp_sin_coeff(local_addr_t coeff_addr, data_type_t dtype) {
  bdc::load_fp_table(api::context(), __func__, TableFunc::sin, coeff_addr, dtype);
}
void tpu_bdc_load_fp_cos_coeff(local_addr_t coeff_addr, data_type_t dtype) {
  bdc::load_fp_table(api::context(), __func__, TableFunc::cos, coeff_addr, dtype);
}
void tpu_bdc_load_fp_arcsin_coeff(local_addr_t coeff_addr, data_type_t dtype) {
  bdc::load_fp_table(api::context(), __func__, TableFunc::arcsin, coeff_addr, dtype);
}

// ---- Q1 ------------------------------------------------------------------------------------------

#define EXP_LIKE(NAME, OP)                                                                                \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr, \
            local_addr_t coeff_addr, const dim4 *shape, data_type_t dtype) {                              \
    math(__func__, OP, 0, dtype, dst_addr, src_addr, {{"work0", work0_addr}, {"work1", work1_addr}},      \
         {{"coeff_addr", coeff_addr, TableFunc::exp}}, shape);                                           \
  }
EXP_LIKE(tpu_bdc_fp_exp, Math::exp)
EXP_LIKE(tpu_bdc_fp_expm1, Math::expm1)
EXP_LIKE(tpu_bdc_fp_exp_for_neg_arg, Math::exp_for_neg_arg)
EXP_LIKE(tpu_bdc_fp_sinh, Math::sinh)
EXP_LIKE(tpu_bdc_fp_cosh, Math::cosh)
EXP_LIKE(tpu_bdc_fp_tanh, Math::tanh)
#undef EXP_LIKE

#define ONE_WORK(NAME, OP, FUNC)                                                                          \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, local_addr_t coeff_addr, \
            const dim4 *shape, data_type_t dtype) {                                                       \
    math(__func__, OP, 0, dtype, dst_addr, src_addr, {{"work", work_addr}}, {{"coeff_addr", coeff_addr, FUNC}}, \
         shape);                                                                                          \
  }
ONE_WORK(tpu_bdc_fp_log, Math::log, TableFunc::log)
ONE_WORK(tpu_bdc_fp_arctanh, Math::arctanh, TableFunc::log)
ONE_WORK(tpu_bdc_fp_sin, Math::sin, TableFunc::sin)
ONE_WORK(tpu_bdc_fp_cos, Math::cos, TableFunc::cos)
ONE_WORK(tpu_bdc_fp_arcsin, Math::arcsin, TableFunc::arcsin)
ONE_WORK(tpu_bdc_fp_arccos, Math::arccos, TableFunc::arcsin)
#undef ONE_WORK

// ---- R -------------------------------------------------------------------------------------------

#define ERF_LIKE(NAME, OP)                                                                                  \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr,   \
            local_addr_t work2_addr, local_addr_t exp_coeff_addr, local_addr_t erf_coeff_addr, const dim4 *shape, \
            data_type_t dtype) {                                                                            \
    math(__func__, OP, 0, dtype, dst_addr, src_addr,                                                        \
         {{"work0", work0_addr}, {"work1", work1_addr}, {"work2", work2_addr}},                             \
         {{"exp_coeff_addr", exp_coeff_addr, TableFunc::exp}, {"erf_coeff_addr", erf_coeff_addr, TableFunc::erf}}, \
         shape);                                                                                            \
  }
ERF_LIKE(tpu_bdc_fp_erf, Math::erf)
ERF_LIKE(tpu_bdc_fp_erfc, Math::erfc)
#undef ERF_LIKE

void tpu_bdc_fp_gelu(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr,
                     local_addr_t work2_addr, local_addr_t work3_addr, local_addr_t exp_coeff_addr,
                     local_addr_t erf_coeff_addr, const dim4 *shape, data_type_t dtype) {
  math(__func__, Math::gelu, 0, dtype, dst_addr, src_addr,
       {{"work0", work0_addr}, {"work1", work1_addr}, {"work2", work2_addr}, {"work3", work3_addr}},
       {{"exp_coeff_addr", exp_coeff_addr, TableFunc::exp}, {"erf_coeff_addr", erf_coeff_addr, TableFunc::erf}},
       shape);
}

// table_addr (the fp32 forms' exp table) is unused by the generic forms:
// C's generic exp functions take no exp table; kernels pass NO_USE.
#define EXP_WITH_UNUSED_TABLE(NAME, OP)                                                                   \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr, \
            local_addr_t coeff_addr, local_addr_t table_addr, const dim4 *shape, data_type_t dtype) {     \
    (void)table_addr;                                                                                     \
    math(__func__, OP, 0, dtype, dst_addr, src_addr, {{"work0", work0_addr}, {"work1", work1_addr}},      \
         {{"coeff_addr", coeff_addr, TableFunc::exp}}, shape);                                           \
  }
EXP_WITH_UNUSED_TABLE(tpu_bdc_fp_sigmoid, Math::sigmoid)
EXP_WITH_UNUSED_TABLE(tpu_bdc_fp_silu, Math::silu)
EXP_WITH_UNUSED_TABLE(tpu_bdc_fp_gelu_fast, Math::gelu_fast)
EXP_WITH_UNUSED_TABLE(tpu_bdc_fp_gelu_fast2, Math::gelu_fast2)
#undef EXP_WITH_UNUSED_TABLE

void tpu_bdc_fp32_gelu_fast2(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr,
                             local_addr_t work1_addr, local_addr_t coeff_addr, local_addr_t table_addr,
                             const dim4 *shape) {
  (void)table_addr;
  math(__func__, Math::gelu_fast2, 0, DT_FP32, dst_addr, src_addr, {{"work0", work0_addr}, {"work1", work1_addr}},
       {{"coeff_addr", coeff_addr, TableFunc::exp}}, shape);
}

void tpu_bdc_bf16_gelu_fast2(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr,
                             local_addr_t work1_addr, local_addr_t work2_addr, local_addr_t coeff_addr,
                             local_addr_t table_addr, const dim4 *shape) {
  (void)table_addr;
  math(__func__, Math::gelu_fast2, 0, DT_BFP16, dst_addr, src_addr,
       {{"work0", work0_addr}, {"work1", work1_addr}, {"work2", work2_addr}},
       {{"coeff_addr", coeff_addr, TableFunc::exp}}, shape);
}

void tpu_bdc_bf16_sigmoid_fast(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr,
                               local_addr_t work1_addr, local_addr_t coeff_addr, local_addr_t table_addr,
                               const dim4 *shape) {
  (void)table_addr;
  math(__func__, Math::sigmoid, 0, DT_BFP16, dst_addr, src_addr, {{"work0", work0_addr}, {"work1", work1_addr}},
       {{"coeff_addr", coeff_addr, TableFunc::exp}}, shape);
}

void tpu_bdc_fp_elu(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr,
                    local_addr_t coeff_addr, local_addr_t table_addr, float alpha, const dim4 *shape,
                    data_type_t dtype) {
  (void)table_addr;
  math(__func__, Math::elu, alpha, dtype, dst_addr, src_addr, {{"work0", work0_addr}, {"work1", work1_addr}},
       {{"coeff_addr", coeff_addr, TableFunc::exp}}, shape);
}

void tpu_bdc_fp_softplus(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr,
                         local_addr_t work1_addr, local_addr_t exp_coeff_addr, local_addr_t log_coeff_addr,
                         const dim4 *shape, float beta, data_type_t dtype) {
  math(__func__, Math::softplus, beta, dtype, dst_addr, src_addr, {{"work0", work0_addr}, {"work1", work1_addr}},
       {{"exp_coeff_addr", exp_coeff_addr, TableFunc::exp}, {"log_coeff_addr", log_coeff_addr, TableFunc::log}},
       shape);
}

void tpu_bdc_fp_log_sigmoid(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr,
                            local_addr_t work1_addr, local_addr_t coeff_addr, local_addr_t ln_coeff_addr,
                            const dim4 *shape, data_type_t dtype) {
  math(__func__, Math::log_sigmoid, 0, dtype, dst_addr, src_addr, {{"work0", work0_addr}, {"work1", work1_addr}},
       {{"coeff_addr", coeff_addr, TableFunc::exp}, {"ln_coeff_addr", ln_coeff_addr, TableFunc::log}}, shape);
}

}  // namespace cmodel::impl
