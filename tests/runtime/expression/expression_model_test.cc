// expression_model_test: the net layer builtin.expression built into models,
// recorded and replayed on both chips:
//  - fused == unfused, bit for bit: random formulas, shapes, broadcasts and
//    dtypes; the unfused chain is one layer per operation, the built-in
//    layers builtin.add / sub / mul / relu where they exist and a
//    single-operation builtin.expression for the other operations (there is
//    no other built-in layer for them);
//  - every operation against a long double reference, within the bound
//    docs/expressions.md documents for it and the dtype;
//  - the symbolic gradient run as a fused layer;
//  - the layer's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "support/sample_ops.h"
#include "support/test_support.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/expression.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/npz.h"

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

const char *const kChips[] = {"bm1684x", "bm1688"};
const tr::Dtype kDtypes[] = {tr::Dtype::fp32, tr::Dtype::fp16, tr::Dtype::bf16};

// ---- values in the dtypes (written here, independent of the code under test) ----

int significand_bits(tr::Dtype d) { return d == tr::Dtype::fp32 ? 24 : d == tr::Dtype::fp16 ? 11 : 8; }
int min_exponent(tr::Dtype d) { return d == tr::Dtype::fp16 ? -14 : -126; }

// Nearest value of `d` (ties to even); values here stay far from overflow.
long double round_to(tr::Dtype d, long double x) {
  if (x == 0 || std::isnan(x) || std::isinf(x)) return x;
  const int e = std::max(int(std::ilogb(x)), min_exponent(d));
  const int shift = significand_bits(d) - 1 - e;
  return std::ldexp(std::nearbyint(std::ldexp(x, shift)), -shift);
}

// The spacing of `d` at x (the ulp of the binade of x; subnormals: the smallest).
long double ulp(tr::Dtype d, long double x) {
  const int e = std::max(x == 0 ? min_exponent(d) : int(std::ilogb(x)), min_exponent(d));
  return std::ldexp(1.0L, e - (significand_bits(d) - 1));
}

tr::npz::Array to_array(tr::Dtype d, const std::vector<int> &shape, const std::vector<double> &values) {
  tr::npz::Array a;
  a.dtype = d == tr::Dtype::fp32 ? "<f4" : d == tr::Dtype::fp16 ? "<f2" : "<u2";
  for (int n : shape) a.shape.push_back(n);
  const std::size_t size = d == tr::Dtype::fp32 ? 4 : 2;
  a.data.resize(values.size() * size);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float f = float(values[i]);  // exact: the values are of the dtype
    uint32_t bits = 0;
    if (d == tr::Dtype::fp32) std::memcpy(&bits, &f, 4);
    else bits = d == tr::Dtype::fp16 ? tr::float_to_fp16(f) : tr::float_to_bf16(f);
    std::memcpy(a.data.data() + i * size, &bits, size);
  }
  return a;
}

std::vector<double> from_array(tr::Dtype d, const tr::npz::Array &a) {
  const std::size_t size = d == tr::Dtype::fp32 ? 4 : 2;
  std::vector<double> out(a.data.size() / size);
  for (std::size_t i = 0; i < out.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, a.data.data() + i * size, size);
    float f;
    if (d == tr::Dtype::fp32) std::memcpy(&f, &bits, 4);
    else f = d == tr::Dtype::fp16 ? tr::fp16_to_float(uint16_t(bits)) : tr::bf16_to_float(uint16_t(bits));
    out[i] = f;
  }
  return out;
}

std::size_t count_of(const std::vector<int> &shape) {
  std::size_t n = 1;
  for (int d : shape) n *= std::size_t(d);
  return n;
}

// ---- nets ---------------------------------------------------------------------

struct Input {
  std::string name;
  std::vector<int> shape;
  std::vector<double> values;
};

struct Net {
  Json layers = Json::array();
  int next = 0;
  std::string fresh() { return "t" + std::to_string(next++); }
};

