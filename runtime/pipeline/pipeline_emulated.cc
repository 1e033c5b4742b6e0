// pipeline_emulated.cc: a pipelined run emulated for real. Stage k runs on
// core k of one multi-core run (cmodel_run_group), each core replaying its
// stage's recorded layers micro-batch after micro-batch, handing activations
// over through global memory and ordering every hand-off with engine
// messages (docs/pipeline.md, "Running").
//
// The hand-off protocol. Every tensor has one address in the micro-batch
// model (built with buffers apart: no two tensors share bytes), so a stage
// that writes a tensor for micro-batch m + 1 must wait until every other
// stage touching it is done with micro-batch m, and a stage that reads it
// for m must wait until its writer is done with m:
//   - "ready" k -> k + 1: stage k finished micro-batch m (sent after its
//     engines are idle); stage k + 1 waits for it before micro-batch m.
//     Later stages are ordered behind earlier ones through the chain.
//   - "free" l -> e (stage e < l, both touching a tensor, one writing):
//     stage l sent it after its last access of those tensors in micro-batch
//     m; stage e waits for it before its first access in micro-batch m + 1.
//     Adjacent stages always have one (at worst right after "ready" and
//     right before the next "ready"), so no stage runs more than one
//     micro-batch ahead of the next and each message id has at most one
//     message in flight.
// The inputs sit in one buffer per input holding every micro-batch (the
// whole batch, rows in order); stage 0 copies micro-batch m into the plan
// (a write at position -1). Each output is copied into a buffer of every
// micro-batch by the last stage touching it, after its layers (a read at
// position n). A missing wait is a race the emulator reports, not a wrong
// answer.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "cmodel_host.h"
#include "emulator/emulator.h"
#include "format/static_layers.h"
#include "groups/layer_groups.h"
#include "io/arrays.h"
#include "model/model_plan.h"
#include "pipeline/pipeline_internal.h"
#include "tpu_kernel.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/pipeline.h"

namespace tpu_runtime::detail {

namespace {

constexpr int kMessageSlots = 128;  // the emulator's message slots (docs/cmodel.md, "Several cores")

enum class StepKind : uint8_t { wait, send, replay, copy, start, end };

// One step of a core's program; plain data, as a kernel frame must hold
// nothing with a destructor (a failing command leaves it by a jump).
struct Step {
  StepKind kind = StepKind::replay;
  int message = 0;                        // wait, send
  const cmodel_stream *stream = nullptr;  // replay
  uint64_t dst = 0, src = 0, bytes = 0;   // copy
  double *time = nullptr;                 // start, end: where the core's clock goes
};

struct CoreProgram {
  const Step *steps = nullptr;
  std::size_t count = 0;
};

void copy_bytes(uint64_t dst, uint64_t src, uint64_t bytes) {
  constexpr uint64_t kChunk = uint64_t(1) << 30;  // the command's count is 32 bits
  for (uint64_t done = 0; done < bytes; done += kChunk)
    tpu_gdma_system_cpy(dst + done, src + done, unsigned(std::min(kChunk, bytes - done)), DT_INT8);
}

void run_core_program(const void *arg) {
  const auto &program = *static_cast<const CoreProgram *>(arg);
  for (std::size_t i = 0; i < program.count; ++i) {
    const Step &s = program.steps[i];
    switch (s.kind) {
      case StepKind::wait: tpu_gdma_wait_msg(s.message, 1); break;
      case StepKind::send:
        tpu_poll();  // the hand-off: after the engines wrote what it hands over
        tpu_gdma_send_msg(s.message, 1);
        break;
      case StepKind::replay: cmodel_stream_replay_here(s.stream); break;
      case StepKind::copy: copy_bytes(s.dst, s.src, s.bytes); break;
      case StepKind::start: *s.time = cmodel_core_time_us(); break;
      case StepKind::end:
        tpu_poll();
        *s.time = cmodel_core_time_us();
        break;
    }
  }
}

struct StreamCloser {
  void operator()(cmodel_stream *s) const { cmodel_stream_close(s); }
};
using StreamHandle = std::unique_ptr<cmodel_stream, StreamCloser>;

// Positions inside a stage's micro-batch: -1 the input copies, a layer's
// index, n the output copies, n + 1 the end (before "ready").
struct Access {
  int first = 0, last = 0;
  bool writes = false;
};

// What the stages touch and when: for every buffer (a tensor's offset in
// the plan; in-place outputs share their input's), per stage.
using Accesses = std::map<uint64_t, std::map<int, Access>>;

void note(Accesses &a, uint64_t offset, int stage, int position, bool writes) {
  auto [it, fresh] = a[offset].try_emplace(stage, Access{position, position, writes});
  if (fresh) return;
  it->second.first = std::min(it->second.first, position);
  it->second.last = std::max(it->second.last, position);
  it->second.writes = it->second.writes || writes;
}

// A "free" message from stage `later` to stage `earlier`: where each waits
// and sends in a micro-batch.
struct FreePair {
  int later = 0, earlier = 0;
  int wait_at = 0, send_at = 0;
  int message = 0;
};

class ProgramBuilder {
 public:
  ProgramBuilder(const ModelFile &model, const ModelDescription &d, const std::vector<PipelineStage> &stages,
                 int micro_batches)
      : model_(model), d_(d), stages_(stages), m_(micro_batches), n_(int(d.layers.size())) {}

