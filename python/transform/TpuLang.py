"""A TpuLang-compatible front end for custom ops, over the TPU SDK's emulator.

Written for the vendor's custom-op Python files to run unchanged:

    import transform.TpuLang as tpul
    tpul.init("BM1684X")
    x = tpul.Tensor(name="in", dtype="float32", shape=[4, 32, 36, 36], data=data)
    y = tpul.custom(tensors_in=[x], op_name="absadd", params={"b": 1.2}, out_dtypes=["float32"])[0]
    z = tpul.relu(tpul.add(y, 1.0))  # built-ins mix with custom ops
    tpul.compile("absadd", [x], [z])
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
import base64
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
        if ttype == "coeff" and data is None:
            raise TpuLangError(f"Tensor '{name}': a coefficient tensor (ttype='coeff') needs its data")
        dtypes.sdk_name(dtype)  # refuses a dtype the SDK does not know
        if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
            shape = [int(shape)]  # TpuLang: an int shape is a 1-D tensor of that length
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
    def __init__(self, op_name, inputs, outputs, params, host=None):
        self.op_name = op_name
        self.inputs = inputs
        self.outputs = outputs
        self.params = params
        self.host = host or {}  # a callback.<name> op: {"library": ..., "out_shapes": [...]}


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


def _host_keys(op_name, library, out_shapes, n_outputs):
    """The net keys of a host op: "ap.<name>" (a vendor AP op, run on the host CPU from libcustomcpuop.so,
    shapes from its shepe_infer) takes none; "callback.<name>" (a Callback function) needs its shared
    object and one shape per output."""
    if op_name.startswith("cpu."):
        raise TpuLangError(f"custom op '{op_name}': 'cpu.' is the vendor's older prefix of AP (host CPU) ops; "
                           f"write 'ap.{op_name[4:]}'")
    if not op_name.startswith("callback."):
        if library is not None or out_shapes is not None:
            raise TpuLangError(f"custom op '{op_name}': library= and out_shapes= are for callback.<name> host ops")
        return {}
    if not library or out_shapes is None:
        raise TpuLangError(f"custom op '{op_name}': a callback op needs library= (the shared object exporting "
                           f"Callback) and out_shapes= (one shape per output)")
    if len(out_shapes) != n_outputs:
        raise TpuLangError(f"custom op '{op_name}': {len(out_shapes)} out_shapes for {n_outputs} out_dtypes")
    return {"library": os.path.abspath(library), "out_shapes": [[int(d) for d in shape] for shape in out_shapes]}


def custom(tensors_in, op_name, out_dtypes, out_names=None, params=None, shape_func=None, library=None,
           out_shapes=None):
    """A custom op: returns one Tensor per entry of out_dtypes. "ap.<name>" is a vendor AP op and
    "callback.<name>" a Callback function (with library= and out_shapes=): both run on the host CPU
    between the TPU layers (docs/python.md, "Host (AP) ops")."""
    _current()
    if isinstance(tensors_in, Tensor):
        tensors_in = [tensors_in]
    if not tensors_in or not all(isinstance(t, Tensor) for t in tensors_in):
        raise TpuLangError(f"custom op '{op_name}': tensors_in must be a non-empty list of tpul.Tensor")
    if not isinstance(op_name, str) or not op_name:
        raise TpuLangError(f"custom: op_name must be a non-empty string, not {op_name!r}")
    if isinstance(out_dtypes, str):
        out_dtypes = [out_dtypes]
    if not out_dtypes:
        raise TpuLangError(f"custom op '{op_name}': out_dtypes must name one dtype per output")
    host = _host_keys(op_name, library, out_shapes, len(out_dtypes))
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
    op = _Op(op_name, list(tensors_in), outputs, packed, host)
    for t in outputs:
        t.producer = op
    _state.ops.append(op)
    return outputs


# ---- built-in ops --------------------------------------------------------------
# The few TpuLang ops the vendor's custom-op tests mix with custom ops. They
# become the SDK's built-in layers (builtin.add, ...; docs/tpu-model.md): the
# SDK's own kernels, recorded into the model, float dtypes only.

class Scalar:
    """A constant operand of add, sub or mul (TpuLang's Scalar)."""

    def __init__(self, value, dtype="float32"):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TpuLangError(f"Scalar: value {value!r} is not a number")
        self.value = float(value)
        self.dtype = dtype

    def __repr__(self):
        return f"Scalar({self.value!r}, dtype={self.dtype!r})"


def _scalar_value(x):
    """The number of a Scalar or a plain int/float operand; None for a Tensor."""
    if isinstance(x, Tensor):
        return None
    if isinstance(x, Scalar):
        return x.value
    if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_)):
        return float(x)
    raise TpuLangError(f"operand {x!r}: expected a tpul.Tensor, a tpul.Scalar or a number")


