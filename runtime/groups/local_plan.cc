// local_plan.cc: slicings, local-memory layout and slice moves for the op
// tester's local runs.
#include "groups/local_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "cmodel_host.h"
#include "emulator/emulator.h"
#include "io/arrays.h"
#include "tpu_kernel.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace {

// Local regions start on this boundary: comfortably above every chip's EU
// width in bytes, so an aligned tensor is aligned wherever it starts.
constexpr std::uint32_t kRegionAlign = 512;

std::uint32_t align_up(std::uint64_t value, std::uint32_t to) { return std::uint32_t((value + to - 1) / to * to); }

data_type_t kernel_dtype(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp16: return DT_FP16;
    case Dtype::bf16: return DT_BFP16;
    default: return DT_FP32;
  }
}

// The candidate (n_step, h_step) pairs, largest first.
std::vector<std::pair<int, int>> candidate_steps(int n, int h) {
  std::vector<std::pair<int, int>> steps = {{n, h}, {1, h}, {n, (h + 1) / 2}, {std::max(1, n / 2), 3}, {1, 1}};
  for (auto &[ns, hs] : steps) {
    ns = std::clamp(ns, 1, n);
    hs = std::clamp(hs, 1, h);
  }
  return steps;
}

}  // namespace

void fold_nchw(const Shape &shape, int out[4]) {
  for (int i = 0; i < 4; ++i) out[i] = i < int(shape.size()) ? shape[std::size_t(i)] : 1;
  for (std::size_t i = 4; i < shape.size(); ++i) out[3] *= shape[i];
}

LocalPlanner::LocalPlanner(const Plugin &plugin, const Backend &backend, std::string op, const PackedParams &params,
                           Dtype dtype, std::vector<Shape> input_shapes, std::vector<Shape> output_shapes)
    : plugin_(plugin),
      backend_(backend),
      op_(std::move(op)),
      params_(params),
      dtype_(dtype),
      input_shapes_(std::move(input_shapes)),
      output_shapes_(std::move(output_shapes)) {}

// Bytes per NPU of an aligned (n, c, h, w) tensor starting on NPU 0.
std::uint32_t LocalPlanner::slice_bytes(int n, int c, int h, int w, const ChipFigures &chip) const {
  const std::uint64_t channel = align_up(std::uint64_t(h) * std::uint64_t(w), std::uint32_t(chip.eu_num));
  const std::uint64_t rows = std::uint64_t((c + chip.npu_num - 1) / chip.npu_num) * std::uint64_t(n);
  const std::uint64_t bytes = channel * rows * dtype_size(dtype_);
  return bytes > 0xffffffffu ? 0xffffffffu : std::uint32_t(bytes);
}

// Lays out and records every step of one slicing; false when the op refuses
// it or it does not fit local memory.
bool LocalPlanner::build(int n_step, int h_step, const std::vector<DeviceTensor> &inputs,
                         const std::vector<DeviceTensor> &outputs, const ChipFigures &chip, LocalPlan &plan) const {
  int out4[4];
  fold_nchw(output_shapes_[0], out4);
  plan.name = fmt::format("local n={} h={}", n_step, h_step);
  plan.steps.clear();
  for (int n0 = 0; n0 < out4[0]; n0 += n_step) {
    for (int h0 = 0; h0 < out4[2]; h0 += h_step) {
      LocalStep step;
      local_sec_info_t &sec = step.sec_info;
      const int n_slice = std::min(n_step, out4[0] - n0), out_h_slice = std::min(h_step, out4[2] - h0);
      int in_idx = 0, in_slice = 0;
      if (!plugin_.backward_h(op_, params_, h0, out_h_slice, &in_idx, &in_slice)) return false;
      int in4[4];
      fold_nchw(input_shapes_[0], in4);
      if (in_idx < 0 || in_slice < 1 || in_idx + in_slice > in4[2]) return false;
      sec.group_type = GROUP_NORMAL;
      sec.n_slice = sec.out_n_slice = n_slice;
      sec.d_slice = 1;
      sec.h_idx = in_idx;
      sec.h_slice = in_slice;
      sec.is_h_split = !(in_idx == 0 && in_slice == in4[2]);
      sec.out_h_idx = h0;
      sec.out_h_slice = out_h_slice;
      sec.w_slice = in4[3];
      sec.out_w_slice = out4[3];
      sec.c_slice = in4[1];

      std::uint64_t offset = 0;
      const auto place = [&](const DeviceTensor &t, int h_idx, int h_slice, std::vector<SliceMove> &moves,
                             std::vector<tensor_spec_t> &specs) {
        SliceMove m;
        fold_nchw(t.shape, m.full);
        m.n = n_slice;
        m.c = m.full[1];
        m.h = h_slice;
        m.w = m.full[3];
        m.local_addr = std::uint32_t(offset);
        const std::uint64_t first = (std::uint64_t(n0) * m.full[1] * m.full[2] + std::uint64_t(h_idx)) * m.full[3];
        m.global_addr = t.addr + first * dtype_size(dtype_);
        m.bytes = slice_bytes(m.n, m.c, m.h, m.w, chip);
        offset = align_up(offset + m.bytes, kRegionAlign);
        tensor_spec_t spec{};
        spec.addr = m.local_addr;
        spec.dtype = dtype_info(dtype_).sg_dtype;
        spec.dims = int(t.shape.size());
        std::copy(t.shape.begin(), t.shape.end(), spec.shape);
        moves.push_back(m);
        specs.push_back(spec);
      };
      for (const DeviceTensor &t : inputs) place(t, in_idx, in_slice, step.input_moves, step.input_specs);
      for (const DeviceTensor &t : outputs) place(t, h0, out_h_slice, step.output_moves, step.output_specs);
      step.buffer_offset = int(offset);
      const int buffer = backend_.local_buffer_size(op_, params_, sec, step.input_specs, step.output_specs);
      if (buffer < 0 || offset + std::uint64_t(buffer) > chip.local_mem) return false;
      step.buffer_bytes = buffer;
      plan.steps.push_back(std::move(step));
    }
  }
  return true;
}

