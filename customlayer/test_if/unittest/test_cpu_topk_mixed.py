"""ap.topk between TPU layers (the vendor's CpuTopk2 regression case does the same with relu): absadd on
the TPU, the top-k on the host CPU, relu and a scalar add on the TPU again; the whole graph is one model,
checked against numpy, static and dynamic."""
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom

import my_tpulang_layer
import transform.TpuLang as tpul


class TestCpuTopkMixed(TestTPULangCustom):

    def _test(self, dynamic):
        rng = np.random.default_rng(5)
        data = (rng.random([2, 3, 4, 50]) * 8 - 4).astype(np.float32)
        x = tpul.Tensor(name="x", dtype="float32", data=data)
        t = my_tpulang_layer.absAdd.tpulang(inputs=[x], b=-1.0, dtype="float32")[0]
        k = my_tpulang_layer.cpuTopk.tpulang(inputs=[t], axis=3, k=7, dtype="float32")[0]
        out = tpul.add(tpul.relu(k), 0.25, out_name="out")
        ref = np.maximum(my_tpulang_layer.cpuTopk.native(np.abs(data) - 1.0, 3, 7), 0) + 0.25
        name = "cpuTopkMixed" + ("_dynamic" if dynamic else "")
        tpul.compile(name, [x], [out], refs=[ref], dynamic=dynamic)
        self.assertEqual(out.shape, [2, 3, 4, 7])
        self.compile(name, [x], [out], "float32", is_dynamic=dynamic)

    def test_fp32(self):
        self._test(False)

    def test_fp32_dynamic(self):
        self._test(True)


if __name__ == "__main__":
    unittest.main()
