"""ONNX string tensors (docs/onnx.md, "String tensors"), against numpy.

The device holds no text: a string graph input read by Casts is a text input of the model (the caller's strings
are read as numbers of the type the Casts ask for), and a Cast to string that is a graph output is a text output
(the numbers come back as text). numpy is the reference for both directions, as it is for ONNX's own Cast
(onnx.reference and the node tests' expected outputs): `values.astype(str)` for numbers to text, and
`strings.astype(np.float32)` (or the integer type) for text to numbers. The values cover what the two forms
must get right: shortest round-trip digits, numpy's switch between positional and scientific layout at 1e-4
and 1e16 (decided on the value, not on its digits), subnormals, signed zeros, infinities and NaN.

Environment: as test_onnx.py (tests/CMakeLists.txt sets PYTHONPATH, TPU_TEST_SAMPLE_ROOT, TPU_MODEL_TOOL).
"""
import os
import subprocess
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

import tpu_sdk
from test_onnx import CHIPS, libraries

NUMPY_TYPES = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16, TensorProto.INT32: np.int32,
               TensorProto.INT64: np.int64, TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8,
               TensorProto.INT16: np.int16, TensorProto.UINT16: np.uint16}


def special_floats(dtype):
    """Values on the edges of numpy's text forms, in `dtype`."""
    info = np.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 0.5, 3.0, 1e-4, 1.0001e-4, 9.999e-5, 123456789.0, 65504.0,
              float(info.max), float(-info.max), float(info.tiny), float(info.tiny) / 4, np.inf, -np.inf, np.nan]
    if dtype == np.float32:
        values += [1e16, 9.9999998e15, 1.5e16, 1e-45, 3e38, 1e-7, 2.0 ** 24 + 2]
    return np.array(values, dtype=np.float64).astype(dtype)


