// bdc_compare_test: tpu_bdc_greater / less / equal / greater_equal /
// less_equal / not_equal and their _C forms against a host reference, bit
// for bit: dst = (src0 OP src1) ? true_val : 0 for every pair of source and
// result dtypes (fp32, fp16, bf16, (u)int8, (u)int16, (u)int32), random
// shapes and layouts (aligned and free strides, zero-stride broadcast
// sources, in-place), any start NPU, both chips. The whole local memory is
// compared: bytes outside dst must stay untouched.
//
// The reference decodes every value to a double (exact for all these
// dtypes) and compares there: IEEE semantics, so NaN is unordered and
// +0 == -0. true_val is stored as its raw bit pattern; false is all-zero.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;

enum class Op { gt, lt, eq, ge, le, ne };
constexpr int op_count = 6;
const char *op_name(Op op, bool with_C) {
  static const char *names[] = {"greater", "less", "equal", "greater_equal", "less_equal", "not_equal"};
  static const char *names_C[] = {"greater_C", "less_C", "equal_C", "greater_equal_C", "less_equal_C",
                                  "not_equal_C"};
  return (with_C ? names_C : names)[int(op)];
}

const std::vector<data_type_t> all_dtypes = {DT_FP32, DT_FP16, DT_BFP16, DT_INT8,  DT_UINT8,
                                             DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};

struct Command {
  Op op;
  bool with_C;
  Tensor dst, src0, src1;
  scalar_t C, true_val;
};

void compare_kernel(const void *arg) {
  const auto &k = *static_cast<const Command *>(arg);
  const dim4 *shape = &k.dst.shape;
  const data_type_t d = k.dst.dtype, s = k.src0.dtype;
  const local_addr_t o = k.dst.addr, a = k.src0.addr, b = k.src1.addr;
  const dim4 *os = k.dst.api_stride(), *as = k.src0.api_stride(), *bs = k.src1.api_stride();
  const scalar_t t = k.true_val, C = k.C;
  if (k.with_C) {
    switch (k.op) {
      case Op::gt: tpu_bdc_greater_C(o, a, C, t, shape, os, as, d, s); break;
      case Op::lt: tpu_bdc_less_C(o, a, C, t, shape, os, as, d, s); break;
      case Op::eq: tpu_bdc_equal_C(o, a, C, t, shape, os, as, d, s); break;
      case Op::ge: tpu_bdc_greater_equal_C(o, a, C, t, shape, os, as, d, s); break;
      case Op::le: tpu_bdc_less_equal_C(o, a, C, t, shape, os, as, d, s); break;
      case Op::ne: tpu_bdc_not_equal_C(o, a, C, t, shape, os, as, d, s); break;
    }
  } else {
    switch (k.op) {
      case Op::gt: tpu_bdc_greater(o, a, b, t, shape, os, as, bs, d, s); break;
      case Op::lt: tpu_bdc_less(o, a, b, t, shape, os, as, bs, d, s); break;
      case Op::eq: tpu_bdc_equal(o, a, b, t, shape, os, as, bs, d, s); break;
      case Op::ge: tpu_bdc_greater_equal(o, a, b, t, shape, os, as, bs, d, s); break;
      case Op::le: tpu_bdc_less_equal(o, a, b, t, shape, os, as, bs, d, s); break;
      case Op::ne: tpu_bdc_not_equal(o, a, b, t, shape, os, as, bs, d, s); break;
    }
  }
}

// Raw bits of a random value of dtype t: many small values (|v| <= 3, so
// equality happens), zeros of both signs, infinities, NaNs, extremes and
// arbitrary bit patterns.
template <typename Rng>
uint32_t random_bits(Rng &rng, data_type_t t) {
  return random_compare_bits(rng, t, 3);
}

bool predicate(Op op, double a, double b) {
  switch (op) {
    case Op::gt: return a > b;
    case Op::lt: return a < b;
    case Op::eq: return a == b;
    case Op::ge: return a >= b;
    case Op::le: return a <= b;
    case Op::ne: return a != b;
  }
  return false;
}


class BdcCompare : public local_model::ChipTest {};

