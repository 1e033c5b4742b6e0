// bdc_select_test: tpu_bdc_greater_select / less_select / equal_select /
// maximum_greater_select / minimum_less_select against a host reference,
// bit for bit, with every combination of TENSOR / VECTOR / SCALAR
// operands, every allowed (compare dtype, result dtype) pair, random
// shapes, any start NPU, in-place forms (the running argmax: dst0 = src0,
// dst1 = src2), both chips. The whole local memory is compared.
//
// Model of the operands (see cmodel/bdc/select.h for the reading of the
// spec): TENSOR = aligned tensor of dst's shape; VECTOR = one value per NPU
// lane, the element at the vector's offset in the lane that holds dst's
// channel (row 0 of that lane); SCALAR = the scalar_t bits. Comparisons
// are IEEE on the exact values; selected values are copied bit for bit;
// max/min return the operand the comparison picked (src0 if src0 OP src1,
// else src1).
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;

enum class Op { greater, less, equal, maximum, minimum };
constexpr int op_count = 5;
const char *op_name(Op op) {
  static const char *names[] = {"tpu_bdc_greater_select", "tpu_bdc_less_select", "tpu_bdc_equal_select",
                                "tpu_bdc_maximum_greater_select", "tpu_bdc_minimum_less_select"};
  return names[int(op)];
}
bool two_results(Op op) { return op == Op::maximum || op == Op::minimum; }

const std::vector<data_type_t> all_dtypes = {DT_FP32, DT_FP16, DT_BFP16, DT_INT8,  DT_UINT8,
                                             DT_INT16, DT_UINT16, DT_INT32, DT_UINT32};

int bits_of(data_type_t t) { return 8 * esize(t); }

struct Command {
  Op op;
  local_addr_t dst0, dst1;  // dst1 only for maximum / minimum
  variable_t src[4];
  dim4 shape;
  data_type_t cmp_dtype, dst_dtype;  // (src0_src1_dtype, dst_dtype) or (dst0_dtype, dst1_dtype)
};

void select_kernel(const void *arg) {
  const auto &k = *static_cast<const Command *>(arg);
  const variable_t *s = k.src;
  switch (k.op) {
    case Op::greater: tpu_bdc_greater_select(k.dst0, &s[0], &s[1], &s[2], &s[3], &k.shape, k.cmp_dtype, k.dst_dtype); break;
    case Op::less: tpu_bdc_less_select(k.dst0, &s[0], &s[1], &s[2], &s[3], &k.shape, k.cmp_dtype, k.dst_dtype); break;
    case Op::equal: tpu_bdc_equal_select(k.dst0, &s[0], &s[1], &s[2], &s[3], &k.shape, k.cmp_dtype, k.dst_dtype); break;
    case Op::maximum: tpu_bdc_maximum_greater_select(k.dst0, k.dst1, &s[0], &s[1], &s[2], &s[3], &k.shape, k.cmp_dtype, k.dst_dtype); break;
    case Op::minimum: tpu_bdc_minimum_less_select(k.dst0, k.dst1, &s[0], &s[1], &s[2], &s[3], &k.shape, k.cmp_dtype, k.dst_dtype); break;
  }
}

// Raw bits of a random value: small values (|v| <= 2, ties are common),
// +-0, +-inf, NaNs, extremes, arbitrary patterns.
template <typename Rng>
uint32_t random_bits(Rng &rng, data_type_t t) {
  return random_compare_bits(rng, t, 2);
}

uint32_t read_bits(size_t offset, int bytes) {
  uint32_t v = 0;
  std::memcpy(&v, local_at(offset), bytes);
  return v;
}
void write_bits(size_t offset, int bytes, uint32_t v) { std::memcpy(local_at(offset), &v, bytes); }

