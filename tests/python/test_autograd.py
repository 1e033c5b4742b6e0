"""Custom ops with declared gradients under PyTorch (tpu_sdk.autograd) and
the Python gradient check (tpu_sdk.check_gradient), on the gradient
fixture set (tests/runtime/check/fixtures: the sample ops plus forward ops
whose gradients are deliberately wrong):

- torch.autograd.gradcheck passes for leakyrelu and linear (with relu) run
  on the emulator in fp32, with eps 1e-2, atol 1e-3, rtol 1e-2 (stated in
  docs/gradients.md): fp32 forward values perturbed by 1e-2 give slopes
  accurate to about 1e-5, far inside them;
- it fails for each wrong gradient: a sign error, a missing term (relu's
  derivative), a wrong tile edge;
- a small model (linear + relu on the emulator, leakyrelu on the emulator,
  then a torch Linear) trained for 50 SGD steps has the loss curve of the
  same model built from torch's own ops, step by step within
  1e-4 * (1 + loss), and with lin_norelu's wrong gradient it does not;
- a tensor the gradient op reads, changed in place after forward, stops
  backward as it would stop PyTorch's own op;
- tpu_sdk.check_gradient passes the samples and names the input, the
  element and both values of a wrong gradient.

Environment (tests/CMakeLists.txt): PYTHONPATH holds the build's python/;
TPU_TEST_GRAD_FIXTURES the fixture set's lib/ directory. Needs Debian's
python3-torch (scripts/setup.sh --tests installs it).
"""
import os
import unittest
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import tpu_sdk
import tpu_sdk.autograd as ta

LIB = os.environ["TPU_TEST_GRAD_FIXTURES"]
CHIP = "bm1688"
LIBRARIES = {"plugin": os.path.join(LIB, "libplugin_custom.so"),
             "backend": os.path.join(LIB, "libbackend_custom.so"),
             "firmware": os.path.join(LIB, f"libcmodel_custom_{CHIP}.so")}
GRADCHECK = {"eps": 1e-2, "atol": 1e-3, "rtol": 1e-2}
ALPHA = {"alpha": 0.1}
BIAS_RELU = {"has_bias": 1, "do_relu": 1}


def op(name, params, chip=CHIP):
    libraries = dict(LIBRARIES, firmware=os.path.join(LIB, f"libcmodel_custom_{chip}.so"))
    return ta.op(name, params=params, chip=chip, **libraries)


def away_from_zero(generator, *shape, margin=0.1):
    """Values with |x| >= margin, so the step of gradcheck never crosses leakyrelu's kink."""
    x = torch.rand(*shape, generator=generator, dtype=torch.float64) * 2 + margin
    sign = torch.where(torch.rand(*shape, generator=generator) < 0.5, -1.0, 1.0).to(torch.float64)
    return (x * sign).requires_grad_()


def linear_inputs(seed):
    """x [3, 5], W [4, 5], b [4] whose pre-activations are all at least 0.1
    from 0, so gradcheck's steps never cross relu's kink (the seed is tried
    until they are; the search is deterministic)."""
    generator = torch.Generator().manual_seed(seed)
    while True:
        x = torch.randn(3, 5, generator=generator, dtype=torch.float64)
        w = torch.randn(4, 5, generator=generator, dtype=torch.float64)
        b = torch.randn(4, generator=generator, dtype=torch.float64)
        z = x.float() @ w.float().T + b.float()
        if z.abs().min() > 0.1 and (z > 0).any() and (z < 0).any():
            return [t.requires_grad_() for t in (x, w, b)]


