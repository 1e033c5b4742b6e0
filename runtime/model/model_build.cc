// model_build.cc: tpu_model build: net description + libraries -> model file.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "builtin/builtin_ops.h"
#include "cmodel_host.h"
#include "groups/layer_groups.h"
#include "emulator/emulator.h"
#include "io/arrays.h"
#include "format/static_layers.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"

namespace tpu_runtime {
namespace {

using detail::shape_text;

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// One buffer of the global-memory plan, live from layer `first` to layer
// `last` (inclusive; -1 and the layer count stand for "before" and "after"
// the run).
struct PlanBuffer {
  uint64_t size = 0;  // aligned
  int first = 0, last = 0;
  uint64_t offset = 0;
};

// First fit, largest buffers first: a buffer may share bytes with another
// only when their lifetimes do not overlap. Deterministic. Returns the
// plan's size.
uint64_t place_buffers(std::vector<PlanBuffer> &buffers) {
  std::vector<std::size_t> order(buffers.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return buffers[a].size > buffers[b].size; });
  std::vector<std::size_t> placed;
  uint64_t total = 0;
  for (std::size_t i : order) {
    PlanBuffer &b = buffers[i];
    std::vector<std::size_t> conflicts;
    for (std::size_t j : placed)
      if (buffers[j].first <= b.last && b.first <= buffers[j].last) conflicts.push_back(j);
    std::sort(conflicts.begin(), conflicts.end(),
              [&](std::size_t x, std::size_t y) { return buffers[x].offset < buffers[y].offset; });
    uint64_t candidate = 0;
    for (std::size_t j : conflicts) {
      if (candidate + b.size <= buffers[j].offset) break;
      candidate = std::max(candidate, buffers[j].offset + buffers[j].size);
    }
    b.offset = candidate;
    total = std::max(total, candidate + b.size);
    placed.push_back(i);
  }
  return total;
}

struct BuildTensor {
  std::string name;
  Shape shape;
  Dtype dtype = Dtype::fp32;
  TensorRole role = TensorRole::intermediate;
  int producer = -1;  // layer index, -1 for a net input
  int last_use = -1;
  uint64_t offset = 0;
};

struct BuildLayer {
  LayerMode mode = LayerMode::static_mode;
  std::string dynamic_reason;
  std::vector<std::size_t> inputs, outputs;  // into the tensor table
  int64_t scratch = 0;
  uint64_t scratch_offset = 0;
  nlohmann::json static_record;
  detail::RunFigures figures;  // of its global run, for the layer-group planner
  int group = -1;              // its layer group, -1: none
};

std::string library_list(const std::vector<std::string> &ops) {
  return ops.empty() ? std::string("none") : fmt::format("{}", fmt::join(ops, ", "));
}

// Uniform values in [-4, 4], from the seed only (no std distribution, whose
// output differs between standard libraries).
std::vector<float> generated_values(std::mt19937_64 &rng, std::size_t count) {
  std::vector<float> values(count);
  for (float &v : values) v = float(-4.0 + 8.0 * double(rng() >> 11) * 0x1.0p-53);
  return values;
}

// A built-in layer (builtin_ops.h): its one output from builtin_infer(),
// always static.
template <class LayerError>
void add_builtin_layer(const NetDescription &net, std::size_t i, BuildLayer &b, std::vector<BuildTensor> &tensors,
                       std::map<std::string, std::size_t> &index, std::vector<std::string> &warnings,
                       const LayerError &layer_error) {
  const NetLayer &l = net.layers[i];
  std::vector<detail::BuiltinTensor> ins;
  for (const std::string &name : l.inputs) {
    const std::size_t t = index.at(name);  // parse_net checked it
    b.inputs.push_back(t);
    ins.push_back({tensors[t].shape, tensors[t].dtype});
    tensors[t].last_use = int(i);
  }
  detail::BuiltinTensor out;
  try {
    out = detail::builtin_infer(l.op, l.params, ins);
  } catch (const Error &e) {
    throw layer_error(i, e.what());
  }
  if (l.outputs.size() != 1)
    throw layer_error(i, fmt::format("built-in ops have one output, not {}", l.outputs.size()));
  if (!l.out_dtypes.empty() && l.out_dtypes[0] != out.dtype)
    throw layer_error(i, fmt::format("out_dtypes says {}, but {} gives {} (its inputs' dtype)",
                                     dtype_name(l.out_dtypes[0]), l.op, dtype_name(out.dtype)));
  if (l.dynamic)
    warnings.push_back(fmt::format("{}: built-in layers are always static (recorded); \"dynamic\" is ignored",
                                   net.layer_label(i)));
  index[l.outputs[0]] = tensors.size();
  b.outputs.push_back(tensors.size());
  tensors.push_back({l.outputs[0], out.shape, out.dtype, TensorRole::intermediate, int(i), int(i), 0});
}

void builtin_inference(const NetLayer &l, const BuildLayer &b, const std::vector<BuildTensor> &tensors,
                       const std::vector<const float *> &ins, std::vector<std::vector<float>> &outs) {
  std::vector<detail::BuiltinTensor> inputs;
  for (std::size_t t : b.inputs) inputs.push_back({tensors[t].shape, tensors[t].dtype});
  detail::builtin_reference(l.op, l.params, inputs, ins, outs.at(0));
}

}  // namespace

