// bdc_movement_test: BDC data movement (tpu_bdc_cpy, set_C, npu_bcast,
// cpy_cross_npu, cw_trans, wc_trans) against the independent layout model,
// bit for bit over the whole local memory: random shapes, layouts (free
// strides, zero-stride sources, aligned), dtypes and start NPUs on both
// chips, in place and with overlapping operands (the result must be as if
// the whole source was read before dst was written). Then every check the
// family makes, each with its message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/local_model.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using test::hex;

enum class Op { cpy, set_C, npu_bcast, cross_npu, cw_trans, wc_trans };

struct Command {
  Op op;
  Tensor dst, src;
  scalar_t C;
};

void movement_kernel(const void *arg) {
  const auto &k = *static_cast<const Command *>(arg);
  const dim4 *shape = &k.dst.shape;
  const data_type_t t = k.dst.dtype;
  switch (k.op) {
    case Op::cpy: tpu_bdc_cpy(k.dst.addr, k.src.addr, shape, k.dst.api_stride(), k.src.api_stride(), t); break;
    case Op::set_C: tpu_bdc_set_C(k.dst.addr, k.C, shape, k.dst.api_stride(), t); break;
    case Op::npu_bcast: tpu_bdc_npu_bcast(k.dst.addr, k.src.addr, shape, t); break;
    case Op::cross_npu: tpu_bdc_cpy_cross_npu(k.dst.addr, k.src.addr, shape, t); break;
    case Op::cw_trans: tpu_bdc_cw_trans(k.dst.addr, k.src.addr, shape, t); break;
    case Op::wc_trans: tpu_bdc_wc_trans(k.dst.addr, k.src.addr, shape, t); break;
  }
}

const std::vector<data_type_t> all_dtypes = {DT_INT8,  DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                                             DT_UINT32, DT_FP16,  DT_BFP16, DT_FP32};

// Fills every element of t with random bits (NaNs and all).
template <typename Rng>
void randomize(Rng &rng, const Chip &chip, const Tensor &t) {
  for_each_index(t.shape, [&](int n, int c, int h, int w) { set_bits(chip, t, n, c, h, w, uint32_t(rng())); });
}

class BdcMovement : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error();
    chip = local_model::chip(GetParam());
  }
  void TearDown() override { cmodel_close(); }

  // Runs k and compares the whole local memory with `expected`.
  void run_and_compare(const Command &k, const std::vector<uint8_t> &expected, const std::string &what) {
    ASSERT_EQ(cmodel_run(movement_kernel, &k), 0) << what << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return what; });
  }

  Chip chip;
};

std::string describe(const char *op, data_type_t t, const dim4 &s, int iter) {
  return std::string(op) + " dtype " + std::to_string(t) + " shape [" + std::to_string(s.n) + "," +
         std::to_string(s.c) + "," + std::to_string(s.h) + "," + std::to_string(s.w) + "] iteration " +
         std::to_string(iter);
}

TEST_P(BdcMovement, CpyRandomLayoutsInPlaceAndOverlapping) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const uint32_t third = chip.lmem / 3 / 64 * 64;
  int ran = 0;
  for (int iter = 0; iter < test::rounds(160); ++iter) {
    const data_type_t dt = all_dtypes[seeded.uniform(0, 8)];
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 7),
                        seeded.uniform(1, 19)};
    const int npu = seeded.uniform(0, chip.npu - 1);
    const int mode = seeded.uniform(0, 3);  // 0, 1 apart; 2 in place; 3 overlapping, shifted
    Command k{};
    k.op = Op::cpy;
    const uint32_t dst_off = mode == 3 ? 4 * 64 : 0;
    const uint32_t src_off = mode == 3 ? uint32_t(int(dst_off) + 64 * seeded.uniform(-3, 3)) : third;
    if (!random_layout(rng, chip, npu, dst_off, shape, dt, false, third - 512, k.dst) ||
        !random_layout(rng, chip, npu, src_off, shape, dt, true, third - 512, k.src))
      continue;
    if (mode == 2) k.src = k.dst;
    randomize(rng, chip, k.src);
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      put(expected, chip, k.dst, n, c, h, w, get_bits(chip, k.src, n, c, h, w));
    });
    run_and_compare(k, expected, describe("cpy", dt, shape, iter) + " mode " + std::to_string(mode));
    ++ran;
  }
  EXPECT_GT(ran, test::rounds(160) / 2);  // at least half of the rounds ran
}

