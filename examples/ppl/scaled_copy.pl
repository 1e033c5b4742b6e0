// scaled_copy.pl: out = 2 * x over a vector of `length` fp32 values viewed
// as [1, LANE_NUM, 1, length / LANE_NUM] blocks of `block` columns. Its
// local memory grows with `block`: the host tries a large block first and
// halves it while the kernel answers PplLocalAddrAssignErr. The pipelined
// version double-buffers both tensors and so runs out at half the block.
#include "ppl.h"
using namespace ppl;

template <bool Pipelined>
void scaled_copy(fp32 *out, fp32 *x, int length, int block) {
  const int columns = length / LANE_NUM;
  dim4 shape = {1, LANE_NUM, 1, columns};
  gtensor<fp32> g_x(shape, GLOBAL, x);
  gtensor<fp32> g_out(shape, GLOBAL, out);
  for (int w = 0; w < columns; w += block) {
    if (Pipelined) enable_pipeline();
    dim4 real = {1, LANE_NUM, 1, min(block, columns - w)};
    auto in = make_tensor<fp32>({1, LANE_NUM, 1, block}, real);
    dma::load(in, g_x.sub_view(real, {0, 0, 0, w}));
    auto doubled = make_tensor<fp32>({1, LANE_NUM, 1, block}, real);
    tiu::fmul(doubled, in, 2.0f);
    dma::store(g_out.sub_view(real, {0, 0, 0, w}), doubled);
  }
}

__KERNEL__ void scaled_copy_serial(fp32 *out, fp32 *x, int length, const int block) {
  scaled_copy<false>(out, x, length, block);
}

__KERNEL__ void scaled_copy_pipelined(fp32 *out, fp32 *x, int length, const int block) {
  scaled_copy<true>(out, x, length, block);
}
