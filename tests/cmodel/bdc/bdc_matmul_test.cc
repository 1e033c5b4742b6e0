// bdc_matmul_test: the M1 (columns per channel) family at the end; first the
// float M2 matrix multiply (tpu_bdc_fp_mm and its
// R_trans, all_trans, L_const, R_const forms, each with and without bias;
// cmodel/bdc/matmul.h) on both chips.
//
// Operands are written here as the tier-3 spec's §1.3 M2 layout says: a
// stored r x c matrix is the aligned tensor (1, r, 1, c) on NPU 0, row i on
// NPU i % NPU_NUM (positions from the independent local model). Two
// references, both written here:
//  - the documented rule (§1.6): fp32 accumulation in k order, each product
//    and sum rounded to fp32, bias, relu, one rounding into the output
//    dtype, compared bit for bit over the whole local memory;
//  - a plain double-precision matmul, within 1e-5 (FP32) or the output
//    dtype's precision (spec tpu-kernel-api-current.md §5 item 16).
// Every check's message is asserted.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;

// ---- the sixteen functions ---------------------------------------------------------------

enum class Layout { plain, right_trans, all_trans };

struct Variant {
  const char *name;
  Layout layout;
  bool left_const, right_const;
  bool accumulates;  // has a result_add argument without bias
};

const Variant variants[] = {
    {"fp_mm", Layout::plain, false, false, true},
    {"fp_mm_R_trans", Layout::right_trans, false, false, false},
    {"fp_mm_all_trans", Layout::all_trans, false, false, true},
    {"fp_mm_L_const", Layout::plain, true, false, true},
    {"fp_mm_R_const", Layout::plain, false, true, true},
    {"fp_mm_L_const_R_trans", Layout::right_trans, true, false, false},
    {"fp_mm_L_const_all_trans", Layout::all_trans, true, false, true},
    {"fp_mm_R_const_all_trans", Layout::all_trans, false, true, true},
};
constexpr int variant_count = 8;

struct MmCall {
  int variant;
  bool bias_form;  // the _with_bias function
  local_addr_t out, left, right;
  scalar_t C;
  int lr, lc, r;  // left_rows, left_cols, right_cols / right_rows
  data_type_t out_dt, op_dt, bias_dt;
  bool result_add, bias_is_const, relu;
  var_context_t bias;
};

void mm_kernel(const void *arg) {
  const auto &k = *static_cast<const MmCall *>(arg);
  const local_addr_t o = k.out, l = k.left, r = k.right;
  if (!k.bias_form) {
    switch (k.variant) {
      case 0: tpu_bdc_fp_mm(o, l, r, k.lr, k.lc, k.r, k.out_dt, k.op_dt, k.result_add); break;
      case 1: tpu_bdc_fp_mm_R_trans(o, l, r, k.lr, k.lc, k.r, k.out_dt, k.op_dt); break;
      case 2: tpu_bdc_fp_mm_all_trans(o, l, r, k.lr, k.lc, k.r, k.out_dt, k.op_dt, k.result_add); break;
      case 3: tpu_bdc_fp_mm_L_const(o, r, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt, k.result_add); break;
      case 4: tpu_bdc_fp_mm_R_const(o, l, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt, k.result_add); break;
      case 5: tpu_bdc_fp_mm_L_const_R_trans(o, r, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt); break;
      case 6: tpu_bdc_fp_mm_L_const_all_trans(o, r, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt, k.result_add); break;
      case 7: tpu_bdc_fp_mm_R_const_all_trans(o, l, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt, k.result_add); break;
    }
    return;
  }
  const data_type_t bd = k.bias_dt;
  const bool ra = k.result_add, bc = k.bias_is_const, relu = k.relu;
  switch (k.variant) {
    case 0: tpu_bdc_fp_mm_with_bias(o, l, r, k.lr, k.lc, k.r, k.out_dt, k.op_dt, bd, ra, bc, k.bias, relu); break;
    case 1: tpu_bdc_fp_mm_R_trans_with_bias(o, l, r, k.lr, k.lc, k.r, k.out_dt, k.op_dt, bd, ra, bc, k.bias, relu); break;
    case 2: tpu_bdc_fp_mm_all_trans_with_bias(o, l, r, k.lr, k.lc, k.r, k.out_dt, k.op_dt, bd, ra, bc, k.bias, relu); break;
    case 3: tpu_bdc_fp_mm_L_const_with_bias(o, r, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt, bd, ra, bc, k.bias, relu); break;
    case 4: tpu_bdc_fp_mm_R_const_with_bias(o, l, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt, bd, ra, bc, k.bias, relu); break;
    case 5:
      tpu_bdc_fp_mm_L_const_R_trans_with_bias(o, r, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt, bd, ra, bc, k.bias, relu);
      break;
    case 6:
      tpu_bdc_fp_mm_L_const_all_trans_with_bias(o, r, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt, bd, ra, bc, k.bias,
                                                relu);
      break;
    case 7:
      tpu_bdc_fp_mm_R_const_all_trans_with_bias(o, l, k.C, k.lr, k.lc, k.r, k.out_dt, k.op_dt, bd, ra, bc, k.bias,
                                                relu);
      break;
  }
}

std::string api_name(const MmCall &k) {
  return std::string("tpu_bdc_") + variants[k.variant].name + (k.bias_form ? "_with_bias" : "");
}

// ---- the model: sizes and stored shapes (spec tier-3 §2.2) -----------------------------------

struct Sizes {
  int M, K, N;
  int left_rows, left_cols, right_rows, right_cols;  // as stored
};

Sizes sizes_of(Layout layout, int lr, int lc, int r) {
  switch (layout) {
    case Layout::plain: return {lr, lc, r, lr, lc, lc, r};
    case Layout::right_trans: return {lr, lc, r, lr, lc, r, lc};
    case Layout::all_trans: break;
  }
  return {lc, lr, r, lr, lc, r, lr};  // left stored [K x M], right [N x K]
}

// A stored matrix: the aligned tensor (1, rows, 1, cols) on NPU 0.
Tensor matrix(const Chip &chip, uint32_t offset, int rows, int cols, data_type_t t) {
  return aligned(chip, 0, offset, {1, rows, 1, cols}, t);
}
// The compact per-column bias of all_trans products: (1, N, 1, 1), value n
// on NPU n % NPU_NUM at element n / NPU_NUM.
Tensor compact_vector(const Chip &chip, uint32_t offset, int n, data_type_t t) {
  return {local_addr_t(offset), {1, n, 1, 1}, {int(div_up(n, chip.npu)), 1, 1, 1}, t, false};
}

// Host copies of what a call reads, as values.
struct Operands {
  Sizes s;
  std::vector<float> left, right;  // stored row-major
  float C = 0;
  std::vector<float> old;          // [M x N], output dtype values
  std::vector<float> bias;         // per lane [lanes x N] (plain / R_trans), or [N] (all_trans)
  float bias_C = 0;
  bool left_const = false, right_const = false;
  Layout layout = Layout::plain;
  int npu = 64;

  double L(int m, int k) const {
    if (left_const) return C;
    return layout == Layout::all_trans ? left[size_t(k) * s.M + m] : left[size_t(m) * s.K + k];
  }
  double R(int k, int n) const {
    if (right_const) return C;
    return layout == Layout::plain ? right[size_t(k) * s.N + n] : right[size_t(n) * s.K + k];
  }
};

// The documented rule (§1.6), in fp32 step by step (volatile: one rounding
// per step, no fused multiply-add).
float rule(const Operands &o, const MmCall &k, int m, int n) {
  volatile float acc = k.result_add ? o.old[size_t(m) * o.s.N + n] : 0.0f;
  for (int i = 0; i < o.s.K; ++i) {
    volatile float p = float(o.L(m, i)) * float(o.R(i, n));
    acc = acc + p;
  }
  if (k.bias_form) {
    const float b = k.bias_is_const ? o.bias_C
                    : o.layout == Layout::all_trans ? o.bias[size_t(n)]
                                                     : o.bias[size_t(m % o.npu) * o.s.N + n];
    acc = acc + b;
  }
  if (k.bias_form && k.relu && !(acc > 0)) acc = 0.0f;
  return acc;
}

