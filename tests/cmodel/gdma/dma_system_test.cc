// dma_system_test.cc: the flat system commands (system_set, system_bcast),
// the reducing copies into L2 SRAM, general_cpy_L2L, mask select / nonzero
// with their filter counts (GDMA only: the SDMA refuses them, SDMA-6), on
// the GDMA, the SDMA and the virtual SDMA ports, and the debug prints (tpu-kernel-api-current.md §3 D, E, V, U and
// §5 item 20), on both chips. References are computed here from the spec.
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "support/run_body.h"
#include "support/local_model.h"
#include "tpu_kernel.h"

namespace {

using test::run_kernel_body;
bool run(std::function<void()> body) { return run_kernel_body(std::move(body)); }
nlohmann::json stats() { return test::last_run_stats(); }

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

constexpr uint64_t l2_start = 0x10000000ull;  // main spec §1, both chips

int esize(data_type_t t) { return local_model::esize(t); }

class DmaSystem : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
  int npu() const { return std::string(GetParam()) == "bm1684x" ? 64 : 32; }
  std::string failure(std::function<void()> body) {
    EXPECT_FALSE(run(std::move(body)));
    return cmodel_last_error();
  }
  // A global buffer of `bytes` random bytes; `image` gets them too.
  uint64_t random_buffer(size_t bytes, std::vector<uint8_t> &image) {
    image.resize(bytes);
    for (auto &b : image) b = uint8_t(rng_());
    const uint64_t addr = cmodel_global_alloc(bytes);
    EXPECT_EQ(cmodel_global_write(addr, image.data(), bytes), 0);
    return addr;
  }
  std::vector<uint8_t> read(uint64_t addr, size_t bytes) {
    std::vector<uint8_t> v(bytes);
    EXPECT_EQ(cmodel_global_read(v.data(), addr, bytes), 0);
    return v;
  }
  std::mt19937 rng_{12345};
};

// ---- system_set (§5 item 20) --------------------------------------------------------
TEST_P(DmaSystem, SystemSetFillsExactlyCountElements) {
  for (const char *engine : {"gdma", "sdma", "vsdma"})
    for (data_type_t t : {DT_INT8, DT_UINT8, DT_FP16, DT_INT16, DT_FP32, DT_INT32}) {
      SCOPED_TRACE(std::string(engine) + " dtype " + std::to_string(int(t)));
      std::vector<uint8_t> expected;
      const uint64_t buf = random_buffer(512, expected);
      const unsigned count = 37;
      scalar_t C{};
      C.u32 = 0x89abcdefu;
      ASSERT_TRUE(run([&] {
        if (engine[0] == 'g') tpu_gdma_system_set(buf + 8, C, count, t);
        else if (engine[0] == 's') tpu_sdma_system_set(buf + 8, C, count, t);
        else tpu_vsdma_system_set(buf + 8, C, count, t, 3);
      })) << cmodel_last_error();
      const uint8_t low[4] = {0xef, 0xcd, 0xab, 0x89};  // C's low bytes, little-endian
      for (unsigned i = 0; i < count; ++i) std::memcpy(&expected[8 + i * esize(t)], low, size_t(esize(t)));
      EXPECT_EQ(read(buf, 512), expected);
      const auto s = stats();
      EXPECT_EQ(s["engines"][engine[0] == 'g' ? "gdma" : "sdma"]["commands"], 1);
      EXPECT_EQ(s["commands"].begin().key(), std::string("tpu_") + engine + "_system_set");
    }
}

TEST_P(DmaSystem, SystemSetErrors) {
  const uint64_t buf = cmodel_global_alloc(64);
  scalar_t C{};
  EXPECT_HAS(failure([&] { tpu_gdma_system_set(buf, C, 0, DT_FP32); }),
             "tpu_gdma_system_set: count = 0; a fill writes at least one element [illegal command]");
  const std::string past = failure([&] { tpu_sdma_system_set(buf + 32, C, 9, DT_FP32); });
  EXPECT_HAS(past, "tpu_sdma_system_set: dst: ");
  EXPECT_HAS(past, "[memory fault]");
  EXPECT_HAS(failure([&] { tpu_gdma_system_set(buf, C, 4, DT_FP8E4M3); }),
             "tpu_gdma_system_set: dst dtype " + std::to_string(int(DT_FP8E4M3)) + " is not a data type of this chip");
  EXPECT_HAS(failure([&] { tpu_gdma_system_set(buf, C, 4, DT_INT4); }), "4-bit elements are not emulated yet");
}

