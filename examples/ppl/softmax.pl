// softmax.pl: the softmax of every row of a [rows, W] matrix (fp32 or
// fp16), rows on the channels in blocks of BR: the row maximum subtracted
// (W broadcast), e^x by exp_no_overflow, divided by the row sum. fp16
// rows are computed in fp32.
#include "ppl.h"
#include "ppl_wrapper_func.h"
using namespace ppl;

template <typename T>
void softmax_rows(T *out, T *x, int rows, int W, int BR) {
  dim4 shape = {1, rows, 1, W};
  gtensor<T> g_x(shape, GLOBAL, x);
  gtensor<T> g_out(shape, GLOBAL, out);
  for (int r = 0; r < rows; r += BR) {
    enable_pipeline();
    const int rr = min(BR, rows - r);
    dim4 block = {1, BR, 1, W};
    dim4 real = {1, rr, 1, W};
    dim4 one = {1, rr, 1, 1};
    auto in = make_tensor<T>(block, real);
    dma::load(in, g_x.sub_view(real, {0, r, 0, 0}));
    auto wide = make_tensor<fp32>(block, real);
    if constexpr (std::is_same_v<T, fp32>) {
      tiu::move(wide, in);
    } else {
      tiu::cast(wide, in);
    }
    auto largest = make_tensor<fp32>({1, BR, 1, 1}, one);
    tiu::reduce(largest, wide, ALL_REDUCE_MAX);
    auto shifted = make_tensor<fp32>(block, real);
    tiu::fsub(shifted, wide, largest);
    auto e = make_tensor<fp32>(block, real);
    exp_no_overflow(e, shifted, &block, &real);
    auto sum = make_tensor<fp32>({1, BR, 1, 1}, one);
    tiu::reduce(sum, e, ALL_REDUCE_SUM);
    auto result = make_tensor<fp32>(block, real);
    tiu::fdiv(result, e, sum);
    if constexpr (std::is_same_v<T, fp32>) {
      dma::store(g_out.sub_view(real, {0, r, 0, 0}), result);
    } else {
      auto narrow = make_tensor<T>(block, real);
      tiu::cast(narrow, result);
      dma::store(g_out.sub_view(real, {0, r, 0, 0}), narrow);
    }
  }
}

__KERNEL__ void softmax_f32(fp32 *out, fp32 *x, int rows, int W, const int BR) { softmax_rows(out, x, rows, W, BR); }

__KERNEL__ void softmax_f16(fp16 *out, fp16 *x, int rows, int W, const int BR) { softmax_rows(out, x, rows, W, BR); }