// Where the value of operand `var` for dst element (n, c, h, w) lives, or
// SIZE_MAX for a SCALAR.
size_t operand_offset(const Chip &chip, const variable_t &var, int start_npu, const dim4 &shape, data_type_t t,
                      int n, int c, int h, int w) {
  switch (var.type) {
    case TENSOR: {
      const Tensor tensor = aligned(chip, start_npu, var.context.addr % chip.lmem, shape, t);
      return offset_of(chip, tensor, n, c, h, w);
    }
    case VECTOR: return size_t((start_npu + c) % chip.npu) * chip.lmem + var.context.addr % chip.lmem;
    default: return SIZE_MAX;
  }
}

uint32_t operand_bits(const Chip &chip, const variable_t &var, int start_npu, const dim4 &shape, data_type_t t,
                      int n, int c, int h, int w) {
  const size_t at = operand_offset(chip, var, start_npu, shape, t, n, c, h, w);
  return at == SIZE_MAX ? var.context.scalar.u32 & dtype_mask(t) : read_bits(at, esize(t));
}

bool predicate(Op op, double a, double b) {
  switch (op) {
    case Op::greater: case Op::maximum: return a > b;
    case Op::less: case Op::minimum: return a < b;
    case Op::equal: return a == b;
  }
  return false;
}

class BdcSelect : public local_model::ChipTest {};

