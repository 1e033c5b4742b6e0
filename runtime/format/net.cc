// net.cc: parsing and structural checks of the JSON net description.
#include "tpu_runtime/net.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tpu_runtime/error.h"
#include "tpu_runtime/json_limits.h"

namespace tpu_runtime {
namespace {

using Json = nlohmann::ordered_json;

std::string type_name(const Json &j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  if (j.is_array()) return "an array";
  return "an object";
}

void check_keys(const Json &object, std::initializer_list<const char *> allowed, const std::string &where) {
  for (const auto &[key, value] : object.items()) {
    (void)value;
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char *a) { return key == a; }))
      throw Error(fmt::format("{}: unknown key \"{}\" (allowed: {})", where, key, fmt::join(allowed, ", ")));
  }
}

std::string require_string(const Json &object, const char *key, const std::string &where) {
  if (!object.contains(key)) throw Error(fmt::format("{}: \"{}\" is missing", where, key));
  const Json &v = object.at(key);
  if (!v.is_string()) throw Error(fmt::format("{}: \"{}\" must be a string, not {}", where, key, type_name(v)));
  std::string s = v.get<std::string>();
  if (s.empty()) throw Error(fmt::format("{}: \"{}\" is empty", where, key));
  return s;
}

const Json &require_array(const Json &object, const char *key, const std::string &where) {
  if (!object.contains(key)) throw Error(fmt::format("{}: \"{}\" is missing", where, key));
  const Json &v = object.at(key);
  if (!v.is_array()) throw Error(fmt::format("{}: \"{}\" must be an array, not {}", where, key, type_name(v)));
  return v;
}

// A list of tensor names, at least one, no repeats within the list unless
// `repeats` (a layer may read one tensor twice, as in x * x).
std::vector<std::string> name_list(const Json &object, const char *key, const std::string &where,
                                   bool repeats = false) {
  const Json &array = require_array(object, key, where);
  if (array.empty()) throw Error(fmt::format("{}: \"{}\" is empty; at least one tensor is needed", where, key));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < array.size(); ++i) {
    if (!array[i].is_string() || array[i].get<std::string>().empty())
      throw Error(fmt::format("{}: \"{}\"[{}] must be a non-empty tensor name, not {}", where, key, i,
                              array[i].is_string() ? "an empty string" : type_name(array[i])));
    names.push_back(array[i].get<std::string>());
    if (!repeats && std::count(names.begin(), names.end(), names.back()) > 1)
      throw Error(fmt::format("{}: \"{}\" names tensor '{}' twice", where, key, names.back()));
  }
  return names;
}

Shape parse_shape(const Json &j, const std::string &where) {
  if (!j.is_array()) throw Error(fmt::format("{}: \"shape\" must be an array of dims, not {}", where, type_name(j)));
  if (j.empty() || j.size() > MAX_SHAPE_DIMS)
    throw Error(fmt::format("{}: \"shape\" has {} dims; 1..{} are supported", where, j.size(), MAX_SHAPE_DIMS));
  Shape shape;
  int64_t elements = 1;
  for (const Json &d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > (int64_t(1) << 30))
      throw Error(fmt::format("{}: \"shape\" {}: every dim must be an integer in 0..2^30 (0: an empty tensor)", where,
                              j.dump()));
    shape.push_back(int(d.get<int64_t>()));
    elements *= shape.back();
    if (elements > (int64_t(1) << 31) - 1)
      throw Error(fmt::format("{}: \"shape\" {} has more than 2^31-1 elements", where, j.dump()));
  }
  return shape;
}

