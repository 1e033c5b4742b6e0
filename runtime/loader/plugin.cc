// plugin.cc: libplugin_custom.so, the host hooks of the compiler flow.
//
// Each hook is looked up as "<hook>_<op>" when it is called; an absent hook
// behaves as the vendor compiler's default. Hooks receive a copy of the
// parameters with element 0 zeroed, as the compiler passes them.
#include <array>
#include <type_traits>

#include <fmt/ranges.h>

#include "cmodel_host.h"
#include "loader/loader_internal.h"
#include "tpu_onnx_op.h"
#include "tpu_op_metadata.h"
#include "tpu_runtime/custom_libraries.h"

namespace tpu_runtime {
namespace {

using ShapeRow = int[MAX_SHAPE_DIMS];
using InferenceFn = void (*)(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                             const int *input_dims, const float **inputs, float **outputs);
using ShapeInferenceFn = void (*)(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                                  const int *input_dims, int (*output_shapes)[MAX_SHAPE_DIMS], int *output_dims);
using FlagFn = bool (*)(void *param, int param_size);
using AllowDataSplitFn = bool (*)(void *param, int param_size, int axis, group_type_t group_type);
using BackwardFn = bool (*)(void *param, int param_size, int *in_idx, int *in_slice, int out_idx, int out_slice);
using MetadataFn = void (*)(void *param, int param_size, int num_inputs, tpu_op_metadata_t *metadata);

// The parameters as a plugin hook sees them: element 0 is 0.
PackedParams hook_params(const PackedParams &params) {
  PackedParams copy = params;
  copy.clear_reserved();
  return copy;
}

// input_shapes / input_dims arrays of the hook interface.
struct ShapeArrays {
  std::vector<std::array<int, MAX_SHAPE_DIMS>> shapes;
  std::vector<int> dims;
};

ShapeArrays shape_arrays(const SharedLibrary &lib, const std::string &op, const std::vector<Shape> &shapes) {
  ShapeArrays arrays;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i].size() > MAX_SHAPE_DIMS)
      throw Error(fmt::format("{}: op '{}': input {} has {} dims; the hooks take at most {}", lib.path(), op, i,
                              shapes[i].size(), MAX_SHAPE_DIMS));
    std::array<int, MAX_SHAPE_DIMS> row{};
    for (std::size_t d = 0; d < shapes[i].size(); ++d) row[d] = shapes[i][d];
    arrays.shapes.push_back(row);
    arrays.dims.push_back(int(shapes[i].size()));
  }
  return arrays;
}

const int (*rows(const ShapeArrays &arrays))[MAX_SHAPE_DIMS] {
  return arrays.shapes.empty() ? nullptr : reinterpret_cast<const int(*)[MAX_SHAPE_DIMS]>(arrays.shapes.data());
}

// Runs a hook of the plugin through cmodel_call_user_code (cmodel_host.h):
// an exit(), abort(), failed assert() or fault in the hook fails the call
// with a message naming it, instead of ending the process.
template <typename Call>
void call_hook(const SharedLibrary &lib, const std::string &name, Call &&call) {
  const std::string what = fmt::format("plugin hook {}", name);
  auto thunk = [](void *p) { (*static_cast<std::remove_reference_t<Call> *>(p))(); };
  if (cmodel_call_user_code(what.c_str(), thunk, &call) != 0) throw Error(loader::kernel_failure(lib, ""));
}

