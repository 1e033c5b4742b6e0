"""absadd mixed with TpuLang's built-in ops (add, mul, sub, relu, concat) on two
inputs, in the vendor's unit-test style (its scaleadd_mixed test does the same
with its own op): the whole graph is one model, checked against numpy."""
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom

import my_tpulang_layer
import transform.TpuLang as tpul


class TestAbsAddMixed(TestTPULangCustom):

    def _test(self, dtype):
        rng = np.random.default_rng(3)
        a = (rng.random([1, 3, 8, 8]) * 4 - 2).astype(dtype)
        b = (rng.random([1, 3, 8, 8]) * 4 - 2).astype(dtype)
        x = tpul.Tensor(name="x", dtype=dtype, data=a)
        y = tpul.Tensor(name="y", dtype=dtype, data=b)
        t = my_tpulang_layer.absAdd.tpulang(inputs=[x], b=0.5, dtype=dtype)[0]
        s = tpul.mul(tpul.add(t, y), 2.0)
        r = tpul.relu(tpul.sub(s, x))
        out = tpul.concat([r, s], axis=1, out_name="out")
        fa, fb = a.astype(np.float32), b.astype(np.float32)
        s_ref = (my_tpulang_layer.absAdd.native(fa, 0.5) + fb) * 2.0
        ref = np.concatenate([np.maximum(s_ref - fa, 0), s_ref], axis=1)
        tpul.compile("absAddMixed_" + dtype, [x, y], [out], refs=[ref])
        self.compile("absAddMixed", [x, y], [out], dtype)

    def test_fp32(self):
        self._test("float32")

    def test_fp16(self):
        self._test("float16")


if __name__ == "__main__":
    unittest.main()