// "out_dtypes": one dtype name per layer output.
std::vector<Dtype> out_dtype_list(const Json &j, std::size_t outputs, const std::string &where) {
  if (!j.is_array())
    throw Error(fmt::format("{}: \"out_dtypes\" must be an array of dtype names, not {}", where, type_name(j)));
  if (j.size() != outputs)
    throw Error(fmt::format("{}: \"out_dtypes\" lists {} dtype(s) for {} output(s); give one per output", where,
                            j.size(), outputs));
  std::vector<Dtype> dtypes;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      throw Error(fmt::format("{}: \"out_dtypes\"[{}] must be a dtype name, not {}", where, i, type_name(j[i])));
    try {
      dtypes.push_back(parse_dtype(j[i].get<std::string>()));
    } catch (const Error &e) {
      throw Error(fmt::format("{}: \"out_dtypes\"[{}]: {}", where, i, e.what()));
    }
  }
  return dtypes;
}

// Does `from` (a layer index) reach `target` through the layers producing
// its inputs? Fills `path` (layer indices, from `from` back to `target`).
bool reaches(std::size_t from, std::size_t target, const std::vector<NetLayer> &layers,
             const std::map<std::string, std::size_t> &producer, std::set<std::size_t> &seen,
             std::vector<std::size_t> &path) {
  path.push_back(from);
  if (from == target) return true;
  if (seen.insert(from).second)
    for (const std::string &input : layers[from].inputs)
      if (auto it = producer.find(input); it != producer.end())
        if (reaches(it->second, target, layers, producer, seen, path)) return true;
  path.pop_back();
  return false;
}

constexpr char kBase64Digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// A "weights" entry: name, shape, dtype and its data.
NetWeight parse_weight(const Json &w, const std::string &at) {
  if (!w.is_object())
    throw Error(fmt::format("{}: must be an object {{\"name\", \"shape\", \"dtype\", \"data\"}}, not {}", at,
                            type_name(w)));
  check_keys(w, {"name", "shape", "dtype", "data", "data_dtype", "comment"}, at);
  NetWeight weight;
  weight.name = require_string(w, "name", at);
  const std::string named = fmt::format("{} ('{}')", at, weight.name);
  if (!w.contains("shape")) throw Error(fmt::format("{}: \"shape\" is missing", named));
  weight.shape = parse_shape(w.at("shape"), named);
  Dtype data_dtype;
  try {
    weight.dtype = parse_dtype(require_string(w, "dtype", named));
    data_dtype = w.contains("data_dtype") ? parse_dtype(require_string(w, "data_dtype", named)) : weight.dtype;
  } catch (const Error &e) {
    throw Error(fmt::format("{}: {}", named, e.what()));
  }
  if (data_dtype != weight.dtype && !(dtype_info(data_dtype).is_float && dtype_info(weight.dtype).is_float))
    throw Error(fmt::format("{}: \"data_dtype\" {} cannot become \"dtype\" {}; only float data converts to another "
                            "float dtype",
                            named, dtype_name(data_dtype), dtype_name(weight.dtype)));
  if (!w.contains("data")) throw Error(fmt::format("{}: \"data\" (the values, base64) is missing", named));
  if (!w.at("data").is_string())
    throw Error(fmt::format("{}: \"data\" must be a base64 string, not {}", named, type_name(w.at("data"))));
  std::vector<uint8_t> bytes = decode_base64(w.at("data").get_ref<const std::string &>(), named + ": \"data\"");
  int64_t count = 1;
  for (int d : weight.shape) count *= d;
  const uint64_t want = uint64_t(count) * dtype_size(data_dtype);
  if (bytes.size() != want)
    throw Error(fmt::format("{}: \"data\" holds {} bytes, but {} values of {} are {} bytes", named, bytes.size(),
                            count, dtype_name(data_dtype), want));
  if (data_dtype == weight.dtype) {
    weight.data = std::move(bytes);
  } else {
    std::vector<float> values(static_cast<std::size_t>(count));
    decode_floats(data_dtype, bytes.data(), values.size(), values.data());
    weight.data.resize(values.size() * dtype_size(weight.dtype));
    encode_floats(weight.dtype, values.data(), values.size(), weight.data.data());
  }
  return weight;
}

// Where each tensor comes from: "net input", "weight" or a layer label; and
// the layer producing each layer output.
struct TensorOrigins {
  std::map<std::string, std::string> defined_by;
  std::map<std::string, std::size_t> producer;  // tensor -> layer index
};