// Builds `layers` (the last writes "y") over `inputs`, runs it, returns y.
std::vector<double> run_net(const std::string &chip, tr::Dtype d, const Json &layers, const std::vector<Input> &inputs,
                            tr::RunResult *stats = nullptr) {
  Json net = {{"name", "expr"}, {"inputs", Json::array()}, {"layers", layers}, {"outputs", {"y"}}};
  tr::BuildOptions o;
  o.chip = chip;
  o.libraries = test::sample_ops_libraries(chip);
  o.layer_groups = false;
  for (const Input &in : inputs) {
    net["inputs"].push_back({{"name", in.name}, {"shape", in.shape}, {"dtype", tr::dtype_name(d)}});
    o.reference_inputs[in.name] = to_array(d, in.shape, in.values);
  }
  const tr::BuildResult built = tr::build_model(tr::parse_net(net, "expr.json"), o, "expr.json");
  tr::RunResult ran = tr::run_model(built.model, o.reference_inputs, "expr model");
  if (stats) *stats = ran;
  return from_array(d, ran.outputs.at("y"));
}

Json expression_layer(const std::string &formula, const std::vector<std::string> &inputs, const std::string &out,
                      const std::vector<std::string> &names = {}) {
  Json params = {{"formula", formula}};
  if (!names.empty()) params["names"] = names;
  return {{"op", "builtin.expression"}, {"params", params}, {"inputs", inputs}, {"outputs", {out}}};
}

// ---- the unfused chain ----------------------------------------------------------

// The layers of the unfused chain of node `i` of `e`; returns the tensor
// holding its value (an input's name) or, for a constant, "" with `value`.
std::string unfused(const tr::Expression &e, int i, tr::Dtype d, Net &net, double &value, const std::string &out) {
  const tr::ExprNode &n = e.nodes()[std::size_t(i)];
  if (n.op == tr::ExprOp::input) return e.inputs()[std::size_t(n.input)];
  if (n.op == tr::ExprOp::constant) {
    value = double(round_to(d, n.value));
    return "";
  }
  std::vector<std::string> tensors;
  std::vector<double> constants;
  for (int k = 0; k < tr::expr_arity(n.op); ++k) {
    double c = 0;
    tensors.push_back(unfused(e, n.operand[k], d, net, c, ""));
    constants.push_back(c);
  }
  const std::string result = out.empty() ? net.fresh() : out;
  const bool builtin_binary = n.op == tr::ExprOp::add || n.op == tr::ExprOp::sub || n.op == tr::ExprOp::mul;
  if (builtin_binary) {
    const std::string op = n.op == tr::ExprOp::add ? "builtin.add" : n.op == tr::ExprOp::sub ? "builtin.sub" : "builtin.mul";
    Json layer = {{"op", op}, {"inputs", Json::array()}, {"outputs", {result}}};
    if (tensors[0].empty() || tensors[1].empty()) {
      const bool first = tensors[0].empty();
      layer["inputs"].push_back(first ? tensors[1] : tensors[0]);
      layer["params"] = {{"scalar", first ? constants[0] : constants[1]}};
      if (first) layer["params"]["scalar_first"] = 1;
    } else {
      layer["inputs"] = {tensors[0], tensors[1]};
    }
    net.layers.push_back(layer);
    return result;
  }
  if (n.op == tr::ExprOp::relu) {
    net.layers.push_back({{"op", "builtin.relu"}, {"inputs", {tensors[0]}}, {"outputs", {result}}});
    return result;
  }
  // One operation as a formula over a, b, c (constants written out).
  std::vector<std::string> args, inputs, names;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    if (tensors[k].empty()) {
      args.push_back(fmt::format("({})", constants[k]));
      continue;
    }
    const std::string name(1, char('a' + k));
    args.push_back(name);
    inputs.push_back(tensors[k]);
    names.push_back(name);
  }
  const std::string op = tr::expr_op_name(n.op);
  std::string formula;
  if (n.op == tr::ExprOp::neg) formula = "-" + args[0];
  else if (tr::expr_arity(n.op) == 2 && !std::isalpha(static_cast<unsigned char>(op[0])))
    formula = args[0] + " " + op + " " + args[1];
  else formula = op + "(" + fmt::format("{}", fmt::join(args, ", ")) + ")";
  net.layers.push_back(expression_layer(formula, inputs, result, names));
  return result;
}

