// tpu_op_check: runs every registered custom op on the emulated chips and
// prints one table row per op, chip, shape and dtype.
//
//   tpu_op_check [--cases op_cases.json] [--chip bm1684x] [--chip bm1688]
//                [--op absadd] [--dtype fp16] [--lib-dir DIR] [--verbose]
//
// The cases file lists shapes and parameters per op; libraries come from
// TPUC_ROOT / TPUKERNEL_CUSTOM_FIRMWARE_PATH, or all from --lib-dir. Exit
// status 0 when every row passes, 1 when one fails, 2 on a usage error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/op_tester.h"

namespace {

using tpu_runtime::Dtype;
using tpu_runtime::Error;
using tpu_runtime::Shape;

struct Case {
  std::string op;
  std::vector<Shape> shapes;
  std::string params;
  std::vector<Dtype> dtypes;
  bool global_only = false;
};

struct Options {
  std::string cases_path;
  std::vector<std::string> chips;
  std::vector<std::string> ops;
  std::vector<std::string> dtypes;
  std::string lib_dir;
  bool verbose = false;
};

Case parse_case(const nlohmann::ordered_json &j, const std::string &where) {
  Case c;
  try {
    c.op = j.at("op").get<std::string>();
    c.shapes = j.at("shapes").get<std::vector<Shape>>();
    c.params = j.value("params", nlohmann::ordered_json::object()).dump();
    c.global_only = j.value("global_only", false);
    for (const std::string &name : j.value("dtypes", std::vector<std::string>{"fp32", "fp16", "bf16"}))
      c.dtypes.push_back(tpu_runtime::parse_dtype(name));
  } catch (const nlohmann::json::exception &e) {
    throw Error(fmt::format("{}: {}", where, e.what()));
  }
  if (c.shapes.empty()) throw Error(fmt::format("{}: \"shapes\" needs one shape per input", where));
  return c;
}

std::vector<Case> read_cases(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("cannot open the cases file {}", path));
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(in);
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
          opt.lib_dir + "/" + tpu_runtime::firmware_file_name(chip)};
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes >= (1u << 20)) return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20));
  if (bytes >= (1u << 10)) return fmt::format("{:.1f} KiB", double(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

constexpr const char *kRowFormat = "{:<12} {:<8} {:<20} {:<5} {:>10} {:>10} {:>10} {:>11} {:>6}  {}\n";

void print_header() {
  fmt::print(kRowFormat, "op", "chip", "shape", "dtype", "cosine", "max error", "est. us", "GDMA bytes", "cases",
             "result");
}

// One row: worst similarity over every case and output; time and bytes of
// the global (backend) run, which is what a compiled model executes.
bool print_row(const tpu_runtime::OpReport &r) {
  double cosine = 1, max_abs = 0;
  int passed = 0;
  for (const auto &c : r.cases) {
    passed += c.passed;
    for (const auto &s : c.outputs) {
      cosine = std::min(cosine, s.cosine);
      max_abs = std::max(max_abs, s.max_abs);
    }
  }
  const auto *global = r.find("global backend");
  std::string shape = fmt::format("[{}]", fmt::join(r.input_shapes[0], ","));
  fmt::print(kRowFormat, r.op, r.chip, shape, tpu_runtime::dtype_name(r.dtype), fmt::format("{:.6f}", cosine),
             fmt::format("{:.3g}", max_abs), fmt::format("{:.1f}", global ? global->total_us : 0.0),
             format_bytes(global ? global->gdma_bytes : 0), fmt::format("{}/{}", passed, r.cases.size()),
             r.passed ? "pass" : "FAIL");
  return r.passed;
}

void print_error_row(const Case &c, const std::string &chip, Dtype dtype, const std::string &message) {
  fmt::print(kRowFormat, c.op, chip, fmt::format("[{}]", fmt::join(c.shapes[0], ",")), tpu_runtime::dtype_name(dtype),
             "-", "-", "-", "-", "-", "ERROR");
  fmt::print("    {}\n", message);
}

bool selected(const std::vector<std::string> &filter, const std::string &value) {
  return filter.empty() || std::find(filter.begin(), filter.end(), value) != filter.end();
}

// Registered ops the cases file does not mention get a warning: they were
// not checked at all.
void warn_uncovered(const Options &opt, const std::vector<Case> &cases, const std::string &chip) {
  const auto backend = tpu_runtime::Backend::open(library_paths(opt, chip).backend);
  const std::vector<std::string> registered = backend.registered_ops();
  for (const std::string &op : registered) {
    const bool covered = std::any_of(cases.begin(), cases.end(), [&](const Case &c) { return c.op == op; });
    if (!covered && selected(opt.ops, op))
      fmt::print("WARNING: op {} is registered but {} has no case for it: not checked on {}\n", op, opt.cases_path,
                 chip);
  }
  for (const std::string &op : opt.ops)
    if (std::find(registered.begin(), registered.end(), op) == registered.end())
      fmt::print("WARNING: --op {}: no such op in {} (registered: {})\n", op, library_paths(opt, chip).backend,
                 fmt::join(registered, ", "));
}

int run(const Options &opt) {
  const std::vector<Case> cases = read_cases(opt.cases_path);
  std::vector<Dtype> dtype_filter;
  for (const std::string &name : opt.dtypes) dtype_filter.push_back(tpu_runtime::parse_dtype(name));
  print_header();
  bool all_passed = true;
  int rows = 0;
  std::vector<std::string> failures;
  for (const std::string &chip : opt.chips) {
    for (const Case &c : cases) {
      if (!selected(opt.ops, c.op)) continue;
      for (Dtype dtype : c.dtypes) {
        if (!dtype_filter.empty() && std::find(dtype_filter.begin(), dtype_filter.end(), dtype) == dtype_filter.end())
          continue;
        tpu_runtime::OpTester tester;
        tester.op(c.op).chip(chip).dtype(dtype).params(c.params).libraries(library_paths(opt, chip));
        for (const Shape &s : c.shapes) tester.input_shape(s);
        if (c.global_only) tester.global_only();
        ++rows;
        try {
          const tpu_runtime::OpReport report = tester.run();
          if (!print_row(report)) failures.push_back(report.summary());
          else if (opt.verbose) fmt::print("{}", report.summary());
        } catch (const Error &e) {
          print_error_row(c, chip, dtype, e.what());
          all_passed = false;
        }
      }
    }
    warn_uncovered(opt, cases, chip);
  }
  for (const std::string &f : failures) fmt::print("\n{}", f);
  all_passed = all_passed && failures.empty();
  if (rows == 0) {
    fmt::print("\nNothing was checked: no case in {} matches the --op/--dtype/--chip filters.\n", opt.cases_path);
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
  app.add_option("--lib-dir", opt.lib_dir, "take all three libraries from this directory");
  app.add_flag("--verbose", opt.verbose, "print every case of every op");
  CLI11_PARSE(app, argc, argv);
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
  }
}
