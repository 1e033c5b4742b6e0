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

#include "support/test_support.h"

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
  Json net = Json::parse(R"({
    "name": "mixed_host",
    "inputs": [{"name": "x", "shape": [1, 3, 8, 16], "dtype": "fp32"}],
    "layers": [
      {"name": "abs", "op": "absadd", "params": {"b": 0.75}, "inputs": ["x"], "outputs": ["a"]},
      {"name": "top", "op": "ap.topk", "params": {"axis": 3, "K": 4}, "inputs": ["a"], "outputs": ["k"]},
      {"name": "aff", "op": "callback.affine", "out_shapes": [[1, 3, 8, 4]], "inputs": ["k"], "outputs": ["c"]},
      {"name": "ceil", "op": "ceiladd", "params": {"b": -1.5}, "inputs": ["c"], "outputs": ["y"]},
      {"name": "sum", "op": "callback.sum", "out_shapes": [[1, 3, 8, 4]], "inputs": ["c", "k"], "outputs": ["s"]}
    ],
    "outputs": ["y", "s"]
  })");
  net["layers"][2]["library"] = callback;
  net["layers"][4]["library"] = callback;
  return net;
}

std::vector<float> random_input(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float &f : v) f = u(rng);
  return v;
}

// The net's outputs computed here, independently of the SDK and the ops'
// libraries: y = ceil(scale * top4(|x| + 0.75) + 1) - 1.5 and
// s = (scale * top4 + 1) + top4, top4 the four largest along the last axis,
// largest first.
struct Expected {
  std::vector<float> y, s;
};
Expected expected_outputs(const std::vector<float> &x, float scale) {
  Expected e;
  for (std::size_t row = 0; row < x.size() / 16; ++row) {
    std::vector<float> a(16);
    for (std::size_t i = 0; i < 16; ++i) a[i] = std::fabs(x[row * 16 + i]) + 0.75f;
    std::sort(a.begin(), a.end(), std::greater<float>());
    for (std::size_t i = 0; i < 4; ++i) {
      const float c = scale * a[i] + 1.0f;
      e.y.push_back(std::ceil(c) + -1.5f);
      e.s.push_back(c + a[i]);
    }
  }
  return e;
}

tr::npz::Arrays input_arrays(const std::vector<float> &x) {
  tr::npz::Arrays in;
  in["x"] = tr::npz::Array::from<float>({1, 3, 8, 16}, std::span<const float>(x));
  return in;
}

void expect_values(const tr::npz::Array &got, const std::vector<float> &want, const std::string &what) {
  const std::span<const float> v = got.values<float>();
  ASSERT_EQ(v.size(), want.size()) << what;
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], want[i]) << what << " element " << i;
}

class HostLayers : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string &f : {kSampleDir + "/libcustomapop.so", callback_lib(2), callback_lib(3)})
      if (kSampleDir.empty() || kCallbackDir.empty() || !fs::exists(f)) GTEST_SKIP() << "missing " << f;
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/host_layers_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }

  // Builds `net` for `chip` into `file`.
  tr::BuildResult build(const Json &net, const std::string &chip, const std::string &file) {
    tr::BuildOptions options;
    options.chip = chip;
    options.libraries = sample_libs(chip);
    options.reference = true;
    tr::BuildResult r = tr::build_model(tr::parse_net(net, "net.json"), options, "net.json");
    tr::write_model_file(file, r.model);
    return r;
  }

  using ToolRun = test::CommandRun;
  ToolRun tool(const std::vector<std::string> &args) { return test::run_command(test::quoted_command(kTool, args)); }

  std::string dir_;
};

