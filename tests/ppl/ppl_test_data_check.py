#!/usr/bin/env python3
"""Runs the __TEST__ / __AUTOTUNE__ program of tests/ppl/fixtures/test_data.pl
on one chip and checks it against numpy and by hand:

- read_npy / read_npz / read_bin<int16>: the kernel's dumped inputs are the
  files' arrays converted to fp32 (numpy's astype), its output their sum;
- rand with stride and offset: only the named elements were written, each
  in its range; the allocated form is one row just long enough;
- __AUTOTUNE__: a table of the four calls, the one that does not fit local
  memory marked 0x11, and the fastest the call with the smallest estimate;
- bad files, found first in the working directory, fail the program with
  messages naming the .pl line and what was wrong.

    ppl_test_data_check.py PROGRAM CHIP
"""
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures"


def run(program, chip, cwd):
    done = subprocess.run([program, chip, f"{cwd}/data"], capture_output=True, text=True, timeout=60, cwd=cwd)
    print(done.stdout, done.stderr, sep="\n")
    return done


def check_reads(data):
    files = FIXTURE / "test_data"
    a = np.load(files / "a.npy")
    b = np.load(files / "inputs.npz")["b"].astype(np.float32)
    c = np.fromfile(files / "c.bin", dtype="<i2").astype(np.float32)
    before, after = np.load(data / "test_data_input.npz"), np.load(data / "test_data_tar.npz")
    for key, want in (("1", a), ("2", b), ("3", c)):
        np.testing.assert_array_equal(before[key].reshape(-1), want, err_msg=f"input {key}")
    np.testing.assert_array_equal(after["0"].reshape(-1), (a + b) + c)


def check_strided(data):
    m = np.load(data / "test_data_1_input.npz")["1"].reshape(4, 5)
    assert m.dtype == np.int32, m.dtype
    window = np.zeros((4, 5), bool)
    window[1:3, 2:5] = True
    assert np.all(m[~window] == 0), m
    assert np.all((m[window] >= 10) & (m[window] < 20)), m
    assert len(set(m[window].tolist())) > 1, m
    spread = np.load(data / "test_data_2_input.npz")["1"]
    assert spread.shape == (1, 1, 1, 7), spread.shape  # elements 0, 3, 6
    flat = spread.reshape(-1)
    assert np.all(flat[[1, 2, 4, 5]] == 0) and np.all(flat[[0, 3, 6]] != 0), flat
    assert np.all((flat >= -1) & (flat < 1)), flat


def check_table(stdout):
    rows = re.findall(r"^\s+(\d+)\s+blocked_copy\s+length=4096, block=(\d+)\s+(ok|0x11 local memory short)\s+(\S+)$",
                      stdout, re.M)
    assert [int(r[1]) for r in rows] == [64, 512, 4096, 131072], rows
    assert rows[3][2].startswith("0x11") and rows[3][3] == "-", rows
    estimates = [float(r[3]) for r in rows[:3]]
    best = int(np.argmin(estimates))
    want = f"fastest: #{best} blocked_copy(length=4096, block={rows[best][1]}): {rows[best][3]} us"
    assert want in stdout, want


def check_bad_files(program, chip, scratch):
    bad = pathlib.Path(scratch) / "test_data"
    bad.mkdir()
    np.save(bad / "a.npy", np.zeros(5, np.float32))
    np.savez(bad / "inputs.npz", x=np.zeros(64))
    (bad / "c.bin").write_bytes(b"\0" * 127)
    done = run(program, chip, scratch)
    assert done.returncode == 1, done.returncode
    lines = (FIXTURE / "test_data.pl").read_text().splitlines()
    line = {name: next(i + 1 for i, text in enumerate(lines) if f"{name}(" in text and "test_data/" in text)
            for name in ("read_npy", "read_npz", "read_bin<int16>")}
    for want in (f"test_data.pl:{line['read_npy']}: ppl::read_npy: 'test_data/a.npy' holds 5 elements but the "
                 "buffer from",
                 f"test_data.pl:{line['read_npz']}: ppl::read_npz: 'test_data/inputs.npz' has no array 'b' "
                 "(it has 'x')",
                 f"test_data.pl:{line['read_bin<int16>']}: ppl::read_bin: 'test_data/c.bin' has 127 bytes, not a "
                 "whole number of 2-byte elements",
                 "[  FAILED  ] read_inputs"):
        assert want in done.stderr + done.stdout, want


def main(program, chip):
    with tempfile.TemporaryDirectory() as scratch:
        done = run(program, chip, scratch)
        assert done.returncode == 0, done.returncode
        assert "3 of 3 passed" in done.stdout
        data = pathlib.Path(scratch) / "data"
        check_reads(data)
        check_strided(data)
        check_table(done.stdout)
    with tempfile.TemporaryDirectory() as scratch:
        check_bad_files(program, chip, scratch)
    print(f"ppl_test_data_check: reads, strided rand, the autotune table and bad files as expected on {chip}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
