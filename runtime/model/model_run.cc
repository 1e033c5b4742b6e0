// model_run.cc: tpu_model run: a model file on the emulator of its chip.
//
// The embedded firmware and host libraries are loaded from private files
// (private_library.h), never from a shared path.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <map>
#include <optional>

#include "builtin/builtin_kernels.h"
#include "groups/layer_groups.h"
#include "model/host_layers.h"
#include "model/model_plan.h"
#include "model/private_library.h"
#include "model/caller_arrays.h"
#include "emulator/emulator.h"
#include "io/arrays.h"
#include "format/static_layers.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/profile.h"

namespace tpu_runtime {
namespace detail {

// The embedded firmware, loaded privately (private_library.h); unloaded
// (and its file closed) when the object goes.
class EmbeddedFirmware {
 public:
  EmbeddedFirmware(std::span<const uint8_t> bytes, const KernelModuleInfo &info, const std::string &chip,
                   std::string_view where)
      : file_(checked(bytes, where, info), info.file_name, fmt::format("{}: kernel module {}", where, info.file_name)) {
    try {
      firmware_.emplace(Firmware::open(file_.path(), chip));
    } catch (const Error &e) {
      throw Error(fmt::format("{}: cannot load the embedded kernel module {}: {}", where, info.file_name, e.what()));
    }
    file_.loaded();
  }

  const Firmware &firmware() const { return *firmware_; }

 private:
  static std::span<const uint8_t> checked(std::span<const uint8_t> bytes, std::string_view where,
                                          const KernelModuleInfo &info) {
    check_elf_shared_object(bytes, fmt::format("{}: kernel module {}", where, info.file_name));
    return bytes;
  }

