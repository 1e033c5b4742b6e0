"""tpul.expression and tpul.expression_grad: traced Python functions as fused builtin.expression layers.

The model runs are compared with numpy: float32 arithmetic is IEEE in numpy as on the emulator, one
rounding per operation, so x*x + y*z must match bit for bit; functions (exp, sigmoid) within one ulp
(numpy's float32 exp is not always correctly rounded); the gradient against central differences in
float64. Environment: as test_front_end.py.
"""
import os
import tempfile
import unittest

import numpy as np

import tpu_sdk
import transform.TpuLang as tpul

SAMPLE_ROOT = os.environ["TPU_TEST_SAMPLE_ROOT"]
CHIPS = ("bm1684x", "bm1688")


class Expressions(unittest.TestCase):
    def setUp(self):
        self._cwd = os.getcwd()
        self._tmp = tempfile.TemporaryDirectory()
        os.chdir(self._tmp.name)
        os.environ["TPUC_ROOT"] = SAMPLE_ROOT
        os.environ["TPUKERNEL_CUSTOM_FIRMWARE_PATH"] = os.path.join(SAMPLE_ROOT, "lib")

    def tearDown(self):
        os.chdir(self._cwd)
        self._tmp.cleanup()
        tpul.deinit()

    def run_expression(self, chip, fn, arrays, dtype="float32"):
        tpul.init(chip)
        tensors = [tpul.Tensor(name=f"in{i}", dtype=dtype, data=a) for i, a in enumerate(arrays)]
        y = tpul.expression(fn, *tensors)
        tpul.compile("expr", tensors, [y])
        return y, np.load("expr_model_outputs.npz")[y.name]

    def test_seed_example_bit_exact_with_numpy_float32(self):
        rng = np.random.default_rng(3)
        x = rng.uniform(-4, 4, (4, 33, 20)).astype(np.float32)
        y = rng.uniform(-4, 4, (33, 1)).astype(np.float32)  # broadcast
        z = rng.uniform(-4, 4, (20,)).astype(np.float32)
        want = x * x + y * z
        for chip in CHIPS:
            out, got = self.run_expression(chip, lambda a, b, c: a * a + b * c, [x, y, z])
            self.assertEqual(out.producer.op_name, "builtin.expression")
            self.assertEqual(out.producer.params["formula"], "x0 * x0 + x1 * x2")
            np.testing.assert_array_equal(got, want)
            tpul.deinit()

    def test_functions_comparisons_and_where(self):
        rng = np.random.default_rng(4)
        x = rng.uniform(-3, 3, (2, 64)).astype(np.float32)
        y = rng.uniform(0.5, 3, (2, 64)).astype(np.float32)

        def fn(a, b):
            return tpul.where(a > 0, np.float32(2.5) * tpul.exp(-a), tpul.sigmoid(a) / b) + tpul.maximum(abs(a), b) - \
                tpul.relu(-a) * tpul.sqrt(b) + (a <= b) * tpul.rsqrt(b) - tpul.tanh(tpul.log(b))

        a64, b64 = x.astype(np.float64), y.astype(np.float64)
        want = np.where(a64 > 0, np.exp(-a64) * 2.5, 1 / (1 + np.exp(-a64)) / b64) + np.maximum(np.abs(a64), b64) \
            - np.maximum(-a64, 0) * np.sqrt(b64) + (a64 <= b64) / np.sqrt(b64) - np.tanh(np.log(b64))
        for chip in CHIPS:
            _, got = self.run_expression(chip, fn, [x, y])
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
            tpul.deinit()

    def test_single_function_layers_on_tensors(self):
        rng = np.random.default_rng(5)
        x = rng.uniform(0.5, 3, (3, 40)).astype(np.float32)
        tpul.init("bm1688")
        t = tpul.Tensor(name="x", dtype="float32", data=x)
        y = tpul.div(tpul.exp(t), 2.0)
        self.assertEqual(y.producer.params["formula"], "x0 / 2")
        tpul.compile("single", [t], [y])
        got = np.load("single_model_outputs.npz")[y.name]
        np.testing.assert_allclose(got, np.exp(x.astype(np.float64)) / 2, rtol=2 ** -23)

    def test_gradient_against_central_differences(self):
        rng = np.random.default_rng(6)
        x = rng.uniform(-2, 2, (5, 16)).astype(np.float32)
        y = rng.uniform(-2, 2, (5, 16)).astype(np.float32)
        g = rng.uniform(-1, 1, (5, 16)).astype(np.float32)

        def fn(a, b):
            return a * tpul.sigmoid(b) + tpul.tanh(a * b)

        def f64(a, b):
            return a / (1 + np.exp(-b)) + np.tanh(a * b)

        a, b, h = x.astype(np.float64), y.astype(np.float64), 1e-6
        for wrt, numeric in ((0, (f64(a + h, b) - f64(a - h, b)) / (2 * h)),
                             (1, (f64(a, b + h) - f64(a, b - h)) / (2 * h))):
            tpul.init("bm1684x")
            tx, ty = tpul.Tensor(name="x", dtype="float32", data=x), tpul.Tensor(name="y", dtype="float32", data=y)
            tg = tpul.Tensor(name="g", dtype="float32", data=g)
            d = tpul.expression_grad(fn, [tx, ty], wrt, tg)
            tpul.compile("grad", [tx, ty, tg], [d])
            got = np.load("grad_model_outputs.npz")[d.name]
            np.testing.assert_allclose(got, g * numeric, rtol=1e-4, atol=1e-5)
            tpul.deinit()

    def test_parser_and_gradient_bindings(self):
        self.assertEqual(tpu_sdk.parse_expression("y*z + x*x"), ("y * z + x * x", ["y", "z", "x"]))
        text, names = tpu_sdk.expression_gradient("x*x + y*z", ["x", "y", "z"], "y")
        self.assertEqual(names, ["x", "y", "z", "grad"])
        self.assertEqual(text, "grad * z")
        with self.assertRaisesRegex(tpu_sdk.Error, r"formula 'x \* foo\(y\)': column 5: unsupported function 'foo'"):
            tpu_sdk.parse_expression("x * foo(y)")

    def test_errors(self):
        tpul.init("bm1684x")
        a = tpul.Tensor(name="a", dtype="float32", shape=[4, 3])
        h = tpul.Tensor(name="h", dtype="float16", shape=[4, 3])
        b = tpul.Tensor(name="b", dtype="float32", shape=[2, 3])
        with self.assertRaisesRegex(tpul.TpuLangError, "input x1 \\('h'\\) is float16 but x0 \\('a'\\) is float32"):
            tpul.expression(lambda x, y: x + y, a, h)
        with self.assertRaisesRegex(tpul.TpuLangError, r"x0 \[4, 3\], x1 \[2, 3\] do not broadcast"):
            tpul.expression(lambda x, y: x + y, a, b)
        with self.assertRaisesRegex(tpul.TpuLangError, "has no truth value"):
            tpul.expression(lambda x: x if x > 0 else -x, a)
        with self.assertRaisesRegex(tpul.TpuLangError, r"\*\* is not supported"):
            tpul.expression(lambda x: x ** 2, a)
        with self.assertRaisesRegex(tpul.TpuLangError, "one or more tpul.Tensor"):
            tpul.expression(lambda: 1.0)
        with self.assertRaisesRegex(tpul.TpuLangError, "column 1: the formula has no inputs"):
            tpul.expression(lambda x: 2.0, a)
        with self.assertRaisesRegex(tpul.TpuLangError, "tensor 'b' is used inside the traced function"):
            tpul.expression(lambda x: x + b, a)


if __name__ == "__main__":
    unittest.main()