// What the test writes: every operand of `k` placed and filled (values from
// `value(dtype)`, as encodings), with host copies in `o`.
template <typename Value>
Operands place(const Chip &chip, MmCall &k, Value &&value) {
  const Variant &v = variants[k.variant];
  Operands o;
  o.s = sizes_of(v.layout, k.lr, k.lc, k.r);
  o.layout = v.layout;
  o.left_const = v.left_const;
  o.right_const = v.right_const;
  o.npu = chip.npu;
  const Sizes &s = o.s;
  // Regions one after the other, each a multiple of 64 bytes per NPU.
  uint32_t next = 0;
  auto reserve = [&](uint32_t bytes) {
    const uint32_t at = next;
    next += (bytes + 63) / 64 * 64;
    return at;
  };
  const Tensor out = matrix(chip, reserve(aligned_bytes(chip, 0, {1, s.M, 1, s.N}, k.out_dt)), s.M, s.N, k.out_dt);
  k.out = out.addr;
  auto fill = [&](const Tensor &t, std::vector<float> &host, data_type_t dt) {
    host.resize(size_t(t.shape.c) * t.shape.w);
    for_each_index(t.shape, [&](int, int c, int, int w) {
      const uint32_t bits = value(dt);
      set_bits(chip, t, 0, c, 0, w, bits);
      host[size_t(c) * t.shape.w + w] = decode(dt, bits);
    });
  };
  if (!v.left_const) {
    const Tensor t = matrix(chip, reserve(aligned_bytes(chip, 0, {1, s.left_rows, 1, s.left_cols}, k.op_dt)),
                            s.left_rows, s.left_cols, k.op_dt);
    k.left = t.addr;
    fill(t, o.left, k.op_dt);
  }
  if (!v.right_const) {
    const Tensor t = matrix(chip, reserve(aligned_bytes(chip, 0, {1, s.right_rows, 1, s.right_cols}, k.op_dt)),
                            s.right_rows, s.right_cols, k.op_dt);
    k.right = t.addr;
    fill(t, o.right, k.op_dt);
  }
  if (v.left_const || v.right_const) {
    k.C = {};
    k.C.u32 = value(k.op_dt);
    o.C = decode(k.op_dt, k.C.u32);
  }
  if (k.result_add) fill(out, o.old, k.out_dt);
  if (k.bias_form) {
    k.bias = {};
    if (k.bias_is_const) {
      k.bias.scalar.u32 = value(k.bias_dt);
      o.bias_C = decode(k.bias_dt, k.bias.scalar.u32);
    } else if (v.layout == Layout::all_trans) {
      const Tensor t = compact_vector(chip, reserve(uint32_t(div_up(s.N, chip.npu)) * esize(k.bias_dt)), s.N, k.bias_dt);
      k.bias.addr = t.addr;
      fill(t, o.bias, k.bias_dt);
    } else {
      // Every lane its own copy, all different: row m must read lane m % NPU.
      const Tensor t = matrix(chip, reserve(aligned_bytes(chip, 0, {1, chip.npu, 1, s.N}, k.bias_dt)), chip.npu, s.N,
                              k.bias_dt);
      k.bias.addr = t.addr;
      fill(t, o.bias, k.bias_dt);
    }
  }
  return o;
}

MmCall call(int variant, bool bias_form, int lr, int lc, int r, data_type_t out_dt, data_type_t op_dt) {
  MmCall k{};
  k.variant = variant;
  k.bias_form = bias_form;
  k.lr = lr;
  k.lc = lc;
  k.r = r;
  k.out_dt = out_dt;
  k.op_dt = op_dt;
  k.bias_dt = op_dt;
  return k;
}

// The fp32 element at local byte 4 * i (a unified local address), for tests
// that lay matrices out by hand.
struct LocalFloats {
  float &operator[](size_t i) const { return *reinterpret_cast<float *>(local_at(4 * i)); }
};

class BdcMatmul : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  Chip chip;
};

// Every function, every dtype combination, sizes past one row of NPUs,
// result_add, relu, bias tensor and constant: the whole local memory is
// what the rule gives (nothing else written).
TEST_P(BdcMatmul, EveryVariantFollowsTheAccumulationRuleBitForBit) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t types[] = {DT_FP32, DT_FP16, DT_BFP16};
  for (int iter = 0; iter < 12 * 2 * variant_count; ++iter) {
    const int variant = iter % variant_count;
    const bool bias_form = (iter / variant_count) % 2 == 1;
    const data_type_t op = types[seeded.uniform(0, 2)];
    const data_type_t out = seeded.uniform(0, 1) ? op : DT_FP32;
    auto size = [&] { return seeded.uniform(0, 3) == 0 ? seeded.uniform(chip.npu + 1, 2 * chip.npu + 5) : seeded.uniform(1, 12); };
    MmCall k = call(variant, bias_form, size(), size(), size(), out, op);
    k.result_add = (bias_form || variants[variant].accumulates) && seeded.uniform(0, 1);
    k.bias_dt = seeded.uniform(0, 1) ? op : DT_FP32;
    k.bias_is_const = seeded.uniform(0, 2) == 0;
    k.relu = seeded.uniform(0, 1);
    const Operands o = place(chip, k, [&](data_type_t t) { return random_float_bits(rng, t, 4); });
    std::vector<uint8_t> expected = snapshot(chip);
    const Tensor out_t = matrix(chip, k.out, o.s.M, o.s.N, k.out_dt);
    for (int m = 0; m < o.s.M; ++m)
      for (int n = 0; n < o.s.N; ++n) put(expected, chip, out_t, 0, m, 0, n, encode(k.out_dt, rule(o, k, m, n)));
    ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << api_name(k) << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return api_name(k) + " " + dtype_label(op) + "->" + dtype_label(out) + " bias " + dtype_label(k.bias_dt) +
             (k.bias_is_const ? " const" : " tensor") + (k.result_add ? " result_add" : "") + (k.relu ? " relu" : "") +
             " sizes " + std::to_string(k.lr) + "," + std::to_string(k.lc) + "," + std::to_string(k.r) +
             " iteration " + std::to_string(iter);
    });
  }
}

// Spec tpu-kernel-api-current.md §5 item 16: tpu_bdc_fp_mm with the
// current header's 9 arguments on (1, rows, 1, cols) operands matches a
// plain double-precision matmul.
TEST_P(BdcMatmul, FpMmMatchesADoublePrecisionMatmul) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  struct Case {
    data_type_t op, out;
    double tolerance;  // relative to sum |L R|
  } cases[] = {{DT_FP32, DT_FP32, 1e-5}, {DT_FP16, DT_FP16, 1e-3}, {DT_FP16, DT_FP32, 1e-5},
               {DT_BFP16, DT_BFP16, 8e-3}, {DT_BFP16, DT_FP32, 1e-5}};
  for (const Case &c : cases) {
    const int M = chip.npu + 7, K = 40, N = 19;  // rows on every NPU, some on two
    MmCall k = call(0, false, M, K, N, c.out, c.op);
    std::uniform_real_distribution<double> u(-1, 1);
    const Operands o = place(chip, k, [&](data_type_t t) { return encode(t, float(u(rng))); });
    ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
    const Tensor out = matrix(chip, k.out, M, N, c.out);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double exact = 0, magnitude = 0;
        for (int i = 0; i < K; ++i) {
          exact += o.L(m, i) * o.R(i, n);
          magnitude += std::fabs(o.L(m, i) * o.R(i, n));
        }
        const double got = decode(c.out, get_bits(chip, out, 0, m, 0, n));
        EXPECT_LE(std::fabs(got - exact), c.tolerance * magnitude)
            << dtype_label(c.op) << "->" << dtype_label(c.out) << " Y[" << m << "][" << n << "]";
      }
  }
}

// By hand: 2 x 3 times 3 x 2 with small integers; row r of each matrix on
// NPU r at the same offset.
TEST_P(BdcMatmul, SmallProductByHand) {
  const uint32_t lmem = chip.lmem;
  const LocalFloats mem{};
  auto at = [&](int npu, uint32_t offset) -> float & { return mem[(npu * lmem + offset) / 4]; };
  const float L[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const float R[3][2] = {{7, 8}, {9, 10}, {11, 12}};
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) at(r, 1024 + 4 * c) = L[r][c];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) at(r, 2048 + 4 * c) = R[r][c];
  MmCall k = call(0, false, 2, 3, 2, DT_FP32, DT_FP32);
  k.left = 1024;
  k.right = 2048;
  ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(at(0, 0), 58.0f);
  EXPECT_EQ(at(0, 4), 64.0f);
  EXPECT_EQ(at(1, 0), 139.0f);
  EXPECT_EQ(at(1, 4), 154.0f);
}