TEST_P(DmaSystem, SystemBcastRepeatsTheSource) {
  std::vector<uint8_t> expected;
  const uint64_t buf = random_buffer(256, expected);
  ASSERT_TRUE(run([&] { tpu_gdma_system_bcast(buf + 64, buf, 5, 3, DT_INT16); })) << cmodel_last_error();
  for (int c = 0; c < 3; ++c) std::memcpy(&expected[64 + c * 10], &expected[0], 10);
  EXPECT_EQ(read(buf, 256), expected);
  EXPECT_HAS(failure([&] { tpu_gdma_system_bcast(buf + 64, buf, 5, 0, DT_INT16); }),
             "tpu_gdma_system_bcast: dst_channel = 0; must be positive");
  // 2^32 - 1 elements of 4 bytes times 2^31 - 1 copies: more than 64 bits of bytes.
  EXPECT_HAS(failure([&] { tpu_gdma_system_bcast(buf + 64, buf, 0xffffffffu, 0x7fffffff, DT_INT32); }),
             "tpu_gdma_system_bcast: dst: 2147483647 copies of 17179869180 bytes (16.0 GiB) do not fit any memory");
}

// ---- reducing copies into L2 SRAM ----------------------------------------------------
struct ReduceCase {
  int psum, opcode;
};

// Values that every op keeps exact in fp16: halves in [-4, 4].
float small_value(std::mt19937 &rng) { return float(int(rng() % 17) - 8) / 2; }

double reference(int psum, int opcode, double dst, double src) {
  if (psum == ALL_REDUCE_PSUM_WO) return src;
  switch (opcode) {
    case ALL_REDUCE_MUL: return dst * src;
    case ALL_REDUCE_MAX: return std::max(dst, src);
    case ALL_REDUCE_MIN: return std::min(dst, src);
    case ALL_REDUCE_ADD: return dst + src;
    default: return src;
  }
}

