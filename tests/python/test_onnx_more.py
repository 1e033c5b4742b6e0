"""The ONNX importer's later op families (docs/onnx.md), against independent references.

- Shape computations folded at import: PyTorch exports with `x.view(x.size(0), -1)`, `torch.arange(n)`
  and `new_zeros` (dynamic_axes, fixed by input_shapes), compared with PyTorch; hand-made Shape (start,
  end), Size, ConstantOfShape, Range and integer arithmetic over them, checked on the imported net
  description (no layer left for them) and on the run against numpy.
- Element-wise math (Floor, Ceil, Round half to even, IsNaN, IsInf, Mod, Sin, Cos), ArgMax / ArgMin,
  Pad, Tile, Trilu, DepthToSpace, SpaceToDepth, InstanceNormalization: against numpy formulas written
  here from ONNX's definitions, on both chips, in fp32 and fp16 where ONNX allows.
- Every refusal of these ops with its message.

Environment: as test_onnx.py (tests/CMakeLists.txt sets PYTHONPATH, TPU_TEST_SAMPLE_ROOT).
"""
import json
import os
import subprocess
import warnings
import unittest

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import tpu_sdk
from test_onnx import CHIPS, OnnxCase, make_model, tensor

F16 = TensorProto.FLOAT16


def const(name, values, elem_type=TensorProto.INT64):
    array = np.array(values, dtype={TensorProto.INT64: np.int64, TensorProto.FLOAT: np.float32,
                                     TensorProto.INT32: np.int32}[elem_type])
    return numpy_helper.from_array(array, name)


