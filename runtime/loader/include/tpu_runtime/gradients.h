// gradients.h: an op's declared gradient (register_custom_grad in the op
// registry, docs/gradients.md), as the runtime holds it.
//
// The backend and firmware libraries carry one text per declaration
// (tpu_custom_registered_gradients, tpu_custom_abi.h);
// KernelLibrary::gradients() parses them with parse_gradient_declaration().
// The vendor flow has no gradients: its tools ignore the table.
#pragma once

#include <string>
#include <vector>

namespace tpu_runtime {

struct GradientDeclaration {
  std::string op;       // the forward op
  std::string grad_op;  // the registered op that computes its gradient
  // false: grad_op gives every differentiable input's partial at once (one
  // output per differentiable input, in input order); true: it runs once per
  // differentiable input, with input_grad_index appended to the forward
  // op's parameters, and gives that input's partial.
  bool separate = false;
  bool receives_inputs = true;   // grad_op's inputs include the forward inputs
  bool receives_outputs = true;  // ... and the forward outputs
  std::vector<int> non_differentiable;  // forward inputs without a partial, ascending
};

// Parses one text of the table: "op=<op> grad=<grad_op> mode=together|separate
// receives=output_grads[,inputs][,outputs] non_differentiable=<i,j,...>".
// Throws Error starting with `where` and naming the field that is wrong.
GradientDeclaration parse_gradient_declaration(const std::string &text, const std::string &where);

// The forward inputs that get a partial, for a layer of `num_inputs` inputs;
// throws Error when a NON_DIFFERENTIABLE index is not an input of the layer.
std::vector<int> differentiable_inputs(const GradientDeclaration &g, int num_inputs);

// How many inputs grad_op takes for a forward layer of `num_inputs` inputs
// and `num_outputs` outputs: the output gradients, then (as declared) the
// forward inputs, then the forward outputs.
int gradient_op_input_count(const GradientDeclaration &g, int num_inputs, int num_outputs);

// "leakyrelu_grad, all partials at once, receives output grads + inputs,
// non-differentiable: none" (tpu_model info, tpu_op_check).
std::string gradient_text(const GradientDeclaration &g);

}  // namespace tpu_runtime
