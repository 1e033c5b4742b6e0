// expression.cc: the formula grammar's parser, printing, double
// evaluation, broadcasting and symbolic gradient (tpu_runtime/expression.h).
#include "tpu_runtime/expression.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>

#include "io/arrays.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {

namespace {

struct OpInfo {
  ExprOp op;
  const char *name;
  int arity;
};

constexpr OpInfo kOps[] = {
    {ExprOp::input, "input", 0},    {ExprOp::constant, "constant", 0}, {ExprOp::add, "+", 2},
    {ExprOp::sub, "-", 2},          {ExprOp::mul, "*", 2},             {ExprOp::div, "/", 2},
    {ExprOp::max, "max", 2},        {ExprOp::min, "min", 2},           {ExprOp::gt, ">", 2},
    {ExprOp::ge, ">=", 2},          {ExprOp::lt, "<", 2},              {ExprOp::le, "<=", 2},
    {ExprOp::eq, "==", 2},          {ExprOp::ne, "!=", 2},             {ExprOp::neg, "-", 1},
    {ExprOp::abs, "abs", 1},        {ExprOp::relu, "relu", 1},         {ExprOp::exp, "exp", 1},
    {ExprOp::log, "log", 1},        {ExprOp::sqrt, "sqrt", 1},         {ExprOp::rsqrt, "rsqrt", 1},
    {ExprOp::sigmoid, "sigmoid", 1}, {ExprOp::tanh, "tanh", 1},        {ExprOp::where, "where", 3},
};

const OpInfo &info(ExprOp op) {
  for (const OpInfo &i : kOps)
    if (i.op == op) return i;
  return kOps[0];
}

// The functions called by name (the operators have their own syntax).
constexpr ExprOp kFunctions[] = {ExprOp::abs,  ExprOp::relu, ExprOp::exp,     ExprOp::log,  ExprOp::sqrt,
                                 ExprOp::rsqrt, ExprOp::sigmoid, ExprOp::tanh, ExprOp::max, ExprOp::min,
                                 ExprOp::where};

std::optional<ExprOp> function_named(std::string_view name) {
  for (ExprOp op : kFunctions)
    if (name == info(op).name) return op;
  return std::nullopt;
}

bool is_compare(ExprOp op) { return op >= ExprOp::gt && op <= ExprOp::ne; }

// IEEE 754-2019 maximum / minimum, as the engine's max and min: a NaN
// operand wins, -0 < +0.
double ieee_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double ieee_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

double apply(ExprOp op, double a, double b, double c) {
  switch (op) {
    case ExprOp::add: return a + b;
    case ExprOp::sub: return a - b;
    case ExprOp::mul: return a * b;
    case ExprOp::div: return a / b;
    case ExprOp::max: return ieee_max(a, b);
    case ExprOp::min: return ieee_min(a, b);
    case ExprOp::gt: return a > b ? 1 : 0;
    case ExprOp::ge: return a >= b ? 1 : 0;
    case ExprOp::lt: return a < b ? 1 : 0;
    case ExprOp::le: return a <= b ? 1 : 0;
    case ExprOp::eq: return a == b ? 1 : 0;
    case ExprOp::ne: return a != b ? 1 : 0;
    case ExprOp::neg: return -a;
    case ExprOp::abs: return std::fabs(a);
    case ExprOp::relu: return std::isnan(a) ? a : a > 0 ? a : 0.0;
    case ExprOp::exp: return std::exp(a);
    case ExprOp::log: return std::log(a);
    case ExprOp::sqrt: return std::sqrt(a);
    case ExprOp::rsqrt: return 1 / std::sqrt(a);
    case ExprOp::sigmoid: return 1 / (1 + std::exp(-a));
    case ExprOp::tanh: return std::tanh(a);
    case ExprOp::where: return a != 0 ? b : c;
    case ExprOp::input:
    case ExprOp::constant: break;
  }
  return 0;
}

// ---- parsing -----------------------------------------------------------------

struct Token {
  enum Kind { end, number, name, op } kind = end;
  std::string text;
  double value = 0;
  int column = 1;
};

}  // namespace