TEST_P(BdcMovement, SetCFillsEveryDtypeWithTheScalarsLowBytes) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  for (int iter = 0; iter < 80; ++iter) {
    const data_type_t dt = all_dtypes[seeded.uniform(0, 8)];
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 7),
                        seeded.uniform(1, 19)};
    const int npu = seeded.uniform(0, chip.npu - 1);
    Command k{};
    k.op = Op::set_C;
    if (!random_layout(rng, chip, npu, 64 * seeded.uniform(0, 8), shape, dt, false, chip.lmem / 2, k.dst)) continue;
    k.C.u32 = uint32_t(rng());  // the bytes above the dtype's member must be ignored
    const uint32_t value = k.C.u32 & (esize(dt) == 4 ? 0xffffffffu : (1u << (8 * esize(dt))) - 1);
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) { put(expected, chip, k.dst, n, c, h, w, value); });
    run_and_compare(k, expected, describe("set_C", dt, shape, iter));
  }
}

TEST_P(BdcMovement, NpuBcastReplicatesOneChannelOverConsecutiveNpus) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  for (int iter = 0; iter < 80; ++iter) {
    const data_type_t dt = all_dtypes[seeded.uniform(0, 8)];
    const int dst_npu = seeded.uniform(0, chip.npu - 1);
    // The usual call: all NPUs from 0, in place.
    const int mode = seeded.uniform(0, 3);  // 0 apart; 1 in place; 2 same offset, another NPU; 3 typical
    const int c = mode == 3 ? chip.npu - dst_npu : seeded.uniform(1, chip.npu - dst_npu);
    const dim4 shape = {seeded.uniform(1, 3), c, seeded.uniform(1, 7), seeded.uniform(1, 19)};
    const dim4 src_shape = {shape.n, 1, shape.h, shape.w};
    const int src_npu = mode == 1 || mode == 3 ? dst_npu : seeded.uniform(0, chip.npu - 1);
    const uint32_t dst_off = 64 * seeded.uniform(0, 4);
    const uint32_t src_off = mode == 0 ? chip.lmem / 2 : dst_off;
    Command k{};
    k.op = Op::npu_bcast;
    k.dst = aligned(chip, dst_npu, dst_off, shape, dt);
    k.src = aligned(chip, src_npu, src_off, src_shape, dt);
    randomize(rng, chip, k.dst);  // stale data everywhere dst goes, the source on top
    randomize(rng, chip, k.src);
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      put(expected, chip, k.dst, n, c, h, w, get_bits(chip, k.src, n, 0, h, w));
    });
    run_and_compare(k, expected,
                    describe("npu_bcast", dt, shape, iter) + " src NPU " + std::to_string(src_npu) + " dst NPU " +
                        std::to_string(dst_npu) + " mode " + std::to_string(mode));
  }
}

TEST_P(BdcMovement, CpyCrossNpuMovesBetweenStartNpus) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  for (int iter = 0; iter < 80; ++iter) {
    const data_type_t dt = all_dtypes[seeded.uniform(0, 8)];
    const dim4 shape = {seeded.uniform(1, 3), seeded.uniform(1, 2 * chip.npu + 3), seeded.uniform(1, 7),
                        seeded.uniform(1, 19)};
    // 0 apart; 1 same offset (overlapping, never the same address: BC-2)
    const int mode = seeded.uniform(0, 1);
    const int dst_npu = seeded.uniform(0, chip.npu - 1);
    const int src_npu = mode == 1 ? (dst_npu + seeded.uniform(1, chip.npu - 1)) % chip.npu
                                  : seeded.uniform(0, chip.npu - 1);
    const uint32_t dst_off = 64 * seeded.uniform(0, 4);
    Command k{};
    k.op = Op::cross_npu;
    k.dst = aligned(chip, dst_npu, dst_off, shape, dt);
    k.src = aligned(chip, src_npu, mode == 0 ? chip.lmem / 2 : dst_off, shape, dt);
    randomize(rng, chip, k.src);
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      put(expected, chip, k.dst, n, c, h, w, get_bits(chip, k.src, n, c, h, w));
    });
    run_and_compare(k, expected,
                    describe("cpy_cross_npu", dt, shape, iter) + " src NPU " + std::to_string(src_npu) +
                        " dst NPU " + std::to_string(dst_npu) + " mode " + std::to_string(mode));
  }
}