def gradcheck(function, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "inputs are not double precision": the emulator runs fp32 by design
        return torch.autograd.gradcheck(function, inputs, raise_exception=False, **GRADCHECK)


class Gradcheck(unittest.TestCase):
    def test_leakyrelu_passes(self):
        x = away_from_zero(torch.Generator().manual_seed(1), 2, 7)
        self.assertTrue(gradcheck(op("leakyrelu", ALPHA), [x]))

    def test_linear_with_relu_passes(self):
        self.assertTrue(gradcheck(op("linear", BIAS_RELU), linear_inputs(2)))

    def test_sign_error_fails(self):
        x = away_from_zero(torch.Generator().manual_seed(3), 2, 7)
        self.assertFalse(gradcheck(op("lr_sign", ALPHA), [x]))

    def test_missing_term_fails(self):
        self.assertFalse(gradcheck(op("lin_norelu", BIAS_RELU), linear_inputs(4)))

    def test_wrong_tile_edge_fails(self):
        # 32 NPUs on bm1688: 70 elements are two rows of 32 and a tail of 6,
        # which lr_edge_grad reads one element early.
        x = away_from_zero(torch.Generator().manual_seed(5), 70)
        self.assertFalse(gradcheck(op("lr_edge", ALPHA), [x]))

    def test_autograd_matches_torch_on_both_chips(self):
        generator = torch.Generator().manual_seed(6)
        x = torch.randn(4, 9, generator=generator, requires_grad=True)
        for chip in tpu_sdk.CHIPS:
            y = op("leakyrelu", ALPHA, chip)(x)
            y.backward(torch.ones_like(y))
            expected = torch.where(x > 0, 1.0, 0.1)
            torch.testing.assert_close(x.grad, expected, rtol=0, atol=0)
            torch.testing.assert_close(y, F.leaky_relu(x, 0.1), rtol=1e-7, atol=0)
            x.grad = None

    def test_separate_gradient_passes(self):
        generator = torch.Generator().manual_seed(8)
        a, b = (torch.randn(3, 40, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(2))
        self.assertTrue(gradcheck(op("mulxy", {}), [a, b]))

    def test_non_differentiable_input_gets_no_gradient(self):
        generator = torch.Generator().manual_seed(9)
        a, b = (torch.randn(2, 33, generator=generator, requires_grad=True) for _ in range(2))
        op("mulnd", {})(a, b).sum().backward()
        torch.testing.assert_close(a.grad, b.detach(), rtol=0, atol=0)  # d(sum a b)/da = b
        self.assertIsNone(b.grad)

    def test_a_saved_tensor_changed_in_place_is_refused(self):
        # mulxy's gradient reads its inputs: changing one after forward must
        # stop backward, as it stops torch.mul's, not give d/da at new values.
        generator = torch.Generator().manual_seed(10)
        a, b = (torch.randn(2, 33, generator=generator, requires_grad=True) for _ in range(2))
        x = a * 1.0
        y = op("mulxy", {})(x, b)
        x.mul_(2.0)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            y.sum().backward()

    def test_an_op_without_a_gradient_is_refused(self):
        with self.assertRaisesRegex(tpu_sdk.Error, r"op 'absadd' declares no gradient"):
            op("absadd", {"b": 1.0})


class Training(unittest.TestCase):
    """linear(8 -> 16, relu) and leakyrelu on the emulator, then a torch
    Linear (16 -> 1); the twin model uses F.linear, relu, F.leaky_relu. Same
    initial weights, same batch, 50 steps of SGD (lr 0.05) on the MSE loss."""

    @staticmethod
    def loss_curves(linear_op="linear"):
        """The losses of the 50 steps on the emulator and in torch."""
        generator = torch.Generator().manual_seed(7)
        x = torch.randn(32, 8, generator=generator)
        target = torch.sin(x.sum(dim=1, keepdim=True))
        w1 = torch.randn(16, 8, generator=generator) * 0.3
        b1 = torch.zeros(16)
        w2 = torch.randn(1, 16, generator=generator) * 0.3
        b2 = torch.zeros(1)
        linear = op(linear_op, BIAS_RELU)
        leaky = op("leakyrelu", ALPHA)

        def train(custom):
            params = [t.clone().requires_grad_() for t in (w1, b1, w2, b2)]
            optimizer = torch.optim.SGD(params, lr=0.05)
            losses = []
            for _ in range(50):
                optimizer.zero_grad()
                if custom:
                    hidden = leaky(linear(x, params[0], params[1]))
                else:
                    hidden = F.leaky_relu(F.relu(F.linear(x, params[0], params[1])), 0.1)
                loss = F.mse_loss(F.linear(hidden, params[2], params[3]), target)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses

        return train(True), train(False)

    def test_loss_curve_matches_torch(self):
        on_emulator, in_torch = self.loss_curves()
        self.assertLess(in_torch[-1], 0.5 * in_torch[0])  # it does learn
        for step, (a, b) in enumerate(zip(on_emulator, in_torch)):
            self.assertLessEqual(abs(a - b), 1e-4 * (1 + b), f"step {step}: {a} on the emulator, {b} in torch")

    def test_a_wrong_gradient_bends_the_curve(self):
        # lin_norelu's gradient forgets relu's derivative: from step 1 on
        # (the first update) the curves part by more than the tolerance.
        on_emulator, in_torch = self.loss_curves("lin_norelu")
        self.assertLessEqual(abs(on_emulator[0] - in_torch[0]), 1e-4 * (1 + in_torch[0]))  # same forward
        self.assertTrue(any(abs(a - b) > 1e-4 * (1 + b) for a, b in zip(on_emulator, in_torch)))


class CheckGradient(unittest.TestCase):
    def test_samples_pass(self):
        r = tpu_sdk.check_gradient("leakyrelu", [[3, 100]], ALPHA, chip=CHIP, dtype="bf16", triage=True,
                                   **LIBRARIES)
        self.assertTrue(r["passed"], r["summary"])
        self.assertEqual(r["tolerance"], 2 ** -5)
        self.assertTrue(r["triage_rounding"], r["triage"])
        self.assertEqual(r["declaration"]["grad_op"], "leakyrelu_grad")

    def test_a_wrong_gradient_is_named(self):
        r = tpu_sdk.check_gradient("lr_sign", [[200]], ALPHA, chip=CHIP, seed=3, **LIBRARIES)
        self.assertFalse(r["passed"])
        worst = r["inputs"][0]
        self.assertFalse(worst["passed"])
        self.assertGreaterEqual(worst["element"], 0)
        self.assertAlmostEqual(worst["gradient"], -worst["finite_difference"], delta=1e-3 * abs(worst["gradient"]))
        self.assertIn("seed 3", r["summary"])

    def test_declaration_is_visible(self):
        g = tpu_sdk.op_gradient("linear", chip=CHIP, backend=LIBRARIES["backend"])
        self.assertEqual((g["grad_op"], g["separate"], g["receives_inputs"], g["receives_outputs"]),
                         ("linear_grad", False, True, True))
        self.assertIsNone(tpu_sdk.op_gradient("absadd", chip=CHIP, backend=LIBRARIES["backend"]))


if __name__ == "__main__":
    unittest.main()
