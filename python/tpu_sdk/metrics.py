"""How close two tensors are, the way the vendor's npz tools decide it.

compare(actual, reference, tolerance) follows the vendor's TensorCompare:
  - different element counts: NOT_MATCH;
  - first, an addition of the SDK's: elements of `actual` the op never
    wrote (they still hold the 0xFF bytes the runtime fills outputs with, a
    NaN in every float type) where the reference is not NaN: NOT_WRITTEN,
    with their count and the first index. The vendor's steps below count
    NaN as 0, so an op that skips the elements whose reference is 0 would
    otherwise pass;
  - then, also the SDK's: elements that are NaN or infinite in one tensor
    where the other holds a number (or another infinity): NOT_FINITE, with
    their count and the first index (NaN-as-0 would hide them);
  - identical (NaN equal to NaN): EQUAL;
  - integer tensors must be identical;
  - numpy.allclose at rtol 1e-5, 1e-4, 1e-3 (atol 1e-8): CLOSE;
  - otherwise NaN counts as 0 and +-inf as +-10000, and the tensors are
    SIMILAR when cosine > tolerance[0] and euclidean > tolerance[1], where
      cosine    = a.b / (|a| |b|)                 (0 when either is all zero)
      euclidean = 1 - |a - b| / (|(a + b) / 2| + 1e-7)
  - else NOT_SIMILAR.
EQUAL, CLOSE and SIMILAR pass. The result also carries the figures, for
messages that say which one broke.
"""
from dataclasses import dataclass

import numpy as np

# The vendor's thresholds (cosine, euclidean) at each stage of its flow.
TOP_VS_REFERENCE = (0.99, 0.99)    # TpuLang compile_f32: Top inference vs given refs
TPU_VS_TOP = (0.95, 0.80)          # TpuLang: Tpu inference vs Top, model vs Tpu
DEPLOY_TOLERANCE = (0.8, 0.5)      # model_deploy --tolerance default
DEPLOY_CORRECTNESS = (0.99, 0.90)  # model_deploy: model run vs Tpu outputs


# The 0xFF poison of an element nobody wrote, as the bits of each float type
# it may reach Python in: fp32 itself, fp16 (float16, or widened by numpy)
# and bf16 (widened to float32 by dtypes.float32_from_bf16), also widened to
# float64.
_POISON_BITS = {
    np.dtype(np.float16): (0xFFFF,),
    np.dtype(np.float32): (0xFFFFFFFF, 0xFFFFE000, 0xFFFF0000),
    np.dtype(np.float64): (0xFFFFFFFFE0000000, 0xFFFFFC0000000000, 0xFFFFE00000000000),
}
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass
class Comparison:
    verdict: str          # EQUAL, CLOSE, SIMILAR, NOT_SIMILAR, NOT_MATCH, NOT_WRITTEN, NOT_FINITE
    cosine: float = 1.0
    euclidean: float = 1.0
    max_abs: float = 0.0
    tolerance: tuple = TOP_VS_REFERENCE
    unwritten: int = 0          # NOT_WRITTEN / NOT_FINITE: how many elements, and the first one's index
    first_unwritten: int = -1
    size: int = 0

    @property
    def passed(self):
        return self.verdict in ("EQUAL", "CLOSE", "SIMILAR")

    def describe(self):
        if self.verdict == "NOT_WRITTEN":
            return (f"NOT_WRITTEN: {self.unwritten} of {self.size} elements were never written (they still hold "
                    f"the 0xFF poison the runtime fills outputs with, which the vendor's comparison would count as "
                    f"0); the first at index {self.first_unwritten}")
        if self.verdict == "NOT_FINITE":
            return (f"NOT_FINITE: {self.unwritten} of {self.size} elements are NaN or infinite where the "
                    f"reference is not (or the reverse; the vendor's comparison would count NaN as 0); the first at "
                    f"index {self.first_unwritten}")
        return (f"{self.verdict}: cosine {self.cosine:.6f}, euclidean {self.euclidean:.6f}, "
                f"max abs error {self.max_abs:.6g} (needs cosine > {self.tolerance[0]} and "
                f"euclidean > {self.tolerance[1]})")


