// tpu_sdk_module.cc: the _tpu_sdk Python extension, a thin layer over
// libtpu_runtime: model files built from a net description and run on the
// emulator, and .npz files, with numpy arrays in and out.
//
// Every runtime error becomes tpu_sdk.Error (a RuntimeError) carrying the
// runtime's message; nothing a caller passes (a wrong dtype, a shape that
// does not match, an unknown op, bad parameters, a non-contiguous or
// big-endian array, an object that is no array at all) reaches the C++ side
// unchecked. The emulator is one per process: calls hold the GIL, so two
// Python threads never drive it at once.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <string>

#include "cmodel_host.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/expression.h"
#include "tpu_runtime/gradient_check.h"
#include "tpu_runtime/json_limits.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/npz.h"
#include "tpu_runtime/onnx_import.h"
#include "tpu_runtime/op_tester.h"
#include "tpu_runtime/pipeline.h"

namespace py = pybind11;
namespace tr = tpu_runtime;

namespace {

// ---- numpy <-> npz::Array ---------------------------------------------------

py::array to_numpy(const tr::npz::Array &array) {
  std::vector<py::ssize_t> shape(array.shape.begin(), array.shape.end());
  py::array out(py::dtype(array.dtype), shape);
  if (!array.data.empty()) std::memcpy(out.mutable_data(), array.data.data(), array.data.size());
  return out;
}

py::dict to_numpy(const tr::npz::Arrays &arrays) {
  py::dict out;
  for (const auto &[name, array] : arrays) out[py::str(name)] = to_numpy(array);
  return out;
}

// An object array of str (what onnx.numpy_helper gives for a string
// tensor) as a text array ("<U<n>"); any other object array is refused.
py::array text_of_objects(const std::string &name, const py::array &array) {
  for (const py::handle item : array.attr("ravel")())
    if (!py::isinstance<py::str>(item))
      throw tr::Error(fmt::format("array '{}': an object array is taken as text and must hold str only, not {}", name,
                                  std::string(py::str(py::type::of(item).attr("__name__")))));
  return py::module_::import("numpy").attr("ascontiguousarray")(array, py::arg("dtype") = "U");
}

// Any array-like; a non-contiguous array is copied into C order first.
tr::npz::Array from_numpy(const std::string &name, const py::handle &object) {
  py::array array = py::array::ensure(object, py::array::c_style);
  if (!array) {
    PyErr_Clear();
    throw tr::Error(fmt::format("array '{}': a {} is not convertible to a numpy array", name,
                                std::string(py::str(py::type::of(object).attr("__name__")))));
  }
  if (array.dtype().kind() == 'O') array = text_of_objects(name, array);
  tr::npz::Array out;
  out.dtype = py::str(array.dtype().attr("str"));
  std::size_t item = 0;
  try {
    item = tr::npz::dtype_size(out.dtype);  // refuses unsupported and big-endian types
  } catch (const tr::Error &e) {
    throw tr::Error(fmt::format("array '{}': {}", name, e.what()));
  }
  if (std::size_t(array.itemsize()) != item)
    throw tr::Error(fmt::format("array '{}': dtype {} has {}-byte elements, expected {}", name, out.dtype,
                                array.itemsize(), item));
  for (py::ssize_t i = 0; i < array.ndim(); ++i) out.shape.push_back(array.shape(i));
  const auto *bytes = static_cast<const uint8_t *>(array.data());
  out.data.assign(bytes, bytes + array.nbytes());
  return out;
}

tr::npz::Arrays from_numpy(const py::dict &arrays) {
  tr::npz::Arrays out;
  for (const auto &[key, value] : arrays) {
    if (!py::isinstance<py::str>(key))
      throw tr::Error(fmt::format("array names must be strings, not {}", std::string(py::repr(key))));
    const std::string name = py::str(key);
    out.emplace(name, from_numpy(name, value));
  }
  return out;
}

// ---- libraries ------------------------------------------------------------

// The chip's default libraries, with any given path in their place.
tr::LibraryPaths library_paths(const std::string &chip, const std::string &plugin, const std::string &backend,
                               const std::string &firmware) {
  tr::LibraryPaths paths = tr::default_library_paths(chip);
  if (!plugin.empty()) paths.plugin = plugin;
  if (!backend.empty()) paths.backend = backend;
  if (!firmware.empty()) paths.firmware = firmware;
  return paths;
}

// ---- the functions ----------------------------------------------------------

tr::NetDescription parse_net_text(const std::string &net_json, const std::string &where) {
  tr::check_json_depth(net_json, where);
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(net_json);
  } catch (const nlohmann::json::exception &e) {
    throw tr::Error(fmt::format("{}: the net description is not valid JSON: {}", where, e.what()));
  }
  return tr::parse_net(json, where, "net");
}