def _refuse_quantization(op, scale, zero_point):
    if scale is not None or zero_point is not None:
        raise TpuLangError(f"{op}: quantized (scale / zero_point) built-ins are not supported by this SDK; "
                           f"built-in ops take float tensors")


def _broadcast(op, a, b):
    try:
        return [int(d) for d in np.broadcast_shapes(tuple(a), tuple(b))]
    except ValueError:
        raise TpuLangError(f"{op}: shapes {list(a)} and {list(b)} do not broadcast") from None


def _builtin(op, inputs, params, shape, dtype, out_name):
    _current()
    name = out_name if out_name else _unique_name(op)
    out = Tensor(name=name, dtype=dtype)
    out.shape = list(shape)
    node = _Op(f"builtin.{op}", list(inputs), [out], params)
    out.producer = node
    _state.ops.append(node)
    return out


def _binary(op, tensor_i, tensor_j, scale, zero_point, out_dtype, out_name):
    _refuse_quantization(op, scale, zero_point)
    ci, cj = _scalar_value(tensor_i), _scalar_value(tensor_j)
    if ci is not None and cj is not None:
        raise TpuLangError(f"{op}: at least one operand must be a tpul.Tensor")
    tensor = tensor_j if ci is not None else tensor_i
    if out_dtype is not None and out_dtype != tensor.dtype:
        raise TpuLangError(f"{op}: out_dtype {out_dtype} differs from the input dtype {tensor.dtype}; "
                           f"built-in ops keep their inputs' dtype")
    if ci is None and cj is None:
        if tensor_i.dtype != tensor_j.dtype:
            raise TpuLangError(f"{op}: inputs '{tensor_i.name}' ({tensor_i.dtype}) and '{tensor_j.name}' "
                               f"({tensor_j.dtype}) differ in dtype")
        shape = _broadcast(op, tensor_i.shape, tensor_j.shape) if tensor_i.shape and tensor_j.shape else []
        return _builtin(op, [tensor_i, tensor_j], {}, shape, tensor.dtype, out_name)
    params = {"scalar": cj if ci is None else ci}
    if ci is not None:
        params["scalar_first"] = 1
    return _builtin(op, [tensor], params, tensor.shape, tensor.dtype, out_name)


def add(tensor_i, tensor_j, scale=None, zero_point=None, out_dtype=None, out_name=None,
        round_mode="half_away_from_zero"):
    """tensor_i + tensor_j (numpy broadcasting; either may be a Scalar or a number)."""
    return _binary("add", tensor_i, tensor_j, scale, zero_point, out_dtype, out_name)


def sub(tensor_i, tensor_j, scale=None, zero_point=None, out_dtype=None, out_name=None,
        round_mode="half_away_from_zero"):
    """tensor_i - tensor_j (numpy broadcasting; either may be a Scalar or a number)."""
    return _binary("sub", tensor_i, tensor_j, scale, zero_point, out_dtype, out_name)


def mul(tensor_i, tensor_j, scale=None, zero_point=None, out_dtype=None, out_name=None,
        round_mode="half_away_from_zero"):
    """tensor_i * tensor_j (numpy broadcasting; either may be a Scalar or a number)."""
    return _binary("mul", tensor_i, tensor_j, scale, zero_point, out_dtype, out_name)


def relu(input, out_name=None):
    """max(input, 0); on a traced value of tpul.expression it traces."""
    if isinstance(input, _Formula):
        return _Formula(f"relu({input.text})")
    if not isinstance(input, Tensor):
        raise TpuLangError(f"relu: input {input!r} is not a tpul.Tensor")
    return _builtin("relu", [input], {}, input.shape, input.dtype, out_name)