// Row r > NPU_NUM lands on NPU r % NPU_NUM, one aligned row further.
TEST_P(BdcMatmul, RowsPastTheLastNpuWrapToTheNextRowOfNpu0) {
  const int M = chip.npu + 2;
  const Tensor left = matrix(chip, 4096, M, 1, DT_FP32);
  for (int m = 0; m < M; ++m) set<float>(chip, left, 0, m, 0, 0, float(m));
  const LocalFloats mem{};
  mem[8192 / 4] = 2.0f;  // right: 1 x 1 on NPU 0
  MmCall k = call(0, false, M, 1, 1, DT_FP32, DT_FP32);
  k.left = left.addr;
  k.right = 8192;
  ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
  // Row NPU_NUM + 1 is on NPU 1, EU bytes (one aligned row of 1 fp32) in.
  EXPECT_EQ(mem[(chip.lmem + chip.eu_bytes) / 4], 2.0f * float(chip.npu + 1));
  EXPECT_EQ(mem[(chip.lmem) / 4], 2.0f);
}

// Tier-3 §8 example 3: fp_mm_all_trans(Y, L, R, 5, 3, 4, FP32, FP32, false):
// L is (1, 5, 1, 3), R (1, 4, 1, 5), Y (1, 3, 1, 4),
// Y[m][n] = sum_{k<5} L[k][m] R[n][k].
TEST_P(BdcMatmul, WorkedExampleAllTrans) {
  const Tensor L = matrix(chip, 1024, 5, 3, DT_FP32), R = matrix(chip, 2048, 4, 5, DT_FP32),
               Y = matrix(chip, 0, 3, 4, DT_FP32);
  for (int k = 0; k < 5; ++k)
    for (int m = 0; m < 3; ++m) set<float>(chip, L, 0, k, 0, m, float(10 * k + m));
  for (int n = 0; n < 4; ++n)
    for (int k = 0; k < 5; ++k) set<float>(chip, R, 0, n, 0, k, float(n - k));
  MmCall k = call(2, false, 5, 3, 4, DT_FP32, DT_FP32);
  k.left = L.addr;
  k.right = R.addr;
  ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
  for (int m = 0; m < 3; ++m)
    for (int n = 0; n < 4; ++n) {
      double y = 0;
      for (int i = 0; i < 5; ++i) y += double(10 * i + m) * double(n - i);
      EXPECT_EQ(get<float>(chip, Y, 0, m, 0, n), float(y)) << m << "," << n;
    }
  // Y[2][3] by hand: L[k][2] = 2, 12, 22, 32, 42; R[3][k] = 3, 2, 1, 0, -1.
  EXPECT_EQ(get<float>(chip, Y, 0, 2, 0, 3), 6.0f + 24 + 22 + 0 - 42);
}

// The order of §1.6, k ascending in fp32: ((0 + 1) + 1e8) - 1e8 is 0
// (1e8 + 1 rounds back to 1e8); descending order or the exact sum give 1.
TEST_P(BdcMatmul, AccumulatesInFp32InKOrder) {
  const Tensor L = matrix(chip, 1024, 1, 3, DT_FP32), R = matrix(chip, 2048, 3, 1, DT_FP32);
  const float l[3] = {1, 1e8f, -1e8f};
  for (int i = 0; i < 3; ++i) {
    set<float>(chip, L, 0, 0, 0, i, l[i]);
    set<float>(chip, R, 0, i, 0, 0, 1.0f);
  }
  MmCall k = call(0, false, 1, 3, 1, DT_FP32, DT_FP32);
  k.left = L.addr;
  k.right = R.addr;
  ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get<float>(chip, matrix(chip, 0, 1, 1, DT_FP32), 0, 0, 0, 0), 0.0f);
}

// result_add reads the old output in the output dtype; relu maps negatives,
// -0 and NaN to +0 after the bias.
TEST_P(BdcMatmul, ResultAddBiasAndRelu) {
  const Tensor L = matrix(chip, 1024, 4, 1, DT_FP16), R = matrix(chip, 2048, 1, 1, DT_FP16),
               Y = matrix(chip, 0, 4, 1, DT_FP16);
  const float l[4] = {1, -3, -0.0f, 0};
  const float old[4] = {0.5f, 0, -0.0f, NAN};
  for (int m = 0; m < 4; ++m) {
    set_bits(chip, L, 0, m, 0, 0, to_fp16(l[m]));
    set_bits(chip, Y, 0, m, 0, 0, to_fp16(old[m]));
  }
  set_bits(chip, R, 0, 0, 0, 0, to_fp16(2));
  MmCall k = call(0, true, 4, 1, 1, DT_FP16, DT_FP16);
  k.left = L.addr;
  k.right = R.addr;
  k.result_add = true;
  k.bias_is_const = true;
  k.bias_dt = DT_FP32;
  k.bias.scalar.f32 = -0.0f;
  k.relu = true;
  ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get_bits(chip, Y, 0, 0, 0, 0), to_fp16(2.5f));  // 0.5 + 1 * 2 + (-0)
  EXPECT_EQ(get_bits(chip, Y, 0, 1, 0, 0), 0u);             // -6 -> +0
  EXPECT_EQ(get_bits(chip, Y, 0, 2, 0, 0), 0u);             // -0 + (-0 * 2) + -0 = -0 -> +0
  EXPECT_EQ(get_bits(chip, Y, 0, 3, 0, 0), 0u);             // NaN -> +0
}

// A bias tensor of a non-transposed product: row m reads the copy on NPU
// m % NPU_NUM; of an all_trans product: b[n] on NPU n % NPU_NUM.
TEST_P(BdcMatmul, BiasTensorLayouts) {
  const int M = chip.npu + 1, N = chip.npu + 2;
  // fp_mm_R_const_with_bias: L (M x 1) all ones, C = 0: Y[m][n] = bias.
  const Tensor L = matrix(chip, 1024, M, 1, DT_FP32), bias = matrix(chip, 2048, chip.npu, N, DT_FP32);
  for (int m = 0; m < M; ++m) set<float>(chip, L, 0, m, 0, 0, 1.0f);
  for (int lane = 0; lane < chip.npu; ++lane)
    for (int n = 0; n < N; ++n) set<float>(chip, bias, 0, lane, 0, n, float(1000 * lane + n));
  MmCall k = call(4, true, M, 1, N, DT_FP32, DT_FP32);
  k.left = L.addr;
  k.C.f32 = 0;
  k.bias.addr = bias.addr;
  k.out = 16384;
  ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
  const Tensor Y = matrix(chip, 16384, M, N, DT_FP32);
  EXPECT_EQ(get<float>(chip, Y, 0, 3, 0, 5), 3005.0f);
  EXPECT_EQ(get<float>(chip, Y, 0, chip.npu, 0, 5), 5.0f);  // row NPU_NUM: lane 0's copy
  // all_trans: fp_mm_R_const_all_trans_with_bias, L stored [K x M] = 1 x M.
  const Tensor Lt = matrix(chip, 1024, 1, M, DT_FP32);
  for (int m = 0; m < M; ++m) set<float>(chip, Lt, 0, 0, 0, m, 1.0f);
  const Tensor cv = compact_vector(chip, 2048, N, DT_FP32);
  for (int n = 0; n < N; ++n) set<float>(chip, cv, 0, n, 0, 0, float(7 * n));
  k = call(7, true, 1, M, N, DT_FP32, DT_FP32);
  k.left = Lt.addr;
  k.bias.addr = cv.addr;
  k.out = 16384;
  ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
  for (int m : {0, 5, M - 1})
    for (int n : {0, chip.npu, N - 1}) EXPECT_EQ(get<float>(chip, Y, 0, m, 0, n), float(7 * n)) << m << "," << n;
  // By hand: b[NPU_NUM + 1] is the second fp32 of NPU 1 at the bias offset.
  float raw;
  std::memcpy(&raw, local_at(chip.lmem + 2048 + 4), 4);
  EXPECT_EQ(raw, float(7 * (chip.npu + 1)));
}

