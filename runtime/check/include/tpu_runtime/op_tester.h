// op_tester.h: checks one custom op against its reference on the cmodel.
//
//   auto report = tpu_runtime::OpTester()
//                     .op("absadd")
//                     .input_shape({4, 32, 36, 36})
//                     .dtype(tpu_runtime::Dtype::fp16)
//                     .params(R"({"b": 1.2})")
//                     .chip("bm1688")
//                     .seed(7)
//                     .run();
//   EXPECT_TRUE(report.passed) << report.summary();
//
// run() makes random inputs in global memory, takes the reference from the
// plugin's inference_<op> (fp32 host buffers, as the vendor flow feeds it),
// then runs the op on the emulator and compares every output:
//   - "global backend":  backend_api_<op>_global (the static code-generation
//                        path, with the _global_bfsz scratch buffer);
//   - "global firmware": tpu_global_calculate_entry (the dynamic path), after
//                        checking tpu_shape_infer_entry agrees with the
//                        plugin's output shapes;
//   - "local n.. h..":   when local_gen_support_<op> says so, the op runs
//                        slice by slice through backend_api_<op>_local over
//                        several n and h slicings that allow_data_split_<op>
//                        permits, each input slice from backward_h_<op>.
//   - "element-wise claim": for an op whose metadata_<op> declares it
//                        element-wise, its reference on the inputs cut in two
//                        along each axis must equal, bit for bit, the pieces
//                        of its reference on the whole inputs; the first
//                        element that differs is named. It runs before the
//                        local slicings, which take identity slices from the
//                        claim and are skipped (with a note) when it fails.
// Each case starts from the inputs as generated. An op whose metadata_<op>
// declares N in-place inputs gets output i at input i's address (i < N), as
// a model's memory plan gives it; every other input is watched, and a case
// whose op changed one fails naming the input and the first changed byte.
//   - "stateless claim": for an op whose metadata_<op> declares it stateless,
//                        the global entry runs twice on the same inputs and
//                        scratch buffer (zeroed once); the outputs must agree
//                        byte for byte (the first differing byte is named).
//   - "multi-core claim": for an op whose metadata_<op> declares it
//                        multi-core, the global backend runs on 1 core and
//                        on N at once (the chip's count in force, at least
//                        2: a one-core chip emulates 2 for the case); every
//                        output's bytes must agree, the first differing
//                        element is named with both values, and a run the
//                        emulator stops (a cross-core race, a deadlock)
//                        fails the case with its message. Its figures are
//                        the N-core run's (the slowest core's time).
// Every case reports the similarity figures and the emulator's statistics.
// A failing case names the seed, the first differing index and its
// coordinates, so it can be replayed.
//
// What decides is criterion(): our ulp bounds (tolerance(), the default) or
// the vendor's comparison (vendor_tolerance(); compare.h). Both sets of
// figures are reported whichever decides. Outputs are of the input dtype
// unless out_dtypes() gives one dtype per output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tpu_runtime/compare.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/profile_summary.h"

