"""build_times_test: scripts/build_times.py on a planted Ninja tree.

The log holds two runs of one object (the later counts), an object of a
target no longer in the graph (must not count), a link and a custom step;
the expected sums are worked out here by hand from those durations.
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "build_times.py"

BUILD_NINJA = """rule touch
  command = touch $out
build CMakeFiles/emu.dir/a.cc.o: touch
build CMakeFiles/emu.dir/b.cc.o: touch
build libemu.so: touch CMakeFiles/emu.dir/a.cc.o CMakeFiles/emu.dir/b.cc.o
build generated.h: touch
"""

# start and end in milliseconds, as Ninja writes them.
NINJA_LOG = """# ninja log v5
0\t9000\t1\tCMakeFiles/emu.dir/a.cc.o\tx
0\t4000\t1\tCMakeFiles/emu.dir/a.cc.o\tx
0\t3000\t1\tCMakeFiles/emu.dir/b.cc.o\tx
0\t50000\t1\tCMakeFiles/gone.dir/old.cc.o\tx
4000\t5500\t1\tlibemu.so\tx
0\t500\t1\tgenerated.h\tx
"""


def run(build_dir, *extra):
    return subprocess.run([sys.executable, str(SCRIPT), str(build_dir), *extra], capture_output=True, text=True)


class BuildTimesTest(unittest.TestCase):
    def test_sums_the_latest_run_of_each_output_of_the_graph(self):
        with tempfile.TemporaryDirectory() as scratch:
            tree = pathlib.Path(scratch)
            (tree / "build.ninja").write_text(BUILD_NINJA)
            (tree / ".ninja_log").write_text(NINJA_LOG)
            result = run(tree)
            self.assertEqual(result.returncode, 0, result.stderr)
            # a.cc.o 4 s (its later run), b.cc.o 3 s, the link 1.5 s, generated.h 0.5 s; old.cc.o not at all.
            self.assertIn("4 steps, 9.0 s in all: compile 7.0 s, link 1.5 s, other 0.5 s", result.stdout)
            self.assertIn("7.0 s   77.8 %  emu", result.stdout)
            self.assertIn("4.0 s   44.4 %  emu: a.cc.o", result.stdout)
            self.assertNotIn("gone", result.stdout)

    def test_a_malformed_log_is_named_with_its_line(self):
        with tempfile.TemporaryDirectory() as scratch:
            tree = pathlib.Path(scratch)
            (tree / "build.ninja").write_text(BUILD_NINJA)
            (tree / ".ninja_log").write_text("# ninja log v5\n0\t1\tshort\n")
            result = run(tree)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn(".ninja_log:2: expected 5 tab-separated fields, found 3", result.stderr)


if __name__ == "__main__":
    unittest.main()