// Builds an Expression's nodes: the parser and gradient() go through it.
class ExpressionBuilder {
 public:
  ExpressionBuilder(Expression &e) : e_(e) {}

  [[noreturn]] void fail(int column, const std::string &what) const {
    throw Error(fmt::format("formula '{}': column {}: {}", e_.formula_, column, what));
  }

  // A node; operands that are all constants fold into one constant.
  int add(ExprOp op, int a, int b, int c, int column) {
    ExprNode n;
    n.op = op;
    n.operand[0] = a, n.operand[1] = b, n.operand[2] = c;
    n.column = column;
    const int arity = expr_arity(op);
    bool constant = arity > 0;
    for (int i = 0; i < arity; ++i) constant = constant && e_.nodes_[std::size_t(n.operand[i])].op == ExprOp::constant;
    if (constant) {
      double v[3] = {0, 0, 0};
      for (int i = 0; i < arity; ++i) v[i] = e_.nodes_[std::size_t(n.operand[i])].value;
      return constant_node(apply(op, v[0], v[1], v[2]), column);
    }
    e_.nodes_.push_back(n);
    return int(e_.nodes_.size()) - 1;
  }
  int constant_node(double value, int column) {
    ExprNode n;
    n.op = ExprOp::constant;
    n.value = value;
    n.column = column;
    e_.nodes_.push_back(n);
    return int(e_.nodes_.size()) - 1;
  }
  int input_node(int input, int column) {
    ExprNode n;
    n.op = ExprOp::input;
    n.input = input;
    n.column = column;
    e_.nodes_.push_back(n);
    return int(e_.nodes_.size()) - 1;
  }
  const ExprNode &node(int i) const { return e_.nodes_[std::size_t(i)]; }

  Expression &e_;
};

namespace {

class Parser {
 public:
  Parser(Expression &e, const std::string &text, const std::vector<std::string> &names, bool names_given)
      : b_(e), text_(text), names_(names), names_given_(names_given) {
    next();
  }

  std::vector<std::string> names() const { return names_; }

  int formula() {
    const int root = compare();
    if (tok_.kind != Token::end) b_.fail(tok_.column, fmt::format("unexpected '{}' after a complete formula", tok_.text));
    return root;
  }