// Every (src dtype, dst dtype) pair twice, each source dtype with every
// function, on random shapes and layouts.
TEST_P(BdcCompare, RandomShapesLayoutsAndDtypes) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const Chip chip = local_model::chip(GetParam());
  const uint32_t third = chip.lmem / 3 / 64 * 64;
  int ran = 0, in_place = 0;
  for (int iter = 0; iter < 2 * 81; ++iter) {
    const int pair = iter / 2;
    const data_type_t src_dtype = all_dtypes[pair / 9], dst_dtype = all_dtypes[pair % 9];
    const int fn = (2 * pair + iter % 2 + 2 * (pair / 9)) % (2 * op_count);  // each src dtype meets all 12
    Command k{};
    k.op = Op(fn % op_count);
    k.with_C = fn >= op_count;
    dim4 shape{};
    bool placed = false;
    for (int attempt = 0; attempt < 20 && !placed; ++attempt) {
      shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 7),
               seeded.uniform(1, 19)};
      const int npu = seeded.uniform(0, chip.npu - 1);
      placed = random_layout(rng, chip, npu, 0, shape, dst_dtype, false, third, k.dst) &&
               random_layout(rng, chip, npu, third + 64 * seeded.uniform(0, 3), shape, src_dtype, true,
                             third - 256, k.src0) &&
               random_layout(rng, chip, npu, 2 * third + 64 * seeded.uniform(0, 3), shape, src_dtype, true,
                             third - 256, k.src1);
    }
    ASSERT_TRUE(placed);
    // In place (src0 or src1 is dst) when the element sizes agree.
    if (esize(src_dtype) == esize(dst_dtype) && seeded.uniform(0, 2) == 0) {
      Tensor &src = k.with_C || seeded.uniform(0, 1) == 0 ? k.src0 : k.src1;
      src = k.dst;
      src.dtype = src_dtype;
      ++in_place;
    }
    k.C.u32 = random_bits(rng, src_dtype);
    k.true_val.u32 = seeded.uniform(0, 3) == 0 ? 1u : uint32_t(rng()) & dtype_mask(dst_dtype);

    for_each_index(shape, [&](int n, int c, int h, int w) {
      const uint32_t a = random_bits(rng, src_dtype);
      set_bits(chip, k.src0, n, c, h, w, a);
      // Often the same value (or C) as the other side, so ==, <=, >= are exercised.
      const uint32_t b = seeded.uniform(0, 3) == 0 ? a : random_bits(rng, src_dtype);
      if (!k.with_C) set_bits(chip, k.src1, n, c, h, w, b);
      else if (seeded.uniform(0, 3) == 0) set_bits(chip, k.src0, n, c, h, w, k.C.u32);
    });
    std::vector<uint8_t> expected = snapshot(chip);
    const double c_value = exact_value(src_dtype, k.C.u32);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      const double a = exact_value(src_dtype, get_bits(chip, k.src0, n, c, h, w));
      const double b = k.with_C ? c_value : exact_value(src_dtype, get_bits(chip, k.src1, n, c, h, w));
      put(expected, chip, k.dst, n, c, h, w, predicate(k.op, a, b) ? k.true_val.u32 & dtype_mask(dst_dtype) : 0u);
    });

    ASSERT_EQ(cmodel_run(compare_kernel, &k), 0) << cmodel_last_error();
    ++ran;
    expect_local_memory(chip, expected, [&] {
      return std::string("tpu_bdc_") + op_name(k.op, k.with_C) + " dst " + std::to_string(dst_dtype) + " src " +
             std::to_string(src_dtype) + " iteration " + std::to_string(iter);
    });
    if (HasFailure()) return;
  }
  EXPECT_EQ(ran, 2 * 81);
  EXPECT_GT(in_place, 0);
}

