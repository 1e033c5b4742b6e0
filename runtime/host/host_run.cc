// host_run.cc: run_host_op, one call of a host op on host buffers.
#include <fmt/format.h>

#include <cstring>

#include "host/host_buffers.h"
#include "host/host_call.h"
#include "host/host_library_state.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/host_op.h"

namespace tpu_runtime {
namespace {

constexpr std::size_t kParamElementBytes = 64;  // sizeof(custom_param_t)
// Zeroed elements behind the parameters, not counted in param_size: an op
// that reads a parameter it was not given sees 0, not whatever follows.
constexpr std::size_t kParamGuardElements = 16;

std::vector<std::uint8_t> padded_params(const std::vector<std::uint8_t> &params, const std::string &where) {
  if (params.empty() || params.size() % kParamElementBytes != 0)
    throw Error(fmt::format("{}: the packed parameters are {} bytes; expected 64 x (1 + n) (custom_param_t "
                            "elements, element 0 reserved)",
                            where, params.size()));
  std::vector<std::uint8_t> padded(params.size() + kParamGuardElements * kParamElementBytes, 0);
  std::memcpy(padded.data(), params.data(), params.size());
  return padded;
}

std::vector<float *> float_pointers(std::vector<std::vector<std::uint8_t>> &buffers) {
  std::vector<float *> pointers;
  for (auto &buffer : buffers) pointers.push_back(reinterpret_cast<float *>(buffer.data()));
  return pointers;
}

// "layer top1: host op 'ap.topk' (lib/libcustomapop.so): <what>".
std::string failed(const std::string &where, const std::string &op, const HostOpLibrary::State &s,
                   const std::string &what) {
  return fmt::format("{}: host op '{}' ({}): {}", where, op, s.shown, what);
}

HostOpRun run_vendor_ap(const HostOpLibrary &lib, const std::string &op, const std::vector<std::uint8_t> &params,
                        const std::vector<HostTensor> &inputs, const std::vector<HostTensor> &output_specs,
                        const std::string &where) {
  HostOpLibrary::State &s = lib.state();
  const int op_type = lib.ap_op_type(op);
  std::vector<std::uint8_t> param = padded_params(params, where);
  host::HostBuffers buffers = host::make_buffers(inputs, output_specs, where);
  const std::vector<float *> input_pointers = float_pointers(buffers.inputs);
  const std::vector<float *> output_pointers = float_pointers(buffers.outputs);
  std::vector<std::vector<int>> input_shapes, output_shapes;
  for (const HostTensor &t : inputs) input_shapes.push_back(t.shape);
  for (const HostTensor &t : output_specs) output_shapes.push_back(t.shape);
  int status = 0;
  HostOpRun run;
  auto call = [&] {
    status = s.process(s.handle, op_type, param.data(), int(params.size()), input_pointers, input_shapes,
                       output_pointers, output_shapes);
  };
  std::string failure;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    failure = host::call_host_code("host op " + op, call, &run.host_seconds);
  }
  if (!failure.empty()) throw Error(failed(where, op, s, failure));
  if (const std::string overrun = host::overrun_outputs(buffers, output_specs); !overrun.empty())
    throw Error(failed(where, op, s, overrun));
  if (status != 0) throw Error(failed(where, op, s, fmt::format("customcpu_process returned {} (0 = success)", status)));
  std::vector<Shape> shapes(output_shapes.begin(), output_shapes.end());
  run.outputs = host::take_outputs(buffers, output_specs, shapes, fmt::format("{}: host op '{}' ({})", where, op, s.shown));
  return run;
}

HostOpRun run_callback(const HostOpLibrary &lib, const std::string &op, const std::vector<HostTensor> &inputs,
                       const std::vector<HostTensor> &output_specs, const std::string &where) {
  HostOpLibrary::State &s = lib.state();
  host::HostBuffers buffers = host::make_buffers(inputs, output_specs, where);
  std::vector<void *> data, outputs;
  std::vector<std::uint32_t> counts;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    data.push_back(buffers.inputs[i].data());
    const std::size_t count = host::element_count(inputs[i].shape, where);
    if (count > UINT32_MAX) throw Error(fmt::format("{}: input {} has more than 2^32 - 1 elements", where, i));
    counts.push_back(std::uint32_t(count));
  }
  for (auto &buffer : buffers.outputs) outputs.push_back(buffer.data());
  HostOpRun run;
  auto call = [&] { s.callback(data, counts, outputs, op); };
  std::string failure;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    failure = host::call_host_code("host op " + op, call, &run.host_seconds);
  }
  if (!failure.empty()) throw Error(failed(where, op, s, failure));
  if (const std::string overrun = host::overrun_outputs(buffers, output_specs); !overrun.empty())
    throw Error(failed(where, op, s, overrun));
  std::vector<Shape> shapes;
  for (const HostTensor &spec : output_specs) shapes.push_back(spec.shape);
  run.outputs = host::take_outputs(buffers, output_specs, shapes, where);
  return run;
}

}  // namespace

HostOpRun run_host_op(const HostOpLibrary &lib, const std::string &op, const std::vector<std::uint8_t> &params,
                      const std::vector<HostTensor> &inputs, const std::vector<HostTensor> &output_specs,
                      const std::string &where) {
  if (lib.kind() == HostOpKind::vendor_ap) return run_vendor_ap(lib, op, params, inputs, output_specs, where);
  return run_callback(lib, op, inputs, output_specs, where);
}

}  // namespace tpu_runtime