def unwritten(actual, reference):
    """(count, first index) of the elements of `actual` that still hold the poison of an unwritten
    output where `reference` is not NaN; (0, -1) when there are none (or `actual` is not float)."""
    a, b = np.asarray(actual).reshape(-1), np.asarray(reference).reshape(-1)
    if a.dtype.byteorder not in "=|":
        a = a.astype(a.dtype.newbyteorder("="))
    patterns = _POISON_BITS.get(a.dtype)
    if patterns is None or a.size != b.size:
        return 0, -1
    bits = np.ascontiguousarray(a).view(_UINT[a.dtype.itemsize])
    mask = np.isin(bits, np.array(patterns, dtype=bits.dtype))
    if b.dtype.kind == "f":
        mask &= ~np.isnan(b)
    where = np.flatnonzero(mask)
    return int(where.size), int(where[0]) if where.size else -1


def nonfinite_mismatches(actual, reference):
    """(count, first index) of the elements where one side is NaN and the other is not, or one side is
    infinite and the other is not the same infinity; (0, -1) when there are none."""
    a = np.asarray(actual).reshape(-1).astype(np.float64)
    b = np.asarray(reference).reshape(-1).astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    with np.errstate(invalid="ignore"):
        inf_differs = (np.isinf(a) | np.isinf(b)) & (a != b) & ~nan_a & ~nan_b
    where = np.flatnonzero((nan_a != nan_b) | inf_differs)
    return int(where.size), int(where[0]) if where.size else -1


def parse_tolerance(text):
    """'0.99,0.90' -> (0.99, 0.90); ValueError naming the text otherwise."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2:
        raise ValueError(f"tolerance '{text}': expected two numbers, 'cosine,euclidean'")
    cosine, euclid = (float(p) for p in parts)
    if not (-1 <= cosine <= 1 and euclid <= 1):
        raise ValueError(f"tolerance '{text}': cosine must be in [-1, 1] and euclidean at most 1")
    return cosine, euclid


def _finite(values):
    out = np.nan_to_num(values.astype(np.float64), nan=0.0, posinf=10000.0, neginf=-10000.0)
    return out.reshape(-1)


def similarity(actual, reference):
    """(cosine, euclidean, max_abs) of two float arrays of the same size."""
    a = _finite(np.asarray(actual))
    b = _finite(np.asarray(reference))
    norm_a, norm_b = np.linalg.norm(a), np.linalg.norm(b)
    cosine = float(a.dot(b) / (norm_a * norm_b)) if norm_a > 0 and norm_b > 0 else 0.0
    euclid = float(1.0 - np.linalg.norm(a - b) / (np.linalg.norm((a + b) / 2) + 1e-7))
    max_abs = float(np.max(np.abs(a - b))) if a.size else 0.0
    return cosine, euclid, max_abs


def compare(actual, reference, tolerance=TOP_VS_REFERENCE):
    tolerance = tuple(tolerance)
    a, b = np.asarray(actual), np.asarray(reference)
    if a.size != b.size:
        return Comparison("NOT_MATCH", 0.0, 0.0, float("inf"), tolerance)
    a, b = a.reshape(-1), b.reshape(-1)
    count, first = unwritten(a, b)
    if count:
        return Comparison("NOT_WRITTEN", 0.0, 0.0, float("inf"), tolerance, count, first, int(a.size))
    count, first = nonfinite_mismatches(a, b)
    if count:
        return Comparison("NOT_FINITE", 0.0, 0.0, float("inf"), tolerance, count, first, int(a.size))
    if np.array_equal(a, b, equal_nan=a.dtype.kind == "f" and b.dtype.kind == "f"):
        return Comparison("EQUAL", 1.0, 1.0, 0.0, tolerance)
    cosine, euclid, max_abs = similarity(a, b)
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        return Comparison("NOT_MATCH", cosine, euclid, max_abs, tolerance)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    for rtol in (1e-5, 1e-4, 1e-3):
        if np.allclose(fa, fb, rtol=rtol, atol=1e-8, equal_nan=True):
            return Comparison("CLOSE", cosine, euclid, max_abs, tolerance)
    verdict = "SIMILAR" if cosine > tolerance[0] and euclid > tolerance[1] else "NOT_SIMILAR"
    return Comparison(verdict, cosine, euclid, max_abs, tolerance)