// Builds a model file at `output` and returns what the build computed.
py::dict build_model(const std::string &net_json, const std::string &chip, const std::string &output,
                     const py::object &reference_inputs, bool reference, bool embed_reference, uint64_t seed,
                     const std::string &plugin, const std::string &backend, const std::string &firmware,
                     int pipeline, int micro_batches, const std::optional<uint64_t> &stage_memory,
                     bool layer_groups, uint32_t group_local_memory) {
  const tr::NetDescription net = parse_net_text(net_json, output);
  tr::BuildOptions options;
  options.chip = chip;
  options.libraries = library_paths(chip, plugin, backend, firmware);
  options.reference = reference || !reference_inputs.is_none();
  if (!reference_inputs.is_none()) options.reference_inputs = from_numpy(reference_inputs.cast<py::dict>());
  options.seed = seed;
  options.embed_reference = embed_reference;
  options.layer_groups = layer_groups;
  options.group_local_memory = group_local_memory;
  tr::BuildResult result = tr::build_model(net, options, output);
  if (pipeline > 0) tr::add_pipeline(result, net, options, {pipeline, micro_batches, stage_memory}, output);
  tr::write_model_file(output, result.model);
  py::dict out;
  out["reference_inputs"] = to_numpy(result.reference_inputs);
  out["reference_outputs"] = to_numpy(result.reference_outputs);
  out["warnings"] = result.warnings;
  return out;
}

// An ONNX model as a net description (docs/onnx.md): (net JSON text,
// warnings). The plugin and backend give the custom ops' identities.
py::tuple import_onnx(const std::string &path, const std::string &chip, const std::string &plugin,
                      const std::string &backend, const std::map<std::string, std::vector<int64_t>> &input_shapes) {
  tr::OnnxImportOptions options;
  options.libraries = library_paths(chip, plugin, backend, "");
  options.input_shapes = input_shapes;
  const tr::OnnxImport imported = tr::import_onnx(path, options);
  return py::make_tuple(imported.net_json.dump(), imported.warnings);
}

py::dict layer_stats(const tr::LayerStats &s) {
  py::dict d;
  d["name"] = s.name;
  d["op"] = s.op;
  d["mode"] = tr::mode_name(s.mode);
  d["total_us"] = s.total_us;
  d["gdma_bytes"] = s.gdma_bytes;
  d["stats_json"] = s.stats_json;
  if (s.mode == tr::LayerMode::host_mode) {  // a host layer: measured and estimated, not emulated
    d["host_us"] = s.host_us;
    d["transfer_us"] = s.transfer_us;
    d["host_bytes_in"] = s.host_bytes_in;
    d["host_bytes_out"] = s.host_bytes_out;
  }
  return d;
}

// Runs a model file; returns (outputs, per-layer statistics).
py::tuple run_model(const std::string &path, const py::dict &inputs) {
  const tr::ModelFile model = tr::read_model_file(path);
  const tr::RunResult result = tr::run_model(model, from_numpy(inputs), path);
  py::list stats;
  for (const tr::LayerStats &s : result.layers) stats.append(layer_stats(s));
  return py::make_tuple(to_numpy(result.outputs), stats);
}