  detail::PrivateLibraryFile file_;
  std::optional<Firmware> firmware_;  // declared after file_: closed before it
};

// The memory plan at `base`, once per session: the weights in place, the
// stateful layers' scratch buffers zeroed (they keep what the layers leave
// in them from run to run; docs/tpu-model.md, "Sessions").
void load_plan(detail::EmulatorSession &emulator, const ModelFile &model, const ModelDescription &d, uint64_t base) {
  emulator.alloc_at(base, d.memory_size, "the memory plan");
  // The weights, from their sections (describe_model checked their sizes).
  for (std::size_t i : d.weights) {
    const ModelTensor &t = d.tensors[i];
    emulator.write(base + t.offset, model.find_section(t.section)->data, fmt::format("weight '{}'", t.name));
  }
  for (const ModelLayer &l : d.layers)
    if (l.scratch_size && !l.metadata.stateless)
      emulator.write(base + l.scratch_offset, std::vector<uint8_t>(l.scratch_size, 0),
                     fmt::format("the scratch buffer of layer '{}'", l.name));
}

// Before each run: the inputs in place, every other byte the layers should
// write 0xFF (NaN in the float types), so an output a kernel forgets shows up.
void load_inputs(detail::EmulatorSession &emulator, const ModelDescription &d, const npz::Arrays &inputs,
                 uint64_t base) {
  for (const ModelTensor &t : d.tensors)
    if (t.role != TensorRole::input && t.role != TensorRole::weight)
      emulator.write(base + t.offset, std::vector<uint8_t>(t.size, 0xFF), fmt::format("tensor '{}'", t.name));
  for (std::size_t i : d.inputs) {
    const ModelTensor &t = d.tensors[i];
    emulator.write(base + t.offset, inputs.at(t.name).data, fmt::format("input '{}'", t.name));
  }
}

}  // namespace detail

namespace {

using detail::EmbeddedFirmware;
using detail::load_inputs;
using detail::load_plan;

// The static layers' and groups' recorded commands, checked before anything
// runs.
void check_recorded_layers(const ModelFile &model, const ModelDescription &d, const std::string &where) {
  for (const ModelLayer &l : d.layers) {
    if (l.mode != LayerMode::static_mode) continue;
    try {
      if (l.group >= 0) detail::check_group(model, d, d.groups[std::size_t(l.group)]);
      else detail::check_static_layer(model, d, l);
    } catch (const Error &e) {
      throw Error(fmt::format("{}: {}", where, e.what()));
    }
  }
}

bool needs_firmware(const ModelDescription &d) {
  return std::any_of(d.layers.begin(), d.layers.end(),
                     [](const ModelLayer &l) { return l.mode == LayerMode::dynamic_mode; });
}

// The embedded kernel module registers every op of the dynamic layers, and
// those of the dynamic groups as local ops.
void check_firmware_ops(const Firmware &firmware, const ModelDescription &d, const std::string &where) {
  const std::vector<std::string> ops = firmware.registered_ops();
  for (const std::string &op : d.firmware_ops())
    if (std::find(ops.begin(), ops.end(), op) == ops.end())
      throw Error(fmt::format("{}: the embedded kernel module {} does not register op '{}' (registered: {})",
                              where, d.kernel_module->file_name, op, fmt::join(ops, ", ")));
  const std::vector<std::string> local_ops = firmware.registered_local_ops();
  for (const ModelGroup &g : d.groups)
    for (int k = g.first; g.dynamic && k <= g.last; ++k)
      if (std::find(local_ops.begin(), local_ops.end(), d.layers[std::size_t(k)].op) == local_ops.end())
        throw Error(fmt::format("{}: layer {} ('{}') is in a dynamic layer group, but the embedded kernel module {} "
                                "does not register op '{}' as a local op (registered local ops: {})",
                                where, k, d.layers[std::size_t(k)].name, d.kernel_module->file_name,
                                d.layers[std::size_t(k)].op, fmt::join(local_ops, ", ")));
}

std::vector<tensor_spec_t> plan_specs(const ModelDescription &d, const std::vector<std::size_t> &ts, uint64_t base) {
  std::vector<tensor_spec_t> out;
  for (std::size_t t : ts)
    out.push_back(detail::make_spec(base + d.tensors[t].offset, d.tensors[t].dtype, d.tensors[t].shape));
  return out;
}

// The padded copies a layer's input_layouts ask for (a multi-core op's
// layer is dynamic, so the copies a static layer records are made here),
// and its inputs pointed at them.
void make_padded_copies(const ModelDescription &d, const ModelLayer &l, uint64_t base,
                        std::vector<tensor_spec_t> &inputs) {
  for (const ModelLayer::PaddedInput &p : l.padded_inputs) {
    const ModelTensor &t = d.tensors[l.inputs[std::size_t(p.input)]];
    detail::PadRowsArgs a;
    a.dtype = detail::kernel_dtype(t.dtype);
    a.dst = base + p.offset;
    a.src = base + t.offset;
    a.extent = t.shape.empty() ? 1 : int(t.shape.back());
    a.rows = a.extent > 0 ? detail::element_count(t.shape) / a.extent : 0;
    a.pitch = p.pitch;
    if (a.pitch < a.extent || uint64_t(a.rows) * uint64_t(a.pitch) * dtype_size(t.dtype) != p.size)
      throw Error(fmt::format("the padded copy of input {} ('{}', {}) has pitch {} and {} bytes in the metadata, "
                              "which do not fit its rows of {} elements",
                              p.input, t.name, detail::shape_text(t.shape), p.pitch, p.size, a.extent));
    detail::run_pad_rows_kernel(a);
    inputs[std::size_t(p.input)].addr = a.dst;
  }
}

// A dynamic layer outside a group, through the firmware's entries.
void run_dynamic_layer(const Firmware &firmware, const ModelDescription &d, const ModelLayer &l, uint64_t base) {
  detail::LayerCall call{l.name, l.op, l.params, plan_specs(d, l.inputs, base), plan_specs(d, l.outputs, base)};
  call.params.set_global_buffer(l.scratch_size ? base + l.scratch_offset : 0);
  make_padded_copies(d, l, base, call.inputs);
  // As the firmware does for a dynamic layer: infer the output shapes
  // first; they must fit what the plan holds.
  std::vector<tensor_spec_t> inferred(l.outputs.size(), tensor_spec_t{});
  for (std::size_t o = 0; o < inferred.size(); ++o) inferred[o].addr = call.outputs[o].addr;
  firmware.shape_infer(l.op, call.params, call.inputs, inferred);
  for (std::size_t o = 0; o < inferred.size(); ++o) {
    const ModelTensor &t = d.tensors[l.outputs[o]];
    const Shape got(inferred[o].shape, inferred[o].shape + std::clamp(inferred[o].dims, 0, MAX_SHAPE_DIMS));
    if (got != t.shape || inferred[o].dtype != dtype_info(t.dtype).sg_dtype)
      throw Error(fmt::format("tpu_shape_infer_entry gives output '{}' shape {} (SG dtype {}), but the model "
                              "planned {} {}",
                              t.name, detail::shape_text(got), inferred[o].dtype, detail::shape_text(t.shape),
                              dtype_name(t.dtype)));
  }
  // A multi-core op's layer runs on every core in force (the chip's, or the
  // option "cores"); its time is the slowest core's.
  firmware.run_global(l.op, call.params, call.inputs, call.outputs, l.metadata.multi_core ? cmodel_core_count() : 1);
}

// Every output of `l` has a 0 dim: the layer computes nothing, and issues
// nothing (as a static one records no command, model_build.cc).
bool produces_nothing(const ModelDescription &d, const ModelLayer &l) {
  return std::all_of(l.outputs.begin(), l.outputs.end(),
                     [&](std::size_t t) { return detail::element_count(d.tensors[t].shape) == 0; });
}

// Runs layer i; false for a layer of a group other than its first (the
// group runs with its first layer).
bool run_layer_kernels(const ModelFile &model, const ModelDescription &d, std::size_t i, const Firmware *firmware,
                       uint64_t base) {
  const ModelLayer &l = d.layers[i];
  if (l.mode == LayerMode::dynamic_mode && l.group >= 0) {
    // A dynamic group runs with its first layer, as a static one.
    const ModelGroup &g = d.groups[std::size_t(l.group)];
    if (int(i) != g.first) return false;
    detail::run_dynamic_group(*firmware, d, g, base);
  } else if (l.mode == LayerMode::dynamic_mode) {
    if (!produces_nothing(d, l)) run_dynamic_layer(*firmware, d, l, base);
  } else if (l.group >= 0) {
    // The group's stream runs with its first layer; its statistics
    // belong to that layer, the others show none.
    const ModelGroup &g = d.groups[std::size_t(l.group)];
    if (int(i) != g.first) return false;
    detail::replay_group(model, g);
  } else {
    detail::replay_static_layer(model, l);
  }
  return true;
}

// The inputs layer i must leave as they were: those it does not update in
// place (a layer group: its first layer's, the only ones in global memory;
// its other layers watch nothing, the group runs with the first).
detail::UnchangedWatch watch_inputs(const ModelDescription &d, std::size_t i, uint64_t base) {
  detail::UnchangedWatch watch;
  const ModelLayer &l = d.layers[i];
  if (l.group >= 0 && int(i) != d.groups[std::size_t(l.group)].first) return watch;
  for (std::size_t k = std::size_t(l.metadata.inplace_inputs); k < l.inputs.size(); ++k) {
    const ModelTensor &t = d.tensors[l.inputs[k]];
    watch.add(fmt::format("input {} ('{}')", k, t.name), base + t.offset, t.size);
  }
  return watch;
}

// Layer i with its span in the trace and its figures.
LayerStats run_layer(const ModelFile &model, const ModelDescription &d, std::size_t i, const Firmware *firmware,
                     uint64_t base, const std::string &where) {
  const ModelLayer &l = d.layers[i];
  const std::string label =
      l.group >= 0 ? fmt::format("{}: layer group {} (layers {}..{}, {})", where, l.group,
                                 d.groups[std::size_t(l.group)].first, d.groups[std::size_t(l.group)].last,
                                 mode_name(l.mode))
                   : fmt::format("{}: layer {} ('{}', op {}, {})", where, i, l.name, l.op, mode_name(l.mode));
  // The trace's "layers" lane: a span per layer, one per group.
  std::optional<detail::TraceSpan> span;
  if (l.group < 0)
    span.emplace("layers", fmt::format("{} ({}, {})", l.name, l.op, mode_name(l.mode)));
  else if (const ModelGroup &g = d.groups[std::size_t(l.group)]; int(i) == g.first)
    span.emplace("layers", fmt::format("group {}: layers {}..{} ({})", l.group, g.first, g.last, mode_name(l.mode)));
  // A layer may take several runs (a dynamic group: every slice's loads,
  // local kernels and stores): its figures are their sum.
  if (cmodel_total_stats_reset() != 0) throw Error(cmodel_last_error());
  try {
    const detail::UnchangedWatch watch = watch_inputs(d, i, base);
    if (!run_layer_kernels(model, d, i, firmware, base)) return {l.name, l.op, l.mode, 0, 0, "{}", {}};
    if (std::string changed = watch.changed(); !changed.empty()) throw Error(changed);
  } catch (const Error &e) {
    throw Error(fmt::format("{}: {}", label, e.what()));
  } catch (const std::bad_alloc &) {
    throw Error(fmt::format("{}: out of host memory while running the layer", label));
  }
  const detail::RunFigures f = detail::total_run_figures();
  return {l.name, l.op, l.mode, f.total_us, f.gdma_bytes, f.json, profile_figures(f.json)};
}

// Host layer i: its span on the "layers" lane and one on the "host" lane,
// the trace's clock moved on by its estimated time (the device waits).
LayerStats run_host(detail::EmulatorSession &emulator, const detail::EmbeddedHostLibraries &hosts,
                    const ModelDescription &d, std::size_t i, uint64_t base, std::map<std::size_t, Shape> &actual,
                    const std::string &where) {
  const ModelLayer &l = d.layers[i];
  const std::string label = fmt::format("{}: layer {} ('{}', op {}, host)", where, i, l.name, l.op);
  detail::HostLayerFigures f;  // none for a layer without output elements: it is not called
  try {
    // Its errors start with the label (host_layers.h).
    if (!produces_nothing(d, l)) f = detail::run_host_layer(emulator, hosts.at(l.host_library), d, i, base, actual, label);
  } catch (const std::bad_alloc &) {
    throw Error(fmt::format("{}: out of host memory while running the layer", label));
  }
  LayerStats stats{l.name, l.op, l.mode, f.host_us + f.transfer_us, 0, "{}", {}};
  stats.host_us = f.host_us;
  stats.transfer_us = f.transfer_us;
  stats.host_bytes_in = f.bytes_in;
  stats.host_bytes_out = f.bytes_out;
  const detail::TraceSpan layer_span("layers", fmt::format("{} ({}, host)", l.name, l.op));
  const detail::TraceSpan host_span(
      "host", fmt::format("{}: {:.2f} us on the host, {} bytes device->host, {} bytes host->device ({:.2f} us)", l.name,
                          f.host_us, f.bytes_in, f.bytes_out, f.transfer_us));
  if (cmodel_trace_advance(stats.total_us) != 0) throw Error(cmodel_last_error());
  return stats;
}

// A check layer (NetLayer::check): its output, read back once it ran, must
// be all zeros; the first nonzero element fails the run with the check's
// text and where it is.
void apply_check(detail::EmulatorSession &emulator, const ModelDescription &d, std::size_t i, uint64_t base,
                 const std::string &where) {
  const ModelLayer &l = d.layers[i];
  const ModelTensor &t = d.tensors[l.outputs.at(0)];
  npz::Array flags;
  flags.dtype = detail::storage_dtype(t.dtype);
  flags.shape = detail::npz_shape(t.shape);
  flags.data = emulator.read(base + t.offset, uint64_t(detail::element_count(t.shape)) * dtype_size(t.dtype),
                             fmt::format("check '{}'", l.name));
  const std::vector<float> values = detail::decode_array(flags, t.dtype);
  const auto first = std::find_if(values.begin(), values.end(), [](float v) { return v != 0; });
  if (first == values.end()) return;
  std::vector<int64_t> index(t.shape.size(), 0);
  for (int64_t rest = first - values.begin(), d = int64_t(t.shape.size()) - 1; d >= 0; --d) {
    index[std::size_t(d)] = rest % t.shape[std::size_t(d)];
    rest /= t.shape[std::size_t(d)];
  }
  const auto count = std::count_if(values.begin(), values.end(), [](float v) { return v != 0; });
  throw Error(fmt::format("{}: {}: first at element [{}] ({} of {} elements; check layer '{}')", where, l.check,
                          fmt::join(index, ", "), count, values.size(), l.name));
}

npz::Arrays read_outputs(detail::EmulatorSession &emulator, const ModelDescription &d, uint64_t base,
                         const std::map<std::size_t, Shape> &actual) {
  npz::Arrays outputs;
  for (std::size_t i : d.outputs) {
    const ModelTensor &t = d.tensors[i];
    // A dynamic host layer's output may be smaller than planned.
    const Shape shape = actual.count(i) ? actual.at(i) : t.shape;
    npz::Array a;
    a.dtype = detail::storage_dtype(t.dtype);
    a.shape = detail::npz_shape(shape);
    a.data = emulator.read(base + t.offset, uint64_t(detail::element_count(shape)) * dtype_size(t.dtype),
                           fmt::format("output '{}'", t.name));
    outputs[t.name] = std::move(a);
  }
  return outputs;
}

// The trace's metadata: the profile summary of every layer that ran (a
// group's other layers have no runs of their own) and of the whole run.
nlohmann::ordered_json profile_metadata(const std::vector<LayerStats> &layers) {
  nlohmann::ordered_json summary;
  ProfileFigures total;
  summary["layers"] = nlohmann::ordered_json::array();
  for (const LayerStats &l : layers) {
    total += l.profile;
    if (l.profile.total_us > 0)
      summary["layers"].push_back(
          {{"name", l.name}, {"op", l.op}, {"summary", profile_summary_json(summarize_profile(l.profile))}});
  }
  summary["total"] = profile_summary_json(summarize_profile(total));
  // Host layers have no engine figures: their measured and estimated time
  // and the bytes they moved between device and host memory.
  nlohmann::ordered_json host = nlohmann::ordered_json::array();
  for (const LayerStats &l : layers)
    if (l.mode == LayerMode::host_mode)
      host.push_back({{"name", l.name},
                      {"op", l.op},
                      {"host_us", l.host_us},
                      {"transfer_us", l.transfer_us},
                      {"bytes_device_to_host", l.host_bytes_in},
                      {"bytes_host_to_device", l.host_bytes_out}});
  if (!host.empty())
    summary["host_layers"] = {{"layers", host},
                              {"transfer_bytes_per_us", kHostTransferBytesPerUs},
                              {"copy_latency_us", kHostCopyLatencyUs}};
  return {{"profile_summary", summary}};
}

}  // namespace

std::span<const uint8_t> kernel_module_bytes(const ModelFile &model, const ModelDescription &d,
                                             std::string_view where) {
  if (!d.kernel_module) throw Error(fmt::format("{}: the model has no kernel module", where));
  const Section *s = model.find_section(d.kernel_module->section);
  if (!s) throw Error(fmt::format("{}: kernel module section '{}' is missing", where, d.kernel_module->section));
  if (s->data.size() != d.kernel_module->size)
    throw Error(fmt::format("{}: kernel module section '{}' holds {} bytes, the metadata says {}", where, s->name,
                            s->data.size(), d.kernel_module->size));
  const std::string hash = sha256_hex(s->data);
  if (hash != d.kernel_module->sha256)
    throw Error(fmt::format("{}: kernel module section '{}' has SHA-256 {}, the metadata says {}", where, s->name,
                            hash, d.kernel_module->sha256));
  return s->data;
}

struct ModelSession::State {
  const ModelFile &model;
  const std::string where;
  const ModelDescription d;
  std::unique_ptr<EmbeddedFirmware> embedded;
  const detail::EmbeddedHostLibraries hosts;
  detail::EmulatorSession emulator;  // after the libraries: closed before they unload
  // Where the build put the plan: the static layers' commands hold its addresses.
  const uint64_t base;

