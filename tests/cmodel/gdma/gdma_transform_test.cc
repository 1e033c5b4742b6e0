// gdma_transform_test.cc: GDMA moves that permute axes (nc_trans, cw_trans,
// compact_nc_trans) or reverse one (reverse, all four axes), against the
// reference model of tests/support/gdma_model.h, on both chips, over random
// shapes, strides, dtypes and endpoints.
#include "support/gdma_model.h"

using namespace gdma_model;

namespace {

constexpr int kIters = 24;

class GdmaTransform : public GdmaFixture {};

// The source of an N <-> C transpose has shape (C, N, H, W); of a C <-> W
// transpose (N, W, H, C).
dim4 nc_swapped(const dim4 &s) { return {s.c, s.n, s.h, s.w}; }
dim4 cw_swapped(const dim4 &s) { return {s.n, s.w, s.h, s.c}; }

void nc_cases(Harness &h, Op op, bool dst_local, bool src_local) {
  MoveCase mc = move_case(op, dst_local, src_local, nc_swapped, ref_nc_trans);
  mc.big_n = true;
  run_move_cases(h, mc, kIters);
}
void cw_cases(Harness &h, Op op, bool dst_local, bool src_local) {
  run_move_cases(h, move_case(op, dst_local, src_local, cw_swapped, ref_cw_trans), kIters);
}

// ---- cpy_nc_trans: dst(n,c,h,w) = src(c,n,h,w) ----
TEST_P(GdmaTransform, NcTransS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  nc_cases(h, Op::nc_trans_S2L, true, false);
}
TEST_P(GdmaTransform, NcTransL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  nc_cases(h, Op::nc_trans_L2S, false, true);
}
TEST_P(GdmaTransform, NcTransL2L) {
  test::Seeded seeded;
  h.begin(seeded);
  nc_cases(h, Op::nc_trans_L2L, true, true);
}
TEST_P(GdmaTransform, NcTransS2S) {
  test::Seeded seeded;
  h.begin(seeded);
  nc_cases(h, Op::nc_trans_S2S, false, false);
}

// ---- cpy_cw_trans: dst(n,c,h,w) = src(n,w,h,c) ----
TEST_P(GdmaTransform, CwTransS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  cw_cases(h, Op::cw_trans_S2L, true, false);
}
TEST_P(GdmaTransform, CwTransL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  cw_cases(h, Op::cw_trans_L2S, false, true);
}
TEST_P(GdmaTransform, CwTransL2L) {
  test::Seeded seeded;
  h.begin(seeded);
  cw_cases(h, Op::cw_trans_L2L, true, true);
}
TEST_P(GdmaTransform, CwTransS2S) {
  test::Seeded seeded;
  h.begin(seeded);
  cw_cases(h, Op::cw_trans_S2S, false, false);
}

// ---- compact_nc_trans: compact local layout, continuous system tensor, shape given for dst ----
TEST_P(GdmaTransform, CompactNcTransS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  MoveCase mc = move_case(Op::compact_nc_trans_S2L, true, false, nc_swapped, ref_nc_trans);
  mc.big_n = true;
  mc.dst_layout = Layout::compact;
  mc.src_layout = Layout::standard;
  run_move_cases(h, mc, kIters);
}
TEST_P(GdmaTransform, CompactNcTransL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  MoveCase mc = move_case(Op::compact_nc_trans_L2S, false, true, nc_swapped, ref_nc_trans);
  mc.big_n = true;
  mc.dst_layout = Layout::standard;
  mc.src_layout = Layout::compact;
  run_move_cases(h, mc, kIters);
}

// ---- reverse along each axis ----
// From local memory the GDMA reverses along C only (DMA-21): the other
// axes are refused.
void reverse_cases(Harness &h, Op op, bool dst_local, bool src_local) {
  for (int axis = 0; axis < 4; ++axis) {
    if (src_local && axis != 1) {
      Tensor dst, src;
      const dim4 shape = {1, 3, 2, 4};
      dst.local = dst_local;
      src.local = true;
      dst.shape = src.shape = shape;
      dst.addr = dst_local ? 0x8000 : h.system_area(h.global).lo;
      src.addr = 0;
      dst.pass_null = src.pass_null = true;
      Cmd cmd = make_cmd(op, dst, src, shape, DT_FP32);
      cmd.axis = axis;
      Batch b;
      b.add(cmd);
      EXPECT_NE(cmodel_run(batch_kernel, &b), 0) << "axis " << axis;
      EXPECT_NE(std::string(cmodel_last_error()).find("[DMA-21]"), std::string::npos) << cmodel_last_error();
      continue;
    }
    MoveCase mc = move_case(op, dst_local, src_local, nullptr,
                            [axis](Harness &m, const Tensor &d, const Tensor &s, int sz) { ref_reverse(m, d, s, axis, sz); });
    mc.axis = axis;
    mc.big_n = axis == 0;
    run_move_cases(h, mc, kIters / 2);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST_P(GdmaTransform, ReverseS2S) {
  test::Seeded seeded;
  h.begin(seeded);
  reverse_cases(h, Op::reverse_S2S, false, false);
}
TEST_P(GdmaTransform, ReverseS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  reverse_cases(h, Op::reverse_S2L, true, false);
}
TEST_P(GdmaTransform, ReverseL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  reverse_cases(h, Op::reverse_L2S, false, true);
}
TEST_P(GdmaTransform, ReverseL2L) {
  test::Seeded seeded;
  h.begin(seeded);
  reverse_cases(h, Op::reverse_L2L, true, true);
}

GDMA_INSTANTIATE_CHIPS(GdmaTransform);

}  // namespace
