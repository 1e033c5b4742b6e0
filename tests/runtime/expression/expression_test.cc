// expression_test: the formula grammar (tpu_runtime/expression.h) on the
// host: parsing and printing, the columns of every refusal, numpy
// broadcasting, evaluation against values worked out by hand, rounding to
// the dtypes, and the symbolic gradient against central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/expression/elementwise_view.h"
#include "runtime/expression/expression_kernel.h"
#include "support/test_support.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/expression.h"

namespace {

namespace tr = tpu_runtime;
using tr::Expression;

std::string error_of(const std::string &formula, const std::vector<std::string> &names = {}) {
  try {
    Expression::parse(formula, names);
  } catch (const tr::Error &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ExpressionParse, InputsInOrderOfFirstUse) {
  const Expression e = Expression::parse("y * z + x * x");
  EXPECT_EQ(e.inputs(), (std::vector<std::string>{"y", "z", "x"}));
  const Expression named = Expression::parse("y * z + x * x", {"x", "y", "z"});
  EXPECT_EQ(named.inputs(), (std::vector<std::string>{"x", "y", "z"}));
  const double at[] = {2, 3, 5};  // x, y, z
  EXPECT_EQ(named.evaluate(at), 3 * 5 + 2 * 2);
  EXPECT_EQ(named.first_column(0), 9);
  EXPECT_EQ(named.first_column(1), 1);
}

TEST(ExpressionParse, PrecedenceAndAssociativity) {
  const double at[] = {7, 3, 2};
  EXPECT_EQ(Expression::parse("a - b - c").evaluate(at), 2);      // (7 - 3) - 2
  EXPECT_EQ(Expression::parse("a / b / c").evaluate(at), 7.0 / 3 / 2);
  EXPECT_EQ(Expression::parse("a - b * c").evaluate(at), 1);      // 7 - 6
  EXPECT_EQ(Expression::parse("-a * b + c").evaluate(at), -19);
  EXPECT_EQ(Expression::parse("a - -b").evaluate(at), 10);
  EXPECT_EQ(Expression::parse("a + b > c * 5").evaluate(at), 0);  // 10 > 10
  EXPECT_EQ(Expression::parse("a + b >= c * 5").evaluate(at), 1);
  EXPECT_EQ(Expression::parse("where(a > b, a - b, b - a)").evaluate(at), 4);
  EXPECT_EQ(Expression::parse("max(a, b) - min(b, c)").evaluate(at), 5);
  EXPECT_EQ(Expression::parse("relu(c - a) + abs(c - a)", {"a", "b", "c"}).evaluate(at), 5);
  EXPECT_DOUBLE_EQ(Expression::parse("sigmoid(a - a) + tanh(b - b) + exp(c - c)").evaluate(at), 1.5);
  EXPECT_DOUBLE_EQ(Expression::parse("sqrt(a + 2) * rsqrt(b + 1) + log(c * 0.5)").evaluate(at), 3.0 / 2.0);
}

TEST(ExpressionParse, TextReadsBackToTheSameFormula) {
  for (const char *f : {"x*x + y*z", "a - (b - c)", "-(a + b) * c", "where(a < b, -a, 2.5e-3 / b)",
                        "(a > b) * (b != c) - (a == 1)", "max(min(a, -1), b) / (c * c)", "sqrt(abs(a)) - -3"}) {
    const Expression e = Expression::parse(f);
    const Expression again = Expression::parse(e.text(), e.inputs());
    EXPECT_EQ(again.text(), e.text()) << f;
    const double at[] = {1.25, -2.5, 0.75};
    const std::vector<double> point(at, at + e.inputs().size());
    EXPECT_EQ(again.evaluate(point), e.evaluate(point)) << f << " printed as " << e.text();
  }
  EXPECT_EQ(Expression::parse("a - (b - c)").text(), "a - (b - c)");
  EXPECT_EQ(Expression::parse("(a - b) - c").text(), "a - b - c");
}

TEST(ExpressionParse, ConstantsFoldWhenParsed) {
  const Expression e = Expression::parse("x * (2 * 3 - exp(0))");
  ASSERT_EQ(e.nodes().size(), 3u);  // x, 5, *
  EXPECT_EQ(e.nodes()[1].op, tr::ExprOp::constant);
  EXPECT_EQ(e.nodes()[1].value, 5);
  EXPECT_EQ(Expression::parse("x * -2").nodes()[1].value, -2);
}

TEST(ExpressionParse, RefusalsNameTheFormulaAndColumn) {
  EXPECT_CONTAINS(error_of("x * foo(y)"), "formula 'x * foo(y)': column 5: unsupported function 'foo'");
  EXPECT_CONTAINS(error_of("x * foo(y)"), "abs, relu, exp");
  EXPECT_CONTAINS(error_of("x * * y"), "column 5: expected a number, an input or '(', found '*'");
  EXPECT_CONTAINS(error_of("x + "), "column 5: expected a number, an input or '(', found the end of the formula");
  EXPECT_CONTAINS(error_of("(x + y"), "column 7: expected ')' to close the '(' at column 1");
  EXPECT_CONTAINS(error_of("x $ y"), "column 3: unexpected character '$'");
  EXPECT_CONTAINS(error_of("x y"), "column 3: unexpected 'y' after a complete formula");
  EXPECT_CONTAINS(error_of("max(x)"), "column 1: max() takes 2 arguments, not 1");
  EXPECT_CONTAINS(error_of("x < y < z"), "column 7: comparisons do not chain");
  EXPECT_CONTAINS(error_of("2 * 3"), "formula '2 * 3': column 1: the formula has no inputs");
  EXPECT_CONTAINS(error_of("x + q", {"x", "y"}), "column 5: unknown input 'q' (the inputs are: x, y)");
  EXPECT_CONTAINS(error_of("exp + 1"), "column 1: 'exp' is a function");
  EXPECT_CONTAINS(error_of("0x10 * y"), "column 1: '0x10' is not a decimal number");
  EXPECT_CONTAINS(error_of("x", {"x", "x"}), "input name 'x' is given twice");
  EXPECT_CONTAINS(error_of("   "), "the formula is empty");
}

TEST(ExpressionBroadcast, LikeNumpy) {
  const Expression e = Expression::parse("x * y + z");
  EXPECT_EQ(e.output_shape({{4, 1, 3}, {5, 1}, {3}}), (tr::Shape{4, 5, 3}));
  EXPECT_EQ(e.output_shape({{1}, {1}, {1}}), (tr::Shape{1}));
  try {
    e.output_shape({{4, 3}, {2, 3}, {3}});
    FAIL() << "no error";
  } catch (const tr::Error &err) {
    EXPECT_CONTAINS(err.what(), "formula 'x * y + z': column 5: input 'y' has the shape [2,3], which does not "
                                "broadcast with input 'x' [4,3] (dim 2 from the right: 2 vs 4)");
  }
  try {
    e.output_shape({{4, 3}, {3}});
    FAIL() << "no error";
  } catch (const tr::Error &err) {
    EXPECT_CONTAINS(err.what(), "it has 3 inputs (x, y, z), but 2 tensors are given");
  }
}

// Values of fp16 and bf16 worked out by hand.
TEST(ExpressionRounding, EachOperationRoundsToTheDtype) {
  EXPECT_EQ(tr::round_to_dtype(1.0 + std::ldexp(1, -11), tr::Dtype::fp16), 1.0);  // tie to even
  EXPECT_EQ(tr::round_to_dtype(1.0 + 3 * std::ldexp(1, -11), tr::Dtype::fp16), 1.0 + std::ldexp(1, -9));
  EXPECT_EQ(tr::round_to_dtype(65520, tr::Dtype::fp16), INFINITY);
  EXPECT_EQ(tr::round_to_dtype(65519, tr::Dtype::fp16), 65504);
  EXPECT_EQ(tr::round_to_dtype(std::ldexp(1, -25) * 1.5, tr::Dtype::fp16), std::ldexp(1, -24));  // subnormal
  EXPECT_EQ(tr::round_to_dtype(1.0 + std::ldexp(1, -8), tr::Dtype::bf16), 1.0);
  EXPECT_EQ(tr::round_to_dtype(0.1, tr::Dtype::bf16), 0.10009765625);
  EXPECT_EQ(tr::round_to_dtype(0.1, tr::Dtype::fp32), double(0.1f));
  const double float_max = std::ldexp(double((1 << 24) - 1), 104);
  EXPECT_EQ(tr::round_to_dtype(float_max + std::ldexp(1, 102), tr::Dtype::fp32), float_max);
  EXPECT_EQ(tr::round_to_dtype(float_max + std::ldexp(1, 103), tr::Dtype::fp32), INFINITY);  // the tie goes to even
  EXPECT_EQ(tr::round_to_dtype(-1e300, tr::Dtype::fp32), -INFINITY);
  EXPECT_EQ(tr::round_to_dtype(std::ldexp(255.0, 120) + std::ldexp(1, 119), tr::Dtype::bf16), INFINITY);
  EXPECT_EQ(tr::round_to_dtype(std::ldexp(255.0, 120) + std::ldexp(1, 118), tr::Dtype::bf16), std::ldexp(255.0, 120));
  // 256 + 1 + 1 in bf16: each sum rounds back to 256 (8 significant bits).
  const Expression e = Expression::parse("x + 1 + 1");
  const double at[] = {256};
  EXPECT_EQ(e.evaluate_rounded(at, tr::Dtype::bf16), 256);
  EXPECT_EQ(e.evaluate_rounded(at, tr::Dtype::fp16), 258);
  EXPECT_EQ(Expression::parse("x + 2").evaluate_rounded(at, tr::Dtype::bf16), 258);
}

// Integer dtypes: every operation exact, then wrapped to the width, as
// numpy's int32 arithmetic. The products below exceed 2^53, where doubles
// would drop the low bits the wrap keeps; the values are derived by hand.
TEST(ExpressionRounding, IntegerArithmeticIsExactThenWrapped) {
  const Expression product = Expression::parse("x * y");
  const double big[] = {2147483647, 2147483647};  // (2^31 - 1)^2 = 2^62 - 2^32 + 1: low 32 bits 1
  EXPECT_EQ(product.evaluate_rounded(big, tr::Dtype::int32), 1);
  const double odd[] = {-2147483647, 2147483645};  // -(2^31 - 1)(2^31 - 3) = -(2^62 - 2^33 + 3) = 2^33 - 3 mod 2^64
  EXPECT_EQ(product.evaluate_rounded(odd, tr::Dtype::int32), -3);
  EXPECT_EQ(product.evaluate_rounded(odd, tr::Dtype::uint32), 4294967293.0);
  const double root[] = {46341, 46341};  // 2147488281 = 2^31 + 4633: wraps to -2^31 + 4633
  EXPECT_EQ(product.evaluate_rounded(root, tr::Dtype::int32), -2147479015);
  // Sums of values float32 cannot hold (2^24 + 1) stay exact.
  const double sum_at[] = {16777217, 16777219};
  EXPECT_EQ(Expression::parse("x + y - 1").evaluate_rounded(sum_at, tr::Dtype::int32), 33554435);
  // neg of the smallest int32 wraps to itself; max/min and where on exact values.
  const double smallest[] = {-2147483648.0, 16777217};
  EXPECT_EQ(Expression::parse("-x").evaluate_rounded(smallest, tr::Dtype::int32), -2147483648.0);
  EXPECT_EQ(Expression::parse("max(x, y) * 3").evaluate_rounded(smallest, tr::Dtype::int32), 50331651);
  EXPECT_EQ(Expression::parse("where(x < y, y - x, 0)").evaluate_rounded(smallest, tr::Dtype::int32),
            -2130706431);  // 16777217 + 2^31 = 2164260865, wrapped: 2164260865 - 2^32
}

TEST(ExpressionRounding, MaxMinFollowIeeeMaximum) {
  const Expression mx = Expression::parse("max(x, y)"), mn = Expression::parse("min(x, y)");
  const double zeros[] = {0.0, -0.0}, nan_first[] = {NAN, 1};
  EXPECT_FALSE(std::signbit(mx.evaluate(zeros)));
  EXPECT_TRUE(std::signbit(mn.evaluate(zeros)));
  EXPECT_TRUE(std::isnan(mx.evaluate(nan_first)));
  EXPECT_TRUE(std::isnan(mn.evaluate(nan_first)));
}

TEST(ExpressionGradient, HandDerived) {
  const Expression e = Expression::parse("x*x + y*z");
  const Expression dx = e.gradient("x"), dz = e.gradient("z", "g");
  EXPECT_EQ(dx.inputs(), (std::vector<std::string>{"x", "y", "z", "grad"}));
  EXPECT_EQ(dz.inputs(), (std::vector<std::string>{"x", "y", "z", "g"}));
  const double at[] = {3, 5, 7, 2};  // x, y, z, grad
  EXPECT_EQ(dx.evaluate(at), 2 * (2 * 3));
  EXPECT_EQ(dz.evaluate(at), 2 * 5);
  EXPECT_EQ(Expression::parse("relu(x)").gradient("x").text(), "grad * where(x > 0, 1, 0)");
  // An input the formula ignores: grad * 0, which keeps the gradient's shape.
  EXPECT_EQ(Expression::parse("x + 1", {"x", "w"}).gradient("w").text(), "grad * 0");
  try {
    e.gradient("q");
    FAIL() << "no error";
  } catch (const tr::Error &err) {
    EXPECT_CONTAINS(err.what(), "no input named 'q' to differentiate by (the inputs are: x, y, z)");
  }
  EXPECT_THROW(e.gradient("x", "y"), tr::Error);
}

// A random formula of smooth operations over inputs a, b, c, whose domain
// stays where log, sqrt and rsqrt are defined (their arguments are made
// positive) and away from the kinks of abs, relu, max, min and where.
std::string random_smooth(test::Seeded &s, int depth) {
  static const char *kLeaves[] = {"a", "b", "c", "0.5", "2", "1.5"};
  if (depth == 0 || s.uniform(0, 3) == 0) return kLeaves[s.uniform(0, 5)];
  const std::string x = random_smooth(s, depth - 1), y = random_smooth(s, depth - 1);
  switch (s.uniform(0, 11)) {
    case 0: return "(" + x + " + " + y + ")";
    case 1: return "(" + x + " - " + y + ")";
    case 2: return "(" + x + " * " + y + ")";
    case 3: return "(" + x + " / (1 + " + y + " * " + y + "))";
    case 4: return "exp(" + x + " * 0.25)";
    case 5: return "log(1 + " + x + " * " + x + ")";
    case 6: return "sqrt(2 + " + x + " * " + x + ")";
    case 7: return "rsqrt(1 + " + x + " * " + x + ")";
    case 8: return "sigmoid(" + x + ")";
    case 9: return "tanh(" + x + ")";
    case 10: return "-" + x;
    default: return "where(a > 10, " + y + ", " + x + ")";  // a stays below 10: always x
  }
}

TEST(ExpressionGradient, MatchesCentralDifferences) {
  test::Seeded s;
  std::uniform_real_distribution<double> u(-2, 2);
  for (int round = 0; round < test::rounds(200); ++round) {
    const std::string formula = "a + " + random_smooth(s, 4);
    const Expression e = Expression::parse(formula, {"a", "b", "c"});
    const double point[] = {u(s.rng()), u(s.rng()), u(s.rng())};
    for (std::size_t wrt = 0; wrt < 3; ++wrt) {
      const Expression g = e.gradient(e.inputs()[wrt]);
      const double grad = 0.75;
      const double with_grad[] = {point[0], point[1], point[2], grad};
      const double h = 1e-5;
      double up[] = {point[0], point[1], point[2]}, down[] = {point[0], point[1], point[2]};
      up[wrt] += h;
      down[wrt] -= h;
      const double numeric = grad * (e.evaluate(up) - e.evaluate(down)) / (2 * h);
      const double symbolic = g.evaluate(with_grad);
      EXPECT_NEAR(symbolic, numeric, 1e-5 * std::max(1.0, std::fabs(numeric)))
          << formula << " by " << e.inputs()[wrt] << ": " << g.text();
    }
  }
}

}  // namespace

// ---- the register program (runtime/expression/expression_kernel.h) ------------------

namespace program_tests {

namespace td = tpu_runtime::detail;

// Registers of a program, the output's included, counted by hand below.
int registers(const std::string &formula, bool read_only_inputs) {
  return td::compile_expression(Expression::parse(formula), tr::Dtype::fp32, read_only_inputs).registers;
}

TEST(ExpressionProgram, InputsDyingInAnOperationTakeItsResult) {
  // x, y, z in three registers; x*x goes into x's, y*z into z's (both die
  // there), the sum into the output register: no temporary.
  EXPECT_EQ(registers("x*x + y*z", false), 4);
  // Read-only inputs (a group's slice): x*x and y*z need a temporary each.
  EXPECT_EQ(registers("x*x + y*z", true), 3 + 2 + 1);
}

TEST(ExpressionProgram, SethiUllmanOrderNeedsFewerTemporaries) {
  // (x + 1) + (x*2) * (x*3) with x read-only: the right side needs two
  // registers, the left one. Left first would hold x + 1 while the right
  // takes two more (three temporaries); the right first needs two at once,
  // then x + 1 reuses one of them.
  EXPECT_EQ(registers("(x + 1) + (x*2) * (x*3)", true), 1 + 2 + 1);
  // The same tree mirrored: the order follows the needs, not the writing.
  EXPECT_EQ(registers("(x*2) * (x*3) + (x + 1)", true), 1 + 2 + 1);
  // A left-deep chain never needs more than one temporary.
  EXPECT_EQ(registers("exp(((x * 2 + 1) / 3 - x) * x)", true), 1 + 1 + 1);
}

TEST(ExpressionProgram, OnlyTheTablesAndWorkBuffersTheFunctionsNeed) {
  const td::ExprProgram e = td::compile_expression(Expression::parse("exp(x) + 1"), tr::Dtype::fp16);
  EXPECT_TRUE(e.exp_table);
  EXPECT_FALSE(e.log_table);
  EXPECT_EQ(e.work_buffers, 2);
  const td::ExprProgram l = td::compile_expression(Expression::parse("log(x) * y"), tr::Dtype::fp16);
  EXPECT_TRUE(l.log_table);
  EXPECT_FALSE(l.exp_table);
  EXPECT_EQ(l.work_buffers, 1);
  const td::ExprProgram p = td::compile_expression(Expression::parse("x * y - 2"), tr::Dtype::fp16);
  EXPECT_EQ(p.work_buffers, 0);
  EXPECT_EQ(p.steps, 2);
  // The constant is an operand of the command, rounded to the dtype: 0.1 in fp16.
  const td::ExprProgram c = td::compile_expression(Expression::parse("x * 0.1"), tr::Dtype::fp16);
  ASSERT_EQ(c.steps, 1);
  EXPECT_TRUE(c.step[0].src[1].constant);
  EXPECT_EQ(c.step[0].src[1].value, 0.0999755859375f);  // 1638 / 16384
  // A formula that is one input is a copy.
  const td::ExprProgram copy = td::compile_expression(Expression::parse("x"), tr::Dtype::fp32);
  ASSERT_EQ(copy.steps, 1);
  EXPECT_EQ(copy.step[0].op, tr::ExprOp::input);
}

TEST(ExpressionProgram, FormulasTooLargeForTheKernelAreRefused) {
  std::string sum = "x";
  for (int i = 0; i < 300; ++i) sum += " + x";
  try {
    td::compile_expression(Expression::parse(sum), tr::Dtype::fp32);
    FAIL() << "no error";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "300 operations; the fused kernel takes at most 255");
  }
  std::string many = "x0";
  for (int i = 1; i < 17; ++i) many += " + x" + std::to_string(i);
  try {
    td::compile_expression(Expression::parse(many), tr::Dtype::fp32);
    FAIL() << "no error";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "17 inputs; the fused kernel takes at most 16");
  }
}

