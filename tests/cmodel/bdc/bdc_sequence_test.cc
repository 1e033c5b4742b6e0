// bdc_sequence_test: arithmetic sequences (tpu_bdc_arithmetic_sequence_bcast
// / _distribute / _distribute_aligned / _general,
// tpu_bdc_generate_arithmetic_sequence) and copies from static memory
// (tpu_bdc_npu_bcast_from_static, tpu_bdc_npu_distribute_from_static;
// cmodel/bdc/sequence.h), bit for bit over the whole local memory against
// the documented layouts built with the independent model: random start
// NPUs, lengths, starts and steps (32-bit wrap-around included), every
// dtype the static copies and generate take, both chips. Every check fires.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cmodel/context.h"
#include "support/bdc_helpers.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;

enum class Op { bcast, distribute, distribute_aligned, general, generate, bcast_static, distribute_static,
                bcast_dtype, distribute_dtype, distribute_aligned_dtype, general_dtype };

struct SeqCall {
  Op op;
  local_addr_t dst, buffer;
  int npu_num, start, step, num;
  data_type_t dtype;
  uint32_t static_src;
};

void seq_kernel(const void *arg) {
  const auto &k = *static_cast<const SeqCall *>(arg);
  switch (k.op) {
    case Op::bcast: tpu_bdc_arithmetic_sequence_bcast(k.dst, k.npu_num, k.start, k.step, k.num); break;
    case Op::distribute: tpu_bdc_arithmetic_sequence_distribute(k.dst, k.start, k.step, k.num); break;
    case Op::distribute_aligned: tpu_bdc_arithmetic_sequence_distribute_aligned(k.dst, k.start, k.step, k.num); break;
    case Op::general: tpu_bdc_arithmetic_sequence_general(k.dst, k.buffer, k.npu_num, k.start, k.step, k.num); break;
    case Op::generate: tpu_bdc_generate_arithmetic_sequence(k.dst, k.num, k.dtype); break;
    case Op::bcast_static: tpu_bdc_npu_bcast_from_static(k.dst, k.static_src, k.npu_num, k.num, k.dtype); break;
    case Op::distribute_static: tpu_bdc_npu_distribute_from_static(k.dst, k.static_src, k.num, k.dtype); break;
    case Op::bcast_dtype:
      tpu_bdc_arithmetic_sequence_bcast_with_dtype(k.dst, k.npu_num, k.start, k.step, k.num, k.dtype);
      break;
    case Op::distribute_dtype:
      tpu_bdc_arithmetic_sequence_distribute_with_dtype(k.dst, k.start, k.step, k.num, k.dtype);
      break;
    case Op::distribute_aligned_dtype:
      tpu_bdc_arithmetic_sequence_distribute_aligned_with_dtype(k.dst, k.start, k.step, k.num, k.dtype);
      break;
    case Op::general_dtype:
      tpu_bdc_arithmetic_sequence_general_with_dtype(k.dst, k.buffer, k.npu_num, k.start, k.step, k.num, k.dtype);
      break;
  }
}

bool dtype_is_float_for_test(data_type_t t) { return t == DT_FP32 || t == DT_FP16 || t == DT_BFP16; }

// start + i * step in 32-bit two's complement.
uint32_t term(int start, int step, int i) { return uint32_t(start) + uint32_t(i) * uint32_t(step); }

class BdcSequence : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  void run_and_compare(const SeqCall &k, const std::vector<uint8_t> &expected, const std::string &what) {
    ASSERT_EQ(cmodel_run(seq_kernel, &k), 0) << what << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return what; });
  }
  Chip chip;
};

template <typename Seeded>
int random_int(Seeded &s) {
  switch (s.uniform(0, 3)) {
    case 0: return s.uniform(-10, 10);
    case 1: return s.uniform(-100000, 100000);
    default: return int(uint32_t(s.rng()()));  // anything: wraps around
  }
}

