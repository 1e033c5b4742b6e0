// elementwise_view.cc: the element-wise kernels' view and tiles
// (elementwise_view.h).
#include "expression/elementwise_view.h"

#include <algorithm>

namespace tpu_runtime::detail {
namespace {

constexpr int64_t kMaxDim = 65535;

int64_t align_up(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// The groups of `out`'s dims and, per group, which operands broadcast
// along it (bit i: operand i).
void merge_dims(const Shape &out, const std::vector<Shape> &padded, ElementwiseView &v,
                std::vector<uint64_t> &patterns) {
  for (std::size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;  // a dim of 1 needs no group
    uint64_t bits = 0;
    for (std::size_t i = 0; i < padded.size(); ++i) bits |= uint64_t(padded[i][d] == 1) << i;
    if (!patterns.empty() && patterns.back() == bits) {
      v.dims.back() *= out[d];
    } else {
      v.dims.push_back(out[d]);
      patterns.push_back(bits);
    }
  }
  if (v.dims.empty()) {
    v.dims.push_back(1);
    patterns.push_back(0);
  }
}

}  // namespace

ElementwiseView elementwise_view(const Shape &out, const std::vector<Shape> &operands) {
  std::vector<Shape> padded;
  for (const Shape &s : operands) {
    Shape p(out.size() - s.size(), 1);
    p.insert(p.end(), s.begin(), s.end());
    padded.push_back(p);
  }
  ElementwiseView v;
  std::vector<uint64_t> patterns;
  merge_dims(out, padded, v, patterns);
  v.strides.assign(padded.size(), std::vector<int64_t>(v.dims.size()));
  for (std::size_t i = 0; i < padded.size(); ++i) {
    int64_t stride = 1;
    for (std::size_t g = v.dims.size(); g-- > 0;) {
      const bool broadcast = (patterns[g] >> i) & 1;
      v.strides[i][g] = broadcast ? 0 : stride;
      stride *= broadcast ? 1 : v.dims[g];
    }
  }
  if (v.dims.size() == 1) {  // one group: spread over the NPUs as [c, 1, n / c], the view's c, h, w
    const int64_t n = v.dims[0];
    int64_t c = std::min<int64_t>(64, n);
    while (n % c) --c;
    v.dims = {c, 1, n / c};
    for (std::vector<int64_t> &s : v.strides) s = {s[0] * (n / c), 0, s[0]};  // 0 stays 0: broadcast
  }
  return v;
}

ElementwiseTile choose_tile(const int64_t dims[4], data_type_t dtype, int64_t budget_bytes) {
  const int64_t esize = tpu_data_type_size(dtype);
  ElementwiseTile t;
  t.w = std::max<int64_t>(1, std::min({dims[3], kMaxDim, budget_bytes / esize}));
  t.h = std::max<int64_t>(1, std::min({dims[2], kMaxDim, budget_bytes / (t.w * esize)}));
  const int64_t plane = align_up(t.h * t.w, tpu_eu_num(dtype)) * esize;
  t.c = std::max<int64_t>(1, std::min({dims[1], kMaxDim, budget_bytes / plane * tpu_npu_num()}));
  return t;
}

}  // namespace tpu_runtime::detail