// The Done-when net: TPU layers, an AP op and Callback ops, on both chips,
// equal to the reference computed above (every step is exact in fp32).
TEST_F(HostLayers, MixedNetGivesTheReferenceOnBothChips) {
  const std::vector<float> x = random_input(3 * 8 * 16, 7);
  const Expected want = expected_outputs(x, 2.0f);
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const tr::BuildResult b = build(mixed_net(callback_lib(2)), chip, path(chip + ".tpumodel"));
    ASSERT_EQ(b.description.host_libraries.size(), 2u);
    EXPECT_EQ(b.description.layers[1].mode, tr::LayerMode::host_mode);
    EXPECT_EQ(b.description.tensors[b.description.layers[1].outputs[0]].shape, (tr::Shape{1, 3, 8, 4}));
    const tr::ModelFile model = tr::read_model_file(path(chip + ".tpumodel"));
    const tr::RunResult r = tr::run_model(model, input_arrays(x), chip);
    expect_values(r.outputs.at("y"), want.y, "y");
    expect_values(r.outputs.at("s"), want.s, "s");
    // The host layers' figures: bytes copied each way, an estimate that
    // charges them at the stated bandwidth.
    const tr::LayerStats &top = r.layers[1];
    EXPECT_EQ(top.mode, tr::LayerMode::host_mode);
    EXPECT_EQ(top.host_bytes_in, 3u * 8 * 16 * 4);
    EXPECT_EQ(top.host_bytes_out, 3u * 8 * 4 * 4);
    EXPECT_DOUBLE_EQ(top.transfer_us, 2 * tr::kHostCopyLatencyUs + (3.0 * 8 * 20 * 4) / tr::kHostTransferBytesPerUs);
    EXPECT_GE(top.host_us, 0.0);
    EXPECT_DOUBLE_EQ(top.total_us, top.host_us + top.transfer_us);
    EXPECT_EQ(r.layers[4].host_bytes_in, 2u * 3 * 8 * 4 * 4);
  }
}

// The build's reference comes from the AP op's own class (through the
// plugin) and the callbacks' library; it agrees with the one computed here.
TEST_F(HostLayers, BuildReferenceMatchesTheIndependentOne) {
  const std::vector<float> x = random_input(3 * 8 * 16, 11);
  tr::BuildOptions options;
  options.chip = "bm1684x";
  options.libraries = sample_libs("bm1684x");
  options.reference = true;
  options.reference_inputs = input_arrays(x);
  const tr::BuildResult b = tr::build_model(tr::parse_net(mixed_net(callback_lib(3)), "n"), options, "n");
  const Expected want = expected_outputs(x, 3.0f);
  expect_values(b.reference_outputs.at("y"), want.y, "reference y");
  expect_values(b.reference_outputs.at("s"), want.s, "reference s");
}

// The profile: a "host" lane with one span per host layer, and the trace's
// clock moved on by the host layers' estimated time.
TEST_F(HostLayers, ProfileHasAHostLane) {
  build(mixed_net(callback_lib(2)), "bm1688", path("m.tpumodel"));
  const tr::ModelFile model = tr::read_model_file(path("m.tpumodel"));
  tr::RunOptions options;
  options.profile = true;
  const tr::RunResult r = tr::run_model(model, input_arrays(random_input(384, 3)), "m", options);
  const nlohmann::json trace = nlohmann::json::parse(r.trace_json);
  int host_tid = -1;
  for (const auto &e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "host") host_tid = e["tid"];
  ASSERT_GE(host_tid, 0) << "no host lane";
  std::vector<std::string> spans;
  double host_span_us = 0;
  for (const auto &e : trace["traceEvents"])
    if (e["ph"] == "X" && e["tid"] == host_tid) {
      spans.push_back(e["name"]);
      host_span_us += e["dur"].get<double>();
    }
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_NE(spans[0].find("top:"), std::string::npos) << spans[0];
  EXPECT_NE(spans[0].find("1536 bytes device->host, 384 bytes host->device"), std::string::npos) << spans[0];
  double host_total = 0, all_total = 0;
  for (const tr::LayerStats &l : r.layers) {
    all_total += l.total_us;
    if (l.mode == tr::LayerMode::host_mode) host_total += l.total_us;
  }
  EXPECT_NEAR(host_span_us, host_total, 1e-3 * (1 + host_total));
  EXPECT_NEAR(trace["otherData"]["clock_us"].get<double>(), all_total, 1e-3 * (1 + all_total));
  const auto &summary = trace["metadata"]["profile_summary"]["host_layers"];
  ASSERT_EQ(summary["layers"].size(), 3u);
  EXPECT_EQ(summary["layers"][0]["bytes_device_to_host"], 1536);
  EXPECT_EQ(summary["transfer_bytes_per_us"], tr::kHostTransferBytesPerUs);
}

