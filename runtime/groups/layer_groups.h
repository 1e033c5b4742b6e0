// layer_groups.h (private): layer groups in models: planning them at build
// time, recording each as one command stream, checking every local layer's
// slice while it is recorded, and replaying the streams at run time.
//
// A group is a chain of consecutive static layers whose ops have local
// versions: per slice (N, then H) the group's input slice is loaded with the
// halo rows the ops' backward_h_ hooks declare, each layer's
// backend_api_<op>_local runs on local memory, and only the last layer's
// output slice is stored. A builtin.expression layer's other inputs are
// side inputs from outside the group, loaded beside the group's input
// (once when every slice takes the same part of them, a broadcast input,
// else per slice). The whole schedule runs on the emulator while a
// recording is open; the stream becomes the section "group<g>.commands".
//
// The slice check: while a layer's local kernel runs, the emulator watches
// local memory (cmodel_watch_local): it may read only the input rows it
// declared (nothing else of its input is in local memory), its output slice
// and its scratch, and write only its output slice and scratch. A violation
// fails the build naming the layer, the op, the hook, the slice and the rows
// read against the rows declared.
//
// A group of dynamic layers is not recorded: its schedule (every slice's
// local_sec_info_t and local addresses) is stored in the metadata and run
// at run time through the firmware's tpu_local_calculate_entry, under the
// same slice check (the kernel module may have been replaced since).
//
// Metadata: "layer_groups" at the top (the plan: groups with slicing,
// estimates, sections; boundaries with reasons; the figures used), and each
// grouped layer's "static" is {"execution": "group", "group": g}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/static_layers.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/group_planner.h"
#include "tpu_runtime/model_description.h"
#include "tpu_runtime/model_file.h"

namespace tpu_runtime::detail {

struct GroupTensor {
  std::string name;
  Shape shape;
  Dtype dtype = Dtype::fp32;
  uint64_t addr = 0;  // absolute, in the recording emulator's plan
  bool net_output = false;
};

struct GroupLayer {
  std::string name, op;
  PackedParams params;
  bool dynamic = false;
  bool has_scratch = false;  // a planned global scratch buffer
  std::vector<std::size_t> inputs, outputs;  // into the tensor table
  // Measured from the layer's global run.
  double global_us = 0, bdc_us = 0, gdma_us = 0;
  uint64_t gdma_bytes = 0;
  // A built-in layer's params as the net gives them (builtin.expression's
  // formula), or the expression form of an element-wise built-in layer.
  nlohmann::ordered_json builtin_params = nlohmann::ordered_json::object();
  bool inplace = false;  // updates an input in place (metadata_<op>): kept out of groups
  bool padded = false;   // reads a padded copy of an input (metadata_<op>'s input_layouts): kept out too
  bool multi_core = false;  // its global kernel splits the work across the cores (is_multi_core): kept out too
  // An element-wise built-in layer (add, sub, mul, relu) whose local version
  // is the expression in builtin_params (builtin_expression_form).
  bool expression_form = false;
};

struct RecordedGroups {
  GroupPlan plan;
  nlohmann::json metadata;          // the "layer_groups" object
  std::vector<int> group_of_layer;  // -1: not in a group
  std::vector<Section> sections;
};

// The plan (no recording): the planner over the layers' measured figures,
// using at most `local_memory_limit` bytes of local memory per NPU when
// non-zero. The emulator of the model's chip is open.
struct GroupPlanning {
  GroupPlan plan;
  PlannerFigures figures;
  std::vector<PlannerLayer> layers;  // what the planner saw of each layer
};
GroupPlanning plan_layer_groups(const Plugin &plugin, const Backend &backend, const std::vector<GroupTensor> &tensors,
                                const std::vector<GroupLayer> &layers, uint32_t local_memory_limit = 0);

// Records the planned groups against the memory plan at `plan` (the
// tensors' addr are set; the tensors a group touches must not share global
// memory with each other). A group whose exact layout fits no slicing stays
// global ("fallbacks" in the metadata). Throws with the reason when a
// group's layer breaks its slice (the slice check) or a kernel fails.
RecordedGroups record_layer_groups(const Plugin &plugin, const Backend &backend,
                                   const std::vector<GroupTensor> &tensors, const std::vector<GroupLayer> &layers,
                                   const GroupPlanning &planning, PlanRange plan);

// The "static" object of a layer in group `group`.
nlohmann::json group_static_record(int group);

// Run time, as for static layers: the check before anything runs, and the
// replay of group `g` (its statistics in cmodel_last_run_stats()).
void check_group(const ModelFile &model, const ModelDescription &d, const ModelGroup &group);
void replay_group(const ModelFile &model, const ModelGroup &group);
// A dynamic group: its schedule through the firmware's local entry
// (tpu_local_calculate_entry) slice by slice, every layer under the slice
// check; the plan is allocated at `base`.
void run_dynamic_group(const Firmware &firmware, const ModelDescription &d, const ModelGroup &group, uint64_t base);

}  // namespace tpu_runtime::detail
