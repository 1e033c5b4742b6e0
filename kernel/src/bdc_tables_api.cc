// bdc_tables_api.cc: tpu-kernel family Q2, the loaders of the fp32
// transcendental tables (tpu_bdc_load_fp32_*), over cmodel/bdc/tables.
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/tables.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::Table;

extern "C" {

#define TPU_BDC_LOAD_TABLE(NAME, TABLE, PARAM)                                       \
  void NAME(local_addr_t PARAM) {                                                    \
    return api::run(__func__, TPU_CALLER(), TPU_ARGS(NAME, PARAM), [&, name = __func__] { \
      bdc::load_table(api::context(), name, TABLE, PARAM);                           \
    });                                                                              \
  }
TPU_BDC_LOAD_TABLE(tpu_bdc_load_fp32_exp_coeff, Table::exp_coeff, coeff_addr)
TPU_BDC_LOAD_TABLE(tpu_bdc_load_fp32_exp_table, Table::exp_table, table_addr)
TPU_BDC_LOAD_TABLE(tpu_bdc_load_fp32_log_coeff, Table::log_coeff, coeff_addr)
TPU_BDC_LOAD_TABLE(tpu_bdc_load_fp32_erf_coeff, Table::erf_coeff, coeff_addr)
TPU_BDC_LOAD_TABLE(tpu_bdc_load_fp32_sin_coeff, Table::sin_coeff, coeff_addr)
TPU_BDC_LOAD_TABLE(tpu_bdc_load_fp32_cos_coeff, Table::cos_coeff, coeff_addr)
TPU_BDC_LOAD_TABLE(tpu_bdc_load_fp32_tan_coeff, Table::tan_coeff, coeff_addr)
TPU_BDC_LOAD_TABLE(tpu_bdc_load_fp32_arcsin_coeff, Table::arcsin_coeff, coeff_addr)
#undef TPU_BDC_LOAD_TABLE

}  // extern "C"
