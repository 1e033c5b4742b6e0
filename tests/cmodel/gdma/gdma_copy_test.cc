// gdma_copy_test.cc: plain GDMA moves (cpy, general_cpy, compact,
// system_cpy, set_C, channel_bcast) against the reference model of
// tests/support/gdma_model.h, on both chips, over random shapes, strides,
// dtypes and endpoints (local memory at any start NPU, global memory, L2 SRAM).
#include <cstring>
#include <vector>

#include "support/gdma_model.h"

using namespace gdma_model;

namespace {

constexpr int kIters = 30;

class GdmaCopy : public GdmaFixture {};

// The two host paths to local memory agree, inside and outside a run, and
// a GDMA result is visible through both.
struct PointerProbe {
  int npu[4];
  unsigned offset[4];
  void *by_npu[4];
  void *unified[4];
  void *base;
};

void probe_pointers(const void *arg) {
  auto *p = const_cast<PointerProbe *>(static_cast<const PointerProbe *>(arg));
  for (int i = 0; i < 4; ++i) {
    p->by_npu[i] = tpu_local_mem_addr(p->npu[i], p->offset[i]);
    p->unified[i] = tpu_local_mem_addr_unified(local_addr_t(p->npu[i]) * tpu_local_mem_size_per_npu() + p->offset[i]);
  }
  p->base = tpu_local_mem_addr_unified(0);
}

TEST_P(GdmaCopy, LocalPointersAgree) {
  test::Seeded seeded;
  h.begin(seeded);
  PointerProbe probe{};
  for (int i = 0; i < 4; ++i) {
    probe.npu[i] = h.uniform(0, h.chip.npu - 1);
    probe.offset[i] = unsigned(h.uniform(0, int(h.chip.lmem) - 1));
  }
  probe.npu[0] = h.chip.npu - 1;
  probe.offset[0] = h.chip.lmem - 1;
  ASSERT_EQ(cmodel_run(probe_pointers, &probe), 0) << cmodel_last_error();
  // Each NPU's memory is contiguous on the host; different NPUs' memories
  // are disjoint (not necessarily adjacent: the emulator pads between them).
  auto npu_start = [](int npu) { return static_cast<uint8_t *>(tpu_local_mem_addr(npu, 0)); };
  EXPECT_EQ(probe.base, npu_start(0));
  for (int i = 0; i < 4; ++i) {
    uint8_t *expected = npu_start(probe.npu[i]) + probe.offset[i];
    EXPECT_EQ(probe.by_npu[i], expected) << "NPU " << probe.npu[i] << " offset " << probe.offset[i];
    EXPECT_EQ(probe.unified[i], expected);
    EXPECT_EQ(tpu_local_mem_addr(probe.npu[i], probe.offset[i]), expected) << "outside a run";
  }
  for (int npu = 0; npu + 1 < h.chip.npu; ++npu)
    EXPECT_GE(npu_start(npu + 1), npu_start(npu) + h.chip.lmem) << "NPU " << npu << " overlaps the next";

  // A small S2L copy to NPU npu-1 row 0 and NPU 0 row 1 is visible through tpu_local_mem_addr.
  const int sz = 4;
  Tensor dst, src;
  ASSERT_TRUE(h.place(src, {1, 2, 1, 3}, sz, h.system_area(h.global), Layout::standard));
  dst.local = true;
  dst.shape = {1, 2, 1, 3};
  dst.addr = uint64_t(h.chip.npu - 1) * h.chip.lmem + 0x40;
  dst.stride = aligned_stride(h.chip, h.chip.npu - 1, dst.shape, sz);
  dst.pass_null = true;
  h.randomize(src, sz);
  ASSERT_TRUE(h.run(make_cmd(Op::cpy_S2L, dst, src, dst.shape, DT_FP32)));
  ref_copy(h, dst, src, sz);
  h.verify();
  uint32_t host[6];
  ASSERT_EQ(cmodel_global_read(host, src.addr, sizeof host), 0);
  EXPECT_EQ(std::memcmp(tpu_local_mem_addr(h.chip.npu - 1, 0x40), host, 12), 0) << "channel 0";
  // Channel 1 wraps to NPU 0, row 1: c stride = ALIGN(3, eu(fp32)) elements.
  const unsigned row1 = 0x40 + 4 * unsigned(align_up(3, h.chip.eu_bytes / 4));
  EXPECT_EQ(std::memcmp(tpu_local_mem_addr(0, row1), host + 3, 12), 0) << "channel 1";
}

// ---- cpy ----
TEST_P(GdmaCopy, CpyS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  run_move_cases(h, move_case(Op::cpy_S2L, true, false, nullptr, ref_copy), kIters);
}
TEST_P(GdmaCopy, CpyL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  run_move_cases(h, move_case(Op::cpy_L2S, false, true, nullptr, ref_copy), kIters);
}
TEST_P(GdmaCopy, CpyL2L) {
  test::Seeded seeded;
  h.begin(seeded);
  run_move_cases(h, move_case(Op::cpy_L2L, true, true, nullptr, ref_copy), kIters);
}
TEST_P(GdmaCopy, CpyS2S) {
  test::Seeded seeded;
  h.begin(seeded);
  run_move_cases(h, move_case(Op::cpy_S2S, false, false, nullptr, ref_copy), kIters);
}

// ---- general_cpy: same element count, different shapes ----
// A random shape holding the same number of elements as s.
dim4 refactor(Harness &h, const dim4 &s) {
  auto divisor = [&](int64_t v, int64_t cap) {
    std::vector<int> ds;
    for (int64_t d = 1; d <= v && d <= cap; ++d)
      if (v % d == 0) ds.push_back(int(d));
    return ds[h.uniform(0, int(ds.size()) - 1)];
  };
  int64_t rest = count(s);
  dim4 r;
  r.n = divisor(rest, 6);
  rest /= r.n;
  r.c = divisor(rest, 3 * h.chip.npu);
  rest /= r.c;
  r.h = divisor(rest, 16);
  r.w = int(rest / r.h);
  return r;
}

TEST_P(GdmaCopy, GeneralCpyS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  run_move_cases(h, move_case(Op::general_cpy_S2L, true, false, [&](const dim4 &s) { return refactor(h, s); }, ref_general),
                 kIters);
}
TEST_P(GdmaCopy, GeneralCpyL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  run_move_cases(h, move_case(Op::general_cpy_L2S, false, true, [&](const dim4 &s) { return refactor(h, s); }, ref_general),
                 kIters);
}

// ---- compact local layout ----
TEST_P(GdmaCopy, CompactS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  MoveCase mc = move_case(Op::compact_S2L, true, false, nullptr, ref_copy);
  mc.dst_layout = Layout::compact;
  mc.src_layout = Layout::standard;
  run_move_cases(h, mc, kIters);
}
TEST_P(GdmaCopy, CompactL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  MoveCase mc = move_case(Op::compact_L2S, false, true, nullptr, ref_copy);
  mc.dst_layout = Layout::standard;
  mc.src_layout = Layout::compact;
  run_move_cases(h, mc, kIters);
}

// ---- channel broadcast: dst(n,c,h,w) = src(n,0,h,w) ----
dim4 one_channel(const dim4 &s) { return {s.n, 1, s.h, s.w}; }

// The broadcast does not wrap past the last NPU (DMA-14).
MoveCase bcast_case(Op op, bool src_local) {
  MoveCase mc = move_case(op, true, src_local, one_channel, ref_channel_bcast);
  mc.dst_ok = [](const Harness &m, const Tensor &dst) {
    return int(dst.addr / m.chip.lmem) + dst.shape.c <= m.chip.npu;
  };
  return mc;
}

TEST_P(GdmaCopy, ChannelBcastS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  run_move_cases(h, bcast_case(Op::channel_bcast_S2L, false), kIters);
}
TEST_P(GdmaCopy, ChannelBcastL2L) {
  test::Seeded seeded;
  h.begin(seeded);
  run_move_cases(h, bcast_case(Op::channel_bcast_L2L, true), kIters);
}

// ---- system_cpy: a flat copy of count elements ----
TEST_P(GdmaCopy, SystemCpy) {
  test::Seeded seeded;
  h.begin(seeded);
  for (int it = 0; it < kIters; ++it) {
    const data_type_t dt = h.random_dtype();
    const int sz = dtype_size(dt);
    const int n = h.chance(0.3) ? h.uniform(1, 16) : h.uniform(1, 60000 / sz);
    Tensor dst, src;
    for (;;) {
      Area da, sa;
      h.pick_areas(false, false, da, sa);
      if (h.place(dst, {1, 1, 1, n}, sz, da, Layout::standard) && h.place(src, {1, 1, 1, n}, sz, sa, Layout::standard))
        break;
    }
    h.randomize(src, sz);
    Cmd cmd = make_cmd(Op::system_cpy, dst, src, dst.shape, dt);
    cmd.count = unsigned(n);
    SCOPED_TRACE("tpu_gdma_system_cpy case " + std::to_string(it) + " dtype " + dtype_label(dt) + " count " +
                 std::to_string(n) + "\n  dst " + h.where(dst) + "\n  src " + h.where(src));
    if (!h.run(cmd)) return;
    ref_copy(h, dst, src, sz);
    h.verify();
    if (HasFailure()) return;
  }
}

// ---- set_C: fill with the low dtype bits of C ----
void fill_cases(Harness &h, Op op, bool local) {
  for (int it = 0; it < kIters; ++it) {
    const data_type_t dt = h.random_dtype();
    const int sz = dtype_size(dt);
    Tensor dst;
    dim4 shape;
    for (;;) {
      shape = h.random_shape();
      const Area a = local ? h.local_area() : h.system_area(h.random_region());
      if (h.place(dst, shape, sz, a, h.random_dst_layout())) break;
    }
    Cmd cmd = make_cmd(op, dst, dst, shape, dt);
    // The member matching the dtype holds the value; the rest of the slot is garbage.
    const uint32_t value = uint32_t((*h.rng)());
    cmd.C.u32 = uint32_t((*h.rng)());
    if (sz == 1) cmd.C.u8 = uint8_t(value);
    else if (sz == 2) cmd.C.u16 = uint16_t(value);
    else cmd.C.u32 = value;
    SCOPED_TRACE(std::string(op_name(op)) + " case " + std::to_string(it) + " dtype " + dtype_label(dt) + " C " +
                 std::to_string(value) + "\n  dst " + h.where(dst));
    if (!h.run(cmd)) return;
    ref_fill(h, dst, value, sz);
    h.verify();
    if (::testing::Test::HasFailure()) return;
  }
}

TEST_P(GdmaCopy, SetCSystem) {
  test::Seeded seeded;
  h.begin(seeded);
  fill_cases(h, Op::set_C_system, false);
}
TEST_P(GdmaCopy, SetCLocal) {
  test::Seeded seeded;
  h.begin(seeded);
  fill_cases(h, Op::set_C_local, true);
}

// Fixed corner cases: a zero-stride broadcast source, start NPU NPU_NUM-1,
// h*w = 1, channels = NPU_NUM + 1.
TEST_P(GdmaCopy, BroadcastSourceCorners) {
  test::Seeded seeded;
  h.begin(seeded);
  const int npu = h.chip.npu;
  struct Case {
    dim4 shape, src_stride;
  } cases[] = {
      {{2, npu + 1, 3, 5}, {0, 5, 0, 1}},   // stride.n = 0 and stride.h = 0
      {{3, 7, 2, 9}, {9, 0, 0, 1}},         // every channel and row the same
      {{1, npu, 1, 1}, {0, 1, 0, 0}},       // one element per channel
      {{2, 2 * npu + 3, 4, 3}, {0, 0, 0, 0}},  // a single source element
  };
  for (const Case &c : cases) {
    const data_type_t dt = DT_FP16;
    const int sz = 2;
    Tensor dst, src;
    ASSERT_TRUE(h.place(src, c.shape, sz, h.system_area(h.l2), Layout::given, &c.src_stride));
    dst.local = true;
    dst.shape = c.shape;
    dst.addr = uint64_t(npu - 1) * h.chip.lmem + 0x100;
    dst.stride = aligned_stride(h.chip, npu - 1, c.shape, sz);
    dst.pass_null = true;
    h.randomize(src, sz);
    SCOPED_TRACE("dst " + h.where(dst) + "\n  src " + h.where(src));
    ASSERT_TRUE(h.run(make_cmd(Op::cpy_S2L, dst, src, c.shape, dt)));
    ref_copy(h, dst, src, sz);
    h.verify();
  }
}

GDMA_INSTANTIATE_CHIPS(GdmaCopy);

}  // namespace
