// inplace_order.h (private): the order a model's layers run in when some
// update a tensor in place (metadata_<op>'s num_inplace_inputs,
// tpu_op_metadata.h; docs/custom-layer-build.md, "Op metadata").
//
// A layer that updates tensor T in place (its output i takes T's memory)
// must run after every other layer that reads T, or they would read the
// updated values. The net's order is kept, except that such readers move
// before the in-place layer when their own inputs allow it (a stable
// topological order: among the layers ready to run, the first in the net
// runs first). What cannot be ordered or would lose values is refused, with
// an Error naming the layers and tensors:
//   - a cycle (a reader of T that needs the in-place layer's output),
//   - two layers updating the same tensor in place,
//   - a layer reading T also through another of its inputs,
//   - T a weight (its values must survive the run) or a net output (its
//     values would be overwritten before the run ends),
//   - more in-place inputs than the layer has outputs.
// A net input may be updated in place: the run copies the caller's arrays
// into device memory, so they are never touched.
// Stateful layers (every layer whose op does not declare is_stateless) keep
// their order among themselves: a state's updates happen as the net says.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tpu_runtime/net.h"

namespace tpu_runtime::detail {

struct InplaceOrder {
  std::vector<std::size_t> order;  // indices into net.layers, in run order
  std::vector<std::string> moves;  // one line per layer that moved, for the build's warnings
  bool identity() const;
};

// `inplace_inputs[i]`: layer i's num_inplace_inputs (0 for layers without
// metadata); `stateful[i]`: layer i keeps state. `source` starts every error.
InplaceOrder order_for_inplace(const NetDescription &net, const std::vector<int> &inplace_inputs,
                               const std::vector<bool> &stateful, std::string_view source);

// `net` with its layers in `order`.
NetDescription reordered_net(const NetDescription &net, const std::vector<std::size_t> &order);

}  // namespace tpu_runtime::detail