// build -> info -> custom_ap_update -> run: the new callback library is the
// one that runs.
TEST_F(HostLayers, BuildInfoUpdateRun) {
  if (kTool.empty()) GTEST_SKIP() << "TPU_MODEL_TOOL not set";
  const std::string file = path("m.tpumodel");
  build(mixed_net(callback_lib(2)), "bm1684x", file);
  const ToolRun info = tool({"info", file});
  ASSERT_EQ(info.status, 0) << info.output;
  for (const std::string part : {"host libraries", "libmf_callback_2.so (callback", "libcustomapop.so (vendor_ap",
                                 "matches the embedded bytes", "bmcpu_init, bmcpu_uninit, customcpu_process",
                                 "host (library 0)", "aff, sum", "api level   2"})
    EXPECT_NE(info.output.find(part), std::string::npos) << part << "\n" << info.output;
  const std::vector<float> x = random_input(384, 5);
  tr::npz::write_npz(path("in.npz"), input_arrays(x));
  const ToolRun update = tool({"custom_ap_update", file, callback_lib(3), "--replace", "libmf_callback_2.so"});
  ASSERT_EQ(update.status, 0) << update.output;
  EXPECT_NE(update.output.find("updated host library host_library.1 (callback)"), std::string::npos) << update.output;
  const tr::RunResult r = tr::run_model(tr::read_model_file(file), input_arrays(x), "m");
  const Expected want = expected_outputs(x, 3.0f);
  expect_values(r.outputs.at("y"), want.y, "y after the update");
  expect_values(r.outputs.at("s"), want.s, "s after the update");
  const ToolRun ap = tool({"--custom_ap_update", file, kSampleDir + "/libcustomapop.so"});
  EXPECT_EQ(ap.status, 0) << ap.output;
  EXPECT_NE(ap.output.find("nothing to do"), std::string::npos) << ap.output;
  const ToolRun bmodel_only = tool({"custom_ap_update", file, callback_lib(2), "-o", path("o.tpumodel")});
  EXPECT_EQ(bmodel_only.status, 1);
  EXPECT_NE(bmodel_only.output.find("-o and --name apply to .bmodel files only"), std::string::npos)
      << bmodel_only.output;
  const ToolRun run = tool({"run", file, "--input", path("in.npz")});
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("host layers (est. us"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("1536 bytes device->host"), std::string::npos) << run.output;
}

