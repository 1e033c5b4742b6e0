// op_tester.cc: runs one custom op on the cmodel and compares it with the
// plugin's reference (see op_tester.h for the cases).
#include "tpu_runtime/op_tester.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/profile.h"
#include "groups/local_plan.h"
#include "emulator/emulator.h"
#include "io/arrays.h"

namespace tpu_runtime {
namespace {

std::int64_t element_count(const Shape &shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

// Host copy of one tensor: its shape and its values as fp32.
struct HostTensor {
  Shape shape;
  std::vector<float> values;
};

tensor_spec_t make_spec(const Shape &shape, Dtype dtype, std::uint64_t addr) {
  tensor_spec_t spec{};
  spec.addr = addr;
  spec.dtype = dtype_info(dtype).sg_dtype;
  spec.dims = int(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) spec.shape[i] = shape[i];
  spec.elem_num = int(element_count(shape));
  return spec;
}

// The bytes of a tensor of `shape` in `dtype`, after checking the shape:
// 1..8 dims, each >= 1, at most 2^31 - 1 elements (tensor_spec_t counts
// them in an int) and no more bytes than the chip's global memory. The
// product is computed without overflow, before anything is allocated.
std::uint64_t check_shape(const Shape &shape, Dtype dtype, const std::string &what) {
  if (shape.empty() || shape.size() > MAX_SHAPE_DIMS)
    throw Error(fmt::format("{} shape [{}] has {} dims; 1..{} are supported", what, fmt::join(shape, ","),
                            shape.size(), MAX_SHAPE_DIMS));
  std::uint64_t elements = 1;
  for (int d : shape) {
    if (d < 1) throw Error(fmt::format("{} shape [{}] has a dimension < 1", what, fmt::join(shape, ",")));
    if (elements > std::uint64_t(INT32_MAX) / std::uint64_t(d))
      throw Error(fmt::format("{} shape [{}] has more than 2^31 - 1 elements", what, fmt::join(shape, ",")));
    elements *= std::uint64_t(d);
  }
  const std::uint64_t bytes = elements * dtype_size(dtype);
  if (bytes > kGlobalMemoryBytes)
    throw Error(fmt::format("{} shape [{}] ({}) is {} bytes, more than the {} GiB of global memory", what,
                            fmt::join(shape, ","), dtype_name(dtype), bytes, kGlobalMemoryBytes >> 30));
  return bytes;
}

// Statistics of the last emulator run, the figures the report shows.
struct RunFigures {
  double total_us = 0;
  std::uint64_t gdma_bytes = 0;
  std::string json;
};

RunFigures last_run_figures() {
  RunFigures f;
  f.json = cmodel_last_run_stats();
  const auto stats = nlohmann::json::parse(f.json, nullptr, false);
  if (stats.is_discarded() || !stats.is_object()) return f;
  f.total_us = stats.value("total_us", 0.0);
  if (stats.contains("bytes") && stats["bytes"].is_object())
    for (const auto &[direction, bytes] : stats["bytes"].items()) f.gdma_bytes += bytes.get<std::uint64_t>();
  return f;
}

std::string coordinates(const Shape &shape, std::int64_t index) {
  std::vector<std::int64_t> coords(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    coords[i] = index % shape[i];
    index /= shape[i];
  }
  return fmt::format("[{}]", fmt::join(coords, ","));
}

// Owns the open emulator and the global buffers of one run().
class Session {
 public:
  explicit Session(const std::string &chip) {
    if (cmodel_open(chip.c_str()) != 0) throw Error(cmodel_last_error());
  }
  ~Session() { cmodel_close(); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  DeviceTensor alloc(const Shape &shape, Dtype dtype) {
    DeviceTensor t;
    t.shape = shape;
    t.bytes = std::uint64_t(element_count(shape)) * dtype_size(dtype);
    t.addr = cmodel_global_alloc(t.bytes);
    if (t.addr == 0) throw Error(fmt::format("cannot allocate {} bytes of global memory: {}", t.bytes, cmodel_last_error()));
    return t;
  }
  void write(const DeviceTensor &t, const void *bytes) {
    if (cmodel_global_write(t.addr, bytes, t.bytes) != 0) throw Error(cmodel_last_error());
  }
  // 0xFF bytes are NaN in every float type: an output the op never writes
  // shows up as a mismatch. The bytes count as unwritten: a kernel reading
  // them before it writes them is stopped (an uninitialised read).
  void poison(const DeviceTensor &t) {
    if (cmodel_global_poison(t.addr, t.bytes) != 0) throw Error(cmodel_last_error());
  }
  // Local memory as a fresh chip's: 0xFF bytes, none written. Each case
  // starts so, so no case reads what an earlier one left.
  void poison_local() {
    if (cmodel_local_poison(1) != 0) throw Error(cmodel_last_error());
  }
  // The tensor's values decoded to fp32; its bytes as stored into `bytes`.
  std::vector<float> read(const DeviceTensor &t, Dtype dtype, std::vector<std::uint8_t> &bytes) {
    bytes.resize(t.bytes);
    if (cmodel_global_read(bytes.data(), t.addr, t.bytes) != 0) throw Error(cmodel_last_error());
    std::vector<float> values(std::size_t(element_count(t.shape)));
    decode_floats(dtype, bytes.data(), values.size(), values.data());
    return values;
  }
};

struct Fixture {
  const Plugin *plugin;
  const Backend *backend;
  const Firmware *firmware;
  std::string op;
  Dtype dtype;                   // of the inputs
  std::vector<Dtype> out_dtypes;  // one per output
  PackedParams params;
  Criterion criterion;
  std::vector<Tolerance> tolerances;              // one per output
  std::vector<VendorTolerance> vendor_tolerances;  // one per output
  std::uint64_t seed;
  bool keep_outputs = false;
  // metadata_<op>'s num_inplace_inputs: output i shares input i's memory
  // for i below it, as in a model's memory plan.
  int inplace_inputs = 0;
  bool stateless = false;  // metadata_<op>'s is_stateless
  std::vector<std::vector<std::uint8_t>> input_bytes;  // each input as stored, rewritten before every case
};

// Every case starts from the inputs as generated: an in-place op (or a
// faulty one) changed them in the case before. Outputs are poisoned first:
// an in-place output then holds its input's values, as it would in a model.
void reset_tensors(Session &session, const Fixture &fx, const std::vector<DeviceTensor> &inputs,
                   const std::vector<DeviceTensor> &outputs) {
  for (const DeviceTensor &t : outputs) session.poison(t);
  for (std::size_t i = 0; i < inputs.size(); ++i) session.write(inputs[i], fx.input_bytes[i].data());
}

// The inputs the op must leave unchanged: those it does not update in place.
detail::UnchangedWatch watch_inputs(const Fixture &fx, const std::vector<DeviceTensor> &inputs) {
  detail::UnchangedWatch watch;
  for (std::size_t i = std::size_t(fx.inplace_inputs); i < inputs.size(); ++i)
    watch.add(fmt::format("op '{}': input {}", fx.op, i), inputs[i].addr, inputs[i].bytes);
  return watch;
}

// Whether output `i` passes under the fixture's criterion; if not, why.
bool output_passes(const Fixture &fx, std::size_t i, const Similarity &s, const VendorComparison &v,
                   std::string &why) {
  if (fx.criterion == Criterion::ulp) return within(s, fx.tolerances[i], &why);
  if (verdict_passes(v.verdict)) return true;
  const VendorTolerance &t = fx.vendor_tolerances[i];
  if (v.nonfinite_mismatches) {
    why = fmt::format("vendor criterion: {} elements are NaN or infinite where the reference is not (or the "
                      "reverse; the vendor's comparison would count NaN as 0); the first at index {}",
                      v.nonfinite_mismatches, v.first_nonfinite);
    return false;
  }
  why = v.verdict == VendorVerdict::not_equal
            ? fmt::format("vendor criterion: {} output not equal to the reference", dtype_name(fx.out_dtypes[i]))
            : fmt::format("vendor criterion: not similar (cosine {:.8f}, euclidean {:.8f}; both must be above {}, {})",
                          v.cosine, v.euclidean, t.min_cosine, t.min_euclidean);
  return false;
}

// What the op left in its outputs: the values decoded to fp32 and the
// bytes as stored (for the unwritten-element check).
struct Written {
  std::vector<std::vector<float>> values;
  std::vector<std::vector<std::uint8_t>> bytes;
};

// Compares every output with its reference and fills the case's verdict.
// Elements the op never wrote fail the case under either criterion.
void judge(OpCaseResult &result, const Fixture &fx, const std::vector<DeviceTensor> &outputs, const Written &written,
           const std::vector<HostTensor> &reference) {
  const std::vector<std::vector<float>> &actual = written.values;
  result.passed = true;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Similarity s = compare(actual[i], reference[i].values, fx.out_dtypes[i]);
    const VendorComparison v = vendor_compare(actual[i], reference[i].values, fx.out_dtypes[i], fx.vendor_tolerances[i]);
    result.outputs.push_back(s);
    result.vendor_outputs.push_back(v);
    if (!result.passed) continue;
    if (const Unwritten u = find_unwritten(written.bytes[i], fx.out_dtypes[i], reference[i].values); u.count) {
      result.passed = false;
      result.failure = fmt::format("output {}: {} of {} elements were never written (they still hold the 0xFF "
                                   "poison the runtime fills outputs with); the first at index {} {}, where the "
                                   "reference is {} (seed {})",
                                   i, u.count, actual[i].size(), u.first, coordinates(reference[i].shape, u.first),
                                   reference[i].values[std::size_t(u.first)], fx.seed);
      continue;
    }
    std::string why;
    if (output_passes(fx, i, s, v, why)) continue;
    result.passed = false;
    const std::int64_t at = s.worst_index >= 0 ? s.worst_index : s.first_mismatch;
    result.failure = fmt::format("output {}: {}", i, why);
    if (s.first_mismatch >= 0)
      result.failure += fmt::format("; first difference at index {} {}: got {} expected {}", s.first_mismatch,
                                    coordinates(reference[i].shape, s.first_mismatch),
                                    actual[i][std::size_t(s.first_mismatch)],
                                    reference[i].values[std::size_t(s.first_mismatch)]);
    if (at >= 0 && at != s.first_mismatch)
      result.failure += fmt::format("; worst at index {} {}: got {} expected {}", at, coordinates(reference[i].shape, at),
                                    actual[i][std::size_t(at)], reference[i].values[std::size_t(at)]);
    result.failure += fmt::format(" (seed {})", fx.seed);
  }
}

std::vector<tensor_spec_t> specs_of(const std::vector<DeviceTensor> &tensors, Dtype dtype) {
  std::vector<tensor_spec_t> specs;
  for (const DeviceTensor &t : tensors) specs.push_back(make_spec(t.shape, dtype, t.addr));
  return specs;
}

// One dtype per tensor (the outputs).
std::vector<tensor_spec_t> specs_of(const std::vector<DeviceTensor> &tensors, const std::vector<Dtype> &dtypes) {
  std::vector<tensor_spec_t> specs;
  for (std::size_t i = 0; i < tensors.size(); ++i) specs.push_back(make_spec(tensors[i].shape, dtypes[i], tensors[i].addr));
  return specs;
}

Written read_all(Session &session, const std::vector<DeviceTensor> &tensors, const std::vector<Dtype> &dtypes) {
  Written written;
  written.bytes.resize(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i)
    written.values.push_back(session.read(tensors[i], dtypes[i], written.bytes[i]));
  return written;
}

// Runs the whole op once through `run` (the backend or the firmware entry)
// on poisoned outputs and judges what it wrote.
template <typename Run>
OpCaseResult run_global_case(const char *name, Session &session, const Fixture &fx,
                             const std::vector<DeviceTensor> &inputs, const std::vector<DeviceTensor> &outputs,
                             const std::vector<HostTensor> &reference, Run &&run) {
  OpCaseResult result;
  result.name = name;
  session.poison_local();
  reset_tensors(session, fx, inputs, outputs);
  const detail::UnchangedWatch watch = watch_inputs(fx, inputs);
  std::vector<tensor_spec_t> out_specs = specs_of(outputs, fx.out_dtypes);
  run(specs_of(inputs, fx.dtype), out_specs);
  if (std::string changed = watch.changed(); !changed.empty()) {
    result.failure = changed;
    return result;
  }
  const RunFigures figures = last_run_figures();
  result.total_us = figures.total_us;
  result.gdma_bytes = figures.gdma_bytes;
  result.stats_json = figures.json;
  result.profile = profile_figures(figures.json);
  Written written = read_all(session, outputs, fx.out_dtypes);
  judge(result, fx, outputs, written, reference);
  if (fx.keep_outputs) result.values = std::move(written.values);
  return result;
}

// The op's parameters with the global scratch buffer it asks for placed in
// element 0 (the firmware takes it from there, as a model's memory plan
// gives it), `zeroed` or not; the parameters unchanged without scratch.
PackedParams with_scratch(Session &session, const Fixture &fx, const std::vector<DeviceTensor> &inputs,
                          const std::vector<DeviceTensor> &outputs, bool zeroed) {
  PackedParams params = fx.params;
  const std::int64_t scratch_bytes =
      fx.backend->global_buffer_size(fx.op, fx.params, specs_of(inputs, fx.dtype), specs_of(outputs, fx.out_dtypes));
  if (scratch_bytes <= 0) return params;
  const DeviceTensor scratch = session.alloc({int(std::min<std::int64_t>(scratch_bytes, INT32_MAX))}, Dtype::uint8);
  if (zeroed) session.write(scratch, std::vector<std::uint8_t>(scratch.bytes, 0).data());
  params.set_global_buffer(scratch.addr);
  return params;
}

// A stateful op's scratch starts zeroed, as in a model session's first
// run; a stateless op's holds whatever was there (reading it unwritten is
// an uninitialised read). Both global cases place it so.
OpCaseResult run_global_backend(Session &session, const Fixture &fx, const std::vector<DeviceTensor> &inputs,
                                const std::vector<DeviceTensor> &outputs, const std::vector<HostTensor> &reference) {
  const PackedParams params = with_scratch(session, fx, inputs, outputs, !fx.stateless);
  return run_global_case("global backend", session, fx, inputs, outputs, reference,
                         [&](const std::vector<tensor_spec_t> &in, std::vector<tensor_spec_t> &out) {
                           fx.backend->run_global_planned(fx.op, params, in, out);
                         });
}

// The firmware must infer the same output shapes and dtype as the plugin.
std::string check_firmware_shapes(const Fixture &fx, const std::vector<DeviceTensor> &inputs,
                                  const std::vector<DeviceTensor> &outputs) {
  std::vector<tensor_spec_t> inferred(outputs.size(), tensor_spec_t{});
  fx.firmware->shape_infer(fx.op, fx.params, specs_of(inputs, fx.dtype), inferred);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Shape got(inferred[i].shape, inferred[i].shape + std::clamp(inferred[i].dims, 0, MAX_SHAPE_DIMS));
    if (got != outputs[i].shape)
      return fmt::format("tpu_shape_infer_entry gives output {} shape [{}], the plugin [{}]", i, fmt::join(got, ","),
                         fmt::join(outputs[i].shape, ","));
    if (inferred[i].dtype != dtype_info(fx.out_dtypes[i]).sg_dtype)
      return fmt::format("tpu_shape_infer_entry gives output {} SG dtype {}, expected {} ({})", i, inferred[i].dtype,
                         dtype_info(fx.out_dtypes[i]).sg_dtype, dtype_name(fx.out_dtypes[i]));
  }
  return "";
}

OpCaseResult run_global_firmware(Session &session, const Fixture &fx, const std::vector<DeviceTensor> &inputs,
                                 const std::vector<DeviceTensor> &outputs, const std::vector<HostTensor> &reference) {
  if (std::string mismatch = check_firmware_shapes(fx, inputs, outputs); !mismatch.empty()) {
    OpCaseResult result;
    result.name = "global firmware";
    result.failure = mismatch;
    return result;
  }
  const PackedParams params = with_scratch(session, fx, inputs, outputs, !fx.stateless);
  return run_global_case("global firmware", session, fx, inputs, outputs, reference,
                         [&](const std::vector<tensor_spec_t> &in, std::vector<tensor_spec_t> &out) {
                           fx.firmware->run_global(fx.op, params, in, out);
                         });
}

// A stateless op gives the same outputs when it runs again on the same
// inputs with the same scratch buffer, as a model's later runs would give
// it (ModelSession): the global entry runs twice, the scratch zeroed once
// before, and the outputs' bytes must agree.
OpCaseResult check_stateless_claim(Session &session, const Fixture &fx, const std::vector<DeviceTensor> &inputs,
                                   const std::vector<DeviceTensor> &outputs) {
  OpCaseResult result;
  result.name = "stateless claim";
  const PackedParams params = with_scratch(session, fx, inputs, outputs, true);
  std::vector<std::vector<std::uint8_t>> first;
  for (int run = 0; run < 2; ++run) {
    session.poison_local();
    reset_tensors(session, fx, inputs, outputs);
    std::vector<tensor_spec_t> out_specs = specs_of(outputs, fx.out_dtypes);
    fx.backend->run_global_planned(fx.op, params, specs_of(inputs, fx.dtype), out_specs);
    Written written = read_all(session, outputs, fx.out_dtypes);
    if (run == 0) {
      first = std::move(written.bytes);
      continue;
    }
    if (fx.keep_outputs) result.values = written.values;
    for (std::size_t i = 0; i < outputs.size() && result.failure.empty(); ++i)
      if (const std::int64_t at = detail::first_changed_byte(first[i], written.bytes[i]); at >= 0)
        result.failure = fmt::format("op '{}' declares itself stateless (metadata_{}), but a second run on the same "
                                     "inputs and scratch gave output {} other bytes: first at byte {} ({:#04x}, then "
                                     "{:#04x}); an op that keeps state between runs must leave is_stateless false",
                                     fx.op, fx.op, i, at, first[i][std::size_t(at)],
                                     written.bytes[i][std::size_t(at)]);
  }
  result.passed = result.failure.empty();
  return result;
}

// One element of an output as the failure shows it: its value, or that the
// kernel never wrote it (the runtime's 0xFF poison is still there).
std::string element_text(const Written &w, std::size_t output, std::size_t element, Dtype dtype) {
  const std::size_t size = dtype_size(dtype);
  const std::uint8_t *bytes = w.bytes[output].data() + element * size;
  if (std::all_of(bytes, bytes + size, [](std::uint8_t b) { return b == 0xFF; }))
    return "never written (still the 0xFF poison)";
  return fmt::format("{}", w.values[output][element]);
}

// The first output element whose bytes differ between `one` (1 core) and
// `many` (`cores` cores), as the multi-core claim's failure; "" if none.
std::string first_core_difference(const Fixture &fx, const std::vector<DeviceTensor> &outputs, const Written &one,
                                  const Written &many, int cores) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::size_t size = dtype_size(fx.out_dtypes[i]);
    const std::int64_t byte = detail::first_changed_byte(one.bytes[i], many.bytes[i]);
    if (byte < 0) continue;
    std::size_t differing = 0;
    for (std::size_t e = 0; e < one.values[i].size(); ++e)
      differing += std::memcmp(&one.bytes[i][e * size], &many.bytes[i][e * size], size) != 0;
    const std::size_t at = std::size_t(byte) / size;
    const std::string where = coordinates(outputs[i].shape, std::int64_t(at));
    return fmt::format("op '{}' declares itself multi-core (metadata_{}), but on {} cores output {} differs from the "
                       "one-core run in {} of {} elements; the first at index {} {}: {} on 1 core, {} on {} cores "
                       "(seed {})",
                       fx.op, fx.op, cores, i, differing, one.values[i].size(), at, where,
                       element_text(one, i, at, fx.out_dtypes[i]), element_text(many, i, at, fx.out_dtypes[i]), cores,
                       fx.seed);
  }
  return "";
}

