// pipeline_run.cc: a pipelined model run over micro-batches, its schedule,
// and the text of tpu_model info and run about the plan (pipeline.h).
//
// A model whose layers are all static runs its stages on the cores of one
// multi-core run (pipeline_emulated.cc). Otherwise each micro-batch runs
// through the stages in order (one emulator run of the micro-batch model,
// a fresh emulator each, as the unpipelined run gets), and the overlap of
// the stages is computed from their measured times (docs/pipeline.md,
// "Running").
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "io/arrays.h"
#include "model/caller_arrays.h"
#include "pipeline/pipeline_internal.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/pipeline.h"

namespace tpu_runtime {

namespace {

// The runs a pipelined run compares and joins give their outputs as the net
// holds them; run_pipeline gives them as the caller gets them at the end.
const RunOptions kAsTheNetHoldsThem{.profile = false, .outputs_for_caller = false};


using detail::pipeline_bytes_text;

// Rows [first, first + rows) of axis 0.
npz::Array rows_of(const npz::Array &a, int64_t first, int64_t rows) {
  npz::Array out;
  out.dtype = a.dtype;
  out.shape = a.shape;
  out.shape[0] = rows;
  const std::size_t row_bytes = a.data.size() / std::size_t(a.shape[0]);
  out.data.assign(a.data.begin() + std::ptrdiff_t(std::size_t(first) * row_bytes),
                  a.data.begin() + std::ptrdiff_t(std::size_t(first + rows) * row_bytes));
  return out;
}

// Micro-batch m of every input, checking each splits evenly.
npz::Arrays micro_batch_inputs(const npz::Arrays &inputs, int m, int count, std::string_view where) {
  npz::Arrays out;
  for (const auto &[name, a] : inputs) {
    if (a.shape.empty() || a.shape[0] <= 0 || a.shape[0] % count != 0)
      throw Error(fmt::format("{}: input '{}' has batch {} (axis 0), which {} micro-batches do not divide", where,
                              name, a.shape.empty() ? 0 : a.shape[0], count));
    const int64_t rows = a.shape[0] / count;
    out[name] = rows_of(a, rows * m, rows);
  }
  return out;
}

void append_rows(npz::Array &joined, const npz::Array &part, const std::string &name, std::string_view where) {
  if (joined.data.empty() && joined.shape.empty()) {
    joined = part;
    return;
  }
  const bool same = part.dtype == joined.dtype && part.shape.size() == joined.shape.size() && !part.shape.empty() &&
                    std::equal(part.shape.begin() + 1, part.shape.end(), joined.shape.begin() + 1);
  if (!same)
    throw Error(fmt::format("{}: output '{}' of a micro-batch ({} {}) cannot be joined to the others' ({} {})", where,
                            name, part.dtype, detail::shape_text({part.shape.begin(), part.shape.end()}),
                            joined.dtype, detail::shape_text({joined.shape.begin(), joined.shape.end()})));
  joined.shape[0] += part.shape[0];
  joined.data.insert(joined.data.end(), part.data.begin(), part.data.end());
}

// "" when every output equals bit for bit, else the first difference.
std::string first_difference(const npz::Arrays &pipelined, const npz::Arrays &whole) {
  for (const auto &[name, a] : whole) {
    const auto it = pipelined.find(name);
    if (it == pipelined.end()) return fmt::format("output '{}' is missing from the pipelined run", name);
    const npz::Array &b = it->second;
    if (a.dtype != b.dtype || a.shape != b.shape)
      return fmt::format("output '{}' is {} {} in the pipelined run, {} {} unpipelined", name, b.dtype,
                         detail::shape_text({b.shape.begin(), b.shape.end()}), a.dtype,
                         detail::shape_text({a.shape.begin(), a.shape.end()}));
    const auto [x, y] = std::mismatch(a.data.begin(), a.data.end(), b.data.begin(), b.data.end());
    if (x != a.data.end())
      return fmt::format("output '{}' differs from the unpipelined run at byte {}", name, x - a.data.begin());
  }
  return "";
}

double total_us(const RunResult &run) {
  double us = 0;
  for (const LayerStats &s : run.layers) us += s.total_us;
  return us;
}

// The micro-batch model must run the code the model runs: kernel_update
// and custom_ap_update replace the model's libraries, not the copies in
// the micro-batch model.
void check_same_libraries(const ModelFile &model, const ModelFile &micro, std::string_view where) {
  const ModelDescription d = describe_model(model, where), m = describe_model(micro, where);
  std::vector<std::string> own, theirs;
  for (const ModelDescription *x : {&d, &m}) {
    std::vector<std::string> &list = x == &d ? own : theirs;
    list.push_back(x->kernel_module ? x->kernel_module->sha256 : "");
    for (const HostLibraryInfo &h : x->host_libraries) list.push_back(h.sha256);
  }
  if (own != theirs)
    throw Error(fmt::format("{}: the micro-batch model's kernel module or host libraries are not the model's (a "
                            "kernel_update or custom_ap_update after the build?); build the pipeline again",
                            where));
}

int checked_micro_batches(const StoredPipeline &stored, std::optional<int> asked, std::string_view where) {
  if (asked && *asked < 1) throw Error(fmt::format("--micro-batches {}: at least 1", *asked));
  if (asked && *asked != stored.micro_batches)
    throw Error(fmt::format("{}: --micro-batches {}: the model was built for {} micro-batch{} (a static layer "
                            "replays commands recorded for one batch size); rebuild it with tpu_model build "
                            "--pipeline {} --micro-batches {}",
                            where, *asked, stored.micro_batches, stored.micro_batches == 1 ? "" : "es",
                            stored.plan.stages.size(), *asked));
  return stored.micro_batches;
}

// Every micro-batch through the stages in order, one run each; the
// schedule computed from the measured stage times (pipeline_schedule).
void run_one_after_another(PipelineRunResult &r, const ModelFile &micro, const std::vector<PipelineStage> &stages,
                           const npz::Arrays &inputs, std::string_view where) {
  for (int m = 0; m < r.micro_batches; ++m) {
    const RunResult run = run_model(micro, micro_batch_inputs(inputs, m, r.micro_batches, where),
                                    fmt::format("{} micro-batch {}", where, m), kAsTheNetHoldsThem);
    std::vector<double> times;
    for (const PipelineStage &s : stages) {
      double compute = 0;
      for (int i = s.first; i <= s.last && std::size_t(i) < run.layers.size(); ++i)
        compute += run.layers[std::size_t(i)].total_us;
      r.one_device_us += compute;
      times.push_back(s.transfer_in_us + compute + s.transfer_out_us);
    }
    r.stage_us.push_back(std::move(times));
    for (const auto &[name, a] : run.outputs) append_rows(r.outputs[name], a, name, where);
  }
  r.schedule = pipeline_schedule(r.stage_us);
  for (const PipelineSlot &s : r.schedule) r.pipelined_us = std::max(r.pipelined_us, s.end_us);
}

// Stage k on core k of one multi-core run (pipeline_emulated.cc).
void run_on_cores(PipelineRunResult &r, const ModelFile &model, const ModelFile &micro,
                  const ModelDescription &micro_description, const std::vector<PipelineStage> &stages,
                  const npz::Arrays &inputs, std::string_view where) {
  const ModelDescription d = describe_model(model, where);
  std::vector<detail::TensorDecl> decls;
  for (std::size_t i : d.inputs) decls.push_back(detail::input_decl(d.tensors[i]));
  const npz::Arrays narrowed = detail::narrowed_inputs(decls, inputs, "inputs");
  detail::EmulatedPipeline run;
  try {
    run = detail::run_emulated_pipeline(micro, micro_description, stages, r.micro_batches, narrowed);
  } catch (const Error &e) {
    throw Error(fmt::format("{}: {}", where, e.what()));
  }
  r.outputs = std::move(run.outputs);
  r.pipelined_us = run.total_us;
  for (std::size_t m = 0; m < run.start_us.size(); ++m) {
    r.stage_us.emplace_back();
    for (std::size_t k = 0; k < run.start_us[m].size(); ++k) {
      r.schedule.push_back({int(k), int(m), run.start_us[m][k], run.end_us[m][k]});
      r.stage_us.back().push_back(run.end_us[m][k] - run.start_us[m][k]);
    }
  }
}

}  // namespace

std::vector<PipelineSlot> pipeline_schedule(const std::vector<std::vector<double>> &stage_us) {
  std::vector<PipelineSlot> slots;
  std::vector<double> stage_free;  // when each stage finished its previous micro-batch
  for (std::size_t m = 0; m < stage_us.size(); ++m) {
    stage_free.resize(std::max(stage_free.size(), stage_us[m].size()), 0);
    double ready = 0;  // when the previous stage handed this micro-batch on
    for (std::size_t k = 0; k < stage_us[m].size(); ++k) {
      const double start = std::max(ready, stage_free[k]);
      const double end = start + stage_us[m][k];
      slots.push_back({int(k), int(m), start, end});
      stage_free[k] = ready = end;
    }
  }
  return slots;
}

PipelineRunResult run_pipeline(const ModelFile &model, const npz::Arrays &inputs, std::string_view where,
                               std::optional<int> micro_batches) {
  const std::optional<StoredPipeline> stored = stored_pipeline(model, where);
  if (!stored)
    throw Error(fmt::format("{}: the model is not pipelined (tpu_model build --pipeline K plans one)", where));
  PipelineRunResult r;
  r.micro_batches = checked_micro_batches(*stored, micro_batches, where);
  std::optional<ModelFile> micro_file;
  if (r.micro_batches > 1)
    micro_file = parse_model_file(model.find_section(kMicroBatchModelSection)->data,
                                  fmt::format("{} (micro-batch model)", where));
  const ModelFile &micro = micro_file ? *micro_file : model;
  if (micro_file) check_same_libraries(model, *micro_file, where);
  // The whole batch first: it checks the inputs against the model.
  const RunResult whole = run_model(model, inputs, where, kAsTheNetHoldsThem);
  r.unpipelined_us = total_us(whole);
  const std::vector<PipelineStage> &stages = stored->plan.stages;
  const ModelDescription micro_description = describe_model(micro, where);
  r.not_emulated = detail::emulated_pipeline_refusal(micro, micro_description, stages, r.micro_batches);
  r.emulated = r.not_emulated.empty();
  if (r.emulated) run_on_cores(r, model, micro, micro_description, stages, inputs, where);
  else run_one_after_another(r, micro, stages, inputs, where);
  r.difference = first_difference(r.outputs, whole.outputs);
  r.outputs_identical = r.difference.empty();
  r.outputs = detail::outputs_for_caller(describe_model(model, where), std::move(r.outputs));
  if (!inputs.empty() && !inputs.begin()->second.shape.empty()) r.samples = inputs.begin()->second.shape[0];
  return r;
}

// ---- text ----------------------------------------------------------------------

std::string pipeline_info_text(const ModelFile &model, std::string_view where) {
  const std::optional<StoredPipeline> stored = stored_pipeline(model, where);
  if (!stored) return "";
  const PipelinePlan &p = stored->plan;
  const auto name = [&](int i) { return stored->layer_names[std::size_t(i)]; };
  const nlohmann::json &j = model.metadata[kPipelineKey];
  const bool micro = j.value("planned_on", "") == "micro_batch_model";
  std::string out = fmt::format("\npipeline      {} stage{}, {} micro-batch{}{}\n", p.stages.size(),
                                p.stages.size() == 1 ? "" : "s", stored->micro_batches,
                                stored->micro_batches == 1 ? "" : "es",
                                micro ? " (planned on the micro-batch model: each stage's figures are per micro-batch)"
                                      : "");
  out += fmt::format("  link        {}: {:.2f} us + 1 us per {:.0f} bytes\n              {}\n", p.link.name,
                     p.link.latency_us, p.link.bytes_per_us, p.link.why);
  out += fmt::format("  memory      at most {} per stage ({})\n", pipeline_bytes_text(p.memory_limit),
                     j.value("memory_limit_source", "?"));
  constexpr const char *kRow = "  {:<6} {:<28} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}\n";
  out += fmt::format(kRow, "stage", "layers", "compute us", "in us", "out us", "total us", "weights", "activations",
                     "memory");
  for (std::size_t k = 0; k < p.stages.size(); ++k) {
    const PipelineStage &s = p.stages[k];
    out += fmt::format(kRow, k, fmt::format("{}..{} ('{}'..'{}')", s.first, s.last, name(s.first), name(s.last)),
                       fmt::format("{:.2f}", s.compute_us), fmt::format("{:.2f}", s.transfer_in_us),
                       fmt::format("{:.2f}", s.transfer_out_us), fmt::format("{:.2f}", s.time_us),
                       pipeline_bytes_text(s.weight_bytes), pipeline_bytes_text(s.activation_bytes),
                       pipeline_bytes_text(s.memory_bytes()));
  }
  out += fmt::format("  bottleneck  stage {}: {:.2f} us per micro-batch, the pipeline's period\n", p.bottleneck,
                     p.slowest_us);
  if (!p.boundaries.empty()) out += "  boundaries\n";
  for (const PipelineBoundary &b : p.boundaries)
    out += fmt::format("    after layer {} '{}': {}\n", b.after, name(b.after), b.reason);
  return out;
}

namespace {

// The computed schedule's steady state: one micro-batch per slowest
// measured stage time.
std::string computed_steady_state(const PipelineRunResult &run) {
  double period = 0;
  int slowest = 0;
  for (const std::vector<double> &stages : run.stage_us)
    for (std::size_t k = 0; k < stages.size(); ++k)
      if (stages[k] > period) {
        period = stages[k];
        slowest = int(k);
      }
  const double per_micro_batch = run.micro_batches > 0 ? double(run.samples) / run.micro_batches : 0;
  return fmt::format("  steady state      a micro-batch every {:.2f} us (stage {}, the slowest): {:.1f} samples/s\n",
                     period, slowest, period > 0 ? per_micro_batch * 1e6 / period : 0.0);
}

// The emulated run's steady state: how far apart the last two
// micro-batches left the last stage.
std::string emulated_steady_state(const PipelineRunResult &run) {
  if (run.micro_batches < 2 || run.schedule.empty()) return "";
  const int last_stage = run.schedule.back().stage;
  double previous = 0, last = 0;
  for (const PipelineSlot &s : run.schedule)
    if (s.stage == last_stage && s.micro_batch == run.micro_batches - 2) previous = s.end_us;
    else if (s.stage == last_stage && s.micro_batch == run.micro_batches - 1) last = s.end_us;
  const double period = last - previous;
  const double per_micro_batch = double(run.samples) / run.micro_batches;
  return fmt::format("  steady state      a micro-batch every {:.2f} us (the last two leaving stage {}): "
                     "{:.1f} samples/s\n",
                     period, last_stage, period > 0 ? per_micro_batch * 1e6 / period : 0.0);
}

// Stages that are cards (bm1684x) ran as emulated cores of one chip: the
// plan's PCIe transfers are not in the emulated time; say how much they add.
std::string cards_link_note(const PipelinePlan &plan) {
  if (plan.link.name != default_pipeline_link("bm1684x").name || plan.stages.size() < 2) return "";
  double transfers = 0;
  for (const PipelineStage &s : plan.stages) transfers += s.transfer_out_us;
  return fmt::format("  cards' link       not emulated: the stages ran as cores of one chip sharing its memory; the "
                     "plan charges {:.2f} us of PCIe transfers per micro-batch over its {} boundar{}\n",
                     transfers, plan.stages.size() - 1, plan.stages.size() == 2 ? "y" : "ies");
}

}  // namespace

std::string pipeline_run_text(const PipelineRunResult &run, const PipelinePlan &plan) {
  std::string out = fmt::format("pipeline: {} stages, {} micro-batch{}", plan.stages.size(), run.micro_batches,
                                run.micro_batches == 1 ? "" : "es");
  out += run.emulated ? fmt::format(", emulated: stage k on core k of one {}-core run\n", plan.stages.size())
                      : fmt::format(", NOT emulated ({}): the stages ran one after another and the times below are "
                                    "computed from their measured times\n",
                                    run.not_emulated);
  constexpr const char *kRow = "  {:<12} {:<6} {:>12} {:>12}\n";
  out += fmt::format(kRow, "micro-batch", "stage", "start us", "end us");
  for (const PipelineSlot &s : run.schedule)
    out +=
        fmt::format(kRow, s.micro_batch, s.stage, fmt::format("{:.2f}", s.start_us), fmt::format("{:.2f}", s.end_us));
  const auto per_second = [&](double us) { return us > 0 ? double(run.samples) * 1e6 / us : 0.0; };
  out += fmt::format("  pipelined         {:.2f} us for {} samples: {:.1f} samples/s{}\n", run.pipelined_us,
                     run.samples, per_second(run.pipelined_us),
                     run.emulated ? " (the emulated run: its slowest core)" : " (computed)");
  out += run.emulated ? emulated_steady_state(run) : computed_steady_state(run);
  out += run.emulated ? cards_link_note(plan) : "";
  if (!run.emulated)
    out += fmt::format("  one device        {:.2f} us (every micro-batch through every layer, no transfers): "
                       "{:.1f} samples/s, speed-up {:.2f}x\n",
                       run.one_device_us, per_second(run.one_device_us),
                       run.pipelined_us > 0 ? run.one_device_us / run.pipelined_us : 0.0);
  out += fmt::format("  unpipelined run   {:.2f} us (the whole batch at once, one stage): {:.1f} samples/s, "
                     "speed-up {:.2f}x\n",
                     run.unpipelined_us, per_second(run.unpipelined_us),
                     run.pipelined_us > 0 ? run.unpipelined_us / run.pipelined_us : 0.0);
  out += run.outputs_identical ? "  outputs: identical to the unpipelined run, bit for bit\n"
                               : fmt::format("  outputs: DIFFER from the unpipelined run: {}\n", run.difference);
  return out;
}

}  // namespace tpu_runtime
