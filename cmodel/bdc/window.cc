#include "window.h"

#include <string>

namespace cmodel::bdc {

void require_each_in(Rule rule, const char *what, const char *names, std::initializer_list<int> values, int lo, int hi) {
  for (int v : values)
    if (v < lo || v > hi) {
      std::string list;
      for (int u : values) list += (list.empty() ? "" : ", ") + std::to_string(u);
      fail(rule, "{} ({}) = ({}): each must be in [{}, {}]", what, names, list, lo, hi);
    }
}

void require_shape_in(Rule rule, const char *role, const dim4 &shape, int limit) {
  const int dims[] = {shape.n, shape.c, shape.h, shape.w};
  const char *names = "nchw";
  for (int i = 0; i < 4; ++i)
    if (dims[i] < 1 || dims[i] > limit)
      fail(rule, "{} shape {}: {} = {}; every dim must be in [1, {}]", role, describe(shape), names[i], dims[i], limit);
}

int window_output_extent(Rule rule, char axis, int in, int insert, int pad_lo, int pad_hi, int kernel, int stride,
                         int dilation, int limit) {
  const int64_t span = int64_t(dilation) * (kernel - 1) + 1;  // the dilated kernel
  const int64_t inserted = int64_t(in - 1) * (int64_t(insert) + 1) + 1;
  const int64_t padded = inserted + pad_lo + pad_hi;
  const int64_t out = padded >= span ? (padded - span) / stride + 1 : 0;
  if (out >= 1 && out <= limit) return int(out);
  const std::string extent = insert == 0 ? std::to_string(in)
                                          : fmt::format("({} - 1) x ({} + 1) + 1", in, insert);
  fail(rule,
       "the output would have o{} = {}: the padded input {} = {} + {} + {} = {} and the dilated kernel spans {} "
       "with stride {}; o{} must be in [1, {}]",
       axis, out, axis, extent, pad_lo, pad_hi, padded, span, stride, axis, limit);
}

}  // namespace cmodel::bdc
