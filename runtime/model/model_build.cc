// model_build.cc: tpu_model build: net description + libraries -> model file.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <random>

#include "builtin/builtin_kernels.h"
#include "builtin/builtin_ops.h"
#include "cmodel_host.h"
#include "groups/layer_groups.h"
#include "emulator/emulator.h"
#include "io/arrays.h"
#include "model/host_layers.h"
#include "model/inplace_order.h"
#include "model/layer_merging.h"
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
  uint64_t alignment = kModelPlanAlignment;  // of the offset: a power of two, at least the plan's
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
      candidate = align_up(candidate, b.alignment);
      if (candidate + b.size <= buffers[j].offset) break;
      candidate = std::max(candidate, buffers[j].offset + buffers[j].size);
    }
    candidate = align_up(candidate, b.alignment);
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
  // An in-place output (metadata_<op>'s num_inplace_inputs): the tensor
  // whose memory it shares, the first of its chain; -1: its own memory.
  int alias = -1;
  // The alignment a reader's input layout asks for (metadata_<op>'s
  // input_layouts), when more than the plan's.
  uint64_t alignment = kModelPlanAlignment;
  bool text = false;    // a text input or output (net.h)
  bool scalar = false;  // a scalar input or output (net.h)
};

// A padded copy of an input the op's layout asks for (metadata_<op>'s
// innermost_multiple): made at the start of the layer's own commands, in a
// buffer of the plan live for the layer only; the kernel's input spec
// points at it.
struct PaddedInput {
  int input = 0;
  int extent = 1, pitch = 1;  // innermost dimension: elements, and elements per padded row
  int64_t rows = 1;
  uint64_t size = 0;  // bytes
  uint64_t alignment = 0;
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
  int host_library = -1;       // a host layer: its library (BuildHostLibraries)
  OpMetadata metadata;         // metadata_<op>, stored for tpu_model info
  std::string gradient;        // the declared gradient (gradient_text), "" without one
  std::vector<PaddedInput> padded;  // input_layouts with a padded innermost dimension
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

// The errors of one layer: "<source>: layer i ('name', op x): problem".
struct LayerErrors {
  const std::string &source;
  const NetDescription &net;
  Error operator()(std::size_t i, const std::string &problem) const {
    return Error(fmt::format("{}: {}: {}", source, net.layer_label(i), problem));
  }
};

// The net's tensors (its inputs, its weights, then the layers' outputs in
// layer order) and its layers, as the build works them out.
struct BuildGraph {
  std::vector<BuildTensor> tensors;
  std::map<std::string, std::size_t> index;            // tensor name -> tensors
  std::map<std::size_t, const NetWeight *> weight_of;  // tensor -> its net weight
  std::vector<BuildLayer> layers;

  // The specs of tensors `ts` at `base` plus their planned offsets, or at 0
  // when `base` is 0 (before the plan).
  std::vector<tensor_spec_t> specs(const std::vector<std::size_t> &ts, uint64_t base) const {
    std::vector<tensor_spec_t> out;
    for (std::size_t t : ts)
      out.push_back(detail::make_spec(base ? base + tensors[t].offset : 0, tensors[t].dtype, tensors[t].shape));
    return out;
  }
};

// The three custom libraries, checked: the firmware is for the model's chip
// and all three come from one build.
struct BuildLibraries {
  Plugin plugin;
  Backend backend;
  Firmware firmware;
  KernelModuleInfo kernel;              // the firmware's identity, as the model embeds it
  std::vector<uint8_t> firmware_bytes;  // the firmware's file, embedded in the model
  std::vector<std::string> backend_ops;
  LibraryPaths paths;
  detail::BuildHostLibraries hosts;  // opened by the host layers that use them
};

// A net of built-in layers only needs no custom-layer library: none is
// opened (whatever the paths say; TPUC_ROOT may well be unset) and the model
// carries no kernel module. tpu_model kernel_update can still add one.
bool needs_custom_libraries(const NetDescription &net) {
  return std::any_of(net.layers.begin(), net.layers.end(),
                     [](const NetLayer &l) { return !detail::is_builtin_op(l.op); });
}

BuildLibraries no_libraries(const LibraryPaths &paths, const std::string &chip) {
  return {Plugin::none(), Backend::none(), Firmware::none(chip), {}, {}, {}, paths, {}};
}

BuildLibraries open_libraries(const NetDescription &net, const LibraryPaths &paths, const std::string &chip) {
  firmware_file_name(chip);  // refuses an unknown chip
  if (!needs_custom_libraries(net)) return no_libraries(paths, chip);
  Plugin plugin = Plugin::open(paths.plugin);
  Backend backend = Backend::open(paths.backend);
  std::vector<uint8_t> firmware_bytes;
  KernelModuleInfo kernel = inspect_kernel_library(paths.firmware, &firmware_bytes);
  if (kernel.chip != chip)
    throw Error(fmt::format("{}: firmware built for {}, but the model is for {}; use {} of the {} build",
                            paths.firmware, kernel.chip, chip, firmware_file_name(chip), chip));
  Firmware firmware = Firmware::open(paths.firmware, chip);
  check_same_build(&plugin, &backend, &firmware);
  kernel.section = kKernelModuleSection;
  std::vector<std::string> backend_ops = backend.registered_ops();
  return {std::move(plugin),         std::move(backend),     std::move(firmware), std::move(kernel),
          std::move(firmware_bytes), std::move(backend_ops), paths,               {}};
}

// Each layer's parameters as its op reads them: packed by the op's
// declared types when it declares them (params.h); built-in layers keep
// what parse_net packed.
std::vector<PackedParams> pack_layer_params(const NetDescription &net, const Plugin &plugin,
                                            const LayerErrors &layer_error, std::vector<std::string> &warnings) {
  std::vector<PackedParams> packed;
  packed.reserve(net.layers.size());
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const NetLayer &l = net.layers[i];
    // Host ops take the params as the vendor's compiler packs them (in
    // the net's order, element 0 zero): what parse_net packed.
    if (detail::is_builtin_op(l.op) || is_host_op(l.op)) {
      packed.push_back(l.packed);
      continue;
    }
    std::vector<std::string> conversions;
    try {
      packed.push_back(plugin.pack_params(l.op, l.params, conversions));
    } catch (const Error &e) {
      throw layer_error(i, e.what());
    }
    for (const std::string &c : conversions) warnings.push_back(fmt::format("{}: {}", net.layer_label(i), c));
  }
  return packed;
}

