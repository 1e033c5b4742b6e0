#include "matmul.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "elementwise.h"

namespace cmodel::bdc {
namespace {

constexpr int limit = 65535;

void require_size(const char *name, int value) {
  if (value < 1 || value > limit)
    fail(ErrorKind::illegal_command, "{} = {}: each matrix size must be in [1, {}]", name, value, limit);
}

// The logical sizes of the product and the stored shape of each operand
// (tier-3 spec §2.2).
struct Geometry {
  int M, K, N;
  int left_rows, left_cols;    // as stored
  int right_rows, right_cols;  // as stored
  bool left_transposed;        // stored [K x M]
  bool right_transposed;       // stored [N x K]
};

Geometry geometry(const FpMatmul &mm) {
  const int lr = mm.left_rows, lc = mm.left_cols, r = mm.right_size;
  switch (mm.layout) {
    case MmLayout::plain: return {lr, lc, r, lr, lc, lc, r, false, false};
    case MmLayout::right_trans: return {lr, lc, r, lr, lc, r, lc, false, true};
    case MmLayout::all_trans: break;
  }
  return {lc, lr, r, lr, lc, r, lr, true, true};
}

void require_npu0(const TensorRef &t, const char *role, const char *layout) {
  if (t.start_npu != 0)
    fail(ErrorKind::illegal_command, "{} local address {:#x} starts on NPU {}; {} must start on NPU 0", role, t.addr,
         t.start_npu, layout);
}

// A stored r x c matrix: the aligned tensor (1, r, 1, c) on NPU 0.
TensorRef matrix(Context &ctx, const char *role, local_addr_t addr, int rows, int cols, data_type_t dtype) {
  const TensorRef t = operand(ctx, role, addr, {1, rows, 1, cols}, nullptr, dtype);
  require_npu0(t, role, "a matrix of this command (one row per channel, row i on NPU i % NPU_NUM)");
  return t;
}

// An operand read as fp32 values: element (i, k) is
// data[i * row_step + k * col_step]; a constant has both steps 0.
struct Values {
  std::vector<float> data;
  int64_t row_step = 0, col_step = 0;
  const float *row(int64_t i) const { return data.data() + i * row_step; }
};

Values constant(float value) { return {{value}, 0, 0}; }

// The rows of a (1, rows, 1, cols) tensor, or their transpose when
// `transpose` (then element (j, i) is stored row i, column j).
Values load(const TensorRef &t, bool transpose) {
  const int64_t rows = t.shape.c, cols = t.shape.w;
  Values v{std::vector<float>(size_t(rows * cols)), transpose ? rows : cols, 1};
  with_float_codec(t.dtype, [&]<typename Codec>(Codec) {
    using S = typename Codec::Storage;
    for (int64_t i = 0; i < rows; ++i) {
      const S *p = reinterpret_cast<const S *>(t.channel(0, int(i)));
      for (int64_t j = 0; j < cols; ++j) v.data[size_t(transpose ? j * rows + i : i * cols + j)] = Codec::load(p[j]);
    }
  });
  return v;
}

float scalar_as_float(scalar_t value, data_type_t dtype) {
  return with_float_codec(dtype, [&]<typename Codec>(Codec) { return float(scalar_value<Codec>(value)); });
}

// The logical left [M x K] (or right, as [N x K]) operand.
Values operand_values(const MmOperand &o, const TensorRef *t, bool transpose, data_type_t dtype) {
  return o.is_const ? constant(scalar_as_float(o.value, dtype)) : load(*t, transpose);
}

// The bias tensor: per-lane copies of b[N] (row m reads lane m % NPU_NUM)
// or, for all_trans, one compact vector b[N] spread over the lanes.
TensorRef bias_tensor(Context &ctx, const FpMatmul &mm, const Geometry &g) {
  const data_type_t dtype = mm.bias.dtype;
  if (!g.left_transposed) {
    const int lanes = std::min(g.M, ctx.chip.npu_num);
    const TensorRef t = operand(ctx, "bias", mm.bias.addr, {1, lanes, 1, g.N}, nullptr, dtype);
    require_npu0(t, "bias", "the bias (one copy of the N values on each NPU, as tpu_bdc_npu_bcast writes it)");
    return t;
  }
  const dim4 shape{1, g.N, 1, 1};
  const dim4 stride = compact_stride(ctx.chip, 0, shape);
  const TensorRef t = operand(ctx, "bias", mm.bias.addr, shape, &stride, dtype);
  require_npu0(t, "bias", "the bias of an all_trans product (compact [1, N, 1, 1], value n on NPU n % NPU_NUM)");
  if (mm.bias.addr % ctx.chip.local_mem_bytes % 4 != 0)
    fail(ErrorKind::illegal_command,
         "bias local address {:#x}: the compact bias of an all_trans product must be at an offset that is a multiple "
         "of 4 bytes",
         mm.bias.addr);
  return t;
}

// One row per lane (as loaded) or one shared row.
Values bias_values(const TensorRef &t, bool compact) {
  if (!compact) return load(t, false);
  Values v = load(t, true);  // [N x 1] read as one row of N values
  v.row_step = 0;
  return v;
}

void check_dtypes(const FpMatmul &mm) {
  require_float(mm.operand_dtype_name, mm.operand_dtype);
  auto with_fp32 = [&](const char *role, data_type_t dtype) {
    if (mm.operand_dtype == DT_FP32)
      require_dtype(role, dtype, {DT_FP32});
    else
      require_dtype(role, dtype, {mm.operand_dtype, DT_FP32});
  };
  with_fp32("output_dtype", mm.output_dtype);
  if (mm.bias.present) with_fp32("bias_dtype", mm.bias.dtype);
}

// The output written while any input is still being read: legal here (the
// inputs are read first) but not what the hardware does, hence a warning.
void warn_overlaps(Context &ctx, const char *api, const TensorRef &out,
                   std::initializer_list<std::pair<const char *, const TensorRef *>> inputs) {
  for (const auto &[role, t] : inputs)
    if (t && overlapping(out, *t))
      warn(ctx, api,
           fmt::format("output at {:#x} overlaps {} at {:#x}; the cmodel reads every input before writing the "
                       "output, the hardware writes the output while it still reads its inputs",
                       out.addr, role, t->addr));
}

// ceil(MACs / peak) + issue latency; peak MACs per cycle as tier-3 §6.
double cycles(const Context &ctx, const Geometry &g, data_type_t dtype) {
  const ChipSpec &chip = ctx.chip;
  const double peak = dtype == DT_FP32 ? double(chip.npu_num) * eu_num(chip, DT_FP32)
                                       : double(chip.npu_num) * chip.ic_parallel(dtype_bits(dtype)) * 4;
  const double macs = double(g.M) * g.N * g.K;
  return std::ceil(macs / peak) + chip.bdc_issue_cycles;
}

struct Inputs {
  Values left, right, old, bias;
  bool has_bias;
};

// The §1.6 accumulation for every output element, stored once.
template <typename Out>
void multiply(const FpMatmul &mm, const Geometry &g, const Inputs &in, const TensorRef &out, int npu_num) {
  using S = typename Out::Storage;
  const int64_t ls = in.left.col_step, rs = in.right.col_step;
  for (int m = 0; m < g.M; ++m) {
    const float *a = in.left.row(m);
    S *y = reinterpret_cast<S *>(out.channel(0, m));
    for (int n = 0; n < g.N; ++n) {
      const float *b = in.right.row(n);
      float acc = mm.result_add ? in.old.row(m)[n] : 0.0f;
      for (int64_t k = 0; k < g.K; ++k) {
        const float p = a[k * ls] * b[k * rs];  // separate statements: no fused multiply-add
        acc = acc + p;
      }
      if (in.has_bias) acc = acc + in.bias.row(m % npu_num)[n * in.bias.col_step];
      if (mm.do_relu) acc = acc > 0 ? acc : 0.0f;
      y[n] = Out::store(acc);
    }
  }
}

}  // namespace

void fp_matmul(Context &ctx, const char *api, local_addr_t output_addr, const FpMatmul &mm) {
  require_size("left_rows", mm.left_rows);
  require_size("left_cols", mm.left_cols);
  require_size(mm.right_size_name, mm.right_size);
  check_dtypes(mm);
  const Geometry g = geometry(mm);
  const TensorRef out = matrix(ctx, "output", output_addr, g.M, g.N, mm.output_dtype);
  std::optional<TensorRef> left, right, bias;
  if (!mm.left.is_const) left = matrix(ctx, "left", mm.left.addr, g.left_rows, g.left_cols, mm.operand_dtype);
  if (!mm.right.is_const) right = matrix(ctx, "right", mm.right.addr, g.right_rows, g.right_cols, mm.operand_dtype);
  if (mm.bias.present && !mm.bias.is_const) bias = bias_tensor(ctx, mm, g);

  const auto ptr = [](const std::optional<TensorRef> &t) { return t ? &*t : nullptr; };

  // Everything is read before the output is written.
  Inputs in{operand_values(mm.left, ptr(left), g.left_transposed, mm.operand_dtype),
            operand_values(mm.right, ptr(right), !g.right_transposed, mm.operand_dtype),
            mm.result_add ? load(out, false) : Values{},
            {},
            mm.bias.present};
  if (mm.bias.present)
    in.bias = bias ? bias_values(*bias, g.left_transposed) : constant(scalar_as_float(mm.bias.value, mm.bias.dtype));
  with_float_codec(mm.output_dtype,
                   [&]<typename Out>(Out) { multiply<Out>(mm, g, in, out, ctx.chip.npu_num); });

  warn_overlaps(ctx, api, out, {{"left", ptr(left)}, {"right", ptr(right)}, {"bias", ptr(bias)}});
  // The inputs that are tensors, for the race checks (book_cycles takes
  // fixed lists).
  for (const TensorRef *t : {ptr(left), ptr(right), ptr(bias)})
    if (t) ctx.hazards.note(*t, false);
  book_cycles(ctx, api, cycles(ctx, g, mm.operand_dtype), {&out}, {});
}

}  // namespace cmodel::bdc
