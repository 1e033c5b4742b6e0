// expression.h: element-wise formulas ("x*x + y*z") parsed once, evaluated
// in double, differentiated symbolically and compiled into one fused kernel
// (the net layer builtin.expression; docs/expressions.md).
//
// Grammar (one for every front end: the Python tracer writes this text):
//
//   formula  := compare
//   compare  := sum [ ('<' | '<=' | '>' | '>=' | '==' | '!=') sum ]
//   sum      := product { ('+' | '-') product }
//   product  := unary { ('*' | '/') unary }
//   unary    := ('-' | '+') unary | primary
//   primary  := number | name | name '(' compare { ',' compare } ')' | '(' compare ')'
//
// Numbers are decimal (1, 2.5, .5, 1e-3). Names are inputs; a name followed
// by '(' is a function: abs, relu, exp, log, sqrt, rsqrt, sigmoid, tanh (one
// argument), max, min (two), where(c, a, b) (a where c != 0, else b). A
// comparison is 1 where it holds and 0 elsewhere. Sub-formulas without
// inputs (2*3, exp(1), -4) are folded in double when parsed; their value is
// rounded to the tensors' dtype when the kernel uses it.
//
// Every refusal is a tpu_runtime::Error that quotes the formula and names
// the column (1-based) of what is wrong.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tpu_runtime/dtype.h"

namespace tpu_runtime {

enum class ExprOp : uint8_t {
  input,
  constant,
  // binary
  add,
  sub,
  mul,
  div,
  max,
  min,
  gt,
  ge,
  lt,
  le,
  eq,
  ne,
  // unary
  neg,
  abs,
  relu,
  exp,
  log,
  sqrt,
  rsqrt,
  sigmoid,
  tanh,
  // ternary
  where,
};

// Operands of `op`: 0 for input and constant, 1, 2 or 3.
int expr_arity(ExprOp op);
// The name in formulas ("+", "exp", "where", ...).
const char *expr_op_name(ExprOp op);

struct ExprNode {
  ExprOp op = ExprOp::constant;
  int operand[3] = {-1, -1, -1};  // node indices (smaller than this node's)
  int input = -1;                 // ExprOp::input: which input
  double value = 0;               // ExprOp::constant
  int column = 0;                 // where it was written, 1-based (0: made by gradient())
};

class Expression {
 public:
  // Parses `formula`. `names` are the inputs in the order tensors bind to
  // them (each formula name must be one of them; a name may go unused);
  // empty: the formula's names in the order they first appear.
  static Expression parse(std::string_view formula, const std::vector<std::string> &names = {});

  const std::string &formula() const { return formula_; }
  // The formula as this SDK writes it (parses back to the same tree).
  std::string text() const;
  const std::vector<std::string> &inputs() const { return inputs_; }
  // Every node, operands before the nodes that use them; the root is last.
  const std::vector<ExprNode> &nodes() const { return nodes_; }
  // Whether the formula reads input i; the column of its first use (0: none).
  int first_column(std::size_t input) const;

  // The value at one point, in double (no rounding).
  double evaluate(std::span<const double> inputs) const;
  // The same with every operation's result rounded to `dtype` (nearest
  // even), and constants rounded to it: what the fused kernel computes
  // (see docs/expressions.md for the functions' bounds). For an integer
  // dtype every operation is exact, then wrapped to the dtype's width as
  // numpy's integer arithmetic does (int32 products too, at any magnitude).
  double evaluate_rounded(std::span<const double> inputs, Dtype dtype) const;

  // The output shape: the inputs' shapes broadcast like numpy. Throws,
  // naming the formula, the input and its column, when they cannot.
  Shape output_shape(const std::vector<Shape> &shapes) const;

  // The gradient with respect to input `name`: grad * d(formula)/d(name),
  // itself an expression over the same inputs plus `grad_name` (last), the
  // gradient flowing into the formula's output. It has the broadcast shape
  // of all those inputs: summing it over the dims `name` was broadcast along
  // is the caller's step.
  Expression gradient(std::string_view name, std::string_view grad_name = "grad") const;

  // The functions a formula may call, for messages and docs.
  static std::string function_list();

 private:
  std::string formula_;
  std::vector<std::string> inputs_;
  std::vector<ExprNode> nodes_;
  friend class ExpressionBuilder;
};

// `value` rounded once to `dtype` (fp32, fp16 or bf16: nearest even, to
// infinity past the largest finite value, subnormals kept; an integer
// type: nearest even, wrapped to the type's width like the integer kernel).
double round_to_dtype(double value, Dtype dtype);

}  // namespace tpu_runtime