// The output overlapping an input: computed as if every input were read
// first, with a warning in the run's statistics.
TEST_P(BdcMatmul, OutputOverInputReadsInputsFirstAndWarns) {
  const int M = 3;
  const Tensor A = matrix(chip, 0, M, M, DT_FP32), B = matrix(chip, 1024, M, M, DT_FP32);
  float a[3][3], b[3][3];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < M; ++j) {
      a[i][j] = float(i + 2 * j);
      b[i][j] = float(3 * i - j);
      set<float>(chip, A, 0, i, 0, j, a[i][j]);
      set<float>(chip, B, 0, i, 0, j, b[i][j]);
    }
  MmCall k = call(0, false, M, M, M, DT_FP32, DT_FP32);
  k.out = A.addr;
  k.left = A.addr;
  k.right = B.addr;
  ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < M; ++j) {
      float y = 0;
      for (int t = 0; t < M; ++t) y += a[i][t] * b[t][j];
      EXPECT_EQ(get<float>(chip, A, 0, i, 0, j), y) << i << "," << j;
    }
  const auto warnings = run_stats().at("warnings");
  ASSERT_EQ(warnings.size(), 1u) << warnings.dump();
  const std::string warning = warnings[0].get<std::string>();
  EXPECT_EQ(warning.find("tpu_bdc_fp_mm: output at 0x0 overlaps left at 0x0; the cmodel reads every input before "
                         "writing the output, the hardware writes the output while it still reads its inputs; called "
                         "from "),
            0u)
      << warning;
  EXPECT_NE(warning.find("mm_kernel"), std::string::npos) << warning;
  EXPECT_NE(warning.find("bdc_matmul_test.cc:"), std::string::npos) << warning;
}

// Cost: ceil(M N K / peak) + 16 TIU cycles, peak = NPU x eu(FP32) for FP32
// and NPU x P x 4 for FP16 / BF16 (tier-3 §6); one command counted.
TEST_P(BdcMatmul, CostIsMacsOverPeak) {
  const bool big = chip.name == "bm1684x";
  for (data_type_t t : {DT_FP32, DT_FP16, DT_BFP16}) {
    const int M = 70, K = 33, N = 20;
    MmCall k = call(0, false, M, K, N, t, t);
    place(chip, k, [&](data_type_t dt) { return encode(dt, 1.0f); });
    ASSERT_EQ(cmodel_run(mm_kernel, &k), 0) << cmodel_last_error();
    const double peak = t == DT_FP32 ? (big ? 1024 : 128) : (big ? 8192 : 2048);
    EXPECT_EQ(bdc_cycles(), std::ceil(double(M) * K * N / peak) + 16) << dtype_label(t);
    EXPECT_EQ(run_stats().at("commands").at("tpu_bdc_fp_mm").get<int>(), 1);
  }
}

// ---- checks ----------------------------------------------------------------------------------

struct Bad {
  MmCall k;
  std::string message;
};

TEST_P(BdcMatmul, ChecksNameTheFunctionTheOperandAndTheRule) {
  const local_addr_t npu1 = chip.lmem;
  auto base = [&](int variant, bool bias_form) {
    MmCall k = call(variant, bias_form, 3, 4, 5, DT_FP32, DT_FP32);
    k.out = 0;
    k.left = 4096;
    k.right = 8192;
    k.bias.addr = 12288;
    return k;
  };
  std::vector<Bad> cases;
  auto add = [&](MmCall k, std::string m) { cases.push_back({k, std::move(m)}); };
  {
    MmCall k = base(0, false);
    k.left = npu1 + 4096;
    add(k, "tpu_bdc_fp_mm: left local address " + hex(npu1 + 4096) +
               " starts on NPU 1; a matrix of this command (one row per channel, row i on NPU i % NPU_NUM) must start "
               "on NPU 0");
  }
  {
    MmCall k = base(1, false);
    k.out = 3 * npu1;
    add(k, "tpu_bdc_fp_mm_R_trans: output local address " + hex(3 * npu1) + " starts on NPU 3");
  }
  {
    MmCall k = base(0, true);
    k.bias.addr = npu1 + 12288;
    add(k, "tpu_bdc_fp_mm_with_bias: bias local address " + hex(npu1 + 12288) +
               " starts on NPU 1; the bias (one copy of the N values on each NPU, as tpu_bdc_npu_bcast writes it) "
               "must start on NPU 0");
  }
  {
    MmCall k = base(2, true);
    k.op_dt = k.out_dt = k.bias_dt = DT_FP16;
    k.bias.addr = 12288 + 2;
    add(k, "tpu_bdc_fp_mm_all_trans_with_bias: bias local address 0x3002: the compact bias of a transposed-left (all_trans) "
           "product must be at an offset that is a multiple of 4 bytes");
  }
  {
    MmCall k = base(0, false);
    k.left = 4096 + 4;
    add(k, "tpu_bdc_fp_mm: left local address 0x1004 uses the aligned layout");
  }
  {
    MmCall k = base(0, false);
    k.out = chip.lmem - 64;  // one row of 17 fp32: 68 bytes on NPU 0
    k.lr = 1;
    k.r = 17;
    add(k, "tpu_bdc_fp_mm: output [1, 1, 1, 17] DT_FP32 at local " + hex(chip.lmem - 64) + ": local range [" +
               hex(chip.lmem - 64) + ", " + hex(chip.lmem + 4) + ") of NPU 0 is outside its local memory of " +
               std::to_string(chip.lmem) + " bytes (" + std::to_string(chip.lmem / 1024) + " KiB)");
  }
  {
    MmCall k = base(0, false);
    k.op_dt = DT_INT8;
    add(k, "tpu_bdc_fp_mm: left_right_dtype DT_INT8 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16");
  }
  {
    MmCall k = base(3, false);
    k.op_dt = DT_BFP16;
    k.out_dt = DT_FP16;
    add(k, "tpu_bdc_fp_mm_L_const: output_dtype DT_FP16 is not allowed here; expected one of DT_BFP16, DT_FP32");
  }
  {
    MmCall k = base(4, false);
    k.out_dt = DT_FP16;
    add(k, "tpu_bdc_fp_mm_R_const: output_dtype DT_FP16 is not allowed here; expected one of DT_FP32");
  }
  {
    MmCall k = base(5, true);
    k.op_dt = k.out_dt = DT_FP16;
    k.bias_dt = DT_BFP16;
    add(k, "tpu_bdc_fp_mm_L_const_R_trans_with_bias: bias_dtype DT_BFP16 is not allowed here; expected one of "
           "DT_FP16, DT_FP32");
  }
  {
    MmCall k = base(7, false);
    k.op_dt = DT_UINT16;
    add(k, "tpu_bdc_fp_mm_R_const_all_trans: left_C_dtype DT_UINT16 is not allowed here");
  }
  {
    MmCall k = base(0, false);
    k.lr = 0;
    add(k, "tpu_bdc_fp_mm: left_rows = 0: each matrix size must be in [1, 65535]");
  }
  {
    MmCall k = base(1, false);
    k.r = 65536;
    add(k, "tpu_bdc_fp_mm_R_trans: right_rows = 65536: each matrix size must be in [1, 65535]");
  }
  {
    MmCall k = base(0, false);
    k.r = -1;
    add(k, "tpu_bdc_fp_mm: right_cols = -1: each matrix size must be in [1, 65535]");
  }
  for (const Bad &b : cases) EXPECT_RUN_FAILS_WITH(mm_kernel, &b.k, b.message);
}

// ==== M1 family (columns per channel; tier-3 §2.1) ============================================
//
// Operands are laid out here from plain row-major host matrices into the M1
// layout of §1.3: r x c with w columns per channel is the aligned tensor
// (r, ceil(c / w), 1, w), element (i, j) at (n = i, c = j / w, w = j % w).
// References written here: fp32 — k ascending, one fp32 rounding per
// product and sum, bias last; integers — the exact sum in 128 bits, then
// the §1.4 rounding shift (from its table) and saturation.

enum class M1Fn { fp32, int_mm, int_pcs, int8 };
enum class M1Form { plain, L_trans, L_const };

struct M1Call {
  M1Fn fn;
  M1Form form;
  local_addr_t out, left, right, vec;  // vec: bias or shift vector
  scalar_t C;
  int lr, lc, rc, lw, rw;
  data_type_t out_dt, l_dt, r_dt, b_dt;
  int shift;  // int_mm (char)
  int lshift, rshift;
  rounding_mode_t mode;
  bool has_bias, result_add, relu;
};

