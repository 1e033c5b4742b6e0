"""model_deploy for this SDK: the net TpuLang's compile() wrote, built into a
model file for a chip and a float mode, run on the emulator and checked.

    model_deploy.py --mlir absadd.mlir --model absadd.bmodel --quantize F16 --chip BM1688 [--dynamic]

The --mlir file is what transform.TpuLang.compile() writes under that name:
the SDK's net description (JSON). MLIR from the vendor's compiler is not
read. --quantize F32 / F16 / BF16 runs every custom op in that dtype (INT8
runs them in F16, as one vendor compiler version lowers custom ops). The
--model file is the SDK's model format, not a .bmodel. Unlike the vendor's
model_deploy, the model is always run and checked: its outputs must match
the ops' inference_ hooks run on the same inputs (--test_input, default the
<name>_in_f32.npz compile() wrote) within --correctness (0.99,0.90 by
default); --test_reference compares with a given .npz as well, within
--tolerance. Exit status 0 when every check passed, 1 otherwise, 2 for a
usage error.
"""
import argparse
import json
import os
import sys

import numpy as np

import tpu_sdk
from tpu_sdk import metrics
from tpu_sdk import dtypes


class DeployError(Exception):
    pass


def read_origin(path):
    try:
        with open(path) as f:
            origin = json.load(f)
    except FileNotFoundError:
        raise DeployError(f"{path}: no such file (TpuLang's compile() writes it)") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise DeployError(f"{path}: not a net written by transform.TpuLang.compile(); this SDK's model_deploy "
                          f"does not read MLIR from the vendor's compiler") from None
    if not isinstance(origin, dict) or origin.get("tpu_sdk_net") != 1 or "net" not in origin:
        raise DeployError(f"{path}: not a net written by transform.TpuLang.compile()")
    return origin


def quantized_net(net, quantize):
    mode = quantize.upper()
    if mode == "INT8":
        print("model_deploy: INT8: custom ops run in F16 (as one vendor compiler lowers them)")
        mode = "F16"
    if mode not in dtypes.QUANTIZE:
        raise DeployError(f"--quantize {quantize}: custom ops run in F32, F16, BF16 (or INT8 as F16) here")
    return dtypes.with_float_mode(net, dtypes.QUANTIZE[mode])


def deploy(args):
    origin = read_origin(args.mlir)
    chip = tpu_sdk.chip_name(args.chip)
    net = quantized_net(origin["net"], args.quantize)
    if args.dynamic:
        for layer in net["layers"]:
            if not layer["op"].startswith("builtin."):  # built-in layers are always recorded
                layer["dynamic"] = True
    input_file = args.test_input or origin.get("input_file")
    inputs = dict(np.load(input_file)) if input_file else {}
    from transform.TpuLang import build_and_run  # one build-and-run path for TpuLang and this tool
    top, model = build_and_run(net["name"], net, chip, {k: np.asarray(v, np.float32) for k, v in inputs.items()},
                               args.model)
    print(f"model_deploy: {args.model} for {chip}, {args.quantize.upper()}, "
          f"{'dynamic' if args.dynamic else 'static'} layers")
    failures = 0
    correctness = metrics.parse_tolerance(args.correctness)
    checks = [("inference_ hooks", top, correctness)]
    if args.test_reference:
        checks.append((args.test_reference, dict(np.load(args.test_reference)),
                       metrics.parse_tolerance(args.tolerance)))
    for label, expected, tolerance in checks:
        for name in sorted(model):
            if name not in expected:
                print(f"  {name}: no reference in {label}")
                failures += 1
                continue
            result = metrics.compare(model[name], np.asarray(expected[name], np.float32), tolerance)
            print(f"  {name} vs {label}: {result.describe()}")
            failures += not result.passed
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(prog="model_deploy.py", description=__doc__.splitlines()[0])
    parser.add_argument("--mlir", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--quantize", default="F32")
    parser.add_argument("--chip", required=True)
    parser.add_argument("--dynamic", action="store_true")
    parser.add_argument("--test_input")
    parser.add_argument("--test_reference")
    parser.add_argument("--tolerance", default="0.8,0.5")
    parser.add_argument("--correctness", default="0.99,0.90")
    args, ignored = parser.parse_known_args(argv)
    if ignored:
        print(f"model_deploy: ignoring options this SDK does not use: {' '.join(ignored)}")
    try:
        failures = deploy(args)
    except (DeployError, tpu_sdk.Error, ValueError, OSError) as e:
        print(f"model_deploy: {e}", file=sys.stderr)
        return 2 if isinstance(e, (DeployError, ValueError)) else 1
    if failures:
        print(f"model_deploy: {failures} comparison(s) FAILED", file=sys.stderr)
        return 1
    print("model_deploy: all outputs match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