// A pipelined model file over its micro-batches (tr::run_pipeline).
py::dict run_pipeline(const std::string &path, const py::dict &inputs, const std::optional<int> &micro_batches) {
  const tr::ModelFile model = tr::read_model_file(path);
  const tr::PipelineRunResult r = tr::run_pipeline(model, from_numpy(inputs), path, micro_batches);
  py::list schedule;
  for (const tr::PipelineSlot &s : r.schedule) {
    py::dict slot;
    slot["stage"] = s.stage;
    slot["micro_batch"] = s.micro_batch;
    slot["start_us"] = s.start_us;
    slot["end_us"] = s.end_us;
    schedule.append(slot);
  }
  py::dict out;
  out["outputs"] = to_numpy(r.outputs);
  out["micro_batches"] = r.micro_batches;
  out["emulated"] = r.emulated;
  out["not_emulated"] = r.not_emulated;
  out["stage_us"] = r.stage_us;
  out["schedule"] = schedule;
  out["pipelined_us"] = r.pipelined_us;
  out["one_device_us"] = r.one_device_us;
  out["unpipelined_us"] = r.unpipelined_us;
  out["outputs_identical"] = r.outputs_identical;
  out["difference"] = r.difference;
  return out;
}

// The stored plan as JSON text ("" when the model is not pipelined).
std::string pipeline_plan(const std::string &path) {
  const tr::ModelFile model = tr::read_model_file(path);
  if (!tr::stored_pipeline(model, path)) return "";
  return model.metadata[tr::kPipelineKey].dump();
}

// A model file loaded once and run several times (tr::ModelSession): the
// scratch buffers of its stateful layers keep their state from run to run.
class ModelSession {
 public:
  explicit ModelSession(const std::string &path)
      : path_(path), model_(tr::read_model_file(path)), session_(model_, path_) {}
  py::tuple run(const py::dict &inputs) {
    const tr::RunResult result = session_.run(from_numpy(inputs));
    py::list stats;
    for (const tr::LayerStats &s : result.layers) stats.append(layer_stats(s));
    return py::make_tuple(to_numpy(result.outputs), stats);
  }

 private:
  std::string path_;
  tr::ModelFile model_;
  tr::ModelSession session_;  // after model_: it refers to it
};

// The model's inputs and outputs: name -> (shape, dtype name).
py::dict model_tensors(const std::string &path, bool outputs) {
  const tr::ModelFile model = tr::read_model_file(path);
  const tr::ModelDescription d = tr::describe_model(model, path);
  py::dict out;
  for (std::size_t index : outputs ? d.outputs : d.inputs) {
    const tr::ModelTensor &t = d.tensors[index];
    out[py::str(t.name)] = py::make_tuple(t.shape, tr::dtype_name(t.dtype));
  }
  return out;
}

std::string model_info(const std::string &path) {
  tr::ModelFileLayout layout;
  const tr::ModelFile model = tr::read_model_file(path, &layout);
  return tr::model_info_text(model, layout, path);
}

// ---- one op -----------------------------------------------------------------

py::array_t<float> shaped(const std::vector<float> &values, const tr::Shape &shape) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  py::array_t<float> out(dims);
  if (!values.empty()) std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(float));
  return out;
}

py::list shaped_all(const std::vector<std::vector<float>> &values, const std::vector<tr::Shape> &shapes) {
  py::list out;
  for (std::size_t i = 0; i < values.size() && i < shapes.size(); ++i) out.append(shaped(values[i], shapes[i]));
  return out;
}

