// bdc_math_api.cc: square roots, reciprocals and the fp32 transcendental
// functions (tpu-kernel families Q1, M: pow, R), over cmodel/bdc/math (see
// math.h for accuracy, special values, num_iter and the checks).
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/math.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::Math;
using bdc::Sfu;
using bdc::Table;

extern "C" {

// ---- rsqrt, sqrt (aligned layout), reciprocal (free strides) ---------------------------------

#define TPU_BDC_FP32_SFU(NAME, OP)                                                                 \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape) {                     \
    return api::run(__func__, TPU_CALLER(), TPU_ARGS(NAME, dst_addr, src_addr, shape), [&, name = __func__] { \
      bdc::fp_sfu(api::context(), name, OP, dst_addr, src_addr, api::shape_of(shape), nullptr, nullptr, \
                  DT_FP32, bdc::default_sfu_iterations);                                           \
    });                                                                                            \
  }
TPU_BDC_FP32_SFU(tpu_bdc_fp32_rsqrt, Sfu::rsqrt)
TPU_BDC_FP32_SFU(tpu_bdc_fp32_sqrt, Sfu::sqrt)
#undef TPU_BDC_FP32_SFU

#define TPU_BDC_FP32_TUNABLE_SFU(NAME, OP)                                                         \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, int num_iter) {       \
    return api::run(__func__, TPU_CALLER(),                                                        \
                    TPU_ARGS(NAME, dst_addr, src_addr, shape, num_iter),                           \
                    [&, name = __func__] {                                                         \
      bdc::fp_sfu(api::context(), name, OP, dst_addr, src_addr, api::shape_of(shape), nullptr, nullptr, \
                  DT_FP32, num_iter);                                                              \
    });                                                                                            \
  }
TPU_BDC_FP32_TUNABLE_SFU(tpu_bdc_fp32_tunable_rsqrt, Sfu::rsqrt)
TPU_BDC_FP32_TUNABLE_SFU(tpu_bdc_fp32_tunable_sqrt, Sfu::sqrt)
#undef TPU_BDC_FP32_TUNABLE_SFU

#define TPU_BDC_FP_SFU(NAME, OP)                                                                   \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t dtype) {  \
    return api::run(__func__, TPU_CALLER(), TPU_ARGS(NAME, dst_addr, src_addr, shape, dtype), [&, name = __func__] { \
      bdc::fp_sfu(api::context(), name, OP, dst_addr, src_addr, api::shape_of(shape), nullptr, nullptr, \
                  dtype, bdc::default_sfu_iterations);                                             \
    });                                                                                            \
  }
TPU_BDC_FP_SFU(tpu_bdc_fp_rsqrt, Sfu::rsqrt)
TPU_BDC_FP_SFU(tpu_bdc_fp_sqrt, Sfu::sqrt)
#undef TPU_BDC_FP_SFU

#define TPU_BDC_FP_TUNABLE_SFU(NAME, OP)                                                           \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, data_type_t dtype,    \
            int num_iter) {                                                                        \
    return api::run(__func__, TPU_CALLER(),                                                        \
                    TPU_ARGS(NAME, dst_addr, src_addr, shape, dtype, num_iter),                    \
                    [&, name = __func__] {                                                         \
      bdc::fp_sfu(api::context(), name, OP, dst_addr, src_addr, api::shape_of(shape), nullptr, nullptr, \
                  dtype, num_iter);                                                                \
    });                                                                                            \
  }
TPU_BDC_FP_TUNABLE_SFU(tpu_bdc_fp_tunable_rsqrt, Sfu::rsqrt)
TPU_BDC_FP_TUNABLE_SFU(tpu_bdc_fp_tunable_sqrt, Sfu::sqrt)
#undef TPU_BDC_FP_TUNABLE_SFU

void tpu_bdc_fp32_reciprocal(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape,
                             const dim4 *dst_stride, const dim4 *src_stride) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_reciprocal, dst_addr, src_addr, shape, dst_stride, src_stride),
                  [&, name = __func__] {
    bdc::fp_sfu(api::context(), name, Sfu::reciprocal, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride,
                DT_FP32, bdc::default_sfu_iterations);
  });
}

