#include "fp_divide.h"

#include "elementwise.h"

namespace cmodel::bdc {
namespace {

void require_iterations(int num_iter) {
  if (num_iter == 0)
    fail(ErrorKind::unsupported,
         "num_iter 0 returns the hardware's bare reciprocal seed, which this SDK does not model; use num_iter >= 1");
  if (num_iter < 0)
    fail(Rule::AR_6, "num_iter {} is negative; the division needs at least 1 Newton-Raphson step", num_iter);
  if (num_iter > max_div_iterations)
    fail(Rule::AR_6, "num_iter {} is above {}; a division takes 1 to {} Newton-Raphson steps", num_iter,
         max_div_iterations, max_div_iterations);
}

// The divide cost class counts seed + default_div_iterations steps + multiply.
double iteration_factor(int num_iter) {
  return double(num_iter + 2) / double(default_div_iterations + 2);
}

}  // namespace

void fp_div(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr,
            const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride,
            data_type_t dtype, int num_iter) {
  require_float(Rule::AR_5, "dtype", dtype);
  require_iterations(num_iter);
  const TensorRef dst = result(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src0 = operand(ctx, "src0", src0_addr, shape, src0_stride, dtype);
  const TensorRef src1 = operand(ctx, "src1", src1_addr, shape, src1_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src0, "src0");
  require_same_npu(Rule::TIU_4, dst, "dst", src1, "src1");
  fp_div_on(dst, src0, src1, dtype);
  book(ctx, api, BdcCost::divide, dst, dtype, {&dst}, {&src0, &src1}, iteration_factor(num_iter));
}

void fp_div_on(const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, data_type_t dtype) {
  require_float(Rule::AR_5, "dtype", dtype);
  with_float_dtype(dtype, [&]<typename C>(C) { map<C, C, C>(dst, [](float a, float b) { return a / b; }, src0, src1); });
}

void fp_div_const(Context &ctx, const char *api, bool constant_first, local_addr_t dst_addr, local_addr_t src_addr,
                  scalar_t C, const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype,
                  int num_iter) {
  require_float(Rule::AR_5, "dtype", dtype);
  require_iterations(num_iter);
  const TensorRef dst = result(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  with_float_dtype(dtype, [&]<typename D>(D) {
    const float c = scalar_value<D>(C);
    // x / c, not x * (1 / c): the reciprocal would round first.
    if (constant_first)
      map<D, D>(dst, [c](float x) { return c / x; }, src);
    else
      map<D, D>(dst, [c](float x) { return x / c; }, src);
  });
  book(ctx, api, BdcCost::divide, dst, dtype, {&dst}, {&src}, iteration_factor(num_iter));
}

}  // namespace cmodel::bdc