  std::string not_emulated_reason() const {
    for (std::size_t i = 0; i < d_.layers.size(); ++i) {
      const ModelLayer &l = d_.layers[i];
      if (l.mode == LayerMode::host_mode)
        return fmt::format("layer {} '{}' runs on the host, which has no place inside a core's run", i, l.name);
      if (l.mode == LayerMode::dynamic_mode)
        return fmt::format("layer {} '{}' is dynamic: it runs from the embedded kernel module through host calls, "
                           "which a core's run cannot make",
                           i, l.name);
      if (l.scratch_size && !l.metadata.stateless)
        return fmt::format("layer {} '{}' keeps state in its scratch buffer, which each micro-batch would have to "
                           "find zeroed",
                           i, l.name);
    }
    if (m_ > 1 && stages_.size() > 1 && !(model_.metadata.contains("memory") && model_.metadata["memory"].is_object() &&
                    model_.metadata["memory"].value("buffers_apart", false)))
      return "the micro-batch model shares bytes between tensors whose lifetimes do not overlap (built before "
             "pipelined runs were emulated): rebuild it with tpu_model build --pipeline";
    return "";
  }

  // The programs of every core; `times` receives [m][k] start and end.
  std::vector<std::vector<Step>> build(uint64_t input_slots, uint64_t output_slots,
                                       std::vector<std::vector<double>> &starts,
                                       std::vector<std::vector<double>> &ends) {
    find_accesses();
    find_pairs();
    open_streams();
    input_slots_ = input_slots;
    output_slots_ = output_slots;
    const int k_count = int(stages_.size());
    starts.assign(std::size_t(m_), std::vector<double>(std::size_t(k_count), 0));
    ends = starts;
    std::vector<std::vector<Step>> programs(static_cast<std::size_t>(k_count));
    for (int m = 0; m < m_; ++m)
      for (int k = 0; k < k_count; ++k)
        add_micro_batch(programs[std::size_t(k)], k, m, &starts[std::size_t(m)][std::size_t(k)],
                        &ends[std::size_t(m)][std::size_t(k)]);
    return programs;
  }

  int messages() const { return int(stages_.size()) - 1 + int(pairs_.size()); }

 private:
  int stage_of(int layer) const {
    for (std::size_t k = 0; k < stages_.size(); ++k)
      if (layer >= stages_[k].first && layer <= stages_[k].last) return int(k);
    throw Error(fmt::format("layer {} is in no stage of the plan", layer));
  }

  void find_accesses() {
    for (int i = 0; i < n_; ++i) {
      const ModelLayer &l = d_.layers[std::size_t(i)];
      // A group's stream runs with its first layer and touches what all its layers do.
      const int at = l.group >= 0 ? d_.groups[std::size_t(l.group)].first : i;
      for (std::size_t t : l.inputs)
        if (d_.tensors[t].role != TensorRole::weight) note(accesses_, d_.tensors[t].offset, stage_of(at), at, false);
      for (std::size_t t : l.outputs) note(accesses_, d_.tensors[t].offset, stage_of(at), at, true);
    }
    for (std::size_t t : d_.inputs) note(accesses_, d_.tensors[t].offset, 0, -1, true);
    for (std::size_t t : d_.outputs) {
      const auto &by_stage = accesses_[d_.tensors[t].offset];
      note(accesses_, d_.tensors[t].offset, by_stage.empty() ? 0 : by_stage.rbegin()->first, n_, false);
    }
  }

  void find_pairs() {
    std::map<std::pair<int, int>, FreePair> pairs;
    for (const auto &[offset, by_stage] : accesses_)
      for (const auto &[e, early] : by_stage)
        for (const auto &[l, late] : by_stage) {
          if (l <= e || !(early.writes || late.writes)) continue;
          auto [it, fresh] = pairs.try_emplace({l, e}, FreePair{l, e, early.first, late.last, 0});
          if (fresh) continue;
          it->second.wait_at = std::min(it->second.wait_at, early.first);
          it->second.send_at = std::max(it->second.send_at, late.last);
        }
    // Adjacent stages always pace each other (see the top of the file).
    for (int k = 0; k + 1 < int(stages_.size()); ++k) pairs.try_emplace({k + 1, k}, FreePair{k + 1, k, n_ + 1, -1, 0});
    int next = int(stages_.size()) - 1;  // ids 0 .. K-2 are "ready"
    for (auto &[key, pair] : pairs) {
      pair.message = next++;
      pairs_.push_back(pair);
    }
  }

