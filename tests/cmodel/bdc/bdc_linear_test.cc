// bdc_linear_test: per-channel float linear operations (tpu_bdc_fp_bias,
// fp_scale, fp_scale_bias, fp_scale_bias_C, fp_add/sub_bias_sqr,
// fp_add/sub_C_sqr; cmodel/bdc/linear.h) against a reference written here,
// bit for bit over the whole local memory: random shapes with channels
// spanning several NPU rows, start NPU != 0, fp32 / fp16 / bf16, in place,
// both chips. The per-channel operand is a [1, c, 1, 1] aligned tensor on
// dst's NPU; its layout comes from the independent model. Every check fires.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;

enum class Op { bias, scale, scale_bias, add_bias_sqr, sub_bias_sqr, scale_bias_C, add_C_sqr, sub_C_sqr, count };

const char *op_name(Op op) {
  static const char *names[] = {"bias",         "scale",        "scale_bias", "add_bias_sqr",
                                "sub_bias_sqr", "scale_bias_C", "add_C_sqr",  "sub_C_sqr"};
  return names[int(op)];
}

struct LinearCall {
  Op op;
  local_addr_t dst, src, a, b;  // a: scale or bias; b: bias of scale_bias
  scalar_t ca, cb;              // constants
  dim4 shape;
  data_type_t dtype;
};

void linear_kernel(const void *arg) {
  const auto &k = *static_cast<const LinearCall *>(arg);
  const dim4 *s = &k.shape;
  switch (k.op) {
    case Op::bias: tpu_bdc_fp_bias(k.dst, k.src, k.a, s, k.dtype); break;
    case Op::scale: tpu_bdc_fp_scale(k.dst, k.src, k.a, s, k.dtype); break;
    case Op::scale_bias: tpu_bdc_fp_scale_bias(k.dst, k.src, k.a, k.b, s, k.dtype); break;
    case Op::add_bias_sqr: tpu_bdc_fp_add_bias_sqr(k.dst, k.src, k.a, s, k.dtype); break;
    case Op::sub_bias_sqr: tpu_bdc_fp_sub_bias_sqr(k.dst, k.src, k.a, s, k.dtype); break;
    case Op::scale_bias_C: tpu_bdc_fp_scale_bias_C(k.dst, k.src, k.ca, k.cb, s, k.dtype); break;
    case Op::add_C_sqr: tpu_bdc_fp_add_C_sqr(k.dst, k.src, k.ca, s, k.dtype); break;
    case Op::sub_C_sqr: tpu_bdc_fp_sub_C_sqr(k.dst, k.src, k.ca, s, k.dtype); break;
    case Op::count: break;
  }
}

// The documented arithmetic: one fp32 rounding per step (volatile keeps
// each step's rounding), then one rounding into the dtype.
float reference(Op op, float x, float a, float b) {
  volatile float t;
  switch (op) {
    case Op::bias: t = x + a; return t;
    case Op::scale: t = x * a; return t;
    case Op::scale_bias: case Op::scale_bias_C: t = x * a; t = t + b; return t;
    case Op::add_bias_sqr: case Op::add_C_sqr: t = x + a; t = t * t; return t;
    case Op::sub_bias_sqr: case Op::sub_C_sqr: t = x - a; t = t * t; return t;
    case Op::count: break;
  }
  return 0;
}

bool is_const(Op op) { return op == Op::scale_bias_C || op == Op::add_C_sqr || op == Op::sub_C_sqr; }

class BdcLinear : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  Chip chip;
};

