"""A TpuLang-compatible front end for custom ops, over the TPU SDK's emulator.

Written for the vendor's custom-op Python files to run unchanged:

    import transform.TpuLang as tpul
    tpul.init("BM1684X")
    x = tpul.Tensor(name="in", dtype="float32", shape=[4, 32, 36, 36], data=data)
    y = tpul.custom(tensors_in=[x], op_name="absadd", params={"b": 1.2}, out_dtypes=["float32"])[0]
    tpul.compile("absadd", [x], [y])
    tpul.deinit()

What compile() does here (the vendor's stages, mapped onto the SDK):
  1. writes <name>_in_f32.npz (the inputs) and <name>.mlir, which holds the
     SDK's net description (JSON), what this SDK's model_deploy.py reads;
  2. builds a model file for the chip (the builder of `tpu_model build`),
     whose reference outputs come from the ops' inference_<op> hooks: the
     vendor's "Top" outputs, saved as <name>_top_outputs.npz; given `refs`,
     they are compared with them (cosine/euclidean 0.99, 0.99);
  3. runs the model on the emulator (<name>_model_outputs.npz) and compares
     it with the Top outputs (0.95, 0.80, as the vendor compares its model
     run with its Tpu inference).
A failed comparison raises CompareError (an AssertionError) naming the
tensor, the figures and the thresholds. Parameters keep the vendor's order
(one per key, as written) and typing: int and bool -> int, float -> float,
list of ints -> int array, list with a float -> float array; a mixed list
or any other type is refused.
"""
import json
import os

import numpy as np

import tpu_sdk
from tpu_sdk import metrics
from tpu_sdk import dtypes


class TpuLangError(Exception):
    """A graph TpuLang cannot build: a wrong argument, an unsupported op."""


class CompareError(AssertionError):
    """Two stages of compile() disagree; the message names the tensor and the figures."""


class _State:
    def __init__(self, chip):
        self.chip = chip
        self.ops = []
        self.names = set()
        self.counter = 0


_state = None


def init(device="BM1684X", assist=False, outdir="", **kwargs):
    """Starts a graph for the chip (BM1684X or BM1688)."""
    global _state
    _state = _State(tpu_sdk.chip_name(device))


def deinit():
    global _state
    _state = None


def _current():
    if _state is None:
        raise TpuLangError("TpuLang is not initialised: call tpul.init('BM1684X') or tpul.init('BM1688') first")
    return _state


def _unique_name(prefix):
    state = _current()
    while True:
        state.counter += 1
        name = f"{prefix}_{state.counter}"
        if name not in state.names:
            return name


class Tensor:
    """A graph tensor: an input (with its data) or an op's output."""

    def __init__(self, shape=[], name=None, ttype="neuron", data=None, dtype="float32", scale=None,
                 zero_point=None):
        state = _current()
        if ttype not in ("neuron", "coeff"):
            raise TpuLangError(f"Tensor '{name}': ttype '{ttype}' is neither 'neuron' nor 'coeff'")
        if ttype == "coeff":
            raise TpuLangError(f"Tensor '{name}': coefficient tensors are not supported by this SDK's "
                               f"TpuLang (custom ops take neuron tensors)")
        dtypes.sdk_name(dtype)  # refuses a dtype custom ops cannot take
        if data is not None:
            data = np.asarray(data)
            if shape and list(shape) != list(data.shape):
                raise TpuLangError(f"Tensor '{name}': shape {list(shape)} but its data has shape {list(data.shape)}")
            shape = list(data.shape)
        self.shape = [int(d) for d in shape]
        self.name = name if name else _unique_name("tensor")
        if self.name in state.names:
            raise TpuLangError(f"Tensor '{self.name}': the name is already used in this graph")
        state.names.add(self.name)
        self.ttype = ttype
        self.data = data
        self.dtype = dtype
        self.scale = scale
        self.zero_point = zero_point
        self.producer = None

    def quantization(self, scale=None, zero_point=None):
        """Records the quantisation parameters (TpuLang's method); returns the tensor."""
        self.scale = scale
        self.zero_point = zero_point
        return self

    def __repr__(self):
        return f"Tensor(name={self.name!r}, shape={self.shape}, dtype={self.dtype!r})"


class _Op:
    def __init__(self, op_name, inputs, outputs, params):
        self.op_name = op_name
        self.inputs = inputs
        self.outputs = outputs
        self.params = params


