#!/usr/bin/env python3
"""model_runner.py: runs a model file on the emulator, inputs and outputs as .npz.

    model_runner.py --input in.npz --model net.model --output out.npz

Inputs are converted to each model input's dtype (float data to fp16 /
bf16 bits as needed); outputs are written in their storage dtype (bf16 as
uint16 bits), as the SDK's .npz files hold them.
"""
import argparse
import sys

import numpy as np

import tpu_sdk
from tpu_sdk import dtypes


def main(argv=None):
    parser = argparse.ArgumentParser(prog="model_runner.py", description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--output", required=True)
    args, ignored = parser.parse_known_args(argv)
    if ignored:
        print(f"model_runner: ignoring options this SDK does not use: {' '.join(ignored)}")
    try:
        wanted = tpu_sdk.model_inputs(args.model)
        given = dict(np.load(args.input))
        inputs = {}
        for name, (_, dtype) in wanted.items():
            if name not in given:
                raise ValueError(f"{args.input}: no array '{name}' for the model input of that name")
            inputs[name] = dtypes.to_storage(given[name], dtype)
        outputs, stats = tpu_sdk.run_model(args.model, inputs)
        tpu_sdk.write_npz(args.output, outputs)
    except (tpu_sdk.Error, ValueError, OSError) as e:
        print(f"model_runner: {e}", file=sys.stderr)
        return 1
    for layer in stats:
        print(f"  {layer['name']:<24} {layer['op']:<16} {layer['mode']:<8} {layer['total_us']:10.1f} us")
    print(f"model_runner: {len(outputs)} output(s) written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
