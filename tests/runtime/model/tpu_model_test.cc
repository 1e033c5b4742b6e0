// tpu_model_test: net descriptions, model build / run / compare round trips
// on both chips, info, kernel_dump, kernel_update (and every way it refuses
// a library), a kernel_update killed mid-write, run-input mismatches.
//
// Drives both the library (tpu_runtime/model.h) and the built tpu_model
// binary. Paths come from compile definitions set by
// tests/runtime/model/fixtures/CMakeLists.txt, or from the environment variables of
// the same names:
//   TPU_SAMPLE_OPS_LIB_DIR   build/custom/lib (the sample ops' libraries)
//   TPU_MODEL_FIXTURES_DIR   build/tests/model_fixtures (extended/, wrong_level/)
//   TPU_MODEL_TOOL           the tpu_model binary
// A test whose paths are missing is skipped.
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "cmodel_host.h"
#include "support/killed_write.h"

#include "tpu_custom_abi.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/npz.h"
#include "tpu_runtime/params.h"

#ifndef TPU_SAMPLE_OPS_LIB_DIR
#define TPU_SAMPLE_OPS_LIB_DIR ""
#endif
#ifndef TPU_MODEL_FIXTURES_DIR
#define TPU_MODEL_FIXTURES_DIR ""
#endif
#ifndef TPU_MODEL_TOOL
#define TPU_MODEL_TOOL ""
#endif

namespace {

namespace fs = std::filesystem;
namespace tr = tpu_runtime;

// Every comparison passed, and there were as many as the model has outputs
// (an empty list would pass any loop over it).
void expect_all_outputs_pass(const std::vector<tr::OutputComparison> &comparisons, const tr::ModelDescription &d,
                             const std::string &where) {
  EXPECT_EQ(comparisons.size(), d.outputs.size()) << where;
  EXPECT_FALSE(comparisons.empty()) << where;
  for (const auto &c : comparisons) EXPECT_TRUE(c.passed) << where << " " << c.name << ": " << c.why;
}

using Json = nlohmann::ordered_json;

std::string setting(const char *compiled, const char *env) {
  if (const char *value = std::getenv(env); value && *value) return value;
  return compiled;
}

const std::string &sample_dir() {
  static const std::string dir = setting(TPU_SAMPLE_OPS_LIB_DIR, "TPU_SAMPLE_OPS_LIB_DIR");
  return dir;
}
const std::string &fixtures_dir() {
  static const std::string dir = setting(TPU_MODEL_FIXTURES_DIR, "TPU_MODEL_FIXTURES_DIR");
  return dir;
}
const std::string &tool_path() {
  static const std::string path = setting(TPU_MODEL_TOOL, "TPU_MODEL_TOOL");
  return path;
}

tr::LibraryPaths libs_in(const std::string &dir, const std::string &chip) {
  return {dir + "/libplugin_custom.so", dir + "/libbackend_custom.so", dir + "/" + tr::firmware_file_name(chip)};
}
tr::LibraryPaths sample_libs(const std::string &chip) { return libs_in(sample_dir(), chip); }
tr::LibraryPaths extended_libs(const std::string &chip) { return libs_in(fixtures_dir() + "/extended", chip); }

std::vector<uint8_t> read_bytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

std::string read_text(const std::string &path) {
  const std::vector<uint8_t> b = read_bytes(path);
  return std::string(b.begin(), b.end());
}

tr::NetDescription net_from(const std::string &text) { return tr::parse_net(Json::parse(text), "test.json"); }

// The chain of the four sample ops. mode: "static", "dynamic" or "mixed"
// (ceiladd and crop dynamic).
std::string chain_net(const std::string &mode, const std::string &dtype = "fp32") {
  const bool all = mode == "dynamic", mixed = mode == "mixed";
  auto dyn = [&](bool in_mixed) { return all || (mixed && in_mixed) ? R"(, "dynamic": true)" : ""; };
  return std::string(R"({
    "name": "chain",
    "inputs": [{"name": "x", "shape": [2, 3, 20, 24], "dtype": ")") +
         dtype + R"("}],
    "layers": [
      {"name": "abs", "op": "absadd", "params": {"b": 0.75}, "inputs": ["x"], "outputs": ["t_abs"])" +
         dyn(false) + R"(},
      {"name": "ceil", "op": "ceiladd", "params": {"b": -1.5}, "inputs": ["t_abs"], "outputs": ["t_ceil"])" +
         dyn(true) + R"(},
      {"name": "swap", "op": "swapchannel", "params": {"order": [2, 0, 1]}, "inputs": ["t_ceil"], "outputs": ["t_swap"])" +
         dyn(false) + R"(},
      {"name": "crop", "op": "crop", "params": {"hoffset": 3, "woffset": 5, "hnew": 12, "wnew": 16},
       "inputs": ["t_swap"], "outputs": ["y"])" +
         dyn(true) + R"(}
    ],
    "outputs": ["y"]
  })";
}

// A net of the fixture ops: a scratch buffer, a forced dynamic layer, two
// inputs, two outputs.
const char *kExtendedNet = R"({
  "name": "extended",
  "inputs": [{"name": "a", "shape": [1, 3, 8, 8], "dtype": "fp32"},
             {"name": "b", "shape": [1, 3, 8, 8], "dtype": "fp32"}],
  "layers": [
    {"op": "mf_scratch", "inputs": ["a"], "outputs": ["s"]},
    {"op": "mf_forced", "inputs": ["s"], "outputs": ["f"]},
    {"op": "mf_pick", "inputs": ["f", "b"], "outputs": ["p"]},
    {"op": "mf_split", "inputs": ["p"], "outputs": ["q0", "q1"], "dynamic": true},
    {"op": "absadd", "params": {"b": 2.0}, "inputs": ["q0"], "outputs": ["y0"]},
    {"op": "ceiladd", "params": {"b": 0.5}, "inputs": ["f"], "outputs": ["y1"]}
  ],
  "outputs": ["y0", "q1", "y1"]
})";

tr::BuildResult build(const std::string &net_text, const std::string &chip, const tr::LibraryPaths &libs,
                      bool embed = true) {
  tr::BuildOptions options;
  options.chip = chip;
  options.libraries = libs;
  options.reference = true;
  options.embed_reference = embed;
  options.seed = 7;
  // These tests check static layers one by one (their records, sections and
  // statistics); layer groups have their own test (layer_groups_test).
  options.layer_groups = false;
  return tr::build_model(net_from(net_text), options, "test.json");
}

// A static layer's record: its commands section holds a valid stream of
// `chip` (described by the emulator itself) with as many commands as the
// metadata says.
void expect_recorded_commands(const tr::ModelFile &model, const tr::ModelLayer &layer, const std::string &chip) {
  const nlohmann::json &record = layer.static_record;
  EXPECT_EQ(record.value("execution", ""), "commands") << layer.name;
  EXPECT_EQ(record.value("section", ""), layer.name + ".commands");
  const tr::Section *s = model.find_section(record.value("section", ""));
  ASSERT_NE(s, nullptr) << layer.name;
  EXPECT_EQ(s->kind, "commands");
  const char *info = cmodel_stream_info(s->data.data(), s->data.size());
  ASSERT_NE(info, nullptr) << cmodel_last_error();
  const nlohmann::json j = nlohmann::json::parse(info);
  EXPECT_EQ(j["chip"], chip);
  EXPECT_EQ(j["origin"], "layer '" + layer.name + "' (op " + layer.op + ")");
  EXPECT_GT(j["commands"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["commands"], record.value("commands", uint64_t(0)));
  EXPECT_GT(j["functions"].value("tpu_gdma_cpy_S2L", 0) + j["functions"].value("tpu_gdma_cpy_S2S", 0), 0)
      << info;
}

// Runs `f`, expects an Error whose message contains every one of `parts`.
template <typename F>
void expect_error(F &&f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << *parts.begin() << "'";
  } catch (const tr::Error &e) {
    for (const std::string &p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
        << "message: " << e.what() << "\nmissing: " << p;
  }
}

struct ToolRun {
  int status = -1;  // exit status, or 128 + signal
  std::string output;  // stdout and stderr
};

class ModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (sample_dir().empty() || !fs::exists(sample_dir() + "/libplugin_custom.so"))
      FAIL() << "the sample ops' libraries are not available (TPU_SAMPLE_OPS_LIB_DIR): a build problem";
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tpu_model_test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
  }

  std::string path(const std::string &name) const { return dir_ + "/" + name; }

  bool have_fixtures() const { return !fixtures_dir().empty() && fs::exists(fixtures_dir() + "/extended"); }
  bool have_tool() const { return !tool_path().empty() && fs::exists(tool_path()); }

  // Builds the chain net and writes it to `name`.
  std::string chain_model(const std::string &name, const std::string &chip, const std::string &mode = "mixed") {
    const tr::BuildResult r = build(chain_net(mode), chip, sample_libs(chip));
    tr::write_model_file(path(name), r.model);
    return path(name);
  }

  // Files of the test directory whose name starts with `prefix`.
  std::vector<std::string> files_starting(const std::string &prefix) const {
    std::vector<std::string> out;
    for (const auto &e : fs::directory_iterator(dir_))
      if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
    return out;
  }

  // Starts the tpu_model binary with `args`, its stdout and stderr to `out`.
  static pid_t start_tool(const std::vector<std::string> &args, const std::string &out,
                          const std::function<void()> &child_setup = {}) {
    std::vector<std::string> argv_strings{tool_path()};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (std::string &s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) _exit(126);
      dup2(fd, 1);
      dup2(fd, 2);
      if (child_setup) child_setup();
      execv(argv[0], argv.data());
      _exit(127);
    }
    return pid;
  }

  ToolRun tool(const std::vector<std::string> &args, const std::function<void()> &child_setup = {}) {
    const std::string out = path("tool-output.txt");
    const pid_t pid = start_tool(args, out, child_setup);
    ToolRun r;
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.output = read_text(out);
    return r;
  }

  std::string dir_;
};

// ---- SHA-256 ----------------------------------------------------------------

