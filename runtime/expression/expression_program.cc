// expression_program.cc: a formula's register program (expression_kernel.h):
// Sethi-Ullman order, then registers handed out as values die.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "expression/expression_kernel.h"
#include "io/arrays.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

bool is_leaf(ExprOp op) { return op == ExprOp::input || op == ExprOp::constant; }

// Registers a subtree needs beyond the inputs' (which are loaded anyway):
// the operands evaluated largest first, the k-th while k results wait.
std::vector<int> register_needs(const std::vector<ExprNode> &nodes) {
  std::vector<int> need(nodes.size(), 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ExprNode &n = nodes[i];
    if (is_leaf(n.op)) continue;
    std::vector<int> operands;
    for (int k = 0; k < expr_arity(n.op); ++k)
      if (!is_leaf(nodes[std::size_t(n.operand[k])].op)) operands.push_back(need[std::size_t(n.operand[k])]);
    std::sort(operands.rbegin(), operands.rend());
    int worst = 1;
    for (std::size_t k = 0; k < operands.size(); ++k) worst = std::max(worst, operands[k] + int(k));
    need[i] = worst;
  }
  return need;
}

// The operations in evaluation order: post-order, the hungrier operand first.
void order(const std::vector<ExprNode> &nodes, const std::vector<int> &need, int i, std::vector<int> &out) {
  const ExprNode &n = nodes[std::size_t(i)];
  if (is_leaf(n.op)) return;
  std::vector<int> operands(n.operand, n.operand + expr_arity(n.op));
  std::stable_sort(operands.begin(), operands.end(),
                   [&](int a, int b) { return need[std::size_t(a)] > need[std::size_t(b)]; });
  for (int k : operands) order(nodes, need, k, out);
  out.push_back(i);
}

class Allocator {
 public:
  int take() {
    if (!free_.empty()) {
      const int r = free_.back();
      free_.pop_back();
      return r;
    }
    return count_++;
  }
  void give(int r) { free_.push_back(r); }
  int count() const { return count_; }

 private:
  std::vector<int> free_;
  int count_ = 0;
};

// The integer kernel: add, sub, mul (wrapped), max, min, the comparisons,
// neg (0 - x wrapped), relu and where; a constant must be an integer the
// dtype holds and fp32 holds exactly (the program keeps constants as fp32).
void check_integer_formula(const Expression &e, Dtype dtype) {
  const double low = dtype == Dtype::int8 ? -128 : dtype == Dtype::int16 ? -32768 : dtype == Dtype::int32 ? -16777216 : 0;
  const double high = dtype == Dtype::int8 ? 127 : dtype == Dtype::uint8 ? 255 : dtype == Dtype::int16 ? 32767
                      : dtype == Dtype::uint16 ? 65535 : 16777216;
  for (const ExprNode &n : e.nodes()) {
    const bool supported = n.op == ExprOp::input || n.op == ExprOp::constant || n.op == ExprOp::add ||
                           n.op == ExprOp::sub || n.op == ExprOp::mul || n.op == ExprOp::max || n.op == ExprOp::min ||
                           (n.op >= ExprOp::gt && n.op <= ExprOp::ne) || n.op == ExprOp::neg ||
                           n.op == ExprOp::relu || n.op == ExprOp::where;
    if (!supported)
      throw Error(fmt::format("formula '{}': column {}: '{}' on {} is not supported; integer expressions take + - * "
                              "max min the comparisons, neg, relu and where (abs(x): write max(x, -x))",
                              e.formula(), n.column, expr_op_name(n.op), dtype_name(dtype)));
    if (n.op == ExprOp::constant && (n.value != std::nearbyint(n.value) || n.value < low || n.value > high))
      throw Error(fmt::format("formula '{}': column {}: the constant {} is not an integer in [{}, {}] ({} within "
                              "fp32's exact integers)",
                              e.formula(), n.column, n.value, low, high, dtype_name(dtype)));
  }
}

}  // namespace

