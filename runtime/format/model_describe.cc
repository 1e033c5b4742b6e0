// model_describe.cc: the model metadata, parsed and checked (describe_model).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "cmodel_host.h"
#include "io/arrays.h"
#include "io/file_names.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model_description.h"
#include "tpu_runtime/net.h"

namespace tpu_runtime {

// ---- the description ----------------------------------------------------------
namespace {

using Json = nlohmann::json;

// Typed access to the metadata, naming the key path in every error.
class Reader {
 public:
  Reader(std::string_view file) : file_(file) {}

  [[noreturn]] void fail(const std::string &path, const std::string &problem) const {
    throw Error(fmt::format("{}: metadata.{}: {}", file_, path, problem));
  }
  const Json &get(const Json &object, const std::string &path, const char *key) const {
    if (!object.is_object() || !object.contains(key)) fail(path + "." + key, "missing");
    return object.at(key);
  }
  std::string string(const Json &object, const std::string &path, const char *key, bool allow_empty = false) const {
    const Json &v = get(object, path, key);
    if (!v.is_string()) fail(path + "." + key, "must be a string");
    if (!allow_empty && v.get<std::string>().empty()) fail(path + "." + key, "is empty");
    return v.get<std::string>();
  }
  uint64_t unsigned_value(const Json &object, const std::string &path, const char *key) const {
    const Json &v = get(object, path, key);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      fail(path + "." + key, "must be an unsigned integer");
    return v.get<uint64_t>();
  }
  int64_t integer(const Json &object, const std::string &path, const char *key) const {
    const Json &v = get(object, path, key);
    if (!v.is_number_integer()) fail(path + "." + key, "must be an integer");
    return v.get<int64_t>();
  }
  const Json &array(const Json &object, const std::string &path, const char *key) const {
    const Json &v = get(object, path, key);
    if (!v.is_array()) fail(path + "." + key, "must be an array");
    return v;
  }
  const Json &object(const Json &parent, const std::string &path, const char *key) const {
    const Json &v = get(parent, path, key);
    if (!v.is_object()) fail(path + "." + key, "must be an object");
    return v;
  }
  std::vector<std::string> strings(const Json &object, const std::string &path, const char *key) const {
    std::vector<std::string> out;
    const Json &a = array(object, path, key);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string() || a[i].get<std::string>().empty())
        fail(fmt::format("{}.{}[{}]", path, key, i), "must be a non-empty string");
      out.push_back(a[i].get<std::string>());
    }
    return out;
  }
  Shape shape(const Json &object, const std::string &path) const {
    const Json &a = array(object, path, "shape");
    if (a.empty() || a.size() > MAX_SHAPE_DIMS) fail(path + ".shape", fmt::format("must have 1..{} dims", MAX_SHAPE_DIMS));
    Shape s;
    int64_t count = 1;
    for (const Json &d : a) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > (int64_t(1) << 30))
        fail(path + ".shape", "every dim must be an integer in 0..2^30");
      s.push_back(int(d.get<int64_t>()));
      count *= s.back();
      if (count > (int64_t(1) << 31) - 1) fail(path + ".shape", "more than 2^31-1 elements");
    }
    return s;
  }
  // offset and size of a buffer inside the plan.
  void check_range(const std::string &path, uint64_t offset, uint64_t size, uint64_t memory_size,
                   uint64_t alignment) const {
    if (offset % alignment) fail(path + ".offset", fmt::format("{} is not a multiple of {}", offset, alignment));
    if (offset > memory_size || size > memory_size - offset)
      fail(path, fmt::format("[{}, {} + {}) is outside the memory plan ({} bytes)", offset, offset, size, memory_size));
  }

 private:
  std::string file_;
};

// `repeats`: a name may come more than once (a layer's inputs).
std::vector<std::size_t> tensor_indices(const Reader &r, const std::vector<std::string> &names,
                                        const std::map<std::string, std::size_t> &index, const std::string &path,
                                        bool repeats = false) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto it = index.find(names[i]);
    if (it == index.end()) r.fail(fmt::format("{}[{}]", path, i), fmt::format("no tensor named '{}'", names[i]));
    if (!repeats && std::find(out.begin(), out.end(), it->second) != out.end())
      r.fail(fmt::format("{}[{}]", path, i), fmt::format("tensor '{}' is listed twice", names[i]));
    out.push_back(it->second);
  }
  return out;
}