// An op's metadata as a dict ({'inplace_inputs', 'elementwise', 'stateless',
// 'input_layouts': [{'input', 'alignment', 'innermost_multiple'}],
// 'multi_core'}), None
// when the op declares none.
py::object metadata_dict(const tr::OpMetadata &m) {
  if (!m.declared) return py::none();
  py::list layouts;
  for (const tr::InputLayout &l : m.input_layouts) {
    py::dict d;
    d["input"] = l.input;
    d["alignment"] = l.alignment;
    d["innermost_multiple"] = l.innermost_multiple;
    layouts.append(d);
  }
  py::dict out;
  out["inplace_inputs"] = m.inplace_inputs;
  out["elementwise"] = m.elementwise;
  out["stateless"] = m.stateless;
  out["input_layouts"] = layouts;
  out["multi_core"] = m.multi_core;
  return out;
}

// metadata_<op> of the plugin for a layer of `num_inputs` inputs, checked.
py::object op_metadata(const std::string &op, const std::string &params_json, int num_inputs, const std::string &chip,
                       const std::string &plugin) {
  const tr::Plugin p = tr::Plugin::open(library_paths(chip, plugin, "", "").plugin);
  std::vector<std::string> warnings;
  nlohmann::ordered_json params;
  try {
    params = nlohmann::ordered_json::parse(params_json.empty() ? "{}" : params_json);
  } catch (const nlohmann::json::exception &e) {
    throw tr::Error(fmt::format("op_metadata({}): params_json is not JSON: {}", op, e.what()));
  }
  return metadata_dict(p.metadata(op, p.pack_params(op, params, warnings), num_inputs));
}

// Runs one op on the given arrays through the op tester: the global layer
// (backend and firmware) and, for a local op, several local slicings, each
// compared with the plugin's inference_<op>.
py::dict run_op(const std::string &op, const py::list &inputs, const std::string &params_json, const std::string &chip,
                const std::string &dtype, const std::vector<std::string> &out_dtypes, int num_outputs, bool local,
                const std::string &criterion, const std::string &plugin, const std::string &backend,
                const std::string &firmware, bool backend_only) {
  tr::OpTester tester;
  if (backend_only) tester.backend_only();
  tester.op(op).chip(chip).dtype(tr::parse_dtype(dtype)).params(params_json.empty() ? "{}" : params_json);
  tester.libraries(library_paths(chip, plugin, backend, firmware)).num_outputs(num_outputs).keep_outputs();
  tester.criterion(tr::parse_criterion(criterion));
  std::vector<tr::Dtype> outs;
  for (const std::string &d : out_dtypes) outs.push_back(tr::parse_dtype(d));
  if (!outs.empty()) tester.out_dtypes(outs);
  if (!local) tester.global_only();
  std::vector<std::vector<float>> values;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(inputs[i]);
    if (!array) {
      PyErr_Clear();
      throw tr::Error(fmt::format("run_op({}): input {} is not convertible to a float32 array", op, i));
    }
    tr::Shape shape;
    for (py::ssize_t d = 0; d < array.ndim(); ++d) shape.push_back(int(array.shape(d)));
    tester.input_shape(shape);
    values.emplace_back(array.data(), array.data() + array.size());
  }
  tester.input_values(std::move(values));
  const tr::OpReport report = tester.run();
  py::list cases;
  for (const tr::OpCaseResult &c : report.cases) {
    py::dict d;
    d["name"] = c.name;
    d["passed"] = c.passed;
    d["failure"] = c.failure;
    d["outputs"] = shaped_all(c.values, report.output_shapes);
    d["total_us"] = c.total_us;
    d["gdma_bytes"] = c.gdma_bytes;
    cases.append(d);
  }
  py::dict out;
  out["passed"] = report.passed;
  out["summary"] = report.summary();
  out["cases"] = cases;
  out["reference"] = shaped_all(report.reference, report.output_shapes);
  out["inputs"] = shaped_all(report.inputs, report.input_shapes);
  out["notes"] = report.notes;
  out["metadata"] = metadata_dict(report.metadata);
  return out;
}

