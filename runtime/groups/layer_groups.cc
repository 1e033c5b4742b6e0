// layer_groups.cc: planning, recording, checking and replaying layer groups
// (see layer_groups.h and tpu_runtime/group_planner.h).
#include "groups/layer_groups.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>

#include "builtin/builtin_kernels.h"
#include "builtin/builtin_ops.h"
#include "expression/expression_layer.h"
#include "tpu_runtime/net.h"
#include "cmodel_host.h"
#include "groups/local_plan.h"
#include "emulator/emulator.h"
#include "io/arrays.h"
#include "tpu_kernel.h"
#include "tpu_runtime/error.h"
#include "tpu_utils.h"

namespace tpu_runtime::detail {
namespace {

constexpr const char *kGroupExecution = "group";
constexpr std::uint32_t kRegionAlign = 512;  // as local_plan.cc: above every EU width in bytes

uint64_t align_up(uint64_t value, uint64_t to) { return (value + to - 1) / to * to; }
int div_up(int a, int b) { return (a + b - 1) / b; }
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }


struct Chip {
  int npu_num = 0;
  std::uint32_t local_mem = 0;
  std::map<Dtype, int> eu_num;
};

Chip chip_figures(const std::vector<GroupTensor> &tensors) {
  Chip chip;
  run_on_emulator("reading the chip's figures", [&] {
    chip.npu_num = tpu_npu_num();
    chip.local_mem = std::uint32_t(tpu_local_mem_size_per_npu());
    for (const GroupTensor &t : tensors) chip.eu_num[t.dtype] = tpu_eu_num(kernel_dtype(t.dtype));
  });
  return chip;
}

// The 4-D view of a tensor (parse_NCHW: trailing 1s).
struct View {
  int n, c, h, w;
};
View view_of(const Shape &shape) {
  int v[4];
  fold_nchw(shape, v);
  return {v[0], v[1], v[2], v[3]};
}

// One tensor's slice in local memory: n_slice x c x rows x cols in the
// aligned layout, planes of `plane` bytes.
struct LocalSlice {
  std::uint32_t addr = 0;
  int n0 = 0, n = 1, row0 = 0, rows = 1, col0 = 0, cols = 1;
  std::uint64_t plane = 0, row_bytes = 0;
  int crows = 1;  // channel rows per NPU
  std::uint64_t bytes() const { return plane * std::uint64_t(crows) * std::uint64_t(n); }
};

// cols < 0: every column.
LocalSlice local_slice(const GroupTensor &t, const Chip &chip, int n0, int n, int row0, int rows, int col0 = 0,
                       int cols = -1) {
  const View v = view_of(t.shape);
  LocalSlice s;
  s.n0 = n0;
  s.n = n;
  s.row0 = row0;
  s.rows = rows;
  s.col0 = cols < 0 ? 0 : col0;
  s.cols = cols < 0 ? v.w : cols;
  s.row_bytes = std::uint64_t(s.cols) * dtype_size(t.dtype);
  s.plane = align_up(std::uint64_t(rows) * std::uint64_t(s.cols), std::uint64_t(chip.eu_num.at(t.dtype))) *
            dtype_size(t.dtype);
  s.crows = div_up(v.c, chip.npu_num);
  return s;
}

// Every (n, channel row) plane's first `rows` rows: what a layer may touch
// of a slice.
void add_planes(const LocalSlice &s, std::vector<int64_t> &ranges) {
  for (int p = 0; p < s.n * s.crows; ++p) {
    const int64_t begin = int64_t(s.addr) + int64_t(p) * int64_t(s.plane);
    ranges.push_back(begin);
    ranges.push_back(begin + int64_t(s.rows) * int64_t(s.row_bytes));
  }
}

// The move of slice `s` of a tensor at `addr` whose 4-D view is `v`, `c`
// channels in local memory.
SliceMove slice_move(std::uint64_t addr, Dtype dtype, const View &v, int c, const LocalSlice &s) {
  SliceMove m;
  m.local_addr = s.addr;
  m.n = s.n;
  m.c = c;
  m.h = s.rows;
  m.w = s.cols;
  m.full[0] = v.n;
  m.full[1] = v.c;
  m.full[2] = v.h;
  m.full[3] = v.w;
  const std::uint64_t first = (std::uint64_t(s.n0) * std::uint64_t(v.c) * std::uint64_t(v.h) + std::uint64_t(s.row0)) *
                                  std::uint64_t(v.w) +
                              std::uint64_t(s.col0);
  m.global_addr = addr + first * dtype_size(dtype);
  m.bytes = std::uint32_t(s.bytes());
  return m;
}

SliceMove slice_move(const GroupTensor &t, const LocalSlice &s) {
  const View v = view_of(t.shape);
  return slice_move(t.addr, t.dtype, v, v.c, s);
}

tensor_spec_t local_spec(const GroupTensor &t, std::uint32_t addr) {
  tensor_spec_t spec = make_spec(addr, t.dtype, t.shape);
  spec.elem_num = 0;  // as static codegen passes it
  return spec;
}

// builtin.expression is a local layer of its own making: no plugin hooks,
// every range maps to itself (element-wise), its scratch from the
// expression's program. Its inputs other than the chain are side inputs.
// builtin.add / sub / mul / relu run as their expression form.
bool is_expression(const GroupLayer &l) { return l.op == "builtin.expression" || l.expression_form; }

// builtin.cast is element-wise too (every range maps to itself, no
// scratch); its local version converts the slice between the two tensors'
// dtypes with one BDC cast.
bool is_cast(const GroupLayer &l) { return l.op == "builtin.cast"; }

// builtin.conv2d, maxpool2d, avgpool2d, matmul and slice: a window over
// the rows of their input (window_input_rows: kernel, stride, dilation,
// pads; a slice's start and step), their weights and bias (their inputs 1
// and 2) loaded into local memory once for the whole group; W is never
// split through them.
bool is_window(const GroupLayer &l) {
  return l.op == "builtin.conv2d" || l.op == "builtin.maxpool2d" || l.op == "builtin.avgpool2d" ||
         l.op == "builtin.matmul" || l.op == "builtin.slice";
}

// A built-in layer with a local version of the SDK's own (no plugin hooks).
bool sdk_local(const GroupLayer &l) { return is_expression(l) || is_cast(l) || is_window(l); }

// A window layer's kernel arguments with its weight and bias addresses;
// nothing, with `why`, when its attributes have no local version.
std::optional<ConvArgs> window_of(const std::vector<GroupTensor> &tensors, const GroupLayer &l, std::string &why) {
  std::vector<BuiltinTensor> inputs;
  for (std::size_t t : l.inputs) inputs.push_back({tensors[t].shape, tensors[t].dtype});
  std::optional<ConvArgs> a = builtin_window_local(l.op, l.builtin_params, inputs, why);
  if (!a) return a;
  a->weight_addr = l.inputs.size() > 1 ? tensors[l.inputs[1]].addr : 0;
  a->bias_addr = a->bias_addr ? tensors[l.inputs.at(2)].addr : 0;
  return a;
}

// Of a layer that not_groupable() accepted.
ConvArgs window_of(const std::vector<GroupTensor> &tensors, const GroupLayer &l) {
  std::string why;
  const std::optional<ConvArgs> a = window_of(tensors, l, why);
  if (!a) throw Error(fmt::format("layer '{}': {}", l.name, why));
  return *a;
}

// A shape padded with leading 1s to `rank` dims: how numpy lines it up
// against a tensor of that rank.
Shape padded_to(const Shape &shape, std::size_t rank) {
  Shape padded(rank > shape.size() ? rank - shape.size() : 0, 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  return padded;
}

// The 4-D view of an input as it broadcasts against the output `out`.
View broadcast_view(const Shape &shape, const Shape &out) { return view_of(padded_to(shape, out.size())); }

// Which of layer k's inputs carries the group's chain (the tensor sliced
// like the output, with the rows the hooks declare): a plugin op's only
// input; for builtin.expression the previous layer's output when it has the
// output's shape, else its first input of the output's shape. -1: none.
int chain_input(const std::vector<GroupTensor> &tensors, const std::vector<GroupLayer> &layers, std::size_t k) {
  const GroupLayer &l = layers[k];
  if (!is_expression(l)) return 0;
  const Shape &out = tensors[l.outputs.at(0)].shape;
  const auto whole = [&](std::size_t i) { return padded_to(tensors[l.inputs[i]].shape, out.size()) == out; };
  if (k > 0 && layers[k - 1].outputs.size() == 1)
    for (std::size_t i = 0; i < l.inputs.size(); ++i)
      if (l.inputs[i] == layers[k - 1].outputs[0] && whole(i)) return int(i);
  for (std::size_t i = 0; i < l.inputs.size(); ++i)
    if (whole(i)) return int(i);
  return -1;
}

// The layer's side inputs: every distinct tensor among its inputs other
// than the chain's, in the order of the inputs.
std::vector<std::size_t> side_inputs(const GroupLayer &l, int chain) {
  std::vector<std::size_t> sides;
  if (is_window(l)) return sides;  // its other inputs are weights, resident in local memory
  for (std::size_t t : l.inputs)
    if (t != l.inputs[std::size_t(chain)] && std::find(sides.begin(), sides.end(), t) == sides.end())
      sides.push_back(t);
  return sides;
}

// A side input's slice beside output slice `o` of tensor `out`: the same n,
// rows and columns, but one along each axis the input broadcasts over; and
// every channel (a channel-broadcast input is repeated over the channels by
// its load, so each NPU holds its channels' values).
LocalSlice side_slice(const GroupTensor &side, const GroupTensor &out, const Chip &chip, const LocalSlice &o) {
  const View s = broadcast_view(side.shape, out.shape), v = view_of(out.shape);
  LocalSlice r;
  r.n0 = s.n == 1 ? 0 : o.n0;
  r.n = s.n == 1 ? 1 : o.n;
  r.row0 = s.h == 1 ? 0 : o.row0;
  r.rows = s.h == 1 ? 1 : o.rows;
  r.col0 = s.w == 1 ? 0 : o.col0;
  r.cols = s.w == 1 ? 1 : o.cols;
  r.row_bytes = std::uint64_t(r.cols) * dtype_size(side.dtype);
  r.plane = align_up(std::uint64_t(r.rows) * std::uint64_t(r.cols), std::uint64_t(chip.eu_num.at(side.dtype))) *
            dtype_size(side.dtype);
  r.crows = div_up(v.c, chip.npu_num);
  return r;
}

bool same_part(const LocalSlice &a, const LocalSlice &b) {
  return a.n0 == b.n0 && a.n == b.n && a.row0 == b.row0 && a.rows == b.rows && a.col0 == b.col0 && a.cols == b.cols;
}

// The load of a side input's slice: stride 0 along the axes it broadcasts
// over (C included: each channel gets the one value).
SliceMove side_move(const GroupTensor &side, const GroupTensor &out, const LocalSlice &s) {
  const View sv = broadcast_view(side.shape, out.shape);
  SliceMove m = slice_move(side.addr, side.dtype, sv, view_of(out.shape).c, s);
  m.strided = true;
  m.stride[0] = sv.n == 1 ? 0 : sv.c * sv.h * sv.w;
  m.stride[1] = sv.c == 1 ? 0 : sv.h * sv.w;
  m.stride[2] = sv.h == 1 ? 0 : sv.w;
  m.stride[3] = 1;
  return m;
}

// How the expression's local kernel reads an input slice beside output
// slice `o`: in place when it has the output slice's shape, else expanded
// from its broadcast layout (stride 0 along the broadcast axes).
ExprLocalInput expression_input(const LocalSlice &in, const LocalSlice &o, Dtype dtype) {
  ExprLocalInput r;
  r.addr = in.addr;
  r.expand = in.n != o.n || in.rows != o.rows || in.cols != o.cols;
  const int plane = int(in.plane / dtype_size(dtype));
  r.stride = {in.n == 1 ? 0 : plane * in.crows, plane, in.rows == 1 ? 0 : in.cols, in.cols == 1 ? 0 : 1};
  return r;
}

int expanded_inputs(const std::vector<LocalSlice> &sides, const LocalSlice &o) {
  int expanded = 0;
  for (const LocalSlice &side : sides) expanded += side.n != o.n || side.rows != o.rows || side.cols != o.cols;
  return expanded;
}

bool allows_split(const Plugin &plugin, const GroupLayer &l, int dim) {
  if (is_window(l)) return dim != 3;
  return sdk_local(l) || plugin.allow_data_split(l.op, l.params, dim, GROUP_NORMAL);
}

bool input_range(const Plugin &plugin, const std::vector<GroupTensor> &tensors, const GroupLayer &l, bool rows,
                 int first, int count, int *idx, int *slice) {
  if (is_window(l) && rows) {
    window_input_rows(window_of(tensors, l), first, count, idx, slice);
    return true;
  }
  if (sdk_local(l)) {
    *idx = first;
    *slice = count;
    return true;
  }
  return rows ? plugin.backward_h(l.op, l.params, first, count, idx, slice)
              : plugin.backward_w(l.op, l.params, first, count, idx, slice);
}

int scratch_bytes(const Backend &backend, const GroupLayer &l, const local_sec_info_t &sec, const tensor_spec_t &in,
                  const tensor_spec_t &out, Dtype dtype, std::uint64_t slice_bytes, int expanded) {
  if (is_expression(l)) return expression_local_scratch(l.builtin_params, dtype, slice_bytes, expanded);
  if (is_cast(l) || is_window(l)) return 0;  // a window's weights are resident, counted apart
  return backend.local_buffer_size(l.op, l.params, sec, {in}, {out});
}

// One layer's step in one slice.
struct LayerStep {
  local_sec_info_t sec{};
  LocalSlice in, out;
  std::vector<LocalSlice> sides;  // the side inputs', in side_inputs() order
  int buffer_bytes = 0;
  std::uint32_t resident = 0, resident_bytes = 0;  // a window layer's weights in local memory
};

// A whole group's schedule for one slicing.
struct Schedule {
  int n_slices = 1, h_slices = 1, w_slices = 1;
  std::vector<std::vector<LayerStep>> slices;  // [slice][layer in group]
  std::uint32_t buffer_offset = 0;
  std::uint32_t local_bytes = 0;
  bool pipelined = false;  // two buffers for the group's input and output: see drive_slices
  std::string why;         // when it cannot be built
  // [layer - first][side]: the side input's slice is the same in every
  // slice, so it is loaded once before the first.
  std::vector<std::vector<bool>> side_once;
};

// The emulator's runs from here to the end of the scope are one run
// (cmodel_batch_begin): the engines keep going and a parallel region stays
// open from one kernel call to the next.
class Batch {
 public:
  Batch() {
    if (cmodel_batch_begin() != 0) throw Error(fmt::format("cannot start a layer group's run: {}", cmodel_last_error()));
  }
  ~Batch() { cmodel_batch_end(); }
  Batch(const Batch &) = delete;
  Batch &operator=(const Batch &) = delete;
};

// Runs a group's slices as one emulator run (after `prologue`: the loads
// of what every slice shares). One after another, or
// pipelined: stage t opens a parallel region, loads slice t, stores slice
// t - 2 and computes slice t - 1, so the GDMA moves the neighbouring slices
// while the BDC computes (the vendor's double-buffered timesteps; a
// pipelined schedule keeps two buffers for the group's input and output).
template <typename Prologue, typename Load, typename Compute, typename Store>
void drive_slices(std::size_t slices, bool pipelined, Prologue &&prologue, Load &&load, Compute &&compute,
                  Store &&store) {
  const Batch batch;
  prologue();
  if (!pipelined) {
    for (std::size_t slice = 0; slice < slices; ++slice) {
      load(slice);
      compute(slice);
      store(slice);
    }
    return;
  }
  for (std::size_t t = 0; t < slices + 2; ++t) {
    run_on_emulator("opening a pipeline stage", [] { tpu_parallel_start(); });
    if (t < slices) load(t);
    if (t >= 2) store(t - 2);
    if (t >= 1 && t <= slices) compute(t - 1);
    run_on_emulator("closing a pipeline stage", [] { tpu_parallel_end(); });
  }
}

// Runs `attempt` on the pipelined schedule and, when that fails, once more
// one slice at a time: a local kernel may open a parallel region of its own
// or wait for the engines, which a pipeline stage does not allow. Returns
// why the group is not pipelined ("" when it is); the sequential attempt's
// error is the one that stands.
template <typename Attempt>
std::string run_with_fallback(Schedule &s, Attempt &&attempt) {
  if (!s.pipelined) {
    attempt(s);
    return {};
  }
  try {
    attempt(s);
    return {};
  } catch (const Error &e) {
    s.pipelined = false;
    attempt(s);
    // One line for the model's description: the error's first line (what
    // failed, where) and its first detail (why).
    std::string why = e.what();
    const std::size_t first = why.find('\n');
    why = why.substr(0, first == std::string::npos ? first : why.find('\n', first + 1));
    if (first != std::string::npos) why.replace(first, why.compare(first, 3, "\n  ") == 0 ? 3 : 1, "; ");
    return why;
  }
}

// One layer's step under the slice check, with what a message needs.
struct CheckedStep {
  const std::string &layer, &op, &hook;  // hook: the backward_h_ the rows come from
  const GroupTensor &input, &output;
  const LayerStep &step;
  std::uint32_t buffer_offset;
  std::size_t slice;
};

std::string violation(const CheckedStep &c, int64_t lo, int64_t hi, bool write, const std::string &detail) {
  const LayerStep &step = c.step;
  const bool w_split = step.out.col0 != 0 || step.out.cols != view_of(c.output.shape).w;
  const std::string where =
      fmt::format("layer '{}' (op {}), slice {} (n {}..{}, output rows {}..{}{})", c.layer, c.op, c.slice, step.out.n0,
                  step.out.n0 + step.out.n - 1, step.out.row0, step.out.row0 + step.out.rows - 1,
                  w_split ? fmt::format(", columns {}..{}", step.out.col0, step.out.col0 + step.out.cols - 1) : "");
  if (write)
    return fmt::format("slice check failed: {}: the local kernel writes local bytes [{:#x}, {:#x}) of each NPU, "
                       "outside its output slice (rows {}..{}) and the {} bytes of scratch its _local_bfsz asked for; {}",
                       where, lo, hi, step.out.row0, step.out.row0 + step.out.rows - 1, step.buffer_bytes, detail);
  const LocalSlice &in = step.in;
  if (w_split)
    return fmt::format("slice check failed: {}: the local kernel reads input '{}' bytes [{:#x}, {:#x}) of each NPU, "
                       "outside rows {}..{} and columns {}..{}, what {} and backward_w_{} declared for this slice "
                       "(only those are in local memory); make them declare every input row and column the kernel "
                       "reads; {}",
                       where, c.input.name, lo, hi, in.row0, in.row0 + in.rows - 1, in.col0, in.col0 + in.cols - 1,
                       c.hook, c.op, detail);
  // The rows of the input those bytes would be, counted from the declared
  // slice's nearest plane (negative: above it).
  const int64_t rel_lo = lo - int64_t(in.addr), rel_hi = hi - int64_t(in.addr);
  const int64_t planes = int64_t(in.n) * in.crows;
  const int64_t plane = std::clamp<int64_t>(floor_div(rel_lo, int64_t(in.plane)), 0, planes - 1);
  const int64_t base = plane * int64_t(in.plane);
  const int64_t row = int64_t(in.row0) + floor_div(rel_lo - base, int64_t(in.row_bytes));
  const int64_t row_end = int64_t(in.row0) + floor_div(rel_hi - base - 1, int64_t(in.row_bytes));
  return fmt::format("slice check failed: {}: the local kernel reads input '{}' rows {}..{}, but {} declared rows "
                     "{}..{} for this slice (only those are in local memory); make {} declare every input row "
                     "the kernel reads; {}",
                     where, c.input.name, row, row_end, c.hook, in.row0, in.row0 + in.rows - 1, c.hook, detail);
}

// Arms the watch for the step, calls run(inputs, outputs) (one local
// kernel), disarms it; a kernel that broke the watch becomes the message
// of violation().
template <typename Run>
void checked_step(const CheckedStep &c, Run &&run) {
  std::vector<int64_t> reads, writes;
  add_planes(c.step.in, reads);
  for (const LocalSlice &side : c.step.sides) add_planes(side, reads);
  add_planes(c.step.out, reads);
  add_planes(c.step.out, writes);
  if (c.step.resident_bytes > 0) {
    reads.push_back(int64_t(c.step.resident));
    reads.push_back(int64_t(c.step.resident) + c.step.resident_bytes);
  }
  for (auto *ranges : {&reads, &writes}) {
    ranges->push_back(int64_t(c.buffer_offset));
    ranges->push_back(int64_t(c.buffer_offset) + c.step.buffer_bytes);
  }
  if (cmodel_watch_local(reads.data(), int(reads.size() / 2), writes.data(), int(writes.size() / 2)) != 0)
    throw Error(fmt::format("cannot arm the slice check: {}", cmodel_last_error()));
  const std::vector<tensor_spec_t> inputs = {local_spec(c.input, c.step.in.addr)};
  std::vector<tensor_spec_t> outputs = {local_spec(c.output, c.step.out.addr)};
  try {
    run(inputs, outputs);
  } catch (const Error &e) {
    int64_t lo = 0, hi = 0;
    int write = 0;
    const bool violated = cmodel_local_watch_violation(&lo, &hi, &write) != 0;
    cmodel_unwatch_local();
    if (!violated) throw;
    throw Error(violation(c, lo, hi, write != 0, e.what()));
  }
  cmodel_unwatch_local();
}

class GroupBuilder {
 public:
  GroupBuilder(const Plugin &plugin, const Backend &backend, const std::vector<GroupTensor> &tensors,
               const std::vector<GroupLayer> &layers, const Chip &chip)
      : plugin_(plugin), backend_(backend), tensors_(tensors), layers_(layers), chip_(chip) {
    for (std::size_t k = 0; k < layers.size(); ++k) {
      // A layer without a chain input never joins a group (planner_layers).
      const int chain = std::max(0, layers[k].inputs.empty() ? 0 : chain_input(tensors, layers, k));
      chain_.push_back(layers[k].inputs.empty() ? 0 : layers[k].inputs[std::size_t(chain)]);
      sides_.push_back(layers[k].inputs.empty() ? std::vector<std::size_t>{} : side_inputs(layers[k], chain));
    }
  }

  const GroupLayer &layer(int k) const { return layers_[std::size_t(k)]; }
  const GroupTensor &input_of(int k) const { return tensors_[chain_[std::size_t(k)]]; }
  const GroupTensor &output_of(int k) const { return tensors_[layers_[std::size_t(k)].outputs[0]]; }
  const std::vector<std::size_t> &sides_of(int k) const { return sides_[std::size_t(k)]; }
  const GroupTensor &tensor(std::size_t t) const { return tensors_[t]; }

  // The slices of layers first..last for n_slices x h_slices; why non-empty
  // when a hook refuses or local memory is too small.
  Schedule schedule(int first, int last, int n_slices, int h_slices, int w_slices, bool ping_pong) const {
    Schedule s;
    s.n_slices = n_slices;
    s.h_slices = h_slices;
    s.w_slices = w_slices;
    const View out = view_of(output_of(last).shape);
    const int n_step = div_up(out.n, n_slices), h_step = div_up(out.h, h_slices), w_step = div_up(out.w, w_slices);
    std::vector<std::uint64_t> region(std::size_t(last - first + 2), 0);  // per tensor of the chain
    for (int n0 = 0; n0 < out.n; n0 += n_step)
      for (int h0 = 0; h0 < out.h; h0 += h_step)
        for (int w0 = 0; w0 < out.w; w0 += w_step) {
          const int n = std::min(n_step, out.n - n0);
          Span rows{h0, std::min(h_step, out.h - h0)}, cols{w0, std::min(w_step, out.w - w0)};
          std::vector<LayerStep> steps(std::size_t(last - first + 1));
          for (int k = last; k >= first; --k) {
            const GroupLayer &l = layers_[std::size_t(k)];
            LayerStep &step = steps[std::size_t(k - first)];
            const View in = view_of(input_of(k).shape), o = view_of(output_of(k).shape);
            const Span in_rows = input_span(l, "backward_h_", rows, in.h, s.why);
            if (!s.why.empty()) return s;
            // Unsplit W: every column of each tensor (a layer may change W).
            const Span out_cols = w_slices > 1 ? cols : Span{0, o.w};
            const Span in_cols = w_slices > 1 ? input_span(l, "backward_w_", cols, in.w, s.why) : Span{0, in.w};
            if (!s.why.empty()) return s;
            step.out = local_slice(output_of(k), chip_, n0, n, rows.first, rows.count, out_cols.first, out_cols.count);
            step.in = local_slice(input_of(k), chip_, n0, n, in_rows.first, in_rows.count, in_cols.first, in_cols.count);
            for (std::size_t t : sides_of(k)) step.sides.push_back(side_slice(tensors_[t], output_of(k), chip_, step.out));
            local_sec_info_t &sec = step.sec;
            sec.group_type = GROUP_NORMAL;
            sec.n_slice = sec.out_n_slice = n;
            sec.d_slice = 1;
            sec.h_idx = in_rows.first;
            sec.h_slice = in_rows.count;
            sec.is_h_split = in_rows.count != in.h;
            sec.out_h_idx = rows.first;
            sec.out_h_slice = rows.count;
            sec.w_idx = in_cols.first;
            sec.w_slice = in_cols.count;
            sec.is_w_split = in_cols.count != in.w;
            sec.out_w_idx = out_cols.first;
            sec.out_w_slice = out_cols.count;
            sec.c_slice = in.c;
            rows = in_rows;
            cols = in_cols;
            region[std::size_t(k - first + 1)] = std::max(region[std::size_t(k - first + 1)], step.out.bytes());
            if (k == first) region[0] = std::max(region[0], step.in.bytes());
          }
          s.slices.push_back(std::move(steps));
        }
    place(s, first, last, region, ping_pong && s.slices.size() > 1);
    return s;
  }

  // A range of rows or columns.
  struct Span {
    int first, count;
  };

  // The input range layer `l`'s hook (`hook` + op: backward_h_ or
  // backward_w_; absent: the same range) declares for `out`, clipped to the
  // `size` of the input: what lies outside is padding the kernel makes
  // itself. Sets `why` when the hook refuses or declares nothing inside.
  Span input_span(const GroupLayer &l, const std::string &hook, Span out, int size, std::string &why) const {
    int idx = 0, count = 0;
    const bool ok = input_range(plugin_, tensors_, l, hook == "backward_h_", out.first, out.count, &idx, &count);
    const char *what = hook == "backward_h_" ? "rows" : "columns";
    if (!ok) {
      why = fmt::format("{}{} refuses output {} [{}, {})", hook, l.op, what, out.first, out.first + out.count);
      return out;
    }
    const int begin = std::clamp(idx, 0, size), end = std::clamp(idx + std::max(count, 0), 0, size);
    if (end <= begin)
      why = fmt::format("{}{} gives input {} [{}, {}) for output {} [{}, {}), nothing inside the {} {} of its input",
                        hook, l.op, what, idx, idx + count, what, out.first, out.first + out.count, size, what);
    return {begin, end - begin};
  }

  // Gives every slice of `s` its local addresses and scratch; false, with
  // s.why, when they do not fit. Tensor i of the chain (the group input,
  // then each layer's output) sits at the same place in every slice, the
  // scratch last; with `ping_pong` the group's input and output alternate
  // between two buffers from slice to slice. The first kRegionAlign bytes
  // stay free, so a kernel reading above its first slice reads local memory
  // the slice check watches rather than wrapping below address 0.
  bool place(Schedule &s, int first, int last, const std::vector<std::uint64_t> &region, bool ping_pong) const {
    s.why.clear();
    s.pipelined = ping_pong;
    std::vector<std::array<std::uint64_t, 2>> addr(region.size());
    std::uint64_t offset = kRegionAlign;
    for (std::size_t t = 0; t < region.size(); ++t) {
      addr[t] = {offset, offset};
      offset = align_up(offset + region[t], kRegionAlign);
      if (ping_pong && (t == 0 || t + 1 == region.size())) {
        addr[t][1] = offset;
        offset = align_up(offset + region[t], kRegionAlign);
      }
    }
    place_sides(s, first, last, ping_pong, offset);
    place_resident(s, first, last, offset);
    const char *buffers = ping_pong ? " (two buffers for the group's input and output)" : "";
    if (offset > chip_.local_mem) {
      s.why = fmt::format("the slices{} need {} bytes of local memory per NPU, more than the {} there are", buffers,
                          offset, chip_.local_mem);
      return false;
    }
    int max_buffer = 0;
    for (std::size_t slice = 0; slice < s.slices.size(); ++slice)
      for (int k = first; k <= last; ++k) {
        LayerStep &step = s.slices[slice][std::size_t(k - first)];
        step.in.addr = std::uint32_t(addr[std::size_t(k - first)][slice % 2]);
        step.out.addr = std::uint32_t(addr[std::size_t(k - first + 1)][slice % 2]);
        const GroupLayer &l = layers_[std::size_t(k)];
        step.buffer_bytes =
            scratch_bytes(backend_, l, step.sec, local_spec(input_of(k), step.in.addr),
                          local_spec(output_of(k), step.out.addr), output_of(k).dtype, step.out.bytes(),
                          expanded_inputs(step.sides, step.out));
        max_buffer = std::max(max_buffer, step.buffer_bytes);
      }
    s.buffer_offset = std::uint32_t(offset);
    if (offset + std::uint64_t(max_buffer) > chip_.local_mem) {
      s.why = fmt::format("the slices{} and the {}-byte scratch need {} bytes of local memory per NPU, more than the "
                          "{} there are",
                          buffers, max_buffer, offset + std::uint64_t(max_buffer), chip_.local_mem);
      return false;
    }
    s.local_bytes = std::uint32_t(offset + std::uint64_t(max_buffer));
    return true;
  }

  // The side inputs' buffers from `offset` on: one each when every slice
  // takes the same part of the input (loaded once, before the first slice),
  // else one per pipeline set. They stay for the whole group: in a
  // pipelined schedule the GDMA fills the next slice's while the BDC runs
  // this one's layers, so no intermediate could take their place.
  void place_sides(Schedule &s, int first, int last, bool ping_pong, std::uint64_t &offset) const {
    s.side_once.assign(std::size_t(last - first + 1), {});
    for (int k = first; k <= last; ++k) {
      const std::size_t i = std::size_t(k - first);
      for (std::size_t j = 0; j < sides_of(k).size(); ++j) {
        bool once = true;
        std::uint64_t bytes = 0;
        for (const std::vector<LayerStep> &steps : s.slices) {
          once = once && same_part(steps[i].sides[j], s.slices.front()[i].sides[j]);
          bytes = std::max(bytes, steps[i].sides[j].bytes());
        }
        s.side_once[i].push_back(once);
        const std::uint64_t set0 = offset;
        offset = align_up(offset + bytes, kRegionAlign);
        const std::uint64_t set1 = ping_pong && !once ? offset : set0;
        if (set1 != set0) offset = align_up(offset + bytes, kRegionAlign);
        for (std::size_t slice = 0; slice < s.slices.size(); ++slice)
          s.slices[slice][i].sides[j].addr = std::uint32_t(std::min<std::uint64_t>(slice % 2 ? set1 : set0, UINT32_MAX));
      }
    }
  }

  // The window layers' weights from `offset` on, one buffer each for the
  // whole group (the same in every slice).
  void place_resident(Schedule &s, int first, int last, std::uint64_t &offset) const {
    for (int k = first; k <= last; ++k) {
      if (!is_window(layer(k))) continue;
      const std::uint32_t bytes = window_resident_bytes(window_of(tensors_, layer(k)));
      if (bytes == 0) continue;
      for (std::vector<LayerStep> &steps : s.slices) {
        steps[std::size_t(k - first)].resident = std::uint32_t(std::min<std::uint64_t>(offset, UINT32_MAX));
        steps[std::size_t(k - first)].resident_bytes = bytes;
      }
      offset = align_up(offset + bytes, kRegionAlign);
    }
  }

  // Runs the schedule on the emulator (inside the caller's recording for a
  // static group), each layer under the slice check.
  void run(int first, int last, const Schedule &s) const {
    const GroupTensor &in = input_of(first), &out = output_of(last);
    const auto prologue = [&] {
      load_sides(first, last, s, 0, true);
      for (int k = first; k <= last; ++k)
        if (const LayerStep &step = s.slices.front()[std::size_t(k - first)]; step.resident_bytes > 0)
          run_window_load_resident(window_of(tensors_, layer(k)), step.resident);
    };
    drive_slices(
        s.slices.size(), s.pipelined, prologue,
        [&](std::size_t slice) {
          move_slices({slice_move(in, s.slices[slice].front().in)}, in.dtype, true);
          load_sides(first, last, s, slice, false);
        },
        [&](std::size_t slice) {
          for (int k = first; k <= last; ++k) run_layer(k, s, slice, s.slices[slice][std::size_t(k - first)]);
        },
        [&](std::size_t slice) { move_slices({slice_move(out, s.slices[slice].back().out)}, out.dtype, false); });
  }

 private:
  // Loads the side inputs of slice `slice` that are loaded once (`once`)
  // or those loaded per slice.
  void load_sides(int first, int last, const Schedule &s, std::size_t slice, bool once) const {
    for (int k = first; k <= last; ++k) {
      const std::size_t i = std::size_t(k - first);
      for (std::size_t j = 0; j < sides_of(k).size(); ++j) {
        if (s.side_once[i][j] != once) continue;
        const GroupTensor &side = tensors_[sides_of(k)[j]];
        move_slices({side_move(side, output_of(k), s.slices[slice][i].sides[j])}, side.dtype, true);
      }
    }
  }

  // Layer k's local kernel on slice `slice`, under the slice check.
  void run_layer(int k, const Schedule &s, std::size_t slice, const LayerStep &step) const {
    const GroupLayer &l = layers_[std::size_t(k)];
    const std::string hook = is_window(l) ? "the row window of " + l.op + " (kernel, stride, dilation, pads)"
                             : plugin_.has_symbol("backward_h_" + l.op)  ? "backward_h_" + l.op
                             : plugin_.has_symbol("backwardh_" + l.op) ? "backwardh_" + l.op
                                                                       : "backward_h_" + l.op + " (absent: identity)";
    const CheckedStep where{l.name, l.op, hook, input_of(k), output_of(k), step, s.buffer_offset, slice};
    checked_step(where, [&](const std::vector<tensor_spec_t> &inputs, std::vector<tensor_spec_t> &outputs) {
      if (is_window(l)) {
        const WindowSlice slice{step.out.n, step.in.row0, step.in.rows, step.out.row0, step.out.rows};
        return run_window_local(window_of(tensors_, l), step.resident, step.in.addr, step.out.addr, slice);
      }
      if (is_cast(l)) {
        const int shape[4] = {step.out.n, view_of(output_of(k).shape).c, step.out.rows, step.out.cols};
        return run_cast_local(kernel_dtype(input_of(k).dtype), step.in.addr, kernel_dtype(output_of(k).dtype),
                              step.out.addr, shape);
      }
      if (!is_expression(l)) return backend_.run_local(l.op, l.params, int(s.buffer_offset), step.sec, inputs, outputs);
      // Each input of the formula: the chain's slice, or a side input's.
      const Dtype dtype = output_of(k).dtype;
      std::vector<ExprLocalInput> slices;
      for (std::size_t t : l.inputs) {
        const auto side = std::find(sides_of(k).begin(), sides_of(k).end(), t);
        slices.push_back(side == sides_of(k).end()
                             ? expression_input(step.in, step.out, dtype)
                             : expression_input(step.sides[std::size_t(side - sides_of(k).begin())], step.out, dtype));
      }
      const int shape[4] = {step.out.n, view_of(output_of(k).shape).c, step.out.rows, step.out.cols};
      expression_run_local(l.builtin_params, dtype, shape, slices, step.out.addr, s.buffer_offset, step.out.bytes());
    });
  }


  const Plugin &plugin_;
  const Backend &backend_;
  const std::vector<GroupTensor> &tensors_;
  const std::vector<GroupLayer> &layers_;
  const Chip &chip_;
  std::vector<std::size_t> chain_;               // per layer: the tensor of its chain input
  std::vector<std::vector<std::size_t>> sides_;  // per layer: its side inputs' tensors
};

// A dynamic group's schedule in the metadata: per slice, per layer,
// [sec_info (17 ints, the SDK's field order), input slice, output slice,
// scratch bytes], a slice being [local addr, n0, n, row0, rows, col0, cols]
// (files from before W splitting have the first five: every column).
nlohmann::json slice_json(const LocalSlice &s) { return {s.addr, s.n0, s.n, s.row0, s.rows, s.col0, s.cols}; }

nlohmann::json schedule_json(const Schedule &s) {
  nlohmann::json slices = nlohmann::json::array();
  for (const std::vector<LayerStep> &steps : s.slices) {
    nlohmann::json layers = nlohmann::json::array();
    for (const LayerStep &step : steps) {
      const local_sec_info_t &c = step.sec;
      const nlohmann::json sec = {c.group_type, c.n_slice,     c.out_n_slice, c.d_slice,    c.is_h_split, c.h_idx,
                                  c.h_slice,    c.out_h_idx,   c.out_h_slice, c.is_w_split, c.w_idx,      c.w_slice,
                                  c.out_w_idx,  c.out_w_slice, c.is_c_split,  c.c_idx,      c.c_slice};
      layers.push_back({sec, slice_json(step.in), slice_json(step.out), step.buffer_bytes});
    }
    slices.push_back(std::move(layers));
  }
  return {{"buffer_offset", s.buffer_offset}, {"pipelined", s.pipelined}, {"slices", std::move(slices)}};
}

bool float_dtype(Dtype d) { return d == Dtype::fp32 || d == Dtype::fp16 || d == Dtype::bf16; }

// Why layer k cannot be in any group ("" when it can), from its op and its
// tensors.
std::string not_groupable(const Plugin &plugin, const Backend &backend, const std::vector<GroupTensor> &tensors,
                          const std::vector<GroupLayer> &layers, std::size_t k) {
  const GroupLayer &l = layers[k];
  if (is_builtin_op(l.op) && !sdk_local(l)) return fmt::format("built-in op {} has no local version", l.op);
  if (std::string why; is_window(l) && !window_of(tensors, l, why)) return why;
  if (is_host_op(l.op)) return fmt::format("host op {} runs on the host CPU", l.op);
  if (!sdk_local(l) && !plugin.local_gen_support(l.op, l.params))
    return fmt::format("op {} has no local version (local_gen_support_{} is absent or false)", l.op, l.op);
  if (!sdk_local(l) && !backend.has_local(l.op))
    return fmt::format("op {} has no local version (not registered with register_custom_local_op)", l.op);
  if (l.outputs.size() != 1 || l.inputs.empty())
    return fmt::format("layer '{}' has {} inputs and {} outputs; groups hold layers of one output", l.name,
                       l.inputs.size(), l.outputs.size());
  // A plugin's backward_h_ and backward_w_ give the rows and columns of one
  // input: a second input's would be a guess.
  if (!is_expression(l) && !is_window(l) && l.inputs.size() > 1)
    return fmt::format("layer '{}' (op {}) has {} inputs: its input 1 '{}' would need the slices backward_h_{} "
                       "declares for input 0 only; groups take side inputs for builtin.expression layers",
                       l.name, l.op, l.inputs.size(), tensors[l.inputs[1]].name, l.op);
  if (l.has_scratch) return fmt::format("layer '{}' uses a global scratch buffer", l.name);
  // Kept global: in a pipelined group, the store of one slice into the
  // shared memory runs beside the load of the next, and a layer with a
  // halo would load rows already updated.
  if (l.inplace) return fmt::format("layer '{}' updates its input in place", l.name);
  // Its copy is made by global commands before its kernel.
  if (l.padded) return fmt::format("layer '{}' reads a padded copy of its input", l.name);
  // A group runs its layers' local kernels slice by slice on one core; the
  // op's split across cores is its global kernel's, which a group never
  // calls. Global, the layer runs on every core in force.
  if (l.multi_core)
    return fmt::format("layer '{}' (op {}) is multi-core: kept global, where it runs on every core; a layer group "
                       "runs on one core",
                       l.name, l.op);
  for (std::size_t i = 1; is_window(l) && i < l.inputs.size(); ++i)
    if (l.inputs[i] == l.inputs[0])
      return fmt::format("layer '{}' ({}) reads its input '{}' as its weights too; a group loads a layer's weights "
                         "into local memory once, from outside the group",
                         l.name, l.op, tensors[l.inputs[0]].name);
  const GroupTensor &o = tensors[l.outputs[0]];
  const int chain = chain_input(tensors, layers, k);
  if (chain < 0)
    return fmt::format("layer '{}' (builtin.expression): no input has the output's shape {} (input '{}' is {}); a "
                       "group slices a layer through an input of its output's shape",
                       l.name, shape_text(o.shape), tensors[l.inputs[0]].name, shape_text(tensors[l.inputs[0]].shape));
  const GroupTensor &in = tensors[l.inputs[std::size_t(chain)]];
  const View vi = view_of(in.shape), vo = view_of(o.shape);
  if (in.shape.size() > 4 || o.shape.size() > 4) return fmt::format("layer '{}' has tensors of more than 4 dims", l.name);
  for (std::size_t t : l.inputs)
    if (!float_dtype(tensors[t].dtype))
      return fmt::format("layer '{}' has a {} input '{}'; groups hold fp32, fp16 and bf16", l.name,
                         dtype_name(tensors[t].dtype), tensors[t].name);
  if (!float_dtype(o.dtype))
    return fmt::format("layer '{}' has a {} tensor; groups hold fp32, fp16 and bf16", l.name, dtype_name(o.dtype));
  if (vi.n != vo.n || (vi.h != vo.h && !is_window(l)))
    return fmt::format("layer '{}' changes N or H ({} -> {})", l.name, shape_text(in.shape), shape_text(o.shape));
  // A side input is sliced like the output: along each axis it has the
  // output's size or 1 (numpy broadcasting, which builtin.expression checks).
  for (std::size_t t : side_inputs(l, chain)) {
    const Shape padded = padded_to(tensors[t].shape, o.shape.size());
    bool slices = tensors[t].shape.size() <= o.shape.size();
    for (std::size_t d = 0; slices && d < padded.size(); ++d) slices = padded[d] == 1 || padded[d] == o.shape[d];
    if (!slices)
      return fmt::format("layer '{}': side input '{}' {} does not broadcast to the output {} slice by slice", l.name,
                         tensors[t].name, shape_text(tensors[t].shape), shape_text(o.shape));
  }
  return "";
}

// Why a group cannot continue from layer k - 1 into layer k ("" when it
// can): layer k takes layer k - 1's output as its chain, and nobody else
// needs that output. `consumers`: per tensor, the layers reading it.
std::string chain_break(const std::vector<GroupTensor> &tensors, const std::vector<GroupLayer> &layers, std::size_t k,
                        const std::vector<std::vector<std::size_t>> &consumers) {
  const GroupLayer &prev = layers[k - 1], &l = layers[k];
  if (prev.dynamic != l.dynamic)
    return fmt::format("layer '{}' is {} and layer '{}' {}: a group is all static or all dynamic", prev.name,
                       prev.dynamic ? "dynamic" : "static", l.name, l.dynamic ? "dynamic" : "static");
  const int chain = chain_input(tensors, layers, k);
  if (prev.outputs.size() != 1 || chain < 0 || l.inputs[std::size_t(chain)] != prev.outputs[0]) {
    if (prev.outputs.size() == 1 && std::find(l.inputs.begin(), l.inputs.end(), prev.outputs[0]) != l.inputs.end())
      return fmt::format("layer '{}' takes layer '{}''s output '{}' {} only as a broadcast side input; a group "
                         "continues through a tensor of the next layer's output shape, and side inputs come from "
                         "outside the group",
                         l.name, prev.name, tensors[prev.outputs[0]].name, shape_text(tensors[prev.outputs[0]].shape));
    return fmt::format("layer '{}' does not take layer '{}''s output", l.name, prev.name);
  }
  if (tensors[prev.outputs[0]].net_output)
    return fmt::format("tensor '{}' is a net output (a group stores only its last layer's output)",
                       tensors[prev.outputs[0]].name);
  if (consumers[prev.outputs[0]].size() > 1)
    return fmt::format("tensor '{}' is also used by another layer (a group stores only its last layer's output, and "
                       "side inputs come from outside the group)",
                       tensors[prev.outputs[0]].name);
  return "";
}

// The planner's view of layer k's side inputs.
std::vector<PlannerSide> planner_sides(const std::vector<GroupTensor> &tensors, const std::vector<GroupLayer> &layers,
                                       std::size_t k, const Chip &chip) {
  const GroupLayer &l = layers[k];
  const GroupTensor &o = tensors[l.outputs[0]];
  const View vo = view_of(o.shape);
  std::vector<PlannerSide> sides;
  for (std::size_t t : side_inputs(l, chain_input(tensors, layers, k))) {
    const GroupTensor &side = tensors[t];
    const View v = broadcast_view(side.shape, o.shape);
    PlannerSide p;
    p.broadcast = (v.n == 1 && vo.n > 1 ? PlannerSide::kBroadcastN : 0) |
                  (v.h == 1 && vo.h > 1 ? PlannerSide::kBroadcastH : 0) |
                  (v.w == 1 && vo.w > 1 ? PlannerSide::kBroadcastW : 0);
    const double crows = div_up(vo.c, chip.npu_num), esize = double(dtype_size(side.dtype));
    p.bytes = double(detail::element_count(side.shape)) * esize;
    p.row_bytes = crows * v.w * esize;
    p.plane_pad = crows * chip.eu_num.at(side.dtype) * esize;
    sides.push_back(p);
  }
  return sides;
}

// The planner's view of every layer.
std::vector<PlannerLayer> planner_layers(const Plugin &plugin, const Backend &backend,
                                         const std::vector<GroupTensor> &tensors,
                                         const std::vector<GroupLayer> &layers, const Chip &chip) {
  std::vector<std::vector<std::size_t>> consumers(tensors.size());
  for (std::size_t k = 0; k < layers.size(); ++k)
    for (std::size_t t : layers[k].inputs)  // a layer reading a tensor twice is one consumer
      if (consumers[t].empty() || consumers[t].back() != k) consumers[t].push_back(k);
  std::vector<PlannerLayer> out(layers.size());
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const GroupLayer &l = layers[k];
    PlannerLayer &p = out[k];
    p.op = l.op;
    p.global_us = l.global_us;
    p.bdc_us = l.bdc_us;
    p.not_groupable = not_groupable(plugin, backend, tensors, layers, k);
    if (!p.not_groupable.empty()) continue;
    const GroupTensor &in = tensors[l.inputs[std::size_t(chain_input(tensors, layers, k))]], &o = tensors[l.outputs[0]];
    const View vi = view_of(in.shape), vo = view_of(o.shape);
    p.n = vo.n;
    p.h = vo.h;
    p.split_n = allows_split(plugin, l, 0);
    p.split_h = allows_split(plugin, l, 2);
    p.in_h = vi.h;
    int in_idx = 0, in_slice = 0;
    const int mid = vo.h / 2;
    if (is_window(l)) {
      // r output rows read stride (r - 1) + the window's extent rows: in
      // the planner's terms stride r + halo, before clipping to the input.
      const ConvArgs a = window_of(tensors, l);
      p.stride = a.stride_h;
      p.halo = a.dilation_h * (a.kh - 1) + 1 - a.stride_h;
      p.resident_bytes = window_resident_bytes(a);
    } else if (vo.h > 1 && p.split_h && input_range(plugin, tensors, l, true, mid, 1, &in_idx, &in_slice))
      p.halo = std::max(0, in_slice - 1);
    else if (vo.h > 1 && p.split_h)
      p.split_h = false;
    // W is split only when N and H slices cannot make the group fit, and only
    // through layers that keep W (backward_w_ absent: the same columns).
    p.w = vo.w;
    p.split_w = vo.w > 1 && vi.w == vo.w && allows_split(plugin, l, 3) &&
                input_range(plugin, tensors, l, false, vo.w / 2, 1, &in_idx, &in_slice);
    if (p.split_w) p.halo_w = std::max(0, in_slice - 1);
    const LocalSlice si = local_slice(in, chip, 0, 1, 0, 1), so = local_slice(o, chip, 0, 1, 0, 1);
    p.in_bytes = double(detail::element_count(in.shape) * dtype_size(in.dtype));
    p.out_bytes = double(detail::element_count(o.shape) * dtype_size(o.dtype));
    p.in_row_bytes = double(si.row_bytes) * si.crows;
    p.out_row_bytes = double(so.row_bytes) * so.crows;
    p.in_plane_pad = double(chip.eu_num.at(in.dtype) * dtype_size(in.dtype)) * si.crows;
    p.out_plane_pad = double(chip.eu_num.at(o.dtype) * dtype_size(o.dtype)) * so.crows;
    p.sides = planner_sides(tensors, layers, k, chip);
    local_sec_info_t sec{};
    sec.group_type = GROUP_NORMAL;
    sec.n_slice = sec.out_n_slice = 1;
    sec.d_slice = 1;
    sec.h_slice = sec.out_h_slice = vo.h;
    sec.w_slice = vi.w;
    sec.out_w_slice = vo.w;
    sec.c_slice = vi.c;
    // Every broadcast side input expanded: the most scratch a slice can ask.
    int expanded = 0;
    for (const PlannerSide &side : p.sides) expanded += side.broadcast != 0;
    const int scratch = scratch_bytes(backend, l, sec, local_spec(in, 0), local_spec(o, 0), o.dtype,
                                      local_slice(o, chip, 0, 1, 0, vo.h).bytes(), expanded);
    p.scratch_row_bytes = double(scratch) / vo.h;
    if (k > 0) p.chain_break = chain_break(tensors, layers, k, consumers);
  }
  return out;
}

// The planned slicing of `g`, with more slices (N, then H, then W where the
// planner could split it) while the exact layout does not fit local memory:
// the estimate may be short of it.
Schedule fitted_schedule(const Plugin &plugin, const GroupBuilder &builder, const std::vector<PlannerLayer> &planned,
                         const PlannedGroup &g, bool ping_pong) {
  Schedule s = builder.schedule(g.first, g.last, g.n_slices, g.h_slices, g.w_slices, ping_pong);
  const View out = view_of(builder.output_of(g.last).shape);
  bool h_ok = true, n_ok = true, w_ok = true;
  for (int k = g.first; k <= g.last; ++k) {
    const GroupLayer &l = builder.layer(k);
    h_ok = h_ok && allows_split(plugin, l, 2);
    n_ok = n_ok && allows_split(plugin, l, 0);
    w_ok = w_ok && planned[std::size_t(k)].split_w && planned[std::size_t(k)].w == out.w;
  }
  // Half as many again each time: a layout costs a _local_bfsz query per
  // layer and slice, and W may have thousands of columns.
  const auto more = [](int slices, int limit) { return std::min(limit, slices + std::max(1, slices / 2)); };
  while (!s.why.empty()) {
    if (n_ok && s.n_slices < out.n)
      s = builder.schedule(g.first, g.last, more(s.n_slices, out.n), s.h_slices, s.w_slices, ping_pong);
    else if (h_ok && s.h_slices < out.h)
      s = builder.schedule(g.first, g.last, s.n_slices, more(s.h_slices, out.h), s.w_slices, ping_pong);
    else if (w_ok && s.w_slices < out.w)
      s = builder.schedule(g.first, g.last, s.n_slices, s.h_slices, more(s.w_slices, out.w), ping_pong);
    else
      break;
  }
  return s;
}

// The group's side inputs for the metadata (tpu_model info prints them):
// per layer and side input, whether it is loaded once or per slice.
nlohmann::json side_inputs_json(const GroupBuilder &builder, int first, int last, const Schedule &s) {
  nlohmann::json sides = nlohmann::json::array();
  for (int k = first; k <= last; ++k)
    for (std::size_t j = 0; j < builder.sides_of(k).size(); ++j)
      sides.push_back({{"layer", builder.layer(k).name},
                       {"tensor", builder.tensor(builder.sides_of(k)[j]).name},
                       {"loaded", s.side_once[std::size_t(k - first)][j] ? "once" : "per slice"}});
  return sides;
}

}  // namespace

