// tpu_op_check: runs every registered custom op on the emulated chips and
// prints one table row per op, chip, shape and dtype.
//
//   tpu_op_check [--cases op_cases.json] [--chip bm1684x] [--chip bm1688]
//                [--op absadd] [--dtype fp16] [--criterion ulp|vendor]
//                [--lib-dir DIR] [--verbose] [--allow-unchecked] [--profile DIR]
//                [--report report.html] [--grad] [--triage] [--seed N]
//
// --grad checks the declared gradients instead (docs/gradients.md): one row
// per case of an op with register_custom_grad, chip and dtype. --triage
// classifies each fp16/bf16 row's error as rounding or algorithmic.
//
// The cases file lists shapes and parameters per op, optionally the output
// dtypes and the criterion; libraries come from TPUC_ROOT /
// TPUKERNEL_CUSTOM_FIRMWARE_PATH, or all from --lib-dir. Exit status 0 when
// every row passes, 1 when one fails (a kernel error or fault is a failed
// row; the next case still runs) or when a registered op has no case (not
// checked at all; --allow-unchecked accepts that) or a profile could not be
// written, 2 on a usage error. --profile DIR writes a Chrome trace and an
// SVG timeline of every row's runs into DIR (docs/tpu-model.md); --report
// writes one HTML page of every case (docs/testing.md "The HTML report").
// An error is shown under its row once, first line first (what failed and
// where); the same error in later rows is folded (docs/debugging.md).
// On a terminal (and not under CI=true) a progress line names the row running.
// After the table, one line per op gives the metadata it declares.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <new>
#include <optional>

#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/gradient_check.h"
#include "tpu_runtime/html_report.h"
#include "tpu_runtime/json_limits.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/op_tester.h"
#include "tpu_runtime/profile.h"
#include "tpu_runtime/triage.h"

