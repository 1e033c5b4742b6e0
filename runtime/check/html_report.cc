// html_report.cc: the HTML report of checked cases (html_report.h).
#include "tpu_runtime/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "io/atomic_file.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/profile.h"

namespace tpu_runtime {
namespace {

template <typename... Args>
void put(std::string &out, fmt::format_string<Args...> format, Args &&...args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

// Text for an HTML element or a quoted attribute. Op names and messages are
// the user's: "<", "&" and quotes in them must stay text.
std::string esc(const std::string &text) { return markup_escaped(text); }

// An SVG document as an element of the page: without its XML declaration.
std::string inline_svg(const std::string &svg) {
  const std::size_t start = svg.find("<svg");
  return start == std::string::npos ? std::string() : svg.substr(start);
}

std::string bytes_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t(1) << 20)) return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20));
  if (bytes >= (std::uint64_t(1) << 10)) return fmt::format("{:.1f} KiB", double(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string value_text(double v) { return std::isnan(v) ? "NaN" : fmt::format("{:.9g}", v); }

constexpr const char *kStyle = R"(
body { font-family: sans-serif; font-size: 14px; margin: 16px 24px; color: #222222; background: white; }
h1 { font-size: 22px; margin: 0 0 6px 0; }
h2 { font-size: 18px; margin: 24px 0 8px 0; border-bottom: 1px solid #cccccc; }
h3 { font-size: 15px; margin: 18px 0 6px 0; }
p.note { margin: 2px 0; color: #555555; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border: 1px solid #c8c8c8; padding: 3px 8px; text-align: left; }
th { background: #ececec; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.failed td { background: #fde8e8; }
tr.passed td { background: #ffffff; }
span.fail, span.pass { font-weight: bold; padding: 1px 6px; border-radius: 3px; color: white; }
span.fail { background: #c0392b; }
span.pass { background: #2e8b57; }
pre.message { white-space: pre-wrap; background: #fff4e5; border: 1px solid #f0c080; padding: 6px 8px; }
section.case { border-left: 4px solid #2e8b57; padding-left: 12px; margin: 12px 0 24px 0; }
section.case.failed { border-left-color: #c0392b; }
div.picture svg { max-width: 100%; height: auto; border: 1px solid #dddddd; }
div.figures { display: flex; flex-wrap: wrap; gap: 8px 32px; align-items: flex-start; }
)";

// The worst figures over a case's compared outputs.
struct Worst {
  double cosine = 1, euclidean = 1, max_ulp = 0;
  bool any = false;
};

Worst worst_of(const ReportCase &c) {
  Worst w;
  for (const ReportOutput &o : c.outputs) {
    if (!o.compared) continue;
    w.any = true;
    w.cosine = std::min(w.cosine, o.similarity.cosine);
    w.euclidean = std::min(w.euclidean, o.similarity.euclidean);
    w.max_ulp = std::max(w.max_ulp, o.similarity.max_ulp);
  }
  return w;
}

void case_row(std::string &out, const ReportCase &c, std::size_t id) {
  const Worst w = worst_of(c);
  const auto figure = [&](double v, const char *format) {
    return w.any ? fmt::format(fmt::runtime(format), v) : std::string("-");
  };
  const bool ran = c.ran, profiled = c.profile.has_value();
  put(out, "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td><a href=\"#case-{}\">{}</a></td>",
      c.failed ? "failed" : "passed", esc(c.op), esc(c.chip), esc(c.dtype), id, esc(c.name));
  put(out, "<td><span class=\"{}\">{}</span></td>", c.failed ? "fail" : "pass", esc(c.result));
  put(out, "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>", figure(w.cosine, "{:.6f}"),
      figure(w.euclidean, "{:.6f}"), figure(w.max_ulp, "{:g}"));
  put(out, "<td class=\"num\">{}</td><td class=\"num\">{}</td>", ran ? fmt::format("{:.2f}", c.total_us) : "-",
      ran ? bytes_text(c.gdma_bytes) : "-");
  put(out, "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
      profiled ? percent(c.profile->tiu_ratio) : "-", profiled ? percent(c.profile->gdma_ratio) : "-");
}

void case_table(std::string &out, const std::vector<const ReportCase *> &cases) {
  put(out, "<h2>Cases</h2>\n<table class=\"cases\">\n<tr><th>op</th><th>chip</th><th>dtype</th><th>case</th>"
      "<th>result</th><th>cosine</th><th>euclidean</th><th>worst ulp</th><th>est. us</th><th>GDMA bytes</th>"
      "<th>TIU</th><th>GDMA</th></tr>\n");
  for (std::size_t i = 0; i < cases.size(); ++i) case_row(out, *cases[i], i);
  put(out, "</table>\n");
}

// Where each output first differs from its reference.
void outputs_table(std::string &out, const ReportCase &c) {
  put(out, "<table class=\"outputs\">\n<tr><th>output</th><th>dtype</th><th>cosine</th><th>euclidean</th>"
      "<th>max ulp</th><th>differing elements</th><th>first differing index</th><th>expected</th><th>actual</th></tr>\n");
  for (const ReportOutput &o : c.outputs) {
    const Similarity &s = o.similarity;
    put(out, "<tr><td>{}</td><td>{}</td>", esc(o.name), esc(o.dtype));
    if (!o.compared) {
      put(out, "<td colspan=\"7\">not compared</td></tr>\n");
      continue;
    }
    put(out, "<td class=\"num\">{:.8f}</td><td class=\"num\">{:.8f}</td><td class=\"num\">{:g}</td>"
        "<td class=\"num\">{}</td>",
        s.cosine, s.euclidean, s.max_ulp, s.mismatches);
    if (s.first_mismatch < 0) put(out, "<td colspan=\"3\">none: bit-exact</td></tr>\n");
    else
      put(out, "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n", s.first_mismatch,
          esc(value_text(s.first_expected)), esc(value_text(s.first_actual)));
  }
  put(out, "</table>\n");
}

// The buckets a histogram shows: from 0 to the last non-empty finite one
// (at least "2-3", so an exact output still shows its scale), then "inf"
// when a NaN met a number.
std::vector<std::size_t> shown_buckets(const Similarity &s) {
  std::size_t last = 2;
  for (std::size_t b = 0; b + 1 < kUlpBuckets; ++b)
    if (s.ulp_histogram[b]) last = std::max(last, b);
  std::vector<std::size_t> out;
  for (std::size_t b = 0; b <= last; ++b) out.push_back(b);
  if (s.ulp_histogram[kUlpBuckets - 1]) out.push_back(kUlpBuckets - 1);
  return out;
}

// Bars of the ulp histogram, heights on a log scale (a few large errors
// among many exact elements stay visible), each with its count above and
// its range below.
std::string histogram_svg(const Similarity &s) {
  const std::vector<std::size_t> buckets = shown_buckets(s);
  const std::uint64_t most = std::max<std::uint64_t>(
      1, *std::max_element(s.ulp_histogram.begin(), s.ulp_histogram.end()));
  constexpr int bar_w = 56, plot_h = 120, top = 20, left = 10;
  const int width = std::max(left * 2 + int(buckets.size()) * bar_w, 300), height = top + plot_h + 36;
  std::string out;
  put(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"histogram\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} "
      "{}\" font-family=\"sans-serif\" font-size=\"10\">\n<rect width=\"{}\" height=\"{}\" fill=\"white\"/>\n",
      width, height, width, height, width, height);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const std::size_t b = buckets[i];
    const std::uint64_t n = s.ulp_histogram[b];
    const double h = n ? plot_h * std::log1p(double(n)) / std::log1p(double(most)) : 0;
    const int x = left + int(i) * bar_w;
    const char *colour = b == 0 ? "#2e8b57" : b + 1 == kUlpBuckets ? "#c0392b" : "#e08a2c";
    put(out, "<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"{}\"><title>{} ulp: {} elements"
        "</title></rect>\n",
        x + 4, top + plot_h - h, bar_w - 8, h, colour, ulp_bucket_label(b), n);
    put(out, "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x + bar_w / 2, top + plot_h - h - 4, n);
    put(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x + bar_w / 2, top + plot_h + 14,
        esc(ulp_bucket_label(b)));
  }
  put(out, "<text x=\"{}\" y=\"{}\" fill=\"#555555\">ulp distance (elements per bucket, log scale)</text>\n</svg>\n",
      left, top + plot_h + 30);
  return out;
}

void directions_table(std::string &out, const ProfileSummary &p) {
  if (p.directions.empty()) return;
  put(out, "<table class=\"directions\">\n<tr><th>DMA</th><th>direction</th><th>bytes</th><th>commands</th>"
      "<th>busy us</th><th>GB/s while busy</th><th>GB/s over the run</th></tr>\n");
  for (const DirectionSummary &d : p.directions)
    put(out, "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3f}</td>"
        "<td class=\"num\">{:.2f}</td><td class=\"num\">{:.2f}</td></tr>\n",
        d.engine, d.direction, bytes_text(d.bytes), d.commands, d.busy_us, d.busy_gbps, d.average_gbps);
  put(out, "</table>\n");
}

// The profile summary's figures, named as in the vendor's reports.
void profile_table(std::string &out, const ProfileSummary &p) {
  put(out, "<table class=\"profile\">\n<tr><th>total</th><td class=\"num\">{:.3f} us</td></tr>\n", p.total_us);
  put(out, "<tr><th>TIU (BDC) working ratio</th><td class=\"num\">{} ({:.3f} us busy, {} commands)</td></tr>\n",
      percent(p.tiu_ratio), p.tiu_busy_us, p.tiu_commands);
  put(out, "<tr><th>GDMA working ratio</th><td class=\"num\">{} ({:.3f} us busy, {} commands)</td></tr>\n",
      percent(p.gdma_ratio), p.gdma_busy_us, p.gdma_commands);
  put(out, "<tr><th>parallelism</th><td class=\"num\">{}</td></tr>\n", percent(p.parallelism));
  put(out, "<tr><th>concurrency</th><td class=\"num\">{} ({:.3f} us both busy)</td></tr>\n", percent(p.concurrency),
      p.concurrent_us);
  put(out, "<tr><th>bank conflicts</th><td class=\"num\">{} ({} of {} TIU commands)</td></tr>\n",
      percent(p.bank_conflict_ratio), p.bank_conflicts, p.tiu_commands);
  if (p.sdma_commands || p.hau_commands)
    put(out, "<tr><th>SDMA, HAU commands</th><td class=\"num\">{}, {}</td></tr>\n", p.sdma_commands, p.hau_commands);
  put(out, "</table>\n");
  directions_table(out, p);
}

void case_details(std::string &out, const ReportCase &c, std::size_t id) {
  put(out, "<section class=\"case{}\" id=\"case-{}\">\n<h3><span class=\"{}\">{}</span> {} &middot; {} &middot; {} "
      "&middot; {}</h3>\n",
      c.failed ? " failed" : "", id, c.failed ? "fail" : "pass", esc(c.result), esc(c.op), esc(c.chip), esc(c.dtype),
      esc(c.name));
  if (!c.message.empty()) put(out, "<pre class=\"message\">{}</pre>\n", esc(c.message));
  if (!c.outputs.empty()) outputs_table(out, c);
  // Histograms and the profile side by side: the page stays short enough
  // to see a case at a glance.
  put(out, "<div class=\"figures\">\n");
  for (const ReportOutput &o : c.outputs)
    if (o.compared)
      put(out, "<div><p class=\"note\">ulp errors of {}:</p>\n<div class=\"picture\">{}</div></div>\n", esc(o.name),
          histogram_svg(o.similarity));
  if (c.profile) {
    put(out, "<div><p class=\"note\">profile summary:</p>\n");
    profile_table(out, *c.profile);
    put(out, "</div>\n");
  }
  put(out, "</div>\n");
  if (!c.timeline_svg.empty()) put(out, "<div class=\"picture timeline\">{}</div>\n", inline_svg(c.timeline_svg));
  put(out, "</section>\n");
}

void layers_table(std::string &out, const std::vector<ReportLayer> &layers) {
  if (layers.empty()) return;
  put(out, "<h2>Layers</h2>\n<table class=\"layers\">\n<tr><th>#</th><th>layer</th><th>op</th><th>mode</th>"
      "<th>est. us</th><th>GDMA bytes</th><th>TIU</th><th>GDMA</th><th>parallelism</th><th>concurrency</th>"
      "<th>bank conflicts</th></tr>\n");
  for (const ReportLayer &l : layers) {
    const ProfileSummary &p = l.profile;
    put(out, "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.2f}</td>"
        "<td class=\"num\">{}</td>",
        l.index, esc(l.name), esc(l.op), esc(l.mode), l.total_us, bytes_text(l.gdma_bytes));
    put(out, "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}/{}</td></tr>\n",
        percent(p.tiu_ratio), percent(p.gdma_ratio), percent(p.parallelism), percent(p.concurrency),
        p.bank_conflicts, p.tiu_commands);
  }
  put(out, "</table>\n");
}

std::size_t count_failed(const Report &r) {
  return std::size_t(std::count_if(r.cases.begin(), r.cases.end(), [](const ReportCase &c) { return c.failed; }));
}

void header(std::string &out, const Report &r) {
  put(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
      esc(r.title), kStyle, esc(r.title));
  const std::size_t failed = count_failed(r);
  put(out, "<p class=\"note\">{} case{}, <span class=\"{}\">{} failed</span></p>\n", r.cases.size(),
      r.cases.size() == 1 ? "" : "s", failed ? "fail" : "pass", failed);
  for (const std::string &note : r.notes) put(out, "<p class=\"note\">{}</p>\n", esc(note));
}

}  // namespace

std::string report_html(const Report &r) {
  std::string out;
  header(out, r);
  // Failures first, otherwise in the given order.
  std::vector<const ReportCase *> cases;
  for (const ReportCase &c : r.cases) cases.push_back(&c);
  std::stable_partition(cases.begin(), cases.end(), [](const ReportCase *c) { return c->failed; });
  if (!cases.empty()) case_table(out, cases);
  layers_table(out, r.layers);
  if (r.total_profile) {
    put(out, "<h2>Profile summary of every run</h2>\n");
    profile_table(out, *r.total_profile);
  }
  if (!r.timeline_svg.empty()) put(out, "<div class=\"picture timeline\">{}</div>\n", inline_svg(r.timeline_svg));
  if (!cases.empty()) put(out, "<h2>Details</h2>\n");
  for (std::size_t i = 0; i < cases.size(); ++i) case_details(out, *cases[i], i);
  put(out, "<p class=\"note\">docs/testing.md \"The HTML report\" explains every figure.</p>\n</body>\n</html>\n");
  return out;
}

void write_report_html(const Report &report, const std::string &path) {
  const std::string html = report_html(report);
  try {
    detail::AtomicFile file(path);
    file.write({reinterpret_cast<const std::uint8_t *>(html.data()), html.size()});
    file.commit();
  } catch (const Error &e) {
    throw Error(fmt::format("cannot write the report: {}", e.what()));
  }
}

namespace {

// The case's timeline: its own runs, cut out of the report's trace.
std::string case_timeline(const OpReport &r, const std::vector<TraceLaneSpan> &spans, std::size_t i) {
  if (i >= spans.size() || !(spans[i].end_us > spans[i].start_us)) return "";
  SvgOptions options;
  options.from_us = spans[i].start_us;
  options.to_us = spans[i].end_us;
  return trace_svg(r.trace_json, options);
}

std::string dtype_label(const OpReport &r) {
  std::string label = dtype_name(r.dtype);
  for (Dtype d : r.output_dtypes)
    if (d != r.dtype) return label + ">" + dtype_name(d);
  return label;
}

}  // namespace

std::vector<ReportCase> report_cases(const OpReport &r) {
  const std::vector<TraceLaneSpan> spans =
      r.trace_json.empty() ? std::vector<TraceLaneSpan>{} : trace_lane_spans(r.trace_json, "cases");
  std::vector<ReportCase> out;
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const OpCaseResult &c = r.cases[i];
    ReportCase rc;
    rc.op = r.op;
    rc.chip = r.chip;
    rc.dtype = dtype_label(r);
    rc.name = c.name;
    rc.failed = !c.passed;
    rc.result = c.passed ? "pass" : "FAIL";
    rc.message = c.failure;
    for (std::size_t o = 0; o < c.outputs.size(); ++o) {
      const Dtype d = o < r.output_dtypes.size() ? r.output_dtypes[o] : r.dtype;
      rc.outputs.push_back({fmt::format("output {}", o), dtype_name(d), true, c.outputs[o]});
    }
    rc.total_us = c.total_us;
    rc.gdma_bytes = c.gdma_bytes;
    rc.profile = summarize_profile(c.profile);
    rc.timeline_svg = case_timeline(r, spans, i);
    out.push_back(std::move(rc));
  }
  return out;
}

ReportCase report_error_case(const std::string &op, const std::string &chip, const std::string &dtype,
                             const std::string &message) {
  ReportCase rc;
  rc.op = op;
  rc.chip = chip;
  rc.dtype = dtype;
  rc.name = "(stopped)";
  rc.failed = true;
  rc.ran = false;
  rc.result = "ERROR";
  rc.message = message;
  return rc;
}

}  // namespace tpu_runtime