GroupPlanning plan_layer_groups(const Plugin &plugin, const Backend &backend, const std::vector<GroupTensor> &tensors,
                                const std::vector<GroupLayer> &layers, uint32_t local_memory_limit) {
  Chip chip = chip_figures(tensors);
  if (local_memory_limit > 0) chip.local_mem = std::min(chip.local_mem, local_memory_limit);
  GroupPlanning planning;
  PlannerFigures &figures = planning.figures;
  figures.local_mem_bytes = chip.local_mem;
  double bytes = 0, busy = 0;
  for (const GroupLayer &l : layers) {
    bytes += double(l.gdma_bytes);
    busy += l.gdma_us;
  }
  if (bytes > 0 && busy > 0) figures.gdma_bytes_per_us = bytes / busy;
  planning.layers = planner_layers(plugin, backend, tensors, layers, chip);
  planning.plan = GroupPlanner(planning.layers, figures).plan();
  return planning;
}

RecordedGroups record_layer_groups(const Plugin &plugin, const Backend &backend,
                                   const std::vector<GroupTensor> &tensors, const std::vector<GroupLayer> &layers,
                                   const GroupPlanning &planning, PlanRange plan_range) {
  Chip chip = chip_figures(tensors);
  chip.local_mem = std::min(chip.local_mem, std::uint32_t(planning.figures.local_mem_bytes));
  const PlannerFigures &figures = planning.figures;
  RecordedGroups result;
  result.group_of_layer.assign(layers.size(), -1);
  result.plan = planning.plan;
  const GroupBuilder builder(plugin, backend, tensors, layers, chip);

  nlohmann::json groups = nlohmann::json::array(), fallbacks = nlohmann::json::array();
  for (PlannedGroup &g : result.plan.groups) {
    if (!g.grouped()) continue;
    // Two buffers for the group's input and output (the slices pipelined),
    // else one each (the slices in turn) when no slicing fits two.
    Schedule s = fitted_schedule(plugin, builder, planning.layers, g, true);
    if (!s.why.empty()) s = fitted_schedule(plugin, builder, planning.layers, g, false);
    if (!s.why.empty()) {
      fallbacks.push_back({{"first", g.first}, {"last", g.last}, {"reason", s.why}});
      continue;
    }
    g.n_slices = s.n_slices;
    g.h_slices = s.h_slices;
    g.w_slices = s.w_slices;
    const int index = int(groups.size());
    nlohmann::json entry = {{"first", g.first},
                            {"last", g.last},
                            {"n_slices", s.n_slices},
                            {"h_slices", s.h_slices},
                            {"w_slices", s.w_slices},
                            {"estimate_us", g.estimate_us},
                            {"local_bytes", s.local_bytes}};
    if (nlohmann::json sides = side_inputs_json(builder, g.first, g.last, s); !sides.empty())
      entry["side_inputs"] = std::move(sides);
    std::string not_pipelined;
    if (layers[std::size_t(g.first)].dynamic) {
      // Run once here, for the slice check; the schedule is what runs.
      not_pipelined = run_with_fallback(s, [&](const Schedule &attempt) { builder.run(g.first, g.last, attempt); });
      entry["execution"] = "dynamic";
      entry["schedule"] = schedule_json(s);
    } else {
      const std::string section = fmt::format("layer_group.{}.commands", index);
      std::vector<uint8_t> stream;
      not_pipelined = run_with_fallback(s, [&](const Schedule &attempt) {
        Recording recording(fmt::format("layer group {} (layers '{}'..'{}')", index,
                                        layers[std::size_t(g.first)].name, layers[std::size_t(g.last)].name));
        builder.run(g.first, g.last, attempt);
        stream = recording.end();
      });
      const nlohmann::json info = stream_info(stream);
      check_buffers_in_plan(info, plan_range);
      entry["execution"] = "commands";
      entry["section"] = section;
      entry["commands"] = info.at("commands").get<uint64_t>();
      result.sections.push_back({section, "commands", std::move(stream)});
    }
    entry["pipelined"] = s.pipelined;
    if (!not_pipelined.empty()) entry["not_pipelined"] = not_pipelined;
    for (int k = g.first; k <= g.last; ++k) result.group_of_layer[std::size_t(k)] = index;
    groups.push_back(std::move(entry));
  }
  nlohmann::json boundaries = nlohmann::json::array();
  for (const PlanBoundary &b : result.plan.boundaries) boundaries.push_back({{"after", b.after}, {"reason", b.reason}});
  result.metadata = {{"global_us", result.plan.global_us},
                     {"planned_us", result.plan.planned_us},
                     {"figures",
                      {{"gdma_bytes_per_us", figures.gdma_bytes_per_us},
                       {"per_command_us", figures.per_command_us},
                       {"local_mem_bytes", figures.local_mem_bytes}}},
                     {"groups", groups},
                     {"boundaries", boundaries},
                     {"fallbacks", fallbacks}};
  return result;
}

