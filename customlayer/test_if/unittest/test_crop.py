"""crop through TpuLang, vendor unit-test style (see test_absadd.py)."""
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom

import my_tpulang_layer
import transform.TpuLang as tpul


class TestCrop(TestTPULangCustom):

    def _test(self, dtype):
        shape = [4, 32, 36, 36]
        data = np.random.default_rng(3).random(shape).astype(dtype)
        x = tpul.Tensor(name="in", dtype=dtype, shape=shape, data=data)
        y = my_tpulang_layer.crop.tpulang(inputs=[x], hoffset=1, woffset=2, hnew=3, wnew=4, dtype=dtype)[0]
        ref = my_tpulang_layer.crop.native(data.astype(np.float32), 1, 2, 3, 4)
        tpul.compile("crop_" + dtype, [x], [y], refs=[ref])
        self.assertEqual(y.shape, [4, 32, 3, 4])
        self.compile("Crop", [x], [y], dtype)

    def test_fp32(self):
        self._test("float32")

    def test_fp16(self):
        self._test("float16")


if __name__ == "__main__":
    unittest.main()