class OnnxMoreCase(OnnxCase):
    def run_graph(self, model, inputs, chips=CHIPS, input_shapes=None):
        """The model's outputs on each chip: {chip: {name: array}}."""
        path = self.save(model)
        results = {}
        for chip in chips:
            model_file = os.path.join(self.dir.name, f"{chip}.tpumodel")
            tpu_sdk.build_onnx(path, chip, model_file, reference=False, input_shapes=input_shapes)
            results[chip] = tpu_sdk.run_model(model_file, inputs)[0]
        return results

    def layer_ops(self, model, input_shapes=None):
        net = json.loads(tpu_sdk.import_onnx(self.save(model, "net.onnx"), input_shapes=input_shapes)[0])
        return [layer["op"] for layer in net["layers"]]


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class ShapeFolding(OnnxMoreCase):
    def export_dynamic_reshape(self):
        import torch

        class Model(torch.nn.Module):
            def forward(self, x):
                y = x.view(x.size(0), -1)  # Shape, Gather, Unsqueeze, Concat -> Reshape
                z = torch.arange(y.size(1), dtype=torch.float32)  # Shape, Gather, Cast -> Range
                ones = y.new_zeros(y.size(0), 1) + 1  # ConstantOfShape
                return (y * 2 + z) * ones

        x = torch.randn(3, 4, 5)
        path = os.path.join(self.dir.name, "dynamic.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(Model(), (x,), path, opset_version=17, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "batch"}})
        with torch.no_grad():
            return path, x.numpy(), Model()(x).numpy()

    def test_pytorch_dynamic_reshape_gives_pytorchs_result(self):
        path, x, expected = self.export_dynamic_reshape()
        for chip in CHIPS:
            model_file = os.path.join(self.dir.name, f"{chip}.tpumodel")
            info = tpu_sdk.build_onnx(path, chip, model_file, reference=False, input_shapes={"x": [3, 4, 5]})
            layers = [layer["op"] for layer in json.loads(info["net_json"])["layers"]]
            self.assertNotIn("builtin.gather", layers)  # the shape computations became constants
            outputs, _ = tpu_sdk.run_model(model_file, {"x": x})
            np.testing.assert_array_equal(outputs["y"], expected)  # x * 2 + integers: exact in fp32

    def test_dynamic_export_without_a_shape_names_the_option(self):
        path, _, _ = self.export_dynamic_reshape()
        with self.assertRaises(tpu_sdk.Error) as caught:
            tpu_sdk.import_onnx(path)
        self.assertIn("graph input 'x' has the shape [-1, 4, 5]", str(caught.exception))
        self.assertIn("--input-shape", str(caught.exception))

    def test_tpu_model_input_shape_option(self):
        path, x, expected = self.export_dynamic_reshape()
        tool = os.environ.get("TPU_MODEL_TOOL")
        if not tool:
            self.skipTest("TPU_MODEL_TOOL is not set")
        model_file = os.path.join(self.dir.name, "cli.tpumodel")
        subprocess.run([tool, "build", path, "--chip", "bm1684x", "-o", model_file, "--input-shape", "x=3,4,5"],
                       check=True, capture_output=True)
        outputs, _ = tpu_sdk.run_model(model_file, {"x": x})
        np.testing.assert_array_equal(outputs["y"], expected)
        bad = subprocess.run([tool, "build", path, "--chip", "bm1684x", "-o", model_file, "--input-shape", "x=3,a"],
                             capture_output=True, text=True)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("--input-shape 'x=3,a': dim 'a' is not a size", bad.stderr)

    def test_input_shape_refusals(self):
        path, _, _ = self.export_dynamic_reshape()
        for shapes, fragment in [({"y": [3, 4, 5]}, "the graph has no input 'y' (its inputs: x)"),
                                 ({"x": [3, 20]}, "the input has 3 dims, not 2"),
                                 ({"x": [3, 4, 6]}, "dim 2 is fixed to 5 by the model")]:
            with self.assertRaises(tpu_sdk.Error) as caught:
                tpu_sdk.import_onnx(path, input_shapes=shapes)
            self.assertIn(fragment, str(caught.exception))

    def test_shape_start_end_size_and_integer_arithmetic_fold(self):
        # y = reshape(x, [shape(x)[1:] ..., size(x) / (4 * 5) ]) written with Shape(start=1), Size, Div, Concat.
        nodes = [helper.make_node("Shape", ["x"], ["tail"], start=1),  # [4, 5]
                 helper.make_node("Size", ["x"], ["n"])]  # 60
        nodes += [helper.make_node("Div", ["n", "twenty"], ["q"]),  # 3
                  helper.make_node("Unsqueeze", ["q", "zero"], ["q1"]),
                  helper.make_node("Concat", ["tail", "q1"], ["shape"], axis=0),  # [4, 5, 3]
                  helper.make_node("Reshape", ["x", "shape"], ["y"])]
        model = make_model(nodes, [tensor("x", [3, 4, 5])], [tensor("y", [4, 5, 3])],
                           [const("twenty", 20), const("zero", [0])], (("", 15),))
        self.assertEqual(self.layer_ops(model), ["builtin.reshape"])
        x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
        for chip, out in self.run_graph(model, {"x": x}).items():
            np.testing.assert_array_equal(out["y"], x.reshape(4, 5, 3))

    def test_torch_expand_pattern_and_slices_of_a_shape_fold(self):
        # x.expand(-1, 3, 4) as torch writes it: ConstantOfShape(ones) * -1, Equal(shape, -1), Where -> Expand;
        # the leading dims from Slice(Shape(x), 0, INT64_MAX-style end) and a negative Gather index.
        int64_max = np.iinfo(np.int64).max
        nodes = [helper.make_node("Shape", ["x"], ["sx"]),  # [2, 1, 4]
                 helper.make_node("Slice", ["sx", "zero", "big"], ["all"]),  # [2, 1, 4]: ends clamped
                 helper.make_node("Gather", ["sx", "minus_one"], ["last"], axis=0),  # 4 (index -1)
                 helper.make_node("Unsqueeze", ["last", "zero"], ["last1"]),
                 helper.make_node("Concat", ["minus_one_1", "three", "last1"], ["wanted"], axis=0),  # [-1, 3, 4]
                 helper.make_node("ConstantOfShape", ["three_dims"], ["ones"],
                                  value=numpy_helper.from_array(np.array([1], np.int64))),
                 helper.make_node("Mul", ["ones", "minus_one_1"], ["minus"]),
                 helper.make_node("Equal", ["wanted", "minus"], ["keep"]),
                 helper.make_node("Where", ["keep", "all", "wanted"], ["shape"]),  # [2, 3, 4]
                 helper.make_node("Expand", ["x", "shape"], ["y"])]
        model = make_model(nodes, [tensor("x", [2, 1, 4])], [tensor("y", [2, 3, 4])],
                           [const("zero", [0]), const("big", [int64_max]), const("minus_one", -1),
                            const("minus_one_1", [-1]), const("three", [3]), const("three_dims", [3])])
        self.assertEqual(self.layer_ops(model), ["builtin.broadcast"])
        x = np.arange(8, dtype=np.float32).reshape(2, 1, 4)
        for out in self.run_graph(model, {"x": x}).values():
            np.testing.assert_array_equal(out["y"], np.broadcast_to(x, (2, 3, 4)))

    def test_a_folded_value_beyond_2_53_is_refused(self):
        nodes = [helper.make_node("Mul", ["a", "a"], ["sq"], name="square"),
                 helper.make_node("Reshape", ["x", "sq"], ["y"])]
        model = make_model(nodes, [tensor("x", [4])], [tensor("y", [4])], [const("a", [2 ** 27])])
        self.assert_refused(model, "node 'square' (Mul): a folded int64 value is 1.8014398509481984e+16, beyond 2^53")

    def test_constant_of_shape_and_range_fold(self):
        nodes = [helper.make_node("ConstantOfShape", ["shape"], ["zeros"],
                                  value=numpy_helper.from_array(np.array([2.5], np.float32))),
                 helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
                 helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
                 helper.make_node("Add", ["zeros", "rf"], ["s"]),
                 helper.make_node("Add", ["x", "s"], ["y"])]
        model = make_model(nodes, [tensor("x", [2, 4])], [tensor("y", [2, 4])],
                           [const("shape", [2, 4]), const("start", 10, TensorProto.INT32),
                            const("limit", 2, TensorProto.INT32), const("delta", -2, TensorProto.INT32)])
        x = np.ones((2, 4), np.float32)
        expected = x + 2.5 + np.arange(10, 2, -2, dtype=np.float32)  # numpy's arange: 10, 8, 6, 4
        for out in self.run_graph(model, {"x": x}).values():
            np.testing.assert_array_equal(out["y"], expected)

    def test_a_constant_of_shape_of_a_graph_input_is_refused(self):
        # (Range's inputs are scalars: a computed one is refused earlier, as a rank-0 layer output.)
        nodes = [helper.make_node("ConstantOfShape", ["shape"], ["z"], name="zeros")]
        model = make_model(nodes, [tensor("shape", [2], TensorProto.INT64)], [tensor("z", [None, None])])
        self.assert_refused(model, "node 'zeros' (ConstantOfShape): input 0 ('shape') is not a constant",
                            "ConstantOfShape is folded into a constant at import")

    def test_folded_integer_division_by_zero_is_refused(self):
        nodes = [helper.make_node("Div", ["a", "b"], ["q"], name="div"),
                 helper.make_node("Reshape", ["x", "q"], ["y"])]
        model = make_model(nodes, [tensor("x", [4])], [tensor("y", [4])], [const("a", [4]), const("b", [0])])
        self.assert_refused(model, "node 'div' (Div): an integer division by zero in a constant")

    def test_a_scalar_constant_output_is_a_rank_0_array(self):
        model = make_model([helper.make_node("Size", ["x"], ["n"])], [tensor("x", [2, 3])],
                           [tensor("n", [], TensorProto.INT64)])
        outputs, _, _ = self.build_and_run(self.save(model), "bm1684x", {"x": np.zeros((2, 3), np.float32)})
        self.assertEqual(outputs["n"].shape, ())
        self.assertEqual(int(outputs["n"]), 6)

    def test_constant_of_shape_beyond_the_folding_limit_is_refused(self):
        nodes = [helper.make_node("ConstantOfShape", ["shape"], ["z"], name="big"),
                 helper.make_node("Add", ["x", "z"], ["y"])]
        model = make_model(nodes, [tensor("x", [1])], [tensor("y", [4096, 4096])], [const("shape", [4096, 4096])])
        self.assert_refused(model, "node 'big' (ConstantOfShape): the shape [4096, 4096] has 16777216 elements")


def round_half_even(x):
    return np.round(x)  # numpy rounds half to even, as ONNX's Round


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class ElementwiseMath(OnnxMoreCase):
    SPECIAL = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.3, 7.0, -7.0, 8388607.5, 16777216.0, 1e30, -1e30,
               np.inf, -np.inf, np.nan, -0.0, 3.75, -3.75]

    def unary_graph(self, op, elem_type=TensorProto.FLOAT, out_type=None, n=20, **attrs):
        return make_model([helper.make_node(op, ["x"], ["y"], **attrs)], [tensor("x", [n], elem_type)],
                          [tensor("y", [n], out_type or elem_type)])

    def test_floor_ceil_round_fp32_exact(self):
        x = np.array(self.SPECIAL, np.float32)
        for op, reference in [("Floor", np.floor), ("Ceil", np.ceil), ("Round", round_half_even)]:
            for chip, out in self.run_graph(self.unary_graph(op), {"x": x}).items():
                np.testing.assert_array_equal(out["y"], reference(x), err_msg=f"{op} on {chip}")

    def test_floor_ceil_round_fp16_exact(self):
        x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 1023.5, 1024.0, -0.25, 65504, np.inf, np.nan, 3.75], np.float16)
        for op, reference in [("Floor", np.floor), ("Ceil", np.ceil), ("Round", round_half_even)]:
            out = self.run_graph(self.unary_graph(op, F16, n=12), {"x": x}, chips=("bm1688",))["bm1688"]
            np.testing.assert_array_equal(out["y"], reference(x), err_msg=op)

    def test_floor_ceil_bfloat16_exact(self):
        # bfloat16 travels as its bits (numpy has no bfloat16); the values are exact in it.
        x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 127.5, 128.0, -0.25, 3.75, -3.75, 255.0, np.inf], np.float32)
        bits = (x.view(np.uint32) >> 16).astype(np.uint16)
        for op, reference in [("Floor", np.floor), ("Ceil", np.ceil)]:
            model = self.unary_graph(op, TensorProto.BFLOAT16, n=12)
            out = self.run_graph(model, {"x": bits}, chips=("bm1684x",))["bm1684x"]["y"]
            np.testing.assert_array_equal((out.astype(np.uint32) << 16).view(np.float32), reference(x), err_msg=op)

    def test_isnan_isinf(self):
        x = np.array(self.SPECIAL, np.float32)
        cases = [("IsNaN", {}, np.isnan(x)), ("IsInf", {}, np.isinf(x)),
                 ("IsInf", {"detect_negative": 0}, np.isposinf(x)), ("IsInf", {"detect_positive": 0}, np.isneginf(x)),
                 ("IsInf", {"detect_positive": 0, "detect_negative": 0}, np.zeros(20, bool))]
        for op, attrs, expected in cases:
            out = self.run_graph(self.unary_graph(op, out_type=TensorProto.BOOL, **attrs), {"x": x})
            for chip, result in out.items():
                np.testing.assert_array_equal(result["y"], expected.astype(np.float32), err_msg=f"{op} {attrs} {chip}")

    def test_sin_cos_against_double(self):
        rng = np.random.default_rng(3)
        x = np.concatenate([rng.uniform(-10, 10, 18), [0.0, 1e4]]).astype(np.float32)
        for op, reference in [("Sin", np.sin), ("Cos", np.cos)]:
            for chip, out in self.run_graph(self.unary_graph(op), {"x": x}).items():
                np.testing.assert_allclose(out["y"], reference(x.astype(np.float64)), rtol=0, atol=2 ** -24,
                                           err_msg=f"{op} on {chip}")
            x16 = x[:18].astype(np.float16)
            out = self.run_graph(self.unary_graph(op, F16, n=18), {"x": x16}, chips=("bm1684x",))["bm1684x"]
            expected = reference(x16.astype(np.float64)).astype(np.float16)  # one rounding into fp16
            np.testing.assert_array_equal(out["y"], expected, err_msg=f"fp16 {op}")

    def mod_graph(self, elem_type, fmod, shape=(12,)):
        node = helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod, name="mod")
        return make_model([node], [tensor("a", shape, elem_type), tensor("b", shape, elem_type)],
                          [tensor("y", shape, elem_type)])

    def test_float_mod_is_cs_fmod(self):
        a = np.array([-4.3, 7.2, 5.0, 4.3, -7.2, 8.0, 1e6 + 0.5, -3.0, 5.0, np.inf, 2.0, 0.0], np.float32)
        b = np.array([2.1, -3.4, 8.0, -2.1, 3.4, 5.0, 3.0, 3.0, np.inf, 2.0, 0.0, -1.0], np.float32)
        expected = np.fmod(a.astype(np.float64), b.astype(np.float64))
        with np.errstate(invalid="ignore"):
            for chip, out in self.run_graph(self.mod_graph(TensorProto.FLOAT, 1), {"a": a, "b": b}).items():
                np.testing.assert_allclose(out["y"], expected, rtol=0, atol=2 ** -24 * 1e6, err_msg=chip)
                np.testing.assert_array_equal(np.signbit(out["y"][:9]), np.signbit(expected[:9]))

    def test_small_integer_mod_follows_onnx_sign_rules(self):
        rng = np.random.default_rng(5)
        for dtype, elem in [(np.int8, TensorProto.INT8), (np.int16, TensorProto.INT16), (np.uint8, TensorProto.UINT8)]:
            info = np.iinfo(dtype)
            a = rng.integers(info.min, info.max, 12, endpoint=True).astype(dtype)
            b = rng.integers(info.min, info.max, 12, endpoint=True).astype(dtype)
            b[b == 0] = 3
            a[0], b[0] = info.min, (-1 if info.min < 0 else 1)  # the quotient beyond the type
            for fmod, reference in [(0, np.mod), (1, np.fmod)]:
                out = self.run_graph(self.mod_graph(elem, fmod), {"a": a, "b": b}, chips=("bm1684x",))["bm1684x"]
                np.testing.assert_array_equal(out["y"], reference(a, b), err_msg=f"{dtype.__name__} fmod {fmod}")

    def test_32_bit_integer_mod_is_exact(self):
        rng = np.random.default_rng(8)
        for dtype, elem in [(np.int32, TensorProto.INT32), (np.int64, TensorProto.INT64),
                            (np.uint32, TensorProto.UINT32)]:
            info = np.iinfo(np.int32 if dtype == np.int64 else dtype)  # int64 is held as int32
            a = rng.integers(info.min, info.max, (3, 40), endpoint=True).astype(dtype)
            b = rng.integers(info.min, info.max, (3, 40), endpoint=True).astype(dtype)
            b[1] = rng.integers(1, 9, 40).astype(dtype)  # small divisors: large quotients
            if info.min < 0:
                b[2, :10] = -rng.integers(1, 9, 10).astype(dtype)
                a[0, :4], b[0, :4] = info.min, [-1, 1, info.min, info.max]
            a[0, 4:6], b[0, 4:6] = [7, info.max], [info.max, 0]  # the remainder is x; a zero divisor gives 0
            for fmod in (0, 1):
                with np.errstate(divide="ignore"):
                    expected = (np.fmod if fmod else np.mod)(a.astype(np.int64), b.astype(np.int64))
                for chip, out in self.run_graph(self.mod_graph(elem, fmod, (3, 40)), {"a": a, "b": b}).items():
                    np.testing.assert_array_equal(out["y"], expected, err_msg=f"{dtype.__name__} fmod {fmod} {chip}")

    def test_mod_refusals(self):
        self.assert_refused(self.mod_graph(TensorProto.FLOAT, 0), "node 'mod' (Mod): attribute 'fmod' = 0 with float")

    def test_floor_of_integers_is_refused(self):
        model = make_model([helper.make_node("Floor", ["x"], ["y"], name="fl")], [tensor("x", [4], TensorProto.INT32)],
                           [tensor("y", [4], TensorProto.INT32)])
        # ONNX's own type check refuses it first (the importer's float-only check is the fallback)
        self.assert_refused(model, "(op_type:Floor, node name: fl)", "has unsupported type: tensor(int32)")


