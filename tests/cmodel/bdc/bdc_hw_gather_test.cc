// bdc_hw_gather_test: BDC gather / scatter by (h, w) index pairs
// (tpu_bdc_hw_gather, _exception, tpu_bdc_hw_scatter; cmodel/bdc/hw_gather.h)
// against an independent model of the layout we decided (index [N, 1, 1, 2W]
// UINT16 pairs on NPU 0, shared by every channel), bit for bit over the whole
// local memory: random shapes, dtypes and start NPUs, pairs in and out of
// range (filled or clamped by the exception form, skipped by the scatter);
// then a known table by value, and the refusals of SG-5's conditions.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/local_model.h"
#include "support/run_body.h"
#include "support/test_support.h"

namespace {

using namespace local_model;

struct Case {
  bool scatter = false, exception = false, fill_const = false;
  int plane_h = 1, plane_w = 1;  // param's (gather) or output's (scatter) H and W
  data_type_t dtype = DT_FP32;
  dim4 shape{};  // the one-row operand's: [N, C, 1, W]
  Tensor output{}, param{}, index{};
  scalar_t C{};
};

const std::vector<data_type_t> kDtypes = {DT_INT8, DT_UINT16, DT_INT32, DT_FP16, DT_BFP16, DT_FP32};

void call(const Case &k) {
  const dim4 *s = &k.shape;
  if (k.scatter) return tpu_bdc_hw_scatter(k.output.addr, k.param.addr, k.index.addr, s, k.plane_h, k.plane_w, k.dtype);
  if (k.exception)
    return tpu_bdc_hw_gather_exception(k.output.addr, k.param.addr, k.index.addr, k.C, s, k.plane_h, k.plane_w,
                                       k.dtype, k.fill_const);
  tpu_bdc_hw_gather(k.output.addr, k.param.addr, k.index.addr, s, k.plane_h, k.plane_w, k.dtype);
}

class BdcHwGather : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }

  void fill_random(const Tensor &t, test::Seeded &seeded) {
    for_each_index(t.shape, [&](int n, int c, int h, int w) { set_bits(chip, t, n, c, h, w, uint32_t(seeded.rng()())); });
  }

  Case random_case(test::Seeded &seeded, bool scatter) {
    Case k;
    k.scatter = scatter;
    k.exception = !scatter && seeded.uniform(0, 1);
    k.fill_const = seeded.uniform(0, 1);
    k.dtype = kDtypes[size_t(seeded.uniform(0, int(kDtypes.size()) - 1))];
    k.plane_h = seeded.uniform(1, 6), k.plane_w = seeded.uniform(1, 9);
    k.shape = {seeded.uniform(1, 2), seeded.uniform(1, chip.npu + 3), 1, seeded.uniform(1, 12)};
    k.C.u32 = uint32_t(seeded.rng()());
    const int start = seeded.uniform(0, chip.npu - 1);
    const uint32_t third = chip.lmem / 3 / 64 * 64;
    const dim4 plane = {k.shape.n, k.shape.c, k.plane_h, k.plane_w};
    k.output = aligned(chip, start, 0, scatter ? plane : k.shape, k.dtype);
    k.param = aligned(chip, start, third, scatter ? k.shape : plane, k.dtype);
    k.index = aligned(chip, 0, 2 * third, {k.shape.n, 1, 1, 2 * k.shape.w}, DT_UINT16);
    fill_random(k.output, seeded);
    fill_random(k.param, seeded);
    // Pairs in range for the plain gather; else up to 2 past each extent.
    const int slack = (scatter || k.exception) ? 2 : 0;
    for (int n = 0; n < k.shape.n; ++n)
      for (int w = 0; w < k.shape.w; ++w) {
        set<uint16_t>(chip, k.index, n, 0, 0, 2 * w, uint16_t(seeded.uniform(0, k.plane_h - 1 + slack)));
        set<uint16_t>(chip, k.index, n, 0, 0, 2 * w + 1, uint16_t(seeded.uniform(0, k.plane_w - 1 + slack)));
      }
    return k;
  }

  // The expected local memory: the model of hw_gather.h's formulas.
  std::vector<uint8_t> expected_image(const Case &k) const {
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(k.shape, [&](int n, int c, int, int w) {
      const int ph = get<uint16_t>(chip, k.index, n, 0, 0, 2 * w), pw = get<uint16_t>(chip, k.index, n, 0, 0, 2 * w + 1);
      const bool inside = ph < k.plane_h && pw < k.plane_w;
      if (k.scatter) {
        if (inside) put(expected, chip, k.output, n, c, ph, pw, get_bits(chip, k.param, n, c, 0, w));
        return;
      }
      uint32_t v = k.C.u32;
      if (inside || !k.fill_const)
        v = get_bits(chip, k.param, n, c, std::min(ph, k.plane_h - 1), std::min(pw, k.plane_w - 1));
      put(expected, chip, k.output, n, c, 0, w, v);
    });
    return expected;
  }

  Chip chip;
};

