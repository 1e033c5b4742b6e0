// bdc_half_blocks_test.cc: fp16 / bf16 element-wise commands convert a
// block of elements at a time (elementwise.h, map_blocks), which may only
// change speed, never results. The random tests of each family cover
// disjoint, strided, broadcast and exactly in-place operands; this covers
// what the block path must refuse: dst overlapping a source shifted by a
// few elements, where the per-element order (element i reads what element
// i - k already wrote) decides the result, over one plane and over several
// (the lane path's many-planes form must refuse it too). Expected values follow that
// order element by element with the scalar conversions of float_convert.h.
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel/numeric/float_convert.h"
#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

using namespace cmodel::numeric;

constexpr int kCount = 1500;  // spans several blocks

struct Shifted {
  data_type_t dtype;
  int shift;        // dst = src0 + shift elements (negative: before it)
  int batches = 1;  // the same elements as `batches` rows along N (one
                    // after the other in NPU 0): several planes, which
                    // the lane path takes many at a time
};

void add_kernel(const void *arg) {
  const auto &s = *static_cast<const Shifted *>(arg);
  const int w = kCount / s.batches;
  const dim4 shape = {s.batches, 1, 1, w}, stride = {w, w, w, 1};
  const local_addr_t src0 = 8192, src1 = 65536, dst = local_addr_t(int(src0) + 2 * s.shift);
  tpu_bdc_fp_add(dst, src0, src1, &shape, &stride, &stride, &stride, s.dtype);
}

float widen(data_type_t dtype, uint16_t v) { return dtype == DT_FP16 ? fp16_to_fp32(v) : bf16_to_fp32(v); }
uint16_t narrow(data_type_t dtype, float f) {
  return dtype == DT_FP16 ? fp32_to_fp16(f, RM_HALF_TO_EVEN) : fp32_to_bf16(f, RM_HALF_TO_EVEN);
}

class HalfBlocks : public testing::TestWithParam<Shifted> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
};

TEST_P(HalfBlocks, OverlappingShiftedOperandsFollowElementOrder) {
  const Shifted s = GetParam();
  auto *local = static_cast<uint8_t *>(tpu_local_mem_addr_unified(0));
  // Values around 1 with varied low bits, so every sum rounds.
  std::vector<uint16_t> memory(65536 / 2 + kCount);
  for (size_t i = 0; i < memory.size(); ++i)
    memory[i] = narrow(s.dtype, 1.0f + float((i * 7919) % 1000) / 997.0f);
  std::memcpy(local, memory.data(), memory.size() * 2);

  // The per-element order over a copy of NPU 0's memory.
  const size_t src0 = 8192 / 2, src1 = 65536 / 2, dst = src0 + size_t(s.shift);
  std::vector<uint16_t> expected = memory;
  for (size_t i = 0; i < size_t(kCount); ++i)
    expected[dst + i] = narrow(s.dtype, widen(s.dtype, expected[src0 + i]) + widen(s.dtype, expected[src1 + i]));

  ASSERT_EQ(cmodel_run(add_kernel, &s), 0) << cmodel_last_error();
  std::vector<uint16_t> got(memory.size());
  std::memcpy(got.data(), local, got.size() * 2);
  int reported = 0;
  for (size_t i = 0; i < got.size() && reported < 10; ++i)
    if (got[i] != expected[i]) {
      ADD_FAILURE() << "element " << i << " (dst index " << int64_t(i) - int64_t(dst) << "): got " << got[i]
                    << ", per-element order gives " << expected[i];
      ++reported;
    }
}

INSTANTIATE_TEST_SUITE_P(Shifts, HalfBlocks,
                         testing::Values(Shifted{DT_FP16, 1}, Shifted{DT_FP16, 3}, Shifted{DT_FP16, -2},
                                         Shifted{DT_FP16, 600}, Shifted{DT_FP16, 0}, Shifted{DT_BFP16, 1},
                                         Shifted{DT_BFP16, -5}, Shifted{DT_BFP16, 0}, Shifted{DT_FP16, 1, 4},
                                         Shifted{DT_FP16, -3, 4}, Shifted{DT_BFP16, 2, 6}, Shifted{DT_BFP16, 0, 4}),
                         [](const testing::TestParamInfo<Shifted> &info) {
                           const int shift = info.param.shift;
                           return std::string(info.param.dtype == DT_FP16 ? "fp16" : "bf16") + "_shift_" +
                                  (shift < 0 ? "minus_" : "") + std::to_string(shift < 0 ? -shift : shift) +
                                  (info.param.batches > 1 ? "_in_" + std::to_string(info.param.batches) : "");
                         });

}  // namespace