TEST_P(BdcSequence, BcastAndGeneralWriteTheSequenceIntoEveryLane) {
  test::Seeded seeded;
  std::vector<uint8_t> expected;
  for (int iter = 0; iter < 60; ++iter) {
    const bool general = iter % 2 == 1;
    const int npu = seeded.uniform(0, chip.npu - 1);
    SeqCall k{general ? Op::general : Op::bcast, 0, 0, seeded.uniform(1, chip.npu - npu), random_int(seeded),
              random_int(seeded), seeded.uniform(1, 700), DT_INT32, 0};
    const Tensor dst = aligned(chip, npu, 64 * uint32_t(seeded.uniform(0, 8)), {1, k.npu_num, 1, k.num}, DT_INT32);
    const Tensor buffer = aligned(chip, npu, 8192, {1, k.npu_num, 1, 1}, DT_INT32);
    k.dst = dst.addr;
    k.buffer = buffer.addr;
    expected = snapshot(chip);
    for (int c = 0; c < k.npu_num; ++c) {
      for (int w = 0; w < k.num; ++w) put(expected, chip, dst, 0, c, 0, w, term(k.start, k.step, w));
      if (general) put(expected, chip, buffer, 0, c, 0, 0, term(k.start, k.step, k.num - 1));
    }
    run_and_compare(k, expected,
                    std::string(general ? "general" : "bcast") + " NPU " + std::to_string(npu) + " npu_num " +
                        std::to_string(k.npu_num) + " start " + std::to_string(k.start) + " step " +
                        std::to_string(k.step) + " num " + std::to_string(k.num));
  }
}

TEST_P(BdcSequence, DistributePutsTermIInChannelI) {
  test::Seeded seeded;
  std::vector<uint8_t> expected;
  for (int iter = 0; iter < 60; ++iter) {
    const bool is_aligned = iter % 2 == 1;
    const int npu = seeded.uniform(0, chip.npu - 1);
    SeqCall k{is_aligned ? Op::distribute_aligned : Op::distribute, 0, 0, 0, random_int(seeded), random_int(seeded),
              seeded.uniform(1, 4 * chip.npu + 7), DT_INT32, 0};
    const dim4 shape = {1, k.num, 1, 1};
    Tensor dst;
    if (is_aligned) {
      dst = aligned(chip, npu, 64 * uint32_t(seeded.uniform(0, 8)), shape, DT_INT32);
    } else {
      // Compact: channel rows 4 bytes apart, any 4-byte aligned offset.
      const int rows = int(div_up(npu + k.num, chip.npu));
      dst = {local_addr_t(npu * chip.lmem + 4 * uint32_t(seeded.uniform(0, 100))), shape, {rows, 1, 1, 1}, DT_INT32,
             false};
    }
    k.dst = dst.addr;
    expected = snapshot(chip);
    for (int c = 0; c < k.num; ++c) put(expected, chip, dst, 0, c, 0, 0, term(k.start, k.step, c));
    run_and_compare(k, expected,
                    std::string(is_aligned ? "distribute_aligned" : "distribute") + " NPU " + std::to_string(npu) +
                        " num " + std::to_string(k.num));
  }
}

