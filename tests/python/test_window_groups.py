"""Convolutions and pools in layer groups (docs/layer-groups.md), against numpy.

- An ONNX CNN (Conv, Relu, MaxPool, Conv, Relu, AveragePool; onnx.helper) imports into built-in layers that
  `tpu_model info` shows as one layer group, estimated faster than its layers one by one; its grouped and
  ungrouped runs give the same bytes, and both numpy's convolution and pools (test_builtin_layers' references,
  written in double precision independently of the SDK).
- Random chains of convolutions and pools over random shapes, kernels, strides, dilations and pads, built
  with little local memory (the groups slice H, each slice loading its rows with the window's halo), on both
  chips: grouped = ungrouped bit for bit, and both within the dtype's tolerance of numpy.

Environment: as test_onnx.py (tests/CMakeLists.txt sets PYTHONPATH, TPU_TEST_SAMPLE_ROOT, TPU_MODEL_TOOL).
"""
import base64
import json
import os
import re
import subprocess
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import tpu_sdk
from test_onnx import CHIPS, libraries
from test_builtin_layers import as_stored, conv_reference, pool_reference

SAMPLE_ROOT = os.environ["TPU_TEST_SAMPLE_ROOT"]


def relu(x):
    return np.maximum(x, 0)


class WindowGroups(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def tool(self, *args):
        tool = os.environ.get("TPU_MODEL_TOOL")
        if not tool:
            self.fail("TPU_MODEL_TOOL (the tpu_model binary) is not set: tests/CMakeLists.txt sets it")
        done = subprocess.run([tool, *args], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def cnn(self, rng):
        """x [2, 4, 32, 24] -> Conv 3x3 pad 1 (8) -> Relu -> MaxPool 2x2 -> Conv 3x3 stride 2 (8) -> Relu
        -> AveragePool 3x3 pad 1 stride 1; returns the ONNX file and numpy's output."""
        x = rng.uniform(-1, 1, (2, 4, 32, 24)).astype(np.float32)
        w1 = rng.uniform(-0.5, 0.5, (8, 4, 3, 3)).astype(np.float32)
        b1 = rng.uniform(-0.5, 0.5, 8).astype(np.float32)
        w2 = rng.uniform(-0.5, 0.5, (8, 8, 3, 3)).astype(np.float32)
        nodes = [
            helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
            helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2", strides=[2, 2], pads=[1, 1, 0, 0]),
            helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
            helper.make_node("AveragePool", ["r2"], ["y"], name="pool2", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                             count_include_pad=1),
        ]
        graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 8, 6])],
                                  [numpy_helper.from_array(v, n) for n, v in (("w1", w1), ("b1", b1), ("w2", w2))])
        path = self.path("cnn.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        y = relu(conv_reference(x, w1, b1, [1, 1], [1, 1], [1, 1, 1, 1], 1)[0])
        y = pool_reference(y, "max", [2, 2], [2, 2], [0, 0, 0, 0])[0]
        y = relu(conv_reference(y, w2, None, [2, 2], [1, 1], [1, 1, 0, 0], 1)[0])
        y = pool_reference(y, "avg", [3, 3], [1, 1], [1, 1, 1, 1])[0]
        return path, x, y

    def test_onnx_cnn_is_one_group_estimated_faster_and_matches_numpy(self):
        path, x, expected = self.cnn(np.random.default_rng(3))
        np.savez(self.path("in.npz"), x=x)
        lib_dir = os.path.join(SAMPLE_ROOT, "lib")
        for chip in CHIPS:
            with self.subTest(chip=chip):
                outputs = {}
                for mode, extra in (("grouped", []), ("global", ["--no-groups"])):
                    model = self.path(f"{chip}_{mode}.tpumodel")
                    self.tool("build", path, "--chip", chip, "-o", model, "--lib-dir", lib_dir, *extra)
                    self.tool("run", model, "--input", self.path("in.npz"), "--output", self.path(f"{mode}.npz"))
                    outputs[mode] = np.load(self.path(f"{mode}.npz"))["y"]
                    if mode == "grouped":
                        info = self.tool("info", model)
                # Every layer in a group (bm1684x: one group of all six; bm1688 cuts after conv2, cheaper)
                modes = re.findall(r"^  \d+ +\S+ +builtin\.\S+ +(static \(layer group \d+\))", info, re.M)
                self.assertEqual(len(modes), 6, info)
                if chip == "bm1684x":
                    self.assertIn("group 0: layers 0..5 ('conv1'..'pool2')", info)
                estimate = re.search(r"layer groups +estimated ([\d.]+) us against ([\d.]+) us", info)
                self.assertIsNotNone(estimate, info)
                self.assertLess(float(estimate.group(1)), float(estimate.group(2)))
                np.testing.assert_array_equal(outputs["grouped"], outputs["global"])
                np.testing.assert_allclose(outputs["grouped"], expected, rtol=1e-5, atol=1e-5)

    def random_chain(self, rng, dtype):
        """A net of 3 or 4 window layers over x; returns the net, its input and numpy's output."""
        shape = [int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(24, 49)),
                 int(rng.integers(8, 21))]
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        y = as_stored(x, dtype)
        weights, layers, last = [], [], "x"
        for i in range(int(rng.integers(3, 5))):
            kind = ("conv", "depthwise", "max", "avg")[int(rng.integers(0, 4))]
            kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            stride = [int(rng.choice([1, 1, 2])), int(rng.integers(1, 3))]
            dilation = [int(rng.integers(1, 3)), 1] if kind in ("conv", "depthwise") else [1, 1]
            extent = dilation[0] * (kh - 1) + 1
            pads = [int(rng.integers(0, min(2, extent - 1) + 1)), int(rng.integers(0, min(2, kw - 1) + 1)),
                    int(rng.integers(0, min(2, extent - 1) + 1)), int(rng.integers(0, min(2, kw - 1) + 1))]
            if y.shape[2] + pads[0] + pads[2] < extent + stride[0] or y.shape[3] + pads[1] + pads[3] < kw:
                continue
            out = f"t{i}"
            if kind in ("conv", "depthwise"):
                c = y.shape[1]
                oc = int(rng.integers(1, 9)) if kind == "conv" else c
                w = rng.uniform(-0.5, 0.5, (oc, c if kind == "conv" else 1, kh, kw)).astype(np.float32)
                b = rng.uniform(-0.5, 0.5, oc).astype(np.float32)
                for name, value in ((f"w{i}", w), (f"b{i}", b)):
                    weights.append({"name": name, "shape": list(value.shape), "dtype": dtype, "data_dtype": "fp32",
                                    "data": base64.b64encode(value.tobytes()).decode()})
                group = 1 if kind == "conv" else c
                params = {"stride": stride, "dilation": dilation, "pads": pads, "group": group}
                layers.append({"op": "builtin.conv2d", "params": params, "inputs": [last, f"w{i}", f"b{i}"],
                               "outputs": [out]})
                y = conv_reference(y, as_stored(w, dtype), as_stored(b, dtype), stride, dilation, pads, group)[0]
            else:
                params = {"kernel": [kh, kw], "stride": stride, "pads": pads}
                layers.append({"op": f"builtin.{kind}pool2d", "params": params, "inputs": [last], "outputs": [out]})
                y = pool_reference(y, kind, [kh, kw], stride, pads)[0]
            last = out
        net = {"name": "chain", "inputs": [{"name": "x", "shape": shape, "dtype": dtype}], "weights": weights,
               "layers": layers, "outputs": [last]}
        return net, x, y

    def test_random_conv_and_pool_chains_grouped_equal_ungrouped_and_numpy(self):
        rng = np.random.default_rng(11)
        ulp = {"fp32": 2.0 ** -23, "fp16": 2.0 ** -10}
        grouped_layers = 0  # chains with a group
        for chip in CHIPS:
            for dtype in ("fp32", "fp16"):
                for _ in range(2):
                    net, x, expected = self.random_chain(rng, dtype)
                    if not net["layers"]:
                        continue
                    last = net["outputs"][0]
                    with self.subTest(chip=chip, dtype=dtype, layers=json.dumps(net["layers"])):
                        runs = {}
                        for groups in (True, False):
                            model = self.path("chain.tpumodel")
                            tpu_sdk.build_model(json.dumps(net), chip, model, reference=False, layer_groups=groups,
                                                group_local_memory=int(rng.integers(3, 12)) * 1024,
                                                **libraries(chip))
                            inputs = {"x": x.astype(np.float16) if dtype == "fp16" else x}
                            runs[groups] = tpu_sdk.run_model(model, inputs)[0][last].astype(np.float64)
                            if groups:
                                grouped_layers += "group 0: layers" in tpu_sdk.model_info(model)
                        np.testing.assert_array_equal(runs[True], runs[False])
                        # the result's rounding and fp32 accumulation (weights within 0.5, inputs within 1)
                        limit = 4 * ulp[dtype] * (np.abs(expected) + 16)
                        np.testing.assert_array_less(np.abs(runs[True] - expected), limit)
        self.assertGreater(grouped_layers, 0)


if __name__ == "__main__":
    unittest.main()
