// tpu_model: builds TPU SDK models from a JSON net description, runs them on
// the emulator, and inspects or updates their embedded kernel module.
//
//   tpu_model build net.json --chip bm1684x -o net.tpumodel [--lib-dir DIR]
//             [--input in.npz | --seed N] [--reference ref.npz] [--save-input in.npz] [--embed-reference]
//             [--no-groups] [--group-local-memory BYTES]
//             [--pipeline K [--micro-batches M] [--stage-memory BYTES]]
//   tpu_model run net.tpumodel [--input in.npz] [--output out.npz] [--micro-batches M]
//             [--compare ref.npz | --compare-stored] [--tolerance cos,euclid] [--max-ulp N]
//             [--profile run.json] [--profile-svg run.svg] [--report run.html]
//   tpu_model info net.tpumodel [--json]
//   tpu_model kernel_dump net.tpumodel [-o path]
//   tpu_model kernel_update net.tpumodel libcmodel_custom_bm1684x.so
//   tpu_model custom_ap_update net.tpumodel libcustomcpuop.so [--replace NAME]
//
// info, kernel_dump and kernel_update also take the vendor's .bmodel files
// (recognised by their magic, whatever the extension); kernel_update then
// takes a device module (AArch64 for BM1684X, RISC-V for BM1688) and
// accepts -o (write elsewhere) and --name (the stored file name).
//
// custom_ap_update replaces a host library (the AP ops' libcustomcpuop.so,
// or a callback library named by --replace); on a .bmodel it replaces the
// cpuop_module (-o and --name as for kernel_update).
// The vendor spellings --info, --kernel_dump, --kernel_update and
// --custom_ap_update work too.
// Exit status: 0 success; 1 an error or an output that failed the
// comparison; 2 a usage error. docs/tpu-model.md describes everything.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cmodel_host.h"
#include "tpu_runtime/bmodel.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/model_report.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/npz.h"
#include "tpu_runtime/pipeline.h"
#include "tpu_runtime/onnx_import.h"
#include "tpu_runtime/profile.h"

namespace {

namespace tr = tpu_runtime;
using tr::Error;

struct BuildArgs {
  std::string net, chip, output, lib_dir, input, reference, save_input;
  std::string net_json;  // an ONNX model's net description, written here
  std::vector<std::string> input_shapes;  // NAME=D0,D1,... for an ONNX model's symbolic dims
  uint64_t seed = 1;
  bool embed_reference = false;
  bool no_groups = false;
  uint32_t group_local_memory = 0;
  int pipeline = 0;  // stages; 0: not pipelined
  int micro_batches = 1;
  std::optional<uint64_t> stage_memory;
};

struct RunArgs {
  std::string model, input, output, compare, tolerance;
  std::string profile, profile_svg;  // Chrome trace JSON, SVG timeline
  std::string report;                // HTML report
  bool compare_stored = false;
  std::optional<double> max_ulp;
  std::optional<int> micro_batches;
};

std::string format_bytes(uint64_t bytes) {
  if (bytes >= (uint64_t(1) << 20)) return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20));
  if (bytes >= (uint64_t(1) << 10)) return fmt::format("{:.1f} KiB", double(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

tr::LibraryPaths library_paths(const std::string &lib_dir, const std::string &chip) {
  if (lib_dir.empty()) return tr::default_library_paths(chip);
  return {lib_dir + "/libplugin_custom.so", lib_dir + "/libbackend_custom.so",
          lib_dir + "/" + tr::firmware_file_name(chip), tr::ap_library_in(lib_dir)};
}

// --input-shape NAME=D0,D1,... (a dim 0 too: an empty tensor).
std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::vector<std::string> &texts) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string &text : texts) {
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
      throw tr::Error(fmt::format("--input-shape '{}': expected NAME=D0,D1,... (e.g. x=1,3,224,224)", text));
    std::vector<int64_t> dims;
    std::size_t at = eq + 1;
    while (at <= text.size()) {
      const std::size_t comma = std::min(text.find(',', at), text.size());
      const std::string dim = text.substr(at, comma - at);
      char *end = nullptr;
      const long long v = std::strtoll(dim.c_str(), &end, 10);
      if (dim.empty() || *end != '\0' || v < 0)
        throw tr::Error(fmt::format("--input-shape '{}': dim '{}' is not a size (0 or more)", text, dim));
      dims.push_back(v);
      at = comma + 1;
    }
    if (!shapes.emplace(text.substr(0, eq), dims).second)
      throw tr::Error(fmt::format("--input-shape '{}': input '{}' is given twice", text, text.substr(0, eq)));
  }
  return shapes;
}

