// onnx_import.h: ONNX models as net descriptions (docs/onnx.md).
//
// import_onnx() reads a model with Debian's ONNX library (libonnx), runs
// the ONNX checker and shape inference (strict: an inference error is an
// error), and writes the graph as the JSON net description build_model()
// compiles (net.h):
//
//   graph inputs      net inputs, same names, shapes and element types
//                     (float, float16, bfloat16; every dim fixed)
//   initializers      "weights" (stored in the model file), when a layer
//   Constant nodes    reads them as data; constants that only configure a
//                     node (Reshape's shape, Clip's bounds, ...) are read at
//                     import
//   standard ops      built-in layers (builtin.*; the table in docs/onnx.md)
//   custom-domain     layers of the custom op whose declared ONNX identity
//   nodes             (onnx_op_<op>, tpu_onnx_op.h) matches the node's
//                     domain, op type and the model's opset of that domain;
//                     the node is checked against the op's definition and
//                     its attributes become the op's parameters
//   graph outputs     net outputs, same names
//
// The identities of the plugin's ops are registered as ONNX schemas first,
// so the checker and shape inference know them (shape inference calls the
// op's shape_inference_<op> hook). Anything not supported (an op, an
// attribute value, an element type, a dynamic dim) is refused with an Error
// naming the node (its name and op type) and the attribute or tensor, never
// ignored.
//
// Available when the SDK was built with libonnx-dev (onnx_import_available());
// otherwise every call throws an Error saying so.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/onnx_op.h"

namespace tpu_runtime {

struct OnnxImportOptions {
  // The plugin (identities, shape hooks, parameter types) and backend
  // (registered ops); opened only when the model has a custom-domain node.
  LibraryPaths libraries;
  // Fixed shapes for graph inputs whose dims the model leaves symbolic
  // (torch.onnx.export's dynamic_axes): name -> dims. Each must name a
  // graph input, have its rank and agree with its fixed dims; refused
  // otherwise. The model's shape computations then fold to constants.
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

struct OnnxImport {
  nlohmann::ordered_json net_json;  // the net description, as a JSON net file would hold it
  NetDescription net;               // net_json parsed (parse_net)
  std::vector<std::string> warnings;
};

bool onnx_import_available();

// The standard (ai.onnx) ops the importer converts, sorted; empty without
// ONNX support.
std::vector<std::string> onnx_supported_ops();

// True for a path ending in ".onnx" (any case).
bool is_onnx_path(std::string_view path);

// Imports the model file at `path`; its stem is the net's name.
OnnxImport import_onnx(const std::string &path, const OnnxImportOptions &options);

// The same from a serialized ModelProto; `where` names it in messages.
OnnxImport import_onnx_bytes(std::string_view bytes, std::string_view where, std::string_view name,
                             const OnnxImportOptions &options);

// The custom ops of `libraries` that declare an ONNX identity, in the
// backend's registration order (opens both libraries).
std::vector<OnnxOpDefinition> onnx_custom_ops(const LibraryPaths &libraries);

}  // namespace tpu_runtime
