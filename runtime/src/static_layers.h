// static_layers.h (private): how a static layer is recorded at build time
// and executed at run time. THE SEAM FOR RECORDED COMMAND STREAMS.
//
// A static layer is meant to work like the vendor's static subnets: at
// build time backend_api_<op>_global runs against the emulator in a
// "record mode" that captures the TIU/GDMA commands it emits; the model
// stores that command stream as a section (kind "commands"); at run time
// the stream is replayed on the emulator, without any custom-op library.
//
// The emulator has no record mode yet. Until it does:
//   record_static_layer()  stores no commands; it returns the metadata
//                          {"execution": "firmware_entry"}, saying how the
//                          runner must execute the layer;
//   replay_static_layer()  runs the op through the embedded firmware's
//                          tpu_global_calculate_entry (the same kernel code
//                          that backend_api_<op>_global wraps), with the
//                          planned addresses and scratch buffer;
//   static_layers_need_firmware() is true, so the embedded firmware must
//                          export the ops of static layers too (checked by
//                          build, run and kernel_update).
//
// TODO(record mode): when the cmodel can record, record_static_layer()
// opens the recording around backend.run_global-like call of
// backend_api_<op>_global (with `call`'s specs and params, whose element 0
// already holds the planned scratch address), returns the stream(s) as
// sections named "<layer>.commands" and metadata such as
// {"execution": "commands", "sections": [...], "plan_base": ...};
// replay_static_layer() replays them (relocating from plan_base to the
// run's base if the stream holds absolute addresses); and
// static_layers_need_firmware() returns false. Only this file and
// static_layers.cc change; models with "execution": "firmware_entry" stay
// runnable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api_common.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/params.h"

namespace tpu_runtime::detail {

// One global call of a layer, with absolute global addresses.
struct LayerCall {
  std::string layer;  // for messages
  std::string op;
  PackedParams params;  // element 0: the scratch buffer's address, or 0
  std::vector<tensor_spec_t> inputs, outputs;
};

struct StaticLayerRecord {
  nlohmann::json metadata;        // stored as the layer's "static" object
  std::vector<Section> sections;  // stored in the model (none until record mode exists)
};

// Build time. The emulator of `chip` is open and the plan is allocated at
// `plan_base` (the addresses in `call` are plan_base + offset).
StaticLayerRecord record_static_layer(const Backend &backend, const std::string &chip, const LayerCall &call,
                                      uint64_t plan_base);

// Run time. `layer.static_record` is what record_static_layer() returned;
// `firmware` is the model's embedded firmware (may be null once static
// layers no longer need it). The emulator of the model's chip is open and
// the plan allocated at `plan_base`. Leaves the layer's run statistics in
// cmodel_last_run_stats().
void replay_static_layer(const ModelFile &model, const ModelLayer &layer, const Firmware *firmware, LayerCall &call,
                         uint64_t plan_base);

// Throws unless this SDK can execute `layer` (its "static" record names an
// execution this SDK knows and the sections it needs exist). The runner
// checks every static layer before running any.
void check_static_layer(const ModelFile &model, const ModelLayer &layer);

// Whether running a static layer needs the embedded firmware (true as long
// as static layers execute through tpu_global_calculate_entry).
bool static_layers_need_firmware();

}  // namespace tpu_runtime::detail