TEST(Sha256, FipsVectors) {
  auto hex = [](const std::string &s) {
    return tr::sha256_hex(std::span(reinterpret_cast<const uint8_t *>(s.data()), s.size()));
  };
  EXPECT_EQ(hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrs"
                "tnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Padding boundaries (55/56/63/64 bytes...) against the system's sha256sum.
TEST(Sha256, MatchesSha256sumAtBlockBoundaries) {
  ASSERT_EQ(std::system("command -v sha256sum > /dev/null 2>&1"), 0) << "sha256sum (coreutils) is needed";
  char dir[] = "/tmp/tpu_sha_test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  for (std::size_t n : {1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000}) {
    std::vector<uint8_t> data(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = uint8_t(i * 131 + 7);
    const std::string file = std::string(dir) + "/data";
    write_bytes(file, data);
    FILE *p = popen(("sha256sum " + file).c_str(), "r");
    ASSERT_NE(p, nullptr);
    char line[256] = {};
    ASSERT_NE(fgets(line, sizeof line, p), nullptr);
    pclose(p);
    EXPECT_EQ(tr::sha256_hex(data), std::string(line, 64)) << n << " bytes";
  }
  fs::remove_all(dir);
}

// ---- net descriptions -----------------------------------------------------------

TEST(NetDescription, ParsesTheExampleShape) {
  const tr::NetDescription net = net_from(chain_net("mixed"));
  EXPECT_EQ(net.name, "chain");
  ASSERT_EQ(net.layers.size(), 4u);
  EXPECT_EQ(net.layers[1].name, "ceil");
  EXPECT_TRUE(net.layers[1].dynamic);
  EXPECT_FALSE(net.layers[0].dynamic);
  EXPECT_EQ(net.layers[3].packed.count(), 5u);  // reserved + 4 params, in key order
  EXPECT_EQ(net.layers[3].packed.data()[1].int_t, 3);
  EXPECT_EQ(net.layers[3].packed.data()[4].int_t, 16);
  EXPECT_EQ(net.layers[2].packed.data()[1].int_arr_t[0], 2);
}

TEST(NetDescription, DefaultLayerNames) {
  const tr::NetDescription net = net_from(kExtendedNet);
  EXPECT_EQ(net.layers[0].name, "mf_scratch_0");
  EXPECT_EQ(net.layers[5].name, "ceiladd_5");
  EXPECT_EQ(net.layer_label(3), "layer 3 ('mf_split_3', op mf_split)");
}

TEST(NetDescription, Errors) {
  const std::string input = R"("inputs": [{"name": "x", "shape": [1, 3, 4, 4], "dtype": "fp32"}])";
  auto net = [&](const std::string &layers, const std::string &outputs = R"(["y"])",
                 const std::string &inputs = "") {
    return "{" + (inputs.empty() ? input : inputs) + R"(, "layers": [)" + layers + R"(], "outputs": )" + outputs + "}";
  };
  const std::string ok_layer = R"({"op": "absadd", "params": {"b": 1}, "inputs": ["x"], "outputs": ["y"]})";
  auto fails = [&](const std::string &text, std::initializer_list<std::string> parts) {
    SCOPED_TRACE(text);
    expect_error([&] { net_from(text); }, parts);
  };
  EXPECT_NO_THROW(net_from(net(ok_layer)));
  fails("[1, 2]", {"a net description is a JSON object"});
  // No inputs is legal (outputs computed from weights); no layers is not.
  fails(R"({"inputs": [], "layers": [], "outputs": []})", {"\"layers\" is empty; a net needs at least one layer"});
  fails(net(ok_layer).replace(1, 0, R"("bogus": 1, )"), {"unknown key \"bogus\""});
  fails(net(R"({"op": "absadd", "inputs": ["x"], "outputs": ["y"], "dynamc": true})"),
        {"layer 0", "unknown key \"dynamc\""});
  fails(net(ok_layer, R"(["y"])", R"("inputs": [{"name": "x", "shape": [1, -1], "dtype": "fp32"}])"),
        {"inputs[0] ('x')", "every dim must be an integer"});
  fails(net(ok_layer, R"(["y"])", R"("inputs": [{"name": "x", "shape": [1,1,1,1,1,1,1,1,1], "dtype": "fp32"}])"),
        {"9 dims"});
  fails(net(ok_layer, R"(["y"])", R"("inputs": [{"name": "x", "shape": [4], "dtype": "fp33"}])"), {"'x'", "fp33"});
  fails(net(ok_layer, R"(["y"])",
            R"("inputs": [{"name": "x", "shape": [4], "dtype": "fp32"}, {"name": "x", "shape": [4], "dtype": "fp32"}])"),
        {"input 'x' is declared twice"});
  fails(net(R"({"op": "absadd", "inputs": ["x"], "outputs": ["x"]})"),
        {"layer 0 ('absadd_0', op absadd)", "'x' is already defined by net input"});
  fails(net(ok_layer + "," + R"({"op": "ceiladd", "inputs": ["x"], "outputs": ["y"]})"),
        {"layer 1", "'y' is already defined by layer 0 ('absadd_0', op absadd)"});
  fails(net(R"({"name": "a", "op": "absadd", "inputs": ["x"], "outputs": ["t"]},
                {"name": "a", "op": "absadd", "inputs": ["t"], "outputs": ["y"]})"),
        {"layer 1", "another layer is already named 'a'"});
  fails(net(R"({"op": "absadd", "inputs": ["nope"], "outputs": ["y"]})"),
        {"layer 0 ('absadd_0', op absadd)", "unknown input tensor 'nope'"});
  fails(net(R"({"name": "first", "op": "absadd", "inputs": ["t"], "outputs": ["u"]},
                {"name": "second", "op": "absadd", "inputs": ["x"], "outputs": ["t"]},
                {"op": "absadd", "inputs": ["u"], "outputs": ["y"]})"),
        {"layer 0 ('first', op absadd)", "'t' is used before it is defined (by layer 1 ('second', op absadd))"});
  fails(net(R"({"name": "a", "op": "absadd", "inputs": ["t2"], "outputs": ["t1"]},
                {"name": "b", "op": "absadd", "inputs": ["t1"], "outputs": ["t2"]},
                {"op": "absadd", "inputs": ["x"], "outputs": ["y"]})"),
        {"layer 0 ('a', op absadd)", "cycle a <- b <- a"});
  fails(net(R"({"name": "self", "op": "absadd", "inputs": ["x", "y"], "outputs": ["y"]})"), {"cycle self <- self"});
  fails(net(ok_layer, R"(["z"])"), {"output 'z' is not a tensor of the net"});
  fails(net(ok_layer, R"(["x"])"), {"output 'x' is a net input"});
  fails(net(ok_layer, R"(["y", "y"])"), {"names tensor 'y' twice"});
  fails(net(ok_layer, R"([])"), {"\"outputs\" is empty"});
  fails(net(R"({"op": "absadd", "params": {"b": "one"}, "inputs": ["x"], "outputs": ["y"]})"),
        {"layer 0 ('absadd_0', op absadd): params:", "b"});
  fails(net(R"({"op": "absadd", "params": [1], "inputs": ["x"], "outputs": ["y"]})"), {"\"params\" must be an object"});
  fails(net(R"({"op": "absadd", "inputs": ["x"], "outputs": ["y"], "dynamic": 1})"), {"\"dynamic\" must be true or false"});
  fails(net(R"({"op": "absadd", "inputs": [], "outputs": ["y"]})"), {"\"inputs\" is empty"});
  fails(net(R"({"op": "", "inputs": ["x"], "outputs": ["y"]})"), {"\"op\" is empty"});
  fails(net(""), {"\"layers\" is empty"});
  fails(net(R"({"op": "absadd", "inputs": ["x"], "outputs": ["y"], "out_dtypes": ["fp16", "fp16"]})"),
        {"layer 0 ('absadd_0', op absadd)", "\"out_dtypes\" lists 2 dtype(s) for 1 output(s); give one per output"});
  fails(net(R"({"op": "absadd", "inputs": ["x"], "outputs": ["y"], "out_dtypes": ["fp64"]})"),
        {"layer 0 ('absadd_0', op absadd)", "\"out_dtypes\"[0]: unknown dtype 'fp64'"});
  fails(net(R"({"op": "absadd", "inputs": ["x"], "outputs": ["y"], "out_dtypes": "fp16"})"),
        {"\"out_dtypes\" must be an array of dtype names, not a string"});
  fails(net(ok_layer, R"(["y"])", R"("inputs": [{"name": "x", "shape": [4], "dtype": "fp32", "text": 1}])"),
        {"inputs[0] ('x')", "\"text\" must be true or false, not an integer"});
  fails(net(ok_layer, R"(["y"], "text_outputs": ["x"])"), {"text_outputs[0] 'x' is not one of the net's \"outputs\""});
  fails(net(ok_layer, R"(["y"], "text_outputs": ["y", "y"])"), {"names tensor 'y' twice"});
  fails(net(ok_layer, R"(["y"])", R"("inputs": [{"name": "x", "shape": [4], "dtype": "fp32", "scalar": true}])"),
        {"inputs[0] ('x')", "a \"scalar\" input has the shape [1], not [4]"});
  fails(net(ok_layer, R"(["y"], "scalar_outputs": ["t"])"), {"scalar_outputs[0] 't' is not one of the net's"});
}

TEST(NetDescription, TextInputsAndOutputs) {
  const tr::NetDescription net = net_from(R"({"inputs": [{"name": "x", "shape": [4], "dtype": "fp32", "text": true},
                                                        {"name": "w", "shape": [4], "dtype": "fp32"}],
    "layers": [{"op": "a", "inputs": ["x"], "outputs": ["y"]}, {"op": "a", "inputs": ["w"], "outputs": ["z"]}],
    "outputs": ["y", "z"], "text_outputs": ["z"]})");
  EXPECT_TRUE(net.inputs[0].text);
  EXPECT_FALSE(net.inputs[1].text);
  EXPECT_EQ(net.text_outputs, std::vector<std::string>{"z"});
  const tr::NetDescription scalars = net_from(R"({"inputs": [{"name": "s", "shape": [1], "dtype": "fp32",
    "scalar": true}], "layers": [{"op": "a", "inputs": ["s"], "outputs": ["y"]}], "outputs": ["y"],
    "scalar_outputs": ["y"]})");
  EXPECT_TRUE(scalars.inputs[0].scalar);
  EXPECT_EQ(scalars.scalar_outputs, std::vector<std::string>{"y"});
}

TEST(NetDescription, OutDtypes) {
  const tr::NetDescription net = net_from(R"({"inputs": [{"name": "x", "shape": [4], "dtype": "fp32"}],
    "layers": [{"op": "a", "inputs": ["x"], "outputs": ["t"]},
               {"op": "b", "inputs": ["t"], "outputs": ["y", "z"], "out_dtypes": ["float16", "int8"]}],
    "outputs": ["y", "z"]})");
  EXPECT_TRUE(net.layers[0].out_dtypes.empty());
  EXPECT_EQ(net.layers[1].out_dtypes, (std::vector<tr::Dtype>{tr::Dtype::fp16, tr::Dtype::int8}));
}

TEST_F(ModelTest, ReadNetReportsFileProblems) {
  expect_error([&] { tr::read_net(path("missing.json")); }, {"missing.json", "cannot open"});
  std::ofstream(path("bad.json")) << "{ not json";
  expect_error([&] { tr::read_net(path("bad.json")); }, {"bad.json", "not valid JSON"});
  std::ofstream(path("named.json")) << R"({"inputs": [{"name": "x", "shape": [4], "dtype": "fp16"}],
      "layers": [{"op": "absadd", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})";
  EXPECT_EQ(tr::read_net(path("named.json")).name, "named");
}