// A built-in layer (builtin_ops.h): its one output from builtin_infer(),
// always static.
void add_builtin_layer(const NetDescription &net, std::size_t i, BuildGraph &graph, std::vector<std::string> &warnings,
                       const LayerErrors &layer_error) {
  const NetLayer &l = net.layers[i];
  BuildLayer &b = graph.layers[i];
  std::vector<BuildTensor> &tensors = graph.tensors;
  std::vector<detail::BuiltinTensor> ins;
  for (const std::string &name : l.inputs) {
    const std::size_t t = graph.index.at(name);  // parse_net checked it
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
  graph.index[l.outputs[0]] = tensors.size();
  b.outputs.push_back(tensors.size());
  tensors.push_back({l.outputs[0], out.shape, out.dtype, TensorRole::intermediate, int(i), int(i), 0});
}

// Refuses an op that the backend or the firmware does not register.
void check_op_registered(const NetLayer &l, std::size_t i, const BuildLibraries &libs,
                         const LayerErrors &layer_error) {
  if (std::find(libs.backend_ops.begin(), libs.backend_ops.end(), l.op) == libs.backend_ops.end())
    throw layer_error(i, fmt::format("unknown op '{}': {} does not register it (registered: {}){}", l.op,
                                     libs.backend.path(), library_list(libs.backend_ops),
                                     unknown_op_hint(l.op, libs.backend_ops)));
  const std::vector<std::string> &kernel_ops = libs.kernel.ops;
  if (std::find(kernel_ops.begin(), kernel_ops.end(), l.op) == kernel_ops.end())
    throw layer_error(i, fmt::format("unknown op '{}': the firmware {} does not register it (registered: {}){}",
                                     l.op, libs.firmware.path(), library_list(kernel_ops),
                                     unknown_op_hint(l.op, kernel_ops)));
}

// Refuses an inferred output shape the plan cannot hold: 1..MAX_SHAPE_DIMS
// dims, each >= 1, at most 2^31 - 1 elements, within global memory.
void check_output_shape(const Shape &s, Dtype dtype, const std::string &output, std::size_t i,
                        const LayerErrors &layer_error) {
  int64_t count = 1;
  bool valid = !s.empty() && s.size() <= MAX_SHAPE_DIMS;
  for (int d : s) {
    valid = valid && d >= 0;  // 0: an empty tensor (its layer issues no command)
    // Overflow-safe: a product past 2^31 - 1 elements is refused below.
    if (valid && count <= (int64_t(1) << 31)) count *= d;
  }
  if (!valid)
    throw layer_error(i, fmt::format("shape inference gives output '{}' the shape {}; 1..{} dims, each >= 0, "
                                     "are needed",
                                     output, shape_text(s), MAX_SHAPE_DIMS));
  if (count > (int64_t(1) << 31) - 1 || uint64_t(count) * dtype_size(dtype) > kGlobalMemoryBytes)
    throw layer_error(i, fmt::format("shape inference gives output '{}' the shape {} ({}): {}, more than the "
                                     "{} GiB of global memory",
                                     output, shape_text(s), dtype_name(dtype),
                                     count > (int64_t(1) << 31) - 1
                                         ? std::string("more than 2^31 - 1 elements")
                                         : fmt::format("{} bytes", uint64_t(count) * dtype_size(dtype)),
                                     kGlobalMemoryBytes >> 30));
}

// Output k of a layer that updates input k in place takes input k's memory
// (inplace_order.h checked the tensors): it must have the same shape and
// dtype.
void share_inplace_outputs(const NetDescription &net, std::size_t i, BuildGraph &graph,
                           const LayerErrors &layer_error) {
  const BuildLayer &b = graph.layers[i];
  const std::string &op = net.layers[i].op;
  for (std::size_t k = 0; k < std::size_t(b.metadata.inplace_inputs); ++k) {
    const BuildTensor &in = graph.tensors[b.inputs[k]];
    BuildTensor &out = graph.tensors[b.outputs[k]];
    if (in.shape != out.shape || in.dtype != out.dtype)
      throw layer_error(i, fmt::format("op '{}' updates input {} ('{}') in place (metadata_{}), but output {} ('{}') "
                                       "is {} {} and the input {} {}; an in-place output has its input's shape and "
                                       "dtype",
                                       op, k, in.name, op, k, out.name, shape_text(out.shape), dtype_name(out.dtype),
                                       shape_text(in.shape), dtype_name(in.dtype)));
    out.alias = in.alias >= 0 ? in.alias : int(b.inputs[k]);
  }
}

// The input layouts the op asks for (metadata_<op>'s input_layouts). An
// innermost extent that is already a multiple needs no padding: the tensor
// itself gets the alignment. Otherwise a static layer reads a padded copy
// (PaddedInput) with that alignment; a dynamic layer (run through the
// firmware, with no commands of the builder's around it) is refused.
void apply_input_layouts(const NetDescription &net, std::size_t i, BuildGraph &graph,
                         const LayerErrors &layer_error) {
  BuildLayer &b = graph.layers[i];
  const std::string &op = net.layers[i].op;
  for (const InputLayout &layout : b.metadata.input_layouts) {
    BuildTensor &t = graph.tensors[b.inputs[std::size_t(layout.input)]];
    const int extent = t.shape.back();
    if (layout.innermost_multiple <= 1 || extent % layout.innermost_multiple == 0) {
      t.alignment = std::max<uint64_t>(t.alignment, uint64_t(layout.alignment));
      continue;
    }
    const std::string request =
        fmt::format("op '{}' asks for input {} ('{}', {}) with its innermost dimension padded to a multiple of {} "
                    "elements (metadata_{} input_layouts)",
                    op, layout.input, t.name, shape_text(t.shape), layout.innermost_multiple, op);
    if (b.mode != LayerMode::static_mode)
      throw layer_error(i, request + ", but the layer is dynamic: padded copies are made for static layers only");
    PaddedInput p;
    p.input = layout.input;
    p.extent = extent;
    p.pitch = (extent + layout.innermost_multiple - 1) / layout.innermost_multiple * layout.innermost_multiple;
    p.rows = detail::element_count(t.shape) / extent;
    if (p.pitch > 65535)
      throw layer_error(i, request + fmt::format(", but the padded row of {} elements is more than the 65535 a "
                                                 "copy can hold",
                                                 p.pitch));
    p.size = uint64_t(p.rows) * uint64_t(p.pitch) * dtype_size(t.dtype);
    p.alignment = std::max<uint64_t>(kModelPlanAlignment, uint64_t(layout.alignment));
    b.padded.push_back(p);
  }
}

// A custom layer: its outputs from the plugin's shape inference, its mode
// from the net or the plugin.
void add_custom_layer(const NetDescription &net, std::size_t i, const PackedParams &packed,
                      const BuildLibraries &libs, BuildGraph &graph, const LayerErrors &layer_error) {
  const NetLayer &l = net.layers[i];
  BuildLayer &b = graph.layers[i];
  std::vector<BuildTensor> &tensors = graph.tensors;
  check_op_registered(l, i, libs, layer_error);
  std::vector<Shape> in_shapes;
  for (const std::string &name : l.inputs) {
    const std::size_t t = graph.index.at(name);  // parse_net checked it
    b.inputs.push_back(t);
    in_shapes.push_back(tensors[t].shape);
    tensors[t].last_use = int(i);
  }
  try {
    b.metadata = libs.plugin.metadata(l.op, packed, int(l.inputs.size()));
    if (const std::optional<GradientDeclaration> g = libs.backend.gradient_of(l.op)) b.gradient = gradient_text(*g);
  } catch (const Error &e) {
    throw layer_error(i, e.what());
  }
  std::vector<Shape> out_shapes;
  try {
    out_shapes = libs.plugin.shape_inference(l.op, packed, in_shapes, int(l.outputs.size()));
  } catch (const Error &e) {
    throw layer_error(i, fmt::format("shape inference failed: {}", e.what()));
  }
  for (std::size_t o = 0; o < l.outputs.size(); ++o) {
    // Custom ops' outputs take input 0's dtype unless the net says otherwise.
    const Dtype dtype = l.out_dtypes.empty() ? tensors[b.inputs[0]].dtype : l.out_dtypes[o];
    const Shape &s = out_shapes.at(o);
    check_output_shape(s, dtype, l.outputs[o], i, layer_error);
    graph.index[l.outputs[o]] = tensors.size();
    b.outputs.push_back(tensors.size());
    tensors.push_back({l.outputs[o], s, dtype, TensorRole::intermediate, int(i), int(i), 0});
  }
  share_inplace_outputs(net, i, graph, layer_error);
  if (l.dynamic) {
    b.mode = LayerMode::dynamic_mode;
    b.dynamic_reason = "net";
  } else if (libs.plugin.force_dynamic_run(l.op, packed)) {
    b.mode = LayerMode::dynamic_mode;
    b.dynamic_reason = "force_dynamic_run";
  }
  apply_input_layouts(net, i, graph, layer_error);
  // A recorded stream is one core's: a multi-core op's layer runs through
  // the firmware on every core in force at run time (its padded input
  // copies made first, model_run.cc).
  if (b.metadata.multi_core && b.mode == LayerMode::static_mode) {
    b.mode = LayerMode::dynamic_mode;
    b.dynamic_reason = "multi_core";
  }
}

// AP ops exchange float32 buffers: the vendor's interface passes float*
// and converts nothing.
void check_ap_dtypes(std::size_t i, const BuildGraph &graph, const LayerErrors &layer_error) {
  const BuildLayer &b = graph.layers[i];
  for (const auto *list : {&b.inputs, &b.outputs})
    for (std::size_t t : *list)
      if (graph.tensors[t].dtype != Dtype::fp32)
        throw layer_error(i, fmt::format("tensor '{}' is {}; AP ops read and write float32 only (the vendor's "
                                         "interface hands them float* buffers and converts nothing)",
                                         graph.tensors[t].name, dtype_name(graph.tensors[t].dtype)));
}

// A host layer (net.h): its library opened and checked, its output shapes
// from the AP op's shepe_infer (through the plugin) or as the net declares
// them for a callback; its dtypes from out_dtypes or input 0.
void add_host_layer(const NetDescription &net, std::size_t i, const PackedParams &packed, BuildLibraries &libs,
                    BuildGraph &graph, const LayerErrors &layer_error) {
  const NetLayer &l = net.layers[i];
  BuildLayer &b = graph.layers[i];
  std::vector<BuildTensor> &tensors = graph.tensors;
  const HostOpKind kind = detail::host_kind_of_op(l.op);
  b.mode = LayerMode::host_mode;
  std::vector<Shape> in_shapes;
  for (const std::string &name : l.inputs) {
    const std::size_t t = graph.index.at(name);  // parse_net checked it
    b.inputs.push_back(t);
    in_shapes.push_back(tensors[t].shape);
    tensors[t].last_use = int(i);
  }
  std::vector<Shape> out_shapes = l.out_shapes;
  try {
    const std::string &path = kind == HostOpKind::vendor_ap ? libs.paths.host_ap : l.library;
    if (path.empty())
      throw Error("no AP run-time library: TPUC_ROOT is not set and no library directory was given "
                  "(rebuild_custom_apop_x86 installs libcustomcpuop.so in $TPUC_ROOT/lib)");
    b.host_library = libs.hosts.add(path, kind);
    if (kind == HostOpKind::vendor_ap) {
      libs.hosts.library(b.host_library).ap_op_type(l.op);  // the library's table knows the op
      const std::vector<uint8_t> params(packed.bytes().begin(), packed.bytes().end());
      out_shapes = infer_ap_output_shapes(libs.paths.plugin, l.op, params, in_shapes);
    }
  } catch (const Error &e) {
    throw layer_error(i, e.what());
  }
  if (out_shapes.size() < l.outputs.size())
    throw layer_error(i, fmt::format("shepe_infer of {} gives {} output shape(s) for the layer's {} outputs",
                                     l.op, out_shapes.size(), l.outputs.size()));
  for (std::size_t o = 0; o < l.outputs.size(); ++o) {
    const Dtype dtype = l.out_dtypes.empty() ? tensors[b.inputs[0]].dtype : l.out_dtypes[o];
    check_output_shape(out_shapes[o], dtype, l.outputs[o], i, layer_error);
    graph.index[l.outputs[o]] = tensors.size();
    b.outputs.push_back(tensors.size());
    tensors.push_back({l.outputs[o], out_shapes[o], dtype, TensorRole::intermediate, int(i), int(i), 0});
  }
  if (kind == HostOpKind::vendor_ap) check_ap_dtypes(i, graph, layer_error);
}

void warn_unused_tensors(const NetDescription &net, const std::vector<BuildTensor> &tensors,
                         std::vector<std::string> &warnings) {
  for (const BuildTensor &t : tensors) {
    if ((t.role == TensorRole::input || t.role == TensorRole::weight) && t.last_use < 0)
      warnings.push_back(fmt::format("{} '{}' is not used by any layer", role_name(t.role), t.name));
    if (t.role == TensorRole::intermediate && t.last_use == t.producer &&
        net.layers[std::size_t(t.producer)].check.empty())  // a check layer's flags are read by the run
      warnings.push_back(fmt::format("tensor '{}' (from {}) is neither used nor a net output", t.name,
                                     net.layer_label(std::size_t(t.producer))));
  }
}

// Tensors and layers: shapes and dtypes through the plugin.
BuildGraph infer_graph(const NetDescription &net, const std::vector<PackedParams> &packed, BuildLibraries &libs,
                       const LayerErrors &layer_error, std::vector<std::string> &warnings) {
  BuildGraph graph;
  for (const NetInput &in : net.inputs) {
    graph.index[in.name] = graph.tensors.size();
    graph.tensors.push_back({in.name, in.shape, in.dtype, TensorRole::input, -1, -1, 0});
    graph.tensors.back().text = in.text;
    graph.tensors.back().scalar = in.scalar;
  }
  // Weights: constant for the whole run, like inputs.
  for (const NetWeight &w : net.weights) {
    graph.index[w.name] = graph.tensors.size();
    graph.weight_of[graph.tensors.size()] = &w;
    graph.tensors.push_back({w.name, w.shape, w.dtype, TensorRole::weight, -1, -1, 0});
  }
  graph.layers.resize(net.layers.size());
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    if (detail::is_builtin_op(net.layers[i].op)) add_builtin_layer(net, i, graph, warnings, layer_error);
    else if (is_host_op(net.layers[i].op)) add_host_layer(net, i, packed[i], libs, graph, layer_error);
    else add_custom_layer(net, i, packed[i], libs, graph, layer_error);
  }
  for (const std::string &name : net.outputs) graph.tensors[graph.index.at(name)].role = TensorRole::output;
  for (const std::string &name : net.text_outputs) graph.tensors[graph.index.at(name)].text = true;
  for (const std::string &name : net.scalar_outputs) graph.tensors[graph.index.at(name)].scalar = true;
  warn_unused_tensors(net, graph.tensors, warnings);
  return graph;
}

