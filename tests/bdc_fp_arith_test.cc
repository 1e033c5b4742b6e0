// bdc_fp_arith_test: tpu_bdc_fp_add/sub/mul and their _C / C_sub forms
// against a host reference, bit for bit: fp32 arithmetic, rounded to
// nearest-even into fp16/bf16. Random shapes and layouts (aligned and free
// strides, zero-stride broadcast sources, in-place), any start NPU, both
// chips. Bytes outside dst must stay untouched.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "support/local_model.h"
#include "support/test_support.h"

namespace {

using namespace local_model;

enum class Op { add, sub, mul, add_C, sub_C, C_sub, mul_C };

struct Command {
  Op op;
  Tensor dst, src0, src1;
  scalar_t C;
};

void fp_kernel(const void *arg) {
  const auto &k = *static_cast<const Command *>(arg);
  const dim4 *shape = &k.dst.shape;
  const data_type_t t = k.dst.dtype;
  switch (k.op) {
    case Op::add: tpu_bdc_fp_add(k.dst.addr, k.src0.addr, k.src1.addr, shape, k.dst.api_stride(), k.src0.api_stride(), k.src1.api_stride(), t); break;
    case Op::sub: tpu_bdc_fp_sub(k.dst.addr, k.src0.addr, k.src1.addr, shape, k.dst.api_stride(), k.src0.api_stride(), k.src1.api_stride(), t); break;
    case Op::mul: tpu_bdc_fp_mul(k.dst.addr, k.src0.addr, k.src1.addr, shape, k.dst.api_stride(), k.src0.api_stride(), k.src1.api_stride(), t); break;
    case Op::add_C: tpu_bdc_fp_add_C(k.dst.addr, k.src0.addr, k.C, shape, k.dst.api_stride(), k.src0.api_stride(), t); break;
    case Op::sub_C: tpu_bdc_fp_sub_C(k.dst.addr, k.src0.addr, k.C, shape, k.dst.api_stride(), k.src0.api_stride(), t); break;
    case Op::C_sub: tpu_bdc_fp_C_sub(k.dst.addr, k.src0.addr, k.C, shape, k.dst.api_stride(), k.src0.api_stride(), t); break;
    case Op::mul_C: tpu_bdc_fp_mul_C(k.dst.addr, k.src0.addr, k.C, shape, k.dst.api_stride(), k.src0.api_stride(), t); break;
  }
}

float reference(Op op, float a, float b, float c) {
  switch (op) {
    case Op::add: return a + b;
    case Op::sub: return a - b;
    case Op::mul: return a * b;
    case Op::add_C: return a + c;
    case Op::sub_C: return a - c;
    case Op::C_sub: return c - a;
    case Op::mul_C: return a * c;
  }
  return 0;
}

bool has_second_tensor(Op op) { return op == Op::add || op == Op::sub || op == Op::mul; }

// Loads / stores a float of dtype t through the test's own conversions.
float load(const Chip &chip, const Tensor &t, int n, int c, int h, int w) {
  if (t.dtype == DT_FP32) return get<float>(chip, t, n, c, h, w);
  const uint16_t bits = get<uint16_t>(chip, t, n, c, h, w);
  return t.dtype == DT_FP16 ? from_fp16(bits) : from_bf16(bits);
}
uint32_t encode(data_type_t t, float v) {
  if (t == DT_FP32) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return u;
  }
  return t == DT_FP16 ? to_fp16(v) : to_bf16(v);
}

// Random finite values, with a few exact ties and magnitudes that round.
template <typename Rng>
float random_value(Rng &rng) {
  std::uniform_real_distribution<float> wide(-1000.0f, 1000.0f);
  switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
    case 0: return float(std::uniform_int_distribution<int>(-64, 64)(rng)) * 0.25f;
    case 1: return wide(rng) * 1e-3f;
    default: return wide(rng);
  }
}

class BdcFpArith : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
};

