// model_plan.h: a model's memory plan in an open emulator, as
// ModelSession loads it (model_run.cc); the pipelined run (runtime/pipeline)
// loads the micro-batch model's the same way.
#pragma once

#include <cstdint>

#include "emulator/emulator.h"
#include "io/arrays.h"
#include "tpu_runtime/model.h"

namespace tpu_runtime::detail {

// The plan allocated at `base`, the weights in place, the stateful layers'
// scratch buffers zeroed.
void load_plan(EmulatorSession &emulator, const ModelFile &model, const ModelDescription &d, uint64_t base);

// The inputs in place; every other byte the layers should write 0xFF.
void load_inputs(EmulatorSession &emulator, const ModelDescription &d, const npz::Arrays &inputs, uint64_t base);

}  // namespace tpu_runtime::detail