// A dynamic layer: the firmware's tpu_shape_infer_entry must give what the
// plugin's shape inference gave.
void check_firmware_shapes(const NetLayer &l, std::size_t i, const PackedParams &packed, const Firmware &firmware,
                           const BuildGraph &graph, const LayerErrors &layer_error) {
  const BuildLayer &b = graph.layers[i];
  std::vector<tensor_spec_t> inferred(b.outputs.size(), tensor_spec_t{});
  try {
    firmware.shape_infer(l.op, packed, graph.specs(b.inputs, 0), inferred);
  } catch (const Error &e) {
    throw layer_error(i, fmt::format("the firmware's shape inference failed: {}", e.what()));
  }
  for (std::size_t o = 0; o < b.outputs.size(); ++o) {
    const BuildTensor &t = graph.tensors[b.outputs[o]];
    const Shape got(inferred[o].shape, inferred[o].shape + std::clamp(inferred[o].dims, 0, MAX_SHAPE_DIMS));
    if (got != t.shape || inferred[o].dtype != dtype_info(t.dtype).sg_dtype)
      throw layer_error(i, fmt::format("dynamic layer: the firmware's tpu_shape_infer_entry gives output '{}' shape "
                                       "{} (SG dtype {}), but the plugin's shape inference gives {} {} (SG dtype "
                                       "{}); type_infer_{} and shape_inference_{} must agree",
                                       t.name, shape_text(got), inferred[o].dtype, shape_text(t.shape),
                                       dtype_name(t.dtype), dtype_info(t.dtype).sg_dtype, l.op, l.op));
  }
}