// ---- random formulas ---------------------------------------------------------------

std::string random_formula(test::Seeded &s, int inputs, int depth) {
  static const char *kConstants[] = {"0.5", "2", "1.5", "3", "0.1", "-1"};
  if (depth == 0 || s.uniform(0, 4) == 0) {
    if (s.uniform(0, 4) == 0) return kConstants[s.uniform(0, 5)];
    return std::string(1, char('a' + s.uniform(0, inputs - 1)));
  }
  const std::string x = random_formula(s, inputs, depth - 1), y = random_formula(s, inputs, depth - 1);
  static const char *kBinary[] = {"+", "-", "*", "/", "<", "<=", ">", ">=", "==", "!="};
  static const char *kUnary[] = {"abs", "relu", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh"};
  switch (s.uniform(0, 6)) {
    case 0:
    case 1:
    case 2: return "(" + x + " " + kBinary[s.uniform(0, 3)] + " " + y + ")";
    case 3: return "(" + x + " " + kBinary[s.uniform(4, 9)] + " " + y + ")";
    case 4: return std::string(kUnary[s.uniform(0, 7)]) + "(" + x + ")";
    case 5: return std::string(s.uniform(0, 1) ? "max" : "min") + "(" + x + ", " + y + ")";
    default: return "where(" + x + ", " + y + ", " + random_formula(s, inputs, depth - 1) + ")";
  }
}

// An output shape of 1..4 dims and, per input, a shape that broadcasts to it.
std::vector<std::vector<int>> random_shapes(test::Seeded &s, int inputs) {
  std::vector<int> out(std::size_t(s.uniform(1, 4)));
  for (int &d : out) d = s.uniform(1, 7);
  if (s.uniform(0, 2) == 0) out.back() = s.uniform(40, 300);
  std::vector<std::vector<int>> shapes;
  for (int i = 0; i < inputs; ++i) {
    std::vector<int> sh(out.begin() + s.uniform(0, int(out.size()) - 1), out.end());
    for (int &d : sh)
      if (s.uniform(0, 3) == 0) d = 1;
    shapes.push_back(sh);
  }
  shapes[std::size_t(s.uniform(0, inputs - 1))] = out;  // one input has the whole shape
  return shapes;
}

std::vector<double> random_values(test::Seeded &s, tr::Dtype d, std::size_t count, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(count);
  for (double &x : v) x = double(round_to(d, u(s.rng())));
  return v;
}

bool same_bits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

// A random formula over a, b, c whose root is an operation, written with
// only the inputs it reads (an unused input would still take part in the
// output's broadcast shape).
tr::Expression random_expression(test::Seeded &s) {
  const int count = s.uniform(1, 3);
  tr::Expression e = tr::Expression::parse("a");
  do {
    try {
      e = tr::Expression::parse(random_formula(s, count, 4), {"a", "b", "c"});
    } catch (const tr::Error &) {
      continue;  // no inputs
    }
  } while (e.nodes().back().op == tr::ExprOp::input || e.nodes().back().op == tr::ExprOp::constant);
  return tr::Expression::parse(e.text());
}

// The fused layer of `e` and its unfused chain on random inputs of
// `shapes`, bit for bit.
void expect_fused_equals_unfused(test::Seeded &s, const tr::Expression &e, tr::Dtype d, const std::string &chip,
                                 const std::vector<std::vector<int>> &shapes, const std::string &what) {
  std::vector<Input> inputs;
  std::string shape_list;
  for (std::size_t i = 0; i < e.inputs().size(); ++i) {
    inputs.push_back({e.inputs()[i], shapes[i], random_values(s, d, count_of(shapes[i]), -3, 3)});
    shape_list += fmt::format(" {} [{}]", e.inputs()[i], fmt::join(shapes[i], ","));
  }
  SCOPED_TRACE(fmt::format("{}: {} on {} in {}, shapes{}", what, e.text(), chip, tr::dtype_name(d), shape_list));
  Json fused = Json::array({expression_layer(e.text(), e.inputs(), "y", e.inputs())});
  Net chain;
  double unused = 0;
  unfused(e, int(e.nodes().size()) - 1, d, chain, unused, "y");
  const std::vector<double> got = run_net(chip, d, fused, inputs), want = run_net(chip, d, chain.layers, inputs);
  ASSERT_EQ(got.size(), want.size());
  int shown = 0;
  for (std::size_t i = 0; i < got.size() && shown < 5; ++i)
    if (!same_bits(got[i], want[i])) {
      ADD_FAILURE() << "element " << i << ": fused " << got[i] << ", unfused chain (" << chain.layers.size()
                    << " layers) " << want[i];
      ++shown;
    }
}

TEST(ExpressionModel, FusedEqualsUnfusedChainBitForBit) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  for (int round = 0; round < test::rounds(24); ++round) {
    const tr::Expression e = random_expression(s);
    const std::vector<std::vector<int>> shapes = random_shapes(s, int(e.inputs().size()));
    expect_fused_equals_unfused(s, e, kDtypes[round % 3], kChips[round / 3 % 2], shapes, fmt::format("round {}", round));
  }
}

