// onnx_math_ops.cc: element-wise math beyond issue 33's first table
// (onnx_lowering.h add_math_converters; docs/onnx.md lists the limits).
//
// Floor, Ceil and Round are builtin.expression formulas exact in the
// tensors' own float type: adding and subtracting 2^m (m the type's
// fraction bits: 23 for fp32, 10 for fp16, 7 for bf16) to |x| < 2^m rounds
// it to an integer, ties to even, as IEEE addition rounds; |x| >= 2^m is
// an integer already (inf, NaN pass through). Floor and Ceil step that
// integer by one where it overshot x. IsNaN is x != x, IsInf a comparison
// with the type's largest finite value; their bools are held as 0 / 1 in
// x's dtype like the comparisons'. Sin, Cos, Tan, Asin and Acos are
// builtin.sin, ... (the BDC's fp32 functions, correctly rounded after an exact
// argument reduction; fp16 / bf16 through fp32 casts). Mod: floats by
// fmod's definition x - trunc(x / y) · y in fp32 with the sign and
// magnitude fixed afterwards, integers of 8 and 16 bits exactly through
// fp32 (as integer Div), of 32 bits by builtin.int_mod's long division,
// with ONNX's sign rule for fmod 0 (the divisor's).
#include <cmath>

#include <fmt/format.h>

#include "onnx/onnx_lowering.h"

namespace tpu_runtime::onnx_import {
namespace {

// 2^m for a float dtype of m fraction bits: every value from it up is an
// integer, and below it (a + 2^m) - 2^m rounds a >= 0 to one.
std::string integer_threshold(Dtype d) {
  switch (d) {
    case Dtype::fp16: return "1024";
    case Dtype::bf16: return "128";
    default: return "8388608";
  }
}

// The largest finite value of a float dtype (as a formula constant,
// rounded to the dtype exactly).
std::string largest_finite(Dtype d) {
  switch (d) {
    case Dtype::fp16: return "65504";
    case Dtype::bf16: return "3.3895313892515355e38";
    default: return "3.4028234663852886e38";
  }
}

// x rounded to the nearest integer, ties to even, in the formula's dtype.
std::string round_formula(const std::string &x, Dtype d) {
  const std::string big = integer_threshold(d);
  const std::string rounded = fmt::format("((abs({0}) + {1}) - {1})", x, big);
  return fmt::format("where(abs({0}) >= {1}, {0}, where({0} < 0, -{2}, {2}))", x, big, rounded);
}

enum class Rounding { floor, ceil, nearest };

void convert_rounding(Node &node, Rounding kind) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  const Dtype d = node.dtype();
  const std::string r = round_formula("x0", d);
  const std::string formula = kind == Rounding::nearest ? r
                              : kind == Rounding::floor ? fmt::format("where({0} > x0, {0} - 1, {0})", r)
                                                        : fmt::format("where({0} < x0, {0} + 1, {0})", r);
  emit_formula(node, formula, {node.data_input(0)}, node.output(0));
}

// IsNaN, IsInf: a bool held as 0 / 1 in x's dtype.
void convert_is_nan(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  node.dtype(true);
  emit_formula(node, "x0 != x0", {node.data_input(0)}, node.output(0));
}

void convert_is_inf(Node &node) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  const Dtype d = node.dtype(true);
  const bool positive = node.attr_int("detect_positive", 1) != 0, negative = node.attr_int("detect_negative", 1) != 0;
  const std::string max = largest_finite(d);
  const std::string formula = positive && negative ? fmt::format("abs(x0) > {}", max)
                              : positive           ? fmt::format("x0 > {}", max)
                              : negative           ? fmt::format("x0 < -{}", max)
                                                   : "where(x0 == x0, 0, 0)";
  emit_formula(node, formula, {node.data_input(0)}, node.output(0));
}

// builtin.<fn> (fp32); fp16 and bf16 are cast in and out.
void convert_math(Node &node, const char *fn) {
  node.require_inputs(1, 1);
  node.require_outputs(1);
  const Dtype d = node.dtype();
  std::string x = node.data_input(0);
  if (d != Dtype::fp32) x = node.emit_cast(x, Dtype::fp32);
  const std::string out = d == Dtype::fp32 ? node.output(0) : node.temporary(fn);
  node.emit(fmt::format("builtin.{}", fn), nlohmann::ordered_json::object(), {x}, {out}, {Dtype::fp32});
  if (d != Dtype::fp32) node.emit_cast(out, d, node.output(0));
}

