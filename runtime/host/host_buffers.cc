// host_buffers.cc: host_buffers.h.
#include "host/host_buffers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "tpu_runtime/error.h"

namespace tpu_runtime::host {

std::size_t element_count(const Shape &shape, const std::string &what) {
  std::uint64_t count = 1;
  for (int dim : shape) {
    if (dim < 0) throw Error(fmt::format("{}: shape {} has a negative dimension", what, shape_text(shape)));
    count *= std::uint64_t(dim);
    if (count > kGlobalMemoryBytes)
      throw Error(fmt::format("{}: shape {} is larger than the emulated memory", what, shape_text(shape)));
  }
  return std::size_t(count);
}

std::string shape_text(const Shape &shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return text + "]";
}

HostBuffers make_buffers(const std::vector<HostTensor> &inputs, const std::vector<HostTensor> &output_specs,
                         const std::string &where) {
  HostBuffers buffers;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string what = fmt::format("{}: input {}", where, i);
    const std::size_t bytes = element_count(inputs[i].shape, what) * dtype_size(inputs[i].dtype);
    if (inputs[i].bytes.size() != bytes)
      throw Error(fmt::format("{} ({} {}) holds {} bytes, its shape and dtype need {}", what,
                              dtype_name(inputs[i].dtype), shape_text(inputs[i].shape), inputs[i].bytes.size(), bytes));
    // At least one byte, so an empty tensor still has a valid pointer.
    std::vector<std::uint8_t> copy(std::max<std::size_t>(bytes, 1), 0);
    if (bytes) std::memcpy(copy.data(), inputs[i].bytes.data(), bytes);
    buffers.inputs.push_back(std::move(copy));
  }
  for (std::size_t i = 0; i < output_specs.size(); ++i) {
    const std::string what = fmt::format("{}: output {}", where, i);
    const std::size_t bytes = element_count(output_specs[i].shape, what) * dtype_size(output_specs[i].dtype);
    std::vector<std::uint8_t> buffer(bytes + kGuardBytes, 0);
    std::fill(buffer.begin() + std::ptrdiff_t(bytes), buffer.end(), kGuardByte);
    buffers.outputs.push_back(std::move(buffer));
    buffers.output_bytes.push_back(bytes);
  }
  return buffers;
}

std::string overrun_outputs(const HostBuffers &buffers, const std::vector<HostTensor> &output_specs) {
  std::string found;
  for (std::size_t i = 0; i < buffers.outputs.size(); ++i) {
    const auto &buffer = buffers.outputs[i];
    const auto guard = buffer.begin() + std::ptrdiff_t(buffers.output_bytes[i]);
    const auto changed = std::find_if(guard, buffer.end(), [](std::uint8_t b) { return b != kGuardByte; });
    if (changed == buffer.end()) continue;
    found += fmt::format("{}wrote past the end of output {} ({} {}, {} bytes): guard byte {} behind it was overwritten",
                         found.empty() ? "" : "; ", i, dtype_name(output_specs[i].dtype),
                         shape_text(output_specs[i].shape), buffers.output_bytes[i], changed - guard);
  }
  return found;
}

std::vector<HostTensor> take_outputs(HostBuffers &buffers, const std::vector<HostTensor> &output_specs,
                                     const std::vector<Shape> &shapes, const std::string &where) {
  if (shapes.size() != output_specs.size())
    throw Error(fmt::format("{}: the op left {} output shapes for {} outputs", where, shapes.size(),
                            output_specs.size()));
  std::vector<HostTensor> outputs;
  for (std::size_t i = 0; i < output_specs.size(); ++i) {
    const Shape &limit = output_specs[i].shape;
    bool fits = shapes[i].size() == limit.size();
    for (std::size_t d = 0; fits && d < limit.size(); ++d) fits = shapes[i][d] >= 0 && shapes[i][d] <= limit[d];
    if (!fits)
      throw Error(fmt::format("{}: the op set output {}'s shape to {}, which does not fit its static shape {} (a "
                              "dynamic output shape may be smaller, never larger, and keeps its rank)",
                              where, i, shape_text(shapes[i]), shape_text(limit)));
    HostTensor tensor{output_specs[i].dtype, shapes[i], {}};
    const std::size_t bytes = element_count(shapes[i], where) * dtype_size(tensor.dtype);
    tensor.bytes.assign(buffers.outputs[i].begin(), buffers.outputs[i].begin() + std::ptrdiff_t(bytes));
    outputs.push_back(std::move(tensor));
  }
  return outputs;
}

}  // namespace tpu_runtime::host
