// firmware.cc: libcmodel_custom_<chip>.so, the dynamic (run-time) path.
//
// The four tpu_*_entry functions dispatch by op name. They run on the
// process's emulator; their int status is checked, and since a successful
// cmodel_run clears the emulator's last error, the entry's own message
// ("no custom op named ...") is captured inside the run.
#include <cstdio>
#include <cstring>

#include "loader/loader_internal.h"
#include "tpu_custom_abi.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/library_paths.h"

namespace tpu_runtime {
namespace {

using GlobalEntryFn = int (*)(const char *name, const void *param, const int param_size,
                              const tensor_spec_t *in_tensors, const int in_num, tensor_spec_t *out_tensors,
                              const int out_num);
using LocalEntryFn = int (*)(const char *name, const void *param, const int param_size,
                             const tensor_spec_t *in_tensors, const int in_num, const local_sec_info_t *sec_info,
                             tensor_spec_t *out_tensors, const int out_num);
using SliceEntryFn = int (*)(const char *name, const void *param, const int param_size,
                             const tensor_spec_t *in_tensors, const int in_num, const local_sec_info_t *sec_info,
                             tensor_slice_t *out_slices, const int out_num);

constexpr const char *kShapeEntry = "tpu_shape_infer_entry";
constexpr const char *kGlobalEntry = "tpu_global_calculate_entry";
constexpr const char *kSliceEntry = "tpu_slice_infer_entry";
constexpr const char *kLocalEntry = "tpu_local_calculate_entry";

// One entry call inside cmodel_run (see loader::run_on_cmodel); the
// shape-infer and global entries share a signature.
struct EntryCall {
  enum Kind { kGlobalSignature, kLocalSignature, kSliceSignature } kind;
  void *fn;
  const char *name;
  const void *param;
  int param_size;
  const tensor_spec_t *inputs;
  int in_num;
  const local_sec_info_t *sec_info;
  tensor_spec_t *outputs;
  tensor_slice_t *slices;
  int out_num;
  int status;
  char message[2048];

