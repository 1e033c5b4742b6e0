#!/usr/bin/env python3
"""ppl_interface_test.py: the generated interface of tests/ppl/fixtures/signatures.pl.

The expected declarations are written here from the mapping docs/ppl.md
states (pointers -> unsigned long long, const dropped, uint32 -> uint32_t,
...), not taken from the generator.
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


def main():
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, str(GENERATOR), str(HERE / "fixtures" / "signatures.pl"), out], check=True)
        header = (pathlib.Path(out) / "signatures.h").read_text()
        entry = (pathlib.Path(out) / "signatures_ppl.cpp").read_text()
    declarations = [line for line in header.splitlines() if line.startswith("int ")]
    failures = []
    if declarations != EXPECTED:
        failures.append(f"declarations {declarations} != {EXPECTED}")
    for needle in ('extern "C" {', "PplLocalAddrAssignErr = 0x11,", "PplL2AddrAssignErr = 0x1a,"):
        if needle not in header:
            failures.append(f"header lacks {needle!r}")
    if "ghost" in header or "commented_out" in header:
        failures.append("a commented-out kernel was generated")
    if "ppl_pl_signatures::every_kind(ppl::rt::global_address{a.out}, ppl::rt::global_address{a.in}, a.n," not in entry:
        failures.append("the entry does not pass pointers as global addresses")
    for failure in failures:
        print(failure)
    print("ok" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
