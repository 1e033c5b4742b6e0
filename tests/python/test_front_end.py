"""The Python front end against independent expectations: the bindings'
checks (nothing a caller passes may crash the interpreter), TpuLang's
stages catching a wrong reference and a wrong kernel, parameter typing,
and the model_deploy / npz_tool commands.

Environment (set by tests/CMakeLists.txt): PYTHONPATH holds the build's
python/; TPU_TEST_SAMPLE_ROOT is a root whose lib/ holds the sample ops'
libraries; TPU_TEST_FIXTURES is the runtime fixtures' directory.
"""
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import numpy as np

import tpu_sdk
import transform.TpuLang as tpul
from tpu_sdk import deploy, dtypes, metrics, npz_tool

SAMPLE_ROOT = os.environ["TPU_TEST_SAMPLE_ROOT"]
FIXTURES = os.environ["TPU_TEST_FIXTURES"]
GROUP_FIXTURES = os.environ["TPU_TEST_GROUP_FIXTURES"]  # tests/runtime/groups/fixtures, built


def use_libraries(root):
    os.environ["TPUC_ROOT"] = root
    os.environ["TPUKERNEL_CUSTOM_FIRMWARE_PATH"] = os.path.join(root, "lib")


class InTempDir(unittest.TestCase):
    def setUp(self):
        self._cwd = os.getcwd()
        self._tmp = tempfile.TemporaryDirectory()
        os.chdir(self._tmp.name)
        use_libraries(SAMPLE_ROOT)

    def tearDown(self):
        os.chdir(self._cwd)
        self._tmp.cleanup()
        tpul.deinit()

    def use_fixture_libraries(self):
        """The runtime fixtures' op set (fx_copy, ...) for bm1684x, as a TPUC_ROOT of its own."""
        root = os.path.join(self._tmp.name, "root")
        os.makedirs(os.path.join(root, "lib"))
        for name in ("libplugin_custom.so", "libbackend_custom.so", "libcmodel_custom_bm1684x.so"):
            os.symlink(os.path.join(FIXTURES, "good", name), os.path.join(root, "lib", name))
        use_libraries(root)


def absadd_net(dtype="fp32", shape=(2, 3, 4, 5)):
    return json.dumps({"name": "one", "inputs": [{"name": "x", "shape": list(shape), "dtype": dtype}],
                       "layers": [{"op": "absadd", "params": {"b": 0.5}, "inputs": ["x"], "outputs": ["y"]}],
                       "outputs": ["y"]})