std::string describe(const Case &k, int iteration) {
  return std::string(k.scatter ? "scatter" : k.exception ? (k.fill_const ? "gather fill" : "gather clamp") : "gather") +
         " dtype " + std::to_string(k.dtype) + " plane " + std::to_string(k.plane_h) + "x" + std::to_string(k.plane_w) +
         " shape [" + std::to_string(k.shape.n) + "," + std::to_string(k.shape.c) + ",1," + std::to_string(k.shape.w) +
         "] iteration " + std::to_string(iteration);
}

TEST_P(BdcHwGather, RandomGathersAndScattersMatchTheModel) {
  test::Seeded seeded;
  for (int iteration = 0; iteration < 60; ++iteration) {
    const Case k = random_case(seeded, iteration % 3 == 2);
    const std::vector<uint8_t> expected = expected_image(k);
    ASSERT_TRUE(test::run_kernel_body([&] { call(k); })) << describe(k, iteration) << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return describe(k, iteration); });
    if (::testing::Test::HasFailure()) break;
  }
}

// Hand-derived values: param(c, h, w) = 100 c + 10 h + w, pairs (2, 1),
// (0, 3), (1, 0) give 100 c + 21, 100 c + 3, 100 c + 10 in every channel.
TEST_P(BdcHwGather, GathersAKnownTableByPairs) {
  const Tensor param = aligned(chip, 0, 0, {1, 3, 3, 4}, DT_FP32);
  const Tensor index = aligned(chip, 0, 4096, {1, 1, 1, 6}, DT_UINT16);
  const Tensor out = aligned(chip, 0, 8192, {1, 3, 1, 3}, DT_FP32);
  for_each_index(param.shape, [&](int n, int c, int h, int w) { set(chip, param, n, c, h, w, float(100 * c + 10 * h + w)); });
  const uint16_t pairs[6] = {2, 1, 0, 3, 1, 0};
  for (int i = 0; i < 6; ++i) set<uint16_t>(chip, index, 0, 0, 0, i, pairs[i]);
  const dim4 shape = out.shape;
  ASSERT_TRUE(test::run_kernel_body([&] { tpu_bdc_hw_gather(out.addr, param.addr, index.addr, &shape, 3, 4, DT_FP32); }))
      << cmodel_last_error();
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(get<float>(chip, out, 0, c, 0, 0), float(100 * c + 21));
    EXPECT_EQ(get<float>(chip, out, 0, c, 0, 1), float(100 * c + 3));
    EXPECT_EQ(get<float>(chip, out, 0, c, 0, 2), float(100 * c + 10));
  }
}

TEST_P(BdcHwGather, AnOutOfRangePairStopsThePlainGatherAndLeavesMemoryAlone) {
  const Tensor param = aligned(chip, 0, 0, {1, 2, 2, 2}, DT_INT32);
  const Tensor index = aligned(chip, 0, 4096, {1, 1, 1, 4}, DT_UINT16);
  const Tensor out = aligned(chip, 0, 8192, {1, 2, 1, 2}, DT_INT32);
  const uint16_t pairs[4] = {0, 1, 2, 0};  // the second pair's row is param_h
  for (int i = 0; i < 4; ++i) set<uint16_t>(chip, index, 0, 0, 0, i, pairs[i]);
  const std::vector<uint8_t> before = snapshot(chip);
  const dim4 shape = out.shape;
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_hw_gather(out.addr, param.addr, index.addr, &shape, 2, 2, DT_INT32); }));
  const std::string m = cmodel_last_error();
  EXPECT_NE(m.find("index pair 1 of batch 0 is (h 2, w 0), outside param_h 2 x param_w 2"), std::string::npos) << m;
  expect_local_memory(chip, before, [] { return std::string("after the failed gather"); });
}