  void open_streams() {
    streams_.resize(std::size_t(n_));
    for (int i = 0; i < n_; ++i) {
      const ModelLayer &l = d_.layers[std::size_t(i)];
      if (l.group >= 0 && d_.groups[std::size_t(l.group)].first != i) continue;
      const Section *s = nullptr;
      if (l.group >= 0) {
        s = model_.find_section(d_.groups[std::size_t(l.group)].section);
        if (!s) throw Error(fmt::format("layer group {}: its command section is missing", l.group));
      } else {
        s = &commands_section(model_, l);
      }
      streams_[std::size_t(i)].reset(cmodel_stream_open(s->data.data(), s->data.size()));
      if (!streams_[std::size_t(i)])
        throw Error(fmt::format("layer {} '{}': {}", i, l.name, cmodel_last_error()));
    }
  }

  // The waits stage k makes at `position` of micro-batch m, and the sends.
  void waits_at(std::vector<Step> &p, int k, int m, int position) const {
    for (const FreePair &f : pairs_)
      if (f.earlier == k && f.wait_at == position && m >= 1) p.push_back({StepKind::wait, f.message});
  }
  void sends_at(std::vector<Step> &p, int k, int m, int position) const {
    for (const FreePair &f : pairs_)
      if (f.later == k && f.send_at == position && m + 1 < m_) p.push_back({StepKind::send, f.message});
  }

  void add_micro_batch(std::vector<Step> &p, int k, int m, double *start, double *end) {
    const PipelineStage &stage = stages_[std::size_t(k)];
    if (k > 0) p.push_back({StepKind::wait, k - 1});
    p.push_back({StepKind::start, 0, nullptr, 0, 0, 0, start});
    waits_at(p, k, m, -1);
    uint64_t input_at = input_slots_;
    for (std::size_t t : d_.inputs) {
      const ModelTensor &x = d_.tensors[t];
      if (k == 0) p.push_back(copy(d_.memory_base + x.offset, input_at + uint64_t(m) * x.size, x.size));
      input_at += uint64_t(m_) * x.size;
    }
    sends_at(p, k, m, -1);
    for (int i = stage.first; i <= stage.last; ++i) {
      if (!streams_[std::size_t(i)]) continue;
      waits_at(p, k, m, i);
      p.push_back({StepKind::replay, 0, streams_[std::size_t(i)].get()});
      sends_at(p, k, m, i);
    }
    waits_at(p, k, m, n_);
    uint64_t output_at = output_slots_;
    for (std::size_t t : d_.outputs) {
      const ModelTensor &y = d_.tensors[t];
      if (accesses_.at(y.offset).rbegin()->first == k)
        p.push_back(copy(output_at + uint64_t(m) * y.size, d_.memory_base + y.offset, y.size));
      output_at += uint64_t(m_) * y.size;
    }
    sends_at(p, k, m, n_);
    p.push_back({StepKind::end, 0, nullptr, 0, 0, 0, end});
    waits_at(p, k, m, n_ + 1);
    if (k + 1 < int(stages_.size())) p.push_back({StepKind::send, k});
    sends_at(p, k, m, n_ + 1);
  }

  static Step copy(uint64_t dst, uint64_t src, uint64_t bytes) {
    return {StepKind::copy, 0, nullptr, dst, src, bytes, nullptr};
  }