class Bindings(InTempDir):
    def build(self, net=None, chip="bm1684x"):
        return tpu_sdk.build_model(net or absadd_net(), chip, "m.model")

    def test_build_and_run_against_numpy(self):
        x = np.linspace(-3, 3, 120, dtype=np.float32).reshape(2, 3, 4, 5)
        info = tpu_sdk.build_model(absadd_net(), "bm1688", "m.model", reference_inputs={"x": x})
        np.testing.assert_array_equal(info["reference_outputs"]["y"], np.abs(x) + 0.5)
        outputs, stats = tpu_sdk.run_model("m.model", {"x": x})
        np.testing.assert_array_equal(outputs["y"], np.abs(x) + 0.5)
        self.assertEqual([s["op"] for s in stats], ["absadd"])
        self.assertEqual(tpu_sdk.model_inputs("m.model"), {"x": ([2, 3, 4, 5], "fp32")})

    def test_an_in_place_op_shares_its_inputs_memory(self):
        x = np.linspace(-3, 3, 120, dtype=np.float32).reshape(2, 3, 4, 5)
        net = {"inputs": [{"name": "x", "shape": [2, 3, 4, 5], "dtype": "fp32"}],
               "layers": [{"op": "absadd", "params": {"b": 0.5}, "inputs": ["x"], "outputs": ["a"]},
                          {"op": "scaleinplace", "params": {"s": -2.0}, "inputs": ["a"], "outputs": ["y"]}],
               "outputs": ["y"]}
        tpu_sdk.build_model(json.dumps(net), "bm1684x", "m.model", reference_inputs={"x": x})
        outputs, _ = tpu_sdk.run_model("m.model", {"x": x})
        np.testing.assert_array_equal(outputs["y"], (np.abs(x) + np.float32(0.5)) * np.float32(-2.0))
        info = tpu_sdk.model_info("m.model")
        self.assertIn("'y' shares the memory of 'a' (updated in place)", info)
        # a is 480 bytes, 512 in the plan's 512-byte alignment.
        self.assertIn("512 bytes saved by in-place updates", info)
        self.assertEqual(tpu_sdk.op_metadata("scaleinplace", {"s": 1.0})["inplace_inputs"], 1)

    def test_a_pipelined_model_runs_over_micro_batches(self):
        x = np.linspace(-3, 3, 240, dtype=np.float32).reshape(4, 3, 4, 5)
        net = {"inputs": [{"name": "x", "shape": [4, 3, 4, 5], "dtype": "fp32"}],
               "layers": [{"op": "absadd", "params": {"b": 0.5}, "inputs": ["x"], "outputs": ["a"]},
                          # a layer that joins no group with absadd (builtin.relu now would, and a group is one
                          # stage): the copy of a reshape to the same shape
                          {"op": "builtin.reshape", "params": {"shape": [-1, 3, 4, 5]}, "inputs": ["a"],
                           "outputs": ["y"]}],
               "outputs": ["y"]}
        self.assertIsNone(tpu_sdk.pipeline_plan(self.build_and_path(net, pipeline=0)))
        path = self.build_and_path(net, pipeline=2, micro_batches=2)
        plan = tpu_sdk.pipeline_plan(path)
        self.assertEqual([(s["first"], s["last"]) for s in plan["stages"]], [(0, 0), (1, 1)])
        self.assertEqual(plan["micro_batches"], 2)
        run = tpu_sdk.run_pipeline(path, {"x": x})
        np.testing.assert_array_equal(run["outputs"]["y"], np.abs(x) + np.float32(0.5))
        self.assertTrue(run["outputs_identical"], run["difference"])
        self.assertTrue(run["emulated"], run["not_emulated"])  # stage k ran on core k
        self.assertEqual([(s["micro_batch"], s["stage"]) for s in run["schedule"]], [(0, 0), (0, 1), (1, 0), (1, 1)])
        with self.assertRaisesRegex(tpu_sdk.Error, "built for 2 micro-batches"):
            tpu_sdk.run_pipeline(path, {"x": x}, micro_batches=4)
        with self.assertRaisesRegex(tpu_sdk.Error, "input 'x' has batch 4 .* which 3 micro-batches do not divide"):
            self.build_and_path(net, pipeline=2, micro_batches=3)

    def build_and_path(self, net, **pipeline):
        tpu_sdk.build_model(json.dumps(net), "bm1688", "p.model", **pipeline)
        return "p.model"

    def test_a_multi_core_op_runs_on_both_cores_of_bm1688(self):
        # linear declares itself multi-core (docs/custom-layer-build.md, "Multi-core ops"): the op
        # tester checks 1 core against 2, and a model runs its layer through the firmware on both.
        params = {"has_bias": 0, "do_relu": 0}
        self.assertTrue(tpu_sdk.op_metadata("linear", params, num_inputs=2)["multi_core"])
        rng = np.random.default_rng(3)
        # Multiples of 1/128 below 2^10: every product and sum is exact in fp32.
        x = (rng.integers(-8, 8, (37, 20)) / 8).astype(np.float32)
        w = (rng.integers(-8, 8, (9, 20)) / 16).astype(np.float32)
        report = tpu_sdk.run_op("linear", [x, w], params, chip="bm1688", local=False)
        claim = [c for c in report["cases"] if c["name"] == "multi-core claim"]
        self.assertEqual(len(claim), 1, report["summary"])
        self.assertTrue(claim[0]["passed"], claim[0]["failure"])
        net = {"inputs": [{"name": "x", "shape": [37, 20], "dtype": "fp32"},
                          {"name": "w", "shape": [9, 20], "dtype": "fp32"}],
               "layers": [{"op": "linear", "params": params, "inputs": ["x", "w"], "outputs": ["y"]}],
               "outputs": ["y"]}
        tpu_sdk.build_model(json.dumps(net), "bm1688", "l.model")
        outputs, stats = tpu_sdk.run_model("l.model", {"x": x, "w": w})
        np.testing.assert_array_equal(outputs["y"], x.astype(np.float64) @ w.T.astype(np.float64))
        self.assertEqual(stats[0]["mode"], "dynamic")
        self.assertIn("dynamic (multi_core)", tpu_sdk.model_info("l.model"))

    def test_a_session_keeps_a_stateful_layers_scratch(self):
        net = {"inputs": [{"name": "x", "shape": [4], "dtype": "fp32"}],
               "layers": [{"op": "counter", "inputs": ["x"], "outputs": ["n"]}], "outputs": ["n"]}
        libs = {key: os.path.join(GROUP_FIXTURES, name) for key, name in
                (("plugin", "libplugin_custom.so"), ("backend", "libbackend_custom.so"),
                 ("firmware", "libcmodel_custom_bm1688.so"))}
        tpu_sdk.build_model(json.dumps(net), "bm1688", "c.model", **libs)
        x = np.zeros(4, np.float32)
        session = tpu_sdk.ModelSession("c.model")
        self.assertEqual([float(session.run({"x": x})[0]["n"][0]) for _ in range(3)], [1.0, 2.0, 3.0])
        del session
        # run_model: one run of a fresh session.
        self.assertEqual(float(tpu_sdk.run_model("c.model", {"x": x})[0]["n"][0]), 1.0)

    def test_non_contiguous_input_is_copied(self):
        self.build()
        big = np.arange(240, dtype=np.float32).reshape(2, 3, 4, 10) - 100
        view = big[..., ::2]
        self.assertFalse(view.flags["C_CONTIGUOUS"])
        outputs, _ = tpu_sdk.run_model("m.model", {"x": view})
        np.testing.assert_array_equal(outputs["y"], np.abs(view) + 0.5)

    def assert_error(self, call, *parts):
        with self.assertRaises(tpu_sdk.Error) as caught:
            call()
        for part in parts:
            self.assertIn(part, str(caught.exception))
        return str(caught.exception)

    def test_wrong_inputs_are_errors(self):
        self.build()
        good = np.zeros((2, 3, 4, 5), np.float32)
        self.assert_error(lambda: tpu_sdk.run_model("m.model", {"x": good.astype(np.float64)}), "x", "<f8")
        self.assert_error(lambda: tpu_sdk.run_model("m.model", {"x": np.zeros((2, 3, 4, 6), np.float32)}), "x")
        self.assert_error(lambda: tpu_sdk.run_model("m.model", {}), "x")
        self.assert_error(lambda: tpu_sdk.run_model("m.model", {"x": good, "z": good}), "z")
        self.assert_error(lambda: tpu_sdk.run_model("m.model", {"x": good.astype(">f4")}), "x")
        self.assert_error(lambda: tpu_sdk.run_model("m.model", {"x": "not an array"}), "x")
        self.assert_error(lambda: tpu_sdk.run_model("no_such.model", {"x": good}), "no_such.model")
        # The emulator is still usable.
        outputs, _ = tpu_sdk.run_model("m.model", {"x": good})
        np.testing.assert_array_equal(outputs["y"], np.full((2, 3, 4, 5), 0.5, np.float32))

    def test_wrong_nets_are_errors(self):
        bad_op = absadd_net().replace('"absadd"', '"nosuchop"')
        self.assert_error(lambda: self.build(bad_op), "nosuchop", "absadd")
        bad_param = absadd_net().replace('0.5', '"half"')
        self.assert_error(lambda: self.build(bad_param), "b")
        self.assert_error(lambda: self.build("{not json"), "not valid JSON")
        self.assert_error(lambda: self.build(chip="bm1690"), "bm1690")

    def test_npz_round_trip_keeps_dtypes(self):
        arrays = {"f": np.arange(6, dtype=np.float32).reshape(2, 3), "h": np.ones(4, np.float16),
                  "b": dtypes.bf16_from_float32(np.array([1.5, -2.0, 3.25], np.float32))}
        tpu_sdk.write_npz("a.npz", arrays)
        back = tpu_sdk.read_npz("a.npz")
        for name, array in arrays.items():
            self.assertEqual(back[name].dtype, array.dtype)
            np.testing.assert_array_equal(back[name], array)
        np.testing.assert_array_equal(dtypes.float32_from_bf16(back["b"]), [1.5, -2.0, 3.25])
        np.testing.assert_array_equal(np.load("a.npz")["f"], arrays["f"])  # numpy reads what we write