uint32_t encode(data_type_t t, double v) {
  if (t == DT_FP32) {
    const float f = float(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  if (t == DT_FP16) return local_model::to_fp16(float(v));
  if (t == DT_BFP16) return local_model::to_bf16(float(v));
  return uint32_t(int64_t(v));
}

TEST_P(DmaSystem, ReduceCopiesCombineIntoL2) {
  const dim4 shape{2, 3, 2, 5};
  const int count = 60;
  const ReduceCase cases[] = {{ALL_REDUCE_PSUM_WO, ALL_REDUCE_ADD}, {ALL_REDUCE_PSUM_WR, ALL_REDUCE_NOP},
                              {ALL_REDUCE_PSUM_WR, ALL_REDUCE_MUL}, {ALL_REDUCE_PSUM_WR, ALL_REDUCE_MAX},
                              {ALL_REDUCE_PSUM_WR, ALL_REDUCE_MIN}, {ALL_REDUCE_PSUM_WR, ALL_REDUCE_ADD}};
  const char *sources[] = {"L12L2", "S2L2", "L22L2", "sdma S2L2", "sdma L22L2"};
  const uint64_t ddr = cmodel_global_alloc(4096);
  for (data_type_t t : {DT_FP32, DT_FP16, DT_BFP16, DT_INT32, DT_INT8})
    for (const ReduceCase &rc : cases)
      for (const char *source : sources) {
        SCOPED_TRACE(std::string(source) + " dtype " + std::to_string(int(t)) + " psum " +
                     std::to_string(rc.psum) + " op " + std::to_string(rc.opcode));
        const int sz = esize(t);
        std::vector<double> a(count), b(count);
        std::vector<uint8_t> dst_bytes(count * sz), src_bytes(count * sz);
        for (int i = 0; i < count; ++i) {
          a[i] = small_value(rng_);
          b[i] = small_value(rng_);
          if (t == DT_INT32 || t == DT_INT8) a[i] *= 2, b[i] *= 2;  // integers
          const uint32_t ea = encode(t, a[i]), eb = encode(t, b[i]);
          std::memcpy(&dst_bytes[i * sz], &ea, size_t(sz));
          std::memcpy(&src_bytes[i * sz], &eb, size_t(sz));
        }
        const uint64_t dst = l2_start + 0x1000, l2_src = l2_start + 0x8000;
        const std::string s = source;
        if (t == DT_INT32 && rc.opcode == ALL_REDUCE_MUL) {  // no 32-bit integer product (DMA-24, SDMA-10)
          const std::string e = failure([&] {
            const int p = rc.psum, op = rc.opcode;
            if (s == "S2L2") tpu_gdma_cpy_reduce_S2L2(dst, ddr, &shape, nullptr, nullptr, t, p, op);
            else if (s == "L22L2") tpu_gdma_cpy_reduce_L22L2(dst, l2_src, &shape, nullptr, nullptr, t, p, op);
            else if (s == "L12L2") tpu_gdma_cpy_reduce_L12L2(dst, 0, &shape, nullptr, nullptr, t, p, op);
            else if (s == "sdma S2L2") tpu_sdma_cpy_reduce_S2L2(dst, ddr, &shape, nullptr, nullptr, t, p, op);
            else tpu_sdma_cpy_reduce_L22L2(dst, l2_src, &shape, nullptr, nullptr, t, p, op);
          });
          EXPECT_HAS(e, "cannot multiply 32-bit integers");
          EXPECT_HAS(e, s.rfind("sdma", 0) == 0 ? "[SDMA-10]" : "[DMA-24]");
          continue;
        }
        ASSERT_EQ(cmodel_global_write(dst, dst_bytes.data(), dst_bytes.size()), 0);
        ASSERT_EQ(cmodel_global_write(ddr, src_bytes.data(), src_bytes.size()), 0);
        ASSERT_EQ(cmodel_global_write(l2_src, src_bytes.data(), src_bytes.size()), 0);
        ASSERT_TRUE(run([&] {
          if (s == "L12L2") {
            tpu_gdma_cpy_S2L(0, ddr, &shape, nullptr, nullptr, t);
            tpu_gdma_cpy_reduce_L12L2(dst, 0, &shape, nullptr, nullptr, t, rc.psum, rc.opcode);
          } else if (s == "S2L2") {
            tpu_gdma_cpy_reduce_S2L2(dst, ddr, &shape, nullptr, nullptr, t, rc.psum, rc.opcode);
          } else if (s == "L22L2") {
            tpu_gdma_cpy_reduce_L22L2(dst, l2_src, &shape, nullptr, nullptr, t, rc.psum, rc.opcode);
          } else if (s == "sdma S2L2") {
            tpu_sdma_cpy_reduce_S2L2(dst, ddr, &shape, nullptr, nullptr, t, rc.psum, rc.opcode);
          } else {
            tpu_sdma_cpy_reduce_L22L2(dst, l2_src, &shape, nullptr, nullptr, t, rc.psum, rc.opcode);
          }
        })) << cmodel_last_error();
        std::vector<uint8_t> expected(count * sz);
        for (int i = 0; i < count; ++i) {
          const uint32_t e = encode(t, reference(rc.psum, rc.opcode, a[i], b[i]));
          std::memcpy(&expected[i * sz], &e, size_t(sz));
        }
        EXPECT_EQ(read(dst, expected.size()), expected);
        EXPECT_EQ(stats()["engines"][s.rfind("sdma", 0) == 0 ? "sdma" : "gdma"]["commands"], s == "L12L2" ? 2 : 1);
      }
}

TEST_P(DmaSystem, ReduceCopyErrors) {
  const dim4 shape{1, 1, 1, 8};
  const uint64_t ddr = cmodel_global_alloc(4096);
  const uint64_t l2 = l2_start + 0x100;
  const std::string not_l2 =
      failure([&] { tpu_gdma_cpy_reduce_S2L2(ddr + 1024, ddr, &shape, nullptr, nullptr, DT_FP32, 1, 4); });
  EXPECT_HAS(not_l2, "tpu_gdma_cpy_reduce_S2L2: dst 0x");
  EXPECT_HAS(not_l2, "is not an L2 SRAM address; a reducing copy writes L2 SRAM [illegal command]");
  EXPECT_HAS(failure([&] { tpu_gdma_cpy_reduce_L22L2(l2, ddr, &shape, nullptr, nullptr, DT_FP32, 1, 4); }),
             "tpu_gdma_cpy_reduce_L22L2: src 0x");
  EXPECT_HAS(failure([&] { tpu_sdma_cpy_reduce_S2L2(l2, l2 + 0x100, &shape, nullptr, nullptr, DT_FP32, 1, 4); }),
             "is an L2 SRAM address; S2L2 reads global memory (use L22L2)");
  EXPECT_HAS(failure([&] { tpu_gdma_cpy_reduce_L12L2(l2, 0, &shape, nullptr, nullptr, DT_FP32, 2, 4); }),
             "tpu_gdma_cpy_reduce_L12L2: reduce_psum_op = 2; expected ALL_REDUCE_PSUM_WO (0) or ALL_REDUCE_PSUM_WR (1)");
  EXPECT_HAS(failure([&] { tpu_gdma_cpy_reduce_L12L2(l2, 0, &shape, nullptr, nullptr, DT_FP32, 1, 5); }),
             "reduce_opcode = 5; expected ALL_REDUCE_NOP, _MUL, _MAX, _MIN or _ADD (0 .. 4)");
  EXPECT_HAS(failure([&] { tpu_gdma_cpy_reduce_L12L2(l2, 0, nullptr, nullptr, nullptr, DT_FP32, 1, 4); }),
             "tpu_gdma_cpy_reduce_L12L2: shape is a null pointer");
}

// ---- general_cpy_L2L ---------------------------------------------------------------------
TEST_P(DmaSystem, GeneralCopyL2LReshapes) {
  std::vector<uint8_t> image;
  const uint64_t buf = random_buffer(24 * 4 * 2, image);
  const dim4 src_shape{1, 2, 3, 4}, dst_shape{2, 3, 1, 4};
  ASSERT_TRUE(run([&] {
    tpu_gdma_cpy_S2L(0, buf, &src_shape, nullptr, nullptr, DT_FP32);
    tpu_gdma_general_cpy_L2L(8192, 0, &dst_shape, &src_shape, nullptr, nullptr, DT_FP32);
    tpu_gdma_cpy_L2S(buf + 96, 8192, &dst_shape, nullptr, nullptr, DT_FP32);
  })) << cmodel_last_error();
  // Row-major element order is kept: the continuous image comes back unchanged.
  const auto back = read(buf + 96, 96);
  EXPECT_EQ(std::vector<uint8_t>(image.begin(), image.begin() + 96), back);
  EXPECT_HAS(failure([&] {
               const dim4 wrong{1, 1, 1, 23};
               tpu_gdma_general_cpy_L2L(8192, 0, &wrong, &src_shape, nullptr, nullptr, DT_FP32);
             }),
             "tpu_gdma_general_cpy_L2L: dst shape [1, 1, 1, 23] holds 23 elements but src shape [1, 2, 3, 4] holds 24");
}

// ---- mask select and nonzero ----------------------------------------------------------
// The GDMA's forms; the SDMA has neither command (SDMA-6).
TEST_P(DmaSystem, MaskSelectAndNonzeroOnTheGdma) {
  const dim4 shape{1, 2, 3, 5};
  const int count = 30;
  std::vector<int32_t> data(count);
  std::vector<float> mask(count);
  for (int i = 0; i < count; ++i) {
    data[i] = int32_t(rng_());
    mask[i] = (rng_() % 3 == 0) ? 0.0f : float(i);
  }
  mask[1] = -0.0f;       // a zero
  mask[2] = std::nanf("");  // not a zero
  std::vector<int32_t> selected;
  std::vector<uint32_t> indices;
  for (int i = 0; i < count; ++i)
    if (mask[i] != 0.0f || std::isnan(mask[i])) selected.push_back(data[i]);
  for (int i = 0; i < count; ++i)
    if (data[i] != 0) indices.push_back(uint32_t(i) + 1000);
  const uint64_t in = cmodel_global_alloc(4096), out = cmodel_global_alloc(4096);
  ASSERT_EQ(cmodel_global_write(in, data.data(), 120), 0);
  ASSERT_EQ(cmodel_global_write(in + 1024, mask.data(), 120), 0);
  for (const char *engine : {"gdma S2S", "gdma L2S"}) {
    SCOPED_TRACE(engine);
    const std::string e = engine;
    unsigned selected_num = 0, nonzero_num = 0, with_ret = 0;
    ASSERT_TRUE(run([&] {
      if (e == "gdma S2S") {
        with_ret = tpu_gdma_mask_select_S2S_with_ret(out, in, in + 1024, 0, &shape, DT_INT32, DT_FP32);
        selected_num = tpu_gdma_get_filter_num();
        tpu_gdma_nonzero_S2S(out + 2048, in, &shape, DT_INT32, 1000);
        nonzero_num = tpu_gdma_get_filter_num();
      } else if (e == "gdma L2S") {
        tpu_gdma_cpy_S2L(0, in, &shape, nullptr, nullptr, DT_INT32);
        tpu_gdma_cpy_S2L(65536, in + 1024, &shape, nullptr, nullptr, DT_FP32);
        tpu_gdma_mask_select_L2S(out, 0, 65536, 1, &shape, DT_INT32, DT_FP32);
        selected_num = with_ret = tpu_gdma_get_filter_num();
        tpu_gdma_nonzero_L2S(out + 2048, 0, &shape, DT_INT32, 1000);
        nonzero_num = tpu_gdma_get_filter_num();
      }
    })) << cmodel_last_error();
    EXPECT_EQ(selected_num, selected.size());
    EXPECT_EQ(with_ret, selected.size());
    EXPECT_EQ(nonzero_num, indices.size());
    std::vector<int32_t> got_selected(selected.size());
    std::vector<uint32_t> got_indices(indices.size());
    ASSERT_EQ(cmodel_global_read(got_selected.data(), out, got_selected.size() * 4), 0);
    ASSERT_EQ(cmodel_global_read(got_indices.data(), out + 2048, got_indices.size() * 4), 0);
    EXPECT_EQ(got_selected, selected);
    EXPECT_EQ(got_indices, indices);
  }
  EXPECT_HAS(failure([&] { tpu_gdma_mask_select_S2S(out, in, in + 1024, 2, &shape, DT_INT32, DT_FP32); }),
             "tpu_gdma_mask_select_S2S: mask_in_lmem = 2; expected 0 (system memory) or 1 (local memory)");
  // The selection does not fit after the end of the destination buffer.
  EXPECT_HAS(failure([&] { tpu_gdma_mask_select_S2S(out + 4096 - 8, in, in + 1024, 0, &shape, DT_INT32, DT_FP32); }),
             "tpu_gdma_mask_select_S2S: dst: ");
  EXPECT_HAS(failure([&] { tpu_sdma_mask_select_S2S(out, in, in + 1024, &shape, DT_INT32, DT_FP32); }),
             "tpu_sdma_mask_select_S2S: the SDMA has no mask-select command");
  EXPECT_HAS(failure([&] { tpu_sdma_nonzero_S2S(out, in, &shape, DT_INT32, 0); }), "[SDMA-6]");
  EXPECT_HAS(failure([&] { tpu_vsdma_mask_select_S2S(out, in, in + 1024, &shape, DT_INT32, DT_FP32, 5); }),
             "[SDMA-6]");
  EXPECT_HAS(failure([&] { tpu_vsdma_nonzero_S2S(out, in, &shape, DT_INT32, 0, 2); }), "[SDMA-6]");
}

// ---- SDMA and virtual ports ---------------------------------------------------------------
TEST_P(DmaSystem, SdmaCommandsRunOnTheSdma) {
  std::vector<uint8_t> image;
  const uint64_t buf = random_buffer(4096, image);
  const dim4 shape{1, 2, 3, 4};
  scalar_t C{};
  C.u32 = 0x3f800000u;  // 1.0f
  ASSERT_TRUE(run([&] {
    tpu_sdma_cpy_S2S(buf + 1024, buf, &shape, nullptr, nullptr, DT_FP32);
    tpu_vsdma_cpy_S2S(buf + 2048, buf, &shape, nullptr, nullptr, DT_FP32, 0);
    tpu_sdma_system_cpy(buf + 3072, buf, 24, DT_FP32);
    tpu_vsdma_set_C_system(buf + 3072 + 512, C, &shape, nullptr, DT_FP32, 7);
    tpu_vsdma_initialize();
    tpu_vsdma_port_initialize(1);
    tpu_vsdma_poll();
    tpu_vsdma_port_poll(1);
    tpu_vsdma_send_msg(1, 1, 1);
    tpu_vsdma_wait_msg(1, 1, 1);
  })) << cmodel_last_error();
  EXPECT_EQ(read(buf + 1024, 96), std::vector<uint8_t>(image.begin(), image.begin() + 96));
  EXPECT_EQ(read(buf + 2048, 96), std::vector<uint8_t>(image.begin(), image.begin() + 96));
  EXPECT_EQ(read(buf + 3072, 96), std::vector<uint8_t>(image.begin(), image.begin() + 96));
  const auto ones = read(buf + 3072 + 512, 96);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(ones[i * 4 + 3], 0x3f) << i;
  const auto s = stats();
  EXPECT_EQ(s["engines"]["sdma"]["commands"], 4);
  EXPECT_EQ(s["engines"]["gdma"]["commands"], 0);
  EXPECT_EQ(s["commands"]["tpu_vsdma_cpy_S2S"], 1);
  EXPECT_EQ(s["commands"]["tpu_sdma_cpy_S2S"], 1);
  // The SDMA's w-stride limit is 64 bytes (the GDMA's 128).
  const dim4 wide{1, 1, 1, 2}, stride{1, 1, 1, 32};
  ASSERT_TRUE(run([&] { tpu_gdma_cpy_S2S(buf + 1024, buf, &wide, nullptr, &stride, DT_FP32); }))
      << cmodel_last_error();
  EXPECT_HAS(failure([&] { tpu_sdma_cpy_S2S(buf + 1024, buf, &wide, nullptr, &stride, DT_FP32); }),
             "tpu_sdma_cpy_S2S: src stride.w = 32 elements (128 bytes of DT_FP32); the SDMA allows at most 64 bytes");
}

TEST_P(DmaSystem, VirtualPortsAreChecked) {
  const uint64_t buf = cmodel_global_alloc(1024);
  const dim4 shape{1, 1, 1, 4};
  const std::string chip = GetParam();
  const std::string e = failure([&] { tpu_vsdma_cpy_S2S(buf + 512, buf, &shape, nullptr, nullptr, DT_FP32, 8); });
  EXPECT_HAS(e, "tpu_vsdma_cpy_S2S: port 8 does not exist; " + chip + " has 8 virtual SDMA ports (0 .. 7)");
  EXPECT_HAS(e, "[illegal command]");
  EXPECT_HAS(failure([&] { tpu_vsdma_get_filter_num(-1); }), "tpu_vsdma_get_filter_num: port -1 does not exist");
  EXPECT_HAS(failure([&] { tpu_vsdma_port_poll(9); }), "tpu_vsdma_port_poll: port 9 does not exist");
  EXPECT_HAS(failure([&] { tpu_vsdma_send_msg(0, 1, 100); }), "tpu_vsdma_send_msg: port 100 does not exist");
}

// ---- debug prints (§5 item 20) ------------------------------------------------------------
TEST_P(DmaSystem, PrintLocalMemDataPrintsTheAlignedTensor) {
  const dim4 shape{1, 3, 2, 3};
  std::vector<float> values(18);
  for (int i = 0; i < 18; ++i) values[i] = float(i) * 0.5f - 2;
  const uint64_t buf = cmodel_global_alloc(1024);
  ASSERT_EQ(cmodel_global_write(buf, values.data(), 72), 0);
  testing::internal::CaptureStdout();
  ASSERT_TRUE(run([&] {
    tpu_gdma_cpy_S2L(256, buf, &shape, nullptr, nullptr, DT_FP32);  // aligned layout
    tpu_print_local_mem_data(256, 0, &shape, nullptr, DT_FP32);
  })) << cmodel_last_error();
  std::string expected = "tpu_print_local_mem_data: local 0x100 of NPU 0 [1, 3, 2, 3] DT_FP32\n";
  for (int c = 0; c < 3; ++c)
    for (int h = 0; h < 2; ++h) {
      char line[128];
      const float *v = &values[size_t(c * 6 + h * 3)];
      std::snprintf(line, sizeof line, "[0, %d, %d] %g %g %g\n", c, h, double(v[0]), double(v[1]), double(v[2]));
      expected += line;
    }
  EXPECT_EQ(testing::internal::GetCapturedStdout(), expected);
}

TEST_P(DmaSystem, PrintGlobalMemDataAndIntegers) {
  const int16_t values[6] = {-3, 0, 7, 32767, -32768, 12};
  const uint64_t buf = cmodel_global_alloc(1024);
  ASSERT_EQ(cmodel_global_write(buf, values, sizeof values), 0);
  const dim4 shape{1, 1, 2, 2}, stride{4, 4, 3, 1};  // skips values[2]
  const uint32_t lmem = std::string(GetParam()) == "bm1684x" ? 1u << 18 : 1u << 17;
  testing::internal::CaptureStdout();
  ASSERT_TRUE(run([&] {
    tpu_print_global_mem_data(buf, &shape, &stride, DT_INT16);
    tpu_gdma_cpy_S2L(lmem, buf, &shape, &stride, &stride, DT_INT16);  // NPU 1, explicit stride
    tpu_print_local_mem_data(0, 1, &shape, &stride, DT_INT16);
  })) << cmodel_last_error();
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string rows = " [1, 1, 2, 2] DT_INT16\n[0, 0, 0] -3 0\n[0, 0, 1] 32767 -32768\n";
  char head[64];
  std::snprintf(head, sizeof head, "system %#llx", static_cast<unsigned long long>(buf));
  EXPECT_EQ(out, "tpu_print_global_mem_data: " + std::string(head) + rows + "tpu_print_local_mem_data: local 0x0 of NPU 1" +
                     rows);
  const int npus = npu();
  const std::string e = failure([&] {
    const dim4 s{1, 1, 1, 1};
    tpu_print_local_mem_data(0, npus, &s, nullptr, DT_FP32);
  });
  EXPECT_HAS(e, "tpu_print_local_mem_data: start_idx = " + std::to_string(npus) + "; NPUs are 0 .. " +
                    std::to_string(npus - 1));
  EXPECT_HAS(failure([&] {
               const dim4 s{1, 1, 1, 1};
               tpu_print_local_mem_data(lmem, 0, &s, nullptr, DT_FP32);
             }),
             "tpu_print_local_mem_data: local_offset " );
  EXPECT_HAS(failure([&] { tpu_print_global_mem_data(buf, nullptr, nullptr, DT_FP32); }),
             "tpu_print_global_mem_data: shape is a null pointer");
}

INSTANTIATE_TEST_SUITE_P(Chips, DmaSystem, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
