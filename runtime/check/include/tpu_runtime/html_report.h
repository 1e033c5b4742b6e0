// html_report.h: one self-contained HTML page about checked cases
// (tpu_op_check --report, tpu_model run --report): a table of the cases,
// then for each case (failures first) why it failed and where the output
// first differs, a histogram of the ulp errors, the profile summary
// (profile_summary.h) and the timeline (trace_svg). CSS and pictures are
// inline SVG in the page: nothing is fetched, no script runs.
// docs/testing.md "The HTML report" says how to read it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tpu_runtime/compare.h"
#include "tpu_runtime/op_tester.h"
#include "tpu_runtime/profile_summary.h"

namespace tpu_runtime {

// One output of a case against its reference.
struct ReportOutput {
  std::string name;  // "output 0", a model output's name
  std::string dtype;
  bool compared = true;  // false: there was no usable reference (the case's message says why)
  Similarity similarity;
};

// A row of the case table, and its details.
struct ReportCase {
  std::string op, chip, dtype, name;
  bool failed = false;
  bool ran = true;      // false: it stopped before any figure (an error)
  std::string result;   // "pass", "FAIL", "ERROR", "not compared"
  std::string message;  // why it failed, or ""
  std::vector<ReportOutput> outputs;
  double total_us = 0;
  std::uint64_t gdma_bytes = 0;
  std::optional<ProfileSummary> profile;
  std::string timeline_svg;  // trace_svg() of the case's runs, or ""
};

// A layer of a model run, with its profile.
struct ReportLayer {
  std::size_t index = 0;  // in the model
  std::string name, op, mode;
  double total_us = 0;
  std::uint64_t gdma_bytes = 0;
  ProfileSummary profile;
};

struct Report {
  std::string title;               // "tpu_op_check", "tpu_model run net.tpumodel"
  std::vector<std::string> notes;  // lines under the title
  std::vector<ReportCase> cases;   // in any order: the page puts failures first
  std::vector<ReportLayer> layers;  // a model run's layers, or none
  std::optional<ProfileSummary> total_profile;  // of every run the page covers
  std::string timeline_svg;  // the whole run's picture (a model), or ""
};

std::string report_html(const Report &report);

// Writes report_html() to `path` through a temporary file renamed into
// place; throws Error naming the path and the reason.
void write_report_html(const Report &report, const std::string &path);

// The rows of one op tester report: one per case, with its profile, and
// with its timeline when the report holds a trace (OpTester::profile()).
std::vector<ReportCase> report_cases(const OpReport &report);

// The row of a case that stopped before it had any figure (OpTester::run
// threw `message`).
ReportCase report_error_case(const std::string &op, const std::string &chip, const std::string &dtype,
                             const std::string &message);

}  // namespace tpu_runtime