TEST_F(ModelTest, TheExampleNetBuildsAndRuns) {
  const std::string example = fs::path(TPU_SDK_SOURCE_DIR) / "examples/nets/sample_ops.json";
  ASSERT_TRUE(fs::exists(example)) << example << " not found";
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    tr::BuildOptions o;
    o.chip = chip;
    o.libraries = sample_libs(chip);
    o.reference = true;
    const tr::BuildResult r = tr::build_model(tr::read_net(example), o, example);
    const tr::RunResult run = tr::run_model(r.model, r.reference_inputs, "example");
    expect_all_outputs_pass(
        tr::compare_outputs(r.description, run.outputs, r.reference_outputs, tr::exact_tolerance()), r.description,
        chip);
  }
}

// ---- build errors that need the libraries ---------------------------------------

// The sample ops declare their parameter types (param_types_<op>): the
// builder converts an integer given for a float with a warning naming the
// layer, op and parameter, and refuses an unknown or missing one.
TEST_F(ModelTest, DeclaredParameterTypesAreApplied) {
  const tr::LibraryPaths libs = sample_libs("bm1684x");
  auto build_text = [&](const std::string &text, const tr::LibraryPaths &l) {
    tr::BuildOptions o;
    o.chip = "bm1684x";
    o.libraries = l;
    o.reference = true;
    return tr::build_model(net_from(text), o, "net.json");
  };
  const std::string head = R"({"inputs": [{"name": "x", "shape": [1, 2, 4, 4], "dtype": "fp32"}], "layers": [)";
  const tr::BuildResult r =
      build_text(head + R"({"op": "absadd", "params": {"b": 1}, "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})",
                 libs);
  bool warned = false;
  for (const std::string &w : r.warnings)
    warned = warned || w.find("layer 0 ('absadd_0', op absadd): op 'absadd' parameter 'b': the integer 1 is converted "
                              "to the float") != std::string::npos;
  std::string all;
  for (const std::string &w : r.warnings) all += w + "\n";
  EXPECT_TRUE(warned) << all;
  // The reference saw b = 1.0: |x| + 1 >= 1 everywhere (the integer's bits would add 1.4e-45).
  for (float v : r.reference_outputs.at("y").values<float>()) EXPECT_GE(v, 1.0f);
  expect_error([&] { build_text(head + R"({"op": "absadd", "params": {"b": 1.0, "c": 2}, "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})", libs); },
               {"op 'absadd' has no parameter 'c'"});
  expect_error([&] { build_text(head + R"({"op": "crop", "params": {"hoffset": 0.5, "woffset": 0, "hnew": 2, "wnew": 2}, "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})", libs); },
               {"op 'crop' parameter 'hoffset' is declared int, but 0.5 is not a whole number"});
}

TEST_F(ModelTest, BuildErrors) {
  const auto libs = sample_libs("bm1684x");
  auto build_text = [&](const std::string &text, const tr::LibraryPaths &l, const std::string &chip = "bm1684x") {
    tr::BuildOptions o;
    o.chip = chip;
    o.libraries = l;
    return tr::build_model(net_from(text), o, "net.json");
  };
  const std::string head = R"({"inputs": [{"name": "x", "shape": [1, 3, 8, 8], "dtype": "fp32"}], "layers": [)";
  expect_error([&] { build_text(head + R"({"op": "nosuchop", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})", libs); },
               {"net.json: layer 0 ('nosuchop_0', op nosuchop)", "unknown op 'nosuchop'", "absadd, ceiladd"});
  // swapchannel has no shape_inference_ and declares no metadata: the vendor
  // default shapes output 0 only. (absadd declares itself element-wise, which
  // shapes every output like input 0.)
  expect_error([&] { build_text(head + R"({"op": "swapchannel", "params": {"order": [2, 1, 0]}, "inputs": ["x"], "outputs": ["y", "z"]}], "outputs": ["y"]})", libs); },
               {"layer 0 ('swapchannel_0', op swapchannel)", "shape inference failed"});
  expect_error(
      [&] {
        build_text(head + R"({"op": "crop", "params": {"hoffset": 4, "woffset": 0, "hnew": 8, "wnew": 8},
                    "inputs": ["x"], "outputs": ["y"], "dynamic": true}], "outputs": ["y"]})",
                   libs);
      },
      {"layer 0 ('crop_0', op crop)", "the firmware's shape inference failed", "window"});
  expect_error([&] { build_text(chain_net("static"), libs, "bm1999"); }, {"bm1999"});
  tr::LibraryPaths wrong_chip = libs;
  wrong_chip.firmware = sample_libs("bm1688").firmware;
  expect_error([&] { build_text(chain_net("static"), wrong_chip); }, {"firmware built for bm1688", "model is for bm1684x"});
  // Reference inputs are checked like run inputs.
  tr::BuildOptions o;
  o.chip = "bm1684x";
  o.libraries = libs;
  o.reference = true;
  o.reference_inputs["x"] = tr::npz::Array::from<float>({2, 3, 20}, std::vector<float>(120));
  expect_error([&] { tr::build_model(net_from(chain_net("static")), o, "n"); }, {"array 'x' has shape [2,3,20]"});
}

// ---- round trips ---------------------------------------------------------------------

class RoundTrip : public ModelTest, public ::testing::WithParamInterface<std::tuple<std::string, std::string>> {};

TEST_P(RoundTrip, BuildRunCompareBitExact) {
  const auto &[chip, mode] = GetParam();
  const tr::BuildResult r = build(chain_net(mode), chip, sample_libs(chip));
  const tr::ModelDescription &d = r.description;
  EXPECT_EQ(d.chip, chip);
  ASSERT_EQ(d.layers.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const bool dynamic = mode == "dynamic" || (mode == "mixed" && (i == 1 || i == 3));
    EXPECT_EQ(d.layers[i].mode, dynamic ? tr::LayerMode::dynamic_mode : tr::LayerMode::static_mode) << i;
    if (dynamic) EXPECT_EQ(d.layers[i].dynamic_reason, "net");
    else expect_recorded_commands(r.model, d.layers[i], chip);
  }
  EXPECT_EQ(d.find_tensor("y")->shape, (tr::Shape{2, 3, 12, 16}));
  ASSERT_TRUE(d.kernel_module);
  EXPECT_EQ(d.kernel_module->chip, chip);
  EXPECT_EQ(d.kernel_module->api_level, TPU_SDK_CUSTOM_API_LEVEL);
  EXPECT_EQ(d.kernel_module->sha256, tr::sha256_hex(read_bytes(sample_libs(chip).firmware)));

  // Through a file, as a user would.
  const std::string file = path("m.tpumodel");
  tr::write_model_file(file, r.model);
  const tr::ModelFile model = tr::read_model_file(file);
  const tr::RunResult run = tr::run_model(model, r.reference_inputs, file);
  ASSERT_EQ(run.layers.size(), 4u);
  for (const tr::LayerStats &s : run.layers) {
    EXPECT_GT(s.gdma_bytes, 0u) << s.name;
    EXPECT_GT(s.total_us, 0) << s.name;
  }
  const auto comparisons = tr::compare_outputs(d, run.outputs, r.reference_outputs, tr::exact_tolerance());
  ASSERT_EQ(comparisons.size(), 1u);
  EXPECT_TRUE(comparisons[0].passed) << comparisons[0].why;
  EXPECT_EQ(comparisons[0].similarity.max_ulp, 0);
  // The stored reference is the same.
  EXPECT_EQ(tr::stored_reference_inputs(model, file).at("x").data, r.reference_inputs.at("x").data);
  EXPECT_EQ(tr::stored_reference_outputs(model, file).at("y").data, r.reference_outputs.at("y").data);
}

