"""ONNX models through the SDK's importer (docs/onnx.md), against independent references.

- PyTorch: a small CNN with the sample op leakyrelu in the middle, exported with torch.onnx.export as
  the PopART example's com.acme::LeakyRelu, run on both chips and compared with PyTorch's own output.
- numpy: hand-made graphs (onnx.helper) of standard ops and of tpu.sdk::AbsAdd, compared with formulas
  written here.
- Every kind of refusal (unknown op, unsupported attribute value, unsupported element type, a custom node
  that does not match its op's definition, a dynamic dim) with the message it must give.

Environment: as test_front_end.py (tests/CMakeLists.txt sets PYTHONPATH, TPU_TEST_SAMPLE_ROOT).
"""
import json
import os
import subprocess
import tempfile
import unittest
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import tpu_sdk

SAMPLE_ROOT = os.environ["TPU_TEST_SAMPLE_ROOT"]
CHIPS = ("bm1684x", "bm1688")


def libraries(chip):
    lib = os.path.join(SAMPLE_ROOT, "lib")
    return {"plugin": f"{lib}/libplugin_custom.so", "backend": f"{lib}/libbackend_custom.so",
            "firmware": f"{lib}/libcmodel_custom_{chip}.so"}


def make_model(nodes, inputs, outputs, initializers=(), opsets=(("", 13),)):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])


def tensor(name, shape, elem_type=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem_type, shape)


class OnnxCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def save(self, model, name="m.onnx"):
        path = os.path.join(self.dir.name, name)
        onnx.save(model, path)
        return path

    def build_and_run(self, path, chip, inputs):
        model_file = os.path.join(self.dir.name, f"{chip}.tpumodel")
        info = tpu_sdk.build_onnx(path, chip, model_file, reference=False, **libraries(chip))
        outputs, stats = tpu_sdk.run_model(model_file, inputs)
        return outputs, stats, info

    def assert_refused(self, model, *fragments):
        path = self.save(model)
        with self.assertRaises(tpu_sdk.Error) as caught:
            tpu_sdk.build_onnx(path, "bm1684x", os.path.join(self.dir.name, "x.tpumodel"), reference=False,
                               **libraries("bm1684x"))
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))
        return str(caught.exception)


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class PyTorchExport(OnnxCase):
    def export_leaky_relu_as_custom_op(self):
        """PopART's example: aten::leaky_relu exported as the custom op com.acme::LeakyRelu (for this test)."""
        import torch
        from torch.onnx import register_custom_op_symbolic, symbolic_helper

        def leaky_relu(g, x, alpha):
            return g.op("com.acme::LeakyRelu", x, alpha_f=float(symbolic_helper._maybe_get_const(alpha, "f")))

        register_custom_op_symbolic("aten::leaky_relu", leaky_relu, 9)
        self.addCleanup(torch.onnx.unregister_custom_op_symbolic, "aten::leaky_relu", 9)

    def export_cnn(self):
        import torch
        self.export_leaky_relu_as_custom_op()

        class SmallCnn(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
                self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)  # depthwise
                self.conv3 = torch.nn.Conv2d(8, 8, 1)

            def forward(self, x):
                y = torch.relu(self.conv1(x))
                y = torch.nn.functional.leaky_relu(y, 0.125)  # the custom op, in the middle
                y = torch.nn.functional.max_pool2d(self.conv2(y), 2)
                y = torch.sigmoid(self.conv3(y)) * y + torch.tanh(y)
                return torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1)

        torch.manual_seed(7)
        model = SmallCnn().eval()
        x = torch.randn(2, 3, 16, 16)
        path = os.path.join(self.dir.name, "cnn.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: "The shape inference of com.acme::LeakyRelu type is missing"
            torch.onnx.export(model, (x,), path, input_names=["image"], output_names=["features"], opset_version=13,
                              custom_opsets={"com.acme": 1})
        with torch.no_grad():
            expected = model(x).numpy()
        return path, x.numpy(), expected

    def export_transformer_block(self):
        import torch
        self.export_leaky_relu_as_custom_op()

        class Block(torch.nn.Module):
            def __init__(self, d=16, hidden=32):
                super().__init__()
                self.qkv = torch.nn.Linear(d, 3 * d)
                self.proj = torch.nn.Linear(d, d)
                self.ln1 = torch.nn.LayerNorm(d)
                self.fc1 = torch.nn.Linear(d, hidden)
                self.fc2 = torch.nn.Linear(hidden, d)
                self.ln2 = torch.nn.LayerNorm(d)

            def forward(self, x):
                q, k, v = self.qkv(x).split(16, dim=-1)
                attention = torch.softmax(q @ k.transpose(-1, -2) * 0.25, dim=-1)
                y = self.ln1(x + self.proj(attention @ v))
                h = torch.nn.functional.gelu(self.fc1(y))  # exported with Erf
                h = torch.nn.functional.leaky_relu(h, 0.125)  # the custom op
                return self.ln2(y + self.fc2(h))

        torch.manual_seed(11)
        model = Block().eval()
        x = torch.randn(2, 8, 16)
        path = os.path.join(self.dir.name, "block.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (x,), path, input_names=["tokens"], output_names=["hidden"], opset_version=17,
                              custom_opsets={"com.acme": 1})
        with torch.no_grad():
            expected = model(x).numpy()
        return path, x.numpy(), expected

    def test_transformer_block_with_custom_op_gives_pytorchs_result(self):
        path, x, expected = self.export_transformer_block()
        ops = {n.op_type for n in onnx.load(path).graph.node}
        self.assertTrue({"MatMul", "Softmax", "LayerNormalization", "Erf", "LeakyRelu"} <= ops, ops)
        for chip in CHIPS:
            with self.subTest(chip=chip):
                outputs, stats, _ = self.build_and_run(path, chip, {"tokens": x})
                self.assertIn("leakyrelu", [s["op"] for s in stats])
                # fp32 throughout; the engine's exp / erf / rsqrt and fp32 accumulation against PyTorch's.
                np.testing.assert_allclose(outputs["hidden"], expected, rtol=1e-3, atol=1e-4)

    def test_transformer_block_layer_count(self):
        path, x, _ = self.export_transformer_block()
        _, _, info = self.build_and_run(path, "bm1688", {"tokens": x})
        ops = [layer["op"] for layer in json.loads(info["net_json"])["layers"]]
        # each of the six MatMuls one layer (88 layers when a MatMul was five)
        self.assertEqual(ops.count("builtin.matmul"), 6)
        self.assertEqual(len(ops), 50)

    def test_tpu_model_builds_shows_and_profiles_the_block(self):
        tool = os.environ.get("TPU_MODEL_TOOL")
        if not tool:
            self.fail("TPU_MODEL_TOOL (the tpu_model binary) is not set: tests/CMakeLists.txt sets it")
        path, x, expected = self.export_transformer_block()
        d = self.dir.name
        np.savez(os.path.join(d, "in.npz"), tokens=x)
        lib_dir = os.path.join(SAMPLE_ROOT, "lib")
        model = os.path.join(d, "block.tpumodel")

        def tool_run(*args):
            done = subprocess.run([tool, *args], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            return done.stdout

        built = tool_run("build", path, "--chip", "bm1688", "-o", model, "--lib-dir", lib_dir, "--net-json",
                         os.path.join(d, "net.json"))
        self.assertIn("/LeakyRelu", built)
        with open(os.path.join(d, "net.json")) as f:
            self.assertEqual(json.load(f)["inputs"][0]["name"], "tokens")
        info = tool_run("info", model)
        self.assertIn("leakyrelu", info)
        self.assertIn("/ln2/LayerNormalization", info)
        trace = os.path.join(d, "trace.json")
        tool_run("run", model, "--input", os.path.join(d, "in.npz"), "--output", os.path.join(d, "out.npz"),
                 "--profile", trace)
        with open(trace) as f:
            names = {e.get("name") for e in json.load(f)["traceEvents"]}
        self.assertIn("/LeakyRelu (leakyrelu, static)", names)  # the custom layer's span on the timeline
        np.testing.assert_allclose(np.load(os.path.join(d, "out.npz"))["hidden"], expected, rtol=1e-3, atol=1e-4)

    def test_cnn_with_custom_op_gives_pytorchs_result(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.fail("python3-torch is needed (scripts/setup.sh --tests)")
        path, x, expected = self.export_cnn()
        ops = [(n.domain, n.op_type) for n in onnx.load(path).graph.node]
        self.assertIn(("com.acme", "LeakyRelu"), ops)
        for chip in CHIPS:
            with self.subTest(chip=chip):
                outputs, stats, info = self.build_and_run(path, chip, {"image": x})
                self.assertEqual(sorted(outputs), ["features"])
                layers = json.loads(info["net_json"])["layers"]
                self.assertIn(("/LeakyRelu", "leakyrelu", {"alpha": 0.125}),
                              [(l["name"], l["op"], l["params"]) for l in layers])
                self.assertIn("leakyrelu", [s["op"] for s in stats])
                np.testing.assert_allclose(outputs["features"], expected, rtol=1e-4, atol=1e-5)


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class Import(OnnxCase):
    def test_custom_identity_absadd_and_standard_ops_against_numpy(self):
        rng = np.random.default_rng(3)
        bias = rng.standard_normal((4, 1, 1)).astype(np.float32)
        nodes = [helper.make_node("AbsAdd", ["x"], ["a"], domain="tpu.sdk", name="absadd", b=1.5),
                 helper.make_node("Sub", ["a", "bias"], ["s"], name="sub"),
                 helper.make_node("Clip", ["s", "lo", "hi"], ["c"], name="clip"),
                 helper.make_node("Reshape", ["c", "shape"], ["y"], name="reshape")]
        inits = [numpy_helper.from_array(bias, "bias"), numpy_helper.from_array(np.float32(0.5), "lo"),
                 numpy_helper.from_array(np.float32(2.5), "hi"),
                 numpy_helper.from_array(np.array([2, -1], np.int64), "shape")]
        model = make_model(nodes, [tensor("x", [2, 4, 3, 5])], [tensor("y", [2, 60])], inits,
                           opsets=(("", 13), ("tpu.sdk", 1)))
        path = self.save(model)
        x = rng.standard_normal((2, 4, 3, 5)).astype(np.float32)
        expected = np.clip(np.abs(x) + np.float32(1.5) - bias, 0.5, 2.5).reshape(2, 60)
        for chip in CHIPS:
            with self.subTest(chip=chip):
                outputs, _, info = self.build_and_run(path, chip, {"x": x})
                np.testing.assert_array_equal(outputs["y"], expected)  # each step exact or rounded once
                self.assertIn('"weights"', info["net_json"])  # bias became a weight; lo, hi, shape configure

    def test_float16_model(self):
        nodes = [helper.make_node("Mul", ["x", "x"], ["m"]), helper.make_node("Add", ["m", "x"], ["y"])]
        model = make_model(nodes, [tensor("x", [3, 40], TensorProto.FLOAT16)],
                           [tensor("y", [3, 40], TensorProto.FLOAT16)])
        x = np.random.default_rng(4).standard_normal((3, 40)).astype(np.float16)
        outputs, _, _ = self.build_and_run(self.save(model), "bm1688", {"x": x})
        self.assertEqual(outputs["y"].dtype, np.float16)
        np.testing.assert_array_equal(outputs["y"], (x * x) + x)  # numpy rounds each fp16 operation too

    def test_cast_rounds_to_nearest_even(self):
        nodes = [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
                 helper.make_node("Cast", ["h"], ["y"], to=TensorProto.FLOAT)]
        model = make_model(nodes, [tensor("x", [4, 33])], [tensor("y", [4, 33])])
        x = (np.random.default_rng(6).standard_normal((4, 33)) * 100).astype(np.float32)
        for chip in CHIPS:
            with self.subTest(chip=chip):
                outputs, _, _ = self.build_and_run(self.save(model), chip, {"x": x})
                np.testing.assert_array_equal(outputs["y"], x.astype(np.float16).astype(np.float32))

    def test_comparisons_and_where(self):
        nodes = [helper.make_node("Less", ["x", "y"], ["lt"]), helper.make_node("Not", ["lt"], ["ge"]),
                 helper.make_node("Where", ["lt", "x", "y"], ["smaller"])]
        model = make_model(nodes, [tensor("x", [3, 7]), tensor("y", [7])],
                           [tensor("smaller", [3, 7]), tensor("ge", [3, 7], TensorProto.BOOL)])
        rng = np.random.default_rng(5)
        x, y = rng.standard_normal((3, 7)).astype(np.float32), rng.standard_normal(7).astype(np.float32)
        outputs, _, info = self.build_and_run(self.save(model), "bm1684x", {"x": x, "y": y})
        np.testing.assert_array_equal(outputs["smaller"], np.minimum(x, y))
        np.testing.assert_array_equal(outputs["ge"], (x >= y).astype(np.float32))  # a bool output: 0 / 1 in fp32
        self.assertIn("graph output 'ge' is bool: the model gives it as 0 / 1 in fp32", info["warnings"])

    def run_both_chips(self, model, inputs):
        path = self.save(model)
        return [self.build_and_run(path, chip, inputs) for chip in CHIPS]

    def test_integer_arithmetic_wraps_like_numpy(self):
        for elem, dtype in ((TensorProto.INT32, np.int32), (TensorProto.INT8, np.int8), (TensorProto.UINT16, np.uint16)):
            nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Mul", ["a", "b"], ["p"]),
                     helper.make_node("Sub", ["a", "b"], ["d"]), helper.make_node("Max", ["a", "b"], ["mx"]),
                     helper.make_node("Min", ["a", "b"], ["mn"]), helper.make_node("Abs", ["a"], ["ab"]),
                     helper.make_node("Equal", ["a", "b"], ["eq"]), helper.make_node("Sign", ["a"], ["sg"])]
            outs = ["s", "p", "d", "mx", "mn", "ab", "sg"]
            model = make_model(nodes, [tensor("a", [3, 5], elem), tensor("b", [5], elem)],
                               [tensor(o, [3, 5], elem) for o in outs] + [tensor("eq", [3, 5], TensorProto.BOOL)],
                               opsets=(("", 14),))  # Add of int8 from opset 14
            info = np.iinfo(dtype)
            rng = np.random.default_rng(11)
            a = rng.integers(info.min, info.max, (3, 5), endpoint=True, dtype=dtype)
            b = rng.integers(info.min, info.max, 5, endpoint=True, dtype=dtype)
            a[0, :2] = info.min  # abs(min) wraps to min in numpy
            b[1] = a[1, 1]
            with np.errstate(over="ignore"):
                want = {"s": a + b, "p": a * b, "d": a - b, "mx": np.maximum(a, b), "mn": np.minimum(a, b),
                        "ab": np.abs(a), "sg": np.sign(a)}
            for outputs, _, _ in self.run_both_chips(model, {"a": a, "b": b}):
                for o in outs:
                    with self.subTest(dtype=dtype.__name__, output=o):
                        self.assertEqual(outputs[o].dtype, dtype)
                        np.testing.assert_array_equal(outputs[o], want[o])
                np.testing.assert_array_equal(outputs["eq"] != 0, a == b)

    def test_int64_and_double_graph_tensors(self):
        offset = numpy_helper.from_array(np.array([-5, 7], dtype=np.int64), "offset")
        nodes = [helper.make_node("Add", ["i", "offset"], ["j"]), helper.make_node("Mul", ["x", "x"], ["y"])]
        model = make_model(nodes, [tensor("i", [3, 2], TensorProto.INT64), tensor("x", [4], TensorProto.DOUBLE)],
                           [tensor("j", [3, 2], TensorProto.INT64), tensor("y", [4], TensorProto.DOUBLE)], [offset])
        i = np.array([[2**31 - 8, -2**31 + 5], [0, 1], [-3, 9]], dtype=np.int64)
        x = np.array([0.1, -2.5, 1e10, 3.0], dtype=np.float64)
        with self.assertRaises(tpu_sdk.Error) as caught:  # rounding double to fp32 is the caller's choice
            self.run_both_chips(model, {"i": i, "x": x})
        self.assertIn("array 'x' has dtype <f8, but input 'x' is fp32", str(caught.exception))
        for outputs, _, info in self.run_both_chips(model, {"i": i, "x": x.astype(np.float32)}):
            self.assertEqual(outputs["j"].dtype, np.int32)  # int64 is held as int32
            np.testing.assert_array_equal(outputs["j"], i + [-5, 7])
            self.assertEqual(outputs["y"].dtype, np.float32)  # double is computed in fp32
            np.testing.assert_array_equal(outputs["y"], x.astype(np.float32) * x.astype(np.float32))
            self.assertIn("graph output 'j' is int64: the model gives it as int32", info["warnings"])

    def test_bool_inputs_logic_and_where(self):
        nodes = [helper.make_node("And", ["p", "q"], ["both"]), helper.make_node("Not", ["p"], ["np"]),
                 helper.make_node("Xor", ["p", "q"], ["x1"]),
                 helper.make_node("Where", ["p", "a", "b"], ["w"]), helper.make_node("Where", ["x1", "i", "j"], ["wi"])]
        model = make_model(nodes, [tensor("p", [2, 6], TensorProto.BOOL), tensor("q", [6], TensorProto.BOOL),
                                   tensor("a", [2, 6]), tensor("b", [6]), tensor("i", [2, 6], TensorProto.INT64),
                                   tensor("j", [2, 6], TensorProto.INT64)],
                           [tensor("both", [2, 6], TensorProto.BOOL), tensor("np", [2, 6], TensorProto.BOOL),
                            tensor("w", [2, 6]), tensor("wi", [2, 6], TensorProto.INT64)])
        rng = np.random.default_rng(12)
        p, q = rng.random((2, 6)) < 0.5, rng.random(6) < 0.5
        a, b = rng.standard_normal((2, 6)).astype(np.float32), rng.standard_normal(6).astype(np.float32)
        i, j = rng.integers(-100, 100, (2, 6)), rng.integers(-100, 100, (2, 6))
        for outputs, _, _ in self.run_both_chips(model, {"p": p, "q": q, "a": a, "b": b, "i": i, "j": j}):
            np.testing.assert_array_equal(outputs["both"], p & q)  # bool inputs: 0 / 1 in uint8
            np.testing.assert_array_equal(outputs["np"], ~p)
            np.testing.assert_array_equal(outputs["w"], np.where(p, a, b))
            np.testing.assert_array_equal(outputs["wi"], np.where(p ^ q, i, j))

    def test_casts_follow_numpy(self):
        targets = {"i32": (TensorProto.INT32, np.int32), "u8": (TensorProto.UINT8, np.uint8),
                   "f16": (TensorProto.FLOAT16, np.float16), "b": (TensorProto.BOOL, np.bool_)}
        nodes = [helper.make_node("Cast", ["x"], [name], to=elem) for name, (elem, _) in targets.items()]
        nodes += [helper.make_node("Cast", ["k"], ["k8"], to=TensorProto.INT8),
                  helper.make_node("Cast", ["k"], ["kf"], to=TensorProto.FLOAT),
                  helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT)]
        outputs_info = [tensor(n, [4, 6], elem) for n, (elem, _) in targets.items()]
        outputs_info += [tensor("k8", [4, 6], TensorProto.INT8), tensor("kf", [4, 6]), tensor("bf", [4, 6])]
        model = make_model(nodes, [tensor("x", [4, 6]), tensor("k", [4, 6], TensorProto.INT32)], outputs_info)
        rng = np.random.default_rng(13)
        x = (rng.standard_normal((4, 6)) * 100).astype(np.float32)
        x[0, :4] = [0.0, -0.7, 2.5, -3.5]  # truncation toward zero, zeros to false
        x[1, :2] = [300.0, -20.0]  # in uint8: out of range (ONNX leaves it undefined; the device saturates)
        k = rng.integers(-2**31, 2**31 - 1, (4, 6), dtype=np.int32)
        for outputs, _, _ in self.run_both_chips(model, {"x": x, "k": k}):
            np.testing.assert_array_equal(outputs["i32"], x.astype(np.int32))
            in_range = (x > -1) & (x < 256)
            np.testing.assert_array_equal(outputs["u8"][in_range], x[in_range].astype(np.uint8))
            self.assertEqual(list(outputs["u8"][1, :2]), [255, 0])
            np.testing.assert_array_equal(outputs["f16"], x.astype(np.float16))
            np.testing.assert_array_equal(outputs["b"] != 0, x.astype(np.bool_))
            np.testing.assert_array_equal(outputs["k8"], k.astype(np.int8))  # wraps, as numpy
            np.testing.assert_array_equal(outputs["kf"], k.astype(np.float32))
            np.testing.assert_array_equal(outputs["bf"], x.astype(np.bool_).astype(np.float32))

    def test_small_integer_division_truncates(self):
        nodes = [helper.make_node("Div", ["a", "b"], ["q"])]
        for elem, dtype in ((TensorProto.INT16, np.int16), (TensorProto.UINT8, np.uint8)):
            model = make_model(nodes, [tensor("a", [3, 8], elem), tensor("b", [3, 8], elem)],
                               [tensor("q", [3, 8], elem)], opsets=(("", 14),))
            info = np.iinfo(dtype)
            rng = np.random.default_rng(14)
            a = rng.integers(info.min, info.max, (3, 8), endpoint=True, dtype=dtype)
            b = rng.integers(1, 40, (3, 8), dtype=dtype) * (np.where(rng.random((3, 8)) < 0.5, -1, 1).astype(dtype)
                                                           if info.min < 0 else dtype(1))
            want = np.trunc(a.astype(np.float64) / b.astype(np.float64)).astype(dtype)  # C's (ONNX's) integer division
            for outputs, _, _ in self.run_both_chips(model, {"a": a, "b": b}):
                np.testing.assert_array_equal(outputs["q"], want)

    def test_integer_reductions_are_exact(self):
        axes = numpy_helper.from_array(np.array([0, 2], dtype=np.int64), "axes")
        nodes = [helper.make_node("ReduceSum", ["k", "axes"], ["s"], keepdims=0),
                 helper.make_node("ReduceMax", ["k"], ["mx"], axes=[1]), helper.make_node("ReduceMin", ["k"], ["mn"])]
        model = make_model(nodes, [tensor("k", [3, 4, 20], TensorProto.INT32)],
                           [tensor("s", [4], TensorProto.INT32), tensor("mx", [3, 1, 20], TensorProto.INT32),
                            tensor("mn", [1, 1, 1], TensorProto.INT32)], [axes])
        k = np.random.default_rng(16).integers(-2**31, 2**31 - 1, (3, 4, 20), dtype=np.int32)
        with np.errstate(over="ignore"):
            want_sum = k.sum(axis=(0, 2), dtype=np.int32)  # wraps, as ONNX's int32 sum does
        for outputs, _, _ in self.run_both_chips(model, {"k": k}):
            np.testing.assert_array_equal(outputs["s"], want_sum)
            np.testing.assert_array_equal(outputs["mx"], k.max(axis=1, keepdims=True))
            np.testing.assert_array_equal(outputs["mn"], k.min(keepdims=True))

    def test_small_integer_max_pool_is_exact(self):
        # Values of the 8-bit types, at their limits too, through padding and strides; the
        # reference is numpy's max over each window of the input padded with the type's minimum.
        for elem, dtype in ((TensorProto.UINT8, np.uint8), (TensorProto.INT8, np.int8)):  # ONNX: 8-bit only
            node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1])
            model = make_model([node], [tensor("x", [2, 3, 7, 6], elem)], [tensor("y", [2, 3, 4, 6], elem)])
            info = np.iinfo(dtype)
            x = np.random.default_rng(21).integers(info.min, info.max, (2, 3, 7, 6), endpoint=True, dtype=dtype)
            x[0, 0, 0, 0], x[1, 2, 6, 5] = info.max, info.min
            padded = np.full((2, 3, 9, 7), info.min, dtype=dtype)
            padded[:, :, 1:8, 0:6] = x
            want = np.stack([np.stack([padded[:, :, 2 * r:2 * r + 3, c:c + 2].max(axis=(2, 3)) for c in range(6)], -1)
                             for r in range(4)], -2)
            for outputs, _, _ in self.run_both_chips(model, {"x": x}):
                with self.subTest(dtype=dtype.__name__):
                    self.assertEqual(outputs["y"].dtype, dtype)
                    np.testing.assert_array_equal(outputs["y"], want)

    def test_gather_with_run_time_indices(self):
        nodes = [helper.make_node("Gather", ["x", "i"], ["rows"], axis=0),
                 helper.make_node("Gather", ["x", "i"], ["cols"], axis=1),
                 helper.make_node("Gather", ["k", "i"], ["krows"], axis=0)]
        model = make_model(nodes, [tensor("x", [5, 4]), tensor("i", [2, 3], TensorProto.INT64),
                                   tensor("k", [5, 2], TensorProto.INT32)],
                           [tensor("rows", [2, 3, 4]), tensor("cols", [5, 2, 3]),
                            tensor("krows", [2, 3, 2], TensorProto.INT32)])
        rng = np.random.default_rng(15)
        x = rng.standard_normal((5, 4)).astype(np.float32)
        k = rng.integers(-1000, 1000, (5, 2), dtype=np.int32)
        i = np.array([[0, -1, 3], [2, 2, -4]], dtype=np.int64)
        for outputs, _, _ in self.run_both_chips(model, {"x": x, "i": i, "k": k}):
            np.testing.assert_array_equal(outputs["rows"], np.take(x, i, axis=0))
            np.testing.assert_array_equal(outputs["cols"], np.take(x, i, axis=1))
            np.testing.assert_array_equal(outputs["krows"], np.take(k, i, axis=0))

    def test_slices_with_negative_steps_against_numpy(self):
        x = np.arange(6 * 7 * 5, dtype=np.int32).reshape(6, 7, 5) - 100
        cases = [  # (starts, ends, axes, steps): numpy's slice of each
            ([5, 1, 0], [0, 6, 5], [0, 1, 2], [-2, 2, 1], np.s_[5:0:-2, 1:6:2, 0:5]),
            ([-1], [-100], [1], [-1], np.s_[:, ::-1]),
            ([100, 0], [-100, 3], [2, 0], [-3, 1], np.s_[0:3, :, ::-3]),
            ([4, 2], [1, 7], [-1, 1], [-1, 1], np.s_[:, 2:7, 4:1:-1]),
        ]
        for starts, ends, axes, steps, index in cases:
            want = x[index]
            consts = [numpy_helper.from_array(np.array(v, np.int64), n)
                      for n, v in (("s", starts), ("e", ends), ("a", axes), ("t", steps))]
            model = make_model([helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])],
                               [tensor("x", list(x.shape), TensorProto.INT32)],
                               [tensor("y", list(want.shape), TensorProto.INT32)], consts)
            for outputs, _, _ in self.run_both_chips(model, {"x": x}):
                np.testing.assert_array_equal(outputs["y"], want, err_msg=str(steps))

    def test_constant_graph_output(self):
        values = np.arange(6, dtype=np.int64).reshape(2, 3) - 2
        nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(values)),
                 helper.make_node("Relu", ["x"], ["y"])]
        model = make_model(nodes, [tensor("x", [4])], [tensor("c", [2, 3], TensorProto.INT64), tensor("y", [4])])
        x = np.array([-1, 0, 2, -3], np.float32)
        for outputs, _, _ in self.run_both_chips(model, {"x": x}):
            np.testing.assert_array_equal(outputs["c"], values)  # a copy of a weight holding the constant
            np.testing.assert_array_equal(outputs["y"], np.maximum(x, 0))

    def test_rank_0_inputs_and_outputs(self):
        # a scalar input scaling a vector, a full reduction and a Size: rank 0 at the boundary, one element inside
        nodes = [helper.make_node("Mul", ["s", "x"], ["y"]),
                 helper.make_node("ReduceSum", ["y"], ["total"], keepdims=0),
                 helper.make_node("Add", ["total", "s"], ["shifted"]),
                 helper.make_node("Size", ["x"], ["count"])]
        model = make_model(nodes, [tensor("s", []), tensor("x", [2, 3])],
                           [tensor("y", [2, 3]), tensor("total", []), tensor("shifted", []),
                            tensor("count", [], TensorProto.INT64)])
        path = self.save(model)
        x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
        s = np.float32(1.5)
        for chip in CHIPS:
            for given in (np.array(s), np.array([s])):  # rank 0, and the one-element array it is held as
                outputs, _, _ = self.build_and_run(path, chip, {"s": given, "x": x})
                np.testing.assert_array_equal(outputs["y"], s * x)
                for name, want in (("total", (s * x).sum()), ("shifted", (s * x).sum() + s), ("count", 6)):
                    self.assertEqual(outputs[name].shape, (), name)
                    np.testing.assert_allclose(outputs[name], want, rtol=1e-6, err_msg=name)
            model_file = os.path.join(self.dir.name, f"{chip}.tpumodel")  # the same through tpu_model's .npz files
            inputs, out = os.path.join(self.dir.name, "in.npz"), os.path.join(self.dir.name, "out.npz")
            np.savez(inputs, s=np.array(s), x=x)
            done = subprocess.run([os.environ["TPU_MODEL_TOOL"], "run", model_file, "--input", inputs, "--output", out],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            with np.load(out) as written:
                self.assertEqual(written["total"].shape, ())
                np.testing.assert_allclose(written["total"], (s * x).sum(), rtol=1e-6)
            with self.assertRaises(tpu_sdk.Error) as caught:  # a scalar input takes one element, no more
                tpu_sdk.run_model(model_file, {"s": np.array([s, s]), "x": x})
            self.assertIn("array 's' has shape [2], but input 's' is [1]", str(caught.exception))

    def test_graph_without_inputs(self):
        # outputs from constants alone: a Constant node's value, and a layer computing on an initializer
        values = np.array([[1.5, -2.0, 0.25], [3.0, -0.5, 8.0]], np.float32)
        nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(values)),
                 helper.make_node("Neg", ["w"], ["n"])]
        model = make_model(nodes, [], [tensor("c", [2, 3]), tensor("n", [2, 3])],
                           [numpy_helper.from_array(values * 2, "w")])
        path = self.save(model)
        for chip in CHIPS:
            outputs, _, _ = self.build_and_run(path, chip, {})
            np.testing.assert_array_equal(outputs["c"], values)
            np.testing.assert_array_equal(outputs["n"], -2 * values)
            model_file = os.path.join(self.dir.name, f"{chip}.tpumodel")  # tpu_model runs it without --input
            out = os.path.join(self.dir.name, "out.npz")
            done = subprocess.run([os.environ["TPU_MODEL_TOOL"], "run", model_file, "--output", out],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            np.testing.assert_array_equal(np.load(out)["n"], -2 * values)

    def test_training_batch_normalization_against_numpy(self):
        # ONNX's definition (opset 15): batch mean and population variance over every axis but 1; the running
        # statistics input * momentum + batch * (1 - momentum)
        rng = np.random.default_rng(5)
        x = rng.normal(1.0, 2.0, (3, 4, 5)).astype(np.float32)
        scale, bias, mean, var = (rng.uniform(0.5, 2.0, 4).astype(np.float32) for _ in range(4))
        node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1,
                                epsilon=1e-3, momentum=0.8)
        batch_mean, batch_var = x.astype(np.float64).mean(axis=(0, 2)), x.astype(np.float64).var(axis=(0, 2))
        want = {"y": (x - batch_mean[:, None]) / np.sqrt(batch_var[:, None] + 1e-3) * scale[:, None] + bias[:, None],
                "rm": mean * 0.8 + batch_mean * 0.2, "rv": var * 0.8 + batch_var * 0.2}
        outs = [tensor("y", [3, 4, 5]), tensor("rm", [4]), tensor("rv", [4])]
        as_inputs = make_model([node], [tensor(n, list(a.shape)) for n, a in zip("xsbmv", (x, scale, bias, mean, var))],
                               outs, opsets=(("", 15),))
        as_constants = make_model([node], [tensor("x", [3, 4, 5])], outs,
                                  [numpy_helper.from_array(a, n) for n, a in zip("sbmv", (scale, bias, mean, var))],
                                  (("", 15),))
        for model, feed in ((as_inputs, {"x": x, "s": scale, "b": bias, "m": mean, "v": var}), (as_constants, {"x": x})):
            for outputs, _, _ in self.run_both_chips(model, feed):
                for name, expected in want.items():
                    np.testing.assert_allclose(outputs[name], expected, rtol=2e-6, atol=2e-6, err_msg=name)

    def test_zero_size_tensors(self):
        # a 0 dim is a legal tensor: the layers producing nothing issue no command, outputs come back empty
        x = np.zeros((2, 0, 3), np.float32)
        b = np.arange(6, dtype=np.float32).reshape(2, 1, 3) - 2
        w = np.arange(12, dtype=np.float32).reshape(3, 4)
        consts = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
                  (("s", [1000]), ("e", [1000]), ("a", [1]), ("shape", [3, 0, 2]))]
        nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "b"], ["sum"]),
                 helper.make_node("Concat", ["x", "b"], ["cat"], axis=1), helper.make_node("Sigmoid", ["cat"], ["sig"]),
                 helper.make_node("Slice", ["w", "s", "e", "a"], ["none"]),
                 helper.make_node("Reshape", ["x", "shape"], ["re"], allowzero=1)]
        model = make_model(nodes, [tensor("x", [2, 0, 3]), tensor("b", [2, 1, 3]), tensor("w", [3, 4])],
                           [tensor("sum", [2, 0, 3]), tensor("sig", [2, 1, 3]), tensor("none", [3, 0]),
                            tensor("re", [3, 0, 2])], consts, (("", 14),))
        for outputs, _, _ in self.run_both_chips(model, {"x": x, "b": b, "w": w}):
            for name, shape in (("sum", (2, 0, 3)), ("none", (3, 0)), ("re", (3, 0, 2))):
                self.assertEqual(outputs[name].shape, shape, name)
            np.testing.assert_allclose(outputs["sig"], 1 / (1 + np.exp(-b)), rtol=1e-6)

    def test_dropout_as_identity_with_its_mask(self):
        # inference, and training with ratio 0: the identity, the mask all true (NaN and inf too)
        x = np.array([[1.5, -np.inf, np.nan], [0.0, 3.0, -2.0]], np.float32)
        for training, ratio in ((False, 0.5), (True, 0.0)):
            model = make_model([helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"])], [tensor("x", [2, 3])],
                               [tensor("y", [2, 3]), tensor("mask", [2, 3], TensorProto.BOOL)],
                               [numpy_helper.from_array(np.array(ratio, np.float32), "r"),
                                numpy_helper.from_array(np.array(training), "t")])
            for outputs, _, _ in self.run_both_chips(model, {"x": x}):
                np.testing.assert_array_equal(outputs["y"], x)
                np.testing.assert_array_equal(outputs["mask"], np.ones((2, 3)))

    def test_import_onnx_returns_the_net_description(self):
        model = make_model([helper.make_node("Relu", ["in.1"], ["out/0"], name="r")], [tensor("in.1", [1, 8])],
                           [tensor("out/0", [1, 8])])
        net_json, warnings = tpu_sdk.import_onnx(self.save(model), **{k: v for k, v in libraries("bm1684x").items()
                                                                      if k != "firmware"})
        net = json.loads(net_json)
        self.assertEqual(net["inputs"], [{"name": "in.1", "shape": [1, 8], "dtype": "fp32"}])
        self.assertEqual(net["outputs"], ["out/0"])
        self.assertEqual(net["layers"][0]["name"], "r")
        self.assertEqual(warnings, [])
        self.assertIn("Conv", tpu_sdk.onnx_supported_ops())


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class MatrixProducts(OnnxCase):
    """MatMul and Gemm as one builtin.matmul layer, against numpy in double."""

    def build(self, nodes, inputs, output_shape, initializers=(), elem_type=TensorProto.FLOAT):
        graph_inputs = [tensor(name, list(value.shape), elem_type) for name, value in inputs.items()]
        path = self.save(make_model(nodes, graph_inputs, [tensor("y", list(output_shape), elem_type)], initializers))
        results = {}
        for chip in CHIPS:
            outputs, _, info = self.build_and_run(path, chip, inputs)
            results[chip] = outputs["y"], [layer["op"] for layer in json.loads(info["net_json"])["layers"]]
        return results

    def test_batched_matmul_broadcasting_batch_dims_is_one_layer(self):
        rng = np.random.default_rng(3)
        a = rng.standard_normal((2, 1, 4, 5)).astype(np.float32)
        b = rng.standard_normal((3, 5, 6)).astype(np.float32)
        expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
        for chip, (y, ops) in self.build([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": b},
                                         expected.shape).items():
            self.assertEqual(ops, ["builtin.matmul"], chip)
            np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5, err_msg=chip)

    def test_matmul_of_vectors_and_a_constant_float16_matrix(self):
        rng = np.random.default_rng(4)
        a = rng.standard_normal(7).astype(np.float16)
        b = rng.standard_normal((3, 7, 5)).astype(np.float16)
        expected = np.matmul(a.astype(np.float64), b.astype(np.float64))  # [3, 5]
        for chip, (y, ops) in self.build([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": a}, expected.shape,
                                         [numpy_helper.from_array(b, "b")], TensorProto.FLOAT16).items():
            self.assertEqual(ops, ["builtin.reshape", "builtin.matmul", "builtin.reshape"], chip)
            # fp32 accumulation, one rounding to fp16
            np.testing.assert_allclose(y, expected, rtol=2 ** -10, atol=1e-3, err_msg=chip)

    def test_gemm_with_transposes_alpha_and_beta(self):
        rng = np.random.default_rng(5)
        a = rng.standard_normal((6, 4)).astype(np.float32)   # transA: A is [K, M]
        b = rng.standard_normal((5, 6)).astype(np.float32)   # transB: B is [N, K]
        c = rng.standard_normal(5).astype(np.float32)
        node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.75, beta=-1.5)
        expected = 0.75 * a.T.astype(np.float64) @ b.T.astype(np.float64) - 1.5 * c.astype(np.float64)
        constant = self.build([node], {"a": a}, (4, 5), [numpy_helper.from_array(b, "b"), numpy_helper.from_array(c, "c")])
        computed = self.build([node], {"a": a, "b": b, "c": c}, (4, 5))
        for chip in CHIPS:
            y, ops = constant[chip]
            self.assertEqual(ops, ["builtin.matmul"], chip)  # alpha in the weight, beta C the bias
            np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5, err_msg=chip)
            y, ops = computed[chip]
            self.assertEqual(ops, ["builtin.matmul", "builtin.expression"], chip)
            np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5, err_msg=chip)