TEST_P(BdcMovement, CwAndWcTransSwapChannelsAndColumns) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  for (int iter = 0; iter < 100; ++iter) {
    const Op op = seeded.uniform(0, 1) ? Op::cw_trans : Op::wc_trans;
    const data_type_t dt = all_dtypes[seeded.uniform(0, 8)];
    const dim4 shape = {seeded.uniform(1, 2), seeded.uniform(1, chip.npu + 5), seeded.uniform(1, 4),
                        seeded.uniform(1, chip.npu + 5)};
    const dim4 src_shape = {shape.n, shape.w, shape.h, shape.c};
    // 0 apart; 1 same offset (overlapping, never the same address: TR-3)
    const int mode = seeded.uniform(0, 1);
    // cw_trans reads from NPU 0, wc_trans writes from NPU 0 (TR-2); the
    // other operand starts anywhere, off NPU 0 at the same offset.
    const int other_npu = seeded.uniform(mode == 1 ? 1 : 0, chip.npu - 1);
    const int dst_npu = op == Op::wc_trans ? 0 : other_npu, src_npu = op == Op::cw_trans ? 0 : other_npu;
    const uint32_t dst_off = 64 * seeded.uniform(0, 4);
    Command k{};
    k.op = op;
    k.dst = aligned(chip, dst_npu, dst_off, shape, dt);
    k.src = aligned(chip, src_npu, mode == 0 ? chip.lmem / 2 : dst_off, src_shape, dt);
    randomize(rng, chip, k.src);
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(shape, [&](int n, int c, int h, int w) {
      put(expected, chip, k.dst, n, c, h, w, get_bits(chip, k.src, n, w, h, c));
    });
    run_and_compare(k, expected,
                    describe(op == Op::cw_trans ? "cw_trans" : "wc_trans", dt, shape, iter) + " mode " +
                        std::to_string(mode));
  }
}

// A transpose of a known small tensor, written out by hand: the random test
// and this one must agree on which axis is which.
TEST_P(BdcMovement, CwTransOfAKnownTensor) {
  // src [1, 3, 1, 2] int32: channel k holds {10k, 10k + 1}; dst [1, 2, 1, 3].
  const dim4 src_shape = {1, 3, 1, 2}, dst_shape = {1, 2, 1, 3};
  Command k{};
  k.op = Op::cw_trans;
  k.src = aligned(chip, 0, 0, src_shape, DT_INT32);
  k.dst = aligned(chip, 0, 4096, dst_shape, DT_INT32);
  for (int c = 0; c < 3; ++c)
    for (int w = 0; w < 2; ++w) set<int32_t>(chip, k.src, 0, c, 0, w, 10 * c + w);
  ASSERT_EQ(cmodel_run(movement_kernel, &k), 0) << cmodel_last_error();
  const int32_t want[2][3] = {{0, 10, 20}, {1, 11, 21}};
  for (int c = 0; c < 2; ++c)
    for (int w = 0; w < 3; ++w) EXPECT_EQ(get<int32_t>(chip, k.dst, 0, c, 0, w), want[c][w]) << c << "," << w;
}

// Every command of the family is counted under its own name and booked on
// the BDC; a transpose costs more than a copy of the same size.
void stats_kernel(const void *arg) {
  const int npu = *static_cast<const int *>(arg);
  const dim4 shape = {1, npu, 4, 16}, one = {1, 1, 4, 16}, transposed = {1, 16, 4, npu};
  scalar_t zero{};
  tpu_bdc_set_C(0, zero, &transposed, nullptr, DT_FP32);  // what cw_trans reads
  tpu_bdc_set_C(0, zero, &shape, nullptr, DT_FP32);
  tpu_bdc_cpy(8192, 0, &shape, nullptr, nullptr, DT_FP32);
  tpu_bdc_npu_bcast(8192, 8192, &shape, DT_FP32);
  tpu_bdc_npu_bcast(8192, 0, &shape, DT_FP32);
  (void)one;
  tpu_bdc_cpy_cross_npu(16384, 0, &shape, DT_FP32);
  tpu_bdc_cw_trans(24576, 0, &shape, DT_FP32);
}

