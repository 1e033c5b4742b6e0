"""scaleadd, the sample op whose kernels are PPL (customlayer/PplBackend), with
two inputs and two outputs, mixed with TpuLang's built-in ops (add, mul,
sub, relu, concat) in one model, in the vendor's unit-test style (its
test_scaleadd_mixed.py builds such a graph). Besides the vendor's checks
(model vs the plugin's inference hook, by similarity), the model's outputs
are compared element by element with numpy."""
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom

import my_tpulang_layer
import transform.TpuLang as tpul

# fp16 rounds each of the op's two steps and the built-in ops' results.
_TOLERANCE = {"float32": dict(rtol=1e-5, atol=1e-5), "float16": dict(rtol=1e-2, atol=2e-2)}


class TestScaleAddMixed(TestTPULangCustom):

    def _graph(self, dtype, shape, seed):
        rng = np.random.default_rng(seed)
        a = (rng.random(shape) * 4 - 2).astype(dtype)
        b = (rng.random(shape) * 4 - 2).astype(dtype)
        x = tpul.Tensor(name="x", dtype=dtype, data=a)
        y = tpul.Tensor(name="y", dtype=dtype, data=b)
        return a, b, x, y

    def _test_mixed(self, dtype):
        a, b, x, y = self._graph(dtype, [1, 3, 8, 8], 7)
        scaled, summed = my_tpulang_layer.scaleAdd.tpulang([tpul.relu(x), y], scale=1.5, dtype=dtype)
        r = tpul.sub(tpul.mul(summed, 2.0), scaled)
        out = tpul.concat([r, tpul.add(scaled, x)], axis=1, out_name="out")
        fa, fb = a.astype(np.float32), b.astype(np.float32)
        s_ref, t_ref = my_tpulang_layer.scaleAdd.native(np.maximum(fa, 0), fb, 1.5)
        ref = np.concatenate([t_ref * 2.0 - s_ref, s_ref + fa], axis=1)
        name = "scaleAddMixed_" + dtype
        tpul.compile(name, [x, y], [out], refs=[ref])
        model = np.load(f"{name}_model_outputs.npz")["out"].astype(np.float32)
        np.testing.assert_allclose(model, ref, **_TOLERANCE[dtype])
        self.compile("scaleAddMixed", [x, y], [out], dtype)

    def test_fp32(self):
        self._test_mixed("float32")

    def test_fp16(self):
        self._test_mixed("float16")

    def test_both_outputs_of_a_large_tensor(self):
        # More elements than the lanes hold at the first block: the tiling
        # halves its block until the kernel's tensors fit, and the rest that
        # fills no whole row runs as its own tile.
        shape = [2, 37, 61, 53]
        a, b, x, y = self._graph("float32", shape, 11)
        scaled, summed = my_tpulang_layer.scaleAdd.tpulang([x, y], scale=-0.75)
        name = "scaleAddLarge"
        tpul.compile(name, [x, y], [scaled, summed], refs=list(my_tpulang_layer.scaleAdd.native(a, b, -0.75)))
        model = np.load(f"{name}_model_outputs.npz")
        s_ref, t_ref = my_tpulang_layer.scaleAdd.native(a, b, -0.75)
        np.testing.assert_allclose(model[scaled.name], s_ref, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(model[summed.name], t_ref, rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
