"""hardsigmoid, the sample PPL op with a local entry (register_custom_ppl_local_op,
customlayer/PplBackend/src/hard_sigmoid_fp.pl), between two absadd layers (a C
op with a local entry): the three join one layer group, whose slices run the
op's local PPL kernel, and the model's output matches numpy. Alone, the op
runs its global kernel. Vendor unit-test style (TestTPULangCustom)."""
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom

import my_tpulang_layer
import transform.TpuLang as tpul
import tpu_sdk

# fp16: the input, absadd's result and hardsigmoid's are each rounded to fp16.
_TOLERANCE = {"float32": dict(rtol=1e-6, atol=1e-6), "float16": dict(rtol=2e-3, atol=2e-3)}


class TestHardSigmoidGrouped(TestTPULangCustom):

    def _input(self, dtype, shape):
        rng = np.random.default_rng(5)
        return (rng.random(shape) * 12 - 6).astype(dtype)

    def _test_grouped(self, dtype):
        data = self._input(dtype, [4, 3, 40, 40])
        x = tpul.Tensor(name="x", dtype=dtype, data=data)
        a = my_tpulang_layer.absAdd.tpulang(inputs=[x], b=-2.0, dtype=dtype)[0]
        h = my_tpulang_layer.hardSigmoid.tpulang([a], alpha=0.2, beta=0.25, dtype=dtype)[0]
        out = my_tpulang_layer.absAdd.tpulang(inputs=[h], b=0.5, dtype=dtype)[0]
        f = data.astype(np.float32)
        a_ref = (np.abs(f) - 2).astype(dtype).astype(np.float32)
        h_ref = my_tpulang_layer.hardSigmoid.native(a_ref, 0.2, 0.25).astype(dtype).astype(np.float32)
        ref = np.abs(h_ref) + np.float32(0.5)
        name = "hardSigmoidGrouped_" + dtype
        tpul.compile(name, [x], [out], refs=[ref])
        info = tpu_sdk.model_info(f"{name}_tpulang.model")
        self.assertRegex(info, r"group 0: layers 0\.\.2 ", info)
        model = np.load(f"{name}_model_outputs.npz")[out.name].astype(np.float32)
        np.testing.assert_allclose(model, ref, **_TOLERANCE[dtype])
        # Both ends of the clamp are reached.
        self.assertTrue(np.any(h_ref == 0) and np.any(h_ref == 1))

    def test_grouped_fp32(self):
        self._test_grouped("float32")

    def test_grouped_fp16(self):
        self._test_grouped("float16")

    def test_alone_runs_the_global_kernel(self):
        data = self._input("float32", [2, 37, 61, 53])
        x = tpul.Tensor(name="x", dtype="float32", data=data)
        out = my_tpulang_layer.hardSigmoid.tpulang([x], alpha=-0.3, beta=0.5)[0]
        ref = my_tpulang_layer.hardSigmoid.native(data, -0.3, 0.5)
        name = "hardSigmoidAlone"
        tpul.compile(name, [x], [out], refs=[ref])
        self.assertNotIn("group 0:", tpu_sdk.model_info(f"{name}_tpulang.model"))
        model = np.load(f"{name}_model_outputs.npz")[out.name]
        np.testing.assert_allclose(model, ref, rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
