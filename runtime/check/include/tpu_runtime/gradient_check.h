// gradient_check.h: checks an op's declared gradient op (register_custom_grad,
// gradients.h) on the emulator against central finite differences of the
// forward op's reference (docs/gradients.md).
//
//   auto report = tpu_runtime::GradientChecker()
//                     .op("leakyrelu").input_shape({4, 300}).params(R"({"alpha": 0.1})")
//                     .chip("bm1688").dtype(tpu_runtime::Dtype::bf16).seed(7)
//                     .run();
//   EXPECT_TRUE(report.passed) << report.summary();
//
// run():
//  1. runs the forward op on the emulator (the op tester, global layer) on
//     random inputs x rounded to the dtype, giving y;
//  2. draws a random output gradient v (uniform in [-1, 1], rounded to the
//     dtype) and a random direction d (standard normal) per differentiable
//     input and direction round;
//  3. zeroes v at outputs where the forward reference is not smooth within
//     the step along d (a kink such as relu's: the central differences at
//     h and h/2 disagree, or the second differences do not scale as h^2),
//     so the check never compares a derivative across a kink;
//  4. runs the gradient op on the emulator (the op tester, so the gradient
//     op is held to its own reference too) on v, x and y as declared,
//     giving g_i = v^T J_i for each differentiable input i;
//  5. compares, in double precision, the vector-Jacobian product against the
//     finite difference of the forward reference (plugin inference_<op>):
//        lhs = sum_j v_j (f_j(x+) - f_j(x-)),  rhs = sum_k g_k (x+_k - x-_k)
//     with x+- = x -+ h d restricted to a block of input i's elements: first
//     the whole input, then halves, descending into the half with the larger
//     relative error down to one element (which names the worst element, the
//     gradient's value there and the finite-difference value). A block fails
//     when |lhs - rhs| > tau * max(sum |g_k dx_k|, sum |v_j df_j|).
//
// The step h and tau depend on the dtype (step_for, tolerance_for): the
// reference is fp32 whatever the dtype, so h is large enough that its
// rounding stays far below tau, and small enough that the truncation error
// (h^2 times the third derivative) does too. With triage() on and an fp16
// or bf16 dtype, the gradient op also runs on the same inputs widened to
// fp32, and the report classifies the low-precision error (triage.h).
// Costs: 4 evaluations of the reference per block, about 2 log2(n) blocks
// per input and round, so keep the shapes of --grad cases moderate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/gradients.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/triage.h"

namespace tpu_runtime {

// The step relative to max(1, rms of the input): fp32 and fp16 2^-6, bf16 2^-5.
double gradient_step_for(Dtype dtype);
// tau: fp32 2^-10, fp16 2^-8, bf16 2^-5 (8 units of roundoff of fp16 and
// bf16; for fp32 the fp32 reference's own rounding, amplified by 1/h, and
// the fp32 sums inside a reference set it, not the gradient op's rounding).
double gradient_tolerance_for(Dtype dtype);

// The worst block of one differentiable input over all rounds.
struct GradInputResult {
  int input = 0;             // forward input index
  bool passed = true;
  double worst_ratio = 0;    // |lhs - rhs| / scale of the worst block
  std::int64_t block_begin = 0, block_end = 0;  // that block, flat indices
  std::int64_t element = -1;  // the one-element block of the largest relative error
  double element_ratio = -1;  // its relative error
  std::string coordinates;    // its coordinates, "[2,17]"
  double gradient = 0;        // g at that element (the gradient op)
  double finite_difference = 0;  // lhs / dx at that element (the reference's slope)
  int blocks_checked = 0;
  int blocks_inconclusive = 0;  // a kink inside the block: skipped
};

struct GradReport {
  std::string op, chip;
  GradientDeclaration declaration;
  Dtype dtype = Dtype::fp32;
  std::vector<Shape> input_shapes;
  std::uint64_t seed = 0;
  int rounds = 0;
  double step = 0, tolerance = 0;
  bool forward_passed = false, grad_op_passed = false;  // each against its own reference
  std::string forward_summary, grad_op_summary;
  std::size_t masked_outputs = 0, outputs = 0;  // output elements with v zeroed (kinks)
  std::vector<GradInputResult> inputs;
  std::optional<TriageReport> triage;  // fp16/bf16 with triage()
  bool passed = false;
  std::string failure;  // the first reason it failed
  std::string summary() const;
};

class GradientChecker {
 public:
  GradientChecker &op(std::string name) { op_ = std::move(name); return *this; }
  GradientChecker &input_shape(Shape shape) { shapes_.push_back(std::move(shape)); return *this; }
  GradientChecker &params(std::string json) { params_ = std::move(json); return *this; }
  GradientChecker &chip(std::string chip) { chip_ = std::move(chip); return *this; }
  GradientChecker &dtype(Dtype dtype) { dtype_ = dtype; return *this; }
  GradientChecker &seed(std::uint64_t seed) { seed_ = seed; return *this; }
  GradientChecker &num_outputs(int n) { num_outputs_ = n; return *this; }
  // Random directions per input (default 2), each with its own descent.
  GradientChecker &rounds(int n) { rounds_ = n; return *this; }
  GradientChecker &libraries(LibraryPaths paths) { paths_ = std::move(paths); return *this; }
  // Inputs uniform in [low, high] (default [-4, 4]).
  GradientChecker &input_range(float low, float high) { low_ = low; high_ = high; return *this; }
  GradientChecker &triage(bool on = true) { triage_ = on; return *this; }

  // Throws Error when nothing can be checked (no gradient declared, a
  // library or hook missing, a kernel stopping with an emulator error); a
  // wrong gradient is a failed report.
  GradReport run() const;

 private:
  std::string op_, params_ = "{}", chip_ = "bm1684x";
  std::vector<Shape> shapes_;
  Dtype dtype_ = Dtype::fp32;
  std::uint64_t seed_ = 1;
  int num_outputs_ = 1, rounds_ = 2;
  std::optional<LibraryPaths> paths_;
  float low_ = -4, high_ = 4;
  bool triage_ = false;
};

}  // namespace tpu_runtime