INSTANTIATE_TEST_SUITE_P(Chips, RoundTrip,
                         ::testing::Combine(::testing::Values("bm1684x", "bm1688"),
                                            ::testing::Values("static", "dynamic", "mixed")),
                         [](const auto &info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

TEST_F(ModelTest, HalfPrecisionRoundTrips) {
  for (const std::string dtype : {"fp16", "bf16"}) {
    for (const std::string chip : {"bm1684x", "bm1688"}) {
      SCOPED_TRACE(dtype + " " + chip);
      const tr::BuildResult r = build(chain_net("mixed", dtype), chip, sample_libs(chip));
      EXPECT_EQ(r.reference_inputs.at("x").dtype, dtype == "fp16" ? "<f2" : "<u2");
      const tr::RunResult run = tr::run_model(r.model, r.reference_inputs, "m");
      EXPECT_EQ(run.outputs.at("y").dtype, dtype == "fp16" ? "<f2" : "<u2");
      expect_all_outputs_pass(tr::compare_outputs(r.description, run.outputs, r.reference_outputs), r.description,
                              dtype);
    }
  }
}

TEST_F(ModelTest, BuildIsDeterministic) {
  const tr::BuildResult a = build(chain_net("mixed"), "bm1684x", sample_libs("bm1684x"));
  const tr::BuildResult b = build(chain_net("mixed"), "bm1684x", sample_libs("bm1684x"));
  EXPECT_EQ(tr::serialize_model_file(a.model), tr::serialize_model_file(b.model));
}

// Buffers live at the same time never share bytes; inputs and outputs are
// never reused; every buffer is aligned and inside the plan.
TEST_F(ModelTest, MemoryPlanKeepsLiveBuffersApart) {
  if (!have_fixtures()) FAIL() << "the model fixtures were not built (tests/runtime/model/fixtures): a build problem, not a reason to skip";
  const tr::BuildResult r = build(kExtendedNet, "bm1684x", extended_libs("bm1684x"));
  const tr::ModelDescription &d = r.description;
  struct Live {
    std::string what;
    uint64_t offset, size;
    int first, last;
  };
  const int end = int(d.layers.size());
  std::vector<Live> live;
  for (std::size_t t = 0; t < d.tensors.size(); ++t) {
    const tr::ModelTensor &tensor = d.tensors[t];
    int first = -1, last = -1;
    for (int i = 0; i < end; ++i) {
      for (std::size_t o : d.layers[i].outputs)
        if (o == t) first = last = i;
      for (std::size_t in : d.layers[i].inputs)
        if (in == t) last = i;
    }
    if (tensor.role == tr::TensorRole::input) first = -1, last = end;
    if (tensor.role == tr::TensorRole::output) last = end;
    live.push_back({tensor.name, tensor.offset, tensor.size, first, last});
  }
  bool any_scratch = false;
  for (int i = 0; i < end; ++i)
    if (d.layers[i].scratch_size) {
      any_scratch = true;
      live.push_back({"scratch of " + d.layers[i].name, d.layers[i].scratch_offset, d.layers[i].scratch_size, i, i});
    }
  EXPECT_TRUE(any_scratch);
  bool any_reuse = false;
  for (std::size_t a = 0; a < live.size(); ++a) {
    EXPECT_EQ(live[a].offset % tr::kModelPlanAlignment, 0u) << live[a].what;
    EXPECT_LE(live[a].offset + live[a].size, d.memory_size) << live[a].what;
    for (std::size_t b = a + 1; b < live.size(); ++b) {
      const bool same_time = live[a].first <= live[b].last && live[b].first <= live[a].last;
      const bool same_bytes = live[a].offset < live[b].offset + live[b].size && live[b].offset < live[a].offset + live[a].size;
      if (same_bytes && !same_time) any_reuse = true;
      EXPECT_FALSE(same_time && same_bytes) << live[a].what << " and " << live[b].what;
    }
  }
  EXPECT_TRUE(any_reuse) << "the plan never reuses memory";
}

// Scratch buffer, force_dynamic_run, two inputs, two outputs (dynamic).
TEST_F(ModelTest, FixtureOpsRoundTrip) {
  if (!have_fixtures()) FAIL() << "the model fixtures were not built (tests/runtime/model/fixtures): a build problem, not a reason to skip";
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    const tr::BuildResult r = build(kExtendedNet, chip, extended_libs(chip));
    const tr::ModelDescription &d = r.description;
    EXPECT_EQ(d.layers[0].mode, tr::LayerMode::static_mode);
    EXPECT_EQ(d.layers[0].scratch_size, 1u * 3 * 8 * 8 * 4);
    EXPECT_EQ(d.layers[1].mode, tr::LayerMode::dynamic_mode);
    EXPECT_EQ(d.layers[1].dynamic_reason, "force_dynamic_run");
    EXPECT_EQ(d.layers[3].dynamic_reason, "net");
    EXPECT_EQ(d.layers[1].scratch_size, 0u);
    const tr::RunResult run = tr::run_model(r.model, r.reference_inputs, "m");
    const auto comparisons = tr::compare_outputs(d, run.outputs, r.reference_outputs, tr::exact_tolerance());
    ASSERT_EQ(comparisons.size(), 3u);
    for (const auto &c : comparisons) EXPECT_TRUE(c.passed) << chip << " " << c.name << ": " << c.why;
  }
}

TEST_F(ModelTest, UnusedTensorsAreWarnedAbout) {
  const tr::BuildResult r = build(R"({"inputs": [{"name": "x", "shape": [1, 3, 4, 4], "dtype": "fp32"},
                                                  {"name": "unused", "shape": [4], "dtype": "fp32"}],
      "layers": [{"op": "absadd", "params": {"b": 1.0}, "inputs": ["x"], "outputs": ["dead"]},
                 {"op": "ceiladd", "params": {"b": 0.5}, "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})",
                                  "bm1684x", sample_libs("bm1684x"), false);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("'unused'"), std::string::npos);
  EXPECT_NE(r.warnings[1].find("'dead'"), std::string::npos);
}

// The embedded library is loaded from a memfd: nothing appears in TMPDIR.
TEST_F(ModelTest, RunLeavesNoFileBehind) {
  const tr::BuildResult r = build(chain_net("mixed"), "bm1684x", sample_libs("bm1684x"));
  const std::string tmp = path("tmpdir");
  fs::create_directory(tmp);
  const char *old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  tr::run_model(r.model, r.reference_inputs, "m");
  tr::run_model(r.model, r.reference_inputs, "m");  // a second load of another copy works too
  if (old) setenv("TMPDIR", saved.c_str(), 1);
  else unsetenv("TMPDIR");
  EXPECT_TRUE(fs::is_empty(tmp));
}

// The runner uses the embedded bytes, not the library the model was built from.
TEST_F(ModelTest, RunUsesTheEmbeddedKernelModule) {
  const tr::BuildResult r = build(chain_net("dynamic"), "bm1684x", sample_libs("bm1684x"));
  tr::ModelFile damaged = r.model;
  tr::Section *s = damaged.find_section(tr::kKernelModuleSection);
  ASSERT_NE(s, nullptr);
  s->data[s->data.size() / 2] ^= 1;
  expect_error([&] { tr::run_model(damaged, r.reference_inputs, "m"); }, {"m: kernel module section", "SHA-256"});
  s->data.resize(100);
  expect_error([&] { tr::run_model(damaged, r.reference_inputs, "m"); }, {"metadata.kernel_module.size"});
}

// Static layers replay their recorded commands: the kernel module is not
// even loaded when no layer is dynamic.
TEST_F(ModelTest, StaticLayersRunWithoutTheKernelModule) {
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    const tr::BuildResult r = build(chain_net("static"), chip, sample_libs(chip));
    tr::ModelFile m = r.model;
    tr::Section *s = m.find_section(tr::kKernelModuleSection);
    ASSERT_NE(s, nullptr);
    std::fill(s->data.begin(), s->data.end(), uint8_t(0));  // no longer an ELF file, nor the recorded hash
    const tr::RunResult run = tr::run_model(m, r.reference_inputs, "m");
    expect_all_outputs_pass(
        tr::compare_outputs(r.description, run.outputs, r.reference_outputs, tr::exact_tolerance()), r.description,
        chip);
    // The same damage stops a model with a dynamic layer before it runs.
    tr::ModelFile mixed = build(chain_net("mixed"), chip, sample_libs(chip)).model;
    tr::Section *k = mixed.find_section(tr::kKernelModuleSection);
    std::fill(k->data.begin(), k->data.end(), uint8_t(0));
    expect_error([&] { tr::run_model(mixed, r.reference_inputs, "m"); }, {"kernel module section", "SHA-256"});
  }
}

// The recorded command stream is what runs. Its own checksum catches a
// damaged stream; an edited argument with the checksum recomputed changes
// the output exactly as the kernel would have with that argument: ceil's
// b = -1.5 becomes -2.5, so every output value drops by 1 (exact in fp32).
TEST_F(ModelTest, StaticLayerCommandsAreWhatRuns) {
  const tr::BuildResult r = build(chain_net("static"), "bm1684x", sample_libs("bm1684x"));
  const std::string section = r.description.layers[1].static_record.at("section");
  ASSERT_EQ(section, "ceil.commands");

  tr::ModelFile damaged = r.model;
  damaged.find_section(section)->data.back() ^= 0x40;
  expect_error([&] { tr::run_model(damaged, r.reference_inputs, "m"); },
               {"static layer 'ceil'", "section 'ceil.commands'", "checksum mismatch"});

  tr::ModelFile edited = r.model;
  std::vector<uint8_t> &stream = edited.find_section(section)->data;
  const float old_b = -1.5f, new_b = -2.5f;
  int replaced = 0;
  for (std::size_t i = 32; i + sizeof(float) <= stream.size(); ++i)
    if (std::memcmp(&stream[i], &old_b, sizeof old_b) == 0) {
      std::memcpy(&stream[i], &new_b, sizeof new_b);
      ++replaced;
    }
  ASSERT_GT(replaced, 0) << "b = -1.5 is not among the recorded arguments";
  const uint32_t crc = uint32_t(crc32(0L, stream.data() + 32, uInt(stream.size() - 32)));  // the header's body CRC
  std::memcpy(&stream[24], &crc, sizeof crc);
  const tr::RunResult run = tr::run_model(edited, r.reference_inputs, "m");
  const std::vector<uint8_t> &got = run.outputs.at("y").data, &want = r.reference_outputs.at("y").data;
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); i += sizeof(float)) {
    float g, w;
    std::memcpy(&g, &got[i], sizeof g);
    std::memcpy(&w, &want[i], sizeof w);
    ASSERT_EQ(g, w - 1.0f) << "element " << i / sizeof(float);
  }
}

TEST_F(ModelTest, StaticLayerRecordsAreChecked) {
  const tr::BuildResult r = build(chain_net("static"), "bm1684x", sample_libs("bm1684x"));
  const tr::BuildResult other = build(chain_net("static"), "bm1688", sample_libs("bm1688"));
  auto refused = [&](const std::function<void(tr::ModelFile &)> &edit, std::initializer_list<std::string> parts) {
    tr::ModelFile m = r.model;
    edit(m);
    expect_error([&] { tr::run_model(m, r.reference_inputs, "m"); }, parts);
  };
  refused([](tr::ModelFile &m) { m.metadata["layers"][2]["static"]["execution"] = "firmware_entry"; },
          {"m: static layer 'swap'", "execution \"firmware_entry\" is not supported", "rebuild the model"});
  refused([](tr::ModelFile &m) { m.metadata["layers"][2]["static"]["section"] = "gone"; },
          {"static layer 'swap'", "command section 'gone' is missing"});
  refused([](tr::ModelFile &m) { m.metadata["layers"][2]["static"]["section"] = tr::kKernelModuleSection; },
          {"static layer 'swap'", "is of kind 'kernel_module', not 'commands'"});
  refused([&](tr::ModelFile &m) {
            m.find_section("swap.commands")->data = other.model.find_section("swap.commands")->data;
          },
          {"static layer 'swap'", "recorded on bm1688, but the model is for bm1684x"});
  refused([](tr::ModelFile &m) { m.find_section("swap.commands")->data.resize(40); },
          {"static layer 'swap'", "truncated"});
  // The plan moved: the stream's buffers are no longer inside it.
  refused([](tr::ModelFile &m) { m.metadata["memory"]["base"] = m.metadata["memory"]["base"].get<uint64_t>() + 4096; },
          {"static layer 'abs'", "outside the model's memory plan"});
}

// A kernel that works through host pointers issues no engine commands:
// recording it would silently drop its work, so the build refuses it and
// names the call, and the same layer marked dynamic runs.
TEST_F(ModelTest, UnrecordableStaticLayerIsRefusedAtBuild) {
  if (!have_fixtures()) FAIL() << "the model fixtures were not built (tests/runtime/model/fixtures): a build problem, not a reason to skip";
  const std::string net = R"({"name": "hc", "inputs": [{"name": "x", "shape": [1, 2, 4, 4], "dtype": "fp32"}],
    "layers": [{"name": "hc", "op": "mf_hostcopy", "inputs": ["x"], "outputs": ["y"]DYN}], "outputs": ["y"]})";
  auto with = [&](const std::string &dynamic) {
    std::string text = net;
    text.replace(text.find("DYN"), 3, dynamic);
    return text;
  };
  expect_error([&] { build(with(""), "bm1684x", extended_libs("bm1684x")); },
               {"'hc'", "recording the static layer failed", "tpu_global_mem_addr cannot be recorded",
                "mark the layer dynamic"});
  const tr::BuildResult r = build(with(R"(, "dynamic": true)"), "bm1684x", extended_libs("bm1684x"));
  const tr::RunResult run = tr::run_model(r.model, r.reference_inputs, "hc");
  EXPECT_EQ(run.outputs.at("y").data, r.reference_inputs.at("x").data);
}