// Scratch sizes and the dynamic layers' firmware shape inference: both run
// on the emulator (the caller's session).
void size_scratch_and_check_dynamic(const NetDescription &net, const std::vector<PackedParams> &packed,
                                    const BuildLibraries &libs, BuildGraph &graph, const LayerErrors &layer_error) {
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const NetLayer &l = net.layers[i];
    BuildLayer &b = graph.layers[i];
    if (detail::is_builtin_op(l.op) || b.mode == LayerMode::host_mode) continue;  // no scratch, no firmware
    try {
      b.scratch = libs.backend.global_buffer_size(l.op, packed[i], graph.specs(b.inputs, 0), graph.specs(b.outputs, 0));
    } catch (const Error &e) {
      throw layer_error(i, fmt::format("global scratch size: {}", e.what()));
    }
    if (b.mode == LayerMode::dynamic_mode) check_firmware_shapes(l, i, packed[i], libs.firmware, graph, layer_error);
  }
}

using Spans = std::vector<std::pair<int, int>>;  // [first, last] layers of each layer group

// The global-memory plan, loaded in the emulator, and the static layers'
// commands recorded against it.
struct MemoryPlan {
  uint64_t size = 0;
  uint64_t inplace_saved = 0;  // bytes the in-place outputs saved
  uint64_t alignment = kModelPlanAlignment;  // of `base`: the largest a buffer asks for
  uint64_t base = 0;  // in the emulator's global memory; 0: not loaded yet
  std::vector<Section> static_sections;
  bool buffers_apart = false;  // BuildOptions::buffers_apart
};

// The plan's buffers: every tensor (live from its producer to its last use,
// or for the whole run), each group span's tensors for the whole span, then
// the layers' scratch buffers.
std::vector<PlanBuffer> plan_buffers(const BuildGraph &graph, const Spans &spans, bool share_inplace,
                                     bool apart) {
  const int end = int(graph.layers.size());
  std::vector<PlanBuffer> buffers;
  for (const BuildTensor &t : graph.tensors) {
    PlanBuffer b;
    b.size = align_up(uint64_t(detail::element_count(t.shape)) * dtype_size(t.dtype), kModelPlanAlignment);
    b.first = t.role == TensorRole::input || t.role == TensorRole::weight ? -1 : t.producer;
    b.last = t.role == TensorRole::intermediate ? std::max(t.last_use, t.producer) : end;
    b.alignment = t.alignment;
    buffers.push_back(b);
  }
  for (const auto &[first, last] : spans)
    for (int i = first; i <= last; ++i)
      for (const auto *list : {&graph.layers[std::size_t(i)].inputs, &graph.layers[std::size_t(i)].outputs})
        for (std::size_t t : *list) {
          buffers[t].first = std::min(buffers[t].first, first);
          buffers[t].last = std::max(buffers[t].last, last);
        }
  // An in-place output lives in its chain's first tensor: one buffer over
  // all their lifetimes, the output's own takes no bytes.
  for (std::size_t t = 0; share_inplace && t < graph.tensors.size(); ++t)
    if (const int root = graph.tensors[t].alias; root >= 0) {
      PlanBuffer &r = buffers[std::size_t(root)];
      r.first = std::min(r.first, buffers[t].first);
      r.last = std::max(r.last, buffers[t].last);
      r.alignment = std::max(r.alignment, buffers[t].alignment);
      buffers[t].size = 0;
    }
  // A stateful layer's scratch keeps its state from run to run: nothing
  // else may use its bytes (ModelSession).
  for (std::size_t i = 0; i < graph.layers.size(); ++i)
    if (const BuildLayer &l = graph.layers[i]; l.scratch > 0) {
      const bool keeps_state = !l.metadata.stateless;
      buffers.push_back({align_up(uint64_t(l.scratch), kModelPlanAlignment), keeps_state ? -1 : int(i),
                         keeps_state ? end : int(i), 0});
    }
  // Padded copies of inputs, live for their layer.
  for (std::size_t i = 0; i < graph.layers.size(); ++i)
    for (const PaddedInput &p : graph.layers[i].padded)
      buffers.push_back({align_up(p.size, kModelPlanAlignment), int(i), int(i), 0, p.alignment});
  // Every buffer live for the whole run: no two share bytes (a pipeline's
  // stages run different micro-batches at once).
  for (PlanBuffer &b : buffers)
    if (apart) b.first = -1, b.last = end;
  return buffers;
}

// Places the buffers: the plan's size, the tensors' and scratch buffers' offsets.
void place_plan(const Spans &spans, const std::string &source, BuildGraph &graph, MemoryPlan &plan) {
  std::vector<PlanBuffer> buffers = plan_buffers(graph, spans, true, plan.buffers_apart);
  plan.size = place_buffers(buffers);
  plan.alignment = kModelPlanAlignment;
  for (const PlanBuffer &b : buffers) plan.alignment = std::max(plan.alignment, b.alignment);
  // What the in-place updates saved: the same plan with every tensor in
  // its own memory, for tpu_model info.
  std::vector<PlanBuffer> separate = plan_buffers(graph, spans, false, plan.buffers_apart);
  const uint64_t separate_size = place_buffers(separate);
  plan.inplace_saved = separate_size > plan.size ? separate_size - plan.size : 0;
  if (plan.size > kGlobalMemoryBytes)
    throw Error(fmt::format("{}: the memory plan needs {} bytes, more than the 4 GiB of global memory", source,
                            plan.size));
  for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
    const int root = graph.tensors[t].alias;
    graph.tensors[t].offset = buffers[root >= 0 ? std::size_t(root) : t].offset;
  }
  std::size_t next = graph.tensors.size();
  for (BuildLayer &l : graph.layers)
    if (l.scratch > 0) l.scratch_offset = buffers[next++].offset;
  for (BuildLayer &l : graph.layers)
    for (PaddedInput &p : l.padded) p.offset = buffers[next++].offset;
}

// The plan in the emulator's global memory (replacing an earlier one).
void load_plan(detail::EmulatorSession &emulator, const BuildGraph &graph, MemoryPlan &plan) {
  if (plan.base) cmodel_global_free(plan.base);
  // At an address of the plan's alignment: where a first fit of the size
  // plus the alignment starts, rounded up (the emulator aligns to 512).
  const uint64_t room = emulator.alloc(plan.size + plan.alignment - kModelPlanAlignment, "the memory plan");
  cmodel_global_free(room);
  plan.base = align_up(room, plan.alignment);
  emulator.alloc_at(plan.base, plan.size, "the memory plan");
  // Nothing holds data at build time: zeros stand in for the inputs the
  // build's runs read (layer measurements, recordings, the layer groups'
  // slice check), which would otherwise be uninitialised reads.
  emulator.write(plan.base, std::vector<uint8_t>(plan.size, 0), "the memory plan");
  // The weights' values, as the run loads them: kernels recorded or
  // measured here read what they will read then.
  for (const auto &[t, w] : graph.weight_of)
    emulator.write(plan.base + graph.tensors[t].offset, w->data, fmt::format("weight '{}'", w->name));
}

// The padded copies layer i reads, made on the open emulator (recorded
// with the layer's own commands).
void pad_inputs(const BuildGraph &graph, std::size_t i, uint64_t base) {
  const BuildLayer &layer = graph.layers[i];
  for (const PaddedInput &p : layer.padded) {
    const BuildTensor &t = graph.tensors[layer.inputs[std::size_t(p.input)]];
    detail::PadRowsArgs a;
    a.dtype = detail::kernel_dtype(t.dtype);
    a.dst = base + p.offset;
    a.src = base + t.offset;
    a.rows = p.rows;
    a.extent = p.extent;
    a.pitch = p.pitch;
    detail::run_pad_rows_kernel(a);
  }
}