def random_floats(rng, dtype, count):
    """Values spread over the whole exponent range of `dtype` (normal and subnormal)."""
    bits = rng.integers(0, 2 ** (8 * np.dtype(dtype).itemsize), count, dtype=np.uint64)
    values = bits.astype({4: np.uint32, 2: np.uint16}[np.dtype(dtype).itemsize]).view(dtype)
    return values[np.isfinite(values)]


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class StringTensors(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def save(self, nodes, inputs, outputs):
        graph = helper.make_graph(nodes, "g", inputs, outputs)
        path = os.path.join(self.dir.name, "m.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)]), path)
        return path

    def build(self, path, chip, **options):
        model = os.path.join(self.dir.name, f"{chip}.tpumodel")
        tpu_sdk.build_onnx(path, chip, model, **{"reference": False, **options, **libraries(chip)})
        return model

    def cast_model(self, from_type, to_type, count):
        return self.save([helper.make_node("Cast", ["x"], ["y"], to=to_type, name="c")],
                         [helper.make_tensor_value_info("x", from_type, [count])],
                         [helper.make_tensor_value_info("y", to_type, [count])])

    def test_numbers_to_text_as_numpy_writes_them(self):
        rng = np.random.default_rng(3)
        for elem_type in (TensorProto.FLOAT, TensorProto.FLOAT16):
            dtype = NUMPY_TYPES[elem_type]
            x = np.concatenate([special_floats(dtype), random_floats(rng, dtype, 400)])
            path = self.cast_model(elem_type, TensorProto.STRING, len(x))
            for chip in CHIPS:
                with self.subTest(dtype=dtype.__name__, chip=chip):
                    outputs, _ = tpu_sdk.run_model(self.build(path, chip), {"x": x})
                    got, want = outputs["y"], x.astype(str)
                    bad = np.flatnonzero(got != want)
                    self.assertEqual(len(bad), 0, f"{len(bad)} differ, first {x[bad[:1]]}: {got[bad[:1]]} vs {want[bad[:1]]}")
        for elem_type in (TensorProto.INT32, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT64):
            dtype = NUMPY_TYPES[elem_type]
            low, high = (np.iinfo(np.int32) if dtype == np.int64 else np.iinfo(dtype)).min, \
                (np.iinfo(np.int32) if dtype == np.int64 else np.iinfo(dtype)).max
            x = np.concatenate([[low, high, 0, -1 if low < 0 else 1], rng.integers(low, high, 60)]).astype(dtype)
            outputs, _ = tpu_sdk.run_model(self.build(self.cast_model(elem_type, TensorProto.STRING, len(x)),
                                                      "bm1684x"), {"x": x})
            np.testing.assert_array_equal(outputs["y"], x.astype(str), err_msg=dtype.__name__)

    def test_text_to_numbers_as_numpy_reads_them(self):
        rng = np.random.default_rng(4)
        x32 = np.concatenate([special_floats(np.float32), random_floats(rng, np.float32, 300)])
        written = list(x32.astype(str)) + [" 1.5 ", "+INF", "-inf", "NaN", "Infinity", "-infinity", "1e40",
                                           "-1e40", "1e-50", "1e-40", ".5", "5.", "+2", "-0", "1E3", "0.1"]
        strings = np.array(written, dtype=object)  # what onnx.numpy_helper gives for a string tensor
        for elem_type in (TensorProto.FLOAT, TensorProto.FLOAT16):
            dtype = NUMPY_TYPES[elem_type]
            path = self.cast_model(TensorProto.STRING, elem_type, len(strings))
            want = strings.astype(str).astype(dtype)
            for chip in CHIPS:
                with self.subTest(dtype=dtype.__name__, chip=chip):
                    outputs, _ = tpu_sdk.run_model(self.build(path, chip), {"x": strings})
                    got = outputs["y"]
                    same = (got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")) | \
                        (np.isnan(got) & np.isnan(want))
                    bad = np.flatnonzero(~same)
                    self.assertEqual(len(bad), 0, f"{strings[bad[:1]]}: {got[bad[:1]]} vs {want[bad[:1]]}")
        integers = np.array(["0", "-2147483648", "2147483647", " 42 ", "+7", "-0"])
        path = self.cast_model(TensorProto.STRING, TensorProto.INT64, len(integers))
        outputs, _ = tpu_sdk.run_model(self.build(path, "bm1688"), {"x": integers})
        np.testing.assert_array_equal(outputs["y"].astype(np.int64), integers.astype(np.int64))

    def test_text_that_is_not_a_number_of_the_type_is_refused_naming_it(self):
        cases = [(TensorProto.FLOAT, ["1.5", "two"], "element 1 is 'two', which is not a number"),
                 (TensorProto.FLOAT, ["--1", "0"], "element 0 is '--1', which is not a number"),
                 (TensorProto.FLOAT, ["nan(1)", "0"], "element 0 is 'nan(1)'"),
                 (TensorProto.INT32, ["3", "3.5"], "element 1 is '3.5', which is not an integer int32 holds"),
                 (TensorProto.UINT8, ["256", "1"], "element 0 is '256', which is not an integer uint8 holds"),
                 (TensorProto.INT64, ["2147483648", "1"], "element 0 is '2147483648', which is not an integer int32")]
        for to_type, strings, fragment in cases:
            with self.subTest(strings=strings):
                model = self.build(self.cast_model(TensorProto.STRING, to_type, 2), "bm1684x")
                with self.assertRaises(tpu_sdk.Error) as caught:
                    tpu_sdk.run_model(model, {"x": np.array(strings)})
                self.assertIn("text input 'x'", str(caught.exception))
                self.assertIn(fragment, str(caught.exception))
        model = self.build(self.cast_model(TensorProto.STRING, TensorProto.FLOAT, 2), "bm1684x")
        with self.assertRaises(tpu_sdk.Error) as caught:  # an object array must hold str
            tpu_sdk.run_model(model, {"x": np.array(["1", 2], dtype=object)})
        self.assertIn("must hold str only, not int", str(caught.exception))
        with self.assertRaises(tpu_sdk.Error) as caught:
            tpu_sdk.run_model(model, {"x": np.array(["1", "2", "3"])})
        self.assertIn("shape [3]", str(caught.exception))

    def test_a_text_input_also_takes_its_numbers(self):
        model = self.build(self.cast_model(TensorProto.STRING, TensorProto.FLOAT, 3), "bm1684x")
        x = np.array([1.5, -2.0, 0.25], np.float32)
        outputs, _ = tpu_sdk.run_model(model, {"x": x})
        np.testing.assert_array_equal(outputs["y"], x)

    def test_round_trip_and_command_line(self):
        # string -> float16 -> string: numpy's text of the float16 values; through tpu_model's .npz files
        nodes = [helper.make_node("Cast", ["s"], ["h"], to=TensorProto.FLOAT16),
                 helper.make_node("Mul", ["h", "h"], ["sq"]),
                 helper.make_node("Cast", ["sq"], ["t"], to=TensorProto.STRING)]
        path = self.save(nodes, [helper.make_tensor_value_info("s", TensorProto.STRING, [2, 3])],
                         [helper.make_tensor_value_info("t", TensorProto.STRING, [2, 3]),
                          helper.make_tensor_value_info("sq", TensorProto.FLOAT16, [2, 3])])
        strings = np.array([["0.1", "2", "-3.5"], ["1e-3", "250", "nan"]])
        h = strings.astype(np.float16)
        for chip in CHIPS:
            model = self.build(path, chip)
            inputs, out = os.path.join(self.dir.name, "in.npz"), os.path.join(self.dir.name, "out.npz")
            np.savez(inputs, s=strings)
            done = subprocess.run([os.environ["TPU_MODEL_TOOL"], "run", model, "--input", inputs, "--output", out],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            with np.load(out) as written:
                self.assertEqual(written["t"].dtype.kind, "U")
                np.testing.assert_array_equal(written["t"], (h * h).astype(str))
                np.testing.assert_array_equal(written["sq"], h * h)

    def test_compare_reads_a_text_output_as_its_numbers(self):
        path = self.cast_model(TensorProto.FLOAT, TensorProto.STRING, 4)
        model = self.build(path, "bm1684x", reference=True, embed_reference=True)
        done = subprocess.run([os.environ["TPU_MODEL_TOOL"], "run", model, "--compare-stored"], capture_output=True,
                              text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        expected = os.path.join(self.dir.name, "expected.npz")
        np.savez(expected, y=np.array(["1.0", "2.0", "x", "4.0"]))
        done = subprocess.run([os.environ["TPU_MODEL_TOOL"], "run", model, "--input", self.inputs_npz([1, 2, 3, 4]),
                               "--compare", expected], capture_output=True, text=True)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("element 2 is 'x', which is not a number", done.stdout + done.stderr)

    def inputs_npz(self, values):
        path = os.path.join(self.dir.name, "x.npz")
        np.savez(path, x=np.array(values, np.float32))
        return path

    def refused(self, nodes, inputs, outputs, *fragments):
        path = self.save(nodes, inputs, outputs)
        with self.assertRaises(tpu_sdk.Error) as caught:
            self.build(path, "bm1684x")
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))

    def test_what_string_tensors_cannot_do_is_refused_naming_the_node(self):
        s = helper.make_tensor_value_info("s", TensorProto.STRING, [3])
        f = helper.make_tensor_value_info("f", TensorProto.FLOAT, [3])
        self.refused([helper.make_node("Identity", ["s"], ["f"], name="id")],
                     [s], [helper.make_tensor_value_info("f", TensorProto.STRING, [3])],
                     "node 'id' (Identity)", "input 0 ('s') is a string tensor",
                     "can only be read by Cast or CastLike")
        self.refused([helper.make_node("Cast", ["s"], ["a"], to=TensorProto.FLOAT, name="a"),
                      helper.make_node("Cast", ["s"], ["b"], to=TensorProto.INT32, name="b")],
                     [s], [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3]),
                           helper.make_tensor_value_info("b", TensorProto.INT32, [3])],
                     "node 'b' (Cast)", "casts string input 's' to int32, but an earlier node casts it to float")
        self.refused([helper.make_node("Cast", ["s"], ["b"], to=TensorProto.BOOL, name="c")],
                     [s], [helper.make_tensor_value_info("b", TensorProto.BOOL, [3])],
                     "node 'c' (Cast)", "a cast of string input 's' to bool is not supported")
        self.refused([helper.make_node("Cast", ["f"], ["t"], to=TensorProto.STRING, name="c"),
                      helper.make_node("Cast", ["t"], ["g"], to=TensorProto.FLOAT, name="back")],
                     [f], [helper.make_tensor_value_info("g", TensorProto.FLOAT, [3])],
                     "node 'back' (Cast)", "input 0 ('t') is the string result of a Cast",
                     "can only be a graph output")
        self.refused([helper.make_node("Cast", ["b"], ["t"], to=TensorProto.STRING, name="c")],
                     [helper.make_tensor_value_info("b", TensorProto.BOOL, [3])],
                     [helper.make_tensor_value_info("t", TensorProto.STRING, [3])],
                     "node 'c' (Cast)", "a cast from bool to string is not supported")


if __name__ == "__main__":
    unittest.main()
