"""check_skipped_tests_test: scripts/check_skipped_tests.py on planted JUnit files.

A full run of the suite has no skip of the refused kind, so without this test
the check could never be seen to fail: here one file holds a pass, a skip
about the host's processor and a skip about a missing fixture, and only the
last must be refused.
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_skipped_tests.py"


def case(name, skipped_message=None):
    if skipped_message is None:
        return f'<testcase name="{name}" status="run"><system-out>[       OK ] {name}</system-out></testcase>'
    return (f'<testcase name="{name}" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>'
            f'<system-out>[ RUN      ] {name}\n/src/t.cc:12: Skipped\n{skipped_message}\n'
            f'[  SKIPPED ] {name} (0 ms)</system-out></testcase>')


class CheckSkippedTestsTest(unittest.TestCase):
    def run_check(self, *cases):
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "junit.xml"
            path.write_text('<?xml version="1.0"?><testsuite>' + "".join(cases) + "</testsuite>")
            return subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True)

    def test_host_skips_pass_and_are_listed(self):
        r = self.run_check(case("A.Runs"), case("Lanes.Avx2", "this host has no AVX2"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("skipped (host): Lanes.Avx2: this host has no AVX2", r.stdout)

    def test_a_setup_skip_fails_naming_test_and_reason(self):
        r = self.run_check(case("A.Runs"), case("Lanes.Avx2", "this host has no AVX2"),
                           case("Groups.Equal", "TPU_GROUP_FIXTURES_DIR is not set or missing: "))
        self.assertEqual(r.returncode, 1)
        self.assertIn("skipped, not allowed: Groups.Equal: TPU_GROUP_FIXTURES_DIR is not set", r.stderr)
        self.assertNotIn("Lanes.Avx2", r.stderr)
        self.assertIn("1 test(s) skipped", r.stderr)

    def test_an_unreadable_file_is_an_error(self):
        r = subprocess.run([sys.executable, str(SCRIPT), "/nonexistent/junit.xml"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot read /nonexistent/junit.xml", r.stderr)


if __name__ == "__main__":
    unittest.main()