// A layer's inputs that it does not update in place, watched while it is
// recorded: a kernel that writes one is caught at build.
detail::UnchangedWatch watch_inputs(const BuildGraph &graph, std::size_t i, uint64_t base) {
  detail::UnchangedWatch watch;
  const BuildLayer &layer = graph.layers[i];
  for (std::size_t k = std::size_t(layer.metadata.inplace_inputs); k < layer.inputs.size(); ++k) {
    const BuildTensor &t = graph.tensors[layer.inputs[k]];
    watch.add(fmt::format("input {} ('{}')", k, t.name), base + t.offset,
              uint64_t(detail::element_count(t.shape)) * dtype_size(t.dtype));
  }
  return watch;
}

// The global-memory plan, then the static layers' commands recorded
// against it (static_layers.h). A layer group (layer_groups.h) reads its
// input while it writes its output slice by slice, so every tensor a
// group's layers touch lives for the whole group: `spans` extends their
// lifetimes, and the plan and the recordings are redone for them.
class PlanRecorder {
 public:
  // `measure_dynamic`: run the dynamic layers once for their figures (the
  // layer-group planner reads them).
  PlanRecorder(const NetDescription &net, const std::vector<PackedParams> &packed, const Backend &backend,
               detail::EmulatorSession &emulator, bool measure_dynamic, const LayerErrors &layer_error)
      : net_(net), packed_(packed), backend_(backend), emulator_(emulator), measure_dynamic_(measure_dynamic),
        layer_error_(layer_error) {}

  void plan_and_record(const Spans &spans, BuildGraph &graph, MemoryPlan &plan) {
    place_plan(spans, layer_error_.source, graph, plan);
    load_plan(emulator_, graph, plan);
    plan.static_sections.clear();
    for (std::size_t i = 0; i < graph.layers.size(); ++i) {
      BuildLayer &layer = graph.layers[i];
      if (layer.mode == LayerMode::host_mode) continue;  // runs on the host: nothing on the device
      detail::LayerCall call{net_.layers[i].name, net_.layers[i].op, packed_[i], graph.specs(layer.inputs, plan.base),
                             graph.specs(layer.outputs, plan.base)};
      call.params.set_global_buffer(layer.scratch > 0 ? plan.base + layer.scratch_offset : 0);
      for (const PaddedInput &p : layer.padded) call.inputs[std::size_t(p.input)].addr = plan.base + p.offset;
      if (layer.mode != LayerMode::static_mode) {
        // Measured for the layer-group planner only; not recorded.
        if (measure_dynamic_ && !produces_nothing(graph, i)) measure(call, layer, graph, i, plan.base);
        continue;
      }
      const detail::UnchangedWatch watch = watch_inputs(graph, i, plan.base);
      detail::StaticLayerRecord record = record_layer(i, call, graph, plan);
      if (std::string changed = watch.changed(); !changed.empty()) throw layer_error_(i, changed);
      layer.figures = detail::last_run_figures();
      layer.static_record = record.metadata;
      for (Section &s : record.sections) plan.static_sections.push_back(std::move(s));
    }
  }

 private:
  void measure(detail::LayerCall &call, BuildLayer &layer, const BuildGraph &graph, std::size_t i,
               uint64_t base) const {
    try {
      pad_inputs(graph, i, base);
      backend_.run_global_planned(call.op, call.params, call.inputs, call.outputs,
                                  layer.metadata.multi_core ? cmodel_core_count() : 1);
      layer.figures = detail::last_run_figures();
    } catch (const Error &) {
      layer.figures = {};
    }
  }

  static bool produces_nothing(const BuildGraph &graph, std::size_t i) {
    const std::vector<std::size_t> &outputs = graph.layers[i].outputs;
    return std::all_of(outputs.begin(), outputs.end(),
                       [&](std::size_t t) { return detail::element_count(graph.tensors[t].shape) == 0; });
  }

  detail::StaticLayerRecord record_layer(std::size_t i, const detail::LayerCall &call, const BuildGraph &graph,
                                         const MemoryPlan &plan) const {
    try {
      if (produces_nothing(graph, i))  // every output empty (a 0 dim): no command
        return detail::record_static_commands(call.layer, call.op, {plan.base, plan.size}, [] {});
      if (detail::is_builtin_op(call.op))
        return detail::record_static_commands(call.layer, call.op, {plan.base, plan.size}, [&] {
          const Dtype dtype = graph.tensors[graph.layers[i].outputs[0]].dtype;
          detail::builtin_run_global(call.op, net_.layers[i].params, dtype, call.inputs, call.outputs[0]);
        });
      if (!graph.layers[i].padded.empty())
        return detail::record_static_commands(call.layer, call.op, {plan.base, plan.size}, [&] {
          pad_inputs(graph, i, plan.base);
          std::vector<tensor_spec_t> outputs = call.outputs;
          backend_.run_global_planned(call.op, call.params, call.inputs, outputs);
        });
      return detail::record_static_layer(backend_, call, {plan.base, plan.size});
    } catch (const Error &e) {
      throw layer_error_(i, fmt::format("recording the static layer failed: {}", e.what()));
    }
  }

  const NetDescription &net_;
  const std::vector<PackedParams> &packed_;
  const Backend &backend_;
  detail::EmulatorSession &emulator_;
  bool measure_dynamic_;
  const LayerErrors &layer_error_;
};

std::vector<detail::GroupTensor> group_tensors_of(const BuildGraph &graph) {
  std::vector<detail::GroupTensor> group_tensors;
  for (const BuildTensor &t : graph.tensors)
    group_tensors.push_back({t.name, t.shape, t.dtype, 0, t.role == TensorRole::output});
  return group_tensors;
}

std::vector<detail::GroupLayer> group_layers_of(const NetDescription &net, const std::vector<PackedParams> &packed,
                                                const BuildGraph &graph) {
  std::vector<detail::GroupLayer> group_layers;
  for (std::size_t i = 0; i < graph.layers.size(); ++i) {
    const BuildLayer &b = graph.layers[i];
    group_layers.push_back({net.layers[i].name, net.layers[i].op, packed[i], b.mode == LayerMode::dynamic_mode,
                            b.scratch > 0, b.inputs, b.outputs, b.figures.total_us, b.figures.bdc_us,
                            b.figures.gdma_us, b.figures.gdma_bytes, net.layers[i].params,
                            b.metadata.inplace_inputs > 0, !b.padded.empty()});
    group_layers.back().multi_core = b.metadata.multi_core;
    if (const std::optional<nlohmann::ordered_json> form =
            detail::builtin_expression_form(net.layers[i].op, net.layers[i].params)) {
      group_layers.back().builtin_params = *form;
      group_layers.back().expression_form = true;
    }
  }
  return group_layers;
}

// The plan and the recordings redone with the planned groups' tensors
// living for their whole group; the layers keep the figures of the first
// recording, which the groups were planned from.
void replan_for_groups(const GroupPlan &groups, PlanRecorder &recorder, BuildGraph &graph, MemoryPlan &plan) {
  Spans spans;
  for (const PlannedGroup &g : groups.groups)
    if (g.grouped()) spans.emplace_back(g.first, g.last);
  if (spans.empty()) return;
  const std::vector<BuildLayer> measured = graph.layers;  // the figures of the first recording
  recorder.plan_and_record(spans, graph, plan);
  for (std::size_t i = 0; i < graph.layers.size(); ++i) graph.layers[i].figures = measured[i].figures;
}

// A grouped layer's commands are its group's: its own recording goes.
void use_recorded_groups(const NetDescription &net, detail::RecordedGroups &groups, BuildGraph &graph,
                         MemoryPlan &plan) {
  for (std::size_t i = 0; i < graph.layers.size(); ++i) {
    BuildLayer &layer = graph.layers[i];
    if (groups.group_of_layer[i] < 0) continue;
    layer.group = groups.group_of_layer[i];
    if (layer.mode == LayerMode::dynamic_mode) continue;
    layer.static_record = detail::group_static_record(groups.group_of_layer[i]);
    const std::string own = net.layers[i].name + ".commands";
    std::erase_if(plan.static_sections, [&](const Section &s) { return s.name == own; });
  }
  for (Section &s : groups.sections) plan.static_sections.push_back(std::move(s));
}