 private:
  void next() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    tok_ = Token{};
    tok_.column = int(pos_) + 1;
    if (pos_ >= text_.size()) return;
    const char ch = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      tok_.kind = Token::name;
      tok_.text = text_.substr(start, pos_ - start);
      return;
    }
    for (const char *two : {"<=", ">=", "==", "!="})
      if (text_.compare(pos_, 2, two) == 0) {
        tok_ = {Token::op, two, 0, tok_.column};
        pos_ += 2;
        return;
      }
    if (std::string_view("+-*/()<>,").find(ch) == std::string_view::npos)
      b_.fail(tok_.column, fmt::format("unexpected character '{}' (formulas use + - * / < <= > >= == != ( ) , "
                                       "numbers, input names and functions)",
                                       ch));
    tok_ = {Token::op, std::string(1, ch), 0, tok_.column};
    ++pos_;
  }

  void number() {
    const char *begin = text_.c_str() + pos_;
    char *end = nullptr;
    const double v = std::strtod(begin, &end);
    const std::size_t length = std::size_t(end - begin);
    if (length == 0 || (length == 1 && *begin == '.'))
      b_.fail(tok_.column, "a '.' that starts no number");
    // strtod also reads hex, inf and nan; the grammar's numbers are decimal.
    for (std::size_t i = 0; i < length; ++i)
      if (std::string_view("0123456789.eE+-").find(begin[i]) == std::string_view::npos)
        b_.fail(tok_.column, fmt::format("'{}' is not a decimal number", std::string(begin, length)));
    if (!std::isfinite(v)) b_.fail(tok_.column, fmt::format("the number {} is too large", std::string(begin, length)));
    tok_.kind = Token::number;
    tok_.text.assign(begin, length);
    tok_.value = v;
    pos_ += length;
  }

  bool at(const char *op) const { return tok_.kind == Token::op && tok_.text == op; }

  void expect(const char *op, const char *why) {
    if (!at(op)) b_.fail(tok_.column, fmt::format("expected '{}' {}, found {}", op, why, found()));
    next();
  }

  std::string found() const {
    return tok_.kind == Token::end ? "the end of the formula" : fmt::format("'{}'", tok_.text);
  }

  int compare() {
    const int left = sum();
    static constexpr std::pair<const char *, ExprOp> kCompares[] = {
        {"<", ExprOp::lt}, {"<=", ExprOp::le}, {">", ExprOp::gt}, {">=", ExprOp::ge}, {"==", ExprOp::eq}, {"!=", ExprOp::ne}};
    for (const auto &[text, op] : kCompares)
      if (at(text)) {
        const int column = tok_.column;
        next();
        const int right = sum();
        for (const auto &other : kCompares)
          if (at(other.first))
            b_.fail(tok_.column, "comparisons do not chain (a < b < c); combine them with where() or '*'");
        return b_.add(op, left, right, -1, column);
      }
    return left;
  }

  int sum() {
    int left = product();
    while (at("+") || at("-")) {
      const ExprOp op = at("+") ? ExprOp::add : ExprOp::sub;
      const int column = tok_.column;
      next();
      left = b_.add(op, left, product(), -1, column);
    }
    return left;
  }

  int product() {
    int left = unary();
    while (at("*") || at("/")) {
      const ExprOp op = at("*") ? ExprOp::mul : ExprOp::div;
      const int column = tok_.column;
      next();
      left = b_.add(op, left, unary(), -1, column);
    }
    return left;
  }

  int unary() {
    if (at("+")) {
      next();
      return unary();
    }
    if (at("-")) {
      const int column = tok_.column;
      next();
      return b_.add(ExprOp::neg, unary(), -1, -1, column);
    }
    return primary();
  }

  int primary() {
    const Token t = tok_;
    if (t.kind == Token::number) {
      next();
      return b_.constant_node(t.value, t.column);
    }
    if (at("(")) {
      next();
      const int inner = compare();
      expect(")", fmt::format("to close the '(' at column {}", t.column).c_str());
      return inner;
    }
    if (t.kind != Token::name) b_.fail(t.column, fmt::format("expected a number, an input or '(', found {}", found()));
    next();
    if (at("(")) return call(t);
    return input(t);
  }

  int input(const Token &t) {
    auto it = std::find(names_.begin(), names_.end(), t.text);
    if (it == names_.end()) {
      if (function_named(t.text))
        b_.fail(t.column, fmt::format("'{}' is a function: write {}(...)", t.text, t.text));
      if (names_given_)
        b_.fail(t.column, fmt::format("unknown input '{}' (the inputs are: {})", t.text, fmt::join(names_, ", ")));
      names_.push_back(t.text);
      it = names_.end() - 1;
    }
    return b_.input_node(int(it - names_.begin()), t.column);
  }

  int call(const Token &t) {
    const std::optional<ExprOp> op = function_named(t.text);
    if (!op)
      b_.fail(t.column, fmt::format("unsupported function '{}' (functions: {})", t.text, Expression::function_list()));
    next();  // '('
    std::vector<int> args;
    if (!at(")")) {
      args.push_back(compare());
      while (at(",")) {
        next();
        args.push_back(compare());
      }
    }
    const int arity = expr_arity(*op);
    if (int(args.size()) != arity)
      b_.fail(t.column, fmt::format("{}() takes {} argument{}, not {}", t.text, arity, arity == 1 ? "" : "s",
                                    args.size()));
    expect(")", fmt::format("to close {}( at column {}", t.text, t.column).c_str());
    args.resize(3, -1);
    return b_.add(*op, args[0], args[1], args[2], t.column);
  }

  ExpressionBuilder b_;
  const std::string &text_;
  std::vector<std::string> names_;
  bool names_given_;
  std::size_t pos_ = 0;
  Token tok_;
};