py::object gradient_dict(const std::optional<tr::GradientDeclaration> &g) {
  if (!g) return py::none();
  py::dict d;
  d["op"] = g->op;
  d["grad_op"] = g->grad_op;
  d["separate"] = g->separate;
  d["receives_inputs"] = g->receives_inputs;
  d["receives_outputs"] = g->receives_outputs;
  d["non_differentiable"] = g->non_differentiable;
  d["text"] = tr::gradient_text(*g);
  return d;
}

// The op's register_custom_grad declaration, from the backend library.
py::object op_gradient(const std::string &op, const std::string &chip, const std::string &backend) {
  return gradient_dict(tr::Backend::open(library_paths(chip, "", backend, "").backend).gradient_of(op));
}

// The gradient checker (gradient_check.h) on random inputs of the shapes.
py::dict check_gradient(const std::string &op, const std::vector<tr::Shape> &shapes, const std::string &params_json,
                        const std::string &chip, const std::string &dtype, std::uint64_t seed, int rounds,
                        int num_outputs, bool triage, const std::string &plugin, const std::string &backend,
                        const std::string &firmware) {
  tr::GradientChecker checker;
  checker.op(op).params(params_json.empty() ? "{}" : params_json).chip(chip).dtype(tr::parse_dtype(dtype));
  checker.seed(seed).rounds(rounds).num_outputs(num_outputs).triage(triage);
  checker.libraries(library_paths(chip, plugin, backend, firmware));
  for (const tr::Shape &shape : shapes) checker.input_shape(shape);
  const tr::GradReport r = checker.run();
  py::list inputs;
  for (const tr::GradInputResult &i : r.inputs) {
    py::dict d;
    d["input"] = i.input;
    d["passed"] = i.passed;
    d["worst_ratio"] = i.worst_ratio;
    d["element"] = i.element;
    d["coordinates"] = i.coordinates;
    d["gradient"] = i.gradient;
    d["finite_difference"] = i.finite_difference;
    inputs.append(d);
  }
  py::dict out;
  out["passed"] = r.passed;
  out["summary"] = r.summary();
  out["failure"] = r.failure;
  out["step"] = r.step;
  out["tolerance"] = r.tolerance;
  out["seed"] = r.seed;
  out["forward_passed"] = r.forward_passed;
  out["grad_op_passed"] = r.grad_op_passed;
  out["inputs"] = inputs;
  out["triage"] = r.triage ? py::object(py::str(r.triage->text())) : py::object(py::none());
  out["triage_rounding"] = r.triage ? py::object(py::bool_(r.triage->rounding)) : py::object(py::none());
  out["declaration"] = gradient_dict(r.declaration);
  return out;
}

}  // namespace