// Layer groups (layer_groups.h): planned from the recorded layers' figures,
// each group recorded as one stream that replaces its layers' own. Returns
// the "layer_groups" metadata.
nlohmann::json build_layer_groups(const NetDescription &net, const std::vector<PackedParams> &packed,
                                  const BuildLibraries &libs, const BuildOptions &options, PlanRecorder &recorder,
                                  const std::string &source, BuildGraph &graph, MemoryPlan &plan) {
  std::vector<detail::GroupTensor> group_tensors = group_tensors_of(graph);
  const std::vector<detail::GroupLayer> group_layers = group_layers_of(net, packed, graph);
  detail::RecordedGroups groups;
  try {
    const detail::GroupPlanning planning =
        detail::plan_layer_groups(libs.plugin, libs.backend, group_tensors, group_layers, options.group_local_memory);
    replan_for_groups(planning.plan, recorder, graph, plan);
    for (std::size_t t = 0; t < graph.tensors.size(); ++t) group_tensors[t].addr = plan.base + graph.tensors[t].offset;
    groups = detail::record_layer_groups(libs.plugin, libs.backend, group_tensors, group_layers, planning,
                                         {plan.base, plan.size});
  } catch (const Error &e) {
    throw Error(fmt::format("{}: layer groups: {}", source, e.what()));
  }
  use_recorded_groups(net, groups, graph, plan);
  return std::move(groups.metadata);
}

// The given reference inputs, checked like run inputs, or inputs generated
// from the seed.
npz::Arrays reference_inputs(const NetDescription &net, const BuildOptions &options) {
  std::vector<detail::TensorDecl> decls;
  for (const NetInput &in : net.inputs) decls.push_back({in.name, in.shape, in.dtype, in.text, in.scalar});
  if (!options.reference_inputs.empty()) {
    npz::Arrays given = detail::narrowed_inputs(decls, options.reference_inputs, "reference inputs");
    detail::check_arrays(decls, given, "reference inputs");
    return given;
  }
  npz::Arrays generated;
  std::mt19937_64 rng(options.seed);
  for (const NetInput &in : net.inputs) {
    const std::vector<float> v = generated_values(rng, std::size_t(detail::element_count(in.shape)));
    generated[in.name] = detail::encode_array(in.shape, in.dtype, v);
  }
  return generated;
}

// Tensor -> its values as the device holds them, in doubles: every integer
// type's values exactly (an int32 above 2^24 too), the float types' as fp32.
using TensorValues = std::map<std::string, std::vector<double>>;

std::vector<uint8_t> fp32_bytes(const std::vector<double> &values) {
  const std::vector<float> f(values.begin(), values.end());
  return {reinterpret_cast<const uint8_t *>(f.data()), reinterpret_cast<const uint8_t *>(f.data() + f.size())};
}

// A host layer's reference outputs (in the shapes the op gives): an AP op
// through the plugin's class (mlir_inference, as the vendor's compiler
// computes it: fp32 values whatever the outputs' dtypes, so labelled fp32
// here), a callback through its own library (in its outputs' dtypes), on
// the inputs in their storage dtype.
std::vector<HostTensor> host_reference(const NetDescription &net, std::size_t i, const PackedParams &packed,
                                       const BuildLibraries &libs, const BuildGraph &graph,
                                       const TensorValues &values) {
  const NetLayer &l = net.layers[i];
  const BuildLayer &b = graph.layers[i];
  const bool vendor_ap = detail::host_kind_of_op(l.op) == HostOpKind::vendor_ap;
  std::vector<HostTensor> inputs, specs;
  for (std::size_t t : b.inputs) {
    const BuildTensor &bt = graph.tensors[t];
    const std::vector<double> &v = values.at(bt.name);
    if (vendor_ap) inputs.push_back({Dtype::fp32, bt.shape, fp32_bytes(v)});
    else inputs.push_back({bt.dtype, bt.shape, detail::encode_values(bt.shape, bt.dtype, v).data});
  }
  const std::vector<uint8_t> params(packed.bytes().begin(), packed.bytes().end());
  if (vendor_ap) {
    std::vector<HostTensor> outs = ap_reference(libs.paths.plugin, l.op, params, inputs);
    for (HostTensor &o : outs) o.dtype = Dtype::fp32;
    return outs;
  }
  for (std::size_t t : b.outputs) specs.push_back({graph.tensors[t].dtype, graph.tensors[t].shape, {}});
  return run_host_op(libs.hosts.library(b.host_library), std::string(host_op_name(l.op)), params, inputs, specs,
                     net.layer_label(i))
      .outputs;
}

// A host layer's reference, into `outs` (the planned sizes); an output
// that came out smaller than planned keeps its shape in `shapes`.
void host_reference_into(const NetDescription &net, std::size_t i, const PackedParams &packed,
                         const BuildLibraries &libs, const BuildGraph &graph, const TensorValues &values,
                         std::vector<std::vector<double>> &outs, std::vector<Shape> &shapes) {
  const std::vector<HostTensor> got = host_reference(net, i, packed, libs, graph, values);
  if (got.size() < outs.size())
    throw Error(fmt::format("the op gave {} outputs for the layer's {}", got.size(), outs.size()));
  for (std::size_t o = 0; o < outs.size(); ++o) {
    npz::Array stored;
    stored.dtype = detail::storage_dtype(got[o].dtype);
    stored.shape = detail::npz_shape(got[o].shape);
    stored.data = got[o].bytes;
    std::vector<double> v = detail::decode_values(stored, got[o].dtype);
    if (v.size() > outs[o].size())
      throw Error(fmt::format("output {} has shape {}, larger than the planned {}", o, detail::shape_text(got[o].shape),
                              detail::shape_text(shapes[o])));
    outs[o] = std::move(v);
    shapes[o] = got[o].shape;
  }
}

// A custom op's reference: its plugin's inference_<op> on fp32 buffers.
void plugin_reference(const Plugin &plugin, const NetLayer &l, const PackedParams &packed,
                      const std::vector<Shape> &in_shapes, const std::vector<const double *> &ins,
                      std::vector<std::vector<double>> &outs) {
  std::vector<std::vector<float>> in_values, out_values;
  std::vector<const float *> in_ptrs;
  std::vector<float *> out_ptrs;
  for (std::size_t k = 0; k < ins.size(); ++k) {
    in_values.emplace_back(ins[k], ins[k] + detail::element_count(in_shapes[k]));
    in_ptrs.push_back(in_values.back().data());
  }
  for (const std::vector<double> &o : outs) out_values.emplace_back(o.size(), 0.0f);
  for (std::vector<float> &o : out_values) out_ptrs.push_back(o.data());
  plugin.inference(l.op, packed, in_shapes, in_ptrs, out_ptrs);
  for (std::size_t o = 0; o < outs.size(); ++o) outs[o].assign(out_values[o].begin(), out_values[o].end());
}

