// expression_kernel.h (private): the fused kernel of a formula
// (tpu_runtime/expression.h), generated at model build against the kernel
// API like any user kernel.
//
// compile_expression() turns the formula into a program over registers:
// tile-sized buffers in local memory. Each used input has a register that
// is loaded once per tile; each operation is one BDC command whose result
// goes to a register freed by an operand that dies there (in place) or to a
// free one, the operands evaluated in Sethi-Ullman order (the operand that
// needs more registers first), so the registers live at once are as few as
// the tree allows; the root writes the output register, stored once per
// tile. With two register sets the tiles are pipelined: in stage t the GDMA
// stores tile t-2 and loads tile t while the BDC computes tile t-1.
//
// The program and the kernel arguments are plain data: a failing tpu_* call
// leaves the kernel by longjmp (cmodel_run), so nothing the kernel touches
// may need a destructor.
#pragma once

#include <cstdint>
#include <vector>

#include "api_common.h"
#include "tpu_kernel.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/expression.h"

namespace tpu_runtime::detail {

inline constexpr int kExprMaxInputs = 16;
inline constexpr int kExprMaxSteps = 256;
inline constexpr int kExprDims = 8;  // the view's dims: the last four are n, c, h, w

struct ExprOperand {
  bool constant = false;
  int reg = -1;      // a register of the tile's set
  float value = 0;   // a constant, already a value of the dtype
};

// One BDC command. ExprOp::input here is a copy (a formula that is just an input).
struct ExprStep {
  ExprOp op = ExprOp::input;
  int dst = -1;
  ExprOperand src[3];
};

struct ExprProgram {
  int inputs = 0;
  int input_register[kExprMaxInputs] = {};  // -1: the formula does not read it
  int registers = 0;                        // per set, the output register included
  int output_register = 0;
  int steps = 0;
  ExprStep step[kExprMaxSteps];
  bool exp_table = false, log_table = false;  // coefficient tables to load once
  int work_buffers = 0;                       // 0, 1 or 2 (shared by both sets)
};

// Throws Error naming the formula when it has more inputs or operations
// than the kernel takes. `read_only_inputs`: no result goes into an input's
// register (a layer group's input slice is not the layer's to write);
// `kept_inputs` (bit i: input i) the same for some inputs only (a broadcast
// input the kernel loads once and reads in every tile).
ExprProgram compile_expression(const Expression &e, Dtype dtype, bool read_only_inputs = false,
                               uint32_t kept_inputs = 0);

// The kernel's view: dims[kExprDims] of the output (compact), each input
// read with its own strides (in elements; 0 along a broadcast dim).
struct ExprKernelArgs {
  const ExprProgram *program = nullptr;
  data_type_t dtype = DT_FP32;
  int64_t dims[kExprDims] = {1, 1, 1, 1, 1, 1, 1, 1};
  uint64_t out_addr = 0;
  uint64_t in_addr[kExprMaxInputs] = {};
  int64_t in_stride[kExprMaxInputs][kExprDims] = {};
  bool pipelined = true;  // two register sets; false: one (more elements per tile)
  uint32_t kept_inputs = 0;  // the program keeps these inputs' registers: see broadcast_inputs()
};

// The inputs that may be the same in every tile (bit i: input i): stride 0
// along every dim the kernel walks outside a tile (the outer dims and n)
// and along at least one more. The kernel loads such an input once per
// register set and tile shape when its tiles do take the same part of it
// (stride 0, or one tile, along c, h and w), so the program must keep
// their registers (compile_expression's kept_inputs).
uint32_t broadcast_inputs(int inputs, const std::vector<Shape> &input_shapes, const Shape &out_shape);

// The arguments for tensors at global addresses; shapes broadcast like numpy.
ExprKernelArgs expression_args(const ExprProgram &program, Dtype dtype, const std::vector<Shape> &input_shapes,
                               const std::vector<uint64_t> &input_addrs, const Shape &out_shape, uint64_t out_addr);

// Runs on the open emulator; throws Error with its message on a failure.
void run_expression_kernel(const ExprKernelArgs &args);

// A layer group's step: the formula on slices already in local memory, the
// result at `output` as an [n, c, h, w] slice in the aligned layout. Each
// input is either a slice of that shape and layout, or (`expand`) a
// broadcast slice read with `stride` (elements; 0 along a broadcast dim),
// which one BDC copy expands into a scratch buffer first. `scratch` holds
// the tables, the temporaries, the expanded inputs and the work buffers:
// expression_scratch_bytes() of it, for slices of `slice_bytes` per NPU.
// The program was compiled with read_only_inputs.
struct ExprLocalInput {
  local_addr_t addr = 0;
  bool expand = false;
  dim4 stride{0, 0, 0, 0};
};
struct ExprLocalArgs {
  const ExprProgram *program = nullptr;
  data_type_t dtype = DT_FP32;
  dim4 shape{1, 1, 1, 1};
  ExprLocalInput input[kExprMaxInputs];
  local_addr_t output = 0, scratch = 0;
  int64_t slice_bytes = 0;
};
// `expanded`: how many inputs the step expands (ExprLocalInput::expand).
int64_t expression_scratch_bytes(const ExprProgram &program, int64_t slice_bytes, int expanded = 0);
void run_expression_local(const ExprLocalArgs &args);

}  // namespace tpu_runtime::detail