TEST_P(BdcLinear, RandomShapesMatchTheReference) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t types[] = {DT_FP32, DT_FP16, DT_BFP16};
  std::vector<uint8_t> expected;
  for (int iter = 0; iter < 8 * int(Op::count); ++iter) {
    const Op op = Op(iter % int(Op::count));
    const data_type_t t = types[seeded.uniform(0, 2)];
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 5), seeded.uniform(1, 5),
                        seeded.uniform(1, 17)};
    const dim4 pc_shape = {1, shape.c, 1, 1};
    const int npu = seeded.uniform(1, chip.npu - 1);
    const uint32_t region = (aligned_bytes(chip, npu, shape, t) + 63) / 64 * 64;
    std::vector<int> slots = {0, 1, 2, 3};
    std::shuffle(slots.begin(), slots.end(), rng);
    auto at = [&](int slot, const dim4 &s) { return aligned(chip, npu, uint32_t(slot) * region, s, t); };
    const Tensor dst = at(slots[0], shape);
    const bool in_place = seeded.uniform(0, 3) == 0;
    const Tensor src = in_place ? dst : at(slots[1], shape);
    const Tensor a = at(slots[2], pc_shape), b = at(slots[3], pc_shape);
    LinearCall k{op, dst.addr, src.addr, a.addr, b.addr, {}, {}, shape, t};
    k.ca.u32 = random_float_bits(rng, t, 4);
    k.cb.u32 = random_float_bits(rng, t, 4);
    for_each_index(shape, [&](int n, int c, int h, int w) { set_bits(chip, src, n, c, h, w, random_float_bits(rng, t)); });
    for (int c = 0; c < shape.c; ++c) {
      set_bits(chip, a, 0, c, 0, 0, random_float_bits(rng, t, 4));
      set_bits(chip, b, 0, c, 0, 0, random_float_bits(rng, t, 4));
    }
    expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const float x = decode(t, get_bits(chip, src, n, c, h, w));
      const float av = is_const(op) ? decode(t, k.ca.u32) : decode(t, get_bits(chip, a, 0, c, 0, 0));
      const float bv = is_const(op) ? decode(t, k.cb.u32) : decode(t, get_bits(chip, b, 0, c, 0, 0));
      put(expected, chip, dst, n, c, h, w, encode(t, reference(op, x, av, bv)));
    });
    ASSERT_EQ(cmodel_run(linear_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return std::string(op_name(op)) + " " + dtype_label(t) + " " + describe(shape) + " NPU " + std::to_string(npu) +
             (in_place ? " in place" : "") + " iteration " + std::to_string(iter);
    });
  }
}

// Channel c reads bias(0, c, 0, 0) from its own lane, also past the first
// row of NPUs: a case written out by hand.
TEST_P(BdcLinear, EachChannelGetsItsOwnValue) {
  const int npu = chip.npu - 1;
  const dim4 shape = {2, chip.npu + 2, 1, 3};  // channels on NPU npu-1 .. 63 then 0 .. chip.npu, two rows
  const Tensor dst = aligned(chip, npu, 0, shape, DT_FP32), src = aligned(chip, npu, 4096, shape, DT_FP32),
               bias = aligned(chip, npu, 8192, {1, shape.c, 1, 1}, DT_FP32);
  for_each_index(shape, [&](int n, int c, int h, int w) { set<float>(chip, src, n, c, h, w, float(1000 * n + w)); });
  for (int c = 0; c < shape.c; ++c) set<float>(chip, bias, 0, c, 0, 0, float(c) / 4);
  LinearCall k{Op::bias, dst.addr, src.addr, bias.addr, 0, {}, {}, shape, DT_FP32};
  ASSERT_EQ(cmodel_run(linear_kernel, &k), 0) << cmodel_last_error();
  for_each_index(shape, [&](int n, int c, int h, int w) {
    EXPECT_EQ(get<float>(chip, dst, n, c, h, w), float(1000 * n + w) + float(c) / 4) << n << "," << c << "," << w;
  });
  // By hand: channel 0 is on the last NPU (row 0); channel 1 on NPU 0 in row
  // 1, channel NPU_NUM + 1 on NPU 0 in row 2; the rows of the aligned
  // [1, c, 1, 1] bias are EU bytes apart.
  float raw = 0;
  std::memcpy(&raw, local_at(8192 + chip.eu_bytes), 4);
  EXPECT_EQ(raw, 0.25f);
  std::memcpy(&raw, local_at(8192 + 2 * chip.eu_bytes), 4);
  EXPECT_EQ(raw, float(chip.npu + 1) / 4);
}