def pow_reference(x, y):
    """numpy's pow in double: NaN for a negative base and a non-integer exponent."""
    with np.errstate(all="ignore"):
        return np.power(x.astype(np.float64), y.astype(np.float64))


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class WindowsAndPow(OnnxCase):
    """Conv and pool windows beyond the engines' limits and Pow, against PyTorch and numpy."""

    def run_single(self, node, inputs, out_shape, initializers=(), opset=13, elem_type=TensorProto.FLOAT):
        graph_inputs = [tensor(name, list(value.shape), elem_type) for name, value in inputs.items()]
        model = make_model([node], graph_inputs, [tensor("y", list(out_shape), elem_type)], initializers,
                           (("", opset),))
        path = self.save(model)
        return {chip: self.build_and_run(path, chip, inputs)[0]["y"] for chip in CHIPS}

    def assert_window(self, node, x, expected, initializers=()):
        expected = expected.numpy()
        for chip, y in self.run_single(node, {"x": x}, expected.shape, initializers).items():
            np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5, err_msg=chip)

    def test_conv_with_pads_beyond_the_engines_15(self):
        import torch
        rng = np.random.default_rng(7)
        x = rng.standard_normal((1, 3, 6, 7)).astype(np.float32)
        w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
        b = rng.standard_normal(4).astype(np.float32)
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[17, 2, 20, 16], strides=[2, 1])
        expected = torch.nn.functional.conv2d(torch.nn.functional.pad(torch.from_numpy(x), (2, 16, 17, 20)),
                                              torch.from_numpy(w), torch.from_numpy(b), stride=(2, 1))
        self.assert_window(node, x, expected, [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])

    def test_1d_conv_with_groups_dilation_and_asymmetric_pads(self):
        import torch
        rng = np.random.default_rng(11)
        x = rng.standard_normal((2, 4, 19)).astype(np.float32)
        w = rng.standard_normal((6, 2, 3)).astype(np.float32)
        b = rng.standard_normal(6).astype(np.float32)
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[3, 1], strides=[2], dilations=[2], group=2)
        expected = torch.nn.functional.conv1d(torch.nn.functional.pad(torch.from_numpy(x), (3, 1)),
                                              torch.from_numpy(w), torch.from_numpy(b), stride=2, dilation=2, groups=2)
        self.assert_window(node, x, expected, [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
        same = helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", group=2)
        expected = torch.nn.functional.conv1d(torch.from_numpy(x), torch.from_numpy(w), padding="same", groups=2)
        self.assert_window(same, x, expected, [numpy_helper.from_array(w, "w")])

    def test_pools_with_pads_beyond_the_engines_15(self):
        import torch
        F = torch.nn.functional
        x = np.random.default_rng(8).standard_normal((1, 2, 5, 6)).astype(np.float32)
        t = torch.from_numpy(x)
        avg = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[18, 3], pads=[17, 1, 16, 1],
                               count_include_pad=1)
        self.assert_window(avg, x, F.avg_pool2d(F.pad(t, (1, 1, 17, 16)), (18, 3), stride=1))
        mx = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[18, 2], pads=[17, 0, 17, 1])
        self.assert_window(mx, x, F.max_pool2d(F.pad(t, (0, 1, 17, 17), value=-np.inf), (18, 2), stride=1))

    def test_3d_average_pool_with_ceil_mode_not_counting_the_padding(self):
        import torch
        x = np.random.default_rng(9).standard_normal((1, 2, 6, 6, 7)).astype(np.float32)
        node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 3, 3], strides=[2, 2, 2],
                                pads=[1, 1, 1, 1, 1, 1], ceil_mode=1)
        expected = torch.nn.functional.avg_pool3d(torch.from_numpy(x), (2, 3, 3), (2, 2, 2), padding=(1, 1, 1),
                                                  ceil_mode=True, count_include_pad=False)
        self.assert_window(node, x, expected)

    def test_1d_max_pool_with_dilation_and_ceil_mode(self):
        import torch
        x = np.random.default_rng(10).standard_normal((2, 3, 11)).astype(np.float32)
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2], dilations=[2], pads=[1, 1],
                                ceil_mode=1)
        expected = torch.nn.functional.max_pool1d(torch.from_numpy(x), 3, 2, padding=1, dilation=2, ceil_mode=True)
        self.assert_window(node, x, expected)

    @staticmethod
    def max_pool_reference(x, kernel, strides, pads, dilations, order, out_hw):
        """ONNX's MaxPool with Indices, written from its definition: the first maximal element of each window in
        row-major window order, its flat index into x (n and c included; storage_order 1: column-major)."""
        n, c, height, width = x.shape
        y = np.empty((n, c) + out_hw, x.dtype)
        index = np.empty((n, c) + out_hw, np.int64)
        for b, ch, oy, ox in np.ndindex(*y.shape):
            best, at = None, None
            for i, j in np.ndindex(*kernel):
                row, col = oy * strides[0] - pads[0] + i * dilations[0], ox * strides[1] - pads[1] + j * dilations[1]
                if 0 <= row < height and 0 <= col < width and (best is None or x[b, ch, row, col] > best):
                    best, at = x[b, ch, row, col], (row, col)
            y[b, ch, oy, ox] = best
            flat = at[0] * width + at[1] if order == 0 else at[1] * height + at[0]
            index[b, ch, oy, ox] = (b * c + ch) * height * width + flat
        return y, index

    def test_max_pool_indices_against_onnx_definition(self):
        rng = np.random.default_rng(3)
        cases = [  # kernel, strides, pads (top, left, bottom, right), dilations, storage_order, dtype
            ((3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 0, np.float32),
            ((2, 3), (2, 1), (0, 2, 1, 0), (1, 2), 1, np.float32),
            ((4, 2), (1, 2), (2, 0, 1, 1), (2, 1), 0, np.float16),
            ((3, 3), (2, 2), (0, 0, 0, 0), (1, 1), 1, np.int8),
        ]
        elem = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.int8: TensorProto.INT8}
        for kernel, strides, pads, dilations, order, dtype in cases:
            x = rng.integers(-3, 4, (2, 3, 7, 6)).astype(dtype)  # few values: many ties, the first must win
            out_hw = tuple((x.shape[2 + d] + pads[d] + pads[d + 2] - (kernel[d] - 1) * dilations[d] - 1) // strides[d]
                           + 1 for d in range(2))
            want_y, want_i = self.max_pool_reference(x, kernel, strides, (pads[0], pads[1]), dilations, order, out_hw)
            node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=list(kernel), strides=list(strides),
                                    pads=list(pads), dilations=list(dilations), storage_order=order)
            shape = list(x.shape[:2]) + list(out_hw)
            model = make_model([node], [tensor("x", list(x.shape), elem[dtype])],
                               [tensor("y", shape, elem[dtype]), tensor("i", shape, TensorProto.INT64)],
                               opsets=(("", 12),))
            path = self.save(model)
            for chip in CHIPS:
                outputs = self.build_and_run(path, chip, {"x": x})[0]
                msg = f"{chip} kernel {kernel} order {order} {dtype.__name__}"
                np.testing.assert_array_equal(outputs["y"], want_y, err_msg=msg)
                self.assertEqual(outputs["i"].dtype, np.int32)
                np.testing.assert_array_equal(outputs["i"], want_i, err_msg=msg)

    def test_max_pool_indices_match_pytorch(self):
        import torch
        x = torch.randn(2, 4, 9, 8, generator=torch.Generator().manual_seed(7))
        y, index = torch.nn.functional.max_pool2d(x, 3, stride=2, padding=1, dilation=1, return_indices=True)
        planes = (torch.arange(8).reshape(2, 4, 1, 1) * 72)  # PyTorch's indices are per (n, c) plane; ONNX's are not
        node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        model = make_model([node], [tensor("x", [2, 4, 9, 8])],
                           [tensor("y", list(y.shape)), tensor("i", list(y.shape), TensorProto.INT64)])
        path = self.save(model)
        for chip in CHIPS:
            outputs = self.build_and_run(path, chip, {"x": x.numpy()})[0]
            np.testing.assert_array_equal(outputs["y"], y.numpy())
            np.testing.assert_array_equal(outputs["i"], (index + planes).numpy())

    def assert_pow(self, got, x, y, bound, err_msg):
        """NaN and inf where numpy has them; elsewhere |got - ref| <= bound(ref, t) with t = y ln|x|."""
        ref = pow_reference(x, y)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=err_msg)
        finite = np.isfinite(ref)
        np.testing.assert_array_equal(got[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)], err_msg=err_msg)
        with np.errstate(all="ignore"):
            t = np.abs(np.broadcast_to(y, ref.shape) * np.log(np.abs(np.broadcast_to(x, ref.shape).astype(np.float64))))
            t = np.where(np.isfinite(t), t, 0)
            error = np.abs(got.astype(np.float64) - ref)
        allowed = bound(np.abs(ref), t)
        self.assertTrue(np.all(error[finite] <= allowed[finite]),
                        f"{err_msg}: worst {np.max(error[finite] / np.maximum(allowed[finite], 1e-300))} of the bound")

    def test_pow_with_a_tensor_exponent_against_double(self):
        x = np.array([-3, -2.5, -2, -1, -0.5, 0, 0.5, 1, 2, 3.7, 10, -10], np.float32).reshape(12, 1)
        y = np.array([0, 1, 2, 3, -1, -2, 0.5, -1.5, 2.2, 7, -7, 16777218], np.float32).reshape(1, 12)
        x[0, 0] = np.nan  # x^0 is 1 even for NaN
        node = helper.make_node("Pow", ["x", "e"], ["y"])
        for chip, got in self.run_single(node, {"x": x, "e": y}, (12, 12)).items():
            self.assert_pow(got, x, y, lambda r, t: (2 * t + 2) * 2.0 ** -24 * r + 1e-38, chip)

    def test_pow_with_constant_exponents_against_double(self):
        x = np.array([-2.5, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2.5, 3, np.nan], np.float32)
        for e in (0, 3, -3, 8, 11, -7, 3.7, -0.25, 0.5):
            node = helper.make_node("Pow", ["x", "e"], ["y"])
            outputs = self.run_single(node, {"x": x}, x.shape,
                                      [numpy_helper.from_array(np.array(e, np.float32), "e")])
            for chip, got in outputs.items():
                # products: at most 4 roundings and a division; exp / log: the stated bound
                self.assert_pow(got, x, np.float32(e), lambda r, t: (2 * t + 6) * 2.0 ** -24 * r + 1e-38,
                                f"{chip}, exponent {e}")

    def test_float16_pow_runs_in_float32(self):
        x = np.array([-3, -2, -0.5, 0.25, 1.5, 2, 3.7, 5], np.float16).reshape(8, 1)
        y = np.array([3, -2, 0.5, 2.5, -1.25, 4], np.float16).reshape(1, 6)
        node = helper.make_node("Pow", ["x", "e"], ["y"])
        for chip, got in self.run_single(node, {"x": x, "e": y}, (8, 6), elem_type=TensorProto.FLOAT16).items():
            # one rounding to fp16 (half an ulp, 2^-11 relative) after an fp32 result
            self.assert_pow(got, x, y, lambda r, t: 2.0 ** -11 * r * 1.01 + 1e-7, chip)
        for e in (3, -4, 5):  # constant integers: fp32 too, not products of fp16 roundings (5^5 fits fp16)
            outputs = self.run_single(node, {"x": x}, x.shape, [numpy_helper.from_array(np.array(e, np.float16), "e")],
                                      elem_type=TensorProto.FLOAT16)
            for chip, got in outputs.items():
                self.assert_pow(got, x, np.float16(e), lambda r, t: 2.0 ** -11 * r * 1.01 + 1e-7, f"{chip}, {e}")


    def test_float16_pow_keeps_a_float32_exponents_digits(self):
        # ONNX lets Y have another type than X: a float32 constant exponent is not rounded to fp16 first
        x = np.array([1.5, 2, 3.7, 5], np.float16).reshape(4, 1)
        y = np.array([6.001, -2.0009, 3.3337, 0.9991], np.float32).reshape(1, 4)
        model = make_model([helper.make_node("Pow", ["x", "e"], ["y"])], [tensor("x", [4, 1], TensorProto.FLOAT16)],
                           [tensor("y", [4, 4], TensorProto.FLOAT16)], [numpy_helper.from_array(y, "e")])
        path = self.save(model)
        for chip in CHIPS:
            got = self.build_and_run(path, chip, {"x": x})[0]["y"]
            self.assert_pow(got, x, y, lambda r, t: 2.0 ** -11 * r * 1.01 + 1e-7, chip)