void m1_kernel(const void *arg) {
  const auto &k = *static_cast<const M1Call *>(arg);
  const local_addr_t o = k.out, l = k.left, r = k.right, v = k.vec;
  const char sh = char(k.shift);
  const auto ls = (unsigned char)k.lshift, rs = (unsigned char)k.rshift;
  switch (k.fn) {
    case M1Fn::fp32:
      if (k.form == M1Form::plain) tpu_bdc_fp32_mm(o, l, r, v, k.lr, k.lc, k.rc, k.lw, k.rw, k.has_bias, k.result_add);
      if (k.form == M1Form::L_trans)
        tpu_bdc_fp32_mm_L_trans(o, l, r, v, k.lr, k.lc, k.rc, k.lw, k.rw, k.has_bias, k.result_add);
      if (k.form == M1Form::L_const)
        tpu_bdc_fp32_mm_L_const(o, r, v, k.C.f32, k.lr, k.lc, k.rc, k.rw, k.has_bias, k.result_add);
      break;
    case M1Fn::int_mm:
      if (k.form == M1Form::plain) tpu_bdc_int_mm(o, l, r, k.lr, k.lc, k.rc, k.lw, k.rw, k.l_dt, k.r_dt, sh, k.mode);
      if (k.form == M1Form::L_trans)
        tpu_bdc_int_mm_L_trans(o, l, r, k.lr, k.lc, k.rc, k.lw, k.rw, k.l_dt, k.r_dt, sh, k.mode);
      if (k.form == M1Form::L_const) tpu_bdc_int_mm_L_const(o, r, k.C, k.lr, k.lc, k.rc, k.rw, k.l_dt, k.r_dt, sh, k.mode);
      break;
    case M1Fn::int_pcs:
      if (k.form == M1Form::plain) tpu_bdc_int_pcs_mm(o, l, r, v, k.lr, k.lc, k.rc, k.lw, k.rw, k.l_dt, k.r_dt, k.mode);
      if (k.form == M1Form::L_trans)
        tpu_bdc_int_pcs_mm_L_trans(o, l, r, v, k.lr, k.lc, k.rc, k.lw, k.rw, k.l_dt, k.r_dt, k.mode);
      if (k.form == M1Form::L_const)
        tpu_bdc_int_pcs_mm_L_const(o, r, v, k.C, k.lr, k.lc, k.rc, k.rw, k.l_dt, k.r_dt, k.mode);
      break;
    case M1Fn::int8:
      if (k.form == M1Form::plain)
        tpu_bdc_int8_mm(o, l, r, v, k.lr, k.lc, k.rc, k.lw, k.rw, k.out_dt, k.l_dt, k.r_dt, k.b_dt, ls, rs, k.has_bias,
                        k.result_add, k.relu);
      if (k.form == M1Form::L_trans)
        tpu_bdc_int8_mm_L_trans(o, l, r, v, k.lr, k.lc, k.rc, k.lw, k.rw, k.out_dt, k.l_dt, k.r_dt, k.b_dt, ls, rs,
                                k.has_bias, k.result_add, k.relu);
      if (k.form == M1Form::L_const)
        tpu_bdc_int8_mm_L_const(o, r, v, k.C, k.lr, k.lc, k.rc, k.rw, k.out_dt, k.l_dt, k.r_dt, k.b_dt, ls, rs,
                                k.has_bias, k.result_add, k.relu);
      break;
  }
}

std::string m1_name(const M1Call &k) {
  static const char *fns[] = {"fp32_mm", "int_mm", "int_pcs_mm", "int8_mm"};
  static const char *forms[] = {"", "_L_trans", "_L_const"};
  return std::string("tpu_bdc_") + fns[int(k.fn)] + forms[int(k.form)];
}

// The M1 matrix rows x cols, w columns per channel, on `npu` at `offset`.
Tensor m1_tensor(const Chip &chip, int npu, uint32_t offset, int rows, int cols, int w, data_type_t t) {
  return aligned(chip, npu, offset, {rows, int(div_up(cols, w)), 1, w}, t);
}
void m1_put(const Chip &chip, const Tensor &t, int i, int j, uint32_t bits) {
  set_bits(chip, t, i, j / t.shape.w, 0, j % t.shape.w, bits);
}
uint32_t m1_get(const Chip &chip, const Tensor &t, int i, int j) {
  return get_bits(chip, t, i, j / t.shape.w, 0, j % t.shape.w);
}

// §1.4 R(x, k, mode), from its table: q = floor(x / 2^k), r = x - q 2^k.
__int128 rounding_shift(__int128 x, int k, rounding_mode_t mode) {
  if (k > 63) k = 63;
  if (k == 0) return x;
  const __int128 p = __int128(1) << k, h = p / 2;
  __int128 q = x / p;
  if (q * p > x) --q;  // floor
  const __int128 r = x - q * p;
  bool up = false;
  switch (mode) {
    case RM_HALF_TO_EVEN: up = r > h || (r == h && (q & 1) != 0); break;
    case RM_HALF_AWAY_FROM_ZERO: up = r > h || (r == h && x >= 0); break;
    case RM_TOWARDS_ZERO: up = x < 0 && r != 0; break;
    case RM_DOWN: up = false; break;
    case RM_UP: up = r != 0; break;
    case RM_HALF_UP: up = r >= h; break;
    case RM_HALF_DOWN: up = r > h; break;
  }
  return q + (up ? 1 : 0);
}

int64_t clamp_to(__int128 v, data_type_t t) {
  if (v < int_min(t)) return int_min(t);
  if (v > int_max(t)) return int_max(t);
  return int64_t(v);
}

// Host copies and the expected output of one M1 call.
struct M1Setup {
  int M, K, N;
  data_type_t y_dt;                      // what the output holds
  std::vector<uint32_t> expected_bits;   // [M x N]
};

data_type_t int_of(int bytes, bool is_signed) {
  if (bytes == 1) return is_signed ? DT_INT8 : DT_UINT8;
  if (bytes == 2) return is_signed ? DT_INT16 : DT_UINT16;
  return is_signed ? DT_INT32 : DT_UINT32;
}

