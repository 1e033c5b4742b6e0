// local_plan.h: how the op tester runs a local op slice by slice, the way a
// layer group would: which n/h slicings to try, where each slice lives in
// local memory, and the GDMA moves around each step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api_common.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/dtype.h"

namespace tpu_runtime {

// A tensor in the emulator's global memory.
struct DeviceTensor {
  Shape shape;
  std::uint64_t addr = 0;
  std::uint64_t bytes = 0;
};

// One tensor's slice of one step: (n, c, h, w) at `local_addr`, taken from
// global memory at element offset `global_offset` of a tensor whose 4-D view
// is `full`.
struct SliceMove {
  std::uint32_t local_addr = 0;
  std::uint64_t global_addr = 0;
  int n = 1, c = 1, h = 1, w = 1;
  int full[4] = {1, 1, 1, 1};
  std::uint32_t bytes = 0;  // per NPU, from local_addr (every NPU: slices start on NPU 0)
  // strided: the global strides in elements (0 repeats the data along that
  // axis: a broadcast input), instead of those of `full`.
  bool strided = false;
  int stride[4] = {0, 0, 0, 0};
};

struct LocalStep {
  local_sec_info_t sec_info{};
  std::vector<tensor_spec_t> input_specs, output_specs;  // addr = local offsets
  std::vector<SliceMove> input_moves, output_moves;
  int buffer_offset = 0;
  int buffer_bytes = 0;  // per NPU, what api_<op>_local_bfsz asked for
};

struct LocalPlan {
  std::string name;  // "local n=2 h=5": the step sizes
  std::vector<LocalStep> steps;
};

// The 4-D view kernels get from parse_NCHW: trailing 1s, extra dims folded into w.
void fold_nchw(const Shape &shape, int out[4]);

class LocalPlanner {
 public:
  LocalPlanner(const Plugin &plugin, const Backend &backend, std::string op, const PackedParams &params, Dtype dtype,
               std::vector<Shape> input_shapes, std::vector<Shape> output_shapes);

  // Up to `max_plans` distinct slicings the op allows and local memory
  // holds, from whole tensors down to single rows. Needs the emulator open.
  std::vector<LocalPlan> plans(int max_plans, const std::vector<DeviceTensor> &inputs,
                               const std::vector<DeviceTensor> &outputs) const;

 private:
  struct ChipFigures {
    int npu_num = 0, eu_num = 0;
    std::uint32_t local_mem = 0;
  };
  bool build(int n_step, int h_step, const std::vector<DeviceTensor> &inputs,
             const std::vector<DeviceTensor> &outputs, const ChipFigures &chip, LocalPlan &plan) const;
  std::uint32_t slice_bytes(int n, int c, int h, int w, const ChipFigures &chip) const;

  const Plugin &plugin_;
  const Backend &backend_;
  std::string op_;
  const PackedParams &params_;
  Dtype dtype_;
  std::vector<Shape> input_shapes_, output_shapes_;
};

// Local memory around one local step: the op tester's check that a local
// kernel writes only where the step declared (its output slices and its
// scratch buffer). poison() fills every NPU's local memory with a pattern
// that varies with the address (so a kernel reading what it never loaded
// sees garbage, and copying it elsewhere changes bytes); remember() takes the state once the inputs are loaded;
// stray_write() compares after the kernel and names the first byte it
// changed outside the declared regions ("" when none).
class LocalGuard {
 public:
  void poison();
  void remember();
  std::string stray_write(const LocalStep &step) const;

 private:
  std::vector<std::uint8_t> remembered_;
  int npu_num_ = 0;
  std::uint32_t local_mem_ = 0;
};

// Copies the slices between global and local memory on the emulator: S2L
// when to_local (a step's inputs), L2S otherwise (its outputs).
void move_slices(const std::vector<SliceMove> &moves, Dtype dtype, bool to_local);

}  // namespace tpu_runtime