namespace {

// Reads the schedule back, every value checked; `what` names the group.
int schedule_int(const nlohmann::json &j, const std::string &what) {
  if (!j.is_number_integer() || j.get<int64_t>() < INT32_MIN || j.get<int64_t>() > INT32_MAX)
    throw Error(fmt::format("{}: schedule value {} is not a 32-bit integer", what, j.dump()));
  return int(j.get<int64_t>());
}

const nlohmann::json &schedule_array(const nlohmann::json &j, std::size_t size, const std::string &what) {
  if (!j.is_array() || (size && j.size() != size))
    throw Error(fmt::format("{}: malformed schedule entry {}", what, j.dump().substr(0, 200)));
  return j;
}

LocalSlice slice_from(const nlohmann::json &j, const GroupTensor &t, const Chip &chip, const std::string &what) {
  const View view = view_of(t.shape);
  if (!j.is_array() || (j.size() != 5 && j.size() != 7))
    throw Error(fmt::format("{}: malformed schedule entry {}", what, j.dump().substr(0, 200)));
  int v[7] = {0, 0, 0, 0, 0, 0, view.w};
  for (std::size_t i = 0; i < j.size(); ++i) v[i] = schedule_int(j[i], what);
  if (v[0] < 0 || std::uint32_t(v[0]) >= chip.local_mem || v[1] < 0 || v[2] < 1 || v[1] + v[2] > view.n || v[3] < 0 ||
      v[4] < 1 || v[3] + v[4] > view.h || v[5] < 0 || v[6] < 1 || v[5] + v[6] > view.w)
    throw Error(fmt::format("{}: slice {} is outside tensor '{}' {} or local memory", what, j.dump(), t.name,
                            shape_text(t.shape)));
  LocalSlice s = local_slice(t, chip, v[1], v[2], v[3], v[4], v[5], v[6]);
  s.addr = std::uint32_t(v[0]);
  return s;
}

}  // namespace

