// gradient_declaration_test: reading the register_custom_grad table's texts
// (tpu_runtime/gradients.h): every field, the defaults, and each malformed
// text refused with the field named.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/gradients.h"

namespace {

namespace tr = tpu_runtime;

TEST(GradientDeclaration, ReadsEveryField) {
  const tr::GradientDeclaration g = tr::parse_gradient_declaration(
      "op=gather grad=gather_grad mode=separate receives=output_grads,inputs non_differentiable=2,1,2", "t");
  EXPECT_EQ(g.op, "gather");
  EXPECT_EQ(g.grad_op, "gather_grad");
  EXPECT_TRUE(g.separate);
  EXPECT_TRUE(g.receives_inputs);
  EXPECT_FALSE(g.receives_outputs);
  EXPECT_EQ(g.non_differentiable, (std::vector<int>{1, 2}));  // sorted, once each
  EXPECT_EQ(tr::differentiable_inputs(g, 4), (std::vector<int>{0, 3}));
  // 1 output: its gradient, then the 4 inputs.
  EXPECT_EQ(tr::gradient_op_input_count(g, 4, 1), 5);
  EXPECT_EQ(tr::gradient_text(g),
            "gather_grad, one partial per run (input_grad_index), receives output grads + inputs, "
            "non-differentiable: 1, 2");
}

TEST(GradientDeclaration, OutputsOnlyAndAllAtOnce) {
  const tr::GradientDeclaration g = tr::parse_gradient_declaration(
      "op=a grad=b mode=together receives=output_grads,outputs non_differentiable=", "t");
  EXPECT_FALSE(g.separate);
  EXPECT_FALSE(g.receives_inputs);
  EXPECT_TRUE(g.receives_outputs);
  EXPECT_TRUE(g.non_differentiable.empty());
  EXPECT_EQ(tr::gradient_op_input_count(g, 3, 2), 4);
  EXPECT_EQ(tr::differentiable_inputs(g, 3), (std::vector<int>{0, 1, 2}));
}

TEST(GradientDeclaration, AnIndexBeyondTheLayerIsRefused) {
  const tr::GradientDeclaration g = tr::parse_gradient_declaration(
      "op=a grad=b mode=together receives=output_grads non_differentiable=3", "t");
  try {
    tr::differentiable_inputs(g, 2);
    FAIL() << "no error";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(std::string(e.what()), "op 'a': NON_DIFFERENTIABLE 3 (register_custom_grad) is not an input of a "
                                           "layer with 2 inputs");
  }
}

void expect_refused(const std::string &text, const std::string &message) {
  try {
    tr::parse_gradient_declaration(text, "lib.so: entry 0");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(std::string(e.what()), "lib.so: entry 0: " + message);
  }
}

TEST(GradientDeclaration, MalformedTextsAreRefusedByField) {
  const std::string rest = " receives=output_grads non_differentiable=";
  expect_refused("op=a grad=b" + rest, "field 'mode' is missing");
  expect_refused("op=a grad=b mode=sometimes" + rest, "mode=sometimes: expected together or separate");
  expect_refused("op=a op=c grad=b mode=together" + rest, "field 'op' is given twice");
  expect_refused("op=a grad=b mode=together colour=red" + rest, "'colour=red' is not one of the fields");
  expect_refused("op=a grad=b mode=together receives=inputs non_differentiable=",
                 "receives=inputs: the gradient op always receives the output gradients first");
  expect_refused("op=a grad=b mode=together receives=output_grads,outputs,inputs non_differentiable=",
                 "receives=output_grads,outputs,inputs: 'inputs' is out of place");
  expect_refused("op=a grad=b mode=together receives=output_grads non_differentiable=-1",
                 "non_differentiable: '-1' is not an input index");
  expect_refused("op= grad=b mode=together" + rest, "op and grad must name ops");
}

}  // namespace
