// pipeline_internal.h: what the pipeline room's sources share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/arrays.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/pipeline.h"

namespace tpu_runtime::detail {

// "9.1 KiB", "4.00 GiB", "300 B": sizes in the planner's messages and info.
std::string pipeline_bytes_text(uint64_t bytes);

// A pipelined run emulated for real (pipeline_emulated.cc): stage k on core
// k of one multi-core run, over the micro-batch model (the model itself when
// M is 1).
struct EmulatedPipeline {
  npz::Arrays outputs;  // joined along axis 0
  std::vector<std::vector<double>> start_us, end_us;  // [micro-batch][stage], on the stage's core's clock
  double total_us = 0;  // the run's: its slowest core's
};

// "" when the stages can run on cores, else why not (a host, dynamic or
// stateful layer; a micro-batch model whose tensors share bytes).
std::string emulated_pipeline_refusal(const ModelFile &micro_file, const ModelDescription &micro,
                                      const std::vector<PipelineStage> &stages, int micro_batches);

// `whole_inputs` narrowed to the model's dtypes; throws on a failed run
// (a race, a deadlock, a command's error), naming the core.
EmulatedPipeline run_emulated_pipeline(const ModelFile &micro_file, const ModelDescription &micro,
                                       const std::vector<PipelineStage> &stages, int micro_batches,
                                       const npz::Arrays &whole_inputs);

}  // namespace tpu_runtime::detail