// tensor name -> section name, for the reference inputs or outputs.
std::vector<std::pair<std::string, std::string>> reference_map(const Reader &r, const ModelFile &model,
                                                               const Json &reference, const char *key,
                                                               const ModelDescription &d, TensorRole role) {
  std::vector<std::pair<std::string, std::string>> out;
  const Json &map = r.object(reference, "reference", key);
  for (const auto &[name, section] : map.items()) {
    const std::string path = fmt::format("reference.{}.{}", key, name);
    const ModelTensor *t = d.find_tensor(name);
    if (!t || t->role != role) r.fail(path, fmt::format("'{}' is not a model {}", name, role_name(role)));
    if (!section.is_string() || !model.find_section(section.get<std::string>()))
      r.fail(path, "must name a section of the file");
    out.emplace_back(name, section.get<std::string>());
  }
  return out;
}

}  // namespace

const char *role_name(TensorRole role) {
  switch (role) {
    case TensorRole::input: return "input";
    case TensorRole::output: return "output";
    case TensorRole::intermediate: return "intermediate";
    case TensorRole::weight: return "weight";
  }
  return "?";
}

const char *mode_name(LayerMode mode) {
  switch (mode) {
    case LayerMode::static_mode: return "static";
    case LayerMode::dynamic_mode: return "dynamic";
    case LayerMode::host_mode: return "host";
  }
  return "?";
}

nlohmann::json HostLibraryInfo::to_json() const {
  nlohmann::json j = {{"section", section}, {"kind", kind},       {"file_name", file_name},      {"size", size},
                      {"sha256", sha256},   {"machine", machine}, {"entry_points", entry_points}};
  if (api_level >= 0) j["api_level"] = api_level;
  return j;
}

int64_t ModelTensor::element_count() const { return detail::element_count(shape); }

nlohmann::json KernelModuleInfo::to_json() const {
  return {{"section", section}, {"file_name", file_name}, {"size", size},     {"sha256", sha256},
          {"chip", chip},       {"api_level", api_level}, {"ops", ops},       {"local_ops", local_ops}};
}

