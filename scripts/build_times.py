#!/usr/bin/env python3
"""Where a build's time goes, from Ninja's own log (<build dir>/.ninja_log).

    python3 scripts/build_times.py [build dir] [--top N]

Prints the summed step time, split into compiling, linking and the rest, then
the targets and the translation units that took longest. A step's time is
the wall time Ninja measured for it; with one step per core (-j2 on two cores)
that is close to the CPU time the step used. Only the latest run of each output
of the present build graph counts, so a log that has seen many builds gives the figures
of the tree as it is. Under ccache, steps served from the cache count at the
time they took (a fraction of a second): time a build with CCACHE_DISABLE=1
to see the compiler's cost; and on a busy machine a step's wall time is
longer than the CPU time it used.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

TARGET_DIR = re.compile(r"CMakeFiles/([^/]+)\.dir/(.*)")


def current_outputs(build_dir):
    """The outputs of the tree's present build graph (Ninja's own list), so
    that objects of targets since removed, still on disk, do not count."""
    try:
        listing = subprocess.run(["ninja", "-C", build_dir, "-t", "targets", "all"], check=True,
                                 capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"build_times: ninja cannot list the targets of {build_dir}: {e}")
    return {line.rsplit(": ", 1)[0] for line in listing.splitlines()}


def latest_steps(build_dir):
    """{output: seconds} for the newest entry of each output of the graph."""
    path = os.path.join(build_dir, ".ninja_log")
    try:
        with open(path, encoding="utf-8") as log:
            lines = log.read().splitlines()
    except OSError as e:
        sys.exit(f"build_times: cannot read {path}: {e.strerror} (is {build_dir} a Ninja build tree?)")
    if not lines or not lines[0].startswith("# ninja log v"):
        sys.exit(f"build_times: {path} is not a Ninja log (first line: {lines[0] if lines else 'none'!r})")
    steps = {}
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != 5:
            sys.exit(f"build_times: {path}:{number}: expected 5 tab-separated fields, found {len(fields)}")
        start, end, _, output, _ = fields
        steps[output] = (int(end) - int(start)) / 1000.0  # later entries replace earlier ones
    outputs = current_outputs(build_dir)
    return {out: t for out, t in steps.items() if out in outputs}


def kind_of(output):
    if output.endswith((".o", ".gch", ".pch")):
        return "compile"
    if output.endswith((".so", ".a")) or ".so." in output or "/" in output and "." not in os.path.basename(output):
        return "link"
    return "other"


def target_of(output):
    match = TARGET_DIR.search(output)
    return match.group(1) if match else os.path.basename(output)


def print_top(title, seconds_by_name, top, total):
    print(f"\n{title}")
    for name, seconds in sorted(seconds_by_name.items(), key=lambda item: -item[1])[:top]:
        print(f"  {seconds:8.1f} s  {100 * seconds / total:5.1f} %  {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir", nargs="?", default="build")
    parser.add_argument("--top", type=int, default=15, help="how many targets and translation units to list")
    args = parser.parse_args()
    steps = latest_steps(args.build_dir)
    if not steps:
        sys.exit(f"build_times: no step of {args.build_dir}/.ninja_log builds an output of its present graph")
    total = sum(steps.values())
    by_kind = collections.Counter()
    by_target = collections.Counter()
    for output, seconds in steps.items():
        by_kind[kind_of(output)] += seconds
        by_target[target_of(output)] += seconds
    print(f"{len(steps)} steps, {total:.1f} s in all: " +
          ", ".join(f"{kind} {by_kind[kind]:.1f} s" for kind in ("compile", "link", "other")))
    print_top("Targets:", by_target, args.top, total)
    units = {TARGET_DIR.sub(r"\1: \2", out): t for out, t in steps.items() if kind_of(out) == "compile"}
    print_top("Translation units:", units, args.top, total)


if __name__ == "__main__":
    main()
