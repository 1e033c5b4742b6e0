"""The TPU SDK from Python: model files on the emulated bm1684x / bm1688.

    import tpu_sdk
    info = tpu_sdk.build_model(net_json, "bm1684x", "net.model", reference_inputs={"x": x})
    outputs, stats = tpu_sdk.run_model("net.model", {"x": x})
    session = tpu_sdk.ModelSession("net.model")   # several runs; stateful layers keep their scratch
    outputs, stats = session.run({"x": x})
    tpu_sdk.build_model(net_json, "bm1688", "p.model", pipeline=2, micro_batches=4)   # AutoPipe stages
    run = tpu_sdk.run_pipeline("p.model", {"x": x})   # run["outputs"], run["pipelined_us"], ...

The functions come from the _tpu_sdk extension (a layer over the SDK's
runtime library); errors raise tpu_sdk.Error with the runtime's message.
transform.TpuLang builds on this for custom ops (docs/python.md).
"""
try:
    from _tpu_sdk import (Error, ModelSession, build_model, default_library_paths, expression_gradient, model_info,
                          model_inputs, model_outputs, op_metadata as _op_metadata, parse_expression, read_npz,
                          run_model, run_pipeline, set_run_timeout, write_npz)
    from _tpu_sdk import pipeline_plan as _pipeline_plan
    from _tpu_sdk import import_onnx as _import_onnx, onnx_import_available, onnx_supported_ops  # noqa: F401
    from _tpu_sdk import run_op as _run_op
    from _tpu_sdk import check_gradient as _check_gradient, op_gradient as _op_gradient
except ImportError as e:  # pragma: no cover - a broken install
    raise ImportError(f"the TPU SDK's Python extension _tpu_sdk cannot be loaded ({e}); source envsetup.sh "
                      f"so that PYTHONPATH holds $TPUC_ROOT/python") from e

from .metrics import Comparison, compare, parse_tolerance, similarity  # noqa: F401

import json as _json

CHIPS = ("bm1684x", "bm1688")


def pipeline_plan(path):
    """The pipeline plan stored in a model file (docs/pipeline.md) as a dict, or None when it has none."""
    text = _pipeline_plan(path)
    return _json.loads(text) if text else None


def run_op(op, inputs, params=None, chip="bm1684x", dtype="fp32", out_dtypes=(), num_outputs=1, local=True,
           criterion="ulp", plugin="", backend="", firmware="", backend_only=False):
    """Runs one custom op on numpy arrays (float data, one array per input).

    The global layer runs through the backend and the firmware and, for a
    local op, several local slicings run slice by slice; every case is
    compared with the plugin's inference_<op>. Returns a dict: 'passed',
    'summary', 'cases' (each with 'name', 'passed', 'failure', 'outputs'
    as float32 arrays, 'total_us', 'gdma_bytes'), 'reference', 'inputs'
    (rounded to the dtype, as the op saw them), 'notes' and 'metadata'
    (as op_metadata gives it). backend_only: run only the global layer
    through the backend (one case, 'global backend'), for callers that want
    the outputs (tpu_sdk.autograd)."""
    if isinstance(params, dict):
        params = _json.dumps(params)
    return _run_op(op, list(inputs), params or "{}", chip_name(chip), dtype, list(out_dtypes), num_outputs, local,
                   criterion, plugin, backend, firmware, backend_only)


def import_onnx(path, chip="bm1684x", plugin="", backend="", input_shapes=None):
    """An ONNX model as the net description it imports as (docs/onnx.md):
    returns (net_json text, warnings). Custom-domain nodes are matched with
    the identities the custom ops of `plugin` / `backend` declare (default:
    the chip's libraries under $TPUC_ROOT). `input_shapes` ({name: dims})
    fixes graph inputs' symbolic dims (torch.onnx.export's dynamic_axes)."""
    shapes = {name: [int(d) for d in dims] for name, dims in (input_shapes or {}).items()}
    return _import_onnx(str(path), chip_name(chip), plugin, backend, shapes)


def build_onnx(path, chip, output, reference_inputs=None, reference=True, embed_reference=False, seed=1, plugin="",
               backend="", firmware="", input_shapes=None):
    """Builds a model file from an ONNX model, as `tpu_model build model.onnx`
    does: the model's inputs and outputs keep the ONNX graph's names. Returns
    build_model's dict plus 'net_json' (the imported net description).
    `input_shapes` as import_onnx's (`--input-shape`)."""
    net_json, warnings = import_onnx(path, chip, plugin, backend, input_shapes)
    info = build_model(net_json, chip_name(chip), str(output), reference_inputs=reference_inputs,
                       reference=reference, embed_reference=embed_reference, seed=seed, plugin=plugin,
                       backend=backend, firmware=firmware)
    info["warnings"] = list(warnings) + list(info["warnings"])
    info["net_json"] = net_json
    return info


def op_gradient(op, chip="bm1684x", backend=""):
    """The gradient op declares (register_custom_grad in its registry,
    docs/gradients.md): a dict with 'op', 'grad_op', 'separate',
    'receives_inputs', 'receives_outputs', 'non_differentiable' and 'text',
    or None when it declares none."""
    return _op_gradient(op, chip_name(chip), backend)


def check_gradient(op, shapes, params=None, chip="bm1684x", dtype="fp32", seed=1, rounds=2, num_outputs=1,
                   triage=False, plugin="", backend="", firmware=""):
    """Checks op's declared gradient op on the emulator against central
    finite differences of op's reference, as tpu_op_check --grad does
    (docs/gradients.md), on random inputs of the given shapes. Returns a
    dict: 'passed', 'summary', 'failure', 'step', 'tolerance', 'seed',
    'inputs' (per differentiable input: 'passed', 'worst_ratio', 'element',
    'coordinates', 'gradient', 'finite_difference'), 'triage' (fp16/bf16
    with triage=True), 'declaration'."""
    if isinstance(params, dict):
        params = _json.dumps(params)
    return _check_gradient(op, [list(s) for s in shapes], params or "{}", chip_name(chip), dtype, seed, rounds,
                           num_outputs, triage, plugin, backend, firmware)


def op_metadata(op, params=None, num_inputs=1, chip="bm1684x", plugin=""):
    """What the op declares about itself (metadata_<op> in its plugin) for a
    layer of num_inputs inputs: a dict with 'inplace_inputs', 'elementwise',
    'stateless', 'input_layouts' (each {'input', 'alignment',
    'innermost_multiple'}) and 'multi_core', or None when the op declares nothing
    (docs/custom-layer-build.md, "Op metadata")."""
    if isinstance(params, dict):
        params = _json.dumps(params)
    return _op_metadata(op, params or "{}", num_inputs, chip_name(chip), plugin)


def chip_name(chip):
    """'BM1684X', 'bm1684x' -> 'bm1684x'; ValueError for another chip."""
    name = str(chip).lower()
    if name not in CHIPS:
        raise ValueError(f"chip '{chip}': this SDK emulates BM1684X and BM1688")
    return name
