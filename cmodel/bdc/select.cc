#include "select.h"

#include <cstring>

#include "elementwise.h"

namespace cmodel::bdc {
namespace {

// Precision codes 0..7 and never 4-bit (CMP-5).
void require_select_dtype(const char *role, data_type_t dtype) {
  require_dtype(Rule::CMP_5, role, dtype,
                {DT_FP32, DT_FP16, DT_BFP16, DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32});
}

// Spec §6.6: the compared operands may not be wider than the selected ones.
// A tpu-kernel documentation rule; the vendor checker does not assert it.
void require_not_wider(const char *cmp_role, data_type_t cmp_dtype, const char *dst_role, data_type_t dst_dtype) {
  if (dtype_bits(cmp_dtype) > dtype_bits(dst_dtype))
    fail(Rule::DOC_CMP_2,
         "{} dtype {} is {} bits wide but {} dtype {} only {}; the compared operands may not be wider than the "
         "selected ones",
         cmp_role, dtype_name(cmp_dtype), dtype_bits(cmp_dtype), dst_role, dtype_name(dst_dtype),
         dtype_bits(dst_dtype));
}

// One variable_t operand, resolved: where element (n, c, 0, 0) of its
// dst-shaped view starts and the step between elements of a channel.
struct Source {
  VarKind kind = VarKind::scalar;
  TensorRef checked{};  // TENSOR: the tensor; VECTOR: its [1, c, 1, 1] aligned tensor
  TensorRef view{};     // dst's shape: aligned (TENSOR) or every stride 0 (VECTOR)
  alignas(4) uint8_t scalar_bytes[sizeof(scalar_t)] = {};

  bool in_memory() const { return kind != VarKind::scalar; }
  const uint8_t *channel(int n, int c) const { return in_memory() ? view.channel(n, c) : scalar_bytes; }
  int64_t step() const { return kind == VarKind::tensor ? 1 : 0; }
};

// `address_rule`: the rule its placement obeys (CMP-2 for a compared
// operand, CMP-3 for a selected one).
Source resolve(Context &ctx, const char *role, const Variable &var, const dim4 &shape, data_type_t dtype,
               const TensorRef &dst, const char *dst_role, Rule address_rule) {
  Source s;
  switch (var.type) {
    case int(VarKind::tensor):
      s.kind = VarKind::tensor;
      s.checked = operand(ctx, role, var.addr, shape, nullptr, dtype, address_rule);
      s.view = s.checked;
      break;
    case int(VarKind::vector): {
      s.kind = VarKind::vector;
      s.checked = operand(ctx, role, var.addr, {1, shape.c, 1, 1}, nullptr, dtype, address_rule);
      const dim4 zero{0, 0, 0, 0};
      s.view = local_tensor(ctx.memory, role, var.addr, shape, &zero, dtype);
      break;
    }
    case int(VarKind::scalar):
      s.kind = VarKind::scalar;
      std::memcpy(s.scalar_bytes, &var.scalar, sizeof var.scalar);
      return s;
    default:
      fail(ErrorKind::illegal_command, "{} variable_t.type is {}; expected TENSOR (0), SCALAR (1) or VECTOR (2)",
           role, var.type);
  }
  // A tpu-kernel documentation rule (spec §6.3); the vendor checker does
  // not assert it for CMP.
  require_same_npu(Rule::DOC_CMP_1, dst, dst_role, s.checked, role);
  return s;
}

// Notes the memory operands among `sources` as reads of the next command.
void note_reads(Context &ctx, const Source (&sources)[4]) {
  for (const Source &s : sources)
    if (s.in_memory()) ctx.hazards.note(s.view, false);
}

// Calls f(storage) with a value of the unsigned integer as wide as `dtype`.
template <typename F>
void with_raw_type(data_type_t dtype, F &&f) {
  switch (dtype_bytes(dtype)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    default: return f(uint32_t{});
  }
}

template <typename F>
void with_predicate(SelectOp op, F &&f) {
  switch (op) {
    case SelectOp::greater: return f([](auto a, auto b) { return a > b; });
    case SelectOp::less: return f([](auto a, auto b) { return a < b; });
    case SelectOp::equal: return f([](auto a, auto b) { return a == b; });
  }
}

// Walks the channels of `dst` (aligned: each h x w plane is contiguous)
// with the four sources; body(count, d, a, sa, b, sb, x, sx, y, sy) gets
// element pointers and steps for one channel.
template <typename Body>
void for_each_channel(const TensorRef &dst, const Source (&src)[4], Body &&body) {
  const dim4 &s = dst.shape;
  const int64_t count = int64_t(s.h) * s.w;
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      body(count, n, c, src[0].channel(n, c), src[0].step(), src[1].channel(n, c), src[1].step(),
           src[2].channel(n, c), src[2].step(), src[3].channel(n, c), src[3].step());
}

}  // namespace

void select(Context &ctx, const char *api, SelectOp op, local_addr_t dst_addr, const Variable &src0,
            const Variable &src1, const Variable &src2, const Variable &src3, const dim4 &shape,
            data_type_t src0_src1_dtype, data_type_t dst_dtype) {
  require_select_dtype("src0/src1", src0_src1_dtype);
  require_select_dtype("dst", dst_dtype);
  require_not_wider("src0/src1", src0_src1_dtype, "dst", dst_dtype);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dst_dtype, Rule::CMP_3);
  const Source src[4] = {resolve(ctx, "src0", src0, shape, src0_src1_dtype, dst, "dst", Rule::CMP_2),
                         resolve(ctx, "src1", src1, shape, src0_src1_dtype, dst, "dst", Rule::CMP_2),
                         resolve(ctx, "src2", src2, shape, dst_dtype, dst, "dst", Rule::CMP_3),
                         resolve(ctx, "src3", src3, shape, dst_dtype, dst, "dst", Rule::CMP_3)};
  with_dtype(src0_src1_dtype, [&]<typename Cmp>(Cmp) {
    using A = typename Cmp::Storage;
    with_raw_type(dst_dtype, [&]<typename T>(T) {
      with_predicate(op, [&](auto pred) {
        for_each_channel(dst, src, [&](int64_t count, int n, int c, const uint8_t *pa, int64_t sa, const uint8_t *pb,
                                       int64_t sb, const uint8_t *px, int64_t sx, const uint8_t *py, int64_t sy) {
          auto *d = reinterpret_cast<T *>(dst.channel(n, c));
          const auto *a = reinterpret_cast<const A *>(pa);
          const auto *b = reinterpret_cast<const A *>(pb);
          const auto *x = reinterpret_cast<const T *>(px);
          const auto *y = reinterpret_cast<const T *>(py);
          for (int64_t i = 0; i < count; ++i) {
            const bool take_x = pred(Cmp::load(a[i * sa]), Cmp::load(b[i * sb]));
            const T xv = x[i * sx], yv = y[i * sy];
            d[i] = take_x ? xv : yv;
          }
        });
      });
    });
  });
  note_reads(ctx, src);
  book(ctx, api, BdcCost::select, dst, dst_dtype, {&dst}, {});
}