// The kernels' view, derived by hand: dims merge where every operand
// broadcasts alike; one merged dim spreads over 64 lanes as [c, 1, n / c]
// (the kernels' c, h, w), a broadcast operand keeping stride 0.
TEST(ElementwiseView, MergesDimsAndSpreadsOneDimOverTheNpus) {
  const td::ElementwiseView one = td::elementwise_view({8, 128, 1024}, {{8, 128, 1024}, {1}});
  EXPECT_EQ(one.dims, (std::vector<int64_t>{64, 1, 16384}));
  EXPECT_EQ(one.strides[0], (std::vector<int64_t>{16384, 0, 1}));
  EXPECT_EQ(one.strides[1], (std::vector<int64_t>{0, 0, 0}));
  // [8, 64, 512] with a row [512]: the first two dims merge (the row
  // broadcasts along both), the last stays.
  const td::ElementwiseView rows = td::elementwise_view({8, 64, 512}, {{8, 64, 512}, {512}});
  EXPECT_EQ(rows.dims, (std::vector<int64_t>{512, 512}));
  EXPECT_EQ(rows.strides[0], (std::vector<int64_t>{512, 1}));
  EXPECT_EQ(rows.strides[1], (std::vector<int64_t>{0, 1}));
  // 1000 = 8 x 125: the largest divisor up to 64 is 50.
  EXPECT_EQ(td::elementwise_view({1000}, {{1000}}).dims, (std::vector<int64_t>{50, 1, 20}));
}

}  // namespace program_tests
