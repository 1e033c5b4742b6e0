# A vendor-style TpuLang unit test of addrow. It needs the TpuLang front end;
# until this SDK has one, run_custom_unittest names it as not run.
import numpy as np
from tpulang_custom_test_base import TestTPULangCustom
import transform.TpuLang as tpul


class TestAddRow(TestTPULangCustom):
    def test_addrow(self):
        shape = [2, 16, 8, 8]
        data = np.random.random(shape).astype(np.float32)
        x = tpul.Tensor(name="in", dtype="float32", shape=shape, data=data)
        y = tpul.custom(tensors_in=[x], op_name="addrow", params={"b": 0.75}, out_dtypes=["float32"])[0]
        self.compile("AddRow", [x], [y], "float32")
