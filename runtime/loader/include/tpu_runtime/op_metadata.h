// op_metadata.h: what an op declares about itself through the optional
// plugin hook metadata_<op> (tpu_op_metadata.h), as the runtime holds it.
//
// Plugin::metadata() reads and checks it; a model file stores it per layer
// ("metadata" in the layer's record) in metadata_json()'s form, which
// metadata_from_json() reads back with the same checks. metadata_text() is
// the one line tpu_model info and tpu_op_check print.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpu_runtime {

struct InputLayout {
  int input = 0;
  int alignment = 0;           // bytes, 0 or a power of two (<= kMaxInputAlignment)
  int innermost_multiple = 0;  // elements, 0..kMaxInnermostMultiple
};

inline constexpr int kMaxInputAlignment = 4096;
inline constexpr int kMaxInnermostMultiple = 65536;

struct OpMetadata {
  bool declared = false;  // the op has metadata_<op>; false: every field at its default
  int inplace_inputs = 0;
  bool elementwise = false;
  bool stateless = false;
  std::vector<InputLayout> input_layouts;
  // is_multi_core: the global kernel splits its work by core and gives one
  // core's outputs on any number of cores (docs/custom-layer-build.md).
  bool multi_core = false;
  bool operator==(const OpMetadata &other) const;
};

// Refuses what cannot hold for a layer with `num_inputs` inputs (a negative
// num_inputs skips the checks that need it): the Error starts with `who`
// and names the op, the field and the value.
void check_op_metadata(const OpMetadata &m, const std::string &op, int num_inputs, const std::string &who);

// {"inplace_inputs": N, "elementwise": b, "stateless": b,
//  "input_layouts": [{"input": i, "alignment": a, "innermost_multiple": m}],
//  "multi_core": b}
// ("multi_core" may be absent, as in model files written before it existed: false).
nlohmann::ordered_json metadata_json(const OpMetadata &m);
// The inverse, checked as above; `where` starts every error.
OpMetadata metadata_from_json(const nlohmann::json &j, const std::string &op, int num_inputs,
                              const std::string &where);

// "element-wise, stateless, in-place inputs 1, input 1 layout: 64-byte aligned and innermost dim padded
// to a multiple of 32, multi-core" (the last words only for a multi-core op),
// "none declared" for an op without the hook.
std::string metadata_text(const OpMetadata &m);

}  // namespace tpu_runtime
