// bdc_vector_cross_api.cc: the vector-cross commands (families K, L, M, N:
// tpu_bdc_vc_*, tpu_bdc_fp_vc_*, tpu_bdc_fp32_vc_div, tpu_bdc_int_vc_*),
// over cmodel/bdc/vector_cross with each element-wise family's arithmetic.
// The C boundaries are generated from kernel/api/tpu_kernel.api (tag
// `wrap`); these are the bodies.
#include "api_guard.h"
#include "api_impl.h"
#include "cmodel/bdc/bitwise.h"
#include "cmodel/bdc/compare.h"
#include "cmodel/bdc/fp_arith.h"
#include "cmodel/bdc/fp_divide.h"
#include "cmodel/bdc/int_arith.h"
#include "cmodel/bdc/vector_cross.h"
#include "cmodel/context.h"

namespace cmodel::impl {
namespace {

using cmodel::TensorRef;

struct Lengths {
  int src0_len, src1_len, src0_len_per_channel, src1_len_per_channel;
};

bdc::VectorCross cross(local_addr_t dst, local_addr_t src0, local_addr_t src1, const Lengths &l, data_type_t dst_dtype,
                       data_type_t src0_dtype, data_type_t src1_dtype) {
  return {dst, src0, src1, l.src0_len, l.src1_len, l.src0_len_per_channel, l.src1_len_per_channel,
          dst_dtype, src0_dtype, src1_dtype};
}

void run(const char *api, const bdc::VectorCross &v, const bdc::CrossOp &op, BdcCost cost = BdcCost::arith,
         double factor = 1) {
  bdc::vector_cross(api::context(), api, v, op, cost, factor);
}

// One dtype for all three operands.
void same_dtype(const char *api, local_addr_t dst, local_addr_t src0, local_addr_t src1, const Lengths &l,
                data_type_t dtype, const bdc::CrossOp &op, BdcCost cost = BdcCost::arith, double factor = 1) {
  run(api, cross(dst, src0, src1, l, dtype, dtype, dtype), op, cost, factor);
}

void bitwise(const char *api, bdc::Bitwise b, local_addr_t dst, local_addr_t src0, local_addr_t src1,
             const Lengths &l, data_type_t dtype) {
  same_dtype(api, dst, src0, src1, l, dtype,
             [&](const TensorRef &d, const TensorRef &x, const TensorRef &y) { bdc::bitwise_on(b, d, x, y, dtype); });
}

void min_max(const char *api, bool is_max, local_addr_t dst, local_addr_t src0, local_addr_t src1, const Lengths &l,
             data_type_t dtype) {
  same_dtype(api, dst, src0, src1, l, dtype,
             [&](const TensorRef &d, const TensorRef &x, const TensorRef &y) { bdc::min_max_on(is_max, d, x, y, dtype); });
}

void compare(const char *api, bdc::CompareOp c, local_addr_t dst, local_addr_t src0, local_addr_t src1,
             scalar_t true_val, const Lengths &l, data_type_t dst_dtype, data_type_t src_dtype) {
  run(api, cross(dst, src0, src1, l, dst_dtype, src_dtype, src_dtype),
      [&](const TensorRef &d, const TensorRef &x, const TensorRef &y) {
        bdc::compare_on(c, d, x, y, true_val, dst_dtype, src_dtype);
      });
}

void fp(const char *api, bdc::FpBinary f, local_addr_t dst, local_addr_t src0, local_addr_t src1, const Lengths &l,
        data_type_t dtype) {
  same_dtype(api, dst, src0, src1, l, dtype,
             [&](const TensorRef &d, const TensorRef &x, const TensorRef &y) { bdc::fp_binary_on(f, d, x, y, dtype); });
}

void integer(const char *api, bdc::IntBinary i, local_addr_t dst, local_addr_t src0, local_addr_t src1,
             const Lengths &l, data_type_t dst_dtype, data_type_t src0_dtype, data_type_t src1_dtype,
             bool saturation) {
  run(api, cross(dst, src0, src1, l, dst_dtype, src0_dtype, src1_dtype),
      [&](const TensorRef &d, const TensorRef &x, const TensorRef &y) { bdc::int_binary_on(i, d, x, y, saturation); });
}

}  // namespace

#define VC_LENGTHS {src0_len, src1_len, src0_len_per_channel, src1_len_per_channel}

void tpu_bdc_vc_and(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len, int src1_len,
                    int src0_len_per_channel, int src1_len_per_channel, data_type_t dtype) {
  bitwise(__func__, bdc::Bitwise::and_, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dtype);
}
void tpu_bdc_vc_or(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len, int src1_len,
                   int src0_len_per_channel, int src1_len_per_channel, data_type_t dtype) {
  bitwise(__func__, bdc::Bitwise::or_, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dtype);
}
void tpu_bdc_vc_xor(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len, int src1_len,
                    int src0_len_per_channel, int src1_len_per_channel, data_type_t dtype) {
  bitwise(__func__, bdc::Bitwise::xor_, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dtype);
}
void tpu_bdc_vc_min(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len, int src1_len,
                    int src0_len_per_channel, int src1_len_per_channel, data_type_t dtype) {
  min_max(__func__, false, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dtype);
}
void tpu_bdc_vc_max(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len, int src1_len,
                    int src0_len_per_channel, int src1_len_per_channel, data_type_t dtype) {
  min_max(__func__, true, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dtype);
}

#define VC_COMPARE(name, op)                                                                                        \
  void name(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, scalar_t true_val, int src0_len, \
            int src1_len, int src0_len_per_channel, int src1_len_per_channel, data_type_t dst_dtype,                \
            data_type_t src_dtype) {                                                                                \
    compare(__func__, bdc::CompareOp::op, dst_addr, src0_addr, src1_addr, true_val, VC_LENGTHS, dst_dtype,          \
            src_dtype);                                                                                             \
  }
VC_COMPARE(tpu_bdc_vc_greater, greater)
VC_COMPARE(tpu_bdc_vc_less, less)
VC_COMPARE(tpu_bdc_vc_equal, equal)
VC_COMPARE(tpu_bdc_vc_greater_equal, greater_equal)
VC_COMPARE(tpu_bdc_vc_less_equal, less_equal)
VC_COMPARE(tpu_bdc_vc_not_equal, not_equal)
#undef VC_COMPARE

void tpu_bdc_fp_vc_add(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len,
                       int src1_len, int src0_len_per_channel, int src1_len_per_channel, data_type_t dtype) {
  fp(__func__, bdc::FpBinary::add, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dtype);
}
void tpu_bdc_fp_vc_sub(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len,
                       int src1_len, int src0_len_per_channel, int src1_len_per_channel, data_type_t dtype) {
  fp(__func__, bdc::FpBinary::sub, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dtype);
}
void tpu_bdc_fp_vc_mul(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len,
                       int src1_len, int src0_len_per_channel, int src1_len_per_channel, data_type_t dtype) {
  fp(__func__, bdc::FpBinary::mul, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dtype);
}
void tpu_bdc_fp32_vc_div(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len,
                         int src1_len, int src0_len_per_channel, int src1_len_per_channel) {
  same_dtype(
      __func__, dst_addr, src0_addr, src1_addr, VC_LENGTHS, DT_FP32,
      [](const TensorRef &d, const TensorRef &x, const TensorRef &y) { bdc::fp_div_on(d, x, y, DT_FP32); },
      BdcCost::divide);
}

void tpu_bdc_int_vc_add(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len,
                        int src1_len, int src0_len_per_channel, int src1_len_per_channel, data_type_t dst_dtype,
                        data_type_t src0_dtype, data_type_t src1_dtype, bool saturation) {
  integer(__func__, bdc::IntBinary::add, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dst_dtype, src0_dtype,
          src1_dtype, saturation);
}
void tpu_bdc_int_vc_sub(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len,
                        int src1_len, int src0_len_per_channel, int src1_len_per_channel, data_type_t dst_dtype,
                        data_type_t src0_dtype, data_type_t src1_dtype, bool saturation) {
  integer(__func__, bdc::IntBinary::sub, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dst_dtype, src0_dtype,
          src1_dtype, saturation);
}
void tpu_bdc_int_vc_mul(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, int src0_len,
                        int src1_len, int src0_len_per_channel, int src1_len_per_channel, data_type_t dst_dtype,
                        data_type_t src0_dtype, data_type_t src1_dtype, bool saturation) {
  integer(__func__, bdc::IntBinary::mul, dst_addr, src0_addr, src1_addr, VC_LENGTHS, dst_dtype, src0_dtype,
          src1_dtype, saturation);
}

#undef VC_LENGTHS

}  // namespace cmodel::impl
