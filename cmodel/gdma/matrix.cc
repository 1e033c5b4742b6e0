// matrix.cc: GDMA moves between a row-major system matrix and the local
// matrix layout (rows, DIV_UP(cols, cols_per_channel), 1, cols_per_channel).
#include <algorithm>

#include "cmodel/dtype.h"
#include "cmodel/error.h"
#include "cmodel/numeric/integer.h"
#include "mover.h"

namespace cmodel::gdma {
namespace {

// The matrix descriptor's row and column counts are 16-bit fields; a
// column count past them is refused even when DIV_UP(cols, w) channels
// would fit (DMA-7).
void check_matrix(const MatrixMove &m) {
  if (m.rows < 1 || m.cols < 1 || m.cols_per_channel < 1)
    fail(Rule::DMA_7, "rows = {}, cols = {}, cols_per_channel = {}; each must be at least 1", m.rows, m.cols,
         m.cols_per_channel);
  if (m.rows > 65535 || m.cols > 65535)
    fail(Rule::DMA_7, "rows = {}, cols = {}; a matrix move allows at most 65535 of each", m.rows, m.cols);
  if (m.row_stride < 0) fail(ErrorKind::illegal_command, "row_stride = {}; it must not be negative", m.row_stride);
}

}  // namespace

void matrix(Context &ctx, const char *api, const MatrixMove &m, data_type_t dtype) {
  check_matrix(m);
  const int channels = numeric::div_up(m.cols, m.cols_per_channel);
  const TensorRef local = operand(ctx, m.to_local ? "dst" : "src", gdma::local(m.local_addr),
                                  {m.rows, channels, 1, m.cols_per_channel}, dtype);
  // The system matrix: [rows, cols], or [cols, rows] when transposed.
  const int sys_rows = m.transpose ? m.cols : m.rows;
  const int sys_cols = m.transpose ? m.rows : m.cols;
  const uint64_t sys_elements = uint64_t(sys_rows - 1) * m.row_stride + sys_cols;
  check_not_static(ctx, m.to_local ? "src" : "dst", m.system_addr);
  uint8_t *sys = nullptr;
  try {
    sys = ctx.memory.system(m.system_addr, sys_elements * local.esize);
  } catch (const Error &e) {
    throw Error(e.kind(), fmt::format("{}: {}", m.to_local ? "src" : "dst", e.what()), e.rule());
  }
  const int esize = local.esize;
  auto sys_at = [&](int64_t row, int64_t col) { return sys + (row * m.row_stride + col) * esize; };

  for (int i = 0; i < m.rows; ++i) {
    for (int c = 0; c < channels; ++c) {
      const int first = c * m.cols_per_channel;
      const int count = std::min(m.cols_per_channel, m.cols - first);
      uint8_t *lm = local.channel(i, c);
      // Transposed: consecutive local columns are system rows apart.
      uint8_t *sm = m.transpose ? sys_at(first, i) : sys_at(i, first);
      const int64_t sys_step = m.transpose ? m.row_stride : 1;
      if (m.to_local)
        move_run(lm, 1, sm, sys_step, count, esize);
      else
        move_run(sm, sys_step, lm, 1, count, esize);
    }
  }
  for (int r = 0; r < sys_rows; ++r)
    ctx.hazards.note_system(m.to_local ? "src" : "dst", m.system_addr + uint64_t(r) * m.row_stride * esize,
                            uint64_t(sys_cols) * esize, !m.to_local);
  book(ctx, api, m.to_local ? Direction::S2L : Direction::L2S, uint64_t(m.rows) * m.cols * esize,
       m.to_local ? &local : nullptr, m.to_local ? nullptr : &local);
}

}  // namespace cmodel::gdma