// Each of the five functions with all 81 TENSOR / VECTOR / SCALAR
// combinations and all 55 allowed (compare, result) dtype pairs.
TEST_P(BdcSelect, EveryOperandKindDtypeAndFunction) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const Chip chip = local_model::chip(GetParam());
  std::vector<std::pair<data_type_t, data_type_t>> pairs;
  for (data_type_t a : all_dtypes)
    for (data_type_t b : all_dtypes)
      if (bits_of(a) <= bits_of(b)) pairs.emplace_back(a, b);
  ASSERT_EQ(pairs.size(), 55u);
  const uint32_t region = chip.lmem / 6 / 64 * 64;  // dst0, dst1, src0..src3
  const var_type_t kinds[] = {TENSOR, VECTOR, SCALAR};
  int in_place = 0, vectors_past_row0 = 0;
  const int iterations = op_count * 81;
  for (int iter = 0; iter < iterations; ++iter) {
    Command k{};
    k.op = Op(iter % op_count);
    const int combo = iter / op_count;  // 0..80 for every function
    std::tie(k.cmp_dtype, k.dst_dtype) = pairs[combo % pairs.size()];
    const bool two = two_results(k.op);
    // dtype of each source: src0/src1 compared, src2/src3 selected.
    const data_type_t src_dtype[4] = {k.cmp_dtype, k.cmp_dtype, k.dst_dtype, k.dst_dtype};
    const int npu = seeded.uniform(0, chip.npu - 1);
    k.shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 7),
               seeded.uniform(1, 19)};
    auto place = [&](int slot) {
      return local_addr_t(npu * chip.lmem + slot * region + chip.eu_bytes * seeded.uniform(0, 4));
    };
    k.dst0 = place(0);
    k.dst1 = place(1);
    for (int i = 0; i < 4; ++i) {
      k.src[i].type = kinds[combo / (i == 0 ? 1 : i == 1 ? 3 : i == 2 ? 9 : 27) % 3];
      if (k.src[i].type == SCALAR) k.src[i].context.scalar.u32 = random_bits(rng, src_dtype[i]);
      else k.src[i].context.addr = place(2 + i);
    }
    // dst written over its own sources (same layout: same element size).
    // Select: dst = src0/src1 (when the widths agree) or src2/src3;
    // max/min: dst0 = src0 or src1 and dst1 = src2 or src3.
    if (seeded.uniform(0, 2) == 0) {
      const int a = seeded.uniform(0, 1), b = 2 + seeded.uniform(0, 1);
      bool aliased = false;
      if (two) {
        if (k.src[a].type == TENSOR) k.src[a].context.addr = k.dst0, aliased = true;
        if (k.src[b].type == TENSOR) k.src[b].context.addr = k.dst1, aliased = true;
      } else if (k.src[b].type == TENSOR) {
        k.src[b].context.addr = k.dst0, aliased = true;
      } else if (k.src[a].type == TENSOR && esize(k.cmp_dtype) == esize(k.dst_dtype)) {
        k.src[a].context.addr = k.dst0, aliased = true;
      }
      in_place += aliased;
    }

    // Inputs. A VECTOR's lanes all get a value at the vector's offset; its
    // other rows get different values, which must not be read.
    for (int i = 0; i < 4; ++i) {
      const variable_t &v = k.src[i];
      const data_type_t t = src_dtype[i];
      if (v.type == TENSOR) {
        const Tensor tensor = aligned(chip, npu, v.context.addr % chip.lmem, k.shape, t);
        for_each_index(k.shape, [&](int n, int c, int h, int w) {
          // Compared operands often tie.
          const bool tie = i == 1 && k.src[0].type == TENSOR && seeded.uniform(0, 3) == 0;
          const uint32_t bits = tie ? operand_bits(chip, k.src[0], npu, k.shape, t, n, c, h, w)
                                    : random_bits(rng, t);
          write_bits(offset_of(chip, tensor, n, c, h, w), esize(t), bits);
        });
      } else if (v.type == VECTOR) {
        const Tensor vec = aligned(chip, npu, v.context.addr % chip.lmem, {1, k.shape.c, 1, 1}, t);
        for (int c = 0; c < k.shape.c; ++c) write_bits(offset_of(chip, vec, 0, c, 0, 0), esize(t), random_bits(rng, t));
        for (int lane = 0; lane < chip.npu; ++lane)
          write_bits(size_t(lane) * chip.lmem + v.context.addr % chip.lmem, esize(t), random_bits(rng, t));
        if (npu + std::min(k.shape.c, chip.npu) > chip.npu) ++vectors_past_row0;
      }
    }

    std::vector<uint8_t> expected = snapshot(chip);
    const Tensor dst0 = aligned(chip, npu, k.dst0 % chip.lmem, k.shape, two ? k.cmp_dtype : k.dst_dtype);
    const Tensor dst1 = aligned(chip, npu, k.dst1 % chip.lmem, k.shape, k.dst_dtype);
    for_each_index(k.shape, [&](int n, int c, int h, int w) {
      uint32_t v[4];
      for (int i = 0; i < 4; ++i) v[i] = operand_bits(chip, k.src[i], npu, k.shape, src_dtype[i], n, c, h, w);
      const bool first = predicate(k.op, exact_value(k.cmp_dtype, v[0]), exact_value(k.cmp_dtype, v[1]));
      const uint32_t chosen = first ? v[2] : v[3];
      if (two) {
        put(expected, chip, dst0, n, c, h, w, first ? v[0] : v[1]);  // dst0 holds cmp_dtype
        put(expected, chip, dst1, n, c, h, w, chosen);
      } else {
        put(expected, chip, dst0, n, c, h, w, chosen);
      }
    });

    ASSERT_EQ(cmodel_run(select_kernel, &k), 0) << cmodel_last_error();
    expect_local_memory(chip, expected, [&] {
      std::string kinds_text;
      for (const variable_t &v : k.src) kinds_text += v.type == TENSOR ? " T" : v.type == VECTOR ? " V" : " S";
      return std::string(op_name(k.op)) + " dtypes " + std::to_string(k.cmp_dtype) + "/" +
             std::to_string(k.dst_dtype) + " kinds" + kinds_text + " start NPU " + std::to_string(npu) +
             " iteration " + std::to_string(iter);
    });
    if (HasFailure()) return;
  }
  EXPECT_GT(in_place, 0);
  EXPECT_GT(vectors_past_row0, 0);
}