// Layer i's inference on `values` into `outs` (and `out_shapes`, which a
// dynamic host layer may make smaller).
void layer_inference(const NetDescription &net, std::size_t i, const PackedParams &packed, const BuildLibraries &libs,
                     const BuildGraph &graph, const TensorValues &values, std::vector<std::vector<double>> &outs,
                     std::vector<Shape> &out_shapes) {
  const NetLayer &l = net.layers[i];
  const BuildLayer &layer = graph.layers[i];
  std::vector<Shape> in_shapes;
  std::vector<detail::BuiltinTensor> in_tensors;
  std::vector<const double *> ins;
  for (std::size_t t : layer.inputs) {
    in_shapes.push_back(graph.tensors[t].shape);
    in_tensors.push_back({graph.tensors[t].shape, graph.tensors[t].dtype});
    ins.push_back(values.at(graph.tensors[t].name).data());
  }
  // A layer whose outputs are all empty computes nothing: its inference is
  // not called (a plugin's hook would get null output buffers), as its
  // kernel is not (run_layer_kernels).
  if (std::all_of(outs.begin(), outs.end(), [](const std::vector<double> &o) { return o.empty(); })) return;
  if (detail::is_builtin_op(l.op)) detail::builtin_reference(l.op, l.params, in_tensors, ins, outs.at(0));
  else if (is_host_op(l.op)) host_reference_into(net, i, packed, libs, graph, values, outs, out_shapes);
  else plugin_reference(libs.plugin, l, packed, in_shapes, ins, outs);
}

// One layer's reference: its inference on `values`, its outputs added to
// `values` (and the net's outputs to `reference_outputs`: a float output's
// fp32 values before the rounding to its dtype, an integer output's values
// in its own dtype, which fp32 would not hold exactly).
void reference_layer(const NetDescription &net, std::size_t i, const PackedParams &packed, const BuildLibraries &libs,
                     const BuildGraph &graph, const LayerErrors &layer_error, TensorValues &values,
                     npz::Arrays &reference_outputs) {
  const NetLayer &l = net.layers[i];
  const BuildLayer &layer = graph.layers[i];
  std::vector<std::vector<double>> outs;
  std::vector<Shape> out_shapes;
  for (std::size_t t : layer.outputs) {
    outs.emplace_back(std::size_t(detail::element_count(graph.tensors[t].shape)), 0.0);
    out_shapes.push_back(graph.tensors[t].shape);
  }
  try {
    layer_inference(net, i, packed, libs, graph, values, outs, out_shapes);
  } catch (const Error &e) {
    throw layer_error(i, fmt::format("reference inference failed: {}", e.what()));
  } catch (const std::bad_alloc &) {
    throw layer_error(i, "reference inference failed: out of host memory");
  }
  for (std::size_t o = 0; o < outs.size(); ++o) {
    const BuildTensor &t = graph.tensors[layer.outputs[o]];
    // A dynamic host layer's output may be smaller (its run-time shape).
    if (out_shapes[o] != t.shape && (!l.dynamic || t.last_use != t.producer))
      throw layer_error(i, fmt::format("reference inference gives output '{}' the shape {}, but shape inference "
                                       "planned {}; {}",
                                       t.name, detail::shape_text(out_shapes[o]), detail::shape_text(t.shape),
                                       l.dynamic ? "only a net output that no later layer reads may come out smaller"
                                                 : "mark the layer \"dynamic\": true to allow a smaller output"));
    // The next layer sees the values as stored in the tensor's dtype.
    const npz::Array stored = detail::encode_values(out_shapes[o], t.dtype, outs[o]);
    if (t.role == TensorRole::output && dtype_info(t.dtype).is_float) {
      const std::vector<float> fp32(outs[o].begin(), outs[o].end());
      reference_outputs[t.name] = npz::Array::from<float>(detail::npz_shape(out_shapes[o]), fp32);
    } else if (t.role == TensorRole::output) {
      reference_outputs[t.name] = stored;
    }
    values[t.name] = detail::decode_values(stored, t.dtype);
  }
}

// Reference data from the plugin's inference hooks.
void compute_reference(const NetDescription &net, const std::vector<PackedParams> &packed, const BuildLibraries &libs,
                       const BuildOptions &options, const BuildGraph &graph, const LayerErrors &layer_error,
                       BuildResult &result) {
  result.reference_inputs = reference_inputs(net, options);
  TensorValues values;
  for (const NetInput &in : net.inputs)
    values[in.name] = detail::decode_values(result.reference_inputs.at(in.name), in.dtype);
  for (const NetWeight &w : net.weights) {
    std::vector<double> &v = values[w.name];
    v.resize(std::size_t(detail::element_count(w.shape)));
    decode_values(w.dtype, w.data.data(), v.size(), v.data());
  }
  for (std::size_t i = 0; i < net.layers.size(); ++i)
    reference_layer(net, i, packed[i], libs, graph, layer_error, values, result.reference_outputs);
}

// The "tensors" metadata; the weights' sections go to `weight_sections`.
nlohmann::json tensors_metadata(const BuildGraph &graph, std::vector<Section> &weight_sections) {
  nlohmann::json jt = nlohmann::json::array();
  for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
    const BuildTensor &t = graph.tensors[i];
    jt.push_back({{"name", t.name},
                  {"shape", t.shape},
                  {"dtype", dtype_name(t.dtype)},
                  {"role", role_name(t.role)},
                  {"offset", t.offset},
                  {"size", uint64_t(detail::element_count(t.shape)) * dtype_size(t.dtype)}});
    if (t.alias >= 0) jt.back()["in_place_of"] = graph.tensors[std::size_t(t.alias)].name;
    if (t.text) jt.back()["text"] = true;
    if (t.scalar) jt.back()["scalar"] = true;
    if (t.role != TensorRole::weight) continue;
    const std::string section = kWeightSectionPrefix + t.name;
    jt.back()["section"] = section;
    weight_sections.push_back({section, "weight", graph.weight_of.at(i)->data});
  }
  return jt;
}

nlohmann::json layers_metadata(const NetDescription &net, const std::vector<PackedParams> &packed,
                               const BuildGraph &graph) {
  nlohmann::json jl = nlohmann::json::array();
  for (std::size_t i = 0; i < graph.layers.size(); ++i) {
    const NetLayer &l = net.layers[i];
    const BuildLayer &b = graph.layers[i];
    nlohmann::json j = {{"name", l.name},
                        {"op", l.op},
                        {"mode", mode_name(b.mode)},
                        {"params", l.params.dump()},
                        {"params_packed", detail::to_hex(packed[i].bytes())},
                        {"inputs", l.inputs},
                        {"outputs", l.outputs},
                        {"scratch", {{"offset", b.scratch > 0 ? b.scratch_offset : 0}, {"size", uint64_t(b.scratch)}}}};
    if (b.metadata.declared) j["metadata"] = nlohmann::json::parse(metadata_json(b.metadata).dump());
    if (!b.gradient.empty()) j["gradient"] = b.gradient;  // shown by tpu_model info (docs/gradients.md)
    if (!l.check.empty()) j["check"] = l.check;
    for (const PaddedInput &p : b.padded)
      j["padded_inputs"].push_back({{"input", p.input}, {"pitch", p.pitch}, {"offset", p.offset}, {"size", p.size}});
    if (b.mode == LayerMode::dynamic_mode) j["dynamic_reason"] = b.dynamic_reason;
    if (b.mode == LayerMode::host_mode) j["host"] = {{"library", b.host_library}, {"dynamic_shapes", l.dynamic}};
    else if (b.mode == LayerMode::dynamic_mode && b.group >= 0) j["group"] = b.group;
    else j["static"] = b.static_record;
    // tpu_model info shows it: the figures of the layer's global run here.
    if (!b.figures.json.empty())
      j["profile"] = nlohmann::json::parse(profile_summary_json(summarize_profile(profile_figures(b.figures.json))).dump());
    jl.push_back(std::move(j));
  }
  return jl;
}

