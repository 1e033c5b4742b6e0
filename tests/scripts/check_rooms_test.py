"""check_rooms_test: scripts/check_rooms.py on a scratch tree with planted includes.

The real tree has no breach, so without this test the check could never be
seen to fail: here each kind of breach is planted once beside legal
includes, and exactly the planted ones must be reported.
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_rooms.py"
ROOMS = ["io", "loader", "model"]

FILES = {
    "kernel/include/tpu_defs.h": "",
    "kernel/include/tpu_kernel.h.in": "",
    "cmodel/include/machine.h": "",
    "cmodel/ok.h": '#include "machine.h"\n#include <vector>\n',
    "cmodel/bad_defs.h": '#include "tpu_defs.h"\n',                    # breach 1: up a floor
    "cmodel/bad_generated.cc": '#include "tpu_kernel.h"\n',             # breach 2: a generated header above
    "kernel/src/api.cc": '#include "tpu_defs.h"\n#include "cmodel/ok.h"\n',
    "runtime/io/include/tpu_runtime/npz.h": "",
    "runtime/io/arrays.h": '#include "tpu_runtime/npz.h"\n',
    "runtime/loader/lib.cc": '#include "io/arrays.h"\n#include "tpu_defs.h"\n',
    "runtime/model/include/tpu_runtime/model.h": "",
    "runtime/model/build.cc": '#include "loader/lib.h"\n#include "tpu_runtime/model.h"\n',
    "runtime/loader/lib.h": "",
    "runtime/io/bad_private.cc": '#include "loader/lib.h"\n',           # breach 3: a private header above
    "runtime/loader/bad_public.cc": '  #  include "tpu_runtime/model.h"\n',  # breach 4: a public header above
}


class CheckRoomsTest(unittest.TestCase):
    def run_check(self, root):
        return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), "--rooms", *ROOMS],
                              capture_output=True, text=True)

    def test_reports_exactly_the_planted_breaches(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            for name, text in FILES.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            result = self.run_check(root)
            self.assertEqual(result.returncode, 1, result.stdout)
            breaches = sorted(line.split(":")[0] for line in result.stdout.splitlines() if ": includes " in line)
            self.assertEqual(breaches, ["cmodel/bad_defs.h", "cmodel/bad_generated.cc", "runtime/io/bad_private.cc",
                                        "runtime/loader/bad_public.cc"])
            self.assertIn("room runtime/model, above room runtime/loader", result.stdout)
            self.assertIn("floor kernel/, above floor cmodel/", result.stdout)

    def test_a_clean_tree_passes(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            for name, text in FILES.items():
                if "/bad_" in name:
                    continue
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            result = self.run_check(root)
            self.assertEqual(result.returncode, 0, result.stdout)


if __name__ == "__main__":
    unittest.main()
