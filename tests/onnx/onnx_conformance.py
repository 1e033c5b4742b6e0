#!/usr/bin/env python3
"""onnx_conformance.py: ONNX's own backend node tests (Debian's
libonnx-testdata) through the SDK's importer, on the emulated chips.

For every node test (a model.onnx and test_data_set_*/ with input_*.pb and
output_*.pb) whose ops are all among tpu_sdk.onnx_supported_ops(), on each
chip: import the model (tpu_sdk.build_onnx), build it, run every data set on
the emulator and compare every output with the expected one at the
tolerance of its element type (TOLERANCES below: |actual - expected| <=
atol + rtol * |expected|, element by element, NaN where expected NaN).

The harness freezes one thing: a graph input that configures a layer
(CONFIGURATION_INPUTS below: Reshape's shape, Squeeze's axes, Slice's
starts, Clip's bounds, Dropout's ratio, ... given as
inputs) is made an initializer holding data set 0's value, because the
SDK builds static layers whose configuration is fixed at build time; so
is every scalar (rank 0) input of a test whose model the importer refuses
for a value it must know at build time ("is not a constant": a window
function's size feeding Range), and the test is then built again. Every other input,
whatever its element type (float, double, integer, bool), stays a graph
input fed with the test's arrays. Everything else is the test as ONNX
ships it. Tests whose inputs or outputs are not tensors (sequences,
optionals) are skipped, counted under "(non-tensor values)", and so are
tests whose data arrays contradict the input shapes their model declares
(counted and named under "(data shapes contradict the model)"; the run
would refuse the arrays). bfloat16 data
(numpy has no such type) arrive as their uint16 bits, which is how the SDK
takes and returns bfloat16 arrays; a bfloat16 output is compared as the
floats those bits encode, at BF16_TOLERANCE.

Prints one line per failure and per refusal, then
    N passed, M failed, R refused by the importer, S skipped (unsupported ops)
and the skipped tests counted by op. Exit status 1 when a test failed
(a refusal is reported, not a failure: the importer said no with a message).

    python3 tests/onnx/onnx_conformance.py [--chips bm1684x,bm1688] [--subset] [--filter REGEX] [-v]

--subset runs the fixed list SUBSET below (one or two tests per supported
op, each of which must pass: a refusal fails too; what the CTest test
onnx_conformance_subset runs, a few seconds);
without it every test of the supported ops runs (CI's separate step).
"""
import argparse
import collections
import glob
import os
import re
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

import tpu_sdk

TESTDATA = "/usr/share/libonnx-testdata/data/node"

# Per element type: (rtol, atol). fp32 is ONNX's own backend-test rtol
# (1e-3) with an atol that absorbs the engine's transcendental functions
# near zero (docs/bdc-math.md: exp/log/sigmoid/tanh within a few ulp, on
# values of the dtype); fp16 and bf16 are a few units in the last place of
# their 11 and 8 significant bits.
TOLERANCES = {
    np.dtype(np.float32): (1e-3, 1e-5),
    np.dtype(np.float16): (4e-3, 1e-3),
    # double is computed in fp32 on the device (docs/onnx.md): fp32's tolerance.
    np.dtype(np.float64): (1e-3, 1e-5),
}
# bfloat16: a few units in the last place of its 8 significant bits.
BF16_TOLERANCE = (1.6e-2, 1e-2)
# Integer outputs (int64 is held as int32) and bools must be exact.

# (op type, input index) pairs the importer fixes at build time: such a
# graph input is frozen into an initializer.
CONFIGURATION_INPUTS = {
    "Reshape": {1}, "Squeeze": {1}, "Unsqueeze": {1}, "Slice": {1, 2, 3, 4}, "Split": {1}, "Clip": {1, 2},
    "Expand": {1}, "Dropout": {1, 2}, "ReduceMean": {1}, "ReduceSum": {1},
    "ReduceMax": {1}, "ReduceMin": {1}, "ReduceSumSquare": {1}, "ReduceL1": {1}, "ReduceL2": {1},
    "ReduceLogSum": {1}, "ReduceLogSumExp": {1}, "BatchNormalization": {1, 2, 3, 4},
    # folded at import (Shape, Size need only the input's shape)
    "ConstantOfShape": {0}, "Range": {0, 1, 2},
    "Pad": {1, 2, 3}, "Tile": {1}, "Trilu": {1},
}

