#include "compare.h"

#include "elementwise.h"

namespace cmodel::bdc {
namespace {

// The dtypes a comparison takes, for its sources and its result alike (no
// 4-bit operand: AR-11).
void require_compare_dtype(const char *role, data_type_t dtype) {
  require_dtype(Rule::AR_11, role, dtype,
                {DT_FP32, DT_FP16, DT_BFP16, DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32});
}

// Calls f(compare) with the predicate of `op` as a callable. The built-in
// operators give the IEEE results on floats (NaN unordered).
template <typename F>
void with_compare(CompareOp op, F &&f) {
  switch (op) {
    case CompareOp::greater: return f([](auto a, auto b) { return a > b; });
    case CompareOp::less: return f([](auto a, auto b) { return a < b; });
    case CompareOp::equal: return f([](auto a, auto b) { return a == b; });
    case CompareOp::greater_equal: return f([](auto a, auto b) { return a >= b; });
    case CompareOp::less_equal: return f([](auto a, auto b) { return a <= b; });
    case CompareOp::not_equal: return f([](auto a, auto b) { return a != b; });
  }
}

// The dtype whose EU count paces the command: the wider of the two.
data_type_t cost_dtype(data_type_t dst_dtype, data_type_t src_dtype) {
  return dtype_bytes(dst_dtype) >= dtype_bytes(src_dtype) ? dst_dtype : src_dtype;
}

}  // namespace

void compare_on(CompareOp op, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, scalar_t true_val,
                data_type_t dst_dtype, data_type_t src_dtype) {
  require_compare_dtype("dst", dst_dtype);
  require_compare_dtype("src", src_dtype);
  with_raw_bits(dst_dtype, [&]<typename D>(D) {
    const auto yes = scalar_value<D>(true_val);
    const typename D::Value no = 0;
    with_dtype(src_dtype, [&]<typename S>(S) {
      with_compare(op, [&](auto pred) {
        map<D, S, S>(dst, [&](auto a, auto b) { return pred(a, b) ? yes : no; }, src0, src1);
      });
    });
  });
}

void compare(Context &ctx, const char *api, CompareOp op, local_addr_t dst_addr, local_addr_t src0_addr,
             local_addr_t src1_addr, scalar_t true_val, const dim4 &shape, const dim4 *dst_stride,
             const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dst_dtype, data_type_t src_dtype) {
  require_compare_dtype("dst", dst_dtype);
  require_compare_dtype("src", src_dtype);
  const TensorRef dst = result(ctx, "dst", dst_addr, shape, dst_stride, dst_dtype);
  const TensorRef src0 = operand(ctx, "src0", src0_addr, shape, src0_stride, src_dtype);
  const TensorRef src1 = operand(ctx, "src1", src1_addr, shape, src1_stride, src_dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src0, "src0");
  require_same_npu(Rule::TIU_4, dst, "dst", src1, "src1");
  compare_on(op, dst, src0, src1, true_val, dst_dtype, src_dtype);
  book(ctx, api, BdcCost::arith, dst, cost_dtype(dst_dtype, src_dtype), {&dst}, {&src0, &src1});
}

void compare_const(Context &ctx, const char *api, CompareOp op, local_addr_t dst_addr, local_addr_t src_addr,
                   scalar_t C, scalar_t true_val, const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride,
                   data_type_t dst_dtype, data_type_t src_dtype) {
  require_compare_dtype("dst", dst_dtype);
  require_compare_dtype("src", src_dtype);
  const TensorRef dst = result(ctx, "dst", dst_addr, shape, dst_stride, dst_dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, src_dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  with_raw_bits(dst_dtype, [&]<typename D>(D) {
    const auto yes = scalar_value<D>(true_val);
    const typename D::Value no = 0;
    with_dtype(src_dtype, [&]<typename S>(S) {
      const auto c = scalar_value<S>(C);
      with_compare(op, [&](auto pred) {
        map<D, S>(dst, [&](auto a) { return pred(a, c) ? yes : no; }, src);
      });
    });
  });
  book(ctx, api, BdcCost::arith, dst, cost_dtype(dst_dtype, src_dtype), {&dst}, {&src});
}

}  // namespace cmodel::bdc