// An "inputs" entry (`at`): a name, a shape and a dtype, within global memory.
NetInput parse_input(const Json &in, const std::string &at) {
  if (!in.is_object())
    throw Error(fmt::format("{}: must be an object {{\"name\", \"shape\", \"dtype\"}}, not {}", at, type_name(in)));
  check_keys(in, {"name", "shape", "dtype", "text", "scalar"}, at);
  NetInput input;
  input.name = require_string(in, "name", at);
  const std::string named = fmt::format("{} ('{}')", at, input.name);
  for (const auto &[key, flag] : {std::pair{"text", &input.text}, std::pair{"scalar", &input.scalar}}) {
    if (!in.contains(key)) continue;
    if (!in.at(key).is_boolean())
      throw Error(fmt::format("{}: \"{}\" must be true or false, not {}", named, key, type_name(in.at(key))));
    *flag = in.at(key).get<bool>();
  }
  if (!in.contains("shape")) throw Error(fmt::format("{}: \"shape\" is missing", named));
  input.shape = parse_shape(in.at("shape"), named);
  try {
    input.dtype = parse_dtype(require_string(in, "dtype", named));
  } catch (const Error &e) {
    throw Error(fmt::format("{}: {}", named, e.what()));
  }
  int64_t elements = 1;
  for (int d : input.shape) elements *= d;  // parse_shape keeps this below 2^31
  if (input.scalar && input.shape != Shape{1})
    throw Error(fmt::format("{}: a \"scalar\" input has the shape [1], not {}", named, in.at("shape").dump()));
  if (uint64_t(elements) * dtype_size(input.dtype) > kGlobalMemoryBytes)
    throw Error(fmt::format("{}: shape {} of {} is {} bytes, more than the {} GiB of global memory", named,
                            in.at("shape").dump(), dtype_name(input.dtype), uint64_t(elements) * dtype_size(input.dtype),
                            kGlobalMemoryBytes >> 30));
  return input;
}

std::vector<NetInput> parse_inputs(const Json &json, const std::string &where, TensorOrigins &origins) {
  const Json &inputs = require_array(json, "inputs", where);
  // No inputs is legal: a net whose outputs come from its weights alone (an ONNX graph of constants).
  std::vector<NetInput> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string at = fmt::format("{}: inputs[{}]", where, i);
    NetInput input = parse_input(inputs[i], at);
    if (origins.defined_by.count(input.name))
      throw Error(fmt::format("{}: input '{}' is declared twice", at, input.name));
    origins.defined_by[input.name] = "net input";
    out.push_back(std::move(input));
  }
  return out;
}

std::vector<NetWeight> parse_weights(const Json &json, const std::string &where, TensorOrigins &origins) {
  const Json &weights = require_array(json, "weights", where);
  std::vector<NetWeight> out;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const std::string at = fmt::format("{}: weights[{}]", where, i);
    NetWeight weight = parse_weight(weights[i], at);
    if (auto it = origins.defined_by.find(weight.name); it != origins.defined_by.end())
      throw Error(fmt::format("{}: weight '{}' is already declared as a {}", at, weight.name, it->second));
    origins.defined_by[weight.name] = "weight";
    out.push_back(std::move(weight));
  }
  return out;
}

// "out_shapes": one shape per output (a Callback op declares its outputs).
std::vector<Shape> out_shape_list(const Json &j, std::size_t outputs, const std::string &where) {
  if (!j.is_array())
    throw Error(fmt::format("{}: \"out_shapes\" must be an array of shapes, not {}", where, type_name(j)));
  if (j.size() != outputs)
    throw Error(fmt::format("{}: \"out_shapes\" lists {} shape(s) for {} output(s); give one per output", where,
                            j.size(), outputs));
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < j.size(); ++i)
    shapes.push_back(parse_shape(j[i], fmt::format("{}: out_shapes[{}]", where, i)));
  return shapes;
}

