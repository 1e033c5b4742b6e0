// multicore_sum.pl: the rows of x [1, C, 1, W] split over the cores
// (bm1688 has two, bm1684x one): each core sums its rows into `sums` and
// their total into partials[core]; after sync(), core 0 adds the partials
// into `total`. Without the sync (synchronised = false) core 0 reads a
// partial that core 1 writes with nothing ordering the two: a race.
#include "ppl.h"
using namespace ppl;

// This core's share of C rows: rows [first, first + rows), at most per_core.
struct row_share {
  int cores, core, per_core, first, rows;
};
row_share share_rows(int C) {
  set_core_num(2);
  const int cores = get_core_num();
  const int core = get_core_index();
  const int per_core = div_up(C, cores);
  return {cores, core, per_core, core * per_core, min(per_core, C - core * per_core)};
}

__KERNEL__ void row_sums_multicore(fp32 *sums, fp32 *total, fp32 *partials, fp32 *x, int C, int W,
                                   bool synchronised) {
  const auto [cores, core, per_core, first, rows] = share_rows(C);
  if (rows > 0) {
    dim4 block = {1, per_core, 1, W};
    dim4 real = {1, rows, 1, W};
    dim4 column = {1, rows, 1, 1};
    dim4 row = {1, 1, 1, rows};
    dim4 one = {1, 1, 1, 1};
    auto a = make_tensor<fp32>(block, real);
    dma::load(a, gtensor<fp32>({1, C, 1, W}, GLOBAL, x).sub_view(real, {0, first, 0, 0}));
    auto s = make_tensor<fp32>({1, per_core, 1, 1}, column);
    tiu::reduce(s, a, ALL_REDUCE_SUM);
    dma::store(gtensor<fp32>({1, C, 1, 1}, GLOBAL, sums).sub_view(column, {0, first, 0, 0}), s);
    auto t = make_tensor<fp32>({1, 1, 1, per_core}, row);
    tiu::transpose_cw(t, s);
    auto p = make_tensor<fp32>(one, one);
    tiu::reduce(p, t, ALL_REDUCE_SUM);
    dma::store(gtensor<fp32>({1, cores, 1, 1}, GLOBAL, partials).sub_view(one, {0, core, 0, 0}), p);
  }
  if (synchronised) sync();
  if (core == 0) {
    dim4 all = {1, 1, 1, cores};
    dim4 one = {1, 1, 1, 1};
    auto p = make_tensor<fp32>(all, all);
    dma::load(p, gtensor<fp32>(all, GLOBAL, partials));
    auto t = make_tensor<fp32>(one, one);
    tiu::reduce(t, p, ALL_REDUCE_SUM);
    dma::store(gtensor<fp32>(one, GLOBAL, total), t);
  }
}

// column_sums [1, 1, 1, W] = the sums over C of x [1, C, 1, W]: each core
// adds the column sums of its rows into one L2 tensor with dma::reduce
// (the cores' reductions combine in any order); core 0 zeroes it first and
// copies it out last, a sync() between each phase.
__KERNEL__ void column_sums_multicore(fp32 *column_sums, fp32 *x, int C, int W) {
  const auto [cores, core, per_core, first, rows] = share_rows(C);
  (void)cores;
  dim4 line = {1, 1, 1, W};
  gtensor<fp32> acc(line, L2);
  if (core == 0) dma::zero(acc);
  sync();
  if (rows > 0) {
    dim4 real = {1, rows, 1, W};
    auto a = make_tensor<fp32>({1, per_core, 1, W}, real);
    dma::load(a, gtensor<fp32>({1, C, 1, W}, GLOBAL, x).sub_view(real, {0, first, 0, 0}));
    auto t = make_tensor<fp32>({1, W, 1, per_core}, {1, W, 1, rows});
    tiu::transpose_cw(t, a);
    dim4 column = {1, W, 1, 1};
    auto s = make_tensor<fp32>(column, column);
    tiu::reduce(s, t, ALL_REDUCE_SUM);
    auto partial = make_tensor<fp32>(line, line);
    tiu::transpose_wc(partial, s);
    dma::reduce(acc, partial, ALL_REDUCE_PSUM_WR, ALL_REDUCE_ADD);
  }
  sync();
  if (core == 0) dma::move(gtensor<fp32>(line, GLOBAL, column_sums), acc);
}

// Core 0 doubles x [1, 1, 1, W] into `middle` and sends a GDMA message;
// core 1 waits for it, then adds 1 to `middle` into `out`. The message
// orders core 1's read after core 0's write (without it, a race). Needs
// two cores: on one, only core 0's half runs and `out` stays as it was.
__KERNEL__ void message_handoff(fp32 *out, fp32 *middle, fp32 *x, int W) {
  set_core_num(2);
  dim4 row = {1, 1, 1, W};
  if (get_core_index() == 0) {
    auto a = make_tensor<fp32>(row, row);
    dma::load(a, gtensor<fp32>(row, GLOBAL, x));
    auto doubled = make_tensor<fp32>(row, row);
    tiu::fmul(doubled, a, 2.0f);
    dma::store(gtensor<fp32>(row, GLOBAL, middle), doubled);
    if (get_core_num() > 1) dma::send_msg(3, 1);
  } else {
    dma::wait_msg(3, 1);
    auto m = make_tensor<fp32>(row, row);
    dma::load(m, gtensor<fp32>(row, GLOBAL, middle));
    auto plus = make_tensor<fp32>(row, row);
    tiu::fadd(plus, m, 1.0f);
    dma::store(gtensor<fp32>(row, GLOBAL, out), plus);
  }
}
