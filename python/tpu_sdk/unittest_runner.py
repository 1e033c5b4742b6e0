"""Runs one Python test file and judges it by its unittest results.

    python3 -m tpu_sdk.unittest_runner test_absadd.py

run_custom_unittest runs each test_if/unittest/test_*.py through this, not
as `python3 test_absadd.py`: a vendor test file may exit 0 whatever its
tests did (`unittest.main(exit=False)`, a `try: unittest.main() except:
pass`, a main that catches everything), which would make failed tests look
passed. Here the file is imported as a module (its `if __name__ ==
"__main__":` block does not run), its TestCase classes are loaded with
unittest's loader and run with a verbose text runner, and the exit status
is 1 when a test failed or raised an error (or the file could not be
imported), else 0; a last line counts tests, failures, errors and skips.

A file that defines no unittest tests is run as the script it is
(`__main__`), judged by its exit status.
"""
import importlib.util
import os
import runpy
import sys
import traceback
import unittest


def _exit_status(code):
    """SystemExit's code as an exit status (None: 0; a message: 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_file(path):
    path = os.path.abspath(path)
    directory, name = os.path.split(path)
    stem = os.path.splitext(name)[0]
    sys.path.insert(0, directory)
    sys.argv = [path]
    spec = importlib.util.spec_from_file_location(stem, path)
    if spec is None or spec.loader is None:
        print(f"{path}: not a Python file", file=sys.stderr)
        return 1
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:
        status = _exit_status(e.code)
        print(f"{path}: the file exited with status {status} while being imported", file=sys.stderr)
        return status or 1
    except BaseException:  # noqa: B036 - whatever the file raised is its failure
        traceback.print_exc()
        print(f"{path}: FAILED: importing the file raised an exception", file=sys.stderr)
        return 1
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    if suite.countTestCases() == 0:
        print(f"{path}: no unittest tests; running it as a script, judged by its exit status", file=sys.stderr)
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as e:
            return _exit_status(e.code)
        return 0
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2).run(suite)
    problems = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"{path}: {result.testsRun} test(s), {len(result.failures)} failure(s), {len(result.errors)} error(s), "
          f"{len(result.skipped)} skipped, {len(result.unexpectedSuccesses)} unexpected success(es): "
          f"{'FAILED' if problems else 'passed'}", file=sys.stderr)
    return 1 if problems else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) != 1:
        print("usage: python3 -m tpu_sdk.unittest_runner <test file>", file=sys.stderr)
        return 2
    return run_file(argv[0])


if __name__ == "__main__":
    sys.exit(main())