# One or two tests per supported op, for the quick CTest run.
SUBSET = [
    "test_abs", "test_add", "test_add_bcast", "test_sub_bcast", "test_mul", "test_div_bcast", "test_neg",
    "test_relu", "test_sigmoid", "test_tanh", "test_exp", "test_log", "test_sqrt", "test_reciprocal",
    "test_leakyrelu", "test_clip", "test_max_example", "test_min_example", "test_sum_example", "test_mean_example",
    "test_elu", "test_selu", "test_hardsigmoid", "test_hardswish", "test_softsign", "test_softplus", "test_sign",
    "test_thresholdedrelu", "test_prelu_broadcast", "test_reshape_reordered_all_dims", "test_flatten_axis1",
    "test_squeeze", "test_unsqueeze_axis_0", "test_identity", "test_concat_2d_axis_0",
    "test_basic_conv_with_padding", "test_conv_with_strides_padding", "test_maxpool_2d_pads",
    "test_averagepool_2d_pads_count_include_pad", "test_globalaveragepool", "test_globalmaxpool",
    "test_batchnorm_example", "test_transpose_default", "test_slice", "test_split_equal_parts_1d", "test_gather_0",
    "test_expand_dim_changed", "test_reduce_mean_keepdims_example", "test_reduce_sum_keepdims_example",
    "test_reduce_max_keepdims_example", "test_reduce_min_do_not_keepdims_example", "test_reduce_l2_keep_dims_example",
    "test_softmax_axis_1", "test_softmax_large_number", "test_logsoftmax_axis_1", "test_layer_normalization_4d_axis1",
    "test_matmul_4d", "test_gemm_all_attributes", "test_erf", "test_pow_bcast_scalar",
    "test_less_equal", "test_greater_bcast", "test_cast_FLOAT_to_FLOAT16",
    # windows and Pow beyond the first limits (issue 33), MatMul / Gemm as one layer
    "test_averagepool_2d_ceil", "test_averagepool_2d_pads", "test_averagepool_2d_same_lower",
    "test_averagepool_3d_default", "test_averagepool_1d_default", "test_maxpool_1d_default", "test_maxpool_2d_ceil",
    "test_maxpool_2d_dilations", "test_maxpool_3d_default", "test_pow", "test_pow_bcast_array",
    "test_pow_types_float32_int64", "test_matmul_2d", "test_gemm_default_matrix_bias",
    # integer, double and bool tensors (docs/onnx.md "Element types")
    "test_add_uint8", "test_div_uint8", "test_max_int32", "test_min_int64", "test_max_uint16", "test_min_int8",
    "test_max_float64", "test_clip_default_int8_min", "test_maxpool_2d_uint8",
    "test_equal", "test_where_long_example", "test_where_example",
    "test_and_bcast4v3d", "test_not_3d", "test_cast_DOUBLE_to_FLOAT", "test_cast_FLOAT16_to_DOUBLE",
    # integer Pow, negative steps, empty tensors, constant graphs, MaxPool's Indices, training BatchNormalization
    "test_pow_types_int32_int32", "test_pow_types_int64_float32", "test_slice_neg_steps",
    "test_slice_start_out_of_bounds", "test_split_zero_size_splits", "test_reshape_allowzero_reordered",
    "test_constant", "test_maxpool_with_argmax_2d_precomputed_pads", "test_maxpool_with_argmax_2d_precomputed_strides",
    "test_batchnorm_example_training_mode", "test_batchnorm_epsilon_training_mode", "test_dropout_default_mask",
    "test_training_dropout_zero_ratio_mask",
    # bfloat16 data as their bits
    "test_cast_FLOAT_to_BFLOAT16", "test_cast_BFLOAT16_to_FLOAT",
    # string tensors: text inputs and outputs
    "test_cast_FLOAT_to_STRING", "test_cast_STRING_to_FLOAT", "test_castlike_FLOAT_to_STRING_expanded",
    "test_castlike_STRING_to_FLOAT",
    # shape computations folded at import, the later op families
    "test_shape_start_1_end_negative_1", "test_constantofshape_int_zeros", "test_range_int32_type_negative_delta",
    "test_layer_normalization_3d_axis1_epsilon_expanded", "test_floor", "test_ceil", "test_round", "test_sin",
    "test_cos", "test_isnan", "test_isinf_negative", "test_mod_mixed_sign_float32", "test_mod_mixed_sign_int8",
    "test_mod_mixed_sign_int64", "test_mod_uint32", "test_argmax_keepdims_random_select_last_index",
    "test_argmin_no_keepdims_example", "test_reflect_pad", "test_edge_pad", "test_constant_pad", "test_tile",
    "test_triu_neg", "test_tril_zero", "test_depthtospace_crd_mode", "test_spacetodepth", "test_instancenorm_epsilon",
]