// A multi-core op (metadata_<op>'s is_multi_core) must give the outputs of
// one core bit for bit on N cores: the global backend runs on 1 core and
// on N (the chip's count in force, at least 2: a one-core chip emulates 2
// for the case), each from the generated inputs, poisoned outputs and a
// zeroed scratch. The case's figures are the N-core run's, whose time is
// its slowest core's.
OpCaseResult check_multi_core_claim(Session &session, const Fixture &fx, const std::vector<DeviceTensor> &inputs,
                                    const std::vector<DeviceTensor> &outputs) {
  OpCaseResult result;
  result.name = "multi-core claim";
  const detail::AtLeastCores in_force(2);
  const int cores = in_force.cores();
  Written runs[2];
  for (int run = 0; run < 2; ++run) {
    const PackedParams params = with_scratch(session, fx, inputs, outputs, true);
    session.poison_local();
    reset_tensors(session, fx, inputs, outputs);
    std::vector<tensor_spec_t> out_specs = specs_of(outputs, fx.out_dtypes);
    try {
      fx.backend->run_global_planned(fx.op, params, specs_of(inputs, fx.dtype), out_specs, run == 0 ? 1 : cores);
    } catch (const Error &e) {
      result.failure = fmt::format("op '{}' declares itself multi-core (metadata_{}), but its run on {} failed: {}",
                                   fx.op, fx.op, run == 0 ? std::string("1 core") : fmt::format("{} cores", cores),
                                   e.what());
      return result;
    }
    runs[run] = read_all(session, outputs, fx.out_dtypes);
  }
  const RunFigures figures = last_run_figures();
  result.total_us = figures.total_us;
  result.gdma_bytes = figures.gdma_bytes;
  result.stats_json = figures.json;
  result.profile = profile_figures(figures.json);
  result.failure = first_core_difference(fx, outputs, runs[0], runs[1], cores);
  if (fx.keep_outputs) result.values = std::move(runs[1].values);
  result.passed = result.failure.empty();
  return result;
}