TEST_F(ModelTest, MetadataProblemsAreNamed) {
  const tr::BuildResult r = build(chain_net("mixed"), "bm1684x", sample_libs("bm1684x"));
  auto damaged = [&](const std::function<void(nlohmann::json &)> &edit, std::initializer_list<std::string> parts) {
    tr::ModelFile m = r.model;
    edit(m.metadata);
    expect_error([&] { tr::describe_model(m, "m.tpumodel"); }, parts);
  };
  damaged([](auto &j) { j.erase("model_format"); }, {"not a tpu_model model"});
  damaged([](auto &j) { j["model_format"] = 3; }, {"model_format: 3 is newer"});
  damaged([](auto &j) { j["model_format"] = 1; }, {"model_format: 1 is the format", "rebuild the model"});
  damaged([](auto &j) { j["memory"]["base"] = 4097; }, {"metadata.memory.base: 0x1001 is not a multiple of 512"});
  damaged([](auto &j) { j["memory"].erase("base"); }, {"memory", "base"});
  damaged([](auto &j) { j["chip"] = "bm1999"; }, {"metadata.chip: unknown chip 'bm1999'"});
  damaged([](nlohmann::json &j) { j["tensors"][1]["offset"] = j["memory"]["size"].get<uint64_t>(); },
          {"metadata.tensors[1]", "outside the memory plan"});
  damaged([](auto &j) { j["tensors"][1]["offset"] = 3; }, {"metadata.tensors[1].offset: 3 is not a multiple of 512"});
  damaged([](auto &j) { j["tensors"][0]["size"] = 4; }, {"metadata.tensors[0].size"});
  damaged([](auto &j) { j["layers"][0]["inputs"][0] = "nope"; }, {"metadata.layers[0].inputs[0]", "'nope'"});
  damaged([](auto &j) { j["layers"][0]["inputs"][0] = "t_ceil"; }, {"not defined before this layer"});
  damaged([](auto &j) { j["layers"][0]["mode"] = "fast"; }, {"metadata.layers[0].mode"});
  damaged([](auto &j) { j["layers"][0]["params_packed"] = "abc"; }, {"params_packed", "odd number"});
  damaged([](auto &j) { j["layers"][0]["params_packed"] = "00"; }, {"params_packed", "custom_param_t"});
  damaged([](auto &j) { j["kernel_module"]["chip"] = "bm1688"; }, {"metadata.kernel_module.chip"});
  damaged([](auto &j) { j["kernel_module"]["file_name"] = "../x.so"; }, {"not a plain file name"});
  damaged([](auto &j) { j["kernel_module"]["section"] = "gone"; }, {"no section named 'gone'"});
  damaged([](auto &j) { j["tensors"][0]["text"] = "yes"; }, {"metadata.tensors[0].text: must be true or false"});
  damaged([](nlohmann::json &j) {
    for (auto &t : j["tensors"])
      if (t["role"] == "intermediate") t["text"] = true;
  }, {".text: only an input or an output can be text", "is intermediate"});
  damaged([](auto &j) { j["tensors"][0]["scalar"] = true; }, {"metadata.tensors[0].scalar: a scalar holds one element"});
}

// ---- run inputs ----------------------------------------------------------------------

TEST_F(ModelTest, RunInputMismatches) {
  const tr::BuildResult r = build(chain_net("mixed"), "bm1684x", sample_libs("bm1684x"));
  const tr::npz::Array &x = r.reference_inputs.at("x");
  auto run_with = [&](const tr::npz::Arrays &inputs) { tr::run_model(r.model, inputs, "m.tpumodel"); };
  expect_error([&] { run_with({}); }, {"no array 'x' for input 'x'"});
  expect_error([&] { run_with({{"X", x}}); }, {"no array 'x'", "the file holds: X"});
  expect_error([&] { run_with({{"x", x}, {"extra", x}}); }, {"array 'extra' is not an input of the model"});
  tr::npz::Array reshaped = x;
  reshaped.shape = {2, 3, 480};
  expect_error([&] { run_with({{"x", reshaped}}); }, {"array 'x' has shape [2,3,480]", "[2,3,20,24]"});
  tr::npz::Array half;
  half.dtype = "<f2";
  half.shape = x.shape;
  half.data.resize(x.data.size() / 2);
  expect_error([&] { run_with({{"x", half}}); }, {"array 'x' has dtype <f2", "fp32, stored as <f4"});

  const tr::BuildResult b = build(chain_net("mixed", "bf16"), "bm1684x", sample_libs("bm1684x"));
  const std::vector<float> floats(2 * 3 * 20 * 24, 1.0f);
  expect_error([&] { tr::run_model(b.model, {{"x", tr::npz::Array::from<float>({2, 3, 20, 24}, floats)}}, "b"); },
               {"dtype <f4", "bf16, stored as <u2", "raw bf16 bits"});
}

// ---- hostile inputs ---------------------------------------------------------------------

// Where a virtual address of the library lies in the file (PT_LOAD mapping).
uint64_t file_offset_of(const std::vector<uint8_t> &elf, uint64_t address) {
  Elf64_Ehdr h;
  std::memcpy(&h, elf.data(), sizeof h);
  for (uint16_t i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, elf.data() + h.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD && address >= ph.p_vaddr && address < ph.p_vaddr + ph.p_filesz)
      return ph.p_offset + (address - ph.p_vaddr);
  }
  ADD_FAILURE() << "address " << address << " is not in the file";
  return 0;
}

// The program header of `type` (the first one), edited in place by `edit`.
void edit_program_header(std::vector<uint8_t> &elf, uint32_t type, const std::function<void(Elf64_Phdr &)> &edit) {
  Elf64_Ehdr h;
  std::memcpy(&h, elf.data(), sizeof h);
  for (uint16_t i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr ph;
    uint8_t *at = elf.data() + h.e_phoff + i * sizeof ph;
    std::memcpy(&ph, at, sizeof ph);
    if (ph.p_type != type) continue;
    edit(ph);
    std::memcpy(at, &ph, sizeof ph);
    return;
  }
  ADD_FAILURE() << "no program header of type " << type;
}

// The dynamic entry `tag` (the first one), edited in place.
void edit_dynamic_entry(std::vector<uint8_t> &elf, int64_t tag, const std::function<void(Elf64_Dyn &)> &edit) {
  uint64_t offset = 0, size = 0;
  edit_program_header(elf, PT_DYNAMIC, [&](Elf64_Phdr &ph) {
    offset = ph.p_offset;
    size = ph.p_filesz;
  });
  for (uint64_t at = offset; at + sizeof(Elf64_Dyn) <= offset + size; at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d;
    std::memcpy(&d, elf.data() + at, sizeof d);
    if (d.d_tag != tag) continue;
    edit(d);
    std::memcpy(elf.data() + at, &d, sizeof d);
    return;
  }
  ADD_FAILURE() << "no dynamic entry " << tag;
}

uint64_t dynamic_value(std::vector<uint8_t> &elf, int64_t tag) {
  uint64_t value = 0;
  edit_dynamic_entry(elf, tag, [&](Elf64_Dyn &d) { value = d.d_un.d_val; });
  return value;
}

// dlopen maps what the program headers say and reads the dynamic section,
// string table and relocations where they point, unchecked: an embedded
// module damaged there, with the model's CRCs and SHA-256 recomputed
// (so the container is intact), crashed `run` inside dlopen. Each is now
// refused, naming the problem, before the module is written anywhere or
// loaded.
TEST_F(ModelTest, EmbeddedModuleWithDamagedElfStructureIsRefusedBeforeLoading) {
  if (!have_tool()) FAIL() << "the tpu_model binary is not available (TPU_MODEL_TOOL): a build problem";
  const tr::BuildResult r = build(chain_net("dynamic"), "bm1684x", sample_libs("bm1684x"));
  tr::npz::write_npz(path("in.npz"), r.reference_inputs);
  struct Damage {
    const char *what;
    std::function<void(std::vector<uint8_t> &)> edit;
    std::string expected;
  };
  const std::vector<Damage> damages = {
      {"PT_DYNAMIC moved 1 TiB away",
       [](auto &elf) { edit_program_header(elf, PT_DYNAMIC, [](Elf64_Phdr &ph) { ph.p_vaddr += uint64_t(1) << 40; }); },
       "PT_DYNAMIC"},
      {"the first PT_LOAD moved 1 TiB up, past the others",
       [](auto &elf) { edit_program_header(elf, PT_LOAD, [](Elf64_Phdr &ph) { ph.p_vaddr += uint64_t(1) << 40; }); },
       "loaded segments are in ascending address order"},
      {"the first PT_LOAD given more file than memory",
       [](auto &elf) { edit_program_header(elf, PT_LOAD, [](Elf64_Phdr &ph) { ph.p_memsz = ph.p_filesz / 2; }); },
       "more bytes in the file"},
      {"DT_STRTAB pointing far outside",
       [](auto &elf) { edit_dynamic_entry(elf, DT_STRTAB, [](Elf64_Dyn &d) { d.d_un.d_ptr += uint64_t(1) << 40; }); },
       "DT_STRTAB"},
      {"DT_NEEDED naming a string past the table",
       [](auto &elf) { edit_dynamic_entry(elf, DT_NEEDED, [](Elf64_Dyn &d) { d.d_un.d_val = uint64_t(1) << 40; }); },
       "DT_NEEDED"},
      {"a relocation writing 1 TiB away",
       [](auto &elf) {
         const uint64_t rela = file_offset_of(elf, dynamic_value(elf, DT_RELA));
         uint64_t offset;
         std::memcpy(&offset, elf.data() + rela, sizeof offset);
         offset += uint64_t(1) << 40;
         std::memcpy(elf.data() + rela, &offset, sizeof offset);
       },
       "relocation 0 of DT_RELA writes at"},
  };
  for (const Damage &damage : damages) {
    SCOPED_TRACE(damage.what);
    tr::ModelFile m = r.model;
    tr::Section *s = m.find_section(tr::kKernelModuleSection);
    ASSERT_NE(s, nullptr);
    damage.edit(s->data);
    m.metadata["kernel_module"]["sha256"] = tr::sha256_hex(s->data);  // the container stays consistent
    tr::write_model_file(path("damaged.tpumodel"), m);
    const ToolRun run = tool({"run", path("damaged.tpumodel"), "--input", path("in.npz")});
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_NE(run.output.find("kernel module libcmodel_custom_bm1684x.so: damaged ELF file"), std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find(damage.expected), std::string::npos) << run.output;
  }
}