void tpu_bdc_fp32_tunable_reciprocal(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape,
                                     const dim4 *dst_stride, const dim4 *src_stride, int num_iter) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_tunable_reciprocal, dst_addr, src_addr, shape, dst_stride, src_stride,
                           num_iter),
                  [&, name = __func__] {
    bdc::fp_sfu(api::context(), name, Sfu::reciprocal, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride,
                DT_FP32, num_iter);
  });
}

void tpu_bdc_fp_reciprocal(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape, const dim4 *dst_stride,
                           const dim4 *src_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_reciprocal, dst_addr, src_addr, shape, dst_stride, src_stride, dtype),
                  [&, name = __func__] {
    bdc::fp_sfu(api::context(), name, Sfu::reciprocal, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride,
                dtype, bdc::default_sfu_iterations);
  });
}

void tpu_bdc_fp_tunable_reciprocal(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape,
                                   const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int num_iter) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp_tunable_reciprocal, dst_addr, src_addr, shape, dst_stride, src_stride, dtype,
                           num_iter),
                  [&, name = __func__] {
    bdc::fp_sfu(api::context(), name, Sfu::reciprocal, dst_addr, src_addr, api::shape_of(shape), dst_stride, src_stride,
                dtype, num_iter);
  });
}

// ---- exp-based: (dst, src, work0, work1, coeff = exp coefficients, table = exp table) --------

#define TPU_BDC_FP32_EXP_FAMILY(NAME, OP)                                                                      \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr,   \
            local_addr_t coeff_addr, local_addr_t table_addr, const dim4 *shape) {                            \
    return api::run(__func__, TPU_CALLER(),                                                                    \
                    TPU_ARGS(NAME, dst_addr, src_addr, work0_addr, work1_addr, coeff_addr, table_addr, shape), \
                    [&, name = __func__] {                                                                     \
      bdc::fp32_math(api::context(), name, OP, 0.0f, dst_addr, src_addr,                                     \
                     {{"work0", work0_addr}, {"work1", work1_addr}},                                          \
                     {{"coeff_addr", coeff_addr, Table::exp_coeff}, {"table_addr", table_addr, Table::exp_table}}, \
                     api::shape_of(shape));                                                                        \
    });                                                                                                       \
  }
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_exp, Math::exp)
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_expm1, Math::expm1)
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_sigmoid, Math::sigmoid)
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_silu, Math::silu)
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_tanh, Math::tanh)
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_gelu_fast, Math::gelu_fast)
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_mish, Math::mish)
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_sinh, Math::sinh)
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_cosh, Math::cosh)
TPU_BDC_FP32_EXP_FAMILY(tpu_bdc_fp32_selu, Math::selu)
#undef TPU_BDC_FP32_EXP_FAMILY

#define TPU_BDC_FP32_EXP_FAMILY_PARAM(NAME, OP, PARAM)                                                         \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr,   \
            local_addr_t coeff_addr, local_addr_t table_addr, float PARAM, const dim4 *shape) {               \
    return api::run(__func__, TPU_CALLER(),                                                                           \
                    TPU_ARGS(NAME, dst_addr, src_addr, work0_addr, work1_addr, coeff_addr, table_addr, PARAM, shape), \
                    [&, name = __func__] {                                                                            \
      bdc::fp32_math(api::context(), name, OP, PARAM, dst_addr, src_addr,                                    \
                     {{"work0", work0_addr}, {"work1", work1_addr}},                                          \
                     {{"coeff_addr", coeff_addr, Table::exp_coeff}, {"table_addr", table_addr, Table::exp_table}}, \
                     api::shape_of(shape));                                                                        \
    });                                                                                                       \
  }
TPU_BDC_FP32_EXP_FAMILY_PARAM(tpu_bdc_fp32_elu, Math::elu, alpha)
TPU_BDC_FP32_EXP_FAMILY_PARAM(tpu_bdc_fp32_swish, Math::swish, beta)
#undef TPU_BDC_FP32_EXP_FAMILY_PARAM