  const ModelFile &model_;
  const ModelDescription &d_;
  const std::vector<PipelineStage> &stages_;
  const int m_, n_;
  Accesses accesses_;
  std::vector<FreePair> pairs_;
  std::vector<StreamHandle> streams_;
  uint64_t input_slots_ = 0, output_slots_ = 0;
};

uint64_t sum_of_sizes(const ModelDescription &d, const std::vector<std::size_t> &tensors, int micro_batches) {
  uint64_t bytes = 0;
  for (std::size_t t : tensors) bytes += d.tensors[t].size * uint64_t(micro_batches);
  return bytes;
}

// The whole batch's inputs, as the model declares them (narrowed), one after
// another: micro-batch m of input x is rows [m·r, (m+1)·r) of it.
void write_inputs(EmulatorSession &emulator, const ModelDescription &micro, const npz::Arrays &whole_inputs,
                  uint64_t slots, int micro_batches) {
  for (std::size_t t : micro.inputs) {
    const ModelTensor &x = micro.tensors[t];
    const npz::Array &a = whole_inputs.at(x.name);
    if (a.data.size() != x.size * uint64_t(micro_batches))
      throw Error(fmt::format("input '{}' holds {} bytes, but {} micro-batches of {} bytes are {}", x.name,
                              a.data.size(), micro_batches, x.size, x.size * uint64_t(micro_batches)));
    emulator.write(slots, a.data, fmt::format("input '{}' (every micro-batch)", x.name));
    slots += x.size * uint64_t(micro_batches);
  }
}

npz::Arrays read_joined_outputs(EmulatorSession &emulator, const ModelDescription &micro, uint64_t slots,
                                int micro_batches) {
  npz::Arrays outputs;
  for (std::size_t t : micro.outputs) {
    const ModelTensor &y = micro.tensors[t];
    npz::Array a;
    a.dtype = storage_dtype(y.dtype);
    a.shape = npz_shape(y.shape);
    if (a.shape.empty()) throw Error(fmt::format("output '{}' is a scalar: micro-batches cannot be joined", y.name));
    a.shape[0] *= micro_batches;
    a.data = emulator.read(slots, y.size * uint64_t(micro_batches), fmt::format("output '{}'", y.name));
    slots += y.size * uint64_t(micro_batches);
    outputs[y.name] = std::move(a);
  }
  return outputs;
}

}  // namespace

std::string emulated_pipeline_refusal(const ModelFile &micro_file, const ModelDescription &micro,
                                      const std::vector<PipelineStage> &stages, int micro_batches) {
  const ProgramBuilder builder(micro_file, micro, stages, micro_batches);
  return builder.not_emulated_reason();
}

EmulatedPipeline run_emulated_pipeline(const ModelFile &micro_file, const ModelDescription &micro,
                                       const std::vector<PipelineStage> &stages, int micro_batches,
                                       const npz::Arrays &whole_inputs) {
  // The recorded streams, as a run checks them: the model's chip, no memory
  // outside the plan.
  for (const ModelLayer &l : micro.layers)
    if (l.group >= 0) check_group(micro_file, micro, micro.groups[std::size_t(l.group)]);
    else check_static_layer(micro_file, micro, l);
  EmulatorSession emulator(micro.chip);
  raise_cores(int(stages.size()));  // for this emulator only: it ends with the run
  load_plan(emulator, micro_file, micro, micro.memory_base);
  const uint64_t in_bytes = sum_of_sizes(micro, micro.inputs, micro_batches);
  const uint64_t out_bytes = sum_of_sizes(micro, micro.outputs, micro_batches);
  const uint64_t input_slots = emulator.alloc(std::max<uint64_t>(in_bytes, 1), "the micro-batches' inputs");
  const uint64_t output_slots = emulator.alloc(std::max<uint64_t>(out_bytes, 1), "the micro-batches' outputs");
  write_inputs(emulator, micro, whole_inputs, input_slots, micro_batches);
  // Every tensor the layers write starts 0xFF, as in a run (model_plan.h);
  // stage 0 copies each micro-batch's inputs in.
  for (const ModelTensor &t : micro.tensors)
    if (t.role != TensorRole::input && t.role != TensorRole::weight)
      emulator.write(micro.memory_base + t.offset, std::vector<uint8_t>(t.size, 0xFF),
                     fmt::format("tensor '{}'", t.name));
  EmulatedPipeline run;
  ProgramBuilder builder(micro_file, micro, stages, micro_batches);
  const std::vector<std::vector<Step>> steps = builder.build(input_slots, output_slots, run.start_us, run.end_us);
  if (builder.messages() > kMessageSlots)
    throw Error(fmt::format("{} stages need {} message ids, more than the emulator's {} slots", stages.size(),
                            builder.messages(), kMessageSlots));
  std::vector<CoreProgram> programs;
  for (const std::vector<Step> &s : steps) programs.push_back({s.data(), s.size()});
  std::vector<void (*)(const void *)> kernels(programs.size(), &run_core_program);
  std::vector<const void *> args;
  for (const CoreProgram &p : programs) args.push_back(&p);
  if (cmodel_run_group(kernels.data(), args.data(), int(programs.size())) != 0)
    throw Error(fmt::format("the emulated pipeline (stage k on core k): {}", cmodel_last_error()));
  const RunFigures figures = last_run_figures();
  run.total_us = figures.total_us;
  run.outputs = read_joined_outputs(emulator, micro, output_slots, micro_batches);
  return run;
}

}  // namespace tpu_runtime::detail