def concat(inputs, scales=None, zero_points=None, axis=0, out_name=None, dtype="float32",
           round_mode="half_away_from_zero"):
    """The inputs side by side along `axis` (equal shapes off the axis)."""
    if any(v is not None for v in list(scales or []) + list(zero_points or [])):
        raise TpuLangError("concat: quantized (scales / zero_points) concat is not supported by this SDK; "
                           "built-in ops take float tensors")
    inputs = list(inputs)
    if not inputs or not all(isinstance(t, Tensor) for t in inputs):
        raise TpuLangError("concat: inputs must be a non-empty list of tpul.Tensor")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TpuLangError(f"concat: axis {axis!r} is not an integer")
    first = inputs[0]
    shape = list(first.shape)
    if shape:
        rank = len(shape)
        if not -rank <= axis < rank:
            raise TpuLangError(f"concat: axis {axis} is out of range for {rank}-d inputs")
        a = axis % rank
        shape[a] = 0
        for t in inputs:
            if len(t.shape) != rank or any(d != e for i, (d, e) in enumerate(zip(t.shape, first.shape)) if i != a):
                raise TpuLangError(f"concat: '{t.name}' has the shape {t.shape}, '{first.name}' {first.shape}; "
                                   f"only axis {axis} may differ")
            shape[a] += t.shape[a]
    return _builtin("concat", inputs, {"axis": int(axis)}, shape, first.dtype, out_name)


def reshape(tensor, new_shape, out_name=None):
    """The same elements in the same order with the shape new_shape (a list of ints, one may be -1, or
    a single int for a 1-D result)."""
    if not isinstance(tensor, Tensor):
        raise TpuLangError(f"reshape: {tensor!r} is not a tpul.Tensor")
    if isinstance(new_shape, Tensor):
        raise TpuLangError("reshape: a shape given as a tensor is not supported by this SDK; pass a list of ints")
    if isinstance(new_shape, (int, np.integer)):
        new_shape = [new_shape]
    shape = list(new_shape)
    if not shape or any(isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) for d in shape):
        raise TpuLangError(f"reshape: new_shape {new_shape!r} must be a non-empty list of ints")
    shape = [int(d) for d in shape]
    if shape.count(-1) > 1 or any(d < 1 and d != -1 for d in shape):
        raise TpuLangError(f"reshape: new_shape {shape}: dims are positive, at most one is -1")
    out_shape = []
    if tensor.shape:
        count, known = int(np.prod(tensor.shape)), int(np.prod([d for d in shape if d != -1]))
        if -1 in shape:
            if count % known:
                raise TpuLangError(f"reshape: {count} elements of '{tensor.name}' do not fill the shape {shape}")
            out_shape = [count // known if d == -1 else d for d in shape]
        elif known != count:
            raise TpuLangError(f"reshape: the shape {shape} holds {known} elements, '{tensor.name}' {count}")
        else:
            out_shape = shape
    return _builtin("reshape", [tensor], {"shape": shape}, out_shape, tensor.dtype, out_name)


def _int_list(op, key, value, count, default):
    """A list of `count` ints (an int is repeated), or `default` for None."""
    if value is None:
        return list(default)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        value = [int(value)] * count
    items = list(value) if isinstance(value, (list, tuple, np.ndarray)) else None
    if items is None or len(items) != count or \
            any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in items):
        raise TpuLangError(f"{op}: {key} {value!r} must be a list of {count} ints")
    return [int(v) for v in items]


def _coeff_as(op, t, dtype):
    """A coefficient tensor in another float dtype (a float32 bias of an fp16 conv): a new
    coefficient tensor with its values rounded; built-in layers take one dtype."""
    if t.dtype == dtype:
        return t
    if t.ttype != "coeff" or not (dtypes.is_float(dtypes.sdk_name(t.dtype)) and dtypes.is_float(dtypes.sdk_name(dtype))):
        raise TpuLangError(f"{op}: '{t.name}' is {t.dtype}, the input {dtype}; built-in ops take one dtype")
    values = dtypes.to_float32(dtypes.to_storage(t.data, dtypes.sdk_name(t.dtype)), dtypes.sdk_name(t.dtype))
    return Tensor(name=_unique_name(f"{t.name}_{dtype}"), dtype=dtype, data=values.reshape(t.shape), ttype="coeff")


