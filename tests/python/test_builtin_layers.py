"""TpuLang's coefficient tensors and the built-in layers beyond the element-wise ones, against numpy.

Each layer is built through TpuLang (or a net description), run on the emulator of both chips, and
its output compared with a reference written here, independently of the SDK: a direct convolution
in double precision over the inputs as the model holds them (rounded to the dtype). The tolerance
is the dtype's: the final rounding (half an ulp of the result, taken as one ulp) plus fp32
accumulation error relative to the sum of |terms|.

Environment: as test_front_end.py (tests/CMakeLists.txt sets PYTHONPATH, TPU_TEST_SAMPLE_ROOT).
"""
import base64
import json
import os
import re
import tempfile
import unittest

import numpy as np

import tpu_sdk
import transform.TpuLang as tpul

SAMPLE_ROOT = os.environ["TPU_TEST_SAMPLE_ROOT"]
CHIPS = ("bm1684x", "bm1688")
DTYPES = ("float32", "float16", "bfloat16")
LOCAL_MEM = {"bm1684x": 256 * 1024, "bm1688": 128 * 1024}  # bytes per NPU
ESIZE = {"float32": 4, "float16": 2, "bfloat16": 2}
# Relative size of one ulp of a result (the final rounding), per dtype.
ULP = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
# Smallest positive subnormal: an absolute floor for results near 0.
TINY = {"float32": 2.0 ** -149, "float16": 2.0 ** -24, "bfloat16": 2.0 ** -133}


def as_stored(values, dtype):
    """The float64 values a tensor of `dtype` holds for `values` (round to nearest even)."""
    values = np.asarray(values, dtype=np.float32)
    if dtype == "float16":
        return values.astype(np.float16).astype(np.float64)
    if dtype == "bfloat16":
        bits = values.view(np.uint32).astype(np.uint64)
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return values.astype(np.float64)