def arg_reference(x, axis, keepdims, last, largest):
    values = x if largest else -x
    if last:
        flipped = np.flip(values, axis)
        index = x.shape[axis] - 1 - np.argmax(flipped, axis)
    else:
        index = np.argmax(values, axis)
    return np.expand_dims(index, axis) if keepdims else index


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class ArgMaxArgMin(OnnxMoreCase):
    def test_against_numpy_with_ties(self):
        rng = np.random.default_rng(9)
        x = rng.integers(-3, 4, (3, 5, 4)).astype(np.float32)  # many ties
        for op in ("ArgMax", "ArgMin"):
            for axis, keepdims, last in [(0, 1, 0), (1, 0, 1), (-1, 1, 1), (2, 0, 0)]:
                out_shape = list(arg_reference(x, axis, keepdims, last, True).shape)
                node = helper.make_node(op, ["x"], ["i"], axis=axis, keepdims=keepdims, select_last_index=last)
                model = make_model([node], [tensor("x", [3, 5, 4])], [tensor("i", out_shape, TensorProto.INT64)])
                expected = arg_reference(x, axis, keepdims, last, op == "ArgMax")
                for chip, out in self.run_graph(model, {"x": x}).items():
                    np.testing.assert_array_equal(out["i"], expected, err_msg=f"{op} {axis} {keepdims} {last} {chip}")

    def test_a_nan_is_the_extreme_like_numpys(self):
        x = np.array([[1, np.nan, 3, np.nan], [1, 2, 5, 5], [-np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
        for op, last in [("ArgMax", 0), ("ArgMin", 0), ("ArgMax", 1)]:
            node = helper.make_node(op, ["x"], ["i"], axis=1, select_last_index=last)
            model = make_model([node], [tensor("x", [3, 4])], [tensor("i", [3, 1], TensorProto.INT64)])
            expected = arg_reference(x, 1, 1, last, op == "ArgMax")  # numpy: the first (last) NaN
            out = self.run_graph(model, {"x": x}, chips=("bm1688",))["bm1688"]
            np.testing.assert_array_equal(out["i"], expected, err_msg=f"{op} last {last}")

    def test_float16_and_int8_inputs(self):
        rng = np.random.default_rng(4)
        for dtype, elem in [(np.float16, F16), (np.int8, TensorProto.INT8)]:
            x = rng.integers(-100, 100, (4, 6)).astype(dtype)
            model = make_model([helper.make_node("ArgMax", ["x"], ["i"], axis=1)], [tensor("x", [4, 6], elem)],
                               [tensor("i", [4, 1], TensorProto.INT64)])
            out = self.run_graph(model, {"x": x}, chips=("bm1688",))["bm1688"]
            np.testing.assert_array_equal(out["i"], arg_reference(x, 1, 1, 0, True))

    def test_int32_input_is_refused(self):
        model = make_model([helper.make_node("ArgMin", ["x"], ["i"], name="am")], [tensor("x", [4], TensorProto.INT32)],
                           [tensor("i", [1], TensorProto.INT64)])
        self.assert_refused(model, "node 'am' (ArgMin): input 'x' is int32", "8- or 16-bit integer")


def depth_to_space(x, b, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class Layout(OnnxMoreCase):
    def test_pad_modes_with_negative_pads_against_numpy(self):
        x = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
        pads = [0, 2, -1, 1, 3, 2]  # begin: 0, 2, -1; end: 1, 3, 2
        for mode in ("constant", "reflect", "edge"):
            grown = np.pad(x[:, :, 1:], [(0, 1), (2, 3), (0, 2)], mode=mode,
                           **({"constant_values": 1.5} if mode == "constant" else {}))
            nodes = [helper.make_node("Pad", ["x", "pads", "value"], ["y"], mode=mode)]
            model = make_model(nodes, [tensor("x", [2, 3, 5])], [tensor("y", list(grown.shape))],
                               [const("pads", pads), const("value", 1.5, TensorProto.FLOAT)])
            for chip, out in self.run_graph(model, {"x": x}).items():
                np.testing.assert_array_equal(out["y"], grown, err_msg=f"{mode} on {chip}")

    def test_pad_of_int32(self):
        x = np.arange(12, dtype=np.int32).reshape(3, 4) - 6
        nodes = [helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")]
        model = make_model(nodes, [tensor("x", [3, 4], TensorProto.INT32)], [tensor("y", [3, 7], TensorProto.INT32)],
                           [const("pads", [0, 2, 0, 1])])
        out = self.run_graph(model, {"x": x}, chips=("bm1684x",))["bm1684x"]
        np.testing.assert_array_equal(out["y"], np.pad(x, [(0, 0), (2, 1)], mode="reflect"))

    def test_pad_refusals(self):
        model = make_model([helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap", name="p")],
                           [tensor("x", [4])], [tensor("y", [6])], [const("pads", [1, 1])])
        self.assert_refused(model, "node 'p' (Pad): attribute 'mode' = 'wrap' is not supported")
        model = make_model([helper.make_node("Pad", ["x", "pads"], ["y"], name="p")],
                           [tensor("x", [4]), tensor("pads", [2], TensorProto.INT64)], [tensor("y", [None])])
        self.assert_refused(model, "node 'p' (Pad): input 1 ('pads', pads) must be a constant")

    def test_tile_and_trilu(self):
        x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) - 7
        model = make_model([helper.make_node("Tile", ["x", "r"], ["y"])], [tensor("x", [2, 3, 4])],
                           [tensor("y", [2, 6, 12])], [const("r", [1, 2, 3])])
        for out in self.run_graph(model, {"x": x}).values():
            np.testing.assert_array_equal(out["y"], np.tile(x, (1, 2, 3)))
        for upper, k, reference in [(1, 0, np.triu), (1, -1, np.triu), (0, 2, np.tril), (0, -2, np.tril)]:
            model = make_model([helper.make_node("Trilu", ["x", "k"], ["y"], upper=upper)], [tensor("x", [2, 3, 4])],
                               [tensor("y", [2, 3, 4])], [const("k", k)], (("", 14),))
            x_nan = x.copy()
            x_nan[0, 0, 3] = np.nan  # a kept or zeroed NaN: zeroed elements are 0, never NaN * 0
            out = self.run_graph(model, {"x": x_nan}, chips=("bm1688",))["bm1688"]
            np.testing.assert_array_equal(out["y"], reference(x_nan, k), err_msg=f"upper {upper} k {k}")

    def test_depth_to_space_and_space_to_depth(self):
        x = np.arange(2 * 8 * 2 * 3, dtype=np.float32).reshape(2, 8, 2, 3)
        for mode in ("DCR", "CRD"):
            model = make_model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode=mode)],
                               [tensor("x", [2, 8, 2, 3])], [tensor("y", [2, 2, 4, 6])])
            for out in self.run_graph(model, {"x": x}).values():
                np.testing.assert_array_equal(out["y"], depth_to_space(x, 2, mode), err_msg=mode)
        y = depth_to_space(x, 2, "DCR")
        model = make_model([helper.make_node("SpaceToDepth", ["y"], ["x"], blocksize=2)], [tensor("y", [2, 2, 4, 6])],
                           [tensor("x", [2, 8, 2, 3])])
        for out in self.run_graph(model, {"y": y}).values():
            np.testing.assert_array_equal(out["x"], x)  # SpaceToDepth undoes DCR
        model = make_model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="XYZ", name="d2s")],
                           [tensor("x", [2, 8, 2, 3])], [tensor("y", [2, 2, 4, 6])])
        self.assert_refused(model, "node 'd2s' (DepthToSpace): attribute 'mode' = 'XYZ' is not supported")

    def test_instance_normalization_against_numpy(self):
        rng = np.random.default_rng(2)
        x = rng.normal(1.0, 3.0, (2, 3, 4, 5)).astype(np.float32)
        scale, bias = rng.normal(size=3).astype(np.float32), rng.normal(size=3).astype(np.float32)
        model = make_model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)],
                           [tensor("x", [2, 3, 4, 5])], [tensor("y", [2, 3, 4, 5])],
                           [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(bias, "b")])
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=(2, 3), keepdims=True)
        var = x64.var(axis=(2, 3), keepdims=True)
        expected = (x64 - mean) / np.sqrt(var + 1e-3) * scale[:, None, None] + bias[:, None, None]
        for chip, out in self.run_graph(model, {"x": x}).items():
            np.testing.assert_allclose(out["y"], expected, rtol=1e-5, atol=1e-5, err_msg=chip)


if __name__ == "__main__":
    unittest.main()
