"""Element types: the names TpuLang uses, the SDK's, and bf16 in numpy.

numpy has no bfloat16: a bf16 tensor travels as uint16 holding the bf16
bits (the high half of the float32), as the SDK's .npz files store it.
"""
import numpy as np

# TpuLang dtype name -> the SDK's dtype name (net descriptions, model files).
SDK_NAMES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int8": "int8", "uint8": "uint8",
             "int16": "int16", "uint16": "uint16", "int32": "int32", "uint32": "uint32"}
FLOAT_SDK_NAMES = ("fp32", "fp16", "bf16")
# Quantize modes of model_deploy and the test base -> SDK dtype name.
QUANTIZE = {"F32": "fp32", "F16": "fp16", "BF16": "bf16"}
# numpy types of the integer SDK dtypes.
_INTEGER_TYPES = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
                  "uint32": np.uint32}


def sdk_name(tpulang_dtype):
    try:
        return SDK_NAMES[tpulang_dtype]
    except KeyError:
        raise ValueError(f"dtype '{tpulang_dtype}': expected one of {', '.join(SDK_NAMES)}") from None


def is_float(sdk_dtype):
    return sdk_dtype in FLOAT_SDK_NAMES


def with_float_mode(net, sdk_dtype):
    """A copy of a net description whose float inputs and float custom-op outputs are `sdk_dtype`
    (a quantize mode: F16 runs the float part of the net in fp16); integer tensors keep their dtype.
    Float weights take it too: their data stays as written ("data_dtype"), the builder rounds it."""
    out = {**net, "inputs": [dict(t) for t in net["inputs"]], "layers": [dict(l) for l in net["layers"]]}
    if "weights" in net:
        out["weights"] = [dict(w) for w in net["weights"]]
    for t in out["inputs"] + out.get("weights", []):
        if is_float(t["dtype"]):
            if "data" in t and "data_dtype" not in t:
                t["data_dtype"] = t["dtype"]
            t["dtype"] = sdk_dtype
    for layer in out["layers"]:
        if "out_dtypes" in layer:
            layer["out_dtypes"] = [sdk_dtype if is_float(d) else d for d in layer["out_dtypes"]]
    return out


def bf16_from_float32(values):
    """float32 -> bf16 bits (uint16), rounded to nearest even; NaN stays NaN."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    rounded = np.where(nan, (bits >> 16) | 0x40, rounded)
    return rounded.astype(np.uint16)


def float32_from_bf16(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def to_storage(values, sdk_dtype):
    """Float data -> the array a model input of `sdk_dtype` takes."""
    values = np.asarray(values)
    if sdk_dtype == "fp32":
        return values.astype(np.float32)
    if sdk_dtype == "fp16":
        return values.astype(np.float16)
    if sdk_dtype == "bf16":
        return values if values.dtype == np.uint16 else bf16_from_float32(values.astype(np.float32))
    if sdk_dtype in _INTEGER_TYPES:
        info = np.iinfo(_INTEGER_TYPES[sdk_dtype])
        if values.size and (np.min(values) < info.min or np.max(values) > info.max):
            raise ValueError(f"values in [{np.min(values)}, {np.max(values)}] do not fit {sdk_dtype}")
        return np.rint(values).astype(_INTEGER_TYPES[sdk_dtype]) if values.dtype.kind == "f" else \
            values.astype(_INTEGER_TYPES[sdk_dtype])
    raise ValueError(f"dtype '{sdk_dtype}': not a dtype of the SDK")


def random_data(rng, shape, sdk_dtype):
    """Test data for an input without data: uniform in [-1, 1) for floats (float32), small
    integers of the dtype otherwise."""
    if is_float(sdk_dtype):
        return rng.uniform(-1, 1, size=shape).astype(np.float32)
    info = np.iinfo(_INTEGER_TYPES[sdk_dtype])
    return rng.integers(max(info.min, -128), min(info.max, 255), size=shape, endpoint=True).astype(
        _INTEGER_TYPES[sdk_dtype])


def to_float32(values, sdk_dtype):
    """A model output in its storage dtype -> float32."""
    if sdk_dtype == "bf16":
        return float32_from_bf16(values)
    return np.asarray(values).astype(np.float32)
