// builtin_math.h (private): builtin.sin, cos, tan, asin and acos, one fp32
// function of one tensor on the BDC's own fp32 functions (builtin_ops.h
// lists them). The emulator computes
// them correctly rounded after an exact argument reduction
// (docs/bdc-math.md); the ONNX importer's Sin, Cos, Tan, Asin, Acos.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tpu_kernel.h"

namespace tpu_runtime::detail {

enum class MathFn { sin, cos, tan, asin, acos };

// The function named `name`, or nothing.
std::optional<MathFn> math_fn(std::string_view name);
// The function in double (the reference).
double math_value(MathFn fn, double x);

struct MathArgs {
  MathFn fn = MathFn::sin;
  int64_t count = 1;
  uint64_t in_addr = 0, out_addr = 0;
};

// Runs on the open emulator; throws Error with its message on a failure.
void run_math_kernel(const MathArgs &args);

}  // namespace tpu_runtime::detail