// A running argmax / argmin over slices, in place: max = max(max, x),
// idx = max > x ? idx : i (SCALAR i); the result is the reference's.
TEST_P(BdcSelect, RunningArgmaxInPlace) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const Chip chip = local_model::chip(GetParam());
  for (Op op : {Op::maximum, Op::minimum}) {
    const dim4 shape = {2, chip.npu + 5, 3, 7};
    const int npu = 7, slices = 6;
    const Tensor best = aligned(chip, npu, 0, shape, DT_FP16);
    const Tensor index = aligned(chip, npu, 16384, shape, DT_INT32);
    std::vector<Tensor> x;
    for (int s = 0; s < slices; ++s) x.push_back(aligned(chip, npu, 32768 + 4096 * s, shape, DT_FP16));
    std::vector<float> want_best, got_best;
    std::vector<int> want_index;
    for_each_index(shape, [&](int n, int c, int h, int w) {
      float b = 0;
      int idx = 0;
      for (int s = 0; s < slices; ++s) {
        const float v = float(std::uniform_int_distribution<int>(-20, 20)(rng));
        set<uint16_t>(chip, x[s], n, c, h, w, to_fp16(v));
        // Slice 0 initialises best/index; later ones update where the
        // running value does not beat the slice (ties go to the slice).
        if (s == 0 || !(op == Op::maximum ? b > v : b < v)) b = v, idx = s;
      }
      set<uint16_t>(chip, best, n, c, h, w, get<uint16_t>(chip, x[0], n, c, h, w));
      set<int32_t>(chip, index, n, c, h, w, 0);
      want_best.push_back(b);
      want_index.push_back(idx);
    });
    struct Args {
      Op op;
      const Tensor *best, *index;
      const std::vector<Tensor> *x;
    } args{op, &best, &index, &x};
    ASSERT_EQ(cmodel_run(
                  [](const void *p) {
                    const auto &a = *static_cast<const Args *>(p);
                    const dim4 shape = a.best->shape;
                    for (size_t s = 1; s < a.x->size(); ++s) {
                      variable_t src0{TENSOR, {}}, src1{TENSOR, {}}, src2{TENSOR, {}}, src3{SCALAR, {}};
                      src0.context.addr = a.best->addr;
                      src1.context.addr = (*a.x)[s].addr;
                      src2.context.addr = a.index->addr;
                      src3.context.scalar.s32 = int(s);
                      if (a.op == Op::maximum)
                        tpu_bdc_maximum_greater_select(a.best->addr, a.index->addr, &src0, &src1, &src2, &src3,
                                                       &shape, DT_FP16, DT_INT32);
                      else
                        tpu_bdc_minimum_less_select(a.best->addr, a.index->addr, &src0, &src1, &src2, &src3,
                                                    &shape, DT_FP16, DT_INT32);
                    }
                  },
                  &args),
              0)
        << cmodel_last_error();
    size_t i = 0;
    for_each_index(shape, [&](int n, int c, int h, int w) {
      EXPECT_EQ(from_fp16(get<uint16_t>(chip, best, n, c, h, w)), want_best[i]) << op_name(op) << " element " << i;
      EXPECT_EQ(get<int32_t>(chip, index, n, c, h, w), want_index[i]) << op_name(op) << " element " << i;
      ++i;
    });
  }
}

