#include "matmul.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "elementwise.h"
#include "int_arith.h"
#include "family_rules.h"

namespace cmodel::bdc {
namespace {

constexpr int limit = 65535;

// The 16-bit size fields of the command (MM-4, MM2-11).
void require_size(Rule rule, const char *name, int value) {
  if (value < 1 || value > limit) fail(rule, "{} = {}: each matrix size must be in [1, {}]", name, value, limit);
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

// Y[M x N] from a left stored [M x K] or [K x M] and a right stored
// [K x N] or [N x K].
Geometry product_geometry(int M, int K, int N, bool left_transposed, bool right_transposed) {
  return {M,
          K,
          N,
          left_transposed ? K : M,
          left_transposed ? M : K,
          right_transposed ? N : K,
          right_transposed ? K : N,
          left_transposed,
          right_transposed};
}

Geometry geometry(const FpMatmul &mm) {
  const int lr = mm.left_rows, lc = mm.left_cols, r = mm.right_size;
  switch (mm.layout) {
    case MmLayout::plain: return product_geometry(lr, lc, r, false, false);
    case MmLayout::right_trans: return product_geometry(lr, lc, r, false, true);
    case MmLayout::all_trans: break;
  }
  return product_geometry(lc, lr, r, true, true);  // the float all_trans: M = Lc, K = Lr
}

void require_npu0(Rule rule, const TensorRef &t, const char *role, const char *layout) {
  if (t.start_npu != 0)
    fail(rule, "{} local address {:#x} starts on NPU {}; {} must start on NPU 0", role, t.addr, t.start_npu, layout);
}

// A stored r x c matrix: the aligned tensor (1, r, 1, c) on NPU 0, at
// ALIGN_BYTES (`rule`: MM2-1 for the operands, MM2-2 for the result).
TensorRef matrix(Context &ctx, Rule rule, const char *role, local_addr_t addr, int rows, int cols, data_type_t dtype) {
  require_aligned_start(ctx, rule, role, addr);
  const TensorRef t = operand(ctx, role, addr, {1, rows, 1, cols}, nullptr, dtype);
  require_npu0(rule, t, role, "a matrix of this command (one row per channel, row i on NPU i % NPU_NUM)");
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
  with_float_dtype(t.dtype, [&]<typename D>(D) {
    using S = typename D::Storage;
    for (int64_t i = 0; i < rows; ++i) {
      const S *p = reinterpret_cast<const S *>(t.channel(0, int(i)));
      for (int64_t j = 0; j < cols; ++j) v.data[size_t(transpose ? j * rows + i : i * cols + j)] = D::load(p[j]);
    }
  });
  return v;
}

float scalar_as_float(scalar_t value, data_type_t dtype) {
  return with_float_dtype(dtype, [&]<typename D>(D) { return float(scalar_value<D>(value)); });
}

// The logical left [M x K] (or right, as [N x K]) operand.
Values operand_values(const MmOperand &o, const TensorRef *t, bool transpose, data_type_t dtype) {
  return o.is_const ? constant(scalar_as_float(o.value, dtype)) : load(*t, transpose);
}

// A per-column vector of `words` elements per column (tier-3 §1.3): for an
// untransposed left the NPU-replicated (1, min(M, NPU_NUM), 1, N x words)
// on NPU 0 (row m reads the copy on NPU m % NPU_NUM); for a transposed
// left the compact (1, N, 1, words) on NPU 0, column n on NPU
// n % NPU_NUM, at an offset that is a multiple of `compact_align` bytes.
// `rule` is the vector's placement rule (MM2-3, MM2-13, MM2-14, MM2-15).
TensorRef column_vector(Context &ctx, Rule rule, const char *role, local_addr_t addr, const Geometry &g,
                        data_type_t dtype, int words, int compact_align) {
  if (!g.left_transposed) {
    const int lanes = std::min(g.M, ctx.chip.npu_num);
    require_aligned_start(ctx, rule, role, addr);
    const TensorRef t = operand(ctx, role, addr, {1, lanes, 1, g.N * words}, nullptr, dtype);
    const std::string layout =
        fmt::format("the {} (one copy of the N values on each NPU, as tpu_bdc_npu_bcast writes it)", role);
    require_npu0(rule, t, role, layout.c_str());
    return t;
  }
  require_element_aligned(ctx, rule, role, addr, dtype);
  if (npu_offset(ctx, addr) % compact_align != 0)
    fail(rule,
         "{} local address {:#x}: the compact {} of a transposed-left (all_trans) product must be at an offset that "
         "is a multiple of {} bytes",
         role, addr, role, compact_align);
  const dim4 shape{1, g.N, 1, words};
  const dim4 stride = compact_stride(ctx.chip, 0, shape);
  const TensorRef t = operand(ctx, role, addr, shape, &stride, dtype);
  const std::string layout =
      fmt::format("the {} of a transposed-left product (compact [1, N, 1, {}], column n on NPU n % NPU_NUM)", role,
                  words);
  require_npu0(rule, t, role, layout.c_str());
  return t;
}

TensorRef bias_tensor(Context &ctx, const FpMatmul &mm, const Geometry &g) {
  return column_vector(ctx, Rule::MM2_3, "bias", mm.bias.addr, g, mm.bias.dtype, 1, 4);
}

// One row per lane (as loaded) or one shared row.
Values bias_values(const TensorRef &t, bool compact) {
  if (!compact) return load(t, false);
  Values v = load(t, true);  // [N x 1] read as one row of N values
  v.row_step = 0;
  return v;
}

// The result and bias precisions each operand precision allows.
Rule result_rule(data_type_t operand_dtype) {
  switch (operand_dtype) {
    case DT_FP32: return Rule::MM2_6;
    case DT_FP16: return Rule::MM2_7;
    default: return Rule::MM2_8;
  }
}

void check_dtypes(const FpMatmul &mm) {
  under_rule(Rule::MM2_5, [&] { require_float(mm.operand_dtype_name, mm.operand_dtype); });
  auto with_fp32 = [&](const char *role, data_type_t dtype) {
    under_rule(result_rule(mm.operand_dtype), [&] {
      if (mm.operand_dtype == DT_FP32)
        require_dtype(role, dtype, {DT_FP32});
      else
        require_dtype(role, dtype, {mm.operand_dtype, DT_FP32});
    });
  };
  with_fp32("output_dtype", mm.output_dtype);
  if (mm.bias.present) with_fp32("bias_dtype", mm.bias.dtype);
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

// Rows of the product: acc_r[n] += a_r(k) * right[k][n] for k ascending.
// Each acc_r[n] sees its products in the §1.6 order (one fp32 rounding per
// product and per sum, no fused multiply-add); only independent sums are
// interleaved: R rows and kBlock columns at a time, kept in registers over
// the whole k loop, which the compiler vectorises over n. `right` is
// [K x N], n contiguous; row r's left values are a[r][k * a_step].
constexpr int64_t kBlock = 32;

template <int R>
[[gnu::always_inline]] inline void accumulate_rows(float *const *acc, const float *const *a, int64_t a_step,
                                                   const float *right, int64_t K, int64_t N) {
  int64_t n0 = 0;
  for (; n0 + kBlock <= N; n0 += kBlock) {
    float block[R][kBlock];
    for (int r = 0; r < R; ++r)
      for (int64_t i = 0; i < kBlock; ++i) block[r][i] = acc[r][n0 + i];
    for (int64_t k = 0; k < K; ++k) {
      const float *row = right + k * N + n0;
      for (int r = 0; r < R; ++r) {
        const float a_k = a[r][k * a_step];
        for (int64_t i = 0; i < kBlock; ++i) {
          const float p = a_k * row[i];  // separate statements: no fused multiply-add
          block[r][i] = block[r][i] + p;
        }
      }
    }
    for (int r = 0; r < R; ++r)
      for (int64_t i = 0; i < kBlock; ++i) acc[r][n0 + i] = block[r][i];
  }
  if (n0 == N) return;
  for (int r = 0; r < R; ++r)
    for (int64_t k = 0; k < K; ++k) {
      const float a_k = a[r][k * a_step];
      const float *row = right + k * N;
      for (int64_t n = n0; n < N; ++n) {
        const float p = a_k * row[n];
        acc[r][n] = acc[r][n] + p;
      }
    }
}

void accumulate_2_rows(float *const *acc, const float *const *a, int64_t a_step, const float *right, int64_t K,
                       int64_t N) {
  accumulate_rows<2>(acc, a, a_step, right, K, N);
}
void accumulate_1_row(float *const *acc, const float *const *a, int64_t a_step, const float *right, int64_t K,
                      int64_t N) {
  accumulate_rows<1>(acc, a, a_step, right, K, N);
}

using AccumulateFn = void (*)(float *const *, const float *const *, int64_t, const float *, int64_t, int64_t);

#if defined(__x86_64__) && defined(__GNUC__)
// The same loops compiled for AVX2 (8 floats per vector), chosen at run time.
// "avx2" does not enable FMA, so products and sums stay separately rounded.
[[gnu::target("avx2")]] void accumulate_2_rows_avx2(float *const *acc, const float *const *a, int64_t a_step,
                                                    const float *right, int64_t K, int64_t N) {
  accumulate_rows<2>(acc, a, a_step, right, K, N);
}
[[gnu::target("avx2")]] void accumulate_1_row_avx2(float *const *acc, const float *const *a, int64_t a_step,
                                                   const float *right, int64_t K, int64_t N) {
  accumulate_rows<1>(acc, a, a_step, right, K, N);
}
bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
AccumulateFn accumulate_fn(int rows) {
  if (has_avx2()) return rows == 2 ? accumulate_2_rows_avx2 : accumulate_1_row_avx2;
  return rows == 2 ? accumulate_2_rows : accumulate_1_row;
}
#else
AccumulateFn accumulate_fn(int rows) { return rows == 2 ? accumulate_2_rows : accumulate_1_row; }
#endif

// The §1.6 accumulation for every output element, stored once.
template <typename Out>
void multiply(const FpMatmul &mm, const Geometry &g, const Inputs &in, const TensorRef &out, int npu_num) {
  using S = typename Out::Storage;
  // The right operand as [K x N] with n contiguous (in.right has one row per n).
  std::vector<float> right(size_t(g.K) * size_t(g.N));
  for (int n = 0; n < g.N; ++n) {
    const float *b = in.right.row(n);
    for (int64_t k = 0; k < g.K; ++k) right[size_t(k * g.N + n)] = b[k * in.right.col_step];
  }
  std::vector<float> sums(2 * size_t(g.N));
  for (int m0 = 0; m0 < g.M; m0 += 2) {
    const int rows = std::min(2, g.M - m0);
    float *acc[2] = {sums.data(), sums.data() + g.N};
    const float *a[2] = {in.left.row(m0), in.left.row(m0 + rows - 1)};
    for (int r = 0; r < rows; ++r)
      for (int n = 0; n < g.N; ++n) acc[r][n] = mm.result_add ? in.old.row(m0 + r)[n] : 0.0f;
    accumulate_fn(rows)(acc, a, in.left.col_step, right.data(), g.K, g.N);
    for (int r = 0; r < rows; ++r) {
      const int m = m0 + r;
      S *y = reinterpret_cast<S *>(out.channel(0, m));
      for (int n = 0; n < g.N; ++n) {
        float v = acc[r][n];
        if (in.has_bias) v = v + in.bias.row(m % npu_num)[n * in.bias.col_step];
        if (mm.do_relu) v = v > 0 ? v : 0.0f;
        y[n] = Out::store(v);
      }
    }
  }
}

}  // namespace

void fp_matmul(Context &ctx, const char *api, local_addr_t output_addr, const FpMatmul &mm) {
  require_size(Rule::MM2_11, "left_rows", mm.left_rows);
  require_size(Rule::MM2_11, "left_cols", mm.left_cols);
  require_size(Rule::MM2_11, mm.right_size_name, mm.right_size);
  check_dtypes(mm);
  const Geometry g = geometry(mm);
  const TensorRef out = matrix(ctx, Rule::MM2_2, "output", output_addr, g.M, g.N, mm.output_dtype);
  std::optional<TensorRef> left, right, bias;
  if (!mm.left.is_const)
    left = matrix(ctx, Rule::MM2_1, "left", mm.left.addr, g.left_rows, g.left_cols, mm.operand_dtype);
  if (!mm.right.is_const)
    right = matrix(ctx, Rule::MM2_1, "right", mm.right.addr, g.right_rows, g.right_cols, mm.operand_dtype);
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
  with_float_dtype(mm.output_dtype,
                   [&]<typename Out>(Out) { multiply<Out>(mm, g, in, out, ctx.chip.npu_num); });

  warn_overlaps(ctx, api, out, {{"left", ptr(left)}, {"right", ptr(right)}, {"bias", ptr(bias)}});
  // The inputs that are tensors, for the race checks (book_cycles takes
  // fixed lists).
  for (const TensorRef *t : {ptr(left), ptr(right), ptr(bias)})
    if (t) ctx.hazards.note(*t, false);
  book_cycles(ctx, api, cycles(ctx, g, mm.operand_dtype), {&out}, {});
}

// ---- M1 family ------------------------------------------------------------------------

namespace {

int div_up(int a, int b) { return (a + b - 1) / b; }

// The M1 matrix rows x cols with w columns per channel: the aligned tensor
// (rows, ceil(cols / w), 1, w), at ALIGN_BYTES (`rule`: MM-1, or MM-2 for
// the bias / shift vector).
TensorRef m1_matrix(Context &ctx, Rule rule, const char *role, local_addr_t addr, int rows, int cols, int w,
                    data_type_t dtype) {
  require_aligned_start(ctx, rule, role, addr);
  return operand(ctx, role, addr, {rows, div_up(cols, w), 1, w}, nullptr, dtype);
}

// Element (i, j) of an M1 matrix with w columns per channel.
const uint8_t *m1_at(const TensorRef &t, int i, int j, int w) { return t.at(i, j / w, 0, j % w); }

// rows x cols values of an M1 matrix, row-major, as T (float for FP32,
// int64_t for the integer dtypes).
template <typename T>
std::vector<T> m1_load(const TensorRef &t, int rows, int cols, int w) {
  std::vector<T> v(size_t(rows) * size_t(cols));
  auto read = [&]<typename D>(D) {
    using S = typename D::Storage;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        S raw;
        std::memcpy(&raw, m1_at(t, i, j, w), sizeof raw);
        v[size_t(i) * cols + j] = T(D::load(raw));
      }
  };
  if constexpr (std::is_same_v<T, float>)
    read(Fp32{});
  else
    with_int_dtype(t.dtype, read);
  return v;
}

// x * 2^k for k >= 0, exact while the result fits in 126 bits; beyond that
// a value of at least 2^62 in magnitude with x's sign (enough for every
// saturation below, whose ranges are at most 32 bits).
__int128 shift_left_saturating(__int128 x, int k) {
  if (x == 0 || k == 0) return x;
  const __int128 cap = __int128(1) << 63;
  x = std::clamp(x, -cap, cap);
  return x * (__int128(1) << std::min(k, 62));
}

// The signed shift S(x, net) of §1.4: net >= 0 left, net < 0 right rounded
// with `mode` (right amounts above 63 are 63).
__int128 signed_shift(__int128 x, int net, rounding_mode_t mode) {
  if (net >= 0) return shift_left_saturating(x, net);
  return shift_right_rounded(x, std::min(-net, 63), mode);
}

int64_t saturate(__int128 v, data_type_t dtype) {
  return int64_t(std::clamp<__int128>(v, int_min_of(dtype), int_max_of(dtype)));
}

data_type_t int_dtype_of(int bits, bool is_signed) {
  switch (bits) {
    case 8: return is_signed ? DT_INT8 : DT_UINT8;
    case 16: return is_signed ? DT_INT16 : DT_UINT16;
    default: return is_signed ? DT_INT32 : DT_UINT32;
  }
}

// The dtypes the product reads and writes, checked; the output's is the
// one the hardware writes (int_mm: INT32 / UINT32; int8: the sign rule).
data_type_t m1_check_dtypes(const M1Matmul &mm) {
  switch (mm.kind) {
    case M1Kind::fp32: return DT_FP32;
    case M1Kind::int_mm:
    case M1Kind::int_pcs: {
      under_rule(Rule::MM_5, [&] {
        require_int_dtype(mm.left_dtype_name, mm.left_dtype);
        require_int_dtype("right_dtype", mm.right_dtype);
      });
      if (dtype_bits(mm.left_dtype) != dtype_bits(mm.right_dtype))
        fail(ErrorKind::illegal_command,
             "right_dtype {} is not as wide as {} {}: both operands must be 8-, 16- or 32-bit integers of the same "
             "width",
             dtype_name(mm.right_dtype), mm.left_dtype_name, dtype_name(mm.left_dtype));
      return dtype_is_signed(mm.left_dtype) || dtype_is_signed(mm.right_dtype) ? DT_INT32 : DT_UINT32;
    }
    case M1Kind::int8: break;
  }
  // Integers (MM-5), then the 8- and 16-bit operands tpu_bdc_int8_mm takes.
  under_rule(Rule::MM_5, [&] {
    require_int_dtype(mm.left_dtype_name, mm.left_dtype);
    require_int_dtype("right_dtype", mm.right_dtype);
    require_int_dtype("output_dtype", mm.output_dtype);
  });
  require_dtype(mm.left_dtype_name, mm.left_dtype, {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16});
  require_dtype("right_dtype", mm.right_dtype, {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16});
  if (mm.has_bias) require_dtype("bias_dtype", mm.bias_dtype, {DT_INT32, DT_INT16, DT_UINT16});
  const bool is_signed = !mm.relu && (dtype_is_signed(mm.left_dtype) || dtype_is_signed(mm.right_dtype) ||
                                      (mm.has_bias && dtype_is_signed(mm.bias_dtype)));
  return int_dtype_of(dtype_bits(mm.output_dtype), is_signed);
}

// ceil(MACs / peak) + issue latency: peak NPU_NUM x eu(32-bit) for 32-bit
// operands, NPU_NUM x P x 4 for 8/16-bit ones (tier-3 §6).
double m1_cycles(const Context &ctx, int64_t macs, int bits) {
  const ChipSpec &chip = ctx.chip;
  const double peak = bits >= 32 ? double(chip.npu_num) * eu_num(chip, DT_FP32)
                                 : double(chip.npu_num) * chip.ic_parallel(bits) * 4;
  return std::ceil(double(macs) / peak) + chip.bdc_issue_cycles;
}

}  // namespace

void m1_matmul(Context &ctx, const char *api, local_addr_t output_addr, const M1Matmul &mm) {
  const bool trans = mm.layout == M1Layout::left_trans, lconst = mm.layout == M1Layout::left_const;
  require_size(Rule::MM_4, "left_rows", mm.left_rows);
  require_size(Rule::MM_4, "left_cols", mm.left_cols);
  require_size(Rule::MM_4, "right_cols", mm.right_cols);
  if (!lconst) require_size(Rule::MM_4, "left_cols_per_channel", mm.left_cpc);
  require_size(Rule::MM_4, "right_cols_per_channel", mm.right_cpc);
  const data_type_t out_dtype = m1_check_dtypes(mm);
  if (mm.kind != M1Kind::fp32) under_rule(Rule::MM_6, [&] { require_rounding_mode(mm.rounding_mode); });

  // Y[M x N] = Lg[M x K] R[K x N]; stored right rows = K.
  const int M = trans ? mm.left_cols : mm.left_rows, K = trans ? mm.left_rows : mm.left_cols, N = mm.right_cols;
  const int rw = mm.right_cpc;
  const TensorRef out = m1_matrix(ctx, Rule::MM_1, "output", output_addr, M, N, rw, out_dtype);
  const TensorRef right = m1_matrix(ctx, Rule::MM_1, "right", mm.right, K, N, rw, mm.right_dtype);
  require_same_start_npu(Rule::MM_3, out, "output", right, "right");
  std::optional<TensorRef> left, vec;
  if (!lconst)
    left = m1_matrix(ctx, Rule::MM_1, "left", mm.left, mm.left_rows, mm.left_cols, mm.left_cpc, mm.left_dtype);
  const bool reads_shift = mm.kind == M1Kind::int_pcs && dtype_bits(mm.right_dtype) == 32;
  if (mm.has_bias || reads_shift) {
    const char *role = mm.has_bias ? "bias" : "shift";
    vec = m1_matrix(ctx, Rule::MM_2, role, mm.bias, 1, N, rw, mm.has_bias ? mm.bias_dtype : DT_INT8);
    require_same_start_npu(Rule::MM_2, out, "output", *vec, role);
  }
  const auto ptr = [](const std::optional<TensorRef> &t) { return t ? &*t : nullptr; };

  // Lg(m, k) at lhs[m * ls_m + k * ls_k] (a constant: both steps 0).
  const int64_t ls_m = lconst ? 0 : trans ? 1 : mm.left_cols, ls_k = lconst ? 0 : trans ? mm.left_cols : 1;

  if (mm.kind == M1Kind::fp32) {
    const std::vector<float> lhs =
        lconst ? std::vector<float>{scalar_value<Fp32>(mm.C)} : m1_load<float>(*left, mm.left_rows, mm.left_cols, mm.left_cpc);
    const std::vector<float> rhs = m1_load<float>(right, K, N, rw);
    const std::vector<float> old = mm.result_add ? m1_load<float>(out, M, N, rw) : std::vector<float>{};
    const std::vector<float> bias = mm.has_bias ? m1_load<float>(*vec, 1, N, rw) : std::vector<float>{};
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float acc = mm.result_add ? old[size_t(m) * N + n] : 0.0f;
        for (int k = 0; k < K; ++k) {
          const float p = lhs[size_t(m * ls_m + k * ls_k)] * rhs[size_t(k) * N + n];  // no fused multiply-add
          acc = acc + p;
        }
        if (mm.has_bias) acc = acc + bias[size_t(n)];
        std::memcpy(const_cast<uint8_t *>(m1_at(out, m, n, rw)), &acc, 4);
      }
  } else {
    std::vector<int64_t> lhs;
    if (lconst)
      lhs = {with_int_dtype(mm.left_dtype, [&]<typename D>(D) { return int64_t(scalar_value<D>(mm.C)); })};
    else
      lhs = m1_load<int64_t>(*left, mm.left_rows, mm.left_cols, mm.left_cpc);
    const std::vector<int64_t> rhs = m1_load<int64_t>(right, K, N, rw);
    const bool adds_old = mm.kind == M1Kind::int8 && mm.result_add;
    const std::vector<int64_t> old = adds_old ? m1_load<int64_t>(out, M, N, rw) : std::vector<int64_t>{};
    const std::vector<int64_t> v = vec ? m1_load<int64_t>(*vec, 1, N, rw) : std::vector<int64_t>{};
    const bool wide = dtype_bits(mm.right_dtype) == 32;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        __int128 acc = 0;
        for (int k = 0; k < K; ++k) acc += __int128(lhs[size_t(m * ls_m + k * ls_k)]) * rhs[size_t(k) * N + n];
        __int128 y = acc;
        switch (mm.kind) {
          case M1Kind::int_mm:
            if (wide) y = signed_shift(acc, -mm.shift, mm.rounding_mode);
            break;
          case M1Kind::int_pcs:
            if (wide) y = signed_shift(acc, -int(v[size_t(n)]), mm.rounding_mode);
            break;
          case M1Kind::int8:
            if (mm.has_bias) acc += v[size_t(n)];
            if (adds_old) acc += old[size_t(m) * N + n];
            y = signed_shift(acc, mm.lshift - std::min(mm.rshift, 63), RM_HALF_UP);
            if (mm.relu) y = std::max<__int128>(y, 0);
            break;
          case M1Kind::fp32: break;
        }
        const int64_t r = saturate(y, out_dtype);
        with_int_dtype(out_dtype, [&]<typename D>(D) {
          const typename D::Storage s = D::store(r);
          std::memcpy(const_cast<uint8_t *>(m1_at(out, m, n, rw)), &s, sizeof s);
        });
      }
  }

