// bdc_fp8_api.cc: the FP8 instructions of the current vendor header
// (families M, G, I). bm1684x and bm1688 have no FP8 unit: each call stops
// the kernel with the SDK's unsupported-dtype error (as tpu_get_ic_parallel
// gives for FP8), naming the function, the dtype and the chip. They are
// declared so kernels written for newer chips compile.
//
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies, run inside api::run.
#include <initializer_list>

#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/context.h"
#include "cmodel/dtype.h"

namespace cmodel::impl {

namespace {

struct Operand {
  const char *role;
  data_type_t dtype;
};

// Names the first FP8 operand (the function name is prefixed by api::run);
// an FP8 instruction given no FP8 operand is refused just the same.
[[noreturn]] void no_fp8(std::initializer_list<Operand> operands) {
  const char *chip = api::context().chip.name;
  for (const Operand &o : operands)
    if (o.dtype == DT_FP8E5M2 || o.dtype == DT_FP8E4M3)
      fail(ErrorKind::unsupported, "{} dtype {} is not supported on {} (FP8 instructions need a newer chip)", o.role,
           dtype_name(o.dtype), chip);
  fail(ErrorKind::unsupported, "FP8 instructions are not supported on {} (and no operand is FP8: {} dtype {})", chip,
       operands.begin()->role, dtype_name(operands.begin()->dtype));
}

}  // namespace

void tpu_bdc_fp8_add_C(local_addr_t, local_addr_t, scalar_t, const dim4 *, const dim4 *, const dim4 *,
                       data_type_t dst_dtype, data_type_t src_dtype, data_type_t C_dtype, int) {
  no_fp8({{"dst", dst_dtype}, {"src", src_dtype}, {"C", C_dtype}});
}
void tpu_bdc_fp8_C_sub(local_addr_t, local_addr_t, scalar_t, const dim4 *, const dim4 *, const dim4 *,
                       data_type_t dst_dtype, data_type_t src_dtype, data_type_t C_dtype, int) {
  no_fp8({{"dst", dst_dtype}, {"src", src_dtype}, {"C", C_dtype}});
}
void tpu_bdc_fp8_mul_C(local_addr_t, local_addr_t, scalar_t, const dim4 *, const dim4 *, const dim4 *,
                       data_type_t dst_dtype, data_type_t src_dtype, data_type_t C_dtype, int) {
  no_fp8({{"dst", dst_dtype}, {"src", src_dtype}, {"C", C_dtype}});
}

void tpu_bdc_fp8_mm(local_addr_t, local_addr_t, local_addr_t, int, int, int, data_type_t, data_type_t left_dtype,
                    data_type_t right_dtype, bool, bool, bool, var_context_t) {
  no_fp8({{"left", left_dtype}, {"right", right_dtype}});
}
void tpu_bdc_fp8_mm_R_trans(local_addr_t, local_addr_t, local_addr_t, int, int, int, data_type_t,
                            data_type_t left_dtype, data_type_t right_dtype, bool, bool, bool, var_context_t) {
  no_fp8({{"left", left_dtype}, {"right", right_dtype}});
}
void tpu_bdc_fp8_mm_all_trans(local_addr_t, local_addr_t, local_addr_t, int, int, int, data_type_t,
                              data_type_t left_dtype, data_type_t right_dtype, bool, bool, bool, var_context_t) {
  no_fp8({{"left", left_dtype}, {"right", right_dtype}});
}
void tpu_bdc_fp8_mm_with_bias(local_addr_t, local_addr_t, local_addr_t, int, int, int, data_type_t,
                              data_type_t left_dtype, data_type_t right_dtype, data_type_t, bool, bool, var_context_t, bool, bool,
                              bool, var_context_t) {
  no_fp8({{"left", left_dtype}, {"right", right_dtype}});
}
void tpu_bdc_fp8_mm_R_trans_with_bias(local_addr_t, local_addr_t, local_addr_t, int, int, int, data_type_t,
                                      data_type_t left_dtype, data_type_t right_dtype, data_type_t, bool, bool, var_context_t,
                                      bool, bool, bool, var_context_t) {
  no_fp8({{"left", left_dtype}, {"right", right_dtype}});
}
void tpu_bdc_fp8_mm_all_trans_with_bias(local_addr_t, local_addr_t, local_addr_t, int, int, int, data_type_t,
                                        data_type_t left_dtype, data_type_t right_dtype, data_type_t, bool, bool, var_context_t,
                                        bool, bool, bool, var_context_t) {
  no_fp8({{"left", left_dtype}, {"right", right_dtype}});
}

void tpu_bdc_fp8_avg_pool2d(local_addr_t, local_addr_t, const dim4 *, const dim2 *, const padding_t *, const dim2 *,
                            const dim2 *, data_type_t input_dtype, data_type_t output_dtype, scalar_t, float) {
  no_fp8({{"input", input_dtype}, {"output", output_dtype}});
}

}  // namespace cmodel::impl