// The IEEE cases spelled out: NaN is unordered (only != holds), +0 == -0,
// infinities order normally. Every float dtype, both forms.
TEST_P(BdcCompare, NanAndSignedZeroFollowIeee) {
  const Chip chip = local_model::chip(GetParam());
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Case {
    float a, b;
    bool gt, lt, eq, ge, le, ne;
  };
  const Case cases[] = {
      {nan, 1.0f, false, false, false, false, false, true},  {1.0f, nan, false, false, false, false, false, true},
      {nan, nan, false, false, false, false, false, true},   {-nan, 0.0f, false, false, false, false, false, true},
      {0.0f, -0.0f, false, false, true, true, true, false},  {-0.0f, 0.0f, false, false, true, true, true, false},
      {inf, inf, false, false, true, true, true, false},     {-inf, inf, false, true, false, false, true, true},
      {inf, 65504.0f, true, false, false, true, false, true}, {-2.5f, -3.0f, true, false, false, true, false, true},
  };
  const int count = int(std::size(cases));
  for (data_type_t t : {DT_FP32, DT_FP16, DT_BFP16}) {
    for (int fn = 0; fn < 2 * op_count; ++fn) {
      Command k{};
      k.op = Op(fn % op_count);
      k.with_C = fn >= op_count;
      const int npu = 3;
      const dim4 shape = {1, count, 1, 1};
      k.dst = aligned(chip, npu, 0, shape, DT_UINT8);
      k.src0 = aligned(chip, npu, 4096, shape, t);
      k.src1 = aligned(chip, npu, 8192, shape, t);
      k.true_val.u8 = 0xa5;
      for (int i = 0; i < count; ++i) {
        set_bits(chip, k.src0, 0, i, 0, 0, encode(t, cases[i].a));
        set_bits(chip, k.src1, 0, i, 0, 0, encode(t, cases[i].b));
      }
      for (int i = 0; i < count; ++i) {
        if (k.with_C) {
          // One command per case: C is the case's b.
          const dim4 one = {1, 1, 1, 1};
          Command single = k;
          single.dst = aligned(chip, (npu + i) % chip.npu, 0, one, DT_UINT8);
          single.src0 = aligned(chip, (npu + i) % chip.npu, 4096, one, t);
          single.C.u32 = encode(t, cases[i].b);
          ASSERT_EQ(cmodel_run(compare_kernel, &single), 0) << cmodel_last_error();
        }
      }
      if (!k.with_C) {
        ASSERT_EQ(cmodel_run(compare_kernel, &k), 0) << cmodel_last_error();
      }
      for (int i = 0; i < count; ++i) {
        const Case &c = cases[i];
        const bool want[] = {c.gt, c.lt, c.eq, c.ge, c.le, c.ne};
        EXPECT_EQ(get<uint8_t>(chip, k.dst, 0, i, 0, 0), want[int(k.op)] ? 0xa5 : 0)
            << op_name(k.op, k.with_C) << " dtype " << t << " case " << i << ": " << c.a << " vs " << c.b;
      }
    }
  }
}

// Integer comparisons use the dtype's signedness: 0x80 is -128 as INT8 but
// 128 as UINT8; 0xffffffff is -1 as INT32 but 4294967295 as UINT32.
TEST_P(BdcCompare, IntegerSignedness) {
  const Chip chip = local_model::chip(GetParam());
  struct Case {
    data_type_t t;
    uint32_t a, b;
    bool greater;
  };
  const Case cases[] = {{DT_INT8, 0x80, 0x7f, false},          {DT_UINT8, 0x80, 0x7f, true},
                        {DT_INT16, 0x8000, 1, false},          {DT_UINT16, 0x8000, 1, true},
                        {DT_INT32, 0xffffffffu, 0, false},     {DT_UINT32, 0xffffffffu, 0, true},
                        {DT_INT32, 0x80000000u, 0x7fffffffu, false}, {DT_UINT32, 0x80000000u, 0x7fffffffu, true}};
  for (const Case &c : cases) {
    Command k{};
    k.op = Op::gt;
    const dim4 shape = {1, 1, 1, 1};
    k.dst = aligned(chip, 0, 0, shape, DT_INT32);
    k.src0 = aligned(chip, 0, 4096, shape, c.t);
    k.src1 = aligned(chip, 0, 8192, shape, c.t);
    k.true_val.s32 = -7;
    set_bits(chip, k.src0, 0, 0, 0, 0, c.a);
    set_bits(chip, k.src1, 0, 0, 0, 0, c.b);
    ASSERT_EQ(cmodel_run(compare_kernel, &k), 0) << cmodel_last_error();
    EXPECT_EQ(get<int32_t>(chip, k.dst, 0, 0, 0, 0), c.greater ? -7 : 0) << "dtype " << c.t;
  }
}

// One BDC command, paced by the wider of the two dtypes: cycles grow by one
// per extra EU pass of fp32 even though dst is int8.
TEST_P(BdcCompare, BooksOneCommandPacedByTheWiderDtype) {
  const Chip chip = local_model::chip(GetParam());
  const int eu32 = chip.eu_bytes / 4;
  auto cycles = [&](int w) {
    Command k{};
    k.op = Op::lt;
    const dim4 shape = {1, chip.npu, 1, w};
    k.dst = aligned(chip, 0, 0, shape, DT_INT8);
    k.src0 = aligned(chip, 0, 4096, shape, DT_FP32);
    k.src1 = aligned(chip, 0, 8192, shape, DT_FP32);
    EXPECT_EQ(cmodel_run(compare_kernel, &k), 0) << cmodel_last_error();
    const auto j = run_stats();
    EXPECT_EQ(j.at("commands").at("tpu_bdc_less").get<int>(), 1) << j.dump();
    EXPECT_EQ(j.at("engines").at("bdc").at("commands").get<int>(), 1) << j.dump();
    return j.at("engines").at("bdc").at("cycles").get<double>();
  };
  EXPECT_EQ(cycles(5 * eu32) - cycles(2 * eu32), 3.0);
}