class RunOp(InTempDir):
    def test_absadd_on_given_arrays_with_its_slicings(self):
        x = np.linspace(-2, 2, 2 * 3 * 6 * 5, dtype=np.float32).reshape(2, 3, 6, 5)
        report = tpu_sdk.run_op("absadd", [x], {"b": 0.25}, chip="BM1688")
        self.assertTrue(report["passed"], report["summary"])
        names = [c["name"] for c in report["cases"]]
        self.assertEqual(names[:2], ["global backend", "global firmware"])
        self.assertTrue(any(n.startswith("local") for n in names), names)  # absadd is a local op
        for case in report["cases"]:
            if case["name"] != "element-wise claim":  # a host check of the reference: no outputs of its own
                np.testing.assert_array_equal(case["outputs"][0], np.abs(x) + 0.25)
        self.assertTrue(any(c["name"] == "element-wise claim" and c["passed"] for c in report["cases"]), names)
        np.testing.assert_array_equal(report["reference"][0], np.abs(x) + 0.25)
        # fp16: the inputs as the op saw them are rounded to fp16.
        report = tpu_sdk.run_op("absadd", [x * 1.001], {"b": 0.25}, dtype="fp16", local=False)
        np.testing.assert_array_equal(report["inputs"][0], (x * 1.001).astype(np.float16).astype(np.float32))
        # absadd declares itself element-wise and stateless: both claims are checked even without local
        # slicings (the first on the host, the second by running the global entry twice).
        self.assertEqual([c["name"] for c in report["cases"]],
                         ["global backend", "global firmware", "element-wise claim", "stateless claim"])

    def test_op_metadata_as_the_plugin_declares_it(self):
        declared = {"inplace_inputs": 0, "elementwise": True, "stateless": True, "input_layouts": [],
                    "multi_core": False}
        # The answer may depend on the parameters, so they are packed as for a layer.
        self.assertEqual(tpu_sdk.op_metadata("absadd", {"b": 0.5}), declared)
        with self.assertRaisesRegex(tpu_sdk.Error, "parameter 'b'"):
            tpu_sdk.op_metadata("absadd")
        self.assertEqual(tpu_sdk.op_metadata("ceiladd", {"b": 1.0}, chip="BM1688"), declared)
        self.assertIsNone(tpu_sdk.op_metadata("swapchannel", {"order": [2, 1, 0]}))  # no metadata_swapchannel: the defaults
        x = np.ones((1, 2, 3, 4), np.float32)
        self.assertEqual(tpu_sdk.run_op("absadd", [x], {"b": 1.0}, local=False)["metadata"], declared)
        # The layer-group fixtures' plugin holds a full answer and malformed ones.
        plugin = os.path.join(GROUP_FIXTURES, "libplugin_custom.so")
        self.assertEqual(tpu_sdk.op_metadata("md_full", num_inputs=2, plugin=plugin),
                         {"inplace_inputs": 1, "elementwise": False, "stateless": True,
                          "input_layouts": [{"input": 1, "alignment": 64, "innermost_multiple": 32}],
                          "multi_core": False})
        with self.assertRaisesRegex(tpu_sdk.Error, r"op 'md_alignment' metadata: input_layouts\[0\]\.alignment is 48"):
            tpu_sdk.op_metadata("md_alignment", plugin=plugin)
        with self.assertRaisesRegex(tpu_sdk.Error, "num_inplace_inputs is 4, but the layer has only 3 inputs"):
            tpu_sdk.op_metadata("md_too_many_inplace", num_inputs=3, plugin=plugin)

    def test_errors_name_the_problem(self):
        x = np.zeros((1, 3, 4, 4), np.float32)
        with self.assertRaisesRegex(tpu_sdk.Error, "nosuchop"):
            tpu_sdk.run_op("nosuchop", [x])
        with self.assertRaisesRegex(tpu_sdk.Error, "fp64"):
            tpu_sdk.run_op("absadd", [x], {"b": 1.0}, dtype="fp64")
        with self.assertRaisesRegex(tpu_sdk.Error, "input 0 is not convertible"):
            tpu_sdk.run_op("absadd", ["text"], {"b": 1.0})