// The *_with_dtype forms: the same layouts with elements of the dtype; an
// integer dtype keeps the 32-bit term's low bits, a float dtype gets the
// term rounded to nearest-even (terms stay below 2^24 there, so the host's
// own int -> float -> fp16 / bf16 conversions round only once).
TEST_P(BdcSequence, WithDtypeFormsWriteTheTermsInTheDtype) {
  test::Seeded seeded;
  const data_type_t dtypes[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP16, DT_BFP16, DT_FP32};
  for (int iter = 0; iter < 80; ++iter) {
    const Op op = Op(int(Op::bcast_dtype) + seeded.uniform(0, 3));
    const data_type_t t = dtypes[seeded.uniform(0, 8)];
    const bool small = dtype_is_float_for_test(t);
    const int npu = seeded.uniform(0, chip.npu - 1);
    SeqCall k{op, 0, 0, seeded.uniform(1, chip.npu - npu), small ? seeded.uniform(-1000, 1000) : random_int(seeded),
              small ? seeded.uniform(-1000, 1000) : random_int(seeded), seeded.uniform(1, 300), t, 0};
    const bool distribute = op == Op::distribute_dtype || op == Op::distribute_aligned_dtype;
    const dim4 shape = distribute ? dim4{1, k.num, 1, 1} : dim4{1, k.npu_num, 1, k.num};
    Tensor dst = aligned(chip, npu, 64 * uint32_t(seeded.uniform(0, 8)), shape, t);
    if (op == Op::distribute_dtype)  // compact: channel rows one element apart
      dst = {local_addr_t(npu * chip.lmem + 4 * uint32_t(seeded.uniform(0, 100))), shape,
             {int(div_up(npu + k.num, chip.npu)), 1, 1, 1}, t, false};
    const Tensor buffer = aligned(chip, npu, 16384, {1, k.npu_num, 1, 1}, t);
    k.dst = dst.addr;
    k.buffer = buffer.addr;
    auto value = [&](int i) -> uint32_t {
      const uint32_t bits = term(k.start, k.step, i);
      const float f = float(int32_t(bits));
      if (t == DT_FP32) {
        uint32_t b;
        std::memcpy(&b, &f, sizeof b);
        return b;
      }
      if (t == DT_FP16) return to_fp16(f);
      if (t == DT_BFP16) return to_bf16(f);
      return bits;
    };
    std::vector<uint8_t> expected = snapshot(chip);
    if (distribute) {
      for (int c = 0; c < k.num; ++c) put(expected, chip, dst, 0, c, 0, 0, value(c));
    } else {
      for (int c = 0; c < k.npu_num; ++c) {
        for (int w = 0; w < k.num; ++w) put(expected, chip, dst, 0, c, 0, w, value(w));
        if (op == Op::general_dtype) put(expected, chip, buffer, 0, c, 0, 0, value(k.num - 1));
      }
    }
    run_and_compare(k, expected,
                    "op " + std::to_string(int(op)) + " dtype " + std::to_string(t) + " NPU " + std::to_string(npu) +
                        " npu_num " + std::to_string(k.npu_num) + " start " + std::to_string(k.start) + " step " +
                        std::to_string(k.step) + " num " + std::to_string(k.num));
    if (::testing::Test::HasFailure()) break;
  }
}

TEST_P(BdcSequence, GenerateWritesZeroToNumMinusOneInTheDtype) {
  test::Seeded seeded;
  const data_type_t types[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP16, DT_BFP16, DT_FP32};
  const int largest[] = {128, 256, 32768, 65535, 65535, 65535, 2049, 257, 65535};
  std::vector<uint8_t> expected;
  for (int iter = 0; iter < 45; ++iter) {
    const int which = iter % 9;
    const data_type_t t = types[which];
    const int npu = seeded.uniform(0, chip.npu - 1);
    const int num = seeded.uniform(0, 2) ? seeded.uniform(1, 300 < largest[which] ? 300 : largest[which]) : largest[which];
    if (uint64_t(num) * esize(t) > chip.lmem - 4096) continue;
    SeqCall k{Op::generate, 0, 0, 0, 0, 0, num, t, 0};
    const Tensor dst = aligned(chip, npu, 4096, {1, 1, 1, num}, t);
    k.dst = dst.addr;
    expected = snapshot(chip);
    for (int i = 0; i < num; ++i)
      put(expected, chip, dst, 0, 0, 0, i, dtype_is_float_for_test(t) ? encode(t, float(i)) : uint32_t(i));
    run_and_compare(k, expected, "generate " + dtype_label(t) + " num " + std::to_string(num));
  }
}

