# scaleclip through a base class that deploys with the model_deploy.py
# command (see shell_deploy_base.py), static and dynamic.
import unittest

import numpy as np
from shell_deploy_base import ShellDeployTest
import transform.TpuLang as tpul


class TestScaleClip(ShellDeployTest):
    def _test(self, dynamic):
        shape = [2, 8, 4, 8]
        data = np.random.default_rng(4).uniform(-2, 2, shape).astype(np.float32)
        x = tpul.Tensor(name="in", dtype="float32", shape=shape, data=data)
        params = {"scale": 1.5, "lo": -1.0, "hi": 2.0}
        y = tpul.custom(tensors_in=[x], op_name="scaleclip", params=params, out_dtypes=["float32"])[0]
        self.compile("ScaleClip" + ("_dyn" if dynamic else ""), [x], [y], "float32", is_dynamic=dynamic)

    def test_static(self):
        self._test(False)

    def test_dynamic(self):
        self._test(True)


if __name__ == "__main__":
    unittest.main()