// The slices' global addresses are in the plan; the tensors are read back whole.
OpCaseResult run_local_slicing(Session &session, const Fixture &fx, const LocalPlan &plan,
                               const std::vector<DeviceTensor> &inputs, const std::vector<DeviceTensor> &outputs,
                               const std::vector<HostTensor> &reference) {
  OpCaseResult result;
  result.name = plan.name;
  reset_tensors(session, fx, inputs, outputs);
  const detail::UnchangedWatch watch = watch_inputs(fx, inputs);
  // Poisoned once per slicing: a step then sees the pattern or what earlier
  // steps left, never data it did not load on purpose from this run. The
  // guard compares all of local memory, so it watches the first three and
  // the last two steps of a slicing (every step of a short one): a kernel
  // that writes past its slice does so at every step, and a slicing into
  // single rows has hundreds of them.
  LocalGuard guard;
  guard.poison();
  const std::size_t steps = plan.steps.size();
  for (std::size_t i = 0; i < steps; ++i) {
    const LocalStep &step = plan.steps[i];
    const detail::TraceSpan span("steps", fmt::format("step {}/{}", i + 1, steps));
    const bool guarded = i < 3 || i + 2 >= steps;
    move_slices(step.input_moves, fx.dtype, /*to_local=*/true);
    if (guarded) guard.remember();
    std::vector<tensor_spec_t> out_specs = step.output_specs;
    fx.backend->run_local(fx.op, fx.params, step.buffer_offset, step.sec_info, step.input_specs, out_specs);
    const RunFigures figures = last_run_figures();
    result.total_us += figures.total_us;
    result.gdma_bytes += figures.gdma_bytes;
    result.stats_json = figures.json;
    result.profile += profile_figures(figures.json);
    if (std::string stray = guarded ? guard.stray_write(step) : ""; !stray.empty()) {
      result.failure = fmt::format("op '{}', step {} of {}: {}", fx.op, i + 1, steps, stray);
      return result;
    }
    move_slices(step.output_moves, fx.dtype, /*to_local=*/false);
  }
  if (std::string changed = watch.changed(); !changed.empty()) {
    result.failure = changed;
    return result;
  }
  Written written = read_all(session, outputs, fx.out_dtypes);
  judge(result, fx, outputs, written, reference);
  if (fx.keep_outputs) result.values = std::move(written.values);
  return result;
}