  warn_overlaps(ctx, api, out, {{"left", ptr(left)}, {"right", &right}, {mm.has_bias ? "bias" : "shift", ptr(vec)}});
  for (const TensorRef *t : {ptr(left), &right, ptr(vec)})
    if (t) ctx.hazards.note(*t, false);
  const int bits = std::max(dtype_bits(mm.left_dtype), dtype_bits(mm.right_dtype));
  book_cycles(ctx, api, m1_cycles(ctx, int64_t(M) * N * K, bits), {&out}, {});
}

// ---- integer M2 family ------------------------------------------------------------------

namespace {

// A matrix or per-column vector read as exact integers: element (i, j) at
// data[i * row_step + j * col_step] (a constant: both steps 0).
struct IntValues {
  std::vector<int64_t> data;
  int64_t row_step = 0, col_step = 0;
  int64_t at(int64_t i, int64_t j) const { return data[size_t(i * row_step + j * col_step)]; }
};

// The rows of a (1, rows, 1, cols) tensor, or their transpose.
IntValues load_int_rows(const TensorRef &t, bool transpose) {
  const int64_t rows = t.shape.c, cols = t.shape.w;
  IntValues v{std::vector<int64_t>(size_t(rows * cols)), transpose ? 1 : cols, transpose ? cols : 1};
  for (int64_t i = 0; i < rows; ++i) load_ints(t.dtype, t.channel(0, int(i)), 1, cols, v.data.data() + i * cols);
  return v;
}

int64_t int_constant(scalar_t value, data_type_t dtype) {
  return with_int_dtype(dtype, [&]<typename D>(D) { return int64_t(scalar_value<D>(value)); });
}

// A per-column vector: row `lane` holds column n's `words` values at
// n * words (the NPU-replicated form: one row per NPU; the compact form of
// a transposed left: one row shared by every output row).
struct ColumnValues {
  IntValues values;
  int words = 1;
  bool replicated = false;
  int64_t get(int m, int npu_num, int n, int word) const {
    return values.at(replicated ? m % npu_num : 0, int64_t(n) * words + word);
  }
};

ColumnValues load_columns(const TensorRef &t, bool replicated, int words) {
  if (replicated) return {load_int_rows(t, false), words, true};
  // Compact (1, N, 1, words): channel n holds column n's words.
  const int N = t.shape.c;
  ColumnValues v{{std::vector<int64_t>(size_t(N) * words), 0, 1}, words, false};
  for (int n = 0; n < N; ++n) load_ints(t.dtype, t.at(0, n, 0, 0), t.stride.w, words, v.values.data.data() + size_t(n) * words);
  return v;
}

ColumnValues constant_columns(int64_t value) { return {{{value}, 0, 0}, 1, false}; }

void check_int_dtypes(const IntMatmul &mm) {
  under_rule(Rule::MM2_12, [&] {
    require_dtype(mm.left_dtype_name, mm.left_dtype, {DT_INT8, DT_UINT8});
    require_dtype(mm.right_dtype_name, mm.right_dtype, {DT_INT8, DT_UINT8});
    require_int_dtype("output_dtype", mm.output_dtype);
  });
  if (mm.zero_point.present) require_dtype(mm.zero_point.name, mm.zero_point.dtype, {DT_INT8, DT_UINT8, DT_INT16});
  if (mm.bias.present) require_dtype(mm.bias.name, mm.bias.dtype, {DT_INT32, DT_UINT32});
}

void check_requant(const IntMmRequant &rq) {
  if (!rq.present) return;
  under_rule(Rule::MM2_16, [&] { require_rounding_mode(rq.mode); });
  if (rq.per_channel) return;  // the tensor's fields are 8 and 16 bits wide
  if (rq.shift < -128 || rq.shift > 127)
    fail(ErrorKind::illegal_command, "requant shift = {}: it must be in [-128, 127] (negative shifts right)", rq.shift);
  if (rq.zero_point < -32768 || rq.zero_point > 32767)
    fail(ErrorKind::illegal_command, "requant yzp = {}: it must be in [-32768, 32767]", rq.zero_point);
}

// A per-column vector operand: a constant or its tensor (checked, noted in
// `tensors` for the overlap and race checks).
ColumnValues column_operand(Context &ctx, Rule rule, const IntMmVector &v, const Geometry &g, int align,
                            std::optional<TensorRef> &tensor) {
  if (v.value.is_const) return constant_columns(int_constant(v.value.value, v.dtype));
  tensor = column_vector(ctx, rule, v.name, v.value.addr, g, v.dtype, 1, align);
  return load_columns(*tensor, !g.left_transposed, 1);
}

// The requant parameters of output element (m, n): per channel, the two
// words of column n (m; σ in bits 0-7, zp in bits 16-31), or the scalars.
struct RequantColumns {
  bool per_channel = false;
  ColumnValues words;
  int64_t multiplier_ = 1;
  int shift_ = 0, zero_point_ = 0;
  int64_t multiplier(int m, int npu, int n) const { return per_channel ? words.get(m, npu, n, 0) : multiplier_; }
  int shift(int m, int npu, int n) const {
    return per_channel ? int8_t(uint32_t(words.get(m, npu, n, 1)) & 0xff) : shift_;
  }
  int zero_point(int m, int npu, int n) const {
    return per_channel ? int16_t(uint32_t(words.get(m, npu, n, 1)) >> 16) : zero_point_;
  }
};

// What the integer product reads, all loaded before the output is written.
struct IntInputs {
  const IntValues &left, &right;  // Lg [M x K], Rg read as [N x K]
  const ColumnValues &zero_point, &bias;
  const RequantColumns &requant;
  const IntValues &old;  // result_add
};

// The definition of IntMatmul (matmul.h), exactly, for every output element.
void multiply_ints(const IntMatmul &mm, const Geometry &g, const IntInputs &in, const TensorRef &out, int npu) {
  const bool sym = mm.requant.present && mm.requant.sym && dtype_is_signed(mm.output_dtype);
  const int64_t hi = int_max_of(mm.output_dtype), lo = sym ? -hi : int_min_of(mm.output_dtype);
  std::vector<int64_t> row(size_t(g.N));
  for (int m = 0; m < g.M; ++m) {
    for (int n = 0; n < g.N; ++n) {
      const int64_t zn = in.zero_point.get(m, npu, n, 0);
      int64_t acc = 0;  // |acc| < 2^40: 65535 terms of at most 255 x 33023
      for (int k = 0; k < g.K; ++k) acc += in.left.at(m, k) * (in.right.at(n, k) - zn);
      acc += in.bias.get(m, npu, n, 0);
      if (mm.result_add) acc += in.old.at(m, n);
      __int128 v = acc;
      if (mm.requant.present) {
        const RequantColumns &rq = in.requant;
        v = requant_scale(acc, rq.multiplier(m, npu, n), rq.shift(m, npu, n), mm.requant.mode);
        if (mm.relu && v < 0) v = 0;
        v += rq.zero_point(m, npu, n);
      } else if (mm.relu && v < 0) {
        v = 0;
      }
      row[size_t(n)] = int64_t(std::clamp<__int128>(v, lo, hi));
    }
    store_ints(mm.output_dtype, out.channel(0, m), 1, g.N, row.data());
  }
}

}  // namespace