def _param_value(op_name, key, value):
    """One parameter, typed as TpuLang types it; TypeError / ValueError otherwise."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        items = list(np.asarray(value).reshape(-1)) if isinstance(value, np.ndarray) else list(value)
        if not items:
            raise ValueError(f"custom op '{op_name}': parameter '{key}' is an empty list")
        ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in items)
        floats = all(isinstance(v, (float, np.floating)) for v in items)
        if ints:
            return [int(v) for v in items]
        if floats:
            return [float(v) for v in items]
        raise ValueError(f"custom op '{op_name}': parameter '{key}' mixes types in a list ({list(value)}); "
                         f"use all ints or all floats")
    raise TypeError(f"custom op '{op_name}': parameter '{key}' has type {type(value).__name__}; a parameter "
                    f"is an int, a float, a bool or a list of ints or floats")


def custom(tensors_in, op_name, out_dtypes, out_names=None, params=None, shape_func=None):
    """A custom op: returns one Tensor per entry of out_dtypes."""
    _current()
    if isinstance(tensors_in, Tensor):
        tensors_in = [tensors_in]
    if not tensors_in or not all(isinstance(t, Tensor) for t in tensors_in):
        raise TpuLangError(f"custom op '{op_name}': tensors_in must be a non-empty list of tpul.Tensor")
    if not isinstance(op_name, str) or not op_name:
        raise TpuLangError(f"custom: op_name must be a non-empty string, not {op_name!r}")
    if op_name.startswith(("ap.", "cpu.")):
        raise TpuLangError(f"custom op '{op_name}': AP (host CPU) ops are not supported by this SDK yet")
    if isinstance(out_dtypes, str):
        out_dtypes = [out_dtypes]
    if not out_dtypes:
        raise TpuLangError(f"custom op '{op_name}': out_dtypes must name one dtype per output")
    for dtype in out_dtypes:
        dtypes.sdk_name(dtype)
    if out_names is not None and len(out_names) != len(out_dtypes):
        raise TpuLangError(f"custom op '{op_name}': {len(out_names)} out_names for {len(out_dtypes)} out_dtypes")
    packed = {}
    for key, value in (params or {}).items():
        packed[str(key)] = _param_value(op_name, key, value)
    outputs = []
    for i, dtype in enumerate(out_dtypes):
        name = out_names[i] if out_names and out_names[i] else _unique_name(f"{op_name}_out{i}")
        outputs.append(Tensor(name=name, dtype=dtype))
    op = _Op(op_name, list(tensors_in), outputs, packed)
    for t in outputs:
        t.producer = op
    _state.ops.append(op)
    return outputs


# ---- compile ------------------------------------------------------------------

def _graph_ops(inputs, outputs):
    """The ops the outputs need, in creation order; checks every input is given."""
    needed, stack = set(), [t for t in outputs]
    while stack:
        t = stack.pop()
        if t.producer is None:
            if t not in inputs:
                raise TpuLangError(f"compile: tensor '{t.name}' is needed but is neither an op's output nor "
                                   f"one of the inputs")
            continue
        if id(t.producer) not in needed:
            needed.add(id(t.producer))
            stack.extend(t.producer.inputs)
    return [op for op in _current().ops if id(op) in needed]


def _net_description(name, inputs, outputs, input_dtype=None, dynamic=False):
    """The SDK's net description of the graph; input_dtype overrides every input's (a quantize mode)."""
    for t in inputs:
        if not t.shape:
            raise TpuLangError(f"compile: input '{t.name}' has no shape")
    ops = _graph_ops(inputs, outputs)
    net = {
        "name": name,
        "inputs": [{"name": t.name, "shape": t.shape, "dtype": input_dtype or dtypes.sdk_name(t.dtype)}
                   for t in inputs],
        "layers": [],
        "outputs": [t.name for t in outputs],
    }
    for op in ops:
        layer = {"op": op.op_name, "params": op.params, "inputs": [t.name for t in op.inputs],
                 "outputs": [t.name for t in op.outputs]}
        if dynamic:
            layer["dynamic"] = True
        net["layers"].append(layer)
    return net


def _input_arrays(inputs, seed=0):
    """Input data as float32 (random in [-1, 1) for an input without data)."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for t in inputs:
        if t.data is not None:
            arrays[t.name] = np.asarray(t.data).astype(np.float32)
        else:
            arrays[t.name] = rng.uniform(-1, 1, size=t.shape).astype(np.float32)
    return arrays


