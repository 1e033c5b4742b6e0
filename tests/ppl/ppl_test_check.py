#!/usr/bin/env python3
"""Runs the __TEST__ program of customlayer/PplBackend/src/scale_add_fp.pl
(tpu_ppl_test) on one chip in a scratch directory and checks what it wrote
against numpy: each call's outputs (arrays "0" and "1" of _tar.npz) from its
inputs ("2" and "3" of _input.npz), and the inputs unchanged.

    ppl_test_check.py PROGRAM CHIP
"""
import pathlib
import sys
import tempfile

import numpy as np

from ppl_program import run_tests


def check_call(data, prefix, scale, dtype):
    before = np.load(data / f"{prefix}_input.npz")
    after = np.load(data / f"{prefix}_tar.npz")
    assert sorted(after.files) == ["0", "1", "2", "3"], after.files
    a, b = before["2"], before["3"]
    assert a.dtype == dtype and a.shape == after["0"].shape, (a.dtype, a.shape, after["0"].shape)
    assert np.any(a != 0) and np.any(b != 0), "the inputs were not filled by ppl::rand"
    assert np.all(before["0"] == 0), "ppl::malloc did not zero the output"
    # In fp32, rounded once to the element type (the kernel computes fp16 in
    # fp32): the result must be exact.
    wide = a.astype(np.float32) * np.float32(scale)
    np.testing.assert_array_equal(after["0"], wide.astype(dtype))
    np.testing.assert_array_equal(after["1"], (wide + b.astype(np.float32)).astype(dtype))
    np.testing.assert_array_equal(after["2"], a)
    np.testing.assert_array_equal(after["3"], b)


def main(program, chip):
    with tempfile.TemporaryDirectory() as scratch:
        if not run_tests(program, chip, pathlib.Path(scratch) / "data", 2, timeout=60):
            return 1
        data = pathlib.Path(scratch) / "data"
        check_call(data, "scale_add_fp", 1.5, np.float32)
        check_call(data, "scale_add_fp_1", -0.5, np.float16)
    print(f"ppl_test_check: both calls match numpy on {chip}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