void int_matmul(Context &ctx, const char *api, local_addr_t output_addr, const IntMatmul &mm) {
  require_size(Rule::MM2_11, mm.M_name, mm.M);
  require_size(Rule::MM2_11, mm.K_name, mm.K);
  require_size(Rule::MM2_11, mm.N_name, mm.N);
  if (mm.left_trans && !mm.right_trans)
    fail(Rule::MM2_4,
         "left_trans without right_trans: a transposed left needs a transposed right (the command has no such mode)");
  check_int_dtypes(mm);
  check_requant(mm.requant);
  const Geometry g = product_geometry(mm.M, mm.K, mm.N, mm.left_trans, mm.right_trans);
  const TensorRef out = matrix(ctx, Rule::MM2_2, "output", output_addr, g.M, g.N, mm.output_dtype);
  std::optional<TensorRef> left, right, zp, bias, requant;
  if (!mm.left.is_const)
    left = matrix(ctx, Rule::MM2_1, "left", mm.left.addr, g.left_rows, g.left_cols, mm.left_dtype);
  if (!mm.right.is_const)
    right = matrix(ctx, Rule::MM2_1, "right", mm.right.addr, g.right_rows, g.right_cols, mm.right_dtype);

  // Everything is read before the output is written. Lg as [M x K], Rg as
  // [N x K] (row n of the right's columns).
  const IntValues L = left ? load_int_rows(*left, g.left_transposed)
                           : IntValues{{int_constant(mm.left.value, mm.left_dtype)}, 0, 0};
  const IntValues R = right ? load_int_rows(*right, !g.right_transposed)
                            : IntValues{{int_constant(mm.right.value, mm.right_dtype)}, 0, 0};
  const ColumnValues z =
      mm.zero_point.present ? column_operand(ctx, Rule::MM2_14, mm.zero_point, g, 2, zp) : constant_columns(0);
  const ColumnValues b = mm.bias.present ? column_operand(ctx, Rule::MM2_13, mm.bias, g, 4, bias) : constant_columns(0);
  RequantColumns rq{mm.requant.per_channel, {}, mm.requant.multiplier, mm.requant.shift, mm.requant.zero_point};
  if (mm.requant.present && mm.requant.per_channel) {
    requant = column_vector(ctx, Rule::MM2_15, "requant", mm.requant.addr, g, DT_INT32, 2, 8);
    rq.words = load_columns(*requant, !g.left_transposed, 2);
  }
  const IntValues old = mm.result_add ? load_int_rows(out, false) : IntValues{};

  multiply_ints(mm, g, {L, R, z, b, rq, old}, out, ctx.chip.npu_num);

  const auto ptr = [](const std::optional<TensorRef> &t) { return t ? &*t : nullptr; };
  warn_overlaps(ctx, api, out,
                {{"left", ptr(left)}, {"right", ptr(right)}, {mm.zero_point.name, ptr(zp)}, {mm.bias.name, ptr(bias)},
                 {"requant", ptr(requant)}});
  for (const TensorRef *t : {ptr(left), ptr(right), ptr(zp), ptr(bias), ptr(requant)})
    if (t) ctx.hazards.note(*t, false);
  book_cycles(ctx, api, cycles(ctx, g, DT_INT8), {&out}, {});
}

}  // namespace cmodel::bdc
