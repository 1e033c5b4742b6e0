// bdc_reduce_mean_test: tpu_bdc_fp_hw_reduce_mean, the mean of each
// channel's h x w plane, against a host model of the documented arithmetic
// (pool.h, float avg): each x * scale rounded to fp32, with scale = 1 / (h w)
// rounded into the dtype, summed in fp32 in row-major order, the sum rounded
// into the dtype; random shapes, start NPUs and dtypes on both chips.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/local_model.h"
#include "support/run_body.h"
#include "support/test_support.h"

namespace {

using namespace local_model;

class BdcReduceMean : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  Chip chip;
};

TEST_P(BdcReduceMean, MeansOfEveryPlaneMatchTheModel) {
  test::Seeded seeded;
  const data_type_t dtypes[] = {DT_FP32, DT_FP16, DT_BFP16};
  for (int iteration = 0; iteration < 40; ++iteration) {
    const data_type_t t = dtypes[seeded.uniform(0, 2)];
    const dim4 shape = {seeded.uniform(1, 2), seeded.uniform(1, chip.npu + 3), seeded.uniform(1, 9), seeded.uniform(1, 30)};
    const int start = seeded.uniform(0, chip.npu - 1);
    const Tensor in = aligned(chip, start, 0, shape, t);
    const Tensor out = aligned(chip, start, chip.lmem / 2, {shape.n, shape.c, 1, 1}, t);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      set_bits(chip, in, n, c, h, w, bits_of(t, float(seeded.uniform(-2000, 2000)) / 64.0f));
    });
    const float scale = float_of(t, bits_of(t, 1.0f / float(shape.h * shape.w)));
    std::vector<uint8_t> expected = snapshot(chip);
    for (int n = 0; n < shape.n; ++n)
      for (int c = 0; c < shape.c; ++c) {
        float acc = 0;
        for (int h = 0; h < shape.h; ++h)
          for (int w = 0; w < shape.w; ++w) {
            const float p = float_of(t, get_bits(chip, in, n, c, h, w)) * scale;
            acc = (h == 0 && w == 0) ? p : acc + p;
          }
        put(expected, chip, out, n, c, 0, 0, bits_of(t, acc));
      }
    ASSERT_TRUE(test::run_kernel_body([&] { tpu_bdc_fp_hw_reduce_mean(out.addr, in.addr, chip.lmem / 4, &shape, t); }))
        << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return "dtype " + std::to_string(t) + " iteration " + std::to_string(iteration); });
    if (::testing::Test::HasFailure()) break;
  }
}

TEST_P(BdcReduceMean, AKnownMean) {
  const dim4 shape = {1, 1, 2, 2};
  const Tensor in = aligned(chip, 0, 0, shape, DT_FP32), out = aligned(chip, 0, 4096, {1, 1, 1, 1}, DT_FP32);
  const float v[4] = {1, 2, 3, 6};
  for (int i = 0; i < 4; ++i) set(chip, in, 0, 0, i / 2, i % 2, v[i]);
  ASSERT_TRUE(test::run_kernel_body([&] { tpu_bdc_fp_hw_reduce_mean(out.addr, in.addr, 8192, &shape, DT_FP32); }))
      << cmodel_last_error();
  EXPECT_EQ(get<float>(chip, out, 0, 0, 0, 0), 3.0f);
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcReduceMean, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
