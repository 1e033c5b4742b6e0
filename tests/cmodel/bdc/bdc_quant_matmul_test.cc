// bdc_quant_matmul_test: the integer M2 matrix multiply (tier-3 spec §2.2):
// tpu_bdc_int8_zp_mm and tpu_bdc_int8_pc_zp_mm with their R_trans,
// all_trans, L_const, R_const forms, and tpu_bdc_quant_mm, on both chips.
//
// Operands are placed as the spec's §1.3 says (a stored r x c matrix is the
// aligned (1, r, 1, c) on NPU 0; per-column vectors NPU-replicated for an
// untransposed left, compact for a transposed one), from the independent
// local model. The reference is the mathematical definition written
// plainly here in exact integers: sum of L (R - z), + bias, + old output,
// then the requantisation of §1.5 with the rounding right shift of §1.4
// (its own implementation, by floor division), compared over the whole
// local memory. Worked example §8.4 and every check are exact cases.
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

// ---- the reference -------------------------------------------------------------------------

// R(x, k, mode) of tier-3 §1.4: q = floor(x / 2^k), r = x - q 2^k,
// h = 2^(k-1), plus one when the mode's table row says so.
__int128 round_shift(__int128 x, int k, rounding_mode_t mode) {
  if (k == 0) return x;
  if (k > 63) k = 63;
  const __int128 p = __int128(1) << k, h = p / 2;
  __int128 q = x / p;
  if (q * p > x) q -= 1;  // floor for negative x
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

// §1.5: S(acc m, σ), relu, + zp, saturate (sym: signed lower bound -max).
int64_t requantize(int64_t acc, int64_t m, int sigma, int zp, rounding_mode_t mode, bool relu, bool sym,
                   data_type_t out) {
  __int128 v = __int128(acc) * m;
  if (sigma >= 0)
    v *= __int128(1) << sigma;  // tests keep σ small when positive
  else
    v = round_shift(v, -sigma, mode);
  if (relu && v < 0) v = 0;
  v += zp;
  const int64_t hi = int_max(out), lo = sym && int_min(out) < 0 ? -hi : int_min(out);
  return int64_t(v < lo ? lo : v > hi ? hi : v);
}

int64_t saturate(int64_t v, data_type_t out) { return std::min(std::max(v, int_min(out)), int_max(out)); }

// ---- layouts (spec §1.3) ---------------------------------------------------------------------

Tensor matrix(const Chip &chip, uint32_t offset, int rows, int cols, data_type_t t) {
  return aligned(chip, 0, offset, {1, rows, 1, cols}, t);
}
// The compact (1, N, 1, words) on NPU 0: column n on NPU n % NPU_NUM at
// element (n / NPU_NUM) words.
Tensor compact_columns(const Chip &chip, uint32_t offset, int n, int words, data_type_t t) {
  return {local_addr_t(offset), {1, n, 1, words}, {int(div_up(n, chip.npu)) * words, words, words, 1}, t, false};
}

// Bump allocator over NPU 0's offsets (every NPU the same), 64-byte steps.
struct Regions {
  uint32_t next = 0;
  uint32_t take(uint32_t bytes) {
    const uint32_t at = next;
    next += (bytes + 63) / 64 * 64;
    return at;
  }
};

// A per-column vector of `words` values per column, filled with `value()`:
// NPU-replicated (every lane its own values: lane l's copy at [l][n words
// + w]) or compact (one copy, [0][n words + w]).
struct Columns {
  bool replicated = false;
  int words = 1;
  std::vector<std::vector<int64_t>> lanes;
  int64_t get(int m, int npu, int n, int w) const {
    return lanes[size_t(replicated ? m % npu : 0)][size_t(n) * words + w];
  }
};

template <typename Value>
Columns place_columns(const Chip &chip, Regions &mem, bool replicated, int M, int N, int words, data_type_t t,
                      Value &&value, local_addr_t &addr) {
  Columns c;
  c.replicated = replicated;
  c.words = words;
  if (replicated) {
    const int lanes = std::min(M, chip.npu);
    const Tensor v = matrix(chip, mem.take(aligned_bytes(chip, 0, {1, lanes, 1, N * words}, t)), lanes, N * words, t);
    addr = v.addr;
    c.lanes.assign(size_t(lanes), std::vector<int64_t>(size_t(N) * words));
    for (int l = 0; l < lanes; ++l)
      for (int j = 0; j < N * words; ++j) {
        const uint32_t bits = value(t);
        set_bits(chip, v, 0, l, 0, j, bits);
        c.lanes[size_t(l)][size_t(j)] = int_value(t, bits);
      }
    return c;
  }
  const uint32_t offset = mem.take(uint32_t(div_up(N, chip.npu)) * words * esize(t));
  const Tensor v = compact_columns(chip, offset, N, words, t);
  addr = v.addr;
  c.lanes.assign(1, std::vector<int64_t>(size_t(N) * words));
  for (int n = 0; n < N; ++n)
    for (int w = 0; w < words; ++w) {
      const uint32_t bits = value(t);
      set_bits(chip, v, 0, n, 0, w, bits);
      c.lanes[0][size_t(n) * words + w] = int_value(t, bits);
    }
  return c;
}

// ---- the zp families -------------------------------------------------------------------------

enum class Layout { plain, right_trans, all_trans };

struct ZpVariant {
  const char *name;
  Layout layout;
  bool left_const, right_const, accumulates;
};
const ZpVariant zp_variants[] = {
    {"zp_mm", Layout::plain, false, false, true},
    {"zp_mm_R_trans", Layout::right_trans, false, false, false},
    {"zp_mm_all_trans", Layout::all_trans, false, false, true},
    {"zp_mm_L_const", Layout::plain, true, false, true},
    {"zp_mm_R_const", Layout::plain, false, true, true},
    {"zp_mm_L_const_R_trans", Layout::right_trans, true, false, false},
    {"zp_mm_L_const_all_trans", Layout::all_trans, true, false, true},
    {"zp_mm_R_const_all_trans", Layout::all_trans, false, true, true},
};

struct ZpCall {
  int variant;
  bool per_column;  // the int8_pc_zp_mm family
  local_addr_t out, left, right, zp_addr;
  scalar_t C, zp;
  int lr, lc, r;
  data_type_t left_dt, right_dt;
  bool result_add;
};

void zp_kernel(const void *arg) {
  const auto &k = *static_cast<const ZpCall *>(arg);
  const local_addr_t o = k.out, l = k.left, r = k.right, z = k.zp_addr;
  const data_type_t ld = k.left_dt, rd = k.right_dt;
  const bool ra = k.result_add;
  if (!k.per_column) {
    switch (k.variant) {
      case 0: tpu_bdc_int8_zp_mm(o, l, r, k.zp, k.lr, k.lc, k.r, ld, rd, ra); break;
      case 1: tpu_bdc_int8_zp_mm_R_trans(o, l, r, k.zp, k.lr, k.lc, k.r, ld, rd); break;
      case 2: tpu_bdc_int8_zp_mm_all_trans(o, l, r, k.zp, k.lr, k.lc, k.r, ld, rd, ra); break;
      case 3: tpu_bdc_int8_zp_mm_L_const(o, r, k.C, k.zp, k.lr, k.lc, k.r, ld, rd, ra); break;
      case 4: tpu_bdc_int8_zp_mm_R_const(o, l, k.C, k.zp, k.lr, k.lc, k.r, ld, rd, ra); break;
      case 5: tpu_bdc_int8_zp_mm_L_const_R_trans(o, r, k.C, k.zp, k.lr, k.lc, k.r, ld, rd); break;
      case 6: tpu_bdc_int8_zp_mm_L_const_all_trans(o, r, k.C, k.zp, k.lr, k.lc, k.r, ld, rd, ra); break;
      case 7: tpu_bdc_int8_zp_mm_R_const_all_trans(o, l, k.C, k.zp, k.lr, k.lc, k.r, ld, rd, ra); break;
    }
    return;
  }
  switch (k.variant) {
    case 0: tpu_bdc_int8_pc_zp_mm(o, l, r, z, k.lr, k.lc, k.r, ld, rd, ra); break;
    case 1: tpu_bdc_int8_pc_zp_mm_R_trans(o, l, r, z, k.lr, k.lc, k.r, ld, rd); break;
    case 2: tpu_bdc_int8_pc_zp_mm_all_trans(o, l, r, z, k.lr, k.lc, k.r, ld, rd, ra); break;
    case 3: tpu_bdc_int8_pc_zp_mm_L_const(o, r, z, k.C, k.lr, k.lc, k.r, ld, rd, ra); break;
    case 4: tpu_bdc_int8_pc_zp_mm_R_const(o, l, z, k.C, k.lr, k.lc, k.r, ld, rd, ra); break;
    case 5: tpu_bdc_int8_pc_zp_mm_L_const_R_trans(o, r, z, k.C, k.lr, k.lc, k.r, ld, rd); break;
    case 6: tpu_bdc_int8_pc_zp_mm_L_const_all_trans(o, r, z, k.C, k.lr, k.lc, k.r, ld, rd, ra); break;
    case 7: tpu_bdc_int8_pc_zp_mm_R_const_all_trans(o, l, z, k.C, k.lr, k.lc, k.r, ld, rd, ra); break;
  }
}

std::string zp_name(const ZpCall &k) {
  return std::string(k.per_column ? "tpu_bdc_int8_pc_" : "tpu_bdc_int8_") + zp_variants[k.variant].name;
}

// Host copies of a product's operands: L(m, k), R(k, n) as the spec's
// table reads the stored matrices.
struct Product {
  int M = 0, K = 0, N = 0;
  bool left_trans = false, right_trans = false;
  bool left_const = false, right_const = false;
  int64_t left_C = 0, right_C = 0;
  std::vector<int64_t> left, right;  // stored row-major
  int64_t L(int m, int k) const {
    if (left_const) return left_C;
    return left_trans ? left[size_t(k) * M + m] : left[size_t(m) * K + k];
  }
  int64_t R(int k, int n) const {
    if (right_const) return right_C;
    return right_trans ? right[size_t(n) * K + k] : right[size_t(k) * N + n];
  }
};

// A random 8-bit operand value, over the whole range.
template <typename Rng>
uint32_t any_bits(Rng &rng, data_type_t t) {
  return uint32_t(rng()) & dtype_mask(t);
}

// Places the stored left and right (or picks the constants), filled at random.
template <typename Rng>
void place_operands(const Chip &chip, Regions &mem, Rng &rng, Product &p, data_type_t left_dt, data_type_t right_dt,
                    local_addr_t &left, local_addr_t &right, scalar_t &C_left, scalar_t &C_right) {
  auto fill = [&](int rows, int cols, data_type_t t, std::vector<int64_t> &host) {
    const Tensor m = matrix(chip, mem.take(aligned_bytes(chip, 0, {1, rows, 1, cols}, t)), rows, cols, t);
    host.resize(size_t(rows) * cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const uint32_t bits = any_bits(rng, t);
        set_bits(chip, m, 0, i, 0, j, bits);
        host[size_t(i) * cols + j] = int_value(t, bits);
      }
    return m.addr;
  };
  if (p.left_const) {
    C_left = {};
    C_left.u32 = any_bits(rng, left_dt);
    p.left_C = int_value(left_dt, C_left.u32);
  } else {
    left = p.left_trans ? fill(p.K, p.M, left_dt, p.left) : fill(p.M, p.K, left_dt, p.left);
  }
  if (p.right_const) {
    C_right = {};
    C_right.u32 = any_bits(rng, right_dt);
    p.right_C = int_value(right_dt, C_right.u32);
  } else {
    right = p.right_trans ? fill(p.N, p.K, right_dt, p.right) : fill(p.K, p.N, right_dt, p.right);
  }
}

class BdcQuantMatmul : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  Chip chip;
  // The dtype of a per-column zero-point tensor of the zp families (§2.2,
  // §7.7): INT16 on bm1688, the right operand's dtype on bm1684x.
  data_type_t pc_zp_dtype(data_type_t right) const { return chip.name == "bm1688" ? DT_INT16 : right; }
};