// Tensors of many tiles: the fused kernel's pipelined path (two register
// sets, loads and stores beside the computation), broadcast inputs too.
TEST(ExpressionModel, FusedEqualsUnfusedChainOnManyTiles) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  for (int round = 0; round < test::rounds(6); ++round) {
    const tr::Expression e = random_expression(s);
    const std::vector<int> out = {s.uniform(2, 5), 96, s.uniform(1500, 2500)};
    std::vector<std::vector<int>> shapes(e.inputs().size(), out);
    for (std::size_t i = 1; i < shapes.size(); ++i)  // the others broadcast along some dims
      shapes[i] = s.uniform(0, 1) ? std::vector<int>{out[1], 1} : std::vector<int>{out[0], 1, out[2]};
    expect_fused_equals_unfused(s, e, kDtypes[round % 3], kChips[round / 3 % 2], shapes, fmt::format("round {}", round));
  }
}

// ---- each operation against long double -------------------------------------------

struct OpCase {
  const char *formula;  // over a (and b)
  double lo, hi;        // the inputs' range
  double bound_ulps;    // of the dtype, at the exact value
  std::function<long double(long double, long double)> exact;
};

const std::vector<OpCase> &op_cases() {
  static const std::vector<OpCase> cases = {
      {"a + b", -100, 100, 0.5, [](long double a, long double b) { return a + b; }},
      {"a - b", -100, 100, 0.5, [](long double a, long double b) { return a - b; }},
      {"a * b", -100, 100, 0.5, [](long double a, long double b) { return a * b; }},
      {"a / b", 0.5, 100, 0.5, [](long double a, long double b) { return a / b; }},
      {"-a", -100, 100, 0, [](long double a, long double) { return -a; }},
      {"abs(a)", -100, 100, 0, [](long double a, long double) { return std::fabs(a); }},
      {"relu(a)", -100, 100, 0, [](long double a, long double) { return a > 0 ? a : 0.0L; }},
      {"max(a, b)", -100, 100, 0, [](long double a, long double b) { return std::max(a, b); }},
      {"min(a, b)", -100, 100, 0, [](long double a, long double b) { return std::min(a, b); }},
      {"a > b", -2, 2, 0, [](long double a, long double b) { return a > b ? 1.0L : 0.0L; }},
      {"a <= b", -2, 2, 0, [](long double a, long double b) { return a <= b ? 1.0L : 0.0L; }},
      {"where(a > 0, a, b)", -2, 2, 0, [](long double a, long double b) { return a > 0 ? a : b; }},
      {"exp(a)", -10, 10, 0.5, [](long double a, long double) { return std::exp(a); }},
      {"log(a)", 0.01, 1000, 0.5, [](long double a, long double) { return std::log(a); }},
      {"sqrt(a)", 0, 1000, 0.5, [](long double a, long double) { return std::sqrt(a); }},
      {"rsqrt(a)", 0.01, 1000, 1.0, [](long double a, long double) { return 1 / std::sqrt(a); }},
      {"sigmoid(a)", -20, 20, 0.5, [](long double a, long double) { return 1 / (1 + std::exp(-a)); }},
      {"tanh(a)", -5, 5, 0.5, [](long double a, long double) { return std::tanh(a); }},
  };
  return cases;
}

