"""scaleinplace (x *= s, in place) through TpuLang on the emulated chip
(CUSTOM_LAYER_CHIP_ARCH), in the vendor's unit-test style; the model run must
match the op's inference_ hook, and its numpy reference (native) the hook."""
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom

import my_tpulang_layer
import transform.TpuLang as tpul


class TestscaleInPlace(TestTPULangCustom):

    def _test(self, dtype):
        shape = [4, 32, 36, 36]
        data = (np.random.default_rng(1).random(shape) * 8 - 4).astype(dtype)
        x = tpul.Tensor(name="in", dtype=dtype, shape=shape, data=data)
        y = my_tpulang_layer.scaleInPlace.tpulang(inputs=[x], s=-1.75, dtype=dtype)[0]
        ref = my_tpulang_layer.scaleInPlace.native(data.astype(np.float32), -1.75)
        tpul.compile("scaleInPlace_" + dtype, [x], [y], refs=[ref])
        self.compile("scaleInPlace", [x], [y], dtype)

    def test_fp32(self):
        self._test("float32")

    def test_fp16(self):
        self._test("float16")


if __name__ == "__main__":
    unittest.main()
