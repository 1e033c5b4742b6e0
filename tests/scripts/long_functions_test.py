"""long_functions_test: scripts/long_functions.py on planted functions.

The runtime has no function over the limit, so this is where the check is
seen to fail: a function one line over the limit is reported, one at the
limit is not, and braces inside strings, characters and comments do not
change the count.
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "long_functions.py"


def function(name, body_lines):
    # Opening and closing brace lines included: `body_lines` + 2 lines in all.
    body = "".join(f'  s += "{{";  // }} {i}\n' if i % 2 else "  c = '}';\n" for i in range(body_lines))
    return f"void {name}() {{\n{body}}}\n"


class LongFunctionsTest(unittest.TestCase):
    def test_reports_only_the_function_over_the_limit(self):
        with tempfile.TemporaryDirectory() as scratch:
            source = pathlib.Path(scratch) / "planted.cc"
            source.write_text(function("at_limit", 18) + function("over_limit", 19))
            result = subprocess.run([sys.executable, str(SCRIPT), "--max", "20", str(source)],
                                    capture_output=True, text=True)
            self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
            self.assertIn("over_limit", result.stdout)
            self.assertNotIn("at_limit", result.stdout)

    def test_passes_when_nothing_is_over(self):
        with tempfile.TemporaryDirectory() as scratch:
            source = pathlib.Path(scratch) / "short.cc"
            source.write_text(function("short_one", 5))
            result = subprocess.run([sys.executable, str(SCRIPT), "--max", "20", str(source)],
                                    capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


if __name__ == "__main__":
    unittest.main()