TEST_P(BdcLinear, CostsAndCounts) {
  const dim4 shape = {1, chip.npu, 8, 8};
  LinearCall k{Op::scale_bias, 0, 16384, 32768, 32768 + 256, {}, {}, shape, DT_FP32};
  const Tensor s = aligned(chip, 0, 16384, shape, DT_FP32);
  for_each_index(shape, [&](int n, int c, int h, int w) { set<float>(chip, s, n, c, h, w, 1.0f); });
  for (int c = 0; c < chip.npu; ++c) {
    set<float>(chip, aligned(chip, 0, 32768, {1, chip.npu, 1, 1}, DT_FP32), 0, c, 0, 0, 2.0f);
    set<float>(chip, aligned(chip, 0, 32768 + 256, {1, chip.npu, 1, 1}, DT_FP32), 0, c, 0, 0, 3.0f);
  }
  ASSERT_EQ(cmodel_run(linear_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(run_stats().at("commands").at("tpu_bdc_fp_scale_bias").get<int>(), 1);
  EXPECT_GT(bdc_cycles(), 0);
  EXPECT_EQ(get<float>(chip, aligned(chip, 0, 0, shape, DT_FP32), 0, 5, 7, 7), 5.0f);
}

// ---- checks ------------------------------------------------------------------------------

void bad_kernel(const void *arg) {
  const int which = *static_cast<const int *>(arg);
  const dim4 shape = {1, 5, 2, 3};
  const local_addr_t npu1 = LOCAL_MEM_SIZE;
  scalar_t C{};
  switch (which) {
    case 0: tpu_bdc_fp_bias(0, 4096, 8192, &shape, DT_INT16); break;
    case 1: tpu_bdc_fp_bias(0, 4096, npu1 + 8192, &shape, DT_FP32); break;
    case 2: tpu_bdc_fp_scale(0, 4096, 8192 + 2, &shape, DT_FP32); break;
    case 3: tpu_bdc_fp_scale_bias(0, 4096, 8192, npu1 + 8192, &shape, DT_BFP16); break;
    case 4: tpu_bdc_fp_scale_bias_C(0, npu1 + 4096, C, C, &shape, DT_FP16); break;
    case 5: tpu_bdc_fp_add_C_sqr(0, 4096, C, nullptr, DT_FP32); break;
    case 6: tpu_bdc_fp_sub_bias_sqr(4, 4096, 8192, &shape, DT_FP32); break;
    case 7: tpu_bdc_fp_add_bias_sqr(0, 4096, NPU_NUM * LOCAL_MEM_SIZE, &shape, DT_FP32); break;
    case 8: tpu_bdc_fp_sub_C_sqr(0, 4096, C, &shape, DT_UINT8); break;
  }
}

TEST_P(BdcLinear, ChecksNameTheFunctionAndTheValue) {
  int which = 0;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &which, "tpu_bdc_fp_bias: dtype DT_INT16 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16");
  which = 1;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &which, "tpu_bdc_fp_bias: dst starts on NPU 0 but bias on NPU 1");
  which = 2;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &which,
                        "tpu_bdc_fp_scale: scale local address 0x2002 is not a multiple of the 4-byte size of DT_FP32");
  which = 3;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &which, "tpu_bdc_fp_scale_bias: dst starts on NPU 0 but bias on NPU 1");
  which = 4;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &which, "tpu_bdc_fp_scale_bias_C: dst starts on NPU 0 but src on NPU 1");
  which = 5;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &which, "tpu_bdc_fp_add_C_sqr: shape is a null pointer");
  which = 6;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &which, "tpu_bdc_fp_sub_bias_sqr: dst local address 0x4 uses the aligned layout");
  which = 7;
  const Chip chip = local_model::chip(GetParam());
  EXPECT_RUN_FAILS_WITH(bad_kernel, &which,
                        "tpu_bdc_fp_add_bias_sqr: bias local address " + hex(uint64_t(chip.npu) * chip.lmem) +
                            " is past the end of local memory");
  which = 8;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &which, "tpu_bdc_fp_sub_C_sqr: dtype DT_UINT8 is not allowed here");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcLinear, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