BuildResult build_model(const NetDescription &net, const BuildOptions &options, std::string_view source_view) {
  const std::string source(source_view);
  const std::string &chip = options.chip;
  firmware_file_name(chip);  // refuses an unknown chip

  const Plugin plugin = Plugin::open(options.libraries.plugin);
  const Backend backend = Backend::open(options.libraries.backend);
  std::vector<uint8_t> firmware_bytes;
  KernelModuleInfo kernel = inspect_kernel_library(options.libraries.firmware, &firmware_bytes);
  if (kernel.chip != chip)
    throw Error(fmt::format("{}: firmware built for {}, but the model is for {}; use {} of the {} build",
                            options.libraries.firmware, kernel.chip, chip, firmware_file_name(chip), chip));
  const Firmware firmware = Firmware::open(options.libraries.firmware, chip);
  check_same_build(&plugin, &backend, &firmware);
  kernel.section = kKernelModuleSection;
  const std::vector<std::string> backend_ops = backend.registered_ops();

  BuildResult result;
  auto layer_error = [&](std::size_t i, const std::string &problem) {
    return Error(fmt::format("{}: {}: {}", source, net.layer_label(i), problem));
  };
  // Each layer's parameters as its op reads them: packed by the op's
  // declared types when it declares them (params.h); built-in layers keep
  // what parse_net packed.
  std::vector<PackedParams> packed;
  packed.reserve(net.layers.size());
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const NetLayer &l = net.layers[i];
    if (detail::is_builtin_op(l.op)) {
      packed.push_back(l.packed);
      continue;
    }
    std::vector<std::string> conversions;
    try {
      packed.push_back(plugin.pack_params(l.op, l.params, conversions));
    } catch (const Error &e) {
      throw layer_error(i, e.what());
    }
    for (const std::string &c : conversions) result.warnings.push_back(fmt::format("{}: {}", net.layer_label(i), c));
  }

  // Tensors and layers: shapes and dtypes through the plugin.
  std::vector<BuildTensor> tensors;
  std::map<std::string, std::size_t> index;
  for (const NetInput &in : net.inputs) {
    index[in.name] = tensors.size();
    tensors.push_back({in.name, in.shape, in.dtype, TensorRole::input, -1, -1, 0});
  }
  // Weights: constant for the whole run, like inputs.
  std::map<std::size_t, const NetWeight *> weight_of;  // tensor -> its net weight
  for (const NetWeight &w : net.weights) {
    index[w.name] = tensors.size();
    weight_of[tensors.size()] = &w;
    tensors.push_back({w.name, w.shape, w.dtype, TensorRole::weight, -1, -1, 0});
  }
  std::vector<BuildLayer> layers(net.layers.size());
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const NetLayer &l = net.layers[i];
    BuildLayer &b = layers[i];
    if (detail::is_builtin_op(l.op)) {
      add_builtin_layer(net, i, b, tensors, index, result.warnings, layer_error);
      continue;
    }
    if (std::find(backend_ops.begin(), backend_ops.end(), l.op) == backend_ops.end())
      throw layer_error(i, fmt::format("unknown op '{}': {} does not register it (registered: {}){}", l.op,
                                       backend.path(), library_list(backend_ops),
                                       unknown_op_hint(l.op, backend_ops, backend.skipped_ppl_ops())));
    if (std::find(kernel.ops.begin(), kernel.ops.end(), l.op) == kernel.ops.end())
      throw layer_error(i, fmt::format("unknown op '{}': the firmware {} does not register it (registered: {}){}",
                                       l.op, options.libraries.firmware, library_list(kernel.ops),
                                       unknown_op_hint(l.op, kernel.ops, firmware.skipped_ppl_ops())));
    std::vector<Shape> in_shapes;
    for (const std::string &name : l.inputs) {
      const std::size_t t = index.at(name);  // parse_net checked it
      b.inputs.push_back(t);
      in_shapes.push_back(tensors[t].shape);
      tensors[t].last_use = int(i);
    }
    std::vector<Shape> out_shapes;
    try {
      out_shapes = plugin.shape_inference(l.op, packed[i], in_shapes, int(l.outputs.size()));
    } catch (const Error &e) {
      throw layer_error(i, fmt::format("shape inference failed: {}", e.what()));
    }
    for (std::size_t o = 0; o < l.outputs.size(); ++o) {
      // Custom ops' outputs take input 0's dtype unless the net says otherwise.
      const Dtype dtype = l.out_dtypes.empty() ? tensors[b.inputs[0]].dtype : l.out_dtypes[o];
      const Shape &s = out_shapes.at(o);
      int64_t count = 1;
      bool valid = !s.empty() && s.size() <= MAX_SHAPE_DIMS;
      for (int d : s) {
        valid = valid && d >= 1;
        // Overflow-safe: a product past 2^31 - 1 elements is refused below.
        if (valid && count <= (int64_t(1) << 31)) count *= d;
      }
      if (!valid)
        throw layer_error(i, fmt::format("shape inference gives output '{}' the shape {}; 1..{} dims, each >= 1, "
                                         "are needed",
                                         l.outputs[o], shape_text(s), MAX_SHAPE_DIMS));
      if (count > (int64_t(1) << 31) - 1 || uint64_t(count) * dtype_size(dtype) > kGlobalMemoryBytes)
        throw layer_error(i, fmt::format("shape inference gives output '{}' the shape {} ({}): {}, more than the "
                                         "{} GiB of global memory",
                                         l.outputs[o], shape_text(s), dtype_name(dtype),
                                         count > (int64_t(1) << 31) - 1
                                             ? std::string("more than 2^31 - 1 elements")
                                             : fmt::format("{} bytes", uint64_t(count) * dtype_size(dtype)),
                                         kGlobalMemoryBytes >> 30));
      index[l.outputs[o]] = tensors.size();
      b.outputs.push_back(tensors.size());
      tensors.push_back({l.outputs[o], s, dtype, TensorRole::intermediate, int(i), int(i), 0});
    }
    if (l.dynamic) {
      b.mode = LayerMode::dynamic_mode;
      b.dynamic_reason = "net";
    } else if (plugin.force_dynamic_run(l.op, packed[i])) {
      b.mode = LayerMode::dynamic_mode;
      b.dynamic_reason = "force_dynamic_run";
    }
  }
  for (const std::string &name : net.outputs) tensors[index.at(name)].role = TensorRole::output;
  for (const BuildTensor &t : tensors) {
    if ((t.role == TensorRole::input || t.role == TensorRole::weight) && t.last_use < 0)
      result.warnings.push_back(fmt::format("{} '{}' is not used by any layer", role_name(t.role), t.name));
    if (t.role == TensorRole::intermediate && t.last_use == t.producer)
      result.warnings.push_back(fmt::format("tensor '{}' (from {}) is neither used nor a net output", t.name,
                                            net.layer_label(std::size_t(t.producer))));
  }

  auto specs = [&](const std::vector<std::size_t> &ts, uint64_t base) {
    std::vector<tensor_spec_t> out;
    for (std::size_t t : ts) out.push_back(detail::make_spec(base ? base + tensors[t].offset : 0, tensors[t].dtype, tensors[t].shape));
    return out;
  };

  // Scratch sizes and the dynamic layers' firmware shape inference: both run
  // on the emulator.
  detail::EmulatorSession emulator(chip);
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const NetLayer &l = net.layers[i];
    BuildLayer &b = layers[i];
    if (detail::is_builtin_op(l.op)) continue;  // no scratch, never dynamic
    try {
      b.scratch = backend.global_buffer_size(l.op, packed[i], specs(b.inputs, 0), specs(b.outputs, 0));
    } catch (const Error &e) {
      throw layer_error(i, fmt::format("global scratch size: {}", e.what()));
    }
    if (b.mode != LayerMode::dynamic_mode) continue;
    std::vector<tensor_spec_t> inferred(b.outputs.size(), tensor_spec_t{});
    try {
      firmware.shape_infer(l.op, packed[i], specs(b.inputs, 0), inferred);
    } catch (const Error &e) {
      throw layer_error(i, fmt::format("the firmware's shape inference failed: {}", e.what()));
    }
    for (std::size_t o = 0; o < b.outputs.size(); ++o) {
      const BuildTensor &t = tensors[b.outputs[o]];
      const Shape got(inferred[o].shape, inferred[o].shape + std::clamp(inferred[o].dims, 0, MAX_SHAPE_DIMS));
      if (got != t.shape || inferred[o].dtype != dtype_info(t.dtype).sg_dtype)
        throw layer_error(i, fmt::format("dynamic layer: the firmware's tpu_shape_infer_entry gives output '{}' shape "
                                         "{} (SG dtype {}), but the plugin's shape inference gives {} {} (SG dtype "
                                         "{}); type_infer_{} and shape_inference_{} must agree",
                                         t.name, shape_text(got), inferred[o].dtype, shape_text(t.shape),
                                         dtype_name(t.dtype), dtype_info(t.dtype).sg_dtype, l.op, l.op));
    }
  }

  // The global-memory plan, then the static layers' commands recorded
  // against it (static_layers.h). A layer group (layer_groups.h) reads its
  // input while it writes its output slice by slice, so every tensor a
  // group's layers touch lives for the whole group: `spans` extends their
  // lifetimes, and the plan and the recordings are redone for them.
  const int end = int(net.layers.size());
  uint64_t memory_size = 0, plan_base = 0;
  std::vector<Section> static_sections;
  auto plan_and_record = [&](const std::vector<std::pair<int, int>> &spans) {
    std::vector<PlanBuffer> buffers;
    for (const BuildTensor &t : tensors) {
      PlanBuffer b;
      b.size = align_up(uint64_t(detail::element_count(t.shape)) * dtype_size(t.dtype), kModelPlanAlignment);
      b.first = t.role == TensorRole::input || t.role == TensorRole::weight ? -1 : t.producer;
      b.last = t.role == TensorRole::intermediate ? std::max(t.last_use, t.producer) : end;
      buffers.push_back(b);
    }
    for (const auto &[first, last] : spans)
      for (int i = first; i <= last; ++i)
        for (const auto *list : {&layers[std::size_t(i)].inputs, &layers[std::size_t(i)].outputs})
          for (std::size_t t : *list) {
            buffers[t].first = std::min(buffers[t].first, first);
            buffers[t].last = std::max(buffers[t].last, last);
          }
    for (std::size_t i = 0; i < layers.size(); ++i)
      if (layers[i].scratch > 0)
        buffers.push_back({align_up(uint64_t(layers[i].scratch), kModelPlanAlignment), int(i), int(i), 0});
    memory_size = place_buffers(buffers);
    if (memory_size > kGlobalMemoryBytes)
      throw Error(fmt::format("{}: the memory plan needs {} bytes, more than the 4 GiB of global memory", source,
                              memory_size));
    for (std::size_t t = 0; t < tensors.size(); ++t) tensors[t].offset = buffers[t].offset;
    for (std::size_t i = 0, next = tensors.size(); i < layers.size(); ++i)
      if (layers[i].scratch > 0) layers[i].scratch_offset = buffers[next++].offset;

    if (plan_base) cmodel_global_free(plan_base);
    plan_base = emulator.alloc(memory_size, "the memory plan");
    // Nothing holds data at build time: zeros stand in for the inputs the
    // build's runs read (layer measurements, recordings, the layer groups'
    // slice check), which would otherwise be uninitialised reads.
    emulator.write(plan_base, std::vector<uint8_t>(memory_size, 0), "the memory plan");
    // The weights' values, as the run loads them: kernels recorded or
    // measured here read what they will read then.
    for (const auto &[t, w] : weight_of)
      emulator.write(plan_base + tensors[t].offset, w->data, fmt::format("weight '{}'", w->name));
    static_sections.clear();
    for (std::size_t i = 0; i < layers.size(); ++i) {
      detail::LayerCall call{net.layers[i].name, net.layers[i].op, packed[i],
                             specs(layers[i].inputs, plan_base), specs(layers[i].outputs, plan_base)};
      call.params.set_global_buffer(layers[i].scratch > 0 ? plan_base + layers[i].scratch_offset : 0);
      if (layers[i].mode != LayerMode::static_mode) {
        // Measured for the layer-group planner only; not recorded.
        if (!options.layer_groups) continue;
        try {
          backend.run_global_planned(call.op, call.params, call.inputs, call.outputs);
          layers[i].figures = detail::last_run_figures();
        } catch (const Error &) {
          layers[i].figures = {};
        }
        continue;
      }
      detail::StaticLayerRecord record;
      try {
        if (detail::is_builtin_op(call.op))
          record = detail::record_static_commands(call.layer, call.op, {plan_base, memory_size}, [&] {
            const Dtype dtype = tensors[layers[i].outputs[0]].dtype;
            detail::builtin_run_global(call.op, net.layers[i].params, dtype, call.inputs, call.outputs[0]);
          });
        else
          record = detail::record_static_layer(backend, call, {plan_base, memory_size});
      } catch (const Error &e) {
        throw layer_error(i, fmt::format("recording the static layer failed: {}", e.what()));
      }
      layers[i].figures = detail::last_run_figures();
      layers[i].static_record = record.metadata;
      for (Section &s : record.sections) static_sections.push_back(std::move(s));
    }
  };
  plan_and_record({});

  // Layer groups (layer_groups.h): planned from the recorded layers' figures,
  // each group recorded as one stream that replaces its layers' own.
  nlohmann::json layer_groups;
  if (options.layer_groups) {
    std::vector<detail::GroupTensor> group_tensors;
    for (const BuildTensor &t : tensors) group_tensors.push_back({t.name, t.shape, t.dtype, 0, t.role == TensorRole::output});
    std::vector<detail::GroupLayer> group_layers;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const BuildLayer &b = layers[i];
      group_layers.push_back({net.layers[i].name, net.layers[i].op, packed[i],
                              b.mode == LayerMode::dynamic_mode, b.scratch > 0, b.inputs, b.outputs,
                              b.figures.total_us, b.figures.bdc_us, b.figures.gdma_us, b.figures.gdma_bytes});
    }
    detail::RecordedGroups groups;
    try {
      const detail::GroupPlanning planning =
          detail::plan_layer_groups(plugin, backend, group_tensors, group_layers, options.group_local_memory);
      std::vector<std::pair<int, int>> spans;
      for (const PlannedGroup &g : planning.plan.groups)
        if (g.grouped()) spans.emplace_back(g.first, g.last);
      if (!spans.empty()) {
        const std::vector<BuildLayer> measured = layers;  // the figures of the first recording
        plan_and_record(spans);
        for (std::size_t i = 0; i < layers.size(); ++i) layers[i].figures = measured[i].figures;
      }
      for (std::size_t t = 0; t < tensors.size(); ++t) group_tensors[t].addr = plan_base + tensors[t].offset;
      groups = detail::record_layer_groups(plugin, backend, group_tensors, group_layers, planning,
                                           {plan_base, memory_size});
    } catch (const Error &e) {
      throw Error(fmt::format("{}: layer groups: {}", source, e.what()));
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (groups.group_of_layer[i] < 0) continue;
      layers[i].group = groups.group_of_layer[i];
      if (layers[i].mode == LayerMode::dynamic_mode) continue;
      layers[i].static_record = detail::group_static_record(groups.group_of_layer[i]);
      const std::string own = net.layers[i].name + ".commands";
      std::erase_if(static_sections, [&](const Section &s) { return s.name == own; });
    }
    for (Section &s : groups.sections) static_sections.push_back(std::move(s));
    layer_groups = std::move(groups.metadata);
  }

  // Reference data from the plugin's inference hooks.
  std::map<std::string, std::vector<float>> values;  // tensor -> fp32 values as the device holds them
  if (options.reference) {
    std::vector<detail::TensorDecl> decls;
    for (const NetInput &in : net.inputs) decls.push_back({in.name, in.shape, in.dtype});
    if (!options.reference_inputs.empty()) {
      detail::check_arrays(decls, options.reference_inputs, "reference inputs");
      result.reference_inputs = options.reference_inputs;
    } else {
      std::mt19937_64 rng(options.seed);
      for (const NetInput &in : net.inputs) {
        const std::vector<float> v = generated_values(rng, std::size_t(detail::element_count(in.shape)));
        result.reference_inputs[in.name] = detail::encode_array(in.shape, in.dtype, v);
      }
    }
    for (const NetInput &in : net.inputs)
      values[in.name] = detail::decode_array(result.reference_inputs.at(in.name), in.dtype);
    for (const NetWeight &w : net.weights) {
      std::vector<float> &v = values[w.name];
      v.resize(std::size_t(detail::element_count(w.shape)));
      decode_floats(w.dtype, w.data.data(), v.size(), v.data());
    }
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
      const NetLayer &l = net.layers[i];
      std::vector<Shape> in_shapes;
      std::vector<const float *> ins;
      for (std::size_t t : layers[i].inputs) {
        in_shapes.push_back(tensors[t].shape);
        ins.push_back(values.at(tensors[t].name).data());
      }
      std::vector<std::vector<float>> outs;
      std::vector<float *> out_ptrs;
      for (std::size_t t : layers[i].outputs)
        outs.emplace_back(std::size_t(detail::element_count(tensors[t].shape)), 0.0f);
      for (auto &o : outs) out_ptrs.push_back(o.data());
      try {
        if (detail::is_builtin_op(l.op)) builtin_inference(l, layers[i], tensors, ins, outs);
        else plugin.inference(l.op, packed[i], in_shapes, ins, out_ptrs);
      } catch (const Error &e) {
        throw layer_error(i, fmt::format("reference inference failed: {}", e.what()));
      } catch (const std::bad_alloc &) {
        throw layer_error(i, "reference inference failed: out of host memory");
      }
      for (std::size_t o = 0; o < outs.size(); ++o) {
        const BuildTensor &t = tensors[layers[i].outputs[o]];
        if (t.role == TensorRole::output)
          result.reference_outputs[t.name] = npz::Array::from<float>(detail::npz_shape(t.shape), outs[o]);
        // The next layer sees the values as stored in the tensor's dtype.
        const npz::Array stored = detail::encode_array(t.shape, t.dtype, outs[o]);
        values[t.name] = detail::decode_array(stored, t.dtype);
      }
    }
  }

  // Metadata and sections.
  ModelFile &model = result.model;
  nlohmann::json &m = model.metadata;
  m["model_format"] = kModelFormat;
  m["chip"] = chip;
  m["net"] = {{"name", net.name}};
  m["producer"] = "tpu_model (TPU SDK)";
  m["memory"] = {{"size", memory_size}, {"alignment", kModelPlanAlignment}, {"base", plan_base}};
  nlohmann::json &jt = m["tensors"] = nlohmann::json::array();
  std::vector<Section> weight_sections;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const BuildTensor &t = tensors[i];
    jt.push_back({{"name", t.name},
                  {"shape", t.shape},
                  {"dtype", dtype_name(t.dtype)},
                  {"role", role_name(t.role)},
                  {"offset", t.offset},
                  {"size", uint64_t(detail::element_count(t.shape)) * dtype_size(t.dtype)}});
    if (t.role != TensorRole::weight) continue;
    const std::string section = kWeightSectionPrefix + t.name;
    jt.back()["section"] = section;
    weight_sections.push_back({section, "weight", weight_of.at(i)->data});
  }
  m["inputs"] = nlohmann::json::array();
  for (const NetInput &in : net.inputs) m["inputs"].push_back(in.name);
  m["outputs"] = net.outputs;
  nlohmann::json &jl = m["layers"] = nlohmann::json::array();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const NetLayer &l = net.layers[i];
    const BuildLayer &b = layers[i];
    nlohmann::json j = {{"name", l.name},
                        {"op", l.op},
                        {"mode", mode_name(b.mode)},
                        {"params", l.params.dump()},
                        {"params_packed", detail::to_hex(packed[i].bytes())},
                        {"inputs", l.inputs},
                        {"outputs", l.outputs},
                        {"scratch", {{"offset", b.scratch > 0 ? b.scratch_offset : 0}, {"size", uint64_t(b.scratch)}}}};
    if (b.mode == LayerMode::dynamic_mode) j["dynamic_reason"] = b.dynamic_reason;
    if (b.mode == LayerMode::dynamic_mode && b.group >= 0) j["group"] = b.group;
    else j["static"] = b.static_record;
    // tpu_model info shows it: the figures of the layer's global run here.
    if (!b.figures.json.empty())
      j["profile"] = nlohmann::json::parse(profile_summary_json(summarize_profile(profile_figures(b.figures.json))).dump());
    jl.push_back(std::move(j));
  }
  if (!layer_groups.is_null()) m["layer_groups"] = std::move(layer_groups);
  m["kernel_module"] = kernel.to_json();
  model.sections.push_back({kKernelModuleSection, "kernel_module", std::move(firmware_bytes)});
  for (Section &s : weight_sections) model.sections.push_back(std::move(s));
  for (Section &s : static_sections) model.sections.push_back(std::move(s));
  if (options.reference && options.embed_reference) {
    nlohmann::json ref = {{"source", options.reference_inputs.empty() ? "generated" : "given"},
                          {"inputs", nlohmann::json::object()},
                          {"outputs", nlohmann::json::object()}};
    if (options.reference_inputs.empty()) ref["seed"] = options.seed;
    for (const auto &[name, array] : result.reference_inputs) {
      const std::string section = "reference.input." + name;
      ref["inputs"][name] = section;
      model.sections.push_back({section, "reference_input", npz::format_npy(array)});
    }
    for (const auto &[name, array] : result.reference_outputs) {
      const std::string section = "reference.output." + name;
      ref["outputs"][name] = section;
      model.sections.push_back({section, "reference_output", npz::format_npy(array)});
    }
    m["reference"] = std::move(ref);
  }
  result.description = describe_model(model, source);
  return result;
}

}  // namespace tpu_runtime