namespace tpu_runtime {

struct OpCaseResult {
  std::string name;             // "global backend", "local n=2 h=5", ...
  bool passed = false;
  std::string failure;          // why it failed ("" when it passed)
  std::vector<Similarity> outputs;  // one per output
  std::vector<VendorComparison> vendor_outputs;  // one per output
  double total_us = 0;          // emulated time of the op's kernel (all steps)
  std::uint64_t gdma_bytes = 0; // bytes the op's kernel moved (all directions)
  std::string stats_json;       // cmodel statistics of the (last) run
  ProfileFigures profile;       // the emulator's figures of all its runs (profile_summary.h)
  // With OpTester::keep_outputs(): what the op wrote, one per output,
  // decoded to fp32 (empty otherwise).
  std::vector<std::vector<float>> values;
};

struct OpReport {
  std::string op, chip;
  Dtype dtype = Dtype::fp32;           // of the inputs
  std::vector<Dtype> output_dtypes;     // one per output
  Criterion criterion = Criterion::ulp;  // what decided pass or fail
  std::vector<Shape> input_shapes, output_shapes;
  std::uint64_t seed = 0;
  bool passed = false;
  std::vector<OpCaseResult> cases;
  std::vector<std::string> notes;  // what was not run, and why
  OpMetadata metadata;             // metadata_<op> (declared = false without it)
  // With OpTester::keep_outputs(): the inputs as the op saw them (rounded
  // to the dtype) and the reference outputs (inference_<op>), in fp32.
  std::vector<std::vector<float>> inputs, reference;
  // With OpTester::profile(): the Chrome trace (profile.h) of every case's
  // runs one after another, with a "cases" lane (a span per case) and a
  // "steps" lane (a span per step of a local slicing: load, compute, store).
  std::string trace_json;
  // One line per case, failures with seed, index and coordinates.
  std::string summary() const;
  // The case with the given name, or nullptr.
  const OpCaseResult *find(const std::string &name) const;
};

class OpTester {
 public:
  OpTester &op(std::string name) { op_ = std::move(name); return *this; }
  // Adds one input; call once per input.
  OpTester &input_shape(Shape shape) { input_shapes_.push_back(std::move(shape)); return *this; }
  OpTester &num_outputs(int n) { num_outputs_ = n; return *this; }
  // The inputs' dtype, and the outputs' unless out_dtypes() says otherwise.
  OpTester &dtype(Dtype dtype) { dtype_ = dtype; return *this; }
  // One dtype per output (as many as num_outputs); empty: the input dtype.
  OpTester &out_dtypes(std::vector<Dtype> dtypes) { out_dtypes_ = std::move(dtypes); return *this; }
  // A JSON object, packed as params.h describes.
  OpTester &params(std::string json) { params_ = std::move(json); return *this; }
  OpTester &chip(std::string chip) { chip_ = std::move(chip); return *this; }
  OpTester &seed(std::uint64_t seed) { seed_ = seed; return *this; }
  // Inputs are uniform in [low, high] (then rounded to the dtype).
  OpTester &input_range(float low, float high) { low_ = low; high_ = high; return *this; }
  OpTester &tolerance(Tolerance t) { tolerance_ = t; return *this; }
  // Bit-exact outputs required (max_ulp 0).
  OpTester &exact() { tolerance_ = exact_tolerance(); return *this; }
  // What decides pass or fail (default Criterion::ulp).
  OpTester &criterion(Criterion c) { criterion_ = c; return *this; }
  // The vendor criterion's bounds; default: default_vendor_tolerance(dtype)
  // of each output.
  OpTester &vendor_tolerance(VendorTolerance t) { vendor_tolerance_ = t; return *this; }
  // Library paths; default: default_library_paths(chip).
  OpTester &libraries(LibraryPaths paths) { paths_ = std::move(paths); return *this; }
  // The inputs' values (one vector per input_shape, in C order), instead of
  // random ones; they are rounded to the dtype as random ones are.
  OpTester &input_values(std::vector<std::vector<float>> values) { values_ = std::move(values); return *this; }
  // Keep the inputs, the reference and every case's outputs in the report.
  OpTester &keep_outputs(bool keep = true) { keep_outputs_ = keep; return *this; }
  // Skip the local slicings even when the op supports them.
  OpTester &global_only() { local_ = false; return *this; }
  // Only the "global backend" case (no firmware run, no element-wise or
  // multi-core claim, no local slicings): what a caller that wants the op's
  // outputs needs.
  OpTester &backend_only() { backend_only_ = true; local_ = false; return *this; }
  // At most this many local slicings (default 4).
  OpTester &max_slicings(int n) { max_slicings_ = n; return *this; }
  // Record a profile trace of the runs (OpReport::trace_json).
  OpTester &profile(bool on = true) { profile_ = on; return *this; }

  // Throws Error when the op cannot be tested at all (a library does not
  // load, a hook is missing, the chip is not open-able, a kernel stops with
  // an emulator error); a wrong result is a failed case in the report.
  OpReport run() const;

 private:
  std::string op_;
  std::vector<Shape> input_shapes_;
  int num_outputs_ = 1;
  Dtype dtype_ = Dtype::fp32;
  std::vector<Dtype> out_dtypes_;
  Criterion criterion_ = Criterion::ulp;
  std::optional<VendorTolerance> vendor_tolerance_;
  std::string params_ = "{}";
  std::string chip_ = "bm1684x";
  std::uint64_t seed_ = 1;
  float low_ = -4, high_ = 4;
  std::optional<Tolerance> tolerance_;
  std::optional<LibraryPaths> paths_;
  bool local_ = true;
  bool backend_only_ = false;
  int max_slicings_ = 4;
  std::vector<std::vector<float>> values_;
  bool keep_outputs_ = false;
  bool profile_ = false;
};

}  // namespace tpu_runtime