// The nodes reachable from the root, renumbered in order (drops what the
// derivative built but did not use).
std::vector<ExprNode> reachable(const std::vector<ExprNode> &nodes, int root) {
  std::vector<int> keep(nodes.size(), -1);
  std::vector<int> stack = {root};
  std::vector<bool> used(nodes.size(), false);
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (used[std::size_t(i)]) continue;
    used[std::size_t(i)] = true;
    for (int k = 0; k < expr_arity(nodes[std::size_t(i)].op); ++k) stack.push_back(nodes[std::size_t(i)].operand[k]);
  }
  std::vector<ExprNode> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!used[i]) continue;
    ExprNode n = nodes[i];
    for (int k = 0; k < expr_arity(n.op); ++k) n.operand[k] = keep[std::size_t(n.operand[k])];
    keep[i] = int(out.size());
    out.push_back(n);
  }
  return out;
}


// ---- printing ----------------------------------------------------------------

int precedence(ExprOp op) {
  if (is_compare(op)) return 1;
  if (op == ExprOp::add || op == ExprOp::sub) return 2;
  if (op == ExprOp::mul || op == ExprOp::div) return 3;
  if (op == ExprOp::neg) return 4;
  return 5;  // calls, inputs, constants
}

std::string number_text(double v) {
  std::string s = fmt::format("{}", v);  // the shortest text that reads back as v
  return v < 0 || (v == 0 && std::signbit(v)) ? "(" + s + ")" : s;
}

std::string print(const Expression &e, int i) {
  const ExprNode &n = e.nodes()[std::size_t(i)];
  const auto sub = [&](int k, int min_prec) {
    const std::string s = print(e, n.operand[k]);
    return precedence(e.nodes()[std::size_t(n.operand[k])].op) < min_prec ? "(" + s + ")" : s;
  };
  switch (n.op) {
    case ExprOp::input: return e.inputs()[std::size_t(n.input)];
    case ExprOp::constant: return number_text(n.value);
    case ExprOp::neg: return "-" + sub(0, 5);
    default: break;
  }
  const int p = precedence(n.op);
  if (p <= 3) {  // binary operators; the right side binds tighter (a - (b - c)); comparisons never chain
    return fmt::format("{} {} {}", sub(0, p == 1 ? 2 : p), expr_op_name(n.op), sub(1, p + 1));
  }
  std::vector<std::string> args;
  for (int k = 0; k < expr_arity(n.op); ++k) args.push_back(print(e, n.operand[k]));
  return fmt::format("{}({})", expr_op_name(n.op), fmt::join(args, ", "));
}

}  // namespace

int expr_arity(ExprOp op) { return info(op).arity; }
const char *expr_op_name(ExprOp op) { return info(op).name; }

std::string Expression::function_list() {
  std::vector<std::string> names;
  for (ExprOp op : kFunctions) names.push_back(info(op).name);
  return fmt::format("{}", fmt::join(names, ", "));
}

Expression Expression::parse(std::string_view formula, const std::vector<std::string> &names) {
  Expression e;
  e.formula_ = std::string(formula);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string &n = names[i];
    const bool identifier = !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_') &&
                            std::all_of(n.begin(), n.end(), [](char c) {
                              return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                            });
    if (!identifier || function_named(n))
      throw Error(fmt::format("formula '{}': input name '{}' is not a name the formula can use (letters, digits, "
                              "'_', not a function)",
                              formula, n));
    if (std::find(names.begin(), names.begin() + std::ptrdiff_t(i), n) != names.begin() + std::ptrdiff_t(i))
      throw Error(fmt::format("formula '{}': input name '{}' is given twice", formula, n));
  }
  if (formula.find_first_not_of(" \t\n\r") == std::string_view::npos)
    throw Error("the formula is empty: write one such as 'x * x + y * z'");
  Parser p(e, e.formula_, names, !names.empty());
  const int root = p.formula();
  e.nodes_ = reachable(e.nodes_, root);  // drops the operands of folded constants
  e.inputs_ = p.names();
  if (std::none_of(e.nodes_.begin(), e.nodes_.end(), [](const ExprNode &n) { return n.op == ExprOp::input; }))
    throw Error(fmt::format("formula '{}': column 1: the formula has no inputs (it is the constant {}); an "
                            "expression layer computes from at least one tensor",
                            formula, e.nodes_.back().value));
  return e;
}

std::string Expression::text() const { return print(*this, int(nodes_.size()) - 1); }

