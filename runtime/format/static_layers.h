// static_layers.h (private): how a static layer is compiled at build time
// and executed at run time.
//
// A static layer works like the vendor's static subnets: at build time
// backend_api_<op>_global runs on the emulator while a recording is open
// (cmodel_record_begin), with the addresses of the model's memory plan; the
// engine commands it issues become a command stream stored as the section
// "<layer>.commands" (kind "commands"). At run time the stream is replayed
// (cmodel_replay) on an emulator whose plan sits at the same address: no
// custom-op library is loaded for it, and the kernel's host-side code does
// not run again.
//
// The layer's "static" metadata object:
//   {"execution": "commands", "section": "<layer>.commands", "commands": N}
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api_common.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/model_description.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/params.h"

namespace tpu_runtime::detail {

// One global call of a layer, with absolute global addresses.
struct LayerCall {
  std::string layer;  // for messages
  std::string op;
  PackedParams params;  // element 0: the planned scratch buffer's address, or 0
  std::vector<tensor_spec_t> inputs, outputs;
};

struct StaticLayerRecord {
  nlohmann::json metadata;        // stored as the layer's "static" object
  std::vector<Section> sections;  // stored in the model
};

// The global memory a model's commands were recorded against.
struct PlanRange {
  uint64_t base = 0, size = 0;
};

// An open recording (cmodel_record_begin) that is closed on every path;
// end() hands the stream over.
class Recording {
 public:
  explicit Recording(const std::string &origin);
  ~Recording();
  Recording(const Recording &) = delete;
  Recording &operator=(const Recording &) = delete;
  std::vector<uint8_t> end();

 private:
  bool open_ = true;
};

// The stream's own description (cmodel_stream_info); throws for an invalid one.
nlohmann::json stream_info(const std::vector<uint8_t> &stream);
// Throws unless every global buffer the stream needs lies inside `plan`.
void check_buffers_in_plan(const nlohmann::json &info, PlanRange plan);

// Build time: records `call` through the backend. The emulator of the
// model's chip is open and the plan allocated at `plan`. Throws with the reason (a call
// that cannot be recorded, a kernel error, memory outside the plan).
StaticLayerRecord record_static_layer(const Backend &backend, const LayerCall &call, PlanRange plan);
// The same for any code that issues the layer's commands on the open
// emulator (`run`; a built-in op's kernel).
StaticLayerRecord record_static_commands(const std::string &layer, const std::string &op, PlanRange plan,
                                         const std::function<void()> &run);

// Throws unless `layer` (static) can be replayed on `d`'s chip with `d`'s
// plan: a known execution, its section present and of kind "commands", a
// valid stream recorded on that chip, needing no memory outside the plan.
// The runner checks every static layer before running any.
void check_static_layer(const ModelFile &model, const ModelDescription &d, const ModelLayer &layer);

// Run time: replays the layer's stream. The emulator of the model's chip is
// open with the plan allocated at d.memory_base. Leaves the layer's run
// statistics in cmodel_last_run_stats().
void replay_static_layer(const ModelFile &model, const ModelLayer &layer);

// The section holding a static layer's stream; throws naming the layer
// when its record is not a stream this SDK replays or the section is missing.
const Section &commands_section(const ModelFile &model, const ModelLayer &layer);

}  // namespace tpu_runtime::detail
