"""Runs a __TEST__ program (tpu_ppl_test) on one chip, its dumps written to
`data`; shared by the checkers of tests/ppl (ppl_test_check.py,
flash_attention_check.py)."""
import subprocess


def run_tests(program, chip, data, expected_tests, timeout=120):
    """True when the program exited 0 having run and passed `expected_tests`
    __TEST__ functions; its output is printed either way."""
    run = subprocess.run([program, chip, str(data)], capture_output=True, text=True, timeout=timeout)
    print(run.stdout, run.stderr, sep="\n")
    if run.returncode != 0:
        print(f"{program} {chip} exited {run.returncode}")
        return False
    if f"{expected_tests} of {expected_tests} passed" not in run.stdout:
        print(f"the program did not run its {expected_tests} __TEST__ functions")
        return False
    return True