// The host-layer keys of layer `l` (`at`): a Callback op needs its library
// and its output shapes; the keys mean nothing to other ops.
void parse_host_keys(const Json &l, const std::string &at, NetLayer &layer) {
  const HostOpPrefix prefix = host_op_prefix(layer.op);
  if (layer.op.starts_with("cpu."))
    throw Error(fmt::format("{}: 'cpu.' is the vendor's older prefix of host (AP) ops; write \"ap.{}\"", at,
                            layer.op.substr(4)));
  if (prefix != HostOpPrefix::none && host_op_name(layer.op).empty())
    throw Error(fmt::format("{}: a host op needs a name after its prefix (\"ap.topk\", \"callback.scale\")", at));
  if (prefix != HostOpPrefix::callback) {
    for (const char *key : {"library", "out_shapes"})
      if (l.contains(key))
        throw Error(fmt::format("{}: \"{}\" is for callback.<name> host layers only{}", at, key,
                                prefix == HostOpPrefix::vendor_ap
                                    ? " (an AP op runs from the build's libcustomcpuop.so and its shapes come "
                                      "from its shepe_infer)"
                                    : ""));
    return;
  }
  layer.library = require_string(l, "library", at);
  if (!l.contains("out_shapes"))
    throw Error(fmt::format("{}: \"out_shapes\" is missing; a callback op declares the shape of each output", at));
  layer.out_shapes = out_shape_list(l.at("out_shapes"), layer.outputs.size(), at);
}

// Layer i of "layers"; `layer_names` holds the names of the layers before it.
NetLayer parse_layer(const Json &l, std::size_t i, const std::string &where, std::set<std::string> &layer_names) {
  std::string at = fmt::format("{}: layer {}", where, i);
  if (!l.is_object()) throw Error(fmt::format("{}: must be an object, not {}", at, type_name(l)));
  check_keys(l,
             {"name", "op", "params", "inputs", "outputs", "out_dtypes", "dynamic", "library", "out_shapes", "check",
              "comment"},
             at);
  NetLayer layer;
  layer.op = require_string(l, "op", at);
  // Default names are also section names: "builtin.add" layers become add_<i>.
  const std::string_view short_op =
      layer.op.starts_with("builtin.") ? std::string_view(layer.op).substr(8) : std::string_view(layer.op);
  layer.name = l.contains("name") ? require_string(l, "name", at) : fmt::format("{}_{}", short_op, i);
  at = fmt::format("{}: layer {} ('{}', op {})", where, i, layer.name, layer.op);
  if (!layer_names.insert(layer.name).second)
    throw Error(fmt::format("{}: another layer is already named '{}'", at, layer.name));
  if (l.contains("params")) {
    if (!l.at("params").is_object())
      throw Error(fmt::format("{}: \"params\" must be an object, not {}", at, type_name(l.at("params"))));
    layer.params = l.at("params");
  }
  try {
    // builtin.expression's formula and builtin.cast's target are strings,
    // which packed params cannot hold; built-in layers read their JSON
    // params, not the packed ones.
    if (layer.op != "builtin.expression" && layer.op != "builtin.cast")
      layer.packed = PackedParams::from_json(layer.params);
  } catch (const Error &e) {
    throw Error(fmt::format("{}: params: {}", at, e.what()));
  }
  if (l.contains("dynamic")) {
    if (!l.at("dynamic").is_boolean())
      throw Error(fmt::format("{}: \"dynamic\" must be true or false, not {}", at, type_name(l.at("dynamic"))));
    layer.dynamic = l.at("dynamic").get<bool>();
  }
  layer.inputs = name_list(l, "inputs", at, true);
  layer.outputs = name_list(l, "outputs", at);
  if (l.contains("out_dtypes")) layer.out_dtypes = out_dtype_list(l.at("out_dtypes"), layer.outputs.size(), at);
  parse_host_keys(l, at, layer);
  if (l.contains("check")) {
    layer.check = require_string(l, "check", at);
    if (layer.check.empty() || layer.outputs.size() != 1)
      throw Error(fmt::format("{}: a \"check\" layer has one output and a non-empty check text", at));
  }
  return layer;
}