def ops_of(model):
    return sorted({(n.domain, n.op_type) for n in model.graph.node})


def read_data_set(directory, kind):
    files = sorted(glob.glob(os.path.join(directory, f"{kind}_*.pb")), key=lambda p: int(re.findall(r"\d+", p)[-1]))
    arrays = []
    for path in files:
        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        arrays.append(numpy_helper.to_array(tensor))
    return arrays


def freeze_configuration_inputs(model, inputs, scalars=False):
    """Makes every graph input that configures a layer (CONFIGURATION_INPUTS),
    and with `scalars` every rank-0 one, an initializer holding data set 0's
    value; returns the names of the inputs that stay inputs."""
    graph = model.graph
    initialized = {t.name for t in graph.initializer}
    configuring = {node.input[i] for node in graph.node for i in CONFIGURATION_INPUTS.get(node.op_type, ())
                   if i < len(node.input)}
    kept = []
    for value, array in zip([v for v in graph.input if v.name not in initialized], inputs):
        if value.name in configuring or (scalars and not len(value.type.tensor_type.shape.dim)):
            graph.initializer.append(numpy_helper.from_array(array, value.name))
        else:
            kept.append(value.name)
    return kept


def bf16_values(bits):
    """The float32 values of bfloat16 bits (uint16)."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def compare(name, actual, expected, bfloat16=False):
    """None when within tolerance, else why not; `bfloat16`: both hold bfloat16 bits."""
    if actual.shape != expected.shape:
        return f"output {name}: shape {list(actual.shape)}, expected {list(expected.shape)}"
    if bfloat16:
        return within(name, bf16_values(actual), bf16_values(expected), BF16_TOLERANCE)
    if expected.dtype == object:  # a string tensor: the very text ONNX expects
        bad = actual.astype(object) != expected
        if bad.any():
            i = np.unravel_index(np.argmax(bad), bad.shape)
            return f"output {name}: {int(bad.sum())} of {bad.size} strings differ (first at {list(i)}: " \
                   f"{actual[i]!r} vs expected {expected[i]!r})"
        return None
    if expected.dtype == np.bool_:  # a computed bool comes out as 0 / 1 in its operands' float type: exact
        bad = (actual != 0) != expected
        if bad.any():
            return f"output {name}: {int(bad.sum())} of {bad.size} bools differ (first at {np.argmax(bad.ravel())})"
        return None
    if np.issubdtype(expected.dtype, np.integer):  # int64 comes back as int32: the values must be equal
        bad = actual.astype(np.int64) != expected.astype(np.int64)
        if bad.any():
            i = np.unravel_index(np.argmax(bad), bad.shape)
            return f"output {name}: {int(bad.sum())} of {bad.size} integers differ (first at {list(i)}: " \
                   f"{actual[i]!r} vs expected {expected[i]!r})"
        return None
    tolerance = TOLERANCES.get(np.dtype(expected.dtype))
    if tolerance is None:
        return f"output {name}: no tolerance for {expected.dtype}"
    return within(name, actual, expected, tolerance)


def within(name, actual, expected, tolerance):
    """None when every element is within (rtol, atol) of the expected one (NaN where NaN)."""
    rtol, atol = tolerance
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, then decided by a == e
        bad = ~((np.abs(a - e) <= atol + rtol * np.abs(e)) | (np.isnan(a) & np.isnan(e)) | (a == e))
    if not bad.any():
        return None
    i = np.unravel_index(np.argmax(bad), bad.shape)
    return (f"output {name}: {int(bad.sum())} of {bad.size} elements off (first at {list(i)}: {a[i]!r} vs expected "
            f"{e[i]!r}; rtol {rtol}, atol {atol})")


def disagreeing_input(model, inputs):
    """The first graph input whose data array's shape is not the shape the model declares (ONNX 1.12's
    castlike bfloat16 tests declare 'like' [3, 4] and ship a [1] array), as text, or None."""
    initialized = {t.name for t in model.graph.initializer}
    for value, array in zip([v for v in model.graph.input if v.name not in initialized], inputs):
        declared = [d.dim_value if d.HasField("dim_value") else None for d in value.type.tensor_type.shape.dim]
        if len(declared) != array.ndim or any(d is not None and d != n for d, n in zip(declared, array.shape)):
            return f"input '{value.name}' is declared {declared}, its data is {list(array.shape)}"
    return None


def run_test(directory, chip, workdir):
    """('passed' | 'failed' | 'refused' | 'bad data', detail)."""
    model = onnx.load(os.path.join(directory, "model.onnx"))
    data_sets = sorted(glob.glob(os.path.join(directory, "test_data_set_*")))
    first_inputs = read_data_set(data_sets[0], "input")
    disagreement = disagreeing_input(model, first_inputs)
    if disagreement:
        return "bad data", disagreement
    kept, refusal = None, None
    for frozen_scalars in (False, True):  # a scalar the importer must fold (a window's size) is frozen on refusal
        attempt = onnx.ModelProto()
        attempt.CopyFrom(model)
        kept = freeze_configuration_inputs(attempt, first_inputs, frozen_scalars)
        path = os.path.join(workdir, "model.onnx")
        onnx.save(attempt, path)
        try:
            tpu_sdk.build_onnx(path, chip, os.path.join(workdir, "model.tpumodel"), reference=False)
            refusal = None
            break
        except tpu_sdk.Error as e:
            refusal = str(e)
            if "is not a constant" not in refusal:
                break
    if refusal:
        return "refused", refusal
    model = attempt
    initialized = {t.name for t in model.graph.initializer}
    graph_inputs = [v.name for v in model.graph.input if v.name not in initialized or v.name in kept]
    for data_set in data_sets:
        inputs = dict(zip(graph_inputs, read_data_set(data_set, "input")))
        # double is held as fp32: its arrays are rounded here, explicitly (the run refuses float64).
        inputs = {k: v.astype(np.float32) if v.dtype == np.float64 else v for k, v in inputs.items() if k in kept}
        expected = read_data_set(data_set, "output")
        outputs, _ = tpu_sdk.run_model(os.path.join(workdir, "model.tpumodel"), inputs)
        for value, want in zip(model.graph.output, expected):
            bfloat16 = value.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
            why = compare(value.name, outputs[value.name], want, bfloat16)
            if why:
                return "failed", f"{os.path.basename(data_set)}: {why}"
    return "passed", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chips", default="bm1684x,bm1688")
    parser.add_argument("--subset", action="store_true", help="only the fixed SUBSET list")
    parser.add_argument("--filter", default="", help="only tests whose name matches this regular expression")
    parser.add_argument("--testdata", default=TESTDATA)
    parser.add_argument("-v", "--verbose", action="store_true", help="print every test")
    args = parser.parse_args()
    if not tpu_sdk.onnx_import_available():
        print("the SDK was built without ONNX support (libonnx-dev)")
        return 1
    supported = set(tpu_sdk.onnx_supported_ops())
    tests = sorted(glob.glob(os.path.join(args.testdata, "test_*")))
    if not tests:
        print(f"no node tests under {args.testdata} (Debian package libonnx-testdata)")
        return 1
    if args.subset:
        missing = [t for t in SUBSET if not os.path.isdir(os.path.join(args.testdata, t))]
        if missing:
            print(f"SUBSET names tests that {args.testdata} lacks: {', '.join(missing)}")
            return 1
        tests = [os.path.join(args.testdata, t) for t in SUBSET]
    if args.filter:
        tests = [t for t in tests if re.search(args.filter, os.path.basename(t))]
    counts = collections.Counter()
    skipped_by_op = collections.Counter()
    with tempfile.TemporaryDirectory() as workdir:
        for directory in tests:
            name = os.path.basename(directory)
            model = onnx.load(os.path.join(directory, "model.onnx"))
            unsupported = [op for domain, op in ops_of(model) if domain not in ("", "ai.onnx") or op not in supported]
            values = list(model.graph.input) + list(model.graph.output)
            if not all(v.type.HasField("tensor_type") for v in values):
                unsupported.append("(non-tensor values)")
            if unsupported:
                counts["skipped"] += 1
                for op in sorted(set(unsupported)):
                    skipped_by_op[op] += 1
                continue
            for chip in args.chips.split(","):
                result, detail = run_test(directory, chip, workdir)
                if result == "bad data":  # the test's own data contradict its model: not run
                    counts["skipped"] += 1
                    skipped_by_op["(data shapes contradict the model)"] += 1
                    print(f"SKIPPED  {name}: {detail}", flush=True)
                    break
                counts[result] += 1
                if result != "passed" or args.verbose:
                    print(f"{result.upper():8} {name} [{chip}] {detail}", flush=True)
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['refused']} refused by the importer, "
          f"{counts['skipped']} skipped (unsupported ops)")
    if skipped_by_op:
        print("skipped by op: " + ", ".join(f"{op} {n}" for op, n in sorted(skipped_by_op.items())))
    # The subset lists tests that must pass: a refusal there is a failure.
    return 1 if counts["failed"] or (args.subset and counts["refused"]) else 0


if __name__ == "__main__":
    sys.exit(main())