int Expression::first_column(std::size_t input) const {
  int column = 0;
  for (const ExprNode &n : nodes_)
    if (n.op == ExprOp::input && std::size_t(n.input) == input && (column == 0 || n.column < column))
      column = n.column;
  return column;
}

// An integer dtype: to nearest even, then wrapped to the dtype's width (the
// kernel's integer add, sub and mul store the low bits of the exact result).
double round_to_int_dtype(double x, Dtype dtype) {
  if (!std::isfinite(x)) return 0;
  const double bits = double(dtype_size(dtype) * 8), span = std::ldexp(1.0, int(bits));
  const bool is_signed = dtype == Dtype::int8 || dtype == Dtype::int16 || dtype == Dtype::int32;
  double r = std::fmod(std::nearbyint(x), span);
  if (r < 0) r += span;
  if (is_signed && r >= span / 2) r -= span;
  return r;
}

double round_to_dtype(double x, Dtype dtype) {
  if (!dtype_info(dtype).is_float) return round_to_int_dtype(x, dtype);
  if (dtype == Dtype::fp32) {
    // One IEEE rounding; past the largest float by half an ulp or more (a
    // tie rounds to the even infinity) the result is infinite, and the
    // conversion is only defined inside float's range.
    const double largest = double(std::numeric_limits<float>::max()), overflow = 0x1.ffffffp+127;
    if (std::isfinite(x) && std::fabs(x) > largest)
      return std::fabs(x) >= overflow ? std::copysign(INFINITY, x) : std::copysign(largest, x);
    return double(float(x));
  }
  if (x == 0 || !std::isfinite(x)) return x;
  const int significand = dtype == Dtype::fp16 ? 11 : 8;
  const int min_exponent = dtype == Dtype::fp16 ? -14 : -126;
  const double largest = dtype == Dtype::fp16 ? 65504.0 : std::ldexp(255.0, 120);
  const int e = std::max(std::ilogb(x), min_exponent);
  const int shift = significand - 1 - e;
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, shift)), -shift);  // ties to even
  if (std::fabs(r) > largest) return std::copysign(INFINITY, x);
  return r;
}

namespace {

template <typename Round>
double evaluate_with(const Expression &e, std::span<const double> inputs, Round &&round) {
  const std::vector<ExprNode> &nodes = e.nodes();
  std::vector<double> v(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ExprNode &n = nodes[i];
    if (n.op == ExprOp::input) v[i] = inputs[std::size_t(n.input)];
    else if (n.op == ExprOp::constant) v[i] = round(n.value);
    else {
      double a[3] = {0, 0, 0};
      for (int k = 0; k < expr_arity(n.op); ++k) a[k] = v[std::size_t(n.operand[k])];
      v[i] = round(apply(n.op, a[0], a[1], a[2]));
    }
  }
  return v.back();
}

// An exact 64-bit result wrapped to an integer dtype's width (two's
// complement: its low bits, as numpy's int32 arithmetic and the kernel's
// integer add, sub and mul keep them).
int64_t wrap_to_int_dtype(uint64_t bits, Dtype dtype) {
  const int width = int(dtype_size(dtype) * 8);
  const uint64_t low = width == 64 ? bits : bits & ((uint64_t(1) << width) - 1);
  const bool is_signed = dtype == Dtype::int8 || dtype == Dtype::int16 || dtype == Dtype::int32;
  if (is_signed && width < 64 && (low >> (width - 1)) != 0) return int64_t(low) - (int64_t(1) << width);
  return int64_t(low);
}

// One operation of the integer kernel on exact values (add, sub and mul in
// 64-bit modular arithmetic, whose low bits are exact), before the wrap.
uint64_t apply_integer(ExprOp op, int64_t a, int64_t b, int64_t c) {
  const uint64_t ua = uint64_t(a), ub = uint64_t(b);
  switch (op) {
    case ExprOp::add: return ua + ub;
    case ExprOp::sub: return ua - ub;
    case ExprOp::mul: return ua * ub;
    case ExprOp::neg: return uint64_t(0) - ua;
    case ExprOp::max: return uint64_t(std::max(a, b));
    case ExprOp::min: return uint64_t(std::min(a, b));
    case ExprOp::relu: return uint64_t(a > 0 ? a : 0);
    case ExprOp::where: return uint64_t(a != 0 ? b : c);
    default: break;
  }
  // The comparisons; anything else is a float function the integer kernel refuses (check_integer_formula).
  return uint64_t(int64_t(apply(op, double(a), double(b), double(c))));
}

// evaluate_rounded for an integer dtype: exact at any magnitude (doubles
// would round products above 2^53 before the wrap). The inputs are values
// of the dtype, which doubles hold exactly.
double evaluate_integer(const Expression &e, std::span<const double> inputs, Dtype dtype) {
  const std::vector<ExprNode> &nodes = e.nodes();
  std::vector<int64_t> v(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ExprNode &n = nodes[i];
    if (n.op == ExprOp::input) {
      v[i] = int64_t(round_to_dtype(inputs[std::size_t(n.input)], dtype));
    } else if (n.op == ExprOp::constant) {
      v[i] = int64_t(round_to_dtype(n.value, dtype));
    } else {
      int64_t a[3] = {0, 0, 0};
      for (int k = 0; k < expr_arity(n.op); ++k) a[k] = v[std::size_t(n.operand[k])];
      v[i] = wrap_to_int_dtype(apply_integer(n.op, a[0], a[1], a[2]), dtype);
    }
  }
  return double(v.back());
}

}  // namespace

