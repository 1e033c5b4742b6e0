// bdc_taylor_test: per-lane polynomials and table lookups
// (tpu_bdc_fp_taylor, tpu_bdc_table_lookup; cmodel/bdc/taylor.h) against a
// reference written here, bit for bit over the whole local memory: random
// shapes, start NPU != 0 with a different table in every NPU (channel c
// reads its own lane's copy), fp32 / fp16 / bf16 polynomials, every dst
// dtype and both index dtypes of the lookup, in place, both chips. The
// loaded exp coefficients evaluated with fp_taylor give e^r. Every check
// fires with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;

struct TaylorCall {
  bool lookup;
  local_addr_t dst, src, table;
  dim4 shape;
  int num;  // coefficients or table length
  data_type_t dtype, src_dtype;
  bool load_exp = false;  // load the exp coefficients at `table` first
};

void taylor_kernel(const void *arg) {
  const auto &k = *static_cast<const TaylorCall *>(arg);
  // The loader writes the same offset of every NPU and takes an NPU 0
  // address; the polynomial names the table on dst's NPU (SFU-3).
  if (k.load_exp) tpu_bdc_load_fp32_exp_coeff(k.table % LOCAL_MEM_SIZE);
  if (k.lookup)
    tpu_bdc_table_lookup(k.dst, k.src, k.table, &k.shape, k.num, k.dtype, k.src_dtype);
  else
    tpu_bdc_fp_taylor(k.dst, k.src, k.table, &k.shape, k.num, k.dtype);
}

// Horner's rule in fp32, each step rounded (volatile).
float horner(const std::vector<float> &k, float x) {
  volatile float acc = k.back();
  for (int i = int(k.size()) - 2; i >= 0; --i) {
    volatile float p = acc * x;
    acc = p + k[size_t(i)];
  }
  return acc;
}

class BdcTaylor : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  Chip chip;
};

TEST_P(BdcTaylor, PolynomialsUseTheLanesOwnCoefficients) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t types[] = {DT_FP32, DT_FP16, DT_BFP16};
  std::vector<uint8_t> expected;
  for (int iter = 0; iter < 90; ++iter) {
    const data_type_t t = types[iter % 3];
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 5), seeded.uniform(1, 5),
                        seeded.uniform(1, 19)};
    const int npu = seeded.uniform(1, chip.npu - 1), num = seeded.uniform(2, 12);
    const uint32_t half = chip.lmem / 2 / 64 * 64;
    const Tensor coeff = aligned(chip, 0, chip.lmem - 1024, {1, chip.npu, 1, num}, t);
    const Tensor dst = aligned(chip, npu, 0, shape, t);
    const bool in_place = seeded.uniform(0, 3) == 0;
    const Tensor src = in_place ? dst : aligned(chip, npu, half, shape, t);
    if (aligned_bytes(chip, npu, shape, t) > half - 1024) continue;
    // The table's address names dst's NPU (SFU-3); its copies are at one
    // offset of every NPU all the same.
    TaylorCall k{false, dst.addr, src.addr, coeff.addr + uint32_t(npu) * chip.lmem, shape, num, t, t};
    std::vector<std::vector<float>> lanes(size_t(chip.npu));
    for (int lane = 0; lane < chip.npu; ++lane)
      for (int i = 0; i < num; ++i) {
        const uint32_t b = encode(t, float(std::uniform_real_distribution<double>(-2, 2)(rng)));
        set_bits(chip, coeff, 0, lane, 0, i, b);
        lanes[size_t(lane)].push_back(decode(t, b));
      }
    for_each_index(shape, [&](int n, int c, int h, int w) {
      set_bits(chip, src, n, c, h, w, encode(t, float(std::uniform_real_distribution<double>(-1.5, 1.5)(rng))));
    });
    expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const float x = decode(t, get_bits(chip, src, n, c, h, w));
      put(expected, chip, dst, n, c, h, w, encode(t, horner(lanes[size_t((npu + c) % chip.npu)], x)));
    });
    ASSERT_EQ(cmodel_run(taylor_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return "taylor " + dtype_label(t) + " " + describe(shape) + " num " + std::to_string(num) + " NPU " +
             std::to_string(npu) + (in_place ? " in place" : "") + " iteration " + std::to_string(iter);
    });
  }
}