TEST_P(BdcMovement, CommandsAreCountedOnTheBdc) {
  // cw_trans of [1, NPU, 4, 16] reads [1, 16, 4, NPU]; both fit at their offsets.
  int npu = chip.npu;
  ASSERT_EQ(cmodel_run(stats_kernel, &npu), 0) << cmodel_last_error();
  const auto stats = nlohmann::json::parse(cmodel_last_run_stats());
  const auto &commands = stats["commands"];
  EXPECT_EQ(commands["tpu_bdc_set_C"], 2);
  EXPECT_EQ(commands["tpu_bdc_cpy"], 1);
  EXPECT_EQ(commands["tpu_bdc_npu_bcast"], 2);
  EXPECT_EQ(commands["tpu_bdc_cpy_cross_npu"], 1);
  EXPECT_EQ(commands["tpu_bdc_cw_trans"], 1);
  EXPECT_EQ(stats["engines"]["bdc"]["commands"], 7);
  EXPECT_GT(stats["engines"]["bdc"]["cycles"].get<double>(), 0);
}

void single_cost_kernel(const void *arg) {
  const int which = *static_cast<const int *>(arg);
  const dim4 shape = {4, 64, 8, 16};
  if (which == 0) tpu_bdc_cpy(0, 65536, &shape, nullptr, nullptr, DT_FP32);
  if (which == 1) tpu_bdc_cw_trans(0, 65536, &shape, DT_FP32);
  if (which == 2) tpu_bdc_cpy_cross_npu(0, 65536, &shape, DT_FP32);
}

double bdc_cycles() { return nlohmann::json::parse(cmodel_last_run_stats())["engines"]["bdc"]["cycles"].get<double>(); }

void set_source_kernel(const void *) {
  const dim4 shape = {4, 64, 8, 16}, transposed = {4, 16, 8, 64};  // cw_trans reads the second
  tpu_bdc_set_C(65536, scalar_t{}, &transposed, nullptr, DT_FP32);
  tpu_bdc_set_C(65536, scalar_t{}, &shape, nullptr, DT_FP32);
}

TEST_P(BdcMovement, TransposesAndCrossNpuCopiesCostMoreThanCopies) {
  ASSERT_EQ(cmodel_run(set_source_kernel, nullptr), 0) << cmodel_last_error();  // the source, in a run of its own
  double cycles[3];
  for (int which = 0; which < 3; ++which) {
    ASSERT_EQ(cmodel_run(single_cost_kernel, &which), 0) << cmodel_last_error();
    cycles[which] = bdc_cycles();
  }
  EXPECT_GT(cycles[1], cycles[0]);
  EXPECT_GT(cycles[2], cycles[0]);
}

// ---- checks ----------------------------------------------------------------

struct BadCall {
  int which;
  int npu;
};

void bad_kernel(const void *arg) {
  const auto &b = *static_cast<const BadCall *>(arg);
  const dim4 shape = {1, 4, 2, 2}, stride = {16, 8, 2, 1};
  const local_addr_t npu1 = LOCAL_MEM_SIZE;
  scalar_t C{};
  switch (b.which) {
    case 0: tpu_bdc_cpy(0, npu1, &shape, &stride, &stride, DT_FP32); break;
    case 1: tpu_bdc_cpy(0, 4, &shape, &stride, nullptr, DT_FP32); break;
    case 2: {
      const dim4 zero_c = {1, 0, 2, 2};
      tpu_bdc_set_C(0, C, &zero_c, nullptr, DT_INT8);
      break;
    }
    case 3: {
      const dim4 huge_w = {1, 1, 1, 65536};
      tpu_bdc_cpy(0, 1 << 16, &huge_w, nullptr, nullptr, DT_INT8);
      break;
    }
    case 4: tpu_bdc_cpy(0, 256, &shape, nullptr, nullptr, data_type_t(15)); break;
    case 5: tpu_bdc_set_C(0, C, &shape, nullptr, DT_INT4); break;
    case 6: {
      const dim4 all = {1, b.npu, 1, 8};
      tpu_bdc_npu_bcast(3 * npu1, 3 * npu1, &all, DT_FP16);
      break;
    }
    case 7: tpu_bdc_npu_bcast(0, npu1 + 8, &shape, DT_FP32); break;
    case 8: tpu_bdc_cpy_cross_npu(npu1 + 8, 0, &shape, DT_FP32); break;
    case 9: tpu_bdc_cw_trans(0, 4096 + 4, &shape, DT_FP32); break;
    case 10: tpu_bdc_wc_trans(0, 4096, nullptr, DT_FP32); break;
    case 11: tpu_bdc_set_C(2 * npu1 + 1, C, &shape, &stride, DT_INT16); break;
    case 12: tpu_bdc_cpy_cross_npu(npu1, npu1, &shape, DT_FP32); break;
    case 13: tpu_bdc_cw_trans(0, npu1 + 4096, &shape, DT_FP32); break;
    case 14: tpu_bdc_wc_trans(npu1, 4096, &shape, DT_FP32); break;
    case 15: tpu_bdc_wc_trans(4096, 4096, &shape, DT_FP32); break;
  }
}