  // Every core of a multi-core run returns here: the first failure stays.
  static void invoke(const void *arg) {
    auto *c = static_cast<EntryCall *>(const_cast<void *>(arg));
    int status = 0;
    switch (c->kind) {
      case kGlobalSignature:
        status = reinterpret_cast<GlobalEntryFn>(c->fn)(c->name, c->param, c->param_size, c->inputs, c->in_num,
                                                        c->outputs, c->out_num);
        break;
      case kLocalSignature:
        status = reinterpret_cast<LocalEntryFn>(c->fn)(c->name, c->param, c->param_size, c->inputs, c->in_num,
                                                       c->sec_info, c->outputs, c->out_num);
        break;
      case kSliceSignature:
        status = reinterpret_cast<SliceEntryFn>(c->fn)(c->name, c->param, c->param_size, c->inputs, c->in_num,
                                                       c->sec_info, c->slices, c->out_num);
        break;
    }
    if (status == 0 || c->status != 0) return;
    c->status = status;
    std::snprintf(c->message, sizeof c->message, "%s", cmodel_last_error());
  }
};

EntryCall make_call(EntryCall::Kind kind, void *fn, const std::string &op, const PackedParams &params,
                    const std::vector<tensor_spec_t> &inputs) {
  EntryCall call{};
  call.kind = kind;
  call.fn = fn;
  call.name = op.c_str();
  call.param = params.data();
  call.param_size = params.size_bytes();
  call.inputs = inputs.data();
  call.in_num = int(inputs.size());
  return call;
}

// The open emulator must be the firmware's chip; an op has inputs and outputs.
void check_call(const SharedLibrary &lib, const std::string &chip, const char *entry, const std::string &op,
                std::size_t num_inputs, std::size_t num_outputs) {
  const std::string open_chip = cmodel_chip();
  if (!open_chip.empty() && open_chip != chip)
    throw Error(fmt::format("{}: {}(\"{}\"): the firmware is for {} but the open emulator is {}", lib.path(), entry,
                            op, chip, open_chip));
  if (num_inputs == 0 || num_outputs == 0)
    throw Error(fmt::format("{}: {}(\"{}\") called with {} inputs and {} outputs; a custom op takes at least one "
                            "of each",
                            lib.path(), entry, op, num_inputs, num_outputs));
  loader::checked_count(lib, op, "inputs", num_inputs);
  loader::checked_count(lib, op, "outputs", num_outputs);
}

void run_entry(const SharedLibrary &lib, const char *entry, const std::string &op, EntryCall &call, int cores = 1) {
  loader::run_on_cmodel(lib, fmt::format("{}(\"{}\")", entry, op), call, cores);
  if (call.status != 0)
    throw Error(fmt::format("{}: {}(\"{}\") returned {}: {}", lib.path(), entry, op, call.status,
                            call.message[0] ? call.message : "(no message)"));
}

}  // namespace

Firmware Firmware::none(const std::string &chip) {
  Firmware firmware;
  firmware.lib_ = loader::no_library(firmware_file_name(chip));
  firmware.chip_ = chip;
  return firmware;
}

Firmware Firmware::open(const std::string &path, const std::string &chip) {
  const std::string file_name = firmware_file_name(chip);  // refuses an unknown chip
  Firmware firmware;
  firmware.lib_ = loader::open_library(path, file_name, true);
  firmware.chip_ = chip;
  const SharedLibrary &lib = *firmware.lib_;
  loader::check_api_level(lib);
  const auto *built_for = static_cast<const char *>(lib.find("tpu_custom_firmware_chip"));
  if (!built_for)
    throw Error(fmt::format("{}: not a firmware library: no tpu_custom_firmware_chip symbol (a firmware library "
                            "is {}, built in cmodel mode)",
                            lib.path(), file_name));
  const std::string built_chip(built_for, strnlen(built_for, 64));
  if (built_chip != chip)
    throw Error(fmt::format("{}: firmware built for {}, but {} was asked for; use {} of the {} build", lib.path(),
                            built_chip, chip, file_name, chip));
  for (const char *entry : {kShapeEntry, kGlobalEntry, kSliceEntry, kLocalEntry})
    lib.require(entry, "a firmware entry function the generated entry.c defines");
  firmware.registered_ops();  // both tables must be there
  firmware.registered_local_ops();
  return firmware;
}


const std::string &Firmware::chip() const { return chip_; }




void Firmware::shape_infer(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                           std::vector<tensor_spec_t> &outputs) const {
  check_call(*lib_, chip_, kShapeEntry, op, inputs.size(), outputs.size());
  loader::check_specs(*lib_, op, "input", inputs);
  EntryCall call = make_call(EntryCall::kGlobalSignature, lib_->find(kShapeEntry), op, params, inputs);
  call.outputs = outputs.data();
  call.out_num = int(outputs.size());
  run_entry(*lib_, kShapeEntry, op, call);
  loader::check_specs(*lib_, op, "inferred output", outputs);
}

void Firmware::run_global(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                          std::vector<tensor_spec_t> &outputs, int cores) const {
  check_call(*lib_, chip_, kGlobalEntry, op, inputs.size(), outputs.size());
  loader::check_specs(*lib_, op, "input", inputs);
  loader::check_specs(*lib_, op, "output", outputs);
  EntryCall call = make_call(EntryCall::kGlobalSignature, lib_->find(kGlobalEntry), op, params, inputs);
  call.outputs = outputs.data();
  call.out_num = int(outputs.size());
  run_entry(*lib_, kGlobalEntry, op, call, cores);
}

void Firmware::slice_infer(const std::string &op, const PackedParams &params, const local_sec_info_t &sec_info,
                           const std::vector<tensor_spec_t> &inputs,
                           std::vector<tensor_slice_t> &output_slices) const {
  if (output_slices.empty()) output_slices.resize(1);
  check_call(*lib_, chip_, kSliceEntry, op, inputs.size(), output_slices.size());
  loader::check_specs(*lib_, op, "input", inputs);
  EntryCall call = make_call(EntryCall::kSliceSignature, lib_->find(kSliceEntry), op, params, inputs);
  call.sec_info = &sec_info;
  call.slices = output_slices.data();
  call.out_num = int(output_slices.size());
  run_entry(*lib_, kSliceEntry, op, call);
}

void Firmware::run_local(const std::string &op, const PackedParams &params, const local_sec_info_t &sec_info,
                         const std::vector<tensor_spec_t> &inputs, std::vector<tensor_spec_t> &outputs) const {
  check_call(*lib_, chip_, kLocalEntry, op, inputs.size(), outputs.size());
  loader::check_specs(*lib_, op, "input", inputs);
  loader::check_specs(*lib_, op, "output", outputs);
  EntryCall call = make_call(EntryCall::kLocalSignature, lib_->find(kLocalEntry), op, params, inputs);
  call.sec_info = &sec_info;
  call.outputs = outputs.data();
  call.out_num = int(outputs.size());
  const loader::LocalEntryScope local_entry;
  run_entry(*lib_, kLocalEntry, op, call);
}

}  // namespace tpu_runtime