TEST(ExpressionModel, EachOperationWithinItsDocumentedBound) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  // A margin for the emulator's double evaluation of the functions (a few
  // double ulps): docs/bdc-math.md.
  constexpr long double kSlack = 1e-6L;
  for (const OpCase &c : op_cases())
    for (int k = 0; k < 6; ++k) {
      const tr::Dtype d = kDtypes[k % 3];
      const std::string chip = kChips[k / 3];
      const std::vector<int> shape = {3, 37};
      const std::vector<Input> in = {{"a", shape, random_values(s, d, count_of(shape), c.lo, c.hi)},
                                     {"b", shape, random_values(s, d, count_of(shape), c.lo, c.hi)}};
      const std::vector<double> got =
          run_net(chip, d, Json::array({expression_layer(c.formula, {"a", "b"}, "y", {"a", "b"})}), in);
      double worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const long double exact = c.exact(in[0].values[i], in[1].values[i]);
        const long double err = std::fabs(got[i] - exact) / ulp(d, std::fabs(exact));
        worst = std::max(worst, double(err));
        if (err > c.bound_ulps + kSlack) {
          ADD_FAILURE() << c.formula << " on " << chip << " in " << tr::dtype_name(d) << ": a = " << in[0].values[i]
                        << ", b = " << in[1].values[i] << " gives " << got[i] << ", exact " << double(exact) << " ("
                        << double(err) << " ulp, bound " << c.bound_ulps << ")";
          break;
        }
      }
      RecordProperty(std::string(c.formula) + " " + tr::dtype_name(d) + " " + chip, std::to_string(worst));
    }
}

// The special values docs/expressions.md states, worked out by hand: IEEE
// maximum / minimum (a NaN wins, -0 < +0), relu(-0) = +0, where() taking a
// NaN condition as true, != true for NaN.
TEST(ExpressionModel, SpecialValuesAsDocumented) {
  REQUIRE_SAMPLE_OPS();
  const double nan = NAN, inf = INFINITY;
  const std::vector<double> a = {-0.0, 0.0, nan, inf, -inf, 1, -1}, b = {0.0, -0.0, 1, nan, 2, nan, -1};
  const struct {
    const char *formula;
    std::vector<double> want;
  } cases[] = {
      {"relu(a)", {0.0, 0.0, nan, inf, 0.0, 1, 0.0}},
      {"max(a, b)", {0.0, 0.0, nan, nan, 2, nan, -1}},
      {"min(a, b)", {-0.0, -0.0, nan, nan, -inf, nan, -1}},
      {"where(a, 1, 2)", {2, 2, 1, 1, 1, 1, 1}},
      {"a != b", {0, 0, 1, 1, 1, 1, 0}},
      {"a >= b", {1, 1, 0, 0, 0, 0, 1}},
  };
  for (const tr::Dtype d : kDtypes)
    for (const std::string chip : kChips)
      for (const auto &c : cases) {
        const std::vector<double> got = run_net(chip, d, Json::array({expression_layer(c.formula, {"a", "b"}, "y", {"a", "b"})}),
                                                {{"a", {7}, a}, {"b", {7}, b}});
        for (std::size_t i = 0; i < got.size(); ++i)
          EXPECT_TRUE(same_bits(got[i], c.want[i])) << c.formula << " on " << chip << " in " << tr::dtype_name(d)
                                                    << ", element " << i << ": " << got[i] << ", expected " << c.want[i];
      }
}

