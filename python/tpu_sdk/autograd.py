"""Custom ops with a declared gradient as PyTorch autograd functions.

    import torch, tpu_sdk.autograd as ta
    linear = ta.op("linear", params={"has_bias": 1, "do_relu": 1}, chip="bm1688")
    y = linear(x, W, b)          # forward: linear on the emulator
    y.sum().backward()           # backward: linear_grad on the emulator

op() looks up the op's gradient declaration (register_custom_grad,
docs/gradients.md) and returns a callable applying a torch.autograd.Function
whose forward runs the op and whose backward runs its gradient op, both on
the emulated chip in `dtype`, with the gradient op's inputs in the declared
order (the output gradients, then the forward inputs, then the forward
outputs, as declared). Tensors cross to numpy without copies where they can:
a contiguous float32 CPU tensor is handed over as a numpy view
(Tensor.numpy()), the outputs come back as torch.from_numpy views of the
arrays the emulator wrote. Other dtypes (float64 under gradcheck) are
converted to float32 for the emulator and the results back to the input's
dtype.
"""
import json

import numpy as np
import torch

import tpu_sdk


def _as_float32_array(tensor):
    t = tensor.detach()
    if t.dtype != torch.float32 or t.device.type != "cpu" or not t.is_contiguous():
        t = t.to(device="cpu", dtype=torch.float32).contiguous()
    return t.numpy()  # a view of t's storage


def _outputs(result, name):
    case = result["cases"][0]
    if not case["passed"]:
        # The op ran but differs from its own reference: still return what
        # it computed (a check is the tester's job), but never silently NaN.
        for array in case["outputs"]:
            if np.isnan(array).any():
                raise tpu_sdk.Error(f"{name}: the emulator left NaN (unwritten) outputs: {case['failure']}")
    return case["outputs"]


class _Op:
    def __init__(self, op, params, chip, dtype, num_outputs, libraries):
        self.op = op
        self.params = json.dumps(params or {})
        self.chip = tpu_sdk.chip_name(chip)
        self.dtype = dtype
        self.num_outputs = num_outputs
        self.libraries = libraries
        self.gradient = tpu_sdk.op_gradient(op, self.chip, libraries.get("backend", ""))
        if self.gradient is None:
            raise tpu_sdk.Error(f"op '{op}' declares no gradient (register_custom_grad({op} <grad_op>) in its "
                                f"register_ops.cmake): it cannot be used with autograd")

    def run(self, op, arrays, params, num_outputs):
        result = tpu_sdk.run_op(op, arrays, params, chip=self.chip, dtype=self.dtype, num_outputs=num_outputs,
                                local=False, backend_only=True, **self.libraries)
        return _outputs(result, op)

    def backward_arrays(self, grads, inputs, outputs):
        """The partials of the differentiable inputs, in input order."""
        g = self.gradient
        arrays = list(grads)
        if g["receives_inputs"]:
            arrays += inputs
        if g["receives_outputs"]:
            arrays += outputs
        differentiable = [i for i in range(len(inputs)) if i not in g["non_differentiable"]]
        if not g["separate"]:
            return differentiable, self.run(g["grad_op"], arrays, self.params, len(differentiable))
        partials = []
        for i in differentiable:
            params = json.loads(self.params)
            params["input_grad_index"] = i
            partials += self.run(g["grad_op"], arrays, json.dumps(params), 1)
        return differentiable, partials


class _Function(torch.autograd.Function):
    @staticmethod
    def forward(ctx, spec, *inputs):
        arrays = [_as_float32_array(t) for t in inputs]
        outputs = spec.run(spec.op, arrays, spec.params, spec.num_outputs)
        ctx.spec = spec
        ctx.arrays = arrays
        ctx.outputs = outputs
        ctx.dtypes = [t.dtype for t in inputs]
        dtype = inputs[0].dtype
        results = tuple(torch.from_numpy(a).to(dtype) for a in outputs)
        # The arrays above may be views of the tensors' storage: saving the
        # tensors the gradient op reads makes backward refuse one changed in
        # place since forward (their version counters), as PyTorch's own ops
        # do, rather than differentiate at values forward never saw.
        g = spec.gradient
        ctx.save_for_backward(*(inputs if g["receives_inputs"] else ()), *(results if g["receives_outputs"] else ()))
        return results if len(results) > 1 else results[0]

    @staticmethod
    def backward(ctx, *grads):
        ctx.saved_tensors  # raises if a saved tensor was modified in place
        spec = ctx.spec
        grad_arrays = [np.zeros_like(o) if g is None else _as_float32_array(g) for g, o in zip(grads, ctx.outputs)]
        differentiable, partials = spec.backward_arrays(grad_arrays, ctx.arrays, ctx.outputs)
        result = [None] * len(ctx.arrays)
        for i, p in zip(differentiable, partials):
            result[i] = torch.from_numpy(p).to(ctx.dtypes[i])
        return (None, *result)


def op(name, params=None, chip="bm1684x", dtype="fp32", num_outputs=1, plugin="", backend="", firmware=""):
    """A callable f(*tensors) running op `name` on the emulator, differentiable
    through its declared gradient op (see the module's documentation).
    Library paths default as tpu_sdk.run_op's do."""
    libraries = {"plugin": plugin, "backend": backend, "firmware": firmware}
    spec = _Op(name, params, chip, dtype, num_outputs, libraries)

    def apply(*inputs):
        return _Function.apply(spec, *inputs)

    apply.spec = spec
    return apply
