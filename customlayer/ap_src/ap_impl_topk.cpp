// ap_impl_topk.cpp: the top-k AP op (include/custom_ap/ap_impl_topk.h says
// what it computes and how it treats the edge cases).
#include "ap_impl_topk.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>

#include "cpu_layer_factory.h"
#include "customap_common.h"

namespace bmcpu {
namespace {

std::string shape_text(const vector<int> &shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The axis as an index into `shape`, or an exception saying why not.
int checked_axis(int axis, const vector<int> &shape) {
  const int rank = int(shape.size());
  const int index = axis == -1 ? rank - 1 : axis;
  if (axis < -1 || index < 0 || index >= rank)
    throw std::invalid_argument("topk: axis " + std::to_string(axis) + " does not fit input 0 of shape " +
                                shape_text(shape) + " (axes 0.." + std::to_string(rank - 1) + ", or -1)");
  return index;
}

void check_k(int k, int n, int axis) {
  if (k < 0) throw std::invalid_argument("topk: k = " + std::to_string(k) + " is negative");
  if (k > n)
    throw std::invalid_argument("topk: k = " + std::to_string(k) + " is larger than n = " + std::to_string(n) +
                                ", the length of axis " + std::to_string(axis) + " of input 0");
}

// a ranks before b: the larger value, NaN above every number, ties (and
// NaN against NaN) by the lower index.
bool ranks_before(const float *column, int stride, int a, int b) {
  const float x = column[std::ptrdiff_t(a) * stride], y = column[std::ptrdiff_t(b) * stride];
  const bool x_nan = std::isnan(x), y_nan = std::isnan(y);
  if (x_nan || y_nan) return x_nan && !y_nan ? true : (x_nan == y_nan && a < b);
  if (x != y) return x > y;
  return a < b;
}

}  // namespace

int cpu_topklayer::get_param(void *param, int param_size) {
  const custom_param_t *p = static_cast<const custom_param_t *>(param);
  const int count = param_size / int(sizeof(custom_param_t));
  axis_ = count > 1 ? p[1].int_t : 0;
  K_ = count > 2 ? p[2].int_t : 0;
  return 0;
}

int cpu_topklayer::shepe_infer(void *param, int param_size, const vector<vector<int>> &input_shapes,
                               vector<vector<int>> &output_shapes) {
  get_param(param, param_size);
  if (input_shapes.empty()) throw std::invalid_argument("topk: no input");
  const int axis = checked_axis(axis_, input_shapes[0]);
  check_k(K_, input_shapes[0][axis], axis);
  vector<int> shape = input_shapes[0];
  shape[axis] = K_;
  output_shapes.clear();
  output_shapes.push_back(shape);  // values
  output_shapes.push_back(shape);  // indices
  return 0;
}

int cpu_topklayer::dtype_infer(const void *, size_t, const vector<int> &, vector<int> &output_dtypes) {
  output_dtypes = {CPU_DTYPE_FP32, CPU_DTYPE_INT32};
  return 0;
}

int cpu_topklayer::forward(void *, int) {
  if (input_tensors_.empty() || output_tensors_.empty())
    throw std::invalid_argument("topk: needs an input and an output");
  const vector<int> &shape = input_shapes_[0];
  const int axis = checked_axis(axis_, shape);
  const int n = shape[axis];
  int k = K_;
  // The two-input form: k from the first element of input 1, an int32 tensor.
  if (input_tensors_.size() == 2 && bmcpu_shape_count(input_shapes_[1]) > 0)
    k = *reinterpret_cast<const std::int32_t *>(input_tensors_[1]);
  check_k(k, n, axis);
  int outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < int(shape.size()); ++d) inner *= shape[d];

  float *values = output_tensors_[0];
  std::int32_t *indices = output_tensors_.size() > 1 ? reinterpret_cast<std::int32_t *>(output_tensors_[1]) : nullptr;
  vector<int> order(std::size_t(n), 0);
  for (int o = 0; o < outer; ++o) {
    for (int i = 0; i < inner; ++i) {
      const float *column = input_tensors_[0] + std::ptrdiff_t(o) * n * inner + i;
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](int a, int b) { return ranks_before(column, inner, a, b); });
      for (int j = 0; j < k; ++j) {
        const std::ptrdiff_t at = (std::ptrdiff_t(o) * k + j) * inner + i;
        values[at] = column[std::ptrdiff_t(order[std::size_t(j)]) * inner];
        if (indices) indices[at] = order[std::size_t(j)];
      }
    }
  }
  for (vector<int> &output_shape : *output_shapes_)
    if (axis < int(output_shape.size())) output_shape[axis] = k;
  return 0;
}

REGISTER_APLAYER_CLASS(AP_CUSTOM_TOPK, ap_topk)

}  // namespace bmcpu
