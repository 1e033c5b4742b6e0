// model_report.cc: a model run's profile as tpu_model shows it, and its
// HTML report (model_report.h).
#include "tpu_runtime/model_report.h"

#include <fmt/format.h>

#include "tpu_runtime/profile.h"
#include "tpu_runtime/profile_summary.h"

namespace tpu_runtime {
namespace {

constexpr const char *kProfileRow = "  {:<3} {:<16} {:>7} {:>7} {:>9} {:>11} {:>9} {:>10} {:>15}\n";

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string profile_row(const std::string &index, const std::string &name, const ProfileSummary &p) {
  return fmt::format(kProfileRow, index, name, percent(p.tiu_ratio), percent(p.gdma_ratio), percent(p.parallelism),
                     percent(p.concurrency), p.tiu_commands, p.gdma_commands,
                     fmt::format("{}/{}", p.bank_conflicts, p.tiu_commands));
}

std::string profile_header(const char *title) {
  return fmt::format("{} (TIU = BDC; docs/layer-groups.md \"Profile summary\" defines each figure)\n", title) +
         fmt::format(kProfileRow, "#", "layer", "TIU", "GDMA", "parallel", "concurrent", "TIU cmds", "GDMA cmds",
                     "bank conflicts");
}

std::string direction_lines(const ProfileSummary &p) {
  std::string out;
  for (const std::string &line : profile_direction_lines(p)) out += "  " + line + "\n";
  return out;
}

// A layer's row in the report: a group's other layers ran nothing of their own.
ReportLayer report_layer(const ModelDescription &d, const LayerStats &s, std::size_t i) {
  const int group = i < d.layers.size() ? d.layers[i].group : -1;
  const std::string mode = group >= 0 ? fmt::format("group {}", group) : std::string(mode_name(s.mode));
  return {i, s.name, s.op, mode, s.total_us, s.gdma_bytes, summarize_profile(s.profile)};
}

// A model output's row: its comparison, and the time and bytes of the run
// that produced it (the sums of the layer table).
ReportCase output_case(const ModelDescription &d, const OutputComparison *c, const std::string &name, Dtype dtype,
                       const RunResult &run) {
  ReportCase rc;
  rc.op = d.net_name;
  rc.chip = d.chip;
  rc.dtype = dtype_name(dtype);
  rc.name = name;
  rc.failed = c && !c->passed;
  rc.result = !c ? "not compared" : c->passed ? "pass" : "FAIL";
  rc.message = c ? c->why : "";
  rc.outputs.push_back({name, dtype_name(dtype), c && c->compared, c ? c->similarity : Similarity{}});
  for (const LayerStats &l : run.layers) {
    rc.total_us += l.total_us;
    rc.gdma_bytes += l.gdma_bytes;
  }
  return rc;
}

}  // namespace

std::string run_profile_text(const ModelDescription &d, const RunResult &run) {
  std::string out = profile_header("profile");
  ProfileFigures total;
  for (std::size_t i = 0; i < run.layers.size(); ++i) {
    const LayerStats &s = run.layers[i];
    total += s.profile;
    const int group = i < d.layers.size() ? d.layers[i].group : -1;
    if (group >= 0 && int(i) != d.groups[std::size_t(group)].first) continue;  // on the group's first layer
    if (s.mode == LayerMode::host_mode) {  // no engine ran: its own figures
      out += fmt::format("  {:<3} {:<16} host layer: {:.2f} us on the host, {:.2f} us of copies ({} + {} bytes), "
                         "engines idle\n",
                         i, s.name, s.host_us, s.transfer_us, s.host_bytes_in, s.host_bytes_out);
      continue;
    }
    out += profile_row(fmt::format("{}", i), s.name, summarize_profile(s.profile));
  }
  const ProfileSummary whole = summarize_profile(total);
  out += profile_row("", "total", whole);
  return out + direction_lines(whole);
}

std::string build_profile_text(const ModelFile &model) {
  const nlohmann::json &m = model.metadata;
  if (!m.contains("layers") || !m["layers"].is_array()) return "";
  std::string rows;
  for (std::size_t i = 0; i < m["layers"].size(); ++i) {
    const nlohmann::json &l = m["layers"][i];
    if (!l.is_object() || !l.contains("profile") || !l["profile"].is_object()) continue;
    const std::string name = l.contains("name") && l["name"].is_string() ? l["name"].get<std::string>() : "?";
    const ProfileSummary p = profile_summary_from_json(l["profile"]);
    rows += profile_row(fmt::format("{}", i), name, p) + direction_lines(p);
  }
  if (rows.empty()) return "";
  return "\n" + profile_header("profile at build: each layer's global run when the model was built") + rows +
         "  (a layer in a layer group runs in its group instead: tpu_model run --report profiles the run)\n";
}

Report model_report(const ModelDescription &d, const RunResult &run, const std::vector<OutputComparison> *comparisons,
                    std::string_view where) {
  Report r;
  r.title = fmt::format("tpu_model run {}", where);
  r.notes.push_back(fmt::format("net '{}' on {}, {} layers", d.net_name, d.chip, d.layers.size()));
  if (!comparisons) r.notes.push_back("outputs not compared: pass --compare or --compare-stored");
  ProfileFigures total;
  for (std::size_t i = 0; i < run.layers.size(); ++i) {
    total += run.layers[i].profile;
    const int group = i < d.layers.size() ? d.layers[i].group : -1;
    if (group < 0 || int(i) == d.groups[std::size_t(group)].first) r.layers.push_back(report_layer(d, run.layers[i], i));
  }
  for (std::size_t o : d.outputs) {
    const ModelTensor &t = d.tensors[o];
    const OutputComparison *c = nullptr;
    if (comparisons)
      for (const OutputComparison &oc : *comparisons)
        if (oc.name == t.name) c = &oc;
    r.cases.push_back(output_case(d, c, t.name, t.dtype, run));
  }
  r.total_profile = summarize_profile(total);
  if (!run.trace_json.empty()) r.timeline_svg = trace_svg(run.trace_json);
  return r;
}

}  // namespace tpu_runtime