TEST_P(BdcFpArith, RandomShapesLayoutsAndDtypes) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const Chip chip = local_model::chip(GetParam());
  const uint32_t third = chip.lmem / 3 / 64 * 64;
  for (int iter = 0; iter < 150; ++iter) {
    const Op op = Op(seeded.uniform(0, 6));
    const data_type_t dtype = std::vector<data_type_t>{DT_FP32, DT_FP16, DT_BFP16}[seeded.uniform(0, 2)];
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 7),
                        seeded.uniform(1, 19)};
    const int npu = seeded.uniform(0, chip.npu - 1);
    const bool in_place = seeded.uniform(0, 4) == 0;
    Command k{};
    k.op = op;
    if (!random_layout(rng, chip, npu, 0, shape, dtype, false, third, k.dst) ||
        !random_layout(rng, chip, npu, third, shape, dtype, true, third, k.src0) ||
        !random_layout(rng, chip, npu, 2 * third, shape, dtype, true, third, k.src1))
      continue;  // too large for this layout; try another
    if (in_place) k.src0 = k.dst;
    k.C.u32 = encode(dtype, random_value(rng));
    const float c_value = dtype == DT_FP32 ? k.C.f32 : dtype == DT_FP16 ? from_fp16(k.C.u16) : from_bf16(k.C.u16);

    // Inputs written through the model; expected results computed before the run.
    for_each_index(shape, [&](int n, int c, int h, int w) {
      for (const Tensor *t : {&k.src0, &k.src1}) {
        const uint32_t bits = encode(dtype, random_value(rng));
        if (dtype == DT_FP32) set<uint32_t>(chip, *t, n, c, h, w, bits);
        else set<uint16_t>(chip, *t, n, c, h, w, uint16_t(bits));
      }
    });
    // The whole local memory as it must be after the run: only dst changes.
    std::vector<uint8_t> expected(local_memory(), local_memory() + size_t(chip.npu) * chip.lmem);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const float a = load(chip, k.src0, n, c, h, w);
      const float b = has_second_tensor(op) ? load(chip, k.src1, n, c, h, w) : 0.0f;
      const uint32_t bits = encode(dtype, reference(op, a, b, c_value));
      std::memcpy(expected.data() + offset_of(chip, k.dst, n, c, h, w), &bits, esize(dtype));
    });

    ASSERT_EQ(cmodel_run(fp_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      return "op " + std::to_string(int(op)) + " dtype " + std::to_string(dtype) + " iteration " +
             std::to_string(iter);
    });
  }
}

void mismatched_npu_kernel(const void *arg) {
  const int npu_num = *static_cast<const int *>(arg);
  (void)npu_num;
  const dim4 shape = {1, 4, 2, 2};
  tpu_bdc_fp_add(0, LOCAL_MEM_SIZE, 2 * 4096, &shape, nullptr, nullptr, nullptr, DT_FP32);
}

TEST_P(BdcFpArith, OperandsMustStartOnTheSameNpu) {
  int unused = 0;
  EXPECT_NE(cmodel_run(mismatched_npu_kernel, &unused), 0);
  const std::string m = cmodel_last_error();
  EXPECT_NE(m.find("tpu_bdc_fp_add: dst starts on NPU 0 but src0 on NPU 1"), std::string::npos) << m;
}

void int_dtype_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  tpu_bdc_fp_mul(0, 256, 512, &shape, nullptr, nullptr, nullptr, DT_INT16);
}

TEST_P(BdcFpArith, RejectsIntegerDtypes) {
  EXPECT_NE(cmodel_run(int_dtype_kernel, nullptr), 0);
  const std::string m = cmodel_last_error();
  EXPECT_NE(m.find("dtype DT_INT16 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16"),
            std::string::npos)
      << m;
}

void misaligned_kernel(const void *) {
  const dim4 shape = {1, 1, 1, 4};
  tpu_bdc_fp_add(0, 4, 4096, &shape, nullptr, nullptr, nullptr, DT_FP32);
}

TEST_P(BdcFpArith, AlignedLayoutNeedsAlignedAddress) {
  EXPECT_NE(cmodel_run(misaligned_kernel, nullptr), 0);
  const std::string m = cmodel_last_error();
  EXPECT_NE(m.find("src0 local address 0x4 uses the aligned layout"), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcFpArith, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