// Static memory: random bytes above the tables, and the tables themselves.
TEST_P(BdcSequence, CopiesFromStaticMemory) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t types[] = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP16, DT_BFP16, DT_FP32};
  std::vector<uint8_t> expected;
  for (int iter = 0; iter < 60; ++iter) {
    const bool distribute = iter % 2 == 1;
    const data_type_t t = types[seeded.uniform(0, 8)];
    // The distribute writes the compact layout from NPU 0 (BC-4).
    const int npu = distribute ? 0 : seeded.uniform(0, chip.npu - 1);
    const int npu_num = seeded.uniform(1, chip.npu - npu);
    const int len = distribute ? seeded.uniform(1, 3 * chip.npu) : seeded.uniform(1, 500);
    const uint32_t src = 0x4000 + uint32_t(chip.eu_bytes * seeded.uniform(0, 100));  // ALIGN_BYTES: BC-3, BC-4
    uint8_t *stat = cmodel::current_context()->memory.static_mem(src, size_t(len) * esize(t));
    for (int i = 0; i < len * esize(t); ++i) stat[i] = uint8_t(rng());
    SeqCall k{distribute ? Op::distribute_static : Op::bcast_static, 0, 0, npu_num, 0, 0, len, t, src};
    const Tensor dst =
        distribute ? Tensor{local_addr_t(esize(t) * seeded.uniform(0, 100)), {1, len, 1, 1},
                            {int(div_up(len, chip.npu)), 1, 1, 1}, t, false}
                   : aligned(chip, npu, 64 * uint32_t(seeded.uniform(0, 8)), {1, npu_num, 1, len}, t);
    k.dst = dst.addr;
    expected = snapshot(chip);
    auto element = [&](int i) {
      uint32_t v = 0;
      std::memcpy(&v, stat + size_t(i) * esize(t), size_t(esize(t)));
      return v;
    };
    if (distribute)
      for (int c = 0; c < len; ++c) put(expected, chip, dst, 0, c, 0, 0, element(c));
    else
      for (int c = 0; c < npu_num; ++c)
        for (int w = 0; w < len; ++w) put(expected, chip, dst, 0, c, 0, w, element(w));
    run_and_compare(k, expected,
                    std::string(distribute ? "distribute" : "bcast") + "_from_static " + dtype_label(t) + " NPU " +
                        std::to_string(npu) + " len " + std::to_string(len) + " src " + hex(src));
  }
}

// The exp coefficients sit at the documented static offset: broadcasting
// them gives what tpu_bdc_load_fp32_exp_coeff writes, even before any
// loader ran.
void static_exp_kernel(const void *arg) {
  const uint32_t offset = *static_cast<const uint32_t *>(arg);
  tpu_bdc_npu_bcast_from_static(0, offset, NPU_NUM, 10, DT_FP32);
  tpu_bdc_load_fp32_exp_coeff(4096);
}

TEST_P(BdcSequence, StaticMemoryHoldsTheTables) {
  const uint32_t offset = chip.name == "bm1684x" ? 1024 : 0;
  ASSERT_EQ(cmodel_run(static_exp_kernel, &offset), 0) << cmodel_last_error();
  for (int npu = 0; npu < chip.npu; ++npu)
    EXPECT_EQ(std::memcmp(local_at(size_t(npu) * chip.lmem), local_at(size_t(npu) * chip.lmem + 4096), 40), 0)
        << "NPU " << npu;
  EXPECT_EQ(get<float>(chip, aligned(chip, 0, 0, {1, chip.npu, 1, 10}, DT_FP32), 0, 5, 0, 2), 0.5f);  // 1/2!
}

TEST_P(BdcSequence, CommandsAreCountedOnTheBdc) {
  SeqCall k{Op::bcast, 0, 0, chip.npu, 0, 1, 64, DT_INT32, 0};
  ASSERT_EQ(cmodel_run(seq_kernel, &k), 0) << cmodel_last_error();
  EXPECT_EQ(run_stats().at("commands").at("tpu_bdc_arithmetic_sequence_bcast").get<int>(), 1);
  EXPECT_GT(bdc_cycles(), 0);
}

// ---- checks ------------------------------------------------------------------------------