def _refs_dict(refs, outputs):
    if refs is None or isinstance(refs, (int, bool)):  # an older positional `opt` argument
        return {}
    if isinstance(refs, dict):
        return refs
    refs = list(refs) if isinstance(refs, (list, tuple)) else [refs]
    if len(refs) != len(outputs):
        raise TpuLangError(f"compile: {len(refs)} refs for {len(outputs)} outputs")
    return {t.name: r for t, r in zip(outputs, refs)}


def check_outputs(stage, actual, expected, tolerance, names=None):
    """Compares two {name: array} dicts; CompareError naming the first tensor that fails."""
    for tensor in names or expected:
        if tensor not in actual:
            raise CompareError(f"{stage}: no output '{tensor}' (have {sorted(actual)})")
        result = metrics.compare(np.asarray(actual[tensor], dtype=np.float32),
                                 np.asarray(expected[tensor], dtype=np.float32), tolerance)
        if not result.passed:
            raise CompareError(f"{stage}: tensor '{tensor}': {result.describe()}")


def build_and_run(name, net, chip, inputs_f32, model_path):
    """Builds the net into model_path (reference from the plugin) and runs it.

    Returns (top outputs as float32, model outputs as float32)."""
    storage = {n["name"]: dtypes.to_storage(inputs_f32[n["name"]], n["dtype"]) for n in net["inputs"]}
    built = tpu_sdk.build_model(json.dumps(net), chip, model_path, reference_inputs=storage)
    top = {k: np.asarray(v, dtype=np.float32) for k, v in built["reference_outputs"].items()}
    outputs, _ = tpu_sdk.run_model(model_path, storage)
    described = tpu_sdk.model_outputs(model_path)
    model = {k: dtypes.to_float32(v, described[k][1]) for k, v in outputs.items()}
    return top, model


def _write_origin(name, net, chip, input_file):
    """<name>.mlir: the SDK's net description for model_deploy.py (JSON, not MLIR)."""
    origin = {"tpu_sdk_net": 1, "chip": chip, "input_file": os.path.abspath(input_file), "net": net}
    with open(f"{name}.mlir", "w") as f:
        json.dump(origin, f, indent=1)


def compile(name, inputs, outputs, cmp=True, refs=None, mode="f32", dynamic=False, asymmetric=False,
            no_save=False, opt=2, mlir_inference=True, bmodel_inference=True, **kwargs):
    """Builds the graph into a model file, runs it on the emulator, and checks the stages agree."""
    state = _current()
    inputs, outputs = list(inputs), list(outputs)
    net = _net_description(name, inputs, outputs, dynamic=dynamic)
    arrays = _input_arrays(inputs)
    input_file = f"{name}_in_f32.npz"
    np.savez(input_file, **arrays)
    _write_origin(name, net, state.chip, input_file)
    top, model = build_and_run(name, net, state.chip, arrays, f"{name}_tpulang.model")
    np.savez(f"{name}_top_outputs.npz", **top)
    np.savez(f"{name}_model_outputs.npz", **model)
    references = _refs_dict(refs, outputs)
    if cmp and references:
        check_outputs(f"{name}: Top outputs (inference_ hooks) vs refs", top, references,
                      metrics.TOP_VS_REFERENCE, names=list(references))
    if bmodel_inference:
        check_outputs(f"{name}: model run on {state.chip} vs Top outputs", model, top, metrics.TPU_VS_TOP)
    for t in outputs:
        if t.name in model:
            t.shape = list(model[t.name].shape)


def compile_f32(name, inputs, outputs, cmp=True, refs=None, mode="f32", dynamic=False, **kwargs):
    """compile() for the float modes: f32, f16, bf16 or 'all' of them."""
    state = _current()
    modes = ["f32", "f16", "bf16"] if mode == "all" else [mode]
    inputs, outputs = list(inputs), list(outputs)
    arrays = _input_arrays(inputs)
    np.savez(f"{name}_in_f32.npz", **arrays)
    references = _refs_dict(refs, outputs)
    for m in modes:
        sdk_dtype = dtypes.QUANTIZE.get(m.upper())
        if sdk_dtype is None:
            raise TpuLangError(f"compile_f32: mode '{m}': expected f32, f16, bf16 or all")
        net = _net_description(name, inputs, outputs, input_dtype=sdk_dtype, dynamic=dynamic)
        top, model = build_and_run(name, net, state.chip, arrays, f"{name}_{m}.model")
        if cmp and references and m == "f32":
            check_outputs(f"{name}: Top outputs vs refs", top, references, metrics.TOP_VS_REFERENCE,
                          names=list(references))
        check_outputs(f"{name} ({m}): model run on {state.chip} vs Top outputs", model, top, metrics.TPU_VS_TOP)