// The op's tensors in global memory, the inputs' stored bytes kept in
// `fx` (each case writes them again). An in-place output is its input, as
// in a model's memory plan.
void allocate_tensors(Session &session, const std::vector<HostTensor> &inputs, const std::vector<Shape> &output_shapes,
                      Fixture &fx, std::vector<DeviceTensor> &device_inputs,
                      std::vector<DeviceTensor> &device_outputs) {
  for (const HostTensor &t : inputs) {
    device_inputs.push_back(session.alloc(t.shape, fx.dtype));
    std::vector<std::uint8_t> &stored = fx.input_bytes.emplace_back(device_inputs.back().bytes);
    encode_floats(fx.dtype, t.values.data(), t.values.size(), stored.data());
  }
  for (std::size_t i = 0; i < output_shapes.size(); ++i)
    device_outputs.push_back(int(i) < fx.inplace_inputs ? device_inputs[i]
                                                        : session.alloc(output_shapes[i], fx.out_dtypes[i]));
}

// Output i of an op that updates input i in place takes input i's memory:
// it must have input i's shape and dtype, and exist.
void check_inplace_outputs(const std::string &op, int inplace, const std::vector<Shape> &in_shapes, Dtype dtype,
                           const std::vector<Shape> &out_shapes, const std::vector<Dtype> &out_dtypes) {
  if (std::size_t(inplace) > out_shapes.size())
    throw Error(fmt::format("OpTester({}): metadata_{} declares {} in-place inputs, but the op has {} output(s); "
                            "output i takes input i's memory",
                            op, op, inplace, out_shapes.size()));
  for (std::size_t i = 0; i < std::size_t(inplace); ++i)
    if (out_shapes[i] != in_shapes[i] || out_dtypes[i] != dtype)
      throw Error(fmt::format("OpTester({}): metadata_{} declares input {} updated in place, but output {} is [{}] "
                              "{} and input {} [{}] {}; an in-place output has its input's shape and dtype",
                              op, op, i, i, fmt::join(out_shapes[i], ","), dtype_name(out_dtypes[i]), i,
                              fmt::join(in_shapes[i], ","), dtype_name(dtype)));
}