void tpu_bdc_fp32_log_sigmoid(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr,
                              local_addr_t work1_addr, local_addr_t coeff_addr, local_addr_t table_addr,
                              local_addr_t ln_coeff_addr, const dim4 *shape) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_log_sigmoid, dst_addr, src_addr, work0_addr, work1_addr, coeff_addr,
                           table_addr, ln_coeff_addr, shape),
                  [&, name = __func__] {
    bdc::fp32_math(api::context(), name, Math::log_sigmoid, 0.0f, dst_addr, src_addr,
                   {{"work0", work0_addr}, {"work1", work1_addr}},
                   {{"coeff_addr", coeff_addr, Table::exp_coeff},
                    {"table_addr", table_addr, Table::exp_table},
                    {"ln_coeff_addr", ln_coeff_addr, Table::log_coeff}},
                   api::shape_of(shape));
  });
}

// ---- trigonometric and inverse hyperbolic: (dst, src, work, coeff) -----------------------------
// sin: sin coefficients; cos: cos; tan, cot: tan; arcsin, arccos: arcsin;
// arcsinh, arccosh, arctanh (built on log): log coefficients.

#define TPU_BDC_FP32_ONE_TABLE(NAME, OP, TABLE)                                                                  \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, local_addr_t coeff_addr,     \
            const dim4 *shape) {                                                                               \
    return api::run(__func__, TPU_CALLER(),                                                                    \
                    TPU_ARGS(NAME, dst_addr, src_addr, work_addr, coeff_addr, shape),                          \
                    [&, name = __func__] {                                                                     \
      bdc::fp32_math(api::context(), name, OP, 0.0f, dst_addr, src_addr, {{"work", work_addr}},               \
                     {{"coeff_addr", coeff_addr, TABLE}}, api::shape_of(shape));                              \
    });                                                                                                        \
  }
TPU_BDC_FP32_ONE_TABLE(tpu_bdc_fp32_sin, Math::sin, Table::sin_coeff)
TPU_BDC_FP32_ONE_TABLE(tpu_bdc_fp32_cos, Math::cos, Table::cos_coeff)
TPU_BDC_FP32_ONE_TABLE(tpu_bdc_fp32_tan, Math::tan, Table::tan_coeff)
TPU_BDC_FP32_ONE_TABLE(tpu_bdc_fp32_cot, Math::cot, Table::tan_coeff)
TPU_BDC_FP32_ONE_TABLE(tpu_bdc_fp32_arcsin, Math::arcsin, Table::arcsin_coeff)
TPU_BDC_FP32_ONE_TABLE(tpu_bdc_fp32_arccos, Math::arccos, Table::arcsin_coeff)
TPU_BDC_FP32_ONE_TABLE(tpu_bdc_fp32_arcsinh, Math::arcsinh, Table::log_coeff)
TPU_BDC_FP32_ONE_TABLE(tpu_bdc_fp32_arccosh, Math::arccosh, Table::log_coeff)
TPU_BDC_FP32_ONE_TABLE(tpu_bdc_fp32_arctanh, Math::arctanh, Table::log_coeff)
#undef TPU_BDC_FP32_ONE_TABLE

// ---- compensated reciprocal: (dst, src, work0..2), src with free strides ------------------------

void tpu_bdc_fp32_compensate_reciprocal(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr,
                                        local_addr_t work1_addr, local_addr_t work2_addr, const dim4 *shape,
                                        const dim4 *src_stride, int num_comp) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_compensate_reciprocal, dst_addr, src_addr, work0_addr, work1_addr,
                           work2_addr, shape, src_stride, num_comp),
                  [&, name = __func__] {
    bdc::fp32_compensate_reciprocal(api::context(), name, dst_addr, src_addr,
                                    {{"work0", work0_addr}, {"work1", work1_addr}, {"work2", work2_addr}},
                                    api::shape_of(shape), src_stride, bdc::default_sfu_iterations, num_comp);
  });
}

void tpu_bdc_fp32_tunable_compensate_reciprocal(local_addr_t dst_addr, local_addr_t src_addr,
                                                local_addr_t work0_addr, local_addr_t work1_addr,
                                                local_addr_t work2_addr, const dim4 *shape, const dim4 *src_stride,
                                                int num_iter, int num_comp) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_tunable_compensate_reciprocal, dst_addr, src_addr, work0_addr, work1_addr,
                           work2_addr, shape, src_stride, num_iter, num_comp),
                  [&, name = __func__] {
    bdc::fp32_compensate_reciprocal(api::context(), name, dst_addr, src_addr,
                                    {{"work0", work0_addr}, {"work1", work1_addr}, {"work2", work2_addr}},
                                    api::shape_of(shape), src_stride, num_iter, num_comp);
  });
}