// NaN is unordered (the comparison is false: src3 is selected; max/min
// return src1), +0 == -0 (a tie: max/min return src1's zero), values are
// copied bit for bit. Every float compare dtype.
TEST_P(BdcSelect, NanAndSignedZero) {
  const Chip chip = local_model::chip(GetParam());
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Case {
    float a, b;
    bool gt, lt, eq;
  };
  const Case cases[] = {{nan, 1.0f, false, false, false},  {1.0f, nan, false, false, false},
                        {nan, nan, false, false, false},   {-nan, -inf, false, false, false},
                        {0.0f, -0.0f, false, false, true}, {-0.0f, 0.0f, false, false, true},
                        {inf, inf, false, false, true},    {-inf, 1.0f, false, true, false},
                        {2.0f, 1.5f, true, false, false}};
  const int count = int(std::size(cases));
  for (data_type_t t : {DT_FP32, DT_FP16, DT_BFP16}) {
    for (int o = 0; o < op_count; ++o) {
      Command k{};
      k.op = Op(o);
      k.cmp_dtype = t;
      k.dst_dtype = DT_FP32;
      k.shape = {1, count, 1, 1};
      const int npu = 1;
      k.dst0 = npu * chip.lmem;
      k.dst1 = npu * chip.lmem + 1024;
      const Tensor a = aligned(chip, npu, 2048, k.shape, t), b = aligned(chip, npu, 3072, k.shape, t);
      k.src[0] = {TENSOR, {}};
      k.src[0].context.addr = a.addr;
      k.src[1] = {TENSOR, {}};
      k.src[1].context.addr = b.addr;
      k.src[2] = {SCALAR, {}};
      k.src[2].context.scalar.u32 = 0x7fc00001;  // a NaN payload, must come through unchanged
      k.src[3] = {SCALAR, {}};
      k.src[3].context.scalar.u32 = 0x80000000;  // -0.0
      for (int i = 0; i < count; ++i) {
        write_bits(offset_of(chip, a, 0, i, 0, 0), esize(t), encode(t, cases[i].a));
        write_bits(offset_of(chip, b, 0, i, 0, 0), esize(t), encode(t, cases[i].b));
      }
      ASSERT_EQ(cmodel_run(select_kernel, &k), 0) << cmodel_last_error();
      const Tensor out = aligned(chip, npu, k.dst0 % chip.lmem, k.shape, two_results(k.op) ? t : DT_FP32);
      const Tensor out1 = aligned(chip, npu, k.dst1 % chip.lmem, k.shape, DT_FP32);
      for (int i = 0; i < count; ++i) {
        const Case &c = cases[i];
        const bool first = k.op == Op::greater || k.op == Op::maximum ? c.gt
                           : k.op == Op::less || k.op == Op::minimum ? c.lt
                                                                     : c.eq;
        const uint32_t chosen = first ? 0x7fc00001u : 0x80000000u;
        const std::string what = std::string(op_name(k.op)) + " dtype " + std::to_string(t) + " case " +
                                 std::to_string(i);
        if (two_results(k.op)) {
          EXPECT_EQ(read_bits(offset_of(chip, out, 0, i, 0, 0), esize(t)),
                    encode(t, first ? c.a : c.b))
              << what;
          EXPECT_EQ(read_bits(offset_of(chip, out1, 0, i, 0, 0), 4), chosen) << what;
        } else {
          EXPECT_EQ(read_bits(offset_of(chip, out, 0, i, 0, 0), 4), chosen) << what;
        }
      }
    }
  }
}

// One BDC command per call, paced by dst's dtype (dst1's for max/min).
TEST_P(BdcSelect, BooksOneCommand) {
  const Chip chip = local_model::chip(GetParam());
  for (Op op : {Op::less, Op::maximum}) {
    auto cycles = [&](int w) {
      Command k{};
      k.op = op;
      k.cmp_dtype = DT_INT8;
      k.dst_dtype = DT_INT16;
      k.shape = {1, chip.npu, 1, w};
      k.dst0 = 0;
      k.dst1 = 8192;
      for (int i = 0; i < 4; ++i) {
        k.src[i] = {TENSOR, {}};
        k.src[i].context.addr = 16384 + 4096 * i;
      }
      EXPECT_EQ(cmodel_run(select_kernel, &k), 0) << cmodel_last_error();
      const auto j = run_stats();
      EXPECT_EQ(j.at("commands").at(op_name(op)).get<int>(), 1) << j.dump();
      EXPECT_EQ(j.at("engines").at("bdc").at("commands").get<int>(), 1) << j.dump();
      return j.at("engines").at("bdc").at("cycles").get<double>();
    };
    const int eu16 = chip.eu_bytes / 2;
    EXPECT_EQ(cycles(7 * eu16) - cycles(3 * eu16), 4.0) << op_name(op);
  }
}

// ---- checks (run_failing comes from bdc_helpers.h) -----------------------------