// Metadata and sections: the kernel module, the weights, the static
// layers' commands.
void write_model(const NetDescription &net, const std::string &chip, const std::vector<PackedParams> &packed,
                 const BuildGraph &graph, MemoryPlan &plan, nlohmann::json layer_groups, BuildLibraries &libs,
                 ModelFile &model) {
  nlohmann::json &m = model.metadata;
  m["model_format"] = kModelFormat;
  m["chip"] = chip;
  m["net"] = {{"name", net.name}};
  m["producer"] = "tpu_model (TPU SDK)";
  m["memory"] = {{"size", plan.size}, {"alignment", kModelPlanAlignment}, {"base", plan.base}};
  if (plan.inplace_saved) m["memory"]["in_place_saved"] = plan.inplace_saved;
  if (plan.buffers_apart) m["memory"]["buffers_apart"] = true;
  std::vector<Section> weight_sections;
  m["tensors"] = tensors_metadata(graph, weight_sections);
  m["inputs"] = nlohmann::json::array();
  for (const NetInput &in : net.inputs) m["inputs"].push_back(in.name);
  m["outputs"] = net.outputs;
  m["layers"] = layers_metadata(net, packed, graph);
  if (!layer_groups.is_null()) m["layer_groups"] = std::move(layer_groups);
  if (!libs.firmware_bytes.empty()) {
    m["kernel_module"] = libs.kernel.to_json();
    model.sections.push_back({kKernelModuleSection, "kernel_module", std::move(libs.firmware_bytes)});
  }
  if (!libs.hosts.empty()) {
    m["host_libraries"] = libs.hosts.metadata();
    for (Section &s : libs.hosts.take_sections()) model.sections.push_back(std::move(s));
  }
  for (Section &s : weight_sections) model.sections.push_back(std::move(s));
  for (Section &s : plan.static_sections) model.sections.push_back(std::move(s));
}

// The reference inputs and outputs as sections, and the "reference"
// metadata naming them.
void embed_reference(const BuildOptions &options, const npz::Arrays &inputs, const npz::Arrays &outputs,
                     ModelFile &model) {
  nlohmann::json ref = {{"source", options.reference_inputs.empty() ? "generated" : "given"},
                        {"inputs", nlohmann::json::object()},
                        {"outputs", nlohmann::json::object()}};
  if (options.reference_inputs.empty()) ref["seed"] = options.seed;
  for (const auto &[name, array] : inputs) {
    const std::string section = "reference.input." + name;
    ref["inputs"][name] = section;
    model.sections.push_back({section, "reference_input", npz::format_npy(array)});
  }
  for (const auto &[name, array] : outputs) {
    const std::string section = "reference.output." + name;
    ref["outputs"][name] = section;
    model.sections.push_back({section, "reference_output", npz::format_npy(array)});
  }
  model.metadata["reference"] = std::move(ref);
}

// Each layer's metadata_<op> (none for built-in and host layers).
std::vector<OpMetadata> layer_metadata(const NetDescription &net, const std::vector<PackedParams> &packed,
                                       const Plugin &plugin, const LayerErrors &layer_error) {
  std::vector<OpMetadata> metadata(net.layers.size());
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const NetLayer &l = net.layers[i];
    if (detail::is_builtin_op(l.op) || is_host_op(l.op)) continue;
    try {
      metadata[i] = plugin.metadata(l.op, packed[i], int(l.inputs.size()));
    } catch (const Error &e) {
      throw layer_error(i, e.what());
    }
  }
  return metadata;
}

// The net as it runs: `net` when nothing changed, else its layers merged
// and reordered; each layer's packed parameters; the merged layers.
struct RunnableNet {
  std::optional<NetDescription> net;
  std::vector<PackedParams> packed;
  std::vector<detail::MergedLayer> merged;
};

template <typename T>
std::vector<T> picked(const std::vector<T> &all, const std::vector<std::size_t> &indices) {
  std::vector<T> out;
  for (std::size_t i : indices) out.push_back(all[i]);
  return out;
}

// Identical stateless layers merged (layer_merging.h), then in-place
// updates after their tensors' other readers and stateful layers in the
// net's order (inplace_order.h).
RunnableNet runnable_net(const NetDescription &given, const Plugin &plugin, const std::string &source,
                         std::vector<std::string> &warnings) {
  RunnableNet r;
  r.packed = pack_layer_params(given, plugin, {source, given}, warnings);
  std::vector<OpMetadata> metadata = layer_metadata(given, r.packed, plugin, {source, given});
  const auto stateless = [&](const NetDescription &net, std::size_t i) {
    return !is_host_op(net.layers[i].op) && (detail::is_builtin_op(net.layers[i].op) || metadata[i].stateless);
  };
  std::vector<bool> pure;
  for (std::size_t i = 0; i < given.layers.size(); ++i)
    pure.push_back(!detail::is_builtin_op(given.layers[i].op) && stateless(given, i));
  const detail::LayerMerging merging = detail::merge_identical_layers(given, r.packed, pure);
  if (!merging.merged.empty()) {
    r.net = detail::merged_net(given, merging);
    r.packed = picked(r.packed, merging.kept);
    metadata = picked(metadata, merging.kept);
    r.merged = merging.merged;
  }
  const NetDescription &merged = r.net ? *r.net : given;
  std::vector<int> inplace;
  std::vector<bool> stateful;
  for (std::size_t i = 0; i < merged.layers.size(); ++i) {
    inplace.push_back(metadata[i].inplace_inputs);
    stateful.push_back(!stateless(merged, i));
  }
  const detail::InplaceOrder order = detail::order_for_inplace(merged, inplace, stateful, source);
  if (!order.identity()) {
    r.net = detail::reordered_net(merged, order.order);
    r.packed = picked(r.packed, order.order);
    for (const std::string &m : order.moves) warnings.push_back(m);
  }
  return r;
}

// [{"layer": "abs2", "op": "absadd", "into": "abs1", "outputs": {"a2": "a1"}}]
nlohmann::json merged_layers_metadata(const std::vector<detail::MergedLayer> &merged) {
  nlohmann::json j = nlohmann::json::array();
  for (const detail::MergedLayer &m : merged) {
    nlohmann::json outputs = nlohmann::json::object();
    for (const auto &[output, held_by] : m.outputs) outputs[output] = held_by;
    j.push_back({{"layer", m.layer}, {"op", m.op}, {"into", m.into}, {"outputs", std::move(outputs)}});
  }
  return j;
}

}  // namespace

BuildResult build_model(const NetDescription &given, const BuildOptions &options, std::string_view source_view) {
  const std::string source(source_view);
  BuildLibraries libs = open_libraries(given, options.libraries, options.chip);
  BuildResult result;
  // Identical stateless layers merged, then the run order of in-place
  // updates and stateful layers; from here on the layers are in run order,
  // and so are the model's.
  RunnableNet runnable = runnable_net(given, libs.plugin, source, result.warnings);
  const NetDescription &net = runnable.net ? *runnable.net : given;
  const std::vector<PackedParams> &packed = runnable.packed;
  const LayerErrors layer_error{source, net};
  BuildGraph graph = infer_graph(net, packed, libs, layer_error, result.warnings);

  detail::EmulatorSession emulator(options.chip);
  size_scratch_and_check_dynamic(net, packed, libs, graph, layer_error);
  MemoryPlan plan;
  plan.buffers_apart = options.buffers_apart;
  PlanRecorder recorder(net, packed, libs.backend, emulator, options.layer_groups, layer_error);
  recorder.plan_and_record({}, graph, plan);
  nlohmann::json layer_groups;
  if (options.layer_groups)
    layer_groups = build_layer_groups(net, packed, libs, options, recorder, source, graph, plan);
  if (options.reference) compute_reference(net, packed, libs, options, graph, layer_error, result);

  write_model(net, options.chip, packed, graph, plan, std::move(layer_groups), libs, result.model);
  if (!runnable.merged.empty()) result.model.metadata["merged_layers"] = merged_layers_metadata(runnable.merged);
  if (options.reference && options.embed_reference)
    embed_reference(options, result.reference_inputs, result.reference_outputs, result.model);
  result.description = describe_model(result.model, source);
  return result;
}

}  // namespace tpu_runtime
