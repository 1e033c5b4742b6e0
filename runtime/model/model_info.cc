// model_info.cc: the text of tpu_model info.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/arrays.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"

namespace tpu_runtime {

using Json = nlohmann::json;

namespace {

// How a group's slices run, from its entry in the plan's metadata.
std::string pipelining_text(const nlohmann::json &layer_groups, std::size_t g) {
  const nlohmann::json *entry = nullptr;
  if (layer_groups.contains("groups") && layer_groups["groups"].is_array() && g < layer_groups["groups"].size())
    entry = &layer_groups["groups"][g];
  if (!entry || !entry->is_object() || !entry->contains("pipelined") || !(*entry)["pipelined"].is_boolean())
    return "slices run one after another";
  if ((*entry)["pipelined"].get<bool>())
    return "double-buffered: each slice computes while the next loads and the previous stores";
  if (entry->contains("not_pipelined") && (*entry)["not_pipelined"].is_string())
    return "slices run one after another; double-buffering failed: " + (*entry)["not_pipelined"].get<std::string>();
  return "slices run one after another (one slice, or two input and output buffers do not fit)";
}

// The group's side inputs (layers of several inputs), one line, "" when none:
// "side inputs: 'y' of 'e' loaded per slice, 'b' of 'e' loaded once".
std::string side_inputs_text(const nlohmann::json &layer_groups, std::size_t g) {
  if (!layer_groups.contains("groups") || !layer_groups["groups"].is_array() || g >= layer_groups["groups"].size())
    return "";
  const nlohmann::json &entry = layer_groups["groups"][g];
  if (!entry.is_object() || !entry.contains("side_inputs") || !entry["side_inputs"].is_array()) return "";
  std::vector<std::string> sides;
  for (const nlohmann::json &side : entry["side_inputs"])
    if (side.is_object() && side.value("tensor", nlohmann::json()).is_string() &&
        side.value("layer", nlohmann::json()).is_string() && side.value("loaded", nlohmann::json()).is_string())
      sides.push_back(fmt::format("'{}' of '{}' loaded {}", side["tensor"].get<std::string>(),
                                  side["layer"].get<std::string>(), side["loaded"].get<std::string>()));
  return sides.empty() ? "" : fmt::format("    side inputs: {}\n", fmt::join(sides, ", "));
}

std::size_t dynamic_layer_count(const ModelDescription &d) {
  std::size_t dynamic = 0;
  for (const ModelLayer &l : d.layers) dynamic += l.mode == LayerMode::dynamic_mode;
  return dynamic;
}

std::string summary_text(const ModelDescription &d, const ModelFileLayout &layout, std::string_view where) {
  std::string out;
  auto line = [&](std::string_view key, const std::string &value) { out += fmt::format("{:<14}{}\n", key, value); };
  line("model", fmt::format("{} ({} bytes, container version {}, model format {})", where, layout.file_size,
                            layout.format_version, d.model_format));
  line("chip", d.chip);
  line("net", d.net_name);
  line("memory plan", fmt::format("{} bytes at {:#x} ({} tensors, {}-byte alignment{})", d.memory_size,
                                  d.memory_base, d.tensors.size(), d.memory_alignment,
                                  d.memory_in_place_saved
                                      ? fmt::format("; {} bytes saved by in-place updates", d.memory_in_place_saved)
                                      : std::string()));
  const std::size_t dynamic = dynamic_layer_count(d);
  std::size_t host = 0;
  for (const ModelLayer &l : d.layers) host += l.mode == LayerMode::host_mode;
  line("layers", fmt::format("{} ({} static, {} dynamic{})", d.layers.size(), d.layers.size() - dynamic - host, dynamic,
                             host ? fmt::format(", {} host", host) : std::string()));
  return out;
}

std::string tensors_text(const ModelDescription &d) {
  std::string out = "\ntensors\n";
  constexpr const char *kTensorRow = "  {:<16} {:<12} {:<18} {:<6} {:>12} {:>12}\n";
  out += fmt::format(kTensorRow, "name", "role", "shape", "dtype", "offset", "bytes");
  for (const ModelTensor &t : d.tensors)
    out += fmt::format(kTensorRow, t.name, role_name(t.role), detail::shape_text(t.shape), dtype_name(t.dtype),
                       fmt::format("{:#x}", t.offset), t.size);
  for (const ModelTensor &t : d.tensors)
    if (!t.in_place_of.empty())
      out += fmt::format("  '{}' shares the memory of '{}' (updated in place)\n", t.name, t.in_place_of);
  for (const ModelTensor &t : d.tensors)
    if (t.text)
      out += fmt::format("  '{}' is a text {}: {} as text, {} on the device\n", t.name, role_name(t.role),
                         t.role == TensorRole::input ? "the caller may give its numbers" : "its numbers come back",
                         dtype_name(t.dtype));
  for (const ModelTensor &t : d.tensors)
    if (t.scalar) out += fmt::format("  '{}' is a scalar {}: rank 0 for the caller, [1] on the device\n", t.name,
                                     role_name(t.role));
  return out;
}

// A layer's mode, with why it is dynamic, its group or its recorded commands.
std::string layer_mode_text(const ModelLayer &l) {
  std::string mode = mode_name(l.mode);
  if (l.mode == LayerMode::host_mode)
    mode += fmt::format(" (library {}{})", l.host_library, l.host_dynamic_shapes ? ", dynamic shapes" : "");
  else if (l.mode == LayerMode::dynamic_mode && l.group >= 0)
    mode += fmt::format(" ({}, layer group {})", l.dynamic_reason, l.group);
  else if (l.mode == LayerMode::dynamic_mode) mode += fmt::format(" ({})", l.dynamic_reason);
  else if (l.group >= 0) mode += fmt::format(" (layer group {})", l.group);
  else if (l.static_record.contains("commands") && l.static_record["commands"].is_number_unsigned())
    mode += fmt::format(" ({} commands)", l.static_record["commands"].get<uint64_t>());
  return mode;
}

// The layers the build computed once with an identical earlier one.
std::string merged_text(const ModelDescription &d) {
  if (d.merged_layers.empty()) return "";
  std::string out = "\nmerged layers (identical and stateless: computed once)\n";
  for (const MergedLayerInfo &m : d.merged_layers) {
    std::vector<std::string> outputs;
    for (const auto &[output, held_by] : m.outputs)
      outputs.push_back(output == held_by ? output : fmt::format("{} is {}", output, held_by));
    out += fmt::format("  '{}' ({}) computed by '{}': {}\n", m.layer, m.op, m.into, fmt::join(outputs, ", "));
  }
  return out;
}

std::string layers_text(const ModelDescription &d) {
  std::string out = "\nlayers\n";
  constexpr const char *kLayerRow = "  {:<3} {:<16} {:<14} {:<26} {:<24} {}\n";
  out += fmt::format(kLayerRow, "#", "name", "op", "mode", "inputs -> outputs", "params");
  for (std::size_t i = 0; i < d.layers.size(); ++i) {
    const ModelLayer &l = d.layers[i];
    std::vector<std::string> ins, outs;
    for (std::size_t t : l.inputs) ins.push_back(d.tensors[t].name);
    for (std::size_t t : l.outputs) outs.push_back(d.tensors[t].name);
    out += fmt::format(kLayerRow, i, l.name, l.op, layer_mode_text(l),
                       fmt::format("{} -> {}", fmt::join(ins, ","), fmt::join(outs, ",")), l.params_json);
    if (l.scratch_size)
      out += fmt::format("      global scratch {} bytes at offset {:#x}\n", l.scratch_size, l.scratch_offset);
    for (const ModelLayer::PaddedInput &p : l.padded_inputs)
      out += fmt::format("      input {} read as a padded copy: rows of {} elements, {} bytes at offset {:#x}\n",
                         p.input, p.pitch, p.size, p.offset);
    if (l.metadata.declared) out += fmt::format("      metadata: {}\n", metadata_text(l.metadata));
    if (!l.gradient.empty()) out += fmt::format("      gradient: {}\n", l.gradient);
  }
  if (d.layers.size() != dynamic_layer_count(d))
    out += "  static layers replay the commands recorded at build time; dynamic layers run through the kernel\n"
           "  module's entry functions\n";
  return out;
}

// The plan's boundaries (why no group crosses them) and its fallbacks
// (planned groups left global).
std::string boundaries_and_fallbacks_text(const Json &lg) {
  std::string out;
  if (lg.contains("boundaries") && lg["boundaries"].is_array() && !lg["boundaries"].empty()) {
    out += "  boundaries\n";
    for (const Json &b : lg["boundaries"]) {
      if (!b.is_object() || !b.contains("after") || !b["after"].is_number_integer()) continue;
      const int64_t after = b["after"].get<int64_t>();
      const std::string reason = b.contains("reason") && b["reason"].is_string() ? b["reason"].get<std::string>() : "?";
      out += fmt::format("    after layer {:<3} {}\n", after, reason);
    }
  }
  if (lg.contains("fallbacks") && lg["fallbacks"].is_array())
    for (const Json &f : lg["fallbacks"])
      if (f.is_object() && f.contains("first") && f.contains("last") && f.contains("reason"))
        out += fmt::format("  planned group of layers {}..{} left global: {}\n", f["first"].dump(), f["last"].dump(),
                           f["reason"].is_string() ? f["reason"].get<std::string>() : "?");
  return out;
}

std::string layer_groups_text(const ModelDescription &d) {
  const Json &lg = d.layer_groups;
  const auto number = [&](const Json &j, const char *key) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
  };
  const double global_us = number(lg, "global_us"), planned_us = number(lg, "planned_us");
  std::string out = fmt::format("\nlayer groups  estimated {:.2f} us against {:.2f} us with every layer global{}\n",
                                planned_us, global_us,
                                global_us > 0 ? fmt::format(" ({:.0f}%)", 100 * planned_us / global_us) : "");
  if (d.groups.empty()) out += "  none\n";
  for (std::size_t g = 0; g < d.groups.size(); ++g) {
    const ModelGroup &group = d.groups[g];
    out += fmt::format("  group {}: layers {}..{} ('{}'..'{}'), {} n-slice{} x {} h-slice{}{}, estimated {:.2f} us, {}\n",
                       g, group.first, group.last, d.layers[std::size_t(group.first)].name,
                       d.layers[std::size_t(group.last)].name, group.n_slices, group.n_slices == 1 ? "" : "s",
                       group.h_slices, group.h_slices == 1 ? "" : "s",
                       group.w_slices > 1 ? fmt::format(" x {} w-slices", group.w_slices) : "", group.estimate_us,
                       group.dynamic ? std::string("dynamic (the firmware's local entry)")
                                     : fmt::format("{} commands", group.commands));
    out += "    " + pipelining_text(lg, g) + "\n";
    out += side_inputs_text(lg, g);
  }
  return out + boundaries_and_fallbacks_text(lg);
}

std::string kernel_module_text(const ModelFile &model, const ModelDescription &d) {
  std::string out = "\nkernel module\n";
  if (!d.kernel_module) return out + "  none\n";
  const KernelModuleInfo &k = *d.kernel_module;
  auto kline = [&](std::string_view key, const std::string &value) { out += fmt::format("  {:<12}{}\n", key, value); };
  kline("file name", k.file_name);
  kline("size", fmt::format("{} bytes", k.size));
  kline("sha256", k.sha256);
  kline("chip", k.chip);
  kline("api level", fmt::format("{}", k.api_level));
  kline("ops", k.ops.empty() ? "none" : fmt::format("{}", fmt::join(k.ops, ", ")));
  kline("local ops", k.local_ops.empty() ? "none" : fmt::format("{}", fmt::join(k.local_ops, ", ")));
  kline("section", k.section);
  // The identity of the bytes actually embedded, computed here: nothing
  // of the module is loaded or run to describe it.
  if (const Section *s = model.find_section(k.section)) {
    const std::string actual = sha256_hex(s->data);
    kline("embedded", actual == k.sha256 ? fmt::format("{} bytes, sha256 as above (checked; not loaded)", s->data.size())
                                         : fmt::format("{} bytes with sha256 {}: NOT the module the metadata names",
                                                       s->data.size(), actual));
  }
  const std::size_t dynamic = dynamic_layer_count(d);
  kline("trust", dynamic == 0
                     ? std::string("no dynamic layer: run never loads this module")
                     : fmt::format("run loads this library into its own process for the {} dynamic layer{}: its "
                                   "constructors and entry functions run as native code with your privileges; run "
                                   "only models from a source you trust (info and kernel_dump never load it)",
                                   dynamic, dynamic == 1 ? "" : "s"));
  return out;
}

// The host libraries: identity (SHA-256 of the embedded bytes computed and
// compared), entry points, the host layers using each, and the estimate's
// transfer assumption. Nothing is loaded.
std::string host_libraries_text(const ModelFile &model, const ModelDescription &d) {
  if (d.host_libraries.empty()) return "";
  std::string out = "\nhost libraries (run on the host CPU between TPU layers)\n";
  for (std::size_t i = 0; i < d.host_libraries.size(); ++i) {
    const HostLibraryInfo &h = d.host_libraries[i];
    auto hline = [&](std::string_view key, const std::string &value) { out += fmt::format("    {:<12}{}\n", key, value); };
    out += fmt::format("  {} {} ({}, section {})\n", i, h.file_name, h.kind, h.section);
    hline("size", fmt::format("{} bytes", h.size));
    std::string check = "section missing";
    if (const Section *s = model.find_section(h.section))
      check = sha256_hex(s->data) == h.sha256 ? "matches the embedded bytes" : "DOES NOT match the embedded bytes";
    hline("sha256", fmt::format("{} ({})", h.sha256, check));
    hline("machine", h.machine);
    hline("entries", fmt::format("{}", fmt::join(h.entry_points, ", ")));
    hline("api level", h.api_level >= 0 ? std::to_string(h.api_level) : std::string("none exported"));
    std::vector<std::string> users;
    for (const ModelLayer &l : d.layers)
      if (l.mode == LayerMode::host_mode && std::size_t(l.host_library) == i) users.push_back(l.name);
    hline("layers", users.empty() ? std::string("none") : fmt::format("{}", fmt::join(users, ", ")));
  }
  out += fmt::format("  trust: run loads each library used by a host layer and calls it with your privileges; run only\n"
                     "  models from a source you trust. The estimate charges each host layer its measured host time\n"
                     "  plus {} us and 1 us per {} bytes for every tensor it copies between device and host.\n",
                     kHostCopyLatencyUs, kHostTransferBytesPerUs);
  return out;
}

std::string reference_text(const ModelDescription &d) {
  std::vector<std::string> ins, outs;
  for (const auto &[t, s] : d.reference_inputs) ins.push_back(t);
  for (const auto &[t, s] : d.reference_outputs) outs.push_back(t);
  std::string source = d.reference.contains("source") && d.reference["source"].is_string()
                           ? d.reference["source"].get<std::string>()
                           : "?";
  if (d.reference.contains("seed") && d.reference["seed"].is_number_unsigned())
    source += fmt::format(", seed {}", d.reference["seed"].get<uint64_t>());
  return fmt::format("\nreference     inputs {} ({}); outputs {}\n", fmt::join(ins, ", "), source, fmt::join(outs, ", "));
}

std::string sections_text(const ModelFileLayout &layout) {
  std::string out = "\nsections\n";
  constexpr const char *kSectionRow = "  {:<28} {:<18} {:>12} {:>12}\n";
  out += fmt::format(kSectionRow, "name", "kind", "bytes", "stored");
  for (const ModelFileLayout::SectionEntry &s : layout.sections)
    out += fmt::format(kSectionRow, s.name, s.kind, s.size, s.compressed_size);
  out += fmt::format(kSectionRow, "(metadata)", "json", layout.metadata_size, layout.metadata_size);
  return out;
}

}  // namespace

// ---- info --------------------------------------------------------------------

std::string model_info_text(const ModelFile &model, const ModelFileLayout &layout, std::string_view where) {
  const ModelDescription d = describe_model(model, where);
  std::string out = summary_text(d, layout, where);
  out += tensors_text(d);
  out += layers_text(d);
  out += merged_text(d);
  if (d.layer_groups.is_object()) out += layer_groups_text(d);
  out += kernel_module_text(model, d);
  out += host_libraries_text(model, d);
  if (d.reference.is_object()) out += reference_text(d);
  out += sections_text(layout);
  return out;
}

}  // namespace tpu_runtime