std::vector<LocalPlan> LocalPlanner::plans(int max_plans, const std::vector<DeviceTensor> &inputs,
                                           const std::vector<DeviceTensor> &outputs) const {
  ChipFigures chip;
  const data_type_t dt = kernel_dtype(dtype_);
  detail::run_on_emulator("reading the chip's figures", [&] {
    chip.npu_num = tpu_npu_num();
    chip.eu_num = tpu_eu_num(dt);
    chip.local_mem = std::uint32_t(tpu_local_mem_size_per_npu());
  });
  int out4[4];
  fold_nchw(output_shapes_[0], out4);
  const bool n_ok = plugin_.allow_data_split(op_, params_, 0, GROUP_NORMAL);
  const bool h_ok = plugin_.allow_data_split(op_, params_, 2, GROUP_NORMAL);

  std::vector<LocalPlan> result;
  std::set<std::pair<int, int>> tried;
  for (auto [n_step, h_step] : candidate_steps(out4[0], out4[2])) {
    if ((n_step < out4[0] && !n_ok) || (h_step < out4[2] && !h_ok)) continue;
    // Shrink until it fits: h first, then n, as a layer group would.
    LocalPlan plan;
    while (true) {
      if (tried.insert({n_step, h_step}).second && build(n_step, h_step, inputs, outputs, chip, plan)) {
        result.push_back(std::move(plan));
        break;
      }
      if (h_step > 1 && h_ok) h_step = (h_step + 1) / 2;
      else if (n_step > 1 && n_ok) n_step = (n_step + 1) / 2;
      else break;
      if (h_step == 1 && n_step == 1 && tried.count({1, 1})) break;
    }
    if (int(result.size()) >= max_plans) break;
  }
  return result;
}

// ---- LocalGuard --------------------------------------------------------------

namespace {

// The poison byte at a local address: a hash of the address, not one value,
// so a kernel that copies poison from one place to another (reading past
// its input slice, writing past its output slice) still changes what it
// overwrites.
std::uint8_t poison_byte(std::uint64_t address) {
  std::uint64_t x = address * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return std::uint8_t(x >> 56);
}

struct Region {
  std::uint64_t begin, end;
  std::string what;
};

std::string region_list(const std::vector<Region> &regions) {
  std::string text;
  for (const Region &r : regions) {
    if (r.begin == r.end) continue;
    text += fmt::format("{}{} [{:#x}, {:#x})", text.empty() ? "" : ", ", r.what, r.begin, r.end);
  }
  return text.empty() ? "none" : text;
}

}  // namespace