// Every zp-family function, INT8 / UINT8 on each side, sizes past one row
// of NPUs, result_add over old outputs near the INT32 limits: the whole
// local memory is what the definition gives.
TEST_P(BdcQuantMatmul, ZpFamiliesMatchTheDefinition) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t eight[] = {DT_INT8, DT_UINT8};
  for (int iter = 0; iter < 12 * 16; ++iter) {
    ZpCall k{};
    k.variant = iter % 8;
    k.per_column = (iter / 8) % 2 == 1;
    const ZpVariant &v = zp_variants[k.variant];
    auto size = [&] {
      return seeded.uniform(0, 3) == 0 ? seeded.uniform(chip.npu + 1, 2 * chip.npu + 5) : seeded.uniform(1, 12);
    };
    k.lr = size();
    k.lc = seeded.uniform(0, 3) == 0 ? seeded.uniform(60, 140) : seeded.uniform(1, 12);
    k.r = size();
    k.left_dt = eight[seeded.uniform(0, 1)];
    k.right_dt = eight[seeded.uniform(0, 1)];
    k.result_add = v.accumulates && seeded.uniform(0, 1);
    Product p;
    p.M = k.lr;
    p.K = k.lc;
    p.N = k.r;
    p.left_trans = v.layout == Layout::all_trans;
    p.right_trans = v.layout != Layout::plain;
    p.left_const = v.left_const;
    p.right_const = v.right_const;
    Regions mem;
    const Tensor out = matrix(chip, mem.take(aligned_bytes(chip, 0, {1, p.M, 1, p.N}, DT_INT32)), p.M, p.N, DT_INT32);
    k.out = out.addr;
    scalar_t left_C{}, right_C{};
    place_operands(chip, mem, rng, p, k.left_dt, k.right_dt, k.left, k.right, left_C, right_C);
    k.C = p.left_const ? left_C : right_C;
    // The zero point: a scalar read as INT16 (its low 16 bits, signed), or
    // a per-column tensor.
    Columns z;
    int64_t zp_scalar = 0;
    if (k.per_column) {
      z = place_columns(chip, mem, !p.left_trans, p.M, p.N, 1, pc_zp_dtype(k.right_dt),
                        [&](data_type_t t) { return any_bits(rng, t); }, k.zp_addr);
    } else {
      k.zp = {};
      k.zp.u32 = uint32_t(rng());  // the upper 16 bits are ignored
      zp_scalar = int16_t(k.zp.u32 & 0xffff);
    }
    std::vector<int64_t> old(size_t(p.M) * p.N);
    if (k.result_add)
      for (int m = 0; m < p.M; ++m)
        for (int n = 0; n < p.N; ++n) {
          const uint32_t bits = seeded.uniform(0, 3) == 0 ? uint32_t(rng()) : uint32_t(seeded.uniform(-1000, 1000));
          set_bits(chip, out, 0, m, 0, n, bits);
          old[size_t(m) * p.N + n] = int32_t(bits);
        }
    std::vector<uint8_t> expected = snapshot(chip);
    for (int m = 0; m < p.M; ++m)
      for (int n = 0; n < p.N; ++n) {
        const int64_t zn = k.per_column ? z.get(m, chip.npu, n, 0) : zp_scalar;
        int64_t acc = 0;
        for (int i = 0; i < p.K; ++i) acc += p.L(m, i) * (p.R(i, n) - zn);
        if (k.result_add) acc += old[size_t(m) * p.N + n];
        put(expected, chip, out, 0, m, 0, n, uint32_t(saturate(acc, DT_INT32)));
      }
    ASSERT_EQ(cmodel_run(zp_kernel, &k), 0) << zp_name(k) << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return zp_name(k) + " " + dtype_label(k.left_dt) + " x " + dtype_label(k.right_dt) +
             (k.result_add ? " result_add" : "") + " sizes " + std::to_string(k.lr) + "," + std::to_string(k.lc) +
             "," + std::to_string(k.r) + " iteration " + std::to_string(iter);
    });
  }
}