// The values rounded to the dtype, so the reference sees exactly what the
// op sees.
void round_to_dtype(HostTensor &t, Dtype dtype) {
  std::vector<std::uint8_t> stored(t.values.size() * dtype_size(dtype));
  encode_floats(dtype, t.values.data(), t.values.size(), stored.data());
  decode_floats(dtype, stored.data(), t.values.size(), t.values.data());
}

// The given values, one vector per shape, rounded to the dtype (what the op
// and the reference then see).
std::vector<HostTensor> given_inputs(const std::vector<Shape> &shapes, const std::vector<std::vector<float>> &values,
                                     Dtype dtype, const std::string &op) {
  if (values.size() != shapes.size())
    throw Error(fmt::format("OpTester({}): {} input value array(s) for {} input shape(s)", op, values.size(),
                            shapes.size()));
  std::vector<HostTensor> inputs;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (std::int64_t(values[i].size()) != element_count(shapes[i]))
      throw Error(fmt::format("OpTester({}): input {} has {} values, but its shape [{}] holds {}", op, i,
                              values[i].size(), fmt::join(shapes[i], ","), element_count(shapes[i])));
    HostTensor t{shapes[i], values[i]};
    round_to_dtype(t, dtype);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

std::vector<HostTensor> random_inputs(const std::vector<Shape> &shapes, Dtype dtype, float low, float high,
                                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<HostTensor> inputs;
  for (const Shape &shape : shapes) {
    HostTensor t{shape, std::vector<float>(std::size_t(element_count(shape)))};
    for (float &v : t.values) v = uniform(rng);
    round_to_dtype(t, dtype);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

std::vector<HostTensor> reference_outputs(const Fixture &fx, const std::vector<HostTensor> &inputs,
                                          const std::vector<Shape> &output_shapes) {
  std::vector<Shape> input_shapes;
  std::vector<const float *> in;
  for (const HostTensor &t : inputs) {
    input_shapes.push_back(t.shape);
    in.push_back(t.values.data());
  }
  std::vector<HostTensor> outputs;
  for (const Shape &shape : output_shapes)
    outputs.push_back({shape, std::vector<float>(std::size_t(element_count(shape)),
                                                 std::numeric_limits<float>::quiet_NaN())});
  std::vector<float *> out;
  for (HostTensor &t : outputs) out.push_back(t.values.data());
  fx.plugin->inference(fx.op, fx.params, input_shapes, in, out);
  return outputs;
}

// Elements [begin, end) of `axis` of `t`, the other axes whole.
HostTensor piece(const HostTensor &t, std::size_t axis, int begin, int end) {
  const std::int64_t outer = element_count(Shape(t.shape.begin(), t.shape.begin() + std::ptrdiff_t(axis)));
  const std::int64_t inner = element_count(Shape(t.shape.begin() + std::ptrdiff_t(axis) + 1, t.shape.end()));
  const std::int64_t extent = t.shape[axis];
  HostTensor p{t.shape, {}};
  p.shape[axis] = end - begin;
  for (std::int64_t o = 0; o < outer; ++o) {
    const auto from = t.values.begin() + std::ptrdiff_t((o * extent + begin) * inner);
    p.values.insert(p.values.end(), from, from + std::ptrdiff_t((end - begin) * inner));
  }
  return p;
}

// Index in the whole tensor of element `k` of piece [begin, ...) of `axis`.
std::int64_t whole_index(const Shape &whole, std::size_t axis, int begin, int piece_extent, std::int64_t k) {
  const std::int64_t inner = element_count(Shape(whole.begin() + std::ptrdiff_t(axis) + 1, whole.end()));
  const std::int64_t o = k / (piece_extent * inner), rest = k % (piece_extent * inner);
  return (o * whole[axis] + begin) * inner + rest;
}

bool same_bits(float a, float b) {
  std::uint32_t x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}

// An element-wise op's output element depends only on the input elements at
// its index, so its reference on pieces of the inputs is exactly the pieces
// of its reference on the whole. Each axis of extent >= 2 is cut once, at a
// third (not the middle, so a mirror-symmetric op does not slip through),
// and both pieces compared bit for bit; the first differing element fails
// the case. Host only: the claim is about the op's function, which the
// reference defines; the kernels are held to the reference by the other cases.
OpCaseResult check_elementwise_claim(const Fixture &fx, const std::vector<HostTensor> &inputs,
                                     const std::vector<HostTensor> &reference) {
  OpCaseResult result;
  result.name = "element-wise claim";
  result.passed = true;
  const Shape &shape = inputs[0].shape;
  for (std::size_t axis = 0; axis < shape.size() && result.passed; ++axis) {
    if (shape[axis] < 2) continue;
    const int cut = std::max(1, shape[axis] / 3);
    for (const auto &[begin, end] : {std::pair{0, cut}, std::pair{cut, shape[axis]}}) {
      std::vector<HostTensor> in;
      for (const HostTensor &t : inputs) in.push_back(piece(t, axis, begin, end));
      const std::vector<HostTensor> out =
          reference_outputs(fx, in, std::vector<Shape>(reference.size(), in[0].shape));
      for (std::size_t o = 0; o < out.size() && result.passed; ++o) {
        const HostTensor expected = piece(reference[o], axis, begin, end);
        for (std::size_t k = 0; k < expected.values.size(); ++k) {
          if (same_bits(out[o].values[k], expected.values[k])) continue;
          const std::int64_t at = whole_index(shape, axis, begin, end - begin, std::int64_t(k));
          result.passed = false;
          result.failure = fmt::format(
              "op '{}' declares itself element-wise (metadata_{}), but its reference inference_{} on the inputs' "
              "elements {}..{} of axis {} differs from its reference on the whole inputs: output {} at index {} {} "
              "is {} computed on the piece, {} on the whole (each output element of an element-wise op depends only "
              "on the input elements at its index; seed {})",
              fx.op, fx.op, fx.op, begin, end - 1, axis, o, at, coordinates(shape, at), out[o].values[k],
              expected.values[k], fx.seed);
          break;
        }
      }
      if (!result.passed) break;
    }
  }
  return result;
}

// The trace's metadata: the profile summary of every case and of them all.
nlohmann::ordered_json profile_metadata(const std::vector<OpCaseResult> &cases) {
  nlohmann::ordered_json summary;
  ProfileFigures total;
  summary["cases"] = nlohmann::ordered_json::array();
  for (const OpCaseResult &c : cases) {
    total += c.profile;
    summary["cases"].push_back({{"name", c.name}, {"summary", profile_summary_json(summarize_profile(c.profile))}});
  }
  summary["total"] = profile_summary_json(summarize_profile(total));
  return {{"profile_summary", summary}};
}

// Each output's bounds: the given ones, else its dtype's defaults.
void set_tolerances(Fixture &fx, const std::optional<Tolerance> &t, const std::optional<VendorTolerance> &v) {
  for (Dtype d : fx.out_dtypes) {
    fx.tolerances.push_back(t ? *t : default_tolerance(d));
    fx.vendor_tolerances.push_back(v ? *v : default_vendor_tolerance(d));
  }
}

void require_registered(const Backend &backend, const std::string &op) {
  const std::vector<std::string> ops = backend.registered_ops();
  if (std::find(ops.begin(), ops.end(), op) == ops.end())
    throw Error(fmt::format("unknown op '{}': {} does not register it (registered: {}){}", op, backend.path(),
                            ops.empty() ? std::string("none") : fmt::format("{}", fmt::join(ops, ", ")),
                            unknown_op_hint(op, ops)));
}

}  // namespace

const OpCaseResult *OpReport::find(const std::string &name) const {
  for (const OpCaseResult &c : cases)
    if (c.name == name) return &c;
  return nullptr;
}

std::string OpReport::summary() const {
  std::string text = fmt::format("{} on {} {} inputs", op, chip, dtype_name(dtype));
  for (const Shape &s : input_shapes) text += fmt::format(" [{}]", fmt::join(s, ","));
  if (std::any_of(output_dtypes.begin(), output_dtypes.end(), [&](Dtype d) { return d != dtype; })) {
    std::vector<const char *> names;
    for (Dtype d : output_dtypes) names.push_back(dtype_name(d));
    text += fmt::format(", {} outputs", fmt::join(names, " "));
  }
  text += fmt::format(" seed {}, {} criterion: {}\n", seed, criterion_name(criterion), passed ? "PASS" : "FAIL");
  text += fmt::format("  metadata: {}\n", metadata_text(metadata));
  for (const std::string &note : notes) text += fmt::format("  note: {}\n", note);
  for (const OpCaseResult &c : cases) {
    text += fmt::format("  {:<24} {}", c.name, c.passed ? "pass" : "FAIL");
    for (std::size_t i = 0; i < c.outputs.size(); ++i) {
      const Similarity &s = c.outputs[i];
      text += fmt::format("  cosine {:.7f} euclid {:.7f} max_abs {:.3g} max_ulp {}", s.cosine, s.euclidean, s.max_abs,
                          s.max_ulp);
      if (i < c.vendor_outputs.size())
        text += fmt::format(" vendor {}", verdict_name(c.vendor_outputs[i].verdict));
    }
    text += fmt::format("  {:.2f} us {} GDMA bytes\n", c.total_us, c.gdma_bytes);
    if (!c.passed) text += fmt::format("    {}\n", c.failure);
    text += fmt::format("    profile: {}\n", profile_summary_line(summarize_profile(c.profile)));
  }
  return text;
}

OpReport OpTester::run() const {
  if (op_.empty()) throw Error("OpTester: no op name given");
  if (input_shapes_.empty()) throw Error(fmt::format("OpTester({}): no input shape given", op_));
  std::uint64_t input_bytes = 0;
  for (std::size_t i = 0; i < input_shapes_.size(); ++i)
    input_bytes += check_shape(input_shapes_[i], dtype_, fmt::format("OpTester({}): input {}", op_, i));
  if (input_bytes > kGlobalMemoryBytes)
    throw Error(fmt::format("OpTester({}): the inputs are {} bytes together, more than the {} GiB of global memory",
                            op_, input_bytes, kGlobalMemoryBytes >> 30));
  if (num_outputs_ < 1) throw Error(fmt::format("OpTester({}): num_outputs must be at least 1", op_));
  if (!dtype_info(dtype_).is_float)
    throw Error(fmt::format("OpTester({}): custom ops take fp32, fp16 or bf16, not {}", op_, dtype_name(dtype_)));

  if (!out_dtypes_.empty() && out_dtypes_.size() != std::size_t(num_outputs_))
    throw Error(fmt::format("OpTester({}): out_dtypes lists {} dtype(s) for {} output(s) (num_outputs)", op_,
                            out_dtypes_.size(), num_outputs_));
  const std::vector<Dtype> out_dtypes = out_dtypes_.empty() ? std::vector<Dtype>(num_outputs_, dtype_) : out_dtypes_;

  const LibraryPaths paths = paths_ ? *paths_ : default_library_paths(chip_);
  const Plugin plugin = Plugin::open(paths.plugin);
  const Backend backend = Backend::open(paths.backend);
  const Firmware firmware = Firmware::open(paths.firmware, chip_);
  check_same_build(&plugin, &backend, &firmware);
  require_registered(backend, op_);
  // The text's own checks (keys given twice, ...) first; then the op's
  // declared types, if it has them (tpu_runtime/params.h).
  PackedParams packed = PackedParams::from_json_text(params_);
  std::vector<std::string> conversions;
  {
    const nlohmann::ordered_json parsed =
        params_.find_first_not_of(" \t\r\n") == std::string::npos ? nlohmann::ordered_json::object()
                                                                     : nlohmann::ordered_json::parse(params_);
    packed = plugin.pack_params(op_, parsed, conversions);
  }
  Fixture fx{&plugin, &backend, &firmware, op_, dtype_, out_dtypes, std::move(packed), criterion_,
             {}, {}, seed_, keep_outputs_, 0, false, {}};
  set_tolerances(fx, tolerance_, vendor_tolerance_);

  OpReport report;
  report.op = op_;
  report.chip = chip_;
  report.dtype = dtype_;
  report.output_dtypes = out_dtypes;
  report.criterion = criterion_;
  report.seed = seed_;
  report.input_shapes = input_shapes_;
  for (const std::string &c : conversions) report.notes.push_back(c);
  report.metadata = plugin.metadata(op_, fx.params, int(input_shapes_.size()));
  report.output_shapes = plugin.shape_inference(op_, fx.params, input_shapes_, num_outputs_);
  fx.inplace_inputs = report.metadata.inplace_inputs;
  fx.stateless = report.metadata.stateless;
  check_inplace_outputs(op_, fx.inplace_inputs, input_shapes_, dtype_, report.output_shapes, out_dtypes);
  std::uint64_t total_bytes = input_bytes;
  for (std::size_t i = 0; i < report.output_shapes.size() && i < out_dtypes.size(); ++i)
    total_bytes += check_shape(report.output_shapes[i], out_dtypes[i],
                               fmt::format("OpTester({}): inferred output {}", op_, i));
  if (total_bytes > kGlobalMemoryBytes)
    throw Error(fmt::format("OpTester({}): the inputs and outputs are {} bytes together, more than the {} GiB of "
                            "global memory",
                            op_, total_bytes, kGlobalMemoryBytes >> 30));

  const std::vector<HostTensor> inputs = values_.empty() ? random_inputs(input_shapes_, dtype_, low_, high_, seed_)
                                                         : given_inputs(input_shapes_, values_, dtype_, op_);
  const std::vector<HostTensor> reference = reference_outputs(fx, inputs, report.output_shapes);
  if (keep_outputs_) {
    for (const HostTensor &t : inputs) report.inputs.push_back(t.values);
    for (const HostTensor &t : reference) report.reference.push_back(t.values);
  }

  Session session(chip_);
  std::vector<DeviceTensor> device_inputs, device_outputs;
  allocate_tensors(session, inputs, report.output_shapes, fx, device_inputs, device_outputs);

  // The helper runs (poisoning, guards) issue no engine command: they add
  // nothing to the trace.
  if (profile_ && cmodel_trace_enable(1) != 0) throw Error(cmodel_last_error());
  const auto add_case = [&](const std::string &name, auto &&run_case) {
    const detail::TraceSpan span("cases", name);
    report.cases.push_back(run_case());
  };
  add_case("global backend", [&] { return run_global_backend(session, fx, device_inputs, device_outputs, reference); });
  if (!backend_only_)
    add_case("global firmware",
             [&] { return run_global_firmware(session, fx, device_inputs, device_outputs, reference); });
  // Host only, but through add_case: the report pairs each case with its
  // trace span. Before the slicings, which take identity slices from the
  // claim: a false one makes them read rows they were not given.
  bool claim_holds = true;
  if (report.metadata.elementwise && !backend_only_) {
    add_case("element-wise claim", [&] { return check_elementwise_claim(fx, inputs, reference); });
    claim_holds = report.cases.back().passed;
    if (!claim_holds) report.notes.push_back("local slicings not run: they rely on the element-wise claim, which failed");
  }
  if (report.metadata.stateless)
    add_case("stateless claim", [&] { return check_stateless_claim(session, fx, device_inputs, device_outputs); });
  if (report.metadata.multi_core && !backend_only_)
    add_case("multi-core claim", [&] { return check_multi_core_claim(session, fx, device_inputs, device_outputs); });
  // The local planner moves every slice in one dtype.
  const bool one_dtype = std::all_of(out_dtypes.begin(), out_dtypes.end(), [&](Dtype d) { return d == dtype_; });
  if (!one_dtype && local_ && backend.has_local(op_))
    report.notes.push_back("local slicings not run: the op tester slices only ops whose outputs have the input dtype");
  if (claim_holds && one_dtype && local_ && plugin.local_gen_support(op_, fx.params) && backend.has_local(op_)) {
    const LocalPlanner planner(plugin, backend, op_, fx.params, dtype_, input_shapes_, report.output_shapes);
    for (const LocalPlan &plan : planner.plans(max_slicings_, device_inputs, device_outputs))
      add_case(plan.name,
               [&] { return run_local_slicing(session, fx, plan, device_inputs, device_outputs, reference); });
  }
  if (profile_) {
    const char *trace = cmodel_trace_json();
    if (!trace) throw Error(cmodel_last_error());
    report.trace_json = trace_with_metadata(trace, profile_metadata(report.cases));
  }
  report.passed = std::all_of(report.cases.begin(), report.cases.end(), [](const OpCaseResult &c) { return c.passed; });
  return report;
}

}  // namespace tpu_runtime
