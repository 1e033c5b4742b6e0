// model_description.h: what a model file holds, as the SDK reads it: the
// tensors with their roles and places in the global-memory plan, the layers
// (static or dynamic), layer groups, the embedded kernel module and stored
// reference data; describe_model() parses and checks the metadata.
// (Room format/: net descriptions, our model file, static layer records.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpu_runtime/digest.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/op_metadata.h"
#include "tpu_runtime/params.h"

namespace tpu_runtime {

// Value of the metadata key "model_format": the meaning of the model keys
// below (docs/tpu-model.md). Readers refuse a larger one, and format 1
// (static layers run through the firmware, before command streams).
inline constexpr int kModelFormat = 2;
// Alignment of every buffer of the global-memory plan, in bytes.
inline constexpr uint64_t kModelPlanAlignment = 512;
// Section names.
inline constexpr const char *kKernelModuleSection = "kernel_module";
// A weight's section: this prefix and the tensor's name; kind "weight".
inline constexpr const char *kWeightSectionPrefix = "weight.";

// ---- the model description (the metadata, parsed and checked) ------------

// A weight is a constant tensor of the net ("weights"): its bytes are a
// section of the file (kind "weight"), loaded into the plan before the run.
enum class TensorRole { input, output, intermediate, weight };
const char *role_name(TensorRole role);

struct ModelTensor {
  std::string name;
  Shape shape;
  Dtype dtype = Dtype::fp32;
  TensorRole role = TensorRole::intermediate;
  uint64_t offset = 0;  // in the global-memory plan
  uint64_t size = 0;    // bytes
  std::string section;  // a weight: the section holding its bytes ("weight.<name>")
  // An in-place output (metadata_<op>'s num_inplace_inputs): the tensor
  // whose memory it shares; "" when it has its own.
  std::string in_place_of;
  // "text": an input the caller may give as text, an output given back as
  // text (net.h "Text inputs and outputs"); the device holds the numbers.
  bool text = false;
  // "scalar": a one-element input or output the caller gives or gets as a
  // rank-0 array (net.h "Scalar inputs and outputs").
  bool scalar = false;
  int64_t element_count() const;
};

// host: a host layer (net.h, is_host_op): its inputs are read from global
// memory, the op runs on the host CPU, its outputs are written back.
enum class LayerMode { static_mode, dynamic_mode, host_mode };
const char *mode_name(LayerMode mode);  // "static" / "dynamic" / "host"

struct ModelLayer {
  std::string name, op;
  LayerMode mode = LayerMode::static_mode;
  std::string dynamic_reason;       // "net" ("dynamic": true), "force_dynamic_run", "" for static
  std::string params_json;          // the params object as written in the net (key order kept)
  PackedParams params;              // the packed bytes stored in the model (element 0 zero)
  std::vector<std::size_t> inputs;  // indices into ModelDescription::tensors
  std::vector<std::size_t> outputs;
  uint64_t scratch_offset = 0, scratch_size = 0;  // global scratch (backend_api_<op>_global_bfsz); size 0: none
  nlohmann::json static_record;     // "static" object of a static layer (static_layers.h), else null
  int group = -1;                   // index into ModelDescription::groups, -1: not in a layer group
  std::string check;                // a check layer's text (net.h NetLayer::check), else empty
  // A host layer: its library (index into ModelDescription::host_libraries)
  // and whether its outputs may come out smaller than planned.
  int host_library = -1;
  bool host_dynamic_shapes = false;
  OpMetadata metadata;              // the op's metadata_<op> at build time ("metadata"; optional)
  std::string gradient;             // its declared gradient at build time, as gradient_text() ("gradient"; optional)
  // Inputs the layer reads as a padded copy its commands make first (its
  // op's input_layouts ask for a padded innermost dimension): the input,
  // the padded row in elements, the copy's bytes in the plan.
  struct PaddedInput {
    int input = 0;
    int pitch = 0;
    uint64_t offset = 0, size = 0;
  };
  std::vector<PaddedInput> padded_inputs;  // "padded_inputs" (optional)
};

// A host library embedded in the model (section "host_library.<i>"): the
// vendor AP run-time library (libcustomcpuop.so) or a Callback library.
inline constexpr const char *kHostLibrarySectionPrefix = "host_library.";
struct HostLibraryInfo {
  std::string section;
  std::string kind;       // "vendor_ap" or "callback"
  std::string file_name;  // basename of the library it came from
  uint64_t size = 0;
  std::string sha256;     // hex, of the bytes
  std::string machine;    // the ELF machine ("x86-64", "AArch64", ...)
  std::vector<std::string> entry_points;  // the exported functions a run resolves
  int api_level = -1;     // a callback's custom_op_api_level, -1 when it exports none
  nlohmann::json to_json() const;
};

// A layer group (runtime/src/layer_groups.h): layers first..last run slice
// by slice in local memory from one recorded command stream.
struct ModelGroup {
  int first = 0, last = 0;
  int n_slices = 1, h_slices = 1, w_slices = 1;
  double estimate_us = 0;
  bool dynamic = false;    // dynamic layers: `schedule` runs through the firmware
  std::string section;     // static: the recorded stream
  uint64_t commands = 0;
  nlohmann::json schedule;  // dynamic: the slices (layer_groups.h)
};

struct KernelModuleInfo {
  std::string section;    // section holding the bytes
  std::string file_name;  // basename of the library it came from
  uint64_t size = 0;
  std::string sha256;     // hex
  std::string chip;       // tpu_custom_firmware_chip
  int api_level = 0;      // tpu_custom_api_level
  std::vector<std::string> ops, local_ops;  // tpu_custom_registered_ops / _local_ops
  nlohmann::json to_json() const;
};

// A layer of the net the build computed once with an identical earlier
// one (both stateless: metadata_<op>'s is_stateless).
struct MergedLayerInfo {
  std::string layer, op, into;
  std::vector<std::pair<std::string, std::string>> outputs;  // its output -> the model tensor holding it
};

struct ModelDescription {
  int model_format = kModelFormat;
  std::string chip;
  std::string net_name;
  std::vector<ModelTensor> tensors;
  std::vector<std::size_t> inputs, outputs;  // indices into tensors
  std::vector<std::size_t> weights;          // indices into tensors, in tensor order
  std::vector<ModelLayer> layers;
  std::vector<ModelGroup> groups;
  nlohmann::json layer_groups;  // the plan ("layer_groups" object), or null
  uint64_t memory_size = 0;  // bytes of the plan
  uint64_t memory_base = 0;  // global address the plan was recorded at (static layers' commands use it)
  uint64_t memory_alignment = kModelPlanAlignment;
  // Bytes the in-place outputs saved: the plan with every tensor in its own
  // memory would be this much larger ("memory.in_place_saved", optional).
  uint64_t memory_in_place_saved = 0;
  std::optional<KernelModuleInfo> kernel_module;
  std::vector<HostLibraryInfo> host_libraries;
  // Reference data stored in the model: tensor name -> section name.
  std::vector<std::pair<std::string, std::string>> reference_inputs, reference_outputs;
  nlohmann::json reference;  // the "reference" object (seed, source), or null
  std::vector<MergedLayerInfo> merged_layers;  // "merged_layers" (optional)

  const ModelTensor *find_tensor(std::string_view name) const;
  // The ops the embedded firmware must export: those of the dynamic layers
  // (static layers replay their recorded commands).
  std::vector<std::string> firmware_ops() const;
};

// Checks the metadata of `model` (types, references between tensors and
// layers, plan bounds, packed parameters against params_json, the kernel
// module entry against its section). `where` names the file.
ModelDescription describe_model(const ModelFile &model, std::string_view where);

}  // namespace tpu_runtime
