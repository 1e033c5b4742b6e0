// int_average.pl: integer arithmetic on int8 vectors laid over the lanes:
// the rounded mean (a + b) >> 1 (ties up, saturated to int8), and
// 3 * a - b widened to int16.
#include "ppl.h"
using namespace ppl;

__KERNEL__ void int_average(int8 *mean, int16 *combined, int8 *a, int8 *b, int columns) {
  dim4 shape = {1, LANE_NUM, 1, columns};
  gtensor<int8> g_a(shape, GLOBAL, a);
  gtensor<int8> g_b(shape, GLOBAL, b);
  gtensor<int8> g_mean(shape, GLOBAL, mean);
  gtensor<int16> g_combined(shape, GLOBAL, combined);
  auto ta = make_tensor<int8>(shape, shape);
  auto tb = make_tensor<int8>(shape, shape);
  dma::load(ta, g_a);
  dma::load(tb, g_b);
  auto average = make_tensor<int8>(shape, shape);
  tiu::add(average, ta, tb, -1, RM_HALF_UP, true);
  dma::store(g_mean, average);
  auto tripled = make_tensor<int16>(shape, shape);
  tiu::mul(tripled, ta, 3);
  auto difference = make_tensor<int16>(shape, shape);
  tiu::sub(difference, tripled, tb);
  dma::store(g_combined, difference);
}