// The documented use: the exp coefficients (1/k!) evaluated at r give e^r.
TEST_P(BdcTaylor, ExpCoefficientsGiveExp) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const dim4 shape = {1, chip.npu + 3, 4, 16};
  const Tensor dst = aligned(chip, 2, 0, shape, DT_FP32), src = aligned(chip, 2, 16384, shape, DT_FP32);
  TaylorCall k{false, dst.addr, src.addr, local_addr_t(3 * chip.lmem - 1024), shape, 10, DT_FP32, DT_FP32, true};
  std::vector<float> x;
  for_each_index(shape, [&](int n, int c, int h, int w) {
    x.push_back(float(std::uniform_real_distribution<double>(-0.5, 0.5)(rng)));
    set<float>(chip, src, n, c, h, w, x.back());
  });
  ASSERT_EQ(cmodel_run(taylor_kernel, &k), 0) << cmodel_last_error();
  size_t i = 0;
  for_each_index(shape, [&](int n, int c, int h, int w) {
    const long double want = expl(x[i++]);
    EXPECT_NEAR(get<float>(chip, dst, n, c, h, w), double(want), double(want) * 3e-7) << x[i - 1];
  });
}

TEST_P(BdcTaylor, LookupsReadTheLanesOwnTable) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t types[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP16, DT_BFP16, DT_FP32};
  std::vector<uint8_t> expected;
  for (int iter = 0; iter < 90; ++iter) {
    const data_type_t t = types[iter % 9];
    const data_type_t it = seeded.uniform(0, 1) ? DT_UINT8 : DT_UINT16;
    const int len = seeded.uniform(1, it == DT_UINT8 ? 256 : 600);
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 5), seeded.uniform(1, 5),
                        seeded.uniform(1, 19)};
    const int npu = seeded.uniform(1, chip.npu - 1);
    const uint32_t half = chip.lmem / 2 / 64 * 64;
    const Tensor table = aligned(chip, 0, half - 4096, {1, chip.npu, 1, len}, t);
    const Tensor dst = aligned(chip, npu, 0, shape, t), src = aligned(chip, npu, half, shape, it);
    if (aligned_bytes(chip, npu, shape, t) > half - 4096 || aligned_bytes(chip, npu, shape, it) > half) continue;
    TaylorCall k{true, dst.addr, src.addr, table.addr, shape, len, t, it};
    for (int lane = 0; lane < chip.npu; ++lane)
      for (int i = 0; i < len; ++i) set_bits(chip, table, 0, lane, 0, i, uint32_t(rng()));
    for_each_index(shape, [&](int n, int c, int h, int w) {
      set_bits(chip, src, n, c, h, w, uint32_t(std::uniform_int_distribution<int>(0, len - 1)(rng)));
    });
    expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      put(expected, chip, dst, n, c, h, w,
          get_bits(chip, table, 0, (npu + c) % chip.npu, 0, int(get_bits(chip, src, n, c, h, w))));
    });
    ASSERT_EQ(cmodel_run(taylor_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return "lookup " + dtype_label(t) + " by " + dtype_label(it) + " " + describe(shape) + " len " +
             std::to_string(len) + " NPU " + std::to_string(npu) + " iteration " + std::to_string(iter);
    });
  }
}

TEST_P(BdcTaylor, CostGrowsWithTheNumberOfCoefficients) {
  const dim4 shape = {1, chip.npu, 8, 16};
  auto cycles = [&](int num) {
    const Tensor coeff = aligned(chip, 0, 65536, {1, chip.npu, 1, num}, DT_FP32);
    for (int lane = 0; lane < chip.npu; ++lane)
      for (int i = 0; i < num; ++i) set<float>(chip, coeff, 0, lane, 0, i, 0.5f);
    TaylorCall k{false, 0, 16384, coeff.addr, shape, num, DT_FP32, DT_FP32};
    EXPECT_EQ(cmodel_run(taylor_kernel, &k), 0) << cmodel_last_error();
    EXPECT_EQ(run_stats().at("commands").at("tpu_bdc_fp_taylor").get<int>(), 1);
    return bdc_cycles();
  };
  EXPECT_LT(cycles(4), cycles(16));
}

// ---- checks ------------------------------------------------------------------------------