def conv(input, weight, bias=None, stride=None, dilation=None, pad=None, group=1, out_dtype=None, out_name=None,
         kernel=None, **kwargs):
    """2-d convolution, NCHW: weight [oc, ic / group, kh, kw], bias of oc values (or None); stride and
    dilation [h, w], pad [top, left, bottom, right]. The SDK's built-in layer builtin.conv2d: float
    dtypes; each pad at most 15, stride and dilation 1..15."""
    op = "conv"
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TpuLangError(f"{op}: {name} {t!r} is not a tpul.Tensor")
    if bias is not None and not isinstance(bias, Tensor):
        raise TpuLangError(f"{op}: bias {bias!r} is not a tpul.Tensor")
    if not dtypes.is_float(dtypes.sdk_name(input.dtype)):
        raise TpuLangError(f"{op}: input '{input.name}' is {input.dtype}; quantized convolution is not supported "
                           f"by this SDK (float32, float16, bfloat16)")
    if out_dtype is not None and out_dtype != input.dtype:
        raise TpuLangError(f"{op}: out_dtype {out_dtype} differs from the input dtype {input.dtype}; built-in ops "
                           f"keep their inputs' dtype")
    stride = _int_list(op, "stride", stride, 2, [1, 1])
    dilation = _int_list(op, "dilation", dilation, 2, [1, 1])
    pad = _int_list(op, "pad", pad, 4, [0, 0, 0, 0])
    if isinstance(group, (bool, np.bool_)) or not isinstance(group, (int, np.integer)) or group < 1:
        raise TpuLangError(f"{op}: group {group!r} must be a positive int")
    if len(weight.shape) != 4:
        raise TpuLangError(f"{op}: weight '{weight.name}' has the shape {weight.shape}; it is [oc, ic / group, kh, kw]")
    if kernel is not None and list(kernel) != weight.shape[2:]:
        raise TpuLangError(f"{op}: kernel {list(kernel)} but the weight's is {weight.shape[2:]}")
    weight = _coeff_as(op, weight, input.dtype)
    inputs = [input, weight]
    if bias is not None:
        inputs.append(_coeff_as(op, bias, input.dtype))
    shape = []
    if input.shape:
        if len(input.shape) != 4:
            raise TpuLangError(f"{op}: input '{input.name}' has the shape {input.shape}; it is NCHW")
        n, ic, ih, iw = input.shape
        oc, icg, kh, kw = weight.shape
        if ic % group or oc % group or icg * group != ic:
            raise TpuLangError(f"{op}: input {input.shape}, weight {weight.shape} and group {group} do not match "
                               f"(the weight has ic / group input channels)")
        oh = (ih + pad[0] + pad[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
        ow = (iw + pad[1] + pad[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
        if oh < 1 or ow < 1:
            raise TpuLangError(f"{op}: the kernel window is larger than the padded input")
        shape = [n, oc, oh, ow]
    params = {"stride": stride, "dilation": dilation, "pads": pad, "group": int(group)}
    return _builtin("conv2d", inputs, params, shape, input.dtype, out_name)


def conv_v2(tensor_i, weight, bias=None, stride=None, dilation=None, pad=None, group=1, input_zp=None,
            weight_zp=None, out_dtype=None, out_name=None, **kwargs):
    """conv() with the newer TpuLang's name; zero points are for quantized convolution, which this SDK
    does not run (None or 0 only)."""
    for key, zp in (("input_zp", input_zp), ("weight_zp", weight_zp)):
        if zp not in (None, 0) and not (isinstance(zp, (list, tuple)) and all(v == 0 for v in zp)):
            raise TpuLangError(f"conv_v2: {key} {zp!r}: quantized convolution is not supported by this SDK")
    return conv(tensor_i, weight, bias=bias, stride=stride, dilation=dilation, pad=pad, group=group,
                out_dtype=out_dtype, out_name=out_name, **kwargs)


def _pool_output_size(op, extent, k, s, pad_before, pad_after, ceil_mode):
    """Output positions along one axis and the padding the last (ceil_mode) window adds at the end.
    PyTorch's and ONNX's rule: ceil_mode adds a partial last window unless it would start in the end
    padding."""
    padded = extent + pad_before + pad_after
    if k > padded:
        raise TpuLangError(f"{op}: the kernel is larger than the padded input")
    size = (padded - k) // s + 1
    if not ceil_mode or (padded - k) % s == 0:
        return size, 0
    if size * s >= extent + pad_before:
        return size, 0
    return size + 1, size * s + k - padded


def _average_divisors(extent, k, s, pad_before, pad_after, size, count_include_pad):
    """Taps each output position's window counts along one axis: the window clipped to the padded
    input (count_include_pad) or to the input, never counting ceil_mode's overhang."""
    starts = np.arange(size) * s - pad_before
    low, high = (-pad_before, extent + pad_after) if count_include_pad else (0, extent)
    return np.minimum(starts + k, high) - np.maximum(starts, low)


def _pool(op, input, kernel, stride, pad, ceil_mode, scale, zero_point, out_name, count_include_pad=True):
    if not isinstance(input, Tensor):
        raise TpuLangError(f"{op}: input {input!r} is not a tpul.Tensor")
    _refuse_quantization(op, scale, zero_point)
    if not dtypes.is_float(dtypes.sdk_name(input.dtype)):
        raise TpuLangError(f"{op}: input '{input.name}' is {input.dtype}; quantized pooling is not supported by "
                           f"this SDK (float32, float16, bfloat16)")
    if kernel is None:
        raise TpuLangError(f"{op}: kernel [kh, kw] is needed")
    kernel = _int_list(op, "kernel", kernel, 2, None)
    stride = _int_list(op, "stride", stride, 2, [1, 1])
    pad = _int_list(op, "pad", pad, 4, [0, 0, 0, 0])
    if not input.shape:  # known at compile (a custom op's output): only plain windows
        if ceil_mode or (op == "avgpool2d" and not count_include_pad and any(pad)):
            raise TpuLangError(f"{op}: input '{input.name}' has no shape yet; ceil_mode and per-window "
                               f"divisors need it")
        return _builtin(op, [input], {"kernel": kernel, "stride": stride, "pads": pad}, [], input.dtype, out_name)
    if len(input.shape) != 4:
        raise TpuLangError(f"{op}: input '{input.name}' has the shape {input.shape}; it is NCHW")
    n, c, h, w = input.shape
    sizes, divisors, pads = [], [], list(pad)
    for axis, extent in ((0, h), (1, w)):
        size, overhang = _pool_output_size(op, extent, kernel[axis], stride[axis], pad[axis], pad[2 + axis],
                                           ceil_mode)
        pads[2 + axis] += overhang  # the partial window's missing rows: -inf for max, 0 for average
        sizes.append(size)
        divisors.append(_average_divisors(extent, kernel[axis], stride[axis], pad[axis], pad[2 + axis], size,
                                          count_include_pad))
    shape = [n, c] + sizes
    params = {"kernel": kernel, "stride": stride, "pads": pads}
    divisor = np.outer(divisors[0], divisors[1])
    if op == "maxpool2d" or (divisor == kernel[0] * kernel[1]).all():
        return _builtin(op, [input], params, shape, input.dtype, out_name)
    # builtin.avgpool2d divides every window by kh kw; the windows that count
    # fewer taps are scaled by kh kw / taps, one factor per output position.
    pooled = _builtin(op, [input], params, shape, input.dtype, None)
    factor = Tensor(name=_unique_name(f"{pooled.name}_divisor"), dtype="float32",
                    data=(kernel[0] * kernel[1] / divisor).astype(np.float32).reshape(1, 1, *sizes), ttype="coeff")
    return _builtin("mul", [pooled, _coeff_as(op, factor, input.dtype)], {}, shape, input.dtype, out_name)


def maxpool2d(input, kernel=None, stride=None, pad=None, ceil_mode=False, scale=None, zero_point=None,
              out_name=None, round_mode="half_away_from_zero", **kwargs):
    """2-d max pooling, NCHW: kernel and stride [h, w], pad [top, left, bottom, right] (padding is -inf;
    each pad below the kernel, at most 15); the built-in layer builtin.maxpool2d, float dtypes."""
    return _pool("maxpool2d", input, kernel, stride, pad, ceil_mode, scale, zero_point, out_name)


def avgpool2d(input, kernel=None, stride=None, pad=None, ceil_mode=False, scale=None, zero_point=None,
              count_include_pad=False, out_name=None, round_mode="half_away_from_zero", **kwargs):
    """2-d average pooling, NCHW: each window's mean over the taps it counts (count_include_pad: the
    padding counts as zeros; ceil_mode's partial window never counts its overhang), as PyTorch and
    ONNX define it; the built-in layer builtin.avgpool2d (sum over kh kw), then for windows counting
    fewer taps a builtin.mul by kh kw / taps; float dtypes."""
    return _pool("avgpool2d", input, kernel, stride, pad, ceil_mode, scale, zero_point, out_name,
                 count_include_pad)


maxpool = maxpool2d  # the older TpuLang names
avgpool = avgpool2d


# ---- fused element-wise expressions (docs/expressions.md) -------------------------
# tpul.expression(fn, *tensors) calls fn on traced stand-ins of the tensors;
# their operators and the functions below write the formula text that the
# SDK's one parser reads (builtin.expression), so Python and JSON formulas
# share one grammar.

class _Formula:
    """A traced sub-formula of tpul.expression (formula text, fully parenthesised)."""

    __array_ufunc__ = None  # numpy scalars and arrays defer to our reflected operators (np.float32(2) * x)

    def __init__(self, text):
        self.text = text

    def _binary(self, op, other, reverse=False):
        o = _formula_of(other, op)
        left, right = (o, self) if reverse else (self, o)
        return _Formula(f"({left.text} {op} {right.text})")

    def __add__(self, other): return self._binary("+", other)
    def __radd__(self, other): return self._binary("+", other, True)
    def __sub__(self, other): return self._binary("-", other)
    def __rsub__(self, other): return self._binary("-", other, True)
    def __mul__(self, other): return self._binary("*", other)
    def __rmul__(self, other): return self._binary("*", other, True)
    def __truediv__(self, other): return self._binary("/", other)
    def __rtruediv__(self, other): return self._binary("/", other, True)
    def __lt__(self, other): return self._binary("<", other)
    def __le__(self, other): return self._binary("<=", other)
    def __gt__(self, other): return self._binary(">", other)
    def __ge__(self, other): return self._binary(">=", other)
    def __eq__(self, other): return self._binary("==", other)
    def __ne__(self, other): return self._binary("!=", other)
    def __neg__(self): return _Formula(f"(-{self.text})")
    def __pos__(self): return self
    def __abs__(self): return _Formula(f"abs({self.text})")
    __hash__ = None

    def __bool__(self):
        raise TpuLangError("expression: a traced value has no truth value (Python's if, and, or, max() and min() "
                           "need one); use tpul.where, tpul.maximum and tpul.minimum")

    def __pow__(self, other):
        raise TpuLangError("expression: ** is not supported; write x * x")

    def __repr__(self):
        return f"_Formula({self.text!r})"


def _formula_of(x, op):
    """A traced value or a number as a formula operand."""
    if isinstance(x, _Formula):
        return x
    if isinstance(x, Scalar):
        x = x.value
    if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_)):
        v = float(x)
        if not np.isfinite(v):
            raise TpuLangError(f"expression: the constant {v} in '{op}' is not finite")
        return _Formula(repr(v) if v >= 0 else f"({v!r})")
    if isinstance(x, Tensor):
        raise TpuLangError(f"expression: tensor '{x.name}' is used inside the traced function; pass it to "
                           f"tpul.expression as an argument instead")
    raise TpuLangError(f"expression: operand {x!r} of '{op}' is neither a traced value nor a number")


def expression(fn, *tensors, out_name=None):
    """One fused layer computing fn(*tensors) element-wise (numpy broadcasting, float dtypes).

    fn is called once with traced stand-ins of the tensors; it may use + - * /, unary minus, abs(),
    comparisons (1 where true, 0 elsewhere), numbers and tpul.exp, log, sqrt, rsqrt, sigmoid, tanh,
    relu, maximum, minimum and where. The SDK parses the traced formula (docs/expressions.md) and
    generates one kernel: each input loaded once per tile, the chain computed in local memory."""
    if not callable(fn):
        raise TpuLangError(f"expression: {fn!r} is not a function")
    if not tensors or not all(isinstance(t, Tensor) for t in tensors):
        raise TpuLangError("expression: give the function and one or more tpul.Tensor arguments")
    names = [f"x{i}" for i in range(len(tensors))]
    traced = fn(*[_Formula(n) for n in names])
    formula = _formula_of(traced, "the result").text
    return _expression_layer(formula, list(tensors), names, out_name)


def expression_grad(fn, tensors, wrt, grad, out_name=None):
    """The gradient of tpul.expression(fn, *tensors) with respect to tensors[wrt]: one fused layer
    computing grad * d fn / d tensors[wrt] element-wise, `grad` being the gradient of the output.
    Where tensors[wrt] was broadcast, summing the result over those dims is the caller's step."""
    tensors = list(tensors)
    if not isinstance(wrt, (int, np.integer)) or not 0 <= wrt < len(tensors):
        raise TpuLangError(f"expression_grad: wrt {wrt!r} is not the index of one of the {len(tensors)} tensors")
    if not isinstance(grad, Tensor):
        raise TpuLangError(f"expression_grad: grad {grad!r} is not a tpul.Tensor")
    names = [f"x{i}" for i in range(len(tensors))]
    formula = _formula_of(fn(*[_Formula(n) for n in names]), "the result").text
    try:
        text, grad_names = tpu_sdk.expression_gradient(formula, names, names[wrt], "grad")
    except tpu_sdk.Error as e:
        raise TpuLangError(f"expression_grad: {e}") from None
    return _expression_layer(text, tensors + [grad], grad_names, out_name)


def _expression_layer(formula, tensors, names, out_name):
    try:
        text, _ = tpu_sdk.parse_expression(formula, names)
    except tpu_sdk.Error as e:
        raise TpuLangError(f"expression: {e}") from None
    dtype = tensors[0].dtype
    for n, t in zip(names, tensors):
        if t.dtype != dtype:
            raise TpuLangError(f"expression: formula '{text}': input {n} ('{t.name}') is {t.dtype} but x0 "
                               f"('{tensors[0].name}') is {dtype}; the inputs share one dtype")
    shape = []
    if all(t.shape for t in tensors):
        try:
            shape = [int(d) for d in np.broadcast_shapes(*[tuple(t.shape) for t in tensors])]
        except ValueError:
            raise TpuLangError(f"expression: formula '{text}': the shapes "
                               f"{', '.join(f'{n} {t.shape}' for n, t in zip(names, tensors))} do not broadcast") from None
    return _builtin("expression", tensors, {"formula": text, "names": names}, shape, dtype, out_name)


def _elementwise(name, template):
    """tpul.<name>: on traced values it traces; on a tensor it is a one-operation expression layer."""
    def function(*args, out_name=None):
        if any(isinstance(a, _Formula) for a in args):
            return _Formula(template.format(*[_formula_of(a, name).text for a in args]))
        if any(isinstance(a, Tensor) for a in args):
            return _with_constants(function, args, out_name)
        raise TpuLangError(f"{name}: arguments {args!r} must be tpul.Tensor, traced values or numbers")
    function.__name__ = name
    function.__doc__ = f"Element-wise {template.format(*['x', 'y', 'z'])} (a fused expression layer on tensors)."
    return function


def _with_constants(function, args, out_name):
    """A function of tensors and numbers as an expression over the tensors only."""
    tensors = [a for a in args if isinstance(a, Tensor)]

    def traced(*xs):
        it = iter(xs)
        return function(*[next(it) if isinstance(a, Tensor) else a for a in args])
    return expression(traced, *tensors, out_name=out_name)


exp = _elementwise("exp", "exp({})")
log = _elementwise("log", "log({})")
sqrt = _elementwise("sqrt", "sqrt({})")
rsqrt = _elementwise("rsqrt", "rsqrt({})")
sigmoid = _elementwise("sigmoid", "sigmoid({})")
tanh = _elementwise("tanh", "tanh({})")
abs = _elementwise("abs", "abs({})")  # tpul.abs; Python's abs() of a traced value works too (__abs__)
maximum = _elementwise("maximum", "max({}, {})")
minimum = _elementwise("minimum", "min({}, {})")
where = _elementwise("where", "where({}, {}, {})")
div = _elementwise("div", "({} / {})")


def _not_here(name):
    def refuse(*args, **kwargs):
        raise TpuLangError(f"tpul.{name} is not supported by this SDK's TpuLang yet; the built-in ops are add, sub, "
                           f"mul, relu, concat, reshape, conv, maxpool2d, avgpool2d and expression (with exp, log, "
                           f"sqrt, rsqrt, sigmoid, tanh, abs, maximum, minimum, where, div) (docs/python.md lists what is missing)")
    refuse.__name__ = name
    refuse.__doc__ = "Not supported yet: raises TpuLangError (docs/python.md)."
    return refuse


# TpuLang built-ins the vendor's model-definition tests use that this SDK does not
# run yet: a clear TpuLangError instead of an AttributeError.
for _name in ("conv3d", "deconv", "matmul", "permute", "split", "softmax", "gelu",
              "leaky_relu", "batch_norm", "layer_norm", "transpose", "squeeze", "unsqueeze", "pad"):
    globals()[_name] = _not_here(_name)
del _name


# ---- compile ------------------------------------------------------------------

def _graph_ops(inputs, outputs):
    """The ops the outputs need, in creation order; checks every input is given."""
    needed, stack = set(), [t for t in outputs]
    while stack:
        t = stack.pop()
        if t.producer is None:
            if t not in inputs and t.ttype != "coeff":
                raise TpuLangError(f"compile: tensor '{t.name}' is needed but is neither an op's output nor "
                                   f"one of the inputs")
            continue
        if id(t.producer) not in needed:
            needed.add(id(t.producer))
            stack.extend(t.producer.inputs)
    return [op for op in _current().ops if id(op) in needed]


def _net_description(name, inputs, outputs, float_mode=None, dynamic=False):
    """The SDK's net description of the graph; float_mode (an SDK dtype) replaces every float dtype of
    the inputs and the custom ops' outputs (a quantize mode)."""
    inputs = _neuron(inputs)
    for t in inputs:
        if not t.shape:
            raise TpuLangError(f"compile: input '{t.name}' has no shape")
    ops = _graph_ops(inputs, outputs)
    weights = []
    for op in ops:
        for t in op.inputs:
            if t.ttype == "coeff" and t not in weights:
                weights.append(t)
    net = {
        "name": name,
        "inputs": [{"name": t.name, "shape": t.shape, "dtype": dtypes.sdk_name(t.dtype)}
                   for t in inputs],
        "layers": [],
        "outputs": [t.name for t in outputs],
    }
    for op in ops:
        layer = {"op": op.op_name, "params": op.params, "inputs": [t.name for t in op.inputs],
                 "outputs": [t.name for t in op.outputs]}
        if not op.op_name.startswith("builtin."):  # built-ins take their inputs' dtype and are always recorded
            layer["out_dtypes"] = [dtypes.sdk_name(t.dtype) for t in op.outputs]
            layer.update(op.host)
            if dynamic:  # a host layer: its outputs may come out smaller than planned
                layer["dynamic"] = True
        net["layers"].append(layer)
    if weights:
        net["weights"] = [_weight_entry(t) for t in weights]
    return dtypes.with_float_mode(net, float_mode) if float_mode else net


def _neuron(inputs):
    """The compile() inputs that are net inputs: a coefficient tensor listed there is a weight."""
    return [t for t in inputs if t.ttype != "coeff"]


def _weight_entry(t):
    """A coefficient tensor as a "weights" entry of the net: float data as float32 values (rounded to
    the tensor's dtype first, so the values are the tensor's), integer data in its own dtype."""
    sdk = dtypes.sdk_name(t.dtype)
    if dtypes.is_float(sdk):
        data, data_dtype = dtypes.to_float32(dtypes.to_storage(t.data, sdk), sdk), "fp32"
    else:
        data, data_dtype = dtypes.to_storage(t.data, sdk), sdk
    raw = np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<"), copy=False).tobytes()
    return {"name": t.name, "shape": t.shape, "dtype": sdk, "data_dtype": data_dtype,
            "data": base64.b64encode(raw).decode("ascii")}


def _input_arrays(inputs, seed=0):
    """Input data: float32 for float tensors, the integer dtype for integer ones; random when a
    tensor has no data."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for t in inputs:
        sdk = dtypes.sdk_name(t.dtype)
        if t.data is None:
            arrays[t.name] = dtypes.random_data(rng, t.shape, sdk)
        else:
            arrays[t.name] = np.asarray(t.data).astype(np.float32) if dtypes.is_float(sdk) else \
                dtypes.to_storage(t.data, sdk)
    return arrays


def _refs_dict(refs, outputs):
    """refs as {output name: array}: a list in output order, or a mapping by name (a dict, or the
    NpzFile of np.load). A mapping's entries that name no output are ignored (the vendor's regression
    script stores a `<name>_f32` entry beside each output), but every output needs its entry."""
    if refs is None or isinstance(refs, (int, bool)):  # an older positional `opt` argument
        return {}
    if hasattr(refs, "keys") and hasattr(refs, "__getitem__"):
        names = [t.name for t in outputs]
        missing = [n for n in names if n not in refs]
        if missing:
            raise CompareError(f"compile: refs has no entry for output(s) {', '.join(repr(n) for n in missing)} "
                               f"(it has: {', '.join(sorted(map(str, refs.keys())))})")
        return {n: refs[n] for n in names}
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
    inputs, outputs = _neuron(inputs), list(outputs)
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
    inputs, outputs = _neuron(inputs), list(outputs)
    arrays = _input_arrays(inputs)
    np.savez(f"{name}_in_f32.npz", **arrays)
    references = _refs_dict(refs, outputs)
    for m in modes:
        sdk_dtype = dtypes.QUANTIZE.get(m.upper())
        if sdk_dtype is None:
            raise TpuLangError(f"compile_f32: mode '{m}': expected f32, f16, bf16 or all")
        net = _net_description(name, inputs, outputs, float_mode=sdk_dtype, dynamic=dynamic)
        top, model = build_and_run(name, net, state.chip, arrays, f"{name}_{m}.model")
        if cmp and references and m == "f32":
            check_outputs(f"{name}: Top outputs vs refs", top, references, metrics.TOP_VS_REFERENCE,
                          names=list(references))
        check_outputs(f"{name} ({m}): model run on {state.chip} vs Top outputs", model, top, metrics.TPU_VS_TOP)