// Layer i's outputs are new tensors, each defined once.
void define_layer_outputs(const NetDescription &net, std::size_t i, const std::string &where,
                          TensorOrigins &origins) {
  const std::string at = fmt::format("{}: {}", where, net.layer_label(i));
  for (const std::string &out : net.layers[i].outputs) {
    if (auto it = origins.defined_by.find(out); it != origins.defined_by.end())
      throw Error(fmt::format("{}: output tensor '{}' is already defined by {}; every tensor is defined once", at,
                              out, it->second));
    origins.defined_by[out] = net.layer_label(i);
    origins.producer[out] = i;
  }
}

// Why input tensor `in` of layer i is not available when the layer runs:
// it is unknown, comes from the layer itself (a cycle) or from a later layer.
[[noreturn]] void refuse_layer_input(const NetDescription &net, std::size_t i, const std::string &in,
                                     const std::string &at, const TensorOrigins &origins) {
  const NetLayer &layer = net.layers[i];
  auto it = origins.producer.find(in);
  if (it == origins.producer.end()) {
    std::vector<std::string> known;
    for (const auto &[name, by] : origins.defined_by) known.push_back(name);
    throw Error(fmt::format("{}: unknown input tensor '{}': no net input or layer output has that name "
                            "(defined: {})",
                            at, in, fmt::join(known, ", ")));
  }
  std::set<std::size_t> seen;
  std::vector<std::size_t> path;
  if (it->second == i || reaches(it->second, i, net.layers, origins.producer, seen, path)) {
    std::vector<std::string> names{layer.name};
    if (it->second == i) names.push_back(layer.name);
    for (std::size_t p : path) names.push_back(net.layers[p].name);
    throw Error(fmt::format("{}: input tensor '{}' depends on this layer's own output: cycle {}", at, in,
                            fmt::join(names, " <- ")));
  }
  throw Error(fmt::format("{}: input tensor '{}' is used before it is defined (by {}); layers run in the "
                          "order they are listed",
                          at, in, net.layer_label(it->second)));
}

// Every layer input is a net input, a weight or an earlier layer's output.
void check_layer_inputs(const NetDescription &net, const std::string &where, const TensorOrigins &origins) {
  std::set<std::string> available;
  for (const NetInput &in : net.inputs) available.insert(in.name);
  for (const NetWeight &w : net.weights) available.insert(w.name);
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const NetLayer &layer = net.layers[i];
    const std::string at = fmt::format("{}: {}", where, net.layer_label(i));
    for (const std::string &in : layer.inputs)
      if (!available.count(in)) refuse_layer_input(net, i, in, at, origins);
    for (const std::string &out : layer.outputs) available.insert(out);
  }
}

// Every net output is a layer's output.
void check_net_outputs(const NetDescription &net, const std::string &where, const TensorOrigins &origins) {
  for (const std::string &out : net.outputs) {
    auto it = origins.defined_by.find(out);
    if (it == origins.defined_by.end())
      throw Error(fmt::format("{}: output '{}' is not a tensor of the net (no layer produces it)", where, out));
    if (!origins.producer.count(out))
      throw Error(fmt::format("{}: output '{}' is a {}; an output must be produced by a layer", where, out,
                              it->second));
  }
}

// "text_outputs", "scalar_outputs" (`key`): some of the net's outputs
// (net.h), each named once.
std::vector<std::string> parse_output_subset(const Json &json, const char *key, const NetDescription &net,
                                             const std::string &where) {
  std::vector<std::string> names = name_list(json, key, where);
  for (std::size_t i = 0; i < names.size(); ++i)
    if (std::find(net.outputs.begin(), net.outputs.end(), names[i]) == net.outputs.end())
      throw Error(fmt::format("{}: {}[{}] '{}' is not one of the net's \"outputs\" ({})", where, key, i, names[i],
                              fmt::join(net.outputs, ", ")));
  return names;
}

}  // namespace

