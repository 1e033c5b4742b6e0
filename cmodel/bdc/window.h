// window.h: the sliding-window geometry the convolution, depthwise and
// pooling commands share (tier-3 spec §3.1).
//
// Along one axis, with input extent `in`, `insert` zeros between input
// elements, padding lo / hi, kernel k, stride s and dilation d:
//   k' = d (k - 1) + 1            the dilated kernel
//   in' = (in - 1)(insert + 1) + 1 + lo + hi      the padded, inserted input
//   out = (in' - k') / s + 1
// Output o, tap t reads position u = o s + t d - lo of the inserted input
// (extent E = (in - 1)(insert + 1) + 1): outside [0, E) it is padding, at a
// multiple of insert + 1 it is input element u / (insert + 1), elsewhere an
// inserted element.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "bdc.h"

namespace cmodel::bdc {

// Each of `values` (named `names` together, as "h, w") in [lo, hi]; a
// breach names `rule`, the vendor rule of the command's field.
void require_each_in(Rule rule, const char *what, const char *names, std::initializer_list<int> values, int lo, int hi);

// Every dim of the input shape in [1, limit] (the 16-bit shape fields).
void require_shape_in(Rule rule, const char *role, const dim4 &shape, int limit);

// The output extent along `axis` ('h' or 'w'); fails (naming `rule`)
// unless it is in [1, limit], with a message giving the padded extent and
// the kernel span.
int window_output_extent(Rule rule, char axis, int in, int insert, int pad_lo, int pad_hi, int kernel, int stride,
                         int dilation, int limit);

// What one tap reads.
enum class Place { input, inserted, padding };
struct Position {
  Place place;
  int index;  // the input element, when place == input
};

// One axis of a window.
struct WindowAxis {
  int in, insert, pad_lo, kernel, stride, dilation;

  Position locate(int out, int tap) const {
    const int64_t u = int64_t(out) * stride + int64_t(tap) * dilation - pad_lo;
    const int64_t step = int64_t(insert) + 1;
    const int64_t extent = int64_t(in - 1) * step + 1;
    if (u < 0 || u >= extent) return {Place::padding, 0};
    if (u % step != 0) return {Place::inserted, 0};
    return {Place::input, int(u / step)};
  }
};

}  // namespace cmodel::bdc
