// model.h: TPU SDK models, built from a net description and run on the
// emulator (the library behind the tpu_model tool; docs/tpu-model.md).
//
//   build_model()    net description + custom-op libraries -> ModelFile:
//                    shapes and dtypes through the plugin, a global-memory
//                    plan, one record per layer (static or dynamic), the
//                    firmware library embedded as the "kernel_module"
//                    section, optional reference data from the plugin's
//                    inference_<op> hooks.
//   describe_model() reads and checks the metadata of a model file.
//   run_model()      runs a model on the emulator of its chip, using only
//                    what the file holds (the embedded firmware is loaded
//                    from a memfd, never from a shared path).
//   update_kernel_module() / dump_kernel_module(): tpu_model kernel_update /
//                    kernel_dump.
//
// Static layers replay a command stream recorded at build time from
// backend_api_<op>_global (runtime/format/static_layers.{h,cc}); layer groups
// replay one stream recorded from the ops' local versions, slice by slice
// (runtime/groups/layer_groups.{h,cc}).
//
// Everything throws tpu_runtime::Error with a message naming the file, the
// layer or tensor, and the problem.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpu_runtime/compare.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model_description.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/npz.h"
#include "tpu_runtime/params.h"
#include "tpu_runtime/profile_summary.h"

namespace tpu_runtime {

// ---- build ----------------------------------------------------------------

struct BuildOptions {
  std::string chip;     // "bm1684x" or "bm1688"
  LibraryPaths libraries;  // plugin, backend, firmware (for this chip)
  // Reference data: computed when `reference` is true, from these inputs
  // (checked like run inputs) or, when empty, from inputs uniform in
  // [-4, 4] drawn with `seed` and rounded to each input's dtype.
  bool reference = false;
  npz::Arrays reference_inputs;
  uint64_t seed = 1;
  bool embed_reference = false;  // store inputs and outputs as sections
  // Layer groups (layer_groups.h): plan, record and check them; false keeps
  // every layer global (tpu_model build --no-groups).
  bool layer_groups = true;
  // Local memory per NPU the groups may use; 0: all of it. Less makes the
  // planner slice more finely (tests use it to reach H slicing with small
  // tensors).
  uint32_t group_local_memory = 0;
  // Every tensor, scratch buffer and padded copy in bytes of its own, none
  // reused by another whose lifetime does not overlap (the metadata says
  // "memory": {"buffers_apart": true}). A pipeline's micro-batch model is
  // built so: its stages run different micro-batches at once on the cores
  // of one global memory (docs/pipeline.md, "Running").
  bool buffers_apart = false;
};

struct BuildResult {
  ModelFile model;
  ModelDescription description;
  npz::Arrays reference_inputs;   // when computed: in each input's storage dtype
  npz::Arrays reference_outputs;  // when computed: float32; an integer output in its own dtype (exact)
  std::vector<std::string> warnings;
};

// `source` names the net in messages (normally its path).
BuildResult build_model(const NetDescription &net, const BuildOptions &options, std::string_view source = "net");

// ---- run ------------------------------------------------------------------

// A host layer's cost in the estimate: the op's call as measured on this
// host, plus one copy per input (device -> host) and per output (host ->
// device), each kHostCopyLatencyUs plus its bytes at kHostTransferBytesPerUs.
// An assumption, not a measurement of a board: 4 GB/s is below what a PCIe
// Gen3 card's DMA reaches and above a SoC's cache-maintained memcpy of small
// tensors; 10 us per copy stands for the runtime's synchronisation with the
// device (docs/tpu-model.md, "Host layers").
inline constexpr double kHostTransferBytesPerUs = 4000;  // 4 GB/s
inline constexpr double kHostCopyLatencyUs = 10;

struct LayerStats {
  std::string name, op;
  LayerMode mode = LayerMode::static_mode;
  // Emulated time of the layer's kernel; a host layer: host_us + transfer_us.
  double total_us = 0;
  uint64_t gdma_bytes = 0;  // bytes its GDMA commands moved
  std::string stats_json;   // cmodel_total_stats() of the layer's runs (one, or a dynamic group's many)
  ProfileFigures profile;   // the same figures read (profile_summary.h)
  // A host layer: its call measured on this host, its copies estimated, and
  // the bytes copied device -> host (inputs) and host -> device (outputs).
  double host_us = 0, transfer_us = 0;
  uint64_t host_bytes_in = 0, host_bytes_out = 0;
};

struct RunResult {
  npz::Arrays outputs;  // one per model output, in its storage dtype (bf16 as uint16)
  std::vector<LayerStats> layers;
  // With RunOptions::profile: the run's Chrome trace (cmodel_trace_json),
  // every command of every layer, and a "layers" lane with a span per layer
  // (a layer group: one span for the group); see profile.h. Its root
  // "metadata" holds the profile summary of every layer and of the run.
  std::string trace_json;
};

struct RunOptions {
  bool profile = false;  // record the trace (RunResult::trace_json)
  // Outputs as the caller gets them: a text output (ModelTensor::text) as
  // text (a "<U<n>" array of each value's shortest decimal form), a scalar
  // output rank 0; when false, each output as the net holds it (numbers in
  // its storage dtype and shape: the pipelined run joins micro-batches so).
  bool outputs_for_caller = true;
};

// Runs `model` (`where` names it) on a fresh emulator of its chip. A host
// layer's output that came out smaller than planned (a dynamic host layer)
// has its run-time shape in `outputs`. Inputs
// must match the model's inputs exactly: every name, no extra array, the
// shape, and the storage dtype ("<f4" fp32, "<f2" fp16, "<u2" bf16, ...);
// a text input also takes a text array of numbers (net.h).
RunResult run_model(const ModelFile &model, const npz::Arrays &inputs, std::string_view where,
                    const RunOptions &options = {});

// A loaded model run any number of times (docs/tpu-model.md, "Sessions"):
// the model is checked and its firmware and host libraries loaded once, on
// one emulator of its chip, with the weights in place. The global scratch
// buffers of stateful layers (every layer whose op does not declare
// is_stateless, tpu_op_metadata.h) start zeroed and keep what the layers
// leave in them from one run to the next; a new session starts from zeros
// again. `model` must outlive the session. The emulator is one per process:
// one session (or run_model) at a time.
class ModelSession {
 public:
  ModelSession(const ModelFile &model, std::string_view where);
  ~ModelSession();
  ModelSession(const ModelSession &) = delete;
  ModelSession &operator=(const ModelSession &) = delete;
  // As run_model, on this session's memory.
  RunResult run(const npz::Arrays &inputs, const RunOptions &options = {});

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The reference arrays stored in the model (empty when none).
npz::Arrays stored_reference_inputs(const ModelFile &model, std::string_view where);
npz::Arrays stored_reference_outputs(const ModelFile &model, std::string_view where);

struct OutputComparison {
  std::string name;
  Dtype dtype = Dtype::fp32;
  Similarity similarity;
  Tolerance tolerance;
  bool compared = false;  // false: no usable reference (see why)
  bool passed = false;
  std::string why;  // why it failed
};

// Compares every model output of `actual` with `expected` (float32, or the
// output's own storage dtype). `tolerance` replaces model_output_tolerance()
// of each output's dtype (resolved_model_tolerance). A missing or mis-shaped reference is a failed output.
std::vector<OutputComparison> compare_outputs(const ModelDescription &model, const npz::Arrays &actual,
                                              const npz::Arrays &expected,
                                              const std::optional<Tolerance> &tolerance = std::nullopt);

// ---- kernel module --------------------------------------------------------

// Reads a firmware library and checks it can serve as a kernel module: a
// 64-bit little-endian ELF shared object (ET_DYN) for this host's machine,
// loadable, exporting tpu_custom_firmware_chip, tpu_custom_api_level,
// tpu_custom_registered_ops and the four entries. `bytes` receives the file.
KernelModuleInfo inspect_kernel_library(const std::string &path, std::vector<uint8_t> *bytes = nullptr);

// Just the ELF header checks of inspect_kernel_library, on bytes in memory;
// `where` names them.
void check_elf_shared_object(std::span<const uint8_t> bytes, std::string_view where);

struct KernelUpdateResult {
  KernelModuleInfo old_module, new_module;
  bool changed = false;  // false: the model already held these exact bytes (file untouched)
};

// tpu_model kernel_update: validates `library` against the model (chip,
// API level, every op of firmware_ops()), then rewrites `model_path`
// atomically with only the kernel-module section and the "kernel_module"
// metadata entry replaced. On any failure the file is left untouched.
KernelUpdateResult update_kernel_module(const std::string &model_path, const std::string &library);

// tpu_model kernel_dump: writes the embedded kernel module to `output`; an
// empty `output` is the stored file name in the current directory, an
// existing directory (or a path ending in '/') gets the stored file name
// appended. The bytes are checked against the recorded size and SHA-256.
// Returns the path written.
std::string dump_kernel_module(const std::string &model_path, const std::string &output);

// The embedded kernel-module bytes, checked against size and SHA-256.
std::span<const uint8_t> kernel_module_bytes(const ModelFile &model, const ModelDescription &description,
                                             std::string_view where);

// ---- host libraries -------------------------------------------------------

struct HostLibraryUpdateResult {
  HostLibraryInfo old_library, new_library;
  bool changed = false;  // false: the model already held these exact bytes (file untouched)
};

// tpu_model custom_ap_update (the vendor's --custom_ap_update) on our model
// files: replaces the embedded host library stored as `which` (a file name),
// or when `which` is empty the AP library (or the model's only host
// library). The new library passes the checks of a build (ELF for this host,
// loads, entry points, API level; an AP library's table knows every AP op
// of the model) before the model is rewritten atomically; on any failure the
// file is left untouched and the message ends "MODEL was not changed".
HostLibraryUpdateResult update_host_library(const std::string &model_path, const std::string &library,
                                            const std::string &which = "");

// ---- info -----------------------------------------------------------------

// The text of tpu_model info.
std::string model_info_text(const ModelFile &model, const ModelFileLayout &layout, std::string_view where);

}  // namespace tpu_runtime
