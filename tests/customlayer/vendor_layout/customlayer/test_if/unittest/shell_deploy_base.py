# A test base of the kind vendor projects carry beside their tests: it
# compiles with TpuLang, then deploys through the model_deploy.py command
# found on PATH, checking only its exit status. Written for this test
# project to show that such a base works here as it is.
import os
import unittest

import transform.TpuLang as tpul


class ShellDeployTest(unittest.TestCase):
    def setUp(self):
        self.chip = os.getenv("CUSTOM_LAYER_CHIP_ARCH", "BM1684X").upper()
        tpul.init(self.chip)
        os.makedirs("tmp", exist_ok=True)
        os.chdir("tmp")

    def tearDown(self):
        os.chdir("..")
        tpul.deinit()

    def compile(self, name, inputs, outputs, dtype, is_dynamic=False):
        tpul.compile(name, inputs, outputs)
        quantize = {"float32": "f32", "float16": "f16"}[dtype]
        command = f"model_deploy.py --mlir {name}.mlir --model {name}.bmodel --quantize {quantize} --chip {self.chip}"
        if is_dynamic:
            command += " --dynamic"
        self.assertEqual(os.system(command), 0, "Deploy fail")