// metadata_<op>'s answer, checked; declared = false without the hook.
OpMetadata read_metadata(const SharedLibrary &lib, const std::string &op, const PackedParams &params,
                         int num_inputs) {
  const std::string name = "metadata_" + op;
  OpMetadata m;
  auto fn = lib.find_function<MetadataFn>(name);
  if (!fn) return m;
  // Zeroed first: a hook sets only what it declares, the rest keeps its default.
  tpu_op_metadata_t raw{};
  PackedParams copy = hook_params(params);
  call_hook(lib, name, [&] { fn(copy.data(), copy.size_bytes(), num_inputs, &raw); });
  const std::string who = fmt::format("{}: {}", lib.path(), name);
  if (raw.num_input_layouts < 0 || raw.num_input_layouts > TPU_OP_METADATA_MAX_LAYOUTS)
    throw Error(fmt::format("{}: op '{}' metadata: num_input_layouts is {}; it must be 0 to {}", who, op,
                            raw.num_input_layouts, TPU_OP_METADATA_MAX_LAYOUTS));
  m.declared = true;
  m.inplace_inputs = raw.num_inplace_inputs;
  m.elementwise = raw.is_elementwise;
  m.stateless = raw.is_stateless;
  m.multi_core = raw.is_multi_core;
  for (int k = 0; k < raw.num_input_layouts; ++k)
    m.input_layouts.push_back({raw.input_layouts[k].input, raw.input_layouts[k].alignment,
                               raw.input_layouts[k].innermost_multiple});
  check_op_metadata(m, op, num_inputs, who);
  return m;
}

// An element-wise op's inputs all have input 0's shape: each output
// element then has exactly one element of each input at its index.
void check_elementwise_inputs(const SharedLibrary &lib, const std::string &op, const std::vector<Shape> &shapes) {
  if (shapes.empty())
    throw Error(fmt::format("{}: op '{}' declares itself element-wise (metadata_{}) but the layer has no inputs",
                            lib.path(), op, op));
  for (std::size_t i = 1; i < shapes.size(); ++i)
    if (shapes[i] != shapes[0])
      throw Error(fmt::format("{}: op '{}' declares itself element-wise (metadata_{}), but input {} has the shape "
                              "[{}] and input 0 [{}]; an element-wise op's inputs all have input 0's shape",
                              lib.path(), op, op, i, fmt::join(shapes[i], ","), fmt::join(shapes[0], ",")));
}

bool backward(const SharedLibrary &lib, const std::string &hook, const std::string &documented_hook,
              const std::string &op, const PackedParams &params, int out_idx, int out_slice, int *in_idx,
              int *in_slice) {
  if (!in_idx || !in_slice)
    throw Error(fmt::format("{}: {}{}: in_idx and in_slice must not be null", lib.path(), hook, op));
  auto fn = lib.find_function<BackwardFn>(hook + op);
  if (!fn) fn = lib.find_function<BackwardFn>(documented_hook + op);
  if (!fn) {  // vendor default: the input slice is the output slice
    *in_idx = out_idx;
    *in_slice = out_slice;
    return true;
  }
  PackedParams copy = hook_params(params);
  // The compiler pre-fills -1 so a hook that forgets an output is visible.
  *in_idx = -1;
  *in_slice = -1;
  bool result = false;
  call_hook(lib, hook + op, [&] { result = fn(copy.data(), copy.size_bytes(), in_idx, in_slice, out_idx, out_slice); });
  // An element-wise op's slices are the identity: a hook saying otherwise
  // contradicts the claim, and which of the two is wrong only its author knows.
  if (result && (*in_idx != out_idx || *in_slice != out_slice) && read_metadata(lib, op, params, -1).elementwise)
    throw Error(fmt::format("{}: op '{}' declares itself element-wise (metadata_{}), but {}{} maps output slice "
                            "[{}, {}) to input slice [{}, {}); an element-wise op's input slice is its output slice",
                            lib.path(), op, op, hook, op, out_idx, out_idx + out_slice, *in_idx, *in_idx + *in_slice));
  return result;
}

}  // namespace

Plugin Plugin::none() {
  Plugin plugin;
  plugin.lib_ = loader::no_library("libplugin_custom.so");
  return plugin;
}

Plugin Plugin::open(const std::string &path) {
  Plugin plugin;
  plugin.lib_ = loader::open_library(path, "libplugin_custom.so", false);
  return plugin;
}

OpMetadata Plugin::metadata(const std::string &op, const PackedParams &params, int num_inputs) const {
  return read_metadata(*lib_, op, params, num_inputs);
}

bool Plugin::has_symbol(const std::string &name) const { return lib_->find(name) != nullptr; }