class Metrics(unittest.TestCase):
    def test_figures_by_hand(self):
        a, b = np.array([1.0, 2.0, 2.0]), np.array([1.0, 2.0, 3.0])
        cosine, euclid, max_abs = metrics.similarity(a, b)
        self.assertAlmostEqual(cosine, 11 / (3 * np.sqrt(14)), places=12)
        self.assertAlmostEqual(euclid, 1 - 1 / (np.linalg.norm([1, 2, 2.5]) + 1e-7), places=9)
        self.assertEqual(max_abs, 1.0)
        self.assertEqual(metrics.compare(a, b, (0.9, 0.5)).verdict, "SIMILAR")
        self.assertEqual(metrics.compare(a, b, (0.99, 0.99)).verdict, "NOT_SIMILAR")
        self.assertEqual(metrics.compare(a, a).verdict, "EQUAL")
        self.assertEqual(metrics.compare(a, a * (1 + 1e-6)).verdict, "CLOSE")
        self.assertEqual(metrics.compare(np.array([1, 2], np.int8), np.array([1, 3], np.int8)).verdict, "NOT_MATCH")
        self.assertEqual(metrics.compare(a, b[:2]).verdict, "NOT_MATCH")


class Unwritten(InTempDir):
    """Outputs a kernel never wrote hold the runtime's 0xFF poison, a NaN the vendor's comparison counts
    as 0: fx_short leaves the second half of its output unwritten, where its reference is 0."""

    def test_metrics_tell_poison_from_a_computed_nan(self):
        ref = np.array([1.0, 2.0, 0.0, 0.0], np.float32)
        poisoned = ref.copy()
        poisoned.view(np.uint32)[2:] = 0xFFFFFFFF
        result = metrics.compare(poisoned, ref)
        self.assertEqual(result.verdict, "NOT_WRITTEN")
        self.assertFalse(result.passed)
        self.assertIn("2 of 4 elements were never written", result.describe())
        self.assertIn("the first at index 2", result.describe())
        # fp16 and bf16 outputs widened to float32 keep the pattern recognisable.
        half = ref.astype(np.float16)
        half.view(np.uint16)[3] = 0xFFFF
        self.assertEqual(metrics.compare(half.astype(np.float32), ref).verdict, "NOT_WRITTEN")
        bf16 = dtypes.bf16_from_float32(ref)
        bf16[3] = 0xFFFF
        self.assertEqual(metrics.compare(dtypes.float32_from_bf16(bf16), ref).first_unwritten, 3)
        # A NaN the kernel computed is not poison, but a NaN where the reference has a number still
        # fails (the vendor's NaN-as-0 would call it similar): NOT_FINITE.
        computed = ref.copy()
        computed[2:] = np.nan
        self.assertEqual(metrics.compare(computed, ref).verdict, "NOT_FINITE")

    def test_run_timeout_is_settable_and_checked(self):
        tpu_sdk.set_run_timeout(120)
        with self.assertRaises(tpu_sdk.Error) as raised:
            tpu_sdk.set_run_timeout(-1)
        self.assertIn("run_timeout", str(raised.exception))
        tpu_sdk.set_run_timeout(600)

    def test_nan_and_inf_never_pass_against_numbers(self):
        ref = np.linspace(-1, 1, 64).astype(np.float32)
        all_nan = np.full_like(ref, np.nan)
        result = metrics.compare(all_nan, ref, (0.99, 0.90))
        self.assertEqual(result.verdict, "NOT_FINITE")
        self.assertIn("64 of 64 elements are NaN or infinite", result.describe())
        # The reverse: the reference holds NaN where the output has numbers.
        ref_nan = ref.copy()
        ref_nan[5] = np.nan
        result = metrics.compare(ref, ref_nan, (0.99, 0.90))
        self.assertEqual((result.verdict, result.first_unwritten), ("NOT_FINITE", 5))
        # An infinity against a finite value, and against the other infinity.
        inf = ref.copy()
        inf[7] = np.inf
        self.assertEqual(metrics.compare(inf, ref, (0.0, -10.0)).verdict, "NOT_FINITE")
        neg = inf.copy()
        neg[7] = -np.inf
        self.assertEqual(metrics.compare(inf, neg, (0.0, -10.0)).verdict, "NOT_FINITE")
        # NaN where the reference is NaN, and the same infinity, are equal.
        both = ref_nan.copy()
        both[7] = np.inf
        self.assertEqual(metrics.compare(both, both.copy()).verdict, "EQUAL")

    def fx_short_graph(self):
        self.use_fixture_libraries()
        tpul.init("BM1684X")
        data = np.random.default_rng(3).uniform(1, 2, (4, 8)).astype(np.float32)
        x = tpul.Tensor(name="in", dtype="float32", data=data)
        y = tpul.custom([x], "fx_short", ["float32"], out_names=["out"])[0]
        return x, y

    def test_tpulang_compile_model_deploy_and_npz_tool_fail_on_them(self):
        x, y = self.fx_short_graph()
        with self.assertRaises(tpul.CompareError) as caught:
            tpul.compile("short", [x], [y])
        message = str(caught.exception)
        self.assertIn("model run on bm1684x vs Top outputs: tensor 'out': NOT_WRITTEN", message)
        self.assertIn("16 of 32 elements were never written", message)
        self.assertIn("the first at index 16", message)
        with redirect_stdout(io.StringIO()) as out:
            self.assertEqual(npz_tool.main(["compare", "short_model_outputs.npz", "short_top_outputs.npz"]), 1)
        self.assertIn("NOT_WRITTEN", out.getvalue())
        with redirect_stdout(io.StringIO()) as out:
            status = deploy.main(["--mlir", "short.mlir", "--model", "short.bmodel", "--chip", "BM1684X"])
        self.assertEqual(status, 1, out.getvalue())
        self.assertIn("NOT_WRITTEN", out.getvalue())

    def test_run_op_fails_under_the_vendor_criterion(self):
        self.use_fixture_libraries()
        x = np.random.default_rng(3).uniform(1, 2, (4, 8)).astype(np.float32)
        report = tpu_sdk.run_op("fx_short", [x], criterion="vendor")
        self.assertFalse(report["passed"], report["summary"])
        self.assertIn("16 of 32 elements were never written", report["summary"])


