// vector_cross.cc: the vc_* commands (vector_cross.h).
//
// Both sources are seen as tensors of the matrix shape: src0 as a host copy
// with zero strides along channels and columns (its elements cross lanes),
// src1 as itself with a zero stride along rows. The element-wise arithmetic
// fills a host copy of dst, whose valid columns are written back; dst shares
// no byte with a source.
#include "vector_cross.h"

#include <cstring>
#include <vector>

#include "family_rules.h"
#include "movement.h"

namespace cmodel::bdc {
namespace {

int div_up(int a, int b) { return (a + b - 1) / b; }

dim4 vector_shape(int len, int per_channel) { return {1, div_up(len, per_channel), 1, per_channel}; }

// Element k of a vector-layout tensor.
const uint8_t *vector_element(const TensorRef &v, int k) {
  return v.at(0, k / v.shape.w, 0, k % v.shape.w);
}

}  // namespace

void vector_cross(Context &ctx, const char *api, const VectorCross &v, const CrossOp &op, BdcCost cost,
                  double factor) {
  under_rule(Rule::VC_3, [&] {
    check_dim("src0_len", v.src0_len);
    check_dim("src1_len", v.src1_len);
    check_dim("src0_len_per_channel", v.src0_len_per_channel);
    check_dim("src1_len_per_channel", v.src1_len_per_channel);
  });
  require_aligned_start(ctx, Rule::VC_1, "src0", v.src0);
  require_aligned_start(ctx, Rule::VC_1, "src1", v.src1);
  require_aligned_start(ctx, Rule::VC_1, "dst", v.dst);
  const TensorRef src0 = operand(ctx, "src0", v.src0, vector_shape(v.src0_len, v.src0_len_per_channel), nullptr,
                                 v.src0_dtype);
  const TensorRef src1 = operand(ctx, "src1", v.src1, vector_shape(v.src1_len, v.src1_len_per_channel), nullptr,
                                 v.src1_dtype);
  const dim4 matrix = {v.src0_len, div_up(v.src1_len, v.src1_len_per_channel), 1, v.src1_len_per_channel};
  const TensorRef dst = operand(ctx, "dst", v.dst, matrix, nullptr, v.dst_dtype);
  // The vendor checker leaves src0's NPU free (its elements are broadcast
  // to every lane); the tpu-kernel documentation wants it on dst's.
  require_same_start_npu(Rule::DOC_VC_1, dst, "dst", src0, "src0");
  require_same_start_npu(Rule::VC_2, dst, "dst", src1, "src1");
  const char *why = "the command writes dst while it still reads the sources";
  require_disjoint(dst, "dst", src0, "src0", why);
  require_disjoint(dst, "dst", src1, "src1", why);

  // src0[i] at every (i, c, 0, w): a host copy, since it crosses lanes.
  std::vector<uint8_t> rows(size_t(v.src0_len) * src0.esize);
  for (int i = 0; i < v.src0_len; ++i) std::memcpy(&rows[size_t(i) * src0.esize], vector_element(src0, i), src0.esize);
  const TensorRef a = host_tensor(v.src0_dtype, matrix, {1, 0, 0, 0}, rows);
  // src1[c * per_channel + w] at every (i, c, 0, w): src1 itself, its n-stride 0
  // (the padding past src1_len is read too, but only into columns never written back).
  TensorRef b = src1;
  b.shape = matrix;
  b.stride.n = 0;
  const int columns = matrix.c * matrix.w;
  std::vector<uint8_t> out(size_t(v.src0_len) * columns * dst.esize);
  const TensorRef d = host_tensor(v.dst_dtype, matrix, {columns, matrix.w, matrix.w, 1}, out);
  op(d, a, b);

  for (int i = 0; i < v.src0_len; ++i)
    for (int j = 0; j < v.src1_len; ++j)
      std::memcpy(dst.at(i, j / matrix.w, 0, j % matrix.w), d.at(i, j / matrix.w, 0, j % matrix.w), size_t(dst.esize));
  const data_type_t cost_dtype = dst.esize >= src0.esize ? v.dst_dtype : v.src0_dtype;
  book(ctx, api, cost, dst, cost_dtype, {&dst}, {&src0, &src1}, factor);
}

}  // namespace cmodel::bdc