namespace {

using tpu_runtime::Criterion;
using tpu_runtime::Dtype;
using tpu_runtime::Error;
using tpu_runtime::Shape;

struct Case {
  std::string op;
  std::vector<Shape> shapes;
  std::string params;
  std::vector<Dtype> dtypes;
  int num_outputs = 1;
  std::vector<Dtype> out_dtypes;  // empty: each output has the input dtype
  Criterion criterion = Criterion::ulp;
  bool global_only = false;
  bool grad = true;  // --grad checks this case when the op declares a gradient
};

struct Options {
  std::string cases_path;
  std::vector<std::string> chips;
  std::vector<std::string> ops;
  std::vector<std::string> dtypes;
  std::string criterion;  // overrides every case's when set
  std::string lib_dir;
  bool verbose = false;
  bool allow_unchecked = false;
  std::string profile_dir;  // empty: no profiles
  std::string report_path;  // empty: no HTML report
  bool grad = false;        // check the declared gradients instead (docs/gradients.md)
  bool triage = false;      // fp16/bf16 rows: rounding or algorithmic error
  std::uint64_t seed = 1;
};

// A dtype named in the cases file; the error names the field.
Dtype case_dtype(const std::string &name, const std::string &field) {
  try {
    return tpu_runtime::parse_dtype(name);
  } catch (const Error &e) {
    throw Error(fmt::format("{}: {}", field, e.what()));
  }
}

// "out_dtypes": one dtype per output; "num_outputs" defaults to their count.
void parse_outputs(const nlohmann::ordered_json &j, Case &c) {
  const auto names = j.value("out_dtypes", std::vector<std::string>{});
  c.num_outputs = j.value("num_outputs", names.empty() ? 1 : int(names.size()));
  if (c.num_outputs < 1) throw Error(fmt::format("\"num_outputs\" is {}; an op has at least one output", c.num_outputs));
  if (j.contains("out_dtypes") && names.size() != std::size_t(c.num_outputs))
    throw Error(fmt::format("\"out_dtypes\" lists {} dtype(s) but the op has {} output(s) (\"num_outputs\")",
                            names.size(), c.num_outputs));
  for (std::size_t i = 0; i < names.size(); ++i)
    c.out_dtypes.push_back(case_dtype(names[i], fmt::format("\"out_dtypes\"[{}]", i)));
}

Case parse_case(const nlohmann::ordered_json &j, const std::string &where) {
  Case c;
  try {
    c.op = j.at("op").get<std::string>();
    const std::string named = fmt::format("{} (op {})", where, c.op);
    try {
      c.shapes = j.at("shapes").get<std::vector<Shape>>();
      c.params = j.value("params", nlohmann::ordered_json::object()).dump();
      c.global_only = j.value("global_only", false);
      c.grad = j.value("grad", true);
      const auto dtypes = j.value("dtypes", std::vector<std::string>{"fp32", "fp16", "bf16"});
      for (std::size_t i = 0; i < dtypes.size(); ++i)
        c.dtypes.push_back(case_dtype(dtypes[i], fmt::format("\"dtypes\"[{}]", i)));
      parse_outputs(j, c);
      if (j.contains("criterion"))
        c.criterion = tpu_runtime::parse_criterion(j.at("criterion").get<std::string>());
    } catch (const Error &e) {
      throw Error(fmt::format("{}: {}", named, e.what()));
    } catch (const nlohmann::json::exception &e) {
      throw Error(fmt::format("{}: {}", named, e.what()));
    }
    if (c.shapes.empty()) throw Error(fmt::format("{}: \"shapes\" needs one shape per input", named));
  } catch (const nlohmann::json::exception &e) {
    throw Error(fmt::format("{}: {}", where, e.what()));
  }
  return c;
}

std::vector<Case> read_cases(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open the cases file {}", path));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  tpu_runtime::check_json_depth(text, path);
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception &e) {
    throw Error(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  if (!doc.contains("cases") || !doc["cases"].is_array())
    throw Error(fmt::format("{}: expected an object with a \"cases\" array", path));
  std::vector<Case> cases;
  for (std::size_t i = 0; i < doc["cases"].size(); ++i)
    cases.push_back(parse_case(doc["cases"][i], fmt::format("{}: case {}", path, i)));
  return cases;
}

tpu_runtime::LibraryPaths library_paths(const Options &opt, const std::string &chip) {
  if (opt.lib_dir.empty()) return tpu_runtime::default_library_paths(chip);
  return {opt.lib_dir + "/libplugin_custom.so", opt.lib_dir + "/libbackend_custom.so",
          opt.lib_dir + "/" + tpu_runtime::firmware_file_name(chip), tpu_runtime::ap_library_in(opt.lib_dir)};
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes >= (1u << 20)) return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20));
  if (bytes >= (1u << 10)) return fmt::format("{:.1f} KiB", double(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

constexpr const char *kRowFormat =
    "{:<12} {:<8} {:<20} {:<10} {:>10} {:>10} {:>7} {:>10} {:>8} {:>11} {:>6}  {:<15} {}\n";

void print_header() {
  fmt::print(kRowFormat, "op", "chip", "shape", "dtype", "cosine", "euclid", "max ulp", "max error", "est. us",
             "GDMA bytes", "cases", "decided by", "result");
}

// "fp32", or "fp32>fp16" when the outputs' dtypes differ from the input's.
std::string dtype_label(Dtype input, const std::vector<Dtype> &outputs) {
  std::string label = tpu_runtime::dtype_name(input);
  std::vector<const char *> names;
  for (Dtype d : outputs) names.push_back(tpu_runtime::dtype_name(d));
  if (std::any_of(outputs.begin(), outputs.end(), [&](Dtype d) { return d != input; }))
    label += fmt::format(">{}", fmt::join(names, ","));
  return label;
}

// The worst figures over every case and output. Cosine and euclid are the
// deciding criterion's (ours leave NaNs out, the vendor's count them as 0).
struct RowFigures {
  double cosine = 1, euclidean = 1, max_ulp = 0, max_abs = 0;
  tpu_runtime::VendorVerdict weakest = tpu_runtime::VendorVerdict::equal;
  int passed = 0;
};

RowFigures row_figures(const tpu_runtime::OpReport &r) {
  RowFigures f;
  const bool vendor = r.criterion == Criterion::vendor;
  for (const auto &c : r.cases) {
    f.passed += c.passed;
    for (const auto &s : c.outputs) {
      f.max_ulp = std::max(f.max_ulp, s.max_ulp);
      f.max_abs = std::max(f.max_abs, s.max_abs);
      if (vendor) continue;
      f.cosine = std::min(f.cosine, s.cosine);
      f.euclidean = std::min(f.euclidean, s.euclidean);
    }
    for (const auto &v : c.vendor_outputs) {
      f.weakest = std::max(f.weakest, v.verdict);  // the enum runs from the strictest pass to the failures
      if (!vendor) continue;
      f.cosine = std::min(f.cosine, v.cosine);
      f.euclidean = std::min(f.euclidean, v.euclidean);
    }
  }
  return f;
}

// "ulp", or "vendor close": the vendor step that decided the weakest output.
std::string decided_by(const tpu_runtime::OpReport &r, const RowFigures &f) {
  if (r.criterion == Criterion::ulp) return "ulp";
  return fmt::format("vendor {}", tpu_runtime::verdict_name(f.weakest));
}

// One row: worst figures over every case and output; time and bytes of the
// global (backend) run, which is what a compiled model executes.
bool print_row(const tpu_runtime::OpReport &r) {
  const RowFigures f = row_figures(r);
  const auto *global = r.find("global backend");
  std::string shape = fmt::format("[{}]", fmt::join(r.input_shapes[0], ","));
  fmt::print(kRowFormat, r.op, r.chip, shape, dtype_label(r.dtype, r.output_dtypes), fmt::format("{:.6f}", f.cosine),
             fmt::format("{:.6f}", f.euclidean), fmt::format("{}", f.max_ulp), fmt::format("{:.3g}", f.max_abs),
             fmt::format("{:.1f}", global ? global->total_us : 0.0), format_bytes(global ? global->gdma_bytes : 0),
             fmt::format("{}/{}", f.passed, r.cases.size()), decided_by(r, f), r.passed ? "pass" : "FAIL");
  return r.passed;
}

// The errors of the run, each shown in full once: a row whose error has
// the same first line (what failed, and where) as an earlier one's only
// points at it, and the end of the run counts the repeats. The same kernel
// bug fails every chip and dtype alike.
class ErrorFolding {
 public:
  // Prints `message` (its first line, then its detail lines) under a row,
  // or the one line that folds it into an earlier row's.
  void print(const std::string &row, const std::string &message) {
    const std::string first = message.substr(0, message.find('\n'));
    for (Shown &shown : shown_)
      if (shown.first_line == first) {
        ++shown.repeats;
        fmt::print("    same error as {} above\n", shown.row);
        return;
      }
    shown_.push_back({first, row, 0});
    for (std::size_t start = 0; start <= message.size();) {
      const std::size_t end = std::min(message.find('\n', start), message.size());
      fmt::print("    {}\n", message.substr(start, end - start));
      start = end + 1;
    }
  }
  // "<first line>: same error on 5 more cases" for each repeated error.
  void print_repeats() const {
    bool first = true;
    for (const Shown &shown : shown_) {
      if (shown.repeats == 0) continue;
      fmt::print("{}{}: same error on {} more case{} (shown under {})\n", first ? "\n" : "", shown.first_line,
                 shown.repeats, shown.repeats == 1 ? "" : "s", shown.row);
      first = false;
    }
  }

 private:
  struct Shown {
    std::string first_line, row;
    int repeats;
  };
  std::vector<Shown> shown_;
};

void print_error_row(const Case &c, const std::string &chip, Dtype dtype, Criterion criterion, std::size_t case_index,
                     const std::string &message, ErrorFolding &errors) {
  const std::string shape = fmt::format("[{}]", fmt::join(c.shapes[0], ","));
  const std::string dtypes = dtype_label(dtype, c.out_dtypes);
  fmt::print(kRowFormat, c.op, chip, shape, dtypes, "-", "-", "-", "-", "-", "-", "-",
             tpu_runtime::criterion_name(criterion), "ERROR");
  errors.print(fmt::format("{} {} {} {} (case {})", c.op, chip, shape, dtypes, case_index),
               fmt::format("{}\n  case {} of the cases file", message, case_index));
}

bool selected(const std::vector<std::string> &filter, const std::string &value) {
  return filter.empty() || std::find(filter.begin(), filter.end(), value) != filter.end();
}

// Registered ops the cases file does not mention were not checked at all:
// each gets a warning, and the count decides the exit status unless
// --allow-unchecked. Returns how many there are.
int report_unchecked(const Options &opt, const std::vector<Case> &cases, const std::string &chip) {
  const auto backend = tpu_runtime::Backend::open(library_paths(opt, chip).backend);
  const std::vector<std::string> registered = backend.registered_ops();
  int unchecked = 0;
  for (const std::string &op : registered) {
    const bool covered = std::any_of(cases.begin(), cases.end(), [&](const Case &c) { return c.op == op; });
    if (!covered && selected(opt.ops, op)) {
      fmt::print("WARNING: op {} is registered but {} has no case for it: not checked on {}\n", op, opt.cases_path,
                 chip);
      ++unchecked;
    }
  }
  for (const std::string &op : opt.ops)
    if (std::find(registered.begin(), registered.end(), op) == registered.end())
      fmt::print("WARNING: --op {}: no such op in {} (registered: {}){}\n", op, library_paths(opt, chip).backend,
                 fmt::join(registered, ", "), tpu_runtime::unknown_op_hint(op, registered));
  return unchecked;
}

// The profile of one row: DIR/<op>_<chip>_<dtype>_case<N>.json and .svg,
// N the case's index in the cases file. Returns "" or why it failed.
std::string write_row_profile(const Options &opt, const tpu_runtime::OpReport &report, std::size_t case_index) {
  const std::string base = fmt::format("{}/{}_{}_{}_case{}", opt.profile_dir, report.op, report.chip,
                                       tpu_runtime::dtype_name(report.dtype), case_index);
  try {
    tpu_runtime::write_profile(report.trace_json, base + ".json", base + ".svg");
  } catch (const Error &e) {
    return e.what();
  }
  if (opt.verbose) fmt::print("    profile: {}.json, {}.svg\n", base, base);
  return "";
}

// The HTML report of every case; "" or why it could not be written.
std::string write_report(const Options &opt, const std::vector<tpu_runtime::ReportCase> &cases) {
  tpu_runtime::Report report;
  report.title = "tpu_op_check";
  report.notes.push_back(fmt::format("cases from {}; chips {}", opt.cases_path, fmt::join(opt.chips, ", ")));
  report.cases = cases;
  try {
    tpu_runtime::write_report_html(report, opt.report_path);
  } catch (const Error &e) {
    return e.what();
  }
  fmt::print("wrote the report {}\n", opt.report_path);
  return "";
}

// The profile directory exists (created if need be) before anything runs.
void prepare_profile_dir(const std::string &dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw Error(fmt::format("--profile {}: cannot create the directory: {}", dir,
                            ec ? ec.message() : "a file of that name exists"));
}

// One line saying which row runs ("[12/40] absadd bm1688 fp16 case 3"),
// rewritten in place and erased before each table row, so a person at a
// terminal sees the run move through a long table. Only on a terminal and
// not under CI=true: logs and pipes get the table and nothing else.
class Progress {
 public:
  explicit Progress(int total) : total_(total) {
    const char *ci = std::getenv("CI");
    on_ = isatty(STDOUT_FILENO) && !(ci && std::strcmp(ci, "true") == 0);
  }
  void show(const std::string &what) {
    if (!on_) return;
    fmt::print("\r[{}/{}] {}\x1b[K", ++shown_, total_, what);  // \x1b[K: erase what a longer line left
    std::fflush(stdout);
  }
  void erase() {
    if (!on_) return;
    fmt::print("\r\x1b[K");
    std::fflush(stdout);
  }

 private:
  int total_, shown_ = 0;
  bool on_ = false;
};

bool dtype_selected(const std::vector<Dtype> &filter, Dtype dtype) {
  return filter.empty() || std::find(filter.begin(), filter.end(), dtype) != filter.end();
}

// Each op's metadata (metadata_<op>), one line per op after the table; an
// op whose answer depends on its parameters gets one line per answer.
void print_metadata(const std::vector<std::pair<std::string, std::string>> &lines) {
  if (lines.empty()) return;
  fmt::print("\nop metadata (metadata_<op>; docs/custom-layer-build.md)\n");
  for (const auto &[op, text] : lines) fmt::print("  {:<16} {}\n", op, text);
}

constexpr const char *kGradRowFormat = "{:<12} {:<8} {:<20} {:<6} {:<16} {:>11} {:>9} {:>7}  {}\n";

// One gradient row: the worst relative error over the inputs against tau.
bool print_grad_row(const tpu_runtime::GradReport &r, const std::string &triage) {
  double worst = 0;
  for (const auto &input : r.inputs) worst = std::max(worst, input.worst_ratio);
  fmt::print(kGradRowFormat, r.op, r.chip, fmt::format("[{}]", fmt::join(r.input_shapes[0], ",")),
             tpu_runtime::dtype_name(r.dtype), r.declaration.grad_op, fmt::format("{:.3g}", worst),
             fmt::format("{:.3g}", r.tolerance), fmt::format("{}", r.seed), r.passed ? "pass" : "FAIL");
  if (!triage.empty()) fmt::print("    triage: {}\n", triage);
  return r.passed;
}

// --grad: every case of an op with a declared gradient, on each chip and
// dtype, through the gradient checker (tpu_runtime/gradient_check.h).
int run_grad(const Options &opt) {
  const std::vector<Case> cases = read_cases(opt.cases_path);
  std::vector<Dtype> dtype_filter;
  for (const std::string &name : opt.dtypes) dtype_filter.push_back(tpu_runtime::parse_dtype(name));
  fmt::print(kGradRowFormat, "op", "chip", "shape", "dtype", "gradient op", "worst rel.", "tau", "seed", "result");
  int rows = 0;
  std::vector<std::string> failures;
  for (const std::string &chip : opt.chips) {
    const auto backend = tpu_runtime::Backend::open(library_paths(opt, chip).backend);
    for (std::size_t case_index = 0; case_index < cases.size(); ++case_index) {
      const Case &c = cases[case_index];
      if (!c.grad || !selected(opt.ops, c.op) || !backend.gradient_of(c.op)) continue;
      for (Dtype dtype : c.dtypes) {
        if (!dtype_selected(dtype_filter, dtype)) continue;
        tpu_runtime::GradientChecker checker;
        checker.op(c.op).chip(chip).dtype(dtype).params(c.params).libraries(library_paths(opt, chip)).seed(opt.seed);
        checker.num_outputs(c.num_outputs).triage(opt.triage);
        for (const Shape &shape : c.shapes) checker.input_shape(shape);
        ++rows;
        try {
          const tpu_runtime::GradReport report = checker.run();
          if (!print_grad_row(report, report.triage ? report.triage->text() : "")) failures.push_back(report.summary());
          else if (opt.verbose) fmt::print("{}", report.summary());
        } catch (const Error &e) {
          fmt::print(kGradRowFormat, c.op, chip, fmt::format("[{}]", fmt::join(c.shapes[0], ",")),
                     tpu_runtime::dtype_name(dtype), "-", "-", "-", opt.seed, "ERROR");
          failures.push_back(fmt::format("{} on {} {} (case {}): {}\n", c.op, chip, tpu_runtime::dtype_name(dtype),
                                         case_index, e.what()));
        }
      }
    }
    for (const tpu_runtime::GradientDeclaration &g : backend.gradients())
      if (selected(opt.ops, g.op)) fmt::print("  gradient of {} on {}: {}\n", g.op, chip, tpu_runtime::gradient_text(g));
  }
  for (const std::string &f : failures) fmt::print("\n{}", f);
  if (rows == 0) {
    fmt::print("\nNothing was checked: no case in {} is of an op with a declared gradient (register_custom_grad) "
               "matching the --op/--dtype/--chip filters.\n",
               opt.cases_path);
    return 1;
  }
  fmt::print("\n{}\n", failures.empty() ? "All gradients passed." : "Some gradients FAILED (details above).");
  return failures.empty() ? 0 : 1;
}

// --triage without --grad: each fp16/bf16 row's forward error classified.
void print_forward_triage(const tpu_runtime::OpTester &tester, Dtype dtype) {
  if (dtype == Dtype::fp32) return;
  try {
    fmt::print("    triage: {}\n", tpu_runtime::triage_op(tester, dtype).text());
  } catch (const Error &e) {
    fmt::print("    triage: not possible: {}\n", e.what());
  }
}

int run(const Options &opt) {
  if (opt.grad) return run_grad(opt);
  const std::vector<Case> cases = read_cases(opt.cases_path);
  if (!opt.profile_dir.empty()) prepare_profile_dir(opt.profile_dir);
  std::optional<Criterion> criterion_override;
  if (!opt.criterion.empty()) criterion_override = tpu_runtime::parse_criterion(opt.criterion);
  std::vector<Dtype> dtype_filter;
  for (const std::string &name : opt.dtypes) dtype_filter.push_back(tpu_runtime::parse_dtype(name));
  int rows_per_chip = 0;
  for (const Case &c : cases)
    if (selected(opt.ops, c.op))
      rows_per_chip += int(std::count_if(c.dtypes.begin(), c.dtypes.end(),
                                         [&](Dtype d) { return dtype_selected(dtype_filter, d); }));
  Progress progress(rows_per_chip * int(opt.chips.size()));
  print_header();
  bool all_passed = true;
  int rows = 0, unchecked = 0;
  std::vector<std::string> failures, profile_errors;
  std::vector<tpu_runtime::ReportCase> report_cases;  // --report
  std::vector<std::pair<std::string, std::string>> metadata_lines;
  ErrorFolding errors;
  for (const std::string &chip : opt.chips) {
    for (std::size_t case_index = 0; case_index < cases.size(); ++case_index) {
      const Case &c = cases[case_index];
      if (!selected(opt.ops, c.op)) continue;
      for (Dtype dtype : c.dtypes) {
        if (!dtype_selected(dtype_filter, dtype)) continue;
        const Criterion criterion = criterion_override.value_or(c.criterion);
        tpu_runtime::OpTester tester;
        tester.op(c.op).chip(chip).dtype(dtype).params(c.params).libraries(library_paths(opt, chip));
        tester.num_outputs(c.num_outputs).out_dtypes(c.out_dtypes).criterion(criterion);
        for (const Shape &s : c.shapes) tester.input_shape(s);
        if (c.global_only) tester.global_only();
        tester.profile(!opt.profile_dir.empty() || !opt.report_path.empty());
        ++rows;
        progress.show(fmt::format("{} {} {} case {}", c.op, chip, tpu_runtime::dtype_name(dtype), case_index));
        try {
          const tpu_runtime::OpReport report = tester.run();
          progress.erase();
          if (const std::pair line{c.op, tpu_runtime::metadata_text(report.metadata)};
              std::find(metadata_lines.begin(), metadata_lines.end(), line) == metadata_lines.end())
            metadata_lines.push_back(line);
          if (!print_row(report)) failures.push_back(report.summary());
          else if (opt.verbose) fmt::print("{}", report.summary());
          if (opt.triage) print_forward_triage(tester, dtype);
          if (!opt.report_path.empty())
            for (tpu_runtime::ReportCase &rc : tpu_runtime::report_cases(report)) report_cases.push_back(std::move(rc));
          if (!opt.profile_dir.empty())
            if (std::string why = write_row_profile(opt, report, case_index); !why.empty()) {
              fmt::print("    {}\n", why);
              profile_errors.push_back(why);
            }
        } catch (const Error &e) {
          progress.erase();
          print_error_row(c, chip, dtype, criterion, case_index, e.what(), errors);
          report_cases.push_back(tpu_runtime::report_error_case(c.op, chip, dtype_label(dtype, c.out_dtypes),
                                                                fmt::format("case {}: {}", case_index, e.what())));
          all_passed = false;
        } catch (const std::bad_alloc &) {
          // A case too large for this host: a failed row, the next case still runs.
          progress.erase();
          const std::string why =
              fmt::format("out of host memory running op {} on shape(s) {}", c.op, fmt::join(c.shapes, " "));
          print_error_row(c, chip, dtype, criterion, case_index, why, errors);
          report_cases.push_back(tpu_runtime::report_error_case(c.op, chip, dtype_label(dtype, c.out_dtypes),
                                                                fmt::format("case {}: {}", case_index, why)));
          all_passed = false;
        }
      }
    }
    unchecked += report_unchecked(opt, cases, chip);
  }
  print_metadata(metadata_lines);
  for (const std::string &f : failures) fmt::print("\n{}", f);
  errors.print_repeats();
  if (!opt.report_path.empty())
    if (std::string why = write_report(opt, report_cases); !why.empty()) {
      fmt::print("\n{}\n", why);
      all_passed = false;
    }
  all_passed = all_passed && failures.empty();
  if (!profile_errors.empty()) {
    fmt::print("\n{} profile(s) could not be written into {} (first: {})\n", profile_errors.size(), opt.profile_dir,
               profile_errors.front());
    all_passed = false;
  }
  if (rows == 0) {
    fmt::print("\nNothing was checked: no case in {} matches the --op/--dtype/--chip filters.\n", opt.cases_path);
    return 1;
  }
  if (unchecked > 0 && !opt.allow_unchecked) {
    fmt::print("\n{}\n{} registered op(s) have no case in {} and were not checked; add cases, or pass "
               "--allow-unchecked to accept that.\n",
               all_passed ? "Every checked op passed." : "Some ops FAILED (details above).", unchecked,
               opt.cases_path);
    return 1;
  }
  fmt::print("\n{}\n", all_passed ? "All ops passed." : "Some ops FAILED (details above).");
  return all_passed ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  Options opt;
  CLI::App app{"Runs every registered custom op on the emulated chips and prints a table."};
  if (const char *root = std::getenv("CUSTOM_LAYER_PATH")) opt.cases_path = std::string(root) + "/customlayer/op_cases.json";
  app.add_option("--cases", opt.cases_path, "JSON file of shapes and parameters per op")->capture_default_str();
  app.add_option("--chip", opt.chips, "bm1684x and/or bm1688 (default both)");
  app.add_option("--op", opt.ops, "only these ops");
  app.add_option("--dtype", opt.dtypes, "only these dtypes (fp32, fp16, bf16)");
  app.add_option("--criterion", opt.criterion,
                 "what decides pass or fail for every case: ulp (our bounds) or vendor (cosine and euclidean "
                 "similarity as the vendor's tools compare); default: each case's \"criterion\", else ulp");
  app.add_option("--lib-dir", opt.lib_dir, "take all three libraries from this directory");
  app.add_flag("--verbose", opt.verbose, "print every case of every op");
  app.add_option("--profile", opt.profile_dir,
                 "write a profile of every row into this directory (created if need be): "
                 "<op>_<chip>_<dtype>_case<N>.json, a Chrome trace (Perfetto, chrome://tracing) with a lane per "
                 "engine, one of cases and one of local-slicing steps, and <...>.svg, the same timeline drawn");
  app.add_option("--report", opt.report_path,
                 "write one self-contained HTML page of every case: the table (failures first), where each failed "
                 "output first differs, a histogram of its ulp errors, its profile summary and its timeline");
  app.add_flag("--grad", opt.grad,
               "check each declared gradient (register_custom_grad) on the emulator against central finite "
               "differences of the forward op's reference, for every case of such an op (docs/gradients.md)");
  app.add_flag("--triage", opt.triage,
               "for fp16/bf16 rows, also run the op (with --grad: the gradient op) on the same inputs widened to "
               "fp32 and say whether the error is rounding of the fp32 result or algorithmic");
  app.add_option("--seed", opt.seed, "seed of the inputs, output gradients and directions of --grad")
      ->capture_default_str();
  app.add_flag("--allow-unchecked", opt.allow_unchecked,
               "exit 0 although a registered op has no case (it is still named in a warning)");
  std::string timeout;
  app.add_option("--timeout", timeout,
                 "time limit of each kernel run in seconds (default 600 or $TPU_SDK_RUN_TIMEOUT; 0: none)");
  CLI11_PARSE(app, argc, argv);
  if (!timeout.empty() && cmodel_set_option("run_timeout", timeout.c_str()) != 0) {
    fmt::print(stderr, "tpu_op_check: --timeout: {}\n", cmodel_last_error());
    return 2;
  }
  if (opt.chips.empty()) opt.chips = {"bm1684x", "bm1688"};
  if (opt.cases_path.empty()) {
    fmt::print(stderr, "tpu_op_check: no cases file: pass --cases or source envsetup.sh (CUSTOM_LAYER_PATH)\n");
    return 2;
  }
  try {
    return run(opt);
  } catch (const Error &e) {
    fmt::print(stderr, "tpu_op_check: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc &) {
    fmt::print(stderr, "tpu_op_check: out of host memory outside any case (reading {})\n", opt.cases_path);
    return 2;
  }
}
