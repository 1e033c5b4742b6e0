// ppl_shapes_test.cc: local tensors declared without a shape (spec §2.6,
// docs/ppl.md "Tensors without a shape"; fixture tests/ppl/fixtures/
// shapeless.pl), on both chips: memory planned from the first write, the
// shapes the writers give, and PplShapeInferErr at the .pl line for what
// cannot give a shape. References by hand and in double precision.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "shapeless.h"
#include "ppl_support.h"
#include "support/test_support.h"

namespace {

using namespace ppl_test;

class PplShapes : public ChipTest {};

int fixture_line(const std::string &needle) { return source_line("tests/ppl/fixtures/shapeless.pl", needle); }

// 60 % of a lane each: planned from their first writes they share bytes;
// alive together they do not fit, and the error names the tensor's line.
TEST_P(PplShapes, MemoryIsPlannedFromTheFirstWrite) {
  const Chip chip = GetParam();
  const int columns = int(chip.lane_bytes * 6 / 10 / 4) / 16 * 16, length = chip.lanes * columns;
  const std::vector<float> x = ramp(length, 0.5f, -20.0f);
  const uint64_t gx = upload(x), gout = upload(std::vector<float>(length));
  ASSERT_EQ(shapeless_one_after_the_other(gout, gx, columns), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, length);
  for (int i = 0; i < length; ++i) ASSERT_EQ(out[i], 3 * x[i]) << "element " << i;
  EXPECT_EQ(shapeless_both_alive(gout, gx, columns), PplLocalAddrAssignErr);
  EXPECT_CONTAINS(cmodel_last_error(), "shapeless.pl:");
}

// A block of 60 % of a lane fits one buffer: serially it runs, pipelined
// (two buffers, the tensor being loaded and computed on) it does not; half
// of it runs pipelined, with the serial loop's results.
TEST_P(PplShapes, PipelinedLoopsDoubleTensorsWithoutAShape) {
  const Chip chip = GetParam();
  const int block = int(chip.lane_bytes * 6 / 10 / 4) / 16 * 16, columns = 2 * block, length = chip.lanes * columns;
  const std::vector<float> x = ramp(length, 0.5f, -20.0f);
  const uint64_t gx = upload(x), gout = upload(std::vector<float>(length));
  for (const auto &[b, pipelined] : {std::pair{block, 0}, std::pair{block / 2, 1}}) {
    ASSERT_EQ(shapeless_blocks(gout, gx, columns, b, pipelined), 0) << cmodel_last_error();
    const std::vector<float> out = download<float>(gout, length);
    for (int i = 0; i < length; ++i) ASSERT_EQ(out[i], 2 * x[i]) << "block " << b << " element " << i;
  }
  EXPECT_EQ(shapeless_blocks(gout, gx, columns, block, 1), PplLocalAddrAssignErr);
  EXPECT_CONTAINS(cmodel_last_error(), "doubled by enable_pipeline");
}

TEST_P(PplShapes, AnExplicitAddressTakesTheInferredShape) {
  const int columns = 24, length = GetParam().lanes * columns;
  const std::vector<float> x = ramp(length, 0.25f, -5.0f);
  const uint64_t gx = upload(x), gout = upload(std::vector<float>(length));
  ASSERT_EQ(shapeless_at_address(gout, gx, columns), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, length);
  for (int i = 0; i < length; ++i) ASSERT_EQ(out[i], x[i] + 1) << i;
}

// Row sums (a reduction's [rows, 1]) and a product (fmm2's [1, M, 1, N])
// of fp16 inputs, against sums and products in double precision.
TEST_P(PplShapes, WritersGiveTheirOutputShapes) {
  const int rows = 20, k = 12, n = 9;
  std::vector<uint16_t> x(size_t(rows) * k), y(size_t(k) * n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = half_bits(float(int(i * 7 % 17) - 8) / 4.0f);
  for (size_t i = 0; i < y.size(); ++i) y[i] = half_bits(float(int(i * 5 % 13) - 6) / 2.0f);
  const uint64_t gx = upload(x), gy = upload(y), gout = upload(std::vector<float>(size_t(rows) * (1 + n), -9.0f));
  ASSERT_EQ(shapeless_writers(gout, gx, gy, rows, k, n), 0) << cmodel_last_error();
  const std::vector<float> out = download<float>(gout, size_t(rows) * (1 + n));
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int j = 0; j < k; ++j) sum += half_value(x[size_t(r) * k + j]);
    EXPECT_EQ(out[size_t(r) * (1 + n)], sum) << "row " << r;  // quarters: exact
    for (int c = 0; c < n; ++c) {
      double dot = 0;
      for (int j = 0; j < k; ++j) dot += double(half_value(x[size_t(r) * k + j])) * half_value(y[size_t(j) * n + c]);
      EXPECT_EQ(out[size_t(r) * (1 + n) + 1 + c], dot) << r << ", " << c;  // eighths: exact in fp32
    }
  }
}

// What cannot give a tensor its shape: PplShapeInferErr (0x1B), naming the
// call's line and the line the tensor was declared on, before any command
// (the output keeps its sentinel). A later write of another shape is an
// ordinary shape refusal (-1): shapes never change.
TEST_P(PplShapes, WhatCannotInferAShapeIsRefusedAtItsLine) {
  const struct {
    int result;
    const char *says;
  } misuses[] = {{PplShapeInferErr, "without an input to take its shape from"},
                 {PplShapeInferErr, "without an input to take its shape from"},
                 {PplShapeInferErr, "a view of it cannot be taken"},
                 {PplShapeInferErr, "is read here (src1) before any operation wrote it"},
                 {PplShapeInferErr, "before any operation wrote it"},
                 {PplShapeInferErr, "a view of it cannot be taken"},
                 {-1, "shapes differ: [1, 4, 1, 8] and [1, 4, 1, 4]"}};
  const std::string declared = "declared without a shape at shapeless.pl:" + std::to_string(fixture_line("// declared"));
  const uint64_t gout = upload(std::vector<float>(32, -5.0f));
  for (int which = 0; which < int(std::size(misuses)); ++which) {
    const int line = fixture_line("// misuse " + std::to_string(which));
    ASSERT_GT(line, 0) << which;
    EXPECT_EQ(shapeless_misuse(gout, which), misuses[which].result) << which;
    EXPECT_CONTAINS(cmodel_last_error(), misuses[which].says);
    EXPECT_CONTAINS(cmodel_last_error(), "shapeless.pl:" + std::to_string(line));
    if (misuses[which].result == PplShapeInferErr) {
      EXPECT_CONTAINS(cmodel_last_error(), "PplShapeInferErr (0x1B)");
      EXPECT_CONTAINS(cmodel_last_error(), declared);
    }
    EXPECT_EQ(download<float>(gout, 32), std::vector<float>(32, -5.0f)) << "a refused kernel ran: " << which;
  }
  EXPECT_EQ(shapeless_misuse(gout, int(std::size(misuses))), 0) << cmodel_last_error();
  EXPECT_EQ(download<float>(gout, 32), std::vector<float>(32, 1.0f));
}

INSTANTIATE_TEST_SUITE_P(Chips, PplShapes, ::testing::ValuesIn(kChips),
                         [](const ::testing::TestParamInfo<Chip> &info) { return std::string(info.param.name); });

}  // namespace
