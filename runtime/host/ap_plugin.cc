// ap_plugin.cc: the compile-time side of AP ops (host_op.h):
// infer_ap_output_shapes and ap_reference, through the plugin library's
// createLayerInstance, as the vendor's compiler calls it (shepe_infer, then
// mlir_inference), but with return codes, empty results and faults checked.
//
// The vendor's compiler never frees a layer (the base class has no virtual
// destructor, so deleting one through it would be undefined): one layer per
// plugin and op name is made and kept for the process, as the vendor's
// runtime keeps one per op type.
#include <fmt/format.h>

#include <iterator>
#include <map>
#include <mutex>

// The vendor's class, through the sample op project's header: its layout and
// virtual-method order are the interface (customlayer/include/cpu_layer.h).
// Hidden: the header's inline members compiled here must not be what an op
// library's own calls to them bind to (this library is in the global scope).
#pragma GCC visibility push(hidden)
#include "cpu_layer.h"
#pragma GCC visibility pop
#include "host/host_buffers.h"
#include "host/host_call.h"
#include "loader/loader_internal.h"
#include "loader/shared_library.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/host_op.h"

namespace tpu_runtime {
namespace {

using CreateLayerFn = bmcpu::cpu_layer *(*)(const char *);

struct Plugins {
  std::mutex mutex;  // held for every call: layers are shared
  std::map<std::string, std::shared_ptr<SharedLibrary>> libraries;
  std::map<std::pair<std::string, std::string>, bmcpu::cpu_layer *> layers;
};
Plugins &plugins() {
  static Plugins *p = new Plugins();  // never destroyed: layers are never freed
  return *p;
}

std::string where_of(const std::string &plugin, const std::string &op) {
  return fmt::format("AP op '{}' ({})", op, loader::shown_path(plugin));
}

// Call with plugins().mutex held.
bmcpu::cpu_layer &layer_of(const std::string &plugin, const std::string &op) {
  Plugins &p = plugins();
  const std::string name = ap_upper_name(op);
  if (auto it = p.layers.find({plugin, name}); it != p.layers.end()) return *it->second;
  std::shared_ptr<SharedLibrary> &lib = p.libraries[plugin];
  if (!lib) lib = std::make_shared<SharedLibrary>(plugin);
  auto create = lib->require_function<CreateLayerFn>(
      "createLayerInstance", "the plugin's AP ops: rebuild_custom_plugin compiles ap_src/*.cpp into it");
  bmcpu::cpu_layer *layer = nullptr;
  auto call = [&] { layer = create(name.c_str()); };
  if (const std::string failure = host::call_host_code("host op " + op, call); !failure.empty())
    throw Error(fmt::format("{}: createLayerInstance(\"{}\") failed: {}", where_of(plugin, op), name, failure));
  if (!layer)
    throw Error(fmt::format("{}: createLayerInstance(\"{}\") knows no such op (add it to the factory in "
                            "ap_src/ap_layer.cpp)",
                            where_of(plugin, op), name));
  p.layers[{plugin, name}] = layer;
  return *layer;
}

std::vector<Shape> infer_locked(const std::string &plugin, const std::string &op, std::vector<std::uint8_t> &param,
                                int param_size, const std::vector<Shape> &inputs) {
  bmcpu::cpu_layer &layer = layer_of(plugin, op);
  const std::vector<std::vector<int>> input_shapes(inputs.begin(), inputs.end());
  std::vector<std::vector<int>> output_shapes;
  int status = 0;
  auto call = [&] { status = layer.shepe_infer(param.data(), param_size, input_shapes, output_shapes); };
  const std::string where = where_of(plugin, op);
  if (const std::string failure = host::call_host_code("host op " + op, call); !failure.empty())
    throw Error(fmt::format("{}: shepe_infer failed: {}", where, failure));
  if (status != 0) throw Error(fmt::format("{}: shepe_infer returned {} (0 = success)", where, status));
  if (output_shapes.empty())
    throw Error(fmt::format("{}: shepe_infer gave no output shape (it must append one per output)", where));
  for (const auto &shape : output_shapes) host::element_count(shape, where + ": an output shape from shepe_infer");
  return {output_shapes.begin(), output_shapes.end()};
}

// The parameters with zeroed elements behind them (see host_run.cc).
std::vector<std::uint8_t> padded(const std::vector<std::uint8_t> &params, const std::string &where) {
  if (params.empty() || params.size() % 64 != 0)
    throw Error(fmt::format("{}: the packed parameters are {} bytes; expected 64 x (1 + n)", where, params.size()));
  std::vector<std::uint8_t> copy = params;
  copy.resize(params.size() + 16 * 64, 0);
  return copy;
}

// CPU_DATA_TYPE_T (customap_common.h) -> ours; fp32 for anything else.
Dtype from_cpu_dtype(int value) {
  constexpr Dtype kByValue[] = {Dtype::fp32,  Dtype::fp16,   Dtype::int8,  Dtype::uint8, Dtype::int16,
                                Dtype::uint16, Dtype::int32, Dtype::uint32, Dtype::bf16};
  return value >= 0 && value < int(std::size(kByValue)) ? kByValue[value] : Dtype::fp32;
}

// The outputs' dtypes from dtype_infer when the op defines it (the compiler
// never asks, so a forgotten one is no error): fp32 otherwise. Top-k's
// indices are int32.
std::vector<Dtype> output_dtypes(bmcpu::cpu_layer &layer, const std::string &op, std::vector<std::uint8_t> &param,
                                 int param_size, std::size_t inputs, std::size_t outputs) {
  const std::vector<int> input_dtypes(inputs, 0);
  std::vector<int> dtypes;
  int status = -1;
  auto call = [&] { status = layer.dtype_infer(param.data(), std::size_t(param_size), input_dtypes, dtypes); };
  const std::string failure = host::call_host_code("host op " + op, call);
  std::vector<Dtype> result(outputs, Dtype::fp32);
  if (!failure.empty() || status != 0) return result;
  for (std::size_t i = 0; i < outputs && i < dtypes.size(); ++i) result[i] = from_cpu_dtype(dtypes[i]);
  return result;
}

}  // namespace

std::vector<Shape> infer_ap_output_shapes(const std::string &plugin_library, const std::string &op,
                                          const std::vector<std::uint8_t> &params, const std::vector<Shape> &inputs) {
  std::vector<std::uint8_t> param = padded(params, where_of(plugin_library, op));
  const std::lock_guard<std::mutex> lock(plugins().mutex);
  return infer_locked(plugin_library, op, param, int(params.size()), inputs);
}

std::vector<HostTensor> ap_reference(const std::string &plugin_library, const std::string &op,
                                     const std::vector<std::uint8_t> &params, const std::vector<HostTensor> &inputs) {
  const std::string where = where_of(plugin_library, op);
  std::vector<std::uint8_t> param = padded(params, where);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype != Dtype::fp32)
      throw Error(fmt::format("{}: input {} is {}; the reference takes fp32 inputs (as the compiler's interpreter "
                              "hands them)",
                              where, i, dtype_name(inputs[i].dtype)));
  std::vector<Shape> input_shapes;
  for (const HostTensor &t : inputs) input_shapes.push_back(t.shape);
  const std::lock_guard<std::mutex> lock(plugins().mutex);
  const std::vector<Shape> shapes = infer_locked(plugin_library, op, param, int(params.size()), input_shapes);
  bmcpu::cpu_layer &layer = layer_of(plugin_library, op);
  const std::vector<Dtype> dtypes = output_dtypes(layer, op, param, int(params.size()), inputs.size(), shapes.size());
  std::vector<HostTensor> specs;
  for (std::size_t i = 0; i < shapes.size(); ++i) specs.push_back({dtypes[i], shapes[i], {}});
  host::HostBuffers buffers = host::make_buffers(inputs, specs, where);
  std::vector<float *> in, out;
  for (auto &b : buffers.inputs) in.push_back(reinterpret_cast<float *>(b.data()));
  for (auto &b : buffers.outputs) out.push_back(reinterpret_cast<float *>(b.data()));
  const std::vector<std::vector<int>> in_shapes(input_shapes.begin(), input_shapes.end());
  std::vector<std::vector<int>> out_shapes;
  for (const HostTensor &s : specs) out_shapes.push_back(s.shape);
  auto call = [&] { layer.mlir_inference(param.data(), int(params.size()), in, out, in_shapes, out_shapes); };
  if (const std::string failure = host::call_host_code("host op " + op, call); !failure.empty())
    throw Error(fmt::format("{}: mlir_inference failed: {}", where, failure));
  if (const std::string overrun = host::overrun_outputs(buffers, specs); !overrun.empty())
    throw Error(fmt::format("{}: mlir_inference {}", where, overrun));
  return host::take_outputs(buffers, specs, {out_shapes.begin(), out_shapes.end()}, where);
}

}  // namespace tpu_runtime