def integer_pow_reference(x, y):
    """x^y of int32 values in Python's exact integers, wrapped to int32 like numpy; a negative y: the integer
    part of 1 / x^|y| (1 for x = 1, (-1)^|y| for x = -1, 0 for |x| >= 2, int32's largest value for x = 0)."""
    def one(a, b):
        a, b = int(a), int(b)
        if b < 0:
            return {1: 1, -1: -1 if b % 2 else 1, 0: 2 ** 31 - 1}.get(a, 0)
        r = pow(a, b, 2 ** 32)
        return r - 2 ** 32 if r >= 2 ** 31 else r
    x, y = np.broadcast_arrays(x, y)
    return np.array([one(a, b) for a, b in zip(x.ravel(), y.ravel())], np.int64).reshape(x.shape)


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class IntegerPow(OnnxCase):
    """Pow of an int32 / int64 base (builtin.int_pow) against exact integer powers."""

    def run_pow(self, x, y, x_type, y_type, initializers=(), opset=15):
        inputs = {"x": x} if initializers else {"x": x, "e": y}
        graph_inputs = [tensor(n, list(v.shape), t) for (n, v), t in zip(inputs.items(), (x_type, y_type))]
        shape = np.broadcast_shapes(x.shape, np.shape(y))
        model = make_model([helper.make_node("Pow", ["x", "e"], ["y"])], graph_inputs, [tensor("y", list(shape), x_type)],
                           initializers, (("", opset),))
        path = self.save(model)
        return {chip: self.build_and_run(path, chip, inputs)[0]["y"] for chip in CHIPS}

    def test_int32_powers_wrap_like_numpy(self):
        x = np.array([0, 1, -1, 2, -2, 3, -3, 7, 10, -10, 65537, 2 ** 31 - 1, -2 ** 31, 12345], np.int32).reshape(14, 1)
        y = np.array([0, 1, 2, 3, 5, 13, 31, 32, 33, 40, 1000003, 2 ** 31 - 1], np.int32).reshape(1, 12)
        want = integer_pow_reference(x, y)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(want, np.power(x, y))  # the reference is numpy's wrapping power
        for chip, got in self.run_pow(x, y, TensorProto.INT32, TensorProto.INT32).items():
            self.assertEqual(got.dtype, np.int32)
            np.testing.assert_array_equal(got, want, err_msg=chip)

    def test_negative_integer_exponents(self):
        # numpy refuses them; the integer part of the real power, 0 ** -n saturated like integer Div by zero
        x = np.array([1, -1, 0, 2, -2, 5, -2 ** 31], np.int32).reshape(7, 1)
        y = np.array([-1, -2, -3, -2 ** 31], np.int32)
        for chip, got in self.run_pow(x, y, TensorProto.INT32, TensorProto.INT32).items():
            np.testing.assert_array_equal(got, integer_pow_reference(x, y), err_msg=chip)
        self.assertEqual(integer_pow_reference(np.int32(-1), np.int32(-3)), -1)

    def test_int64_tensors_and_small_integer_exponents(self):
        x = np.array([[-3, 2, 9, 11], [0, -1, 4, 6]], np.int64)
        y = np.array([3, 0, 5, 7], np.int64)  # every power fits int32: the values ONNX's int64 gives
        for chip, got in self.run_pow(x, y, TensorProto.INT64, TensorProto.INT64).items():
            np.testing.assert_array_equal(got, np.power(x, y), err_msg=chip)
        y8 = np.array([2, 0, 3, 9], np.uint8)  # cast to int32, exactly
        for chip, got in self.run_pow(x.astype(np.int32), y8, TensorProto.INT32, TensorProto.UINT8).items():
            np.testing.assert_array_equal(got, integer_pow_reference(x, y8), err_msg=chip)

    def test_unsigned_and_constant_exponents(self):
        x = np.array([3, -5, 2, 7], np.int32)
        y = np.array([2 ** 31 + 1, 4, 2 ** 32 - 1, 3], np.uint32)  # beyond int32: read as unsigned
        for chip, got in self.run_pow(x, y, TensorProto.INT32, TensorProto.UINT32).items():
            np.testing.assert_array_equal(got, integer_pow_reference(x, y.astype(np.int64)), err_msg=chip)
        e = numpy_helper.from_array(np.array(9, np.int64), "e")  # a scalar constant, broadcast
        for chip, got in self.run_pow(x, None, TensorProto.INT32, TensorProto.INT64, [e]).items():
            np.testing.assert_array_equal(got, integer_pow_reference(x, np.int64(9)), err_msg=chip)

    def test_float_exponents_of_an_integer_base(self):
        # ONNX's reference: the power in double, truncated into the base's type; integral exponents exactly
        x = np.array([2, -2, 3, 4, 9, 0, -1, 7, 10], np.int32).reshape(9, 1)
        y = np.array([0, 1, 2, 3, -1, -2, 0.5, 1.5, 2.5, -0.5, 9, 0.25], np.float32)
        with np.errstate(all="ignore"):
            real = np.power(x.astype(np.float64), y.astype(np.float64))
        want = np.where(np.isnan(real), 0, np.trunc(np.clip(real, -2 ** 31, 2 ** 31 - 1))).astype(np.int64)
        integral = y == np.round(y)
        want[:, integral] = integer_pow_reference(x, y[integral].astype(np.int64))
        for chip, got in self.run_pow(x, y, TensorProto.INT32, TensorProto.FLOAT).items():
            np.testing.assert_array_equal(got, want, err_msg=chip)