std::string failure(int which, int npu) {
  BadCall b{which, npu};
  EXPECT_NE(cmodel_run(bad_kernel, &b), 0) << "case " << which;
  return cmodel_last_error();
}

#define EXPECT_MESSAGE(which, text)                                              \
  do {                                                                           \
    const std::string m = failure(which, chip.npu);                              \
    EXPECT_NE(m.find(text), std::string::npos) << "case " << which << ": " << m; \
  } while (0)

TEST_P(BdcMovement, ChecksNameTheFunctionAndTheValue) {
  EXPECT_MESSAGE(0, "tpu_bdc_cpy: dst starts on NPU 0 but src on NPU 1");
  EXPECT_MESSAGE(1, "tpu_bdc_cpy: src local address 0x4 uses the aligned layout (NULL stride) but its offset 0x4");
  EXPECT_MESSAGE(2, "tpu_bdc_set_C: dst shape [1, 0, 2, 2]: c = 0; every dim must be in [1, 65535]");
  EXPECT_MESSAGE(3, "tpu_bdc_cpy: dst shape [1, 1, 1, 65536]: w = 65536; every dim must be in [1, 65535]");
  EXPECT_MESSAGE(4, "tpu_bdc_cpy: dst dtype 15 is not a data type of this chip");
  EXPECT_MESSAGE(5, "tpu_bdc_set_C: dst dtype DT_INT4: 4-bit tensors are not emulated yet");
  EXPECT_MESSAGE(6, "tpu_bdc_npu_bcast: dst starts on NPU 3 and shape.c = " + std::to_string(chip.npu) +
                        " would reach NPU " + std::to_string(chip.npu + 2) +
                        "; the broadcast writes one channel into each of shape.c consecutive NPUs, so start NPU + "
                        "c must be at most NPU_NUM = " +
                        std::to_string(chip.npu));
  EXPECT_MESSAGE(7, "tpu_bdc_npu_bcast: src local address " + hex(chip.lmem + 8) + " uses the aligned layout");
  EXPECT_MESSAGE(8, "tpu_bdc_cpy_cross_npu: dst local address");
  EXPECT_MESSAGE(8, "its offset 0x8 in NPU 1 is not a multiple of " + std::to_string(chip.eu_bytes) + " bytes");
  EXPECT_MESSAGE(9, "tpu_bdc_cw_trans: src local address 0x1004 uses the aligned layout");
  EXPECT_MESSAGE(10, "tpu_bdc_wc_trans: shape is a null pointer");
  EXPECT_MESSAGE(11, "tpu_bdc_set_C: dst local address 0x");
  EXPECT_MESSAGE(11, "is not a multiple of the 2-byte size of DT_INT16");
  EXPECT_MESSAGE(12, "tpu_bdc_cpy_cross_npu: dst and src are both at local address " + hex(chip.lmem) +
                         "; the copy between NPUs cannot work in place (give dst its own buffer) [illegal command] "
                         "[BC-2]");
  EXPECT_MESSAGE(13, "tpu_bdc_cw_trans: src starts on NPU 1 (local address " + hex(chip.lmem + 4096) +
                         "); tpu_bdc_cw_trans reads its source from NPU 0");
  EXPECT_MESSAGE(14, "tpu_bdc_wc_trans: dst starts on NPU 1 (local address " + hex(chip.lmem) +
                         "); tpu_bdc_wc_trans writes its result from NPU 0");
  EXPECT_MESSAGE(15, "tpu_bdc_wc_trans: dst and src are both at local address 0x1000; the transpose cannot work in "
                     "place");
}

// A failing command changes nothing.
TEST_P(BdcMovement, AFailingCommandLeavesMemoryAlone) {
  const std::vector<uint8_t> before = snapshot(chip);
  failure(6, chip.npu);
  expect_local_memory(chip, before, [] { return std::string("after a rejected npu_bcast"); });
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcMovement, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