ExprProgram compile_expression(const Expression &e, Dtype dtype, bool read_only_inputs, uint32_t kept_inputs) {
  const std::vector<ExprNode> &nodes = e.nodes();
  if (e.inputs().size() > std::size_t(kExprMaxInputs))
    throw Error(fmt::format("formula '{}': {} inputs; the fused kernel takes at most {}", e.formula(),
                            e.inputs().size(), kExprMaxInputs));
  if (!dtype_info(dtype).is_float) check_integer_formula(e, dtype);
  ExprProgram p;
  p.inputs = int(e.inputs().size());
  const std::vector<int> need = register_needs(nodes);
  std::vector<int> sequence;
  const int root = int(nodes.size()) - 1;
  order(nodes, need, root, sequence);
  if (sequence.size() + 1 > std::size_t(kExprMaxSteps))
    throw Error(fmt::format("formula '{}': {} operations; the fused kernel takes at most {}", e.formula(),
                            sequence.size(), kExprMaxSteps - 1));
  // The last step reading each value: input values by input, results by node.
  std::vector<int> input_last(e.inputs().size(), -1), node_last(nodes.size(), -1);
  for (std::size_t s = 0; s < sequence.size(); ++s) {
    const ExprNode &n = nodes[std::size_t(sequence[s])];
    for (int k = 0; k < expr_arity(n.op); ++k) {
      const ExprNode &o = nodes[std::size_t(n.operand[k])];
      if (o.op == ExprOp::input) input_last[std::size_t(o.input)] = int(s);
      else node_last[std::size_t(n.operand[k])] = int(s);
    }
  }
  Allocator regs;
  std::fill(p.input_register, p.input_register + kExprMaxInputs, -1);
  for (std::size_t i = 0; i < e.inputs().size(); ++i)
    if (input_last[i] >= 0 || nodes[std::size_t(root)].input == int(i)) p.input_register[i] = regs.take();
  p.output_register = -1;  // taken after the last temporary: see below
  std::vector<int> reg_of(nodes.size(), -1);
  std::vector<int> dying;
  for (std::size_t s = 0; s < sequence.size(); ++s) {
    const int i = sequence[s];
    const ExprNode &n = nodes[std::size_t(i)];
    ExprStep &step = p.step[s];
    step.op = n.op;
    dying.clear();
    for (int k = 0; k < expr_arity(n.op); ++k) {
      const ExprNode &o = nodes[std::size_t(n.operand[k])];
      ExprOperand &operand = step.src[k];
      if (o.op == ExprOp::constant) {
        operand.constant = true;
        operand.value = float(round_to_dtype(o.value, dtype));
        continue;
      }
      operand.reg = o.op == ExprOp::input ? p.input_register[o.input] : reg_of[std::size_t(n.operand[k])];
      const bool last = o.op == ExprOp::input ? input_last[std::size_t(o.input)] == int(s)
                                              : node_last[std::size_t(n.operand[k])] == int(s);
      const bool reusable = o.op != ExprOp::input || (!read_only_inputs && !((kept_inputs >> o.input) & 1u));
      if (last && reusable && std::find(dying.begin(), dying.end(), operand.reg) == dying.end())
        dying.push_back(operand.reg);
    }
    // In place: an operand that dies here gives its register to the result.
    for (int r : dying) regs.give(r);
    if (i == root) continue;  // the root writes the output register
    step.dst = regs.take();
    reg_of[std::size_t(i)] = step.dst;
  }
  p.steps = int(sequence.size());
  if (nodes[std::size_t(root)].op == ExprOp::input) {  // the formula is one input: a copy
    ExprStep &copy = p.step[p.steps++];
    copy.op = ExprOp::input;
    copy.src[0].reg = p.input_register[nodes[std::size_t(root)].input];
  }
  p.output_register = regs.count();
  p.registers = regs.count() + 1;
  p.step[p.steps - 1].dst = p.output_register;
  for (int s = 0; s < p.steps; ++s) {
    const ExprOp op = p.step[s].op;
    if (op == ExprOp::exp || op == ExprOp::sigmoid || op == ExprOp::tanh) {
      p.exp_table = true;
      p.work_buffers = 2;
    }
    if (op == ExprOp::log) {
      p.log_table = true;
      p.work_buffers = std::max(p.work_buffers, 1);
    }
  }
  return p;
}

}  // namespace tpu_runtime::detail
