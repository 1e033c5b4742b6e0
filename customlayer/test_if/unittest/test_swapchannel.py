"""swapchannel through TpuLang, vendor unit-test style (see test_absadd.py)."""
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom

import my_tpulang_layer
import transform.TpuLang as tpul


class TestSwapChannel(TestTPULangCustom):

    def _test(self, dtype):
        shape = [4, 3, 36, 36]
        data = np.random.default_rng(2).random(shape).astype(dtype)
        x = tpul.Tensor(name="in", dtype=dtype, shape=shape, data=data)
        y = my_tpulang_layer.swapChannel.tpulang(inputs=[x], order=[2, 0, 1], dtype=dtype)[0]
        ref = my_tpulang_layer.swapChannel.native(data.astype(np.float32), [2, 0, 1])
        tpul.compile("swapchannel_" + dtype, [x], [y], refs=[ref])
        self.compile("SwapChannel", [x], [y], dtype)

    def test_fp32(self):
        self._test("float32")

    def test_fp16(self):
        self._test("float16")


if __name__ == "__main__":
    unittest.main()