// Sizes past what the emulated device holds are refused with the input or
// layer named, before anything is allocated; nesting past 256 levels is
// refused before any value is copied (a net whose params nested 100,000
// deep overflowed the stack).
TEST_F(ModelTest, HugeShapesAndDeepNestingAreRefusedWithTheirPlaceNamed) {
  const std::string deep = path("deep.json");
  {
    std::ofstream out(deep);
    out << R"({"name": "deep", "inputs": [{"name": "x", "shape": [4], "dtype": "fp32"}], "layers": [{"op": "absadd", )"
        << R"("params": {"b": )" << std::string(100000, '[') << std::string(100000, ']')
        << R"(}, "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})";
  }
  expect_error([&] { tr::read_net(deep); }, {deep, "JSON nested deeper than 256 levels", "line 1"});
  expect_error([&] { tr::PackedParams::from_json_text(std::string(300, '[') + std::string(300, ']')); },
               {"parameters: JSON nested deeper than 256 levels"});
  if (have_tool()) {
    const ToolRun run = tool({"build", deep, "--chip", "bm1684x", "-o", path("deep.tpumodel"), "--lib-dir", sample_dir()});
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_NE(run.output.find("nested deeper than 256 levels"), std::string::npos) << run.output;
  }
  // (2^30 - 1) x 2 int32 = 8 GiB: more than the chips' 4 GiB of global memory.
  expect_error([&] {
    tr::parse_net(Json::parse(R"({"inputs": [{"name": "x", "shape": [1073741823, 2], "dtype": "int32"}],
      "layers": [{"op": "absadd", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})"), "big.json", "big");
  }, {"big.json: inputs[0] ('x')", "8589934584 bytes, more than the 4 GiB of global memory"});
}

// A NUL in the stored module name was accepted; kernel_dump then wrote the
// file named up to the NUL while printing the whole name. Such a name, a
// backslash or an empty name are refused where the model is read.
TEST_F(ModelTest, StoredModuleNameMustBeAPlainFileName) {
  const tr::BuildResult r = build(chain_net("mixed"), "bm1684x", sample_libs("bm1684x"));
  for (const std::string &name : {std::string("lib\0evil.so", 11), std::string("a\\b.so"), std::string(".."),
                                  std::string("d/x.so")}) {
    SCOPED_TRACE(name);
    tr::ModelFile m = r.model;
    m.metadata["kernel_module"]["file_name"] = name;
    expect_error([&] { tr::describe_model(m, "m.tpumodel"); },
                 {"metadata.kernel_module.file_name", "is not a plain file name"});
    tr::write_model_file(path("named.tpumodel"), m);
    fs::create_directory(path("out"));
    expect_error([&] { tr::dump_kernel_module(path("named.tpumodel"), path("out")); }, {"not a plain file name"});
    EXPECT_TRUE(fs::is_empty(path("out"))) << "nothing is written";
  }
  // What kernel_dump prints is the file it wrote.
  if (!have_tool()) return;
  const std::string model = chain_model("m.tpumodel", "bm1684x");
  fs::create_directory(path("d"));
  const ToolRun dump = tool({"kernel_dump", model, "-o", path("d")});
  ASSERT_EQ(dump.status, 0) << dump.output;
  EXPECT_NE(dump.output.find(" to " + path("d/libcmodel_custom_bm1684x.so") + "\n"), std::string::npos) << dump.output;
  EXPECT_TRUE(fs::exists(path("d/libcmodel_custom_bm1684x.so")));
}

// ---- info / kernel_dump ----------------------------------------------------------------

TEST_F(ModelTest, InfoDescribesTheModel) {
  const std::string file = chain_model("m.tpumodel", "bm1688");
  tr::ModelFileLayout layout;
  const tr::ModelFile model = tr::read_model_file(file, &layout);
  const std::string text = tr::model_info_text(model, layout, file);
  const std::string sha = tr::sha256_hex(read_bytes(sample_libs("bm1688").firmware));
  const std::string commands =
      std::to_string(tr::describe_model(model, file).layers[0].static_record.at("commands").get<uint64_t>());
  for (const std::string &part :
       {std::string("bm1688"), std::string("chain"), std::string("t_ceil"), std::string("[2,3,12,16]"),
        std::string("static (") + commands + " commands)", std::string("dynamic (net)"), std::string("libcmodel_custom_bm1688.so"),
        sha, std::string("api level   1"), std::string("absadd, ceiladd, swapchannel, crop"),
        std::string("reference.output.y"), std::string("replay the commands recorded"), std::string("swap.commands"), std::string("{\"b\":0.75}"),
        std::string("4 (2 static, 2 dynamic)")})
    EXPECT_NE(text.find(part), std::string::npos) << "missing '" << part << "' in\n" << text;
}

// A layer whose op declares a gradient (register_custom_grad) shows it; the
// others show none.
TEST_F(ModelTest, InfoShowsADeclaredGradient) {
  const tr::BuildResult r = build(R"({"name": "g", "inputs": [{"name": "x", "shape": [2, 40], "dtype": "fp32"}],
    "layers": [{"name": "leaky", "op": "leakyrelu", "params": {"alpha": 0.1}, "inputs": ["x"], "outputs": ["y"]},
               {"name": "abs", "op": "absadd", "params": {"b": 0.5}, "inputs": ["y"], "outputs": ["z"]}],
    "outputs": ["z"]})", "bm1684x", sample_libs("bm1684x"));
  tr::write_model_file(path("g.tpumodel"), r.model);
  tr::ModelFileLayout layout;
  const tr::ModelFile model = tr::read_model_file(path("g.tpumodel"), &layout);
  EXPECT_EQ(tr::describe_model(model, "g.tpumodel").layers.at(1).gradient, "");
  const std::string text = tr::model_info_text(model, layout, path("g.tpumodel"));
  const std::string line = "      gradient: leakyrelu_grad, all partials at once, receives output grads + inputs, "
                           "non-differentiable: none\n";
  const std::size_t at = text.find(line);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_LT(text.find("leaky"), at) << text;
  EXPECT_LT(at, text.find(" abs ")) << "the gradient line belongs to the leakyrelu layer\n" << text;
  EXPECT_EQ(text.find("gradient:", at + line.size()), std::string::npos) << "absadd has no gradient\n" << text;
}

// info names the embedded module (file name, size, SHA-256 checked against
// the bytes, chip, API level) and says plainly that `run` executes it, all
// without loading it: a module damaged so that dlopen would crash on it is
// still described.
TEST_F(ModelTest, InfoShowsTheEmbeddedModuleAndItsTrustWithoutLoadingIt) {
  if (!have_tool()) FAIL() << "the tpu_model binary is not available (TPU_MODEL_TOOL): a build problem";
  const tr::BuildResult r = build(chain_net("mixed"), "bm1684x", sample_libs("bm1684x"));
  tr::ModelFile m = r.model;
  tr::Section *s = m.find_section(tr::kKernelModuleSection);
  ASSERT_NE(s, nullptr);
  edit_program_header(s->data, PT_DYNAMIC, [](Elf64_Phdr &ph) { ph.p_vaddr += uint64_t(1) << 40; });
  const std::string sha = tr::sha256_hex(s->data);
  m.metadata["kernel_module"]["sha256"] = sha;
  tr::write_model_file(path("m.tpumodel"), m);
  const ToolRun info = tool({"info", path("m.tpumodel")});
  ASSERT_EQ(info.status, 0) << info.output;
  for (const std::string &part :
       {std::string("file name   libcmodel_custom_bm1684x.so"), "size        " + std::to_string(s->data.size()) + " bytes",
        "sha256      " + sha, std::string("chip        bm1684x"), std::string("api level   1"),
        std::string("sha256 as above (checked; not loaded)"),
        std::string("run loads this library into its own process for the 2 dynamic layers"),
        std::string("run only models from a source you trust")})
    EXPECT_NE(info.output.find(part), std::string::npos) << "missing '" << part << "' in\n" << info.output;
}

// The sample in-place op through the tool: build warns nothing, info shows
// the memory the claim saved and the op's metadata, run gives |x| * 2.
TEST_F(ModelTest, TheToolShowsWhatAnInPlaceOpSaves) {
  if (!have_tool()) FAIL() << "the tpu_model binary is not available (TPU_MODEL_TOOL): a build problem";
  {
    std::ofstream out(path("inplace.json"));
    out << R"({"name": "inplace", "inputs": [{"name": "x", "shape": [2, 256], "dtype": "fp32"}], "layers": [)"
        << R"({"op": "absadd", "params": {"b": 0}, "inputs": ["x"], "outputs": ["a"]},)"
        << R"({"op": "scaleinplace", "params": {"s": 2}, "inputs": ["a"], "outputs": ["y"]}], "outputs": ["y"]})";
  }
  const ToolRun build_run = tool({"build", path("inplace.json"), "--chip", "bm1688", "-o", path("inplace.tpumodel"),
                                  "--lib-dir", sample_dir()});
  ASSERT_EQ(build_run.status, 0) << build_run.output;
  const ToolRun info = tool({"info", path("inplace.tpumodel")});
  ASSERT_EQ(info.status, 0) << info.output;
  // a: 2 x 256 fp32 = 2048 bytes, a multiple of the plan's 512.
  for (const std::string part : {"2048 bytes saved by in-place updates", "'y' shares the memory of 'a' (updated in place)",
                                 "metadata: element-wise, stateless, in-place inputs 1"})
    EXPECT_NE(info.output.find(part), std::string::npos) << "missing '" << part << "' in\n" << info.output;
  std::vector<float> x(512);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(i) - 256) * 0.125f;
  tr::npz::Arrays in;
  in["x"] = tr::npz::Array::from<float>({2, 256}, x);
  tr::npz::write_npz(path("in.npz"), in);
  const ToolRun run = tool({"run", path("inplace.tpumodel"), "--input", path("in.npz"), "--output", path("out.npz")});
  ASSERT_EQ(run.status, 0) << run.output;
  const tr::npz::Arrays out = tr::npz::read_npz(path("out.npz"));
  const auto y = out.at("y").values<float>();
  ASSERT_EQ(y.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::fabs(x[i]) * 2.0f) << i;
}

TEST_F(ModelTest, KernelDumpGivesTheEmbeddedBytes) {
  const std::string file = chain_model("m.tpumodel", "bm1684x");
  const std::vector<uint8_t> original = read_bytes(sample_libs("bm1684x").firmware);
  EXPECT_EQ(tr::dump_kernel_module(file, path("k.so")), path("k.so"));
  EXPECT_EQ(read_bytes(path("k.so")), original);
  fs::create_directory(path("out"));
  EXPECT_EQ(tr::dump_kernel_module(file, path("out")), path("out/libcmodel_custom_bm1684x.so"));
  EXPECT_EQ(read_bytes(path("out/libcmodel_custom_bm1684x.so")), original);
}

// ---- kernel_update ---------------------------------------------------------------------