def conv_reference(x, w, b, stride, dilation, pad, group):
    """Direct convolution in double: x [n, ic, ih, iw], w [oc, ic / group, kh, kw], pad [top, left,
    bottom, right]. Returns the result and the sum of |terms| per element (for the tolerance)."""
    n, ic, ih, iw = x.shape
    oc, icg, kh, kw = w.shape
    oh = (ih + pad[0] + pad[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (iw + pad[1] + pad[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    # Zero padding adds zero terms; each kernel tap (p, q) then reads one strided plane of the
    # padded input for every output position at once.
    padded = np.zeros((n, ic, ih + pad[0] + pad[2], iw + pad[1] + pad[3]))
    padded[:, :, pad[0]:pad[0] + ih, pad[1]:pad[1] + iw] = x
    out = np.zeros((n, oc, oh, ow))
    magnitude = np.zeros((n, oc, oh, ow))
    ocg = oc // group
    for g in range(group):
        inputs = padded[:, g * icg:(g + 1) * icg]
        outputs = slice(g * ocg, (g + 1) * ocg)
        for p in range(kh):
            rows = slice(p * dilation[0], p * dilation[0] + (oh - 1) * stride[0] + 1, stride[0])
            for q in range(kw):
                cols = slice(q * dilation[1], q * dilation[1] + (ow - 1) * stride[1] + 1, stride[1])
                # terms[n, o, i, y, x] = input[n, i, y', x'] * w[o, i, p, q]
                terms = inputs[:, None, :, rows, cols] * w[outputs, :, p, q][None, :, :, None, None]
                out[:, outputs] += terms.sum(axis=2)
                magnitude[:, outputs] += np.abs(terms).sum(axis=2)
    if b is not None:
        out += b[None, :, None, None]
        magnitude += np.abs(b)[None, :, None, None]
    return out, magnitude


def use_sample_libraries():
    os.environ["TPUC_ROOT"] = SAMPLE_ROOT
    os.environ["TPUKERNEL_CUSTOM_FIRMWARE_PATH"] = os.path.join(SAMPLE_ROOT, "lib")


class InTempDir(unittest.TestCase):
    def setUp(self):
        self._cwd = os.getcwd()
        self._tmp = tempfile.TemporaryDirectory()
        os.chdir(self._tmp.name)
        use_sample_libraries()

    def tearDown(self):
        os.chdir(self._cwd)
        self._tmp.cleanup()
        tpul.deinit()


def model_output(name, tensor):
    return np.load(f"{name}_model_outputs.npz")[tensor.name].astype(np.float64)


class Conv(InTempDir):
    def run_conv(self, chip, dtype, xshape, wshape, bias=True, stride=None, dilation=None, pad=None, group=1,
                 seed=0, api="conv"):
        rng = np.random.default_rng(seed)
        x = rng.uniform(-1, 1, xshape).astype(np.float32)
        w = rng.uniform(-1, 1, wshape).astype(np.float32)
        b = rng.uniform(-1, 1, wshape[0]).astype(np.float32) if bias else None
        tpul.init(chip)
        tx = tpul.Tensor(name="x", dtype=dtype, data=x)
        tw = tpul.Tensor(name="w", dtype=dtype, data=w, ttype="coeff")
        tb = tpul.Tensor(name="b", dtype=dtype, shape=[wshape[0]], data=b, ttype="coeff") if bias else None
        if api == "conv":
            y = tpul.conv(tx, tw, bias=tb, stride=stride, dilation=dilation, pad=pad, group=group)
        else:
            y = tpul.conv_v2(tx, tw, bias=tb, stride=stride, dilation=dilation, pad=pad, group=group,
                             input_zp=None, weight_zp=None, out_dtype=dtype)
        tpul.compile("conv", [tx], [y])
        got = model_output("conv", y)
        want, magnitude = conv_reference(as_stored(x, dtype), as_stored(w, dtype),
                                         None if b is None else as_stored(b, dtype), stride or [1, 1],
                                         dilation or [1, 1], pad or [0, 0, 0, 0], group)
        self.assertEqual(list(got.shape), list(want.shape))
        self.assertEqual(y.shape, list(want.shape))
        # One ulp of the result, plus fp32 accumulation of the terms.
        limit = ULP[dtype] * np.abs(want) + 2.0 ** -20 * magnitude + TINY[dtype]
        bad = np.abs(got - want) > limit
        if bad.any():
            self.fail(f"{chip} {dtype}: {bad.sum()} of {bad.size} elements off; the first at "
                      f"{np.argwhere(bad)[0]}: {got[bad][0]} vs {want[bad][0]}")
        return got

    def test_geometries_on_both_chips_and_float_dtypes(self):
        cases = [
            # name, x shape, w shape, keyword arguments
            ("3x3 pad 1", [1, 3, 8, 8], [4, 3, 3, 3], dict(pad=[1, 1, 1, 1])),
            ("stride, dilation, asymmetric pads, 2 groups", [2, 8, 13, 11], [16, 4, 3, 3],
             dict(stride=[2, 1], dilation=[1, 2], pad=[1, 2, 0, 1], group=2)),
            ("depthwise", [2, 12, 9, 7], [12, 1, 3, 3], dict(stride=[2, 2], pad=[1, 1, 1, 1], group=12)),
            ("depthwise with multiplier 2 and no bias", [1, 4, 6, 6], [8, 1, 3, 3], dict(group=4, bias=False)),
            ("1x1, more channels than NPUs", [1, 70, 5, 5], [130, 70, 1, 1], dict(bias=False)),
            ("5x4 kernel, wide pads and stride", [1, 5, 7, 9], [3, 5, 5, 4], dict(stride=[3, 2], pad=[4, 3, 2, 1])),
        ]
        for chip in CHIPS:
            for dtype in DTYPES:
                for name, xs, ws, kwargs in cases:
                    with self.subTest(chip=chip, dtype=dtype, case=name):
                        self.run_conv(chip, dtype, xs, ws, **kwargs)

    def test_tiles_over_rows_batches_and_output_channels(self):
        cases = [
            # output rows: a 200x200 plane is more than local memory in every dtype
            ("rows", [2, 1, 200, 200], [2, 1, 3, 3], dict(pad=[1, 1, 1, 1]), lambda chip, dtype: True),
            # batches: all rows of one image fit, not of all 80
            ("batches", [80, 1, 30, 30], [4, 1, 3, 3], dict(), lambda chip, dtype: True),
            # output channels: the fp32 weights of all 1024 do not fit bm1688's local memory
            ("output channels", [1, 64, 6, 6], [1024, 64, 5, 5], dict(),
             lambda chip, dtype: chip == "bm1688" and dtype == "float32"),
        ]
        for chip in CHIPS:
            for dtype in ("float32", "float16"):
                for name, xs, ws, kwargs, tiled in cases:
                    with self.subTest(chip=chip, dtype=dtype, case=name):
                        self.run_conv(chip, dtype, xs, ws, **kwargs)
                        # Untiled: the weights, the bias, its fp32 copy, then input, conv, output.
                        if tiled(chip, dtype):
                            self.assertGreater(self.conv_commands(), 6)

    def conv_commands(self):
        info = tpu_sdk.model_info("conv_tpulang.model")
        return int(re.search(r"builtin.conv2d +static \((\d+) commands\)", info).group(1))

    def test_row_tiles_wholly_in_the_padding(self):
        # One output row per tile (a row is a third of local memory); the first and last 5 rows
        # read only padding: bias alone, or 0.
        for chip in CHIPS:
            for dtype in DTYPES:
                iw = LOCAL_MEM[chip] // 3 // ESIZE[dtype]
                for bias in (True, False):
                    with self.subTest(chip=chip, dtype=dtype, bias=bias):
                        got = self.run_conv(chip, dtype, [1, 1, 2, iw], [3, 1, 1, 1], bias=bias, pad=[5, 0, 5, 0])
                        self.assertEqual(got.shape[2], 12)
                        self.assertGreater(self.conv_commands(), 12 * 2)  # a tile per row

    def test_conv_v2_and_refs(self):
        got = self.run_conv("bm1688", "float32", [1, 2, 5, 5], [2, 2, 3, 3], pad=[1, 1, 1, 1], api="conv_v2")
        self.assertEqual(got.shape, (1, 2, 5, 5))

    def test_every_float_mode_converts_the_weights(self):
        rng = np.random.default_rng(3)
        x = rng.uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
        w = rng.uniform(-1, 1, (6, 4, 3, 3)).astype(np.float32)
        b = rng.uniform(-1, 1, 6).astype(np.float32)
        want, _ = conv_reference(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), [1, 1], [1, 1],
                                 [1, 1, 1, 1], 1)
        for chip in CHIPS:
            with self.subTest(chip=chip):
                tpul.init(chip)
                tx = tpul.Tensor(name="x", dtype="float32", data=x)
                y = tpul.conv(tx, tpul.Tensor(name="w", data=w, ttype="coeff"),
                              tpul.Tensor(name="b", data=b, ttype="coeff"), pad=[1, 1, 1, 1], out_name="y")
                tpul.compile_f32("modes", [tx], [y], refs=[want.astype(np.float32)], mode="all")
                tpul.deinit()

    def test_a_float32_bias_of_a_float16_conv(self):
        # As the vendor's model-definition tests write it: the bias coefficient in float32.
        rng = np.random.default_rng(4)
        x = rng.uniform(-1, 1, (1, 3, 5, 5)).astype(np.float16)
        w = rng.uniform(-1, 1, (2, 3, 3, 3)).astype(np.float16)
        b = rng.uniform(-1, 1, 2).astype(np.float32)
        tpul.init("bm1684x")
        tx = tpul.Tensor(name="x", dtype="float16", data=x)
        y = tpul.conv(tx, tpul.Tensor(name="w", dtype="float16", data=w, ttype="coeff"),
                      tpul.Tensor(name="b", dtype="float32", shape=2, data=b, ttype="coeff"))
        tpul.compile("mixed", [tx], [y])
        want, magnitude = conv_reference(as_stored(x, "float16"), as_stored(w, "float16"), as_stored(b, "float16"),
                                         [1, 1], [1, 1], [0, 0, 0, 0], 1)
        np.testing.assert_array_less(np.abs(model_output("mixed", y) - want),
                                     ULP["float16"] * np.abs(want) + 2.0 ** -20 * magnitude + TINY["float16"])

    def test_errors(self):
        tpul.init("bm1684x")
        x = tpul.Tensor(name="x", dtype="float32", shape=[1, 4, 8, 8])
        w = tpul.Tensor(name="w", dtype="float32", data=np.ones((4, 2, 3, 3), np.float32), ttype="coeff")
        with self.assertRaisesRegex(tpul.TpuLangError, "needs its data"):
            tpul.Tensor(name="c", dtype="float32", shape=[2], ttype="coeff")
        with self.assertRaisesRegex(tpul.TpuLangError, "do not match"):
            tpul.conv(x, w)  # 2 input channels per group, group 1
        with self.assertRaisesRegex(tpul.TpuLangError, "quantized"):
            tpul.conv(tpul.Tensor(name="q", dtype="int8", shape=[1, 4, 8, 8]), w, group=2)
        with self.assertRaisesRegex(tpul.TpuLangError, "quantized"):
            tpul.conv_v2(x, w, group=2, input_zp=3)
        with self.assertRaisesRegex(tpul.TpuLangError, "out_dtype"):
            tpul.conv(x, w, group=2, out_dtype="float16")
        with self.assertRaisesRegex(tpul.TpuLangError, "pad"):
            tpul.conv(x, w, group=2, pad=[1, 1])
        # The engine's limits, from the builder: pads above 15.
        y = tpul.conv(x, w, group=2, pad=[16, 0, 0, 0])
        with self.assertRaisesRegex(tpu_sdk.Error, r"builtin.conv2d: parameter 'pads' \[16,0,0,0\]: each entry must "
                                                   r"be an int in 0..15"):
            tpul.compile("bad", [x], [y])
        # A row too wide for local memory: a named kernel error, not a wrong result.
        tpul.deinit()
        tpul.init("bm1688")
        wide = tpul.Tensor(name="wide", dtype="float32", shape=[1, 1, 1, 60000])
        y = tpul.conv(wide, tpul.Tensor(name="k", data=np.ones((1, 1, 1, 1), np.float32), ttype="coeff"))
        with self.assertRaisesRegex(tpu_sdk.Error, "does not fit the 131072 bytes of local memory"):
            tpul.compile("wide", [wide], [y])


def pool_reference(x, kind, kernel, stride, pad):
    """Max (padding never wins) or average over kh kw (padding counted as 0) in double; the result and
    the sum of |terms| per element."""
    n, c, h, w = x.shape
    oh = (h + pad[0] + pad[2] - kernel[0]) // stride[0] + 1
    ow = (w + pad[1] + pad[3] - kernel[1]) // stride[1] + 1
    padded = np.full((n, c, h + pad[0] + pad[2], w + pad[1] + pad[3]), -np.inf if kind == "max" else 0.0)
    padded[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + w] = x
    out = np.zeros((n, c, oh, ow))
    magnitude = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for xo in range(ow):
            window = padded[:, :, y * stride[0]:y * stride[0] + kernel[0], xo * stride[1]:xo * stride[1] + kernel[1]]
            if kind == "max":
                out[:, :, y, xo] = window.max(axis=(2, 3))
            else:
                out[:, :, y, xo] = window.sum(axis=(2, 3)) / (kernel[0] * kernel[1])
                magnitude[:, :, y, xo] = np.abs(window).sum(axis=(2, 3)) / (kernel[0] * kernel[1])
    return out, magnitude


class Pool(InTempDir):
    def run_pool(self, chip, dtype, kind, shape, kernel, stride=None, pad=None, ceil_mode=False):
        x = np.random.default_rng(5).uniform(-1, 1, shape).astype(np.float32)
        tpul.init(chip)
        tx = tpul.Tensor(name="x", dtype=dtype, data=x)
        pool = tpul.maxpool2d if kind == "max" else tpul.avgpool2d
        extra = {} if kind == "max" else {"count_include_pad": True}
        y = pool(tx, kernel=kernel, stride=stride, pad=pad, ceil_mode=ceil_mode, **extra)
        tpul.compile("pool", [tx], [y])
        got = model_output("pool", y)
        pad = list(pad or [0, 0, 0, 0])
        if ceil_mode:  # the partial last window: as much padding as it needs
            for axis in (0, 1):
                extent = shape[2 + axis] + pad[axis] + pad[2 + axis] - kernel[axis]
                if extent % stride[axis]:
                    pad[2 + axis] += stride[axis] - extent % stride[axis]
        want, magnitude = pool_reference(as_stored(x, dtype), kind, kernel, stride or [1, 1], pad)
        # The scale 1 / (kh kw) is rounded into the dtype too: two ulps.
        self.check_pool(y, got, want, kind, 2 * ULP[dtype] * np.abs(want) + 2.0 ** -20 * magnitude + TINY[dtype])

    def check_pool(self, y, got, want, kind, limit):
        """The shapes, then max bit for bit (one of the window's values) or an average within `limit`."""
        self.assertEqual(list(got.shape), list(want.shape))
        self.assertEqual(y.shape, list(want.shape))
        if kind == "max":
            np.testing.assert_array_equal(got, want)
            return
        bad = np.abs(got - want) > limit
        if bad.any():
            self.fail(f"{bad.sum()} of {bad.size} elements off; the first at "
                      f"{np.argwhere(bad)[0]}: {got[bad][0]} vs {want[bad][0]}")

    def test_max_and_average_on_both_chips_and_float_dtypes(self):
        cases = [
            ("max 2x2 stride 2", "max", [2, 5, 8, 9], dict(kernel=[2, 2], stride=[2, 2])),
            ("max 3x3 stride 2 pad 1, ceil mode, more channels than NPUs", "max", [1, 70, 11, 10],
             dict(kernel=[3, 3], stride=[2, 2], pad=[1, 1, 1, 1], ceil_mode=True)),
            ("average 3x3 pad 1", "avg", [1, 3, 7, 7], dict(kernel=[3, 3], stride=[1, 1], pad=[1, 1, 1, 1])),
            ("average 2x3 stride [2, 1]", "avg", [2, 4, 6, 9], dict(kernel=[2, 3], stride=[2, 1])),
            ("max over rows tiled", "max", [2, 3, 300, 300], dict(kernel=[2, 2], stride=[2, 2])),
            ("average over rows tiled", "avg", [1, 2, 300, 300], dict(kernel=[3, 3], stride=[1, 1])),
        ]
        for chip in CHIPS:
            for dtype in DTYPES:
                for name, kind, shape, kwargs in cases:
                    with self.subTest(chip=chip, dtype=dtype, case=name):
                        self.run_pool(chip, dtype, kind, shape, **kwargs)

    def test_window_divisors_and_ceil_mode_match_pytorch(self):
        """count_include_pad and ceil_mode as PyTorch computes them (in double, on the stored inputs):
        each window's mean over the taps it counts, and the partial last window of ceil_mode."""
        import torch
        import torch.nn.functional as F
        cases = [  # shape, kernel, stride, symmetric pad [h, w]
            ([1, 3, 7, 7], [3, 3], [2, 2], [1, 1]),
            ([2, 2, 8, 11], [3, 2], [2, 3], [1, 0]),
            ([1, 70, 10, 9], [2, 2], [2, 2], [1, 1]),  # more channels than NPUs
        ]
        rng = np.random.default_rng(11)
        for chip in CHIPS:
            for dtype in DTYPES:
                for shape, kernel, stride, pad in cases:
                    x = rng.uniform(-1, 1, shape).astype(np.float32)
                    stored = torch.from_numpy(as_stored(x, dtype))
                    for kind, ceil_mode, count_include_pad in (("avg", False, False), ("avg", True, False),
                                                               ("avg", True, True), ("max", True, None)):
                        with self.subTest(chip=chip, dtype=dtype, shape=shape, kind=kind, ceil_mode=ceil_mode,
                                          count_include_pad=count_include_pad):
                            tpul.init(chip)
                            tx = tpul.Tensor(name="x", dtype=dtype, data=x)
                            flags = dict(kernel=kernel, stride=stride, pad=[pad[0], pad[1], pad[0], pad[1]],
                                         ceil_mode=ceil_mode)
                            torch_flags = dict(kernel_size=kernel, stride=stride, padding=pad, ceil_mode=ceil_mode)
                            if kind == "max":
                                y = tpul.maxpool2d(tx, **flags)
                                want = F.max_pool2d(stored, **torch_flags).numpy()
                            else:
                                y = tpul.avgpool2d(tx, count_include_pad=count_include_pad, **flags)
                                torch_flags["count_include_pad"] = count_include_pad
                                want = F.avg_pool2d(stored, **torch_flags).numpy()
                                magnitude = F.avg_pool2d(stored.abs(), **torch_flags).numpy()
                            tpul.compile("pool", [tx], [y])
                            got = model_output("pool", y)
                            tpul.deinit()
                            # The sum over kh kw (two ulps, as above), the factor kh kw / taps and the
                            # product each rounded into the dtype.
                            limit = None if kind == "max" else \
                                5 * ULP[dtype] * np.abs(want) + 2.0 ** -20 * magnitude + TINY[dtype]
                            self.check_pool(y, got, want, kind, limit)

    def test_errors(self):
        tpul.init("bm1688")
        x = tpul.Tensor(name="x", dtype="float32", shape=[1, 2, 6, 6])
        self.assertIs(tpul.maxpool, tpul.maxpool2d)
        self.assertIs(tpul.avgpool, tpul.avgpool2d)
        for make, message in (
                (lambda: tpul.maxpool2d(x), "kernel"),
                (lambda: tpul.maxpool2d(x, kernel=[7, 2]), "larger than the padded input"),
                (lambda: tpul.maxpool2d(x, kernel=[2, 2], scale=[1.0]), "quantized")):
            with self.assertRaisesRegex(tpul.TpuLangError, message):
                make()
        y = tpul.maxpool2d(x, kernel=[2, 2], pad=[2, 0, 0, 0])
        with self.assertRaisesRegex(tpu_sdk.Error, "reach a window of padding only"):
            tpul.compile("bad", [x], [y])


def weights_net(data, dtype="fp32", data_dtype=None, dynamic=False):
    """y = x + |w| + 0.5: the sample op absadd on a weight, then builtin.add."""
    weight = {"name": "w", "shape": [2, 3, 4, 5], "dtype": dtype,
              "data": base64.b64encode(np.ascontiguousarray(data).tobytes()).decode()}
    if data_dtype:
        weight["data_dtype"] = data_dtype
    absadd = {"op": "absadd", "params": {"b": 0.5}, "inputs": ["w"], "outputs": ["t"]}
    if dynamic:
        absadd["dynamic"] = True
    return json.dumps({"name": "weights", "inputs": [{"name": "x", "shape": [2, 3, 4, 5], "dtype": dtype}],
                       "weights": [weight],
                       "layers": [absadd, {"op": "builtin.add", "inputs": ["x", "t"], "outputs": ["y"]}],
                       "outputs": ["y"]})


class Weights(InTempDir):
    def test_a_custom_op_reads_a_weight_static_and_dynamic(self):
        w = np.linspace(-2, 2, 120, dtype=np.float32).reshape(2, 3, 4, 5)
        x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5) / 8
        for chip in CHIPS:
            for dynamic in (False, True):
                with self.subTest(chip=chip, dynamic=dynamic):
                    info = tpu_sdk.build_model(weights_net(w, dynamic=dynamic), chip, "w.model",
                                               reference_inputs={"x": x})
                    np.testing.assert_array_equal(info["reference_outputs"]["y"], x + (np.abs(w) + 0.5))
                    for scale in (1, -3):  # the weight stays loaded, whatever the input
                        outputs, stats = tpu_sdk.run_model("w.model", {"x": x * scale})
                        np.testing.assert_array_equal(outputs["y"], x * scale + (np.abs(w) + 0.5))
                    self.assertEqual([s["op"] for s in stats], ["absadd", "builtin.add"])
                    self.assertEqual(tpu_sdk.model_inputs("w.model"), {"x": ([2, 3, 4, 5], "fp32")})
                    info_text = tpu_sdk.model_info("w.model")
                    self.assertRegex(info_text, r"\n  w +weight +\[2,3,4,5\] +fp32 ")
                    self.assertRegex(info_text, r"\n  weight\.w +weight +480 ")

    def test_float_data_rounded_into_the_weight_dtype(self):
        w = np.linspace(-2, 2, 120, dtype=np.float32).reshape(2, 3, 4, 5) + np.float32(1e-4)
        x = np.zeros((2, 3, 4, 5), np.float16)
        tpu_sdk.build_model(weights_net(w, "fp16", "fp32"), "bm1684x", "h.model")
        outputs, _ = tpu_sdk.run_model("h.model", {"x": x})
        expected = (np.abs(w.astype(np.float16).astype(np.float32)) + 0.5).astype(np.float16)
        np.testing.assert_array_equal(outputs["y"], expected)

    def test_tpulang_coeff_into_a_custom_op(self):
        w = np.linspace(-1, 1, 24, dtype=np.float32).reshape(1, 2, 3, 4)
        x = np.linspace(0, 5, 24, dtype=np.float32).reshape(1, 2, 3, 4)
        tpul.init("bm1688")
        tx = tpul.Tensor(name="x", dtype="float32", data=x)
        tw = tpul.Tensor(name="w", dtype="float32", data=w, ttype="coeff")
        t = tpul.custom([tw], "absadd", ["float32"], params={"b": 0.25})[0]
        y = tpul.add(tx, t)
        tpul.compile("coeff", [tx], [y], refs=[x + np.abs(w) + 0.25])
        np.testing.assert_allclose(model_output("coeff", y), x + np.abs(w) + 0.25, rtol=1e-6)
        with open("coeff.mlir") as f:
            self.assertEqual(json.load(f)["net"]["weights"][0]["name"], "w")

    def test_net_errors(self):
        good = json.loads(weights_net(np.zeros((2, 3, 4, 5), np.float32)))

        def expect(change, pattern):
            net = json.loads(json.dumps(good))
            change(net["weights"][0], net)
            with self.assertRaisesRegex(tpu_sdk.Error, pattern):
                tpu_sdk.build_model(json.dumps(net), "bm1684x", "bad.model")

        expect(lambda w, n: w.update(data=w["data"][:-4]), r"weights\[0\] \('w'\): \"data\" holds 477 bytes, but "
                                                            r"120 values of fp32 are 480 bytes")
        expect(lambda w, n: w.update(data="AA*A" + w["data"][4:]), r"character 2 \('\*'\) is not base64")
        expect(lambda w, n: w.update(data="AAA"), r"multiple of 4")
        expect(lambda w, n: w.pop("data"), r"\"data\" \(the values, base64\) is missing")
        expect(lambda w, n: w.update(dtype="int8", data_dtype="fp32"), r"only float data converts")
        expect(lambda w, n: w.update(name="x"), r"weight 'x' is already declared as a net input")
        expect(lambda w, n: w.update(scale=1.0), r"unknown key \"scale\"")
        expect(lambda w, n: n.update(outputs=["w"]), r"output 'w' is a weight; an output must be produced")
        expect(lambda w, n: n["layers"].append({"op": "builtin.relu", "inputs": ["y"], "outputs": ["w"]}),
               r"output tensor 'w' is already defined by weight")


class IntegerReferences(InTempDir):
    """The builder's reference of integer built-in layers (the outputs --compare and the front end
    check against) is exact at any magnitude: int32 values beyond 2^24, which float32 would round,
    wrap as numpy's int32 arithmetic does, and the device's outputs equal it."""

    def test_int32_beyond_2_24_against_numpy(self):
        layers = [
            {"op": "builtin.expression", "params": {"formula": "a * b + a - b"}, "inputs": ["a", "b"],
             "outputs": ["e"]},
            {"op": "builtin.expression", "params": {"formula": "max(a, b) - min(a, -b)"}, "inputs": ["a", "b"],
             "outputs": ["m"]},
            {"op": "builtin.int_pow", "inputs": ["a", "y"], "outputs": ["p"]},
            {"op": "builtin.transpose", "params": {"perm": [1, 0]}, "inputs": ["a"], "outputs": ["t"]},
            {"op": "builtin.concat", "params": {"axis": 1}, "inputs": ["a", "b"], "outputs": ["c"]},
            {"op": "builtin.cast", "params": {"to": "uint32"}, "inputs": ["b"], "outputs": ["u"]},
            {"op": "builtin.gather", "params": {"axis": 1}, "inputs": ["a", "i"], "outputs": ["g"]},
        ]
        net = {"name": "int32_refs",
               "inputs": [{"name": "a", "shape": [4, 6], "dtype": "int32"},
                          {"name": "b", "shape": [4, 6], "dtype": "int32"},
                          {"name": "y", "shape": [4, 6], "dtype": "int32"},
                          {"name": "i", "shape": [3], "dtype": "int32"}],
               "layers": layers, "outputs": ["e", "m", "p", "t", "c", "u", "g"]}
        rng = np.random.default_rng(24)
        a = rng.integers(2 ** 24 + 1, 2 ** 31 - 1, (4, 6), dtype=np.int32) * np.where(rng.random((4, 6)) < 0.5, -1, 1)
        a = a.astype(np.int32)
        b = rng.integers(-2 ** 31, 2 ** 31 - 1, (4, 6), dtype=np.int32)
        b[0, :3] = [2 ** 24 + 1, -2 ** 24 - 3, 2 ** 31 - 1]  # odd values float32 cannot hold
        y = rng.integers(0, 5, (4, 6), dtype=np.int32)
        i = np.array([5, 0, 3], dtype=np.int32)
        with np.errstate(over="ignore"):
            want = {"e": a * b + a - b, "m": np.maximum(a, b) - np.minimum(a, -b),
                    "p": np.power(a, y), "t": a.T, "c": np.concatenate([a, b], axis=1),
                    "u": b.astype(np.uint32), "g": np.take(a, i, axis=1)}
        inputs = {"a": a, "b": b, "y": y, "i": i}
        for chip in CHIPS:
            info = tpu_sdk.build_model(json.dumps(net), chip, "i.model", reference_inputs=inputs)
            outputs, _ = tpu_sdk.run_model("i.model", inputs)
            for name, expected in want.items():
                with self.subTest(chip=chip, output=name):
                    reference = info["reference_outputs"][name]
                    self.assertEqual(reference.dtype, expected.dtype)  # its own dtype, not float32
                    np.testing.assert_array_equal(reference, expected)
                    np.testing.assert_array_equal(outputs[name], expected)


if __name__ == "__main__":
    unittest.main()
