// integer.h: the integer arithmetic of the machine's layouts, for the
// emulator's own code (kernels write DIV_UP and ALIGN, macros of the API's
// tpu_defs.h, for the same).
#pragma once

#include <concepts>

namespace cmodel::numeric {

// a / b rounded up, for a >= 0 and b > 0.
template <std::integral T>
constexpr T div_up(T a, T b) {
  return (a + b - 1) / b;
}

// x rounded up to a multiple of a, for x >= 0 and a > 0.
template <std::integral T>
constexpr T align_up(T x, T a) {
  return div_up(x, a) * a;
}

}  // namespace cmodel::numeric
