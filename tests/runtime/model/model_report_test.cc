// model_report_test: a model run's profile summary (the layers' figures,
// the trace's metadata, tpu_model run's profile table and --report page)
// and the profile recorded at build (tpu_model info, info --json), on the
// sample ops (TPU_SAMPLE_OPS_LIB_DIR) through the tpu_model binary
// (TPU_MODEL_TOOL).
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "support/test_support.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/model_report.h"
#include "tpu_runtime/net.h"

#ifndef TPU_SAMPLE_OPS_LIB_DIR
#define TPU_SAMPLE_OPS_LIB_DIR ""
#endif
#ifndef TPU_MODEL_TOOL
#define TPU_MODEL_TOOL ""
#endif

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::json;

const std::string kSampleDir = TPU_SAMPLE_OPS_LIB_DIR;

// absadd and ceiladd form a layer group; crop runs dynamic.
constexpr const char *kNet = R"({"name": "chain", "inputs": [{"name": "x", "shape": [2, 3, 20, 24], "dtype": "fp32"}],
  "layers": [
    {"name": "abs", "op": "absadd", "params": {"b": 0.75}, "inputs": ["x"], "outputs": ["t_abs"]},
    {"name": "ceil", "op": "ceiladd", "params": {"b": -1.5}, "inputs": ["t_abs"], "outputs": ["t_ceil"]},
    {"name": "crop", "op": "crop", "params": {"hoffset": 3, "woffset": 5, "hnew": 12, "wnew": 16},
     "inputs": ["t_ceil"], "outputs": ["y"], "dynamic": true}],
  "outputs": ["y"]})";

class ModelReport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kSampleDir + "/libplugin_custom.so"))
      FAIL() << "the sample ops' libraries are not available (TPU_SAMPLE_OPS_LIB_DIR): a build problem";
    tr::BuildOptions options;
    options.chip = "bm1684x";
    options.libraries = {kSampleDir + "/libplugin_custom.so", kSampleDir + "/libbackend_custom.so",
                         kSampleDir + "/" + tr::firmware_file_name("bm1684x")};
    options.reference = true;
    options.embed_reference = true;
    built_ = tr::build_model(tr::parse_net(nlohmann::ordered_json::parse(kNet), "chain.json"), options, "chain.json");
  }

  static std::pair<int, std::string> shell(const std::string &command) {
    test::CommandRun run = test::run_command(command);
    return {run.status, std::move(run.output)};
  }

  tr::BuildResult built_;
};

TEST_F(ModelReport, LayersFiguresAndTheTraceMetadataAgree) {
  tr::RunOptions options;
  options.profile = true;
  const tr::RunResult run = tr::run_model(built_.model, built_.reference_inputs, "chain", options);
  ASSERT_EQ(run.layers.size(), 3u);
  const Json meta = Json::parse(run.trace_json).at("metadata").at("profile_summary");
  // The group runs on its first layer: two rows, the group and crop.
  ASSERT_EQ(meta.at("layers").size(), 2u);
  EXPECT_EQ(meta.at("layers")[0].at("name"), "abs");
  EXPECT_EQ(meta.at("layers")[1].at("name"), "crop");
  tr::ProfileFigures total;
  for (const tr::LayerStats &l : run.layers) {
    EXPECT_NEAR(l.profile.total_us, l.total_us, 1e-9) << l.name;
    total += l.profile;
  }
  const Json t = meta.at("total");
  EXPECT_NEAR(t.at("total_us").get<double>(), total.total_us, 1e-9);
  EXPECT_EQ(t.at("tiu").at("commands"), total.tiu_commands);
  // The group is double-buffered: its loads and stores run beside its compute.
  EXPECT_GT(t.at("concurrency").get<double>(), 0);
  EXPECT_GT(total.tiu_commands, 0u);
  EXPECT_NEAR(t.at("parallelism").get<double>(), (total.tiu_busy_us + total.gdma_busy_us) / total.total_us, 1e-9);

  const std::string text = tr::run_profile_text(built_.description, run);
  EXPECT_CONTAINS(text, "profile (TIU = BDC;");
  EXPECT_CONTAINS(text, "  0   abs ");
  EXPECT_CONTAINS(text, "  2   crop ");
  EXPECT_EQ(text.find("  1   ceil "), std::string::npos) << text;
  EXPECT_CONTAINS(text, "      total ");
  EXPECT_CONTAINS(text, "  GDMA S2L ");
}

TEST_F(ModelReport, RunReportAndInfoThroughTheTool) {
  test::TempDir dir("model_report_test");
  tr::write_model_file(dir.file("m.tpumodel"), built_.model);
  const std::string tool = std::string(TPU_MODEL_TOOL);
  const auto [status, out] =
      shell(tool + " run " + dir.file("m.tpumodel") + " --compare-stored --report " + dir.file("r.html"));
  ASSERT_EQ(status, 0) << out;
  EXPECT_CONTAINS(out, "wrote the report " + dir.file("r.html"));
  EXPECT_CONTAINS(out, "profile (TIU = BDC;");
  // The report follows the comparison's verdict; the profile comes first.
  EXPECT_LT(out.find("profile (TIU"), out.find("PASS: every output"));
  std::ifstream in(dir.file("r.html"));
  const std::string html(std::istreambuf_iterator<char>(in), {});
  EXPECT_CONTAINS(html, "<tr class=\"passed\"><td>chain</td><td>bm1684x</td><td>fp32</td><td><a href=\"#case-0\">y</a>");
  EXPECT_CONTAINS(html, "<h2>Layers</h2>");
  EXPECT_CONTAINS(html, "<td>abs</td><td>absadd</td><td>group 0</td>");
  EXPECT_CONTAINS(html, "Profile summary of every run");
  EXPECT_CONTAINS(html, "class=\"picture timeline\"><svg");

  // info: each layer's global run at build; --json: the same in the metadata.
  const auto [info_status, info] = shell(tool + " info " + dir.file("m.tpumodel"));
  ASSERT_EQ(info_status, 0) << info;
  EXPECT_CONTAINS(info, "profile at build: each layer's global run when the model was built");
  EXPECT_CONTAINS(info, "  0   abs ");
  const auto [json_status, json] = shell(tool + " info --json " + dir.file("m.tpumodel"));
  ASSERT_EQ(json_status, 0) << json;
  const Json layer = Json::parse(json).at("layers")[0];
  EXPECT_GT(layer.at("profile").at("tiu").at("commands").get<uint64_t>(), 0u);
  EXPECT_GE(layer.at("profile").at("gdma").at("ratio").get<double>(), 0);
}

}  // namespace