void run_dynamic_group(const Firmware &firmware, const ModelDescription &d, const ModelGroup &group, uint64_t base) {
  const std::string what = fmt::format("dynamic layer group of layers {}..{}", group.first, group.last);
  std::vector<GroupTensor> tensors;
  for (const ModelTensor &t : d.tensors) tensors.push_back({t.name, t.shape, t.dtype, base + t.offset, false});
  const Chip chip = chip_figures(tensors);
  const nlohmann::json &schedule = group.schedule;
  if (!schedule.is_object() || !schedule.contains("buffer_offset") || !schedule.contains("slices"))
    throw Error(fmt::format("{}: the schedule needs buffer_offset and slices", what));
  const int buffer_offset = schedule_int(schedule["buffer_offset"], what);
  if (buffer_offset < 0 || std::uint32_t(buffer_offset) > chip.local_mem)
    throw Error(fmt::format("{}: buffer offset {} is outside local memory", what, buffer_offset));
  bool pipelined = false;
  if (schedule.contains("pipelined")) {
    if (!schedule["pipelined"].is_boolean())
      throw Error(fmt::format("{}: the schedule's \"pipelined\" is {}, not true or false", what,
                              schedule["pipelined"].dump()));
    pipelined = schedule["pipelined"].get<bool>();
  }
  // Every step is read and checked before anything runs.
  const std::size_t count = std::size_t(group.last - group.first + 1);
  const nlohmann::json &slices = schedule_array(schedule["slices"], 0, what);
  std::vector<std::vector<LayerStep>> steps(slices.size(), std::vector<LayerStep>(count));
  for (std::size_t slice = 0; slice < slices.size(); ++slice) {
    const nlohmann::json &layers = schedule_array(slices[slice], count, what);
    for (std::size_t k = 0; k < count; ++k) {
      const ModelLayer &l = d.layers[std::size_t(group.first) + k];
      const nlohmann::json &entry = schedule_array(layers[k], 4, what);
      const nlohmann::json &sec = schedule_array(entry[0], 17, what);
      LayerStep &step = steps[slice][k];
      int32_t *fields[] = {&step.sec.group_type, &step.sec.n_slice,     &step.sec.out_n_slice, &step.sec.d_slice,
                           &step.sec.is_h_split, &step.sec.h_idx,       &step.sec.h_slice,     &step.sec.out_h_idx,
                           &step.sec.out_h_slice, &step.sec.is_w_split, &step.sec.w_idx,       &step.sec.w_slice,
                           &step.sec.out_w_idx,  &step.sec.out_w_slice, &step.sec.is_c_split,  &step.sec.c_idx,
                           &step.sec.c_slice};
      for (std::size_t f = 0; f < 17; ++f) *fields[f] = schedule_int(sec[f], what);
      step.in = slice_from(entry[1], tensors[l.inputs.at(0)], chip, what);
      step.out = slice_from(entry[2], tensors[l.outputs.at(0)], chip, what);
      step.buffer_bytes = schedule_int(entry[3], what);
      if (step.buffer_bytes < 0 || uint64_t(buffer_offset) + uint64_t(step.buffer_bytes) > chip.local_mem)
        throw Error(fmt::format("{}: scratch of {} bytes at {} is outside local memory", what, step.buffer_bytes,
                                buffer_offset));
    }
  }
  const ModelLayer &first = d.layers[std::size_t(group.first)], &last = d.layers[std::size_t(group.last)];
  const GroupTensor &in = tensors[first.inputs[0]], &out = tensors[last.outputs[0]];
  drive_slices(
      steps.size(), pipelined, [] {},
      [&](std::size_t slice) { move_slices({slice_move(in, steps[slice].front().in)}, in.dtype, true); },
      [&](std::size_t slice) {
        for (std::size_t k = 0; k < count; ++k) {
          const ModelLayer &l = d.layers[std::size_t(group.first) + k];
          const std::string hook = "backward_h_" + l.op;
          const CheckedStep c{l.name, l.op, hook, tensors[l.inputs[0]], tensors[l.outputs[0]], steps[slice][k],
                              std::uint32_t(buffer_offset), slice};
          PackedParams params = l.params;
          params.set_global_buffer((unsigned long long)(buffer_offset));  // int64 local offset, as the dynamic record
          checked_step(c, [&](const std::vector<tensor_spec_t> &inputs, std::vector<tensor_spec_t> &outputs) {
            firmware.run_local(l.op, params, steps[slice][k].sec, inputs, outputs);
          });
        }
      },
      [&](std::size_t slice) { move_slices({slice_move(out, steps[slice].back().out)}, out.dtype, false); });
}