void bad_kernel(const void *arg) {
  const int which = *static_cast<const int *>(arg);
  const local_addr_t npu3 = 3 * LOCAL_MEM_SIZE;
  switch (which) {
    case 0: tpu_bdc_arithmetic_sequence_bcast(0, 0, 0, 1, 8); break;
    case 1: tpu_bdc_arithmetic_sequence_bcast(npu3, NPU_NUM, 0, 1, 8); break;
    case 2: tpu_bdc_arithmetic_sequence_bcast(0, 4, 0, 1, 0); break;
    case 3: tpu_bdc_arithmetic_sequence_distribute(2, 0, 1, 8); break;
    case 4: tpu_bdc_arithmetic_sequence_distribute_aligned(4, 0, 1, 8); break;
    case 5: tpu_bdc_arithmetic_sequence_general(0, 0, 4, 0, 1, 8); break;
    case 6: tpu_bdc_arithmetic_sequence_general(0, LOCAL_MEM_SIZE + 4096, 4, 0, 1, 8); break;
    case 7: tpu_bdc_generate_arithmetic_sequence(0, 200, DT_INT8); break;
    case 8: tpu_bdc_generate_arithmetic_sequence(0, 16, DT_INT4); break;
    case 9: tpu_bdc_npu_bcast_from_static(0, 0xfff0, 4, 8, DT_FP32); break;
    case 10: tpu_bdc_npu_distribute_from_static(0, 4, 8, DT_FP32); break;
    case 11: tpu_bdc_npu_bcast_from_static(npu3, 0, NPU_NUM - 2, 8, DT_FP16); break;
    case 12: tpu_bdc_arithmetic_sequence_distribute(0, 0, 1, 65536); break;
    case 13: tpu_bdc_npu_distribute_from_static(0, 0, 8, data_type_t(15)); break;
    case 14: tpu_bdc_generate_arithmetic_sequence(0, 3000, DT_FP16); break;
    case 15: tpu_bdc_npu_distribute_from_static(npu3, 0, 8, DT_FP32); break;
  }
}

TEST_P(BdcSequence, ChecksNameTheFunctionAndTheValue) {
  int w = 0;
  const std::string n = std::to_string(chip.npu);
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_arithmetic_sequence_bcast: npu_num 0 must be in [1, NPU_NUM = " + n + "]");
  w = 1;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w,
                        "tpu_bdc_arithmetic_sequence_bcast: dst starts on NPU 3 and npu_num = " + n +
                            " would reach NPU " + std::to_string(chip.npu + 2) +
                            "; the command writes into npu_num consecutive NPUs from dst's, so start NPU + npu_num "
                            "must be at most NPU_NUM = " + n);
  w = 2;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "dst shape [1, 4, 1, 0]: w = 0; every dim must be in [1, 65535]");
  w = 3;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_arithmetic_sequence_distribute: dst local address 0x2 is not a multiple of the 4-byte size of DT_INT32");
  w = 4;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_arithmetic_sequence_distribute_aligned: dst local address 0x4 uses the aligned layout");
  w = 5;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_arithmetic_sequence_general: buffer at 0x0 (bytes [0x0, 0x4) of its NPUs) overlaps dst at 0x0");
  w = 6;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_arithmetic_sequence_general: dst starts on NPU 0 but buffer on NPU 1");
  w = 7;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_generate_arithmetic_sequence: num 200 needs the values 0 .. 199, but DT_INT8 holds the integers exactly only up to 127");
  w = 8;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_generate_arithmetic_sequence: dtype DT_INT4 is not allowed here");
  w = 9;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_npu_bcast_from_static: src static range [0xfff0, 0x10010) (8 elements of DT_FP32) is outside the static memory of 65536 bytes (64 KiB)");
  std::string m = cmodel_last_error();
  EXPECT_NE(m.find("[memory fault]"), std::string::npos) << m;
  w = 10;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_npu_distribute_from_static: src static address 0x4 is at offset 0x4 of static memory, not a multiple of " + std::to_string(chip.eu_bytes) + " bytes (ALIGN_BYTES) [illegal command] [BC-4]");
  w = 11;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_npu_bcast_from_static: dst starts on NPU 3 and npu_num = " + std::to_string(chip.npu - 2));
  w = 12;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_arithmetic_sequence_distribute: dst shape [1, 65536, 1, 1]: c = 65536");
  w = 13;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_npu_distribute_from_static: dst dtype 15 is not a data type of this chip");
  w = 14;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "DT_FP16 holds the integers exactly only up to 2048");
  w = 15;
  EXPECT_RUN_FAILS_WITH(bad_kernel, &w, "tpu_bdc_npu_distribute_from_static: dst local address " + hex(3 * chip.lmem) + " is on NPU 3; the distribute from static memory writes from NPU 0 [illegal command] [BC-4]");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcSequence, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