TEST(ExpressionModel, GradientRunsAsAFusedLayer) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  const tr::Expression e = tr::Expression::parse("p * sigmoid(q) + tanh(p * q) / (1 + q * q)");
  for (const std::string chip : kChips)
    for (const std::string wrt : {"p", "q"}) {
      const tr::Expression g = e.gradient(wrt);
      const std::vector<int> shape = {2, 50};
      std::vector<Input> in;
      for (const std::string &name : g.inputs())
        in.push_back({name, shape, random_values(s, tr::Dtype::fp32, count_of(shape), -2, 2)});
      std::vector<std::string> names = g.inputs();
      const std::vector<double> got =
          run_net(chip, tr::Dtype::fp32, Json::array({expression_layer(g.text(), names, "y", names)}), in);
      for (std::size_t i = 0; i < got.size(); ++i) {
        // Central differences of the formula in long double, times grad.
        const long double x = in[0].values[i], y = in[1].values[i], grad = in[2].values[i], h = 1e-6L;
        const auto f = [](long double a, long double b) {
          return a / (1 + std::exp(-b)) + std::tanh(a * b) / (1 + b * b);
        };
        const long double numeric = wrt == "p" ? (f(x + h, y) - f(x - h, y)) / (2 * h) : (f(x, y + h) - f(x, y - h)) / (2 * h);
        EXPECT_NEAR(got[i], double(grad * numeric), 1e-5 * std::max(1.0, std::fabs(double(grad * numeric))))
            << "d/d" << wrt << " of " << e.formula() << " at p = " << double(x) << ", q = " << double(y) << " on "
            << chip << ": " << g.text();
      }
    }
}

// ---- refusals -----------------------------------------------------------------------

std::string build_error(const Json &net) {
  tr::BuildOptions o;
  o.chip = "bm1684x";
  o.libraries = test::sample_ops_libraries("bm1684x");
  try {
    tr::build_model(tr::parse_net(net, "bad.json"), o, "bad.json");
  } catch (const tr::Error &e) {
    return e.what();
  }
  return "(no error)";
}

Json one_layer_net(const Json &params, const std::vector<std::pair<std::vector<int>, const char *>> &inputs) {
  Json net = {{"name", "bad"}, {"inputs", Json::array()}, {"layers", Json::array()}, {"outputs", {"y"}}};
  Json layer = {{"name", "fused"}, {"op", "builtin.expression"}, {"params", params}, {"inputs", Json::array()},
                {"outputs", {"y"}}};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    net["inputs"].push_back({{"name", name}, {"shape", inputs[i].first}, {"dtype", inputs[i].second}});
    layer["inputs"].push_back(name);
  }
  net["layers"].push_back(layer);
  return net;
}

TEST(ExpressionModel, LayerRefusals) {
  REQUIRE_SAMPLE_OPS();
  const std::string mix = build_error(one_layer_net({{"formula", "x * y"}}, {{{4}, "fp32"}, {{4}, "fp16"}}));
  EXPECT_CONTAINS(mix, "fused");
  EXPECT_CONTAINS(mix, "formula 'x * y': column 5: input 'y' is fp16 but input 'x' is fp32");
  const std::string shape = build_error(one_layer_net({{"formula", "x + y"}}, {{{4, 3}, "fp32"}, {{2, 3}, "fp32"}}));
  EXPECT_CONTAINS(shape, "formula 'x + y': column 5: input 'y' has the shape [2,3], which does not broadcast");
  EXPECT_CONTAINS(build_error(one_layer_net({{"formula", "x + erf(x)"}}, {{{4}, "fp32"}})),
                  "formula 'x + erf(x)': column 5: unsupported function 'erf'");
  EXPECT_CONTAINS(build_error(one_layer_net({{"formula", "1 + 2"}}, {{{4}, "fp32"}})),
                  "formula '1 + 2': column 1: the formula has no inputs");
  EXPECT_CONTAINS(build_error(one_layer_net({{"formula", "x + y"}}, {{{4}, "fp32"}})),
                  "it has 2 inputs (x, y), but 1 tensor is given");
  EXPECT_CONTAINS(build_error(one_layer_net({{"formula", "x"}, {"scale", 2}}, {{{4}, "fp32"}})),
                  "unknown parameter 'scale'");
  EXPECT_CONTAINS(build_error(one_layer_net({{"formula", "x / 2"}}, {{{4}, "int8"}})),
                  "'/' on int8 is not supported; integer expressions take + - * max min the comparisons");
  EXPECT_CONTAINS(build_error(one_layer_net({{"formula", "x + 300"}}, {{{4}, "int8"}})),
                  "formula 'x + 300': column 5: the constant 300 is not an integer in [-128, 127]");
  EXPECT_CONTAINS(build_error(one_layer_net({{"formula", "x * 0.5"}}, {{{4}, "int32"}})),
                  "the constant 0.5 is not an integer in [-16777216, 16777216]");
}

