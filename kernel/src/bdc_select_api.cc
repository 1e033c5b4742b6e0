// bdc_select_api.cc: tpu-kernel family F (compare-select on TENSOR /
// VECTOR / SCALAR operands) over cmodel/bdc/select.
#include <cstring>

#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/select.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::SelectOp;

static_assert(int(TENSOR) == int(bdc::VarKind::tensor) && int(SCALAR) == int(bdc::VarKind::scalar) &&
              int(VECTOR) == int(bdc::VarKind::vector));

namespace {

// The operand as the cmodel takes it; the type is kept as given (any int a
// kernel stored) so the cmodel can reject invalid ones by value.
bdc::Variable variable(const char *role, const variable_t *v) {
  if (!v) fail(ErrorKind::illegal_command, "{} is a null pointer", role);
  int type;
  static_assert(sizeof type == sizeof v->type);
  std::memcpy(&type, &v->type, sizeof type);
  return {type, v->context.addr, v->context.scalar};
}

}  // namespace

extern "C" {

#define TPU_BDC_SELECT(NAME, OP)                                                                               \
  void NAME(local_addr_t dst_addr, const variable_t *src0, const variable_t *src1, const variable_t *src2,     \
            const variable_t *src3, const dim4 *shape, data_type_t src0_src1_dtype, data_type_t dst_dtype) {   \
    return api::run(__func__, TPU_CALLER(),                                                                    \
                    TPU_ARGS(NAME, dst_addr, src0, src1, src2, src3, shape, src0_src1_dtype, dst_dtype),       \
                    [&, name = __func__] {                                                                     \
      bdc::select(api::context(), name, OP, dst_addr, variable("src0", src0), variable("src1", src1),          \
                  variable("src2", src2), variable("src3", src3), api::shape_of(shape), src0_src1_dtype, dst_dtype); \
    });                                                                                                        \
  }
TPU_BDC_SELECT(tpu_bdc_greater_select, SelectOp::greater)
TPU_BDC_SELECT(tpu_bdc_less_select, SelectOp::less)
TPU_BDC_SELECT(tpu_bdc_equal_select, SelectOp::equal)
#undef TPU_BDC_SELECT

#define TPU_BDC_EXTREMUM_SELECT(NAME, OP)                                                                        \
  void NAME(local_addr_t dst0_addr, local_addr_t dst1_addr, const variable_t *src0, const variable_t *src1,      \
            const variable_t *src2, const variable_t *src3, const dim4 *shape, data_type_t dst0_dtype,           \
            data_type_t dst1_dtype) {                                                                            \
    return api::run(__func__, TPU_CALLER(),                                                                      \
                    TPU_ARGS(NAME, dst0_addr, dst1_addr, src0, src1, src2, src3, shape, dst0_dtype, dst1_dtype), \
                    [&, name = __func__] {                                                                       \
      bdc::extremum_select(api::context(), name, OP, dst0_addr, dst1_addr, variable("src0", src0),               \
                           variable("src1", src1), variable("src2", src2), variable("src3", src3),               \
                           api::shape_of(shape), dst0_dtype, dst1_dtype);                                             \
    });                                                                                                          \
  }
TPU_BDC_EXTREMUM_SELECT(tpu_bdc_maximum_greater_select, SelectOp::greater)
TPU_BDC_EXTREMUM_SELECT(tpu_bdc_minimum_less_select, SelectOp::less)
#undef TPU_BDC_EXTREMUM_SELECT

}  // extern "C"