@unittest.skipUnless(tpu_sdk.onnx_import_available(), "built without libonnx-dev")
class Refusals(OnnxCase):
    def test_unknown_standard_op(self):
        model = make_model([helper.make_node("Hardmax", ["x"], ["y"], name="hm")], [tensor("x", [2, 3])],
                           [tensor("y", [2, 3])])
        self.assert_refused(model, "node 'hm' (Hardmax)", "op Hardmax is not supported", "Conv")

    def test_unsupported_attribute_value(self):
        model = make_model([helper.make_node("Clip", ["x"], ["y"], name="clip", min=0.0, max=float("inf"))],
                           [tensor("x", [4])], [tensor("y", [4])], (), (("", 6),))
        self.assert_refused(model, "node 'clip' (Clip)", "attribute 'max' is inf, which a formula cannot hold")

    def test_ceil_mode_window_that_onnx_1_12_keeps_in_the_padding(self):
        # ONNX 1.12's shape inference keeps a last window that starts in the end padding; PyTorch and ONNX's
        # later reference drop it
        model = make_model([helper.make_node("AveragePool", ["x"], ["y"], name="avg", kernel_shape=[2],
                                             strides=[2], pads=[1, 1], ceil_mode=1)],
                           [tensor("x", [1, 1, 5])], [tensor("y", [1, 1, 4])])
        self.assert_refused(model, "node 'avg' (AveragePool)",
                            "the output 'y' has the shape [1, 1, 4], but the window gives [1, 1, 3]",
                            "starts in the end padding")

    def test_attribute_the_schema_does_not_know(self):
        node = helper.make_node("Relu", ["x"], ["y"], name="r")
        node.attribute.append(helper.make_attribute("slope", 0.5))
        model = make_model([node], [tensor("x", [4])], [tensor("y", [4])])
        # ONNX's checker refuses it first, naming the attribute and the node.
        self.assert_refused(model, "the ONNX checker refuses the model", "Unrecognized attribute: slope",
                            "Name: r OpType: Relu")

    def test_attribute_value_the_importer_does_not_support(self):
        model = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[2, 2],
                                             storage_order=2)],
                           [tensor("x", [1, 2, 6, 6])], [tensor("y", [1, 2, 5, 5]), tensor("i", [1, 2, 5, 5],
                                                                                            TensorProto.INT64)])
        self.assert_refused(model, "node 'mp' (MaxPool)", "attribute 'storage_order' is 2; 0 or 1")

    def test_max_pool_indices_of_a_3d_window(self):
        model = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[2, 2, 2])],
                           [tensor("x", [1, 1, 3, 3, 3])],
                           [tensor("y", [1, 1, 2, 2, 2]), tensor("i", [1, 1, 2, 2, 2], TensorProto.INT64)])
        self.assert_refused(model, "node 'mp' (MaxPool): output 1 (Indices) 'i': Indices are supported for 2-D "
                                   "windows ([n, c, h, w]), not 3-D")

    def test_max_pool_indices_beyond_int32(self):
        model = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[1, 1])],
                           [tensor("x", [1024, 1024, 64, 33], TensorProto.INT8)],
                           [tensor("y", [1024, 1024, 64, 33], TensorProto.INT8),
                            tensor("i", [1024, 1024, 64, 33], TensorProto.INT64)])
        self.assert_refused(model, "node 'mp' (MaxPool): output 1 (Indices) 'i': the flat index reaches 2214592511, "
                                   "which int32 cannot hold")

    def test_max_pool_indices_of_a_window_beyond_fp32_integers(self):
        w = 2 ** 23
        model = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[3, 1])],
                           [tensor("x", [1, 1, 3, w], TensorProto.INT8)],
                           [tensor("y", [1, 1, 1, w], TensorProto.INT8), tensor("i", [1, 1, 1, w], TensorProto.INT64)])
        self.assert_refused(model, "node 'mp' (MaxPool): output 1 (Indices) 'i': a window spans 16777216 elements of X, "
                                   "beyond fp32's exact integers (2^24)")

    def test_training_batch_normalization_before_opset_14(self):
        # opsets 9 to 13 mark training by the five outputs (saved mean and variance too): not supported
        outs = ["y", "m2", "v2", "sm", "sv"]
        model = make_model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], outs, name="bn")],
                           [tensor("x", [2, 3, 4])],
                           [tensor("y", [2, 3, 4])] + [tensor(o, [3]) for o in outs[1:]],
                           [numpy_helper.from_array(np.ones(3, np.float32), n) for n in "sbmv"], (("", 9),))
        self.assert_refused(model, "node 'bn' (BatchNormalization): 5 outputs; inference BatchNormalization has 1",
                            "before opset 14 training outputs are not supported")

    def test_zero_stride_refused_before_onnx_shape_inference(self):
        # ONNX 1.12's shape inference of a pool divides by the stride: the importer refuses it first
        model = make_model([helper.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2, 2], strides=[0, 1])],
                           [tensor("x", [1, 1, 5, 5])], [tensor("y", [1, 1, 4, 4])])
        self.assert_refused(model, "node 'mp' (MaxPool)", "attribute 'strides' is [0, 1]; each value must be at least 1")

    def test_negative_pool_pads(self):
        model = make_model([helper.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2, 2],
                                             pads=[-1, 0, 0, 0])],
                           [tensor("x", [1, 1, 5, 5])], [tensor("y", [1, 1, 3, 4])])
        self.assert_refused(model, "node 'mp' (MaxPool)", "attribute 'pads' is [-1, 0, 0, 0]; each value must be at least 0")

    def test_3d_conv(self):
        w = numpy_helper.from_array(np.ones((2, 1, 2, 2, 2), np.float32), "w")
        model = make_model([helper.make_node("Conv", ["x", "w"], ["y"], name="c3")], [tensor("x", [1, 1, 4, 4, 4])],
                           [tensor("y", [1, 2, 3, 3, 3])], [w])
        self.assert_refused(model, "node 'c3' (Conv)", "weight 'w' has 5 dims; only 1-D and 2-D convolutions are supported")

    def test_pow_with_an_infinite_exponent(self):
        model = make_model([helper.make_node("Pow", ["x", "e"], ["y"], name="pw")], [tensor("x", [4])],
                           [tensor("y", [4])], [numpy_helper.from_array(np.array(np.inf, np.float32), "e")])
        self.assert_refused(model, "node 'pw' (Pow)", "input 1 (Y) is inf; a finite exponent is supported")

    def test_unsupported_element_type(self):
        model = make_model([helper.make_node("Identity", ["a"], ["y"], name="id")],
                           [tensor("a", [4], TensorProto.COMPLEX64)], [tensor("y", [4], TensorProto.COMPLEX64)])
        self.assert_refused(model, "graph input 'a' is complex64; supported element types: float, float16, bfloat16, "
                                   "double (as fp32), int8, uint8, int16, uint16, int32, uint32, int64 (as int32), "
                                   "uint64 (as uint32), bool (as 0 / 1)")
        # string tensors: test_onnx_strings.py

    def test_training_dropout_that_drops(self):
        model = make_model([helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")], [tensor("x", [4])],
                           [tensor("y", [4])], [numpy_helper.from_array(np.array(0.25, np.float32), "r"),
                                                numpy_helper.from_array(np.array(True), "t")])
        self.assert_refused(model, "node 'drop' (Dropout): input 2 (training_mode) is true with ratio 0.25: training "
                                   "Dropout drops random elements")

    def test_integer_tensor_of_a_float_only_op(self):
        model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                           [tensor("a", [2, 3], TensorProto.INT32), tensor("b", [3, 4], TensorProto.INT32)],
                           [tensor("y", [2, 4], TensorProto.INT32)])
        self.assert_refused(model, "node 'mm' (MatMul): input 'a' is int32; supported element types: float, "
                                   "float16, bfloat16, double (as fp32)")

    def test_integer_reductions_other_than_sum_max_min(self):
        model = make_model([helper.make_node("ReduceMean", ["k"], ["y"], name="mean", axes=[1])],
                           [tensor("k", [2, 3], TensorProto.INT32)], [tensor("y", [2, 1], TensorProto.INT32)])
        self.assert_refused(model, "node 'mean' (ReduceMean): integer tensors are supported by ReduceSum, ReduceMax "
                                   "and ReduceMin only")
        model = make_model([helper.make_node("ReduceMax", ["k"], ["y"], name="max", axes=[1])],
                           [tensor("k", [2, 300], TensorProto.INT32)], [tensor("y", [2, 1], TensorProto.INT32)])
        self.assert_refused(model, "node 'max' (ReduceMax): an integer reduction over 300 elements is not supported "
                                   "(at most 256")

    def test_graph_output_that_is_a_graph_input(self):
        model = make_model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", [4])],
                           [tensor("y", [4]), tensor("x", [4])])
        self.assert_refused(model, "graph output 'x' is a graph input: a net output must be computed by a layer")

    def test_int32_division(self):
        model = make_model([helper.make_node("Div", ["a", "b"], ["y"], name="div")],
                           [tensor("a", [4], TensorProto.INT32), tensor("b", [4], TensorProto.INT32)],
                           [tensor("y", [4], TensorProto.INT32)])
        self.assert_refused(model, "node 'div' (Div): output 'y' is int32: integer Div takes 8- and 16-bit integers")

    def test_int64_constant_beyond_int32(self):
        big = numpy_helper.from_array(np.array([1, 2**33], dtype=np.int64), "big")
        model = make_model([helper.make_node("Add", ["a", "big"], ["y"], name="add")],
                           [tensor("a", [2], TensorProto.INT64)], [tensor("y", [2], TensorProto.INT64)], [big])
        self.assert_refused(model, "node 'add' (Add): constant 'big': element 1 is 8589934592, which int32 cannot "
                                   "hold (the device holds int64 tensors as int32)")

    def test_cast_from_uint32_to_int64(self):
        model = make_model([helper.make_node("Cast", ["a"], ["y"], name="c", to=TensorProto.INT64)],
                           [tensor("a", [2], TensorProto.UINT32)], [tensor("y", [2], TensorProto.INT64)])
        self.assert_refused(model, "node 'c' (Cast): attribute 'to' = int64: a cast from uint32 to int64 is not "
                                   "supported (the device holds int64 as int32 and uint64 as uint32, which do not "
                                   "hold every uint32 value)")

    def test_integer_clip_bound_beyond_fp32s_integers(self):
        low = numpy_helper.from_array(np.array(-2**30, dtype=np.int32), "low")
        model = make_model([helper.make_node("Clip", ["a", "low"], ["y"], name="c")],
                           [tensor("a", [2], TensorProto.INT32)], [tensor("y", [2], TensorProto.INT32)], [low])
        self.assert_refused(model, "'c'", "is not an integer in [-16777216, 16777216] (int32 within fp32's exact "
                                          "integers)")

    def test_int64_input_beyond_int32_at_run(self):
        model = make_model([helper.make_node("Neg", ["a"], ["y"], name="n")],
                           [tensor("a", [3], TensorProto.INT64)], [tensor("y", [3], TensorProto.INT64)])
        model_file = os.path.join(self.dir.name, "n.tpumodel")
        tpu_sdk.build_onnx(self.save(model), "bm1684x", model_file, reference=False, **libraries("bm1684x"))
        with self.assertRaises(tpu_sdk.Error) as caught:
            tpu_sdk.run_model(model_file, {"a": np.array([1, -2, -2**31 - 1], dtype=np.int64)})
        self.assertIn("array 'a' (int64) for input 'a': element 2 is -2147483649, which int32 cannot hold: the "
                      "model holds this input as int32 on the device", str(caught.exception))
        unsigned = make_model([helper.make_node("Max", ["u", "u"], ["y"], name="m")],
                              [tensor("u", [2], TensorProto.UINT64)], [tensor("y", [2], TensorProto.UINT64)])
        tpu_sdk.build_onnx(self.save(unsigned), "bm1684x", model_file, reference=False, **libraries("bm1684x"))
        outputs, _ = tpu_sdk.run_model(model_file, {"u": np.array([7, 2**32 - 1], dtype=np.uint64)})
        np.testing.assert_array_equal(outputs["y"], [7, 2**32 - 1])
        with self.assertRaises(tpu_sdk.Error) as caught:
            tpu_sdk.run_model(model_file, {"u": np.array([7, 2**32], dtype=np.uint64)})
        self.assertIn("array 'u' (uint64) for input 'u': element 1 is 4294967296, which uint32 cannot hold",
                      str(caught.exception))

    def test_dynamic_dim(self):
        model = make_model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", ["batch", 3])],
                           [tensor("y", ["batch", 3])])
        self.assert_refused(model, "graph input 'x' has the shape [-1, 3]", "fixed size")

    def test_window_that_is_not_1d_2d_or_3d(self):
        model = make_model([helper.make_node("MaxPool", ["x"], ["y"], name="p4", kernel_shape=[2, 2, 2, 2])],
                           [tensor("x", [1, 2, 3, 3, 3, 3])], [tensor("y", [1, 2, 2, 2, 2, 2])])
        self.assert_refused(model, "node 'p4' (MaxPool)", "input 'x' has 6 dims; 1-D, 2-D and 3-D windows")

    def custom_model(self, node, x_type=TensorProto.FLOAT, version=1):
        return make_model([node], [tensor("x", [2, 3], x_type)], [tensor("y", [2, 3], x_type)],
                          opsets=(("", 13), ("com.acme", version)))

    def test_custom_identity_nobody_declares(self):
        node = helper.make_node("Swish", ["x"], ["y"], domain="com.acme", name="sw")
        self.assert_refused(self.custom_model(node), "node 'sw' (com.acme::Swish)",
                            "no custom op declares the ONNX identity com.acme::Swish",
                            "com.acme::LeakyRelu (opset 1 and later)", "tpu.sdk::AbsAdd (opset 1 and later)")

    def test_custom_node_with_an_opset_version_outside_the_range(self):
        # The samples serve opset 1 and later of their domains; version 0 lies below.
        node = helper.make_node("LeakyRelu", ["x"], ["y"], domain="com.acme", name="lr")
        self.assert_refused(self.custom_model(node, version=0), "node 'lr' (com.acme::LeakyRelu)",
                            "field 'opset version': the model imports domain 'com.acme' at version 0, but op "
                            "'leakyrelu' serves com.acme::LeakyRelu (opset 1 and later)")

    def test_custom_node_with_too_many_inputs(self):
        node = helper.make_node("LeakyRelu", ["x", "x"], ["y"], domain="com.acme", name="lr")
        self.assert_refused(self.custom_model(node), "node 'lr' (com.acme::LeakyRelu)",
                            "field 'inputs': 2 inputs, expected 1",
                            "definition of op 'leakyrelu', com.acme::LeakyRelu")

    def test_custom_node_with_an_undeclared_attribute(self):
        node = helper.make_node("LeakyRelu", ["x"], ["y"], domain="com.acme", name="lr", beta=2.0)
        self.assert_refused(self.custom_model(node), "node 'lr' (com.acme::LeakyRelu)",
                            "field 'attributes': 'beta' is not in the definition", "(declared: alpha)")

    def test_custom_node_with_a_wrongly_typed_attribute(self):
        node = helper.make_node("LeakyRelu", ["x"], ["y"], domain="com.acme", name="lr", alpha=2)
        self.assert_refused(self.custom_model(node), "node 'lr' (com.acme::LeakyRelu)",
                            "field 'attributes': 'alpha' has type INT, expected float")

    def test_custom_node_with_an_element_type_outside_the_definition(self):
        node = helper.make_node("LeakyRelu", ["x"], ["y"], domain="com.acme", name="lr")
        # ONNX's type check against the schema registered from the definition names node, input and type.
        self.assert_refused(self.custom_model(node, TensorProto.DOUBLE), "ONNX shape inference fails",
                            "op_type:LeakyRelu, node name: lr", "input0", "unsupported type: tensor(double)")


if __name__ == "__main__":
    unittest.main()