TEST_P(BdcHwGather, SkippedScatterPairsAreOneWarning) {
  const Tensor param = aligned(chip, 0, 0, {1, 1, 1, 3}, DT_FP16);
  const Tensor index = aligned(chip, 0, 4096, {1, 1, 1, 6}, DT_UINT16);
  const Tensor out = aligned(chip, 0, 8192, {1, 1, 2, 2}, DT_FP16);
  const uint16_t pairs[6] = {1, 1, 5, 0, 0, 7};
  for (int i = 0; i < 6; ++i) set<uint16_t>(chip, index, 0, 0, 0, i, pairs[i]);
  for (int w = 0; w < 3; ++w) set<uint16_t>(chip, param, 0, 0, 0, w, uint16_t(0x3c00 + w));  // 1.0, ...
  for_each_index(out.shape, [&](int n, int c, int h, int w) { set<uint16_t>(chip, out, n, c, h, w, 0); });
  const dim4 shape = param.shape;
  ASSERT_TRUE(test::run_kernel_body([&] { tpu_bdc_hw_scatter(out.addr, param.addr, index.addr, &shape, 2, 2, DT_FP16); }))
      << cmodel_last_error();
  const auto warnings = test::last_run_stats().at("warnings");
  ASSERT_EQ(warnings.size(), 1u) << warnings.dump();
  EXPECT_NE(warnings[0].get<std::string>().find("tpu_bdc_hw_scatter: 2 index pair(s) outside output_h 2 x output_w 2"),
            std::string::npos)
      << warnings.dump();
  EXPECT_EQ(get<uint16_t>(chip, out, 0, 0, 1, 1), 0x3c00);  // the one pair inside: (1, 1)
  EXPECT_EQ(get<uint16_t>(chip, out, 0, 0, 0, 0), 0);
}

// SG-5's conditions, each named: H = 1, the index on NPU 0, one NPU for
// param and output, aligned starts, dims in [1, 65535].
TEST_P(BdcHwGather, BreachesOfSg5AreRefusedByName) {
  const auto refused = [](const std::function<void()> &body, const std::string &what) {
    EXPECT_FALSE(test::run_kernel_body(body)) << what;
    const std::string m = cmodel_last_error();
    EXPECT_NE(m.find(what), std::string::npos) << m;
    EXPECT_NE(m.find("[SG-5]"), std::string::npos) << m;
  };
  const dim4 two_rows = {1, 1, 2, 4}, row = {1, 1, 1, 4};
  const local_addr_t npu1 = LOCAL_MEM_SIZE;
  refused([&] { tpu_bdc_hw_gather(0, 4096, 8192, &two_rows, 2, 2, DT_FP32); }, "output has H = 2");
  refused([&] { tpu_bdc_hw_scatter(0, 4096, 8192, &two_rows, 2, 2, DT_FP32); }, "param has H = 2");
  refused([&] { tpu_bdc_hw_gather(npu1, npu1 + 4096, npu1 + 8192, &row, 2, 2, DT_FP32); }, "index local address");
  refused([&] { tpu_bdc_hw_gather(0, npu1 + 4096, 8192, &row, 2, 2, DT_FP32); }, "output starts on NPU 0 but param");
  refused([&] { tpu_bdc_hw_gather(0, 4100, 8192, &row, 2, 2, DT_FP32); }, "param local address");
  refused([&] { tpu_bdc_hw_gather(0, 4096, 8192, &row, 0, 2, DT_FP32); }, "param_h = 0");
  refused([&] { tpu_bdc_hw_scatter(0, 4096, 8192, &row, 2, 70000, DT_FP32); }, "output_w = 70000");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcHwGather, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
