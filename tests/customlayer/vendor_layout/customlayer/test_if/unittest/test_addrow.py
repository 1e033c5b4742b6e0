# A vendor-style TpuLang unit test of addrow, run by run_custom_unittest
# with the SDK's TpuLang front end and test base (the project has no copy).
import unittest

import numpy as np
from tpulang_custom_test_base import TestTPULangCustom
import transform.TpuLang as tpul


class TestAddRow(TestTPULangCustom):
    def test_addrow(self):
        shape = [2, 16, 8, 8]
        data = np.random.random(shape).astype(np.float32)
        x = tpul.Tensor(name="in", dtype="float32", shape=shape, data=data)
        y = tpul.custom(tensors_in=[x], op_name="addrow", params={"b": 0.75}, out_dtypes=["float32"])[0]
        tpul.compile("AddRow_ref", [x], [y], refs=[data + 0.75])
        self.compile("AddRow", [x], [y], "float32")

    def test_addrow_fp16(self):
        shape = [2, 16, 8, 8]
        data = np.random.random(shape).astype(np.float16)
        x = tpul.Tensor(name="in", dtype="float16", shape=shape, data=data)
        y = tpul.custom(tensors_in=[x], op_name="addrow", params={"b": 0.75}, out_dtypes=["float16"])[0]
        self.compile("AddRow16", [x], [y], "float16")


if __name__ == "__main__":
    unittest.main()