// ---- the fused kernel's traffic ----------------------------------------------------

TEST(ExpressionModel, EachInputLoadedOnceAndTheOutputStoredOnce) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  const std::vector<int> shape = {8, 64, 512};  // many tiles: the pipelined path
  for (const std::string chip : kChips) {
    std::vector<Input> in;
    for (const char *name : {"a", "b", "c"})
      in.push_back({name, shape, random_values(s, tr::Dtype::fp16, count_of(shape), -2, 2)});
    tr::RunResult stats;
    const std::vector<double> got = run_net(
        chip, tr::Dtype::fp16, Json::array({expression_layer("a*a + b*c", {"a", "b", "c"}, "y")}), in, &stats);
    ASSERT_EQ(stats.layers.size(), 1u);
    // Three inputs in, one output out, two bytes each (plus the tables' loads: none for this formula).
    EXPECT_EQ(stats.layers[0].gdma_bytes, 4 * count_of(shape) * 2) << chip;
    for (std::size_t i = 0; i < got.size(); i += 997) {
      const long double x = in[0].values[i], y = in[1].values[i], z = in[2].values[i];
      const long double want = round_to(tr::Dtype::fp16, round_to(tr::Dtype::fp16, x * x) + round_to(tr::Dtype::fp16, y * z));
      EXPECT_EQ(got[i], double(want)) << chip << " element " << i;
    }
  }
}

// A broadcast input whose part is the same in every tile (here a scalar-like
// [1] and a row [512] against [8, 64, 512]: the tiles walk the rows) is
// loaded once per register set and tile shape, not with every tile: the
// GDMA moves x in and y out and little more, where loading both broadcast
// inputs with each tile moved as many bytes again as x twice.
TEST(ExpressionModel, BroadcastInputsTheTilesShareAreLoadedOnce) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  const std::vector<int> shape = {8, 64, 512}, scalar = {1}, row = {512};
  for (const std::string chip : kChips) {
    const std::vector<Input> in = {{"x", shape, random_values(s, tr::Dtype::fp16, count_of(shape), -2, 2)},
                                   {"s", scalar, random_values(s, tr::Dtype::fp16, 1, -2, 2)},
                                   {"w", row, random_values(s, tr::Dtype::fp16, count_of(row), -2, 2)}};
    tr::RunResult stats;
    const std::vector<double> got = run_net(
        chip, tr::Dtype::fp16, Json::array({expression_layer("x * s + w", {"x", "s", "w"}, "y")}), in, &stats);
    ASSERT_EQ(stats.layers.size(), 1u);
    const uint64_t whole = count_of(shape) * 2;  // bytes of x, and of y
    EXPECT_GE(stats.layers[0].gdma_bytes, 2 * whole) << chip;
    EXPECT_LT(stats.layers[0].gdma_bytes, 2 * whole + whole / 2) << chip;
    for (std::size_t i = 0; i < got.size(); i += 991) {
      const long double x = in[0].values[i], c = in[1].values[0], w = in[2].values[i % 512];
      const long double want = round_to(tr::Dtype::fp16, round_to(tr::Dtype::fp16, x * c) + w);
      EXPECT_EQ(got[i], double(want)) << chip << " element " << i;
    }
  }
}

}  // namespace