double Expression::evaluate(std::span<const double> inputs) const {
  return evaluate_with(*this, inputs, [](double x) { return x; });
}

double Expression::evaluate_rounded(std::span<const double> inputs, Dtype dtype) const {
  if (!dtype_info(dtype).is_float) return evaluate_integer(*this, inputs, dtype);
  return evaluate_with(*this, inputs, [dtype](double x) { return round_to_dtype(x, dtype); });
}

Shape Expression::output_shape(const std::vector<Shape> &shapes) const {
  if (shapes.size() != inputs_.size())
    throw Error(fmt::format("formula '{}': it has {} input{} ({}), but {} tensor{} given", formula_, inputs_.size(),
                            inputs_.size() == 1 ? "" : "s", fmt::join(inputs_, ", "), shapes.size(),
                            shapes.size() == 1 ? " is" : "s are"));
  Shape out;
  std::vector<std::size_t> from;  // which input set each dim of `out` (for messages)
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape &s = shapes[i];
    if (s.size() > out.size()) {
      out.insert(out.begin(), s.size() - out.size(), 1);
      from.insert(from.begin(), s.size() - from.size(), i);
    }
    for (std::size_t d = 0; d < s.size(); ++d) {
      const std::size_t o = out.size() - s.size() + d;
      if (s[d] == out[o] || s[d] == 1) continue;
      if (out[o] != 1)
        throw Error(fmt::format("formula '{}': column {}: input '{}' has the shape {}, which does not broadcast "
                                "with input '{}' {} (dim {} from the right: {} vs {})",
                                formula_, first_column(i), inputs_[i], detail::shape_text(s), inputs_[from[o]],
                                detail::shape_text(shapes[from[o]]), s.size() - d, s[d], out[o]));
      out[o] = s[d];
      from[o] = i;
    }
  }
  return out;
}

// ---- gradient ----------------------------------------------------------------

namespace {

// Builds d(node)/d(input) as nodes of `g` (a copy of the formula's nodes
// plus the derivative's), simplifying products with 0 and 1.
class Differentiator {
 public:
  Differentiator(Expression &g, int wrt) : b_(g), wrt_(wrt) {}

  bool zero(int i) const { return b_.node(i).op == ExprOp::constant && b_.node(i).value == 0; }
  bool one(int i) const { return b_.node(i).op == ExprOp::constant && b_.node(i).value == 1; }
  int k(double v) { return b_.constant_node(v, 0); }
  int op(ExprOp o, int a, int b = -1, int c = -1) { return b_.add(o, a, b, c, 0); }
  int plus(int a, int b) { return zero(a) ? b : zero(b) ? a : op(ExprOp::add, a, b); }
  int minus(int a, int b) { return zero(b) ? a : zero(a) ? op(ExprOp::neg, b) : op(ExprOp::sub, a, b); }
  int times(int a, int b) {
    if (zero(a) || zero(b)) return k(0);
    return one(a) ? b : one(b) ? a : op(ExprOp::mul, a, b);
  }
  int over(int a, int b) { return zero(a) ? k(0) : op(ExprOp::div, a, b); }

