// net.h: the JSON net description `tpu_model build` compiles (docs/tpu-model.md).
//
//   {
//     "name": "sample_ops",                                  optional
//     "inputs":  [{"name": "x", "shape": [1, 3, 16, 16], "dtype": "fp32"}],
//     "layers":  [{"op": "absadd", "params": {"b": 1.5},
//                  "inputs": ["x"], "outputs": ["t0"]},
//                 {"op": "crop", "params": {...}, "inputs": ["t0"],
//                  "outputs": ["y"], "out_dtypes": ["fp16"],   optional
//                  "dynamic": true}],
//     "outputs": ["y"],
//     "weights": [{"name": "w", "shape": [8, 3, 3, 3], "dtype": "fp16",    optional
//                  "data": "<base64>", "data_dtype": "fp32"}]
//   }
//
// "weights" are constant tensors (TpuLang's ttype="coeff"): any layer may
// read one like a net input; the model file stores each one in a section and
// loads it into global memory before the run. "data" is the base64 (RFC 4648,
// padded) of the values, little-endian, in "data_dtype" (default: "dtype";
// bf16 as its raw bits); a float "data_dtype" may differ from a float
// "dtype", the values then being rounded to nearest even into "dtype".
//
// parse_net() checks everything that needs no custom-op library: types and
// unknown keys (a typo such as "dynamc" is an error, not silently ignored),
// shapes (1..8 dims, each >= 1), dtypes, parameters (packed with
// PackedParams in the order the keys are written), unique tensor and layer
// names, every layer input defined before use (a cycle is reported as one),
// every output produced by a layer, "out_dtypes" (when given) one known dtype
// per layer output. Ops, shapes of layer outputs and dtypes are checked by
// build_model() against the libraries.
//
// Host layers run on the host CPU between TPU layers (docs/tpu-model.md,
// "Host layers"): "op": "ap.<name>" is a vendor AP op (the customlayer's
// ap_src/, from libcustomcpuop.so; shapes from the plugin's AP class), and
// "op": "callback.<name>" a Graphcore-style Callback function in the shared
// object "library", with "out_shapes" (and "out_dtypes") declaring its
// outputs. "dynamic": true on a host layer lets its outputs come out smaller
// than their planned (maximum) shape at run time.
//
// Text inputs and outputs ("text": true on an input, "text_outputs": names
// of outputs): the tensor holds numbers of its dtype on the device, and the
// caller gives or gets them as text, numpy's str arrays (the ONNX importer's
// string tensors, docs/onnx.md). A text input also takes its numbers as
// such; a text output comes back as each value's shortest decimal form.
//
// Scalar inputs and outputs ("scalar": true on an input of shape [1],
// "scalar_outputs": names of outputs of one element): the net holds the
// value as a one-element tensor, and the caller gives or gets it as a
// rank-0 array (the ONNX importer's rank-0 graph inputs and outputs). A
// scalar input also takes a [1] array.
//
// Errors throw tpu_runtime::Error naming the file, the layer (index, name,
// op) or tensor, and the problem.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/params.h"

namespace tpu_runtime {

struct NetInput {
  std::string name;
  Shape shape;
  Dtype dtype = Dtype::fp32;
  bool text = false;    // "text": true (see "Text inputs and outputs" above)
  bool scalar = false;  // "scalar": true (see "Scalar inputs and outputs" above)
};

// A constant tensor (a "weights" entry): `data` holds its bytes in `dtype`.
struct NetWeight {
  std::string name;
  Shape shape;
  Dtype dtype = Dtype::fp32;
  std::vector<uint8_t> data;
};

struct NetLayer {
  std::string name;  // "name" in the file, else "<op>_<index>"
  std::string op;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();  // key order kept
  PackedParams packed;                                               // params packed (element 0 zero)
  std::vector<std::string> inputs, outputs;
  // One per output; empty: every output has input 0's dtype.
  std::vector<Dtype> out_dtypes;
  bool dynamic = false;  // "dynamic": true in the file
  // A callback.<name> layer: "library" (the shared object exporting
  // Callback, as written) and "out_shapes" (one shape per output).
  std::string library;
  std::vector<Shape> out_shapes;
  // "check": the layer is a run-time check of the values of other layers
  // (the ONNX importer's int64 range checks, docs/onnx.md): its one output
  // must be all zeros, and the run fails with this text and the first
  // nonzero element otherwise. Its output is no one's input.
  std::string check;
};

// Host ops: "ap.<name>" (vendor AP op) and "callback.<name>".
enum class HostOpPrefix { none, vendor_ap, callback };
HostOpPrefix host_op_prefix(std::string_view op);
inline bool is_host_op(std::string_view op) { return host_op_prefix(op) != HostOpPrefix::none; }
// The name after the prefix ("topk" for "ap.topk").
std::string_view host_op_name(std::string_view op);

struct NetDescription {
  std::string name;  // "name" in the file, else the file's stem
  std::vector<NetInput> inputs;
  std::vector<NetWeight> weights;
  std::vector<NetLayer> layers;  // in execution order
  std::vector<std::string> outputs;
  std::vector<std::string> text_outputs;    // "text_outputs": outputs given as text
  std::vector<std::string> scalar_outputs;  // "scalar_outputs": outputs given as scalars

  // "layer 2 ('crop_2', op crop)"
  std::string layer_label(std::size_t index) const;
};

// `where` names the description in error messages (normally its path);
// `default_name` is the net name when the JSON has none.
NetDescription parse_net(const nlohmann::ordered_json &json, std::string_view where,
                         std::string_view default_name = "net");
// The bytes of base64 text (RFC 4648 alphabet, '=' padding required, no
// whitespace); throws Error naming `where` and the first bad character.
std::vector<uint8_t> decode_base64(std::string_view text, std::string_view where);
std::string encode_base64(std::span<const uint8_t> bytes);

// Reads and parses a net description file.
NetDescription read_net(const std::string &path);

}  // namespace tpu_runtime