// By hand, on NPU 0 .. 1: L = [[1, 2], [3, 4]] (INT8), R = [[5, 6], [7, 8]]
// (UINT8), zero point 5: L (R - 5) = [[1 0 + 2 2, 1 1 + 2 3], [3 0 + 4 2,
// 3 1 + 4 3]] = [[4, 7], [8, 15]]. all_trans with the same stored left
// reads it as [K x M]: Lg = [[1, 3], [2, 4]], right [N x K].
TEST_P(BdcQuantMatmul, SmallProductsByHand) {
  const Tensor L = matrix(chip, 1024, 2, 2, DT_INT8), R = matrix(chip, 2048, 2, 2, DT_UINT8),
               Y = matrix(chip, 0, 2, 2, DT_INT32);
  const int l[2][2] = {{1, 2}, {3, 4}}, r[2][2] = {{5, 6}, {7, 8}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      set<int8_t>(chip, L, 0, i, 0, j, int8_t(l[i][j]));
      set<uint8_t>(chip, R, 0, i, 0, j, uint8_t(r[i][j]));
    }
  ZpCall k{};
  k.out = Y.addr;
  k.left = L.addr;
  k.right = R.addr;
  k.zp.s16 = 5;
  k.lr = k.lc = k.r = 2;
  k.left_dt = DT_INT8;
  k.right_dt = DT_UINT8;
  ASSERT_EQ(cmodel_run(zp_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get<int32_t>(chip, Y, 0, 0, 0, 0), 4);
  EXPECT_EQ(get<int32_t>(chip, Y, 0, 0, 0, 1), 7);
  EXPECT_EQ(get<int32_t>(chip, Y, 0, 1, 0, 0), 8);
  EXPECT_EQ(get<int32_t>(chip, Y, 0, 1, 0, 1), 15);
  // all_trans: Y[m][n] = sum_k L[k][m] (R[n][k] - 5):
  // Y[0][0] = 1 0 + 3 1 = 3, Y[0][1] = 1 2 + 3 3 = 11, Y[1][0] = 2 0 + 4 1 = 4, Y[1][1] = 2 2 + 4 3 = 16.
  k.variant = 2;
  ASSERT_EQ(cmodel_run(zp_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get<int32_t>(chip, Y, 0, 0, 0, 0), 3);
  EXPECT_EQ(get<int32_t>(chip, Y, 0, 0, 0, 1), 11);
  EXPECT_EQ(get<int32_t>(chip, Y, 0, 1, 0, 0), 4);
  EXPECT_EQ(get<int32_t>(chip, Y, 0, 1, 0, 1), 16);
}

// ---- quant_mm ---------------------------------------------------------------------------------

enum class Source { none, constant, tensor };

struct QmCall {
  local_addr_t out;
  data_type_t out_dt;
  optional_info_t left, right, rzp, bias;
  bool has_rzp, has_bias, has_requant;
  requant_int_info_t requant;
  int M, K, N;
  bool left_trans, right_trans, result_add, relu;
};

void qm_kernel(const void *arg) {
  auto k = *static_cast<const QmCall *>(arg);  // a copy: the API takes non-const pointers
  tpu_bdc_quant_mm(k.out, k.out_dt, &k.left, &k.right, k.M, k.K, k.N, k.left_trans, k.right_trans, k.result_add,
                   k.relu, k.has_rzp ? &k.rzp : nullptr, k.has_bias ? &k.bias : nullptr,
                   k.has_requant ? &k.requant : nullptr);
}

// Random products over every output dtype, both operand signednesses,
// each transpose combination, constant or tensor operands, zero point and
// bias (none, constant, per-column tensor in either form), requant (none,
// scalar, per channel; every rounding mode, sym), relu and result_add.
TEST_P(BdcQuantMatmul, QuantMmMatchesTheDefinition) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t eight[] = {DT_INT8, DT_UINT8};
  const data_type_t outs[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};
  const data_type_t zps[] = {DT_INT8, DT_UINT8, DT_INT16};
  const bool transposes[3][2] = {{false, false}, {false, true}, {true, true}};
  for (int iter = 0; iter < 200; ++iter) {
    QmCall k{};
    auto size = [&] {
      return seeded.uniform(0, 3) == 0 ? seeded.uniform(chip.npu + 1, 2 * chip.npu + 5) : seeded.uniform(1, 12);
    };
    k.M = size();
    k.K = seeded.uniform(0, 3) == 0 ? seeded.uniform(60, 140) : seeded.uniform(1, 12);
    k.N = size();
    const int tr = iter % 3;
    k.left_trans = transposes[tr][0];
    k.right_trans = transposes[tr][1];
    k.out_dt = outs[seeded.uniform(0, 5)];
    k.result_add = seeded.uniform(0, 1);
    k.relu = seeded.uniform(0, 1);
    Product p;
    p.M = k.M;
    p.K = k.K;
    p.N = k.N;
    p.left_trans = k.left_trans;
    p.right_trans = k.right_trans;
    p.left_const = seeded.uniform(0, 4) == 0;
    p.right_const = !p.left_const && seeded.uniform(0, 4) == 0;
    k.left.dtype = eight[seeded.uniform(0, 1)];
    k.right.dtype = eight[seeded.uniform(0, 1)];
    k.left.is_const = p.left_const;
    k.right.is_const = p.right_const;
    Regions mem;
    const Tensor out = matrix(chip, mem.take(aligned_bytes(chip, 0, {1, p.M, 1, p.N}, k.out_dt)), p.M, p.N, k.out_dt);
    k.out = out.addr;
    local_addr_t la = 0, ra = 0;
    scalar_t lc{}, rc{};
    place_operands(chip, mem, rng, p, k.left.dtype, k.right.dtype, la, ra, lc, rc);
    if (p.left_const) k.left.value = lc; else k.left.addr = la;
    if (p.right_const) k.right.value = rc; else k.right.addr = ra;
    const bool replicated = !k.left_trans;
    auto vector = [&](optional_info_t &info, bool &present, data_type_t t, Columns &host) {
      const Source s = Source(seeded.uniform(0, 2));
      present = s != Source::none;
      info.dtype = t;
      host = {};
      host.lanes.assign(1, std::vector<int64_t>(size_t(p.N), 0));
      if (s == Source::constant) {
        info.is_const = 1;
        info.value = {};
        info.value.u32 = uint32_t(rng()) & dtype_mask(t);
        host.lanes[0].assign(size_t(p.N), int_value(t, info.value.u32));
      } else if (s == Source::tensor) {
        info.is_const = 0;
        local_addr_t addr = 0;
        host = place_columns(chip, mem, replicated, p.M, p.N, 1, t,
                             [&](data_type_t d) {
                               return d == DT_INT32 || d == DT_UINT32 ? uint32_t(seeded.uniform(-100000, 100000)) & dtype_mask(d)
                                                                      : uint32_t(rng()) & dtype_mask(d);
                             },
                             addr);
        info.addr = addr;
      }
    };
    Columns z, b;
    vector(k.rzp, k.has_rzp, zps[seeded.uniform(0, 2)], z);
    vector(k.bias, k.has_bias, seeded.uniform(0, 1) ? DT_INT32 : DT_UINT32, b);
    // A constant bias of any 32 bits.
    const int rq_kind = seeded.uniform(0, 2);  // none, scalar, per channel
    k.has_requant = rq_kind != 0;
    k.requant = {};
    k.requant.round_mode = rounding_mode_t(seeded.uniform(0, 6));
    k.requant.do_sym_saturate = seeded.uniform(0, 1);
    auto multiplier = [&] { return seeded.uniform(-40000, 40000); };
    auto shift = [&] { return seeded.uniform(0, 5) == 0 ? seeded.uniform(0, 3) : seeded.uniform(-40, -1); };
    auto out_zp = [&] { return seeded.uniform(-300, 300); };
    Columns rq;
    if (rq_kind == 1) {
      k.requant.multiplier = multiplier();
      k.requant.shift = shift();
      k.requant.yzp = out_zp();
    } else if (rq_kind == 2) {
      k.requant.is_perchannel = true;
      int word = 0;
      rq = place_columns(chip, mem, replicated, p.M, p.N, 2, DT_INT32,
                         [&](data_type_t) {
                           // Word 0 the multiplier; word 1 σ in bits 0-7, zp in
                           // bits 16-31 and junk in bits 8-15 (ignored).
                           const bool first = word++ % 2 == 0;
                           if (first) return uint32_t(multiplier());
                           return (uint32_t(shift()) & 0xff) | (uint32_t(seeded.uniform(0, 255)) << 8) |
                                  (uint32_t(out_zp()) << 16);
                         },
                         k.requant.addr);
    }
    std::vector<int64_t> old(size_t(p.M) * p.N);
    if (k.result_add)
      for (int m = 0; m < p.M; ++m)
        for (int n = 0; n < p.N; ++n) {
          const uint32_t bits = uint32_t(rng()) & dtype_mask(k.out_dt);
          set_bits(chip, out, 0, m, 0, n, bits);
          old[size_t(m) * p.N + n] = int_value(k.out_dt, bits);
        }
    std::vector<uint8_t> expected = snapshot(chip);
    for (int m = 0; m < p.M; ++m)
      for (int n = 0; n < p.N; ++n) {
        const int64_t zn = k.has_rzp ? z.get(m, chip.npu, n, 0) : 0;
        int64_t acc = 0;
        for (int i = 0; i < p.K; ++i) acc += p.L(m, i) * (p.R(i, n) - zn);
        if (k.has_bias) acc += b.get(m, chip.npu, n, 0);
        if (k.result_add) acc += old[size_t(m) * p.N + n];
        int64_t y;
        if (rq_kind == 0) {
          y = saturate(k.relu ? std::max<int64_t>(acc, 0) : acc, k.out_dt);
        } else {
          int64_t mult = k.requant.multiplier;
          int sigma = k.requant.shift, zp = k.requant.yzp;
          if (rq_kind == 2) {
            mult = int32_t(rq.get(m, chip.npu, n, 0));
            const uint32_t w1 = uint32_t(rq.get(m, chip.npu, n, 1));
            sigma = int8_t(w1 & 0xff);
            zp = int16_t(w1 >> 16);
          }
          y = requantize(acc, mult, sigma, zp, k.requant.round_mode, k.relu, k.requant.do_sym_saturate, k.out_dt);
        }
        put(expected, chip, out, 0, m, 0, n, uint32_t(y));
      }
    ASSERT_EQ(cmodel_run(qm_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return "quant_mm " + dtype_label(k.left.dtype) + (p.left_const ? " const" : "") + " x " +
             dtype_label(k.right.dtype) + (p.right_const ? " const" : "") + " -> " + dtype_label(k.out_dt) +
             " trans " + std::to_string(k.left_trans) + std::to_string(k.right_trans) + " rzp " +
             std::to_string(k.has_rzp) + " bias " + std::to_string(k.has_bias) + " requant " +
             std::to_string(rq_kind) + " mode " + std::to_string(int(k.requant.round_mode)) + " sym " +
             std::to_string(k.requant.do_sym_saturate) + (k.relu ? " relu" : "") +
             (k.result_add ? " result_add" : "") + " sizes " + std::to_string(k.M) + "," + std::to_string(k.K) + "," +
             std::to_string(k.N) + " iteration " + std::to_string(iter);
    });
  }
}

// A 1 x 1 x 1 product of two constants with a scalar requant to INT8.
QmCall scalar_requant_call(int64_t left, int64_t right, bool sym, bool relu) {
  QmCall k{};
  k.out = 0;
  k.out_dt = DT_INT8;
  k.left = {};
  k.left.is_const = 1;
  k.left.dtype = DT_INT8;
  k.left.value.s8 = int8_t(left);
  k.right = {};
  k.right.is_const = 1;
  k.right.dtype = DT_INT8;
  k.right.value.s8 = int8_t(right);
  k.M = k.K = k.N = 1;
  k.relu = relu;
  k.has_requant = true;
  k.requant = {};
  k.requant.multiplier = 3;
  k.requant.shift = -4;
  k.requant.yzp = 5;
  k.requant.round_mode = RM_HALF_UP;
  k.requant.do_sym_saturate = sym;
  return k;
}

// Tier-3 §8 example 4: acc = -1000, m = 3, σ = -4, zp = 5, RM_HALF_UP,
// INT8: -3000 / 16 = -187.5 -> -187; + 5 = -182 -> -128 (sym: -127); with
// relu 0 + 5 = 5.
TEST_P(BdcQuantMatmul, WorkedExampleRequant) {
  const Tensor Y = matrix(chip, 0, 1, 1, DT_INT8);
  struct {
    bool sym, relu;
    int expected;
  } cases[] = {{false, false, -128}, {true, false, -127}, {false, true, 5}};
  for (const auto &c : cases) {
    const QmCall k = scalar_requant_call(-100, 10, c.sym, c.relu);  // acc = -1000
    ASSERT_EQ(cmodel_run(qm_kernel, &k), 0) << cmodel_last_error();
    EXPECT_EQ(get<int8_t>(chip, Y, 0, 0, 0, 0), c.expected) << "sym " << c.sym << " relu " << c.relu;
  }
  // Without saturation: acc = 100 -> 300 / 16 = 18.75 -> 19, + 5 = 24.
  const QmCall k = scalar_requant_call(10, 10, false, false);
  ASSERT_EQ(cmodel_run(qm_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(get<int8_t>(chip, Y, 0, 0, 0, 0), 24);
}

// Cost: ceil(M N K / peak) + 16, peak = NPU x P(INT8) x 4 (tier-3 §6):
// bm1684x 16384, bm1688 4096 MACs per cycle.
TEST_P(BdcQuantMatmul, CostIsMacsOverTheInt8Peak) {
  const int M = 70, K = 300, N = 40;
  ZpCall k{};
  k.variant = 3;  // L_const: only the right is a tensor
  k.out = 0;
  k.right = aligned_bytes(chip, 0, {1, M, 1, N}, DT_INT32);
  k.lr = M;
  k.lc = K;
  k.r = N;
  k.left_dt = k.right_dt = DT_INT8;
  ASSERT_EQ(cmodel_run(zp_kernel, &k), 0) << cmodel_last_error();
  const double peak = chip.name == "bm1684x" ? 16384 : 4096;
  EXPECT_EQ(bdc_cycles(), std::ceil(double(M) * K * N / peak) + 16);
  EXPECT_EQ(run_stats().at("commands").at("tpu_bdc_int8_zp_mm_L_const").get<int>(), 1);
}

// ---- a kernel: an int8 linear layer ---------------------------------------------------------

// y = RQ(x (W - zp) + b) per output channel, as a quantised linear layer
// runs: x [M x K], W [K x N] INT8 loaded from global memory, the bias and
// the per-channel requant words loaded once and broadcast to every NPU with
// tpu_bdc_npu_bcast, the INT8 result stored back.
struct Linear {
  global_addr_t x, w, bias, requant, y;
  int M, K, N;
  int weight_zp;
};

void linear_kernel(const void *arg) {
  const auto &a = *static_cast<const Linear *>(arg);
  const local_addr_t x = 0, w = 4096, bias_row = 8192, bias = 12288, rq_row = 16384, rq = 20480, y = 24576;
  const dim4 xs{1, a.M, 1, a.K}, ws{1, a.K, 1, a.N}, bias_one{1, 1, 1, a.N}, bias_all{1, NPU_NUM, 1, a.N},
      rq_one{1, 1, 1, 2 * a.N}, rq_all{1, NPU_NUM, 1, 2 * a.N}, ys{1, a.M, 1, a.N};
  tpu_gdma_cpy_S2L(x, a.x, &xs, nullptr, nullptr, DT_INT8);
  tpu_gdma_cpy_S2L(w, a.w, &ws, nullptr, nullptr, DT_INT8);
  tpu_gdma_cpy_S2L(bias_row, a.bias, &bias_one, nullptr, nullptr, DT_INT32);
  tpu_gdma_cpy_S2L(rq_row, a.requant, &rq_one, nullptr, nullptr, DT_INT32);
  tpu_bdc_npu_bcast(bias, bias_row, &bias_all, DT_INT32);
  tpu_bdc_npu_bcast(rq, rq_row, &rq_all, DT_INT32);
  optional_info_t left = OPTIONAL_ADDR(DT_INT8, x), right = OPTIONAL_ADDR(DT_INT8, w),
                  zp = OPTIONAL_VALUE(DT_INT8, {.s8 = int8_t(a.weight_zp)}), b = OPTIONAL_ADDR(DT_INT32, bias);
  requant_int_info_t requant = {true, true, RM_HALF_AWAY_FROM_ZERO, rq, 0, 0, 0};
  tpu_bdc_quant_mm(y, DT_INT8, &left, &right, a.M, a.K, a.N, false, false, false, false, &zp, &b, &requant);
  tpu_gdma_cpy_L2S(a.y, y, &ys, nullptr, nullptr, DT_INT8);
}

TEST_P(BdcQuantMatmul, Int8LinearLayerKernel) {
  test::Seeded seeded;
  Linear a{};
  a.M = chip.npu + 36;  // two rows of NPUs
  a.K = 200;
  a.N = 48;
  a.weight_zp = -2;
  std::vector<int8_t> x(size_t(a.M) * a.K), w(size_t(a.K) * a.N), y(size_t(a.M) * a.N);
  std::vector<int32_t> bias(size_t(a.N)), rq(size_t(2 * a.N));
  for (auto &v : x) v = int8_t(seeded.uniform(-128, 127));
  for (auto &v : w) v = int8_t(seeded.uniform(-128, 127));
  for (auto &v : bias) v = seeded.uniform(-50000, 50000);
  for (int n = 0; n < a.N; ++n) {
    rq[size_t(2 * n)] = seeded.uniform(1, 100);
    rq[size_t(2 * n + 1)] = int32_t((uint32_t(seeded.uniform(-18, -14)) & 0xff) | (uint32_t(seeded.uniform(-10, 10)) << 16));
  }
  auto upload = [](const auto &v) {
    const uint64_t bytes = v.size() * sizeof(v[0]);
    const global_addr_t g = cmodel_global_alloc(bytes);
    EXPECT_EQ(cmodel_global_write(g, v.data(), bytes), 0);
    return g;
  };
  a.x = upload(x);
  a.w = upload(w);
  a.bias = upload(bias);
  a.requant = upload(rq);
  a.y = cmodel_global_alloc(y.size());
  ASSERT_EQ(cmodel_run(linear_kernel, &a), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_global_read(y.data(), a.y, y.size()), 0);
  int saturated = 0;
  for (int m = 0; m < a.M; ++m)
    for (int n = 0; n < a.N; ++n) {
      int64_t acc = bias[size_t(n)];
      for (int k = 0; k < a.K; ++k) acc += int64_t(x[size_t(m) * a.K + k]) * (w[size_t(k) * a.N + n] - a.weight_zp);
      const uint32_t w1 = uint32_t(rq[size_t(2 * n + 1)]);
      const int64_t want = requantize(acc, rq[size_t(2 * n)], int8_t(w1 & 0xff), int16_t(w1 >> 16),
                                      RM_HALF_AWAY_FROM_ZERO, false, true, DT_INT8);
      saturated += want == 127 || want == -127;
      ASSERT_EQ(y[size_t(m) * a.N + n], want) << "y[" << m << "][" << n << "]";
    }
  EXPECT_LT(saturated, a.M * a.N / 2);  // the scales keep most results inside the range
}

// ---- checks ----------------------------------------------------------------------------------

TEST_P(BdcQuantMatmul, ZpChecksNameTheFunctionTheOperandAndTheRule) {
  const local_addr_t npu1 = chip.lmem;
  auto base = [&](int variant, bool per_column) {
    ZpCall k{};
    k.variant = variant;
    k.per_column = per_column;
    k.out = 0;
    k.left = 4096;
    k.right = 8192;
    k.zp_addr = 12288;
    k.lr = 3;
    k.lc = 4;
    k.r = 5;
    k.left_dt = DT_INT8;
    k.right_dt = DT_UINT8;
    return k;
  };
  struct Bad {
    ZpCall k;
    std::string message;
  };
  std::vector<Bad> cases;
  auto add = [&](ZpCall k, std::string m) { cases.push_back({k, std::move(m)}); };
  {
    ZpCall k = base(0, false);
    k.lr = 0;
    add(k, "tpu_bdc_int8_zp_mm: left_rows = 0: each matrix size must be in [1, 65535]");
  }
  {
    ZpCall k = base(1, false);
    k.r = 65536;
    add(k, "tpu_bdc_int8_zp_mm_R_trans: right_rows = 65536: each matrix size must be in [1, 65535]");
  }
  {
    ZpCall k = base(0, true);
    k.lc = -2;
    add(k, "tpu_bdc_int8_pc_zp_mm: left_cols = -2: each matrix size must be in [1, 65535]");
  }
  {
    ZpCall k = base(0, false);
    k.left_dt = DT_INT16;
    add(k, "tpu_bdc_int8_zp_mm: left_dtype DT_INT16 is not allowed here; expected one of DT_INT8, DT_UINT8");
  }
  {
    ZpCall k = base(3, false);
    k.left_dt = DT_FP32;
    add(k, "tpu_bdc_int8_zp_mm_L_const: C_dtype DT_FP32 is not allowed here; expected one of DT_INT8, DT_UINT8");
  }
  {
    ZpCall k = base(4, true);
    k.right_dt = DT_INT32;
    add(k, "tpu_bdc_int8_pc_zp_mm_R_const: C_zp_dtype DT_INT32 is not allowed here; expected one of DT_INT8, "
           "DT_UINT8");
  }
  {
    ZpCall k = base(0, false);
    k.right = npu1 + 8192;
    add(k, "tpu_bdc_int8_zp_mm: right local address " + hex(npu1 + 8192) +
               " starts on NPU 1; a matrix of this command (one row per channel, row i on NPU i % NPU_NUM) must start "
               "on NPU 0");
  }
  {
    ZpCall k = base(0, false);
    k.left = 4096 + 8;
    add(k, "tpu_bdc_int8_zp_mm: left local address 0x1008 uses the aligned layout");
  }
  {
    ZpCall k = base(0, true);
    k.zp_addr = npu1 + 12288;
    add(k, "tpu_bdc_int8_pc_zp_mm: zp local address " + hex(npu1 + 12288) +
               " starts on NPU 1; the zp (one copy of the N values on each NPU, as tpu_bdc_npu_bcast writes it) "
               "must start on NPU 0");
  }
  {
    ZpCall k = base(2, true);
    k.zp_addr = 12288 + 1;
    // bm1684x reads an 8-bit zp tensor (any offset is element-aligned), bm1688 an INT16 one.
    k.right_dt = DT_INT8;
    add(k, "tpu_bdc_int8_pc_zp_mm_all_trans: zp local address 0x3001");
  }
  for (const Bad &b : cases) EXPECT_RUN_FAILS_WITH(zp_kernel, &b.k, b.message);
}

TEST_P(BdcQuantMatmul, QuantMmChecksNameTheFunctionTheOperandAndTheRule) {
  auto base = [&] {
    QmCall k{};
    k.out = 0;
    k.out_dt = DT_INT32;
    k.left = {};
    k.left.dtype = DT_INT8;
    k.left.addr = 4096;
    k.right = {};
    k.right.dtype = DT_INT8;
    k.right.addr = 8192;
    k.M = 3;
    k.K = 4;
    k.N = 5;
    return k;
  };
  struct Bad {
    QmCall k;
    std::string message;
  };
  std::vector<Bad> cases;
  auto add = [&](QmCall k, std::string m) { cases.push_back({k, std::move(m)}); };
  {
    QmCall k = base();
    k.M = 0;
    add(k, "tpu_bdc_quant_mm: output_rows = 0: each matrix size must be in [1, 65535]");
  }
  {
    QmCall k = base();
    k.K = 70000;
    add(k, "tpu_bdc_quant_mm: inner_cols = 70000: each matrix size must be in [1, 65535]");
  }
  {
    QmCall k = base();
    k.N = 65536;
    add(k, "tpu_bdc_quant_mm: output_cols = 65536: each matrix size must be in [1, 65535]");
  }
  {
    QmCall k = base();
    k.left_trans = true;
    add(k, "tpu_bdc_quant_mm: left_trans without right_trans: a transposed left needs a transposed right");
  }
  {
    QmCall k = base();
    k.left.dtype = DT_INT4;
    add(k, "tpu_bdc_quant_mm: left->dtype DT_INT4 is not allowed here; expected one of DT_INT8, DT_UINT8");
  }
  {
    QmCall k = base();
    k.right.dtype = DT_FP16;
    add(k, "tpu_bdc_quant_mm: right->dtype DT_FP16 is not allowed here; expected one of DT_INT8, DT_UINT8");
  }
  {
    QmCall k = base();
    k.out_dt = DT_FP32;
    add(k, "tpu_bdc_quant_mm: output_dtype DT_FP32 is not allowed here");
  }
  {
    QmCall k = base();
    k.has_rzp = true;
    k.rzp = {};
    k.rzp.is_const = 1;
    k.rzp.dtype = DT_INT32;
    add(k, "tpu_bdc_quant_mm: rzp dtype DT_INT32 is not allowed here; expected one of DT_INT8, DT_UINT8, DT_INT16");
  }
  {
    QmCall k = base();
    k.has_bias = true;
    k.bias = {};
    k.bias.is_const = 1;
    k.bias.dtype = DT_INT16;
    add(k, "tpu_bdc_quant_mm: bias dtype DT_INT16 is not allowed here; expected one of DT_INT32, DT_UINT32");
  }
  {
    QmCall k = base();
    k.has_requant = true;
    k.requant = {};
    k.requant.multiplier = 1;
    k.requant.round_mode = rounding_mode_t(7);
    add(k, "tpu_bdc_quant_mm: rounding_mode");
  }
  {
    QmCall k = base();
    k.has_requant = true;
    k.requant = {};
    k.requant.shift = 128;
    add(k, "tpu_bdc_quant_mm: requant shift = 128: it must be in [-128, 127] (negative shifts right)");
  }
  {
    QmCall k = base();
    k.has_requant = true;
    k.requant = {};
    k.requant.yzp = -40000;
    add(k, "tpu_bdc_quant_mm: requant yzp = -40000: it must be in [-32768, 32767]");
  }
  {
    QmCall k = base();
    k.left_trans = k.right_trans = true;
    k.has_bias = true;
    k.bias = {};
    k.bias.dtype = DT_INT32;
    k.bias.addr = 12288 + 2;
    add(k, "tpu_bdc_quant_mm: bias local address 0x3002 is not a multiple of the 4-byte size of DT_INT32");
  }
  {
    QmCall k = base();
    k.left_trans = k.right_trans = true;
    k.has_requant = true;
    k.requant = {};
    k.requant.is_perchannel = true;
    k.requant.addr = 12288 + 4;
    add(k, "tpu_bdc_quant_mm: requant local address 0x3004: the compact requant of a transposed-left (all_trans) "
           "product must be at an offset that is a multiple of 8 bytes");
  }
  {
    QmCall k = base();
    k.left_trans = k.right_trans = true;
    k.has_rzp = true;
    k.rzp = {};
    k.rzp.dtype = DT_INT16;
    k.rzp.addr = 12288 + 1;
    add(k, "tpu_bdc_quant_mm: rzp local address 0x3001");
  }
  {
    QmCall k = base();
    k.has_requant = true;
    k.requant = {};
    k.requant.is_perchannel = true;
    k.requant.addr = 12288 + 8;
    add(k, "tpu_bdc_quant_mm: requant local address 0x3008 uses the aligned layout");
  }
  for (const Bad &b : cases) EXPECT_RUN_FAILS_WITH(qm_kernel, &b.k, b.message);
}

void null_left_kernel(const void *) {
  optional_info_t right = OPTIONAL_ADDR(DT_INT8, 0);
  tpu_bdc_quant_mm(0, DT_INT32, nullptr, &right, 1, 1, 1, false, false, false, false, nullptr, nullptr, nullptr);
}

TEST_P(BdcQuantMatmul, NullOperandStopsTheKernel) {
  EXPECT_RUN_FAILS_WITH(null_left_kernel, nullptr, "tpu_bdc_quant_mm: left is a null pointer");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcQuantMatmul, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