  State(const ModelFile &m, std::string_view w)
      : model(m), where(w), d(checked_description(m, where)), embedded(firmware_of(m, d, where)),
        hosts(m, d, where), emulator(d.chip), base(d.memory_base) {
    load_plan(emulator, model, d, base);
  }

  static ModelDescription checked_description(const ModelFile &model, const std::string &where) {
    ModelDescription d = describe_model(model, where);
    check_recorded_layers(model, d, where);
    return d;
  }

  static std::unique_ptr<EmbeddedFirmware> firmware_of(const ModelFile &model, const ModelDescription &d,
                                                        const std::string &where) {
    if (!needs_firmware(d)) return nullptr;
    auto embedded = std::make_unique<EmbeddedFirmware>(kernel_module_bytes(model, d, where), *d.kernel_module,
                                                       d.chip, where);
    check_firmware_ops(embedded->firmware(), d, where);
    return embedded;
  }
};

ModelSession::ModelSession(const ModelFile &model, std::string_view where)
    : state_(std::make_unique<State>(model, where)) {}

ModelSession::~ModelSession() = default;

RunResult ModelSession::run(const npz::Arrays &inputs, const RunOptions &options) {
  State &s = *state_;
  const ModelDescription &d = s.d;
  std::vector<detail::TensorDecl> decls;
  for (std::size_t i : d.inputs) decls.push_back(detail::input_decl(d.tensors[i]));
  const npz::Arrays narrowed = detail::narrowed_inputs(decls, inputs, "inputs");
  detail::check_arrays(decls, narrowed, "inputs");
  load_inputs(s.emulator, d, narrowed, s.base);
  const Firmware *firmware = s.embedded ? &s.embedded->firmware() : nullptr;

  RunResult result;
  if (options.profile && (cmodel_trace_enable(1) != 0 || cmodel_trace_clear() != 0))
    throw Error(fmt::format("{}: cannot start the profile trace: {}", s.where, cmodel_last_error()));
  std::map<std::size_t, Shape> actual;  // tensors a dynamic host layer made smaller
  for (std::size_t i = 0; i < d.layers.size(); ++i) {
    result.layers.push_back(d.layers[i].mode == LayerMode::host_mode
                                ? run_host(s.emulator, s.hosts, d, i, s.base, actual, s.where)
                                : run_layer(s.model, d, i, firmware, s.base, s.where));
    if (!d.layers[i].check.empty()) apply_check(s.emulator, d, i, s.base, s.where);
  }
  result.outputs = read_outputs(s.emulator, d, s.base, actual);
  if (options.outputs_for_caller) result.outputs = detail::outputs_for_caller(d, std::move(result.outputs));
  if (options.profile) {
    const char *trace = cmodel_trace_json();
    if (!trace) throw Error(fmt::format("{}: cannot read the profile trace: {}", s.where, cmodel_last_error()));
    result.trace_json = trace_with_metadata(trace, profile_metadata(result.layers));
    if (cmodel_trace_enable(0) != 0) throw Error(cmodel_last_error());
  }
  return result;
}

RunResult run_model(const ModelFile &model, const npz::Arrays &inputs, std::string_view where,
                    const RunOptions &options) {
  ModelSession session(model, where);
  return session.run(inputs, options);
}

}  // namespace tpu_runtime