std::optional<ParamTypes> Plugin::param_types(const std::string &op) const {
  using DeclarationFn = const char *(*)();
  const std::string name = "param_types_" + op;
  auto fn = lib_->find_function<DeclarationFn>(name);
  if (!fn) return std::nullopt;
  const char *declaration = nullptr;
  call_hook(*lib_, name, [&] { declaration = fn(); });
  if (!declaration) throw Error(fmt::format("{}: {} returned a null pointer", path(), name));
  return parse_param_types(declaration, fmt::format("{}: {}", path(), name));
}

namespace detail {
OnnxOpDefinition convert_onnx_op(const tpu_onnx_op_t &raw, const std::string &op, const std::string &who);
}

std::optional<OnnxOpDefinition> Plugin::onnx_op(const std::string &op) const {
  using DeclarationFn = const tpu_onnx_op_t *(*)();
  const std::string name = "onnx_op_" + op;
  auto fn = lib_->find_function<DeclarationFn>(name);
  if (!fn) return std::nullopt;
  const tpu_onnx_op_t *declaration = nullptr;
  call_hook(*lib_, name, [&] { declaration = fn(); });
  const std::string who = fmt::format("{}: {}", path(), name);
  if (!declaration) throw Error(fmt::format("{} returned a null pointer", who));
  OnnxOpDefinition definition = detail::convert_onnx_op(*declaration, op, who);
  check_onnx_op_definition(definition, param_types(op), who);
  return definition;
}

PackedParams Plugin::pack_params(const std::string &op, const nlohmann::ordered_json &params,
                                 std::vector<std::string> &warnings) const {
  if (const std::optional<ParamTypes> types = param_types(op)) return PackedParams::from_json(params, *types, op, warnings);
  // Undeclared: the JSON kinds decide. An integer becomes an int_t; a
  // parser reading a float there would see its bits (1 as 1.4e-45), so each
  // one is named, with the way to have it checked.
  if (params.is_object())
    for (auto it = params.begin(); it != params.end(); ++it)
      if (it.value().is_number_integer())
        warnings.push_back(fmt::format("op '{}' parameter '{}': the integer {} is packed as an int (int_t): the op "
                                       "declares no parameter types, so if its parser reads a float here it sees the "
                                       "integer's bits; write {}.0 for a float, or declare param_types_{} in the "
                                       "plugin",
                                       op, it.key(), it.value().dump(), it.value().dump(), op));
  return PackedParams::from_json(params);
}

void Plugin::inference(const std::string &op, const PackedParams &params, const std::vector<Shape> &input_shapes,
                       const std::vector<const float *> &inputs, const std::vector<float *> &outputs) const {
  const std::string name = "inference_" + op;
  auto fn = lib_->find_function<InferenceFn>(name);
  if (!fn)
    throw Error(fmt::format("{}: no {}: op '{}' has no inference hook, which every op needs (the reference "
                            "the compiler and the op tester compare with)",
                            path(), name, op));
  if (input_shapes.size() != inputs.size())
    throw Error(fmt::format("{}: {}: {} input shapes for {} input buffers", path(), name, input_shapes.size(),
                            inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i]) throw Error(fmt::format("{}: {}: input buffer {} is null", path(), name, i));
  for (std::size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i]) throw Error(fmt::format("{}: {}: output buffer {} is null", path(), name, i));
  const ShapeArrays shapes = shape_arrays(*lib_, op, input_shapes);
  std::vector<const float *> in = inputs;
  std::vector<float *> out = outputs;
  PackedParams copy = hook_params(params);
  call_hook(*lib_, name, [&] {
    fn(copy.data(), copy.size_bytes(), rows(shapes), loader::data_or_null(shapes.dims), loader::data_or_null(in),
       loader::data_or_null(out));
  });
}

