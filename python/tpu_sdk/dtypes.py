"""Element types: the names TpuLang uses, the SDK's, and bf16 in numpy.

numpy has no bfloat16: a bf16 tensor travels as uint16 holding the bf16
bits (the high half of the float32), as the SDK's .npz files store it.
"""
import numpy as np

# TpuLang dtype name -> the SDK's dtype name (net descriptions, model files).
SDK_NAMES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
# Quantize modes of model_deploy and the test base -> SDK dtype name.
QUANTIZE = {"F32": "fp32", "F16": "fp16", "BF16": "bf16"}


def sdk_name(tpulang_dtype):
    try:
        return SDK_NAMES[tpulang_dtype]
    except KeyError:
        raise ValueError(f"dtype '{tpulang_dtype}': custom ops take float32, float16 or bfloat16 "
                         f"tensors here") from None


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
    raise ValueError(f"dtype '{sdk_dtype}': not a float dtype of the SDK")


def to_float32(values, sdk_dtype):
    """A model output in its storage dtype -> float32."""
    if sdk_dtype == "bf16":
        return float32_from_bf16(values)
    return np.asarray(values).astype(np.float32)
