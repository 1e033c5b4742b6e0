#include "fp_arith.h"

#include <cmath>

#include "elementwise.h"

namespace cmodel::bdc {
namespace {

// Calls f(op) with the arithmetic of `op` as a callable, so each op gets
// its own inlined loop.
template <typename F>
void with_op(FpBinary op, F &&f) {
  switch (op) {
    case FpBinary::add: return f([](float a, float b) { return a + b; });
    case FpBinary::sub: return f([](float a, float b) { return a - b; });
    case FpBinary::mul: return f([](float a, float b) { return a * b; });
    case FpBinary::diff_abs: return f([](float a, float b) { return std::fabs(a - b); });
  }
}

}  // namespace

void fp_binary(Context &ctx, const char *api, FpBinary op, local_addr_t dst_addr, local_addr_t src0_addr,
               local_addr_t src1_addr, const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride,
               const dim4 *src1_stride, data_type_t dtype) {
  require_float("dtype", dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src0 = operand(ctx, "src0", src0_addr, shape, src0_stride, dtype);
  const TensorRef src1 = operand(ctx, "src1", src1_addr, shape, src1_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src0, "src0");
  require_same_npu(Rule::TIU_4, dst, "dst", src1, "src1");
  fp_binary_on(op, dst, src0, src1, dtype);
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src0, &src1});
}

void fp_binary_on(FpBinary op, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, data_type_t dtype) {
  require_float("dtype", dtype);
  with_float_dtype(dtype, [&]<typename C>(C) {
    with_op(op, [&](auto f) { map<C, C, C>(dst, f, src0, src1); });
  });
}

void fp_binary_const(Context &ctx, const char *api, FpBinary op, bool constant_first, local_addr_t dst_addr,
                     local_addr_t src_addr, scalar_t C, const dim4 &shape, const dim4 *dst_stride,
                     const dim4 *src_stride, data_type_t dtype) {
  require_float("dtype", dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  with_float_dtype(dtype, [&]<typename D>(D) {
    const float c = scalar_value<D>(C);
    with_op(op, [&](auto f) {
      if (constant_first)
        map<D, D>(dst, [&](float x) { return f(c, x); }, src);
      else
        map<D, D>(dst, [&](float x) { return f(x, c); }, src);
    });
  });
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src});
}

void fp_square(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
               const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype) {
  require_float("dtype", dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  with_float_dtype(dtype, [&]<typename C>(C) { map<C, C>(dst, [](float x) { return x * x; }, src); });
  book(ctx, api, BdcCost::mac, dst, dtype, {&dst}, {&src});
}

namespace {

// The two roundings of fp32_mac, in two statements: compilers contract
// a * b + c into a fused multiply-add at most within one expression (Clang's
// default -ffp-contract=on), and GCC does not contract at all in the ISO
// C++ mode the SDK is built in (CMAKE_CXX_EXTENSIONS OFF).
inline float mac(float acc, float a, float b) {
  const float p = a * b;
  return acc + p;
}

}  // namespace

void fp32_mac(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr,
              const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride) {
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, DT_FP32);
  const TensorRef src0 = operand(ctx, "src0", src0_addr, shape, src0_stride, DT_FP32);
  const TensorRef src1 = operand(ctx, "src1", src1_addr, shape, src1_stride, DT_FP32);
  require_same_npu(Rule::TIU_4, dst, "dst", src0, "src0");
  require_same_npu(Rule::TIU_4, dst, "dst", src1, "src1");
  map<Fp32, Fp32, Fp32, Fp32>(
      dst, [](float acc, float a, float b) { return mac(acc, a, b); }, dst, src0, src1);
  book(ctx, api, BdcCost::mac, dst, DT_FP32, {&dst}, {&dst, &src0, &src1});
}

void fp32_mac_const(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, float C,
                    const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride) {
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, DT_FP32);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, DT_FP32);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  map<Fp32, Fp32, Fp32>(
      dst, [C](float acc, float a) { return mac(acc, a, C); }, dst, src);
  book(ctx, api, BdcCost::mac, dst, DT_FP32, {&dst}, {&dst, &src});
}

}  // namespace cmodel::bdc