std::vector<Shape> Plugin::shape_inference(const std::string &op, const PackedParams &params,
                                           const std::vector<Shape> &input_shapes, int num_outputs) const {
  const std::string name = "shape_inference_" + op;
  if (num_outputs < 1)
    throw Error(fmt::format("{}: {}: num_outputs = {}; an op has at least one output", path(), name, num_outputs));
  const ShapeArrays shapes = shape_arrays(*lib_, op, input_shapes);
  auto fn = lib_->find_function<ShapeInferenceFn>(name);
  const bool elementwise = read_metadata(*lib_, op, params, int(input_shapes.size())).elementwise;
  if (elementwise) check_elementwise_inputs(*lib_, op, input_shapes);
  if (!fn && elementwise) return std::vector<Shape>(std::size_t(num_outputs), input_shapes[0]);
  if (!fn) {
    // Vendor default: output 0 takes input 0's shape; nothing defines the others.
    if (num_outputs > 1)
      throw Error(fmt::format("{}: no {}: the default gives only output 0 a shape (input 0's), so op '{}' with {} "
                              "outputs must define {}",
                              path(), name, op, num_outputs, name));
    if (input_shapes.empty())
      throw Error(fmt::format("{}: no {}: the default copies input 0's shape, but op '{}' has no inputs", path(),
                              name, op));
    return {input_shapes[0]};
  }
  std::vector<std::array<int, MAX_SHAPE_DIMS>> output_shapes(static_cast<std::size_t>(num_outputs));
  std::vector<int> output_dims(std::size_t(num_outputs), 0);
  PackedParams copy = hook_params(params);
  call_hook(*lib_, name, [&] {
    fn(copy.data(), copy.size_bytes(), rows(shapes), loader::data_or_null(shapes.dims),
       reinterpret_cast<int(*)[MAX_SHAPE_DIMS]>(output_shapes.data()), output_dims.data());
  });
  std::vector<Shape> result;
  for (int i = 0; i < num_outputs; ++i) {
    const int dims = output_dims[std::size_t(i)];
    if (dims < 0 || dims > MAX_SHAPE_DIMS)
      throw Error(fmt::format("{}: {} gave output {} dims = {}; expected 0 to {}", path(), name, i, dims,
                              MAX_SHAPE_DIMS));
    const auto &row = output_shapes[std::size_t(i)];
    result.emplace_back(row.begin(), row.begin() + dims);
    if (elementwise && result.back() != input_shapes[0])
      throw Error(fmt::format("{}: op '{}' declares itself element-wise (metadata_{}), but {} gives output {} the "
                              "shape [{}], not input 0's [{}]",
                              path(), op, op, name, i, fmt::join(result.back(), ","), fmt::join(input_shapes[0], ",")));
  }
  return result;
}

bool Plugin::force_dynamic_run(const std::string &op, const PackedParams &params) const {
  auto fn = lib_->find_function<FlagFn>("force_dynamic_run_" + op);
  if (!fn) return false;
  PackedParams copy = hook_params(params);
  bool result = false;
  call_hook(*lib_, "force_dynamic_run_" + op, [&] { result = fn(copy.data(), copy.size_bytes()); });
  return result;
}

bool Plugin::local_gen_support(const std::string &op, const PackedParams &params) const {
  auto fn = lib_->find_function<FlagFn>("local_gen_support_" + op);
  // An element-wise op runs on any slice with identity slicing: nothing
  // more is needed to put it into a layer group (its local kernel aside).
  if (!fn) return read_metadata(*lib_, op, params, -1).elementwise;
  PackedParams copy = hook_params(params);
  bool result = false;
  call_hook(*lib_, "local_gen_support_" + op, [&] { result = fn(copy.data(), copy.size_bytes()); });
  return result;
}

bool Plugin::allow_data_split(const std::string &op, const PackedParams &params, int axis,
                              group_type_t group_type) const {
  auto fn = lib_->find_function<AllowDataSplitFn>("allow_data_split_" + op);
  if (!fn) return true;
  PackedParams copy = hook_params(params);
  bool result = true;
  call_hook(*lib_, "allow_data_split_" + op, [&] { result = fn(copy.data(), copy.size_bytes(), axis, group_type); });
  return result;
}

bool Plugin::backward_h(const std::string &op, const PackedParams &params, int out_idx, int out_slice, int *in_idx,
                        int *in_slice) const {
  return backward(*lib_, "backward_h_", "backwardh_", op, params, out_idx, out_slice, in_idx, in_slice);
}

bool Plugin::backward_w(const std::string &op, const PackedParams &params, int out_idx, int out_slice, int *in_idx,
                        int *in_slice) const {
  return backward(*lib_, "backward_w_", "backwardw_", op, params, out_idx, out_slice, in_idx, in_slice);
}

}  // namespace tpu_runtime
