"""npz_tool: compare and dump .npz files, as the vendor's npz_tool.py does.

    python3 -m tpu_sdk.npz_tool compare a.npz b.npz [--tolerance 0.99,0.99]
    python3 -m tpu_sdk.npz_tool dump a.npz [name ...]

compare: every array of b that a also holds, by name, with the vendor's
verdicts (tpu_sdk.compare); exit status 1 when one fails or no name is
shared.
"""
import argparse
import sys

import numpy as np

from tpu_sdk import metrics


def compare_files(a_path, b_path, tolerance):
    a, b = np.load(a_path), np.load(b_path)
    shared = [name for name in b.files if name in a.files]
    if not shared:
        print(f"npz_tool: {a_path} and {b_path} share no array name")
        return 1
    failed = 0
    for name in shared:
        result = metrics.compare(a[name], b[name], tolerance)
        print(f"{name:<32} {result.describe()}")
        failed += not result.passed
    print(f"{len(shared) - failed} of {len(shared)} compared arrays pass")
    return 1 if failed else 0


def dump(path, names):
    data = np.load(path)
    for name in names or data.files:
        if name not in data.files:
            print(f"npz_tool: {path} has no array '{name}'")
            return 1
        array = data[name]
        print(f"{name}: shape {list(array.shape)}, dtype {array.dtype}")
        print(np.array2string(array.reshape(-1)[:16], precision=6))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="npz_tool")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--tolerance", default="0.99,0.99")
    d = sub.add_parser("dump")
    d.add_argument("file")
    d.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    try:
        if args.command == "compare":
            return compare_files(args.a, args.b, metrics.parse_tolerance(args.tolerance))
        return dump(args.file, args.names)
    except (OSError, ValueError) as e:
        print(f"npz_tool: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