#define EXPECT_MESSAGE(message, text) EXPECT_NE((message).find(text), std::string::npos) << (message)

variable_t tensor_at(local_addr_t addr) {
  variable_t v{TENSOR, {}};
  v.context.addr = addr;
  return v;
}
variable_t vector_at(local_addr_t addr) {
  variable_t v{VECTOR, {}};
  v.context.addr = addr;
  return v;
}
variable_t scalar_of(uint32_t bits) {
  variable_t v{SCALAR, {}};
  v.context.scalar.u32 = bits;
  return v;
}

TEST_P(BdcSelect, OperandsMustStartOnTheSameNpu) {
  const std::string t = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = tensor_at(4096), b = tensor_at(LOCAL_MEM_SIZE + 8192), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_greater_select(0, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(t, "tpu_bdc_greater_select: dst starts on NPU 0 but src1 on NPU 1");
  const std::string v = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = vector_at(2 * LOCAL_MEM_SIZE + 64), y = scalar_of(2);
    tpu_bdc_less_select(3 * LOCAL_MEM_SIZE, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(v, "tpu_bdc_less_select: dst starts on NPU 3 but src2 on NPU 2");
  const std::string d = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_maximum_greater_select(0, LOCAL_MEM_SIZE + 4096, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(d, "tpu_bdc_maximum_greater_select: dst0 starts on NPU 0 but dst1 on NPU 1");
  const std::string s = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = vector_at(5 * LOCAL_MEM_SIZE);
    tpu_bdc_minimum_less_select(0, 4096, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(s, "tpu_bdc_minimum_less_select: dst0 starts on NPU 0 but src3 on NPU 5");
}

TEST_P(BdcSelect, ChecksDims) {
  const std::string m = run_failing([](const void *) {
    const dim4 shape = {1, 4, 0, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_equal_select(0, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(m, "tpu_bdc_equal_select: dst shape [1, 4, 0, 2]: h = 0; every dim must be in [1, 65535]");
  const std::string big = run_failing([](const void *) {
    const dim4 shape = {1, 65536, 1, 1};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_minimum_less_select(0, 4096, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(big, "tpu_bdc_minimum_less_select: dst0 shape [1, 65536, 1, 1]: c = 65536");
  const std::string null_shape = run_failing([](const void *) {
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_equal_select(0, &a, &b, &x, &y, nullptr, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(null_shape, "tpu_bdc_equal_select: shape is a null pointer");
}

TEST_P(BdcSelect, RejectsDtypesItDoesNotTake) {
  const std::string m = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_greater_select(0, &a, &b, &x, &y, &shape, DT_INT4, DT_INT8);
  });
  EXPECT_MESSAGE(m, "tpu_bdc_greater_select: src0/src1 dtype DT_INT4 is not allowed here; expected one of DT_FP32, "
                    "DT_FP16, DT_BFP16, DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32");
  const std::string d = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_less_select(0, &a, &b, &x, &y, &shape, DT_INT8, data_type_t(60));
  });
  EXPECT_MESSAGE(d, "tpu_bdc_less_select: dst dtype 60 is not allowed here");
  const std::string e = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_maximum_greater_select(0, 4096, &a, &b, &x, &y, &shape, DT_UINT4, DT_INT8);
  });
  EXPECT_MESSAGE(e, "tpu_bdc_maximum_greater_select: dst0 dtype DT_UINT4 is not allowed here");
}

TEST_P(BdcSelect, ComparedDtypeMayNotBeWiderThanDst) {
  const std::string m = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_equal_select(0, &a, &b, &x, &y, &shape, DT_FP32, DT_BFP16);
  });
  EXPECT_MESSAGE(m, "tpu_bdc_equal_select: src0/src1 dtype DT_FP32 is 32 bits wide but dst dtype DT_BFP16 only 16");
  const std::string e = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_minimum_less_select(0, 4096, &a, &b, &x, &y, &shape, DT_INT16, DT_UINT8);
  });
  EXPECT_MESSAGE(e, "tpu_bdc_minimum_less_select: dst0 dtype DT_INT16 is 16 bits wide but dst1 dtype DT_UINT8 only 8");
}

TEST_P(BdcSelect, DstAndMemoryOperandsAreAligned) {
  const std::string d = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_greater_select(4, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(d, "tpu_bdc_greater_select: dst local address 0x4 uses the aligned layout");
  const std::string d1 = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_maximum_greater_select(0, 4098, &a, &b, &x, &y, &shape, DT_INT8, DT_INT16);
  });
  EXPECT_MESSAGE(d1, "tpu_bdc_maximum_greater_select: dst1 local address 0x1002 uses the aligned layout");
  const std::string t = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = tensor_at(4096 + 8);
    tpu_bdc_less_select(0, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(t, "tpu_bdc_less_select: src3 local address 0x1008 uses the aligned layout");
  const std::string v = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = vector_at(4096 + 2), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_less_select(0, &a, &b, &x, &y, &shape, DT_INT16, DT_INT16);
  });
  EXPECT_MESSAGE(v, "tpu_bdc_less_select: src0 local address 0x1002 uses the aligned layout");
}

// TENSOR operands are aligned tensors of dst's shape and VECTOR operands
// [1, c, 1, 1] aligned tensors: each must fit in its NPU.
TEST_P(BdcSelect, OperandShapesMustFitTheirNpu) {
  const std::string t = run_failing([](const void *) {
    const dim4 shape = {2, 4, 8, 8};
    const variable_t a = scalar_of(1), b = tensor_at(LOCAL_MEM_SIZE - 256), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_greater_select(0, &a, &b, &x, &y, &shape, DT_INT32, DT_INT32);
  });
  EXPECT_MESSAGE(t, "tpu_bdc_greater_select: src1 [2, 4, 8, 8] DT_INT32 at local");
  EXPECT_MESSAGE(t, "is outside its");
  const std::string v = run_failing([](const void *) {
    // c = 3 x NPU_NUM: the vector needs three rows of EU bytes.
    const dim4 shape = {1, 3 * NPU_NUM, 1, 1};
    const local_addr_t last_row = LOCAL_MEM_SIZE - 2 * EU_NUM * 4;
    const variable_t a = scalar_of(1), b = scalar_of(2), x = vector_at(last_row), y = scalar_of(2);
    tpu_bdc_equal_select(0, &a, &b, &x, &y, &shape, DT_INT32, DT_INT32);
  });
  EXPECT_MESSAGE(v, "tpu_bdc_equal_select: src2 [1, ");
  EXPECT_MESSAGE(v, ", 1, 1] DT_INT32 at local");
  EXPECT_MESSAGE(v, "is outside its");
}

TEST_P(BdcSelect, RejectsInvalidVariables) {
  const std::string m = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    const int bad = 7;  // any int a C kernel may store
    std::memcpy(&x.type, &bad, sizeof bad);
    tpu_bdc_greater_select(0, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(m, "tpu_bdc_greater_select: src2 variable_t.type is 7; expected TENSOR (0), SCALAR (1) or VECTOR (2)");
  const std::string n = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    variable_t a = scalar_of(1), b = scalar_of(2), x = scalar_of(1), y = scalar_of(2);
    const int bad = -1;
    std::memcpy(&a.type, &bad, sizeof bad);
    tpu_bdc_minimum_less_select(0, 4096, &a, &b, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(n, "tpu_bdc_minimum_less_select: src0 variable_t.type is -1");
  const std::string p = run_failing([](const void *) {
    const dim4 shape = {1, 4, 2, 2};
    const variable_t a = scalar_of(1), x = scalar_of(1), y = scalar_of(2);
    tpu_bdc_equal_select(0, &a, nullptr, &x, &y, &shape, DT_INT8, DT_INT8);
  });
  EXPECT_MESSAGE(p, "tpu_bdc_equal_select: src1 is a null pointer");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcSelect, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
