"""linear (y = x W^T + b, relu) through TpuLang, vendor unit-test style (see
test_absadd.py). x, W and b are all inputs of the graph: this SDK's TpuLang
has no coefficient tensors, and the op takes its weight as a tensor."""
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom

import my_tpulang_layer
import transform.TpuLang as tpul


class TestLinear(TestTPULangCustom):

    def _test(self, dtype, has_bias, relu):
        rng = np.random.default_rng(7)
        batch, in_features, out_features = 96, 160, 72
        data = rng.uniform(-1, 1, [batch, in_features]).astype(dtype)
        weight = (rng.uniform(-1, 1, [out_features, in_features]) / np.sqrt(in_features)).astype(dtype)
        bias = rng.uniform(-0.5, 0.5, [out_features]).astype(dtype)
        x = tpul.Tensor(name="x", dtype=dtype, data=data)
        w = tpul.Tensor(name="weight", dtype=dtype, data=weight)
        inputs = [x, w]
        if has_bias:
            inputs.append(tpul.Tensor(name="bias", dtype=dtype, data=bias))
        y = my_tpulang_layer.linear.tpulang(inputs=inputs, has_bias=has_bias, relu=relu, dtype=dtype)[0]
        ref = my_tpulang_layer.linear.native(data.astype(np.float32), weight.astype(np.float32),
                                             bias.astype(np.float32) if has_bias else None, relu)
        tag = f"linear_{dtype}_{'bias' if has_bias else 'nobias'}_{'relu' if relu else 'none'}"
        tpul.compile(tag, inputs, [y], refs=[ref])
        self.assertEqual(y.shape, [batch, out_features])
        self.compile("Linear", inputs, [y], dtype)

    def test_fp32_bias(self):
        self._test("float32", True, False)

    def test_fp32_relu_no_bias(self):
        self._test("float32", False, True)

    def test_fp16_bias_relu(self):
        self._test("float16", True, True)


if __name__ == "__main__":
    unittest.main()