// ---- log-based: (dst, src, work, coeff = log coefficients) -------------------------------------

#define TPU_BDC_FP32_LOG_FAMILY(NAME, OP)                                                                       \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, local_addr_t coeff_addr,     \
            const dim4 *shape) {                                                                               \
    return api::run(__func__, TPU_CALLER(),                                                                    \
                    TPU_ARGS(NAME, dst_addr, src_addr, work_addr, coeff_addr, shape),                          \
                    [&, name = __func__] {                                                                     \
      bdc::fp32_math(api::context(), name, OP, 0.0f, dst_addr, src_addr, {{"work", work_addr}},               \
                     {{"coeff_addr", coeff_addr, Table::log_coeff}}, api::shape_of(shape));                         \
    });                                                                                                        \
  }
TPU_BDC_FP32_LOG_FAMILY(tpu_bdc_fp32_log, Math::log)
TPU_BDC_FP32_LOG_FAMILY(tpu_bdc_fp32_log1p, Math::log1p)
#undef TPU_BDC_FP32_LOG_FAMILY

void tpu_bdc_fp32_logx(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, local_addr_t coeff_addr,
                       const dim4 *shape, float x) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_logx, dst_addr, src_addr, work_addr, coeff_addr, shape, x),
                  [&, name = __func__] {
    bdc::fp32_math(api::context(), name, Math::logx, x, dst_addr, src_addr, {{"work", work_addr}},
                   {{"coeff_addr", coeff_addr, Table::log_coeff}}, api::shape_of(shape));
  });
}

// ---- erf-based: (dst, src, work0..2 [work3], exp coeff, erf coeff, exp table) ------------------

#define TPU_BDC_FP32_ERF_FAMILY(NAME, OP)                                                                      \
  void NAME(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr,   \
            local_addr_t work2_addr, local_addr_t exp_coeff_addr, local_addr_t erf_coeff_addr,                \
            local_addr_t exp_table_addr, const dim4 *shape) {                                                 \
    return api::run(__func__, TPU_CALLER(),                                                                   \
                    TPU_ARGS(NAME, dst_addr, src_addr, work0_addr, work1_addr, work2_addr, exp_coeff_addr,    \
                             erf_coeff_addr, exp_table_addr, shape),                                          \
                    [&, name = __func__] {                                                                    \
      bdc::fp32_math(api::context(), name, OP, 0.0f, dst_addr, src_addr,                                     \
                     {{"work0", work0_addr}, {"work1", work1_addr}, {"work2", work2_addr}},                   \
                     {{"exp_coeff_addr", exp_coeff_addr, Table::exp_coeff},                                   \
                      {"erf_coeff_addr", erf_coeff_addr, Table::erf_coeff},                                   \
                      {"exp_table_addr", exp_table_addr, Table::exp_table}},                                  \
                     api::shape_of(shape));                                                                        \
    });                                                                                                       \
  }
TPU_BDC_FP32_ERF_FAMILY(tpu_bdc_fp32_erf, Math::erf)
TPU_BDC_FP32_ERF_FAMILY(tpu_bdc_fp32_erfc, Math::erfc)
#undef TPU_BDC_FP32_ERF_FAMILY

void tpu_bdc_fp32_gelu(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr,
                       local_addr_t work2_addr, local_addr_t work3_addr, local_addr_t exp_coeff_addr,
                       local_addr_t erf_coeff_addr, local_addr_t exp_table_addr, const dim4 *shape) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_gelu, dst_addr, src_addr, work0_addr, work1_addr, work2_addr, work3_addr,
                           exp_coeff_addr, erf_coeff_addr, exp_table_addr, shape),
                  [&, name = __func__] {
    bdc::fp32_math(api::context(), name, Math::gelu, 0.0f, dst_addr, src_addr,
                   {{"work0", work0_addr}, {"work1", work1_addr}, {"work2", work2_addr}, {"work3", work3_addr}},
                   {{"exp_coeff_addr", exp_coeff_addr, Table::exp_coeff},
                    {"erf_coeff_addr", erf_coeff_addr, Table::erf_coeff},
                    {"exp_table_addr", exp_table_addr, Table::exp_table}},
                   api::shape_of(shape));
  });
}

