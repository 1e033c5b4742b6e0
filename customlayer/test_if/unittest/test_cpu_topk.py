"""ap.topk (a host-CPU AP op) through TpuLang, in the layout of the vendor's test_cpu_topk.py: the chip
from CUSTOM_LAYER_CHIP_ARCH, work in ./tmp, one [1, 1000] float32 input, the ten largest values along
axis 1, compiled static and dynamic. The reference tests compare with numpy as well."""
import os
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom

import my_tpulang_layer
import transform.TpuLang as tpul


class TestTopk(TestTPULangCustom):

    def setUp(self):
        chip = os.environ.get("CUSTOM_LAYER_CHIP_ARCH", "").upper()
        if chip not in ("BM1684X", "BM1688"):
            raise ValueError(f"CUSTOM_LAYER_CHIP_ARCH='{chip}': BM1684X or BM1688")
        self.chip = chip
        tpul.init(chip)
        self._cwd = os.getcwd()
        os.makedirs("tmp", exist_ok=True)
        os.chdir("tmp")

    def tearDown(self):
        os.chdir(self._cwd)
        tpul.deinit()

    def _graph(self, dtype, seed=0):
        shape = [1, 1000]
        data = np.random.default_rng(seed).random(shape).astype(dtype)
        x = tpul.Tensor(name="in", dtype=dtype, shape=shape, data=data)
        y = my_tpulang_layer.cpuTopk.tpulang(inputs=[x], axis=1, k=10, dtype=dtype)[0]
        return data, x, y

    def _test(self, dtype, dynamic=False):
        data, x, y = self._graph(dtype)
        self.compile("topk", [x], [y], dtype, is_dynamic=dynamic)

    def test_fp32(self):
        self._test("float32")

    def test_fp32_dynamic(self):
        self._test("float32", dynamic=True)

    def test_fp32_reference(self):
        # The model's run (the AP op on the host between emulated layers) against numpy.
        data, x, y = self._graph("float32", seed=3)
        ref = my_tpulang_layer.cpuTopk.native(data, 1, 10)
        tpul.compile("topk_ref", [x], [y], refs=[ref])
        self.assertEqual(y.shape, [1, 10])


if __name__ == "__main__":
    unittest.main()