  // d/dx of node i, memoised.
  int d(int i) {
    if (auto it = memo_.find(i); it != memo_.end()) return it->second;
    const int r = rule(i);
    memo_[i] = r;
    return r;
  }

 private:
  int rule(int i) {
    const ExprNode n = b_.node(i);
    const int a = n.operand[0], b = n.operand[1], c = n.operand[2];
    switch (n.op) {
      case ExprOp::input: return k(n.input == wrt_ ? 1 : 0);
      case ExprOp::constant: return k(0);
      case ExprOp::add: return plus(d(a), d(b));
      case ExprOp::sub: return minus(d(a), d(b));
      case ExprOp::mul: return plus(times(d(a), b), times(a, d(b)));
      case ExprOp::div: return minus(over(d(a), b), over(times(a, d(b)), times(b, b)));
      case ExprOp::max: return select(op(ExprOp::ge, a, b), d(a), d(b));  // ties take a
      case ExprOp::min: return select(op(ExprOp::le, a, b), d(a), d(b));
      case ExprOp::neg: return zero(d(a)) ? k(0) : op(ExprOp::neg, d(a));
      case ExprOp::abs:  // sign(a) da, 0 at a = 0
        return select(op(ExprOp::gt, a, k(0)), d(a), select(op(ExprOp::lt, a, k(0)), minus(k(0), d(a)), k(0)));
      case ExprOp::relu: return select(op(ExprOp::gt, a, k(0)), d(a), k(0));
      case ExprOp::exp: return times(d(a), i);
      case ExprOp::log: return over(d(a), a);
      case ExprOp::sqrt: return over(d(a), times(k(2), i));
      case ExprOp::rsqrt: return times(d(a), over(times(k(-0.5), i), a));  // -1/2 a^-3/2
      case ExprOp::sigmoid: return times(d(a), times(i, minus(k(1), i)));
      case ExprOp::tanh: return times(d(a), minus(k(1), times(i, i)));
      case ExprOp::where: return select(a, d(b), d(c));
      default: return k(0);  // comparisons: piecewise constant
    }
  }
  int select(int cond, int a, int b) {
    if (zero(a) && zero(b)) return k(0);
    return op(ExprOp::where, cond, a, b);
  }

  ExpressionBuilder b_;
  int wrt_;
  std::map<int, int> memo_;
};

}  // namespace

Expression Expression::gradient(std::string_view name, std::string_view grad_name) const {
  const auto it = std::find(inputs_.begin(), inputs_.end(), name);
  if (it == inputs_.end())
    throw Error(fmt::format("formula '{}': no input named '{}' to differentiate by (the inputs are: {})", formula_,
                            name, fmt::join(inputs_, ", ")));
  if (std::find(inputs_.begin(), inputs_.end(), grad_name) != inputs_.end())
    throw Error(fmt::format("formula '{}': the gradient's input '{}' is already an input of the formula; choose "
                            "another grad_name",
                            formula_, grad_name));
  Expression g = *this;
  g.inputs_.push_back(std::string(grad_name));
  const int root = int(nodes_.size()) - 1;
  Differentiator diff(g, int(it - inputs_.begin()));
  const int derivative = diff.d(root);
  ExpressionBuilder b(g);
  const int grad = b.input_node(int(g.inputs_.size()) - 1, 0);
  // grad * 0 stays a product: it keeps the gradient's shape (and its NaN).
  const int top = diff.one(derivative) ? grad : b.add(ExprOp::mul, grad, derivative, -1, 0);
  g.nodes_ = reachable(g.nodes_, top);
  g.formula_ = g.text();
  // Columns refer to the new text only through its own parse.
  return Expression::parse(g.formula_, g.inputs_);
}

}  // namespace tpu_runtime