// The net of a JSON description, or of an ONNX model (docs/onnx.md).
tr::NetDescription read_net_or_onnx(const BuildArgs &a) {
  if (!tr::is_onnx_path(a.net)) {
    if (!a.net_json.empty()) throw tr::Error("--net-json needs an ONNX model (a .onnx file)");
    return tr::read_net(a.net);
  }
  tr::OnnxImportOptions options;
  options.libraries = library_paths(a.lib_dir, a.chip);
  options.input_shapes = parse_input_shapes(a.input_shapes);
  tr::OnnxImport imported = tr::import_onnx(a.net, options);
  for (const std::string &w : imported.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (!a.net_json.empty()) {
    std::FILE *f = std::fopen(a.net_json.c_str(), "w");
    if (!f) throw tr::Error(fmt::format("{}: cannot write the net description: {}", a.net_json, std::strerror(errno)));
    fmt::print(f, "{}\n", imported.net_json.dump(2));
    std::fclose(f);
  }
  return std::move(imported.net);
}

int build(const BuildArgs &a) {
  const tr::NetDescription net = read_net_or_onnx(a);
  tr::BuildOptions options;
  options.chip = a.chip;
  options.libraries = library_paths(a.lib_dir, a.chip);
  options.seed = a.seed;
  options.embed_reference = a.embed_reference;
  options.layer_groups = !a.no_groups;
  options.group_local_memory = a.group_local_memory;
  options.reference = !a.input.empty() || !a.reference.empty() || !a.save_input.empty() || a.embed_reference;
  if (!a.input.empty()) options.reference_inputs = tr::npz::read_npz(a.input);
  tr::BuildResult result = tr::build_model(net, options, a.net);
  if (a.pipeline > 0)
    tr::add_pipeline(result, net, options, {a.pipeline, a.micro_batches, a.stage_memory}, a.net);
  else if (a.micro_batches != 1 || a.stage_memory)
    throw Error("--micro-batches and --stage-memory plan a pipeline: give --pipeline K too");
  tr::write_model_file(a.output, result.model);

  const tr::ModelDescription &d = result.description;
  fmt::print("built {} for {}: net '{}', {} layers, memory plan {}\n", a.output, d.chip, d.net_name, d.layers.size(),
             format_bytes(d.memory_size));
  for (std::size_t i = 0; i < d.layers.size(); ++i) {
    const tr::ModelLayer &l = d.layers[i];
    std::vector<std::string> outs;
    for (std::size_t t : l.outputs)
      outs.push_back(fmt::format("{} [{}]", d.tensors[t].name, fmt::join(d.tensors[t].shape, ",")));
    fmt::print("  {:<3} {:<16} {:<14} {:<26} -> {}\n", i, l.name, l.op,
               l.mode == tr::LayerMode::host_mode ? std::string("host (runs on the host CPU)")
               : l.mode == tr::LayerMode::dynamic_mode
                   ? fmt::format("dynamic ({}{})", l.dynamic_reason,
                                 l.group >= 0 ? fmt::format(", layer group {}", l.group) : std::string())
               : l.group >= 0 ? fmt::format("static (layer group {})", l.group)
                              : std::string("static"),
               fmt::join(outs, ", "));
  }
  if (!d.groups.empty() || d.layer_groups.is_object()) {
    const auto figure = [&](const char *key) {
      return d.layer_groups.contains(key) && d.layer_groups[key].is_number() ? d.layer_groups[key].get<double>() : 0.0;
    };
    fmt::print("  {} layer group{}, estimated {:.2f} us against {:.2f} us all-global (tpu_model info explains the "
               "plan)\n",
               d.groups.size(), d.groups.size() == 1 ? "" : "s", figure("planned_us"), figure("global_us"));
  }
  if (d.kernel_module)
    fmt::print("  kernel module {} ({}, sha256 {})\n", d.kernel_module->file_name, format_bytes(d.kernel_module->size),
               d.kernel_module->sha256);
  else
    fmt::print("  no kernel module: built-in layers only, no custom-layer library needed\n");
  for (const std::string &w : result.warnings) fmt::print("warning: {}\n", w);
  if (!a.reference.empty()) {
    tr::npz::write_npz(a.reference, result.reference_outputs);
    fmt::print("wrote the reference outputs to {}\n", a.reference);
  }
  if (!a.save_input.empty()) {
    tr::npz::write_npz(a.save_input, result.reference_inputs);
    fmt::print("wrote the reference inputs to {}\n", a.save_input);
  }
  if (a.embed_reference) fmt::print("stored the reference inputs and outputs in the model\n");
  if (a.pipeline > 0) fmt::print("{}", tr::pipeline_info_text(result.model, a.output));
  return 0;
}

tr::Tolerance parse_tolerance(const std::string &text) {
  const auto comma = text.find(',');
  double cosine = 0, euclid = 0;
  try {
    if (comma == std::string::npos) throw std::invalid_argument("no comma");
    std::size_t used = 0;
    cosine = std::stod(text.substr(0, comma), &used);
    if (used != comma) throw std::invalid_argument("cos");
    const std::string rest = text.substr(comma + 1);
    euclid = std::stod(rest, &used);
    if (used != rest.size()) throw std::invalid_argument("euclid");
  } catch (const std::exception &) {
    throw Error(fmt::format("--tolerance '{}': expected two numbers 'cos,euclid', e.g. 0.99,0.90", text));
  }
  if (!(cosine > -1 && cosine <= 1) || !(euclid <= 1))
    throw Error(fmt::format("--tolerance '{}': the figures are at most 1", text));
  // The similarity figures only: each output keeps its dtype's per-element
  // bound (NaN here; model_output_tolerance) unless --max-ulp replaces it
  // with a ulp bound ("--max-ulp inf" drops it).
  return {cosine, euclid, std::numeric_limits<double>::quiet_NaN()};
}

// The layer table, then the profile summary of each layer and of the run.
void print_layers(const tr::ModelDescription &d, const tr::RunResult &result) {
  constexpr const char *kRow = "  {:<3} {:<16} {:<14} {:<8} {:>10} {:>12}\n";
  fmt::print(kRow, "#", "layer", "op", "mode", "est. us", "GDMA bytes");
  double total_us = 0;
  uint64_t total_bytes = 0;
  for (std::size_t i = 0; i < result.layers.size(); ++i) {
    const tr::LayerStats &s = result.layers[i];
    const int group = i < d.layers.size() ? d.layers[i].group : -1;
    fmt::print(kRow, i, s.name, s.op, group >= 0 ? fmt::format("group {}", group) : std::string(tr::mode_name(s.mode)),
               fmt::format("{:.2f}", s.total_us), s.gdma_bytes);
    total_us += s.total_us;
    total_bytes += s.gdma_bytes;
  }
  fmt::print(kRow, "", "total", "", "", fmt::format("{:.2f}", total_us), total_bytes);
  fmt::print("  (static layers replayed the commands recorded at build; dynamic layers ran through the kernel "
             "module's entry functions)\n");
  bool host_header = false;
  for (const tr::LayerStats &s : result.layers) {
    if (s.mode != tr::LayerMode::host_mode) continue;
    if (!host_header)
      fmt::print("  host layers (est. us = measured host time + copies at {} bytes/us and {} us each):\n",
                 tr::kHostTransferBytesPerUs, tr::kHostCopyLatencyUs);
    host_header = true;
    fmt::print("    {:<16} host {:.2f} us, copies {:.2f} us, {} bytes device->host, {} bytes host->device\n", s.name,
               s.host_us, s.transfer_us, s.host_bytes_in, s.host_bytes_out);
  }
  if (!d.groups.empty())
    fmt::print("  (a layer group ran slice by slice in local memory; its time and bytes are on its first layer)\n");
  fmt::print("{}", tr::run_profile_text(d, result));
}

// Prints the comparison table; true when every output passed.
bool print_comparisons(const std::vector<tr::OutputComparison> &comparisons, const std::string &expected_name) {
  fmt::print("compared with {}\n", expected_name);
  constexpr const char *kCompareRow = "  {:<16} {:<6} {:>12} {:>12} {:>12} {:>10}  {}\n";
  fmt::print(kCompareRow, "output", "dtype", "cosine", "euclidean", "max error", "max ulp", "result");
  bool all = true;
  for (const tr::OutputComparison &c : comparisons) {
    all = all && c.passed;
    const bool compared = c.compared;
    fmt::print(kCompareRow, c.name, tr::dtype_name(c.dtype), compared ? fmt::format("{:.8f}", c.similarity.cosine) : "-",
               compared ? fmt::format("{:.8f}", c.similarity.euclidean) : "-",
               compared ? fmt::format("{:.4g}", c.similarity.max_abs) : "-",
               compared ? fmt::format("{:g}", c.similarity.max_ulp) : "-", c.passed ? "PASS" : "FAIL");
    if (!c.passed) fmt::print("      {}\n", c.why);
  }
  fmt::print("{}\n", all ? "PASS: every output is within tolerance" : "FAIL: some outputs are not within tolerance");
  return all;
}

// The run's profile files and HTML report; "" or why one could not be
// written (which fails the command only after everything else is done).
std::string write_run_files(const RunArgs &a, const tr::ModelDescription &d, const tr::RunResult &result,
                            const std::optional<std::vector<tr::OutputComparison>> &comparisons) {
  try {
    if (!a.profile.empty() || !a.profile_svg.empty()) {
      tr::write_profile(result.trace_json, a.profile, a.profile_svg);
      for (const std::string &p : {a.profile, a.profile_svg})
        if (!p.empty()) fmt::print("wrote the profile {}\n", p);
    }
    if (!a.report.empty()) {
      tr::write_report_html(tr::model_report(d, result, comparisons ? &*comparisons : nullptr, a.model), a.report);
      fmt::print("wrote the report {}\n", a.report);
    }
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

void write_outputs(const std::string &path, const tr::npz::Arrays &outputs) {
  tr::npz::write_npz(path, outputs);
  std::vector<std::string> names;
  for (const auto &[name, array] : outputs) names.push_back(name);
  fmt::print("wrote {} ({})\n", path, fmt::join(names, ", "));
}

// A pipelined model: its micro-batches through the stages, the schedule,
// and the outputs against the unpipelined run (a difference fails).
int run_pipelined(const RunArgs &a, const tr::ModelFile &model, const tr::npz::Arrays &inputs,
                  const std::optional<tr::npz::Arrays> &expected, const std::string &expected_name,
                  const std::optional<tr::Tolerance> &tolerance) {
  if (!a.profile.empty() || !a.profile_svg.empty() || !a.report.empty())
    throw Error(fmt::format("{}: --profile, --profile-svg and --report profile one run; a pipelined run is several "
                            "(run the micro-batch model, or build without --pipeline)",
                            a.model));
  const std::optional<tr::StoredPipeline> stored = tr::stored_pipeline(model, a.model);
  if (!stored)
    throw Error(fmt::format("{}: --micro-batches: the model is not pipelined (tpu_model build --pipeline K)", a.model));
  const tr::PipelineRunResult result = tr::run_pipeline(model, inputs, a.model, a.micro_batches);
  fmt::print("ran {} pipelined on {}\n{}", a.model, model.metadata.value("chip", "?"),
             tr::pipeline_run_text(result, stored->plan));
  if (!a.output.empty()) write_outputs(a.output, result.outputs);
  bool passed = result.outputs_identical;
  if (expected) {
    const tr::ModelDescription d = tr::describe_model(model, a.model);
    passed = print_comparisons(tr::compare_outputs(d, result.outputs, *expected, tolerance), expected_name) &&
             passed;
  }
  return passed ? 0 : 1;
}

int run(const RunArgs &a) {
  tr::ModelFile model = tr::read_model_file(a.model);
  const tr::ModelDescription d = tr::describe_model(model, a.model);
  tr::npz::Arrays inputs;
  if (!a.input.empty()) {
    inputs = tr::npz::read_npz(a.input);
  } else {
    inputs = tr::stored_reference_inputs(model, a.model);
    if (inputs.empty() && !d.inputs.empty())
      throw Error(fmt::format("{}: no --input given and the model stores no reference inputs", a.model));
    if (!d.inputs.empty()) fmt::print("inputs: the reference inputs stored in the model\n");
  }
  std::optional<tr::npz::Arrays> expected;
  std::string expected_name;
  if (!a.compare.empty()) {
    expected = tr::npz::read_npz(a.compare);
    expected_name = a.compare;
  } else if (a.compare_stored) {
    expected = tr::stored_reference_outputs(model, a.model);
    if (expected->empty()) throw Error(fmt::format("{}: --compare-stored: the model stores no reference outputs", a.model));
    expected_name = "the stored reference";
  }
  std::optional<tr::Tolerance> tolerance;
  if (!a.tolerance.empty()) tolerance = parse_tolerance(a.tolerance);
  if (a.max_ulp) {
    if (!tolerance) tolerance = tr::Tolerance{};
    tolerance->max_ulp = *a.max_ulp;
  }

  tr::RunOptions run_options;
  run_options.profile = !a.profile.empty() || !a.profile_svg.empty() || !a.report.empty();
  if (a.micro_batches || tr::stored_pipeline(model, a.model)) 
    return run_pipelined(a, model, inputs, expected, expected_name, tolerance);
  const tr::RunResult result = tr::run_model(model, inputs, a.model, run_options);
  fmt::print("ran {} on {}\n", a.model, d.chip);
  print_layers(d, result);
  if (!a.output.empty()) write_outputs(a.output, result.outputs);
  std::optional<std::vector<tr::OutputComparison>> comparisons;
  if (expected) comparisons = tr::compare_outputs(d, result.outputs, *expected, tolerance);
  const std::string file_error = write_run_files(a, d, result, comparisons);
  const auto file_status = [&](int status) {
    if (file_error.empty()) return status;
    fmt::print(stderr, "tpu_model: {}\n", file_error);
    return 1;
  };
  if (!comparisons) return file_status(0);
  return file_status(print_comparisons(*comparisons, expected_name) ? 0 : 1);
}

// ---- .bmodel files ---------------------------------------------------------

int bmodel_info(const std::string &path, bool json) {
  if (json) throw Error(fmt::format("{}: --json is not available for .bmodel files", path));
  fmt::print("{}", tr::bmodel::info_text(tr::bmodel::read(path), path));
  return 0;
}

int bmodel_kernel_dump(const std::string &model, const std::string &output) {
  const tr::bmodel::DumpResult r = tr::bmodel::dump_kernel(model, output);
  fmt::print("wrote the kernel module of {} to {} ({} bytes)\n  md5 {}\n  sha256 {}\n", model, r.path, r.size, r.md5,
             r.sha256);
  return 0;
}

std::string module_line(const tr::bmodel::ModuleInfo &m) {
  if (!m.present) return "absent";
  if (m.binary.size == 0) return "none";
  return fmt::format("{} ({} bytes, md5 {}, sha256 {})", m.file_name, m.binary.size, m.md5, m.sha256);
}

int bmodel_kernel_update(const std::string &model, const std::string &library, const std::string &output,
                         const std::string &name) {
  const tr::bmodel::UpdateResult r = tr::bmodel::update_kernel(model, library, {output, name});
  if (!r.changed) {
    fmt::print("unchanged: {} already holds this kernel module under this name ({}); nothing written\n", model,
               module_line(r.new_module));
    return 0;
  }
  fmt::print("updated the kernel module of {}{}\n  old: {}\n  new: {}\n  entries present: {}\n  entries absent: {}\n",
             model, r.written == model ? "" : fmt::format(" into {}", r.written), module_line(r.old_module),
             module_line(r.new_module), fmt::join(r.entries_present, ", "),
             r.entries_absent.empty() ? std::string("none") : fmt::format("{}", fmt::join(r.entries_absent, ", ")));
  if (r.mode == "append")
    fmt::print("  appended at the end of the binary section: {}; the old module's bytes stay as unreferenced space\n",
               r.append_reason);
  else
    fmt::print("  replaced in place in the binary section\n");
  return 0;
}

// ---- TPU SDK model files -----------------------------------------------------

int info(const std::string &path, bool json) {
  if (tr::bmodel::file_has_bmodel_magic(path)) return bmodel_info(path, json);
  tr::ModelFileLayout layout;
  const tr::ModelFile model = tr::read_model_file(path, &layout);
  if (json) {
    tr::describe_model(model, path);  // still checked
    nlohmann::json out = model.metadata;
    nlohmann::json sections = nlohmann::json::array();
    for (const auto &s : layout.sections)
      sections.push_back({{"name", s.name}, {"kind", s.kind}, {"size", s.size}, {"compressed_size", s.compressed_size}});
    out["sections"] = sections;
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("{}", tr::model_info_text(model, layout, path));
  fmt::print("{}", tr::pipeline_info_text(model, path));
  fmt::print("{}", tr::build_profile_text(model));
  return 0;
}

int kernel_dump(const std::string &model, const std::string &output) {
  if (tr::bmodel::file_has_bmodel_magic(model)) return bmodel_kernel_dump(model, output);
  const std::string written = tr::dump_kernel_module(model, output);
  fmt::print("wrote the kernel module of {} to {}\n", model, written);
  return 0;
}

int kernel_update(const std::string &model, const std::string &library, const std::string &output,
                  const std::string &name) {
  if (tr::bmodel::file_has_bmodel_magic(model)) return bmodel_kernel_update(model, library, output, name);
  if (!output.empty() || !name.empty())
    throw Error(fmt::format("{}: -o and --name apply to .bmodel files only", model));
  const tr::KernelUpdateResult r = tr::update_kernel_module(model, library);
  if (!r.changed) {
    fmt::print("{} already holds this kernel module ({}, sha256 {}); nothing to do\n", model, r.new_module.file_name,
               r.new_module.sha256);
    return 0;
  }
  fmt::print("updated the kernel module of {}\n  old: {} ({} bytes, sha256 {})\n  new: {} ({} bytes, sha256 {}, "
             "API level {}, ops {})\n",
             model, r.old_module.file_name, r.old_module.size, r.old_module.sha256, r.new_module.file_name,
             r.new_module.size, r.new_module.sha256, r.new_module.api_level, fmt::join(r.new_module.ops, ", "));
  return 0;
}

int custom_ap_update(const std::string &model, const std::string &library, const std::string &output,
                     const std::string &name, const std::string &replace) {
  if (tr::bmodel::file_has_bmodel_magic(model)) {
    if (!replace.empty()) throw Error(fmt::format("{}: --replace applies to TPU SDK model files only", model));
    const tr::bmodel::UpdateResult r = tr::bmodel::update_cpuop(model, library, {output, name});
    if (!r.changed) {
      fmt::print("unchanged: {} already holds this CPU-op library under this name ({}); nothing written\n", model,
                 module_line(r.new_module));
      return 0;
    }
    fmt::print("updated the CPU-op module of {}{}\n  old: {}\n  new: {} ({}, defines {})\n  {}\n", model,
               r.written == model ? "" : fmt::format(" into {}", r.written), module_line(r.old_module),
               module_line(r.new_module), r.machine, fmt::join(r.entries_present, ", "),
               r.mode == "append" ? "appended at the end of the binary section: " + r.append_reason
                                  : std::string("replaced in place in the binary section"));
    return 0;
  }
  if (!output.empty() || !name.empty())
    throw Error(fmt::format("{}: -o and --name apply to .bmodel files only", model));
  const tr::HostLibraryUpdateResult r = tr::update_host_library(model, library, replace);
  if (!r.changed) {
    fmt::print("{} already holds this host library ({}, sha256 {}); nothing to do\n", model, r.new_library.file_name,
               r.new_library.sha256);
    return 0;
  }
  fmt::print("updated host library {} ({}) of {}\n  old: {} ({} bytes, sha256 {})\n  new: {} ({} bytes, sha256 {}, "
             "{})\n",
             r.old_library.section, r.old_library.kind, model, r.old_library.file_name, r.old_library.size,
             r.old_library.sha256, r.new_library.file_name, r.new_library.size, r.new_library.sha256,
             r.new_library.machine);
  return 0;
}

struct HostUpdateArgs {
  std::string model, library, output, name, replace;
};

CLI::App *add_custom_ap_update(CLI::App &app, HostUpdateArgs &h) {
  CLI::App *cmd = app.add_subcommand("custom_ap_update",
                                     "replace an embedded host library: the AP ops' library (checked, atomic)");
  cmd->add_option("model", h.model, "model file (or .bmodel: its cpuop_module)")->required();
  cmd->add_option("library", h.library, "libcustomcpuop.so / libcustomapop.so, or a callback library")->required();
  cmd->add_option("--replace", h.replace, "model files: the stored file name of the host library to replace");
  cmd->add_option("-o,--output", h.output, ".bmodel only: write the updated model here");
  cmd->add_option("--name", h.name, ".bmodel only: stored library name (default: the library's basename)");
  return cmd;
}

}  // namespace

int main(int argc, char **argv) {
  // The vendor tool's spellings: "--info m" is "info m", and so on.
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() > 1) {
    for (const char *vendor : {"--info", "--kernel_dump", "--kernel_update", "--custom_ap_update"})
      if (args[1] == vendor) args[1] = vendor + 2;
  }
  std::vector<char *> arg_ptrs;
  for (std::string &s : args) arg_ptrs.push_back(s.data());

  CLI::App app{"Builds TPU SDK models from a JSON net description, runs them on the emulator, and inspects or "
               "updates their embedded kernel module (docs/tpu-model.md)."};
  app.require_subcommand(1);
  std::string timeout;
  app.add_option("--timeout", timeout,
                 "time limit of each kernel run in seconds (default 600 or $TPU_SDK_RUN_TIMEOUT; 0: none)");

  BuildArgs b;
  CLI::App *build_cmd = app.add_subcommand("build", "compile a net description into a model file");
  build_cmd->add_option("net", b.net, "net description (JSON) or ONNX model (.onnx, docs/onnx.md)")->required();
  build_cmd->add_option("--chip", b.chip, "bm1684x or bm1688")->required();
  build_cmd->add_option("-o,--output", b.output, "model file to write")->required();
  build_cmd->add_option("--lib-dir", b.lib_dir,
                        "directory holding libplugin_custom.so, libbackend_custom.so and libcmodel_custom_<chip>.so "
                        "(and libcustomcpuop.so for AP ops) (default: TPUC_ROOT / TPUKERNEL_CUSTOM_FIRMWARE_PATH)");
  build_cmd->add_option("--input", b.input, "inputs for the reference outputs (.npz); default: generated");
  build_cmd->add_option("--seed", b.seed, "seed of the generated reference inputs")->capture_default_str();
  build_cmd->add_option("--reference", b.reference, "write the plugin's reference outputs to this .npz");
  build_cmd->add_option("--save-input", b.save_input, "write the reference inputs to this .npz");
  build_cmd->add_flag("--embed-reference", b.embed_reference, "store the reference inputs and outputs in the model");
  build_cmd->add_option("--net-json", b.net_json, "an ONNX model: also write the net description it imports as");
  build_cmd->add_option("--input-shape", b.input_shapes,
                        "an ONNX model: NAME=D0,D1,... fixes a graph input's symbolic dims (dynamic_axes); repeatable");
  build_cmd->add_flag("--no-groups", b.no_groups, "no layer groups: every static layer runs as a global layer");
  build_cmd->add_option("--group-local-memory", b.group_local_memory,
                        "bytes of local memory per NPU the layer groups may use (default: all; less gives finer "
                        "slices, to debug a local kernel's slicing)");
  build_cmd->add_option("--pipeline", b.pipeline,
                        "cut the model into K pipeline stages (cores or chips) and store the plan (docs/pipeline.md)")
      ->check(CLI::Range(1, 4096));
  build_cmd->add_option("--micro-batches", b.micro_batches,
                        "with --pipeline: micro-batches per run, each 1/M of the batch (axis 0 of every input); the "
                        "micro-batch model is built and stored too (default 1)")
      ->check(CLI::Range(1, 1 << 20));
  build_cmd->add_option("--stage-memory", b.stage_memory,
                        "with --pipeline: bytes of memory per stage (default: bm1684x a card's 12 GiB, bm1688 the "
                        "chip's 8 GiB shared by the stages)");

  RunArgs r;
  CLI::App *run_cmd = app.add_subcommand("run", "run a model on the emulator");
  run_cmd->add_option("model", r.model, "model file")->required();
  run_cmd->add_option("--input", r.input, "inputs (.npz); default: the reference inputs stored in the model");
  run_cmd->add_option("--output", r.output, "write the outputs to this .npz");
  auto *compare_opt = run_cmd->add_option("--compare", r.compare, "compare the outputs with this .npz");
  run_cmd->add_flag("--compare-stored", r.compare_stored, "compare with the reference outputs stored in the model")
      ->excludes(compare_opt);
  run_cmd->add_option("--tolerance", r.tolerance,
                      "minimum cosine and euclidean similarity 'cos,euclid' (each output keeps its dtype's ulp "
                      "bound unless --max-ulp replaces it); default: per dtype");
  run_cmd->add_option("--max-ulp", r.max_ulp, "maximum error in units in the last place (0: bit-exact, inf: no bound)");
  run_cmd->add_option("--profile", r.profile,
                      "write the run's timeline as Chrome trace-event JSON (open it in Perfetto or "
                      "chrome://tracing): a lane per engine with every command, a lane of layers");
  run_cmd->add_option("--profile-svg", r.profile_svg, "draw the same timeline as a standalone SVG");
  run_cmd->add_option("--report", r.report,
                      "write one self-contained HTML page: the outputs against the reference, the layers' "
                      "profile summaries and the run's timeline (docs/testing.md)");
  run_cmd->add_option("--micro-batches", r.micro_batches,
                      "a pipelined model: the micro-batch count it was built for (the default); the stages' schedule "
                      "and throughput are reported and the outputs checked against the unpipelined run");

  std::string info_model;
  bool info_json = false;
  CLI::App *info_cmd = app.add_subcommand("info", "describe a model file");
  info_cmd->add_option("model", info_model, "model file")->required();
  info_cmd->add_flag("--json", info_json, "print the metadata as JSON");

  std::string dump_model, dump_output;
  CLI::App *dump_cmd = app.add_subcommand("kernel_dump", "write the embedded kernel module to a file");
  dump_cmd->add_option("model", dump_model, "model file")->required();
  dump_cmd->add_option("-o,--output", dump_output, "file or directory (default: its file name, here)");

  std::string update_model, update_library, update_output, update_name;
  CLI::App *update_cmd = app.add_subcommand("kernel_update", "replace the embedded kernel module (checked, atomic)");
  update_cmd->add_option("model", update_model, "model file")->required();
  update_cmd->add_option("library", update_library, "libcmodel_custom_<chip>.so (for a .bmodel: the device module)")
      ->required();
  update_cmd->add_option("-o,--output", update_output, ".bmodel only: write the updated model here");
  update_cmd->add_option("--name", update_name, ".bmodel only: stored module name (default: the library's basename)");
  HostUpdateArgs h;
  CLI::App *host_update_cmd = add_custom_ap_update(app, h);

  try {
    app.parse(int(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::ParseError &e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (!timeout.empty() && cmodel_set_option("run_timeout", timeout.c_str()) != 0)
      throw Error(fmt::format("--timeout: {}", cmodel_last_error()));
    if (*build_cmd) return build(b);
    if (*run_cmd) return run(r);
    if (*info_cmd) return info(info_model, info_json);
    if (*dump_cmd) return kernel_dump(dump_model, dump_output);
    if (*update_cmd) return kernel_update(update_model, update_library, update_output, update_name);
    if (*host_update_cmd) return custom_ap_update(h.model, h.library, h.output, h.name, h.replace);
  } catch (const Error &e) {
    fmt::print(stderr, "tpu_model: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc &) {
    // Layers name themselves (run and build catch this per layer); what
    // is left happened outside any layer.
    fmt::print(stderr, "tpu_model: out of host memory ({} {})\n", args.size() > 1 ? args[1] : "",
               args.size() > 2 ? args[2] : "");
    return 1;
  } catch (const std::exception &e) {
    fmt::print(stderr, "tpu_model: internal error: {}\n", e.what());
    return 1;
  }
  return 2;
}