const ModelTensor *ModelDescription::find_tensor(std::string_view name) const {
  for (const ModelTensor &t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<std::string> ModelDescription::firmware_ops() const {
  std::vector<std::string> ops;
  for (const ModelLayer &l : layers)
    if (l.mode == LayerMode::dynamic_mode)
      if (std::find(ops.begin(), ops.end(), l.op) == ops.end()) ops.push_back(l.op);
  return ops;
}

namespace detail {

KernelModuleInfo kernel_module_from_json(const nlohmann::json &j, std::string_view where) {
  const Reader r(where);
  const std::string p = "kernel_module";
  if (!j.is_object()) r.fail(p, "must be an object");
  KernelModuleInfo k;
  k.section = r.string(j, p, "section");
  k.file_name = r.string(j, p, "file_name");
  if (!is_plain_file_name(k.file_name)) {
    std::string shown = k.file_name;
    for (std::size_t at = shown.find('\0'); at != std::string::npos; at = shown.find('\0', at))
      shown.replace(at, 1, "\\0");
    r.fail(p + ".file_name", fmt::format("'{}' is not a plain file name (empty, '.', '..', or holds '/', '\\' or "
                                         "NUL); kernel_dump writes the module under this name",
                                         shown));
  }
  k.size = r.unsigned_value(j, p, "size");
  k.sha256 = r.string(j, p, "sha256");
  if (k.sha256.size() != 64 || k.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
    r.fail(p + ".sha256", "must be 64 lowercase hex digits");
  k.chip = r.string(j, p, "chip");
  const int64_t level = r.integer(j, p, "api_level");
  if (level < 0 || level > std::numeric_limits<int>::max()) r.fail(p + ".api_level", "out of range");
  k.api_level = int(level);
  k.ops = r.strings(j, p, "ops");
  k.local_ops = r.strings(j, p, "local_ops");
  return k;
}

}  // namespace detail

namespace {

// "model_format": this SDK's (2) or older, not format 1, whose static layers
// ran through the kernel module.
int read_model_format(const Reader &r, const Json &m, std::string_view where) {
  if (!m.is_object() || !m.contains("model_format"))
    throw Error(fmt::format("{}: not a tpu_model model: the metadata has no \"model_format\"", where));
  const int64_t format = r.integer(m, "", "model_format");
  if (format > kModelFormat)
    r.fail("model_format", fmt::format("{} is newer than this SDK reads ({}); use a newer SDK", format, kModelFormat));
  if (format == 1)
    r.fail("model_format", "1 is the format of models whose static layers ran through the kernel module; this SDK "
                           "replays recorded command streams (format 2): rebuild the model with tpu_model build");
  if (format < 1) r.fail("model_format", fmt::format("{} is not a valid model format", format));
  return int(format);
}

// The chip, the net's name and the memory plan.
void read_chip_net_memory(const Reader &r, const Json &m, ModelDescription &d) {
  d.chip = r.string(m, "", "chip");
  try {
    firmware_file_name(d.chip);
  } catch (const Error &) {
    r.fail("chip", fmt::format("unknown chip '{}' (bm1684x or bm1688)", d.chip));
  }
  d.net_name = r.string(r.object(m, "", "net"), "net", "name");
  const Json &memory = r.object(m, "", "memory");
  d.memory_size = r.unsigned_value(memory, "memory", "size");
  d.memory_alignment = r.unsigned_value(memory, "memory", "alignment");
  if (d.memory_alignment == 0 || (d.memory_alignment & (d.memory_alignment - 1)))
    r.fail("memory.alignment", "must be a power of two");
  if (d.memory_size > (uint64_t(1) << 32)) r.fail("memory.size", "more than the 4 GiB of global memory");
  d.memory_base = r.unsigned_value(memory, "memory", "base");
  if (memory.contains("in_place_saved"))
    d.memory_in_place_saved = r.unsigned_value(memory, "memory", "in_place_saved");
  if (d.memory_base % kModelPlanAlignment != 0)
    r.fail("memory.base", fmt::format("{:#x} is not a multiple of {}", d.memory_base, kModelPlanAlignment));
}

TensorRole read_role(const Reader &r, const Json &t, const std::string &p) {
  const std::string role = r.string(t, p, "role");
  if (role == "input") return TensorRole::input;
  if (role == "output") return TensorRole::output;
  if (role == "intermediate") return TensorRole::intermediate;
  if (role == "weight") return TensorRole::weight;
  r.fail(p + ".role", fmt::format("'{}' is not input, output, intermediate or weight", role));
}

// tensors[i] (`p`), inside the memory plan; a weight's section holds its bytes.
ModelTensor read_tensor(const Reader &r, const ModelFile &model, const Json &t, const std::string &p,
                        const std::map<std::string, std::size_t> &index, const ModelDescription &d) {
  if (!t.is_object()) r.fail(p, "must be an object");
  ModelTensor tensor;
  tensor.name = r.string(t, p, "name");
  if (index.count(tensor.name)) r.fail(p + ".name", fmt::format("'{}' is used by two tensors", tensor.name));
  tensor.shape = r.shape(t, p);
  try {
    tensor.dtype = parse_dtype(r.string(t, p, "dtype"));
  } catch (const Error &e) {
    r.fail(p + ".dtype", e.what());
  }
  tensor.role = read_role(r, t, p);
  tensor.offset = r.unsigned_value(t, p, "offset");
  tensor.size = r.unsigned_value(t, p, "size");
  if (tensor.size != uint64_t(tensor.element_count()) * dtype_size(tensor.dtype))
    r.fail(p + ".size", fmt::format("{} bytes, but {} {} is {} bytes", tensor.size, detail::shape_text(tensor.shape),
                                    dtype_name(tensor.dtype), tensor.element_count() * dtype_size(tensor.dtype)));
  r.check_range(p, tensor.offset, tensor.size, d.memory_size, d.memory_alignment);
  // An in-place output shares an earlier tensor's bytes.
  if (t.contains("in_place_of")) {
    tensor.in_place_of = r.string(t, p, "in_place_of");
    const auto shared = index.find(tensor.in_place_of);
    if (shared == index.end() || d.tensors[shared->second].offset != tensor.offset ||
        d.tensors[shared->second].size != tensor.size)
      r.fail(p + ".in_place_of", fmt::format("'{}' is not an earlier tensor at offset {} of {} bytes",
                                             tensor.in_place_of, tensor.offset, tensor.size));
  }
  for (const auto &[key, flag] : {std::pair{"text", &tensor.text}, std::pair{"scalar", &tensor.scalar}}) {
    if (!t.contains(key)) continue;
    if (!t.at(key).is_boolean()) r.fail(p + "." + key, "must be true or false");
    *flag = t.at(key).get<bool>();
    if (*flag && tensor.role != TensorRole::input && tensor.role != TensorRole::output)
      r.fail(p + "." + key, fmt::format("only an input or an output can be {}, and '{}' is {}", key, tensor.name,
                                        role_name(tensor.role)));
  }
  if (tensor.scalar && tensor.element_count() != 1)
    r.fail(p + ".scalar", fmt::format("a scalar holds one element, and '{}' is {}", tensor.name,
                                      detail::shape_text(tensor.shape)));
  if (tensor.role == TensorRole::weight) {
    tensor.section = r.string(t, p, "section");
    const Section *s = model.find_section(tensor.section);
    if (!s) r.fail(p + ".section", fmt::format("no section named '{}'", tensor.section));
    if (s->data.size() != tensor.size)
      r.fail(p + ".section", fmt::format("section '{}' holds {} bytes, but weight '{}' is {} bytes", tensor.section,
                                         s->data.size(), tensor.name, tensor.size));
  }
  return tensor;
}

// The tensors; `index` maps their names to them.
void read_tensors(const Reader &r, const ModelFile &model, const Json &m, ModelDescription &d,
                  std::map<std::string, std::size_t> &index) {
  const Json &tensors = r.array(m, "", "tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    ModelTensor tensor = read_tensor(r, model, tensors[i], fmt::format("tensors[{}]", i), index, d);
    if (tensor.role == TensorRole::weight) d.weights.push_back(d.tensors.size());
    index[tensor.name] = d.tensors.size();
    d.tensors.push_back(std::move(tensor));
  }
}

// "inputs" and "outputs": exactly the tensors of those roles.
void read_inputs_outputs(const Reader &r, const Json &m, const std::map<std::string, std::size_t> &index,
                         ModelDescription &d) {
  d.inputs = tensor_indices(r, r.strings(m, "", "inputs"), index, "inputs");
  d.outputs = tensor_indices(r, r.strings(m, "", "outputs"), index, "outputs");
  if (d.outputs.empty()) r.fail("outputs", "a model needs at least one output");
  for (std::size_t i : d.inputs)
    if (d.tensors[i].role != TensorRole::input) r.fail("inputs", fmt::format("'{}' has role {}", d.tensors[i].name, role_name(d.tensors[i].role)));
  for (std::size_t i : d.outputs)
    if (d.tensors[i].role != TensorRole::output) r.fail("outputs", fmt::format("'{}' has role {}", d.tensors[i].name, role_name(d.tensors[i].role)));
  for (std::size_t i = 0; i < d.tensors.size(); ++i) {
    const TensorRole role = d.tensors[i].role;
    if (role == TensorRole::weight) continue;
    const auto &list = role == TensorRole::input ? d.inputs : d.outputs;
    if (role != TensorRole::intermediate && std::find(list.begin(), list.end(), i) == list.end())
      r.fail(fmt::format("tensors[{}]", i), fmt::format("'{}' has role {} but is not listed in \"{}s\"",
                                                        d.tensors[i].name, role_name(role), role_name(role)));
  }
}

// A layer's inputs are `defined` already, its outputs not yet: it defines them.
void define_layer_tensors(const Reader &r, const ModelLayer &layer, const std::string &p, const ModelDescription &d,
                          std::vector<bool> &defined) {
  for (std::size_t t : layer.inputs)
    if (!defined[t]) r.fail(p + ".inputs", fmt::format("tensor '{}' is not defined before this layer", d.tensors[t].name));
  for (std::size_t t : layer.outputs) {
    if (defined[t]) r.fail(p + ".outputs", fmt::format("tensor '{}' is already defined", d.tensors[t].name));
    if (d.tensors[t].role == TensorRole::input) r.fail(p + ".outputs", fmt::format("'{}' is a model input", d.tensors[t].name));
    if (d.tensors[t].role == TensorRole::weight) r.fail(p + ".outputs", fmt::format("'{}' is a weight", d.tensors[t].name));
    defined[t] = true;
  }
}

// A host layer's "host" object: its library (an index into
// host_libraries, of the kind its op's prefix needs) and whether its
// outputs may shrink at run time.
void read_host_record(const Reader &r, const Json &l, const std::string &p, const ModelDescription &d,
                      ModelLayer &layer) {
  const std::string hp = p + ".host";
  const Json &host = r.object(l, p, "host");
  const uint64_t library = r.unsigned_value(host, hp, "library");
  if (library >= d.host_libraries.size())
    r.fail(hp + ".library", fmt::format("{} is not one of the {} host libraries", library, d.host_libraries.size()));
  layer.host_library = int(library);
  const Json &dynamic = r.get(host, hp, "dynamic_shapes");
  if (!dynamic.is_boolean()) r.fail(hp + ".dynamic_shapes", "must be true or false");
  layer.host_dynamic_shapes = dynamic.get<bool>();
  const HostOpPrefix prefix = host_op_prefix(layer.op);
  const char *want = prefix == HostOpPrefix::vendor_ap ? "vendor_ap" : prefix == HostOpPrefix::callback ? "callback" : "";
  if (d.host_libraries[library].kind != want)
    r.fail(hp + ".library", fmt::format("op '{}' is not a host op of a {} library", layer.op, d.host_libraries[library].kind));
}

// layers[i] (`p`); `layer_names` holds the names of the layers before it.
ModelLayer read_layer(const Reader &r, const Json &l, const std::string &p,
                      const std::map<std::string, std::size_t> &index, const ModelDescription &d,
                      std::set<std::string> &layer_names, std::vector<bool> &defined, std::string_view where) {
  if (!l.is_object()) r.fail(p, "must be an object");
  ModelLayer layer;
  layer.name = r.string(l, p, "name");
  if (!layer_names.insert(layer.name).second) r.fail(p + ".name", fmt::format("'{}' is used by two layers", layer.name));
  layer.op = r.string(l, p, "op");
  const std::string mode = r.string(l, p, "mode");
  if (mode == "static") layer.mode = LayerMode::static_mode;
  else if (mode == "dynamic") layer.mode = LayerMode::dynamic_mode;
  else if (mode == "host") layer.mode = LayerMode::host_mode;
  else r.fail(p + ".mode", fmt::format("'{}' is not static, dynamic or host", mode));
  if (layer.mode == LayerMode::host_mode) read_host_record(r, l, p, d, layer);
  if (layer.mode == LayerMode::dynamic_mode) layer.dynamic_reason = r.string(l, p, "dynamic_reason");
  layer.params_json = r.string(l, p, "params");
  const auto parsed = nlohmann::ordered_json::parse(layer.params_json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) r.fail(p + ".params", "must hold a JSON object");
  layer.params = PackedParams::from_bytes(
      detail::from_hex(r.string(l, p, "params_packed"), fmt::format("{}: metadata.{}.params_packed", where, p)),
      fmt::format("{}: metadata.{}.params_packed", where, p));
  layer.inputs = tensor_indices(r, r.strings(l, p, "inputs"), index, p + ".inputs", true);
  layer.outputs = tensor_indices(r, r.strings(l, p, "outputs"), index, p + ".outputs");
  if (layer.inputs.empty() || layer.outputs.empty()) r.fail(p, "a layer needs at least one input and one output");
  define_layer_tensors(r, layer, p, d, defined);
  const Json &scratch = r.object(l, p, "scratch");
  layer.scratch_offset = r.unsigned_value(scratch, p + ".scratch", "offset");
  layer.scratch_size = r.unsigned_value(scratch, p + ".scratch", "size");
  r.check_range(p + ".scratch", layer.scratch_offset, layer.scratch_size, d.memory_size, d.memory_alignment);
  if (l.contains("padded_inputs"))
    for (const Json &padded : r.array(l, p, "padded_inputs")) {
      const std::string pp = p + ".padded_inputs";
      if (!padded.is_object()) r.fail(pp, "must hold objects");
      ModelLayer::PaddedInput in{int(r.unsigned_value(padded, pp, "input")), int(r.unsigned_value(padded, pp, "pitch")),
                                 r.unsigned_value(padded, pp, "offset"), r.unsigned_value(padded, pp, "size")};
      if (std::size_t(in.input) >= layer.inputs.size()) r.fail(pp + ".input", "is not an input of the layer");
      r.check_range(pp, in.offset, in.size, d.memory_size, d.memory_alignment);
      layer.padded_inputs.push_back(in);
    }
  if (layer.mode == LayerMode::static_mode) layer.static_record = r.object(l, p, "static");
  if (l.contains("gradient")) layer.gradient = r.string(l, p, "gradient");
  if (l.contains("check")) {
    layer.check = r.string(l, p, "check");
    if (layer.check.empty() || layer.outputs.size() != 1) r.fail(p + ".check", "a check layer has one output and a text");
  }
  if (l.contains("metadata"))
    layer.metadata = metadata_from_json(l["metadata"], layer.op, int(layer.inputs.size()),
                                        fmt::format("{}: metadata.{}.metadata", where, p));
  return layer;
}

// Layers, in execution order: every input defined earlier, every output
// defined exactly once.
void read_layers(const Reader &r, const Json &m, const std::map<std::string, std::size_t> &index,
                 ModelDescription &d, std::string_view where) {
  std::vector<bool> defined(d.tensors.size(), false);
  for (std::size_t i : d.inputs) defined[i] = true;
  for (std::size_t i : d.weights) defined[i] = true;
  std::set<std::string> layer_names;
  const Json &layers = r.array(m, "", "layers");
  if (layers.empty()) r.fail("layers", "a model needs at least one layer");
  for (std::size_t i = 0; i < layers.size(); ++i)
    d.layers.push_back(read_layer(r, layers[i], fmt::format("layers[{}]", i), index, d, layer_names, defined, where));
  for (std::size_t i = 0; i < d.tensors.size(); ++i)
    if (!defined[i]) r.fail(fmt::format("tensors[{}]", i), fmt::format("no layer produces '{}'", d.tensors[i].name));
}

// How a group runs: its recorded commands, or a schedule for the firmware.
void read_group_execution(const Reader &r, const ModelFile &model, const Json &j, const std::string &p,
                          ModelGroup &group) {
  const std::string execution = j.contains("execution") ? r.string(j, p, "execution") : "commands";
  if (execution == "dynamic") {
    group.dynamic = true;
    group.schedule = r.object(j, p, "schedule");
  } else if (execution == "commands") {
    group.section = r.string(j, p, "section");
    if (!model.find_section(group.section))
      r.fail(p + ".section", fmt::format("no section named '{}'", group.section));
    group.commands = r.unsigned_value(j, p, "commands");
  } else {
    r.fail(p + ".execution", fmt::format("'{}' is not commands or dynamic", execution));
  }
}

// layer_groups.groups[g] (`p`), starting at layer `next` or later; its
// layers are all static or all dynamic, as the group.
ModelGroup read_group(const Reader &r, const ModelFile &model, const Json &j, const std::string &p, int next,
                      const ModelDescription &d) {
  if (!j.is_object()) r.fail(p, "must be an object");
  ModelGroup group;
  const int64_t first = r.integer(j, p, "first"), last = r.integer(j, p, "last");
  if (first < next || last <= first || last >= int64_t(d.layers.size()))
    r.fail(p, fmt::format("layers {}..{}: a group spans two or more layers, after the previous group, inside "
                          "the {} layers",
                          first, last, d.layers.size()));
  group.first = int(first);
  group.last = int(last);
  const int64_t ns = r.integer(j, p, "n_slices"), hs = r.integer(j, p, "h_slices");
  if (ns < 1 || hs < 1 || ns > (1 << 30) || hs > (1 << 30)) r.fail(p, "n_slices and h_slices must be >= 1");
  group.n_slices = int(ns);
  group.h_slices = int(hs);
  if (j.contains("w_slices")) {  // absent in files from before W splitting
    const int64_t ws = r.integer(j, p, "w_slices");
    if (ws < 1 || ws > (1 << 30)) r.fail(p + ".w_slices", "must be >= 1");
    group.w_slices = int(ws);
  }
  const Json &estimate = r.get(j, p, "estimate_us");
  if (!estimate.is_number()) r.fail(p + ".estimate_us", "must be a number");
  group.estimate_us = estimate.get<double>();
  read_group_execution(r, model, j, p, group);
  for (int k = group.first; k <= group.last; ++k)
    if ((d.layers[std::size_t(k)].mode == LayerMode::dynamic_mode) != group.dynamic)
      r.fail(p, fmt::format("layer {} is {}, but the group is {}", k, mode_name(d.layers[std::size_t(k)].mode),
                            group.dynamic ? "dynamic" : "static"));
  return group;
}

// Layer groups: each group's layers say {"execution": "group", "group": g}.
void read_layer_groups(const Reader &r, const ModelFile &model, const Json &m, ModelDescription &d) {
  d.layer_groups = r.object(m, "", "layer_groups");
  const Json &groups = r.array(d.layer_groups, "layer_groups", "groups");
  int next = 0;  // the first layer a group may start at
  for (std::size_t g = 0; g < groups.size(); ++g) {
    ModelGroup group = read_group(r, model, groups[g], fmt::format("layer_groups.groups[{}]", g), next, d);
    next = group.last + 1;
    for (int k = group.first; k <= group.last; ++k) d.layers[std::size_t(k)].group = int(g);
    d.groups.push_back(std::move(group));
  }
}

// Each layer's own record agrees with layer_groups: a grouped static layer
// says so, a dynamic layer names its group, no other layer is in a group.
void check_group_members(const Reader &r, const Json &m, const ModelDescription &d) {
  for (std::size_t i = 0; i < d.layers.size(); ++i) {
    const ModelLayer &l = d.layers[i];
    const Json &record = l.static_record;
    const bool grouped = l.mode == LayerMode::static_mode && record.contains("execution") &&
                         record["execution"].is_string() && record["execution"].get<std::string>() == "group";
    const std::string p = fmt::format("layers[{}].static", i);
    if (grouped) {
      if (!record.contains("group") || !record["group"].is_number_integer() ||
          record["group"].get<int64_t>() != int64_t(l.group))
        r.fail(p, fmt::format("execution \"group\", but layer_groups does not list layer {} in group {}", i,
                              record.contains("group") ? record["group"].dump() : "(none)"));
    } else if (l.mode == LayerMode::dynamic_mode) {
      const Json &layer_json = m["layers"][i];
      const int64_t listed = layer_json.contains("group") && layer_json["group"].is_number_integer()
                                 ? layer_json["group"].get<int64_t>()
                                 : -1;
      if (listed != l.group)
        r.fail(fmt::format("layers[{}].group", i),
               fmt::format("{}, but layer_groups puts the layer in group {}", listed, l.group));
    } else if (l.group >= 0) {
      r.fail(p, fmt::format("layer {} belongs to layer group {}, but its execution is not \"group\"", i, l.group));
    }
  }
}

// The kernel module's identity, its section's size and chip agreeing.
void read_kernel_module(const Reader &r, const ModelFile &model, const Json &m, std::string_view where,
                        ModelDescription &d) {
  d.kernel_module = detail::kernel_module_from_json(m["kernel_module"], where);
  const Section *s = model.find_section(d.kernel_module->section);
  if (!s) r.fail("kernel_module.section", fmt::format("no section named '{}'", d.kernel_module->section));
  if (s->data.size() != d.kernel_module->size)
    r.fail("kernel_module.size", fmt::format("{} bytes, but section '{}' holds {}", d.kernel_module->size, s->name,
                                             s->data.size()));
  if (d.kernel_module->chip != d.chip)
    r.fail("kernel_module.chip", fmt::format("'{}', but the model is for {}", d.kernel_module->chip, d.chip));
}

// host_libraries[i]: identity, kind and section.
HostLibraryInfo read_host_library(const Reader &r, const ModelFile &model, const Json &j, const std::string &p) {
  if (!j.is_object()) r.fail(p, "must be an object");
  HostLibraryInfo h;
  h.section = r.string(j, p, "section");
  if (!h.section.starts_with(kHostLibrarySectionPrefix))
    r.fail(p + ".section", fmt::format("'{}' does not start with '{}'", h.section, kHostLibrarySectionPrefix));
  h.kind = r.string(j, p, "kind");
  if (h.kind != "vendor_ap" && h.kind != "callback")
    r.fail(p + ".kind", fmt::format("'{}' is not vendor_ap or callback", h.kind));
  h.file_name = r.string(j, p, "file_name");
  if (!detail::is_plain_file_name(h.file_name)) r.fail(p + ".file_name", "is not a plain file name");
  h.size = r.unsigned_value(j, p, "size");
  h.sha256 = r.string(j, p, "sha256");
  if (h.sha256.size() != 64 || h.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
    r.fail(p + ".sha256", "must be 64 lowercase hex digits");
  h.machine = r.string(j, p, "machine");
  h.entry_points = r.strings(j, p, "entry_points");
  if (j.contains("api_level")) {
    const int64_t level = r.integer(j, p, "api_level");
    if (level < 0 || level > std::numeric_limits<int>::max()) r.fail(p + ".api_level", "out of range");
    h.api_level = int(level);
  }
  const Section *s = model.find_section(h.section);
  if (!s) r.fail(p + ".section", fmt::format("no section named '{}'", h.section));
  if (s->data.size() != h.size)
    r.fail(p + ".size", fmt::format("{} bytes, but section '{}' holds {}", h.size, s->name, s->data.size()));
  return h;
}

void read_host_libraries(const Reader &r, const ModelFile &model, const Json &m, ModelDescription &d) {
  const Json &libraries = r.array(m, "", "host_libraries");
  for (std::size_t i = 0; i < libraries.size(); ++i)
    d.host_libraries.push_back(read_host_library(r, model, libraries[i], fmt::format("host_libraries[{}]", i)));
}

}  // namespace

// merged_layers[i]: a layer the build computed once with an identical
// earlier one; each of its outputs names the tensor that holds it.
void read_merged_layers(const Reader &r, const Json &m, const std::map<std::string, std::size_t> &index,
                        ModelDescription &d) {
  const Json &merged = r.array(m, "", "merged_layers");
  for (std::size_t i = 0; i < merged.size(); ++i) {
    const std::string p = fmt::format("merged_layers[{}]", i);
    if (!merged[i].is_object()) r.fail(p, "must be an object");
    MergedLayerInfo info{r.string(merged[i], p, "layer"), r.string(merged[i], p, "op"),
                         r.string(merged[i], p, "into"), {}};
    for (const auto &[output, held_by] : r.object(merged[i], p, "outputs").items()) {
      if (!held_by.is_string() || !index.count(held_by.get<std::string>()))
        r.fail(p + ".outputs." + output, "must name a tensor of the model");
      info.outputs.emplace_back(output, held_by.get<std::string>());
    }
    d.merged_layers.push_back(std::move(info));
  }
}

ModelDescription describe_model(const ModelFile &model, std::string_view where) {
  const Reader r(where);
  const Json &m = model.metadata;
  ModelDescription d;
  d.model_format = read_model_format(r, m, where);
  read_chip_net_memory(r, m, d);
  std::map<std::string, std::size_t> index;  // tensor name -> d.tensors
  read_tensors(r, model, m, d, index);
  read_inputs_outputs(r, m, index, d);
  if (m.contains("host_libraries")) read_host_libraries(r, model, m, d);
  read_layers(r, m, index, d, where);
  if (m.contains("layer_groups") && !m["layer_groups"].is_null()) read_layer_groups(r, model, m, d);
  check_group_members(r, m, d);
  if (m.contains("kernel_module")) read_kernel_module(r, model, m, where, d);
  if (m.contains("merged_layers")) read_merged_layers(r, m, index, d);
  if (m.contains("reference") && !m["reference"].is_null()) {
    d.reference = r.object(m, "", "reference");
    d.reference_inputs = reference_map(r, model, d.reference, "inputs", d, TensorRole::input);
    d.reference_outputs = reference_map(r, model, d.reference, "outputs", d, TensorRole::output);
  }
  return d;
}


}  // namespace tpu_runtime
