// pipeline.h: AutoPipe for TPU SDK models (docs/pipeline.md): a model's
// layers cut into K contiguous stages (cores of one chip or chips), each
// stage's weights and live activations within a memory limit, the slowest
// stage as fast as possible with the transfers between stages counted; the
// plan stored in the model file and run over M micro-batches.
// (Room pipeline/: above model/, which it builds and runs models with.)
//
//   plan_pipeline()        the dynamic programme over PipelineLayer figures
//                          (pure: no model, no emulator)
//   evaluate_split()       the figures of any given split (the DP's plans,
//                          the naive equal-layer split, brute force in tests)
//   pipeline_layers()      a model's layers as planner figures
//   add_pipeline()         tpu_model build --pipeline K: the plan (and, for
//                          micro-batches, the micro-batch model) into the file
//   run_pipeline()         tpu_model run on a pipelined model
//   pipeline_info_text()   what tpu_model info prints about the plan
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpu_runtime/model.h"

namespace tpu_runtime {

// ---- the planner -----------------------------------------------------------

// One layer as the planner sees it.
struct PipelineLayer {
  std::string name;
  double time_us = 0;          // estimated compute time (a layer group's time on its first layer)
  uint64_t weight_bytes = 0;   // weights it reads (a shared weight counts for each reader)
  uint64_t live_bytes = 0;     // activations live while it runs (its inputs, outputs, scratch and
                               // every tensor produced earlier and read later)
  uint64_t cut_bytes = 0;      // activations crossing a cut just after it
  bool cut_after = true;       // false: the next layer is in its layer group (never split)
};

// The link between two neighbouring stages: moving B bytes across it takes
// latency_us + B / bytes_per_us, and both stages are busy for that time.
struct PipelineLink {
  std::string name;       // "global memory (cores of one chip)", "PCIe through the host"
  double latency_us = 0;
  double bytes_per_us = 1;
  std::string why;        // the assumption, for info and the docs
  double transfer_us(uint64_t bytes) const;
};

// The defaults of a chip (docs/pipeline.md, "Links and memory").
PipelineLink default_pipeline_link(std::string_view chip);
// The memory of one stage by default: bm1684x stages are cards, each with
// its DDR; bm1688 stages are cores sharing the chip's DDR equally.
uint64_t default_stage_memory(std::string_view chip, int stages);

struct PipelineStage {
  int first = 0, last = 0;  // layers, inclusive
  double compute_us = 0;
  double transfer_in_us = 0, transfer_out_us = 0;
  double time_us = 0;       // transfer_in + compute + transfer_out
  uint64_t bytes_in = 0, bytes_out = 0;
  uint64_t weight_bytes = 0, activation_bytes = 0;  // activations: the peak of live_bytes
  uint64_t memory_bytes() const { return weight_bytes + activation_bytes; }
};

struct PipelineBoundary {
  int after = 0;       // the cut between layer `after` and `after + 1`
  std::string reason;  // why here and not one layer either way
};

struct PipelinePlan {
  std::vector<PipelineStage> stages;
  std::vector<PipelineBoundary> boundaries;
  int bottleneck = 0;      // the slowest stage (the first of equals)
  double slowest_us = 0;   // its time: the pipeline's period
  uint64_t memory_limit = 0;
  PipelineLink link;
};

// The figures of the split whose stages end at `lasts` (ascending, the last
// one the last layer). Does not check memory or groups.
std::vector<PipelineStage> evaluate_split(const std::vector<PipelineLayer> &layers, const std::vector<int> &lasts,
                                          const PipelineLink &link);

// The DP: K contiguous stages minimising the slowest stage's time, each
// within `memory_limit`, no cut inside a layer group. Throws Error naming
// the layer or the limit when no plan exists (K < 1, K above the layers or
// the layer groups, a layer alone above the limit, or too few stages to fit).
PipelinePlan plan_pipeline(const std::vector<PipelineLayer> &layers, int stages, uint64_t memory_limit,
                           const PipelineLink &link);

// Stages of (nearly) equal layer counts, for comparison: stage k ends at
// layer round((k + 1) * n / K) - 1.
std::vector<int> equal_layer_split(std::size_t layers, int stages);

// ---- models -----------------------------------------------------------------

// A model's layers as planner figures: the layers' build-time estimates
// (a layer group: its estimate, on its first layer), the bytes of the
// weights each reads, and activation liveness over the layer order.
std::vector<PipelineLayer> pipeline_layers(const ModelFile &model, const ModelDescription &description);

struct PipelineOptions {
  int stages = 1;
  int micro_batches = 1;  // > 1: the micro-batch model is built too
  std::optional<uint64_t> stage_memory;  // default: default_stage_memory()
};

// Metadata key and section of a pipelined model.
inline constexpr const char *kPipelineKey = "pipeline";
inline constexpr const char *kMicroBatchModelSection = "pipeline.micro_batch_model";

// tpu_model build --pipeline K: plans `built` (built from `net` with
// `options`) and stores the plan as the "pipeline" metadata entry. With
// micro-batches the net is built again with every input's batch (axis 0)
// divided by M, that model is stored as a section and the plan is made on
// it (it is what each stage runs). Throws Error for a batch M does not
// divide, an output that does not keep the batch axis, or no plan.
void add_pipeline(BuildResult &built, const NetDescription &net, const BuildOptions &options,
                  const PipelineOptions &pipeline, std::string_view source);

// The stored plan (nullopt: the model is not pipelined).
struct StoredPipeline {
  int micro_batches = 1;
  PipelinePlan plan;
  std::vector<std::string> layer_names;  // of the planned model, for messages
};
std::optional<StoredPipeline> stored_pipeline(const ModelFile &model, std::string_view where);

// One stage of one micro-batch in the schedule.
struct PipelineSlot {
  int stage = 0, micro_batch = 0;
  double start_us = 0, end_us = 0;
};

struct PipelineRunResult {
  npz::Arrays outputs;  // the micro-batches' outputs joined along axis 0
  int micro_batches = 1;
  // True: the stages ran on the cores of one multi-core run (stage k on
  // core k) and every time below is the emulator's. False: the model has
  // layers a core's run cannot hold (`not_emulated` says which); the stages
  // ran one after another and the times are computed from their measured
  // times (pipeline_schedule).
  bool emulated = false;
  std::string not_emulated;
  std::vector<std::vector<double>> stage_us;  // [micro-batch][stage]: emulated span, or measured compute + transfers
  std::vector<PipelineSlot> schedule;
  double pipelined_us = 0;    // emulated: the run's (its slowest core's); computed: the end of the last slot
  double one_device_us = 0;   // computed only: every micro-batch through every layer on one device, no transfers
  double unpipelined_us = 0;  // the whole batch run once by the model itself
  bool outputs_identical = false;  // bit for bit against that run
  std::string difference;          // the first output that differs, when not identical
  int64_t samples = 0;             // the batch (axis 0 of the first input)
};

// Start of each slot: stage k of micro-batch m starts when stage k - 1 of m
// and stage k of m - 1 are both done.
std::vector<PipelineSlot> pipeline_schedule(const std::vector<std::vector<double>> &stage_us);

// tpu_model run on a pipelined model: the whole batch run by the model
// itself, then the inputs split along axis 0 into the stored micro-batch
// count (`micro_batches`, when given, must equal it) and run through the
// stages: on the cores of one multi-core run when every layer is static
// (docs/pipeline.md, "Running"), else one after another with the schedule
// computed. The joined outputs must equal the whole run's bit for bit.
PipelineRunResult run_pipeline(const ModelFile &model, const npz::Arrays &inputs, std::string_view where,
                               std::optional<int> micro_batches = std::nullopt);

// The plan as tpu_model info prints it ("" when not pipelined), and the
// run's report.
std::string pipeline_info_text(const ModelFile &model, std::string_view where);
std::string pipeline_run_text(const PipelineRunResult &run, const PipelinePlan &plan);

// The plan as JSON (the "pipeline" metadata entry, without the model keys).
nlohmann::json pipeline_plan_json(const PipelinePlan &plan);

}  // namespace tpu_runtime