void LocalGuard::poison() {
  detail::run_on_emulator("poisoning local memory", [&] {
    npu_num_ = tpu_npu_num();
    local_mem_ = std::uint32_t(tpu_local_mem_size_per_npu());
    // The pattern is computed once per chip geometry, then copied.
    static std::vector<std::uint8_t> image;
    if (image.size() != std::size_t(npu_num_) * local_mem_) {
      image.resize(std::size_t(npu_num_) * local_mem_);
      for (std::size_t i = 0; i < image.size(); ++i) image[i] = poison_byte(i);
    }
    for (int npu = 0; npu < npu_num_; ++npu)
      std::memcpy(tpu_local_mem_addr(npu, 0), image.data() + std::size_t(npu) * local_mem_, local_mem_);
  });
  // The pattern is poison, not data: every byte counts as unwritten, and
  // the kernel reading one it did not load is stopped there.
  if (cmodel_local_poison(0) != 0) throw Error(fmt::format("poisoning local memory: {}", cmodel_last_error()));
}

namespace {
// One NPU's local memory, read without a host pointer (which would mark
// all of it written).
void read_npu(int npu, std::uint32_t bytes, std::uint8_t *out) {
  if (cmodel_local_read(out, npu, 0, bytes) != 0)
    throw Error(fmt::format("reading local memory: {}", cmodel_last_error()));
}
}  // namespace

void LocalGuard::remember() {
  remembered_.resize(std::size_t(npu_num_) * local_mem_);
  for (int npu = 0; npu < npu_num_; ++npu) read_npu(npu, local_mem_, remembered_.data() + std::size_t(npu) * local_mem_);
}

std::string LocalGuard::stray_write(const LocalStep &step) const {
  std::vector<Region> allowed;
  for (std::size_t i = 0; i < step.output_moves.size(); ++i) {
    const SliceMove &m = step.output_moves[i];
    allowed.push_back({m.local_addr, std::uint64_t(m.local_addr) + m.bytes, fmt::format("output {}", i)});
  }
  allowed.push_back({std::uint64_t(step.buffer_offset), std::uint64_t(step.buffer_offset) + std::uint64_t(step.buffer_bytes),
                     "scratch buffer"});
  // What the step may not write, the same on every NPU: [0, local_mem)
  // minus the allowed regions, as sorted gaps.
  std::vector<Region> sorted = allowed;
  std::sort(sorted.begin(), sorted.end(), [](const Region &a, const Region &b) { return a.begin < b.begin; });
  std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;
  std::uint64_t from = 0;
  for (const Region &r : sorted) {
    if (r.begin > from) gaps.emplace_back(from, std::min<std::uint64_t>(r.begin, local_mem_));
    from = std::max(from, r.end);
  }
  if (from < local_mem_) gaps.emplace_back(from, local_mem_);

  std::string stray;
  std::vector<std::uint8_t> current(local_mem_);
  {
    for (int npu = 0; npu < npu_num_ && stray.empty(); ++npu) {
      read_npu(npu, local_mem_, current.data());
      const std::uint8_t *now = current.data();
      const std::uint8_t *before = remembered_.data() + std::size_t(npu) * local_mem_;
      for (const auto &[begin, end] : gaps) {
        if (std::memcmp(now + begin, before + begin, end - begin) == 0) continue;
        std::uint64_t offset = begin;
        while (now[offset] == before[offset]) ++offset;
        stray = fmt::format("the local kernel wrote NPU {} local memory at offset {:#x}, outside what the step "
                            "declared (every NPU: {}; out h {}..{} of n {}); a local layer may write only its output "
                            "slices and the scratch buffer its _local_bfsz asked for",
                            npu, offset, region_list(allowed), step.sec_info.out_h_idx,
                            step.sec_info.out_h_idx + step.sec_info.out_h_slice, step.sec_info.out_n_slice);
        break;
      }
    }
  }
  return stray;
}

void move_slices(const std::vector<SliceMove> &moves, Dtype dtype, bool to_local) {
  const data_type_t dt = kernel_dtype(dtype);
  detail::run_on_emulator(to_local ? "loading a local slice" : "storing a local slice", [&] {
    for (const SliceMove &m : moves) {
      const dim4 shape = {m.n, m.c, m.h, m.w};
      const dim4 global_stride = m.strided ? dim4{m.stride[0], m.stride[1], m.stride[2], m.stride[3]}
                                           : dim4{m.full[1] * m.full[2] * m.full[3], m.full[2] * m.full[3], m.full[3], 1};
      if (to_local)
        tpu_gdma_cpy_S2L(m.local_addr, m.global_addr, &shape, nullptr, &global_stride, dt);
      else
        tpu_gdma_cpy_L2S(m.global_addr, m.local_addr, &shape, &global_stride, nullptr, dt);
    }
  });
}

}  // namespace tpu_runtime