// Places every operand of `k` (start NPUs `out_npu` for the output, right
// and vector, `left_npu` for the left), fills them with `value(dtype)` bits
// and computes the expected output with the references above.
template <typename Value>
M1Setup m1_place(const Chip &chip, M1Call &k, int out_npu, int left_npu, Value &&value) {
  const bool trans = k.form == M1Form::L_trans, lconst = k.form == M1Form::L_const;
  M1Setup s;
  s.M = trans ? k.lc : k.lr;
  s.K = trans ? k.lr : k.lc;
  s.N = k.rc;
  if (k.fn == M1Fn::fp32) {
    k.l_dt = k.r_dt = k.out_dt = k.b_dt = DT_FP32;
    s.y_dt = DT_FP32;
  } else if (k.fn == M1Fn::int8) {
    const bool sgn = !k.relu && (int_min(k.l_dt) < 0 || int_min(k.r_dt) < 0 || (k.has_bias && int_min(k.b_dt) < 0));
    s.y_dt = int_of(esize(k.out_dt), sgn);
  } else {
    s.y_dt = int_min(k.l_dt) < 0 || int_min(k.r_dt) < 0 ? DT_INT32 : DT_UINT32;
  }
  uint32_t next = 0;
  auto reserve = [&](uint32_t bytes) {
    const uint32_t at = next;
    next += (bytes + 63) / 64 * 64;
    return at;
  };
  auto region = [&](int npu, int rows, int cols, int w, data_type_t t) {
    const dim4 shape{rows, int(div_up(cols, w)), 1, w};
    return m1_tensor(chip, npu, reserve(aligned_bytes(chip, npu, shape, t)), rows, cols, w, t);
  };
  auto fill = [&](const Tensor &t, int rows, int cols, std::vector<uint32_t> &host, data_type_t dt) {
    host.assign(size_t(rows) * cols, 0);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        host[size_t(i) * cols + j] = value(dt);
        m1_put(chip, t, i, j, host[size_t(i) * cols + j]);
      }
  };
  std::vector<uint32_t> L, R, V, old;
  const Tensor out = region(out_npu, s.M, s.N, k.rw, s.y_dt);
  k.out = out.addr;
  if (!lconst) {
    const Tensor t = region(left_npu, k.lr, k.lc, k.lw, k.l_dt);
    k.left = t.addr;
    fill(t, k.lr, k.lc, L, k.l_dt);
  } else {
    k.C = {};
    k.C.u32 = value(k.l_dt);
  }
  const Tensor rt = region(out_npu, s.K, s.N, k.rw, k.r_dt);
  k.right = rt.addr;
  fill(rt, s.K, s.N, R, k.r_dt);
  const bool wide = esize(k.r_dt) == 4 && k.fn != M1Fn::fp32;
  const bool vec = k.has_bias || (k.fn == M1Fn::int_pcs && wide);
  if (vec) {
    const data_type_t vt = k.has_bias ? k.b_dt : DT_INT8;
    const Tensor t = region(out_npu, 1, s.N, k.rw, vt);
    k.vec = t.addr;
    fill(t, 1, s.N, V, vt);
  }
  const bool reads_old = k.result_add && (k.fn == M1Fn::fp32 || k.fn == M1Fn::int8);
  if (reads_old) fill(out, s.M, s.N, old, s.y_dt);
  auto lbits = [&](int m, int kk) -> uint32_t {
    if (lconst) return k.C.u32;
    return trans ? L[size_t(kk) * k.lc + m] : L[size_t(m) * k.lc + kk];
  };
  s.expected_bits.resize(size_t(s.M) * s.N);
  for (int m = 0; m < s.M; ++m)
    for (int n = 0; n < s.N; ++n) {
      uint32_t y;
      if (k.fn == M1Fn::fp32) {
        volatile float acc = k.result_add ? decode(DT_FP32, old[size_t(m) * s.N + n]) : 0.0f;
        for (int i = 0; i < s.K; ++i) {
          volatile float p = decode(DT_FP32, lbits(m, i)) * decode(DT_FP32, R[size_t(i) * s.N + n]);
          acc = acc + p;
        }
        if (k.has_bias) acc = acc + decode(DT_FP32, V[size_t(n)]);
        y = encode(DT_FP32, acc);
      } else {
        __int128 acc = 0;
        for (int i = 0; i < s.K; ++i)
          acc += __int128(int_value(k.l_dt, lbits(m, i))) * int_value(k.r_dt, R[size_t(i) * s.N + n]);
        __int128 v = acc;
        if (k.fn == M1Fn::int8) {
          if (k.has_bias) v += int_value(k.b_dt, V[size_t(n)]);
          if (reads_old) v += int_value(s.y_dt, old[size_t(m) * s.N + n]);
          for (int i = 0; i < k.lshift; ++i) {  // saturating doubling: stays past any 32-bit range
            v *= 2;
            if (v > (__int128(1) << 80)) v = __int128(1) << 80;
            if (v < -(__int128(1) << 80)) v = -(__int128(1) << 80);
          }
          v = rounding_shift(v, k.rshift, RM_HALF_UP);
          if (k.relu && v < 0) v = 0;
        } else if (wide) {
          const int sh = k.fn == M1Fn::int_mm ? k.shift : int(int8_t(V[size_t(n)]));
          if (sh >= 0)
            v = rounding_shift(v, sh, k.mode);
          else
            for (int i = 0; i < -sh && v != 0 && v < (__int128(1) << 80) && v > -(__int128(1) << 80); ++i) v *= 2;
        }
        y = uint32_t(clamp_to(v, s.y_dt));
      }
      s.expected_bits[size_t(m) * s.N + n] = y;
    }
  return s;
}

void expect_m1_output(const Chip &chip, const M1Call &k, const M1Setup &s, std::vector<uint8_t> expected,
                      const std::string &context) {
  const Tensor out = m1_tensor(chip, int(k.out / chip.lmem), k.out % chip.lmem, s.M, s.N, k.rw, s.y_dt);
  const int esz = esize(s.y_dt);
  for (int m = 0; m < s.M; ++m)
    for (int n = 0; n < s.N; ++n) {
      const size_t at = offset_of(chip, out, m, n / k.rw, 0, n % k.rw);
      const uint32_t bits = s.expected_bits[size_t(m) * s.N + n];
      std::memcpy(expected.data() + at, &bits, size_t(esz));
    }
  expect_local_memory(chip, expected, [&] { return context; });
}

// Random full-range bits of an integer dtype, or an fp32 in [-4, 4].
template <typename Rng>
uint32_t m1_value(Rng &rng, data_type_t t) {
  if (t == DT_FP32) return random_float_bits(rng, t, 4);
  std::uniform_int_distribution<uint32_t> u;
  return u(rng);
}

// Every one of the twelve functions with random dtypes, sizes, columns per
// channel, start NPUs, bias, result_add, relu, shifts and rounding modes:
// the whole local memory is the reference's (nothing else written).
TEST_P(BdcMatmul, M1EveryFunctionMatchesTheReference) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t ints[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};
  const data_type_t narrow[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16};
  const data_type_t biases[] = {DT_INT32, DT_INT16, DT_UINT16};
  for (int iter = 0; iter < 12 * 16; ++iter) {
    M1Call k{};
    k.fn = M1Fn(iter % 4);
    k.form = M1Form((iter / 4) % 3);
    auto size = [&] { return seeded.uniform(0, 4) == 0 ? seeded.uniform(chip.npu, 2 * chip.npu + 3) : seeded.uniform(1, 9); };
    k.lr = size();
    k.lc = size();
    k.rc = seeded.uniform(1, 3 * chip.npu);
    k.lw = seeded.uniform(1, 3) == 1 ? seeded.uniform(1, 40) : seeded.uniform(1, 4);
    k.rw = seeded.uniform(1, 3) == 1 ? seeded.uniform(1, 40) : seeded.uniform(1, 4);
    k.mode = rounding_mode_t(seeded.uniform(0, 6));
    switch (k.fn) {
      case M1Fn::fp32: break;
      case M1Fn::int_mm:
      case M1Fn::int_pcs: {
        const int bytes = 1 << seeded.uniform(0, 2);
        k.l_dt = int_of(bytes, seeded.uniform(0, 1));
        k.r_dt = int_of(bytes, seeded.uniform(0, 1));
        k.shift = seeded.uniform(-3, 70);
        break;
      }
      case M1Fn::int8:
        k.l_dt = narrow[seeded.uniform(0, 3)];
        k.r_dt = narrow[seeded.uniform(0, 3)];
        k.out_dt = ints[seeded.uniform(0, 5)];
        k.b_dt = biases[seeded.uniform(0, 2)];
        k.lshift = seeded.uniform(0, 2) == 0 ? seeded.uniform(0, 3) : 0;
        k.rshift = seeded.uniform(0, 40);
        k.relu = seeded.uniform(0, 1);
        break;
    }
    k.has_bias = (k.fn == M1Fn::fp32 || k.fn == M1Fn::int8) && seeded.uniform(0, 1);
    k.result_add = seeded.uniform(0, 1);
    const int out_npu = seeded.uniform(0, chip.npu - 1), left_npu = seeded.uniform(0, chip.npu - 1);
    const M1Setup s = m1_place(chip, k, out_npu, left_npu, [&](data_type_t t) { return m1_value(rng, t); });
    const std::vector<uint8_t> before = snapshot(chip);
    ASSERT_EQ(cmodel_run(m1_kernel, &k), 0) << m1_name(k) << ": " << cmodel_last_error();
    expect_m1_output(chip, k, s, before,
                     m1_name(k) + " " + dtype_label(k.l_dt) + "x" + dtype_label(k.r_dt) + "->" + dtype_label(s.y_dt) +
                         (k.has_bias ? " bias " + dtype_label(k.b_dt) : "") + (k.result_add ? " result_add" : "") +
                         (k.relu ? " relu" : "") + " sizes " + std::to_string(k.lr) + "," + std::to_string(k.lc) +
                         "," + std::to_string(k.rc) + " cpc " + std::to_string(k.lw) + "," + std::to_string(k.rw) +
                         " shift " + std::to_string(k.shift) + " l/r " + std::to_string(k.lshift) + "/" +
                         std::to_string(k.rshift) + " mode " + std::to_string(int(k.mode)) + " iteration " +
                         std::to_string(iter));
  }
}