// ---- checks (run_failing comes from bdc_helpers.h) -----------------------------

#define EXPECT_MESSAGE(message, text) EXPECT_NE((message).find(text), std::string::npos) << (message)

TEST_P(BdcCompare, OperandsMustStartOnTheSameNpu) {
  const std::string m = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    tpu_bdc_equal(0, 4096, 2 * LOCAL_MEM_SIZE + 8192, scalar_t{.u32 = 1}, &shape, nullptr, nullptr, nullptr,
                  DT_INT8, DT_FP32);
  });
  EXPECT_MESSAGE(m, "tpu_bdc_equal: dst starts on NPU 0 but src1 on NPU 2");
  const std::string c = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    tpu_bdc_less_C(LOCAL_MEM_SIZE, 4096, scalar_t{.u32 = 1}, scalar_t{.u32 = 1}, &shape, nullptr, nullptr,
                   DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(c, "tpu_bdc_less_C: dst starts on NPU 1 but src on NPU 0");
}

TEST_P(BdcCompare, RejectsDtypesItDoesNotTake) {
  const std::string m = run_failing([](const void *) {
    const dim4 shape = {1, 1, 1, 4};
    tpu_bdc_greater(0, 4096, 8192, scalar_t{.u32 = 1}, &shape, nullptr, nullptr, nullptr, DT_INT4, DT_INT8);
  });
  EXPECT_MESSAGE(m, "tpu_bdc_greater: dst dtype DT_INT4 is not allowed here; expected one of DT_FP32, DT_FP16, "
                    "DT_BFP16, DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32");
  const std::string c = run_failing([](const void *) {
    const dim4 shape = {1, 1, 1, 4};
    tpu_bdc_not_equal_C(0, 4096, scalar_t{.u32 = 1}, scalar_t{.u32 = 1}, &shape, nullptr, nullptr, DT_INT8,
                        data_type_t(42));
  });
  EXPECT_MESSAGE(c, "tpu_bdc_not_equal_C: src dtype 42 is not allowed here");
}

TEST_P(BdcCompare, ChecksDimsAndShapePointer) {
  const std::string m = run_failing([](const void *) {
    const dim4 shape = {1, 0, 1, 4};
    tpu_bdc_greater_equal(0, 4096, 8192, scalar_t{.u32 = 1}, &shape, nullptr, nullptr, nullptr, DT_INT8,
                          DT_INT8);
  });
  EXPECT_MESSAGE(m, "tpu_bdc_greater_equal: dst shape [1, 0, 1, 4]: c = 0; every dim must be in [1, 65535]");
  const std::string n = run_failing([](const void *) {
    tpu_bdc_less_equal_C(0, 4096, scalar_t{.u32 = 1}, scalar_t{.u32 = 1}, nullptr, nullptr, nullptr, DT_INT8,
                         DT_INT8);
  });
  EXPECT_MESSAGE(n, "tpu_bdc_less_equal_C: shape is a null pointer");
}

TEST_P(BdcCompare, AlignedLayoutNeedsAlignedAddress) {
  const std::string m = run_failing([](const void *) {
    const dim4 shape = {1, 1, 1, 4};
    tpu_bdc_less(0, 4100, 8192, scalar_t{.u32 = 1}, &shape, nullptr, nullptr, nullptr, DT_INT8, DT_FP32);
  });
  EXPECT_MESSAGE(m, "tpu_bdc_less: src0 local address 0x1004 uses the aligned layout");
}

TEST_P(BdcCompare, OperandsMustFitTheirNpu) {
  const std::string m = run_failing([](const void *) {
    const dim4 shape = {1, 1, 4, 4};
    const dim4 stride = {16, 16, 4, 1};
    tpu_bdc_greater_C(0, LOCAL_MEM_SIZE - 32, scalar_t{.u32 = 1}, scalar_t{.u32 = 1}, &shape, nullptr, &stride,
                      DT_INT8, DT_FP32);
  });
  EXPECT_MESSAGE(m, "tpu_bdc_greater_C: src [1, 1, 4, 4] DT_FP32 at local");
  EXPECT_MESSAGE(m, "is outside its");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcCompare, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