void extremum_select(Context &ctx, const char *api, SelectOp op, local_addr_t dst0_addr, local_addr_t dst1_addr,
                     const Variable &src0, const Variable &src1, const Variable &src2, const Variable &src3,
                     const dim4 &shape, data_type_t dst0_dtype, data_type_t dst1_dtype) {
  require_select_dtype("dst0", dst0_dtype);
  require_select_dtype("dst1", dst1_dtype);
  require_not_wider("dst0", dst0_dtype, "dst1", dst1_dtype);
  const TensorRef dst0 = operand(ctx, "dst0", dst0_addr, shape, nullptr, dst0_dtype, Rule::CMP_3);
  const TensorRef dst1 = operand(ctx, "dst1", dst1_addr, shape, nullptr, dst1_dtype, Rule::CMP_4);
  require_same_npu(Rule::DOC_CMP_1, dst0, "dst0", dst1, "dst1");
  const Source src[4] = {resolve(ctx, "src0", src0, shape, dst0_dtype, dst0, "dst0", Rule::CMP_2),
                         resolve(ctx, "src1", src1, shape, dst0_dtype, dst0, "dst0", Rule::CMP_2),
                         resolve(ctx, "src2", src2, shape, dst1_dtype, dst0, "dst0", Rule::CMP_3),
                         resolve(ctx, "src3", src3, shape, dst1_dtype, dst0, "dst0", Rule::CMP_3)};
  with_dtype(dst0_dtype, [&]<typename Cmp>(Cmp) {
    using A = typename Cmp::Storage;
    with_raw_type(dst1_dtype, [&]<typename T>(T) {
      with_predicate(op, [&](auto pred) {
        for_each_channel(dst0, src, [&](int64_t count, int n, int c, const uint8_t *pa, int64_t sa,
                                        const uint8_t *pb, int64_t sb, const uint8_t *px, int64_t sx,
                                        const uint8_t *py, int64_t sy) {
          auto *d0 = reinterpret_cast<A *>(dst0.channel(n, c));
          auto *d1 = reinterpret_cast<T *>(dst1.channel(n, c));
          const auto *a = reinterpret_cast<const A *>(pa);
          const auto *b = reinterpret_cast<const A *>(pb);
          const auto *x = reinterpret_cast<const T *>(px);
          const auto *y = reinterpret_cast<const T *>(py);
          for (int64_t i = 0; i < count; ++i) {
            // Every input of the element is read before either output is
            // written: the outputs may alias the inputs.
            const A av = a[i * sa], bv = b[i * sb];
            const T xv = x[i * sx], yv = y[i * sy];
            const bool first = pred(Cmp::load(av), Cmp::load(bv));
            d0[i] = first ? av : bv;
            d1[i] = first ? xv : yv;
          }
        });
      });
    });
  });
  note_reads(ctx, src);
  // One command with two results, paced by the wider result dtype.
  book(ctx, api, BdcCost::select, dst1, dst1_dtype, {&dst0, &dst1}, {});
}

}  // namespace cmodel::bdc