PYBIND11_MODULE(_tpu_sdk, m) {
  m.doc() = "TPU SDK runtime: model files on the emulated bm1684x / bm1688, numpy arrays in and out";
  static py::exception<tr::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tr::Error &e) {
      error(e.what());
    }
  });

  m.def("build_model", &build_model, py::arg("net_json"), py::arg("chip"), py::arg("output"),
        py::arg("reference_inputs") = py::none(), py::arg("reference") = true, py::arg("embed_reference") = false,
        py::arg("seed") = 1, py::arg("plugin") = "", py::arg("backend") = "", py::arg("firmware") = "",
        py::arg("pipeline") = 0, py::arg("micro_batches") = 1, py::arg("stage_memory") = py::none(),
        py::arg("layer_groups") = true, py::arg("group_local_memory") = 0,
        "Builds a model file from a JSON net description (docs/tpu-model.md) for `chip`, writes it to "
        "`output`, and returns {'reference_inputs', 'reference_outputs', 'warnings'}; the reference outputs "
        "come from the plugin's inference_<op> hooks. pipeline=K plans K stages over `micro_batches` "
        "micro-batches within `stage_memory` bytes per stage (docs/pipeline.md). layer_groups=False keeps "
        "every layer global (tpu_model build --no-groups); group_local_memory=BYTES bounds the local memory "
        "per NPU the layer groups use (--group-local-memory).");
  m.def("run_pipeline", &run_pipeline, py::arg("path"), py::arg("inputs"), py::arg("micro_batches") = py::none(),
        "Runs a pipelined model over its micro-batches: {'outputs', 'micro_batches', 'emulated' (stage k ran on "
        "core k), 'not_emulated' (why not), 'stage_us' [micro-batch]"
        "[stage], 'schedule': [{'stage', 'micro_batch', 'start_us', 'end_us'}], 'pipelined_us', 'one_device_us', "
        "'unpipelined_us', 'outputs_identical', 'difference'} (docs/pipeline.md).");
  m.def("pipeline_plan", &pipeline_plan, py::arg("path"),
        "The stored pipeline plan as JSON text, '' when the model is not pipelined.");
  m.def("import_onnx", &import_onnx, py::arg("path"), py::arg("chip") = "bm1684x", py::arg("plugin") = "",
        py::arg("backend") = "", py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>(),
        "Imports an ONNX model (checker, shape inference, standard ops as built-in layers, custom-domain nodes "
        "as custom layers; docs/onnx.md) and returns (net description as JSON text, warnings).");
  m.def("onnx_import_available", &tr::onnx_import_available,
        "True when the SDK was built with Debian's libonnx-dev (the ONNX importer).");
  m.def("onnx_supported_ops", &tr::onnx_supported_ops,
        "The standard ONNX ops the importer converts into built-in layers (sorted).");
  m.def("run_op", &run_op, py::arg("op"), py::arg("inputs"), py::arg("params_json") = "{}",
        py::arg("chip") = "bm1684x", py::arg("dtype") = "fp32", py::arg("out_dtypes") = std::vector<std::string>{},
        py::arg("num_outputs") = 1, py::arg("local") = true, py::arg("criterion") = "ulp", py::arg("plugin") = "",
        py::arg("backend") = "", py::arg("firmware") = "", py::arg("backend_only") = false,
        "Runs one custom op on numpy arrays: the global layer through the backend and the firmware and, for a "
        "local op, several local slicings, each compared with the plugin's inference_<op>. Returns {'passed', "
        "'summary', 'cases': [{'name', 'passed', 'failure', 'outputs', 'total_us', 'gdma_bytes'}], 'reference', "
        "'inputs' (as the op saw them, rounded to the dtype), 'notes', 'metadata' (as op_metadata gives it)}.");
  m.def("op_gradient", &op_gradient, py::arg("op"), py::arg("chip") = "bm1684x", py::arg("backend") = "",
        "The gradient the op declares (register_custom_grad): {'op', 'grad_op', 'separate', 'receives_inputs', "
        "'receives_outputs', 'non_differentiable', 'text'}, or None.");
  m.def("check_gradient", &check_gradient, py::arg("op"), py::arg("shapes"), py::arg("params_json") = "{}",
        py::arg("chip") = "bm1684x", py::arg("dtype") = "fp32", py::arg("seed") = 1, py::arg("rounds") = 2,
        py::arg("num_outputs") = 1, py::arg("triage") = false, py::arg("plugin") = "", py::arg("backend") = "",
        py::arg("firmware") = "",
        "Checks the op's declared gradient op on the emulator against central finite differences of its "
        "reference (docs/gradients.md). Returns {'passed', 'summary', 'failure', 'step', 'tolerance', 'seed', "
        "'forward_passed', 'grad_op_passed', 'inputs': [{'input', 'passed', 'worst_ratio', 'element', "
        "'coordinates', 'gradient', 'finite_difference'}], 'triage', 'triage_rounding', 'declaration'}.");
  m.def("op_metadata", &op_metadata, py::arg("op"), py::arg("params_json") = "{}", py::arg("num_inputs") = 1,
        py::arg("chip") = "bm1684x", py::arg("plugin") = "",
        "The metadata the op declares (metadata_<op> in the plugin) for a layer of `num_inputs` inputs: "
        "{'inplace_inputs', 'elementwise', 'stateless', 'input_layouts': [{'input', 'alignment', "
        "'innermost_multiple'}], 'multi_core'}, or None when the op declares none. A malformed answer raises tpu_sdk.Error.");
  m.def(
      "set_run_timeout",
      [](double seconds) {
        const std::string text = fmt::format("{}", seconds);
        if (cmodel_set_option("run_timeout", text.c_str()) != 0) throw tr::Error(cmodel_last_error());
      },
      py::arg("seconds"),
      "Sets the time limit of every kernel run in seconds (0: none; default 600 or $TPU_SDK_RUN_TIMEOUT). A "
      "kernel still running then is stopped and the run fails with a 'time limit exceeded' error.");
  m.def("run_model", &run_model, py::arg("path"), py::arg("inputs"),
        "Runs a model file on the emulator of its chip: returns (outputs, layer statistics).");
  py::class_<ModelSession>(m, "ModelSession",
                           "A model file loaded once and run several times on one emulator: the global scratch "
                           "buffers of stateful layers keep their state from run to run (one session at a time).")
      .def(py::init<const std::string &>(), py::arg("path"))
      .def("run", &ModelSession::run, py::arg("inputs"), "One run: returns (outputs, layer statistics).");
  m.def("model_inputs", [](const std::string &path) { return model_tensors(path, false); }, py::arg("path"),
        "The model's inputs: name -> (shape, dtype name).");
  m.def("model_outputs", [](const std::string &path) { return model_tensors(path, true); }, py::arg("path"),
        "The model's outputs: name -> (shape, dtype name).");
  m.def("model_info", &model_info, py::arg("path"), "What `tpu_model info` prints for the file.");
  m.def("read_npz", [](const std::string &path) { return to_numpy(tr::npz::read_npz(path)); }, py::arg("path"),
        "Every array of an .npz file (bf16 tensors are uint16 bit patterns).");
  m.def(
      "write_npz",
      [](const std::string &path, const py::dict &arrays) { tr::npz::write_npz(path, from_numpy(arrays)); },
      py::arg("path"), py::arg("arrays"), "Writes arrays to an .npz file (atomically).");
  m.def(
      "parse_expression",
      [](const std::string &formula, const std::vector<std::string> &names) {
        const tr::Expression e = tr::Expression::parse(formula, names);
        return py::make_tuple(e.text(), e.inputs());
      },
      py::arg("formula"), py::arg("names") = std::vector<std::string>{},
      "Parses an element-wise formula (docs/expressions.md): returns (text, input names), the text as the SDK "
      "writes it. A bad formula raises tpu_sdk.Error naming the column.");
  m.def(
      "expression_gradient",
      [](const std::string &formula, const std::vector<std::string> &names, const std::string &wrt,
         const std::string &grad_name) {
        const tr::Expression g = tr::Expression::parse(formula, names).gradient(wrt, grad_name);
        return py::make_tuple(g.text(), g.inputs());
      },
      py::arg("formula"), py::arg("names"), py::arg("wrt"), py::arg("grad_name") = "grad",
      "The symbolic gradient grad * d(formula)/d(wrt): returns (text, input names), the inputs being the "
      "formula's followed by grad_name.");
  m.def(
      "default_library_paths",
      [](const std::string &chip) {
        const tr::LibraryPaths p = tr::default_library_paths(chip);
        py::dict d;
        d["plugin"] = p.plugin;
        d["backend"] = p.backend;
        d["firmware"] = p.firmware;
        d["host_ap"] = p.host_ap;
        return d;
      },
      py::arg("chip"), "Where the custom-layer libraries are looked for (TPUC_ROOT, TPUKERNEL_CUSTOM_FIRMWARE_PATH).");
}