class UnittestRunner(InTempDir):
    """tpu_sdk.unittest_runner, which run_custom_unittest runs each Python test file through."""

    def run_file(self, text, name="test_file.py"):
        with open(name, "w") as f:
            f.write(text)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(sys.path)
        plain = subprocess.run([sys.executable, name], capture_output=True, text=True, env=env)
        judged = subprocess.run([sys.executable, "-m", "tpu_sdk.unittest_runner", name], capture_output=True,
                                text=True, env=env)
        return plain, judged

    def test_a_file_that_always_exits_0_still_fails(self):
        plain, judged = self.run_file(
            "import unittest\n"
            "class T(unittest.TestCase):\n"
            "    def test_ok(self):\n        pass\n"
            "    def test_bad(self):\n        self.assertEqual(1, 2, 'the failure')\n"
            "    def test_raises(self):\n        raise RuntimeError('boom')\n"
            "if __name__ == '__main__':\n"
            "    try:\n        unittest.main(exit=False)\n    except BaseException:\n        pass\n")
        self.assertEqual(plain.returncode, 0)  # what a bare `python3 file` run would have reported
        self.assertEqual(judged.returncode, 1, judged.stderr)
        self.assertIn("3 test(s), 1 failure(s), 1 error(s), 0 skipped", judged.stderr)
        self.assertIn("the failure", judged.stderr)
        self.assertIn("boom", judged.stderr)

    def test_passing_import_failing_and_script_files(self):
        plain, judged = self.run_file("import unittest\nclass T(unittest.TestCase):\n"
                                      "    def test_ok(self):\n        pass\n", "test_pass.py")
        self.assertEqual(judged.returncode, 0, judged.stderr)
        self.assertIn("1 test(s), 0 failure(s), 0 error(s), 0 skipped, 0 unexpected success(es): passed",
                      judged.stderr)
        plain, judged = self.run_file("import no_such_module_here\n", "test_import.py")
        self.assertEqual(judged.returncode, 1)
        self.assertIn("importing the file raised an exception", judged.stderr)
        plain, judged = self.run_file("import sys\nif __name__ == '__main__':\n    sys.exit(3)\n", "test_script.py")
        self.assertEqual(judged.returncode, 3)
        self.assertIn("no unittest tests; running it as a script", judged.stderr)


