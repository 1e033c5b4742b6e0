// gdma_matrix_test.cc: GDMA matrix and vector layouts (matrix_S2L/L2S,
// matrix_trans_S2L/L2S, vector_S2L/L2S) against the reference model of
// tests/support/gdma_model.h, on both chips.
//
// Local matrix layout (spec §3.3): a [rows, cols] matrix with cpc columns per
// channel is the aligned tensor (rows, DIV_UP(cols, cpc), 1, cpc); element
// (r, j) is at n = r, c = j / cpc, w = j % cpc. The padding of the last
// channel (j >= cols) is neither written nor read.
#include "support/gdma_model.h"

using namespace gdma_model;

namespace {

constexpr int kIters = 30;

class GdmaMatrix : public GdmaFixture {};

enum class Kind { matrix, matrix_trans, vector };

struct MatrixCase {
  int rows, cols, cpc, row_stride;  // API arguments (vector: rows = 1, cols = len)
};

// Local element holding element (r, j) of a local [*, *] matrix.
uint8_t *lm(Harness &h, const Tensor &l, int r, int j, int cpc, int sz) { return h.at(l, r, j / cpc, 0, j % cpc, sz); }

void matrix_cases(Harness &h, Kind kind, bool to_local) {
  for (int it = 0; it < kIters; ++it) {
    const data_type_t dt = h.random_dtype();
    const int sz = dtype_size(dt);
    MatrixCase m{};
    Tensor loc, sys;
    for (int tries = 0;; ++tries) {
      ASSERT_LT(tries, 10000) << "test bug: cannot place the tensors";
      m.rows = kind == Kind::vector ? 1 : h.chance(0.2) ? h.uniform(1, 3) : h.uniform(1, 24);
      m.cols = h.chance(0.2) ? h.uniform(1, 8) : h.uniform(1, kind == Kind::vector ? 2000 : 300);
      m.cpc = h.chance(0.2) ? h.uniform(1, 4) : h.uniform(1, 96);
      m.row_stride = kind == Kind::vector ? m.cols : 0;
      // Local matrix [lr, lc] split by cpc; system matrix [sr, sc] with row_stride.
      int lr = m.rows, lc = m.cols, sr = m.rows, sc = m.cols;
      if (kind == Kind::matrix_trans) {
        if (to_local) {  // local holds src^T: [src_cols, src_rows]
          lr = m.cols;
          lc = m.rows;
        } else {  // local [src_rows, src_cols]; system [src_cols, src_rows]
          sr = m.cols;
          sc = m.rows;
        }
      }
      if (kind != Kind::vector) m.row_stride = sc + (h.chance(0.4) ? 0 : h.uniform(1, 9));
      const dim4 lshape{lr, int(div_up(lc, m.cpc)), 1, m.cpc};
      const dim4 sstride{0, 0, m.row_stride, 1};
      if (h.place(loc, lshape, sz, h.local_area(), Layout::standard) &&
          h.place(sys, {1, 1, sr, sc}, sz, h.system_area(h.random_region()), Layout::given, &sstride))
        break;
    }
    h.randomize(to_local ? sys : loc, sz);

    Cmd cmd;
    cmd.op = kind == Kind::matrix         ? (to_local ? Op::matrix_S2L : Op::matrix_L2S)
             : kind == Kind::matrix_trans ? (to_local ? Op::matrix_trans_S2L : Op::matrix_trans_L2S)
                                          : (to_local ? Op::vector_S2L : Op::vector_L2S);
    cmd.dst = to_local ? loc.addr : sys.addr;
    cmd.src = to_local ? sys.addr : loc.addr;
    cmd.rows = m.rows;
    cmd.cols = m.cols;
    cmd.cpc = m.cpc;
    cmd.row_stride = m.row_stride;
    cmd.dtype = dt;
    SCOPED_TRACE(std::string(op_name(cmd.op)) + " case " + std::to_string(it) + " dtype " + dtype_label(dt) +
                 " rows " + std::to_string(m.rows) + " cols " + std::to_string(m.cols) + " cpc " +
                 std::to_string(m.cpc) + " row_stride " + std::to_string(m.row_stride) + "\n  local " +
                 h.where(loc) + "\n  system " + h.where(sys));
    if (!h.run(cmd)) return;

    // Reference: pairs (local element, system element).
    for (int i = 0; i < m.rows; ++i) {
      for (int k = 0; k < m.cols; ++k) {
        uint8_t *l, *s;
        if (kind == Kind::matrix_trans && to_local) {
          l = lm(h, loc, k, i, m.cpc, sz);  // local (k, i) = src (i, k)
          s = h.at(sys, 0, 0, i, k, sz);
        } else if (kind == Kind::matrix_trans) {
          l = lm(h, loc, i, k, m.cpc, sz);  // dst (k, i) = local (i, k)
          s = h.at(sys, 0, 0, k, i, sz);
        } else {
          l = lm(h, loc, i, k, m.cpc, sz);
          s = h.at(sys, 0, 0, i, k, sz);
        }
        if (to_local) std::memcpy(l, s, sz);
        else std::memcpy(s, l, sz);
      }
    }
    h.verify();
    if (::testing::Test::HasFailure()) return;
  }
}

TEST_P(GdmaMatrix, MatrixS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  matrix_cases(h, Kind::matrix, true);
}
TEST_P(GdmaMatrix, MatrixL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  matrix_cases(h, Kind::matrix, false);
}
TEST_P(GdmaMatrix, MatrixTransS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  matrix_cases(h, Kind::matrix_trans, true);
}
TEST_P(GdmaMatrix, MatrixTransL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  matrix_cases(h, Kind::matrix_trans, false);
}
TEST_P(GdmaMatrix, VectorS2L) {
  test::Seeded seeded;
  h.begin(seeded);
  matrix_cases(h, Kind::vector, true);
}
TEST_P(GdmaMatrix, VectorL2S) {
  test::Seeded seeded;
  h.begin(seeded);
  matrix_cases(h, Kind::vector, false);
}

// A worked example (spec §3.3/§3.4 style): a 3 x 70 fp32 matrix with 16
// columns per channel, loaded at NPU NPU_NUM-2: 5 channels, the last three of
// which wrap to NPUs 0..2 row 1; c stride ALIGN(16, eu(fp32)).
TEST_P(GdmaMatrix, MatrixS2LWorkedExample) {
  test::Seeded seeded;
  h.begin(seeded);
  const int npu = h.chip.npu, eu = h.chip.eu_bytes / 4;
  const uint64_t src = h.global.addr + 512;
  std::vector<float> host(3 * 72);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i);
  ASSERT_EQ(cmodel_global_write(src, host.data(), host.size() * 4), 0);
  std::memcpy(h.sys(src, host.size() * 4), host.data(), host.size() * 4);
  h.forget_dirty();
  Cmd cmd;
  cmd.op = Op::matrix_S2L;
  cmd.dst = uint64_t(npu - 2) * h.chip.lmem + 0x200;
  cmd.src = src;
  cmd.rows = 3;
  cmd.cols = 70;
  cmd.cpc = 16;
  cmd.row_stride = 72;
  cmd.dtype = DT_FP32;
  ASSERT_TRUE(h.run(cmd));
  const int cstride = int(align_up(16, eu));
  const int rows_per_npu = int(div_up(npu - 2 + 5, npu));
  for (int r = 0; r < 3; ++r) {
    for (int j = 0; j < 70; ++j) {
      const int ch = j / 16, npu_idx = (npu - 2 + ch) % npu, row = (npu - 2 + ch) / npu;
      const unsigned off = 0x200 + 4 * unsigned(r * cstride * rows_per_npu + row * cstride + j % 16);
      float got;
      std::memcpy(&got, tpu_local_mem_addr(npu_idx, off), 4);
      ASSERT_EQ(got, float(r * 72 + j)) << "row " << r << " col " << j;
      std::memcpy(h.local.data() + size_t(npu_idx) * h.chip.lmem + off, &got, 4);
    }
  }
  h.verify();  // nothing else changed
}

GDMA_INSTANTIATE_CHIPS(GdmaMatrix);

}  // namespace
