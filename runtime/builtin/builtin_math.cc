// builtin_math.cc: builtin.math's global kernel and reference
// (builtin_math.h).
//
// The elements are viewed as [1, c, 1, count / c] (c the largest divisor of
// the count up to the NPU count) and walked in tiles of [1, c, 1, w]: per
// tile a load, the function (its coefficient table loaded once, at the
// start of local memory) and a store. Local memory is cut in quarters, each
// starting in banks of its own: the table, the input, the function's work
// buffer, the output.
#include "builtin/builtin_math.h"

#include <array>
#include <cmath>

#include "builtin/builtin_tiles.h"

#include "emulator/emulator.h"

namespace tpu_runtime::detail {
namespace {

using MathCall = void (*)(local_addr_t, local_addr_t, local_addr_t, local_addr_t, const dim4 *);
using TableLoad = void (*)(local_addr_t);

struct MathEntry {
  MathFn fn;
  const char *name;
  MathCall call;
  TableLoad load;
};

constexpr std::array<MathEntry, 5> kFunctions = {{
    {MathFn::sin, "sin", tpu_bdc_fp32_sin, tpu_bdc_load_fp32_sin_coeff},
    {MathFn::cos, "cos", tpu_bdc_fp32_cos, tpu_bdc_load_fp32_cos_coeff},
    {MathFn::tan, "tan", tpu_bdc_fp32_tan, tpu_bdc_load_fp32_tan_coeff},
    {MathFn::asin, "asin", tpu_bdc_fp32_arcsin, tpu_bdc_load_fp32_arcsin_coeff},
    {MathFn::acos, "acos", tpu_bdc_fp32_arccos, tpu_bdc_load_fp32_arcsin_coeff},
}};

const MathEntry &entry(MathFn fn) {
  for (const MathEntry &e : kFunctions)
    if (e.fn == fn) return e;
  return kFunctions[0];
}

void math_kernel(const MathArgs &a) {
  const int64_t quarter = tpu_local_mem_size_per_npu() / 4;
  const local_addr_t table = 0, in = local_addr_t(quarter), work = local_addr_t(2 * quarter),
                     out = local_addr_t(3 * quarter);
  const MathEntry &e = entry(a.fn);
  e.load(table);
  for_each_tile(a.count, quarter, [&](const dim4 &shape, const dim4 &global, uint64_t offset) {
    tpu_gdma_cpy_S2L(in, a.in_addr + offset, &shape, nullptr, &global, DT_FP32);
    e.call(out, in, work, table, &shape);
    tpu_gdma_cpy_L2S(a.out_addr + offset, out, &shape, &global, nullptr, DT_FP32);
  });
}

}  // namespace

std::optional<MathFn> math_fn(std::string_view name) {
  for (const MathEntry &e : kFunctions)
    if (name == e.name) return e.fn;
  return std::nullopt;
}

double math_value(MathFn fn, double x) {
  switch (fn) {
    case MathFn::sin: return std::sin(x);
    case MathFn::cos: return std::cos(x);
    case MathFn::tan: return std::tan(x);
    case MathFn::asin: return std::asin(x);
    case MathFn::acos: return std::acos(x);
  }
  return 0;
}

void run_math_kernel(const MathArgs &args) {
  run_on_emulator("the math kernel failed", [&] { math_kernel(args); });
}

}  // namespace tpu_runtime::detail