class TpuLang(InTempDir):
    def absadd_graph(self, dtype="float32"):
        tpul.init("BM1684X")
        data = np.random.default_rng(5).uniform(-4, 4, (2, 8, 6, 6)).astype(dtype)
        x = tpul.Tensor(name="in", dtype=dtype, shape=list(data.shape), data=data)
        y = tpul.custom(tensors_in=[x], op_name="absadd", params={"b": 1.2}, out_dtypes=[dtype])[0]
        return data, x, y

    def test_good_graph_passes_and_writes_the_stages(self):
        data, x, y = self.absadd_graph()
        tpul.compile("good", [x], [y], refs=[np.abs(data) + 1.2])
        for name in ("good_in_f32.npz", "good.mlir", "good_top_outputs.npz", "good_model_outputs.npz"):
            self.assertTrue(os.path.exists(name), name)
        np.testing.assert_allclose(np.load("good_model_outputs.npz")[y.name], np.abs(data) + 1.2, rtol=1e-6)
        self.assertEqual(y.shape, [2, 8, 6, 6])

    def test_wrong_reference_fails_naming_the_figures(self):
        data, x, y = self.absadd_graph()
        with self.assertRaises(tpul.CompareError) as caught:
            tpul.compile("wrongref", [x], [y], refs=[np.abs(data) - 1.2])
        message = str(caught.exception)
        for part in ("vs refs", y.name, "cosine", "euclidean", "needs cosine > 0.99"):
            self.assertIn(part, message)

    def test_wrong_kernel_fails_naming_the_stage(self):
        # fx_copy's kernel copies, its inference_ hook adds `add`: they disagree.
        self.use_fixture_libraries()
        tpul.init("BM1684X")
        # A shape that reads the same reversed: fx_copy's shape hook reverses the dims.
        data = np.random.default_rng(6).uniform(-1, 1, (4, 4, 4, 4)).astype(np.float32)
        x = tpul.Tensor(name="in", dtype="float32", data=data)
        y = tpul.custom([x], "fx_copy", ["float32"], params={"add": 0.75, "forbid_axis": -1})[0]
        with self.assertRaises(tpul.CompareError) as caught:
            tpul.compile("wrongkernel", [x], [y])
        self.assertIn("model run on bm1684x vs Top outputs", str(caught.exception))
        self.assertIn("NOT_SIMILAR", str(caught.exception))

    def mixed_graph(self, chip, dtype="float32"):
        """Two inputs through absadd and every built-in, like the vendor's scaleadd_mixed test."""
        tpul.init(chip)
        rng = np.random.default_rng(11)
        a = rng.uniform(-2, 2, (1, 3, 8, 8)).astype(np.float32)
        b = rng.uniform(-2, 2, (1, 3, 1, 8)).astype(np.float32)
        x = tpul.Tensor(name="x", dtype=dtype, data=a)
        y = tpul.Tensor(name="y", dtype=dtype, data=b)
        t = tpul.custom([x], "absadd", [dtype], params={"b": 0.5})[0]
        s = tpul.add(t, y)                        # broadcast over H
        m = tpul.mul(s, tpul.Scalar(1.5))
        d = tpul.sub(2, m, out_name="d")          # a scalar on the left
        r = tpul.relu(d)
        q = tpul.mul(r, r)                        # one tensor twice
        out = tpul.concat([q, x], axis=1, out_name="out")
        ref = np.maximum(2 - (np.abs(a) + 0.5 + b) * 1.5, 0)
        return x, y, out, np.concatenate([ref * ref, a], axis=1)

    def test_builtins_mixed_with_a_custom_op_match_numpy(self):
        for chip in ("BM1684X", "BM1688"):
            x, y, out, expected = self.mixed_graph(chip)
            tpul.compile(f"mixed_{chip}", [x, y], [out], refs=[expected])
            self.assertEqual(out.shape, [1, 6, 8, 8])  # known once the model is built, as custom ops' are
            got = np.load(f"mixed_{chip}_model_outputs.npz")["out"]
            np.testing.assert_allclose(got, expected, rtol=2e-6, atol=2e-6)
            with open(f"mixed_{chip}.mlir") as f:
                net = json.load(f)["net"]
            self.assertEqual([l["op"] for l in net["layers"]],
                             ["absadd", "builtin.add", "builtin.mul", "builtin.sub", "builtin.relu", "builtin.mul",
                              "builtin.concat"])
            self.assertEqual(net["layers"][3]["params"], {"scalar": 2.0, "scalar_first": 1})
            tpul.deinit()

    def test_builtins_in_every_float_mode_and_dynamic(self):
        x, y, out, expected = self.mixed_graph("BM1688")
        tpul.compile_f32("modes", [x, y], [out], refs=[expected], mode="all")
        tpul.compile("dyn", [x, y], [out], refs=[expected], dynamic=True)
        with open("dyn.mlir") as f:
            net = json.load(f)["net"]
        self.assertEqual([l.get("dynamic", False) for l in net["layers"]], [True] + [False] * 6)

    def test_a_wrong_builtin_result_is_caught(self):
        x, y, out, expected = self.mixed_graph("BM1684X")
        expected[0, 0, 0, 0] += 100
        with self.assertRaises(tpul.CompareError) as caught:
            tpul.compile("wrongmixed", [x, y], [out], refs=[expected])
        self.assertIn("tensor 'out'", str(caught.exception))

    def test_integer_tensors_keep_their_dtype_in_every_mode(self):
        # fx_copy copies any dtype; its inference_ adds `add` (0 here). A uint8 input stays
        # uint8 when a quantize mode turns the float tensors into fp16.
        self.use_fixture_libraries()
        tpul.init("BM1684X")
        data = np.random.default_rng(8).integers(0, 256, (3, 5, 3), dtype=np.uint8)
        x = tpul.Tensor(name="in", dtype="uint8", data=data).quantization(scale=1.0, zero_point=0)
        y = tpul.custom([x], "fx_copy", ["uint8"], params={"add": 0.0, "forbid_axis": -1})[0]
        tpul.compile("u8", [x], [y], refs=[data.astype(np.float32)])
        np.testing.assert_array_equal(np.load("u8_model_outputs.npz")[y.name], data)
        tpul.compile_f32("u8modes", [x], [y], mode="f16")
        with open("u8.mlir") as f:
            net = json.load(f)["net"]
        self.assertEqual(net["inputs"][0]["dtype"], "uint8")
        self.assertEqual(net["layers"][0]["out_dtypes"], ["uint8"])
        mode = dtypes.with_float_mode({"inputs": [{"dtype": "uint8"}, {"dtype": "fp32"}],
                                       "layers": [{"out_dtypes": ["fp32", "int8"]}]}, "fp16")
        self.assertEqual([t["dtype"] for t in mode["inputs"]], ["uint8", "fp16"])
        self.assertEqual(mode["layers"][0]["out_dtypes"], ["fp16", "int8"])
        with self.assertRaises(ValueError):
            dtypes.to_storage(np.array([300.0]), "uint8")

    def test_an_int_shape_is_a_1d_tensor(self):
        tpul.init("BM1684X")
        self.assertEqual(tpul.Tensor(name="v", dtype="float32", shape=6).shape, [6])
        self.assertEqual(tpul.Tensor(name="n", dtype="float32", shape=np.int64(3)).shape, [3])
        data = np.arange(5, dtype=np.float32)
        self.assertEqual(tpul.Tensor(name="d", dtype="float32", shape=5, data=data).shape, [5])
        with self.assertRaisesRegex(tpul.TpuLangError, r"shape \[4\] but its data has shape \[5\]"):
            tpul.Tensor(name="bad", dtype="float32", shape=4, data=data)
        x = tpul.Tensor(name="x", dtype="float32", shape=8, data=np.linspace(-1, 1, 8, dtype=np.float32))
        y = tpul.custom([x], "absadd", ["float32"], params={"b": 0.5}, out_names=["y"])[0]
        tpul.compile("oned", [x], [y], refs=[np.abs(x.data) + 0.5])
        self.assertEqual(y.shape, [8])

    def test_refs_with_extra_entries_as_the_regression_script_stores_them(self):
        data, x, y = self.absadd_graph()
        expected = np.abs(data) + 1.2
        # <name>_f32 beside each output, as the vendor's regression script keys its references.
        refs = {y.name: expected, y.name + "_f32": expected, "unrelated": np.zeros(3)}
        tpul.compile("extra", [x], [y], refs=refs)
        tpul.compile_f32("extra32", [x], [y], refs=refs)
        np.savez("refs.npz", **refs)
        tpul.compile("fromnpz", [x], [y], refs=np.load("refs.npz"))
        with self.assertRaises(tpul.CompareError) as caught:
            tpul.compile("missing", [x], [y], refs={y.name + "_f32": expected})
        self.assertIn(f"refs has no entry for output(s) '{y.name}'", str(caught.exception))
        with self.assertRaises(tpul.CompareError):  # the entry that names the output is still checked
            tpul.compile("wrongextra", [x], [y], refs={y.name: -expected, y.name + "_f32": expected})

    def test_reshape_matches_numpy(self):
        for chip in ("BM1684X", "BM1688"):
            tpul.init(chip)
            a = np.random.default_rng(12).uniform(-2, 2, (2, 3, 4, 5)).astype(np.float32)
            x = tpul.Tensor(name="x", dtype="float32", data=a)
            t = tpul.custom([x], "absadd", ["float32"], params={"b": 0.5})[0]
            r = tpul.reshape(t, [6, -1], out_name="r")
            flat = tpul.reshape(tpul.relu(tpul.sub(r, 1.0)), 120, out_name="flat")
            expected = np.maximum((np.abs(a) + 0.5).reshape(6, -1) - 1.0, 0).reshape(120)
            tpul.compile(f"reshape_{chip}", [x], [r, flat], refs=[(np.abs(a) + 0.5).reshape(6, 20), expected])
            self.assertEqual(r.shape, [6, 20])
            self.assertEqual(flat.shape, [120])
            got = np.load(f"reshape_{chip}_model_outputs.npz")
            np.testing.assert_array_equal(got["r"], (np.abs(a) + 0.5).reshape(6, 20))
            np.testing.assert_array_equal(got["flat"], expected)
            tpul.deinit()
        tpul.init("BM1684X")
        y = tpul.Tensor(name="y", dtype="float32", shape=[2, 6])
        self.assertEqual(tpul.reshape(y, [3, -1]).shape, [3, 4])
        for bad, message in (([5, -1], "do not fill"), ([4, 4], "holds 16 elements"), ([-1, -1], "at most one"),
                             ([], "non-empty list")):
            with self.assertRaises(tpul.TpuLangError) as caught:
                tpul.reshape(y, bad)
            self.assertIn(message, str(caught.exception))
        with self.assertRaisesRegex(tpul.TpuLangError, "tpul.conv3d is not supported by this SDK's TpuLang yet"):
            tpul.conv3d(y, y)

    def test_builtin_errors(self):
        tpul.init("BM1684X")
        x = tpul.Tensor(name="x", dtype="float32", shape=[2, 3])
        z = tpul.Tensor(name="z", dtype="float32", shape=[4, 3])
        h = tpul.Tensor(name="h", dtype="float16", shape=[2, 3])
        cases = [
            (lambda: tpul.add(x, z), "add: shapes [2, 3] and [4, 3] do not broadcast"),
            (lambda: tpul.mul(x, h), "differ in dtype"),
            (lambda: tpul.sub(1, 2), "at least one operand must be a tpul.Tensor"),
            (lambda: tpul.add(x, "1"), "expected a tpul.Tensor, a tpul.Scalar or a number"),
            (lambda: tpul.add(x, x, scale=[1.0, 1.0, 1.0]), "quantized"),
            (lambda: tpul.add(x, x, out_dtype="float16"), "out_dtype float16 differs"),
            (lambda: tpul.concat([x, z], axis=1), "only axis 1 may differ"),
            (lambda: tpul.concat([x, x], axis=2), "axis 2 is out of range"),
            (lambda: tpul.concat([]), "non-empty list"),
            (lambda: tpul.relu([x]), "is not a tpul.Tensor"),
        ]
        for make, message in cases:
            with self.assertRaises(tpul.TpuLangError) as caught:
                make()
            self.assertIn(message, str(caught.exception))
        self.assertEqual(tpul.concat([x, z], axis=0).shape, [6, 3])

    def test_parameter_typing(self):
        tpul.init("BM1688")
        x = tpul.Tensor(name="in", dtype="float32", shape=[1, 3, 4, 4])
        ok = tpul.custom([x], "anyop", ["float32"], params={"i": 2, "f": 2.5, "t": True, "li": [1, 2],
                                                            "lf": [1.0, 2.5]})
        self.assertEqual(ok[0].producer.params, {"i": 2, "f": 2.5, "t": 1, "li": [1, 2], "lf": [1.0, 2.5]})
        self.assertEqual(list(ok[0].producer.params), ["i", "f", "t", "li", "lf"])  # the order given
        with self.assertRaisesRegex(ValueError, "'m' mixes types"):
            tpul.custom([x], "anyop", ["float32"], params={"m": [1, 2.5]})
        with self.assertRaisesRegex(TypeError, "'s' has type str"):
            tpul.custom([x], "anyop", ["float32"], params={"s": "text"})
        with self.assertRaisesRegex(ValueError, "dtype 'float64': expected one of float32"):
            tpul.custom([x], "anyop", ["float64"])
        tpul.deinit()
        with self.assertRaisesRegex(tpul.TpuLangError, "not initialised"):
            tpul.Tensor(name="late", shape=[1])
        with self.assertRaisesRegex(ValueError, "BM1684X and BM1688"):
            tpul.init("BM1690")

    def test_model_deploy_runs_and_checks_each_mode(self):
        data, x, y = self.absadd_graph()
        tpul.compile("dep", [x], [y])
        for mode in ("F32", "F16", "BF16"):
            with redirect_stdout(io.StringIO()) as out:
                status = deploy.main(["--mlir", "dep.mlir", "--model", f"dep_{mode}.bmodel", "--quantize", mode,
                                      "--chip", "BM1684X", "--dynamic"])
            self.assertEqual(status, 0, out.getvalue())
            self.assertIn("all outputs match", out.getvalue())
            self.assertEqual(tpu_sdk.model_inputs(f"dep_{mode}.bmodel")["in"][1], dtypes.QUANTIZE[mode])
        with open("vendor.mlir", "w") as f:
            f.write('module attributes {module.chip = "bm1684x"} {}')
        self.assertEqual(deploy.main(["--mlir", "vendor.mlir", "--model", "v.bmodel", "--chip", "BM1684X"]), 2)


