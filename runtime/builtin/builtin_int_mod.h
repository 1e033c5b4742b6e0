// builtin_int_mod.h (private): builtin.int_mod, the exact remainder of two
// 32-bit integer tensors (builtin_ops.h lists it): x and y of one shape and
// one dtype, int32 or uint32, params {"fmod": 0 or 1}.
//
// The magnitudes' remainder |x| mod |y| by binary long division (one
// shift, compare and conditional subtract per bit of |x|, in uint32:
// |INT32_MIN| = 2^31 is held), then the sign: fmod 1 gives x's (C's %,
// ONNX's fmod), fmod 0 moves a nonzero remainder whose sign differs from
// y's by y (Python's %, ONNX's default). A zero divisor gives 0 (numpy's
// integer mod; ONNX leaves it open). The ONNX importer's Mod of int32,
// int64 (held as int32), uint32 and uint64 (held as uint32) tensors.
#pragma once

#include <cstdint>

#include "tpu_kernel.h"

namespace tpu_runtime::detail {

struct IntModArgs {
  int64_t count = 1;
  bool is_unsigned = false;  // uint32 operands
  bool fmod = false;         // the dividend's sign (else the divisor's)
  uint64_t x_addr = 0, y_addr = 0, out_addr = 0;
};

// Runs on the open emulator; throws Error with its message on a failure.
void run_int_mod_kernel(const IntModArgs &args);

// The same remainder of one pair of values in 64-bit integers (the reference).
int64_t int_mod_value(int64_t x, int64_t y, bool fmod);

}  // namespace tpu_runtime::detail