// Everything but the kernel-module entry and section stays as it was.
void expect_only_kernel_changed(const tr::ModelFile &before, const tr::ModelFile &after) {
  nlohmann::json a = before.metadata, b = after.metadata;
  for (const char *key : {"kernel_module", "kernel_module_history"}) {
    a.erase(key);
    b.erase(key);
  }
  EXPECT_EQ(a, b);
  ASSERT_EQ(before.sections.size(), after.sections.size());
  for (std::size_t i = 0; i < before.sections.size(); ++i) {
    EXPECT_EQ(before.sections[i].name, after.sections[i].name);
    EXPECT_EQ(before.sections[i].kind, after.sections[i].kind);
    if (before.sections[i].name != tr::kKernelModuleSection) {
      EXPECT_EQ(before.sections[i].data, after.sections[i].data) << before.sections[i].name;
    }
  }
}

TEST_F(ModelTest, KernelUpdateWithARebuiltFirmwareThenRun) {
  if (!have_fixtures()) FAIL() << "the model fixtures were not built (tests/runtime/model/fixtures): a build problem, not a reason to skip";
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    const std::string file = chain_model("m-" + chip + ".tpumodel", chip);
    const tr::ModelFile before = tr::read_model_file(file);
    const std::string rebuilt = extended_libs(chip).firmware;
    const tr::KernelUpdateResult r = tr::update_kernel_module(file, rebuilt);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(r.old_module.sha256, tr::sha256_hex(read_bytes(sample_libs(chip).firmware)));
    EXPECT_EQ(r.new_module.sha256, tr::sha256_hex(read_bytes(rebuilt)));
    EXPECT_NE(r.new_module.sha256, r.old_module.sha256);
    const tr::ModelFile after = tr::read_model_file(file);
    expect_only_kernel_changed(before, after);
    const tr::ModelDescription d = tr::describe_model(after, file);
    EXPECT_EQ(d.kernel_module->sha256, r.new_module.sha256);
    EXPECT_EQ(d.kernel_module->ops, r.new_module.ops);
    EXPECT_NE(std::find(d.kernel_module->ops.begin(), d.kernel_module->ops.end(), "mf_scratch"),
              d.kernel_module->ops.end());
    EXPECT_EQ(tr::kernel_module_bytes(after, d, file).size(), read_bytes(rebuilt).size());
    tr::dump_kernel_module(file, path("dumped.so"));
    EXPECT_EQ(read_bytes(path("dumped.so")), read_bytes(rebuilt));
    // Runs with the new module, still bit-exact.
    const tr::RunResult run = tr::run_model(after, tr::stored_reference_inputs(after, file), file);
    expect_all_outputs_pass(
        tr::compare_outputs(d, run.outputs, tr::stored_reference_outputs(after, file), tr::exact_tolerance()), d, chip);
  }
}

// 50 kernel_update processes at once on one model, alternating between two
// modules. Each update that reports a change appends to the model's
// kernel_module_history; serialised, the history holds exactly those
// updates, each replacing the module the one before it installed. An
// update lost to a concurrent writer is missing from the history (its file
// was overwritten), and two updates that read the same old file replace the
// same module.
TEST_F(ModelTest, FiftyConcurrentKernelUpdatesLoseNone) {
  if (!have_tool()) FAIL() << "the tpu_model binary is not available (TPU_MODEL_TOOL): a build problem";
  if (!have_fixtures()) FAIL() << "the model fixtures were not built (tests/runtime/model/fixtures): a build problem";
  const std::string file = chain_model("race.tpumodel", "bm1684x");
  const std::string module[2] = {sample_libs("bm1684x").firmware, extended_libs("bm1684x").firmware};
  constexpr int kWriters = 50;
  std::vector<pid_t> pids;
  for (int i = 0; i < kWriters; ++i) {
    const pid_t pid =
        start_tool({"kernel_update", file, module[(i + 1) % 2]}, path("race-" + std::to_string(i) + ".txt"));
    ASSERT_GT(pid, 0);
    pids.push_back(pid);
  }
  int changes = 0, refusals = 0;
  for (int i = 0; i < kWriters; ++i) {
    int status = 0;
    waitpid(pids[size_t(i)], &status, 0);
    const std::string output = read_text(path("race-" + std::to_string(i) + ".txt"));
    ASSERT_TRUE(WIFEXITED(status)) << "writer " << i << " died: " << output;
    if (WEXITSTATUS(status) != 0) {
      ++refusals;  // allowed, if it says why
      EXPECT_NE(output.find("was not changed"), std::string::npos) << output;
      continue;
    }
    if (output.find("updated the kernel module") != std::string::npos) ++changes;
    else EXPECT_NE(output.find("nothing to do"), std::string::npos) << output;
  }
  const tr::ModelFile after = tr::read_model_file(file);
  const tr::ModelDescription d = tr::describe_model(after, file);
  const auto &history = after.metadata["kernel_module_history"];
  ASSERT_TRUE(history.is_array());
  EXPECT_EQ(int(history.size()), changes) << changes << " updates reported a change (" << refusals
                                          << " were refused) but the history holds " << history.size()
                                          << ": updates were lost";
  std::string installed = tr::sha256_hex(read_bytes(module[0]));
  for (const auto &entry : history) {
    EXPECT_EQ(entry["replaced_sha256"], installed) << "an update replaced a module that was no longer installed";
    installed = entry["sha256"];
  }
  EXPECT_EQ(d.kernel_module->sha256, installed);
  EXPECT_GT(changes, 0);
}

// kernel_update writes through a symlink (the link stays a link, the file it
// names is updated) and keeps the file's mode.
TEST_F(ModelTest, KernelUpdateThroughASymlinkKeepsTheLinkAndTheMode) {
  if (!have_fixtures()) FAIL() << "the model fixtures were not built (tests/runtime/model/fixtures): a build problem";
  const std::string file = chain_model("real.tpumodel", "bm1684x");
  ASSERT_EQ(chmod(file.c_str(), 0640), 0);
  const std::string link = path("link.tpumodel");
  ASSERT_EQ(symlink(file.c_str(), link.c_str()), 0);
  const tr::KernelUpdateResult r = tr::update_kernel_module(link, extended_libs("bm1684x").firmware);
  EXPECT_TRUE(r.changed);
  struct stat st {};
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the symlink was replaced by a regular file";
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  const tr::ModelFile after = tr::read_model_file(file);
  EXPECT_EQ(tr::describe_model(after, file).kernel_module->sha256,
            tr::sha256_hex(read_bytes(extended_libs("bm1684x").firmware)));
}

TEST_F(ModelTest, KernelUpdateWithTheSameBytesChangesNothing) {
  const std::string file = chain_model("m.tpumodel", "bm1684x");
  const std::vector<uint8_t> before = read_bytes(file);
  struct stat st_before{}, st_after{};
  stat(file.c_str(), &st_before);
  const tr::KernelUpdateResult r = tr::update_kernel_module(file, sample_libs("bm1684x").firmware);
  EXPECT_FALSE(r.changed);
  stat(file.c_str(), &st_after);
  EXPECT_EQ(st_before.st_ino, st_after.st_ino);
  EXPECT_EQ(read_bytes(file), before);
}

// Every refusal leaves the model byte-identical (and the same inode: it was
// not rewritten) and no temporary file behind.
TEST_F(ModelTest, KernelUpdateRejections) {
  const std::string file = chain_model("m.tpumodel", "bm1684x");
  const std::vector<uint8_t> original = read_bytes(file);
  struct stat st{};
  stat(file.c_str(), &st);
  const std::vector<uint8_t> firmware = read_bytes(sample_libs("bm1684x").firmware);
  auto variant = [&](const std::string &name, const std::function<void(std::vector<uint8_t> &)> &edit) {
    std::vector<uint8_t> bytes = firmware;
    edit(bytes);
    write_bytes(path(name), bytes);
    return path(name);
  };
  std::ofstream(path("text.so")) << "this is not a library\n";
  std::map<std::string, std::vector<std::string>> cases = {
      {path("text.so"), {"not an ELF file", "74 68 69 73"}},
      {variant("short.so", [](auto &b) { b.resize(20); }), {"not an ELF shared object: only 20 bytes"}},
      {variant("class32.so", [](auto &b) { b[4] = 1; }), {"a 32-bit ELF file"}},
      {variant("bigendian.so", [](auto &b) { b[5] = 2; }), {"big-endian"}},
      {variant("machine.so",
               [](auto &b) {
                 b[18] = b[18] == 183 ? 62 : 183;  // AArch64 <-> x86-64, whichever this host is not
                 b[19] = 0;
               }),
       {"built for", "e_machine"}},
      {variant("exec.so",
               [](auto &b) {
                 b[16] = 2;  // ET_EXEC
                 b[17] = 0;
               }),
       {"not a shared object", "an executable"}},
      {variant("truncated.so", [](auto &b) { b.resize(b.size() / 2); }), {"truncated.so: truncated ELF file"}},
      {variant("truncated_head.so", [](auto &b) { b.resize(200); }), {"program header table", "not inside the file"}},
      {sample_libs("bm1688").firmware, {"built for bm1688", "is a bm1684x model"}},
      {sample_libs("bm1684x").backend, {"not a firmware library"}},
      {path("missing.so"), {"missing.so: no such file"}},
      {dir_, {"is a directory"}},
  };
  if (have_fixtures())
    cases[fixtures_dir() + "/wrong_level/libwrong_level.so"] = {"custom-layer API level " +
                                                                    std::to_string(TPU_SDK_CUSTOM_API_LEVEL + 1),
                                                                "at level " + std::to_string(TPU_SDK_CUSTOM_API_LEVEL)};
  // A well-formed ELF file the dynamic loader refuses (an unresolved symbol).
  const std::string unresolved = fs::path(fixtures_dir()).parent_path() / "custom_fixtures/odd/libfx_unresolved.so";
  if (!fixtures_dir().empty() && fs::exists(unresolved)) cases[unresolved] = {"cannot load", "fx_function_nobody_defines"};
  for (const auto &[library, parts] : cases) {
    SCOPED_TRACE(library);
    try {
      tr::update_kernel_module(file, library);
      ADD_FAILURE() << "accepted";
    } catch (const tr::Error &e) {
      for (const std::string &p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("m.tpumodel was not changed"), std::string::npos) << e.what();
    }
    EXPECT_EQ(read_bytes(file), original);
    struct stat now{};
    stat(file.c_str(), &now);
    EXPECT_EQ(now.st_ino, st.st_ino);
    EXPECT_TRUE(files_starting(".m.tpumodel.tmp").empty());
  }
}

TEST_F(ModelTest, KernelUpdateRefusesAReadOnlyModel) {
  if (!have_fixtures()) FAIL() << "the model fixtures were not built (tests/runtime/model/fixtures): a build problem, not a reason to skip";
  const std::string file = chain_model("m.tpumodel", "bm1684x");
  const std::vector<uint8_t> original = read_bytes(file);
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  expect_error([&] { tr::update_kernel_module(file, extended_libs("bm1684x").firmware); },
               {"read-only", "m.tpumodel was not changed"});
  EXPECT_EQ(read_bytes(file), original);
}

