#!/usr/bin/env python3
"""Runs the __TEST__ program of examples/ppl/flash_attention.pl (tpu_ppl_test)
on one chip in a scratch directory and checks each call's output against
attention computed by numpy in float64 from the same (rounded) inputs:
out[b, s, h] = softmax(q[b, :, h] k[b, :, h]^T * scale) v[b, :, h].

The kernel rounds the probabilities to the input type before their product
with v and the output once at the end; the tolerances allow for that (a few
units of the type's precision on values in [-1, 1]) and no more: an
unscaled, unnormalised or mis-permuted result fails by far.

    flash_attention_check.py PROGRAM CHIP
"""
import pathlib
import sys
import tempfile

import numpy as np

from ppl_program import run_tests

SCALE = 0.5


def as_float(array, kind):
    if kind == "bf16":  # dumped as its bits ("<u2"): the high half of an fp32
        assert array.dtype == np.uint16, array.dtype
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    assert array.dtype == np.float16, array.dtype
    return array.astype(np.float64)


def attention(q, k, v):
    # [b, s, h, d] -> per batch and head.
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) * SCALE
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


def check_call(data, prefix, kind, tolerance):
    before = np.load(data / f"{prefix}_input.npz")
    after = np.load(data / f"{prefix}_tar.npz")
    assert sorted(after.files) == ["0", "1", "2", "3"], after.files
    q, k, v = (as_float(before[key], kind) for key in ("1", "2", "3"))
    assert q.shape == (2, 37, 3, 24) and k.shape == (2, 45, 3, 24), (q.shape, k.shape)
    assert np.any(q != 0) and np.any(v != 0), "the inputs were not filled by ppl::rand"
    out = as_float(after["0"], kind)
    want = attention(q, k, v)
    error = np.abs(out - want).max()
    print(f"{prefix} ({kind}): largest error {error:.2e} (allowed {tolerance:.1e})")
    np.testing.assert_allclose(out, want, rtol=0, atol=tolerance)
    for key in ("1", "2", "3"):
        np.testing.assert_array_equal(after[key], before[key], err_msg=f"input {key} changed")


def main(program, chip):
    with tempfile.TemporaryDirectory() as scratch:
        if not run_tests(program, chip, pathlib.Path(scratch) / "data", 2, timeout=120):
            return 1
        data = pathlib.Path(scratch) / "data"
        # fp16: 11 bits, bf16: 8 bits of precision on outputs of magnitude < 1.
        check_call(data, "flash_attention", "fp16", 1.5e-3)
        check_call(data, "flash_attention_1", "bf16", 1e-2)
    print(f"flash_attention_check: both calls match numpy on {chip}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
