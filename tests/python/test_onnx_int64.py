"""int64 / uint64 results the device holds in 32 bits (docs/onnx.md, "int64 results"), against numpy's int64.

The device holds int64 as int32 (uint64 as uint32). After an int64 Add, Sub, Mul, Neg, Abs or a Cast from
a float, the importer adds a check layer; a run whose true (numpy int64) result leaves the held type fails,
naming the node and the first element outside (numpy's first out-of-range index), and a run within the range
gives numpy's values.

Environment: as test_onnx.py (tests/CMakeLists.txt sets PYTHONPATH, TPU_TEST_SAMPLE_ROOT).
"""
import os
import re
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

import tpu_sdk
from test_onnx import CHIPS, libraries

INT32 = np.iinfo(np.int32)


def first_outside(true, low, high):
    """numpy's index of the first element outside [low, high], as the run prints it."""
    bad = np.argwhere((true < low) | (true > high))
    return None if len(bad) == 0 else ", ".join(str(int(v)) for v in bad[0])


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class Int64Results(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def build(self, node, inputs, out_type=TensorProto.INT64, out_shape=(3, 4)):
        graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", out_type, list(out_shape))])
        path = os.path.join(self.dir.name, "m.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        models = {}
        for chip in CHIPS:
            models[chip] = os.path.join(self.dir.name, f"{chip}.tpumodel")
            tpu_sdk.build_onnx(path, chip, models[chip], reference=False, **libraries(chip))
        return models

    def expect(self, models, feeds, true, low=INT32.min, high=INT32.max, what="int64 result left int32's range"):
        """The run gives `true` when it lies within [low, high], else fails naming node 'n' and the element."""
        where = first_outside(true, low, high)
        for chip, model in models.items():
            with self.subTest(chip=chip, outside=where):
                if where is None:
                    outputs, _ = tpu_sdk.run_model(model, feeds)
                    np.testing.assert_array_equal(outputs["y"].astype(np.int64), true)
                    continue
                with self.assertRaises(tpu_sdk.Error) as caught:
                    tpu_sdk.run_model(model, feeds)
                message = str(caught.exception)
                self.assertIn("node 'n'", message)
                self.assertIn(what, message)
                self.assertIn(f"first at element [{where}]", message)
                count = int(re.search(r"\((\d+) of \d+ elements", message).group(1))
                self.assertEqual(count, int(np.sum((true < low) | (true > high))))

    def test_binary_arithmetic_against_numpys_int64(self):
        rng = np.random.default_rng(5)
        ops = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}
        for op, numpy_op in ops.items():
            models = self.build(helper.make_node(op, ["a", "b"], ["y"], name="n"),
                                [helper.make_tensor_value_info("a", TensorProto.INT64, [3, 4]),
                                 helper.make_tensor_value_info("b", TensorProto.INT64, [4])])
            small = (rng.integers(-46340, 46341, (3, 4)), rng.integers(-46340, 46341, 4))  # |a b| < 2^31
            edge = (np.full((3, 4), INT32.max - 3), np.array([1, 2, 3, 4]))  # Add: the last column leaves
            wide = (rng.integers(INT32.min, INT32.max, (3, 4), endpoint=True),
                    rng.integers(INT32.min, INT32.max, 4, endpoint=True))
            for a, b in (small, edge, wide):
                with self.subTest(op=op):
                    a, b = a.astype(np.int64), b.astype(np.int64)
                    self.expect(models, {"a": a, "b": b}, numpy_op(a, b))

    def test_neg_and_abs_of_int32_min(self):
        for op, numpy_op in (("Neg", np.negative), ("Abs", np.abs)):
            models = self.build(helper.make_node(op, ["a"], ["y"], name="n"),
                                [helper.make_tensor_value_info("a", TensorProto.INT64, [3, 4])])
            a = np.arange(-6, 6, dtype=np.int64).reshape(3, 4)
            self.expect(models, {"a": a}, numpy_op(a))
            a[2, 1] = INT32.min  # its negation is 2^31
            self.expect(models, {"a": a}, numpy_op(a))

    def test_uint64_add_beyond_uint32(self):
        models = self.build(helper.make_node("Add", ["a", "b"], ["y"], name="n"),
                            [helper.make_tensor_value_info("a", TensorProto.UINT64, [3, 4]),
                             helper.make_tensor_value_info("b", TensorProto.UINT64, [4])], TensorProto.UINT64)
        a = np.full((3, 4), 2**32 - 10, dtype=np.uint64)
        for b in (np.array([1, 2, 3, 4], dtype=np.uint64), np.array([1, 2, 30, 4], dtype=np.uint64)):
            self.expect(models, {"a": a, "b": b}, (a + b).astype(np.int64), 0, 2**32 - 1,
                        "uint64 result left uint32's range")

    def test_cast_from_float(self):
        models = self.build(helper.make_node("Cast", ["x"], ["y"], name="n", to=TensorProto.INT64),
                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])])
        x = np.linspace(-2.0e9, 2.0e9, 12, dtype=np.float32).reshape(3, 4)
        self.expect(models, {"x": x}, np.trunc(x).astype(np.int64), what="a value cast to int64 lies beyond")
        x[1, 2], x[2, 3] = 2.0**31, -2.0**31 - 256  # the first beyond int32's max, then below its min
        self.expect(models, {"x": x}, np.trunc(x.astype(np.float64)).astype(np.int64),
                    what="a value cast to int64 lies beyond")


if __name__ == "__main__":
    unittest.main()
