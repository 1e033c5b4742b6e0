// host_buffers.h (private): the host buffers a host op reads and writes:
// copies of its inputs, and outputs sized by their static shapes with guard
// bytes behind each, checked after the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpu_runtime/host_op.h"

namespace tpu_runtime::host {

// Bytes behind every output, filled with a pattern an op is unlikely to
// write; any change is a write past the output.
inline constexpr std::size_t kGuardBytes = 64;
inline constexpr std::uint8_t kGuardByte = 0xA5;

// Elements of `shape`; Error naming `what` for a negative dimension or a
// tensor larger than the emulated memory.
std::size_t element_count(const Shape &shape, const std::string &what);
std::string shape_text(const Shape &shape);

struct HostBuffers {
  std::vector<std::vector<std::uint8_t>> inputs;   // copies: an op may scribble on them
  std::vector<std::vector<std::uint8_t>> outputs;  // static size + guard, zeroed
  std::vector<std::size_t> output_bytes;           // static size, without the guard
};

// Checks every input's byte count against its shape and dtype; `where`
// starts the messages.
HostBuffers make_buffers(const std::vector<HostTensor> &inputs, const std::vector<HostTensor> &output_specs,
                         const std::string &where);

// "" when every guard is intact, else which output was overrun.
std::string overrun_outputs(const HostBuffers &buffers, const std::vector<HostTensor> &output_specs);

// The outputs as the op left them, in `shapes` (checked: same rank, no
// dimension larger than the static shape; Error naming `where` otherwise).
std::vector<HostTensor> take_outputs(HostBuffers &buffers, const std::vector<HostTensor> &output_specs,
                                     const std::vector<Shape> &shapes, const std::string &where);

}  // namespace tpu_runtime::host