// A model whose layers use ops the new library lacks.
TEST_F(ModelTest, KernelUpdateRefusesALibraryMissingAnOp) {
  if (!have_fixtures()) FAIL() << "the model fixtures were not built (tests/runtime/model/fixtures): a build problem, not a reason to skip";
  const tr::BuildResult r = build(kExtendedNet, "bm1684x", extended_libs("bm1684x"));
  tr::write_model_file(path("ext.tpumodel"), r.model);
  const std::vector<uint8_t> original = read_bytes(path("ext.tpumodel"));
  expect_error([&] { tr::update_kernel_module(path("ext.tpumodel"), sample_libs("bm1684x").firmware); },
               {"does not register ops 'mf_forced', 'mf_split'", "ext.tpumodel was not changed"});
  EXPECT_EQ(read_bytes(path("ext.tpumodel")), original);
}

// A kernel_update killed while it writes the new file (the write of the
// temporary file stops after 4096 bytes: support/killed_write.h). The target must be byte-identical, the
// half-written temporary file (".m.tpumodel.tmp-*") is ignored by readers
// and by the next update.
TEST_F(ModelTest, KernelUpdateKilledMidWriteLeavesTheModelIntact) {
  if (!have_fixtures()) FAIL() << "the model fixtures were not built (tests/runtime/model/fixtures): a build problem, not a reason to skip";
  const std::string file = chain_model("m.tpumodel", "bm1684x");
  const std::vector<uint8_t> original = read_bytes(file);
  ASSERT_GT(original.size(), 3u * 4096);
  const std::string rebuilt = extended_libs("bm1684x").firmware;

  test::StoppedWriter child(4096, [&] { tr::update_kernel_module(file, rebuilt); });
  ASSERT_TRUE(child.stopped()) << "the child never reached the file-size limit";

  // The child is stopped in the middle of writing the temporary file.
  const std::vector<std::string> temps = files_starting(".m.tpumodel.tmp-");
  ASSERT_EQ(temps.size(), 1u);
  EXPECT_EQ(fs::file_size(temps[0]), 4096u);
  const int status = child.kill_and_wait();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  EXPECT_EQ(read_bytes(file), original);
  EXPECT_NO_THROW(tr::describe_model(tr::read_model_file(file), file));
  // The stray temporary file is not a model and stays out of the way.
  EXPECT_THROW(tr::read_model_file(temps[0]), tr::Error);
  EXPECT_TRUE(tr::update_kernel_module(file, rebuilt).changed);
  EXPECT_EQ(tr::describe_model(tr::read_model_file(file), file).kernel_module->sha256,
            tr::sha256_hex(read_bytes(rebuilt)));
}

// ---- the tpu_model binary ------------------------------------------------------------

TEST_F(ModelTest, ToolBuildRunCompare) {
  if (!have_tool()) FAIL() << "the tpu_model binary is not available (TPU_MODEL_TOOL): a build problem";
  std::ofstream(path("net.json")) << chain_net("mixed");
  for (const std::string chip : {"bm1684x", "bm1688"}) {
    SCOPED_TRACE(chip);
    const std::string model = path(chip + ".tpumodel");
    ToolRun b = tool({"build", path("net.json"), "--chip", chip, "-o", model, "--lib-dir", sample_dir(), "--reference",
                      path("ref.npz"), "--save-input", path("in.npz")});
    ASSERT_EQ(b.status, 0) << b.output;
    EXPECT_NE(b.output.find("dynamic (net)"), std::string::npos) << b.output;
    ToolRun r = tool({"run", model, "--input", path("in.npz"), "--output", path("out.npz"), "--compare",
                      path("ref.npz"), "--max-ulp", "0"});
    ASSERT_EQ(r.status, 0) << r.output;
    for (const std::string part : {"abs", "ceil", "swap", "crop", "static", "dynamic", "GDMA bytes", "PASS"})
      EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
    const tr::npz::Arrays out = tr::npz::read_npz(path("out.npz"));
    const tr::npz::Arrays ref = tr::npz::read_npz(path("ref.npz"));
    EXPECT_EQ(out.at("y").data, ref.at("y").data);  // fp32 and bit-exact: the same bytes
  }
}

TEST_F(ModelTest, ToolCompareFailureAndTolerance) {
  if (!have_tool()) FAIL() << "the tpu_model binary is not available (TPU_MODEL_TOOL): a build problem";
  const std::string model = chain_model("m.tpumodel", "bm1684x");
  tr::npz::Arrays ref = tr::stored_reference_outputs(tr::read_model_file(model), model);
  ref.at("y").values<float>()[5] += 0.25f;
  tr::npz::write_npz(path("off.npz"), ref);
  ToolRun strict = tool({"run", model, "--compare", path("off.npz")});
  EXPECT_EQ(strict.status, 1) << strict.output;
  EXPECT_NE(strict.output.find("FAIL"), std::string::npos) << strict.output;
  // --tolerance sets the similarity figures and keeps the dtype's bound on
  // the error against the output's peak; --max-ulp inf drops every
  // per-element bound, as the vendor's option has none.
  ToolRun figures = tool({"run", model, "--compare", path("off.npz"), "--tolerance", "0.99,0.9"});
  EXPECT_EQ(figures.status, 1) << figures.output;
  EXPECT_NE(figures.output.find("max error 0.25 (index 5) is"), std::string::npos) << figures.output;
  EXPECT_NE(figures.output.find("of the reference's peak |value|"), std::string::npos) << figures.output;
  ToolRun loose = tool({"run", model, "--compare", path("off.npz"), "--tolerance", "0.99,0.9", "--max-ulp", "inf"});
  EXPECT_EQ(loose.status, 0) << loose.output;
  EXPECT_NE(loose.output.find("PASS"), std::string::npos) << loose.output;
  // A NaN reference against numbers fails whatever the tolerance (NaN pairs
  // are out of the similarity sums: cosine alone would say 1).
  tr::npz::Arrays nan_ref = tr::stored_reference_outputs(tr::read_model_file(model), model);
  for (float &v : nan_ref.at("y").values<float>()) v = std::numeric_limits<float>::quiet_NaN();
  tr::npz::write_npz(path("nan.npz"), nan_ref);
  ToolRun nan = tool({"run", model, "--compare", path("nan.npz"), "--tolerance", "0.99,0.90", "--max-ulp", "inf"});
  EXPECT_EQ(nan.status, 1) << nan.output;
  EXPECT_NE(nan.output.find("NaN or infinite where the reference is not (or the reverse); the first at index 0"),
            std::string::npos)
      << nan.output;
  ToolRun stored = tool({"run", model, "--compare-stored", "--max-ulp", "0"});
  EXPECT_EQ(stored.status, 0) << stored.output;
  ToolRun bad = tool({"run", model, "--compare-stored", "--tolerance", "x"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("expected two numbers"), std::string::npos) << bad.output;
  tr::npz::write_npz(path("wrong.npz"), {{"y", ref.at("y")}});
  ToolRun wrong_input = tool({"run", model, "--input", path("wrong.npz")});
  EXPECT_EQ(wrong_input.status, 1);
  EXPECT_NE(wrong_input.output.find("no array 'x' for input 'x'"), std::string::npos) << wrong_input.output;
  EXPECT_EQ(tool({"run"}).status, 2);
  EXPECT_EQ(tool({"frobnicate"}).status, 2);
}

TEST_F(ModelTest, ToolInfoDumpUpdateAndVendorSpellings) {
  if (!have_tool()) FAIL() << "the tpu_model binary is not available (TPU_MODEL_TOOL): a build problem";
  const std::string model = chain_model("m.tpumodel", "bm1684x");
  const std::string sha = tr::sha256_hex(read_bytes(sample_libs("bm1684x").firmware));
  for (const std::string spelling : {"info", "--info"}) {
    ToolRun i = tool({spelling, model});
    ASSERT_EQ(i.status, 0) << i.output;
    EXPECT_NE(i.output.find(sha), std::string::npos) << i.output;
    EXPECT_NE(i.output.find(" commands)"), std::string::npos) << i.output;
  }
  ToolRun j = tool({"info", model, "--json"});
  ASSERT_EQ(j.status, 0) << j.output;
  const auto json = nlohmann::json::parse(j.output);
  EXPECT_EQ(json["kernel_module"]["sha256"], sha);
  EXPECT_EQ(json["sections"][0]["name"], "kernel_module");

  ASSERT_EQ(tool({"--kernel_dump", model, "-o", path("k.so")}).status, 0);
  EXPECT_EQ(read_bytes(path("k.so")), read_bytes(sample_libs("bm1684x").firmware));
  fs::create_directory(path("d"));
  ASSERT_EQ(tool({"kernel_dump", model, "-o", path("d")}).status, 0);
  EXPECT_TRUE(fs::exists(path("d/libcmodel_custom_bm1684x.so")));

  const std::vector<uint8_t> original = read_bytes(model);
  ToolRun rejected = tool({"--kernel_update", model, sample_libs("bm1688").firmware});
  EXPECT_EQ(rejected.status, 1);
  EXPECT_NE(rejected.output.find("built for bm1688"), std::string::npos) << rejected.output;
  EXPECT_EQ(read_bytes(model), original);
  ToolRun missing = tool({"kernel_update", model, path("nope.so")});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("no such file"), std::string::npos) << missing.output;

  if (!have_fixtures()) return;
  const std::string rebuilt = extended_libs("bm1684x").firmware;
  ToolRun u = tool({"--kernel_update", model, rebuilt});
  ASSERT_EQ(u.status, 0) << u.output;
  EXPECT_NE(u.output.find(tr::sha256_hex(read_bytes(rebuilt))), std::string::npos) << u.output;
  ToolRun again = tool({"kernel_update", model, rebuilt});
  EXPECT_EQ(again.status, 0);
  EXPECT_NE(again.output.find("nothing to do"), std::string::npos) << again.output;
  ToolRun r = tool({"run", model, "--compare-stored", "--max-ulp", "0"});
  EXPECT_EQ(r.status, 0) << r.output;
}

// The same crash through the binary: its default SIGXFSZ action kills it
// in the middle of writing the temporary file.
TEST_F(ModelTest, ToolKernelUpdateCrashingMidWrite) {
  if (!have_tool() || !have_fixtures()) FAIL() << "the tpu_model binary or the model fixtures are not available: a build problem";
  const std::string model = chain_model("m.tpumodel", "bm1684x");
  const std::vector<uint8_t> original = read_bytes(model);
  ToolRun r = tool({"kernel_update", model, extended_libs("bm1684x").firmware}, [] {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    const rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
  });
  EXPECT_EQ(r.status, 128 + SIGXFSZ) << r.output;
  EXPECT_EQ(read_bytes(model), original);
  EXPECT_EQ(files_starting(".m.tpumodel.tmp-").size(), 1u);
  ToolRun info = tool({"info", model});
  EXPECT_EQ(info.status, 0) << info.output;
}

}  // namespace
