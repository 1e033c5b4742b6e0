// layer_merging.h (private): identical stateless layers computed once
// (common-subexpression elimination; metadata_<op>'s is_stateless,
// tpu_op_metadata.h; docs/custom-layer-build.md, "Op metadata").
//
// Two layers are identical when they have the same op, the same packed
// parameter bytes, the same input tensors (after earlier merges), the same
// output count and out_dtypes and the same "dynamic" flag. A later layer
// identical to an earlier one whose op declares itself stateless is dropped:
// the layers after it read the earlier layer's outputs instead. A net output
// keeps its name: when the dropped layer's output is a net output and the
// kept layer's is not, the kept layer's output takes the net output's name;
// when both are net outputs, the layers are not merged (the model holds one
// tensor per output name). Stateful layers (the default), host layers and
// built-in layers are never merged.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tpu_runtime/net.h"
#include "tpu_runtime/params.h"

namespace tpu_runtime::detail {

struct MergedLayer {
  std::string layer, op;  // the dropped layer
  std::string into;       // the layer that computes it
  // Each output of the dropped layer and the tensor that holds it now.
  std::vector<std::pair<std::string, std::string>> outputs;
};

struct LayerMerging {
  std::vector<std::size_t> kept;  // indices into the given net, in order
  std::vector<MergedLayer> merged;
  // Tensor renames to apply to the kept layers' inputs and outputs.
  std::vector<std::pair<std::string, std::string>> renames;
};

// `stateless[i]`: layer i's op declares is_stateless.
LayerMerging merge_identical_layers(const NetDescription &net, const std::vector<PackedParams> &packed,
                                    const std::vector<bool> &stateless);

// `net` with only the kept layers, their tensors renamed.
NetDescription merged_net(const NetDescription &net, const LayerMerging &merging);

}  // namespace tpu_runtime::detail