void bad_kernel(const void *arg) {
  const int which = *static_cast<const int *>(arg);
  const dim4 shape = {1, 5, 2, 3};
  const local_addr_t npu1 = LOCAL_MEM_SIZE, table = 32768;
  // Valid sources (zeros) for every case.
  scalar_t zero{};
  tpu_bdc_set_C(4096, zero, &shape, nullptr, DT_UINT8);
  tpu_bdc_set_C(8192, zero, &shape, nullptr, DT_FP32);
  switch (which) {
    case 0: tpu_bdc_fp_taylor(0, 8192, table, &shape, 1, DT_FP32); break;
    case 1: tpu_bdc_fp_taylor(0, 8192, npu1 + table, &shape, 4, DT_FP32); break;
    case 2: tpu_bdc_fp_taylor(0, 8192, table + 4, &shape, 4, DT_FP32); break;
    case 3: tpu_bdc_fp_taylor(0, 8192, table, &shape, 4, DT_INT32); break;
    case 4: tpu_bdc_fp_taylor(table, 8192, table, &shape, 4, DT_FP32); break;
    case 5: tpu_bdc_fp_taylor(npu1, 8192, table, &shape, 4, DT_FP32); break;
    case 6: tpu_bdc_table_lookup(0, 4096, table, &shape, 16, DT_FP32, DT_INT8); break;
    case 7: {
      scalar_t big{};
      big.u8 = 16;
      const dim4 one_elem = {1, 1, 1, 1};
      const dim4 free_stride = {1, 1, 1, 1};
      tpu_bdc_set_C(LOCAL_MEM_SIZE * 3 + 4096 + 5, big, &one_elem, &free_stride, DT_UINT8);  // channel 3, (1, 2)
      tpu_bdc_table_lookup(0, 4096, table, &shape, 16, DT_FP32, DT_UINT8);
      break;
    }
    case 8: {
      const dim4 wide = {1, 1, 256, 256};
      tpu_bdc_table_lookup(0, 4096, table, &wide, 16, DT_INT8, DT_UINT8);
      break;
    }
    case 9: tpu_bdc_table_lookup(0, 4096, npu1 + table, &shape, 16, DT_FP32, DT_UINT8); break;
    case 10: tpu_bdc_table_lookup(table, 4096, table, &shape, 16, DT_FP32, DT_UINT8); break;
    case 11: tpu_bdc_table_lookup(0, 4096, table, &shape, 0, DT_FP32, DT_UINT8); break;
    case 12: tpu_bdc_table_lookup(0, 4096, table, &shape, 16, DT_FP32, DT_UINT8); break;  // valid
    case 13: tpu_bdc_table_lookup(npu1, 4096, table, &shape, 16, DT_FP32, DT_UINT8); break;
  }
}

TEST_P(BdcTaylor, ChecksNameTheFunctionAndTheValue) {
  int w = 0;
  const std::string n = std::to_string(chip.npu);
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_fp_taylor: num 1 is below 2; the polynomial takes at least 2 coefficients");
  w = 1;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w,
                        "tpu_bdc_fp_taylor: coeff_addr " + hex(chip.lmem + 32768) +
                            " is on NPU 1; the coefficients must start on dst's NPU 0 (a [1, " + n +
                            ", 1, 4] DT_FP32 tensor: 4 values at the same offset of every NPU)");
  w = 2;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_fp_taylor: coeff_addr local address 0x8004 uses the aligned layout");
  w = 3;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_fp_taylor: dtype DT_INT32 is not allowed here");
  w = 4;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_fp_taylor: dst at 0x8000");
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("overlaps coeff_addr at 0x8000"), std::string::npos) << m;
  EXPECT_NE(m.find("writing dst would overwrite the table"), std::string::npos) << m;
  w = 5;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_fp_taylor: dst starts on NPU 1 but src on NPU 0");
  w = 6;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_table_lookup: src dtype DT_INT8 is not allowed here; expected one of DT_UINT8, DT_UINT16");
  w = 7;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w,
                        "tpu_bdc_table_lookup: src element (0, 3, 1, 2) is 16, outside the table's [0, len = 16)");
  w = 8;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_table_lookup: shape [1, 1, 256, 256]: h x w = 65536; a table lookup takes at most 65535 elements per channel");
  w = 9;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_table_lookup: table_addr " + hex(chip.lmem + 32768) + " is on NPU 1; the table must start on NPU 0");
  w = 10;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "overlaps table_addr at 0x8000");
  w = 11;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_table_lookup: len 0 must be in [1, 65535]");
  w = 12;
  EXPECT_EQ(cmodel_run(bad_kernel, &w), 0) << cmodel_last_error();
  w = 13;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_table_lookup: dst starts on NPU 1 but src on NPU 0");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcTaylor, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
