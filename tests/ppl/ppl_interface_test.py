#!/usr/bin/env python3
"""ppl_interface_test.py: the generated interface of tests/ppl/fixtures/signatures.pl,
and what the generator makes of __TEST__ and __AUTOTUNE__ functions.

The expected declarations are written here from the mapping docs/ppl.md
states (pointers -> unsigned long long, const dropped, uint32 -> uint32_t,
...), not taken from the generator; so are the host chip helpers (spec
§4.2 item 3) and the refusals of --test.
"""
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
GENERATOR = HERE.parent.parent / "cmake" / "ppl_interface.py"
EXPECTED = [
    "int every_kind(unsigned long long out, unsigned long long in, int n, int block, float alpha, bool flag, "
    "uint32_t local_addr, double beta, char tag, int count);",
    "int no_parameters(void);",
]


SAMPLE = HERE.parent.parent / "customlayer" / "PplBackend" / "src" / "scale_add_fp.pl"
HELPERS = ["#define LANE_NUM (ppl_host_lane_num())", "#define EU_NUM (ppl_host_eu_bytes())",
           "static inline int align_up(int x, int a)", "static inline const char *get_chip(void)",
           "static inline int get_core_num(void)", "#ifndef PPL_HOST_HELPERS_DEFINED"]


def generate(*args):
    return subprocess.run([sys.executable, str(GENERATOR), *map(str, args)], capture_output=True, text=True)


def test_mode_failures():
    """--test refusals, and __TEST__ functions left out of the kernels' build."""
    failures = []
    with tempfile.TemporaryDirectory() as out:
        run = generate("--test", HERE / "fixtures" / "signatures.pl", out)
        if run.returncode != 1 or "signatures.pl: no __TEST__ or __AUTOTUNE__ function" not in run.stderr:
            failures.append(f"--test without __TEST__: {run.returncode} {run.stderr!r}")
        run = generate("--test", HERE / "fixtures" / "test_parameters.pl", out)
        if run.returncode != 1 or "test_parameters.pl:8: __TEST__ function 'copy_test' takes parameters" not in run.stderr:
            failures.append(f"--test with a parameter: {run.returncode} {run.stderr!r}")
        if generate(SAMPLE, out).returncode != 0:
            failures.append("the sample's interface was not generated")
            return failures
        original = SAMPLE.read_text().splitlines()
        copied = (pathlib.Path(out) / "scale_add_fp_ppl.pl").read_text().splitlines()
        if copied[0] != f'#line 1 "{SAMPLE}"' or len(copied) != len(original) + 1:
            failures.append("the kernels' copy does not keep the .pl's lines")
        tests = [i for i, line in enumerate(original) if line.startswith("__TEST__")]
        kernels = [i for i, line in enumerate(original) if line.startswith("__KERNEL__")]
        if not tests or any(copied[i + 1].strip() for i in tests) or any("malloc<" in line for line in copied):
            failures.append("a __TEST__ function is left in the kernels' copy")
        if any(copied[i + 1] != original[i] for i in kernels):
            failures.append("a kernel's line changed in the kernels' copy")
        failures += autotune_failures(out)
    return failures


def autotune_failures(out):
    """__AUTOTUNE__ functions: left out of the kernels' copy like __TEST__ ones,
    and run by the test program, marked as such."""
    failures = []
    fixture = HERE / "fixtures" / "test_data.pl"
    if generate(fixture, out).returncode != 0 or generate("--test", fixture, out).returncode != 0:
        return ["test_data.pl's interface or test program was not generated"]
    copied = (pathlib.Path(out) / "test_data_ppl.pl").read_text()
    if "__AUTOTUNE__ void" in copied or "blocked_copy(nullptr" in copied:
        failures.append("an __AUTOTUNE__ function is left in the kernels' copy")
    program = (pathlib.Path(out) / "test_data_test.cpp").read_text()
    # read_inputs and strided_random are __TEST__ functions, tune_block __AUTOTUNE__.
    if 'names[] = {"read_inputs", "strided_random", "tune_block"}' not in program or \
            "autotune[] = {0, 0, 1}" not in program:
        failures.append("the test program does not run the __AUTOTUNE__ function as one")
    wrappers = (pathlib.Path(out) / "test_data_test.pl").read_text()
    if 'scalar_names[] = {"length", "block"}' not in wrappers or "ppl_test_pointer(" not in wrappers:
        failures.append("the kernel wrappers do not pass their scalars and null pointers to the runner")
    return failures


def main():
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, str(GENERATOR), str(HERE / "fixtures" / "signatures.pl"), out], check=True)
        header = (pathlib.Path(out) / "signatures.h").read_text()
        entry = (pathlib.Path(out) / "signatures_ppl.cpp").read_text()
    declarations = [line for line in header.splitlines() if line.startswith("int ") and "ppl_host_" not in line]
    failures = []
    if declarations != EXPECTED:
        failures.append(f"declarations {declarations} != {EXPECTED}")
    for needle in ['extern "C" {', "PplLocalAddrAssignErr = 0x11,", "PplL2AddrAssignErr = 0x1a,"] + HELPERS:
        if needle not in header:
            failures.append(f"header lacks {needle!r}")
    if "ghost" in header or "commented_out" in header:
        failures.append("a commented-out kernel was generated")
    if "ppl_pl_signatures::every_kind(ppl::rt::global_address{a.out}, ppl::rt::global_address{a.in}, a.n," not in entry:
        failures.append("the entry does not pass pointers as global addresses")
    failures += test_mode_failures()
    for failure in failures:
        print(failure)
    print("ok" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
