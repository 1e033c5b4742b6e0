// host_layers_test: host layers in models (docs/tpu-model.md, "Host layers"):
// a net mixing TPU layers, a vendor AP op (ap.topk, the sample in
// customlayer/ap_src) and Callback ops on both chips against a reference
// computed here; the embedded host libraries through build -> info ->
// custom_ap_update -> run, every refusal of the update with the model left
// byte-identical; the net keys' refusals; the run's host lane and figures.
//
// Paths: TPU_SAMPLE_OPS_LIB_DIR (the sample ops' libraries, with the AP
// run-time library), TPU_MODEL_CALLBACK_DIR (libmf_callback_{2,3}.so, built
// from fixtures/mf_callback.cpp) and TPU_MODEL_TOOL, as compile definitions
// or environment variables; a test whose libraries are missing is skipped.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/npz.h"

#ifndef TPU_SAMPLE_OPS_LIB_DIR
#define TPU_SAMPLE_OPS_LIB_DIR ""
#endif
#ifndef TPU_MODEL_CALLBACK_DIR
#define TPU_MODEL_CALLBACK_DIR ""
#endif
#ifndef TPU_MODEL_TOOL
#define TPU_MODEL_TOOL ""
#endif

namespace {

namespace fs = std::filesystem;
namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

std::string setting(const char *compiled, const char *env) {
  if (const char *value = std::getenv(env); value && *value) return value;
  return compiled;
}

const std::string kSampleDir = setting(TPU_SAMPLE_OPS_LIB_DIR, "TPU_SAMPLE_OPS_LIB_DIR");
const std::string kCallbackDir = setting(TPU_MODEL_CALLBACK_DIR, "TPU_MODEL_CALLBACK_DIR");
const std::string kTool = setting(TPU_MODEL_TOOL, "TPU_MODEL_TOOL");

std::string callback_lib(int scale) { return kCallbackDir + "/libmf_callback_" + std::to_string(scale) + ".so"; }

tr::LibraryPaths sample_libs(const std::string &chip) {
  tr::LibraryPaths p{kSampleDir + "/libplugin_custom.so", kSampleDir + "/libbackend_custom.so",
                     kSampleDir + "/" + tr::firmware_file_name(chip)};
  p.host_ap = kSampleDir + "/libcustomapop.so";
  return p;
}

std::vector<uint8_t> read_bytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void expect_error(const std::function<void()> &f, const std::vector<std::string> &parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << parts.at(0) << "'";
  } catch (const tr::Error &e) {
    const std::string what = e.what();
    for (const std::string &p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

// x [1,3,8,16] -> absadd (TPU) -> a -> ap.topk along axis 3, K 4 (host) -> k
// -> callback.affine (host) -> c -> ceiladd (TPU) -> y, and
// callback.sum(c, k) -> s. Outputs y and s.
Json mixed_net(const std::string &callback) {
  return Json::parse(R"({
    "name": "mixed_host",
    "inputs": [{"name": "x", "shape": [1, 3, 8, 16], "dtype": "fp32"}],
    "layers": [
      {"name": "abs", "op": "absadd", "params": {"b": 0.75}, "inputs": ["x"], "outputs": ["a"]},
      {"name": "top", "op": "ap.topk", "params": {"axis": 3, "K": 4}, "inputs": ["a"], "outputs": ["k"]},
      {"name": "aff", "op": "callback.affine", "library": "CB", "out_shapes": [[1, 3, 8, 4]],
       "inputs": ["k"], "outputs": ["c"]},
      {"name": "ceil", "op": "ceiladd", "params": {"b": -1.5}, "inputs": ["c"], "outputs": ["y"]},
      {"name": "sum", "op": "callback.sum", "library": "CB", "out_shapes": [[1, 3, 8, 4]],
       "inputs": ["c", "k"], "outputs": ["s"]}
    ],
    "outputs": ["y", "s"]
  })"
                         .__replace_placeholder__);
}

}  // namespace
