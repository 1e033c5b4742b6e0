// onnx_unavailable.cc: the ONNX importer's API in an SDK built without
// libonnx-dev (runtime/CMakeLists.txt compiles this file instead of the
// room's others): every import says so.
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "tpu_runtime/error.h"
#include "tpu_runtime/onnx_import.h"

namespace tpu_runtime {
namespace {

[[noreturn]] void unavailable(std::string_view where) {
  throw Error(fmt::format("{}: this SDK was built without ONNX support (install Debian's libonnx-dev, e.g. "
                          "scripts/setup.sh, and rebuild)",
                          where));
}

}  // namespace

bool onnx_import_available() { return false; }

std::vector<std::string> onnx_supported_ops() { return {}; }

bool is_onnx_path(std::string_view path) {
  if (path.size() < 5) return false;
  std::string tail(path.substr(path.size() - 5));
  for (char &c : tail) c = char(std::tolower(static_cast<unsigned char>(c)));
  return tail == ".onnx";
}

std::vector<OnnxOpDefinition> onnx_custom_ops(const LibraryPaths &) { unavailable("onnx_custom_ops"); }

OnnxImport import_onnx_bytes(std::string_view, std::string_view where, std::string_view, const OnnxImportOptions &) {
  unavailable(where);
}

OnnxImport import_onnx(const std::string &path, const OnnxImportOptions &) { unavailable(path); }

}  // namespace tpu_runtime
