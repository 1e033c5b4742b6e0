// builtin_int_pow.h (private): builtin.int_pow, an integer raised to an
// integer power, exactly, wrapping like numpy (builtin_ops.h lists it).
//
// x (int32) and y (int32 or uint32) of one shape give x^y as int32: the
// product over y's bits of x^(2^k) (square-and-multiply), every multiply an
// integer multiply wrapped to 32 bits (two's complement), so the result is
// the exact power modulo 2^32 like numpy's int32 power. A negative
// exponent (signed y) gives the integer part of the real power 1 / x^|y|:
// 1 for x = 1, (-1)^|y| for x = -1, 0 for |x| >= 2, and for x = 0 (a
// division by zero) int32's largest value, the saturated quotient integer
// Div gives too (numpy refuses negative integer powers; ONNX leaves them
// open).
#pragma once

#include <cstdint>
#include <vector>

#include "tpu_kernel.h"

namespace tpu_runtime::detail {

struct IntPowArgs {
  int64_t count = 1;
  bool unsigned_exponent = false;  // y is uint32: never negative
  uint64_t x_addr = 0, y_addr = 0, out_addr = 0;
};

// Runs on the open emulator; throws Error with its message on a failure.
void run_int_pow_kernel(const IntPowArgs &args);

// The same power of one pair of values, in 64-bit integers (the reference).
int32_t int_pow_value(int32_t x, int64_t y);

}  // namespace tpu_runtime::detail