nlohmann::json group_static_record(int group) { return {{"execution", kGroupExecution}, {"group", group}}; }

void check_group(const ModelFile &model, const ModelDescription &d, const ModelGroup &group) {
  const Section *s = model.find_section(group.section);
  const std::string what = fmt::format("layer group of layers {}..{}", group.first, group.last);
  if (!s) throw Error(fmt::format("{}: its command section '{}' is missing", what, group.section));
  if (s->kind != "commands")
    throw Error(fmt::format("{}: section '{}' is of kind '{}', not 'commands'", what, s->name, s->kind));
  try {
    const nlohmann::json info = stream_info(s->data);
    if (info.at("chip").get<std::string>() != d.chip)
      throw Error(fmt::format("it was recorded on {}, but the model is for {}", info.at("chip").get<std::string>(),
                              d.chip));
    check_buffers_in_plan(info, {d.memory_base, d.memory_size});
  } catch (const Error &e) {
    throw Error(fmt::format("{}: section '{}': {}", what, s->name, e.what()));
  }
}

void replay_group(const ModelFile &model, const ModelGroup &group) {
  const Section *s = model.find_section(group.section);
  if (!s) throw Error(fmt::format("layer group: its command section '{}' is missing", group.section));
  if (cmodel_replay(s->data.data(), s->data.size()) != 0) throw Error(cmodel_last_error());
}

}  // namespace tpu_runtime::detail
