// gradients.cc: reading and showing declared gradients (gradients.h).
#include "tpu_runtime/gradients.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace {

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// key=value words; each of the five keys exactly once.
std::map<std::string, std::string> fields_of(const std::string &text, const std::string &where) {
  static const std::vector<std::string> keys = {"op", "grad", "mode", "receives", "non_differentiable"};
  std::map<std::string, std::string> fields;
  for (const std::string &word : split(text, ' ')) {
    const std::size_t eq = word.find('=');
    const std::string key = word.substr(0, eq);
    if (eq == std::string::npos || std::find(keys.begin(), keys.end(), key) == keys.end())
      throw Error(fmt::format("{}: '{}' is not one of the fields {}=...", where, word, fmt::join(keys, "=..., ")));
    if (!fields.emplace(key, word.substr(eq + 1)).second)
      throw Error(fmt::format("{}: field '{}' is given twice", where, key));
  }
  for (const std::string &key : keys)
    if (!fields.count(key)) throw Error(fmt::format("{}: field '{}' is missing", where, key));
  return fields;
}

void read_receives(GradientDeclaration &g, const std::string &value, const std::string &where) {
  g.receives_inputs = g.receives_outputs = false;
  const std::vector<std::string> parts = split(value, ',');
  if (parts.empty() || parts.front() != "output_grads")
    throw Error(fmt::format("{}: receives={}: the gradient op always receives the output gradients first", where,
                            value));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] == "inputs" && !g.receives_inputs && !g.receives_outputs) g.receives_inputs = true;
    else if (parts[i] == "outputs" && !g.receives_outputs) g.receives_outputs = true;
    else
      throw Error(fmt::format("{}: receives={}: '{}' is out of place (output_grads, then inputs, then outputs)",
                              where, value, parts[i]));
  }
}

}  // namespace

GradientDeclaration parse_gradient_declaration(const std::string &text, const std::string &where) {
  const auto fields = fields_of(text, where);
  GradientDeclaration g;
  g.op = fields.at("op");
  g.grad_op = fields.at("grad");
  if (g.op.empty() || g.grad_op.empty()) throw Error(fmt::format("{}: op and grad must name ops", where));
  const std::string &mode = fields.at("mode");
  if (mode != "together" && mode != "separate")
    throw Error(fmt::format("{}: mode={}: expected together or separate", where, mode));
  g.separate = mode == "separate";
  read_receives(g, fields.at("receives"), where);
  for (const std::string &index : split(fields.at("non_differentiable"), ',')) {
    if (index.find_first_not_of("0123456789") != std::string::npos || index.size() > 6)
      throw Error(fmt::format("{}: non_differentiable: '{}' is not an input index", where, index));
    g.non_differentiable.push_back(std::stoi(index));
  }
  std::sort(g.non_differentiable.begin(), g.non_differentiable.end());
  g.non_differentiable.erase(std::unique(g.non_differentiable.begin(), g.non_differentiable.end()),
                             g.non_differentiable.end());
  return g;
}

std::vector<int> differentiable_inputs(const GradientDeclaration &g, int num_inputs) {
  for (int i : g.non_differentiable)
    if (i >= num_inputs)
      throw Error(fmt::format("op '{}': NON_DIFFERENTIABLE {} (register_custom_grad) is not an input of a layer with "
                              "{} input{}",
                              g.op, i, num_inputs, num_inputs == 1 ? "" : "s"));
  std::vector<int> inputs;
  for (int i = 0; i < num_inputs; ++i)
    if (!std::binary_search(g.non_differentiable.begin(), g.non_differentiable.end(), i)) inputs.push_back(i);
  return inputs;
}

int gradient_op_input_count(const GradientDeclaration &g, int num_inputs, int num_outputs) {
  return num_outputs + (g.receives_inputs ? num_inputs : 0) + (g.receives_outputs ? num_outputs : 0);
}

std::string gradient_text(const GradientDeclaration &g) {
  std::string receives = "output grads";
  if (g.receives_inputs) receives += " + inputs";
  if (g.receives_outputs) receives += " + outputs";
  return fmt::format("{}, {}, receives {}, non-differentiable: {}", g.grad_op,
                     g.separate ? "one partial per run (input_grad_index)" : "all partials at once", receives,
                     g.non_differentiable.empty() ? std::string("none") : fmt::format("{}", fmt::join(g.non_differentiable, ", ")));
}

}  // namespace tpu_runtime