std::vector<uint8_t> decode_base64(std::string_view text, std::string_view where) {
  if (text.size() % 4)
    throw Error(fmt::format("{}: base64 text of {} characters; padded base64 has a multiple of 4", where,
                            text.size()));
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    uint32_t group = 0;
    int padding = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      int value = -1;
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++padding;
        value = 0;
      } else if (const char *p = std::strchr(kBase64Digits, c); c != '\0' && p && padding == 0) {
        value = int(p - kBase64Digits);
      }
      if (value < 0)
        throw Error(fmt::format("{}: character {} ('{}') is not base64", where, i + k,
                                std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : fmt::format("\\x{:02x}", uint8_t(c))));
      group = group << 6 | uint32_t(value);
    }
    out.push_back(uint8_t(group >> 16));
    if (padding < 2) out.push_back(uint8_t(group >> 8));
    if (padding < 1) out.push_back(uint8_t(group));
  }
  return out;
}

std::string encode_base64(std::span<const uint8_t> bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    uint32_t group = uint32_t(bytes[i]) << 16;
    if (n > 1) group |= uint32_t(bytes[i + 1]) << 8;
    if (n > 2) group |= bytes[i + 2];
    for (std::size_t k = 0; k < 4; ++k) text += k <= n ? kBase64Digits[(group >> (18 - 6 * k)) & 63] : '=';
  }
  return text;
}

HostOpPrefix host_op_prefix(std::string_view op) {
  if (op.starts_with("ap.")) return HostOpPrefix::vendor_ap;
  if (op.starts_with("callback.")) return HostOpPrefix::callback;
  return HostOpPrefix::none;
}

std::string_view host_op_name(std::string_view op) {
  switch (host_op_prefix(op)) {
    case HostOpPrefix::vendor_ap: return op.substr(3);
    case HostOpPrefix::callback: return op.substr(9);
    case HostOpPrefix::none: break;
  }
  return op;
}

std::string NetDescription::layer_label(std::size_t index) const {
  if (index >= layers.size()) return fmt::format("layer {}", index);
  return fmt::format("layer {} ('{}', op {})", index, layers[index].name, layers[index].op);
}

NetDescription parse_net(const Json &json, std::string_view where_view, std::string_view default_name) {
  const std::string where(where_view);
  if (!json.is_object())
    throw Error(fmt::format("{}: a net description is a JSON object with \"inputs\", \"layers\" and \"outputs\", "
                            "not {}",
                            where, type_name(json)));
  check_keys(json, {"name", "description", "inputs", "weights", "layers", "outputs", "text_outputs", "scalar_outputs"},
             where);
  NetDescription net;
  net.name = json.contains("name") ? require_string(json, "name", where) : std::string(default_name);
  TensorOrigins origins;
  net.inputs = parse_inputs(json, where, origins);
  if (json.contains("weights")) net.weights = parse_weights(json, where, origins);

  const Json &layers = require_array(json, "layers", where);
  if (layers.empty()) throw Error(fmt::format("{}: \"layers\" is empty; a net needs at least one layer", where));
  std::set<std::string> layer_names;
  // First pass: the layers themselves, and who defines each tensor.
  for (std::size_t i = 0; i < layers.size(); ++i) {
    net.layers.push_back(parse_layer(layers[i], i, where, layer_names));
    define_layer_outputs(net, i, where, origins);
  }
  // Second pass: every input defined, and defined before use.
  check_layer_inputs(net, where, origins);

  net.outputs = name_list(json, "outputs", where);
  check_net_outputs(net, where, origins);
  if (json.contains("text_outputs")) net.text_outputs = parse_output_subset(json, "text_outputs", net, where);
  if (json.contains("scalar_outputs")) net.scalar_outputs = parse_output_subset(json, "scalar_outputs", net, where);
  return net;
}

NetDescription read_net(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the net description", path));
  std::stringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  check_json_depth(content, path);
  Json json;
  try {
    json = Json::parse(content);
  } catch (const nlohmann::json::exception &e) {
    throw Error(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  return parse_net(json, path, std::filesystem::path(path).stem().string());
}

}  // namespace tpu_runtime