// ---- Mod ----------------------------------------------------------------------------
//
// In fp32, over x (x0) and y (x1): t = trunc(x / y) (the rounding trick of
// round_formula on |x / y|, stepped down where it overshot), r = x - t·y.
// For floats (fmod 1, C's fmod: the sign of x, |r| < |y|) r is then fixed
// where the rounded quotient put it on the wrong side (r's sign against
// x's: r ± |y|), a zero takes x's sign (x · 0), and y = ±inf gives x (x = ±inf or y = 0 give NaN by the
// arithmetic). The product t·y rounds, so the absolute error is at most
// about 2^-24 |x| (exact when t·y fits 24 bits: |x / y| < 2^24 / |y|'s
// significand). For 8- and 16-bit integers every step is exact (as
// integer Div: the fp32 quotient of |x| < 2^24 never rounds across an
// integer) and the result is cast back; fmod 0 moves a nonzero r whose
// sign differs from y's by y (Python's %); y = 0 gives 0 (the NaN cast).
// 32-bit integers (int64 and uint64 held in them) are builtin.int_mod, an
// exact long division (builtin_int_mod.h), after broadcasting both.

std::string truncated_quotient() {
  const std::string a = "abs(x0 / x1)";
  const std::string r = fmt::format("(({0} + 8388608) - 8388608)", a);
  const std::string down = fmt::format("where({0} > {1}, {0} - 1, {0})", r, a);
  return fmt::format("where({0} >= 8388608, x0 / x1, where(x0 / x1 < 0, -{1}, {1}))", a, down);
}

// x0 mod x1 in fp32 tensors (`x`, `y`), into `output`.
void emit_fp32_mod(Node &node, const std::string &x, const std::string &y, bool is_float, bool fmod,
                   const std::string &output) {
  const std::string t = emit_formula(node, truncated_quotient(), {x, y});
  const std::string r = emit_formula(node, "x0 - x2 * x1", {x, y, t});
  if (is_float) {
    const std::string inf = "3.4028234663852886e38";
    emit_formula(node,
                 fmt::format("where(abs(x1) > {0}, where(abs(x0) > {0}, x0 - x0, x0), where(x2 == 0, x0 * 0, "
                             "where(x0 * x2 < 0, x2 + where(x0 < 0, -abs(x1), abs(x1)), x2)))",
                             inf),
                 {x, y, r}, output);
    return;
  }
  emit_formula(node, fmod ? "x2 * 1" : "where((x2 != 0) * ((x2 < 0) != (x1 < 0)), x2 + x1, x2)", {x, y, r}, output);
}

void convert_mod(Node &node) {
  node.require_inputs(2, 2);
  node.require_outputs(1);
  const int64_t fmod = node.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) node.fail(fmt::format("attribute 'fmod' = {} is not supported: it is 0 or 1", fmod));
  const Dtype d = node.dtype();
  const bool is_float = dtype_info(d).is_float;
  if (is_float && fmod == 0)
    node.fail("attribute 'fmod' = 0 with float inputs: ONNX defines a float Mod with fmod 1 (C's fmod)");
  if (d == Dtype::int32 || d == Dtype::uint32) {
    node.emit("builtin.int_mod", {{"fmod", fmod}}, {broadcast_input(node, 0), broadcast_input(node, 1)},
              {node.output(0)});
    return;
  }
  std::string x = node.data_input(0, d), y = node.data_input(1, d);
  if (d != Dtype::fp32) x = node.emit_cast(x, Dtype::fp32), y = node.emit_cast(y, Dtype::fp32);
  if (d == Dtype::fp32) return emit_fp32_mod(node, x, y, is_float, fmod != 0, node.output(0));
  const std::string r = node.temporary("remainder");
  emit_fp32_mod(node, x, y, is_float, fmod != 0, r);
  node.emit_cast(r, d, node.output(0));
}

}  // namespace

void add_math_converters(ConverterTable &table) {
  table["Floor"] = [](Node &n) { convert_rounding(n, Rounding::floor); };
  table["Ceil"] = [](Node &n) { convert_rounding(n, Rounding::ceil); };
  table["Round"] = [](Node &n) { convert_rounding(n, Rounding::nearest); };
  table["IsNaN"] = convert_is_nan;
  table["IsInf"] = convert_is_inf;
  table["Sin"] = [](Node &n) { convert_math(n, "sin"); };
  table["Cos"] = [](Node &n) { convert_math(n, "cos"); };
  table["Tan"] = [](Node &n) { convert_math(n, "tan"); };
  table["Asin"] = [](Node &n) { convert_math(n, "asin"); };
  table["Acos"] = [](Node &n) { convert_math(n, "acos"); };
  table["Mod"] = convert_mod;
}

}  // namespace tpu_runtime::onnx_import