// Tier-3 §8 example 2: fp32_mm, left 3 x 40, lw 16, on lane 0: local shape
// (3, 3, 1, 16), cs = ns = 16; L[2][37] is on lane 2 at element 37.
TEST_P(BdcMatmul, M1WorkedExampleAddress) {
  const LocalFloats mem{};
  const uint32_t left = 4096, right = 8192;
  // Left (3, 3, 1, 16) on lanes 0..2: 3 rows of 16 fp32 each, all zero
  // but L[2][37], written by hand.
  for (int lane = 0; lane < 3; ++lane)
    for (int e = 0; e < 48; ++e) mem[(lane * chip.lmem + left) / 4 + e] = 0.0f;
  mem[(2 * chip.lmem + left) / 4 + 37] = 3.0f;
  // right 40 x 1, rw 1: R[k][0] is channel 0, element k * ns with ns = eu(FP32).
  const int ns = chip.eu_bytes / 4;
  for (int k = 0; k < 40; ++k) mem[right / 4 + k * ns] = float(k);
  M1Call k{};
  k.fn = M1Fn::fp32;
  k.form = M1Form::plain;
  k.out = 0;
  k.left = left;
  k.right = right;
  k.lr = 3;
  k.lc = 40;
  k.rc = 1;
  k.lw = 16;
  k.rw = 1;
  ASSERT_EQ(cmodel_run(m1_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(mem[0], 0.0f);
  EXPECT_EQ(mem[ns], 0.0f);
  EXPECT_EQ(mem[2 * ns], 3.0f * 37);  // Y[2][0]: row 2 of the output
}

// By hand, integers: int8_mm with bias, result_add, lshift / rshift
// (RM_HALF_UP), relu and the sign rule; int_mm's shift on 32-bit operands
// and its absence on 8-bit ones; the saturation edges.
TEST_P(BdcMatmul, M1IntegerByHand) {
  // 1 x 2 times 2 x 1, everything on NPU 0, one column per channel.
  auto by_hand = [&](M1Call k, std::initializer_list<int64_t> l, std::initializer_list<int64_t> r, int64_t bias,
                     int64_t old, data_type_t y_dt) {
    const Tensor L = m1_tensor(chip, 0, 1024, 1, 2, 1, k.l_dt), R = m1_tensor(chip, 0, 2048, 2, 1, 1, k.r_dt),
                 B = m1_tensor(chip, 0, 3072, 1, 1, 1, k.b_dt), Y = m1_tensor(chip, 0, 0, 1, 1, 1, y_dt);
    int j = 0;
    for (int64_t v : l) m1_put(chip, L, 0, j++, uint32_t(v));
    j = 0;
    for (int64_t v : r) m1_put(chip, R, j++, 0, uint32_t(v));
    m1_put(chip, B, 0, 0, uint32_t(bias));
    m1_put(chip, Y, 0, 0, uint32_t(old));
    k.form = M1Form::plain;
    k.out = 0;
    k.left = L.addr;
    k.right = R.addr;
    k.vec = B.addr;
    k.lr = 1;
    k.lc = 2;
    k.rc = 1;
    k.lw = k.rw = 1;
    EXPECT_EQ(cmodel_run(m1_kernel, &k), 0) << cmodel_last_error();
    return int_value(y_dt, m1_get(chip, Y, 0, 0));
  };
  M1Call k{};
  k.fn = M1Fn::int8;
  k.l_dt = DT_INT8;
  k.r_dt = DT_INT8;
  k.b_dt = DT_INT32;
  k.out_dt = DT_INT8;
  // (-3 * 5 + 7 * 2) = -1; + bias 100 + old -20 = 79; * 2^1 = 158; / 2^2 = 39.5 -> 40.
  k.has_bias = k.result_add = true;
  k.lshift = 1;
  k.rshift = 2;
  EXPECT_EQ(by_hand(k, {-3, 7}, {5, 2}, 100, -20, DT_INT8), 40);
  // (-1 - 78) * 2 / 4 = -39.5 rounds half up to -39.
  EXPECT_EQ(by_hand(k, {-3, 7}, {5, 2}, -78, 0, DT_INT8), -39);
  // Saturation at both edges of INT8: 127 * 127 + 127 * 127 = 32258.
  k.lshift = k.rshift = 0;
  k.has_bias = k.result_add = false;
  EXPECT_EQ(by_hand(k, {127, 127}, {127, 127}, 0, 0, DT_INT8), 127);
  EXPECT_EQ(by_hand(k, {-128, -128}, {127, 127}, 0, 0, DT_INT8), -128);
  // relu: output unsigned (UINT8), negatives 0, 200 stays 200.
  k.relu = true;
  EXPECT_EQ(by_hand(k, {-10, 0}, {10, 0}, 0, 0, DT_UINT8), 0);
  EXPECT_EQ(by_hand(k, {10, 10}, {10, 10}, 0, 0, DT_UINT8), 200);
  // Sign rule: UINT8 x UINT8 with an INT8 output request writes UINT8: 255.
  k.relu = false;
  k.l_dt = k.r_dt = DT_UINT8;
  EXPECT_EQ(by_hand(k, {255, 0}, {1, 0}, 0, 0, DT_UINT8), 255);
  // ... but a signed (INT32) bias makes it signed: 255 - 1 -> INT8 127.
  k.has_bias = true;
  EXPECT_EQ(by_hand(k, {255, 0}, {1, 0}, -1, 0, DT_INT8), 127);
  // int_mm, 32-bit: 2^31-1 * 2 + 1 * 1 = 2^32 - 1; shift 2 (right), RM_HALF_TO_EVEN: 1073741823.75 -> 1073741824.
  M1Call i{};
  i.fn = M1Fn::int_mm;
  i.l_dt = i.r_dt = DT_INT32;
  i.b_dt = DT_INT8;
  i.shift = 2;
  i.mode = RM_HALF_TO_EVEN;
  EXPECT_EQ(by_hand(i, {2147483647, 1}, {2, 1}, 0, 0, DT_INT32), 1073741824);
  // shift 0: saturates to INT32 max; negative shift is a left shift.
  i.shift = 0;
  EXPECT_EQ(by_hand(i, {2147483647, 1}, {2, 1}, 0, 0, DT_INT32), 2147483647);
  i.shift = -3;
  EXPECT_EQ(by_hand(i, {-5, 0}, {1, 0}, 0, 0, DT_INT32), -40);
  EXPECT_EQ(by_hand(i, {-300000000, 0}, {1, 0}, 0, 0, DT_INT32), -2147483648LL);
  // UINT32 x UINT32 -> UINT32: 4294967295 * 1 + 1 * 1 saturates to 4294967295.
  i.l_dt = i.r_dt = DT_UINT32;
  i.shift = 0;
  EXPECT_EQ(by_hand(i, {4294967295LL, 1}, {1, 1}, 0, 0, DT_UINT32), 4294967295LL);
  // 8-bit operands: the shift is ignored (I).
  i.l_dt = i.r_dt = DT_INT8;
  i.shift = 4;
  EXPECT_EQ(by_hand(i, {100, 100}, {100, 100}, 0, 0, DT_INT32), 20000);
}

// Every rounding mode on a tie and off a tie, int_pcs_mm with one shift per
// column (the shift vector on the output's NPU).
TEST_P(BdcMatmul, M1RoundingModesPerColumnShift) {
  // L = [x] (1 x 1), R = [1 1 1 1] (1 x 4), shifts 1, 2, 1, 0: x / 2, x / 4, x / 2, x.
  const int npu = chip.npu - 1;
  const Tensor L = m1_tensor(chip, 3, 1024, 1, 1, 1, DT_INT32), R = m1_tensor(chip, npu, 2048, 1, 4, 2, DT_INT32),
               S = m1_tensor(chip, npu, 3072, 1, 4, 2, DT_INT8), Y = m1_tensor(chip, npu, 0, 1, 4, 2, DT_INT32);
  for (int j = 0; j < 4; ++j) m1_put(chip, R, 0, j, 1);
  const int shifts[4] = {1, 2, 1, 0};
  for (int j = 0; j < 4; ++j) m1_put(chip, S, 0, j, uint32_t(shifts[j]));
  // x = -5: -2.5, -1.25, -2.5, -5; x = 7: 3.5, 1.75, 3.5, 7.
  struct Expect {
    rounding_mode_t mode;
    int neg[2], pos[2];  // results of x/2 and x/4
  } cases[] = {{RM_HALF_TO_EVEN, {-2, -1}, {4, 2}}, {RM_HALF_AWAY_FROM_ZERO, {-3, -1}, {4, 2}},
               {RM_TOWARDS_ZERO, {-2, -1}, {3, 1}}, {RM_DOWN, {-3, -2}, {3, 1}},
               {RM_UP, {-2, -1}, {4, 2}},           {RM_HALF_UP, {-2, -1}, {4, 2}},
               {RM_HALF_DOWN, {-3, -1}, {3, 2}}};
  for (const Expect &e : cases)
    for (int x : {-5, 7}) {
      m1_put(chip, L, 0, 0, uint32_t(x));
      M1Call k{};
      k.fn = M1Fn::int_pcs;
      k.form = M1Form::plain;
      k.out = Y.addr;
      k.left = L.addr;
      k.right = R.addr;
      k.vec = S.addr;
      k.lr = k.lc = 1;
      k.rc = 4;
      k.lw = 1;
      k.rw = 2;
      k.l_dt = k.r_dt = DT_INT32;
      k.mode = e.mode;
      ASSERT_EQ(cmodel_run(m1_kernel, &k), 0) << cmodel_last_error();
      const int *want = x < 0 ? e.neg : e.pos;
      EXPECT_EQ(int32_t(m1_get(chip, Y, 0, 0)), want[0]) << int(e.mode) << " x " << x;
      EXPECT_EQ(int32_t(m1_get(chip, Y, 0, 1)), want[1]) << int(e.mode) << " x " << x;
      EXPECT_EQ(int32_t(m1_get(chip, Y, 0, 2)), want[0]) << int(e.mode) << " x " << x;
      EXPECT_EQ(int32_t(m1_get(chip, Y, 0, 3)), x) << int(e.mode) << " x " << x;
    }
}

// Cost: ceil(M N K / peak) + 16, peak NPU x eu(FP32) for fp32 and 32-bit
// integers, NPU x P x 4 for 8/16-bit operands (tier-3 §6).
TEST_P(BdcMatmul, M1CostIsMacsOverPeak) {
  const bool big = chip.name == "bm1684x";
  struct Case {
    M1Fn fn;
    data_type_t l, r;
    double peak_big, peak_small;
  } cases[] = {{M1Fn::fp32, DT_FP32, DT_FP32, 1024, 128},
               {M1Fn::int8, DT_INT8, DT_UINT8, 16384, 4096},
               {M1Fn::int8, DT_INT8, DT_INT16, 8192, 2048},
               {M1Fn::int_mm, DT_INT32, DT_INT32, 1024, 128}};
  for (const Case &c : cases) {
    M1Call k{};
    k.fn = c.fn;
    k.form = M1Form::plain;
    k.lr = 70;
    k.lc = 33;
    k.rc = 20;
    k.lw = 8;
    k.rw = 4;
    k.l_dt = c.l;
    k.r_dt = c.r;
    k.out_dt = DT_INT32;
    m1_place(chip, k, 0, 0, [](data_type_t) { return 1u; });
    ASSERT_EQ(cmodel_run(m1_kernel, &k), 0) << cmodel_last_error();
    EXPECT_EQ(bdc_cycles(), std::ceil(70.0 * 33 * 20 / (big ? c.peak_big : c.peak_small)) + 16) << m1_name(k);
    EXPECT_EQ(run_stats().at("commands").at(m1_name(k)).get<int>(), 1);
  }
}

struct M1Bad {
  M1Call k;
  std::string message;
};

TEST_P(BdcMatmul, M1ChecksNameTheFunctionTheOperandAndTheRule) {
  const local_addr_t npu1 = chip.lmem;
  auto base = [&](M1Fn fn, M1Form form) {
    M1Call k{};
    k.fn = fn;
    k.form = form;
    k.out = 0;
    k.left = 4096;
    k.right = 8192;
    k.vec = 12288;
    k.lr = 3;
    k.lc = 4;
    k.rc = 5;
    k.lw = k.rw = 2;
    k.l_dt = k.r_dt = DT_INT8;
    k.out_dt = DT_INT8;
    k.b_dt = DT_INT32;
    k.mode = RM_HALF_UP;
    return k;
  };
  std::vector<M1Bad> cases;
  auto add = [&](M1Call k, std::string m) { cases.push_back({k, std::move(m)}); };
  {
    M1Call k = base(M1Fn::fp32, M1Form::plain);
    k.right = npu1 + 8192;
    add(k, "tpu_bdc_fp32_mm: output starts on NPU 0 but right on NPU 1");
  }
  {
    M1Call k = base(M1Fn::fp32, M1Form::L_const);
    k.has_bias = true;
    k.vec = 2 * npu1 + 12288;
    add(k, "tpu_bdc_fp32_mm_L_const: output starts on NPU 0 but bias on NPU 2");
  }
  {
    M1Call k = base(M1Fn::int_pcs, M1Form::plain);
    k.l_dt = k.r_dt = DT_INT32;
    k.vec = npu1 + 12288;
    add(k, "tpu_bdc_int_pcs_mm: output starts on NPU 0 but shift on NPU 1");
  }
  {
    M1Call k = base(M1Fn::int8, M1Form::L_trans);
    k.left = 4096 + 4;
    add(k, "tpu_bdc_int8_mm_L_trans: left local address 0x1004 uses the aligned layout");
  }
  {
    M1Call k = base(M1Fn::int8, M1Form::plain);
    k.left = 5 * npu1 + 4096;  // the left may start anywhere
    k.right = 4 * npu1 + 8192;
    add(k, "tpu_bdc_int8_mm: output starts on NPU 0 but right on NPU 4");
  }
  {
    M1Call k = base(M1Fn::fp32, M1Form::L_trans);
    k.lw = 0;
    add(k, "tpu_bdc_fp32_mm_L_trans: left_cols_per_channel = 0: each matrix size must be in [1, 65535]");
  }
  {
    M1Call k = base(M1Fn::int_mm, M1Form::L_const);
    k.rw = 65536;
    add(k, "tpu_bdc_int_mm_L_const: right_cols_per_channel = 65536: each matrix size must be in [1, 65535]");
  }
  {
    M1Call k = base(M1Fn::int_mm, M1Form::plain);
    k.rc = 0;
    add(k, "tpu_bdc_int_mm: right_cols = 0: each matrix size must be in [1, 65535]");
  }
  {
    M1Call k = base(M1Fn::int_mm, M1Form::plain);
    k.l_dt = DT_FP32;
    add(k, "tpu_bdc_int_mm: left_dtype DT_FP32 is not allowed here");
  }
  {
    M1Call k = base(M1Fn::int_mm, M1Form::L_const);
    k.r_dt = DT_INT16;
    add(k, "tpu_bdc_int_mm_L_const: right_dtype DT_INT16 is not as wide as C_dtype DT_INT8: both operands must be "
           "8-, 16- or 32-bit integers of the same width");
  }
  {
    M1Call k = base(M1Fn::int_pcs, M1Form::L_trans);
    k.mode = rounding_mode_t(7);
    add(k, "tpu_bdc_int_pcs_mm_L_trans: rounding_mode 7 is not a rounding_mode_t");
  }
  {
    M1Call k = base(M1Fn::int8, M1Form::plain);
    k.l_dt = DT_INT32;
    add(k, "tpu_bdc_int8_mm: left_dtype DT_INT32 is not allowed here; expected one of DT_INT8, DT_UINT8, DT_INT16, "
           "DT_UINT16");
  }
  {
    M1Call k = base(M1Fn::int8, M1Form::L_const);
    k.has_bias = true;
    k.b_dt = DT_UINT32;
    add(k, "tpu_bdc_int8_mm_L_const: bias_dtype DT_UINT32 is not allowed here; expected one of DT_INT32, DT_INT16, "
           "DT_UINT16");
  }
  {
    M1Call k = base(M1Fn::int8, M1Form::plain);
    k.out_dt = DT_FP16;
    add(k, "tpu_bdc_int8_mm: output_dtype DT_FP16 is not allowed here");
  }
  for (const M1Bad &b : cases) EXPECT_RUN_FAILS_WITH(m1_kernel, &b.k, b.message);
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcMatmul, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
