"""The sample ops as TpuLang layers: one class per op, pairing a numpy
reference (native) with the TpuLang builder (tpulang), laid out as a vendor
customlayer/python/my_tpulang_layer.py is."""
import numpy as np

import transform.TpuLang as tpul


class absAdd:
    @staticmethod
    def native(data, b):
        return np.abs(data) + b

    @staticmethod
    def tpulang(inputs, b, dtype="float32"):
        return tpul.custom(tensors_in=inputs, op_name="absadd", params={"b": b}, out_dtypes=[dtype])


class ceilAdd:
    @staticmethod
    def native(data, b):
        return np.ceil(data) + b

    @staticmethod
    def tpulang(inputs, b, dtype="float32"):
        return tpul.custom(tensors_in=inputs, op_name="ceiladd", params={"b": b}, out_dtypes=[dtype])


class scaleInPlace:
    @staticmethod
    def native(data, s):
        return data * np.float32(s)

    @staticmethod
    def tpulang(inputs, s, dtype="float32"):
        # The op updates its input in place (metadata_scaleinplace): the
        # model gives y the memory of inputs[0].
        return tpul.custom(tensors_in=inputs, op_name="scaleinplace", params={"s": s}, out_dtypes=[dtype])


class swapChannel:
    @staticmethod
    def native(data, order=(2, 1, 0)):
        # Output channel c is input channel order[c] (the kernel's direction;
        # see plugin/plugin_swapchannel.c).
        return data[:, list(order)]

    @staticmethod
    def tpulang(inputs, order=(2, 1, 0), dtype="float32"):
        return tpul.custom(tensors_in=inputs, op_name="swapchannel", params={"order": list(order)},
                           out_dtypes=[dtype])


class crop:
    @staticmethod
    def native(data, hoffset, woffset, hnew, wnew):
        return data[..., hoffset:hoffset + hnew, woffset:woffset + wnew]

    @staticmethod
    def tpulang(inputs, hoffset, woffset, hnew, wnew, dtype="float32"):
        params = {"hoffset": hoffset, "woffset": woffset, "hnew": hnew, "wnew": wnew}
        return tpul.custom(tensors_in=inputs, op_name="crop", params=params, out_dtypes=[dtype])


class linear:
    @staticmethod
    def native(data, weight, bias=None, relu=False):
        # PyTorch's nn.Linear: weight is [out_features, in_features].
        y = data @ weight.T
        if bias is not None:
            y = y + bias
        return np.maximum(y, 0) if relu else y

    @staticmethod
    def tpulang(inputs, has_bias, relu=False, dtype="float32"):
        # inputs: [x, W] or, with has_bias, [x, W, b]; all neuron tensors.
        params = {"has_bias": int(has_bias), "do_relu": int(relu)}
        return tpul.custom(tensors_in=inputs, op_name="linear", params=params, out_dtypes=[dtype])


class cpuTopk:
    """The sample AP op ap.topk (customlayer/ap_src/ap_impl_topk.cpp): it runs on the host CPU between the
    TPU layers. Params in the order the op reads them: element 1 the axis, element 2 K."""

    @staticmethod
    def native(data, axis, k):
        # The k largest values along axis, largest first; a stable sort of the negated values keeps equal
        # values in ascending index order, as the op does.
        order = np.argsort(-np.asarray(data), axis=axis, kind="stable")
        return np.take_along_axis(np.asarray(data), np.take(order, np.arange(k), axis=axis), axis=axis)

    @staticmethod
    def tpulang(inputs, axis, k, dtype="float32"):
        return tpul.custom(tensors_in=inputs, op_name="ap.topk", params={"axis": axis, "K": k}, out_dtypes=[dtype])


class scaleAdd:
    """Two inputs, two outputs: a * scale and a * scale + b (a PPL op)."""
    @staticmethod
    def native(a, b, scale):
        scaled = a * np.float32(scale)
        return scaled, scaled + b

    @staticmethod
    def tpulang(inputs, scale, dtype="float32"):
        return tpul.custom(tensors_in=inputs, op_name="scaleadd", params={"scale": scale}, out_dtypes=[dtype, dtype])


class hardSigmoid:
    """min(max(x * alpha + beta, 0), 1): a PPL op with a local entry."""
    @staticmethod
    def native(data, alpha, beta):
        shifted = data.astype(np.float32) * np.float32(alpha) + np.float32(beta)
        return np.minimum(np.maximum(shifted, np.float32(0)), np.float32(1))

    @staticmethod
    def tpulang(inputs, alpha, beta, dtype="float32"):
        return tpul.custom(tensors_in=inputs, op_name="hardsigmoid", params={"alpha": alpha, "beta": beta},
                           out_dtypes=[dtype])
