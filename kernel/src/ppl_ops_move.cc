// ppl_ops_move.cc: the PPL operations that move, convert or transform
// elements one by one inside local memory: move, cast, lane broadcast,
// transposes, rounding, reciprocal square root and exp (spec §3.8).
#include <limits>

#include "ppl_ops_common.h"

namespace ppl::rt {

void tiu_move(const char *name, const desc &dst_in, const desc &src, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &src}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    tpu_bdc_cpy(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
  });
}


void tiu_cast(const char *name, const desc &dst_in, const desc &src, rounding_mode_t mode, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &src}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  if ((dst.dtype == ppl::DT_FP16 && src.dtype == ppl::DT_BF16) ||
      (dst.dtype == ppl::DT_BF16 && src.dtype == ppl::DT_FP16))
    refuse(name, where, "fp16 <-> bf16 is not a direct cast in PPL: go through fp32");
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    tpu_bdc_cast(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype),
                 kernel_dtype(src.dtype), static_cast<::rounding_mode_t>(mode));
  });
}

void tiu_lane_broadcast(const char *name, const desc &dst, const desc &src, int lanes, const site &where) {
  require_local(name, "src", src, where);
  const int count = check_channel_broadcast(name, dst, src, lanes, where);
  require_aligned(name, "dst", dst, where);
  require_aligned(name, "src", src, where);
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape{dst.shape.n, count, dst.shape.h, dst.shape.w};
    tpu_bdc_npu_bcast(local_address(dst), local_address(src), &shape, kernel_dtype(dst.dtype));
  });
}


void tiu_rsqrt(const char *name, const desc &dst_in, const desc &src, int iterations, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &src}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  require_aligned(name, "dst", dst, where);
  require_aligned(name, "src", src, where);
  if (iterations < 1 || iterations > 4)
    refuse(name, where, fmt::format("num_iter is {}; PPL allows 1 to 4", iterations));
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape);
    if (dst.dtype == ppl::DT_FP32)
      tpu_bdc_fp32_tunable_rsqrt(local_address(dst), local_address(src), &shape, iterations);
    else
      tpu_bdc_fp_tunable_rsqrt(local_address(dst), local_address(src), &shape, kernel_dtype(dst.dtype), iterations);
  });
}


void tiu_table_function(const char *name, table_function f, const desc &dst_in, const desc &src, const desc &work0,
                        const desc &work1, const desc &coeff, const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &src}}, where), where);
  for (const auto &[role, d] : {std::pair{"dst", &dst}, std::pair{"src", &src}, std::pair{"work0", &work0},
                                std::pair{"work1", &work1}, std::pair{"coeff", &coeff}}) {
    require_local(name, role, *d, where);
    require_aligned(name, role, *d, where);
  }
  require_same_shape(name, dst, src, where);
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}, {&work0, tiu_engine}, {&work1, tiu_engine}, {&coeff, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape);
    const ::data_type_t t = kernel_dtype(dst.dtype);
    const uint32_t o = local_address(dst), x = local_address(src), w0 = local_address(work0),
                   w1 = local_address(work1), table = local_address(coeff);
    switch (f) {
      case table_function::exp:
        tpu_bdc_load_fp_exp_coeff(table, t);
        return tpu_bdc_fp_exp(o, x, w0, w1, table, &shape, t);
      case table_function::log:
        tpu_bdc_load_fp_log_coeff(table, t);
        return tpu_bdc_fp_log(o, x, w0, table, &shape, t);
      case table_function::arcsin:
        tpu_bdc_load_fp_arcsin_coeff(table, t);
        return tpu_bdc_fp_arcsin(o, x, w0, table, &shape, t);
    }
  });
}

void tiu_round(const char *name, const desc &dst_in, const desc &src, rounding_mode_t mode, bool floor,
               const site &where) {
  const desc dst = written(name, dst_in, broadcast_shape(name, {{"src", &src}}, where), where);
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  if (dst.dtype != src.dtype || !is_float(dst.dtype))
    refuse(name, where, "dst and src must be of one float type (fp32, fp16, bf16)");
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape), ds = kernel_dim4(dst.stride), ss = kernel_dim4(src.stride);
    if (floor)
      tpu_bdc_fp_floor(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype));
    else
      tpu_bdc_fp_round(local_address(dst), local_address(src), &shape, &ds, &ss, kernel_dtype(dst.dtype),
                       static_cast<::rounding_mode_t>(mode));
  });
}

void tiu_transpose(const char *name, bool cw, const desc &dst, const desc &src, const site &where) {
  const dim4 expected{src.shape.n, src.shape.w, src.shape.h, src.shape.c};
  if (!same(dst.shape, expected))
    refuse(name, where, fmt::format("dst of shape {} must be {} (src {} with C and W swapped)", text(dst.shape),
                                    text(expected), text(src.shape)));
  require_lane0_aligned(name, {{"src", &src}}, where);
  require_local(name, "dst", dst, where);
  if (dst.lane != 0) refuse(name, where, fmt::format("dst must start on lane 0, not {}", dst.lane));
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape);  // tpu-kernel takes the result's shape
    if (cw)
      tpu_bdc_cw_trans(local_address(dst), local_address(src), &shape, kernel_dtype(dst.dtype));
    else
      tpu_bdc_wc_trans(local_address(dst), local_address(src), &shape, kernel_dtype(dst.dtype));
  });
}

void tiu_move_cross_lane(const char *name, const desc &dst, const desc &src, const site &where) {
  require_local(name, "dst", dst, where);
  require_local(name, "src", src, where);
  require_same_shape(name, dst, src, where);
  require_aligned(name, "dst", dst, where);
  require_aligned(name, "src", src, where);
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(dst.shape);
    tpu_bdc_cpy_cross_npu(local_address(dst), local_address(src), &shape, kernel_dtype(dst.dtype));
  });
}

void tiu_arange(const char *name, const desc &dst, int start, int step, int num, int lanes, const site &where) {
  require_local(name, "dst", dst, where);
  if (lanes != 0 && lanes != dst.shape.c)
    refuse(name, where, fmt::format("c is {}, but dst has {} channels", lanes, dst.shape.c));
  if (dst.dtype != ppl::DT_INT32 && dst.dtype != ppl::DT_UINT32)
    refuse(name, where, "dst must be an int32 or uint32 tensor");
  if (dst.shape.n != 1 || dst.shape.h != 1 || dst.shape.w != num || num < 1 ||
      dst.lane + dst.shape.c > ppl::lane_num())
    refuse(name, where, fmt::format("dst of shape {} from lane {} must be [1, c, 1, num] (num {}) with its c lanes "
                                    "from its start", text(dst.shape), dst.lane, num));
  require_aligned(name, "dst", dst, where);
  submit(where, {{&dst, tiu_engine}}, [=] {
    tpu_bdc_arithmetic_sequence_bcast(local_address(dst), dst.shape.c, start, step, num);
  });
}


}  // namespace ppl::rt
