"""The vendor's unit-test base class for custom ops, over this SDK.

    class TestAbsAdd(TestTPULangCustom):
        def test_fp32(self):
            x = tpul.Tensor(name="in", dtype="float32", shape=shape, data=data)
            y = tpul.custom(tensors_in=[x], op_name="absadd", params={"b": 1.2}, out_dtypes=["float32"])[0]
            self.compile("AbsAdd", [x], [y], "float32")

setUp: the chip from CUSTOM_LAYER_CHIP_ARCH (BM1684X or BM1688; set by
run_custom_unittest), tpul.init, work in ./tmp. compile(): tpul.compile
(model run vs the ops' inference_ hooks) and then the deploy step for the
dtype (float32, float16, bfloat16; int8 runs in F16), static or dynamic.
"""
import os
import unittest

import transform.TpuLang as tpul
from tpu_sdk import deploy

_QUANTIZE = {"float32": "F32", "float16": "F16", "bfloat16": "BF16", "int8": "INT8"}


class TestTPULangCustom(unittest.TestCase):

    def setUp(self):
        chip = os.environ.get("CUSTOM_LAYER_CHIP_ARCH", "")
        if chip.upper() not in ("BM1684X", "BM1688"):
            raise ValueError(
                f"CUSTOM_LAYER_CHIP_ARCH='{chip}': set it to BM1684X or BM1688 (run_custom_unittest does)")
        self.chip = chip.upper()
        tpul.init(self.chip)
        self._cwd = os.getcwd()
        os.makedirs("tmp", exist_ok=True)
        os.chdir("tmp")

    def tearDown(self):
        os.chdir(self._cwd)
        tpul.deinit()

    def compile(self, name, inputs, outputs, dtype, is_dynamic=False):
        if dtype not in _QUANTIZE:
            raise ValueError(f"compile: dtype '{dtype}': expected one of {sorted(_QUANTIZE)}")
        tpul.compile(name, inputs, outputs, dynamic=is_dynamic)
        argv = ["--mlir", f"{name}.mlir", "--model", f"{name}.bmodel", "--quantize", _QUANTIZE[dtype],
                "--chip", self.chip]
        if is_dynamic:
            argv.append("--dynamic")
        self.assertEqual(deploy.main(argv), 0, "Deploy fail")