// Every refusal of custom_ap_update names the problem, ends "was not
// changed", and leaves the model byte-identical.
TEST_F(HostLayers, UpdateRefusals) {
  const std::string file = path("m.tpumodel");
  build(mixed_net(callback_lib(2)), "bm1684x", file);
  std::ofstream(path("text.so")) << "not a library\n";
  const Json plain = Json::parse(R"({"inputs": [{"name": "x", "shape": [1, 3, 8, 16], "dtype": "fp32"}],
    "layers": [{"op": "absadd", "params": {"b": 1.0}, "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})");
  const std::string no_host = path("plain.tpumodel");
  build(plain, "bm1684x", no_host);
  struct Case {
    std::string model, library, which;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {file, path("missing.so"), "", {"missing.so"}},
      {file, path("text.so"), "", {"text.so"}},
      {file, callback_lib(3), "", {"libmf_callback_3.so"}},  // as the AP library: no bmcpu_init
      {file, kSampleDir + "/libcustomapop.so", "libmf_callback_2.so", {"libcustomapop.so"}},  // no Callback
      {file, callback_lib(3), "libother.so", {"no host library is stored as 'libother.so'", "libmf_callback_2.so"}},
      {no_host, callback_lib(3), "", {"the model has no host library"}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.parts[0]);
    const std::vector<uint8_t> before = read_bytes(c.model);
    std::vector<std::string> parts = c.parts;
    parts.push_back(c.model + " was not changed");
    expect_error([&] { tr::update_host_library(c.model, c.library, c.which); }, parts);
    EXPECT_EQ(read_bytes(c.model), before);
  }
  ::chmod(file.c_str(), 0444);
  const std::vector<uint8_t> before = read_bytes(file);
  expect_error([&] { tr::update_host_library(file, callback_lib(3), "libmf_callback_2.so"); },
               {"read-only", "was not changed"});
  EXPECT_EQ(read_bytes(file), before);
  ::chmod(file.c_str(), 0644);
  // The same bytes under the same name: nothing written.
  EXPECT_FALSE(tr::update_host_library(file, callback_lib(2), "libmf_callback_2.so").changed);
  EXPECT_EQ(read_bytes(file), before);
  for (const auto &entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
}

// Embedded bytes that do not match their recorded SHA-256 are refused
// before anything is loaded; so are layers naming the wrong library.
TEST_F(HostLayers, DamagedEmbeddedLibraryIsRefused) {
  build(mixed_net(callback_lib(2)), "bm1684x", path("m.tpumodel"));
  tr::ModelFile model = tr::read_model_file(path("m.tpumodel"));
  model.find_section("host_library.1")->data[100] ^= 0xFF;
  expect_error([&] { tr::run_model(model, input_arrays(random_input(384, 1)), "damaged"); },
               {"damaged", "host library section 'host_library.1' (libmf_callback_2.so) has SHA-256",
                "the metadata says"});
  tr::ModelFile other = tr::read_model_file(path("m.tpumodel"));
  other.metadata["layers"][2]["host"]["library"] = 7;
  expect_error([&] { tr::describe_model(other, "bad"); }, {"layers[2].host.library", "7 is not one of the 2"});
  other.metadata["layers"][2]["host"]["library"] = 0;  // the AP library for a callback op
  expect_error([&] { tr::describe_model(other, "bad"); }, {"op 'callback.affine' is not a host op of a vendor_ap"});
  // Each key of a host_libraries entry, and of a host layer, is checked.
  struct Case {
    std::function<void(nlohmann::json &)> damage;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {[](nlohmann::json &m) { m["host_libraries"][1]["kind"] = "plugin"; }, {"host_libraries[1].kind", "'plugin'"}},
      {[](nlohmann::json &m) { m["host_libraries"][1]["file_name"] = "../cb.so"; }, {"host_libraries[1].file_name", "plain"}},
      {[](nlohmann::json &m) { m["host_libraries"][1]["section"] = "host_library.9"; }, {"no section named 'host_library.9'"}},
      {[](nlohmann::json &m) { m["host_libraries"][1]["section"] = "kernel_module"; }, {"does not start with 'host_library.'"}},
      {[](nlohmann::json &m) { m["host_libraries"][1]["size"] = 5; }, {"host_libraries[1].size", "5 bytes, but section"}},
      {[](nlohmann::json &m) { m["host_libraries"][1]["sha256"] = "xyz"; }, {"host_libraries[1].sha256", "64 lowercase hex"}},
      {[](nlohmann::json &m) { m["host_libraries"][1]["api_level"] = -3; }, {"host_libraries[1].api_level", "out of range"}},
      {[](nlohmann::json &m) { m["layers"][2].erase("host"); }, {"layers[2].host", "missing"}},
      {[](nlohmann::json &m) { m["layers"][2]["host"]["dynamic_shapes"] = 1; }, {"layers[2].host.dynamic_shapes", "true or false"}},
      {[](nlohmann::json &m) { m["layers"][2]["mode"] = "cpu"; }, {"layers[2].mode", "'cpu' is not static, dynamic or host"}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.parts[0]);
    tr::ModelFile m = tr::read_model_file(path("m.tpumodel"));
    c.damage(m.metadata);
    std::vector<std::string> parts = c.parts;
    parts.push_back("bad: metadata.");
    expect_error([&] { tr::describe_model(m, "bad"); }, parts);
  }
}

// The net keys of host layers, each refusal naming the layer.
TEST(HostLayerNet, Refusals) {
  struct Case {
    std::string layer;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {R"({"op": "callback.affine", "out_shapes": [[4]], "inputs": ["x"], "outputs": ["y"]})",
       {"layer 0 ('callback.affine_0', op callback.affine)", "\"library\" is missing"}},
      {R"({"op": "callback.affine", "library": "L", "inputs": ["x"], "outputs": ["y"]})",
       {"\"out_shapes\" is missing"}},
      {R"({"op": "callback.affine", "library": "L", "out_shapes": [[4], [4]], "inputs": ["x"], "outputs": ["y"]})",
       {"lists 2 shape(s) for 1 output(s)"}},
      {R"({"op": "callback.affine", "library": "L", "out_shapes": [[-1]], "inputs": ["x"], "outputs": ["y"]})",
       {"out_shapes[0]", "every dim must be an integer in 0..2^30"}},
      {R"({"op": "ap.topk", "library": "L", "inputs": ["x"], "outputs": ["y"]})",
       {"\"library\" is for callback.<name> host layers only", "libcustomcpuop.so"}},
      {R"({"op": "absadd", "out_shapes": [[4]], "inputs": ["x"], "outputs": ["y"]})",
       {"\"out_shapes\" is for callback.<name> host layers only"}},
      {R"({"op": "cpu.topk", "inputs": ["x"], "outputs": ["y"]})", {"older prefix", "\"ap.topk\""}},
      {R"({"op": "ap.", "inputs": ["x"], "outputs": ["y"]})", {"needs a name after its prefix"}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.layer);
    Json net = Json::parse(R"({"inputs": [{"name": "x", "shape": [4], "dtype": "fp32"}], "outputs": ["y"]})");
    net["layers"] = Json::array({Json::parse(c.layer)});
    std::vector<std::string> parts = c.parts;
    parts.push_back("net.json");
    expect_error([&] { tr::parse_net(net, "net.json"); }, parts);
  }
}

// Build-time refusals that need the libraries: an AP op on fp16 tensors, an
// op the AP library's table does not know, a library that is no callback
// library.
TEST_F(HostLayers, BuildRefusals) {
  const Json fp16 = Json::parse(R"({"inputs": [{"name": "x", "shape": [2, 8], "dtype": "fp16"}],
    "layers": [{"name": "t", "op": "ap.topk", "params": {"axis": 1, "K": 3}, "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  expect_error([&] { build(fp16, "bm1684x", path("a")); },
               {"layer 0 ('t', op ap.topk)", "tensor 'x' is fp16", "float32 only"});
  Json unknown = fp16;
  unknown["inputs"][0]["dtype"] = "fp32";
  unknown["layers"][0]["op"] = "ap.nosuchop";
  expect_error([&] { build(unknown, "bm1684x", path("b")); }, {"layer 0 ('t', op ap.nosuchop)", "NOSUCHOP"});
  Json not_callback = Json::parse(R"({"inputs": [{"name": "x", "shape": [4], "dtype": "fp32"}],
    "layers": [{"name": "c", "op": "callback.affine", "out_shapes": [[4]], "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  not_callback["layers"][0]["library"] = kSampleDir + "/libcustomapop.so";
  expect_error([&] { build(not_callback, "bm1684x", path("c")); }, {"layer 0 ('c', op callback.affine)", "Callback"});
}

}  // namespace

// ---- the faulty AP library (tests/runtime/host/fixtures) inside a model --------

#ifndef TPU_HOST_FAULTY_AP
#define TPU_HOST_FAULTY_AP ""
#endif

namespace {

const std::string kFaultyAp = setting(TPU_HOST_FAULTY_AP, "TPU_HOST_FAULTY_AP");

// x [4, 8] -> ap.topk (axis 1, K 8: the shape stays) -> k, then optionally
// builtin.relu(k) -> r. Outputs: k (and r).
Json shape_net(bool reader) {
  Json net = Json::parse(R"({"inputs": [{"name": "x", "shape": [4, 8], "dtype": "fp32"}],
    "layers": [{"name": "top", "op": "ap.topk", "params": {"axis": 1, "K": 8}, "inputs": ["x"], "outputs": ["k"]}],
    "outputs": ["k"]})");
  if (reader) {
    net["layers"].push_back(Json::parse(R"({"name": "r", "op": "builtin.relu", "inputs": ["k"], "outputs": ["r"]})"));
    net["outputs"].push_back("r");
  }
  return net;
}

// What a model built with a plugin that knew `op` would hold: its AP
// library is the faulty one, layer 0 runs `op`.
void use_faulty_op(tr::ModelFile &m, const std::string &op, bool dynamic) {
  const std::vector<uint8_t> bytes = read_bytes(kFaultyAp);
  auto &h = m.metadata["host_libraries"][0];
  m.find_section(h["section"].get<std::string>())->data = bytes;
  h["size"] = bytes.size();
  h["sha256"] = tr::sha256_hex(bytes);
  m.metadata["layers"][0]["op"] = op;
  m.metadata["layers"][0]["host"]["dynamic_shapes"] = dynamic;
}

tr::npz::Arrays shape_input(std::vector<float> &x) {
  x.resize(32);
  std::iota(x.begin(), x.end(), 1.0f);
  tr::npz::Arrays in;
  in["x"] = tr::npz::Array::from<float>({4, 8}, std::span<const float>(x));
  return in;
}

}  // namespace

// A dynamic host layer's smaller output becomes the run's output in its
// run-time shape; a static layer, or a later reader, refuses it by name.
TEST_F(HostLayers, DynamicOutputShapes) {
  if (kFaultyAp.empty() || !fs::exists(kFaultyAp)) GTEST_SKIP() << "no faulty AP library";
  std::vector<float> x;
  const tr::npz::Arrays in = shape_input(x);
  build(shape_net(false), "bm1684x", path("a.tpumodel"));
  tr::ModelFile m = tr::read_model_file(path("a.tpumodel"));
  use_faulty_op(m, "ap.shrink", true);  // halves dim 0
  const tr::RunResult r = tr::run_model(m, in, "shrink");
  EXPECT_EQ(r.outputs.at("k").shape, (std::vector<int64_t>{2, 8}));
  expect_values(r.outputs.at("k"), std::vector<float>(x.begin(), x.begin() + 16), "k");
  use_faulty_op(m, "ap.shrink", false);
  expect_error([&] { tr::run_model(m, in, "static"); },
               {"static: layer 0 ('top', op ap.shrink, host): the op gave output 'k' the shape [2,8]",
                "planned [4,8]", "the layer is static"});
  use_faulty_op(m, "ap.grow", true);
  expect_error([&] { tr::run_model(m, in, "grow"); }, {"layer 0 ('top', op ap.grow", "does not fit its static shape"});
  build(shape_net(true), "bm1688", path("b.tpumodel"));
  tr::ModelFile read = tr::read_model_file(path("b.tpumodel"));
  use_faulty_op(read, "ap.shrink", true);
  expect_error([&] { tr::run_model(read, in, "reader"); },
               {"layer 0 ('top'", "layer 1 ('r', op builtin.relu) reads it", "only a net output that no later layer"});
}

// A fault inside a host op stops the run with the layer, the op, the
// library and the fault named; the process goes on (the next run works).
TEST_F(HostLayers, FaultsInAModelAreNamed) {
  if (kFaultyAp.empty() || !fs::exists(kFaultyAp)) GTEST_SKIP() << "no faulty AP library";
  std::vector<float> x;
  const tr::npz::Arrays in = shape_input(x);
  build(shape_net(false), "bm1688", path("a.tpumodel"));
  const std::vector<std::pair<std::string, std::string>> faults = {
      {"ap.segv", "SIGSEGV"}, {"ap.throw", "threw std::runtime_error"}, {"ap.fpe", "SIGFPE"},
      {"ap.exit", "called exit(-1)"}, {"ap.overrun", "wrote past the end"}};
  for (const auto &[op, fault] : faults) {
    SCOPED_TRACE(op);
    tr::ModelFile m = tr::read_model_file(path("a.tpumodel"));
    use_faulty_op(m, op, false);
    expect_error([&] { tr::run_model(m, in, "faulty"); },
                 {"faulty: layer 0 ('top', op " + op + ", host): host op '" + op +
                      "' (host library libcustomapop.so (vendor_ap)): " + fault});
  }
  const tr::RunResult ok = tr::run_model(tr::read_model_file(path("a.tpumodel")), in, "after");
  EXPECT_EQ(ok.outputs.at("k").shape, (std::vector<int64_t>{4, 8}));
}

// A host layer whose output is empty (a 0 dim) is not called and copies
// nothing, as a device layer issues nothing: ap.throw, which fails every
// call, runs on x [0, 8] without an error, and the layer costs nothing.
TEST_F(HostLayers, AnEmptyOutputCallsNothing) {
  if (kFaultyAp.empty() || !fs::exists(kFaultyAp)) GTEST_SKIP() << "no faulty AP library";
  Json net = shape_net(false);
  net["inputs"][0]["shape"] = {0, 8};
  tr::BuildOptions options;
  options.chip = "bm1684x";
  options.libraries = sample_libs("bm1684x");
  options.reference = true;  // the reference skips the layer too
  tr::BuildResult built = tr::build_model(tr::parse_net(net, "net.json"), options, "net.json");
  EXPECT_EQ(built.reference_outputs.at("k").shape, (std::vector<int64_t>{0, 8}));
  for (const bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "dynamic shapes" : "static shapes");
    tr::ModelFile m = built.model;
    use_faulty_op(m, "ap.throw", dynamic);
    const tr::RunResult r = tr::run_model(m, built.reference_inputs, "empty");
    EXPECT_EQ(r.outputs.at("k").shape, (std::vector<int64_t>{0, 8}));
    ASSERT_EQ(r.layers.size(), 1u);
    EXPECT_EQ(r.layers[0].total_us, 0.0);
    EXPECT_EQ(r.layers[0].host_bytes_in + r.layers[0].host_bytes_out, 0u);
  }
  // The same op on a non-empty input is called (and fails): the test would see a call.
  Json full = shape_net(false);
  tr::BuildResult other = tr::build_model(tr::parse_net(full, "net.json"), options, "net.json");
  use_faulty_op(other.model, "ap.throw", false);
  expect_error([&] { tr::run_model(other.model, other.reference_inputs, "full"); }, {"threw std::runtime_error"});
}