class HostOps(InTempDir):
    """tpul.custom host ops: ap.<name> (the sample ap.topk) and callback.<name> (tests/runtime/model/fixtures/
    mf_callback.cpp: "affine" is 2x + 1)."""

    def test_refusals_name_the_op(self):
        tpul.init("BM1684X")
        x = tpul.Tensor(name="x", dtype="float32", shape=[2, 8])
        cases = [
            (lambda: tpul.custom([x], "cpu.topk", ["float32"]), "older prefix of AP (host CPU) ops; write 'ap.topk'"),
            (lambda: tpul.custom([x], "callback.affine", ["float32"], out_shapes=[[2, 8]]), "needs library="),
            (lambda: tpul.custom([x], "callback.affine", ["float32"], library="l.so"), "out_shapes="),
            (lambda: tpul.custom([x], "callback.affine", ["float32"], library="l.so", out_shapes=[[2], [3]]),
             "2 out_shapes for 1 out_dtypes"),
            (lambda: tpul.custom([x], "ap.topk", ["float32"], library="l.so"), "are for callback.<name> host ops"),
        ]
        for make, message in cases:
            with self.assertRaises(tpul.TpuLangError) as caught:
                make()
            self.assertIn(message, str(caught.exception))

    def test_ap_op_between_tpu_layers_matches_numpy(self):
        tpul.init("BM1688")
        data = np.random.default_rng(9).uniform(-4, 4, (3, 40)).astype(np.float32)
        x = tpul.Tensor(name="x", dtype="float32", data=data)
        t = tpul.custom([x], "absadd", ["float32"], params={"b": 0.5})[0]
        k = tpul.custom([t], "ap.topk", ["float32"], params={"axis": 1, "K": 6})[0]
        y = tpul.relu(tpul.sub(k, 2.0))
        ref = np.maximum(-np.sort(-(np.abs(data) + 0.5), axis=1)[:, :6] - 2.0, 0)
        tpul.compile("mixed_ap", [x], [y], refs=[ref])
        np.testing.assert_array_equal(np.load("mixed_ap_model_outputs.npz")[y.name], ref)
        self.assertEqual(y.shape, [3, 6])

    def test_ap_op_refuses_float16(self):
        tpul.init("BM1684X")
        x = tpul.Tensor(name="x", dtype="float32", data=np.ones((2, 8), np.float32))
        y = tpul.custom([x], "ap.topk", ["float32"], params={"axis": 1, "K": 3})[0]
        tpul.compile("ap16", [x], [y])
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as err:
            status = deploy.main(["--mlir", "ap16.mlir", "--model", "ap16.bmodel", "--quantize", "F16",
                                  "--chip", "BM1684X"])
        self.assertEqual(status, 1)
        self.assertIn("op ap.topk): tensor 'x' is fp16; AP ops read and write float32 only", err.getvalue())

    def test_tpu_ap_and_callback_layers_match_numpy_on_both_chips(self):
        library = os.environ.get("TPU_TEST_CALLBACK_LIB", "")
        if not os.path.exists(library):
            self.skipTest(f"no callback library {library!r}")
        data = np.random.default_rng(12).uniform(-4, 4, (2, 3, 4, 30)).astype(np.float32)
        top = -np.sort(-(np.abs(data) + np.float32(0.25)), axis=3)[..., :5]
        ref = np.maximum((np.float32(2) * top + np.float32(1)) - np.float32(3), 0)
        for chip in ("BM1684X", "BM1688"):
            with self.subTest(chip=chip):
                tpul.init(chip)
                x = tpul.Tensor(name="x", dtype="float32", data=data)
                t = tpul.custom([x], "absadd", ["float32"], params={"b": 0.25})[0]  # TPU
                k = tpul.custom([t], "ap.topk", ["float32"], params={"axis": 3, "K": 5})[0]  # host: AP
                c = tpul.custom([k], "callback.affine", ["float32"], library=library,
                                out_shapes=[[2, 3, 4, 5]])[0]  # host: Callback
                y = tpul.relu(tpul.sub(c, 3.0))  # TPU
                tpul.compile("mixed3", [x], [y], refs=[ref])
                np.testing.assert_array_equal(np.load("mixed3_model_outputs.npz")[y.name], ref)
                tpul.deinit()

    def test_callback_op(self):
        library = os.environ.get("TPU_TEST_CALLBACK_LIB", "")
        if not os.path.exists(library):
            self.skipTest(f"no callback library {library!r}")
        tpul.init("BM1684X")
        data = np.random.default_rng(4).uniform(-4, 4, (2, 3, 5)).astype(np.float32)
        x = tpul.Tensor(name="x", dtype="float32", data=data)
        y = tpul.custom([x], "callback.affine", ["float32"], library=library, out_shapes=[[2, 3, 5]])[0]
        tpul.compile("cb", [x], [y], refs=[np.float32(2) * data + np.float32(1)])
        np.testing.assert_array_equal(np.load("cb_model_outputs.npz")[y.name], np.float32(2) * data + np.float32(1))


class NpzTool(InTempDir):
    def test_compare_exit_status(self):
        np.savez("a.npz", t=np.array([1.0, 2.0, 3.0]))
        np.savez("b.npz", t=np.array([1.0, 2.0, 3.0000001]))
        np.savez("c.npz", t=np.array([3.0, -2.0, 1.0]))
        with redirect_stdout(io.StringIO()):
            self.assertEqual(npz_tool.main(["compare", "a.npz", "b.npz"]), 0)
            self.assertEqual(npz_tool.main(["compare", "a.npz", "c.npz"]), 1)
            self.assertEqual(npz_tool.main(["compare", "a.npz", "c.npz", "--tolerance", "bad"]), 2)


if __name__ == "__main__":
    unittest.main()