// ---- exp and log: softplus, pow, pow_C; C_pow (exp only) ---------------------------------------

void tpu_bdc_fp32_softplus(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr,
                           local_addr_t work1_addr, local_addr_t exp_coeff_addr, local_addr_t log_coeff_addr,
                           local_addr_t exp_table_addr, const dim4 *shape, float beta) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_softplus, dst_addr, src_addr, work0_addr, work1_addr, exp_coeff_addr,
                           log_coeff_addr, exp_table_addr, shape, beta),
                  [&, name = __func__] {
    bdc::fp32_math(api::context(), name, Math::softplus, beta, dst_addr, src_addr,
                   {{"work0", work0_addr}, {"work1", work1_addr}},
                   {{"exp_coeff_addr", exp_coeff_addr, Table::exp_coeff},
                    {"log_coeff_addr", log_coeff_addr, Table::log_coeff},
                    {"exp_table_addr", exp_table_addr, Table::exp_table}},
                   api::shape_of(shape));
  });
}

void tpu_bdc_fp32_pow(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, local_addr_t work0_addr,
                      local_addr_t work1_addr, local_addr_t exp_coeff_addr, local_addr_t log_coeff_addr,
                      local_addr_t exp_table_addr, const dim4 *shape) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_pow, dst_addr, src0_addr, src1_addr, work0_addr, work1_addr, exp_coeff_addr,
                           log_coeff_addr, exp_table_addr, shape),
                  [&, name = __func__] {
    bdc::fp32_pow(api::context(), name, dst_addr, src0_addr, src1_addr, {{"work0", work0_addr}, {"work1", work1_addr}},
                  {{"exp_coeff_addr", exp_coeff_addr, Table::exp_coeff},
                   {"log_coeff_addr", log_coeff_addr, Table::log_coeff},
                   {"exp_table_addr", exp_table_addr, Table::exp_table}},
                  api::shape_of(shape));
  });
}

void tpu_bdc_fp32_pow_C(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr,
                        local_addr_t exp_coeff_addr, local_addr_t log_coeff_addr, local_addr_t exp_table_addr, float C,
                        const dim4 *shape) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_pow_C, dst_addr, src_addr, work0_addr, work1_addr, exp_coeff_addr,
                           log_coeff_addr, exp_table_addr, C, shape),
                  [&, name = __func__] {
    bdc::fp32_math(api::context(), name, Math::pow_C, C, dst_addr, src_addr,
                   {{"work0", work0_addr}, {"work1", work1_addr}},
                   {{"exp_coeff_addr", exp_coeff_addr, Table::exp_coeff},
                    {"log_coeff_addr", log_coeff_addr, Table::log_coeff},
                    {"exp_table_addr", exp_table_addr, Table::exp_table}},
                   api::shape_of(shape));
  });
}

void tpu_bdc_fp32_C_pow(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work0_addr, local_addr_t work1_addr,
                        local_addr_t exp_coeff_addr, local_addr_t exp_table_addr, float C, const dim4 *shape) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_C_pow, dst_addr, src_addr, work0_addr, work1_addr, exp_coeff_addr,
                           exp_table_addr, C, shape),
                  [&, name = __func__] {
    bdc::fp32_math(api::context(), name, Math::C_pow, C, dst_addr, src_addr,
                   {{"work0", work0_addr}, {"work1", work1_addr}},
                   {{"exp_coeff_addr", exp_coeff_addr, Table::exp_coeff},
                    {"exp_table_addr", exp_table_addr, Table::exp_table}},
                   api::shape_of(shape));
  });
}

// ---- no tables -------------------------------------------------------------------------------

void tpu_bdc_fp32_softsign(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape) {
  return api::run(__func__, TPU_CALLER(),
                  TPU_ARGS(tpu_bdc_fp32_softsign, dst_addr, src_addr, shape),
                  [&, name = __func__] {
    bdc::fp32_math(api::context(), name, Math::softsign, 0.0f, dst_addr, src_addr, {}, {}, api::shape_of(shape));
  });
}

}  // extern "C"
